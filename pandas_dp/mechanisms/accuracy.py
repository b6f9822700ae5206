"""Noise intervals: exact discrete Laplace and Gaussian quantiles; intervals from releases.

Data-free arithmetic only: every function here takes public parameters (noise
scale, grid step, clip bounds, a confidence level) and numbers that were
already released, never the data.  An interval is therefore post-processing
and costs no privacy beyond its release.

For a discrete Laplace noise ``Z`` of scale ``s`` on the integers
(``P(Z = z) ∝ p**|z|`` with ``p = exp(−1/s)``)::

    P(|Z| > t) = 2·p**(t + 1) / (1 + p)        (t = 0, 1, 2, ...)

:func:`noise_half_width` is the smallest integer ``t`` with
``P(|Z| > t) <= 1 − level``, so ``released ± t`` holds the noiseless value
with probability at least ``level``; :func:`gaussian_half_width` is the same for
the discrete Gaussian noise of zCDP releases (from an upper bound on its tail,
so never too small); :func:`units_half_width` takes either noise.
What that noiseless value is depends on
the release: the count itself; the clipped sum of the rows as rounded to the
grid; the clipped mean (the mean's interval is widened by the grid step, so
it covers the exact clipped mean).  Never the bias of clipping.
"""

from __future__ import annotations

import functools
import math
import numbers
from decimal import Decimal
from fractions import Fraction
from statistics import NormalDist

import numpy as np

from ..core.noise import F64, I64, Gauss, Noise
from ..core.validation import given

__all__ = [
    "check_ci",
    "count_interval",
    "gaussian_half_width",
    "gaussian_tail",
    "level_miss",
    "mean_interval",
    "mean_miss",
    "mean_pad",
    "noise_half_width",
    "sum_interval",
    "tail",
    "units_half_width",
    "var_miss",
    "variance_interval",
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


@functools.lru_cache(maxsize=256)
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


@functools.lru_cache(maxsize=4096)
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


def units_half_width(noise: Noise, miss: float) -> int:
    """The half-width ``t`` (integer or grid units) of ``noise`` at ``miss``: Laplace or Gaussian.

    :func:`noise_half_width` of a discrete Laplace scale, or
    :func:`gaussian_half_width` of a :class:`~pandas_dp.core.noise.Gauss`.
    """
    if isinstance(noise, Gauss):
        return gaussian_half_width(noise.sigma2, miss)
    return noise_half_width(noise, miss)


def count_interval(counts: I64, scale: Noise, level: float) -> tuple[I64, I64]:
    """``counts ± t``: each holds the true count with probability at least ``level``.

    ``scale``: the discrete Laplace scale, or the :class:`~pandas_dp.core.noise.Gauss` noise.
    """
    t = units_half_width(scale, level_miss(level))
    return counts - t, counts + t


def sum_interval(sums: F64, scale: int | Gauss, exponent: int, level: float) -> tuple[F64, F64]:
    """``sums ± t·2**exponent`` for noisy sums on the grid of step ``2**exponent``.

    Holds the clipped sum of the grid-rounded rows with probability at least
    ``level``.  Each row is rounded by at most half a step, so the exact
    clipped sum of ``n`` rows differs from it by at most ``n·step/2``: a
    fraction ``n/(2t)`` of the half-width ``t·step``, where ``t`` is about
    ``3·2**30`` grid steps at level 0.95 (negligible below a billion rows).
    Scale 0 means a grid so coarse (ε below about 2**-30) that every row
    rounds to 0: nothing is known of the sum and the interval is infinite.
    """
    if not scale:
        return np.full(sums.size, -math.inf), np.full(sums.size, math.inf)
    h = math.ldexp(float(units_half_width(scale, level_miss(level))), exponent)
    return sums - h, sums + h


def mean_pad(lower: float, upper: float, exponent: int) -> float:
    """How far the mean's interval is widened: one grid step (rounding) and float slack.

    A row ``x`` counts as ``(U − L)·q/Q`` with ``q = rint((x − L)/step)`` and
    ``Q = rint((U − L)/step)``: within one step of ``x − L``, so the mean of the
    rounded rows is within one step of the exact clipped mean.
    """
    return math.ldexp(1.0, exponent) + 4.0 * math.ulp(max(abs(lower), abs(upper)))


@functools.lru_cache(maxsize=256)
def mean_miss(level: float) -> float:
    """Each of the mean's two independent noises misses with ``1 − sqrt(level)``.

    Both stay inside their bounds with probability ``sqrt(level)**2 = level``.
    """
    return -math.expm1(0.5 * math.log(level))


def mean_interval(
    a: I64,
    b: I64,
    estimate: F64,
    scale: int | Gauss,
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
    t = units_half_width(scale, mean_miss(level))
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


def var_miss(level: float) -> float:
    """Each of the variance's three independent noises misses with ``1 − level**(1/3)``.

    All three stay inside their bounds with probability ``(level**(1/3))**3 = level``.
    """
    return -math.expm1(math.log(level) / 3.0)


def variance_interval(
    a: I64,
    b: I64,
    c: I64,
    *,
    top: int,
    offset: int,
    scale: Noise,
    scale3: Noise,
    lower: float,
    upper: float,
    exponent: int,
    level: float,
) -> tuple[F64, F64]:
    """Bounds on the clipped sample standard deviation (``ddof=1``) from the noisy triple.

    ``a, b, c`` are the released ``A′, B′, C′`` of
    :func:`pandas_dp.kinds.variance.noisy_triples` (grid step ``g = 2**exponent``,
    ``Q = top``, ``o = offset``; ``A, B`` with noise of scale ``scale``, ``C``
    of ``scale3``).  Returns ``(lo, hi)``, with ``0 <= lo <= hi <= (U −
    L)/sqrt(2)``; the variance's interval is ``[lo², hi²]``.

    Validity.  Let ``t`` and ``t₃`` be the exact half-widths of the two
    noises (discrete Laplace scales, or :class:`~pandas_dp.core.noise.Gauss` under
    ρ) at miss ``1 − level**(1/3)`` (:func:`var_miss`).  The
    three noises are independent, so with probability at least ``level``
    the noiseless ``A = Σq``, ``B = NQ − Σq`` and ``C = Σr − N·o`` lie in the
    box ``|A − a| <= t``, ``|B − b| <= t``, ``|C − c| <= t₃`` (and ``A, B >=
    0``).  On that event, for a key of ``N >= 2`` rows:

    1. ``N = (A + B)/Q`` lies in ``[N₋, N₊] = [(A₋ + B₋)/Q, (A₊ + B₊)/Q]``.
    2. With ``e = Σ(r(q) − q(Q − q)/Q)``, where each term is a rounding error
       in ``(−1/2, 1/2]`` so ``|e| <= N/2``, the identity
       ``Σ(q − q̄)² = Q·M`` holds for ``M = AB/(A + B) − C − N·o + e``
       (expand ``AB/(A + B) = Σq − (Σq)²/(NQ)`` and ``Σr = C + N·o``).
       ``AB/(A + B)`` increases in ``A`` and in ``B`` (its partial
       derivatives are ``B²/(A + B)²`` and ``A²/(A + B)²``) and ``C`` enters
       with a minus sign, so ``M`` lies in ``[M₋, M₊]`` with
       ``M₋ = A₋B₋/(A₋ + B₋) − C₊ − N₊·o − N₊/2`` and
       ``M₊ = A₊B₊/(A₊ + B₊) − C₋ − N₋·o + N₊/2``; also ``M >= 0``.
    3. The variance of the rows on the grid, ``z = L + g·q``, is
       ``g²·Q·M/(N − 1)``: at least ``g²Q·max(M₋, 0)/(N₊ − 1)`` and at most
       ``g²Q·M₊/(max(N₋, 2) − 1)``, and at most the largest sample variance
       of ``N`` values ``Qg`` apart, ``(Qg)²/4 · N/(N − 1)``, which falls
       with ``N``: at most its value at ``max(N₋, 2)``.
    4. Each clipped row ``y`` is within ``g/2`` of its ``z``.  The sample
       standard deviation is a norm of the centred rows over ``sqrt(N − 1)``,
       so ``|sd(y) − sd(z)| <= (g/2)·sqrt(N/(N − 1)) <= g/sqrt(2)``: the
       square roots of step 3 widened by :func:`mean_pad` (a step and float
       slack) and clamped to ``[0, (U − L)/2 · sqrt(N/(N − 1))]`` hold
       ``sd(y)``.

    So the interval holds the clipped sample standard deviation (its square:
    the variance) of every key with at least two rows with probability at
    least ``level``.  Float rounding of ``AB/(A + B)`` is about ``1e-16·NQ``
    grid units against a half-width of at least ``Q`` units: negligible below
    ``1e15`` rows.  ``Q = 0`` (a grid coarser than the clip) gives
    ``[0, (U − L)/sqrt(2)]``: nothing is known.
    """
    n_keys = a.size
    width = upper - lower
    if top == 0:
        return np.zeros(n_keys), np.full(n_keys, width / math.sqrt(2.0))
    miss = var_miss(level)
    t = units_half_width(scale, miss)
    t3 = units_half_width(scale3, miss)
    a_lo = np.maximum(a - t, 0).astype(np.float64)
    a_hi = np.maximum(a + t, 0).astype(np.float64)
    b_lo = np.maximum(b - t, 0).astype(np.float64)
    b_hi = np.maximum(b + t, 0).astype(np.float64)
    c_f = c.astype(np.float64)
    both_lo = a_lo + b_lo
    both_hi = a_hi + b_hi
    spread_lo = np.divide(a_lo * b_lo, both_lo, out=np.zeros(n_keys), where=both_lo > 0)
    spread_hi = np.divide(a_hi * b_hi, both_hi, out=np.zeros(n_keys), where=both_hi > 0)
    n_lo = both_lo / top
    n_hi = both_hi / top
    m_lo = np.maximum(spread_lo - (c_f + t3) - n_hi * offset - n_hi / 2.0, 0.0)
    m_hi = spread_hi - (c_f - t3) - n_lo * offset + n_hi / 2.0
    n_least = np.maximum(n_lo, 2.0)
    var_lo = top * m_lo / np.maximum(n_hi - 1.0, 1.0)
    var_hi = np.minimum(top * m_hi / (n_least - 1.0), top * (top / 4.0) * n_least / (n_least - 1.0))
    step = math.ldexp(1.0, exponent)
    pad = mean_pad(lower, upper, exponent)
    ceiling = width / 2.0 * np.sqrt(n_least / (n_least - 1.0))
    sd_lo = np.clip(step * np.sqrt(np.maximum(var_lo, 0.0)) - pad, 0.0, ceiling)
    sd_hi = np.clip(step * np.sqrt(np.maximum(var_hi, 0.0)) + pad, 0.0, ceiling)
    return np.minimum(sd_lo, sd_hi), sd_hi


# ------------------------------------------------------------------ discrete Gaussian
#
# Z with P(Z = z) = f(z)/N, f(z) = exp(-z²/(2σ²)), N = Σ_z f(z) (Canonne,
# Kamath & Steinke 2020).  No closed form: gaussian_tail bounds
# P(|Z| > t) = 2·Σ_{z>t} f(z)/N from ABOVE, so a half-width built on it is
# never too small:
#
# - numerator: the terms z = t+1 .. t+n summed one by one (n = min(4096,
#   40σ + 1)); the rest bounded by an integral: f is decreasing on [0, ∞), so
#   Σ_{z>e} f(z) <= ∫_e^∞ f; and convex on [σ, ∞), so by Hermite–Hadamard
#   f(z) <= ∫_{z-1/2}^{z+1/2} f and Σ_{z>e} f(z) <= ∫_{e+1/2}^∞ f when
#   e + 1/2 >= σ.  ∫_a^∞ f = σ·sqrt(π/2)·erfc(a/(σ·sqrt 2)).
# - normaliser, from BELOW: Poisson summation gives N = σ·sqrt(2π)·Σ_k
#   exp(-2π²σ²k²) >= σ·sqrt(2π) (tight for σ >= 1), and every partial sum
#   1 + 2·Σ_{z=1..n} f(z) is below N (tight for σ < 1); the larger is used.
#
# Float evaluation: each exp/erfc is within a few ulps, their arguments carry
# a relative error of a few ulps times at most 800 (beyond it they underflow),
# and a sum of at most 4096 positive terms adds at most 4096 ulps: well
# below 1e-11 relative in all.  The bound is multiplied by 1 + 1e-9 and
# raised by 1e-290 (terms lost to underflow), so it stays an upper bound.

#: Terms of the tail and of the normaliser summed one by one.
_GAUSS_TERMS = 4096
#: Relative and absolute safety margins of :func:`gaussian_tail` (float rounding, underflow).
_GAUSS_SLACK, _GAUSS_FLOOR = 1e-9, 1e-290


def _gauss_integral(a: float, sigma: float) -> float:
    """``∫_a^∞ exp(-x²/(2σ²)) dx = σ·sqrt(π/2)·erfc(a/(σ·sqrt 2))``."""
    return sigma * math.sqrt(math.pi / 2) * math.erfc(a / (sigma * math.sqrt(2.0)))


def gaussian_tail(t: int, sigma2: Fraction | float) -> float:
    """An upper bound on ``P(|Z| > t)`` for a discrete Gaussian ``Z`` of parameter ``sigma2``.

    Within about ``1e-9`` (relative) of the exact value for every σ: the
    first terms are summed, the rest bounded by integrals, the normaliser
    bounded from below (see the comment above this function).  ``t < 0``
    gives 1.

    Examples
    --------
    >>> round(gaussian_tail(1, 1), 4)  # 2·(e**-2 + e**-4.5 + ...) / N, N ≈ 2.5066
    0.1171
    """
    s2 = float(sigma2)
    if s2 == 0:
        return 0.0
    if t < 0:
        return 1.0
    sigma = math.sqrt(s2)
    n = min(_GAUSS_TERMS, math.ceil(40 * sigma) + 1)
    z = np.arange(t + 1, t + n + 1, dtype=np.float64)
    end = float(t + n)
    rest = _gauss_integral(end + 0.5 if end + 0.5 >= sigma else end, sigma)
    above = float(np.sum(np.exp(-(z * z) / (2 * s2)))) + rest
    k = np.arange(1, n + 1, dtype=np.float64)
    partial = 1.0 + 2.0 * float(np.sum(np.exp(-(k * k) / (2 * s2))))
    norm = max(partial, sigma * math.sqrt(2 * math.pi))
    return min(1.0, 2.0 * above / norm * (1 + _GAUSS_SLACK) + _GAUSS_FLOOR)


@functools.lru_cache(maxsize=1024)  # a pure function of public parameters
def gaussian_half_width(sigma2: Fraction | float, miss: float) -> int:
    """The smallest integer ``t >= 0`` with ``P(|Z| > t) <= miss`` for a discrete Gaussian ``Z``.

    The discrete Gaussian's analogue of :func:`noise_half_width`:
    ``released ± t`` holds the noiseless value with probability at least
    ``1 − miss``.  ``t`` is the smallest integer at which
    :func:`gaussian_tail` (an upper bound on the exact tail) is at most
    ``miss``, so the coverage is never below ``1 − miss``; the exact
    smallest such integer, unless the exact tail at ``t − 1`` lies within
    about ``1e-9`` (relative) above ``miss``.

    Parameters
    ----------
    sigma2 : Fraction or float
        The variance parameter ``σ²`` in integer (grid) units (0: no noise).
    miss : float
        The allowed probability of ``|Z| > t``, in ``(1e-280, 1)``.

    Returns
    -------
    int

    Examples
    --------
    A count at ρ = 0.01 (σ² = 50) at level 0.95:

    >>> gaussian_half_width(50, 0.05)
    14
    """
    if float(sigma2) == 0:
        return 0
    if not 1e-280 < miss < 1:
        raise ValueError(f"`miss` must be in (1e-280, 1), got {miss!r}.")
    sigma = math.sqrt(float(sigma2))
    guess = max(0, math.ceil(-sigma * NormalDist().inv_cdf(miss / 2) - 0.5))

    def covers(t: int) -> bool:
        return gaussian_tail(t, sigma2) <= miss

    hi, step = guess, 1
    while not covers(hi):
        hi, step = hi + step, 2 * step
    lo, step = hi - 1, 1
    while lo >= 0 and covers(lo):
        lo, step = lo - step, 2 * step
    lo = max(lo, -1)  # covers(hi), and lo < 0 or not covers(lo)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if covers(mid):
            hi = mid
        else:
            lo = mid
    return hi
