"""Joint quantiles, exactly: the exponential mechanism over ordered outputs (JointExp).

Gillenwater, Joseph and Kulesza, "Differentially Private Quantiles", ICML 2021:
one exponential mechanism over every non-decreasing vector of outputs, whose
utility is minus the total distance between the rows in each gap of the vector
and the rows the levels put there.  Here the outputs are points of a public
grid, and the release is sampled from exact integer arithmetic.

The output space
----------------
Each grid point ``c`` stands for ``SUB + 1`` *virtual points* ``(c, t)``,
``t = 0..SUB``, at the rank ``lo(c) + t/SUB·eq(c)`` (``lo(c) = #(x < c)``,
``eq(c) = #(x = c)``): a point carrying many rows is spread over the ranks
its rows span, so a level inside a tie finds a virtual point near it.  In
units of ``1/(SUB·D)`` rows (``D`` the common denominator of the levels) the
position of ``(c, t)`` is the integer ``R = D·(SUB·lo(c) + t·eq(c))``,
non-decreasing along the virtual points.  The mechanism samples a
non-decreasing sequence ``v_1 <= ... <= v_m`` of virtual points, uniformly
weighted (every such sequence is one output), with probability proportional
to ``Π_j κ(|R(v_j) − R(v_{j−1}) − G_j|)`` over the ``m + 1`` gaps (``R(v_0) =
0``, ``R(v_{m+1}) = D·SUB·n``, target ``G_j = D·SUB·(q_j − q_{j−1})·n``), and
answers the grid points of the ``v_j``.

Privacy
-------
One row added moves every position by ``δ(v) ∈ [0, D·SUB]``, non-decreasing
along the virtual points (0 below the row, ``D·SUB`` above it, ``t·D`` at its
own point), and every target by ``D·SUB·(q_j − q_{j−1})``; so the gaps'
counts move by a non-negative vector of sum ``D·SUB`` and the utility ``−Σ_j
|gap_j − G_j|`` by at most ``2·D·SUB·(1 − min_j (q_j − q_{j−1}))`` (the
``Δ`` of :func:`pandas_dp.kinds.quantile.plan_joint`).  The kernel κ maps
to exact dyadic numbers (float64 mantissas, exponents of any size), with
``e^{−c} <= κ(k+1)/κ(k) <= e^{c}`` for every ``k``
(:class:`Kernel`), so the mechanism is ``2·c·Δ``-DP, as the exponential
mechanism: each output's weight moves by at most ``e^{cΔ}``, and so does the
sum of the weights.

Sampling, exactly
-----------------
The sequences are counted by a forward pass over *runs* (maximal sets of
virtual points at one position, ``w_b`` points at ``R_b``), with states
``(b, k)``: the sequence so far ends with ``k`` outputs in run ``b`` (a stay
of ``k`` outputs in a run of ``w`` points is ``C(w + k − 1, k)`` sequences).
The pass is computed in floating point as *upper bounds* ``Â`` of the exact
sums, each value a float64 mantissa with an integer exponent of its own (the
weights of the states span thousands of binary orders: at 10**6 rows a gap
is missed by up to 2,000 rows, hundreds of nats, and the likely vectors'
states weigh far less than the best state of their layer).  Every term is
non-negative; a sum aligns its terms to its largest and raises those below
``2**-1000`` of it to that (upward), so each sum's relative error is at most
its number of roundings times 2**-53, far inside the margin ``1 + 2**-24``
(or more, :func:`margin`) every value is multiplied by.  Into a run, the
sum over the runs before it is an envelope of κ over a segment tree
(:func:`_cross`), within ``1 + 2**-30`` of the exact sum.  The kernel has no
floor: an error of 10**6 rows weighs e**-10**6 and is told from one of
10**6 + 1 rows, so a large table's vectors are weighed as the mechanism
says, however far every vector misses.  A proposal is
drawn backwards from them with exact integer weights, and accepted with the
exact probability ``Π [ω·Â_prev·T / (g·Â)]`` over its steps (:func:`_propose`:
``g/T`` the step's proposal probability, each factor at most 1 because ``Â``
bounds the sum it stands for, with the margin to spare for the integers'
rounding up), computed exactly (Python integers, powers of two).  An accepted proposal is
distributed exactly as the mechanism: ``q(o)·a(o)`` is proportional to the
weight of ``o``, whatever the rounding of the floating-point pass.  Then each
stay's virtual points are a uniform multiset of its run.  One forward pass
per key, ``O(B·m² + B·m·log B)`` with ``B`` runs and ``m`` levels; a proposal
is accepted with probability at least about ``(1 + margin)**−m``, in practice
``1 − O(2**-20)``.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from decimal import ROUND_FLOOR, Decimal, localcontext
from fractions import Fraction

import numpy as np

from ..core.noise import F64, I64, RandomSource, uniform_below

__all__ = ["SUB", "Forward", "Kernel", "Runs", "forward", "joint_sample", "kernel", "runs"]

#: Virtual points per grid point, beyond the first (the tie resolution: 1/SUB of a tie).
SUB = 16
#: Every computed upper bound is multiplied by at least ``1 + MARGIN`` (:func:`margin`).
MARGIN = 2.0**-24
#: A kernel's argument has at most this many bits (fewer at large rates:
#: :func:`kernel` keeps every exponent of a kernel value within ``2**50``).
BITS = 60
#: The exponent of zero in the forward pass's values (below every other).
ZERO = -(1 << 62)
#: A term of a sum below ``2**LOW`` of the sum's largest is raised to it (no underflow).
LOW = -1000
#: An acceptance probability below ``2**-DEEP`` is drawn in two parts (:func:`_bernoulli`).
DEEP = 900
#: The smallest rate per unit (smaller: the kernel's rounding would not be covered).
MIN_RATE = Fraction(1, 2**36)
_U = 2.0**-53
_TWO = Fraction(2)


#: Bits of ``k`` per table of the kernel (tables of ``2**LEVEL_BITS`` entries).
LEVEL_BITS = 12


@dataclass(frozen=True, eq=False)
class Kernel:
    """``κ(k) = g(k)``, a float64 mantissa times a power of two of any size: exact dyadics.

    ``g(k)`` is the product, in order, of ``tables[l][(k >> 12·l) & 4095]``
    (mantissas in [1/2, 1) with exponents of their own), each entry the
    float64 product (over the set bits ``i`` of its index, in increasing
    order) of ``powers[i + 12·l]``, an upper bound of ``ρ**(2**i)`` within
    an ulp, ``ρ = 2**L`` for ``L`` a decimal upper bound of
    ``log2(e**−rate·(1 + 2**-40))``.  So ``g(k)`` is within ``1 − 60·2**-53``
    and ``1 + 179·2**-53`` of ``ρ**k``, and ``e**−rate <= g(k+1)/g(k) <= 1``
    for every ``k`` (proof in :func:`kernel`): the factor ``1 + 2**-40``
    absorbs the roundings *relatively*, and the exponents keep every value,
    however far down (an error of 10**6 rows weighs e**-10**6, and is still
    told from one of 10**6 + 1).  :meth:`values` gives mantissas and exponents,
    :meth:`parts` one value's.
    """

    rate: Fraction
    mants: tuple[F64, ...]
    exps: tuple[I64, ...]
    bits: int

    def values(self, k: I64) -> tuple[F64, I64]:
        """``κ(|k|)`` as mantissas in [1/2, 1) and exponents: exact (``|k| < 2**bits``)."""
        k = np.abs(np.asarray(k, dtype=np.int64))
        mask = (1 << LEVEL_BITS) - 1
        f: F64 = self.mants[0][k & mask]
        e: I64 = self.exps[0][k & mask]
        for level in range(1, len(self.mants)):
            index = (k >> (LEVEL_BITS * level)) & mask
            f = f * self.mants[level][index]
            e = e + self.exps[level][index]
        return _split(f, e)

    def log(self, k: I64) -> F64:
        """``ln κ(|k|)`` in float64 (a product of kernels is a sum of these)."""
        f, e = self.values(k)
        out: F64 = np.log(f) + e * math.log(2)
        return out

    def parts(self, k: int) -> tuple[float, int]:
        """``κ(|k|)`` as one mantissa and its exponent (exact)."""
        f, e = self.values(np.array([k]))
        return float(f[0]), int(e[0])

    def envelope(self, k: I64) -> tuple[F64, I64]:
        """Upper bounds of ``g(k)`` that survive products: ``g(k)·(1 + 2048·2**-53)``.

        A product of ``r >= 1`` of them (each product rounded once) bounds
        ``g`` of the sum of their arguments: ``g(a) >= ρ**a·(1 − 60u)``, so each
        is at least ``ρ**a·(1 + 1980u)``, and ``g(Σ) <= ρ**Σ·(1 + 179u)``.
        """
        f, e = self.values(k)
        return f * (1 + 2048 * _U), e


@functools.lru_cache(maxsize=256)
def kernel(rate: Fraction) -> Kernel:
    """The kernel of ``rate`` (per unit of the utility): data-free, cached.

    ``L``: ``(ln(1 + 2**-40) − rate)/ln 2 + 10**-90`` in 110 decimal digits,
    at least ``log2(e**−rate·(1 + 2**-40))`` (each decimal operation is within
    ``10**-108`` of its value); ``powers[i]``: ``2**(2**i·L)`` as ``2**e`` times
    ``2**(f + 10**-80)`` (``e`` the floor, ``f`` the fraction, the exponential
    within ``10**-100``), converted to the float64 above it.  Proof of the
    ratio bounds, with ``β = e**−rate``, ``ρ = 2**L`` (so ``ρ >= β·(1 +
    2**-40)``) and ``u = 2**-53``: ``g(k)`` is a product of at most 60 powers,
    each within ``1 + 2u`` above ``ρ**(2**i)``, by 59 float64 products, each
    within ``1 ± u``: ``ρ**k·(1 − 60u) <= g(k) <= ρ**k·(1 + 179u)``.  So
    ``g(k+1)/g(k) >= ρ·(1 − 240u) >= β`` (``2**-40 = 8192u``) and ``<= ρ·(1 +
    240u) <= 1`` (``rate >= 2**-36``, ``rate <= 1``): ``e**−rate <=
    κ(k+1)/κ(k) <= 1 <= e**rate``, the exponential mechanism's condition.
    """
    if not MIN_RATE <= rate <= 1:
        raise ValueError("the rate is too small for the joint quantiles' kernel")
    # |log2 κ(k)| <= rate·k/ln 2 < 2**50 for every k below 2**bits: a vector's
    # weight, m + 1 kernels, keeps its exponent far above ZERO (m <= MAX_LEVELS of
    # quantile.py).  At the rates of plan_joint (at most 2/(16·scale) per unit),
    # 2**(bits − 1) units are at least 2**35 rows, for any scale.
    bits = min(BITS, 49 + (rate.denominator // rate.numerator).bit_length() - 1)
    with localcontext() as ctx:
        ctx.prec = 110
        ln2 = Decimal(2).ln()
        low = Decimal(rate.numerator) / Decimal(rate.denominator)
        top = ((1 + Decimal(2) ** -40).ln() - low) / ln2 + Decimal(10) ** -90
        mants: list[float] = []
        exps: list[int] = []
        for i in range(bits):
            x = top * (1 << i)
            whole = int(x.to_integral_value(ROUND_FLOOR))
            f = ((x - whole + Decimal(10) ** -80) * ln2).exp()  # in [1, 2], up to 10**-79
            mants.append(_float_above(f / 2))
            exps.append(whole + 1)
    levels = -(-bits // LEVEL_BITS)
    mants += [1.0] * (levels * LEVEL_BITS - bits)
    exps += [0] * (levels * LEVEL_BITS - bits)
    index = np.arange(1 << LEVEL_BITS, dtype=np.int64)
    tables_f, tables_e = [], []
    for level in range(levels):
        table_f, table_e = np.ones(index.size), np.zeros(index.size, dtype=np.int64)
        for i in range(LEVEL_BITS):
            bit = ((index >> i) & 1).astype(np.bool_)
            table_f = np.where(bit, table_f * mants[level * LEVEL_BITS + i], table_f)
            table_e = np.where(bit, table_e + exps[level * LEVEL_BITS + i], table_e)
        f_, d_ = np.frexp(table_f)  # exact
        tables_f.append(f_)
        tables_e.append(table_e + d_)
    return Kernel(rate, tuple(tables_f), tuple(tables_e), bits)


def _float_above(value: Decimal) -> float:
    """The smallest float64 >= ``value`` (``value`` positive, at most about 1)."""
    out = float(value)
    if Fraction(out) < Fraction(value):
        out = float(np.nextafter(out, np.inf))
    return out


# ------------------------------------------------------------------------ runs


@dataclass(frozen=True)
class Runs:
    """The runs of virtual points of one key: positions, sizes, first virtual point, total."""

    position: I64
    size: I64
    first: I64
    total: int


def runs(below: I64, equal: I64, scale: int, sub: int = SUB) -> Runs:
    """The runs of one key from its rows strictly between grid points and at them.

    ``below[j]``: rows with ``c_{j−1} < x < c_j`` (``j = len(grid)``: above the
    last point); ``equal[j]``: rows at ``c_j``.  Positions in units of
    ``1/(sub·scale)`` rows (``scale``: the levels' common denominator).
    """
    m = equal.size
    lo = np.cumsum(below[:m]) + np.concatenate([[0], np.cumsum(equal[:-1])])
    n = int(below.sum() + equal.sum())
    tied = equal > 0
    # Each point: one position (no rows on it, all sub + 1 virtual points there), or
    # sub + 1 positions lo + t·eq/sub.
    per = np.where(tied, sub + 1, 1)
    starts = np.repeat(np.arange(m, dtype=np.int64) * (sub + 1), per)
    t = np.arange(per.sum()) - np.repeat(np.cumsum(per) - per, per)
    pos = scale * (sub * np.repeat(lo, per) + t * np.repeat(equal, per))
    size = np.where(np.repeat(tied, per), 1, sub + 1)
    first = starts + np.where(np.repeat(tied, per), t, 0)
    new = np.concatenate([[True], pos[1:] != pos[:-1]])
    heads = np.flatnonzero(new)
    sizes = np.add.reduceat(size, heads) if pos.size else size
    return Runs(pos[heads], sizes.astype(np.int64), first[heads], scale * sub * n)


# --------------------------------------------------------------- forward pass
#
# The weights of the states span thousands of binary orders (a gap missed by
# a thousand rows weighs e**-260 at a quarter per row, and the likely vectors
# of a large table miss every gap by hundreds of rows): each value is kept as
# a float64 mantissa in [1/2, 1) and its own integer exponent, ``f·2**e``
# (zero: ``f = 0``, ``e = ZERO``).  A sum aligns its terms to its largest; a
# term below ``2**LOW`` of it is raised to that (an upper bound, and a
# relative excess of at most ``2**(LOW + 1)`` per term).


def _split(x: F64, e: I64) -> tuple[F64, I64]:
    """``x·2**e`` (``x >= 0``, finite) as mantissas and exponents, exactly."""
    f, d = np.frexp(x)
    return f, np.where(f > 0, e + d, ZERO)


def _align(f: F64, e: I64, top: I64) -> F64:
    """``f·2**(e − top)`` for ``e <= top``: exact, or ``2**LOW`` where that is smaller."""
    d = np.maximum(e - top, LOW)
    out: F64 = np.where(f > 0, np.ldexp(f, d), 0.0)
    return out


def _add(f: F64, e: I64, g: F64, h: I64) -> tuple[F64, I64]:
    """``f·2**e + g·2**h``, one rounding (and the raise of :func:`_align`)."""
    top = np.maximum(e, h)
    return _split(_align(f, e, top) + _align(g, h, top), top)


def _mul(f: F64, e: I64, c: F64, d: I64 | int = 0) -> tuple[F64, I64]:
    """``f·2**e·c·2**d`` (``0 <= c``, finite), one rounding."""
    return _split(f * c, e + d)


def _total(f: F64, e: I64) -> tuple[F64, I64]:
    """The sum along the last axis: at most its length of roundings."""
    top = e.max(axis=-1)
    return _split(_align(f, e, top[..., None]).sum(axis=-1), top)


def _cross(kern: Kernel, pos: I64, sf: F64, se: I64, anchor: I64) -> tuple[F64, I64]:
    """``Σ_{a < b} src[a]·κ(|pos[a] − anchor[b]|)`` bounded above, for every run ``b``.

    ``src = sf·2**se``.  A segment tree over the runs holds, per node, its
    sources' sum decayed to its first position (``right``: for anchors before
    the node) and to its last (``left``: anchors after it); each query adds
    ``O(log B)`` nodes times the decay from the node to the anchor, by the
    envelope of κ (:meth:`Kernel.envelope`: at most ``2·log2(B) + 1`` of them
    per term, within ``1 + 2**-30`` of κ together).  Sums of
    non-negative terms only.
    """
    size = pos.size
    width = 1 << max(size - 1, 0).bit_length()
    first = np.full(2 * width, pos[-1], dtype=np.int64)
    last = first.copy()
    zf, ze = np.zeros(2 * width), np.full(2 * width, ZERO, dtype=np.int64)
    rf, re_, lf, le = zf.copy(), ze.copy(), zf.copy(), ze.copy()
    first[width : width + size] = pos
    last[width : width + size] = pos
    rf[width : width + size], re_[width : width + size] = sf, se
    lf[width : width + size], le[width : width + size] = sf, se
    level = width
    while level > 1:
        parent = np.arange(level // 2, level)
        lc, rc = 2 * parent, 2 * parent + 1
        first[parent], last[parent] = first[lc], last[rc]
        decayed = _mul(rf[rc], re_[rc], *kern.envelope(first[rc] - first[lc]))
        rf[parent], re_[parent] = _add(rf[lc], re_[lc], *decayed)
        decayed = _mul(lf[lc], le[lc], *kern.envelope(last[rc] - last[lc]))
        lf[parent], le[parent] = _add(lf[rc], le[rc], *decayed)
        level //= 2
    split = np.searchsorted(pos, anchor, side="right")  # sources at or before the anchor
    b = np.arange(size)
    of, oe = np.zeros(size), np.full(size, ZERO, dtype=np.int64)
    for lo_, hi_, before in ((0, np.minimum(split, b), True), (np.minimum(split, b), b, False)):
        lo = np.broadcast_to(np.asarray(lo_, dtype=np.int64), (size,)) + width
        hi = hi_.astype(np.int64) + width
        while True:
            active = lo < hi
            if not active.any():
                break
            for node, take in ((lo, active & (lo & 1 == 1)), (hi - 1, active & (hi & 1 == 1))):
                picked = node[take]
                if before:  # anchor after every source of the node
                    decay = kern.envelope(anchor[take] - last[picked])
                    add = _mul(lf[picked], le[picked], *decay)
                else:
                    decay = kern.envelope(first[picked] - anchor[take])
                    add = _mul(rf[picked], re_[picked], *decay)
                of[take], oe[take] = _add(of[take], oe[take], *add)
            lo = (lo + (active & (lo & 1 == 1))) >> 1
            hi = (hi - (active & (hi & 1 == 1))) >> 1
    return of, oe


@dataclass
class Forward:
    """Upper bounds ``mant[j, b, k − 1]·2**expo[j, b, k − 1]`` of the weight of states ``(b, k)``.

    After output j; see :func:`forward`.
    """

    mant: F64
    expo: I64


def margin(count: int) -> float:
    """The relative margin of the forward bounds for proposals among ``count`` states.

    A proposal step draws among at most ``count`` integer weights, the largest
    at least ``2**59/count`` (:func:`_ints`), each rounded up by less than 1 (and
    by ``4u`` relatively): their total exceeds the sum they stand for by at
    most ``count**2·2**-59`` relatively, which the margin must cover with the
    forward pass's own roundings (``2**-24``, far above them): a step's
    acceptance factor stays at most 1.  A proposal is accepted with probability
    at least about ``(1 + margin)**-m``.
    """
    return MARGIN + float(count) ** 2 * 2.0**-56


def forward(kern: Kernel, r: Runs, targets: I64) -> Forward:
    """The forward pass over ``m = len(targets) − 1`` outputs (upper bounds).

    Into run ``b`` from the runs ``a < b``: ``Σ_a src[a]·κ(pos[b] − pos[a] −
    target)``, bounded by :func:`_cross`; every value then multiplied by
    ``1 + margin(B·m)`` (:func:`margin`).
    """
    m = targets.size - 1
    if r.total >= 1 << (kern.bits - 1):  # at rates of plan_joint: 3·10**10 rows and more
        raise ValueError(
            "a key holds more rows than joint quantiles can weigh exactly (about 3*10**10): "
            "split it into smaller keys."
        )
    pos, w = r.position, r.size.astype(np.float64)
    mant = np.zeros((m, pos.size, m))
    expo = np.full((m, pos.size, m), ZERO, dtype=np.int64)
    up = 1 + margin(pos.size * m)
    for j in range(m):
        if j == 0:
            kf, ke = kern.values(pos - targets[0])
            mant[0, :, 0], expo[0, :, 0] = _mul(kf, ke, w * up)
            continue
        sf, se = _total(mant[j - 1], expo[j - 1])  # each run's states, summed
        summed = _cross(kern, pos, sf, se, pos - targets[j])
        mant[j, :, 0], expo[j, :, 0] = _mul(*summed, w * up)
        stay, stay_e = kern.parts(int(targets[j]))
        k = np.arange(2, j + 2, dtype=np.float64)
        factor = (w[:, None] + k[None, :] - 1) / k[None, :]  # C(w + k − 1, k) step by step
        stays = _mul(mant[j - 1, :, :j], expo[j - 1, :, :j], stay * factor * up, stay_e)
        mant[j, :, 1 : j + 1], expo[j, :, 1 : j + 1] = stays
    return Forward(mant, expo)


# ----------------------------------------------------------------- backward


def _up_int(x: F64, e: int) -> I64:
    """Integers ``>= x·2**e``, at least 1 where ``x > 0`` (its rounding covered by 4 ulps)."""
    scaled = np.ceil(np.ldexp(x * (1 + 4 * _U), e))
    out: I64 = np.where(x > 0, np.maximum(scaled, 1.0), 0.0).astype(np.int64)
    return out


class _Stream:
    """A source's words one at a time, as Python ints, fetched 16 at a time."""

    __slots__ = ("_batch", "_src")

    def __init__(self, src: RandomSource) -> None:
        self._src = src
        self._batch: list[int] = []

    def word(self) -> int:
        if not self._batch:
            self._batch = self._src.words(16).tolist()
        return self._batch.pop()

    def first_below(self, m: int) -> int:
        """An exact uniform integer in ``[0, m)``, ``1 <= m < 2**63``, by the shared sampler."""
        return int(uniform_below(self._src, np.array([m], dtype=np.uint64))[0])

    def below(self, m: int) -> int:
        """An exact uniform integer in ``[0, m)``, ``1 <= m <= 2**64`` (rejection)."""
        mask = (1 << (m - 1).bit_length()) - 1
        while True:
            r = self.word() & mask
            if r < m:
                return r


def _pick(src: _Stream, weights: I64, first: bool = False) -> int:
    """An index drawn with probability ``weights[i] / Σ weights`` (int64, sum < 2**63).

    ``first``: by :func:`~pandas_dp.core.noise.uniform_below` (each draw of a
    release starts with a sampler of the noise module).
    """
    total = np.cumsum(weights)
    u = src.first_below(int(total[-1])) if first else src.below(int(total[-1]))
    return int(np.searchsorted(total, u, side="right"))


def _scale_for(weights: F64, count: int) -> int:
    """The exponent that brings the largest weight near ``2**61 / count``."""
    top = float(weights.max())
    return 61 - max(count, 1).bit_length() - math.frexp(top)[1]


@dataclass
class Ratio:
    """A product ``Π nums / Π dens · 2**power`` of exact numbers (ints and float64s)."""

    nums: list[int | float]
    dens: list[int | float]
    power: int = 0

    def approx(self) -> tuple[float, int]:
        """The product as a mantissa in [0.5, 1) and an exponent of any size.

        Within ``2·(len(nums) + len(dens))`` roundings of it: each factor is
        converted once (one rounding) and multiplied into the mantissa (one
        rounding); the exponents add exactly, so nothing underflows.
        """
        mantissa, exponent = 1.0, self.power
        for x, sign in [(x, 1) for x in self.nums] + [(x, -1) for x in self.dens]:
            f, e = math.frexp(float(x))
            mantissa = mantissa * f if sign > 0 else mantissa / f
            exponent += e * sign
            mantissa, e = math.frexp(mantissa)
            exponent += e
        return mantissa, exponent

    def exact(self) -> Fraction:
        out = Fraction(1)
        for x in self.nums:
            out *= Fraction(x)
        for x in self.dens:
            out /= Fraction(x)
        return out * _TWO**self.power


def _bernoulli(src: _Stream, p: Ratio) -> bool:
    """Exact ``Bernoulli(p)`` for ``0 <= p <= 1``: a uniform's bits, compared lazily.

    The first 64 bits decide unless they fall within the float product's
    error bound of ``p``; then ``p`` is computed exactly and further bits
    drawn until the uniform's interval lies on one side of it.  A ``p`` below
    ``2**-DEEP`` (a proposal far from every likely vector: the kernel has no
    floor) first needs the uniform's leading ``d`` bits to be 0, ``p <
    2**-d`` (drawn lazily: a 1 among them, almost surely in the first word,
    answers False), and the rest of the uniform, fresh bits, is compared with
    ``p·2**d``: ``P(True) = 2**-d·p·2**d = p``, with no product that
    underflows and no power of two of a million digits.
    """
    mantissa, exponent = p.approx()
    if mantissa and exponent < -DEEP:
        leading = -exponent - 2  # p < 2**(exponent + 1) (slack included) <= 2**-leading / 2
        while leading > 0:
            take = min(leading, 64)
            if src.word() >> (64 - take):
                return False
            leading -= take
        p = Ratio(p.nums, p.dens, p.power - exponent - 2)
        mantissa, exponent = p.approx()
    approx = math.ldexp(mantissa, exponent)
    slack = 4 * (len(p.nums) + len(p.dens) + 2) * _U
    bits, draw = 52, src.word() >> 12  # 52 bits: exact in float64
    low, high = math.ldexp(draw, -bits), math.ldexp(draw + 1, -bits)
    if high <= approx * (1 - slack):
        return True
    if low >= approx * (1 + slack):
        return False
    exact = p.exact()
    while True:
        if Fraction(draw + 1, 1 << bits) <= exact:
            return True
        if Fraction(draw, 1 << bits) >= exact:
            return False
        draw = (draw << 64) | src.word()
        bits += 64


def _multiset(src: _Stream, size: int, k: int) -> list[int]:
    """A uniform multiset of ``k`` of ``range(size)``, sorted (a k-subset of size + k − 1)."""
    n = size + k - 1
    chosen: set[int] = set()
    for top in range(n - k, n):  # Floyd's algorithm
        t = src.below(top + 1)
        chosen.add(top if t in chosen else t)
    return [c - i for i, c in enumerate(sorted(chosen))]


def joint_sample(
    src: RandomSource,
    kern: Kernel,
    r: Runs,
    targets: I64,
    sub: int = SUB,
    fw: Forward | None = None,
) -> I64:
    """One exact draw of the mechanism: the grid index of each output, non-decreasing.

    ``fw``: the forward pass of these runs and targets, if already computed
    (keys with the same table share it).
    """
    m = targets.size - 1
    if fw is None:
        fw = forward(kern, r, targets)
    pos, w = r.position, r.size
    end = kern.values(r.total - pos - targets[m])
    stream = _Stream(src)
    while True:
        path, accept = _propose(stream, kern, fw, pos, w, targets, end, r.total)
        if _bernoulli(stream, accept):
            break
    out: list[int] = []
    for b, k in path:
        out += [int(r.first[b]) + v for v in _multiset(stream, int(w[b]), k)]
    virtual = np.array(out, dtype=np.int64)
    return virtual // (sub + 1)


def _ints(f: F64, e: I64) -> tuple[I64, int]:
    """Integers ``g >= f·2**e·2**s`` (at least 1 where ``f > 0``) and ``s``: the largest near 2**61.

    The terms below ``2**-1000`` of the largest are raised to it first (:func:`_align`).
    """
    top = int(e.max())
    x = _align(f, e, np.asarray(top))
    s = _scale_for(x, x.size)
    return _up_int(x, s), s - top


def _propose(
    src: _Stream,
    kern: Kernel,
    fw: Forward,
    pos: I64,
    w: I64,
    targets: I64,
    end: tuple[F64, I64],
    r_total: int,
) -> tuple[list[tuple[int, int]], Ratio]:
    """A path drawn backwards from the upper bounds, and its exact acceptance probability.

    Returns the stays ``[(run, length), ...]`` in order.  With edge weights
    ``ω`` (the mechanism's) and stored bounds ``Â``, the acceptance is
    ``Π_steps ω·Â_prev·T/g · 1/Â``, each factor at most 1 (``g/T``: the
    step's proposal probability, ``g >= ω·Â_prev·2**s`` and ``T <=
    2**s·Â``).
    """
    m = targets.size - 1
    mant, expo = fw.mant, fw.expo
    g, s = _ints(*_mul(mant[m - 1], expo[m - 1], end[0][:, None], end[1][:, None]))
    flat = _pick(src, g.reshape(-1), first=True)
    b, k1 = divmod(flat, m)
    last, last_e = kern.parts(int(r_total - pos[b] - targets[m]))
    here = float(mant[m - 1, b, k1])
    accept = Ratio([last, here], [int(g.flat[flat])], s + int(expo[m - 1, b, k1]) + last_e)
    k = k1 + 1  # arrived at layer m − 1 in run b, its stay k outputs long
    stays: list[tuple[int, int]] = []
    j = m - 1
    while True:
        stays.append((b, k))
        for _ in range(k - 1):  # down the stay: layer j in (b, k) from layer j − 1 in (b, k − 1)
            stay, stay_e = kern.parts(int(targets[j]))
            accept.nums += [stay, int(w[b]) + k - 1, float(mant[j - 1, b, k - 2])]
            accept.dens += [k, float(mant[j, b, k - 1])]
            accept.power += int(expo[j - 1, b, k - 2]) - int(expo[j, b, k - 1]) + stay_e
            j, k = j - 1, k - 1
        here, here_e = float(mant[j, b, 0]), int(expo[j, b, 0])
        if j == 0:
            start, start_e = kern.parts(int(pos[b] - targets[0]))
            accept.nums += [int(w[b]), start]
            accept.dens += [here]
            accept.power += start_e - here_e
            break
        kf, ke = kern.values(pos[b] - pos[:b] - targets[j])
        kf = kf * float(w[b])
        weighed = _mul(mant[j - 1, :b, :j], expo[j - 1, :b, :j], kf[:, None], ke[:, None])
        g, _ = _ints(*weighed)
        total = int(g.sum())
        flat = _pick(src, g.reshape(-1))
        a, ka = divmod(flat, j)
        step, step_e = kern.parts(int(pos[b] - pos[a] - targets[j]))
        accept.nums += [int(w[b]), step, float(mant[j - 1, a, ka]), total]
        accept.dens += [int(g.flat[flat]), here]
        accept.power += int(expo[j - 1, a, ka]) - here_e + step_e
        b, k = a, ka + 1
        j -= 1
    return stays[::-1], accept
