"""Noise intervals: exact discrete Laplace quantiles, and intervals from released numbers.

Data-free arithmetic only: every function here takes public parameters (noise
scale, grid step, clip bounds, a confidence level) and numbers that were
already released, never the data.  An interval is therefore post-processing
and costs no privacy beyond its release.

For a discrete Laplace noise ``Z`` of scale ``s`` on the integers
(``P(Z = z) ∝ p**|z|`` with ``p = exp(−1/s)``)::

    P(|Z| > t) = 2·p**(t + 1) / (1 + p)        (t = 0, 1, 2, ...)

:func:`noise_half_width` is the smallest integer ``t`` with
``P(|Z| > t) <= 1 − level``, so ``released ± t`` holds the noiseless value
with probability at least ``level``.  What that noiseless value is depends on
the release: the count itself; the clipped sum of the rows as rounded to the
grid; the clipped mean (the mean's interval is widened by the grid step, so
it covers the exact clipped mean).  Never the bias of clipping.
"""

from __future__ import annotations

import math
import numbers
from decimal import Decimal
from fractions import Fraction

import numpy as np

from .noise import F64, I64
from .validation import given

__all__ = [
    "check_ci",
    "count_interval",
    "level_miss",
    "mean_interval",
    "mean_miss",
    "mean_pad",
    "noise_half_width",
    "sum_interval",
    "tail",
]


def check_ci(ci: object, name: str = "ci") -> float | None:
    """``ci`` as a confidence level strictly between 0 and 1 (None: no interval).

    Raises TypeError for a bool or a non-number and ValueError for NaN, 0, 1
    or a level outside (0, 1), before anything is spent.
    """
    if ci is None:
        return None
    hint = f"`{name}` must be a confidence level strictly between 0 and 1, e.g. {name}=0.95"
    if isinstance(ci, bool | np.bool_) or not isinstance(ci, numbers.Real | Decimal):
        raise TypeError(f"{hint}; got {given(ci)}.")
    level = float(ci)
    if not 0.0 < level < 1.0:  # NaN fails too
        raise ValueError(f"{hint}; got {given(ci)}.")
    return level


def level_miss(level: float) -> float:
    """``1 − level`` read from the shortest decimal of ``level`` (0.95 misses 1/20)."""
    return float(1 - Fraction(repr(level)))


def tail(t: int, scale: Fraction | float) -> float:
    """``P(|Z| > t)`` for a discrete Laplace ``Z`` of ``scale``: ``2·p**(t+1)/(1 + p)``."""
    s = float(scale)
    if s == 0:
        return 0.0
    return 2.0 * math.exp(-(t + 1) / s) / (1.0 + math.exp(-1.0 / s))


def _covers(t: int, s: float, log_miss: float) -> bool:
    # log P(|Z| > t) <= log(miss), in logs so that huge t and tiny p cannot underflow
    return math.log(2.0) - (t + 1) / s - math.log1p(math.exp(-1.0 / s)) <= log_miss


def noise_half_width(scale: Fraction | float, miss: float) -> int:
    """The smallest integer ``t >= 0`` with ``P(|Z| > t) <= miss``, ``Z ~ dLap(scale)``.

    Parameters
    ----------
    scale : Fraction or float
        The discrete Laplace scale in integer units (0: no noise, ``t = 0``).
    miss : float
        The allowed probability of ``|Z| > t``, in (0, 1).

    Returns
    -------
    int

    Examples
    --------
    A count at ε = 0.5 (scale 2) at level 0.9:

    >>> noise_half_width(2, 0.1)
    5
    >>> tail(5, 2) <= 0.1 < tail(4, 2)
    True
    """
    s = float(scale)
    if s == 0:
        return 0
    log_miss = math.log(miss)
    guess = s * (math.log(2.0) - log_miss - math.log1p(math.exp(-1.0 / s))) - 1.0
    t = max(0, math.ceil(guess))
    while not _covers(t, s, log_miss):  # float rounding near an integer boundary
        t += 1
    while t > 0 and _covers(t - 1, s, log_miss):
        t -= 1
    return t


def count_interval(counts: I64, scale: Fraction, level: float) -> tuple[I64, I64]:
    """``counts ± t``: each holds the true count with probability at least ``level``."""
    t = noise_half_width(scale, level_miss(level))
    return counts - t, counts + t


def sum_interval(sums: F64, scale: int, exponent: int, level: float) -> tuple[F64, F64]:
    """``sums ± t·2**exponent`` for noisy sums on the grid of step ``2**exponent``.

    Holds the clipped sum of the grid-rounded rows with probability at least
    ``level``.  Each row is rounded by at most half a step, so the exact
    clipped sum of ``n`` rows differs from it by at most ``n·step/2``: a
    fraction ``n/(2t)`` of the half-width ``t·step``, where ``t`` is about
    ``3·2**30`` grid steps at level 0.95 (negligible below a billion rows).
    Scale 0 means a grid so coarse (ε below about 2**-30) that every row
    rounds to 0: nothing is known of the sum and the interval is infinite.
    """
    if scale == 0:
        return np.full(sums.size, -math.inf), np.full(sums.size, math.inf)
    h = math.ldexp(float(noise_half_width(scale, level_miss(level))), exponent)
    return sums - h, sums + h


def mean_pad(lower: float, upper: float, exponent: int) -> float:
    """How far the mean's interval is widened: one grid step (rounding) and float slack.

    A row ``x`` counts as ``(U − L)·q/Q`` with ``q = rint((x − L)/step)`` and
    ``Q = rint((U − L)/step)``: within one step of ``x − L``, so the mean of the
    rounded rows is within one step of the exact clipped mean.
    """
    return math.ldexp(1.0, exponent) + 4.0 * math.ulp(max(abs(lower), abs(upper)))


def mean_miss(level: float) -> float:
    """Each of the mean's two independent noises misses with ``1 − sqrt(level)``.

    Both stay inside their bounds with probability ``sqrt(level)**2 = level``.
    """
    return -math.expm1(0.5 * math.log(level))


def mean_interval(
    a: I64,
    b: I64,
    estimate: F64,
    scale: int,
    lower: float,
    upper: float,
    exponent: int,
    level: float,
) -> tuple[F64, F64]:
    """The clipped mean's interval from the noisy complementary sums ``a`` and ``b``.

    With probability ``level`` both noises are at most ``t`` (each misses with
    ``1 − sqrt(level)``), so the noiseless sums ``A ∈ [a − t, a + t]`` and
    ``B ∈ [b − t, b + t]``, both non-negative.  The share ``A/(A + B)`` grows
    with ``A`` and shrinks with ``B``: it lies between ``A_lo/(A_lo + B_hi)``
    and ``A_hi/(A_hi + B_lo)``.  Mapped through ``L + (U − L)·share``,
    widened by :func:`mean_pad` and clipped, the interval always lies in
    ``[L, U]`` and holds the exact clipped mean of every non-empty key with
    probability at least ``level``.  Its half-width is
    ``(U − L)·t/(a + b) + pad`` when ``a, b >= t``, less near the bounds.
    """
    t = noise_half_width(scale, mean_miss(level))
    a_lo = np.maximum(a - t, 0).astype(np.float64)
    a_hi = np.maximum(a + t, 0).astype(np.float64)
    b_lo = np.maximum(b - t, 0).astype(np.float64)
    b_hi = np.maximum(b + t, 0).astype(np.float64)
    below = a_lo + b_hi
    above = a_hi + b_lo
    share_lo = np.divide(a_lo, below, out=np.zeros(a.size), where=below > 0)
    share_hi = np.divide(a_hi, above, out=np.ones(a.size), where=above > 0)
    pad = mean_pad(lower, upper, exponent)
    width = upper - lower
    lo = np.clip(lower + width * share_lo - pad, lower, upper)
    hi = np.clip(lower + width * share_hi + pad, lower, upper)
    return np.minimum(lo, estimate), np.maximum(hi, estimate)
