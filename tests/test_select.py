"""argmax_exp, top-k and quantiles (pandas_dp.kinds.argmax, pandas_dp.kinds.quantile).

Exact tests of the privacy maps and of the 96-bit rate arithmetic; chi-square
tests of the selection frequencies against exact permute-and-flip
probabilities (thousands of independent selections in one grouped call), which
pass at the true rate and fail at a wrong one; Clopper-Pearson privacy audits
on neighbouring frames under both adjacencies; accuracy on real data; and
argument errors raised before any spend.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import pandas_dp.kinds.argmax as argmax
import pandas_dp.kinds.quantile as quantile
from pandas_dp.core.noise import SeededSource
from pandas_dp.errors import BudgetExceededError
from pandas_dp.kinds.argmax import GAMMA_CAP, Rate
from pandas_dp.kinds.base import Neighbours

#: A chi-square p-value below this fails; at the true rate a fixed seed passes
#: (Tumult's threshold, as in conftest.py).
P_THRESHOLD = 1e-20
#: Wrong rates (multiples of the true c) that every distribution test must reject.
WRONG = (0.5, 0.7, 1.3, 2.0)
GROUPS = 10_000


# ---------------------------------------------------------------------- helpers


def pf_probabilities(utility: Sequence[float], c: float) -> np.ndarray:
    """Exact permute-and-flip probabilities, by enumerating every visiting order."""
    u = np.asarray(utility, dtype=np.float64)
    accept = np.exp(-c * (u.max() - u))
    out = np.zeros(u.size)
    for order in itertools.permutations(range(u.size)):
        reach = 1.0
        for r in order:
            out[r] += reach * accept[r]
            reach *= 1.0 - accept[r]
    return out / math.factorial(u.size)


def peel_probabilities(utility: Sequence[float], c: float) -> dict[tuple[int, int], float]:
    """Exact probabilities of the ordered pair (first, second) of a 2-round peel."""
    first = pf_probabilities(utility, c)
    out = {}
    for i in range(len(utility)):
        rest = [j for j in range(len(utility)) if j != i]
        second = pf_probabilities([utility[j] for j in rest], c)
        for j, p in zip(rest, second, strict=True):
            out[(i, j)] = first[i] * p
    return out


def chi2_pvalue(observed: Sequence[int], expected_p: Sequence[float]) -> float:
    observed = np.asarray(observed, dtype=np.float64)
    expected = np.asarray(expected_p) * observed.sum()
    return float(stats.chisquare(observed, expected).pvalue)


def replicated(rows_per_group: dict[str, list[Any]], groups: int) -> pd.DataFrame:
    """The same small frame under ``groups`` distinct keys ``0..groups-1``."""
    block = pd.DataFrame(rows_per_group)
    frame = pd.concat([block] * groups, ignore_index=True)
    frame["g"] = np.repeat(np.arange(groups), len(block))
    return frame


def scaled_rate(monkeypatch: pytest.MonkeyPatch, factor: float) -> None:
    """Make every plan use ``factor`` times the true rate c."""
    if factor == 1:
        return
    real = argmax.rate_for

    def wrong(epsilon: Fraction, sensitivity: int, monotone: bool) -> Rate:
        return real(epsilon * Fraction(factor), sensitivity, monotone)

    for module in (argmax, quantile):  # the argmax's plans, and the quantiles'
        monkeypatch.setattr(module, "rate_for", wrong)


def shop_frame() -> pd.DataFrame:
    """300 sales of 4 products in 2 regions (plus rows outside the candidates), no budget."""
    rng = np.random.Generator(np.random.PCG64(2024))
    n = 300
    return pd.DataFrame(
        {
            "product": rng.choice(["hat", "bag", "shoe", "sock", "other"], size=n),
            "region": rng.choice(["N", "S"], size=n),
            "revenue": rng.uniform(0, 600, size=n),
        }
    )


@pytest.fixture
def shop() -> pd.DataFrame:
    """:func:`shop_frame` with a seeded budget of 10."""
    df = shop_frame()
    df.dp.set_budget(epsilon=10, seed=11)
    return df


PRODUCTS = ["hat", "bag", "shoe", "sock"]
GRID = np.linspace(0, 600, 61)


# ------------------------------------------------------------ privacy maps (exact)


@pytest.mark.parametrize(
    "c",
    [
        Fraction(1, 2),
        Fraction(1, 10),
        Fraction(10),
        Fraction(1, 3 * 2**29),
        Fraction(7),
    ],
)
def test_rate_rounds_down_with_32_significant_bits(c: Fraction) -> None:
    rate = Rate.at_most(c)
    assert rate.value <= c
    assert c - rate.value <= c / 2**31
    assert 2**31 <= rate.num < 2**32 or rate.shift == 0


@pytest.mark.parametrize(
    ("c", "expected"),
    [
        (Fraction(2**40), Rate(2**32 - 1, 0)),
        (Fraction(1, 2**80), Rate(0, 62)),
        (Fraction(0), Rate(0, 0)),
    ],
)
def test_rate_is_capped_at_the_extremes(c: Fraction, expected: Rate) -> None:
    assert Rate.at_most(c) == expected


@pytest.mark.parametrize(
    ("adjacency", "k", "expected_rate"),
    [
        ("add_remove", 1, Fraction(1, 2)),  # c = ε/Δ: counts are monotone
        ("substitute", 1, Fraction(1, 4)),  # c = ε/(2Δ)
        ("add_remove", 2, Fraction(1, 4)),  # each peel at ε/k
    ],
)
def test_argmax_count_rate(adjacency: str, k: int, expected_rate: Fraction) -> None:
    plan = argmax.plan_argmax(Fraction(1, 2), Neighbours(adjacency), k=k)
    assert plan.sensitivity == 1
    assert plan.rate.value == expected_rate
    assert plan.realised_epsilon == Fraction(1, 2)


@pytest.mark.parametrize("adjacency", ["add_remove", "substitute"])
@pytest.mark.parametrize("epsilon", [Fraction(3, 10), Fraction(1, 1000), Fraction(10)])
def test_realised_epsilon_never_exceeds_the_charge(adjacency: str, epsilon: Fraction) -> None:
    for plan in (
        argmax.plan_argmax(epsilon, Neighbours(adjacency), k=3),
        argmax.plan_argmax(epsilon, Neighbours(adjacency), k=2, clip=(-100.0, 500.0)),
        quantile.plan_quantile(Fraction(9, 10), epsilon, Neighbours(adjacency)),
        quantile.plan_quantile(Fraction(1, 3), epsilon, Neighbours(adjacency, grouped=True)),
    ):
        assert epsilon * (1 - Fraction(1, 2**30)) <= plan.realised_epsilon <= epsilon


@pytest.mark.parametrize(("adjacency", "monotone"), [("add_remove", True), ("substitute", False)])
def test_argmax_sum_sensitivity_on_the_grid(adjacency: str, monotone: bool) -> None:
    plan = argmax.plan_argmax(Fraction(1), Neighbours(adjacency), clip=(-100.0, 500.0))
    grid = plan.grid
    assert grid is not None
    assert grid.q_lo < 0 < grid.q_hi
    # add_remove: one row moves one score by at most max(|L|, |U|); substitute:
    # a row changing within a candidate moves its score by up to U - L.
    expected = grid.q_hi if monotone else grid.q_hi - grid.q_lo
    assert plan.sensitivity == expected
    assert plan.monotone is monotone
    assert float(plan.sensitivity * plan.unit) == pytest.approx(500 if monotone else 600)


@pytest.mark.parametrize(
    ("q", "adjacency", "grouped", "sensitivity"),
    [
        (Fraction(1, 2), "add_remove", False, 1),  # max(q, 1 - q) = 1/2 of d = 2
        (Fraction(9, 10), "add_remove", False, 9),
        (Fraction(9, 10), "substitute", False, 10),  # known n: 1 in q-units
        (Fraction(9, 10), "substitute", True, 18),  # a row moving between keys: 2 max(q, 1-q)
        (Fraction(1, 2), "substitute", True, 2),  # the median: 1 in q-units either way
        (Fraction(0), "add_remove", False, 1),
    ],
)
def test_quantile_sensitivity(q: Fraction, adjacency: str, grouped: bool, sensitivity: int) -> None:
    plan = quantile.plan_quantile(q, Fraction(1), Neighbours(adjacency, grouped=grouped))
    assert plan.sensitivity == sensitivity
    assert plan.monotone is False
    assert plan.unit == Fraction(1, q.denominator)


def test_quantile_substitute_sensitivity_is_exhaustively_tight() -> None:
    """Every substitution (x -> y) moves the integer score of c by at most d, and d is reached."""
    a, d, c = 9, 10, 2
    values = [0, 1, 2, 3, 4]

    def score(xs: list[int]) -> int:
        return abs((d - a) * sum(x < c for x in xs) - a * sum(x > c for x in xs))

    worst = 0
    for data in itertools.product(values, repeat=3):
        for i, y in itertools.product(range(3), values):
            changed = list(data)
            changed[i] = y
            worst = max(worst, abs(score(list(data)) - score(changed)))
    assert (
        worst
        == quantile.plan_quantile(Fraction(a, d), Fraction(1), Neighbours("substitute")).sensitivity
    )


def _exact_quantile_losses(q: Fraction, adjacency: str, factor: float) -> tuple[float, float]:
    """The largest exact privacy loss of the quantile release over small neighbouring frames.

    Returns (ungrouped, grouped): exact permute-and-flip probabilities of the
    real integer scores at the plan's rate (times ``factor``), over every frame
    of up to 3 rows on a 5-value domain and every neighbour of it; grouped, a
    row also moves (with any new value) to another key holding one row.
    """
    grid = np.array([0.5, 1.5, 2.5, 3.5])
    domain = (0.0, 1.0, 2.0, 3.0, 4.0)
    rates = [
        factor
        * float(quantile.plan_quantile(q, Fraction(1), Neighbours(adjacency, grouped=g)).rate.value)
        for g in (False, True)
    ]
    cache: dict[tuple[tuple[float, ...], float], np.ndarray] = {}

    def log_probs(rows: tuple[float, ...], c: float) -> np.ndarray:
        key = (tuple(sorted(rows)), c)
        if key not in cache:
            table = quantile.quantile_table(np.array(rows, dtype=float), None, 1, grid)
            u = quantile.quantile_scores(table, q)[0]
            cache[key] = np.log(pf_probabilities(u, c))
        return cache[key]

    def loss(before: tuple[float, ...], after: tuple[float, ...], c: float) -> np.ndarray:
        return log_probs(before, c) - log_probs(after, c)

    single = grouped = 0.0
    for n in range(1, 4):
        for rows in itertools.combinations_with_replacement(domain, n):
            drop = [rows[:i] + rows[i + 1 :] for i in range(n)]
            if adjacency == "add_remove":
                others = drop + [(*rows, y) for y in domain]
            else:
                others = [(*d, y) for d in drop for y in domain]
            for other in others:
                single = max(single, float(np.abs(loss(rows, other, rates[0])).max()))
            if adjacency == "substitute":  # a row moves to another key (and may change)
                for d, z, y in itertools.product(drop, domain, domain):
                    a, b = loss(rows, d, rates[1]), loss((z,), (z, y), rates[1])
                    grouped = max(grouped, a.max() + b.max(), -(a.min() + b.min()))
                for other in others:
                    grouped = max(grouped, float(np.abs(loss(rows, other, rates[1])).max()))
    return single, grouped


@pytest.mark.parametrize("q", [Fraction(1, 2), Fraction(9, 10), Fraction(1, 4)])
@pytest.mark.parametrize("adjacency", ["add_remove", "substitute"])
def test_quantile_rates_bound_the_exact_privacy_loss(q: Fraction, adjacency: str) -> None:
    single, grouped = _exact_quantile_losses(q, adjacency, 1.0)
    assert single <= 1 + 1e-9
    assert grouped <= 1 + 1e-9


@pytest.mark.parametrize("adjacency", ["add_remove", "substitute"])
def test_exact_privacy_loss_check_catches_a_doubled_rate(adjacency: str) -> None:
    single, _ = _exact_quantile_losses(Fraction(1, 2), adjacency, 2.0)
    assert single > 1.5


def test_quantile_q_is_rationalized() -> None:
    from pandas_dp.core.validation import check_quantile

    assert check_quantile(0.9) == Fraction(9, 10)
    assert check_quantile(1 / 3) == Fraction(1, 3)
    assert check_quantile(1) == Fraction(1)


# --------------------------------------------------------------- exact arithmetic


@pytest.mark.parametrize(
    "rate",
    [
        Rate.at_most(Fraction(1, 2)),
        Rate.at_most(Fraction(10)),
        Rate.at_most(Fraction(1, 3 * 2**29)),
        Rate(2**32 - 1, 0),
        Rate(2**32 - 1, 62),
        Rate(12345, 31),
        Rate(2**31 + 7, 33),
        Rate(1, 0),
    ],
)
def test_gamma_parts_is_exact_96_bit_arithmetic(rate: Rate) -> None:
    rng = np.random.Generator(np.random.PCG64(5))
    bits = rng.integers(0, 65, size=4000)
    raw = rng.integers(0, 2**63, size=4000, dtype=np.uint64) * np.uint64(2) + np.uint64(1)
    gaps = np.where(
        bits == 64, raw, raw & ((np.uint64(1) << bits.astype(np.uint64)) - np.uint64(1))
    )
    gaps = np.concatenate([gaps, np.array([0, 1, 2**32, 2**64 - 1], dtype=np.uint64)])
    whole, num, den = argmax.gamma_parts(gaps, rate)
    assert (den == 1 << rate.shift).all()
    for gap, w, f in zip(gaps.tolist(), whole.tolist(), num.tolist(), strict=True):
        product = rate.num * gap
        if product >> rate.shift >= GAMMA_CAP:
            assert (w, f) == (GAMMA_CAP, 0)
        else:
            assert (w, f) == (product >> rate.shift, product & ((1 << rate.shift) - 1))


# --------------------------------------------------- distribution of the selection


def _winner_counts(result: pd.Series, labels: Sequence[Any]) -> np.ndarray:
    return result.value_counts().reindex(labels, fill_value=0).to_numpy()


COUNT_CASE = {"product": ["a"] * 4 + ["b"] * 3 + ["c"] + ["x"] * 9}  # d has no rows, x is dropped


@pytest.mark.parametrize("factor", [1.0, *WRONG])
@pytest.mark.parametrize(("adjacency", "c"), [("add_remove", 0.5), ("substitute", 0.25)])
def test_argmax_counts_follow_permute_and_flip(
    monkeypatch: pytest.MonkeyPatch, adjacency: str, c: float, factor: float
) -> None:
    df = replicated(COUNT_CASE, GROUPS)
    df.dp.set_budget(epsilon=1, adjacency=adjacency, seed=1)
    scaled_rate(monkeypatch, factor)
    winners = df.dp.groupby("g", keys=pd.RangeIndex(GROUPS)).argmax_exp(
        "product", candidates=["a", "b", "c", "d"], epsilon=0.5
    )
    p = chi2_pvalue(_winner_counts(winners, list("abcd")), pf_probabilities([4, 3, 1, 0], c))
    assert (p > P_THRESHOLD) is (factor == 1.0), p


@pytest.mark.parametrize("factor", [1.0, *WRONG])
def test_argmax_clipped_sums_follow_permute_and_flip(
    monkeypatch: pytest.MonkeyPatch, factor: float
) -> None:
    block = {"product": ["a", "a", "b", "c", "c"], "revenue": [300.0, 950.0, 480.0, 100.0, np.nan]}
    df = replicated(block, GROUPS)
    df.dp.set_budget(epsilon=2, seed=3)
    scaled_rate(monkeypatch, factor)
    winners = df.dp.groupby("g", keys=pd.RangeIndex(GROUPS)).argmax_exp(
        "product", candidates=["a", "b", "c"], value="revenue", clip=(0, 500), epsilon=2
    )
    # clipped sums 800, 480, 100 (NaN skipped); add_remove c = ε/max(|L|, |U|) = 2/500
    expected = pf_probabilities([800, 480, 100], 2 / 500)
    p = chi2_pvalue(_winner_counts(winners, list("abc")), expected)
    assert (p > P_THRESHOLD) is (factor == 1.0), p


@pytest.mark.parametrize("factor", [1.0, *WRONG])
def test_top_k_peels_at_epsilon_over_k(monkeypatch: pytest.MonkeyPatch, factor: float) -> None:
    df = replicated(COUNT_CASE, GROUPS)
    df.dp.set_budget(epsilon=1, seed=4)
    scaled_rate(monkeypatch, factor)
    top = df.dp.groupby("g", keys=pd.RangeIndex(GROUPS)).argmax_exp(
        "product", candidates=["a", "b", "c", "d"], epsilon=1.0, k=2
    )
    assert list(top.columns) == [1, 2]
    assert (top[1] != top[2]).all()
    expected = peel_probabilities([4, 3, 1, 0], 0.5)  # two rounds at ε/2 each
    pairs = pd.Series(list(zip(top[1].map("abcd".index), top[2].map("abcd".index), strict=True)))
    observed = pairs.value_counts().reindex(list(expected), fill_value=0).to_numpy()
    p = chi2_pvalue(observed, list(expected.values()))
    assert (p > P_THRESHOLD) is (factor == 1.0), p
    assert df.dp.budget.spent == 1


QUANTILE_BLOCK = {"x": [1.0, 2.0, 2.0, 3.5, 5.0, 7.0, np.nan, np.inf]}
QUANTILE_GRID = [0.0, 2.0, 4.0, 6.0, 8.0]


def _quantile_distance(xs: Sequence[float], c: float, q: Fraction) -> Fraction:
    """The quantile score of c by its definition: the distance from q·n to [#(x < c), #(x <= c)]."""
    n = len(xs)
    less, at_most = sum(x < c for x in xs), sum(x <= c for x in xs)
    return max(Fraction(less) - q * n, q * n - at_most, Fraction(0))


def _quantile_utilities(q: float) -> list[float]:
    xs = [x for x in QUANTILE_BLOCK["x"] if not math.isnan(x)]
    return [-float(_quantile_distance(xs, c, Fraction(repr(q)))) for c in QUANTILE_GRID]


@pytest.mark.parametrize("factor", [1.0, *WRONG])
@pytest.mark.parametrize(
    ("q", "adjacency", "delta"),
    [
        (0.5, "add_remove", 0.5),  # max(q, 1 - q)
        (0.75, "add_remove", 0.75),
        (0.5, "substitute", 1.0),
        (0.75, "substitute", 1.5),  # grouped: 2·max(q, 1 - q)
    ],
)
def test_grouped_quantile_follows_permute_and_flip(
    monkeypatch: pytest.MonkeyPatch, q: float, adjacency: str, delta: float, factor: float
) -> None:
    df = replicated(QUANTILE_BLOCK, GROUPS)
    df.dp.set_budget(epsilon=1.5, adjacency=adjacency, seed=6)
    scaled_rate(monkeypatch, factor)
    result = df.dp.groupby("g", keys=pd.RangeIndex(GROUPS)).quantile(
        "x", q, candidates=QUANTILE_GRID, epsilon=1.5
    )
    expected = pf_probabilities(_quantile_utilities(q), 1.5 / (2 * delta))
    p = chi2_pvalue(_winner_counts(result, QUANTILE_GRID), expected)
    assert (p > P_THRESHOLD) is (factor == 1.0), p


@pytest.mark.parametrize("epsilon", [0.5, 10.0])
def test_huge_counts_neither_overflow_nor_bias(epsilon: float) -> None:
    """Counts near 10**9 (the textbook exp(ε·u/2Δ) overflows near u = 1,400)."""
    top = 10**9
    utility = np.tile(np.array([top, top, top - 1, top - 3, 0], dtype=np.int64), (GROUPS, 1))
    plan = argmax.plan_argmax(Fraction(repr(epsilon)), Neighbours("add_remove"))
    winners = argmax.permute_and_flip(SeededSource(8), utility, plan.rate)
    observed = np.bincount(winners, minlength=5)
    expected = pf_probabilities([3, 3, 2, 0, -top + 3], epsilon)
    assert observed[4] == 0
    # merge the bins with tiny expected counts (ε = 10) into one
    keep = expected * GROUPS >= 20
    obs = np.append(observed[keep], observed[~keep].sum())
    exp = np.append(expected[keep], expected[~keep].sum())
    if exp[-1] == 0:
        obs, exp = obs[:-1], exp[:-1]
    assert chi2_pvalue(obs, exp) > P_THRESHOLD


def test_huge_clipped_sums_on_the_grid() -> None:
    """Scores near 2**62 grid units: the gaps need 96-bit products, still exact."""
    plan = argmax.plan_argmax(Fraction(1), Neighbours("add_remove"), clip=(0.0, 1.0))
    step = int(1 / plan.unit)  # grid units per data unit
    base = 2**62
    utility = np.tile(np.array([base, base - step, -base], dtype=np.int64), (GROUPS, 1))
    winners = argmax.permute_and_flip(SeededSource(9), utility, plan.rate)
    observed = np.bincount(winners, minlength=3)
    assert observed[2] == 0
    assert chi2_pvalue(observed[:2], pf_probabilities([1, 0], 1.0)[:2]) > P_THRESHOLD


# ------------------------------------------------------------------- privacy audit


AUDIT_GROUPS = 50_000


@pytest.mark.parametrize(
    ("adjacency", "neighbour", "factor", "expect"),
    [
        ("add_remove", ["a", "b", "b"], 1.0, "tight"),  # one extra row breaks the tie
        ("add_remove", ["a", "b", "b"], 2.0, "broken"),
        ("substitute", ["b", "b"], 1.0, "tight"),  # one row changed from a to b
        ("substitute", ["b", "b"], 2.0, "broken"),
        ("substitute", ["a", "b", "b"], 1.0, "within"),  # an extra row (a filtered frame)
    ],
)
def test_privacy_audit_on_neighbouring_frames(
    monkeypatch: pytest.MonkeyPatch,
    epsilon_lower_bound: Callable[[np.ndarray, np.ndarray], float],
    adjacency: str,
    neighbour: list[str],
    factor: float,
    expect: str,
) -> None:
    """Clopper-Pearson lower bound on ε from the winners on D and D' (conftest fixture)."""
    scaled_rate(monkeypatch, factor)
    epsilon = 1.0
    wins = []
    for seed, block in ((21, ["a", "b"]), (22, neighbour)):
        df = replicated({"product": block}, AUDIT_GROUPS)
        df.dp.set_budget(epsilon=epsilon, adjacency=adjacency, seed=seed)
        winners = df.dp.groupby("g", keys=pd.RangeIndex(AUDIT_GROUPS)).argmax_exp(
            "product", candidates=["a", "b"], epsilon=epsilon
        )
        wins.append((winners == "b").to_numpy(dtype=np.float64))
    bound = epsilon_lower_bound(wins[0], wins[1])
    if expect == "broken":
        assert bound > epsilon
    else:
        assert bound <= epsilon
    if expect == "tight":  # this pair realises the full ε: the audit has power
        assert bound >= 0.8 * epsilon


# ------------------------------------------------------------------------ accuracy


def test_dp_median_of_real_incomes_is_accurate(shared_data: Path) -> None:
    income = pd.read_csv(shared_data / "pums_1000.csv")[["income"]]
    p40, p60 = np.percentile(income["income"], [40, 60])
    grid = np.linspace(0, 500_000, 1001)
    inside = 0
    for seed in range(100):
        df = income.copy()
        df.dp.set_budget(epsilon=1, seed=seed)
        inside += p40 <= df.dp.median("income", candidates=grid, epsilon=1) <= p60
    assert inside >= 90


def test_median_of_heavily_tied_data_is_the_tied_value() -> None:
    # 100 below 17, 380 at 17, 10 at 18, 454 above: the median is 17. The earlier score
    # |(1 - q)·#(x < c) - q·#(x > c)| ignored the rows equal to c and preferred 18.
    values = np.repeat([10.0, 17.0, 18.0, 30.0], [100, 380, 10, 454])
    grid = np.array([16.0, 17.0, 18.0, 19.0])
    utility = quantile.quantile_scores(
        quantile.quantile_table(values, None, 1, grid), Fraction(1, 2)
    )[0]
    assert utility.tolist() == [-2 * 372, 0, -2 * 8, -2 * 18]  # d·distance, d = 2
    assert float(np.median(values)) == 17.0
    df = pd.DataFrame({"x": values})
    df.dp.set_budget(epsilon=100, seed=1)
    assert [df.dp.median("x", candidates=grid, epsilon=10) for _ in range(10)] == [17.0] * 10


def test_grouped_quantile_scores_match_a_loop_over_keys() -> None:
    rng = np.random.Generator(np.random.PCG64(13))
    grid = np.array([-1.0, 0.0, 0.5, 2.0, 3.0])
    values = rng.choice([-2.0, -1.0, 0.0, 0.25, 0.5, 2.0, 9.0, np.nan, np.inf, -np.inf], size=500)
    codes = rng.integers(-1, 7, size=500)
    q = Fraction(3, 10)
    got = quantile.quantile_scores(quantile.quantile_table(values, codes, 7, grid), q)
    for key in range(7):
        xs = values[(codes == key) & ~np.isnan(values)]
        for j, c in enumerate(grid):
            assert got[key, j] == -_quantile_distance(list(xs), c, q) * q.denominator


# ----------------------------------------------------------- candidates and shape


def test_candidate_without_rows_can_win_and_others_are_dropped() -> None:
    base = replicated({"product": ["a", "b"]}, 2000)
    noisy = replicated({"product": ["a", "b", "zz", None, "zz"]}, 2000)
    results = []
    for df in (base, noisy):
        df.dp.set_budget(epsilon=1, seed=30)
        results.append(
            df.dp.groupby("g", keys=pd.RangeIndex(2000)).argmax_exp(
                "product", candidates=["a", "b", "none"], epsilon=0.5
            )
        )
    pd.testing.assert_series_equal(results[0], results[1])  # rows outside the candidates: no trace
    assert (results[0] == "none").sum() > 0


@pytest.mark.parametrize(
    ("values", "candidates"),
    [
        (["a", "b", None, "zz", "a", np.nan], ["a", "b", "c"]),
        (pd.Categorical(["a", "b", None, "zz", "a"], categories=["zz", "b", "a"]), ["a", "b", "c"]),
        ([1.0, 2.0, np.nan, 7.0, 1.0], [1, 2, 3]),
        ([1, "1", 2.5, None, True], [1, "1", 2.5]),
        (["a", "zz", "b", "a"], ["a", "b", "c"]),
        (pd.Series([], dtype=object), ["a"]),
    ],
    ids=["strings", "categorical", "numbers", "mixed", "no missing", "empty"],
)
def test_ungrouped_counts_match_the_grouped_encoding(values: Any, candidates: list[Any]) -> None:
    from pandas_dp.mechanisms.keys import encode_keys

    df = pd.DataFrame({"c": values})
    cands = pd.Index(candidates)
    cells = encode_keys(df, ["c"], cands)
    expected = argmax.count_utilities(cells, 1, len(cands))
    np.testing.assert_array_equal(argmax.candidate_counts(df["c"], cands), expected)


def test_categorical_column_and_candidates_match_plain_strings(shop: pd.DataFrame) -> None:
    cat = pd.CategoricalDtype(PRODUCTS)
    other = shop_frame()
    other["product"] = other["product"].astype(pd.CategoricalDtype([*PRODUCTS, "other"]))
    other.dp.set_budget(epsilon=10, seed=11)
    assert shop.dp.argmax_exp("product", candidates=PRODUCTS, epsilon=0.5, k=4) == (
        other.dp.argmax_exp("product", candidates=cat, epsilon=0.5, k=4)
    )


def test_shapes_and_types(shop: pd.DataFrame) -> None:
    regions = ["N", "S", "E"]
    one = shop.dp.argmax_exp("product", candidates=PRODUCTS, epsilon=0.5)
    three = shop.dp.argmax_exp("product", candidates=PRODUCTS, epsilon=0.5, k=3)
    assert isinstance(one, str)
    assert one in PRODUCTS
    assert isinstance(three, list)
    assert len(set(three)) == 3
    assert set(three) <= set(PRODUCTS)
    g = shop.dp.groupby("region", keys=regions)
    per_key = g.argmax_exp("product", candidates=PRODUCTS, epsilon=0.5)
    assert list(per_key.index) == regions
    assert per_key.name == "product"
    median = shop.dp.median("revenue", candidates=GRID, epsilon=0.2)
    assert isinstance(median, float)
    assert median in GRID
    medians = g.median("revenue", candidates=GRID, epsilon=0.2)
    assert list(medians.index) == regions
    assert medians.isin(GRID).all()
    q90 = shop.dp.quantile("revenue", 0.9, candidates=GRID, epsilon=0.2)
    assert q90 in GRID


def test_a_given_k_answers_a_list_also_for_one(shop: pd.DataFrame) -> None:
    """With ``k`` the answer is a list (a DataFrame per key), as the overloads type it."""
    top = shop.dp.argmax_exp("product", candidates=PRODUCTS, epsilon=0.5, k=1)
    assert isinstance(top, list)
    assert len(top) == 1
    assert top[0] in PRODUCTS
    g = shop.dp.groupby("region", keys=["N", "S", "E"])
    per_key = g.argmax_exp("product", candidates=PRODUCTS, epsilon=0.5, k=1)
    assert isinstance(per_key, pd.DataFrame)
    assert list(per_key.columns) == [1]
    assert per_key[1].isin(PRODUCTS).all()


def test_numeric_candidates_come_back_as_python_scalars(shop: pd.DataFrame) -> None:
    df = shop.dp.assign(size=shop["revenue"] // 200)
    winner = df.dp.argmax_exp("size", candidates=[0.0, 1.0, 2.0], epsilon=0.5)
    assert type(winner) is float


def test_seeded_runs_repeat_and_leave_numpy_state_alone(salaries: pd.DataFrame) -> None:
    state = np.random.get_state()[1].copy()  # noqa: NPY002
    out = []
    for _ in range(2):
        df = salaries.copy()
        df.dp.set_budget(epsilon=5, seed=99)
        out.append(
            (
                df.dp.argmax_exp("dept", candidates=["Eng", "Ops", "Sales"], epsilon=0.1, k=2),
                df.dp.median("salary", candidates=np.linspace(0, 2e5, 201), epsilon=0.1),
            )
        )
    assert out[0] == out[1]
    assert (np.random.get_state()[1] == state).all()  # noqa: NPY002


# ------------------------------------------------------------------- budget, ledger


def test_one_charge_per_call_and_a_public_ledger(shop: pd.DataFrame) -> None:
    g = shop.dp.groupby("region", keys=["N", "S"])
    shop.dp.argmax_exp("product", candidates=PRODUCTS, epsilon=0.3, k=3)
    g.argmax_exp("product", candidates=PRODUCTS, value="revenue", clip=(0, 500), epsilon=0.3)
    g.median("revenue", candidates=GRID, epsilon=0.2)
    shop.dp.quantile("revenue", 0.9, candidates=GRID, epsilon=0.1)
    budget = shop.dp.budget
    assert budget.spent == Fraction("0.9")
    ledger = budget.ledger
    assert list(ledger["operation"]) == [
        "argmax_exp(k=3)",
        "groupby.argmax_exp",
        "groupby.median",
        "quantile(q=0.9)",
    ]
    assert (ledger["mechanism"] == "permute_and_flip (seeded: NOT private)").all()
    assert list(ledger["keys"].fillna(0)) == [0, 2, 2, 0]
    text = ledger.to_string()
    assert not any(name in text for name in PRODUCTS)


DEPTS = ["Eng", "Ops", "Sales"]
SALARIES = np.linspace(0, 200_000, 201)


def _argmax(column: str = "dept", **kwargs: Any) -> Callable[[pd.DataFrame], object]:
    arguments = {"candidates": DEPTS, "epsilon": 0.1, **kwargs}
    return lambda d: d.dp.argmax_exp(column, **arguments)


def _quantile(
    q: object = 0.5, column: str = "salary", **kwargs: Any
) -> Callable[[pd.DataFrame], object]:
    arguments = {"candidates": SALARIES, "epsilon": 0.1, **kwargs}
    return lambda d: d.dp.quantile(column, q, **arguments)


BAD_CALLS: dict[str, tuple[Callable[[pd.DataFrame], object], type[Exception], str]] = {
    "candidates omitted": (
        lambda d: d.dp.argmax_exp("dept", epsilon=0.1),
        TypeError,
        "must not be read from the data",
    ),
    "no candidates": (_argmax(candidates=None), TypeError, "public"),
    "duplicates": (_argmax(candidates=["Eng", "Eng"]), ValueError, "duplicates"),
    "empty": (_argmax(candidates=[]), ValueError, "empty"),
    "missing": (_argmax(candidates=["Eng", None]), ValueError, "missing"),
    "a set": (_argmax(candidates={"Eng", "Ops"}), TypeError, "order"),
    "a string": (_argmax(candidates="Eng"), TypeError, "collection"),
    "k too large": (_argmax(k=4), ValueError, "between 1 and"),
    "k zero": (_argmax(k=0), ValueError, "between 1 and"),
    "k bool": (_argmax(k=True), TypeError, "`k`"),
    "clip alone": (_argmax(clip=(0, 1)), TypeError, "value"),
    "value alone": (_argmax(value="salary"), TypeError, "clip"),
    "reversed clip": (_argmax(value="salary", clip=(1, 0)), ValueError, "clip"),
    "text value": (_argmax(value="dept", clip=(0, 1)), TypeError, "numeric"),
    "no column": (_argmax(column="nope"), KeyError, "nope"),
    "bad epsilon": (_argmax(epsilon=-1), ValueError, "epsilon"),
    "over budget": (_argmax(epsilon=11), BudgetExceededError, "nothing was spent"),
    "duplicated column": (
        lambda d: (
            pd.concat([d, d[["dept"]]], axis=1)
            .dp.inherit(d)
            .dp.argmax_exp("dept", candidates=DEPTS, epsilon=0.1)
        ),
        ValueError,
        "duplicated",
    ),
    "q above 1": (_quantile(1.5), ValueError, "`q`"),
    "q below 0": (_quantile(-0.1), ValueError, "`q`"),
    "q nan": (_quantile(float("nan")), ValueError, "`q`"),
    "q text": (_quantile("0.5"), TypeError, "`q`"),
    "unsorted grid": (_quantile(candidates=[3, 1, 2]), ValueError, "increasing"),
    "infinite grid": (_quantile(candidates=[0, np.inf]), ValueError, "finite"),
    "nan grid": (_quantile(candidates=[0, np.nan]), ValueError, "missing"),
    "repeated grid": (_quantile(candidates=[0, 1, 1]), ValueError, "duplicates"),
    "text grid": (_quantile(candidates=["a", "b"]), TypeError, "numbers"),
    "text column": (_quantile(column="dept"), TypeError, "numeric"),
    "grouped k": (
        lambda d: d.dp.groupby("dept", keys=DEPTS).argmax_exp(
            "age", candidates=[20, 30], epsilon=0.1, k=3
        ),
        ValueError,
        "between 1 and",
    ),
    "grouped grid": (
        lambda d: d.dp.groupby("dept", keys=DEPTS).median("salary", candidates=[2, 1], epsilon=0.1),
        ValueError,
        "increasing",
    ),
    "too many cells": (
        lambda d: d.dp.groupby("dept", keys=[f"d{i}" for i in range(2**13)]).argmax_exp(
            "age", candidates=range(2**12), epsilon=0.1
        ),
        ValueError,
        "cells",
    ),
}


@pytest.mark.parametrize(("call", "error", "fragment"), BAD_CALLS.values(), ids=BAD_CALLS.keys())
def test_errors_are_raised_before_any_spend(
    protected: pd.DataFrame,
    nothing_spent: Callable[[], None],
    call: Callable[[pd.DataFrame], object],
    error: type[Exception],
    fragment: str,
) -> None:
    with pytest.raises(error, match=fragment):
        call(protected)
    nothing_spent()


@pytest.mark.parametrize(
    ("values", "candidates", "error"),
    [
        (["a", "b"], pd.IntervalIndex.from_tuples([(0, 2), (1, 3)]), ValueError),  # overlapping
        ([["a"], "b"], ["a", "b"], TypeError),  # an unhashable value in the column
    ],
    ids=["overlapping-intervals", "unhashable-value"],
)
def test_argmax_input_that_cannot_be_encoded_is_refused_before_spending(
    values: list[Any], candidates: Any, error: type[Exception]
) -> None:
    df = pd.DataFrame({"product": pd.Series(values, dtype=object)})
    df.dp.set_budget(epsilon=1, seed=0)
    with pytest.raises(error):
        df.dp.argmax_exp("product", candidates=candidates, epsilon=0.5)
    assert df.dp.budget.spent == 0


@pytest.mark.parametrize(
    ("column", "candidates", "message"),
    [
        ("age", ["30", "40"], "`candidates` are strings but column 'age' holds numbers"),
        ("dept", [1, 2], "`candidates` are numbers but column 'dept' holds strings"),
    ],
)
def test_candidates_of_a_type_that_never_matches_are_refused_before_any_spend(
    protected: pd.DataFrame,
    nothing_spent: Callable[[], None],
    column: str,
    candidates: list[object],
    message: str,
) -> None:
    with pytest.raises(TypeError, match=message):
        protected.dp.argmax_exp(column, candidates=candidates, epsilon=0.5)
    with pytest.raises(TypeError, match=message):
        protected.dp.groupby("dept", keys=["Eng"]).argmax_exp(
            column, candidates=candidates, epsilon=0.5
        )
    nothing_spent()
