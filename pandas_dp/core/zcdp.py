"""Zero-concentrated DP arithmetic: what a release costs in ρ, and the (ε, δ) that ρ means.

Data-free and exact: every charge is a :class:`~fractions.Fraction` of public
parameters (sensitivities, noise variances, ε), so ρ composes by exact
addition as ε does.  The one conversion with logarithms,
:func:`epsilon_at`, is rounded so that it can only over-state ε.  This
module imports nothing of the package: the kinds, the budget's accountant
and the noise grid (:func:`pandas_dp.core.noise.gaussian_scale`) build on it.

Charges (ρ-zCDP, Bun & Steinke, TCC 2016, "Concentrated Differential
Privacy: Simplifications, Extensions, and Lower Bounds"):

- :func:`gaussian_rho`: Gaussian noise of variance ``σ²`` on a statistic of L2
  sensitivity ``Δ₂`` is ``Δ₂²/(2σ²)``-zCDP (Prop. 1.6); so is the discrete
  Gaussian (Canonne, Kamath & Steinke, NeurIPS 2020, "The Discrete Gaussian
  for Differential Privacy", Thm. 4).  :func:`gaussian_sigma2` is the inverse.
- :func:`pure_rho`: an ε-DP release is ``ε²/2``-zCDP (Bun & Steinke, Prop. 1.4).

A pure-ε release given ``rho=`` (a selection) runs at the largest ε its
charge allows, rounded down (:func:`pure_epsilon`: ``ε²/2 <= ρ``), so that it
is ρ-zCDP.  The package's selections are permute-and-flip (McKenna &
Sheldon, NeurIPS 2020), AboveThreshold and Laplace noise: ε-DP, and none
known to be ε-bounded-range, so all are charged ``ε²/2``.  (The exponential
mechanism is ε-bounded-range, hence ``ε²/8``-zCDP: Cesar & Rogers, ALT 2021,
Lemma 3.2 with Durfee & Rogers, NeurIPS 2019; no release here uses it.)

Conversion (Canonne, Kamath & Steinke 2020, Prop. 12 / Cor. 13): a ρ-zCDP
mechanism is (ε, δ)-DP for every ε ≥ 0 and::

    δ = inf_{α>1} exp((α−1)(αρ − ε)) / (α−1) · (1 − 1/α)**α

:func:`epsilon_at` returns the smallest ε this certifies (up to an upward
rounding of about 1e-15 relative), always at most the simpler
``ρ + 2·sqrt(ρ·ln(1/δ))`` (Bun & Steinke, Prop. 1.3).  :func:`rho_within` is
its inverse: the largest ρ whose ε at δ stays within a given ε.
"""

from __future__ import annotations

import math
from decimal import Decimal, localcontext
from fractions import Fraction

__all__ = [
    "epsilon_at",
    "gaussian_rho",
    "gaussian_sigma2",
    "pure_epsilon",
    "pure_rho",
    "rho_within",
]

Rational = Fraction | int


def _positive(value: Rational, name: str) -> Fraction:
    if isinstance(value, bool) or not isinstance(value, Fraction | int):
        raise TypeError(f"`{name}` must be a Fraction or an int, got {type(value).__name__}.")
    if value <= 0:
        raise ValueError(f"`{name}` must be positive, got {value}.")
    return Fraction(value)


def _non_negative(value: Rational, name: str) -> Fraction:
    if isinstance(value, bool) or not isinstance(value, Fraction | int):
        raise TypeError(f"`{name}` must be a Fraction or an int, got {type(value).__name__}.")
    if value < 0:
        raise ValueError(f"`{name}` must be non-negative, got {value}.")
    return Fraction(value)


# --------------------------------------------------------------------------- charges


def gaussian_rho(sq_sensitivity: Rational, sigma2: Rational) -> Fraction:
    """``ρ = Δ₂²/(2σ²)``: the zCDP cost of (discrete) Gaussian noise of variance ``sigma2``.

    Parameters
    ----------
    sq_sensitivity : Fraction or int
        ``Δ₂²``, the squared L2 sensitivity (squared, so that a grouped count's
        ``Δ₂ = k·sqrt(g)`` stays exact: ``Δ₂² = k²·g``).
    sigma2 : Fraction or int
        The variance parameter ``σ²`` of the noise, in the same units, positive.

    Examples
    --------
    >>> gaussian_rho(1, Fraction(50))
    Fraction(1, 100)
    """
    return _non_negative(sq_sensitivity, "sq_sensitivity") / (2 * _positive(sigma2, "sigma2"))


def gaussian_sigma2(sq_sensitivity: Rational, rho: Rational) -> Fraction:
    """``σ² = Δ₂²/(2ρ)``: the noise variance at which a Gaussian release costs exactly ``rho``.

    The inverse of :func:`gaussian_rho`.  The grid rounds it up
    (:func:`pandas_dp.core.noise.gaussian_scale`), so the realised ρ never exceeds
    ``rho``.

    Examples
    --------
    >>> gaussian_sigma2(1, Fraction(1, 100))
    Fraction(50, 1)
    """
    return _non_negative(sq_sensitivity, "sq_sensitivity") / (2 * _positive(rho, "rho"))


def pure_rho(epsilon: Rational) -> Fraction:
    """``ε²/2``: what an ε-DP release (Laplace noise, a pure-ε selection) costs under a ρ budget.

    Bun & Steinke 2016, Prop. 1.4: ε-DP implies ``ε²/2``-zCDP.

    Examples
    --------
    >>> pure_rho(Fraction(1, 10))
    Fraction(1, 200)
    """
    return _non_negative(epsilon, "epsilon") ** 2 / 2


#: Bits after the binary point of the ε a ``rho=`` selection runs at (:func:`pure_epsilon`).
_EPSILON_BITS = 64


def _root_down(value: Fraction) -> Fraction:
    """The largest multiple of ``2**-64`` whose square is at most ``value`` (exact integers)."""
    scaled = value * 4**_EPSILON_BITS
    return Fraction(math.isqrt(scaled.numerator // scaled.denominator), 2**_EPSILON_BITS)


def pure_epsilon(rho: Rational) -> Fraction:
    """The ε at which an ε-DP release given ``rho=`` runs: ``ε <= sqrt(2ρ)``, so ``ε²/2 <= ρ``.

    The inverse of :func:`pure_rho`, rounded DOWN to a multiple of ``2**-64``
    (exact integer square root): the release's true cost ``ε²/2`` never
    exceeds ``rho``, and falls short of it by less than ``sqrt(2ρ)·2**-63``.
    For permute-and-flip (not known to be bounded-range), AboveThreshold and
    Laplace noise.

    Examples
    --------
    >>> pure_epsilon(Fraction(1, 2)), pure_epsilon(Fraction(1, 8))
    (Fraction(1, 1), Fraction(1, 2))
    >>> pure_rho(pure_epsilon(Fraction(1, 100))) <= Fraction(1, 100)
    True
    """
    return _root_down(2 * _positive(rho, "rho"))


# ------------------------------------------------------------------------ conversion

#: Decimal digits of the rigorous evaluation in :func:`epsilon_at`.
_DIGITS = 50
#: Added to the evaluated ε, relative to the sum of the magnitudes of its terms:
#: far more than the rounding error of fewer than 20 operations at 50 digits.
_MARGIN = Decimal("1e-40")


def _check_delta(delta: Fraction | float) -> Fraction:
    if isinstance(delta, bool) or not isinstance(delta, Fraction | int | float):
        raise TypeError(f"`delta` must be a number in (0, 1), got {type(delta).__name__}.")
    if not 0 < delta < 1:  # NaN fails too
        raise ValueError(f"`delta` must be strictly between 0 and 1, e.g. delta=1e-6; got {delta}.")
    return Fraction(delta)


def _best_x(rho: float, log_inv_delta: float) -> float:
    """The ``x = α − 1 > 0`` minimising ε(x): the root of ``ρx² + ln(1 + x) = ln(1/δ)``.

    ``dε/dx = ρ + (ln(1 + x) − ln(1/δ))/x²`` (see :func:`_epsilon_of`), whose sign is
    that of ``ρx² + ln(1 + x) − ln(1/δ)``, increasing in x: ε(x) falls, then rises,
    and the root is its minimum.  Found by bisection in floats: any x > 0 gives a
    valid ε, so an inexact root only costs tightness, never validity.
    """
    lo, hi = 0.0, 1.0
    while rho * hi * hi + math.log1p(hi) < log_inv_delta:
        lo, hi = hi, 2.0 * hi
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if mid in (lo, hi):
            break
        if rho * mid * mid + math.log1p(mid) < log_inv_delta:
            lo = mid
        else:
            hi = mid
    return hi


def _epsilon_of(rho: Fraction, delta: Fraction, x: Fraction) -> Decimal:
    """An upper bound on the ε that α = 1 + x certifies for (ρ, δ), as a Decimal.

    Solving the bound of the module docstring for ε at a fixed α = 1 + x::

        ε(x) = (1 + x)·ρ + ln x − (1 + 1/x)·ln(1 + x) + ln(1/δ)/x

    (the CKS δ is decreasing in ε at every α, so this ε certifies δ).  The
    rational parts are exact; each logarithm and quotient is correctly rounded
    to 50 digits (the decimal module's ``ln`` and division are correctly
    rounded), so the error of the sum is below ``1e-48`` times the sum of the
    terms' magnitudes.  Adding :data:`_MARGIN` times that sum (``1e-40``)
    makes the result an upper bound.
    """
    with localcontext() as ctx:
        ctx.prec = _DIGITS

        def dec(q: Fraction) -> Decimal:
            return Decimal(q.numerator) / Decimal(q.denominator)

        terms = [
            dec((1 + x) * rho),
            dec(x).ln(),
            -dec(1 + 1 / x) * dec(1 + x).ln(),
            -dec(delta).ln() / dec(x),
        ]
        total = sum(terms, Decimal(0))
        return total + _MARGIN * (1 + sum((abs(t) for t in terms), Decimal(0)))


def _float_up(value: Decimal) -> float:
    """The smallest float at least ``value``."""
    out = float(value)
    return math.nextafter(out, math.inf) if Decimal(out) < value else out


def epsilon_at(rho: Rational, delta: Fraction | float) -> float:
    """The smallest ε that the Canonne–Kamath–Steinke bound certifies for ρ-zCDP at ``delta``.

    Parameters
    ----------
    rho : Fraction or int
        The ρ spent (non-negative).
    delta : Fraction or float
        The δ, strictly between 0 and 1 (a float is read at its exact binary
        value).

    Returns
    -------
    float
        An ε such that every ρ-zCDP mechanism is (ε, δ)-DP.  Never below the
        exact infimum of the CKS bound; above it by about 1e-15 relative (the
        upward rounding of a float).  0 for ``rho == 0``, and whenever the
        bound certifies a negative ε (a tiny ρ): δ falls as ε grows, so
        ε = 0 is then certified too.

    Notes
    -----
    CKS 2020 Prop. 12 / Cor. 13 (see the module docstring).  For each
    ``α = 1 + x`` the bound gives an ε(x) (:func:`_epsilon_of`); the smallest
    one is at the root of ``ρx² + ln(1 + x) = ln(1/δ)``, found in floats
    (:func:`_best_x`).  Validity does not depend on that root being exact:
    ε(x) is then evaluated at that very x (a rational) with correctly rounded
    50-digit logarithms plus a margin (:func:`_epsilon_of`), and rounded up
    to a float.  So rounding can only over-state ε.  The result is at most
    ``ρ + 2·sqrt(ρ·ln(1/δ))`` (Bun & Steinke 2016, Prop. 1.3), which is
    ε(x) at ``x = sqrt(ln(1/δ)/ρ)`` without the CKS improvement.

    Examples
    --------
    >>> round(epsilon_at(Fraction(1, 2), 1e-6), 3)
    5.222
    >>> epsilon_at(Fraction(1, 2), 1e-6) < 0.5 + 2 * math.sqrt(0.5 * math.log(1e6))
    True
    """
    rho_ = _non_negative(rho, "rho")
    delta_ = _check_delta(delta)
    if rho_ == 0:
        return 0.0
    log_inv_delta = -math.log(float(delta_)) if float(delta_) > 0 else math.inf
    if not math.isfinite(log_inv_delta):  # δ below the smallest float: evaluate ln exactly
        with localcontext() as ctx:
            ctx.prec = _DIGITS
            log_inv_delta = float(-(Decimal(delta_.numerator) / Decimal(delta_.denominator)).ln())
    x = Fraction(_best_x(float(rho_), log_inv_delta))
    return max(0.0, _float_up(_epsilon_of(rho_, delta_, x)))


#: :func:`rho_within` stops when the bracket is this many bits narrower than ρ.
_RHO_BITS = 52


def rho_within(epsilon: Rational | float, delta: Fraction | float) -> Fraction:
    """The largest ρ (to 52 bits) with ``epsilon_at(ρ, delta) <= epsilon``.

    For a zCDP budget that promises (ε, δ): ``set_budget(rho=rho_within(1, 1e-6))``.
    :func:`epsilon_at` increases with ρ, so a bisection on exact Fractions
    finds it; the result is checked with :func:`epsilon_at` itself, so it
    never promises more than ``epsilon``.

    Examples
    --------
    >>> rho = rho_within(1, 1e-6)
    >>> round(float(rho), 4), epsilon_at(rho, 1e-6) <= 1
    (0.0244, True)
    """
    if isinstance(epsilon, bool) or not isinstance(epsilon, Fraction | int | float):
        raise TypeError(f"`epsilon` must be a number, got {type(epsilon).__name__}.")
    if not 0 < epsilon < math.inf:
        raise ValueError(f"`epsilon` must be positive and finite, got {epsilon}.")
    _check_delta(delta)
    target = Fraction(epsilon)  # compared exactly: the float 0.1 exceeds 1/10

    def within(rho: Fraction) -> bool:
        return Fraction(epsilon_at(rho, delta)) <= target

    hi = Fraction(1)
    while within(hi):
        hi *= 2
    lo = Fraction(0)
    while hi - lo > hi / 2**_RHO_BITS:  # within(lo) and not within(hi)
        mid = (lo + hi) / 2
        if within(mid):
            lo = mid
        else:
            hi = mid
    return lo
