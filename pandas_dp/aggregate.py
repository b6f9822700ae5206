"""count / sum / mean over public keys: the privacy maps and the kernels.

An ungrouped release is the one-key case of the same code: ``codes`` is None
and ``n_keys`` is 1.  Each release is split in two halves that never mix:

- a *plan* (:func:`plan_count`, :func:`plan_sum`, :func:`plan_mean`) computed
  from public parameters only (clip, epsilon, adjacency, scope): sensitivity,
  grid step ``2**exponent`` and integer noise scale.  Exactly testable.
- the *statistics* (:func:`count_rows`, :func:`grid_sums`): clip, round each
  row to the grid, sum exactly in integers; and the *noise*
  (:func:`release_counts`, :func:`noisy_sums`, :func:`noisy_means`): exact
  discrete Laplace in grid units, drawn only after the spend is committed.

Scopes (what the row set of the frame is, as far as the budget knows):

- ``n_public``: under ``substitute`` on the frame the budget was set on (or a
  select/assign of it), its row count is public.  Only the row count: whether a
  column has missing values is data, and a substituted row may turn a missing
  value into a present one, so column statistics never treat n as public.
- ``grouped``: a vector over public keys; under ``substitute`` a row may move
  between keys, which doubles the sensitivity.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from fractions import Fraction
from typing import TypeVar

import numpy as np
from numpy.typing import NDArray

from .noise import RandomSource, discrete_laplace, grid_exponent, integer_scale

__all__ = [
    "CHUNK",
    "CountPlan",
    "GridPlan",
    "MeanPlan",
    "count_rows",
    "grid_sums",
    "noisy_means",
    "noisy_sums",
    "plan_count",
    "plan_mean",
    "plan_sum",
    "release_counts",
]

F64 = NDArray[np.float64]
_Num = TypeVar("_Num", int, float)
I64 = NDArray[np.int64]

#: Rows per chunk: cache-sized, and small enough that a float64 sum of rounded
#: rows (each below 2**31 in magnitude) is exact (2**16 * 2**31 < 2**53).
CHUNK = 1 << 16
#: int64 sums of rows below 2**31 are exact up to this many rows.
MAX_ROWS = 1 << 32


# ----------------------------------------------------------------------------- plans


@dataclass(frozen=True)
class CountPlan:
    """Discrete Laplace on integer counts: ``scale = sensitivity / epsilon`` exactly."""

    sensitivity: int
    epsilon: Fraction

    @property
    def scale(self) -> Fraction:
        return Fraction(self.sensitivity) / self.epsilon


@dataclass(frozen=True)
class GridPlan:
    """A clipped sum on the grid ``step = 2**exponent``.

    Each row becomes ``q = rint((clip(x, lower, upper) - center) / step)`` in
    ``[q_lo, q_hi]``; ``delta`` is the L1 sensitivity in grid units and
    ``scale = ceil(delta / epsilon)`` the integer noise scale, so the realised
    epsilon ``delta / scale`` never exceeds ``epsilon``.
    """

    lower: float
    upper: float
    center: float
    exponent: int
    q_lo: int
    q_hi: int
    delta: int
    scale: int
    epsilon: Fraction

    @property
    def step(self) -> float:
        return math.ldexp(1.0, self.exponent)

    @property
    def realised_epsilon(self) -> Fraction:
        return Fraction(self.delta, self.scale) if self.scale else Fraction(0)


@dataclass(frozen=True)
class MeanPlan:
    """The complementary-sums mean.

    Release ``A = Σq`` and ``B = N·Q - A`` (``Q = grid.q_hi``), each with
    independent noise of scale ``grid.scale``; the pair moves by ``(q, Q - q)``
    when a row is added, an L1 norm of exactly ``Q`` (``2Q`` under substitute).
    """

    grid: GridPlan


#: Largest grid exponent: an int64 number of grid steps stays a finite float.
MAX_EXPONENT = 1023 - 63


@functools.lru_cache(maxsize=512)  # plans are pure functions of public parameters
def plan_count(epsilon: Fraction, adjacency: str, *, grouped: bool, n_public: bool) -> CountPlan:
    if adjacency == "add_remove":
        sensitivity = 1
    elif grouped:
        sensitivity = 2
    else:
        sensitivity = 0 if n_public else 1
    if sensitivity:
        integer_scale(sensitivity, epsilon)  # refuses, before the spend, a scale too large to draw
    return CountPlan(sensitivity, epsilon)


def _grid(
    lower: float, upper: float, center: float, real_delta: Fraction | float, epsilon: Fraction
) -> tuple[int, int, int]:
    magnitude = max(
        abs(Fraction(lower) - Fraction(center)), abs(Fraction(upper) - Fraction(center))
    )
    exponent = grid_exponent(real_delta, epsilon, magnitude)
    if exponent > MAX_EXPONENT:
        raise ValueError(
            "`clip` and `epsilon` give a noise scale too large to release as a float "
            f"(grid step 2**{exponent}). Use a larger epsilon or tighter clip bounds."
        )
    q_lo, q_hi = (
        int(q)
        for q in round_rows(
            np.array([lower, upper], dtype=np.float64), lower, upper, center, exponent
        )
    )
    return exponent, q_lo, q_hi


def _sum_sensitivity(lower: _Num, upper: _Num, *, adjacency: str, grouped: bool) -> _Num:
    """L1 sensitivity of a sum of rows in ``[lower, upper]`` (real units or grid units)."""
    reach = max(abs(lower), abs(upper))
    if adjacency == "add_remove":
        return reach
    if grouped:
        return 2 * reach  # a substituted row may leave one key and join another
    # A row's value may change, or (missing values, filtered frames) a value may
    # appear or disappear.
    return max(upper - lower, reach)


@functools.lru_cache(maxsize=512)  # plans are pure functions of public parameters
def plan_sum(
    clip: tuple[float, float],
    epsilon: Fraction,
    adjacency: str,
    *,
    grouped: bool,
) -> GridPlan:
    lower, upper = float(clip[0]), float(clip[1])
    real_delta = _sum_sensitivity(lower, upper, adjacency=adjacency, grouped=grouped)
    exponent, q_lo, q_hi = _grid(lower, upper, 0.0, real_delta, epsilon)
    delta = _sum_sensitivity(q_lo, q_hi, adjacency=adjacency, grouped=grouped)
    return GridPlan(
        lower, upper, 0.0, exponent, q_lo, q_hi, delta, integer_scale(delta, epsilon), epsilon
    )


@functools.lru_cache(maxsize=512)  # plans are pure functions of public parameters
def plan_mean(
    clip: tuple[float, float],
    epsilon: Fraction,
    adjacency: str,
    *,
    grouped: bool,
) -> MeanPlan:
    lower, upper = float(clip[0]), float(clip[1])
    factor = 2 if adjacency == "substitute" else 1
    width = Fraction(upper) - Fraction(lower)
    exponent, q_lo, q_hi = _grid(lower, upper, lower, factor * width, epsilon)
    delta = factor * q_hi
    grid = GridPlan(
        lower, upper, lower, exponent, q_lo, q_hi, delta, integer_scale(delta, epsilon), epsilon
    )
    return MeanPlan(grid)


# --------------------------------------------------------------------------- kernels


def round_rows(
    x: F64, lower: float, upper: float, center: float, exponent: int, out: F64 | None = None
) -> F64:
    """``rint((clip(x) - center) / 2**exponent)`` as floats (NaN stays NaN).

    Every step is monotone in x, so rows land in ``[q(lower), q(upper)]``.
    """
    out = np.clip(x, lower, upper, out=out)
    if center:
        np.subtract(out, center, out=out)
    if -1022 <= exponent <= 1023:
        np.multiply(out, math.ldexp(1.0, -exponent), out=out)
    else:
        np.ldexp(out, -exponent, out=out)
    return np.rint(out, out=out)


def count_rows(codes: I64 | None, n_keys: int, valid: NDArray[np.bool_] | None, n: int) -> I64:
    """Exact row counts per key (rows with code -1 or ``valid`` False dropped)."""
    if codes is None:
        total = n if valid is None else int(np.count_nonzero(valid))
        return np.array([total], dtype=np.int64)
    shifted = codes + 1
    if valid is not None:
        shifted[~valid] = 0
    return np.bincount(shifted, minlength=n_keys + 1)[1:].astype(np.int64)


def grid_sums(values: F64, codes: I64 | None, n_keys: int, plan: GridPlan) -> tuple[I64, I64]:
    """Exact integer sums of the rounded rows per key, and the non-missing counts.

    One pass in cache-sized chunks; each chunk's float sum is exact because its
    rows are integers below 2**31 and the chunk has at most 2**16 of them.
    """
    sums = np.zeros(n_keys, dtype=np.int64)
    counts = np.zeros(n_keys, dtype=np.int64)
    buf = np.empty(min(CHUNK, len(values)), dtype=np.float64)
    total = 0
    missing = 0
    for start in range(0, len(values), CHUNK):
        x = values[start : start + CHUNK]
        q = round_rows(x, plan.lower, plan.upper, plan.center, plan.exponent, out=buf[: len(x)])
        shifted = None if codes is None else codes[start : start + CHUNK] + 1
        chunk_sum = q.sum()
        if chunk_sum != chunk_sum:  # NaN present: skip missing values, like pandas
            nan = np.isnan(q)
            q[nan] = 0.0
            if shifted is None:
                missing += int(np.count_nonzero(nan))
                chunk_sum = q.sum()
            else:
                shifted[nan] = 0  # bin 0 is dropped
        if shifted is None:
            total += int(chunk_sum)
            continue
        sums += np.bincount(shifted, weights=q, minlength=n_keys + 1)[1:].astype(np.int64)
        counts += np.bincount(shifted, minlength=n_keys + 1)[1:]
    if codes is None:
        sums[0] = total
        counts[0] = len(values) - missing
    return sums, counts


def release_counts(src: RandomSource, counts: I64, plan: CountPlan) -> I64:
    """Noisy integer counts: ``counts + dLap(sensitivity / epsilon)``."""
    return counts + discrete_laplace(src, plan.scale, counts.size)


def noisy_sums(src: RandomSource, sums: I64, plan: GridPlan) -> F64:
    """Noisy clipped sums per key from their exact grid sums: ``step · (Σq + dLap(scale))``."""
    noisy = sums + discrete_laplace(src, Fraction(plan.scale), sums.size)
    return np.ldexp(noisy.astype(np.float64), plan.exponent)


def noisy_means(src: RandomSource, sums: I64, counts: I64, plan: MeanPlan) -> F64:
    """Noisy clipped means per key from exact grid sums and counts, always inside the clip."""
    grid = plan.grid
    n_keys = sums.size
    noise = discrete_laplace(src, Fraction(grid.scale), 2 * n_keys)
    lower, upper = grid.lower, grid.upper
    b = counts * grid.q_hi - sums
    a_pos = np.maximum(sums + noise[:n_keys], 0).astype(np.float64)
    b_pos = np.maximum(b + noise[n_keys:], 0).astype(np.float64)
    both = a_pos + b_pos
    share = np.divide(a_pos, both, out=np.full(n_keys, 0.5), where=both > 0)
    mean = lower + (upper - lower) * share
    clipped: F64 = np.clip(mean, lower, upper)
    return clipped
