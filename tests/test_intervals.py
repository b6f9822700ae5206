"""Intervals next to answers (``ci=``) and planning before spending (issue 12).

Coverage is measured over thousands of keys in one grouped call (each key an
independent release), with fixed seeds; the planning functions are checked
against the intervals actual releases give.
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Callable
from fractions import Fraction
from pathlib import Path
from statistics import NormalDist

import numpy as np
import pandas as pd
import pytest
import scipy.stats

import pandas_dp
from pandas_dp import epsilon_for, half_width
from pandas_dp.core.noise import SeededSource, discrete_laplace
from pandas_dp.kinds.base import Neighbours
from pandas_dp.kinds.sums import plan_mean
from pandas_dp.mechanisms import accuracy

KEYS = 4_000
ROWS = 20  # rows per key
CLIP = (0.0, 100.0)


@pytest.fixture(scope="module")
def many() -> pd.DataFrame:
    """KEYS keys of ROWS rows each; values spread over (and beyond) the clip."""
    rng = np.random.Generator(np.random.PCG64(99))
    return pd.DataFrame(
        {
            "key": np.repeat(np.arange(KEYS), ROWS),
            "x": rng.uniform(-20, 120, size=KEYS * ROWS),
        }
    )


def _grouped(df: pd.DataFrame, seed: int) -> pandas_dp.DPGroupBy:
    frame = df.copy()
    frame.dp.set_budget(epsilon=100, seed=seed)
    return frame.dp.groupby("key", keys=range(KEYS))


def _truth(df: pd.DataFrame, kind: str) -> pd.Series:
    clipped = df.assign(x=df.x.clip(*CLIP)).groupby("key").x
    return {
        "count": clipped.size,
        "sum": clipped.sum,
        "mean": clipped.mean,
        "var": clipped.var,
        "std": clipped.std,
    }[kind]()


def _at_least(hits: int, level: float) -> None:
    """The coverage is not below ``level``: a one-sided binomial test at 1e-4."""
    assert scipy.stats.binom.cdf(hits, KEYS, level) > 1e-4, f"{hits}/{KEYS} < {level}"


# -------------------------------------------------------------- exact quantiles


def test_count_half_width_at_half_epsilon_and_level_09_is_5() -> None:
    assert half_width("count", epsilon=0.5, level=0.9) == 5
    # P(|Z| > 5) <= 0.1 < P(|Z| > 4) for Z ~ dLap(2): 5 is the smallest such t
    assert accuracy.tail(5, 2) <= 0.1 < accuracy.tail(4, 2)
    assert accuracy.tail(5, 2) == pytest.approx(2 * math.exp(-3) / (1 + math.exp(-0.5)))


@pytest.mark.parametrize("scale", [Fraction(1, 3), Fraction(2), Fraction(7, 2), 1000, 2**40])
@pytest.mark.parametrize("miss", [0.5, 0.1, 0.05, 0.01, 1e-6])
def test_noise_half_width_is_the_smallest_t_that_covers(scale: Fraction, miss: float) -> None:
    t = accuracy.noise_half_width(scale, miss)
    assert accuracy.tail(t, scale) <= miss * (1 + 1e-12)
    if t > 0:
        assert accuracy.tail(t - 1, scale) > miss * (1 - 1e-12)


def test_no_noise_means_no_width() -> None:
    assert accuracy.noise_half_width(0, 0.05) == 0


# -------------------------------------------------------------------- coverage


@pytest.mark.parametrize("level", [0.5, 0.9, 0.95])
def test_count_intervals_cover_at_exactly_the_discrete_laplace_rate(
    many: pd.DataFrame, level: float
) -> None:
    got = _grouped(many, 1).count(epsilon=0.5, ci=level)
    truth = _truth(many, "count")
    hits = int(((got.lower <= truth) & (truth <= got.upper)).sum())
    _at_least(hits, level)
    # Not needlessly loose: the coverage is the exact P(|Z| <= t), not more.
    t = half_width("count", epsilon=0.5, level=level)
    exact = 1 - accuracy.tail(int(t), 2)
    assert scipy.stats.binomtest(hits, KEYS, exact).pvalue > 1e-4
    assert (got.upper - got.lower == 2 * t).all()


@pytest.mark.parametrize("level", [0.5, 0.9])
def test_sum_intervals_cover_the_clipped_sum(many: pd.DataFrame, level: float) -> None:
    got = _grouped(many, 2).sum("x", clip=CLIP, epsilon=0.3, ci=level)
    truth = _truth(many, "sum")
    hits = int(((got.lower <= truth) & (truth <= got.upper)).sum())
    _at_least(hits, level)
    # The grid is ~2**-30 of the noise: the coverage is the continuous Laplace's, not more.
    h = half_width("sum", epsilon=0.3, level=level, clip=CLIP)
    exact = 1 - math.exp(-h / (100 / 0.3))
    assert scipy.stats.binomtest(hits, KEYS, exact).pvalue > 1e-4
    np.testing.assert_array_equal((got.upper - got.lower) / 2, h)


@pytest.mark.parametrize(("level", "epsilon"), [(0.9, 0.5), (0.95, 0.2), (0.5, 1.0)])
def test_mean_intervals_cover_and_stay_inside_the_clip(
    many: pd.DataFrame, level: float, epsilon: float
) -> None:
    got = _grouped(many, 3).mean("x", clip=CLIP, epsilon=epsilon, ci=level)
    truth = _truth(many, "mean")
    hits = int(((got.lower <= truth) & (truth <= got.upper)).sum())
    _at_least(hits, level)
    assert (got.lower >= 0).all()
    assert (got.upper <= 100).all()
    assert ((got.lower <= got.estimate) & (got.estimate <= got.upper)).all()
    # Widths as planned: (U − L)·t/(n·Q) when the noisy sums add up to n·Q; the
    # noise on that total moves it by about 1/(nε) relatively.
    planned = half_width("mean", epsilon=epsilon, level=level, clip=CLIP, n=ROWS)
    observed = ((got.upper - got.lower) / 2).median()
    assert observed == pytest.approx(planned, rel=0.1)


@pytest.mark.parametrize("op", ["var", "std"])
@pytest.mark.parametrize(("level", "epsilon"), [(0.5, 20.0), (0.9, 5.0), (0.95, 50.0), (0.9, 0.5)])
def test_variance_intervals_cover_and_hold_the_estimate(
    many: pd.DataFrame, op: str, level: float, epsilon: float
) -> None:
    got = getattr(_grouped(many, 4), op)("x", clip=CLIP, epsilon=epsilon, ci=level)
    truth = _truth(many, op)
    hits = int(((got.lower <= truth) & (truth <= got.upper)).sum())
    _at_least(hits, level)
    assert ((got.lower <= got.estimate) & (got.estimate <= got.upper)).all()
    ceiling = 100**2 / 2 if op == "var" else 100 / math.sqrt(2)
    assert (got.lower >= 0).all()
    assert (got.upper <= ceiling * (1 + 1e-12)).all()
    if epsilon >= 5:  # informative, not the whole range [0, ceiling]
        assert ((got.upper - got.lower) / 2).median() < ceiling / 4


def test_variance_intervals_narrow_with_epsilon(many: pd.DataFrame) -> None:
    widths = [
        float((got.upper - got.lower).median())
        for got in (
            _grouped(many, 5).std("x", clip=CLIP, epsilon=eps, ci=0.9) for eps in (2, 10, 50)
        )
    ]
    assert widths[0] > widths[1] > widths[2] > 0


def test_a_grid_coarser_than_the_clip_knows_nothing_of_the_variance() -> None:
    df = pd.DataFrame({"x": np.full(10, 50.0)})
    df.dp.set_budget(epsilon=1, seed=1)
    got = df.dp.var("x", clip=(0, 100), epsilon=1e-10, ci=0.9)
    assert got["lower"] == 0
    assert got["upper"] == pytest.approx(100**2 / 2)


def test_variance_interval_of_one_key_by_hand() -> None:
    """The box bound, computed by hand from the released triple, at one key."""
    a, b, c = np.array([600]), np.array([400]), np.array([-5])
    lo, hi = accuracy.variance_interval(
        a, b, c, top=100, offset=12, scale=3, scale3=2, lower=0.0, upper=100.0,
        exponent=0, level=0.9,
    )  # fmt: skip
    t = accuracy.noise_half_width(3, accuracy.var_miss(0.9))
    t3 = accuracy.noise_half_width(2, accuracy.var_miss(0.9))
    a_lo, b_lo, a_hi, b_hi = 600 - t, 400 - t, 600 + t, 400 + t
    n_lo, n_hi = (a_lo + b_lo) / 100, (a_hi + b_hi) / 100
    m_lo = a_lo * b_lo / (a_lo + b_lo) - (-5 + t3) - n_hi * 12 - n_hi / 2
    m_hi = a_hi * b_hi / (a_hi + b_hi) - (-5 - t3) - n_lo * 12 + n_hi / 2
    pad = accuracy.mean_pad(0.0, 100.0, 0)
    assert lo[0] == pytest.approx(math.sqrt(100 * m_lo / (n_hi - 1)) - pad)
    assert hi[0] == pytest.approx(math.sqrt(100 * m_hi / (n_lo - 1)) + pad)
    assert accuracy.var_miss(0.9) == pytest.approx(1 - 0.9 ** (1 / 3))


@pytest.mark.parametrize("level", [0.5, 0.9])
def test_histogram_intervals_cover_every_bin(level: float) -> None:
    rng = np.random.Generator(np.random.PCG64(7))
    df = pd.DataFrame({"x": rng.uniform(0, KEYS, size=10 * KEYS)})
    df.dp.set_budget(epsilon=10, seed=8)
    bins = np.arange(KEYS + 1, dtype=np.float64)
    got = df.dp.histogram("x", bins=bins, epsilon=0.5, ci=level)
    truth = pd.cut(df.x, bins).value_counts(sort=False)
    assert got.index.equals(truth.index)
    assert list(got.columns) == ["estimate", "lower", "upper"]
    hits = int(((got.lower <= truth) & (truth <= got.upper)).sum())
    _at_least(hits, level)
    t = half_width("count", epsilon=0.5, level=level)
    assert (got.upper - got.estimate == t).all()
    assert (got.estimate - got.lower == t).all()


def test_crosstab_with_ci_is_three_crosstabs_side_by_side(protected: pd.DataFrame) -> None:
    keys = (["Eng", "Ops", "Sales", "HR"], [20, 30, 40])
    got = protected.dp.crosstab("dept", "age", keys=keys, epsilon=0.5, ci=0.9)
    assert list(got.columns) == [
        (s, k) for s in ("estimate", "lower", "upper") for k in (20, 30, 40)
    ]
    assert list(got.columns.names) == [None, "age"]
    assert list(got.index) == keys[0]
    assert got.index.name == "dept"
    t = half_width("count", epsilon=0.5, level=0.9)
    assert (got["upper"] - got["estimate"] == t).all().all()
    assert (got["estimate"] - got["lower"] == t).all().all()
    assert got["estimate"].columns.name == "age"


@pytest.mark.parametrize("ci", [None, 0.9])
@pytest.mark.parametrize("op", ["histogram", "crosstab"])
def test_histogram_and_crosstab_estimates_are_the_same_with_ci(
    salaries: pd.DataFrame, op: str, ci: float | None
) -> None:
    df = salaries.copy()
    df.dp.set_budget(epsilon=1, seed=17)
    if op == "histogram":
        got = df.dp.histogram("age", bins=[18, 30, 50, 70], epsilon=0.4, ci=ci)
    else:
        got = df.dp.crosstab("dept", "age", keys=(["Eng", "Ops"], [20, 30]), epsilon=0.4, ci=ci)
    assert df.dp.budget.spent == Fraction(2, 5)
    plain = salaries.copy()
    plain.dp.set_budget(epsilon=1, seed=17)
    if op == "histogram":
        expected = plain.dp.histogram("age", bins=[18, 30, 50, 70], epsilon=0.4)
    else:
        expected = plain.dp.crosstab("dept", "age", keys=(["Eng", "Ops"], [20, 30]), epsilon=0.4)
    if ci is None:
        assert got.equals(expected)
    elif op == "histogram":
        pd.testing.assert_series_equal(got["estimate"], expected, check_names=False)
    else:
        pd.testing.assert_frame_equal(got["estimate"], expected)
    assert plain.dp.budget.entries[0].epsilon == df.dp.budget.entries[0].epsilon


def test_mean_interval_of_one_key_by_hand() -> None:
    """A seeded release's interval, recomputed from its noisy pair by independent arithmetic.

    The design: each of the two noises misses its bound with ``1 − sqrt(level)``
    (both hold with probability ``level``); the share's bounds are mapped to the
    clip and widened by one grid step (the rounding of the rows) before clipping.
    Coverage tests cannot see a wrong level or a dropped pad: the interval is
    conservative and covers anyway.
    """
    lower, upper, epsilon, level, seed = -3.0, 5.0, 1.0, 0.9, 12
    x = np.random.Generator(np.random.PCG64(5)).uniform(-4.0, 6.0, size=2_000)
    df = pd.DataFrame({"x": x})
    df.dp.set_budget(epsilon=epsilon, seed=seed)
    got = df.dp.mean("x", clip=(lower, upper), epsilon=epsilon, ci=level)

    # The released pair: rows on the grid of step 2**k, the seed's two noises.
    grid = plan_mean((lower, upper), Fraction(epsilon), Neighbours("add_remove")).grid
    step = 2.0**grid.exponent
    top = round((upper - lower) / step)  # Q, exact: the width is a multiple of the step
    assert (top, grid.scale) == (grid.q_hi, math.ceil(top / epsilon))
    q = np.rint((np.clip(x, lower, upper) - lower) / step).astype(np.int64)
    z = discrete_laplace(SeededSource(seed), grid.scale, 2)
    a = int(q.sum()) + int(z[0])
    b = x.size * top - int(q.sum()) + int(z[1])
    assert got["estimate"] == lower + (upper - lower) * a / (a + b)

    # t: the smallest integer with P(|Z| > t) = 2·p**(t + 1)/(1 + p) <= 1 − sqrt(level).
    s = float(grid.scale)
    p = math.exp(-1.0 / s)
    exact_t = s * math.log(2.0 / ((1.0 + p) * (1.0 - math.sqrt(level)))) - 1.0
    assert 1e-4 < exact_t % 1 < 1 - 1e-4  # far from an integer: float rounding cannot matter
    t = math.ceil(exact_t)
    assert t < min(a, b)  # the key is far from both bounds: no clamping at 0
    share_lo = (a - t) / ((a - t) + (b + t))
    share_hi = (a + t) / ((a + t) + (b - t))
    expected_lo = lower + (upper - lower) * share_lo - step
    expected_hi = lower + (upper - lower) * share_hi + step
    assert lower < expected_lo < expected_hi < upper
    assert got["lower"] == pytest.approx(expected_lo, rel=0, abs=1e-12)
    assert got["upper"] == pytest.approx(expected_hi, rel=0, abs=1e-12)


def test_a_mean_of_no_rows_is_not_claimed_to_be_known() -> None:
    df = pd.DataFrame({"k": ["a"] * 50, "x": np.linspace(0, 10, 50)})
    df.dp.set_budget(epsilon=10, seed=3)
    got = df.dp.groupby("k", keys=["a", "b"]).mean("x", clip=(0, 10), epsilon=1, ci=0.95)
    assert got.loc["b", "upper"] - got.loc["b", "lower"] > 5  # no rows: most of the clip
    assert 0 <= got.loc["b", "lower"] <= got.loc["b", "upper"] <= 10


# ------------------------------------------------- planning against the releases


@pytest.mark.parametrize("adjacency", ["add_remove", "substitute"])
@pytest.mark.parametrize("level", [0.5, 0.9, 0.99])
def test_planned_count_and_sum_widths_are_those_of_the_releases(
    salaries: pd.DataFrame, adjacency: str, level: float
) -> None:
    salaries.dp.set_budget(epsilon=100, adjacency=adjacency, seed=5)
    filtered = salaries.dp.filter(salaries.age > 30)  # the row count of a filtered frame is private
    for grouped in (False, True):
        kw = {"level": level, "adjacency": adjacency, "grouped": grouped}
        if grouped:
            g = filtered.dp.groupby("dept", keys=["Eng", "Ops", "Sales"])
            count = g.count(epsilon=0.7, ci=level)
            total = g.sum("salary", clip=(0, 2e5), epsilon=0.7, ci=level)
        else:
            count = filtered.dp.count(epsilon=0.7, ci=level).to_frame().T
            total = filtered.dp.sum("salary", clip=(0, 2e5), epsilon=0.7, ci=level).to_frame().T
        assert ((count.upper - count.lower) / 2 == half_width("count", epsilon=0.7, **kw)).all()
        planned = half_width("sum", epsilon=0.7, clip=(0, 2e5), **kw)
        assert ((total.upper - total.lower) / 2 == planned).all()


def test_planned_widths_of_several_columns_split_epsilon(salaries: pd.DataFrame) -> None:
    salaries.dp.set_budget(epsilon=10, seed=5)
    clip = {"salary": (0, 2e5), "bonus": (0, 5e3)}
    got = salaries.dp.sum(clip=clip, epsilon=1, ci=0.9)
    planned = half_width("sum", epsilon=1, level=0.9, clip=clip)
    assert list(planned.index) == ["salary", "bonus"]
    for column in clip:
        assert (got[column]["upper"] - got[column]["lower"]) / 2 == planned[column]
        assert planned[column] == half_width("sum", epsilon=0.5, level=0.9, clip=clip[column])


@pytest.mark.parametrize("n", [1, 20, 10_000])
def test_planned_mean_width_is_the_interval_at_n_rows(n: int) -> None:
    """Exactly the release's interval arithmetic when the noisy sums add up to n·Q."""
    eps, level, clip = Fraction(1, 2), 0.9, (10.0, 250.0)
    grid = plan_mean(clip, eps, Neighbours("add_remove")).grid
    t = accuracy.noise_half_width(grid.scale, accuracy.mean_miss(level))
    total = n * grid.q_hi
    pad = accuracy.mean_pad(*clip, grid.exponent)
    margin = t + math.ceil(2 * pad * total / 240) + 1  # grid units: t plus the pad
    a = np.minimum([total // 2, total // 3, margin, 0, total], total)
    b = total - a
    estimate = 10 + 240 * a / total
    lo, hi = accuracy.mean_interval(a, b, estimate, grid.scale, *clip, grid.exponent, level)
    planned = half_width("mean", epsilon=0.5, level=level, clip=clip, n=n)
    inside = (a >= margin) & (b >= margin)  # far enough from both bounds
    assert inside.any() == (n > 1)
    np.testing.assert_allclose((hi - lo)[inside] / 2, planned, rtol=1e-12)
    assert ((hi - lo)[~inside] / 2 <= planned * (1 + 1e-12)).all()  # nearer a bound: narrower
    assert planned <= 120


# -------------------------------------------------------------- epsilon_for


@pytest.mark.parametrize(
    ("kind", "width", "extra"),
    [
        ("count", 5, {}),
        ("count", 0, {}),
        ("count", 3, {"grouped": True, "adjacency": "substitute"}),
        ("count", 100, {"level": 0.999}),
        ("sum", 1_000.0, {"clip": (0, 100)}),
        ("sum", 2e4, {"clip": (-5e3, 2e5), "adjacency": "substitute", "level": 0.5}),
        ("mean", 1.0, {"clip": (0, 100), "n": 1000}),
        ("mean", 500.0, {"clip": (0, 2e5), "n": 30_000, "grouped": True}),
        ("mean", {"a": 2.0, "b": 0.5}, {"clip": {"a": (0, 100), "b": (0, 10)}, "n": 100}),
    ],
)
def test_epsilon_for_inverts_half_width(kind: str, width: object, extra: dict[str, object]) -> None:
    eps = epsilon_for(kind, half_width=width, **extra)  # type: ignore[arg-type]
    smaller = float(np.nextafter(eps, 0))
    reached = half_width(kind, epsilon=eps, **extra)  # type: ignore[arg-type]
    missed = half_width(kind, epsilon=smaller, **extra)  # type: ignore[arg-type]
    wanted = pd.Series(width) if isinstance(width, dict) else width
    assert np.all(reached <= wanted)
    assert np.any(missed > wanted)


def test_epsilon_for_a_count_matches_the_closed_form() -> None:
    # half-width 5 at 0.9: 2p**6/(1 + p) = 0.1 with p = exp(−ε)
    eps = epsilon_for("count", half_width=5, level=0.9)
    p = math.exp(-eps)
    assert 2 * p**6 / (1 + p) == pytest.approx(0.1, rel=1e-12)


def test_epsilon_for_refuses_an_unreachable_width() -> None:
    with pytest.raises(ValueError, match="no epsilon reaches"):
        epsilon_for("sum", half_width=0, clip=(0, 100))


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"kind": "argmax_exp", "epsilon": 1}, ValueError, "`kind`"),
        ({"kind": "median", "epsilon": 1}, TypeError, "`candidates` is required"),
        ({"kind": "mean", "epsilon": 1, "clip": (0, 1)}, TypeError, "assumed `n`"),
        ({"kind": "mean", "epsilon": 1, "clip": (0, 1), "n": 0}, TypeError, "assumed `n`"),
        ({"kind": "sum", "epsilon": 1, "clip": (0, 1), "n": 5}, TypeError, "`n`"),
        ({"kind": "count", "epsilon": 1, "clip": (0, 1)}, TypeError, "`clip`"),
        ({"kind": "count", "epsilon": 1, "level": 1}, ValueError, "`level`"),
        ({"kind": "count", "epsilon": 1, "grouped": "yes"}, TypeError, "`grouped`"),
        ({"kind": "count", "epsilon": -1}, ValueError, "`epsilon`"),
    ],
)
def test_planning_refuses_bad_arguments(
    kwargs: dict[str, object], error: type[Exception], match: str
) -> None:
    with pytest.raises(error, match=match):
        half_width(**kwargs)  # type: ignore[arg-type]


# ---------------------------------------------------------------- the surfaces


def test_shapes_ungrouped(protected: pd.DataFrame) -> None:
    count = protected.dp.count(epsilon=0.5, ci=0.9)
    assert list(count.index) == ["estimate", "lower", "upper"]
    assert count.dtype == np.int64
    assert count.name == "count"
    mean = protected.dp.mean("salary", clip=(0, 2e5), epsilon=0.5, ci=0.9)
    assert list(mean.index) == ["estimate", "lower", "upper"]
    assert mean.name == "salary"
    both = protected.dp.sum(clip={"salary": (0, 2e5), "bonus": (0, 5e4)}, epsilon=0.5, ci=0.9)
    assert list(both.index) == [
        (c, s) for c in ("salary", "bonus") for s in ("estimate", "lower", "upper")
    ]


def test_shapes_grouped(protected: pd.DataFrame) -> None:
    g = protected.dp.groupby("dept", keys=["Eng", "Ops", "Sales", "HR"])
    count = g.count(epsilon=0.5, ci=0.9)
    assert list(count.columns) == ["estimate", "lower", "upper"]
    assert list(count.index) == ["Eng", "Ops", "Sales", "HR"]
    both = g.mean(clip={"salary": (0, 2e5), "bonus": (0, 5e4)}, epsilon=0.5, ci=0.9)
    assert list(both.columns) == [
        (c, s) for c in ("salary", "bonus") for s in ("estimate", "lower", "upper")
    ]
    assert list(both.index) == ["Eng", "Ops", "Sales", "HR"]


@pytest.mark.parametrize("grouped", [False, True])
@pytest.mark.parametrize("op", ["count", "sum", "mean", "var", "std"])
def test_the_interval_is_free_and_the_estimate_the_same(
    salaries: pd.DataFrame, op: str, grouped: bool
) -> None:
    """The same seed gives the same estimate with or without ``ci``, at the same cost."""
    results = []
    for ci in (None, 0.9):
        df = salaries.copy()
        df.dp.set_budget(epsilon=1, seed=17)
        surface = df.dp.groupby("dept", keys=["Eng", "Ops", "Sales"]) if grouped else df.dp
        kwargs = {} if op == "count" else {"clip": (0, 2e5)}
        column = [] if op == "count" else ["salary"]
        results.append(getattr(surface, op)(*column, epsilon=0.4, ci=ci, **kwargs))
        assert df.dp.budget.spent == Fraction(2, 5)
    plain, with_ci = results
    if grouped:
        pd.testing.assert_series_equal(with_ci["estimate"], plain, check_names=False)
    else:
        assert with_ci["estimate"] == plain


def test_the_public_row_count_has_an_interval_of_no_width(substituted: pd.DataFrame) -> None:
    got = substituted.dp.count(epsilon=1, ci=0.99)
    assert got["lower"] == got["estimate"] == got["upper"] == len(substituted)


def test_a_grid_coarser_than_the_clip_gives_an_infinite_sum_interval() -> None:
    df = pd.DataFrame({"x": np.full(10, 50.0)})
    df.dp.set_budget(epsilon=1, seed=1)
    got = df.dp.sum("x", clip=(0, 100), epsilon=1e-10, ci=0.9)
    assert got["lower"] == -math.inf
    assert got["upper"] == math.inf
    assert half_width("sum", epsilon=1e-10, clip=(0, 100), level=0.9) == math.inf


BAD_LEVELS = [
    (0, ValueError),
    (1, ValueError),
    (0.0, ValueError),
    (1.0, ValueError),
    (-0.5, ValueError),
    (1.5, ValueError),
    (math.nan, ValueError),
    (math.inf, ValueError),
    (True, TypeError),
    (np.True_, TypeError),
    ("0.9", TypeError),
    ([0.9], TypeError),
]


@pytest.mark.parametrize(("ci", "error"), BAD_LEVELS)
@pytest.mark.parametrize("grouped", [False, True])
@pytest.mark.parametrize("op", ["count", "sum", "mean", "var", "std"])
def test_bad_levels_are_refused_before_any_spend(
    protected: pd.DataFrame,
    nothing_spent: Callable[[], None],
    op: str,
    grouped: bool,
    ci: object,
    error: type[Exception],
) -> None:
    surface = protected.dp.groupby("dept", keys=["Eng", "Ops"]) if grouped else protected.dp
    kwargs = {} if op == "count" else {"clip": (0, 2e5)}
    column = [] if op == "count" else ["salary"]
    with pytest.raises(error, match="`ci` must be a confidence level"):
        getattr(surface, op)(*column, epsilon=0.5, ci=ci, **kwargs)
    nothing_spent()


@pytest.mark.parametrize(("ci", "error"), BAD_LEVELS)
@pytest.mark.parametrize("op", ["histogram", "crosstab"])
def test_bad_levels_of_histogram_and_crosstab_are_refused_before_any_spend(
    protected: pd.DataFrame,
    nothing_spent: Callable[[], None],
    op: str,
    ci: object,
    error: type[Exception],
) -> None:
    calls: dict[str, Callable[[], object]] = {
        "histogram": lambda: protected.dp.histogram("age", bins=[18, 40, 70], epsilon=0.5, ci=ci),
        "crosstab": lambda: protected.dp.crosstab(
            "dept", "age", keys=(["Eng"], [20]), epsilon=0.5, ci=ci
        ),
    }
    with pytest.raises(error, match="`ci` must be a confidence level"):
        calls[op]()
    nothing_spent()


# ------------------------------------------------------------------- clip bounds


def test_the_95th_percentile_as_upper_clip_costs_about_14_percent_of_the_mean(
    shared_data: Path,
) -> None:
    """README, "Choosing clip bounds": the bias a high-quantile clip brings on skewed income."""
    income = pd.read_csv(shared_data / "pums_1000.csv")["income"]
    upper = income.quantile(0.95)
    loss = 1 - income.clip(0, upper).mean() / income.mean()
    assert 0.12 < loss < 0.16


# ------------------------------------------------- the ledger's half-width at 95%


def _releases(df: pd.DataFrame, adjacency: str) -> list[tuple[str, float | list[float]]]:
    """Spend a count, sums (one and two columns), a mean and a median; each planned width."""
    kw: dict[str, object] = {"adjacency": adjacency}
    filtered = df.dp.filter(df.age > 30)  # its row count is private under either adjacency
    g = filtered.dp.groupby("dept", keys=["Eng", "Ops", "Sales"])
    filtered.dp.count(epsilon=0.7)
    g.count(epsilon=0.3)
    filtered.dp.sum("salary", clip=(-5, 2e5), epsilon=0.7)
    g.sum(clip={"salary": (0, 2e5), "bonus": (0, 5e3)}, epsilon=0.9)
    filtered.dp.mean("salary", clip=(0, 2e5), epsilon=0.5)
    filtered.dp.median("salary", candidates=[0, 5e4, 1e5], epsilon=0.2)
    two = half_width(
        "sum", epsilon=0.9, clip={"salary": (0, 2e5), "bonus": (0, 5e3)}, **kw, grouped=True
    )
    return [
        ("count", half_width("count", epsilon=0.7, **kw)),
        ("groupby.count", half_width("count", epsilon=0.3, grouped=True, **kw)),
        ("sum", half_width("sum", epsilon=0.7, clip=(-5, 2e5), **kw)),
        ("groupby.sum", list(two)),
        ("mean", math.nan),
        ("median", half_width("median", epsilon=0.2, candidates=[0, 5e4, 1e5], **kw)),
    ]


def _check_half_widths(shown: pd.Series, planned: list[tuple[str, float | list[float]]]) -> None:
    assert len(shown) == len(planned)
    for text, (operation, width) in zip(shown, planned, strict=True):
        if operation == "mean":
            assert text == "depends on n"
        elif operation == "median":  # by rank
            assert text == f"±{width:g} ranks"
        else:
            widths = width if isinstance(width, list) else [width]
            assert [float(part) for part in text.split("; ")] == widths, operation
            assert all(w > 0 for w in widths)


@pytest.mark.parametrize("adjacency", ["add_remove", "substitute"])
def test_the_ledger_shows_each_release_half_width_at_95(
    salaries: pd.DataFrame, adjacency: str
) -> None:
    salaries.dp.set_budget(epsilon=10, adjacency=adjacency, seed=3)
    planned = _releases(salaries, adjacency)
    _check_half_widths(salaries.dp.budget.ledger.half_width_95, planned)
    # the interval the release gives at 95% is that width
    got = salaries.dp.filter(salaries.age > 30).dp.sum(
        "salary", clip=(-5, 2e5), epsilon=0.7, ci=0.95
    )
    assert (got["upper"] - got["lower"]) / 2 == float(salaries.dp.budget.ledger.half_width_95[2])


def test_a_ledger_file_shows_the_same_half_widths(salaries: pd.DataFrame, tmp_path: Path) -> None:
    path = tmp_path / "ledger.sqlite"
    salaries.dp.set_budget(epsilon=10, ledger=path, name="hr", seed=3)
    planned = _releases(salaries, "add_remove")
    _check_half_widths(salaries.dp.budget.ledger.half_width_95, planned)
    history = pandas_dp.open_ledger(path).history("hr")  # read back from the file
    assert history.operation.iloc[0] == "create"
    assert history.half_width_95.iloc[0] == ""
    _check_half_widths(history.half_width_95.iloc[1:], planned)


def test_the_half_width_of_a_privacy_unit_release_uses_its_bounds(
    salaries: pd.DataFrame,
) -> None:
    df = salaries.assign(person=np.arange(len(salaries)) // 2)
    df.dp.set_budget(epsilon=10, privacy_unit="person", seed=3)
    df.dp.groupby("dept", keys=["Eng", "Ops", "Sales"]).count(epsilon=0.5, max_rows=3, max_groups=2)
    df.dp.sum("salary", clip=(0, 2e5), epsilon=0.5, max_rows=4)
    shown = df.dp.budget.ledger.half_width_95
    planned_count = half_width("count", epsilon=0.5, grouped=True, max_rows=3, max_groups=2)
    assert float(shown[0]) == planned_count == 6 * half_width("count", epsilon=0.5, grouped=True)
    assert float(shown[1]) == half_width("sum", epsilon=0.5, clip=(0, 2e5), max_rows=4)


def test_the_public_row_count_has_half_width_0(substituted: pd.DataFrame) -> None:
    substituted.dp.count(epsilon=1)
    assert substituted.dp.budget.ledger.half_width_95.tolist() == ["0"]


def test_the_half_width_is_the_one_stored_never_recomputed_from_the_fields() -> None:
    """Made with the release, from its plan: an entry that did not record one shows none."""
    entry = pandas_dp.LedgerEntry("count", Fraction(1, 2), sensitivity="1", noise_scale="2")
    assert entry.as_record()["half_width_95"] == ""
    recorded = dataclasses.replace(entry, half_width_95="6")
    assert recorded.as_record()["half_width_95"] == "6"
    assert recorded.marked("(seeded: NOT private)").half_width_95 == "6"


def test_the_budget_view_shows_the_half_widths(protected: pd.DataFrame) -> None:
    protected.dp.filter(protected.age > 30).dp.count(epsilon=0.5)
    protected.dp.mean("salary", clip=(0, 2e5), epsilon=0.5)
    page = protected.dp.budget._repr_html_()
    assert "± at 95%" in page
    width = half_width("count", epsilon=0.5)
    assert re.search(rf"<td [^>]*text-align:right'>±{width:g}</td>", page)
    assert re.search(r"<td [^>]*text-align:right'>depends on n</td>", page)


# ------------------------------------------------------------------ discrete Gaussian


def _exact_gauss_tail(t: int, sigma2: float) -> float:
    """``P(|Z| > t)`` from the pmf summed over ``|z| <= 60σ + 5`` (exactly rounded sums)."""
    k = math.ceil(60 * math.sqrt(sigma2)) + 5
    terms = [math.exp(-(z * z) / (2 * sigma2)) for z in range(1, k + 1)]
    norm = 1 + 2 * math.fsum(terms)
    return 2 * math.fsum(terms[max(t, 0) :]) / norm if t >= 0 else 1.0


GAUSS_SIGMA2 = [Fraction(1, 3), Fraction(2), Fraction(7, 3), Fraction(50), Fraction(40_000)]
GAUSS_LEVELS = [0.5, 0.9, 0.95, 0.99, 0.999999]


@pytest.mark.parametrize("sigma2", GAUSS_SIGMA2)
@pytest.mark.parametrize("level", GAUSS_LEVELS)
def test_gaussian_half_width_is_the_exact_quantile(sigma2: Fraction, level: float) -> None:
    miss = accuracy.level_miss(level)
    t = accuracy.gaussian_half_width(sigma2, miss)
    assert _exact_gauss_tail(t, float(sigma2)) <= miss  # coverage at t is at least level
    assert t == 0 or _exact_gauss_tail(t - 1, float(sigma2)) > miss  # and below it at t - 1


@pytest.mark.parametrize("sigma2", GAUSS_SIGMA2)
def test_gaussian_tail_is_a_tight_upper_bound(sigma2: Fraction) -> None:
    sigma = math.sqrt(float(sigma2))
    for t in range(0, math.ceil(8 * sigma) + 2, max(1, round(sigma / 4))):
        exact = _exact_gauss_tail(t, float(sigma2))
        assert exact <= accuracy.gaussian_tail(t, sigma2) <= exact * (1 + 1e-8) + 1e-280


@pytest.mark.parametrize("sigma2", [Fraction(2**58), Fraction(10**12, 3)])
@pytest.mark.parametrize("level", [0.9, 0.95, 0.999])
def test_gaussian_half_width_of_a_wide_noise_is_the_normal_quantile(
    sigma2: Fraction, level: float
) -> None:
    # for large σ, P(|Z| > t) = 2·(1 − Φ((t + 1/2)/σ)) up to O(1/σ²) (Euler–Maclaurin)
    sigma = math.sqrt(float(sigma2))
    continuous = sigma * NormalDist().inv_cdf(1 - accuracy.level_miss(level) / 2) - 0.5
    assert abs(accuracy.gaussian_half_width(sigma2, accuracy.level_miss(level)) - continuous) <= 1.0


def test_gaussian_half_width_of_no_noise_is_zero() -> None:
    assert accuracy.gaussian_half_width(Fraction(0), 0.05) == 0


# -------------------------------------------------------------- Gaussian (rho) intervals


@pytest.mark.parametrize("adjacency", ["add_remove", "substitute"])
@pytest.mark.parametrize("level", [0.5, 0.95])
def test_planned_rho_widths_are_those_of_the_releases(
    salaries: pd.DataFrame, adjacency: str, level: float
) -> None:
    salaries.dp.set_budget(rho=100, adjacency=adjacency, seed=5)
    filtered = salaries.dp.filter(salaries.age > 30)
    for grouped in (False, True):
        kw = {"level": level, "adjacency": adjacency, "grouped": grouped}
        if grouped:
            g = filtered.dp.groupby("dept", keys=["Eng", "Ops", "Sales"])
            count = g.count(rho=0.07, ci=level)
            total = g.sum("salary", clip=(0, 2e5), rho=0.07, ci=level)
        else:
            count = filtered.dp.count(rho=0.07, ci=level).to_frame().T
            total = filtered.dp.sum("salary", clip=(0, 2e5), rho=0.07, ci=level).to_frame().T
        planned_count = half_width("count", rho=0.07, **kw)
        assert ((count.upper - count.lower) / 2 == planned_count).all()
        assert planned_count != half_width("count", epsilon=0.07, **kw)  # not the Laplace one
        planned = half_width("sum", rho=0.07, clip=(0, 2e5), **kw)
        assert ((total.upper - total.lower) / 2 == planned).all()


def test_the_planned_rho_count_width_is_the_discrete_gaussian_quantile() -> None:
    kw = {"grouped": True, "max_rows": 2, "max_groups": 3}
    sigma2 = Fraction(12 * 10, 2)  # Δ₂² = k²·g = 12 at ρ = 1/10
    t = accuracy.gaussian_half_width(sigma2, accuracy.level_miss(0.95))
    assert half_width("count", rho=0.1, **kw) == t  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("kind", "width", "extra"),
    [
        ("count", 10, {}),
        ("count", 3, {"grouped": True, "adjacency": "substitute"}),
        ("sum", 1_000.0, {"clip": (0, 100)}),
        ("mean", 1.0, {"clip": (0, 100), "n": 1000}),
    ],
)
def test_rho_for_inverts_half_width(kind: str, width: float, extra: dict[str, object]) -> None:
    rho = pandas_dp.rho_for(kind, half_width=width, **extra)  # type: ignore[arg-type]
    smaller = float(np.nextafter(rho, 0))
    assert half_width(kind, rho=rho, **extra) <= width  # type: ignore[arg-type]
    assert half_width(kind, rho=smaller, **extra) > width  # type: ignore[arg-type]


@pytest.mark.parametrize("kind", ["count", "mean"])
def test_rho_intervals_cover_at_their_level(kind: str) -> None:
    """20,000 keys, each an independent release: the 90% intervals miss about 10% of them."""
    keys = pd.Index(range(20_000), name="k")
    rng = np.random.Generator(np.random.PCG64(4))
    df = pd.DataFrame({"k": np.repeat(keys, 5), "x": rng.uniform(0, 10, size=5 * len(keys))})
    df.dp.set_budget(rho=10, seed=9)
    g = df.dp.groupby("k", keys=keys)
    if kind == "count":
        got = g.count(rho=0.005, ci=0.9)  # σ = 10: the quantile is nearly continuous
        truth = np.full(len(keys), 5)
    else:
        got = g.mean("x", clip=(0, 10), rho=0.5, ci=0.9)
        truth = df.groupby("k")["x"].mean().to_numpy()
    misses = int(((got.lower > truth) | (got.upper < truth)).sum())
    # at most 10% miss (one-sided binomial bound, p ~ 1e-9); a Laplace-width or a
    # too-narrow interval misses far more, a far too wide one none at all
    assert misses <= scipy.stats.binom.ppf(1 - 1e-9, len(keys), 0.1)
    if kind == "count":  # the count's interval is exact, not conservative
        assert misses >= scipy.stats.binom.ppf(1e-9, len(keys), 0.1 * 0.7)
