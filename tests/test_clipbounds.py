"""Private clip bounds (:mod:`pandas_dp.kinds.clip_bounds`): ``df.dp.bounds``, ``clip="auto"``."""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

import pandas_dp  # noqa: F401  (registers df.dp)
from pandas_dp import BudgetExceededError
from pandas_dp.core.noise import SeededSource
from pandas_dp.datasets import prices
from pandas_dp.kinds import clip_bounds
from pandas_dp.kinds.base import Neighbours, Rows
from pandas_dp.kinds.clip_bounds import (
    CANDIDATES,
    ClipBounds,
    ClippedShare,
    SearchPlan,
    above_threshold,
    plan_bounds,
    tail_counts,
)


def column(sign: str, n: int = 3_000) -> pd.DataFrame:
    rng = np.random.Generator(np.random.PCG64(11))
    x = rng.lognormal(np.log(40_000), 0.8, size=n)
    values = {"positive": x, "negative": -x, "mixed": x - 40_000}[sign]
    return pd.DataFrame({"x": values, "g": rng.choice(["a", "b"], size=n)})


@pytest.mark.parametrize("sign", ["positive", "negative", "mixed"])
def test_bounds_hold_the_data_on_each_side(sign: str) -> None:
    """Over 400 draws: the bounds hold 99% of the data, rarely by more than 64x its range."""
    df = column(sign)
    kind = ClipBounds(Fraction(1), "x")
    plan = kind.plan(Neighbours.of("add_remove"))
    stats = kind.tally(plan, kind.read(df, 1), None, 1)
    source = SeededSource(4)
    lower, upper = np.array(
        [kind.shape_one(kind.finish(plan, stats, source, 1)) for _ in range(400)]
    ).T
    x = df["x"]
    tiny = 4 * CANDIDATES[16]  # a side with no values stops at 0 or, by the noise, just above
    # (now and then a side's search overshoots: a threshold noise far below -T)
    if sign == "positive":
        assert np.all(lower <= 0)
        assert np.mean(lower < -tiny) <= 0.02
    else:
        assert np.median(lower) <= x.quantile(0.01)
        assert np.mean(lower < 64 * x.min()) <= 0.02
    if sign == "negative":
        assert np.all(upper >= 0)
        assert np.mean(upper > tiny) <= 0.02
    else:
        assert np.median(upper) >= x.quantile(0.99)
        assert np.mean(upper > 64 * x.max()) <= 0.02


def test_a_bounds_release_spends_its_epsilon() -> None:
    df = column("mixed")
    df.dp.set_budget(epsilon=1, seed=4)
    lower, upper = df.dp.bounds("x", epsilon=1)
    assert lower < 0 < upper
    assert df.dp.budget.spent == 1


def test_grouped_bounds_are_a_frame_of_each_keys_bounds() -> None:
    df = column("mixed")
    df.dp.set_budget(epsilon=1, seed=4)
    found = df.dp.groupby("g", keys=["a", "b", "none"]).bounds("x", epsilon=1)
    assert list(found.columns) == ["lower", "upper"]
    assert list(found.index) == ["a", "b", "none"]
    assert (found.loc[["a", "b"], "upper"] >= df["x"].quantile(0.99)).all()
    # no rows: tiny bounds (a side stops near 0, moved out by the margin of a count near 0)
    assert found.loc["none"].abs().max() <= 1e-3


@pytest.mark.parametrize(
    ("adjacency", "max_rows", "rho", "nu", "threshold"),
    [
        # side ε = 1/2; ρ takes 3/4 of it, the queries 1/4: Δ/(3/8), c·Δ/(1/8); T = ⌈½(ρ + ν)⌉
        ("add_remove", None, Fraction(8, 3), Fraction(8), 6),
        ("substitute", None, Fraction(8, 3), Fraction(8), 6),
        ("add_remove", 3, Fraction(8), Fraction(24), 16),
        ("substitute", 3, Fraction(16), Fraction(96), 56),  # a person's rows replaced: c = 2
    ],
)
def test_the_plan_splits_each_sides_epsilon(
    adjacency: str, max_rows: int | None, rho: Fraction, nu: Fraction, threshold: int
) -> None:
    unit = None if max_rows is None else "id"
    relation = Neighbours.of(adjacency, max_rows=max_rows, privacy_unit=unit)
    given = plan_bounds(Fraction(1), relation, counted=True)  # a count given: half per side
    own = plan_bounds(Fraction(10, 9), relation)  # its own count: a tenth of ε, then halves
    for plan in (given[0], given[1], own[0], own[1]):
        assert (plan.rho_scale, plan.nu_scale, plan.threshold) == (rho, nu, threshold)
    assert len(given) == 2
    assert own[2].epsilon == Fraction(1, 9)


def test_above_threshold_stops_at_the_first_small_tail() -> None:
    tails = np.array([[9, 7, 3, 2, 0, 0], [9, 9, 9, 9, 9, 9]], dtype=np.int64)
    tiny = Fraction(1, 10**6)  # noise far below 1: the comparison of the exact counts
    plan = SearchPlan(1, tiny, tiny, 3, True)
    stops = above_threshold(SeededSource(1), tails, plan)
    assert list(stops) == [2, 5]  # the first tail ≤ 3; none: the last candidate


def test_tail_counts_count_values_beyond_each_candidate() -> None:
    kind = ClipBounds(Fraction(1), "x")
    values = np.array([-3.0, 0.0, 0.5, 1.0, 3.0, np.nan])
    plan = kind.plan(Neighbours.of("add_remove"))
    upper, lower = kind.tally(plan, Rows(6, (values,)), None, 1)
    for c in (0.0, 0.5, 1.0, 2.0, 2 ** (1 / 8), 2.5):
        j = int(np.searchsorted(CANDIDATES, c))
        assert CANDIDATES[j] == c or c == 2.5
        c = CANDIDATES[j]
        assert tail_counts(upper, 1)[0, j] == np.sum(values > c)
        assert tail_counts(lower, 1)[0, j] == np.sum(values < -c)


# ----------------------------------------------------------------- clip="auto"

CLIPPED: dict[str, Callable[[Any, dict[str, Any]], Any]] = {
    "sum": lambda s, kw: s.sum("x", **kw),
    "mean": lambda s, kw: s.mean("x", **kw),
    "var": lambda s, kw: s.var("x", **kw),
    "std": lambda s, kw: s.std("x", **kw),
    "describe": lambda s, kw: s.describe(
        ["x"], candidates={"x": np.linspace(-1e5, 1e6, 111)}, **kw
    ),
}


@pytest.mark.parametrize("grouped", [False, True])
@pytest.mark.parametrize("name", CLIPPED)
def test_auto_spends_exactly_epsilon_and_records_the_bounds(name: str, grouped: bool) -> None:
    df = column("mixed")
    df.dp.set_budget(epsilon=2, seed=4)
    surface = df.dp.groupby("g", keys=["a", "b"]) if grouped else df.dp
    ci = {} if name == "describe" else {"ci": 0.9}
    answer = CLIPPED[name](surface, {"clip": "auto", "epsilon": 0.8, **ci})
    entries = df.dp.budget.entries
    assert [e.operation.removeprefix("groupby.") for e in entries] == ["count", "bounds", name]
    # the check ε/20, the bounds ε/4, the rest
    assert [e.epsilon for e in entries] == [Fraction(1, 25), Fraction(1, 5), Fraction(14, 25)]
    assert df.dp.budget.spent == Fraction(4, 5)
    if name == "describe" and grouped:
        lower, upper = answer[("x", "clip_lower")].iloc[0], answer[("x", "clip_upper")].iloc[0]
    elif name == "describe":
        lower, upper = answer.loc["clip_lower", "x"], answer.loc["clip_upper", "x"]
    else:
        row = answer if not grouped else answer.iloc[0]
        lower, upper = row["clip_lower"], row["clip_upper"]
    assert entries[2].clip == ((lower, upper),)
    assert lower < df["x"].quantile(0.01)
    assert upper > df["x"].quantile(0.99)


@pytest.mark.parametrize("columns", ["x", ["x"], pd.Index(["x"])])
def test_auto_describe_takes_columns_as_describe_does(columns: Any) -> None:
    df = column("positive")
    df.dp.set_budget(epsilon=1, seed=4)
    grid = {"x": np.linspace(0, 1e6, 101)}
    table = df.dp.describe(columns, clip="auto", candidates=grid, epsilon=1)
    assert list(table.columns) == ["x"]
    assert table.loc["clip_upper", "x"] > df["x"].quantile(0.99)


def test_auto_refuses_before_any_spend_when_the_whole_epsilon_does_not_fit() -> None:
    df = column("positive")
    df.dp.set_budget(epsilon=1, seed=4)
    df.dp.count(epsilon=0.5)
    with pytest.raises(BudgetExceededError):
        df.dp.mean("x", clip="auto", epsilon=0.6)  # the bounds' 0.15 would fit alone
    assert df.dp.budget.spent == Fraction(1, 2)
    assert len(df.dp.budget.entries) == 1


def test_auto_checks_the_statistics_arguments_before_any_spend() -> None:
    df = column("positive")
    df.dp.set_budget(epsilon=1, seed=4)
    with pytest.raises(ValueError, match="ci"):
        df.dp.mean("x", clip="auto", epsilon=0.5, ci=2)
    assert df.dp.budget.spent == 0


def test_auto_runs_inside_a_reserved_block() -> None:
    df = column("positive")
    df.dp.set_budget(epsilon=1, seed=4)
    with df.dp.reserve(epsilon=0.5) as hold:
        df.dp.mean("x", clip="auto", epsilon=0.5)
    assert hold.returned == 0
    assert df.dp.budget.spent == Fraction(1, 2)


def test_auto_without_an_interval_is_the_plain_answer() -> None:
    df = column("positive")
    df.dp.set_budget(epsilon=1, seed=4)
    assert isinstance(df.dp.mean("x", clip="auto", epsilon=1), float)


# ---------------------------------------------------- accuracy on real data


def auto_runs(frame: pd.DataFrame, column: str, epsilon: float, runs: int, seed: int) -> Any:
    """``mean(column, clip="auto")`` ``runs`` times on one seeded budget: means and bounds found."""
    frame = frame[[column]].copy()
    frame.dp.set_budget(epsilon=epsilon * runs, seed=seed)
    got = [frame.dp.mean(column, clip="auto", epsilon=epsilon, ci=0.5) for _ in range(runs)]
    return pd.DataFrame(got).reset_index(drop=True)


def test_auto_on_real_incomes_meets_the_targets(shared_data: Path) -> None:
    """PUMS income, n = 1,000, ε = 1, 300 seeds: the issue's targets.

    The upper bound at most 1.5x the 99.9th percentile in the median, at most
    1% of the values clipped in the median, the mean's median error at most
    4% and no run more than half off.
    """
    income = pd.read_csv(shared_data / "pums_1000.csv")[["income"]]
    x = income["income"]
    found = auto_runs(income, "income", 1.0, runs=300, seed=19)
    assert np.median(found["clip_upper"]) <= 1.5 * x.quantile(0.999)
    clipped = [
        ((x < lo) | (x > hi)).mean() for lo, hi in found[["clip_lower", "clip_upper"]].values
    ]
    assert np.median(clipped) <= 0.01
    errors = np.abs(found["estimate"] / x.mean() - 1)
    assert np.median(errors) <= 0.04
    assert errors.max() <= 0.5


def test_auto_on_long_tailed_prices_stops_near_the_top() -> None:
    """54,000 generated prices (maximum 18,821), ε = 1, 100 seeds: the bound near the top."""
    price = prices(54_000, seed=0)[["price"]]
    x = price["price"]
    found = auto_runs(price, "price", 1.0, runs=100, seed=23)
    assert np.median(found["clip_upper"]) <= 1.5 * x.quantile(0.999)
    assert np.median([(x > hi).mean() for hi in found["clip_upper"]]) <= 0.01
    assert np.median(np.abs(found["estimate"] / x.mean() - 1)) <= 0.01


@pytest.mark.parametrize("name", ["pums", "prices"])
def test_bounds_alone_stop_near_the_top(shared_data: Path, name: str) -> None:
    """``df.dp.bounds(col, epsilon=1)`` (its own count): the same targets, 100 seeds."""
    frame = (
        pd.read_csv(shared_data / "pums_1000.csv")[["income"]]
        if name == "pums"
        else prices(54_000, seed=0)[["price"]].rename(columns={"price": "income"})
    )
    x = frame["income"]
    frame.dp.set_budget(epsilon=100, seed=29)
    found = np.array([frame.dp.bounds("income", epsilon=1) for _ in range(100)])
    assert np.median(found[:, 1]) <= 1.5 * x.quantile(0.999)
    assert np.median([((x < lo) | (x > hi)).mean() for lo, hi in found]) <= 0.01


# ------------------------------------------------------------ the share clipped


def test_clipped_share_counts_values_outside_the_clip_apart() -> None:
    kind = ClippedShare(Fraction(1), "x", (0.0, 10.0))
    values = np.array([-1.0, 0.0, 5.0, 10.0, 11.0, np.nan, 20.0])
    plan = kind.plan(Neighbours.of("add_remove"))
    outside, inside = kind.tally(plan, Rows(7, (values,)), np.array([0, 0, 1, 1, 1, 1, -1]), 2)
    assert list(outside) == [1, 1]  # -1 in key 0, 11 in key 1; 20 has no key; NaN in neither
    assert list(inside) == [1, 2]


@pytest.mark.parametrize(("adjacency", "scale"), [("add_remove", 2), ("substitute", 4)])
def test_clipped_share_noise_has_the_pairs_sensitivity(adjacency: str, scale: int) -> None:
    plan = ClippedShare(Fraction(1, 2), "x", (0, 1)).plan(Neighbours.of(adjacency))
    assert plan.scale == scale


@pytest.mark.parametrize("grouped", [False, True])
def test_clipped_share_is_near_the_share_cut(grouped: bool) -> None:
    df = column("positive", n=20_000)
    df.dp.set_budget(epsilon=1, seed=4)
    clip = (0.0, float(df["x"].quantile(0.9)))
    surface = df.dp.groupby("g", keys=["a", "b"]) if grouped else df.dp
    share = surface.clipped_share("x", clip=clip, epsilon=1)
    assert np.all(np.abs(np.asarray(share) - 0.1) < 0.01)
    assert df.dp.budget.entries[0].clip == (clip,)


# ----------------------------------------------------------- max_rows="auto"


@pytest.fixture
def orders() -> pd.DataFrame:
    rng = np.random.Generator(np.random.PCG64(5))
    n = 4_000
    df = pd.DataFrame({"cid": rng.integers(0, 800, n), "amount": rng.uniform(0, 500, n)})
    df.dp.set_budget(epsilon=4, privacy_unit="cid", seed=3)
    return df


def test_auto_rows_spends_a_quarter_on_rows_per_unit_and_records_the_bound(
    orders: pd.DataFrame,
) -> None:
    answer = orders.dp.mean("amount", clip=(0, 500), epsilon=1, max_rows="auto", ci=0.9)
    persons, first, second = orders.dp.budget.entries
    assert (persons.operation, persons.epsilon) == ("count", Fraction(1, 80))  # the check
    assert first.operation.startswith("rows_per_unit")
    assert (first.epsilon, second.epsilon) == (Fraction(19, 80), Fraction(3, 4))
    assert second.max_rows == answer["max_rows"]
    assert 5 <= answer["max_rows"] <= 12  # about the 0.9-quantile of rows per person (8)


def test_auto_rows_of_a_sum_balances_truncation_against_noise(orders: pd.DataFrame) -> None:
    # a total keeps all but about t = ⌈√2/(3/4)⌉ = 2 persons whole: near the heaviest (14 rows)
    answer = orders.dp.sum("amount", clip=(0, 500), epsilon=1, max_rows="auto", ci=0.9)
    first, second = orders.dp.budget.entries
    assert first.operation == "max_rows(t=2)"
    assert (first.epsilon, second.epsilon) == (Fraction(1, 4), Fraction(3, 4))
    assert second.max_rows == answer["max_rows"]
    assert 11 <= answer["max_rows"] <= 23


def test_auto_rows_and_auto_clip_share_epsilon(orders: pd.DataFrame) -> None:
    orders.dp.mean("amount", clip="auto", epsilon=1, max_rows="auto")
    entries = orders.dp.budget.entries
    # rows ε/4 (the persons' check a twentieth of it), the check ε/20, the bounds ε/4, the rest
    assert [e.epsilon for e in entries] == [
        Fraction(1, 80),
        Fraction(19, 80),
        Fraction(1, 20),
        Fraction(1, 4),
        Fraction(9, 20),
    ]
    assert entries[2].max_rows == entries[3].max_rows == entries[4].max_rows is not None


def test_auto_rows_without_a_privacy_unit_is_refused_before_any_spend() -> None:
    df = column("positive")
    df.dp.set_budget(epsilon=1, seed=4)
    with pytest.raises(TypeError, match="privacy unit"):
        df.dp.mean("x", clip=(0, 1), epsilon=0.5, max_rows="auto")
    assert df.dp.budget.spent == 0


@pytest.mark.parametrize("keys", [1, 4])
def test_both_sides_histograms_read_off_the_bits_equal_the_search(keys: int) -> None:
    """Every candidate, its float neighbours, zeros, infinities, NaN, subnormals, both signs.

    ``two_sided_histograms`` (one pass, no search) against ``histogram`` of
    the values and of their negation (``np.searchsorted``), with rows of
    code -1 left out.
    """
    c = clip_bounds.CANDIDATES
    special = [0.0, -0.0, np.inf, -np.inf, np.nan, 5e-324, 1e-310, 2.2e-308, 1.7e308]
    edges = np.concatenate([c, np.nextafter(c, np.inf), np.nextafter(c, -np.inf), special])
    rng = np.random.default_rng(8)
    spread = rng.lognormal(0, 25, 200_000) * rng.choice([-1.0, 1.0], 200_000)
    values = np.concatenate([edges, -edges, spread])
    codes = rng.integers(-1, keys, values.size) if keys > 1 else None
    upper, lower = clip_bounds.two_sided_histograms(values, codes, keys)
    assert (upper == clip_bounds.histogram(values, codes, keys)).all()
    assert (lower == clip_bounds.histogram(-values, codes, keys)).all()
