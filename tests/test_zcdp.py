"""zCDP arithmetic of ``pandas_dp.core.zcdp``: exact charges, and the CKS conversion to (ε, δ).

The conversion is checked three ways: against a 80-digit evaluation of the
same infimum (never below it, barely above), against the original form of
the Canonne–Kamath–Steinke bound over a dense grid of α (an independent check
of the algebra), and against OpenDP's implementation when it is installed.
"""

from __future__ import annotations

import math
from decimal import Decimal, localcontext
from fractions import Fraction

import numpy as np
import pytest
import scipy.optimize
from hypothesis import given
from hypothesis import strategies as st

from pandas_dp.core.zcdp import (
    epsilon_at,
    gaussian_rho,
    gaussian_sigma2,
    pure_epsilon,
    pure_rho,
    rho_within,
)

# ---------------------------------------------------------------------------- charges


@pytest.mark.parametrize(
    ("rho", "epsilon"),
    [(Fraction(1, 2), Fraction(1)), (Fraction(1, 8), Fraction(1, 2)), (Fraction(2), Fraction(2))],
)
def test_pure_epsilon_is_sqrt_2rho_where_that_is_exact(rho: Fraction, epsilon: Fraction) -> None:
    assert pure_epsilon(rho) == epsilon  # ε²/2 = ρ (ε²/8 would give twice the ε)


@given(
    st.fractions(min_value=Fraction(1, 10**12), max_value=Fraction(10**6)).filter(lambda r: r > 0)
)
def test_pure_epsilon_is_the_largest_multiple_of_2_to_the_minus_64_within_rho(
    rho: Fraction,
) -> None:
    epsilon = pure_epsilon(rho)
    assert (epsilon * 2**64).denominator == 1
    assert pure_rho(epsilon) <= rho < pure_rho(epsilon + Fraction(1, 2**64))


@pytest.mark.parametrize(
    ("sq_sensitivity", "sigma2", "rho"),
    [
        (1, Fraction(50), Fraction(1, 100)),
        (4, Fraction(1, 2), Fraction(4)),
        (12, Fraction(7, 3), Fraction(18, 7)),  # a grouped count: k = 2, g = 3
        (0, Fraction(5), Fraction(0)),
    ],
)
def test_gaussian_rho_exact(sq_sensitivity: int, sigma2: Fraction, rho: Fraction) -> None:
    assert gaussian_rho(sq_sensitivity, sigma2) == rho


@given(st.integers(1, 2**40), st.fractions(min_value=Fraction(1, 10**9), max_value=10**6))
def test_gaussian_sigma2_is_the_inverse(sq_sensitivity: int, rho: Fraction) -> None:
    assert gaussian_rho(sq_sensitivity, gaussian_sigma2(sq_sensitivity, rho)) == rho


@pytest.mark.parametrize(
    ("charge", "epsilon", "rho"),
    [
        (pure_rho, Fraction(1, 10), Fraction(1, 200)),
        (pure_rho, 2, Fraction(2)),
        (pure_rho, Fraction(1, 2), Fraction(1, 8)),  # permute-and-flip: not known BR, ε²/2
    ],
)
def test_pure_releases_are_charged_exactly(
    charge: object, epsilon: Fraction | int, rho: Fraction
) -> None:
    assert callable(charge)
    assert charge(epsilon) == rho


@pytest.mark.parametrize(
    ("call", "error"),
    [
        (lambda: pure_rho(0.1), TypeError),  # a float would not compose exactly
        (lambda: pure_rho(Fraction(-1)), ValueError),
        (lambda: gaussian_rho(1, 0), ValueError),
        (lambda: gaussian_sigma2(1, Fraction(0)), ValueError),
        (lambda: gaussian_sigma2(True, Fraction(1)), TypeError),
        (lambda: epsilon_at(Fraction(1), 0.0), ValueError),
        (lambda: epsilon_at(Fraction(1), 1.0), ValueError),
        (lambda: epsilon_at(Fraction(1), math.nan), ValueError),
        (lambda: epsilon_at(Fraction(-1), 1e-6), ValueError),
        (lambda: rho_within(0, 1e-6), ValueError),
    ],
)
def test_bad_arguments_are_refused(call: object, error: type[Exception]) -> None:
    assert callable(call)
    with pytest.raises(error):
        call()


# ------------------------------------------------------------------------- conversion

CASES = [
    (Fraction(1, 2), 1e-6),
    (Fraction(244, 10_000), 1e-6),
    (Fraction(1, 100), 1e-9),
    (Fraction(1, 10**9), 1e-12),
    (Fraction(100), 1e-5),
    (Fraction(3, 7), 0.5),
    (Fraction(1, 10), Fraction(1, 10**400)),  # below the smallest float
]


def _reference(rho: Fraction, delta: Fraction) -> Decimal:
    """The CKS infimum at 80 digits: ε at the root x of ρx² + ln(1 + x) = ln(1/δ)."""
    with localcontext() as ctx:
        ctx.prec = 80
        r = Decimal(rho.numerator) / Decimal(rho.denominator)
        d = Decimal(delta.numerator) / Decimal(delta.denominator)
        log_inv = -d.ln()
        lo, hi = Decimal(0), Decimal(1)
        while r * hi * hi + (1 + hi).ln() < log_inv:
            lo, hi = hi, 2 * hi
        for _ in range(400):
            mid = (lo + hi) / 2
            if r * mid * mid + (1 + mid).ln() < log_inv:
                lo = mid
            else:
                hi = mid
        x = hi
        return (1 + x) * r + x.ln() - (1 + 1 / x) * (1 + x).ln() + log_inv / x


@pytest.mark.parametrize(("rho", "delta"), CASES)
def test_epsilon_at_is_never_understated_and_tight(rho: Fraction, delta: float | Fraction) -> None:
    eps = epsilon_at(rho, delta)
    exact = max(_reference(rho, Fraction(delta)), Decimal(0))
    assert Decimal(eps) >= exact
    assert Decimal(eps) <= exact * (1 + Decimal("1e-13")) + Decimal("1e-300")


def _min_log_cks_delta(rho: float, eps: float) -> float:
    """min over α of ln δ, CKS 2020 Cor. 13 as printed: exp((α−1)(αρ−ε))/(α−1)·(1−1/α)**α.

    A dense grid of α − 1 over 20 decades, then a bounded scalar search between the
    grid neighbours of its minimum.
    """

    def log_delta(alpha: np.ndarray | float) -> np.ndarray | float:
        return (alpha - 1) * (alpha * rho - eps) - np.log(alpha - 1) + alpha * np.log1p(-1 / alpha)

    alpha = 1 + np.logspace(-8, 12, 200_001)
    i = int(np.argmin(log_delta(alpha)))
    lo, hi = alpha[max(i - 1, 0)], alpha[min(i + 1, alpha.size - 1)]
    found = scipy.optimize.minimize_scalar(
        log_delta, bounds=(lo, hi), method="bounded", options={"xatol": 1e-12 * lo}
    )
    return min(float(found.fun), float(np.min(log_delta(alpha))))


@pytest.mark.parametrize(("rho", "delta"), [c for c in CASES if isinstance(c[1], float)])
def test_epsilon_at_solves_the_printed_bound(rho: Fraction, delta: float) -> None:
    """Independent of the algebra in the module: the printed form, minimised numerically."""
    eps = epsilon_at(rho, delta)
    assert _min_log_cks_delta(float(rho), eps) <= math.log(delta) + 1e-9  # ε certifies δ
    if eps > 0:  # and a slightly smaller ε does not
        assert _min_log_cks_delta(float(rho), eps * (1 - 1e-6)) > math.log(delta)


@pytest.mark.parametrize(
    ("rho", "delta", "epsilon", "rel"),
    [
        (Fraction(1, 2), 1e-6, 5.22153444453017, 1e-12),  # OpenDP 0.16 zCDP_to_approxDP
        (Fraction(244, 10_000), 1e-6, 1.0, 1e-3),  # ALGORITHMS.md §8: (1, 1e-6) is ρ ≈ 0.0244
    ],
)
def test_epsilon_at_known_values(rho: Fraction, delta: float, epsilon: float, rel: float) -> None:
    assert epsilon_at(rho, delta) == pytest.approx(epsilon, rel=rel)


@pytest.mark.parametrize(("rho", "delta"), [c for c in CASES if isinstance(c[1], float)])
def test_epsilon_at_beats_the_simple_bound(rho: Fraction, delta: float) -> None:
    simple = float(rho) + 2 * math.sqrt(float(rho) * math.log(1 / delta))
    assert epsilon_at(rho, delta) <= simple


def test_epsilon_at_of_nothing_spent_is_zero() -> None:
    assert epsilon_at(Fraction(0), 1e-6) == 0.0


@given(
    st.fractions(min_value=Fraction(1, 10**8), max_value=100),
    st.fractions(min_value=Fraction(1, 10**8), max_value=100),
    st.floats(1e-15, 0.5),
)
def test_epsilon_at_grows_with_rho(a: Fraction, b: Fraction, delta: float) -> None:
    lo, hi = sorted((a, b))
    assert epsilon_at(lo, delta) <= epsilon_at(hi, delta)


@given(
    st.fractions(min_value=Fraction(1, 10**8), max_value=100),
    st.floats(1e-15, 0.5),
    st.floats(1e-15, 0.5),
)
def test_epsilon_at_falls_with_delta(rho: Fraction, a: float, b: float) -> None:
    lo, hi = sorted((a, b))
    assert epsilon_at(rho, lo) >= epsilon_at(rho, hi)


@pytest.mark.parametrize(("epsilon", "delta"), [(1, 1e-6), (Fraction(1, 10), 1e-9), (8.0, 1e-5)])
def test_rho_within_is_the_largest_rho_within_epsilon(
    epsilon: float | Fraction, delta: float
) -> None:
    rho = rho_within(epsilon, delta)
    assert epsilon_at(rho, delta) <= epsilon
    assert epsilon_at(rho * (1 + Fraction(1, 2**40)), delta) > epsilon


def test_rho_within_matches_the_published_table() -> None:
    assert float(rho_within(1, 1e-6)) == pytest.approx(0.0244, abs=1e-4)  # ALGORITHMS.md §8


@pytest.mark.parametrize(("rho", "delta"), [(0.5, 1e-6), (0.01, 1e-9), (3.0, 1e-3)])
def test_epsilon_at_agrees_with_opendp(rho: float, delta: float) -> None:
    dp = pytest.importorskip("opendp.prelude")
    dp.enable_features("contrib")
    scale = math.sqrt(1 / (2 * rho))  # sensitivity 1: ρ = 1/(2σ²)
    meas = dp.m.make_gaussian(dp.atom_domain(T=int), dp.absolute_distance(T=int), scale=scale)
    theirs = dp.c.make_zCDP_to_approxDP(meas).map(1).epsilon(delta)
    ours = epsilon_at(Fraction(meas.map(1)), delta)
    assert ours == pytest.approx(theirs, rel=1e-12)
