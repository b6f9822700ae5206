"""Randomness and exact noise: the only module that draws random numbers.

Everything here works on unsigned 64-bit words from an injected
:class:`RandomSource`; no floats are involved in sampling, so the output
distributions are exact (Canonne, Kamath & Steinke 2020, Algorithms 1-2),
vectorized with integer numpy.  This module imports no pandas.

- :func:`make_source`: a CSPRNG (``os.urandom``) by default, or a seeded
  PCG64 word stream for reproducible tests (not private).
- :func:`discrete_laplace`: exact draws with ``P(Z = z) ∝ exp(-|z| / scale)``
  for a rational ``scale``.
- :func:`discrete_gaussian`: exact draws with ``P(Z = z) ∝ exp(-z²/(2σ²))``
  for a rational ``σ²`` (CKS Algorithm 3), for zCDP releases.
- :func:`bernoulli_exp`: exact ``Bernoulli(exp(-gamma))`` for rational
  ``gamma >= 0`` (used by the exponential-mechanism family).
- :func:`grid_exponent` and :func:`integer_scale`: the data-independent grid
  ``2**k`` that real-valued statistics are rounded to, and the integer noise
  scale on that grid; :func:`gaussian_grid_exponent` and
  :func:`gaussian_scale` are their analogues for the discrete Gaussian.
"""

from __future__ import annotations

import math
import os
import threading
import weakref
from dataclasses import dataclass
from fractions import Fraction
from typing import Protocol

import numpy as np
from numpy.typing import NDArray

from .zcdp import gaussian_sigma2

__all__ = [
    "GRID_BITS",
    "MAX_SCALE",
    "MAX_SIGMA2",
    "ROW_BITS",
    "Gauss",
    "Noise",
    "RandomSource",
    "SeededSource",
    "SystemSource",
    "bernoulli_exp",
    "discrete_gaussian",
    "discrete_laplace",
    "draw_noise",
    "gaussian_grid_exponent",
    "gaussian_scale",
    "grid_exponent",
    "integer_scale",
    "make_source",
    "uniform_below",
]

#: The array types of the package, defined once.
U64 = NDArray[np.uint64]
I64 = NDArray[np.int64]
F64 = NDArray[np.float64]
Bools = NDArray[np.bool_]

#: The noise scale is about ``2**GRID_BITS`` grid steps.
GRID_BITS = 30
#: Every rounded, clipped row fits in ``ROW_BITS`` bits (so chunked float64
#: sums of up to 2**21 rows, and int64 sums of up to 2**32 rows, are exact).
ROW_BITS = 31
#: Integer parameters of the samplers stay below this bound.
_MAX_INT = 1 << 62
#: Largest noise scale a release may use: a draw then exceeds int64 with
#: probability below exp(-2**7), so nothing fails after the spend.
MAX_SCALE = 1 << 56
#: Largest variance ``σ²`` of a discrete Gaussian release (σ = 2**30): the
#: sampler's integers then fit in 64 bits (see :func:`discrete_gaussian`).
MAX_SIGMA2 = 1 << 60


class RandomSource(Protocol):
    """A stream of uniform 64-bit words."""

    def words(self, n: int) -> U64:
        """Return ``n`` independent uniform words."""
        ...


class SystemSource:
    """The operating system's CSPRNG (``os.urandom``), read in pooled chunks.

    The default source of every budget.  Thread-safe.  The pool starts at
    :attr:`_FIRST_WORDS` words and doubles on each refill up to
    :attr:`_POOL_WORDS`, so a first release reads little.

    Every process draws its own randomness: a forked child never hands out
    words its parent read.  Two mechanisms, for two kinds of fork:

    - an ``os.register_at_fork`` hook empties the pool of every live source
      in the child (and replaces its lock, which another thread of the
      parent may have held at the fork): covers ``os.fork()`` and
      multiprocessing's ``fork`` start method;
    - each draw compares ``os.getpid()`` with the process that filled the
      pool and empties it on a mismatch: covers a fork that bypasses the
      interpreter's hooks (``fork()`` called from C).
    """

    _FIRST_WORDS = 1 << 6
    _POOL_WORDS = 1 << 15

    def __init__(self) -> None:
        self._reset()
        _LIVE_SOURCES.add(self)

    def _reset(self) -> None:
        """An empty pool owned by this process (also run in a forked child)."""
        self._lock = threading.Lock()
        self._pool: U64 = np.empty(0, dtype=np.uint64)
        self._refill = self._FIRST_WORDS
        self._pid = os.getpid()

    def words(self, n: int) -> U64:
        pid = os.getpid()
        with self._lock:
            if pid != self._pid:  # forked without the at-fork hook: drop the parent's words
                self._pool, self._refill, self._pid = self._pool[:0], self._FIRST_WORDS, pid
            if n > self._pool.size:
                fresh = max(n - self._pool.size, self._refill)
                self._refill = min(2 * self._refill, self._POOL_WORDS)
                extra = np.frombuffer(os.urandom(8 * fresh), dtype="<u8")
                self._pool = np.concatenate([self._pool, extra], dtype=np.uint64)  # writable
            out, self._pool = self._pool[:n], self._pool[n:]
        return out

    def __repr__(self) -> str:
        return "SystemSource()"


#: Every live SystemSource, so a forked child can empty their pools (weak: no leak).
_LIVE_SOURCES: weakref.WeakSet[SystemSource] = weakref.WeakSet()


def _reset_sources_after_fork() -> None:
    for source in list(_LIVE_SOURCES):
        source._reset()


if hasattr(os, "register_at_fork"):  # POSIX
    os.register_at_fork(after_in_child=_reset_sources_after_fork)


class SeededSource:
    """A reproducible word stream (``PCG64(seed).random_raw``).

    For tests and teaching only: it is **not private**, since anyone who knows
    the seed can recompute the noise and subtract it.  Raw PCG64 streams are
    stable across numpy versions.
    """

    def __init__(self, seed: int) -> None:
        self.seed = seed
        self._bits = np.random.PCG64(seed)
        self._lock = threading.Lock()

    def words(self, n: int) -> U64:
        with self._lock:
            raw = self._bits.random_raw(n)
        return np.asarray(raw, dtype=np.uint64).reshape(n)

    def __repr__(self) -> str:
        return f"SeededSource(seed={self.seed})"


def make_source(seed: int | None) -> RandomSource:
    """The CSPRNG when ``seed`` is None, else a seeded (non-private) stream."""
    return SystemSource() if seed is None else SeededSource(seed)


# --------------------------------------------------------------------------- uniforms


def _bitmask(v: U64) -> U64:
    """Smallest ``2**b - 1 >= v`` elementwise (float rounding only enlarges it)."""
    _, exp = np.frexp(v.astype(np.float64))
    return np.left_shift(np.uint64(1), exp.astype(np.uint64)) - np.uint64(1)


def uniform_below(src: RandomSource, m: U64) -> U64:
    """Exact uniform integers in ``[0, m)`` elementwise (``1 <= m < 2**63``)."""
    m = np.asarray(m, dtype=np.uint64)
    out = np.empty(m.shape, dtype=np.uint64)
    mask = _bitmask(m - np.uint64(1))
    pending = np.arange(m.size)
    m_p, mask_p = m, mask
    while pending.size:
        r = src.words(pending.size) & mask_p
        ok = r < m_p
        out[pending[ok]] = r[ok]
        miss = ~ok
        pending, m_p, mask_p = pending[miss], m_p[miss], mask_p[miss]
    return out


def _uniform_fixed(src: RandomSource, m: int, size: int) -> U64:
    """Exact uniform integers in ``[0, m)``, one bound for all ``size`` draws."""
    mask = np.uint64((1 << (m - 1).bit_length()) - 1)
    out = src.words(size) & mask
    if m & (m - 1):  # not a power of two: reject and redraw what falls outside
        bad = np.flatnonzero(out >= m)
        while bad.size:
            out[bad] = src.words(bad.size) & mask
            bad = bad[out[bad] >= m]
    return out


def _uniform(src: RandomSource, m: int | U64, size: int) -> U64:
    return _uniform_fixed(src, m, size) if isinstance(m, int) else uniform_below(src, m)


# ------------------------------------------------------------------------- Bernoullis


def _bern_exp_frac(src: RandomSource, num: U64, den: int | U64) -> NDArray[np.bool_]:
    """Exact ``Bernoulli(exp(-num/den))`` for ``0 <= num <= den`` (CKS Alg. 1).

    K = 1, 2, ...: continue while ``Bernoulli(gamma / K)`` succeeds; the result
    is whether the final K is odd.  ``Bernoulli(gamma/K)`` is drawn as
    ``Bernoulli(gamma) and Bernoulli(1/K)``, which never overflows.  All
    pending draws share the same K, so ``Bernoulli(1/K)`` has one bound.
    """
    n = num.size
    out = np.empty(n, dtype=np.bool_)
    pending = np.arange(n)
    num_p, den_p = num, den
    k = 1
    while pending.size:
        hit = _uniform(src, den_p, pending.size) < num_p
        if k > 1:
            hit &= _uniform_fixed(src, k, pending.size) == 0
        out[pending[~hit]] = k % 2 == 1
        pending, num_p = pending[hit], num_p[hit]
        if not isinstance(den_p, int):
            den_p = den_p[hit]
        k += 1
    return out


def _bern_exp1(src: RandomSource, size: int) -> NDArray[np.bool_]:
    """Exact ``Bernoulli(exp(-1))``: K = 2, 3, ... while ``Bernoulli(1/K)``; K odd."""
    out = np.empty(size, dtype=np.bool_)
    pending = np.arange(size)
    k = 2
    while pending.size:
        hit = _uniform_fixed(src, k, pending.size) == 0
        out[pending[~hit]] = k % 2 == 1
        pending = pending[hit]
        k += 1
    return out


def bernoulli_exp(src: RandomSource, whole: U64, num: U64, den: U64) -> NDArray[np.bool_]:
    """Exact ``Bernoulli(exp(-(whole + num/den)))`` elementwise.

    ``whole`` is a non-negative integer part, ``0 <= num < den`` the fraction.
    The integer part is ``whole`` independent ``Bernoulli(exp(-1))`` trials
    that must all succeed; survivors shrink by a factor e each round, so the
    loop is short even when ``whole`` is huge.
    """
    whole = np.asarray(whole, dtype=np.uint64)
    den = np.asarray(den, dtype=np.uint64)
    same = den.size > 0 and bool((den == den.flat[0]).all())
    ok = _bern_exp_frac(src, np.asarray(num, dtype=np.uint64), int(den.flat[0]) if same else den)
    pending = np.flatnonzero(ok & (whole > 0))
    left = whole[pending]
    while pending.size:
        survive = _bern_exp1(src, pending.size)
        ok[pending[~survive]] = False
        left = left - np.uint64(1)
        keep = survive & (left > 0)
        pending, left = pending[keep], left[keep]
    return ok


# --------------------------------------------------------------------- discrete Laplace


def _geometric(src: RandomSource, s: int, t: int, n: int) -> I64:
    """Exact draws with ``P(Y = y) ∝ exp(-y·s/t)``, y >= 0 (CKS geometric_exp_fast)."""
    u = np.empty(n, dtype=np.uint64)
    pending = np.arange(n)
    while pending.size:
        cand = _uniform_fixed(src, t, pending.size)
        ok = _bern_exp_frac(src, cand, t)
        u[pending[ok]] = cand[ok]
        pending = pending[~ok]
    v = np.zeros(n, dtype=np.uint64)
    pending = np.arange(n)
    while pending.size:
        pending = pending[_bern_exp1(src, pending.size)]
        v[pending] += np.uint64(1)
    # y = (u + t·v) // s computed as q·v + (u + r·v) // s with t = q·s + r, so that a
    # large t (a discrete Gaussian's proposal) does not overflow 64 bits.
    q, r = divmod(t, s)
    if n and int(v.max()) < (_MAX_INT - t) // max(q, r, 1):
        y = np.uint64(q) * v + (u + np.uint64(r) * v) // np.uint64(s)
        return y.astype(np.int64)
    # Astronomically rare: exact Python integers instead of uint64.
    big = [(int(a) + t * int(b)) // s for a, b in zip(u, v, strict=True)]
    if big and max(big) >= 1 << 63:
        raise OverflowError("discrete Laplace draw exceeds int64")
    return np.array(big, dtype=np.int64)


def _rational_scale(scale: Fraction | int) -> tuple[int, int]:
    """``(s, t)`` with ``s/t <= 1/scale`` and both below 2**62 (privacy only improves)."""
    s, t = scale.denominator, scale.numerator
    shift = max(s.bit_length(), t.bit_length()) - 61
    if shift > 0:
        s, t = s >> shift, -((-t) >> shift)
    if s == 0:
        raise ValueError("the noise scale is too large to sample; use a larger `epsilon`")
    return s, max(t, 1)


def discrete_laplace(src: RandomSource, scale: Fraction | int, size: int) -> I64:
    """Exact discrete Laplace draws, ``P(Z = z) ∝ exp(-|z| / scale)`` (CKS Alg. 2).

    ``scale == 0`` gives zeros (a statistic that cannot change needs no noise).
    A scale whose numerator or denominator exceeds 2**61 is rounded so that the
    realised privacy loss never exceeds the requested one.  A few draws use the
    same algorithm on Python integers (less overhead than numpy passes); many
    draws are vectorized with integer numpy.
    """
    if scale < 0:
        raise ValueError(f"`scale` must be non-negative, got {scale}.")
    if scale == 0 or size == 0:
        return np.zeros(size, dtype=np.int64)
    s, t = _rational_scale(scale)
    if size <= _SCALAR_DRAWS:
        words = _Words(src)
        return np.array([_dlap_scalar(words, s, t) for _ in range(size)], dtype=np.int64)
    return _dlap(src, s, t, size)


def _dlap(src: RandomSource, s: int, t: int, size: int) -> I64:
    """Exact draws with ``P(Z = z) ∝ exp(-|z|·s/t)``, vectorized (CKS Alg. 2)."""
    out = np.empty(size, dtype=np.int64)
    pending = np.arange(size)
    while pending.size:
        negative = (src.words(pending.size) & np.uint64(1)).astype(np.bool_)
        y = _geometric(src, s, t, pending.size)
        keep = ~(negative & (y == 0))
        out[pending[keep]] = np.where(negative, -y, y)[keep]
        pending = pending[~keep]
    return out


# The scalar path: the same exact algorithms on Python integers, for few draws.

#: Up to this many draws, :func:`discrete_laplace` samples on Python integers.
_SCALAR_DRAWS = 8


class _Words:
    """Hands out a source's words one at a time as Python ints, fetched in batches of 32.

    The batch is a list popped from its end; :func:`_dlap_scalar` pops it
    directly (the same words in the same order as :meth:`next`).
    """

    __slots__ = ("_batch", "_src")

    def __init__(self, src: RandomSource) -> None:
        self._src = src
        self._batch: list[int] = []

    def refill(self) -> list[int]:
        """A fresh batch (the current one is empty)."""
        self._batch = self._src.words(32).tolist()
        return self._batch

    def next(self) -> int:
        return (self._batch or self.refill()).pop()


def _uniform_scalar(words: _Words, m: int) -> int:
    if m == 1:
        return 0
    mask = (1 << (m - 1).bit_length()) - 1
    while True:
        r = words.next() & mask
        if r < m:
            return r


def _bern_exp_frac_scalar(words: _Words, num: int, den: int) -> bool:
    k = 1
    while _uniform_scalar(words, den) < num and _uniform_scalar(words, k) == 0:
        k += 1
    return k % 2 == 1


def _dlap_scalar(words: _Words, s: int, t: int) -> int:
    """One draw of :func:`_dlap`'s law: CKS Algorithm 2 on Python integers.

    The steps of :func:`_uniform_scalar` and :func:`_bern_exp_frac_scalar`
    written out over the words' batch (the hot path of every ungrouped
    release): the same words consumed in the same order, so the same draw.
    """
    batch = words._batch
    t_mask = (1 << (t - 1).bit_length()) - 1
    while True:
        if not batch:
            batch = words.refill()
        negative = batch.pop() & 1
        while True:  # u uniform in [0, t), accepted with probability exp(-u/t)
            u = 0
            if t > 1:
                while True:
                    if not batch:
                        batch = words.refill()
                    u = batch.pop() & t_mask
                    if u < t:
                        break
            k = 1  # Bernoulli(exp(-u/t)): K = 1, 2, ... while U[0, t) < u and U[0, K) == 0
            while True:
                r = 0
                if t > 1:
                    while True:
                        if not batch:
                            batch = words.refill()
                        r = batch.pop() & t_mask
                        if r < t:
                            break
                if r >= u:
                    break
                if k > 1:
                    k_mask = (1 << (k - 1).bit_length()) - 1
                    while True:
                        if not batch:
                            batch = words.refill()
                        r = batch.pop() & k_mask
                        if r < k:
                            break
                    if r:
                        break
                k += 1
            if k % 2 == 1:
                break
        v = 0  # Bernoulli(exp(-1)) trials until one fails: K = 2, 3, ... while U[0, K) == 0
        while True:
            k = 2
            while True:
                k_mask = (1 << (k - 1).bit_length()) - 1
                while True:
                    if not batch:
                        batch = words.refill()
                    r = batch.pop() & k_mask
                    if r < k:
                        break
                if r:
                    break
                k += 1
            if k % 2 == 0:
                break
            v += 1
        y = (u + t * v) // s
        if not (negative and y == 0):
            return -y if negative else y


# -------------------------------------------------------------------- discrete Gaussian
#
# Canonne, Kamath & Steinke 2020 ("The Discrete Gaussian for Differential
# Privacy", NeurIPS), Algorithm 3: propose Y from a discrete Laplace of scale
# t, accept with probability exp(-(|Y| - σ²/t)²/(2σ²)).  For every t > 0,
#
#     exp(-|y|/t) · exp(-(|y| - σ²/t)²/(2σ²)) = exp(-y²/(2σ²)) · exp(-σ²/(2t²)),
#
# so an accepted Y has exactly the discrete Gaussian's law; t only sets the
# acceptance rate.  CKS take t = floor(σ) + 1.  With σ² = a/b we take, for
# σ >= 1, t = σ²/τ with the integer shift τ = floor(σ) instead: the exponent
# becomes (|Y| - τ)²·b/(2a), a fraction with denominator 2a < 2**62, where
# CKS's t gives a denominator near 2σ⁴ (2**121 at σ = 2**30) that 64-bit words
# cannot hold.  The acceptance rate is about the same (≈ 0.7 for large σ:
# exp(-τ²/(2σ²))·N(σ)·tanh(τ/(2σ²)) with N(σ) ≈ σ·sqrt(2π)).  For σ < 1 we take CKS's
# t = 1 (τ = σ²): the exponent is (b|Y| - a)²/(2ab).  Both cases share the form
#
#     γ = (c·|Y| - e)² · m / den,
#
# drawn exactly as Bernoulli(exp(-γ)) by :func:`bernoulli_exp` (integer part
# and fraction).  Squares that would overflow 64 bits, beyond about 2.8σ,
# are handled on Python integers one at a time (a few per cent of proposals).

#: Up to this many bits, ``a`` (and ``a·b`` when ``σ² < 1``) keeps every word below 2**62.
_GAUSS_BITS = 61


def _gauss_params(sigma2: Fraction) -> tuple[int, int, int, int, int, int]:
    """``(s, t, c, e, m, den)``: proposal ``dLap`` of rate ``s/t`` and ``γ = (c|Y| − e)²·m/den``."""
    a, b = sigma2.numerator, sigma2.denominator
    if a >= b:  # σ >= 1
        tau = math.isqrt(a // b)  # floor(σ), exact: floor(sqrt(x)) = isqrt(floor(x))
        ok, params = a < 1 << _GAUSS_BITS, (b * tau, a, 1, tau, b, 2 * a)
    else:
        ok, params = a * b < 1 << _GAUSS_BITS, (1, 1, b, a, 1, 2 * a * b)
    if not ok:
        raise ValueError(
            f"`sigma2` must have a numerator below 2**{_GAUSS_BITS} (and numerator times "
            f"denominator below 2**{_GAUSS_BITS} when below 1) to be sampled exactly; got "
            "one with more bits. Round it up with pandas_dp.core.noise.gaussian_scale."
        )
    return params


def discrete_gaussian(src: RandomSource, sigma2: Fraction | int, size: int) -> I64:
    """Exact discrete Gaussian draws, ``P(Z = z) ∝ exp(-z²/(2·sigma2))`` (CKS Alg. 3).

    Parameters
    ----------
    src : RandomSource
        The randomness (the budget's CSPRNG, or a seeded source for tests).
    sigma2 : Fraction or int
        The variance parameter ``σ²``, exact.  0 gives zeros.  Its numerator
        must be below ``2**61`` (and numerator × denominator below ``2**61``
        when ``σ² < 1``); :func:`gaussian_scale` always returns such a value.
    size : int
        How many independent draws.

    Returns
    -------
    numpy.ndarray of int64

    Notes
    -----
    Rejection from a discrete Laplace proposal with an exact
    ``Bernoulli(exp(-γ))`` acceptance, all in integer arithmetic, so the law
    is exact (see the comment above this function for the choice of the
    proposal's scale).  Vectorized: each round draws every pending proposal
    in a few numpy passes and about 30 % are redrawn, so ``size`` draws take
    a handful of rounds.  A few draws run the same algorithm on Python
    integers.  The same source state gives the same draws.
    """
    sigma2 = Fraction(sigma2)
    if sigma2 < 0:
        raise ValueError(f"`sigma2` must be non-negative, got {sigma2}.")
    if sigma2 == 0 or size == 0:
        return np.zeros(size, dtype=np.int64)
    s, t, c, e, m, den = _gauss_params(sigma2)
    if size <= _SCALAR_DRAWS:
        words = _Words(src)
        return np.array(
            [_dgauss_scalar(words, s, t, c, e, m, den) for _ in range(size)], dtype=np.int64
        )
    out = np.empty(size, dtype=np.int64)
    pending = np.arange(size)
    while pending.size:
        y = _dlap(src, s, t, pending.size)
        ok = _gauss_accept(src, np.abs(y), c, e, m, den)
        out[pending[ok]] = y[ok]
        pending = pending[~ok]
    return out


@dataclass(frozen=True)
class Gauss:
    """Discrete Gaussian noise of variance parameter ``sigma2`` (integer or grid units).

    Where a plan's noise is described by a discrete Laplace scale (a
    Fraction or an int), a Gaussian plan has this instead: :func:`draw_noise`
    and :func:`pandas_dp.mechanisms.accuracy.units_half_width` take either.  False when
    ``sigma2`` is 0 (no noise, as a Laplace scale of 0).
    """

    sigma2: Fraction

    def __bool__(self) -> bool:
        return self.sigma2 > 0

    @property
    def sigma(self) -> float:
        """``σ``, for the ledger's noise scale (text only; the draws use ``sigma2`` exactly)."""
        return math.sqrt(self.sigma2)


#: A plan's noise: a discrete Laplace scale, or :class:`Gauss`.
Noise = Fraction | int | Gauss


def draw_noise(src: RandomSource, noise: Noise, size: int) -> I64:
    """``size`` independent draws of ``noise``: discrete Laplace of that scale, or Gaussian."""
    if isinstance(noise, Gauss):
        return discrete_gaussian(src, noise.sigma2, size)
    return discrete_laplace(src, noise, size)


def _gauss_accept(src: RandomSource, y: I64, c: int, e: int, m: int, den: int) -> Bools:
    """Exact ``Bernoulli(exp(-(c·y − e)²·m/den))`` elementwise, for ``y >= 0``."""
    # c·y <= fits keeps (c·y − e)²·m below 2**63 (e²·m < 2**61 by _gauss_params)
    fits = math.isqrt(((1 << 63) - 1) // m) // c
    small = y <= fits
    ok = np.empty(y.size, dtype=np.bool_)
    cy = y[small].astype(np.uint64) * np.uint64(c)
    d = np.where(cy >= np.uint64(e), cy - np.uint64(e), np.uint64(e) - cy)
    sq = d * d * np.uint64(m)
    whole, num = np.divmod(sq, np.uint64(den))
    ok[small] = bernoulli_exp(src, whole, num, np.full(whole.size, den, dtype=np.uint64))
    big = np.flatnonzero(~small)
    if big.size:
        words = _Words(src)
        for i in big:
            whole_i, num_i = divmod((c * int(y[i]) - e) ** 2 * m, den)
            ok[i] = _bern_exp_scalar(words, whole_i, num_i, den)
    return ok


def _bern_exp_scalar(words: _Words, whole: int, num: int, den: int) -> bool:
    """Exact ``Bernoulli(exp(-(whole + num/den)))`` on Python integers (any ``whole``)."""
    if not _bern_exp_frac_scalar(words, num, den):
        return False
    # ``whole`` Bernoulli(exp(-1)) trials that must all succeed; each fails with
    # probability 1 - 1/e, so all() stops after a few even for a huge ``whole``
    return all(_bern_exp_frac_scalar(words, 1, 1) for _ in range(whole))


def _dgauss_scalar(words: _Words, s: int, t: int, c: int, e: int, m: int, den: int) -> int:
    while True:
        y = _dlap_scalar(words, s, t)
        whole, num = divmod((c * abs(y) - e) ** 2 * m, den)
        if _bern_exp_scalar(words, whole, num, den):
            return y


# ------------------------------------------------------------------------------ grid


def _binade(x: Fraction) -> int:
    """``math.frexp(x)[1]`` computed exactly: the e with ``2**(e-1) <= x < 2**e`` (x > 0)."""
    e = x.numerator.bit_length() - x.denominator.bit_length()
    return e + 1 if x >= Fraction(2) ** e else e


def grid_exponent(
    sensitivity: Fraction | float, epsilon: Fraction, magnitude: Fraction | float
) -> int:
    """The exponent k of the grid step ``2**k`` for a real-valued statistic.

    Chosen from public parameters only: about ``scale / 2**GRID_BITS`` with
    ``scale = sensitivity / epsilon``, but never so fine that a row of absolute
    value ``magnitude`` (the largest a clipped, centred row can take) needs more
    than ``ROW_BITS`` bits.  Exact rational arithmetic: no float overflow for
    extreme scales.
    """
    scale = Fraction(sensitivity) / epsilon
    by_scale = _binade(scale) - GRID_BITS if scale > 0 else -1074
    by_rows = _binade(Fraction(magnitude)) - ROW_BITS if magnitude > 0 else -1074
    return max(by_scale, by_rows, -1074)


def integer_scale(delta: int, epsilon: Fraction) -> int:
    """``T = ceil(delta / epsilon)``: the integer noise scale on the grid.

    The realised epsilon ``delta / T`` never exceeds ``epsilon``.  Raises
    ValueError when ``T`` exceeds :data:`MAX_SCALE` (call it before spending).
    """
    t = math.ceil(Fraction(delta) / epsilon)
    if t > MAX_SCALE:
        raise ValueError(
            f"`epsilon` is too small for this release: the noise scale would need {t.bit_length()} "
            "bits. Use a larger epsilon."
        )
    return t


def gaussian_grid_exponent(
    sq_sensitivity: Fraction | float, rho: Fraction, magnitude: Fraction | float
) -> int:
    """The exponent k of the grid step ``2**k`` for a real-valued statistic under zCDP.

    The analogue of :func:`grid_exponent` for the discrete Gaussian: from
    public parameters only, ``σ = sqrt(Δ₂²/(2ρ))`` (``sq_sensitivity = Δ₂²`` in
    data units) lies in ``[2**(GRID_BITS - 2), 2**(GRID_BITS - 1))`` grid steps,
    one bit below the Laplace scale, so that after the sensitivity is rounded
    to the grid, ``σ²`` still stays below :data:`MAX_SIGMA2`.  As there, a row
    of absolute value ``magnitude`` never needs more than ``ROW_BITS`` bits.
    Exact: the binade of ``σ²`` halved, rounded up.
    """
    sigma2 = Fraction(sq_sensitivity) / (2 * Fraction(rho))
    # σ² in [2**(E-1), 2**E) gives σ < 2**(E/2) <= 2**ceil(E/2) and σ >= 2**((E-1)/2)
    by_scale = -(-_binade(sigma2) // 2) - (GRID_BITS - 1) if sigma2 > 0 else -1074
    by_rows = _binade(Fraction(magnitude)) - ROW_BITS if magnitude > 0 else -1074
    return max(by_scale, by_rows, -1074)


def gaussian_scale(sq_sensitivity: Fraction | int, rho: Fraction) -> Fraction:
    """``σ² >= Δ₂²/(2ρ)``: the discrete Gaussian's variance on the grid, exactly sampleable.

    The analogue of :func:`integer_scale`.  ``sq_sensitivity`` is ``Δ₂²`` in
    grid units (an integer for rows on the grid).  The exact ``Δ₂²/(2ρ)``
    (:func:`pandas_dp.core.zcdp.gaussian_sigma2`) is returned as it is when
    :func:`discrete_gaussian` can sample it; otherwise it is rounded UP to a
    multiple of ``2**-j`` with a numerator of at most 60 bits (``σ² >= 1``) or
    to a multiple of ``2**-30`` (``σ² < 1``), a relative change below
    ``2**-59`` (resp. ``2**-30/σ²``).  So the realised
    ``ρ = Δ₂²/(2σ²)`` never exceeds ``rho``.  Raises ValueError when ``σ²``
    exceeds :data:`MAX_SIGMA2` (call it before spending).

    Examples
    --------
    >>> gaussian_scale(1, Fraction(1, 100))
    Fraction(50, 1)
    >>> gaussian_scale(2, Fraction(3, 100))
    Fraction(100, 3)
    """
    exact = gaussian_sigma2(sq_sensitivity, rho)
    if exact > MAX_SIGMA2:
        raise ValueError(
            f"`rho` is too small for this release: the noise variance would need "
            f"{math.ceil(exact).bit_length()} bits (at most {MAX_SIGMA2.bit_length() - 1}). "
            "Use a larger rho."
        )
    a, b = exact.numerator, exact.denominator
    if exact >= 1:
        if a < 1 << _GAUSS_BITS:
            return exact
        j = max(0, 60 - math.ceil(exact).bit_length())  # numerator <= 2**60 below
        return Fraction(math.ceil(exact * 2**j), 2**j)
    if a * b < 1 << _GAUSS_BITS:
        return exact
    return Fraction(math.ceil(exact * 2**30), 2**30)
