"""Private clip bounds without any bound from the user: ``df.dp.bounds(column, epsilon=...)``.

Mechanism (ALGORITHMS-style)
----------------------------
Candidates are public and fixed: ``C = (0, 2**J0, 2**(J0+1), ..., 2**J1)``
(:data:`CANDIDATES`, ``J0 = -20``, ``J1 = 100``), read upwards.  Each side of
the data is searched on its own, with half of the bounds' ε:

* upper side: the tail counts ``u_j = #{x > C[j]}``;
* lower side: ``l_j = #{x < -C[j]}`` (the same on ``-x``).

On each side, AboveThreshold (the sparse vector technique; Dwork & Roth,
*The Algorithmic Foundations of Differential Privacy*, 2014, Alg. 1 and
Thm. 3.23; the monotone variant of Lyu, Su & Li, "Understanding the Sparse
Vector Technique for Differential Privacy", PVLDB 2017, Alg. 7) stops at the
first candidate whose tail is small::

    ρ ~ dLap(Δ/ε₁)                 (once per key)
    ν_j ~ dLap(c·Δ/ε₂)             (per candidate)
    stop at the first j with  u_j + ν_j ≤ T + ρ
    upper = MARGIN · C[j]          (C[J1] if no candidate stops)

with ``ε₁ = ¾·ε_side`` (:data:`RHO_SHARE`), ``ε₂ = ¼·ε_side``, the public
threshold ``T = ⌈5/4·(Δ/ε₁ + c·Δ/ε₂)⌉`` (:data:`THRESHOLD` noise scales:
once the true tail is 0, each query stops with high probability, and a
threshold noise far below ``-T``, the cause of a bound many doublings too
high, is rare), and ``Δ`` the count sensitivity of the
neighbour relation (1 for one row per person; ``max_rows`` (× ``max_groups``
over the keys of a grouped release, in L1), twice that under substitute, with
a privacy unit).  ``c = 1`` when one person moves every tail count of a key
the same way (a row added or removed, a row's value changed, or a person's
rows added or removed: every ``u_j`` moves up, or every one down), ``c = 2``
otherwise (a person's rows replaced under substitute).  Privacy: the pmf
ratio of a discrete Laplace of scale ``b`` under an integer shift ``s`` is
exactly ``exp(|s|/b)``, so the continuous proof (shift ρ by Δ, and the
stopping query's noise by ``c·Δ``) holds with integer counts and integer
thresholds as written, each side ε_side-DP, both sides ε by sequential
composition.  The lower side's answer is ``-MARGIN·C[j]`` likewise.  Over the
keys of a grouped release each key runs its own search; with Δ an L1 bound
over keys the privacy losses of the keys add up to at most ε (parallel
composition).  The stop index is the only output: a post-processing turns it
into a bound, and ``(0, 2**J0)`` is answered when both sides stop at 0.

Exact integer statistics: per key, the histogram of each row's position in
``C`` (``#{c ∈ C : x > c}`` and the same for ``-x``); tail counts are its
reverse cumulative sums, so slices (Dask partitions) add up.  NaN rows are
skipped (as every release skips them).

``MARGIN = 2``: the bound is one doubling above where the tail became
small (about ``T`` rows lie beyond the stop: clipping a heavy tail costs a
mean more than the wider noise grid does).  The constants were tuned on the
PUMS income column and on generated salaries (``bench/bench_bounds.py``): a
larger threshold or margin helps the heavy tail a little and costs the light
one noise; a lower threshold lets a side's search overshoot
(a threshold noise far below ``-T`` stops nothing).  They are public,
data-free.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Hashable, Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from ..accounting.ledger import LedgerEntry
from ..core.noise import F64, I64, RandomSource, discrete_laplace, integer_scale
from ..core.text import column_names, figures
from ..core.validation import Clip, check_clip, check_column, numeric_values, selection_loss
from .base import Declared, ExampleColumns, Kind, Neighbours, Rows, Stats, ledger_entry
from .signature import EPSILON, MAX_ROWS, REQUIRED, RHO_SELECT, Form, Param, Signature

__all__ = [
    "CANDIDATES",
    "MARGIN",
    "THRESHOLD",
    "BoundsPlan",
    "ClipBounds",
    "ClippedShare",
    "SharePlan",
    "positions",
    "tail_counts",
]

#: The smallest and largest power of two searched.
J0, J1 = -20, 100
#: The public candidates: 0, then the powers of two from 2**J0 to 2**J1.
CANDIDATES: F64 = np.concatenate([[0.0], np.ldexp(1.0, np.arange(J0, J1 + 1))])
#: The tail count (per key) AboveThreshold stops at, before noise, in noise scales.
THRESHOLD = Fraction(5, 4)
#: The share of a side's ε that noises the threshold (the rest noises the queries).
RHO_SHARE = Fraction(3, 4)
#: The bound is this multiple of the candidate where the search stopped.
MARGIN = 2.0


@dataclass(frozen=True)
class BoundsPlan:
    """AboveThreshold on each side: threshold noise ``rho_scale``, query noise ``nu_scale``."""

    sensitivity: int
    rho_scale: Fraction
    nu_scale: Fraction
    threshold: int
    #: One person moves every tail count of a key the same way (c = 1; else c = 2).
    monotone: bool

    def declared(self) -> tuple[Declared, Declared]:
        """Each side's: Δ over the keys, weighted by what a key's move costs of ε.

        A key whose tail counts moved by at most δ costs ``δ/Δ`` of the
        threshold's share (:data:`RHO_SHARE`) and ``c_k·δ/(c·Δ)`` of the
        queries' (``c_k`` 1 if they all moved one way, else 2).
        """
        c = 1 if self.monotone else 2
        rest = 1 - RHO_SHARE
        side = Declared(self.sensitivity, weights=(RHO_SHARE + rest / c, RHO_SHARE + 2 * rest / c))
        return side, side


@functools.lru_cache(maxsize=512)  # plans are pure functions of public parameters
def plan_bounds(epsilon: Fraction, neighbours: Neighbours) -> BoundsPlan:
    """Half of ``epsilon`` per side; each side half to the threshold, half to the queries."""
    delta = neighbours.count_sensitivity()
    # One person moves every tail count the same way except when its rows are replaced.
    c = 2 if (neighbours.unit and not neighbours.monotone) else 1
    side = epsilon / 2
    rho = Fraction(delta) / (side * RHO_SHARE)
    nu = Fraction(c * delta) / (side * (1 - RHO_SHARE))
    integer_scale(c * delta, side * (1 - RHO_SHARE))  # refuses, before the spend, an ε too small
    return BoundsPlan(delta, rho, nu, math.ceil(THRESHOLD * (rho + nu)), c == 1)


def positions(values: F64) -> I64:
    """Each row's position in :data:`CANDIDATES`: how many candidates lie strictly below it.

    ``np.searchsorted(CANDIDATES, values)`` (NaN excluded); read off each
    value's bits by :func:`_histograms`, which counts them.
    """
    bits = np.asarray(values, dtype=np.float64).view(np.int64)
    out = _magnitude_positions(bits & _ABS)
    out[bits <= 0] = 0  # zero and the negative values are above no candidate
    return out


#: The bits of a float64 but its sign, and those of +inf.
_ABS, _INF = np.int64(0x7FFF_FFFF_FFFF_FFFF), np.int64(0x7FF0_0000_0000_0000)


def _magnitude_positions(magnitude: I64) -> I64:
    """The position of ``|v|`` among the candidates, from its bits (positive: changed in place).

    For ``|v| > 0``, ``(bits - 1) >> 52`` is the biased exponent of the
    largest power of two strictly below ``|v|`` (one less for a power of two
    itself; 0 for a subnormal), so the candidates below are 0 and the powers
    ``2**J0`` up to it: :data:`J1` - :data:`J0` + 1 at most, all of them below
    +inf.  ``|v| = 0`` gives 1 here: the caller sets it.
    """
    magnitude -= 1
    magnitude >>= 52
    magnitude -= 1023 + J0 - 1
    np.clip(magnitude, 0, J1 - J0 + 1, out=magnitude)
    magnitude += 1
    return magnitude


def _histograms(values: F64, codes: I64 | None, n_keys: int) -> tuple[I64, I64]:
    """The histograms of the positions of ``values`` and of ``-values``, per key, in one pass.

    Missing values and rows of code -1 are left out.  Each row's position is
    read off its bits (:func:`_magnitude_positions`), counted once on its own
    side (zero on the positive side, at position 0), and position 0 of each
    side gets the rows of the other side: what ``positions(values)`` and
    ``positions(-values)`` would give, without a search, a negation or a
    second pass.
    """
    width = CANDIDATES.size + 1
    bits = np.asarray(values, dtype=np.float64).view(np.int64)
    magnitude = bits & _ABS
    keep = magnitude <= _INF  # not NaN
    if codes is not None:
        keep &= codes >= 0
    zero = magnitude == 0
    negative = bits < 0
    cells = _magnitude_positions(magnitude)
    cells[zero] = 0
    np.add(cells, width, out=cells, where=negative & ~zero)
    if codes is not None:
        cells += codes * (2 * width)
    counted = np.bincount(cells if keep.all() else cells[keep], minlength=2 * width * n_keys)
    table = counted.astype(np.int64).reshape(n_keys, 2, width)
    upper, lower = table[:, 0, :].copy(), table[:, 1, :].copy()
    upper[:, 0] += table[:, 1, 1:].sum(axis=1)  # the negative values: below every candidate
    lower[:, 0] += table[:, 0, :].sum(axis=1)  # zero and the positive values, for -values
    return upper.reshape(-1), lower.reshape(-1)


def tail_counts(histogram: I64, n_keys: int) -> I64:
    """``#{x > C[j]}`` per key and candidate, from a histogram of positions."""
    table = histogram.reshape(n_keys, CANDIDATES.size + 1).astype(np.int64)
    above = np.cumsum(table[:, ::-1], axis=1)[:, ::-1]  # above[:, p] = #{position ≥ p}
    tails: I64 = above[:, 1:]  # #{position ≥ j + 1} = #{x > C[j]}
    return tails


def above_threshold(source: RandomSource, tails: I64, plan: BoundsPlan) -> I64:
    """Per key, the first candidate whose noisy tail is at most the noisy threshold (else last)."""
    n_keys, m = tails.shape
    rho = discrete_laplace(source, plan.rho_scale, n_keys)
    nu = discrete_laplace(source, plan.nu_scale, n_keys * m).reshape(n_keys, m)
    below = tails + nu <= plan.threshold + rho[:, None]
    stop: I64 = np.where(below.any(axis=1), below.argmax(axis=1), m - 1).astype(np.int64)
    return stop


def side_bounds(stop: I64) -> F64:
    """The bound's magnitude for each stop index."""
    out: F64 = np.minimum(MARGIN * CANDIDATES[stop], CANDIDATES[-1])
    return out


@dataclass(frozen=True)
class ClipBounds(Kind[tuple[float, float], pd.DataFrame]):
    """Private ``(lower, upper)`` bounds of ``column``: AboveThreshold on powers of two.

    ``pooled``: a grouped release finds one pair of bounds from the rows of
    every key together (what ``clip="auto"`` uses on a grouped surface), each
    key's row of the answer the same; else each key its own.
    """

    epsilon: Fraction
    column: Hashable
    pooled: bool = False
    #: Given ``rho=``: the ρ charged (``epsilon`` is then the largest with ε²/2 <= ρ).
    rho: Fraction | None = None

    planners: ClassVar = (plan_bounds,)
    name: ClassVar[str] = "bounds"

    def columns(self) -> tuple[Hashable, ...]:
        return (self.column,)

    def read(self, df: pd.DataFrame, n_keys: int) -> Rows:
        check_column(df, self.column)
        return Rows(len(df), (numeric_values(df, self.column),))

    def plan(self, neighbours: Neighbours) -> BoundsPlan:
        return plan_bounds(self.epsilon, neighbours)

    def entry(self, plan: BoundsPlan, neighbours: Neighbours, keys: int | None) -> LedgerEntry:
        return ledger_entry(
            self,
            plan,
            neighbours,
            keys,
            epsilon=self.epsilon,
            rho=self.rho,
            columns=column_names([self.column]),
            mechanism="above_threshold (discrete_laplace) on ±2**j, each side ε/2",
            sensitivity=figures([plan.sensitivity]),
            noise_scale=figures([float(plan.rho_scale), float(plan.nu_scale)]),
        )

    def tally(self, plan: BoundsPlan, rows: Rows, codes: I64 | None, n_keys: int) -> Stats:
        values = np.asarray(rows.arrays[0], dtype=np.float64)
        if self.pooled and codes is not None:  # the rows of every key as one
            values, codes, n_keys = values[codes >= 0], None, 1
        return _histograms(values, codes, n_keys)

    def noise_free(self, plan: BoundsPlan, stats: Stats, n_keys: int) -> tuple[I64, I64]:
        """The tail counts above each candidate, and below minus each, per key searched."""
        searched = 1 if self.pooled else n_keys
        return tail_counts(stats[0], searched), tail_counts(stats[1], searched)

    @classmethod
    def examples(cls, columns: ExampleColumns) -> tuple[ClipBounds, ...]:
        return cls(Fraction(1), columns.value), cls(Fraction(1), columns.value, pooled=True)

    def finish(self, plan: BoundsPlan, stats: Stats, source: RandomSource, n_keys: int) -> F64:
        above, below = self.noise_free(plan, stats, n_keys)
        upper = side_bounds(above_threshold(source, above, plan))
        lower = 0.0 - side_bounds(above_threshold(source, below, plan))
        empty = (upper == 0) & (lower == 0)
        upper = np.where(empty, CANDIDATES[1], upper)
        out: F64 = np.stack([lower, upper], axis=1)
        return np.repeat(out, n_keys, axis=0) if self.pooled else out

    def shape_one(self, answer: F64) -> tuple[float, float]:
        return float(answer[0, 0]), float(answer[0, 1])

    def shape_many(self, answer: F64, keys: pd.Index) -> pd.DataFrame:
        return pd.DataFrame({"lower": answer[:, 0], "upper": answer[:, 1]}, index=keys)


# ------------------------------------------------------------- the share clipped


@dataclass(frozen=True)
class SharePlan:
    """The pair (values outside the clip, values inside) with discrete Laplace of ``scale``."""

    sensitivity: int
    scale: Fraction

    def declared(self) -> tuple[Declared]:
        """Δ₁ of the pair (outside, inside)."""
        return (Declared(self.sensitivity),)


@functools.lru_cache(maxsize=512)  # plans are pure functions of public parameters
def plan_share(epsilon: Fraction, neighbours: Neighbours) -> SharePlan:
    """A row is in exactly one of the two counts: the pair's L1 sensitivity is the pair's of 1."""
    delta = neighbours.pair_sensitivity(1)
    integer_scale(delta, epsilon)  # refuses, before the spend, an ε too small
    return SharePlan(delta, Fraction(delta) / epsilon)


@dataclass(frozen=True)
class ClippedShare(Kind[float, pd.Series]):
    """The share of ``column``'s values outside ``clip``: how much clipping there cuts.

    Mechanism: per key, ``A = #{x outside [L, U]}`` and ``B = #{x inside}``,
    each with discrete Laplace noise of scale ``Δ/ε``: a row added moves one of
    them by 1, so the pair has L1 sensitivity ``Δ = 1`` under add_remove and 2
    under substitute (a row that leaves the clip: one count down, the other
    up; or a row that moves keys), times the person's rows with a privacy
    unit (:meth:`Neighbours.pair_sensitivity`).  The answer is
    ``a / (a + b)`` with ``a, b`` the noisy counts floored at 0 (0 if both
    are).  Missing values are in neither count.

    ``alias`` ``"truncated_share"``: the same release on the frame of rows
    per person (column ``rows``, one row per person) with clip ``(0,
    max_rows)``: the share of persons with rows that ``max_rows`` drops.
    """

    epsilon: Fraction
    column: Hashable
    clip: Clip
    #: The operation the ledger records: ``clipped_share`` or ``truncated_share``.
    alias: str = "clipped_share"
    #: Given ``rho=``: the ρ charged (``epsilon`` is then the largest with ε²/2 <= ρ).
    rho: Fraction | None = None

    planners: ClassVar = (plan_share,)
    name: ClassVar[str] = "clipped_share"

    def __post_init__(self) -> None:
        object.__setattr__(self, "clip", check_clip(self.clip))

    def columns(self) -> tuple[Hashable, ...]:
        return (self.column,)

    def read(self, df: pd.DataFrame, n_keys: int) -> Rows:
        check_column(df, self.column)
        return Rows(len(df), (numeric_values(df, self.column),))

    def plan(self, neighbours: Neighbours) -> SharePlan:
        return plan_share(self.epsilon, neighbours)

    def entry(self, plan: SharePlan, neighbours: Neighbours, keys: int | None) -> LedgerEntry:
        return ledger_entry(
            self,
            plan,
            neighbours,
            keys,
            operation=self.alias,
            epsilon=self.epsilon,
            rho=self.rho,
            columns=column_names([self.column]),
            mechanism="discrete_laplace (outside, inside)",
            sensitivity=figures([plan.sensitivity]),
            noise_scale=figures([plan.scale]),
            clip=(self.clip,),
        )

    def tally(self, plan: SharePlan, rows: Rows, codes: I64 | None, n_keys: int) -> Stats:
        values = np.asarray(rows.arrays[0], dtype=np.float64)
        lower, upper = self.clip
        present = ~np.isnan(values)
        outside = present & ((values < lower) | (values > upper))
        cells = np.zeros(values.size, dtype=np.int64) if codes is None else codes
        keep = cells >= 0
        counts = [
            np.bincount(cells[keep & mask], minlength=n_keys).astype(np.int64)
            for mask in (outside, present & ~outside)
        ]
        return (counts[0], counts[1])

    def noise_free(self, plan: SharePlan, stats: Stats, n_keys: int) -> tuple[I64]:
        """The pair (outside, inside) per key."""
        return (np.concatenate(stats),)

    @classmethod
    def examples(cls, columns: ExampleColumns) -> tuple[ClippedShare, ...]:
        return tuple([cls(Fraction(1), columns.value, c) for c in columns.clips])

    def finish(self, plan: SharePlan, stats: Stats, source: RandomSource, n_keys: int) -> F64:
        a, b = (
            np.maximum(s + discrete_laplace(source, plan.scale, n_keys), 0).astype(np.float64)
            for s in stats
        )
        total = a + b
        out: F64 = np.divide(a, total, out=np.zeros(n_keys), where=total > 0)
        return out

    def shape_one(self, answer: F64) -> float:
        return float(answer[0])

    def shape_many(self, answer: F64, keys: pd.Index) -> pd.Series:
        return pd.Series(answer, index=keys, name=self.column)


# ------------------------------------------------------------------ signatures

_NUMERIC = Param(
    "column",
    "Hashable",
    doc="""\
    column : label
        A numeric column; missing values are skipped.""",
    positional=True,
)


def _bounds(args: Mapping[str, Any], loss: tuple[str, Fraction]) -> ClipBounds:
    epsilon, charged = selection_loss(*loss)
    return ClipBounds(epsilon, args["column"], rho=charged)


def _clipped_share(args: Mapping[str, Any], loss: tuple[str, Fraction]) -> ClippedShare:
    epsilon, charged = selection_loss(*loss)
    return ClippedShare(epsilon, args["column"], args["clip"], rho=charged)


BOUNDS = Signature(
    "bounds",
    (_NUMERIC, EPSILON, RHO_SELECT, MAX_ROWS),
    (Form(("tuple[float, float]", "pd.DataFrame")),),
    _bounds,
    summary="Clip bounds ``(lower, upper)`` for ``column``$per_key, chosen privately with no "
    "bound given.",
    returns="""\
        ``lower <= 0 < upper`` or ``lower < 0 = upper``: each ``0`` or a power
        of two times ±2 (``(0, 2**-20)`` for a column with no values). Use them
        as ``clip=``; ``clip="auto"`` does both steps. Grouped: columns
        ``lower`` and ``upper``. $indexed""",
    notes="""\
        Costs ``epsilon``: half for the upper side, half for the lower. Each
        side runs AboveThreshold (the sparse vector technique) over the public
        candidates ``0, 2**-20, ..., 2**100``: the first candidate whose count
        of values beyond it, plus discrete Laplace noise, is at most a public
        threshold plus noise; the bound is twice that candidate. The
        threshold is 5/4 noise scales (54 rows at ``epsilon=0.25``), so about
        that many rows lie beyond the stop, and 2x leaves them room: on the
        PUMS income data the bound lands near 2**18 or 2**19 (the maximum is
        420,500). Count sensitivity 1 under add_remove and under substitute
        (``max_rows``, twice under substitute, with a privacy unit). Public:
        $public the candidates, the threshold, ``epsilon``. See
        :mod:`pandas_dp.kinds.clip_bounds` for the privacy argument.""",
    grouped="""\
        Each key runs its own search, with count sensitivity 2 under substitute
        (a changed row may leave one key and join another). A key with few rows
        stops early, at small bounds.""",
)

CLIPPED_SHARE = Signature(
    "clipped_share",
    (
        _NUMERIC,
        Param(
            "clip",
            "Any",
            doc="""\
            clip : (float, float)
                The clip bounds to check (e.g. those a ``sum`` or ``mean`` used).""",
        ),
        EPSILON,
        RHO_SELECT,
        MAX_ROWS,
    ),
    (Form(("float", "pd.Series"), {"clip": ("Bounds", REQUIRED)}),),
    _clipped_share,
    summary="The noisy share of ``column``'s values outside ``clip``$per_key: the bias a clip "
    "may cause.",
    returns="In [0, 1]. $indexed",
    notes="""\
        ``ci=`` intervals cover the noise only; this shows what the clip cut.
        Costs ``epsilon``: the counts of values outside and inside the clip,
        each with discrete Laplace noise of scale ``Δ/ε``; a row is in one of
        them, so ``Δ = 1`` under add_remove and 2 under substitute. The share
        is ``a/(a + b)`` of the noisy counts floored at 0. Public:
        $public``clip``, ``epsilon``.""",
)
