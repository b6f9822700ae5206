"""The exact samplers and the grid arithmetic of ``pandas_dp.core.noise``.

Distribution tests use a fixed seed and Tumult's pattern: the chi-square test
must pass at the true scale and fail at 0.7x and 1.3x the scale, so a test
that cannot fail would show up here.
"""

from __future__ import annotations

import copy
import math
import multiprocessing
import os
import random
import traceback
from collections.abc import Callable
from fractions import Fraction
from multiprocessing.connection import Connection

import numpy as np
import pandas as pd
import pytest
import scipy.stats
from hypothesis import given
from hypothesis import strategies as st

from pandas_dp.core import noise
from pandas_dp.core.noise import (
    SeededSource,
    SystemSource,
    bernoulli_exp,
    discrete_gaussian,
    discrete_laplace,
    gaussian_grid_exponent,
    gaussian_scale,
    grid_exponent,
    integer_scale,
    uniform_below,
)
from pandas_dp.core.zcdp import gaussian_rho


def _u64(values: list[int]) -> np.ndarray:
    return np.array(values, dtype=np.uint64)


# ------------------------------------------------------------------ discrete Laplace


@pytest.mark.parametrize(
    ("scale", "size"),
    [
        pytest.param(Fraction(3), 100_000, id="integer-3"),
        pytest.param(Fraction(10, 3), 100_000, id="rational-10/3"),
        pytest.param(Fraction(1, 2), 100_000, id="below-one-1/2"),
        pytest.param(Fraction(2**30), 50_000, id="grid-2**30"),
        pytest.param(Fraction(noise.MAX_SCALE), 20_000, id="largest-2**56"),
    ],
)
def test_discrete_laplace_matches_exact_pmf(
    scale: Fraction, size: int, assert_dlap_scale: Callable[[np.ndarray, float], None]
) -> None:
    draws = discrete_laplace(SeededSource(11), scale, size)
    assert draws.dtype == np.int64
    assert_dlap_scale(draws, float(scale))


@pytest.mark.parametrize("scale", [Fraction(1, 2), Fraction(3)], ids=["1/2", "3"])
def test_discrete_laplace_of_few_draws_matches_exact_pmf(
    scale: Fraction, assert_dlap_scale: Callable[[np.ndarray, float], None]
) -> None:
    """Calls of 1 to 8 draws (every ungrouped release) take their own path: test it pooled.

    At scale 1/2 zero holds most of the mass, so keeping the draw −0 (which
    doubles P(0): a loss of ε + ln 2) fails as surely as a wrong scale.
    """
    src = SeededSource(17)
    sizes = [size for _ in range(1_000) for size in range(1, noise._SCALAR_DRAWS + 1)]
    draws = np.concatenate([discrete_laplace(src, scale, size) for size in sizes])
    assert draws.dtype == np.int64
    assert draws.size == 36_000
    assert_dlap_scale(draws, float(scale))


def _dlap_reference(words: noise._Words, s: int, t: int) -> int:
    """CKS Algorithm 2 composed of the scalar uniforms and Bernoullis, step by step."""
    while True:
        negative = words.next() & 1
        while True:
            u = noise._uniform_scalar(words, t)
            if noise._bern_exp_frac_scalar(words, u, t):
                break
        v = 0
        while noise._bern_exp_frac_scalar(words, 1, 1):
            v += 1
        y = (u + t * v) // s
        if not (negative and y == 0):
            return -y if negative else y


@pytest.mark.parametrize(
    ("s", "t"),
    [(1, 1), (1, 2), (2, 7), (1, 3), (3, 1), (1, 819_200_000), (5, 2**40 + 3), (1, 2**61 - 1)],
)
def test_scalar_discrete_laplace_is_the_composed_algorithm(s: int, t: int) -> None:
    """The written-out scalar sampler draws what its composed steps draw, from the same words."""
    for seed in range(200):
        fused, composed = noise._Words(SeededSource(seed)), noise._Words(SeededSource(seed))
        draws = [noise._dlap_scalar(fused, s, t) for _ in range(3)]
        assert draws == [_dlap_reference(composed, s, t) for _ in range(3)]
        assert [fused.next() for _ in range(40)] == [composed.next() for _ in range(40)]


@pytest.mark.parametrize(
    ("scale", "size", "draws"),
    [
        (Fraction(7, 2), 8, [-2, 0, -4, 2, -8, 5, 4, -1]),
        (819_200_000, 2, [-445_806_554, -670_386_452]),
        (1, 6, [-1, 1, 1, 0, 1, 0]),
        (Fraction(1, 3), 5, [0, 0, 0, 0, 0]),
    ],
)
def test_seeded_draws_of_a_few_are_pinned(
    scale: Fraction | int, size: int, draws: list[int]
) -> None:
    """Same seed, same noise across versions: the draws an ungrouped release makes, pinned."""
    assert discrete_laplace(SeededSource(2026), scale, size).tolist() == draws


def test_discrete_laplace_is_symmetric_and_centred() -> None:
    draws = discrete_laplace(SeededSource(3), Fraction(5), 200_000)
    positive, negative = int(np.sum(draws > 0)), int(np.sum(draws < 0))
    assert scipy.stats.binomtest(positive, positive + negative).pvalue > 1e-6
    p = math.exp(-1 / 5)
    variance = 2 * p / (1 - p) ** 2
    assert abs(draws.mean()) < 6 * math.sqrt(variance / draws.size)


@given(
    st.integers(1, 2**200),
    st.integers(1, 2**200),
)
def test_a_scale_too_long_to_sample_is_rounded_up(numerator: int, denominator: int) -> None:
    """The sampler's ``(s, t)`` with noise scale ``t/s``: never below the requested scale.

    A scale whose numerator or denominator exceeds 2**61 (a count at
    ``epsilon=2.0**-56`` has one of 110 bits) is rounded; rounding it down
    would realise more than the ε charged.
    """
    scale = Fraction(numerator, denominator)
    try:
        s, t = noise._rational_scale(scale)
    except ValueError:  # refused, never rounded to a smaller scale
        assert scale > 2**60
        return
    assert 1 <= s < 2**62
    assert 1 <= t < 2**62
    assert Fraction(t, s) >= scale  # realised ε = Δ·s/t <= Δ/scale
    if max(scale.numerator, scale.denominator) < 2**61:
        assert Fraction(t, s) == scale  # short enough: not rounded at all
    else:  # and not needlessly noisier: t and s are each within one unit of the scale's
        assert Fraction(t - 1, s + 1) < scale


def test_discrete_laplace_zero_scale_is_exact() -> None:
    assert np.array_equal(discrete_laplace(SeededSource(0), Fraction(0), 5), np.zeros(5))


def test_discrete_laplace_refuses_negative_scale() -> None:
    with pytest.raises(ValueError, match="non-negative"):
        discrete_laplace(SeededSource(0), Fraction(-1), 3)


@pytest.mark.parametrize("epsilon", [1e-19, 4e-19, 1e-17])
def test_count_too_noisy_to_draw_fails_before_spending(epsilon: float) -> None:
    # 1e-19 and 4e-19 used to raise ValueError *after* the budget was charged;
    # every scale beyond noise.MAX_SCALE (2**56) is now refused before the spend.
    df = pd.DataFrame({"x": [1.0, 2.0, 3.0]})
    budget = df.dp.set_budget(epsilon=1, seed=0)
    with pytest.raises(ValueError, match="epsilon"):
        df.dp.count(epsilon=epsilon)
    assert budget.spent == 0


def test_count_at_the_largest_scale_is_released() -> None:
    df = pd.DataFrame({"x": [1.0, 2.0, 3.0]})
    budget = df.dp.set_budget(epsilon=1, seed=0)
    assert isinstance(df.dp.count(epsilon=2.0**-56), int)
    assert budget.spent == Fraction(repr(2.0**-56))


# ----------------------------------------------------------------- discrete Gaussian

GAUSS_CASES = [
    pytest.param(Fraction(1, 3), id="below-one-1/3"),
    pytest.param(Fraction(1, 5), id="below-one-1/5"),
    pytest.param(Fraction(2), id="integer-2"),
    pytest.param(Fraction(7, 3), id="rational-7/3"),
    pytest.param(Fraction(50), id="integer-50"),
    pytest.param(Fraction(2**60 + 1, 2**59), id="wide-fraction-above-one"),
    pytest.param(Fraction(2**29 + 1, 2**31), id="wide-fraction-below-one"),
    pytest.param(Fraction(2**57 + 12345), id="grid-2**57"),
    pytest.param(Fraction(noise.MAX_SIGMA2), id="largest-2**60"),
]


@pytest.mark.parametrize("sigma2", GAUSS_CASES)
def test_discrete_gaussian_matches_exact_pmf(
    sigma2: Fraction, assert_dgauss_sigma2: Callable[[np.ndarray, Fraction], None]
) -> None:
    draws = discrete_gaussian(SeededSource(5), sigma2, 100_000)
    assert draws.dtype == np.int64
    assert_dgauss_sigma2(draws, sigma2)


@pytest.mark.parametrize("sigma2", [Fraction(7, 3), Fraction(2**60 + 1, 2**59)])
def test_discrete_gaussian_few_draws_match_exact_pmf(
    sigma2: Fraction, assert_dgauss_sigma2: Callable[[np.ndarray, Fraction], None]
) -> None:
    source = SeededSource(8)  # the Python-integer path, one call per 4 draws
    draws = np.concatenate([discrete_gaussian(source, sigma2, 4) for _ in range(5_000)])
    assert_dgauss_sigma2(draws, sigma2)


@pytest.mark.parametrize("sigma2", [Fraction(1, 3), Fraction(7, 3), Fraction(2**40 + 1, 3)])
def test_discrete_gaussian_variance_is_tight(
    sigma2: Fraction, dgauss_variance: Callable[[float], float]
) -> None:
    n = 200_000
    draws = discrete_gaussian(SeededSource(21), sigma2, n).astype(np.float64)
    sample = float(np.mean(draws**2))  # the mean is 0 by symmetry
    for factor, must_pass in ((1.0, True), (0.5, False), (2.0, False)):
        exact = dgauss_variance(float(sigma2) * factor)
        # 6 standard errors of a mean of squares (kurtosis at most about 3)
        assert (abs(sample / exact - 1) < 6 * math.sqrt(2 / n)) == must_pass, factor


def test_discrete_gaussian_is_symmetric() -> None:
    draws = discrete_gaussian(SeededSource(4), Fraction(5, 2), 200_000)
    positive, negative = int(np.sum(draws > 0)), int(np.sum(draws < 0))
    assert scipy.stats.binomtest(positive, positive + negative).pvalue > 1e-6


def test_discrete_gaussian_zero_variance_is_exact() -> None:
    assert np.array_equal(discrete_gaussian(SeededSource(0), Fraction(0), 5), np.zeros(5))


@pytest.mark.parametrize("size", [3, 1000])
def test_discrete_gaussian_same_seed_same_draws(size: int) -> None:
    first = discrete_gaussian(SeededSource(42), Fraction(7, 3), size)
    again = discrete_gaussian(SeededSource(42), Fraction(7, 3), size)
    other = discrete_gaussian(SeededSource(43), Fraction(7, 3), size)
    assert np.array_equal(first, again)
    assert not np.array_equal(first, other)


@pytest.mark.parametrize("source", [SeededSource(9), SystemSource()], ids=["seeded", "system"])
def test_discrete_gaussian_leaves_global_random_state_alone(source: noise.RandomSource) -> None:
    np_state, py_state = np.random.get_state(), random.getstate()  # noqa: NPY002
    discrete_gaussian(source, Fraction(7, 3), 5)
    discrete_gaussian(source, Fraction(2**57), 5_000)
    after = np.random.get_state()  # noqa: NPY002
    assert after[0] == np_state[0]
    assert np.array_equal(after[1], np_state[1])
    assert after[2:] == np_state[2:]
    assert random.getstate() == py_state


@pytest.mark.parametrize(
    ("sigma2", "message"),
    [
        (Fraction(-1), "non-negative"),
        (Fraction(2**61 + 3, 2), "2\\*\\*61"),
        (Fraction(1, 2**61), "2\\*\\*61"),
    ],
)
def test_discrete_gaussian_refuses_what_it_cannot_sample_exactly(
    sigma2: Fraction, message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        discrete_gaussian(SeededSource(0), sigma2, 3)


@pytest.mark.parametrize("sigma", [0.5, 3.0])
def test_discrete_gaussian_agrees_with_opendp(sigma: float) -> None:
    """Two-sample chi-square test against OpenDP's discrete Gaussian (an independent code)."""
    dp = pytest.importorskip("opendp.prelude")
    dp.enable_features("contrib")
    n = 20_000
    domain = dp.vector_domain(dp.atom_domain(T=int), size=n)
    theirs = np.array(dp.m.make_gaussian(domain, dp.l2_distance(T=int), scale=sigma)([0] * n))
    ours = discrete_gaussian(SeededSource(13), Fraction(sigma) ** 2, n)
    cuts = np.arange(-math.ceil(2 * sigma), math.ceil(2 * sigma) + 2)
    table = np.array(
        [
            np.bincount(np.searchsorted(cuts, x, side="right"), minlength=cuts.size + 1)
            for x in (ours, theirs)
        ]
    )
    assert scipy.stats.chi2_contingency(table).pvalue > 1e-6
    # and the test has power: our draws at 1.3x the σ are told apart from OpenDP's
    wider = discrete_gaussian(SeededSource(13), (Fraction(13, 10) * Fraction(sigma)) ** 2, n)
    table[0] = np.bincount(np.searchsorted(cuts, wider, side="right"), minlength=cuts.size + 1)
    assert scipy.stats.chi2_contingency(table).pvalue < 1e-6


# ------------------------------------------------------------------------- Bernoulli


@pytest.mark.parametrize(
    ("whole", "num", "den"),
    [(0, 1, 3), (0, 999, 1000), (1, 0, 1), (2, 1, 2), (3, 2, 7)],
    ids=["1/3", "0.999", "1", "2.5", "3+2/7"],
)
def test_bernoulli_exp_frequency(whole: int, num: int, den: int) -> None:
    n = 1_000_000
    hits = bernoulli_exp(SeededSource(21), _u64([whole] * n), _u64([num] * n), _u64([den] * n))
    target = math.exp(-(whole + num / den))
    k = int(hits.sum())
    assert scipy.stats.binomtest(k, n, target).pvalue > 1e-6
    # The same test rejects a probability off by 3 % (power check).
    assert scipy.stats.binomtest(k, n, target * 0.97).pvalue < 1e-6


def test_bernoulli_exp_of_zero_is_always_true() -> None:
    n = 10_000
    assert bernoulli_exp(SeededSource(2), _u64([0] * n), _u64([0] * n), _u64([1] * n)).all()


def test_bernoulli_exp_huge_integer_part_is_never_true() -> None:
    n = 10_000
    hits = bernoulli_exp(SeededSource(2), _u64([10**6] * n), _u64([0] * n), _u64([1] * n))
    assert not hits.any()


def test_bernoulli_exp_mixed_parameters_elementwise() -> None:
    gammas = [(0, 1, 2), (1, 1, 2), (4, 0, 1)]
    n = 60_000
    whole, num, den = (_u64([g[i] for g in gammas] * n) for i in range(3))
    hits = bernoulli_exp(SeededSource(8), whole, num, den).reshape(n, len(gammas))
    for j, (w, a, b) in enumerate(gammas):
        assert scipy.stats.binomtest(int(hits[:, j].sum()), n, math.exp(-(w + a / b))).pvalue > 1e-6


# --------------------------------------------------------------------------- uniform


@pytest.mark.parametrize(("m", "bins"), [(7, 7), (1000, 1000), (3 * 2**59, 24)])
def test_uniform_below_is_uniform(m: int, bins: int) -> None:
    n = 200_000
    draws = uniform_below(SeededSource(4), _u64([m] * n))
    assert int(draws.max()) < m
    observed = np.bincount((draws // np.uint64(m // bins)).astype(np.int64), minlength=bins)
    assert observed.size == bins
    assert scipy.stats.chisquare(observed).pvalue > 1e-6


def test_uniform_below_one_is_zero() -> None:
    assert not uniform_below(SeededSource(0), _u64([1] * 10)).any()


# ---------------------------------------------------------------------- randomness


def test_same_seed_same_draws() -> None:
    first = discrete_laplace(SeededSource(42), Fraction(7, 2), 1000)
    again = discrete_laplace(SeededSource(42), Fraction(7, 2), 1000)
    assert np.array_equal(first, again)


def test_different_seeds_differ() -> None:
    first = discrete_laplace(SeededSource(42), Fraction(7, 2), 1000)
    other = discrete_laplace(SeededSource(43), Fraction(7, 2), 1000)
    assert not np.array_equal(first, other)


def test_make_source_defaults_to_the_system_csprng() -> None:
    assert isinstance(noise.make_source(None), SystemSource)
    assert isinstance(noise.make_source(3), SeededSource)


def test_system_source_draws_discrete_laplace(
    assert_dlap_scale: Callable[[np.ndarray, float], None],
) -> None:
    # Unseeded: the true scale is rejected with probability about 1e-20.
    assert_dlap_scale(discrete_laplace(SystemSource(), Fraction(3), 20_000), 3.0)


def test_two_unseeded_budgets_draw_different_noise() -> None:
    keys = pd.RangeIndex(50)
    frames = [pd.DataFrame({"k": np.arange(50), "x": np.ones(50)}) for _ in range(2)]
    released = []
    for df in frames:
        df.dp.set_budget(epsilon=1)
        released.append(df.dp.groupby("k", keys=keys).count(epsilon=1))
    assert not released[0].equals(released[1])


TIMEOUT = 120  # generous: the machine is shared and may be busy
posix_only = pytest.mark.skipif(not hasattr(os, "fork"), reason="fork is POSIX")


def _draw_in_child(source: SystemSource, conn: Connection) -> None:  # pragma: no cover - child
    """Runs in the forked child: send 64 words back, or the formatted traceback."""
    try:
        conn.send(("words", source.words(64).tolist()))
    except BaseException:
        conn.send(("error", traceback.format_exc()))
    finally:
        conn.close()


def _words_of_a_forked_child(source: SystemSource) -> list[int]:
    """64 words drawn by a child forked now; its exception or death fails the test."""
    ctx = multiprocessing.get_context("fork")
    receiver, sender = ctx.Pipe(duplex=False)
    child = ctx.Process(target=_draw_in_child, args=(source, sender), daemon=True)
    child.start()
    sender.close()
    try:
        if not receiver.poll(TIMEOUT):
            pytest.fail(f"the forked child sent nothing within {TIMEOUT} s")
        try:
            kind, payload = receiver.recv()
        except EOFError:
            child.join(TIMEOUT)
            pytest.fail(f"the forked child died without an answer (exit code {child.exitcode})")
    finally:
        receiver.close()
        child.join(TIMEOUT)
    if kind == "error":
        pytest.fail(f"the forked child raised:\n{payload}")
    words: list[int] = payload
    return words


@posix_only
def test_a_forked_child_draws_its_own_noise() -> None:
    df = pd.DataFrame({"x": np.arange(100.0)})
    budget = df.dp.set_budget(epsilon=10)
    df.dp.sum("x", clip=(0, 100), epsilon=1)  # the pool now holds unread words
    source = budget.source
    assert isinstance(source, SystemSource)
    child = _words_of_a_forked_child(source)
    parent = source.words(64).tolist()
    assert child != parent


@posix_only
def test_a_forked_child_does_not_inherit_a_held_lock() -> None:
    # Another thread of the parent may be drawing at the moment of the fork.
    source = SystemSource()
    source.words(1)
    with source._lock:
        child = _words_of_a_forked_child(source)
    assert child != source.words(64).tolist()


def test_a_pool_read_by_another_process_is_never_handed_out(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A fork that bypassed the at-fork hook (fork() called from C) leaves the
    # parent's pool in the child: the pid check must drop it.
    source = SystemSource()
    source.words(1)
    assert np.array_equal(copy.copy(source).words(32), copy.copy(source).words(32))
    parents_next = copy.copy(source).words(32)  # what the parent hands out next
    pid = os.getpid()
    monkeypatch.setattr(noise.os, "getpid", lambda: pid + 1)
    assert not np.array_equal(source.words(32), parents_next)


def test_the_pool_starts_small_and_grows_to_its_cap(monkeypatch: pytest.MonkeyPatch) -> None:
    read: list[int] = []
    urandom = os.urandom

    def counting(n: int) -> bytes:
        read.append(n // 8)
        return urandom(n)

    monkeypatch.setattr(noise.os, "urandom", counting)
    source = SystemSource()
    source.words(1)
    assert sum(read) <= 64  # not 32768 words (256 KB) for a first release
    for _ in range(300):
        source.words(1000)
    assert read == sorted(read)
    assert max(read) == SystemSource._POOL_WORDS


@pytest.mark.parametrize("seed", [None, 9])
def test_releases_leave_global_random_state_alone(seed: int | None) -> None:
    np_state, py_state = np.random.get_state(), random.getstate()  # noqa: NPY002
    df = pd.DataFrame({"k": ["a", "b", "a", "c"], "x": [1.0, 2.0, np.nan, 4.0]})
    df.dp.set_budget(epsilon=10, seed=seed)
    df.dp.count(epsilon=1)
    df.dp.sum("x", clip=(0, 5), epsilon=1)
    df.dp.mean("x", clip=(0, 5), epsilon=1)
    g = df.dp.groupby("k", keys=["a", "b", "c", "d"])
    g.count(epsilon=1)
    g.sum("x", clip=(0, 5), epsilon=1)
    g.mean("x", clip=(0, 5), epsilon=1)
    after = np.random.get_state()  # noqa: NPY002
    assert after[0] == np_state[0]
    assert np.array_equal(after[1], np_state[1])
    assert after[2:] == np_state[2:]
    assert random.getstate() == py_state


# ------------------------------------------------------------------------------ grid


@pytest.mark.parametrize(
    ("sensitivity", "epsilon", "magnitude", "exponent"),
    [
        (1.0, Fraction(1), 1.0, -29),  # scale 1 = 2**0 -> 2**(1 - 30)
        (100.0, Fraction(1, 10), 100.0, -20),  # scale 1000 < 2**10
        (200_000.0, Fraction(1), 200_000.0, -12),  # scale < 2**18
        (1.0, Fraction(10), 1.0, -30),  # fine scale: rows must fit in 31 bits
        (0.0, Fraction(1), 3.0, -29),  # no noise: rows decide
        (1e-3, Fraction(10**9), 1e-3, -40),  # 1e-3 < 2**-9
    ],
)
def test_grid_exponent_exact(
    sensitivity: float, epsilon: Fraction, magnitude: float, exponent: int
) -> None:
    assert grid_exponent(sensitivity, epsilon, magnitude) == exponent


@given(
    st.floats(1e-300, 1e300),
    st.fractions(min_value=Fraction(1, 10**6), max_value=10**6),
    st.floats(1e-300, 1e300),
)
def test_grid_exponent_bounds(sensitivity: float, epsilon: Fraction, magnitude: float) -> None:
    k = grid_exponent(sensitivity, epsilon, magnitude)
    step = Fraction(2) ** k
    assert Fraction(magnitude) / step < 2**31  # a clipped row fits in 31 bits
    assert Fraction(sensitivity) / epsilon / step < 2**30  # noise scale at most ~2**30 steps


@pytest.mark.parametrize(
    ("delta", "epsilon", "scale"),
    [
        (1, Fraction(1), 1),
        (10, Fraction(3), 4),
        (10, Fraction(1, 10), 100),
        (7, Fraction(7, 2), 2),
        (2**29, Fraction(1), 2**29),
        (819_200_000, Fraction(1, 2), 1_638_400_000),
        (3, Fraction(10**9), 1),
    ],
)
def test_integer_scale_exact(delta: int, epsilon: Fraction, scale: int) -> None:
    t = integer_scale(delta, epsilon)
    assert t == scale
    assert Fraction(delta, t) <= epsilon


@given(
    st.integers(1, 2**32),
    st.fractions(min_value=Fraction(1, 10**6), max_value=Fraction(10**6)),
)
def test_integer_scale_is_the_smallest_within_epsilon(delta: int, epsilon: Fraction) -> None:
    t = integer_scale(delta, epsilon)
    assert Fraction(delta, t) <= epsilon  # realised epsilon never exceeds the request
    assert t == 1 or Fraction(delta, t - 1) > epsilon  # and no more noise than needed


def test_integer_scale_stops_at_the_largest_drawable_scale() -> None:
    assert integer_scale(2**31, Fraction(2**31, noise.MAX_SCALE)) == noise.MAX_SCALE
    with pytest.raises(ValueError, match="epsilon"):
        integer_scale(2**31, Fraction(2**31, noise.MAX_SCALE + 1))


@pytest.mark.parametrize(
    ("sq_sensitivity", "rho", "magnitude", "exponent"),
    [
        (1.0, Fraction(1, 2), 1.0, -28),  # σ² = 1 in [2**0, 2**1): ceil(1/2) - 29, σ = 2**28 steps
        (1.0, Fraction(1, 8), 1.0, -27),  # σ² = 4 in [2**2, 2**3): ceil(3/2) - 29
        (4e10, Fraction(1, 100), 2e5, -8),  # σ² = 2e12 in [2**40, 2**41): ceil(41/2) - 29
        (1.0, Fraction(2**20), 1.0, -30),  # tiny σ: rows must fit in 31 bits
        (0.0, Fraction(1), 3.0, -29),  # no noise: rows decide
    ],
)
def test_gaussian_grid_exponent_exact(
    sq_sensitivity: float, rho: Fraction, magnitude: float, exponent: int
) -> None:
    assert gaussian_grid_exponent(sq_sensitivity, rho, magnitude) == exponent


@given(
    st.floats(1e-300, 1e300),
    st.fractions(min_value=Fraction(1, 10**6), max_value=10**6),
    st.floats(1e-300, 1e300),
)
def test_gaussian_grid_exponent_bounds(
    sq_sensitivity: float, rho: Fraction, magnitude: float
) -> None:
    k = gaussian_grid_exponent(sq_sensitivity, rho, magnitude)
    step2 = Fraction(2) ** (2 * k)
    assert Fraction(magnitude) / Fraction(2) ** k < 2**31  # a clipped row fits in 31 bits
    assert Fraction(sq_sensitivity) / (2 * rho) / step2 < 2**58  # σ below 2**29 steps
    if k > max(-1074, math.frexp(magnitude)[1] - noise.ROW_BITS):  # the scale decided
        assert Fraction(sq_sensitivity) / (2 * rho) / step2 >= 2**56  # σ at least 2**28 steps


@pytest.mark.parametrize(
    ("sq_sensitivity", "rho", "sigma2"),
    [
        (1, Fraction(1, 100), Fraction(50)),
        (2, Fraction(3, 100), Fraction(100, 3)),
        (1, Fraction(10), Fraction(1, 20)),  # σ < 1 kept exact
        (4, Fraction(1, 2), Fraction(4)),
        (2**40, Fraction(1, 2**19), Fraction(2**58)),
        # a numerator of 61+ bits: rounded up to a multiple of 2**-(60 - 59) = 1/2
        (2**59 + 1, Fraction(3, 2), Fraction(math.ceil(Fraction(2**59 + 1, 3) * 2), 2)),
        # σ² < 1 with a wide fraction: rounded up to a multiple of 2**-30
        (
            1,
            Fraction(2**40 + 1, 2**30),
            Fraction(math.ceil(Fraction(2**30, 2**41 + 2) * 2**30), 2**30),
        ),
    ],
)
def test_gaussian_scale_exact(sq_sensitivity: int, rho: Fraction, sigma2: Fraction) -> None:
    assert gaussian_scale(sq_sensitivity, rho) == sigma2


@given(
    st.integers(1, 2**62),
    st.fractions(min_value=Fraction(1, 10**12), max_value=Fraction(10**6), max_denominator=10**30),
)
def test_gaussian_scale_never_exceeds_rho_and_is_sampleable(
    sq_sensitivity: int, rho: Fraction
) -> None:
    try:
        sigma2 = gaussian_scale(sq_sensitivity, rho)
    except ValueError:
        assert Fraction(sq_sensitivity) / (2 * rho) > noise.MAX_SIGMA2
        return
    assert gaussian_rho(sq_sensitivity, sigma2) <= rho  # realised ρ never exceeds the request
    exact = Fraction(sq_sensitivity) / (2 * rho)
    assert sigma2 - exact <= max(exact * Fraction(1, 2**59), Fraction(1, 2**30))  # barely more
    discrete_gaussian(SeededSource(0), sigma2, 1)  # the sampler takes it (raises otherwise)


def test_gaussian_scale_stops_at_the_largest_drawable_variance() -> None:
    assert gaussian_scale(2, Fraction(1, noise.MAX_SIGMA2)) == noise.MAX_SIGMA2
    with pytest.raises(ValueError, match="rho"):
        gaussian_scale(2, Fraction(1, noise.MAX_SIGMA2 + 1))
