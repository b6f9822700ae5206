"""Releases on the data-independent grid: where they land, how exact they are, their noise.

- every released sum lies on the grid ``2**plan.exponent`` (property test);
- at ε = 1e9 a release equals the exact clipped statistic to within the grid;
- the noise of one grouped release over thousands of identical groups follows
  the exact discrete Laplace of the expected scale, and not 0.7x or 1.3x of it.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pandas_dp.core.validation import check_clip, check_epsilon
from pandas_dp.kinds import sums
from pandas_dp.kinds.base import Neighbours

HUGE_EPSILON = 1e9


def on_grid(y: np.ndarray, exponent: int) -> bool:
    units = np.ldexp(np.asarray(y, dtype=np.float64), -exponent)
    return bool(np.all(np.isfinite(units)) and np.all(units == np.rint(units)))


# ------------------------------------------------------------------- grid property


@st.composite
def sum_queries(draw: st.DrawFn) -> tuple[tuple[float, float], float, str, np.ndarray, np.ndarray]:
    lower = draw(st.floats(-1e6, 1e6, allow_subnormal=False))
    width = draw(st.floats(1e-3, 1e6))
    clip = (lower, lower + width)
    epsilon = draw(st.floats(1e-3, 1e3))
    adjacency = draw(st.sampled_from(["add_remove", "substitute"]))
    special = st.sampled_from([math.nan, math.inf, -math.inf])
    values = draw(st.lists(st.floats(-2e6, 2e6) | special, max_size=30))
    keys = draw(st.lists(st.integers(0, 3), min_size=len(values), max_size=len(values)))
    return clip, epsilon, adjacency, np.array(values, dtype=float), np.array(keys)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sum_queries())
def test_released_sums_lie_on_the_grid(
    query: tuple[tuple[float, float], float, str, np.ndarray, np.ndarray],
) -> None:
    clip, epsilon, adjacency, values, keys = query
    df = pd.DataFrame({"k": keys, "x": values})
    df.dp.set_budget(epsilon=1e6, adjacency=adjacency, seed=len(values))
    eps = check_epsilon(epsilon)
    for grouped in (False, True):
        plan = sums.plan_sum(check_clip(clip), eps, Neighbours(adjacency, grouped=grouped))
        if grouped:
            released = df.dp.groupby("k", keys=[0, 1, 2]).sum("x", clip=clip, epsilon=epsilon)
            assert on_grid(released.to_numpy(), plan.exponent)
        else:
            assert on_grid(np.array([df.dp.sum("x", clip=clip, epsilon=epsilon)]), plan.exponent)
        assert plan.realised_epsilon <= eps


# ------------------------------------------------------------------- huge epsilon

CLIPS = [(-1e6, 1e6), (0.0, 1e-3)]


def grid_data(clip: tuple[float, float], exponent: int, n: int, seed: int) -> np.ndarray:
    """Values on the grid, a tenth of them beyond each clip bound."""
    rng = np.random.default_rng(seed)
    lower, upper = clip
    width = upper - lower
    x = rng.uniform(lower - 0.1 * width, upper + 0.1 * width, size=n)
    return np.ldexp(np.rint(np.ldexp(x, -exponent)), exponent)


def tolerance(clipped: np.ndarray, exponent: int, noise_steps: float) -> float:
    """Rounding of off-grid clipped rows (half a step each) plus the noise, in value units."""
    units = np.ldexp(clipped, -exponent)
    off_grid = int(np.count_nonzero(units != np.rint(units)))
    return math.ldexp(off_grid / 2 + noise_steps, exponent)


@pytest.mark.parametrize("clip", CLIPS, ids=["wide", "tiny"])
@pytest.mark.parametrize("grouped", [False, True], ids=["ungrouped", "grouped"])
def test_huge_epsilon_sum_is_exact_to_the_grid(clip: tuple[float, float], grouped: bool) -> None:
    plan = sums.plan_sum(clip, Fraction(HUGE_EPSILON), Neighbours("add_remove", grouped=grouped))
    assert plan.scale <= 3
    x = grid_data(clip, plan.exponent, 1000, seed=1)
    keys = np.arange(x.size) % 4
    df = pd.DataFrame({"k": keys, "x": x})
    df.dp.set_budget(epsilon=HUGE_EPSILON, seed=3)
    clipped = np.clip(x, *clip)
    if grouped:
        released = df.dp.groupby("k", keys=[0, 1, 2, 3]).sum("x", clip=clip, epsilon=HUGE_EPSILON)
        got = released.to_numpy()
        exact = np.array([math.fsum(clipped[keys == k]) for k in range(4)])
    else:
        got = np.array([df.dp.sum("x", clip=clip, epsilon=HUGE_EPSILON)])
        exact = np.array([math.fsum(clipped)])
    tol = tolerance(clipped, plan.exponent, noise_steps=40 * plan.scale)
    assert np.all(np.abs(got - exact) <= tol)


@pytest.mark.parametrize("clip", CLIPS, ids=["wide", "tiny"])
@pytest.mark.parametrize("grouped", [False, True], ids=["ungrouped", "grouped"])
def test_huge_epsilon_mean_is_exact_to_the_grid(clip: tuple[float, float], grouped: bool) -> None:
    plan = sums.plan_mean(clip, Fraction(HUGE_EPSILON), Neighbours("add_remove", grouped=grouped))
    step = plan.grid.step
    x = grid_data(clip, plan.grid.exponent, 1000, seed=2)
    keys = np.arange(x.size) % 4
    df = pd.DataFrame({"k": keys, "x": x})
    df.dp.set_budget(epsilon=HUGE_EPSILON, seed=4)
    clipped = np.clip(x, *clip)
    if grouped:
        released = df.dp.groupby("k", keys=[0, 1, 2, 3]).mean("x", clip=clip, epsilon=HUGE_EPSILON)
        got = released.to_numpy()
        exact = np.array([np.mean(clipped[keys == k]) for k in range(4)])
    else:
        got = np.array([df.dp.mean("x", clip=clip, epsilon=HUGE_EPSILON)])
        exact = np.array([np.mean(clipped)])
    # Rows off the grid (clipped to an off-grid bound) move the mean by half a
    # step each over n; the noise, a few steps over about n·Q, by far less.
    assert np.all(np.abs(got - exact) <= 2 * step)


@pytest.mark.parametrize("grouped", [False, True], ids=["ungrouped", "grouped"])
def test_huge_epsilon_count_is_exact(grouped: bool) -> None:
    x = np.where(np.arange(1000) % 7 == 0, np.nan, 1.0)
    keys = np.arange(x.size) % 4
    df = pd.DataFrame({"k": keys, "x": x})
    df.dp.set_budget(epsilon=HUGE_EPSILON, seed=5)
    if grouped:
        got = df.dp.groupby("k", keys=[0, 1, 2, 3]).count("x", epsilon=HUGE_EPSILON)
        assert got.tolist() == [int(np.count_nonzero(~np.isnan(x[keys == k]))) for k in range(4)]
    else:
        assert df.dp.count("x", epsilon=HUGE_EPSILON) == int(np.count_nonzero(~np.isnan(x)))


def test_huge_epsilon_sum_of_many_rows_is_exact_in_integers() -> None:
    # Several chunks of 2**16 rows, each row ~2**31 grid steps: the grid sum
    # (about 2**49 steps) must come out exactly, in integers.
    clip = (-1e6, 1e6)
    plan = sums.plan_sum(clip, Fraction(HUGE_EPSILON), Neighbours("add_remove", grouped=False))
    rng = np.random.default_rng(6)
    steps = rng.integers(-(2**31), 2**31, size=5 * 2**16 + 7)
    steps[:1000] = 2**31 - 1
    x = np.ldexp(steps.astype(np.float64), plan.exponent)
    df = pd.DataFrame({"x": x})
    df.dp.set_budget(epsilon=HUGE_EPSILON, seed=7)
    clipped_steps = np.ldexp(np.clip(x, *clip), -plan.exponent).astype(np.int64)
    exact = int(clipped_steps.sum())
    released = df.dp.sum("x", clip=clip, epsilon=HUGE_EPSILON)
    assert abs(int(np.ldexp(released, -plan.exponent)) - exact) <= 40 * plan.scale


# ------------------------------------------------------------ grouped noise scale

GROUPS = 40_000


def _expected_scale(stat: str, adjacency: str, clip: tuple[float, float], eps: float) -> float:
    """The noise scale in grid units, derived here from the sensitivity table of DESIGN.md."""
    if stat == "count":
        return (1 if adjacency == "add_remove" else 2) / eps
    reach = max(abs(clip[0]), abs(clip[1]))
    sensitivity = reach if adjacency == "add_remove" else 2 * reach
    step = math.ldexp(1.0, math.frexp(sensitivity / eps)[1] - 30)
    return math.ceil(sensitivity / step / eps)


@pytest.mark.parametrize("adjacency", ["add_remove", "substitute"])
@pytest.mark.parametrize("stat", ["count", "sum"])
def test_grouped_noise_follows_the_exact_scale(
    stat: str, adjacency: str, assert_dlap_scale: Callable[[np.ndarray, float], None]
) -> None:
    clip, eps = (-4.0, 10.0), 0.5
    rows = np.array([3.0, -5.0, 10.0, 12.5])  # on the grid; two rows beyond the clip
    keys = np.repeat(np.arange(GROUPS), rows.size)
    df = pd.DataFrame({"k": keys, "x": np.tile(rows, GROUPS)})
    df.dp.set_budget(epsilon=eps, adjacency=adjacency, seed=8)
    g = df.dp.groupby("k", keys=pd.RangeIndex(GROUPS))
    scale = _expected_scale(stat, adjacency, clip, eps)
    if stat == "count":
        noise = g.count(epsilon=eps).to_numpy() - rows.size
    else:
        plan = sums.plan_sum(clip, Fraction(eps), Neighbours(adjacency, grouped=True))
        released = g.sum("x", clip=clip, epsilon=eps).to_numpy()
        assert on_grid(released, plan.exponent)
        true_sum = float(np.clip(rows, *clip).sum())
        noise = np.ldexp(released - true_sum, -plan.exponent).astype(np.int64)
    assert_dlap_scale(noise, scale)
