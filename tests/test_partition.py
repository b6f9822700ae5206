"""Private key selection: exact plans, the δ bound, the kernel, and an empirical (ε, δ) audit."""

from __future__ import annotations

import dataclasses
import itertools
import math
import re
from collections.abc import Callable
from fractions import Fraction
from statistics import NormalDist

import numpy as np
import pandas as pd
import pytest
import scipy.stats

from pandas_dp.core.noise import SeededSource
from pandas_dp.errors import PoorAnswerWarning
from pandas_dp.mechanisms.contributions import unit_codes
from pandas_dp.mechanisms.key_selection import (
    PROB_BITS,
    WEIGHT_UNIT,
    ChosenKeys,
    KeySelection,
    SelectionPlan,
    combine_statistics,
    key_statistics,
    new_person_bound,
    observed_codes,
    people_for_half,
    person_statistics,
    release_probability,
    select_codes,
    select_keys,
    selection_plan,
)

DELTA = Fraction(1, 10**5)
ONE = 1 << PROB_BITS


def plan_of(method: str, g: int = 1, delta: Fraction = DELTA) -> SelectionPlan:
    budget = {"epsilon": 1} if method in ("laplace", "truncated_geometric") else {"rho": 0.5}
    return selection_plan(**budget, delta=delta, max_groups=g, method=method)  # type: ignore[arg-type]


METHODS = ["laplace", "truncated_geometric", "gaussian", "weighted_gaussian"]


# --- data-free plans -------------------------------------------------------------------------


@pytest.mark.parametrize(("g", "threshold"), [(1, 13), (20, 278), (100, 1544)])
def test_laplace_plan_is_exact(g: int, threshold: int) -> None:
    plan = plan_of("laplace", g)
    assert plan.scale == Fraction(g)
    assert plan.threshold == threshold
    # τ = 1 + ⌈(g/ε)·ln(g / (δ·(1 + e^(−ε/g))))⌉: P(Z ≥ τ − 1) = a^(τ−1)/(1 + a) ≤ δ/g
    a = math.exp(-1 / g)
    assert threshold == 1 + math.ceil(g * math.log(g / (float(DELTA) * (1 + a))))


@pytest.mark.parametrize(("g", "threshold"), [(1, 6), (20, 24)])
def test_gaussian_plan_is_exact(g: int, threshold: int) -> None:
    plan = plan_of("gaussian", g)  # ρ = 1/2, L2 sensitivity √g: σ² = g
    assert plan.sigma2 == g
    assert plan.threshold == threshold


def test_weighted_gaussian_plan_weighs_a_person_by_one_over_root_t() -> None:
    plan = plan_of("weighted_gaussian", 20)
    assert plan.sigma2 == Fraction(WEIGHT_UNIT**2)  # S²/(2ρ) at ρ = 1/2
    assert [plan.weight(t) for t in (1, 4, 20)] == [WEIGHT_UNIT, WEIGHT_UNIT // 2, 14654]
    assert all(t * plan.weight(t) ** 2 <= WEIGHT_UNIT**2 for t in range(1, 21))


@pytest.mark.parametrize("g", [1, 20, 100])
def test_truncated_geometric_probabilities_satisfy_the_dp_constraints(g: int) -> None:
    plan = plan_of("truncated_geometric", g)
    pi = [Fraction(p, ONE) for p in plan.probabilities]
    d = DELTA / g
    e = Fraction(math.exp(1 / g))  # at least the rational E the plan used
    assert pi[0] == 0
    assert pi[-1] == 1
    assert pi[1] == Fraction(DELTA.numerator * ONE // (g * DELTA.denominator), ONE)
    for before, after in itertools.pairwise(pi):
        assert before <= after
        assert after <= e * before + d
        assert 1 - before <= e * (1 - after) + d


@pytest.mark.parametrize(("g", "people"), [(1, 12), (20, 217), (100, 1083)])
def test_truncated_geometric_reproduces_the_issues_figures(g: int, people: int) -> None:
    """Issue 21: 12 people for a 50 % chance at g = 1; 217 and 1,083 at g = 20 and 100."""
    assert people_for_half(plan_of("truncated_geometric", g)) == people


def _analytic_gaussian_sigma(epsilon: float, delta: float) -> float:
    """Balle & Wang 2018: the smallest σ of a sensitivity-1 Gaussian that is (ε, δ)-DP."""
    phi = NormalDist().cdf
    lo, hi = 0.1, 100.0
    for _ in range(200):
        s = (lo + hi) / 2
        d = phi(1 / (2 * s) - epsilon * s) - math.exp(epsilon) * phi(-1 / (2 * s) - epsilon * s)
        lo, hi = (s, hi) if d > delta else (lo, s)
    return hi


@pytest.mark.parametrize(("g", "issue", "ours"), [(20, 82, 89), (100, 182, 209)])
def test_weighted_gaussian_figures(g: int, issue: int, ours: int) -> None:
    """The issue's 82 and 182 people: (ε, δ) = (1, 1e-5), δ/2 for the noise, δ/2 for the threshold.

    They count only a person holding one new key (t = 1:
    ``√g·(1 + σ·Φ⁻¹(1 − δ/2))``).  A person holding up to g new keys (Gopi et
    al.'s max over t) needs a higher threshold: 89 and 209 people.
    """
    sigma = _analytic_gaussian_sigma(1.0, 5e-6)
    assert math.ceil(math.sqrt(g) * (1 + sigma * NormalDist().inv_cdf(1 - 5e-6))) == issue
    rho = Fraction(1) / (2 * Fraction(sigma) ** 2)
    plan = selection_plan(rho=rho, delta=Fraction(5, 10**6), max_groups=g)
    assert plan.method == "weighted_gaussian"
    assert people_for_half(plan) == ours
    assert people_for_half(plan, keys_per_person=1) < 25  # light persons weigh more


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("g", [1, 7])
def test_one_new_person_appears_with_probability_at_most_delta(method: str, g: int) -> None:
    plan = plan_of(method, g)
    assert new_person_bound(plan) <= DELTA
    if method != "truncated_geometric":  # and τ is the smallest such threshold
        assert new_person_bound(dataclasses.replace(plan, threshold=plan.threshold - 1)) > DELTA


@pytest.mark.parametrize("method", METHODS)
def test_release_probability_rises_from_delta_to_one(method: str) -> None:
    plan = plan_of(method, 3)
    p = [release_probability(plan, n) for n in range(0, 400)]
    assert p[0] == 0
    assert p[1] <= float(DELTA) / 3
    assert p[-1] > 0.999999
    assert all(a <= b for a, b in itertools.pairwise(p))
    half = people_for_half(plan)
    assert p[half - 1] < 0.5 <= p[half]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"epsilon": 1, "delta": 0}, "`delta`"),
        ({"epsilon": 1, "rho": 1, "delta": 1e-6}, "exactly one"),
        ({"epsilon": -1, "delta": 1e-6}, "`epsilon`"),
        ({"epsilon": 1, "delta": 1e-6, "max_groups": 0}, "`max_groups`"),
        ({"epsilon": 1, "delta": 1e-6, "method": "gaussian"}, "`rho`"),
        ({"rho": 1, "delta": 1e-6, "method": "nope"}, "`method`"),
    ],
)
def test_bad_arguments_are_refused(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        selection_plan(**kwargs)  # type: ignore[arg-type]


# --- the kernel ------------------------------------------------------------------------------


def _select(plan: SelectionPlan, df: pd.DataFrame, unit: str | None, seed: int) -> list[object]:
    units = None if unit is None else unit_codes(df[unit])
    stats = key_statistics(df, ["k"], units, plan, SeededSource(seed))
    keys, _ = select_keys(plan, stats, SeededSource(seed + 1))
    return list(keys)


@pytest.mark.parametrize("method", METHODS)
def test_a_crowded_key_is_always_released_and_a_lonely_one_never(method: str) -> None:
    df = pd.DataFrame({"k": ["crowd"] * 2000 + ["alone"]})
    plan = plan_of(method)
    for seed in range(200):
        assert _select(plan, df, None, 2 * seed) == ["crowd"]


@pytest.mark.parametrize("method", METHODS)
def test_one_persons_many_rows_never_release_a_rare_key(method: str) -> None:
    df = pd.DataFrame(
        {"k": ["crowd"] * 2000 + ["rare"] * 1000, "u": list(range(2000)) + [5000] * 1000}
    )
    plan = plan_of(method, 2)
    for seed in range(200):
        assert _select(plan, df, "u", 2 * seed) == ["crowd"]


def test_a_person_counts_once_per_key_and_in_at_most_g_keys() -> None:
    codes = np.array([0, 0, 0, 1, *range(50)], dtype=np.int64)
    units = np.array([0, 0, 1, 1, *[2] * 50], dtype=np.int64)
    stats = person_statistics(codes, 50, units, plan_of("laplace", 5), SeededSource(3))
    assert stats.sum() == 1 + 2 + 5  # person 2 kept 5 of their 50 keys
    assert stats[0] in (2, 3)
    assert stats[1] in (1, 2)


def test_weighted_statistics_add_w_of_t_per_kept_key() -> None:
    plan = plan_of("weighted_gaussian", 4)
    codes = np.array([0, 1, 2, 3, 4, 5, 0], dtype=np.int64)
    units = np.array([0, 0, 0, 0, 0, 0, 1], dtype=np.int64)
    stats = person_statistics(codes, 6, units, plan, SeededSource(1))
    assert stats.sum() == 4 * plan.weight(4) + plan.weight(1)


def test_value_counts_order_is_descending_noisy_count() -> None:
    df = pd.DataFrame({"k": ["a"] * 300 + ["b"] * 900 + ["c"] * 600})
    plan = plan_of("laplace")
    stats = key_statistics(df, ["k"], None, plan, SeededSource(0))
    keys, noisy = select_keys(plan, stats, SeededSource(1))
    assert list(keys) == ["b", "c", "a"]
    assert noisy is not None
    assert list(noisy) == sorted(noisy, reverse=True)


def test_selected_keys_do_not_follow_the_order_of_first_appearance() -> None:
    plan = plan_of("truncated_geometric")
    stats = np.full(50, 2000, dtype=np.int64)  # every key released
    codes, noisy = select_codes(plan, stats, SeededSource(4))
    assert noisy is None
    assert sorted(codes) == list(range(50))
    assert list(codes) != list(range(50))


def test_same_seed_same_keys_and_global_state_untouched() -> None:
    df = pd.DataFrame({"k": np.arange(3000) % 300, "u": np.arange(3000) % 700})
    plan = plan_of("laplace", 3)
    state = np.random.get_state()[1].copy()  # type: ignore[index]  # noqa: NPY002
    first = _select(plan, df, "u", 5)
    assert first == _select(plan, df, "u", 5)
    assert np.array_equal(state, np.random.get_state()[1])  # type: ignore[index]  # noqa: NPY002


@pytest.mark.parametrize(
    ("column", "dropna", "expected"),
    [
        (["x", None, "x", "y"], True, {"x": 2, "y": 1}),
        ([1, None, 1, 2], True, {1.0: 2, 2.0: 1}),
        (pd.Categorical(["x", None, "x", "y"], categories=["y", "x", "z"]), True, {"x": 2, "y": 1}),
        ([("a", 1), ("a", 1), None, ("b", 2)], True, {("a", 1): 2, ("b", 2): 1}),
    ],
)
def test_observed_keys_of_any_dtype(
    column: object, dropna: bool, expected: dict[object, int]
) -> None:
    df = pd.DataFrame({"k": column})
    stats = key_statistics(df, ["k"], None, plan_of("laplace"), SeededSource(0), dropna=dropna)
    assert stats.to_dict() == expected


def test_missing_keys_only_with_dropna_false() -> None:
    df = pd.DataFrame({"k": ["x", None, "x"]})
    plan = plan_of("laplace")
    kept = key_statistics(df, ["k"], None, plan, SeededSource(0), dropna=False)
    assert kept["x"] == 2
    assert kept.index.isna().sum() == 1
    assert kept[kept.index.isna()].item() == 1


@pytest.mark.parametrize("dropna", [True, False])
def test_several_columns_give_tuple_keys(dropna: bool) -> None:
    df = pd.DataFrame({"a": [1, 1, 2, None], "b": ["x", "x", None, "y"]})
    stats = key_statistics(df, ["a", "b"], None, plan_of("laplace"), SeededSource(0), dropna=dropna)
    assert isinstance(stats.index, pd.MultiIndex)
    assert stats[(1.0, "x")] == 2
    assert len(stats) == (1 if dropna else 3)
    assert stats.sum() == (2 if dropna else 4)


def test_many_key_columns_whose_distinct_counts_multiply_past_2_63_keep_each_rows_key() -> None:
    """Nine columns of 127 or 300 distinct values: 128**8 * 301 > 2**63 combined keys."""
    n = 2000
    df = pd.DataFrame({f"c{i}": np.arange(n) % 127 for i in range(8)})
    df["c8"] = [f"v{i}" for i in np.arange(n) % 300]
    assert 128**8 * 301 > 2**63
    codes, keys = observed_codes(df, list(df.columns), dropna=True)
    assert len(keys) == len(df.drop_duplicates())
    assert list(keys[codes]) == list(df.itertuples(index=False, name=None))


def test_selected_multiindex_levels_hold_the_selected_values_only() -> None:
    df = pd.DataFrame({"a": ["big"] * 3000 + ["lonely"], "b": "x"})
    plan = plan_of("laplace")
    stats = key_statistics(df, ["a", "b"], None, plan, SeededSource(0))
    keys, _ = select_keys(plan, stats, SeededSource(1))
    assert isinstance(keys, pd.MultiIndex)
    assert list(keys) == [("big", "x")]
    assert [list(level) for level in keys.levels] == [["big"], ["x"]]


def test_partition_statistics_add_up_by_key_value() -> None:
    """Dask: partitions hold disjoint persons; their parts combine to the whole frame's."""
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"k": rng.choice(["p", "q", "r", "s"], 500), "u": rng.integers(0, 80, 500)})
    plan = plan_of("laplace", 4)  # every person keeps all their keys: no random choice
    whole = key_statistics(df, ["k"], unit_codes(df["u"]), plan, SeededSource(0))
    parts = [df[df["u"] < 40], df[df["u"] >= 40]]
    stats = [key_statistics(p, ["k"], unit_codes(p["u"]), plan, SeededSource(0)) for p in parts]
    combined = combine_statistics(*stats)
    pd.testing.assert_series_equal(combined.sort_index(), whole.sort_index())


# --- the threshold and the order, through the public surface ---------------------------------
#
# Through value_counts and groupby(by) only: what a key of n persons comes out as, and in which
# order tied keys come out, whatever module the selection lives in.

#: Keys per count in the threshold test: each an independent trial of the selection.
KEYS_PER_COUNT = 1_000
#: A statistical test here must give p above this at the true rule, below it at a wrong one.
P_MIN = 1e-6


def _crowds(counts: range, keys: int) -> pd.DataFrame:
    """``keys`` keys held by exactly n persons (one row each) for every n in ``counts``."""
    labels = [f"n{n}-{i}" for n in counts for i in range(keys) for _ in range(n)]
    return pd.DataFrame({"k": labels, "x": 0.5})


def _released_at_least(accountant: str, scale: float, m: int) -> float:
    """P(Z >= m): discrete Laplace of ``scale`` (ε), or discrete Gaussian of σ² = ``scale`` (ρ)."""
    if accountant == "epsilon":
        a = math.exp(-1 / scale)
        return a**m / (1 + a) if m >= 1 else 1 - a ** (1 - m) / (1 + a)
    z = np.arange(-60, 61)
    pmf = np.exp(-(z.astype(np.float64) ** 2) / (2 * scale))
    return float(pmf[z >= m].sum() / pmf.sum())


#: (release, the call's loss, the selection's noise: Laplace scale 1/ε or Gaussian σ² = 1/(2ρ)).
SELECTIONS: dict[
    str, tuple[Callable[[pd.DataFrame, dict[str, float]], pd.Series], float, float]
] = {
    "value_counts": (lambda df, loss: df.dp.value_counts("k", **loss, delta=1e-5), 1.0, 1.0),
    "value_counts_rho": (lambda df, loss: df.dp.value_counts("k", **loss, delta=1e-5), 0.25, 2.0),
    "groupby_sum_rho": (  # half of ρ to the selection
        lambda df, loss: df.dp.groupby("k").sum("x", clip=(0, 1), **loss, delta=1e-5),
        0.5,
        2.0,
    ),
}


@pytest.mark.parametrize("name", SELECTIONS)
def test_a_key_whose_noisy_count_reaches_the_threshold_exactly_is_released(name: str) -> None:
    """Released iff ``n + Z >= τ``: the release frequency of keys of τ − 1, τ, τ + 1 persons.

    ``>`` instead of ``>=`` (τ one higher) or τ one lower fails the same test;
    at ε = 1 and δ = 1e-5, τ = 1 + ⌈ln(1/(δ·(1 + e^−1)))⌉ = 13, the smallest
    with P(one person's key appears) = P(Z >= τ − 1) <= δ, and the ledger
    says so.
    """
    release, loss, scale = SELECTIONS[name]
    accountant = "rho" if name.endswith("rho") else "epsilon"
    probe = _crowds(range(1, 2), 1)
    probe.dp.set_budget(**{accountant: 10}, delta=1e-3, seed=1)
    with pytest.warns(PoorAnswerWarning, match="No key was chosen"):  # one person: none shown
        release(probe, {accountant: loss})
    (threshold,) = re.findall(r"threshold (\d+)", probe.dp.budget.entries[-1].mechanism)
    tau = int(threshold)
    if accountant == "epsilon":  # the selection runs at ε = 1 in both
        assert tau == 1 + math.ceil(math.log(1 / (1e-5 * (1 + math.exp(-1))))) == 13
    counts = range(tau - 1, tau + 2)
    df = _crowds(counts, KEYS_PER_COUNT)
    df.dp.set_budget(**{accountant: 10}, delta=1e-3, seed=28)
    released = release(df, {accountant: loss})
    if name.startswith("value_counts"):  # a noisy count exactly at τ is among those released
        assert released.min() == tau
    persons = pd.Series(released.index.str.split("-").str[0].str[1:].astype(int))
    shown = persons.value_counts().reindex(list(counts), fill_value=0).to_numpy()
    for shift, must_pass in ((0, True), (1, False), (-1, False)):  # >= τ; > τ; >= τ − 1
        p = np.array([_released_at_least(accountant, scale, tau + shift - n) for n in counts])
        stat = float(np.sum((shown - KEYS_PER_COUNT * p) ** 2 / (KEYS_PER_COUNT * p * (1 - p))))
        pvalue = float(scipy.stats.chi2.sf(stat, df=len(counts)))
        assert (pvalue > P_MIN) == must_pass, f"threshold {tau}{shift:+d}: p = {pvalue:.3g}"


def test_a_keyless_statistic_under_epsilon_chooses_its_keys_by_the_truncated_geometric() -> None:
    """Each person one key, pure ε: a key of n persons is shown with probability π(n).

    π of the optimal mechanism (Desfontaines et al. 2022) at (ε/2, δ): half of
    ε to the selection.  The release frequencies of 1,000 keys of each of
    n = 8..17 persons pass a chi-square test at that plan and fail it at the
    whole ε (the selection given all of it) and at Laplace thresholding of
    the same (ε/2, δ), which needs more persons.
    """
    counts = range(8, 18)
    df = _crowds(counts, KEYS_PER_COUNT)
    df.dp.set_budget(epsilon=10, delta=1e-3, seed=5)
    released = df.dp.groupby("k").sum("x", clip=(0, 1), epsilon=2, delta=1e-5)
    (entry,) = df.dp.budget.entries
    assert entry.mechanism.startswith("truncated_geometric key selection (the optimal rule")
    persons = pd.Series(released.index.str.split("-").str[0].str[1:].astype(int))
    shown = persons.value_counts().reindex(list(counts), fill_value=0).to_numpy()
    plans = {
        "right": selection_plan(epsilon=1, delta=1e-5, method="truncated_geometric"),
        "all of ε": selection_plan(epsilon=2, delta=1e-5, method="truncated_geometric"),
        "Laplace": selection_plan(epsilon=1, delta=1e-5, method="laplace"),
    }
    for name, plan in plans.items():
        p = np.array([release_probability(plan, n) for n in counts]).clip(1e-12, 1 - 1e-12)
        stat = float(np.sum((shown - KEYS_PER_COUNT * p) ** 2 / (KEYS_PER_COUNT * p * (1 - p))))
        pvalue = float(scipy.stats.chi2.sf(stat, df=len(counts)))
        assert (pvalue > P_MIN) == (name == "right"), f"{name}: p = {pvalue:.3g}"


#: The releases that show chosen keys in the selection's order (groupby sorts them by value).
ORDERED: dict[str, Callable[[pd.DataFrame], pd.Series]] = {
    "value_counts": lambda df: df.dp.value_counts("k", epsilon=40, delta=1e-5),
    "value_counts_rho": lambda df: df.dp.value_counts("k", rho=800, delta=1e-5),
    "value_counts_two_columns": lambda df: df.dp.value_counts(["k", "j"], epsilon=40, delta=1e-5),
}


@pytest.mark.parametrize("name", ORDERED)
def test_tied_noisy_counts_come_out_in_every_order_equally_often(name: str) -> None:
    """Three keys of 30 persons each, at ε = 40 (ρ = 800): their noisy counts tie.

    (P(Z ≠ 0) < 1e-17.)  Over 300 calls each of the 6 orders comes out about
    50 times (chi-square): ties are broken at random, never by first
    appearance, value or hash.
    """
    df = pd.DataFrame({"k": ["b", "c", "a"] * 30, "j": "z"})
    accountant = "rho" if name.endswith("rho") else "epsilon"
    # added up: 300 releases of ε = 40 composed by PLD would take minutes, and order is the point
    df.dp.set_budget(**{accountant: 1e6}, delta=1e-2, accountant=accountant, seed=28)
    calls = 300
    orders = []
    for _ in range(calls):
        counts = ORDERED[name](df)
        assert counts.tolist() == [30] * 3  # tied
        orders.append(tuple(k[0] if isinstance(k, tuple) else k for k in counts.index))
    every = list(itertools.permutations("abc"))
    seen = pd.Series(orders).value_counts()
    assert set(seen.index) <= set(every)
    pvalue = float(scipy.stats.chisquare(seen.reindex(every, fill_value=0).to_numpy()).pvalue)
    assert pvalue > P_MIN, f"orders {dict(seen)}: p = {pvalue:.3g}"


# --- empirical (ε, δ) audit ------------------------------------------------------------------

AUDIT_DELTA = Fraction(1, 100)
N = 40_000
ALPHA = 1e-6


def _frequencies(plan: SelectionPlan, counts: range, seed: int) -> np.ndarray:
    """Release frequency of a key of each count: N keys per count in one selection."""
    stats = np.repeat(np.array(counts, dtype=np.int64), N) * plan.weight(1)
    codes, _ = select_codes(plan, stats, SeededSource(seed))
    return np.bincount(codes // N, minlength=len(counts)) / N


def _bounds(freq: np.ndarray, a: float) -> tuple[np.ndarray, np.ndarray]:
    k = np.rint(freq * N)
    lo = np.where(k > 0, scipy.stats.beta.ppf(a, np.maximum(k, 1), N - k + 1), 0.0)
    hi = np.where(k < N, scipy.stats.beta.ppf(1 - a, k + 1, np.maximum(N - k, 1)), 1.0)
    return lo, hi


def audit(plan: SelectionPlan) -> tuple[float, float]:
    """Lower bounds on P(a new person's key appears) and on ε, from neighbours n → n + 1.

    n = 0 is the neighbour without the person holding the unique key.
    """
    counts = range(0, 30)
    freq = _frequencies(plan, counts, 7)
    a = ALPHA / (4 * len(counts))
    lo, hi = _bounds(freq, a)
    lo_not, hi_not = _bounds(1 - freq, a)
    d = float(AUDIT_DELTA)
    eps = 0.0
    for n in range(len(counts) - 1):
        for top, bottom in ((lo[n + 1], hi[n]), (lo_not[n], hi_not[n + 1])):
            if top - d > 0:
                eps = max(eps, math.log((top - d) / bottom) if bottom > 0 else math.inf)
    return float(lo[1]), eps


@pytest.mark.parametrize("method", ["laplace", "truncated_geometric"])
def test_audit_finds_epsilon_and_delta_kept(method: str) -> None:
    appears, eps = audit(selection_plan(epsilon=1, delta=AUDIT_DELTA, method=method))
    assert appears <= AUDIT_DELTA
    assert eps <= 1


@pytest.mark.parametrize("method", ["gaussian", "weighted_gaussian"])
def test_audit_finds_delta_kept_under_zcdp(method: str) -> None:
    appears, _ = audit(selection_plan(rho=0.5, delta=AUDIT_DELTA, method=method))
    assert appears <= AUDIT_DELTA


@pytest.mark.parametrize("method", METHODS)
def test_audit_catches_a_lowered_threshold(method: str) -> None:
    budget = {"epsilon": 1} if method in ("laplace", "truncated_geometric") else {"rho": 0.5}
    plan = selection_plan(**budget, delta=AUDIT_DELTA, method=method)  # type: ignore[arg-type]
    if method == "truncated_geometric":
        broken = selection_plan(epsilon=1, delta=3 * AUDIT_DELTA, method=method)
    else:
        broken = dataclasses.replace(plan, threshold=plan.threshold - 2 * plan.weight(1))
    appears, _ = audit(broken)
    assert appears > AUDIT_DELTA


@pytest.mark.parametrize("method", ["laplace", "truncated_geometric"])
def test_audit_catches_a_doubled_epsilon(method: str) -> None:
    _, eps = audit(selection_plan(epsilon=2, delta=AUDIT_DELTA, method=method))
    assert eps > 1


@pytest.mark.parametrize("dropna", [True, False])
def test_chosen_keys_code_each_row_into_the_chosen_keys_by_value(dropna: bool) -> None:
    df = pd.DataFrame({"k": ["b", None, "a", "c", "b", None], "j": [1, 2, 1, 1, 1, 2]})
    selection = KeySelection.of_columns(df, ["k", "j"], dropna=dropna).typed(df)
    chosen = pd.MultiIndex.from_arrays([[None, "b"], [2, 1]], names=["k", "j"])
    codes = ChosenKeys(selection.by, chosen, selection).codes(df)
    missing = -1 if dropna else 0
    assert codes.tolist() == [1, missing, -1, -1, 1, missing]
