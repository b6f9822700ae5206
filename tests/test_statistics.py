"""var / std / histogram / crosstab / describe: exact privacy maps, exact kernels, noise, audits."""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

from pandas_dp.core.noise import Gauss, SeededSource
from pandas_dp.errors import BudgetExceededError
from pandas_dp.kinds import sums, variance
from pandas_dp.kinds.base import Neighbours
from pandas_dp.kinds.quantile import evenly_spaced, grid_cells, quantile_table
from pandas_dp.kinds.variance import (
    grid_triples,
    noisy_triples,
    plan_variance,
    plan_variance_rho,
    triple_bump,
    variance_estimates,
)

Bound = Callable[[np.ndarray, np.ndarray], float]
RELATIONS = {
    "add_remove": Neighbours("add_remove"),
    "substitute": Neighbours("substitute"),
    "substitute-grouped": Neighbours("substitute", grouped=True),
}


def _r(q: int, top: int) -> int:
    """round(q(Q − q)/Q), half up, in exact rationals."""
    return int(Fraction(q * (top - q), top) + Fraction(1, 2)) if top else 0


# ------------------------------------------------------------------ privacy map


@pytest.mark.parametrize("top", range(0, 130))
def test_triple_bump_is_the_exact_maximum(top: int) -> None:
    assert triple_bump(top) == max(_r(q, top) for q in range(top + 1))


def test_triple_bump_can_exceed_a_quarter_of_q() -> None:
    assert triple_bump(2) == 1 > Fraction(2, 4)
    assert triple_bump(6) == 2 > Fraction(6, 4)


def _small_plans(relation: Neighbours) -> list[variance.VarPlan]:
    """Plans whose grid has few points (tiny ε), so every neighbour pair can be listed."""
    plans = {}
    for k in range(20, 36):
        p = plan_variance((0.0, 1.0), Fraction(1, 2**k), relation)
        if p.grid.q_hi <= 40:
            plans[p.grid.q_hi] = p
    assert len(plans) >= 5
    return list(plans.values())


@pytest.mark.parametrize("name", RELATIONS)
def test_variance_sensitivity_is_exact_and_attained(name: str) -> None:
    relation = RELATIONS[name]
    for p in _small_plans(relation):
        top, o = p.grid.q_hi, p.offset
        rows = [(q, top - q, _r(q, top) - o) for q in range(top + 1)]
        zero = (0, 0, 0)
        if relation.adjacency == "add_remove":
            changes = [(v, zero) for v in rows]
        elif not relation.grouped:  # a value changes, appears or disappears
            changes = [(v, w) for v in rows for w in [*rows, zero]]
        else:  # a row leaves one key and joins another: both keys' vectors move
            changes = [(v, tuple(-x for x in w)) for v in rows for w in rows]
        pair = max(abs(v[0] - w[0]) + abs(v[1] - w[1]) for v, w in changes)
        third = max(abs(v[2] - w[2]) for v, w in changes)
        assert (p.grid.delta, p.delta3) == (pair, third), top
        assert p.realised_epsilon <= p.epsilon


@pytest.mark.parametrize("name", RELATIONS)
@pytest.mark.parametrize("eps", [Fraction(1, 10), Fraction(1), Fraction(7, 3), Fraction(10**9)])
def test_variance_plan_splits_epsilon_in_halves(name: str, eps: Fraction) -> None:
    p = plan_variance((-5.0, 20.0), eps, RELATIONS[name])
    assert p.grid.scale == -(-Fraction(p.grid.delta) // (eps / 2))  # ceil(Δ/(ε/2))
    assert p.scale3 == -(-Fraction(p.delta3) // (eps / 2))
    assert Fraction(p.grid.delta, p.grid.scale) <= eps / 2
    assert Fraction(p.delta3, p.scale3) <= eps / 2
    assert p.grid.q_hi * p.grid.q_hi < 2**64  # q(Q − q) <= Q²/4 < 2**62
    assert p.realised_epsilon <= eps


# ----------------------------------------------------------------------- kernel


def test_grid_triples_are_exact_integers() -> None:
    rng = np.random.Generator(np.random.PCG64(5))
    values = rng.normal(3.0, 4.0, size=200_003)
    values[::11] = np.nan
    values[::13] = np.inf
    codes = rng.integers(-1, 4, size=values.size)
    p = plan_variance((-1.0, 9.0), Fraction(1, 3), Neighbours("add_remove", grouped=True))
    g = p.grid
    q = np.rint((np.clip(values, g.lower, g.upper) - g.center) / g.step)
    keep = ~np.isnan(q) & (codes >= 0)
    sums, counts, bumps = grid_triples(values, codes, 4, p)
    for key in range(4):
        qs = [int(v) for v in q[keep & (codes == key)]]
        assert sums[key] == sum(qs)
        assert counts[key] == len(qs)
        assert bumps[key] == sum(_r(v, g.q_hi) for v in qs)
    one = grid_triples(values, None, 1, p)
    ok = ~np.isnan(q)
    assert one[0][0] == int(q[ok].sum())
    assert one[1][0] == int(ok.sum())


@pytest.mark.parametrize("adjacency", ["add_remove", "substitute"])
def test_var_and_std_at_huge_epsilon_are_the_clipped_pandas_values(
    adjacency: str, huge_eps: float
) -> None:
    rng = np.random.Generator(np.random.PCG64(9))
    df = pd.DataFrame({"k": rng.choice(["a", "b"], 3_000), "x": rng.normal(50, 30, 3_000)})
    df.loc[::7, "x"] = np.nan
    df.dp.set_budget(epsilon=1e12, adjacency=adjacency, seed=3)
    clipped = df.x.clip(0, 100)
    assert df.dp.var("x", clip=(0, 100), epsilon=huge_eps) == pytest.approx(clipped.var(), 1e-7)
    assert df.dp.std("x", clip=(0, 100), epsilon=huge_eps) == pytest.approx(clipped.std(), 1e-7)
    g = df.dp.groupby("k", keys=["a", "b", "none"]).var("x", clip=(0, 100), epsilon=huge_eps)
    expected = df.assign(x=clipped).groupby("k").x.var().reindex(["a", "b", "none"])
    np.testing.assert_allclose(g.iloc[:2], expected.iloc[:2], rtol=1e-7)
    assert g.iloc[2] == 0.0
    assert g.index.equals(pd.Index(["a", "b", "none"], name="k"))


def test_variance_is_never_negative_nor_beyond_the_clip() -> None:
    p = plan_variance((0.0, 1.0), Fraction(1, 100), Neighbours("add_remove", grouped=True))
    n = 20_000
    sums = np.zeros(n, dtype=np.int64)
    counts = np.full(n, 3, dtype=np.int64)
    a, b, c = noisy_triples(SeededSource(1), sums, counts, sums, p)
    _, mean, var = variance_estimates(a, b, c, p)
    assert (var >= 0).all()
    assert (var <= 0.5).all()
    assert ((mean >= 0) & (mean <= 1)).all()
    assert (var == 0).any()
    assert (var > 0).any()


# ------------------------------------------------------------------- noise scale


def test_triple_noise_has_the_planned_scales(
    assert_dlap_scale: Callable[[np.ndarray, float], None],
) -> None:
    p = plan_variance((0.0, 1.0), Fraction(1, 2**25), Neighbours("add_remove", grouped=True))
    n = 20_000
    zeros = np.zeros(n, dtype=np.int64)
    a, b, c = noisy_triples(SeededSource(4), zeros, zeros, zeros, p)
    assert_dlap_scale(np.concatenate([a, b]), float(p.grid.scale))
    assert_dlap_scale(c, float(p.scale3))


# ------------------------------------------------------------------------ audits

N = 100_000
EPSILON = Fraction(1)


def _loss_statistic(
    relation: Neighbours, rows: tuple[float, ...], rows_prime: tuple[float, ...], seed: int
) -> tuple[np.ndarray, np.ndarray]:
    """The privacy-loss statistic of N releases of the noisy triple on D and on D′.

    ``L(y) = Σ_i (|y_i − s′_i| − |y_i − s_i|)/T_i`` is the log-likelihood ratio of
    the release (a data-independent function of it, given D and D′): the most
    revealing one-number view of the triple.
    """
    p = plan_variance((0.0, 10.0), EPSILON, relation)
    out = []
    for data, s in ((rows, seed), (rows_prime, seed + 1)):
        values = np.tile(np.asarray(data, dtype=float), N)
        codes = np.repeat(np.arange(N), len(data))
        stats = grid_triples(values, codes, N, p)
        out.append(np.stack(noisy_triples(SeededSource(s), *stats, p), axis=1))
    true = [
        np.array(
            [
                x[0]
                for x in noisy_triples(
                    SeededSource(0),
                    *grid_triples(
                        np.asarray(d, dtype=float), np.zeros(len(d), dtype=np.int64), 1, p
                    ),
                    _exact(p),
                )
            ]
        )
        for d in (rows, rows_prime)
    ]
    scales = np.array([p.grid.scale, p.grid.scale, p.scale3], dtype=float)

    def loss(y: np.ndarray) -> np.ndarray:
        return np.sum((np.abs(y - true[1]) - np.abs(y - true[0])) / scales, axis=1)

    return loss(out[0]), loss(out[1])


def _exact(p: variance.VarPlan) -> variance.VarPlan:
    """The same plan without noise (scale 0): the exact statistics."""
    grid = sums.GridPlan(**{**p.grid.__dict__, "scale": 0})
    return variance.VarPlan(grid, p.bump, p.offset, p.delta3, 0, p.epsilon)


AUDITS = {
    "add-at-middle": (Neighbours("add_remove"), (3.0, 7.0, 10.0, 1.0), (3.0, 7.0, 10.0, 1.0, 5.0)),
    "add-at-upper": (Neighbours("add_remove"), (3.0, 7.0), (3.0, 7.0, 1e9)),
    "substitute-value": (Neighbours("substitute"), (3.0, 0.0), (3.0, 10.0)),
}


@pytest.mark.parametrize("case", AUDITS.values(), ids=AUDITS.keys())
def test_variance_release_keeps_its_epsilon(
    case: tuple[Neighbours, tuple[float, ...], tuple[float, ...]], epsilon_lower_bound: Bound
) -> None:
    bound = epsilon_lower_bound(*_loss_statistic(*case, seed=1))
    assert bound <= EPSILON
    if case[0].adjacency == "add_remove" and 5.0 in case[2]:
        assert bound >= 0.7 * EPSILON  # the mid-point row uses the whole sensitivity


def test_audit_catches_a_halved_variance_noise(
    epsilon_lower_bound: Bound, monkeypatch: pytest.MonkeyPatch
) -> None:
    integer_scale = sums.integer_scale
    monkeypatch.setattr(sums, "integer_scale", lambda d, e: max(1, integer_scale(d, e) // 2))
    assert epsilon_lower_bound(*_loss_statistic(*AUDITS["add-at-middle"], seed=1)) > EPSILON


# ------------------------------------------------------------- quantile binning

GRID = np.linspace(0, 200, 2001)


def _adversarial(grid: np.ndarray) -> np.ndarray:
    inner = np.concatenate(
        [grid, np.nextafter(grid, -np.inf), np.nextafter(grid, np.inf), (grid[1:] + grid[:-1]) / 2]
    )
    extremes = [np.nan, np.inf, -np.inf, 1.7e308, -1.7e308, 5e-324, -5e-324, 0.0, -0.0]
    rng = np.random.Generator(np.random.PCG64(3))
    return np.concatenate([inner, extremes, rng.uniform(-10, 210, 50_000)])


@pytest.mark.parametrize(
    "grid",
    [
        GRID,
        np.linspace(-1, 1, 7),
        np.arange(0.1, 3.0, 0.1),
        np.array([0.0, 1.0, 10.0, 1e3]),
        np.linspace(1e15, 1e15 + 2000, 2001),
        np.array([-1.7e308, 0.0, 1.7e308]),
    ],
    ids=["linspace", "small", "arange", "uneven", "offset", "float-range"],
)
def test_grid_cells_are_searchsorted_exactly(grid: np.ndarray) -> None:
    x = _adversarial(grid)
    below, equal = grid_cells(x, grid)
    ok = ~np.isnan(x)
    expected = np.searchsorted(grid, x, side="left")
    np.testing.assert_array_equal(below[ok], expected[ok])
    at = np.append(grid, np.nan)[expected] == x
    np.testing.assert_array_equal(equal[ok], at[ok])
    assert not equal[~ok].any()


def test_evenly_spaced_recognises_linspace_only() -> None:
    assert evenly_spaced(GRID)
    assert not evenly_spaced(np.array([0.0, 1.0, 10.0, 1e3]))


def test_quantile_table_is_unchanged_on_adversarial_values() -> None:
    x = _adversarial(GRID)
    codes = np.random.Generator(np.random.PCG64(1)).integers(-1, 3, size=x.size)
    table = quantile_table(x, codes, 3, GRID)
    keep = ~np.isnan(x) & (codes >= 0)
    below = np.searchsorted(GRID, x[keep], side="left")
    equal = np.append(GRID, np.nan)[below] == x[keep]
    width = GRID.size + 1
    index = codes[keep] * 2 * width + width * equal + below
    expected = np.bincount(index, minlength=3 * 2 * width).reshape(3, 2, width)
    np.testing.assert_array_equal(table, expected)


# ------------------------------------------------------------ histogram, crosstab

BINS = {
    "ints": [18, 30, 45, 65, 100],
    "floats": np.array([18.0, 30.5, 45.0, 65.0, 100.0]),
    "index": pd.Index([0.1, 0.25, 1 / 3, 80.0]),
}


@pytest.mark.parametrize("bins", BINS.values(), ids=BINS.keys())
@pytest.mark.parametrize("right", [True, False])
@pytest.mark.parametrize("include_lowest", [True, False])
def test_histogram_is_indexed_like_cut_value_counts(
    exact: pd.DataFrame, huge_eps: float, bins: object, right: bool, include_lowest: bool
) -> None:
    exact.loc[::9, "age"] = 18  # rows on the lowest edge
    h = exact.dp.histogram(
        "age", bins=bins, epsilon=huge_eps, right=right, include_lowest=include_lowest
    )
    cut = pd.cut(exact["age"], bins, right=right, include_lowest=include_lowest)  # type: ignore[call-overload]
    expected = cut.value_counts(sort=False)
    assert h.index.equals(expected.index)
    assert h.index.dtype == expected.index.dtype
    assert h.name == expected.name
    np.testing.assert_array_equal(h.to_numpy(), expected.to_numpy())
    entry = exact.dp.budget.entries[-1]
    assert entry.operation == "histogram"
    assert entry.keys == len(expected)


@pytest.mark.parametrize("adjacency", ["add_remove", "substitute"])
def test_histogram_sensitivity_follows_the_vector_relation(
    salaries: pd.DataFrame, adjacency: str
) -> None:
    salaries.dp.set_budget(epsilon=1, adjacency=adjacency, seed=1)
    salaries.dp.histogram("age", bins=[0, 40, 80], epsilon=0.5)
    assert salaries.dp.budget.entries[-1].sensitivity == ("1" if adjacency == "add_remove" else "2")


@pytest.mark.parametrize("bins", [5, None, [3.0], [1, 1, 2], [2, 1]])
def test_histogram_refuses_data_bins_before_any_spend(
    protected: pd.DataFrame, nothing_spent: Callable[[], None], bins: object
) -> None:
    with pytest.raises((TypeError, ValueError)):
        protected.dp.histogram("age", bins=bins, epsilon=0.1)
    nothing_spent()


def test_crosstab_is_pd_crosstab_over_public_keys(exact: pd.DataFrame, huge_eps: float) -> None:
    exact["level"] = np.where(exact.age > 40, "senior", "junior")
    table = exact.dp.crosstab(
        "dept",
        "level",
        keys=(["Sales", "Eng", "Ops", "HR"], ["junior", "senior", "exec"]),
        epsilon=huge_eps,
    )
    expected = (
        pd.crosstab(exact.dept, exact.level)
        .reindex(index=["Sales", "Eng", "Ops", "HR"], columns=["junior", "senior", "exec"])
        .fillna(0)
        .astype(np.int64)
    )
    pd.testing.assert_frame_equal(table, expected, check_names=True)
    assert len(exact.dp.budget.entries) == 1
    assert exact.dp.budget.entries[0].keys == 12


# ----------------------------------------------------------------------- describe


def assert_extremes(x: np.ndarray, low: float, high: float) -> None:
    """At a huge ε the searches stop where at most one value lies beyond (T = 1 row).

    So the max is the first ladder point at or above the second largest value,
    within a ladder step (2**(1/8)) of the largest; the min likewise (positive data).
    """
    ranked = np.sort(x)
    assert ranked[-2] <= high <= ranked[-1] * 2 ** (1 / 8)
    assert ranked[0] / 2 ** (1 / 8) <= low <= ranked[1]


def test_describe_at_huge_epsilon_matches_pandas(exact: pd.DataFrame, huge_eps: float) -> None:
    grids = {"salary": np.linspace(0, 300_000, 3001), "age": np.arange(0, 101)}
    clips = {"salary": (0, 300_000), "age": (0, 100)}
    got = exact.dp.describe(["salary", "age"], clip=clips, candidates=grids, epsilon=huge_eps)
    want = exact[["salary", "age"]].describe()
    assert list(got.index) == list(want.index)  # pandas' rows, in pandas' order
    assert list(got.columns) == list(want.columns)
    np.testing.assert_allclose(
        got.loc[["count", "mean", "std"]], want.loc[["count", "mean", "std"]], rtol=1e-6
    )
    for col, grid in grids.items():
        step = grid[1] - grid[0]
        for row, q in [("25%", 0.25), ("50%", 0.5), ("75%", 0.75)]:
            # a q-quantile of the data, up to the grid: between the order statistics around q·n
            lo = np.quantile(exact[col], q, method="lower") - step
            hi = np.quantile(exact[col], q, method="higher") + step
            assert lo <= got.loc[row, col] <= hi
        assert_extremes(exact[col].to_numpy(), got.loc["min", col], got.loc["max", col])
    entry = exact.dp.budget.entries[-1]
    assert entry.operation == "describe"
    for share in ("3/10", "1/10", "1/2", "joint"):
        assert share in entry.mechanism
    assert exact.dp.budget.spent == Fraction(huge_eps)


# ------------------------------------------------------------- pipeline contract

CALLS = {
    "var": lambda df, e: df.dp.var("salary", clip=(0, 1e5), epsilon=e),
    "std": lambda df, e: df.dp.std("salary", clip=(0, 1e5), epsilon=e),
    "grouped-std": lambda df, e: df.dp.groupby("dept", keys=["Eng"]).std(
        "salary", clip=(0, 1e5), epsilon=e
    ),
    "histogram": lambda df, e: df.dp.histogram("age", bins=[0, 50, 100], epsilon=e),
    "crosstab": lambda df, e: df.dp.crosstab("dept", "age", keys=(["Eng"], [30]), epsilon=e),
    "describe": lambda df, e: df.dp.describe(
        "age", clip={"age": (0, 100)}, candidates={"age": [0, 50, 100]}, epsilon=e
    ),
}


@pytest.mark.parametrize("call", CALLS.values(), ids=CALLS.keys())
def test_refused_before_any_spend_when_over_budget(
    protected: pd.DataFrame, nothing_spent: Callable[[], None], call: Callable[..., object]
) -> None:
    with pytest.raises(BudgetExceededError):
        call(protected, 11)
    nothing_spent()


@pytest.mark.parametrize("call", CALLS.values(), ids=CALLS.keys())
def test_one_ledger_entry_without_data(
    protected: pd.DataFrame, call: Callable[..., object]
) -> None:
    call(protected, 0.5)
    (entry,) = protected.dp.budget.entries
    assert entry.epsilon == Fraction(1, 2)
    text = repr(entry.as_record())
    for value in protected.salary.head(20):
        assert f"{value:g}" not in text


def test_describe_refuses_a_column_without_clip(
    protected: pd.DataFrame, nothing_spent: Callable[[], None]
) -> None:
    with pytest.raises(ValueError, match="clip"):
        protected.dp.describe(
            ["age", "salary"], clip={"age": (0, 100)}, candidates={"age": [0, 1]}, epsilon=1
        )
    nothing_spent()


def test_var_refuses_a_non_numeric_column(
    protected: pd.DataFrame, nothing_spent: Callable[[], None]
) -> None:
    with pytest.raises(TypeError, match="numeric"):
        protected.dp.var("dept", clip=(0, 1), epsilon=1)
    nothing_spent()


def test_grouped_describe_at_huge_epsilon_matches_pandas_groupby_describe(
    exact: pd.DataFrame, huge_eps: float
) -> None:
    grids = {"salary": np.linspace(0, 300_000, 3001), "age": np.arange(0, 101)}
    clips = {"salary": (0, 300_000), "age": (0, 100)}
    keys = ["Sales", "Eng", "Ops"]
    got = exact.dp.groupby("dept", keys=keys).describe(
        ["salary", "age"], clip=clips, candidates=grids, epsilon=huge_eps
    )
    clipped = exact.assign(**{c: exact[c].clip(*b) for c, b in clips.items()})
    want = clipped.groupby("dept")[["salary", "age"]].describe().reindex(keys)
    assert list(got.columns) == list(want.columns)  # (column, stat), in pandas' order
    assert list(got.index) == keys
    assert got.index.name == want.index.name == "dept"
    moments = [(c, s) for c in clips for s in ("count", "mean", "std")]
    np.testing.assert_allclose(got[moments], want[moments], rtol=1e-6)
    for col, grid in grids.items():
        step = grid[1] - grid[0]
        for key in keys:
            ranked = np.sort(exact.loc[exact.dept == key, col].to_numpy())
            n = ranked.size
            for stat, q in [("25%", 0.25), ("50%", 0.5), ("75%", 0.75)]:
                # scores count rows, so every grid point in the gaps next to the order
                # statistics at q·n scores alike; the joint rate is at most 2 per row of
                # error (quantile.MAX_RATE), so a pick a few rows off is not rare
                lo = ranked[max(math.ceil(q * n) - 6, 0)] - step
                hi = ranked[min(math.floor(q * n) + 5, n - 1)] + step
                assert lo <= got.loc[key, (col, stat)] <= hi
            assert_extremes(ranked, got.loc[key, (col, "min")], got.loc[key, (col, "max")])
    (entry,) = exact.dp.budget.entries
    assert entry.operation == "groupby.describe"
    assert entry.keys == 3
    assert "1/2" in entry.mechanism
    assert "3/10" in entry.mechanism
    assert exact.dp.budget.spent == Fraction(huge_eps)


def test_grouped_describe_answers_absent_keys_and_one_column(
    exact: pd.DataFrame, huge_eps: float
) -> None:
    got = exact.dp.groupby("dept", keys=["Eng", "HR"]).describe(
        "age", clip={"age": (0, 100)}, candidates={"age": np.arange(101)}, epsilon=huge_eps
    )
    rows = ("count", "mean", "std", "min", "25%", "50%", "75%", "max")
    assert list(got.columns) == [("age", s) for s in rows]
    assert got.loc["HR", ("age", "count")] == 0
    assert got.loc["HR", ("age", "std")] < 0.01  # a noisy count near 0: no spread to speak of
    assert 0 <= got.loc["HR", ("age", "mean")] <= 100
    assert got.loc["Eng", ("age", "count")] == (exact.dept == "Eng").sum()


def test_grouped_describe_with_a_privacy_unit_needs_and_records_its_bounds(
    salaries: pd.DataFrame, huge_eps: float
) -> None:
    df = salaries.assign(person=np.arange(len(salaries)))  # one row per person
    df.dp.set_budget(epsilon=1e12, privacy_unit="person", seed=4)
    g = df.dp.groupby("dept", keys=["Eng", "Ops", "Sales"])
    args = {"clip": {"age": (0, 100)}, "candidates": {"age": np.arange(101)}}
    with pytest.raises(TypeError, match="max_rows"):
        g.describe("age", **args, epsilon=1)
    with pytest.raises(TypeError, match="max_groups"):
        g.describe("age", **args, epsilon=1, max_rows=1)
    assert df.dp.budget.spent == 0
    got = g.describe("age", **args, epsilon=huge_eps, max_rows=1, max_groups=1)
    want = df.groupby("dept").age.size().reindex(["Eng", "Ops", "Sales"])
    np.testing.assert_array_equal(got[("age", "count")], want.to_numpy(dtype=float))
    (entry,) = df.dp.budget.entries
    assert (entry.privacy_unit, entry.max_rows, entry.max_groups) == ("person", 1, 1)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"epsilon": 11},  # over the budget
        {"epsilon": 1, "clip": {"salary": (0, 1e5)}},  # no clip for age
        {"epsilon": 1, "candidates": {"age": [0, 1], "salary": [2, 1]}},  # not increasing
        {"epsilon": 1, "columns": ["age", "nope"]},  # no such column
        {"epsilon": 1, "columns": ["dept"]},  # not numeric
        {"epsilon": 0},
    ],
)
def test_grouped_describe_is_refused_before_any_spend(
    protected: pd.DataFrame, nothing_spent: Callable[[], None], kwargs: dict[str, object]
) -> None:
    call: dict[str, object] = {
        "columns": ["age", "salary"],
        "clip": {"age": (0, 100), "salary": (0, 1e5), "dept": (0, 1), "nope": (0, 1)},
        "candidates": {"age": [0, 50], "salary": [0, 5e4], "dept": [0, 1], "nope": [0, 1]},
        **kwargs,
    }
    columns = call.pop("columns")
    with pytest.raises((BudgetExceededError, KeyError, TypeError, ValueError)):
        protected.dp.groupby("dept", keys=["Eng", "Ops"]).describe(columns, **call)
    nothing_spent()


@pytest.mark.parametrize("grouped", [False, True], ids=["describe", "g_describe"])
def test_describe_with_ci_says_why_it_has_no_interval(
    protected: pd.DataFrame, nothing_spent: Callable[[], None], grouped: bool
) -> None:
    dp = protected.dp.groupby("dept", keys=["Eng", "Ops"]) if grouped else protected.dp
    with pytest.raises(TypeError, match=r"ci=0\.95: .* selection mechanisms .* `\.dp\.mean\("):
        dp.describe(
            ["age"], clip={"age": (0, 100)}, candidates={"age": [0, 50]}, epsilon=1, ci=0.95
        )
    nothing_spent()


# ------------------------------------------------------------------ zCDP (L2) variance

UNIT = {"max_rows": 3, "privacy_unit": "u"}


@pytest.mark.parametrize(
    ("relation", "factor"),
    [
        (Neighbours("add_remove"), 1),
        (Neighbours("substitute"), 2),
        (Neighbours("substitute", grouped=True), 2),
        (Neighbours("add_remove", True, max_groups=4, **UNIT), 36),  # k²·g
        (Neighbours("substitute", True, max_groups=4, **UNIT), 144),
    ],
)
def test_variance_plan_under_rho_carries_the_exact_l2_figures(
    relation: Neighbours, factor: int
) -> None:
    rho = Fraction(1, 10)
    plan = plan_variance_rho((0.0, 1000.0), rho, relation)
    top, low, high = plan.grid.q_hi, -plan.offset, plan.bump - plan.offset
    assert plan.grid.delta == factor * top * top  # the pair: (q, Q − q), norm² <= Q²
    assert plan.delta3 == relation.sum_sq_sensitivity(low, high)  # C: a sum of rows in [-o, R-o]
    assert isinstance(plan.grid.scale, Gauss)
    assert isinstance(plan.scale3, Gauss)
    assert plan.grid.scale.sigma2 >= Fraction(plan.grid.delta) / rho  # ρ/2 each
    assert plan.scale3.sigma2 == Fraction(plan.delta3) / rho
    assert rho * (1 - Fraction(1, 2**50)) < plan.realised_rho <= rho
    assert (plan.epsilon, plan.rho) == (None, rho)


def test_ungrouped_substitute_c_uses_the_widest_change() -> None:
    plan = plan_variance_rho((0.0, 1000.0), Fraction(1, 10), Neighbours("substitute"))
    assert plan.delta3 == plan.bump**2  # a changed value moves r(q) by up to R


def test_variance_under_rho_draws_the_planned_gaussian_noise(
    assert_dgauss_sigma2: Callable[[np.ndarray, Fraction], None],
) -> None:
    plan = plan_variance_rho((0.0, 10.0), Fraction(1, 2), Neighbours("add_remove"))
    zeros = np.zeros(20_000, dtype=np.int64)
    a, b, c = noisy_triples(SeededSource(5), zeros, zeros, zeros, plan)
    assert isinstance(plan.grid.scale, Gauss)
    assert isinstance(plan.scale3, Gauss)
    assert_dgauss_sigma2(a, plan.grid.scale.sigma2)
    assert_dgauss_sigma2(b, plan.grid.scale.sigma2)
    assert_dgauss_sigma2(c, plan.scale3.sigma2)


def test_var_interval_under_rho_holds_the_clipped_variance_at_its_level() -> None:
    rng = np.random.default_rng(3)
    values = rng.uniform(0, 100, 400)
    df = pd.DataFrame({"x": values})
    df.dp.set_budget(rho=100, seed=9)
    truth = float(np.var(values, ddof=1))
    held = sum(
        lo <= truth <= hi
        for lo, hi in (
            df.dp.var("x", clip=(0, 100), rho=0.5, ci=0.8)[["lower", "upper"]] for _ in range(100)
        )
    )
    assert held >= 80  # conservative: every interval of the box holds it with p >= 0.8
