"""What ``clip="auto"``, ``max_rows="auto"`` and ``cut=True`` spend and show (auto.py)."""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction
from typing import Any

import numpy as np
import pandas as pd
import pytest
import scipy.stats

import pandas_dp  # noqa: F401  (registers df.dp)
from pandas_dp.core.zcdp import pure_epsilon
from pandas_dp.errors import PoorAnswerWarning
from pandas_dp.kinds.base import Neighbours
from pandas_dp.kinds.clip_bounds import plan_search
from pandas_dp.pipeline.recipes import AUTO_CHECK_SHARE, AUTO_MIN_SCALES, CUT_SHARE, auto_minimum


def incomes(n: int = 1_000, seed: int = 11) -> pd.DataFrame:
    """A heavy tail like the PUMS incomes (generated), with two groups."""
    rng = np.random.Generator(np.random.PCG64(seed))
    x = np.round(rng.lognormal(np.log(25_000), 1.0, size=n), -2)
    return pd.DataFrame({"x": x, "g": rng.choice(["a", "b"], size=n)})


# ------------------------------------------------------- the check of clip="auto"


def _threshold_and_scales(epsilon: Fraction) -> int:
    """A side's threshold plus ten noise scales of a step, at ``epsilon`` for both sides."""
    side = plan_search(epsilon / 2, Neighbours.of("add_remove"))
    return side.threshold + math.ceil(AUTO_MIN_SCALES * side.nu_scale)


@pytest.mark.parametrize(("epsilon", "needed"), [(Fraction(1), 342), (Fraction(1, 10), 3_414)])
def test_auto_minimum_is_the_threshold_and_ten_noise_scales(epsilon: Fraction, needed: int) -> None:
    # a quarter to the bounds, half of it per side: threshold ⌈½(32/3 + 32)⌉ = 22, scale 32
    assert auto_minimum(epsilon) == _threshold_and_scales(epsilon / 4) == needed


@pytest.mark.parametrize("grouped", [False, True])
def test_auto_with_too_few_values_stops_having_spent_only_the_count(grouped: bool) -> None:
    """At ε = 0.1, 1,000 values are too few: a ValueError that teaches, and only ε/20 spent.

    (Before the check, the bounds landed near the median and the mean was far off.)
    """
    df = incomes()
    df.dp.set_budget(epsilon=1, seed=4)
    surface = df.dp.groupby("g", keys=["a", "b"]) if grouped else df.dp
    with pytest.raises(ValueError, match=r"needs about 3,414 values.*more epsilon.*clip=\("):
        surface.mean("x", clip="auto", epsilon=0.1)
    assert df.dp.budget.spent == Fraction(1, 10) * AUTO_CHECK_SHARE
    assert [e.operation.removeprefix("groupby.") for e in df.dp.budget.entries] == ["count"]


def test_auto_with_enough_values_answers_near_the_truth() -> None:
    df = incomes(n=20_000)
    df.dp.set_budget(epsilon=1, seed=4)
    got = df.dp.mean("x", clip="auto", epsilon=0.1)
    assert abs(got / df["x"].mean() - 1) < 0.1


# ------------------------------------------- clip="auto" over k columns: what each part runs at

COLUMNS = ("x", "y", "z")
#: A statistical test here must give p above this at the true ε (ρ), below it at a wrong one.
P_MIN = 1e-6


def _charge(entry: Any, accountant: str) -> Fraction:
    charge: Fraction = entry.rho if accountant == "rho" else entry.epsilon
    return charge


@pytest.mark.parametrize("accountant", ["epsilon", "rho"])
@pytest.mark.parametrize("n_columns", [1, 2, 3])
def test_auto_describe_of_k_columns_spends_its_loss_exactly_in_its_parts(
    accountant: str, n_columns: int
) -> None:
    """k checks at 1/(20k), k searches at 1/(4k), the describe at the rest: exactly the call's 1."""
    columns = list(COLUMNS[:n_columns])
    rng = np.random.Generator(np.random.PCG64(5))
    df = pd.DataFrame({c: rng.uniform(0, 100, 3_000) for c in columns})
    df.dp.set_budget(**{accountant: 10}, seed=5)
    grid = {c: np.linspace(0, 200, 41) for c in columns}
    df.dp.describe(columns, clip="auto", candidates=grid, **{accountant: 1})
    entries = df.dp.budget.entries
    assert [e.operation for e in entries] == ["count"] * n_columns + ["bounds"] * n_columns + [
        "describe"
    ]
    charges = [_charge(e, accountant) for e in entries]
    k = n_columns
    assert charges == [Fraction(1, 20 * k)] * k + [Fraction(1, 4 * k)] * k + [Fraction(7, 10)]
    assert df.dp.budget.spent == sum(charges) == 1


def _needed(accountant: str, n_columns: int) -> int:
    """The values clip="auto" needs at a loss of 1 over k columns, as its refusal states it."""
    df = pd.DataFrame(dict.fromkeys(COLUMNS[:n_columns], [np.nan] * 10))
    df.dp.set_budget(**{accountant: 10}, seed=1)
    with pytest.raises(ValueError, match="needs about") as refused:
        df.dp.describe(
            list(df.columns),
            clip="auto",
            candidates={c: [0.0, 1.0] for c in df.columns},
            **{accountant: 1},
        )
    return int(str(refused.value).split("needs about ", 1)[1].split()[0].replace(",", ""))


def _below(accountant: str, loss: float, m: int) -> float:
    """P(Z <= -m) for the check's noise: discrete Laplace at ε = loss, or Gaussian at ρ = loss."""
    if accountant == "epsilon":
        a = math.exp(-loss)
        return a**m / (1 + a)
    sigma2 = 1 / (2 * loss)
    z = np.arange(-math.ceil(40 * math.sqrt(sigma2)) - m, math.ceil(40 * math.sqrt(sigma2)) + 1)
    pmf = np.exp(-(z.astype(np.float64) ** 2) / (2 * sigma2))
    return float(pmf[z <= -m].sum() / pmf.sum())


@pytest.mark.parametrize("accountant", ["epsilon", "rho"])
@pytest.mark.parametrize("n_columns", [1, 2, 3])
@pytest.mark.filterwarnings("ignore::pandas_dp.errors.PoorAnswerWarning")  # few values, by design
def test_auto_counts_each_of_k_columns_at_a_twentieth_of_its_share(
    accountant: str, n_columns: int
) -> None:
    """The check of each of k columns runs at ε/(20k) (ρ/(20k)), measured from its refusals.

    Column x holds ``needed + m − 1`` values, the others none: a call stops at
    x exactly when the check's noise is at most ``−m``, else at y (or, alone,
    answers).  Over 800 calls the share stopped at x is the noise's tail at
    the check's ε; the test fails at twice and half that ε.  A check at ε/20
    per column would spend 1.1 of a 3-column describe at ε = 1.
    """
    share = 1 / (20 * n_columns)
    m = round(2 / share) if accountant == "epsilon" else round(2 * math.sqrt(1 / (2 * share)))
    needed = _needed(accountant, n_columns)
    rows = needed + m - 1
    values = np.arange(rows, dtype=np.float64)
    df = pd.DataFrame({c: values if c == "x" else np.nan for c in COLUMNS[:n_columns]})
    df.dp.set_budget(**{accountant: 1e6}, seed=20 + n_columns)
    grid = dict.fromkeys(df.columns, np.linspace(0, 2 * rows, 9))
    calls, at_x = 800, 0
    for _ in range(calls):
        try:
            df.dp.describe(list(df.columns), clip="auto", candidates=grid, **{accountant: 1})
        except ValueError as refused:
            at_x += "bounds of 'x'" in str(refused)
    for factor, must_pass in ((1.0, True), (2.0, False), (0.5, False)):
        p = scipy.stats.binomtest(at_x, calls, _below(accountant, share * factor, m)).pvalue
        assert (p > P_MIN) == must_pass, f"{accountant} x{factor}: {at_x} of {calls}, p = {p:.3g}"


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
    with pytest.warns(PoorAnswerWarning, match=r"^A large share was cut \(clipped_share at 5%"):
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
    with pytest.warns(PoorAnswerWarning, match="clipped_share"):
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
    assert list(answer.index) == [
        "estimate",
        "clip_lower",
        "clip_upper",
        "clip_count",
        "clipped_share",
    ]
    assert abs(answer["clip_count"] - len(df)) < 200  # the check's count, at ε/20
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
    with pytest.warns(PoorAnswerWarning, match=r", truncated_share at 5%.* Raise max_rows="):
        answer = surface.sum("amount", clip=(0, 400), epsilon=2, max_rows=5, cut=True, **extra)
    truth = (orders.groupby("cid").size() > 5).mean()
    truncated = answer["truncated_share"]
    assert np.all(np.abs(np.asarray(truncated) - truth) < 0.02)
    entries = orders.dp.budget.entries
    if grouped:  # each person is in one key: max_groups=1 cuts nobody (noise around 0)
        assert np.all(np.abs(answer["truncated_keys_share"]) < 0.02)
        assert entries[-1].operation == "truncated_keys_share"
        assert entries[-1].clip == ((0, 1),)
        entries = entries[:-1]
    assert entries[-1].operation == "truncated_share"
    assert entries[-1].clip == ((0, 5),)
    fifth = Fraction(1, 5)
    assert [e.epsilon for e in entries] == [Fraction(7 if grouped else 8, 5), fifth, fifth]


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
    with pytest.warns(PoorAnswerWarning, match="clipped_share"):
        got = df.dp.mean("x", clip=(0, 1e5), rho=0.5, cut=True)
    assert list(got.index) == ["estimate", "clipped_share"]
    statistic, share = df.dp.budget.entries
    assert (statistic.rho, statistic.epsilon) == (Fraction(9, 20), None)  # Gaussian
    assert (share.rho, share.epsilon) == (Fraction(1, 20), pure_epsilon(Fraction(1, 20)))
    assert df.dp.budget.spent == Fraction(1, 2)


def test_clip_auto_under_rho_checks_the_values_needed_at_the_bounds_epsilon() -> None:
    df = incomes()
    df.dp.set_budget(rho=1, seed=4)
    needed = _threshold_and_scales(
        pure_epsilon(Fraction(1, 4000))
    )  # ρ/4 of ρ = 0.001 to the bounds, run at ε = sqrt(2ρ/4)
    assert needed > len(df)
    with pytest.raises(ValueError, match=rf"at rho=0.001 needs about {needed:,} values.*more rho"):
        df.dp.mean("x", clip="auto", rho=0.001)
    [check] = df.dp.budget.entries  # the check: ρ/20, a Gaussian count
    assert (check.operation, check.rho, check.epsilon) == ("count", Fraction(1, 20000), None)


# ------------------------------------------------ a grid found when none is given


@pytest.mark.parametrize("release", ["quantile", "median", "quantiles"])
@pytest.mark.parametrize("grouped", [False, True])
def test_a_quantile_without_a_grid_finds_its_bounds_first(release: str, grouped: bool) -> None:
    """No ``candidates``: a count and the bounds (ε/20, ε/4), the grid between them, the rest."""
    df = incomes(n=5_000)
    df.dp.set_budget(epsilon=10, seed=6)
    surface = df.dp.groupby("g", keys=["a", "b"]) if grouped else df.dp
    if release == "median":
        got = surface.median("x", epsilon=1)
    else:
        got = surface.quantile("x", 0.5 if release == "quantile" else [0.25, 0.5], epsilon=1)
    entries = df.dp.budget.entries
    operations = [e.operation.removeprefix("groupby.") for e in entries]
    assert operations[:2] == ["count", "bounds"]
    assert [e.epsilon for e in entries] == [Fraction(1, 20), Fraction(1, 4), Fraction(7, 10)]
    medians = np.ravel(got[0.5] if release == "quantiles" else got).astype(float)
    assert np.all(np.abs(medians / df["x"].median() - 1) < 0.2)
