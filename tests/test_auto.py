"""What ``clip="auto"``, ``max_rows="auto"`` and ``cut=True`` spend and show (auto.py)."""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction
from typing import Any

import numpy as np
import pandas as pd
import pytest

import pandas_dp  # noqa: F401  (registers df.dp)
from pandas_dp.core.zcdp import pure_epsilon
from pandas_dp.kinds.base import Neighbours
from pandas_dp.kinds.clip_bounds import plan_bounds
from pandas_dp.pipeline.recipes import AUTO_CHECK_SHARE, AUTO_MIN_RATIO, CUT_SHARE, auto_minimum


def incomes(n: int = 1_000, seed: int = 11) -> pd.DataFrame:
    """A heavy tail like the PUMS incomes (generated), with two groups."""
    rng = np.random.Generator(np.random.PCG64(seed))
    x = np.round(rng.lognormal(np.log(25_000), 1.0, size=n), -2)
    return pd.DataFrame({"x": x, "g": rng.choice(["a", "b"], size=n)})


# ------------------------------------------------------- the check of clip="auto"


@pytest.mark.parametrize(("epsilon", "needed"), [(Fraction(1), 270), (Fraction(1, 10), 2_670)])
def test_auto_minimum_is_five_times_the_searchs_threshold(epsilon: Fraction, needed: int) -> None:
    threshold = plan_bounds(epsilon / 4, Neighbours.of("add_remove")).threshold
    assert auto_minimum(epsilon) == AUTO_MIN_RATIO * threshold == needed


@pytest.mark.parametrize("grouped", [False, True])
def test_auto_with_too_few_values_stops_having_spent_only_the_count(grouped: bool) -> None:
    """At ε = 0.1, 1,000 values are too few: a ValueError that teaches, and only ε/20 spent.

    (Before the check, the bounds landed near the median and the mean was far off.)
    """
    df = incomes()
    df.dp.set_budget(epsilon=1, seed=4)
    surface = df.dp.groupby("g", keys=["a", "b"]) if grouped else df.dp
    with pytest.raises(ValueError, match=r"needs about 2,670 values.*more epsilon.*clip=\("):
        surface.mean("x", clip="auto", epsilon=0.1)
    assert df.dp.budget.spent == Fraction(1, 10) * AUTO_CHECK_SHARE
    assert [e.operation.removeprefix("groupby.") for e in df.dp.budget.entries] == ["count"]


def test_auto_with_enough_values_answers_near_the_truth() -> None:
    df = incomes(n=20_000)
    df.dp.set_budget(epsilon=1, seed=4)
    got = df.dp.mean("x", clip="auto", epsilon=0.1)
    assert abs(got / df["x"].mean() - 1) < 0.1


# ------------------------------------------------------------------- cut=True

RELEASES: dict[str, Callable[[Any, dict[str, Any]], Any]] = {
    "sum": lambda s, kw: s.sum("x", **kw),
    "mean": lambda s, kw: s.mean("x", **kw),
    "var": lambda s, kw: s.var("x", **kw),
    "std": lambda s, kw: s.std("x", **kw),
}


def clipped_share(answer: Any, grouped: bool) -> Any:
    return answer["clipped_share"].to_numpy() if grouped else answer["clipped_share"]


@pytest.mark.parametrize("ci", [None, 0.9])
@pytest.mark.parametrize("grouped", [False, True])
@pytest.mark.parametrize("name", RELEASES)
def test_cut_shows_the_share_clipped_beside_the_answer(
    name: str, grouped: bool, ci: float | None
) -> None:
    """A tenth of ε on the share outside the clip, the rest on the statistic: exactly ε."""
    df = incomes(n=20_000)
    df.dp.set_budget(epsilon=2, seed=4)
    clip = (0.0, float(df["x"].quantile(0.8)))
    surface = df.dp.groupby("g", keys=["a", "b"]) if grouped else df.dp
    answer = RELEASES[name](surface, {"clip": clip, "epsilon": 1, "ci": ci, "cut": True})
    fields = ["estimate"] + (["lower", "upper"] if ci else []) + ["clipped_share"]
    assert list(answer.columns if grouped else answer.index) == fields
    assert np.all(np.abs(clipped_share(answer, grouped) - 0.2) < 0.02)
    entries = df.dp.budget.entries
    assert [e.operation.removeprefix("groupby.") for e in entries] == [name, "clipped_share"]
    assert [e.epsilon for e in entries] == [1 - CUT_SHARE, CUT_SHARE]
    assert entries[1].clip == (clip,)


@pytest.mark.parametrize("grouped", [False, True])
def test_cut_of_describe_is_a_row_per_column(grouped: bool) -> None:
    df = incomes(n=20_000).assign(y=lambda d: d["x"] / 2)
    df.dp.set_budget(epsilon=2, seed=4)
    surface = df.dp.groupby("g", keys=["a", "b"]) if grouped else df.dp
    clip = {"x": (0, float(df["x"].quantile(0.8))), "y": (0, float(df["y"].quantile(0.9)))}
    grid = {c: np.linspace(0, 2e5, 201) for c in ("x", "y")}
    table = surface.describe(["x", "y"], clip=clip, candidates=grid, epsilon=1, cut=True)
    if grouped:
        shares = table[[("x", "clipped_share"), ("y", "clipped_share")]].to_numpy()
        assert np.all(np.abs(shares - [0.2, 0.1]) < 0.02)
    else:
        assert np.all(np.abs(table.loc["clipped_share"].to_numpy() - [0.2, 0.1]) < 0.02)
    assert [e.epsilon for e in df.dp.budget.entries] == [Fraction(9, 10)] + [Fraction(1, 20)] * 2


def test_cut_with_auto_clip_shows_the_bounds_and_the_share() -> None:
    df = incomes(n=5_000)
    df.dp.set_budget(epsilon=1, seed=4)
    answer = df.dp.mean("x", clip="auto", epsilon=1, cut=True)
    assert list(answer.index) == ["estimate", "clip_lower", "clip_upper", "clipped_share"]
    outside = (df["x"] > answer["clip_upper"]).mean()
    assert abs(answer["clipped_share"] - outside) < 0.02
    assert [e.epsilon for e in df.dp.budget.entries] == [
        Fraction(1, 20),  # the check
        Fraction(1, 4),  # the bounds
        Fraction(3, 5),  # the mean
        Fraction(1, 10),  # the share clipped
    ]


@pytest.fixture
def orders() -> pd.DataFrame:
    """3,000 persons: 90% with 1 to 3 rows, 10% with 20 rows."""
    rng = np.random.Generator(np.random.PCG64(5))
    rows = np.where(rng.uniform(size=3_000) < 0.1, 20, rng.integers(1, 4, size=3_000))
    cid = np.repeat(np.arange(rows.size), rows)
    df = pd.DataFrame({"cid": cid, "amount": rng.uniform(0, 500, cid.size)})
    df["k"] = np.where(cid % 2 == 0, "a", "b")
    df.dp.set_budget(epsilon=4, privacy_unit="cid", seed=3)
    return df


@pytest.mark.parametrize("grouped", [False, True])
def test_cut_with_a_privacy_unit_shows_the_share_of_persons_truncated(
    orders: pd.DataFrame, grouped: bool
) -> None:
    surface = orders.dp.groupby("k", keys=["a", "b"]) if grouped else orders.dp
    extra = {"max_groups": 1} if grouped else {}
    answer = surface.sum("amount", clip=(0, 400), epsilon=2, max_rows=5, cut=True, **extra)
    truth = (orders.groupby("cid").size() > 5).mean()
    truncated = answer["truncated_share"]
    assert np.all(np.abs(np.asarray(truncated) - truth) < 0.02)
    entries = orders.dp.budget.entries
    assert entries[-1].operation == "truncated_share"
    assert entries[-1].clip == ((0, 5),)
    assert [e.epsilon for e in entries] == [Fraction(8, 5), Fraction(1, 5), Fraction(1, 5)]


def test_cut_takes_the_bound_max_rows_auto_chose(orders: pd.DataFrame) -> None:
    answer = orders.dp.mean("amount", clip=(0, 500), epsilon=2, max_rows="auto", cut=True)
    assert list(answer.index) == ["estimate", "max_rows", "clipped_share", "truncated_share"]
    assert orders.dp.budget.entries[-1].clip == ((0, answer["max_rows"]),)


def test_cut_refuses_a_mapping_clip_before_any_spend() -> None:
    df = incomes()
    df.dp.set_budget(epsilon=1, seed=4)
    with pytest.raises(TypeError, match="one column"):
        df.dp.mean(clip={"x": (0, 1)}, epsilon=0.5, cut=True)
    assert df.dp.budget.spent == 0


def test_cut_under_rho_splits_rho_and_runs_the_shares_at_epsilon_sqrt_2rho() -> None:
    df = incomes()
    df.dp.set_budget(rho=1, seed=4)
    got = df.dp.mean("x", clip=(0, 1e5), rho=0.5, cut=True)
    assert list(got.index) == ["estimate", "clipped_share"]
    statistic, share = df.dp.budget.entries
    assert (statistic.rho, statistic.epsilon) == (Fraction(9, 20), None)  # Gaussian
    assert (share.rho, share.epsilon) == (Fraction(1, 20), pure_epsilon(Fraction(1, 20)))
    assert df.dp.budget.spent == Fraction(1, 2)


def test_clip_auto_under_rho_checks_the_values_needed_at_the_bounds_epsilon() -> None:
    df = incomes()
    df.dp.set_budget(rho=1, seed=4)
    needed = (
        AUTO_MIN_RATIO
        * plan_bounds(pure_epsilon(Fraction(1, 4000)), Neighbours.of("add_remove")).threshold
    )  # ρ/4 of ρ = 0.001 to the bounds, run at ε = sqrt(2ρ/4)
    assert needed > len(df)
    with pytest.raises(ValueError, match=rf"at rho=0.001 needs about {needed:,} values.*more rho"):
        df.dp.mean("x", clip="auto", rho=0.001)
    [check] = df.dp.budget.entries  # the check: ρ/20, a Gaussian count
    assert (check.operation, check.rho, check.epsilon) == ("count", Fraction(1, 20000), None)
