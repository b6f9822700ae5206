"""Private clip bounds without any bound from the user: ``df.dp.bounds(column, epsilon=...)``.

Mechanism (ALGORITHMS-style)
----------------------------
Candidates are public and fixed: ``C = (0, 2**J0, 2**(J0 + 1/8), ..., 2**J1)``
(:data:`CANDIDATES`, ``J0 = -20``, ``J1 = 100``, :data:`STEPS` = 8 per
doubling: a ladder of ratio 2**(1/8) ≈ 1.09), read upwards.  Each side of the
data is searched on its own:

* upper side: the tail counts ``u_j = #{x > C[j]}``;
* lower side: ``l_j = #{x < -C[j]}`` (the same on ``-x``).

On each side, AboveThreshold (the sparse vector technique; Dwork & Roth,
*The Algorithmic Foundations of Differential Privacy*, 2014, Alg. 1 and
Thm. 3.23; the monotone variant of Lyu, Su & Li, "Understanding the Sparse
Vector Technique for Differential Privacy", PVLDB 2017, Alg. 7; on a fine
geometric ladder as Durfee, "Unbounded Differentially Private Quantile and
Maximum Estimation", NeurIPS 2023) stops at the first candidate whose tail is
small::

    ρ ~ dLap(Δ/ε₁)                 (once per key)
    ν_j ~ dLap(c·Δ/ε₂)             (per candidate)
    stop at the first j with  u_j + ν_j ≤ T + ρ

with ``ε₁ = ¾·ε_side`` (:data:`RHO_SHARE`), ``ε₂ = ¼·ε_side``, the public
threshold ``T = ⌈½·(Δ/ε₁ + c·Δ/ε₂)⌉`` (:data:`THRESHOLD` noise scales), and
``Δ`` the count sensitivity of the neighbour relation (1 for one row per
person; ``max_rows`` (× ``max_groups`` over the keys of a grouped release,
in L1), twice that under substitute, with a privacy unit).  ``c = 1`` when
one person moves every tail count of a key the same way (a row added or
removed, a row's value changed, or a person's rows added or removed: every
``u_j`` moves up, or every one down), ``c = 2`` otherwise (a person's rows
replaced under substitute).  Privacy: the pmf ratio of a discrete Laplace of
scale ``b`` under an integer shift ``s`` is exactly ``exp(|s|/b)``, so the
continuous proof (shift ρ by Δ, and the stopping query's noise by ``c·Δ``)
holds with integer counts and integer thresholds as written, each side
ε_side-DP, both sides by sequential composition.  Over the keys of a grouped
release each key runs its own search; with Δ an L1 bound over keys the
privacy losses of the keys add up to at most ε (parallel composition).  The
stop index is the only output of a side.

Where the search stops about ``T`` values lie beyond the candidate: at
``epsilon=0.25`` on 1,000 incomes, near the 95th percentile; on 54,000
prices, at the top.  The bound is the stop moved outwards by a factor
(:func:`margin`): ``(T/(n̂/1000))**0.45``, at least 1, with ``n̂`` a noisy
count of the values (released with :data:`COUNT_SHARE` of ε, or given: the
count ``clip="auto"`` makes first): an extrapolation from the stop's depth
``T/n̂`` to the top thousandth along a Pareto-like tail (index about 2.2),
tuned on the PUMS income column and a 54,000-row long-tailed price column
(``bench/bench_bounds.py``).  The lower side's answer is the same on ``-x``,
negated; ``(0, 2**J0)`` is answered when both sides stop at 0.  The
constants are public, data-free.

Exact integer statistics: per key, the histogram of each row's position in
``C`` (``#{c ∈ C : x > c}`` and the same for ``-x``); tail counts are its
reverse cumulative sums, so slices (Dask partitions) add up, and the count is
their total.  NaN rows are skipped (as every release skips them).
:mod:`pandas_dp.kinds.extremes` (``min``, ``max``) searches the same ladder,
signed.
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
from .count import CountPlan, plan_count, release_counts
from .signature import EPSILON, MAX_ROWS, NUMERIC, REQUIRED, RHO_SELECT, Form, Param, Signature

__all__ = [
    "CANDIDATES",
    "COUNT_SHARE",
    "RHO_SHARE",
    "STEPS",
    "THRESHOLD",
    "ClipBounds",
    "ClippedShare",
    "SearchPlan",
    "SharePlan",
    "above_threshold",
    "histogram",
    "margin",
    "plan_bounds",
    "plan_search",
    "tail_counts",
]

#: The smallest and largest power of two searched.
J0, J1 = -20, 100
#: Candidates per doubling: the ladder's ratio is 2**(1/STEPS).
STEPS = 8
#: The public candidates: 0, then 2**(k/STEPS) for k from J0·STEPS to J1·STEPS.
CANDIDATES: F64 = np.concatenate([[0.0], np.exp2(np.arange(J0 * STEPS, J1 * STEPS + 1) / STEPS)])
#: The tail count (per key) AboveThreshold stops at, before noise, in noise scales.
THRESHOLD = Fraction(1, 2)
#: The share of a side's ε that noises the threshold (the rest noises the queries).
RHO_SHARE = Fraction(3, 4)
#: The share of ``bounds``' ε that counts the values (when no count is given).
COUNT_SHARE = Fraction(1, 10)
#: The margin extrapolates from the stop's depth to this share of the values ...
DEPTH = 1e-3
#: ... along a tail whose quantiles grow as (1/depth)**TAIL.
TAIL = 0.45


@dataclass(frozen=True)
class SearchPlan:
    """AboveThreshold on one side: threshold noise ``rho_scale``, query noise ``nu_scale``."""

    sensitivity: int
    rho_scale: Fraction
    nu_scale: Fraction
    threshold: int
    #: One person moves every tail count of a key the same way (c = 1; else c = 2).
    monotone: bool

    @property
    def realised_epsilon(self) -> Fraction:
        """``Δ/ρ_scale + c·Δ/ν_scale``: ε₁ + ε₂ (Lyu et al., Alg. 7)."""
        c = 1 if self.monotone else 2
        return self.sensitivity / self.rho_scale + c * self.sensitivity / self.nu_scale

    def declared(self) -> tuple[Declared]:
        """Δ over the keys, weighted by what a key's move costs of ε.

        A key whose tail counts moved by at most δ costs ``δ/Δ`` of the
        threshold's share (:data:`RHO_SHARE`) and ``c_k·δ/(c·Δ)`` of the
        queries' (``c_k`` 1 if they all moved one way, else 2).
        """
        c = 1 if self.monotone else 2
        rest = 1 - RHO_SHARE
        return (
            Declared(self.sensitivity, weights=(RHO_SHARE + rest / c, RHO_SHARE + 2 * rest / c)),
        )


@functools.lru_cache(maxsize=512)  # plans are pure functions of public parameters
def plan_search(
    epsilon: Fraction, neighbours: Neighbours, threshold: Fraction = THRESHOLD
) -> SearchPlan:
    """One side at ``epsilon``: ¾ to the threshold's noise, ¼ to the queries'."""
    delta = neighbours.count_sensitivity()
    # One person moves every tail count the same way except when its rows are replaced.
    c = 2 if (neighbours.unit and not neighbours.monotone) else 1
    rho = Fraction(delta) / (epsilon * RHO_SHARE)
    nu = Fraction(c * delta) / (epsilon * (1 - RHO_SHARE))
    integer_scale(c * delta, epsilon * (1 - RHO_SHARE))  # refuses, before the spend, ε too small
    return SearchPlan(delta, rho, nu, math.ceil(threshold * (rho + nu)), c == 1)


#: The plan of a ``bounds`` release: the upper side, the lower side, and the count (or none).
BoundsPlan = tuple[SearchPlan, SearchPlan] | tuple[SearchPlan, SearchPlan, CountPlan]


def plan_bounds(epsilon: Fraction, neighbours: Neighbours, counted: bool = False) -> BoundsPlan:
    """Half of ``epsilon`` per side, after :data:`COUNT_SHARE` for a count unless ``counted``."""
    if counted:
        side = plan_search(epsilon / 2, neighbours)
        return side, side
    side = plan_search(epsilon * (1 - COUNT_SHARE) / 2, neighbours)
    return side, side, plan_count(epsilon * COUNT_SHARE, neighbours)


def positions(values: F64, ladder: F64 = CANDIDATES) -> I64:
    """Each row's position in ``ladder``: how many candidates lie strictly below it."""
    out: I64 = np.searchsorted(ladder, values, side="left").astype(np.int64)
    return out


def histogram(values: F64, codes: I64 | None, n_keys: int, ladder: F64 = CANDIDATES) -> I64:
    """Rows per key and position in ``ladder`` (NaN and code -1 dropped), flattened."""
    width = ladder.size + 1
    keep = ~np.isnan(values)
    if codes is not None:
        keep &= codes >= 0
    cells = positions(values[keep], ladder)
    if codes is not None:
        cells = cells + codes[keep] * width
    out: I64 = np.bincount(cells, minlength=n_keys * width).astype(np.int64)
    return out


#: ``floor(STEPS·log2(1 + t/2**16))``: the ladder's step below a mantissa of top bits ``t``.
_STEP = np.floor(STEPS * np.log2(1 + np.arange(1 << 16) / 2**16)).astype(np.int64)


#: The candidates and +inf after them (a position's candidate above, always defined).
_ABOVE = np.append(CANDIDATES, np.inf)


def _magnitude_positions(magnitude: F64) -> I64:
    """``positions(magnitude)`` for ``magnitude >= 0``, not NaN, without a search.

    The binary exponent and the mantissa's top 16 bits give the position to
    within one (:data:`_STEP`; a subnormal or zero: below every positive
    candidate); one comparison each way with the candidates themselves makes
    it exact, whatever ``np.exp2``'s rounding of them (0 for zero: the
    candidate 0 is not strictly below it).
    """
    bits = magnitude.view(np.int64)
    guess = bits >> 52
    guess -= 1023 + J0
    guess *= STEPS
    guess += _STEP[(bits >> 36) & 0xFFFF]
    guess += 2
    np.clip(guess, 1, CANDIDATES.size, out=guess)
    guess -= CANDIDATES[guess - 1] >= magnitude
    guess += _ABOVE[guess] < magnitude
    return guess


def two_sided_histograms(values: F64, codes: I64 | None, n_keys: int) -> tuple[I64, I64]:
    """``histogram(values, ...)`` and ``histogram(-values, ...)`` in one pass, without a search.

    Each value's position is read off its magnitude's bits
    (:func:`_magnitude_positions`) and counted on its own side; position 0 of
    each side gets the rows of the other side (no candidate lies strictly
    below them).
    """
    width = CANDIDATES.size + 1
    values = np.asarray(values, dtype=np.float64)
    keep = ~np.isnan(values)
    if codes is not None:
        keep &= codes >= 0
    if not keep.all():
        values, codes = values[keep], None if codes is None else codes[keep]
    cells = _magnitude_positions(np.abs(values))
    cells[values < 0] += width
    if codes is not None:
        cells += codes * (2 * width)
    table = np.bincount(cells, minlength=2 * width * n_keys).astype(np.int64)
    table = table.reshape(n_keys, 2, width)
    upper, lower = table[:, 0, :].copy(), table[:, 1, :].copy()
    upper[:, 0] += table[:, 1, 1:].sum(axis=1)  # the negative values: below every candidate
    lower[:, 0] += table[:, 0, :].sum(axis=1)  # zero and the positive values
    return upper.reshape(-1), lower.reshape(-1)


def tail_counts(hist: I64, n_keys: int, ladder: F64 = CANDIDATES) -> I64:
    """``#{x > ladder[j]}`` per key and candidate, from a histogram of positions."""
    table = hist.reshape(n_keys, ladder.size + 1).astype(np.int64)
    above = np.cumsum(table[:, ::-1], axis=1)[:, ::-1]  # above[:, p] = #{position ≥ p}
    tails: I64 = above[:, 1:]  # #{position ≥ j + 1} = #{x > C[j]}
    return tails


def above_threshold(source: RandomSource, tails: I64, plan: SearchPlan) -> I64:
    """Per key, the first candidate whose noisy tail is at most the noisy threshold (else last)."""
    n_keys, m = tails.shape
    rho = discrete_laplace(source, plan.rho_scale, n_keys)
    nu = discrete_laplace(source, plan.nu_scale, n_keys * m).reshape(n_keys, m)
    below = tails + nu <= plan.threshold + rho[:, None]
    stop: I64 = np.where(below.any(axis=1), below.argmax(axis=1), m - 1).astype(np.int64)
    return stop


def margin(threshold: int, counted: F64) -> F64:
    """The factor a stop is moved outwards by: ``(T/(DEPTH·n̂))**TAIL``, at least 1.

    A post-processing of the released count ``n̂`` (floored at 1) and the
    public threshold ``T``: where about ``T`` values lie beyond the stop, the
    top thousandth lies about this factor further out along a tail like the
    income and price columns it was tuned on.
    """
    depth = threshold / (DEPTH * np.maximum(counted, 1.0))
    out: F64 = np.maximum(depth, 1.0) ** TAIL
    return out


def side_bounds(stop: I64, factor: F64) -> F64:
    """The bound's magnitude for each stop index, moved out by ``factor``."""
    out: F64 = np.minimum(CANDIDATES[stop] * factor, CANDIDATES[-1])
    return out


@dataclass(frozen=True)
class ClipBounds(Kind[tuple[float, float], pd.DataFrame]):
    """Private ``(lower, upper)`` bounds of ``column``: AboveThreshold on a fine ladder.

    ``pooled``: a grouped release finds one pair of bounds from the rows of
    every key together (what ``clip="auto"`` uses on a grouped surface), each
    key's row of the answer the same; else each key its own.  ``count``: a
    count of the values already released (public; ``clip="auto"`` makes one),
    else the release counts them itself with :data:`COUNT_SHARE` of ``epsilon``.
    """

    epsilon: Fraction
    column: Hashable
    pooled: bool = False
    #: Given ``rho=``: the ρ charged (``epsilon`` is then the largest with ε²/2 <= ρ).
    rho: Fraction | None = None
    count: float | None = None

    planners: ClassVar = (plan_search, plan_count)
    name: ClassVar[str] = "bounds"

    def columns(self) -> tuple[Hashable, ...]:
        return (self.column,)

    def read(self, df: pd.DataFrame, n_keys: int) -> Rows:
        check_column(df, self.column)
        return Rows(len(df), (numeric_values(df, self.column),))

    def plan(self, neighbours: Neighbours) -> BoundsPlan:
        if self.pooled:  # one search over every key's rows: the relation of one key
            neighbours = Neighbours.of(
                neighbours.adjacency,
                max_rows=None if neighbours.max_rows is None else neighbours.contributions,
                privacy_unit=neighbours.privacy_unit,
            )
        return plan_bounds(self.epsilon, neighbours, self.count is not None)

    def entry(self, plan: BoundsPlan, neighbours: Neighbours, keys: int | None) -> LedgerEntry:
        side = plan[0]
        counted = "" if len(plan) == 2 else f"; count at ε·{COUNT_SHARE}"
        return ledger_entry(
            self,
            plan,
            neighbours,
            keys,
            epsilon=self.epsilon,
            rho=self.rho,
            columns=column_names([self.column]),
            mechanism=f"above_threshold (discrete_laplace) on ±2**(k/{STEPS}), each side "
            f"{'ε/2' if len(plan) == 2 else 'of the rest'}{counted}",
            sensitivity=figures([side.sensitivity]),
            noise_scale=figures([float(side.rho_scale), float(side.nu_scale)]),
        )

    def tally(self, plan: BoundsPlan, rows: Rows, codes: I64 | None, n_keys: int) -> Stats:
        values = np.asarray(rows.arrays[0], dtype=np.float64)
        if self.pooled and codes is not None:  # the rows of every key as one
            values, codes, n_keys = values[codes >= 0], None, 1
        return two_sided_histograms(values, codes, n_keys)

    def noise_free(self, plan: BoundsPlan, stats: Stats, n_keys: int) -> tuple[I64, ...]:
        """The tail counts above each candidate and below minus each, and the counts."""
        searched = 1 if self.pooled else n_keys
        tails = (tail_counts(stats[0], searched), tail_counts(stats[1], searched))
        if len(plan) == 2:
            return tails
        return (*tails, self._counts(stats, searched))

    @staticmethod
    def _counts(stats: Stats, searched: int) -> I64:
        out: I64 = stats[0].reshape(searched, -1).sum(axis=1)
        return out

    @classmethod
    def examples(cls, columns: ExampleColumns) -> tuple[ClipBounds, ...]:
        one = Fraction(1)
        return (
            cls(one, columns.value),
            cls(one, columns.value, pooled=True),
            cls(one, columns.value, count=12.0),
        )

    def finish(self, plan: BoundsPlan, stats: Stats, source: RandomSource, n_keys: int) -> F64:
        searched = 1 if self.pooled else n_keys
        above, below = tail_counts(stats[0], searched), tail_counts(stats[1], searched)
        upper_stop = above_threshold(source, above, plan[0])
        lower_stop = above_threshold(source, below, plan[1])
        if len(plan) == 3:
            counted = release_counts(source, self._counts(stats, searched), plan[2])
            factor = margin(plan[0].threshold, counted.astype(np.float64))
        else:
            assert self.count is not None
            factor = margin(plan[0].threshold, np.full(searched, float(self.count)))
        upper = side_bounds(upper_stop, factor)
        lower = 0.0 - side_bounds(lower_stop, factor)
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


def _bounds(args: Mapping[str, Any], loss: tuple[str, Fraction]) -> ClipBounds:
    epsilon, charged = selection_loss(*loss)
    return ClipBounds(epsilon, args["column"], rho=charged)


def _clipped_share(args: Mapping[str, Any], loss: tuple[str, Fraction]) -> ClippedShare:
    epsilon, charged = selection_loss(*loss)
    return ClippedShare(epsilon, args["column"], args["clip"], rho=charged)


BOUNDS = Signature(
    "bounds",
    (NUMERIC, EPSILON, RHO_SELECT, MAX_ROWS),
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
        NUMERIC,
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
