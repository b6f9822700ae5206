"""Shared fixtures: small frames with a seeded budget, a spy noise source, the data folder."""

from __future__ import annotations

import math
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from fractions import Fraction
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import scipy.stats
from hypothesis import settings

import pandas_dp  # noqa: F401  (registers df.dp)
from pandas_dp.core.noise import SeededSource
from pandas_dp.pipeline import run as release

# Property tests draw their examples from a fixed seed, like every statistical test
# here: a CI run is reproducible, and a failure is a bug, not bad luck.
settings.register_profile("pandas_dp", derandomize=True, print_blob=True)
settings.load_profile("pandas_dp")

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


@pytest.fixture
def shared_data() -> Path:
    """The real datasets in ``../shared/data`` beside the repository; skip when absent.

    A clone of the repository alone does not have them. CI does, and sets
    ``PANDAS_DP_REQUIRE_DATA=1`` so that their absence fails instead of skipping.
    """
    if not DATA.is_dir():
        if os.environ.get("PANDAS_DP_REQUIRE_DATA") == "1":
            pytest.fail(f"PANDAS_DP_REQUIRE_DATA=1 but the data folder {DATA} is missing")
        pytest.skip("needs the datasets in ../shared/data beside the repository (absent here)")
    return DATA


@pytest.fixture
def salaries() -> pd.DataFrame:
    """A small frame of 200 people, no budget yet."""
    rng = np.random.Generator(np.random.PCG64(12345))
    n = 200
    return pd.DataFrame(
        {
            "dept": rng.choice(["Eng", "Ops", "Sales"], size=n),
            "age": rng.integers(18, 70, size=n),
            "salary": np.round(rng.lognormal(np.log(60_000), 0.5, size=n), 2),
            "bonus": np.where(rng.uniform(size=n) < 0.2, np.nan, rng.uniform(0, 5000, size=n)),
        }
    )


@pytest.fixture
def protected(salaries: pd.DataFrame) -> pd.DataFrame:
    """``salaries`` with a seeded budget of 10."""
    salaries.dp.set_budget(epsilon=10, seed=7)
    return salaries


# ------------------------------------------------------------ statistical test helpers
#
# Shared by the noise, grid and audit tests (fixtures, because test modules are
# imported with --import-mode=importlib and cannot import each other).

#: Tumult's threshold for noise-distribution tests: a test must give p above it
#: at the true scale and below it at 0.7x and 1.3x the scale.
P_THRESHOLD = 1e-20


def _dlap_cdf(z: np.ndarray, scale: float) -> np.ndarray:
    """Exact ``P(Z <= z)`` for integer ``z`` under ``P(Z = z) ∝ exp(-|z| / scale)``."""
    p = math.exp(-1.0 / scale)
    z = np.asarray(z, dtype=np.float64)
    upper = 1.0 - np.exp(-(np.maximum(z, 0.0) + 1.0) / scale) / (1.0 + p)
    lower = np.exp(np.minimum(z, 0.0) / scale) / (1.0 + p)
    return np.where(z >= 0, upper, lower)


def _dlap_cuts(scale: float, n: int) -> np.ndarray:
    """Integer cut points ``c``; bins are ``(-inf, c_1)``, ``[c_1, c_2)``, ..., ``[c_m, inf)``.

    Small scales: one bin per integer ``|z| <= K``, K the largest value with an
    expected count of at least 20, plus the two tails.  Large scales: about
    ``n / 50`` (at most 100) equiprobable bins of the continuous Laplace, whose
    exact discrete masses come from the CDF.
    """
    p = math.exp(-1.0 / scale)
    k = math.floor(scale * math.log(n * -math.expm1(-1.0 / scale) / (20 * (1 + p))))
    if 0 <= k <= 100:
        return np.arange(-k, k + 2)
    bins = min(100, n // 50)
    u = np.arange(1, bins) / bins
    quantiles = np.where(u < 0.5, scale * np.log(2 * u), -scale * np.log(2 * (1 - u)))
    return np.unique(np.ceil(quantiles))


def _dlap_pvalue(draws: np.ndarray, scale: float) -> float:
    """Chi-square p-value of integer ``draws`` against the exact discrete Laplace(scale)."""
    draws = np.asarray(draws)
    cuts = _dlap_cuts(float(scale), draws.size)
    observed = np.bincount(np.searchsorted(cuts, draws, side="right"), minlength=cuts.size + 1)
    cdf = np.concatenate([[0.0], _dlap_cdf(cuts - 1, float(scale)), [1.0]])
    expected = draws.size * np.diff(cdf)
    stat = float(np.sum((observed - expected) ** 2 / expected))
    return float(scipy.stats.chi2.sf(stat, df=cuts.size))


def _assert_dlap_scale(draws: np.ndarray, scale: float) -> None:
    """The chi-square test passes at ``scale`` and fails at 0.7x and 1.3x of it."""
    for factor, must_pass in ((1.0, True), (0.7, False), (1.3, False)):
        pvalue = _dlap_pvalue(draws, scale * factor)
        assert (pvalue > P_THRESHOLD) == must_pass, f"scale x{factor}: p = {pvalue:.3g}"


@pytest.fixture
def assert_dlap_scale() -> Callable[[np.ndarray, float], None]:
    """``assert_dlap_scale(draws, scale)``: integer draws follow dLap(scale), not 0.7x or 1.3x."""
    return _assert_dlap_scale


#: Up to this σ the tests sum the discrete Gaussian's pmf term by term.
EXPLICIT_SIGMA = 1000.0


def _dgauss_pmf(sigma2: float) -> tuple[np.ndarray, np.ndarray]:
    """``(z, P(Z = z))`` over ``|z| <= 40σ + 2``, normalised by the same terms (small σ)."""
    k = math.ceil(40 * math.sqrt(sigma2)) + 2
    z = np.arange(-k, k + 1)
    weights = np.exp(-(z.astype(np.float64) ** 2) / (2 * sigma2))
    return z, weights / weights.sum()


def _dgauss_cdf(cuts: np.ndarray, sigma2: float) -> np.ndarray:
    """``P(Z < c)`` at integer cut points (exact sums; midpoint-corrected normal for large σ)."""
    sigma = math.sqrt(sigma2)
    if sigma > EXPLICIT_SIGMA:  # Euler-Maclaurin error ~1/(24σ²): far below the test's noise
        return scipy.stats.norm.cdf((cuts - 0.5) / sigma)
    z, pmf = _dgauss_pmf(sigma2)
    cdf = np.concatenate([[0.0], np.cumsum(pmf)])
    return cdf[np.clip(np.searchsorted(z, cuts), 0, z.size)]


def _dgauss_pvalue(draws: np.ndarray, sigma2: float) -> float:
    """Chi-square p-value of integer ``draws`` against the exact discrete Gaussian(σ²).

    Bins: one per integer with an expected count of at least 20 when that gives
    at most 201 bins, else 100 equiprobable bins of the normal of the same σ.
    """
    sigma = math.sqrt(sigma2)
    if sigma <= 30:
        z, pmf = _dgauss_pmf(sigma2)
        k = max(1, int(z[draws.size * pmf >= 20].max(initial=1)))
        cuts = np.arange(-k, k + 2)
    else:
        cuts = np.unique(np.ceil(scipy.stats.norm.ppf(np.arange(1, 100) / 100) * sigma))
    observed = np.bincount(np.searchsorted(cuts, draws, side="right"), minlength=cuts.size + 1)
    cdf = np.concatenate([[0.0], _dgauss_cdf(cuts, sigma2), [1.0]])
    expected = draws.size * np.diff(cdf)
    stat = float(np.sum((observed - expected) ** 2 / expected))
    return float(scipy.stats.chi2.sf(stat, df=cuts.size))


def _assert_dgauss_sigma2(draws: np.ndarray, sigma2: Fraction) -> None:
    """The chi-square test passes at ``σ`` and fails at 0.7x and 1.3x of ``σ``."""
    for factor, must_pass in ((1.0, True), (0.7, False), (1.3, False)):
        pvalue = _dgauss_pvalue(draws, float(sigma2) * factor**2)
        assert (pvalue > P_THRESHOLD) == must_pass, f"sigma x{factor}: p = {pvalue:.3g}"


@pytest.fixture
def assert_dgauss_sigma2() -> Callable[[np.ndarray, Fraction], None]:
    """``assert_dgauss_sigma2(draws, σ²)``: draws follow the discrete Gaussian, not 0.7σ or 1.3σ."""
    return _assert_dgauss_sigma2


def _dgauss_variance(sigma2: float) -> float:
    """The exact variance of the discrete Gaussian of parameter ``σ²``."""
    if math.sqrt(sigma2) > EXPLICIT_SIGMA:
        return sigma2  # Poisson summation: Var = σ²·(1 − O(σ²·exp(−2π²σ²)))
    z, pmf = _dgauss_pmf(sigma2)
    return float(np.sum(z.astype(np.float64) ** 2 * pmf))


@pytest.fixture
def dgauss_variance() -> Callable[[float], float]:
    """``dgauss_variance(σ²)``: the discrete Gaussian's exact variance (below σ² for small σ)."""
    return _dgauss_variance


def _clopper_pearson(k: np.ndarray, n: int, a: float) -> tuple[np.ndarray, np.ndarray]:
    """One-sided Clopper-Pearson bounds, each failing with probability at most ``a``."""
    k = np.asarray(k, dtype=np.float64)
    lo = np.where(k > 0, scipy.stats.beta.ppf(a, np.maximum(k, 1), n - k + 1), 0.0)
    hi = np.where(k < n, scipy.stats.beta.ppf(1 - a, k + 1, np.maximum(n - k, 1)), 1.0)
    return lo, hi


def _epsilon_lower_bound(
    y: np.ndarray, y_prime: np.ndarray, alpha: float = 1e-6, delta: float = 0.0
) -> float:
    """A lower bound on the privacy loss between two samples of releases (ALGORITHMS.md §6.2).

    Events ``{y >= c}`` and ``{y < c}`` for 19 thresholds at the pooled 5 %..95 %
    quantiles, compared in both directions; ``max ln(p_lo / q_hi)`` over them,
    with Clopper-Pearson bounds at a Bonferroni-corrected level, so it exceeds
    the true ε with probability at most ``alpha``.  With ``delta``: a lower
    bound on the ε of an (ε, δ) guarantee, ``max ln((p_lo − δ) / q_hi)``
    (``P(S) <= e**ε·Q(S) + δ`` for every event S).
    """
    y, y_prime = np.sort(np.asarray(y)), np.sort(np.asarray(y_prime))
    pooled = np.concatenate([y, y_prime])
    cuts = np.unique(np.quantile(pooled, np.linspace(0.05, 0.95, 19)))
    n, m = y.size, y_prime.size
    above = n - np.searchsorted(y, cuts, side="left")
    above_prime = m - np.searchsorted(y_prime, cuts, side="left")
    pairs = [
        ((above, n), (above_prime, m)),
        ((n - above, n), (m - above_prime, m)),
        ((above_prime, m), (above, n)),
        ((m - above_prime, m), (n - above, n)),
    ]
    a = alpha / (2 * len(pairs) * cuts.size)
    best = 0.0
    for (k, size), (k_other, size_other) in pairs:
        p_lo, _ = _clopper_pearson(k, size, a)
        _, q_hi = _clopper_pearson(k_other, size_other, a)
        p_lo = p_lo - delta
        ok = p_lo > 0
        if ok.any():
            best = max(best, float(np.max(np.log(p_lo[ok] / q_hi[ok]))))
    return best


@pytest.fixture
def epsilon_lower_bound() -> Callable[[np.ndarray, np.ndarray], float]:
    """``epsilon_lower_bound(y, y_prime, delta=0)``: Clopper-Pearson lower bound on ε (α = 1e-6)."""
    return _epsilon_lower_bound


class SpySource:
    """A seeded word source that counts how often noise is drawn (``calls``)."""

    def __init__(self, seed: int = 0) -> None:
        self._inner = SeededSource(seed)
        self.calls = 0

    def words(self, n: int) -> np.ndarray:
        self.calls += 1
        return self._inner.words(n)


@pytest.fixture
def spy(protected: pd.DataFrame) -> SpySource:
    """The source of ``protected``'s budget, replaced by a counting spy."""
    source = SpySource(7)
    protected.dp.budget.source = source
    return source


@pytest.fixture
def substituted(salaries: pd.DataFrame) -> pd.DataFrame:
    """``salaries`` with a seeded budget of 10 under the substitute adjacency (n public)."""
    salaries.dp.set_budget(epsilon=10, adjacency="substitute", seed=7)
    return salaries


@pytest.fixture
def huge_eps() -> float:
    """An epsilon so large that answers are the exact clipped statistic up to the grid."""
    return 1e9


@pytest.fixture
def exact(salaries: pd.DataFrame) -> pd.DataFrame:
    """``salaries`` with a budget of 1e12 (a thousand releases at ``huge_eps``), seeded."""
    salaries.dp.set_budget(epsilon=1e12, seed=11)
    return salaries


@pytest.fixture
def nothing_spent(protected: pd.DataFrame, spy: SpySource) -> Callable[[], None]:
    """A check that ``protected``'s budget is untouched: no charge, no entry, no noise drawn."""

    def check() -> None:
        budget = protected.dp.budget
        assert budget.spent == 0
        assert budget.entries == []
        assert spy.calls == 0

    return check


@pytest.fixture(autouse=True)
def _fresh_plans() -> Iterator[None]:
    """Plans are cached; clear them around each test so a monkeypatched rule never leaks."""
    caches = release.plan_caches()
    for plan in caches:
        plan.cache_clear()
    yield
    for plan in caches:
        plan.cache_clear()


# Type checkers read tests/typing (tests/test_mypy.py); its mistakes must never run.
collect_ignore = ["typing"]


def _run_python(script: str) -> str:
    """Run ``script`` in a fresh interpreter on this checkout; its stdout (it must succeed)."""
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])},
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.fixture
def run_python() -> Callable[[str], str]:
    """A script run in a fresh interpreter (what a new process sees), returning its stdout."""
    return _run_python
