"""count / sum / mean: exact privacy maps from the plans, exact kernels, behaviour at huge ε."""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pandas_dp
from pandas_dp.core.noise import GRID_BITS, ROW_BITS, Gauss
from pandas_dp.kinds.base import Neighbours
from pandas_dp.kinds.count import plan_count, plan_count_rho
from pandas_dp.kinds.nunique import plan_nunique, plan_nunique_rho
from pandas_dp.kinds.sums import (
    CHUNK,
    GridPlan,
    complementary_mean,
    complementary_mean_one,
    grid_sums,
    means_of_pairs,
    plan_mean,
    plan_mean_rho,
    plan_sum,
    plan_sum_rho,
    round_rows,
)

#: scope name -> (grouped, n_public) as the accessor passes them
SCOPES = {
    "root": (False, True),
    "filtered": (False, False),
    "grouped": (True, False),
}
ADJACENCIES = ("add_remove", "substitute")


def plan(kind: str, clip: tuple[float, float], eps: Fraction, adjacency: str, scope: str):  # type: ignore[no-untyped-def]
    planner = plan_sum if kind == "sum" else plan_mean
    return planner(clip, eps, Neighbours(adjacency, grouped=scope == "grouped"))


def grid_of(p: object) -> GridPlan:
    return p if isinstance(p, GridPlan) else p.grid  # type: ignore[attr-defined,no-any-return]


# ------------------------------------------------------------------ privacy maps


@pytest.mark.parametrize(
    ("adjacency", "scope", "sensitivity"),
    [
        ("add_remove", "root", 1),
        ("add_remove", "filtered", 1),
        ("add_remove", "grouped", 1),
        ("substitute", "root", 0),
        ("substitute", "filtered", 1),
        ("substitute", "grouped", 2),
    ],
)
@pytest.mark.parametrize("eps", [Fraction(1, 10), Fraction(1), Fraction(7, 3)])
def test_count_sensitivity_and_scale(
    adjacency: str, scope: str, sensitivity: int, eps: Fraction
) -> None:
    grouped, n_public = SCOPES[scope]
    p = plan_count(
        eps, Neighbours(adjacency, grouped=grouped, n_public=n_public and adjacency == "substitute")
    )
    assert p.sensitivity == sensitivity
    assert p.scale == Fraction(sensitivity) / eps


#: (clip, adjacency, scope) -> the L1 sensitivity of DESIGN.md's table
SUM_TABLE = [
    ((-5, 10), "add_remove", "root", 10),
    ((-5, 10), "add_remove", "filtered", 10),
    ((-5, 10), "add_remove", "grouped", 10),
    ((-5, 10), "substitute", "root", 15),
    ((-5, 10), "substitute", "filtered", 15),
    ((-5, 10), "substitute", "grouped", 20),
    ((5, 10), "add_remove", "root", 10),
    ((5, 10), "substitute", "root", 10),  # a missing value may become present: |U|
    ((5, 10), "substitute", "filtered", 10),
    ((5, 10), "substitute", "grouped", 20),
    ((-10, -5), "add_remove", "filtered", 10),
    ((-10, -5), "substitute", "root", 10),
    ((-10, -5), "substitute", "filtered", 10),
    ((-10, -5), "substitute", "grouped", 20),
    ((0, 200_000), "add_remove", "root", 200_000),
    ((0, 200_000), "substitute", "grouped", 400_000),
]

#: (clip, adjacency, scope) -> the mean pair's joint sensitivity
MEAN_TABLE = [
    ((-5, 10), "add_remove", "root", 15),
    ((-5, 10), "add_remove", "filtered", 15),
    ((-5, 10), "add_remove", "grouped", 15),
    ((-5, 10), "substitute", "root", 30),  # n of a column is never public
    ((-5, 10), "substitute", "filtered", 30),
    ((-5, 10), "substitute", "grouped", 30),
    ((0, 200_000), "add_remove", "root", 200_000),
    ((0, 200_000), "substitute", "grouped", 400_000),
]

EPSILONS = [Fraction(1, 100), Fraction(1, 10), Fraction(1), Fraction(37, 10), Fraction(10**9)]


@pytest.mark.parametrize(("clip", "adjacency", "scope", "sensitivity"), SUM_TABLE)
@pytest.mark.parametrize("eps", EPSILONS, ids=str)
def test_sum_sensitivity_is_the_designed_one(
    clip: tuple[float, float], adjacency: str, scope: str, sensitivity: int, eps: Fraction
) -> None:
    p = plan("sum", clip, eps, adjacency, scope)
    assert Fraction(p.delta) * Fraction(p.step) == sensitivity
    assert p.center == 0


@pytest.mark.parametrize(("clip", "adjacency", "scope", "sensitivity"), MEAN_TABLE)
@pytest.mark.parametrize("eps", EPSILONS, ids=str)
def test_mean_pair_sensitivity_is_the_designed_one(
    clip: tuple[float, float], adjacency: str, scope: str, sensitivity: int, eps: Fraction
) -> None:
    p = plan("mean", clip, eps, adjacency, scope)
    assert Fraction(p.grid.delta) * Fraction(p.grid.step) == sensitivity
    assert p.grid.center == clip[0]
    assert p.grid.q_lo == 0


def _expected_exponent(sensitivity: float, eps: Fraction, magnitude: float) -> int:
    by_scale = math.frexp(sensitivity / float(eps))[1] - GRID_BITS
    by_rows = math.frexp(magnitude)[1] - ROW_BITS
    return max(by_scale, by_rows)


@pytest.mark.parametrize(("clip", "adjacency", "scope", "sensitivity"), SUM_TABLE)
@pytest.mark.parametrize("eps", EPSILONS, ids=str)
def test_sum_grid_and_integer_scale_are_exact(
    clip: tuple[float, float], adjacency: str, scope: str, sensitivity: int, eps: Fraction
) -> None:
    p = plan("sum", clip, eps, adjacency, scope)
    magnitude = max(abs(clip[0]), abs(clip[1]))
    assert p.exponent == _expected_exponent(sensitivity, eps, magnitude)
    assert p.q_lo == int(np.rint(clip[0] / p.step))
    assert p.q_hi == int(np.rint(clip[1] / p.step))
    assert p.scale == math.ceil(Fraction(p.delta) / eps)
    assert p.realised_epsilon <= eps
    assert p.realised_epsilon >= eps / (1 + eps / p.delta)  # ceil loses less than one step


@pytest.mark.parametrize(("clip", "adjacency", "scope", "sensitivity"), MEAN_TABLE)
@pytest.mark.parametrize("eps", EPSILONS, ids=str)
def test_mean_grid_and_integer_scale_are_exact(
    clip: tuple[float, float], adjacency: str, scope: str, sensitivity: int, eps: Fraction
) -> None:
    g = plan("mean", clip, eps, adjacency, scope).grid
    width = clip[1] - clip[0]
    assert g.exponent == _expected_exponent(sensitivity, eps, width)
    assert g.q_hi == int(np.rint(width / g.step))
    assert g.scale == math.ceil(Fraction(g.delta) / eps)
    assert g.realised_epsilon <= eps


def test_sum_plan_at_unit_epsilon_by_hand() -> None:
    # Δ = 10, ε = 1: scale 10 = 0.625·2^4, so the step is 2^(4-30); rows need 4 + 31 bits less.
    p = plan_sum((-5.0, 10.0), Fraction(1), Neighbours("add_remove", grouped=False))
    assert p.exponent == -26
    assert (p.q_lo, p.q_hi) == (-5 * 2**26, 10 * 2**26)
    assert p.delta == p.scale == 10 * 2**26
    assert p.realised_epsilon == 1


def test_sum_plan_at_huge_epsilon_by_hand() -> None:
    # ε = 1e9: the row bound sets the step (10 < 2^4, so 2^(4-31)), and T = ceil(10·2^27/1e9) = 2.
    p = plan_sum((-5.0, 10.0), Fraction(10**9), Neighbours("add_remove", grouped=False))
    assert p.exponent == -27
    assert p.delta == 10 * 2**27
    assert p.scale == 2


finite = st.floats(min_value=-1e12, max_value=1e12, allow_nan=False, allow_infinity=False)


@st.composite
def clips(draw: st.DrawFn) -> tuple[float, float]:
    lower = draw(finite)
    upper = draw(finite.filter(lambda u: u > lower))
    return lower, upper


@settings(max_examples=300, deadline=None)
@given(
    clip=clips(),
    eps=st.fractions(min_value=Fraction(1, 10**6), max_value=10**6).filter(lambda e: e > 0),
    adjacency=st.sampled_from(ADJACENCIES),
    scope=st.sampled_from(list(SCOPES)),
    kind=st.sampled_from(["sum", "mean"]),
    xs=st.lists(st.floats(allow_nan=False), max_size=20),
)
def test_every_plan_bounds_rows_and_never_exceeds_epsilon(
    clip: tuple[float, float],
    eps: Fraction,
    adjacency: str,
    scope: str,
    kind: str,
    xs: list[float],
) -> None:
    p = plan(kind, clip, eps, adjacency, scope)
    g = grid_of(p)
    assert max(abs(g.q_lo), abs(g.q_hi)) <= 2**ROW_BITS
    # every row, whatever its value (±inf included), lands in [q_lo, q_hi]
    x = np.array([*xs, -np.inf, np.inf, clip[0], clip[1]], dtype=np.float64)
    q = round_rows(x, g.lower, g.upper, g.center, g.exponent)
    assert ((q >= g.q_lo) & (q <= g.q_hi)).all()
    # the integer sensitivity is the designed function of (q_lo, q_hi), exactly
    width, reach = g.q_hi - g.q_lo, max(abs(g.q_lo), abs(g.q_hi))
    substitute = adjacency == "substitute"
    if kind == "sum":
        if not substitute:
            expected = reach
        elif scope == "grouped":
            expected = 2 * reach
        else:
            expected = max(width, reach)
    else:
        expected = 2 * width if substitute else width
    assert g.delta == expected
    assert g.scale == math.ceil(Fraction(g.delta) / eps)
    assert g.realised_epsilon <= eps
    # and the grid costs at most a step (plus one step per 1/ε) of extra noise scale
    real = Fraction(g.delta) * Fraction(g.step)
    assert Fraction(g.scale) * Fraction(g.step) <= (real + Fraction(g.step)) / eps + Fraction(
        g.step
    )


# -------------------------------------------------------------------------- kernels


def test_grid_sums_are_exact_integers_across_chunks() -> None:
    rng = np.random.Generator(np.random.PCG64(5))
    n = 2 * CHUNK + 123
    x = rng.uniform(-20, 20, size=n)
    x[rng.uniform(size=n) < 0.1] = np.nan
    codes = rng.integers(-1, 4, size=n)
    p = plan_sum((-5.0, 10.0), Fraction(1, 3), Neighbours("add_remove", grouped=True))
    sums, counts = grid_sums(x, codes, 4, p)
    q = round_rows(x.copy(), p.lower, p.upper, p.center, p.exponent)
    ok = ~np.isnan(q)
    for key in range(4):
        rows = ok & (codes == key)
        assert int(sums[key]) == sum(int(v) for v in q[rows])  # Python ints: exact
        assert int(counts[key]) == int(rows.sum())
    total, n_valid = grid_sums(x, None, 1, p)
    assert int(total[0]) == sum(int(v) for v in q[ok])
    assert int(n_valid[0]) == int(ok.sum())


def test_count_skips_missing_values_like_pandas(exact: pd.DataFrame, huge_eps: float) -> None:
    assert exact.dp.count("bonus", epsilon=huge_eps) == exact.bonus.count()
    assert exact.dp.count(epsilon=huge_eps) == len(exact)


def _step(kind: str, clip: tuple[float, float], eps: float, adjacency: str, scope: str) -> float:
    return grid_of(plan(kind, clip, Fraction(repr(eps)), adjacency, scope)).step


@pytest.mark.parametrize("column", ["salary", "bonus"])
def test_sum_at_huge_epsilon_is_the_clipped_sum_up_to_the_grid(
    exact: pd.DataFrame, huge_eps: float, column: str
) -> None:
    clip = (1_000.0, 80_000.0)
    p = plan("sum", clip, Fraction(repr(huge_eps)), "add_remove", "root")
    truth = exact[column].clip(*clip).sum()  # NaN skipped, as pandas does
    n = int(exact[column].count())
    got = exact.dp.sum(column, clip=clip, epsilon=huge_eps)
    # per-row rounding (half a step each) plus noise of a few steps (T = scale ≤ 3)
    assert p.scale <= 3
    assert abs(got - truth) <= (n / 2 + 40 * p.scale) * p.step
    assert got / p.step == int(got / p.step)  # on the grid


def test_sum_of_grid_values_at_huge_epsilon_is_exact_up_to_noise_steps(
    exact: pd.DataFrame, huge_eps: float
) -> None:
    clip = (0.0, 100.0)
    p = plan("sum", clip, Fraction(repr(huge_eps)), "add_remove", "root")
    got = exact.dp.sum("age", clip=clip, epsilon=huge_eps)  # integers: on every grid
    steps = (got - exact.age.sum()) / p.step
    assert steps == int(steps)
    assert abs(steps) <= 40 * p.scale


@pytest.mark.parametrize("column", ["salary", "bonus", "age"])
@pytest.mark.parametrize("adjacency", ADJACENCIES)
def test_mean_at_huge_epsilon_is_the_clipped_mean_within_one_step(
    salaries: pd.DataFrame, huge_eps: float, column: str, adjacency: str
) -> None:
    salaries.dp.set_budget(epsilon=1e12, adjacency=adjacency, seed=3)
    clip = (20.0, 80_000.0)
    truth = salaries[column].clip(*clip).mean()
    step = _step("mean", clip, huge_eps, adjacency, "root")
    got = salaries.dp.mean(column, clip=clip, epsilon=huge_eps)
    assert abs(got - truth) <= step


@pytest.mark.parametrize("kind", ["sum", "mean"])
def test_infinities_clip_to_the_bounds(huge_eps: float, kind: str) -> None:
    df = pd.DataFrame({"x": [np.inf, -np.inf, 1.0, np.nan, 4.0]})
    df.dp.set_budget(epsilon=1e12, seed=0)
    clip = (0.0, 10.0)
    got = getattr(df.dp, kind)("x", clip=clip, epsilon=huge_eps)
    truth = getattr(df.x.clip(*clip), kind)()  # 10 + 0 + 1 + 4, NaN skipped
    step = _step(kind, clip, huge_eps, "add_remove", "root")
    assert abs(got - truth) <= 40 * 3 * step


def test_substitute_column_statistics_never_treat_n_as_public(huge_eps: float) -> None:
    # An int64 column cannot hold NaN, but read_csv picks int64 only when no value is
    # missing: the dtype is data, so a column's n is never public.
    df = pd.DataFrame({"x": np.arange(1, 101)})
    df.dp.set_budget(epsilon=1e12, adjacency="substitute", seed=0)
    got = df.dp.mean("x", clip=(0, 1000), epsilon=huge_eps)
    assert got == pytest.approx(50.5, abs=_step("mean", (0, 1000), huge_eps, "substitute", "root"))
    assert df.dp.budget.entries[-1].sensitivity == "2000"
    df.dp.count("x", epsilon=0.5)
    assert df.dp.budget.entries[-1].epsilon == Fraction(1, 2)
    assert df.dp.budget.entries[-1].sensitivity == "1"


def test_multi_column_release_splits_epsilon_and_charges_it_once(protected: pd.DataFrame) -> None:
    clip = {"salary": (0, 2e5), "bonus": (0, 5e3), "age": (0, 100)}
    result = protected.dp.mean(clip=clip, epsilon=0.6)
    assert list(result.index) == list(clip)
    assert protected.dp.budget.spent == Fraction(3, 5)
    assert len(protected.dp.budget.entries) == 1
    # each column's noise is planned with ε/3 (the ledger records the noise scales)
    shares = [
        plan("mean", bounds, Fraction(1, 5), "add_remove", "filtered").grid
        for bounds in clip.values()
    ]
    expected = "; ".join(f"{g.scale * g.step:.6g}" for g in shares)
    assert protected.dp.budget.entries[0].noise_scale == expected
    for column, (lower, upper) in clip.items():
        assert lower <= result[column] <= upper


# ------------------------------------------------------------- mean inside the clip

values = st.floats(allow_nan=True, allow_infinity=True, width=64)


@settings(max_examples=80, deadline=None)
@given(
    data=st.lists(values, max_size=30),
    clip=clips(),
    eps=st.sampled_from([0.01, 0.5, 3.0]),
    adjacency=st.sampled_from(ADJACENCIES),
    seed=st.integers(0, 2**32),
)
def test_mean_is_always_inside_the_clip(
    data: list[float], clip: tuple[float, float], eps: float, adjacency: str, seed: int
) -> None:
    df = pd.DataFrame({"x": pd.Series(data, dtype=np.float64), "k": np.arange(len(data)) % 3})
    df.dp.set_budget(epsilon=10, adjacency=adjacency, seed=seed)
    mean = df.dp.mean("x", clip=clip, epsilon=eps)
    assert clip[0] <= mean <= clip[1]
    grouped = df.dp.groupby("k", keys=[0, 1, 2, 3]).mean("x", clip=clip, epsilon=eps)
    assert grouped.between(*clip).all()


@pytest.mark.parametrize("data", [[], [np.nan, np.nan]], ids=["empty", "all_nan"])
@pytest.mark.parametrize("adjacency", ADJACENCIES)
def test_mean_of_nothing_is_inside_the_clip(data: list[float], adjacency: str) -> None:
    df = pd.DataFrame({"x": pd.Series(data, dtype=np.float64)})
    df.dp.set_budget(epsilon=10, adjacency=adjacency, seed=1)
    means = [df.dp.mean("x", clip=(-3, 7), epsilon=0.5) for _ in range(10)]
    assert all(-3 <= m <= 7 for m in means)


# ------------------------------------------------------------------ plain results


def test_results_are_plain_python_and_pandas_values(protected: pd.DataFrame) -> None:
    count = protected.dp.count(epsilon=0.1)
    total = protected.dp.sum("salary", clip=(0, 2e5), epsilon=0.5)
    mean = pandas_dp.dp(protected).mean("salary", clip=(0, 2e5), epsilon=0.5)
    both = protected.dp.sum(clip={"salary": (0, 2e5), "bonus": (0, 5e4)}, epsilon=0.5)
    assert type(count) is int
    assert type(total) is float
    assert type(mean) is float
    assert isinstance(both, pd.Series)
    assert list(both.index) == ["salary", "bonus"]
    assert both.dtype == np.float64


def test_dp_function_is_the_accessor(protected: pd.DataFrame) -> None:
    assert pandas_dp.dp(protected).budget is protected.dp.budget


def test_one_key_mean_is_the_vector_mean_bit_for_bit() -> None:
    rng = np.random.Generator(np.random.PCG64(5))
    big = 1 << 62
    a = np.concatenate([rng.integers(-(1 << 40), 1 << 40, 2000), [0, 0, -5, big, 3, 0]])
    b = np.concatenate([rng.integers(-(1 << 40), 1 << 40, 2000), [0, -1, 0, 1, big, 7]])
    for lower, upper in [(0.0, 200_000.0), (-1e100, 1e100), (-3.5, -1.25), (0.1, 0.3)]:
        vector = complementary_mean(a, b, lower, upper)
        one = [
            complementary_mean_one(int(x), int(y), lower, upper) for x, y in zip(a, b, strict=True)
        ]
        assert vector.tolist() == one  # identical doubles, not merely close
        assert all(lower <= m <= upper for m in one)


@pytest.mark.parametrize("keys", [1, 2, 3, 8, 9, 40])
def test_means_of_few_keys_are_the_vector_means_bit_for_bit(keys: int) -> None:
    plan = plan_mean((-3.5, 200_000.0), Fraction(1, 3), Neighbours("add_remove"))
    rng = np.random.Generator(np.random.PCG64(keys))
    a = rng.integers(-(1 << 40), 1 << 40, keys)
    b = rng.integers(-(1 << 40), 1 << 40, keys)
    means = means_of_pairs(a, b, plan)
    assert means.dtype == np.float64
    assert means.tolist() == complementary_mean(a, b, -3.5, 200_000.0).tolist()


# ------------------------------------------------------------------ nunique


@pytest.mark.parametrize(
    ("relation", "sensitivity"),
    [
        (Neighbours("add_remove"), 1),
        (Neighbours("substitute"), 1),  # one value leaves, another arrives: net at most 1
        (Neighbours("add_remove", max_rows=3, privacy_unit="u"), 3),
        (Neighbours("substitute", max_rows=3, privacy_unit="u"), 3),  # k leave, k arrive
        (Neighbours("add_remove", grouped=True), 1),
        (Neighbours("substitute", grouped=True), 2),  # leaves one key, reaches another
        (Neighbours("add_remove", True, max_rows=3, max_groups=2, privacy_unit="u"), 6),
        (Neighbours("substitute", True, max_rows=3, max_groups=2, privacy_unit="u"), 12),
    ],
)
def test_nunique_sensitivity_and_scale(relation: Neighbours, sensitivity: int) -> None:
    plan = plan_nunique(Fraction(1, 2), relation)
    assert plan.sensitivity == sensitivity
    assert plan.scale == 2 * sensitivity


def test_nunique_at_huge_epsilon_is_series_nunique(huge_eps: float) -> None:
    values = [1.0, 2.0, np.nan, 2.0, -0.0, 0.0, 3.0, 4.0, 5.0, 6.0] * 10
    df = pd.DataFrame({"k": list("aabbc") * 20, "v": values, "s": list("xyzxx") * 20})
    df.dp.set_budget(epsilon=1e12, seed=1)
    assert df.dp.nunique("v", epsilon=huge_eps) == df.v.nunique() == 7
    assert df.dp.nunique("s", epsilon=huge_eps) == 3
    got = df.dp.groupby("k", keys=["a", "b", "c", "z"]).nunique("v", epsilon=huge_eps)
    expected = df.groupby("k").v.nunique().reindex(["a", "b", "c", "z"], fill_value=0)
    assert got.tolist() == expected.tolist()
    assert got.name == "v"
    assert list(df.dp.budget.ledger.operation) == ["nunique", "nunique", "groupby.nunique"]


def test_nunique_noise_is_discrete_laplace_of_its_scale(
    assert_dlap_scale: Callable[[np.ndarray, float], None],
) -> None:
    """4,000 keys, 3 distinct values each: one grouped release, 4,000 independent draws."""
    keys = np.arange(4_000)
    df = pd.DataFrame({"k": np.repeat(keys, 4), "v": np.tile([1, 2, 3, 3], keys.size)})
    df.dp.set_budget(epsilon=10, adjacency="substitute", seed=7)
    got = df.dp.groupby("k", keys=keys).nunique("v", epsilon=0.5)
    assert_dlap_scale((got - 3).to_numpy(), 4.0)  # Δ = 2 (substitute, grouped), ε = 1/2


def test_nunique_with_a_privacy_unit_uses_max_rows_of_each_person(huge_eps: float) -> None:
    df = pd.DataFrame({"person": [1] * 5 + [2], "v": [1, 2, 3, 4, 5, 9]})
    df.dp.set_budget(epsilon=1e12, privacy_unit="person", seed=3)
    assert df.dp.nunique("v", epsilon=huge_eps, max_rows=2) == 3  # person 1 keeps 2 rows
    assert df.dp.budget.ledger.sensitivity.tolist() == ["2"]


# ------------------------------------------------------------------ zCDP plans (L2)

UNIT = {"max_rows": 3, "privacy_unit": "u"}


@pytest.mark.parametrize(
    ("relation", "sq"),
    [
        (Neighbours("add_remove"), 1),
        (Neighbours("substitute"), 1),
        (Neighbours("substitute", n_public=True), 0),  # the public row count
        (Neighbours("add_remove", grouped=True), 1),
        (Neighbours("substitute", grouped=True), 2),  # leaves one key (1), joins another (1)
        (Neighbours("add_remove", **UNIT), 9),  # k²
        (Neighbours("substitute", **UNIT), 36),  # (2k)²
        (Neighbours("add_remove", True, max_groups=4, **UNIT), 36),  # Δ₂ = k·√g = 3·2
        (Neighbours("substitute", True, max_groups=4, **UNIT), 144),  # (2·k·√g)²
    ],
)
def test_count_l2_sensitivity_and_gaussian_variance(relation: Neighbours, sq: int) -> None:
    plan = plan_count_rho(Fraction(1, 100), relation)
    assert plan.sq_sensitivity == sq
    assert plan.scale == Gauss(Fraction(sq * 50))  # σ² = Δ₂²/(2ρ) exactly


def test_a_grouped_count_pays_root_g_in_l2_not_g() -> None:
    relation = Neighbours("add_remove", True, max_groups=100, max_rows=1, privacy_unit="u")
    assert relation.count_sensitivity() == 100  # L1: g
    assert relation.count_sq_sensitivity() == 100  # L2: √g = 10


@pytest.mark.parametrize(
    ("relation", "factor"),
    [
        (Neighbours("add_remove"), 1),
        (Neighbours("substitute", grouped=True), 2),
        (Neighbours("add_remove", True, max_groups=4, **UNIT), 36),
        (Neighbours("substitute", True, max_groups=4, **UNIT), 144),
    ],
)
def test_sum_plan_under_rho_has_the_exact_l2_sensitivity_on_the_grid(
    relation: Neighbours, factor: int
) -> None:
    rho = Fraction(1, 10)
    plan = plan_sum_rho((-50.0, 200.0), rho, relation)
    reach = max(-plan.q_lo, plan.q_hi)
    assert plan.delta == factor * reach * reach
    assert isinstance(plan.scale, Gauss)
    assert plan.scale.sigma2 >= Fraction(plan.delta) / (2 * rho)  # realised ρ <= requested
    assert Fraction(plan.delta) / (2 * plan.scale.sigma2) > rho * (1 - Fraction(1, 2**50))
    assert (plan.rho, plan.epsilon) == (rho, None)


def test_ungrouped_substitute_sum_under_rho_uses_the_widest_change() -> None:
    plan = plan_sum_rho((10.0, 20.0), Fraction(1, 10), Neighbours("substitute"))
    assert plan.delta == max(plan.q_hi - plan.q_lo, plan.q_hi) ** 2


@pytest.mark.parametrize(
    ("relation", "factor"),
    [
        (Neighbours("add_remove"), 1),  # (q, Q − q): q² + (Q − q)² <= Q²
        (Neighbours("substitute"), 2),
        (Neighbours("substitute", grouped=True), 2),
        (Neighbours("add_remove", True, max_groups=4, **UNIT), 36),
        (Neighbours("substitute", True, max_groups=4, **UNIT), 144),
    ],
)
def test_mean_pair_under_rho_has_the_exact_l2_sensitivity(
    relation: Neighbours, factor: int
) -> None:
    plan = plan_mean_rho((0.0, 1000.0), Fraction(1, 10), relation).grid
    assert plan.delta == factor * plan.q_hi**2
    assert isinstance(plan.scale, Gauss)
    assert plan.scale.sigma2 >= Fraction(plan.delta) / (2 * Fraction(1, 10))


def test_grouped_unit_counts_draw_gaussian_noise_of_the_planned_variance(
    assert_dgauss_sigma2: Callable[[np.ndarray, Fraction], None],
) -> None:
    keys = pd.Index(range(20_000), name="k")
    df = pd.DataFrame({"k": [0], "u": [1]})
    df.dp.set_budget(rho=1, seed=3, privacy_unit="u")
    noisy = df.dp.groupby("k", keys=keys).count(rho=Fraction(1, 2), max_rows=2, max_groups=3)
    noise = noisy.to_numpy() - np.isin(keys, [0]).astype(np.int64)
    assert_dgauss_sigma2(noise, Fraction(4 * 3, 1))  # σ² = k²·g/(2ρ) = 12


@pytest.mark.parametrize(
    ("relation", "sq"),
    [
        (Neighbours("add_remove"), 1),
        (Neighbours("substitute"), 1),  # a changed row: one value out, one in
        (Neighbours("add_remove", **UNIT), 9),  # k rows: k values at most
        (Neighbours("substitute", **UNIT), 9),
        (Neighbours("substitute", grouped=True), 2),  # a count's over keys
        (Neighbours("add_remove", True, max_groups=4, **UNIT), 36),  # k²·g
    ],
)
def test_nunique_l2_sensitivity_and_gaussian_variance(relation: Neighbours, sq: int) -> None:
    plan = plan_nunique_rho(Fraction(1, 100), relation)
    assert plan.sq_sensitivity == sq
    assert plan.scale == Gauss(Fraction(sq * 50))  # σ² = Δ₂²/(2ρ) exactly


def test_grouped_nunique_draws_gaussian_noise_of_the_planned_variance(
    assert_dgauss_sigma2: Callable[[np.ndarray, Fraction], None],
) -> None:
    keys = pd.Index(range(20_000), name="k")
    df = pd.DataFrame({"k": [0, 0], "v": [1, 2], "u": [1, 1]})
    df.dp.set_budget(rho=1, seed=4, privacy_unit="u")
    noisy = df.dp.groupby("k", keys=keys).nunique("v", rho=Fraction(1, 2), max_rows=2, max_groups=3)
    noise = noisy.to_numpy() - np.where(keys == 0, 2, 0)
    assert_dgauss_sigma2(noise, Fraction(4 * 3, 1))  # σ² = k²·g/(2ρ) = 12
