"""Quantiles on a public grid: ``df.dp.quantile``, ``df.dp.median``, ``describe``'s quartiles.

One level (:class:`Quantile`): the score of a grid point c is the distance
from ``q·n`` to ``[#(x < c), #(x ≤ c)]`` (zero exactly when c is a
q-quantile, ties included), computed for every key and grid point from one
table of counts below and at each point (:func:`quantile_table`: one
searchsorted and one 2-D bincount, summable across row slices); the point is
chosen by permute-and-flip (:func:`pandas_dp.kinds.argmax.permute_and_flip`)
at the rate of :func:`plan_quantile`.  Several levels (:class:`Quantiles`):
one joint release from the same table, the exponential mechanism over
ordered vectors of grid points (JointExp, :mod:`pandas_dp.kinds._joint`) at
the rate of :func:`plan_joint`.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Hashable, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from ..accounting.ledger import LedgerEntry
from ..core.noise import F64, I64, Bools, RandomSource
from ..core.text import column_names, figures
from ..core.validation import (
    check_column,
    check_quantile,
    check_quantile_grid,
    numeric_values,
    selection_loss,
)
from ._joint import MIN_RATE, SUB, Forward, Runs, forward, joint_sample, kernel, runs
from .argmax import MAX_CELLS, SelectPlan, _check_cells, permute_and_flip, rate_for
from .base import Declared, ExampleColumns, Kind, Neighbours, Rows, Stats, ledger_entry
from .signature import EPSILON, MAX_ROWS, NUMERIC, REQUIRED, RHO_SELECT, Form, Param, Signature

__all__ = [
    "MEDIAN",
    "QUANTILE",
    "JointPlan",
    "Quantile",
    "Quantiles",
    "evenly_spaced",
    "grid_cells",
    "joint_rank_half_width",
    "persons_needed",
    "plan_joint",
    "plan_quantile",
    "quantile_scores",
    "quantile_table",
    "rank_half_width",
]


def plan_quantile(q: Fraction, epsilon: Fraction, neighbours: Neighbours) -> SelectPlan:
    """Rate and sensitivity of a quantile on a candidate grid.

    With ``q = a/d`` the integer score of candidate c is ``d`` times the
    distance from ``q·n`` to ``[#(x < c), #(x ≤ c)]``, that is
    ``max(d·#(x < c) − a·n, a·n − d·#(x ≤ c), 0)`` (lower is better; zero
    exactly when c is a q-quantile, ties included).  The scores are not
    monotone, so ``c = ε/(2Δ)`` always, with Δ in score units:

    - add_remove: an added row moves the point ``a·n`` by ``a`` and the
      interval's ends ``d·#(x < c)``, ``d·#(x ≤ c)`` by ``d`` or 0, both the
      same way, so the distance moves by at most ``max(a, d − a)``, that is
      ``max(q, 1 − q)``.
    - substitute, one release: n is fixed, so the point stays, and a changed
      row moves each end of the interval by at most ``d``: ``Δ = d`` (q-units:
      1, as OpenDP's known-n map). The same bound covers a filtered frame,
      where the change can be a removal or an addition (at most
      ``max(a, d − a) <= d``).
    - substitute, grouped: a row that moves between keys is a removal in one
      key and an addition in another; each is a non-monotone change of at most
      ``max(a, d − a)``, so it costs ``2·2c·max(a, d − a)``. ``Δ = 2·max(a, d − a)``
      (at least ``d``) keeps the total at ε. For the median (``a/d = 1/2``)
      this is ``d``, the same as ungrouped.
    - with a privacy unit: each of a person's rows moves the scores of its key
      by at most ``max(a, d − a)``, so a person moves them by ``max_rows``
      (times ``max_groups`` over the keys, in L1) times that, doubled under
      substitute (:meth:`Neighbours.sum_sensitivity` of ``[0, max(a, d − a)]``);
      one rate for all keys keeps the total at ε.
    """
    a, d = q.numerator, q.denominator
    if neighbours.unit:
        sensitivity = neighbours.sum_sensitivity(0, max(a, d - a))
    elif neighbours.adjacency == "add_remove":
        sensitivity = max(a, d - a)
    elif neighbours.grouped:
        sensitivity = 2 * max(a, d - a)
    else:
        sensitivity = d
    rate = rate_for(epsilon, sensitivity, False)
    return SelectPlan(epsilon, 1, sensitivity, False, rate, Fraction(1, d), q=q)


def evenly_spaced(grid: F64) -> bool:
    """Whether every grid point is within an eighth of a step of ``grid[0] + j·step``.

    Then the arithmetic estimate of :func:`grid_cells` is off by at most one
    point for every finite value, and one correction step makes it exact.
    """
    m = grid.size
    if m < 2:
        return False
    with np.errstate(over="ignore", invalid="ignore"):  # a span beyond the float range
        span = grid[-1] - grid[0]
        step = span / (m - 1)
        if not (np.isfinite(span) and step > 0):
            return False
        ideal = grid[0] + np.arange(m) * step
        return bool(np.all(np.abs(grid - ideal) <= step / 8))


def grid_cells(x: F64, grid: F64) -> tuple[I64, Bools]:
    """``(#(grid < x), x == grid[#(grid < x)])`` per value: ``searchsorted(grid, x, "left")``.

    For an evenly spaced grid the position is estimated arithmetically,
    ``ceil((x − c_0)/step)`` clamped to ``[0, m]``, then corrected against the
    grid points themselves until ``c_(e−1) < x ≤ c_e`` holds for every value
    (NaN compares false everywhere and stays put); after a few rounds without
    convergence it falls back to searchsorted.  Either way the result is
    searchsorted's, exactly, for every float (values equal to grid points
    included).  Missing values get an arbitrary position and ``False``.
    """
    m = grid.size
    # outer[e] = c_(e−1) (NaN for e = 0), upper[e] = c_e (NaN for e = m): NaN fails every test.
    outer = np.concatenate([[np.nan], grid, [np.nan]])
    upper = outer[1:]
    if evenly_spaced(grid):
        with np.errstate(over="ignore"):  # values beyond ±1e308 / step clamp like ±inf
            t = np.subtract(x, grid[0])
            np.multiply(t, (m - 1) / (grid[-1] - grid[0]), out=t)
        np.ceil(t, out=t)
        np.fmax(t, 0.0, out=t)  # NaN becomes 0
        np.fmin(t, float(m), out=t)
        e = t.astype(np.int64)
        for _ in range(4):
            high = outer[e] >= x  # c_(e−1) >= x: too far right
            above = upper[e]
            low = above < x  # c_e < x: too far left
            if not (high.any() or low.any()):
                return e, above == x
            e -= high
            e += low
    e = np.searchsorted(grid, x, side="left").astype(np.int64)
    return e, upper[e] == x


def quantile_table(values: F64, codes: I64 | None, n_keys: int, grid: F64) -> I64:
    """Rows per key below each grid point and at it: shape ``(n_keys, 2, len(grid) + 1)``.

    ``table[k, 0, j]``: rows of key k with ``c_(j-1) < x < c_j`` (``j = len(grid)``:
    above the last point); ``table[k, 1, j]``: rows equal to ``c_j``.  Missing
    values and rows with code -1 are dropped.  One pass of :func:`grid_cells`
    (arithmetic on an evenly spaced grid, else searchsorted) and one bincount;
    tables of row slices add up to the whole frame's.
    """
    width = grid.size + 1
    cells = 2 * width
    below, equal = grid_cells(values, grid)
    index = below
    index += width * equal
    dropped = np.isnan(values)
    if codes is not None:
        index += codes * cells
        dropped |= codes < 0
    index[dropped] = n_keys * cells  # one extra bin, sliced off
    table = np.bincount(index, minlength=n_keys * cells + 1)[:-1]
    return table.reshape(n_keys, 2, width).astype(np.int64)


def quantile_scores(table: I64, q: Fraction) -> I64:
    """Minus the quantile score of every grid point, per key: shape ``(n_keys, len(grid))``.

    With ``q = a/d`` the score of c is ``d`` times the distance from ``q·n`` to
    the interval ``[#(x < c), #(x ≤ c)]``:
    ``max(d·#(x < c) − a·n, a·n − d·#(x ≤ c), 0)``, zero exactly when c is a
    q-quantile, so rows equal to c count (heavily tied data get the right
    answer).
    """
    a, d = q.numerator, q.denominator
    m = table.shape[2] - 1
    n = table.sum(axis=(1, 2))
    at_most = np.cumsum(table.sum(axis=1)[:, :m], axis=1)  # #(x <= c_j) = #{x : below <= j}
    less = at_most - table[:, 1, :m]  # #(x < c_j): minus the rows equal to c_j
    target = a * n[:, None]  # q·n, times d
    score = np.maximum(np.maximum(d * less - target, target - d * at_most), 0)
    utility: I64 = -score.astype(np.int64)
    return utility


def rank_half_width(plan: SelectPlan, candidates: int, level: float) -> float:
    """How many rows beyond the best grid point's a quantile's answer may miss ``q·n`` by.

    Each key's answer is a candidate whose score, its distance in rows from
    ``q·n`` to its ranks (times ``q``'s denominator), exceeds the best
    candidate's by more than ``t`` with probability at most ``1 − level``:
    permute-and-flip accepts a candidate ``g`` score units behind with
    probability ``exp(−c·g)`` and returns one it accepted, so the ``m − 1``
    others of ``m`` candidates fall more than ``k`` units behind with
    probability at most ``(m − 1)·exp(−c·(k + 1))`` (scores are integers).
    ``t`` is the smallest such ``k``, in rows.  Data-free.
    """
    others, rate = candidates - 1, plan.rate.value
    if others == 0:
        return 0.0
    if rate == 0:
        return math.inf
    miss = 1 - Fraction(repr(level))
    k = max(0, math.ceil(math.log(others / float(miss)) / float(rate)) - 1)
    while others * math.exp(-float(rate) * (k + 1)) > miss:  # float rounding: never narrower
        k += 1
    return float(k * plan.unit)


#: :func:`persons_needed`: the candidates beyond the data together win with chance below this.
PERSONS_MISS = 0.05


def persons_needed(epsilon: Fraction, q: Fraction, candidates: int) -> float:
    """The rows (persons, for rows per person) a ``q``-quantile at ``epsilon`` needs (data-free).

    Permute-and-flip at rate ``ε/(2·max(q, 1 − q))`` per row scores every
    candidate beyond the data ``min(q, 1 − q)·n`` below the best, so the
    ``candidates`` of them win together with chance below ``candidates·exp(−rate·
    min(q, 1 − q)·n)``: at most :data:`PERSONS_MISS` from this ``n`` on, which
    falls as 1/ε.  (At ``epsilon=0.1``, q = 0.9 and 100 candidates: 1,368.2.)
    0 at q = 0 or 1 (no candidate is beyond the data there).
    """
    near = min(q, 1 - q)
    if near == 0:
        return 0.0
    return math.log(candidates / PERSONS_MISS) / float(epsilon * near / (2 * max(q, 1 - q)))


@dataclass(frozen=True, eq=False)
class Quantile(Kind[float, pd.Series]):
    """A grid point close to the ``q``-quantile of ``column``: permute-and-flip on scores."""

    epsilon: Fraction
    column: Hashable
    q: Fraction
    grid: F64 = field(repr=False)
    #: The operation the ledger records: ``quantile``, ``median`` or ``rows_per_unit``.
    alias: str = "quantile"
    #: Given ``rho=``: the ρ charged (``epsilon`` is then the largest with ε²/2 <= ρ).
    rho: Fraction | None = None

    name: ClassVar[str] = "quantile"
    plannable: ClassVar[bool] = True
    interval_unit: ClassVar[str] = "ranks"

    @classmethod
    def of(
        cls,
        epsilon: Fraction,
        column: Hashable,
        q: object,
        candidates: object,
        alias: str,
        rho: Fraction | None = None,
    ) -> Quantile:
        grid = check_quantile_grid(candidates)
        return cls(epsilon, column, check_quantile(q), grid, alias, rho)

    def columns(self) -> tuple[Hashable, ...]:
        return (self.column,)

    def read(self, df: pd.DataFrame, n_keys: int) -> Rows:
        check_column(df, self.column)
        values = numeric_values(df, self.column)
        _check_cells(n_keys, self.grid.size)
        return Rows(len(df), (values,))

    def most_keys(self) -> int:
        return MAX_CELLS // self.grid.size

    def plan(self, neighbours: Neighbours) -> SelectPlan:
        return plan_quantile(self.q, self.epsilon, neighbours)

    def half_width(self, plan: SelectPlan, level: float, n: int | None = None) -> tuple[float, ...]:
        """By rank (see :func:`rank_half_width`); ``n`` plays no part."""
        return (rank_half_width(plan, self.grid.size, level),)

    def entry(self, plan: SelectPlan, neighbours: Neighbours, keys: int | None) -> LedgerEntry:
        return ledger_entry(
            self,
            plan,
            neighbours,
            keys,
            operation=self.alias
            if self.alias == "median"
            else f"{self.alias}(q={float(self.q):g})",
            epsilon=self.epsilon,
            rho=self.rho,
            columns=column_names([self.column]),
            mechanism="permute_and_flip",
            sensitivity=figures([plan.sensitivity * plan.unit]),
            noise_scale=figures([plan.noise_scale]),
        )

    def tally(self, plan: SelectPlan, rows: Rows, codes: I64 | None, n_keys: int) -> Stats:
        return (quantile_table(rows.arrays[0], codes, n_keys, self.grid),)

    def noise_free(self, plan: SelectPlan, stats: Stats, n_keys: int) -> tuple[I64]:
        """The scores (minus each candidate's distance to the quantile) per key."""
        assert plan.q is not None
        return (quantile_scores(stats[0], plan.q),)

    @classmethod
    def examples(cls, columns: ExampleColumns) -> tuple[Quantile, ...]:
        levels = (Fraction(1, 2), Fraction(1, 3), Fraction(9, 10))
        return tuple(
            [cls.of(Fraction(1), columns.value, q, columns.grid, "quantile") for q in levels]
        )

    def finish(self, plan: SelectPlan, stats: Stats, source: RandomSource, n_keys: int) -> I64:
        return permute_and_flip(source, *self.noise_free(plan, stats, n_keys), plan.rate)

    def shape_one(self, answer: I64) -> float:
        return float(self.grid[answer[0]])

    def shape_many(self, answer: I64, keys: pd.Index) -> pd.Series:
        return pd.Series(self.grid[answer], index=keys, name=self.column)


# ------------------------------------------------------------ joint quantiles


@dataclass(frozen=True)
class JointPlan:
    """The privacy map of joint quantiles (:mod:`pandas_dp.kinds._joint`), from public parameters.

    Utilities in units of ``1/(sub·scale)`` rows (``scale``: the levels'
    common denominator); ``sensitivity`` Δ in those units; the kernel's
    ``rate`` ``c = ε/(2Δ)`` exactly (the exponential mechanism: ``2·c·Δ``).
    """

    epsilon: Fraction
    levels: tuple[Fraction, ...]
    scale: int
    sub: int
    sensitivity: int
    rate: Fraction

    def targets(self, n: int) -> I64:
        """Each gap's rows times ``sub·scale``: ``sub·scale·(q_j − q_{j−1})·n``, ``m + 1`` gaps."""
        edges = (Fraction(0), *self.levels, Fraction(1))
        shares = [int((b - a) * self.scale) for a, b in itertools.pairwise(edges)]
        return np.array([self.sub * s * n for s in shares], dtype=np.int64)

    @property
    def realised_epsilon(self) -> Fraction:
        """``2·c·Δ``: exactly ``epsilon`` (less when the rate is capped)."""
        return 2 * self.rate * self.sensitivity

    @property
    def noise_scale(self) -> float:
        """``1/c`` in rows: the scale of the utility's exponential weights."""
        return float(1 / (self.rate * self.sub * self.scale))

    def declared(self) -> tuple[Declared]:
        """Each key's utilities (of every output) move by at most Δ, two ways: ``2·Δ``.

        The exponential mechanism at rate c costs ``c·δ`` for a key whose
        utilities all moved one way by at most δ, ``2c·δ`` otherwise.
        """
        return (Declared(2 * self.sensitivity, weights=(Fraction(1), Fraction(2))),)


#: The largest common denominator of the levels of one joint release.
MAX_SCALE = 1 << 20
#: The most levels of one joint release (the exponents of its vectors' weights stay in range).
MAX_LEVELS = 1_000
#: The most states of joint forward passes held at once (16 bytes each: 2 GiB). A
#: release whose public worst case (every grid point tied) is above it is refused.
MAX_STATES = 1 << 27
#: The largest rate, per row of error: an error of a row already weighs e**-2 less (a
#: larger ε changes no answer of note).
MAX_RATE = 2


@functools.lru_cache(maxsize=512)  # plans are pure functions of public parameters
def plan_joint(
    levels: tuple[Fraction, ...], epsilon: Fraction, neighbours: Neighbours, sub: int = SUB
) -> JointPlan:
    """The sensitivity and rate of the joint quantiles ``levels`` (sorted, distinct).

    A row added moves every virtual point's position by ``[0, sub·scale]``,
    non-decreasing along them, so the gaps' counts by a non-negative vector
    of sum ``sub·scale``, and every target by ``sub·scale·τ_j`` (``τ_j = q_j −
    q_{j−1}``, ``q_0 = 0``, ``q_{m+1} = 1``): the utility, minus the sum of
    ``|count_j − target_j|``, moves by at most ``Σ_j |δ_j − sub·scale·τ_j| <=
    2·sub·scale·(1 − min_j τ_j)``, the add_remove ``Δ`` (the worst: the row
    in the gap with the smallest share).  Under substitute, one release: n is
    fixed, a row leaves one gap and joins another, ``Δ = 2·sub·scale`` (at
    least the add_remove one, for a filtered frame's row that appears).
    Grouped under substitute: a row that moves keys is a removal in one and
    an addition in another, ``2·Δ``.  With a privacy unit, a person's rows
    move it ``max_rows`` times (times ``max_groups`` over the keys, doubled
    under substitute: :meth:`Neighbours.sum_sensitivity`).  Not monotone:
    the rate is ``c = ε/(2Δ)``, at most :data:`MAX_RATE` per row (a lower
    rate only lowers the privacy loss: the release then spends ``epsilon``
    and realises less).
    """
    if len(levels) > MAX_LEVELS:
        raise ValueError(
            f"{len(levels)} levels in one joint release: at most {MAX_LEVELS}; release them in "
            "smaller lists."
        )
    scale = math.lcm(*(q.denominator for q in levels))
    if scale > MAX_SCALE:
        raise ValueError(
            f"the levels' common denominator is {scale}, above {MAX_SCALE}: round the levels "
            "(e.g. to 4 decimals) or release them in smaller lists."
        )
    edges = (Fraction(0), *levels, Fraction(1))
    smallest = min(int((b - a) * scale) for a, b in itertools.pairwise(edges))
    one = 2 * sub * (scale - smallest)
    if neighbours.unit:
        sensitivity = neighbours.sum_sensitivity(0, one)
    elif neighbours.adjacency == "add_remove":
        sensitivity = one
    elif neighbours.grouped:
        sensitivity = 2 * one
    else:
        sensitivity = 2 * sub * scale
    rate = min(epsilon / (2 * sensitivity), Fraction(MAX_RATE, sub * scale))
    if rate < MIN_RATE:
        raise ValueError(
            f"epsilon={float(epsilon):g} is too small for {len(levels)} joint levels: use a "
            "larger epsilon, or fewer levels."
        )
    return JointPlan(epsilon, levels, scale, sub, sensitivity, rate)


def joint_rank_half_width(plan: JointPlan, candidates: int, level: float) -> float:
    """How many rows beyond the best vector's a joint release may miss each ``q_j·n`` by.

    The exponential mechanism weighs an output ``t`` utility units behind the
    best by ``exp(−c·t)`` relative to it, so the outputs more than ``t``
    behind win together with probability at most ``N·exp(−c·t)``, over the
    ``N = C(P + m − 1, m)`` non-decreasing vectors of ``m`` levels among the
    ``P = candidates·(sub + 1)`` virtual points: ``t = log(N/(1 − level))/c``.
    Each level's rank error, a partial sum of the gaps' errors, is at most the
    utility's distance from zero, so it misses by at most that of the best
    vector plus ``t`` (in rows: ``t/(sub·scale)``).  A union bound (the
    typical error is far smaller: ``bench/bench_quantiles.py``).  Data-free.
    """
    m, points = len(plan.levels), candidates * (plan.sub + 1)
    if plan.rate == 0:
        return math.inf
    outputs = math.lgamma(points + m) - math.lgamma(m + 1) - math.lgamma(points)
    miss = float(1 - Fraction(repr(level)))
    t = (outputs - math.log(miss)) / float(plan.rate)
    return float(math.nextafter(t / (plan.sub * plan.scale), math.inf))  # never narrower


def _virtual_positions(table: I64, plan: JointPlan) -> I64:
    """Every virtual point's position, per key: shape ``(n_keys, len(grid)·(sub + 1))``."""
    m = table.shape[2] - 1
    equal = table[:, 1, :m]
    lo = np.cumsum(table[:, 0, :m], axis=1) + np.cumsum(equal, axis=1) - equal
    t = np.arange(plan.sub + 1)
    pos = plan.sub * lo[:, :, None] + t[None, None, :] * equal[:, :, None]
    out: I64 = (plan.scale * pos).reshape(table.shape[0], -1)
    return out


@functools.lru_cache(maxsize=16)
def _sequences(points: int, m: int) -> I64:
    """Every non-decreasing sequence of ``m`` of ``range(points)``: shape ``(count, m)``."""
    found = list(itertools.combinations_with_replacement(range(points), m))
    return np.array(found, dtype=np.int64).reshape(len(found), m)


@dataclass(frozen=True, eq=False)
class Quantiles(Kind[pd.Series, pd.DataFrame]):
    """Grid points close to each of the ``qs``-quantiles of ``column``: one joint release.

    The exponential mechanism over every non-decreasing vector of grid points
    (JointExp, Gillenwater, Joseph & Kulesza, ICML 2021), sampled exactly
    (:mod:`pandas_dp.kinds._joint`) from one table of rows below and at each
    grid point (:func:`quantile_table`), at the rate of :func:`plan_joint`:
    ``epsilon`` is spent once on all the levels (under ``rho``, at the
    largest ε with ``ε²/2 <= rho``).  ``quantile(column, [q, ...])`` and
    ``describe``'s quartiles.  ``sub``: virtual points per grid point beyond
    the first (how finely a tie is split; public).
    """

    epsilon: Fraction
    column: Hashable
    qs: tuple[Fraction, ...]
    grid: F64 = field(repr=False)
    #: Given ``rho=``: the ρ charged (``epsilon`` is then the largest with ε²/2 <= ρ).
    rho: Fraction | None = None
    sub: int = SUB

    name: ClassVar[str] = "quantiles"
    planners: ClassVar = (plan_joint,)
    plannable: ClassVar[bool] = True
    interval_unit: ClassVar[str] = "ranks"

    def __post_init__(self) -> None:
        """Refuse, from public sizes only, a release whose forward pass may not fit in memory.

        A key's pass holds ``m`` layers of ``m`` states per run, and a grid
        point is 1 run or, when rows tie on it, ``sub + 1``: which, the data
        decides, so the worst case decides here (never a failure after the spend).
        """
        m, points = len(self.qs), self.grid.size
        worst = m * m * (self.sub + 1) * points
        if worst > MAX_STATES:
            most = MAX_STATES // (m * m * (self.sub + 1))
            raise ValueError(
                f"{m} levels on a grid of {points:,} points: one joint release may hold "
                f"{worst * 16 / 2**30:.1f} GiB of states. Release fewer levels at once, or "
                f"pass a coarser grid (at most {most:,} points for {m} levels)."
            )

    def levels(self) -> tuple[Fraction, ...]:
        """The levels in increasing order (the release answers them in the order given)."""
        return tuple(sorted(self.qs))

    def columns(self) -> tuple[Hashable, ...]:
        return (self.column,)

    def read(self, df: pd.DataFrame, n_keys: int) -> Rows:
        check_column(df, self.column)
        values = numeric_values(df, self.column)
        _check_cells(n_keys, self.grid.size)
        return Rows(len(df), (values,))

    def most_keys(self) -> int:
        return MAX_CELLS // self.grid.size

    def plan(self, neighbours: Neighbours) -> JointPlan:
        return plan_joint(self.levels(), self.epsilon, neighbours, self.sub)

    def half_width(self, plan: JointPlan, level: float, n: int | None = None) -> tuple[float, ...]:
        """Each level's by rank (see :func:`joint_rank_half_width`), the same bound for all."""
        width = joint_rank_half_width(plan, self.grid.size, level)
        return tuple([width] * len(self.qs))

    def entry(self, plan: JointPlan, neighbours: Neighbours, keys: int | None) -> LedgerEntry:
        return ledger_entry(
            self,
            plan,
            neighbours,
            keys,
            epsilon=self.epsilon,
            rho=self.rho,
            columns=column_names([self.column]),
            mechanism=f"joint exponential mechanism (JointExp) over {len(self.qs)} levels",
            sensitivity=figures([plan.sensitivity / (plan.sub * plan.scale)]),
            noise_scale=figures([plan.noise_scale]),
        )

    def tally(self, plan: JointPlan, rows: Rows, codes: I64 | None, n_keys: int) -> Stats:
        return (quantile_table(rows.arrays[0], codes, n_keys, self.grid),)

    def noise_free(self, plan: JointPlan, stats: Stats, n_keys: int) -> tuple[I64]:
        """The utility of every output (non-decreasing virtual points), per key.

        Enumerated (for small grids only: the sensitivity oracle's); the
        release never enumerates, it samples (:func:`~pandas_dp.kinds._joint.joint_sample`).
        """
        table = stats[0]
        pos = _virtual_positions(table, plan)
        seq = _sequences(pos.shape[1], len(self.qs))
        n = table.sum(axis=(1, 2))
        total = (plan.sub * plan.scale * n)[:, None, None]
        inner = pos[:, seq]  # (keys, outputs, m)
        points = np.concatenate(
            [np.zeros_like(inner[:, :, :1]), inner, np.broadcast_to(total, inner[:, :, :1].shape)],
            axis=2,
        )
        targets = np.stack([plan.targets(int(k)) for k in n])[:, None, :]
        utility: I64 = -np.abs(np.diff(points, axis=2) - targets).sum(axis=2)
        return (utility,)

    @classmethod
    def examples(cls, columns: ExampleColumns) -> tuple[Quantiles, ...]:
        grid = check_quantile_grid(columns.grid)
        quartiles = (Fraction(1, 4), Fraction(1, 2), Fraction(3, 4))
        return (
            cls(Fraction(1), columns.value, quartiles, grid, sub=2),
            cls(Fraction(1), columns.value, (Fraction(1, 3), Fraction(9, 10)), grid, sub=4),
        )

    def finish(self, plan: JointPlan, stats: Stats, source: RandomSource, n_keys: int) -> F64:
        """Each key's grid points, in the order of ``qs`` (keys down, levels across)."""
        kern = kernel(plan.rate)
        order = np.argsort(np.argsort(np.array([float(q) for q in self.qs])))  # qs → sorted
        out = np.empty((n_keys, len(self.qs)))
        passes: dict[bytes, tuple[Runs, I64, Forward]] = {}  # keys with one table share a pass
        held = 0  # states in ``passes``: at most MAX_STATES (then it starts again)
        levels = len(self.qs)
        for key, table in enumerate(stats[0]):
            same = table.tobytes()
            if same not in passes:
                points = table.shape[1] - 1
                found = runs(table[0], table[1, :points], plan.scale, plan.sub)
                size = levels * levels * found.position.size
                if held + size > MAX_STATES:
                    passes.clear()
                    held = 0
                targets = plan.targets(int(table.sum()))
                passes[same] = found, targets, forward(kern, found, targets)
                held += size
            found, targets, fw = passes[same]
            picked = joint_sample(source, kern, found, targets, plan.sub, fw)
            out[key] = self.grid[picked][order]
        return out

    def shape_one(self, answer: F64) -> pd.Series:
        return pd.Series(answer[0], index=[float(q) for q in self.qs], name=self.column)

    def shape_many(self, answer: F64, keys: pd.Index) -> pd.DataFrame:
        return pd.DataFrame(answer, index=keys, columns=[float(q) for q in self.qs])


_GRID = Param(
    "candidates",
    "Any",
    "None",
    """\
    candidates : list, array or Index of numbers
        $grid_doc""",
)


def _quantile(args: Mapping[str, Any], loss: tuple[str, Fraction]) -> Quantile | Quantiles:
    epsilon, charged = selection_loss(*loss)
    q, column, grid = args["q"], args["column"], args["candidates"]
    if not isinstance(q, list | tuple | np.ndarray | pd.Index):
        return Quantile.of(epsilon, column, q, grid, "quantile", charged)
    qs = tuple(check_quantile(level) for level in q)
    if not qs or len(set(qs)) != len(qs):
        raise ValueError(
            "`q` must be a level or a list of distinct levels, got an empty list or a level twice."
        )
    return Quantiles(epsilon, column, qs, check_quantile_grid(grid), charged)


def _median(args: Mapping[str, Any], loss: tuple[str, Fraction]) -> Quantile:
    epsilon, charged = selection_loss(*loss)
    return Quantile.of(epsilon, args["column"], 0.5, args["candidates"], "median", charged)


QUANTILE = Signature(
    "quantile",
    (
        NUMERIC,
        Param(
            "q",
            "Any",
            doc="""\
            q : float or list of floats
                The quantile level in ``[0, 1]``, read as the shortest decimal
                (``0.9`` is ``9/10``); a list of distinct levels releases them
                jointly (one release for all: see Notes), indexed by level.""",
            positional=True,
        ),
        _GRID,
        EPSILON,
        RHO_SELECT,
        MAX_ROWS,
    ),
    (
        Form(("float", "pd.Series"), {"q": ("float", REQUIRED)}),
        Form(("pd.Series", "pd.DataFrame"), {"q": ("Sequence[float]", REQUIRED)}),
    ),
    _quantile,
    summary="The ``q``-quantile of ``column``$per_key, privately chosen from a public grid.",
    gridded=True,
    returns="""\
        One grid point ($indexed); for a list of levels one per level, indexed by
        level (grouped: keys down, levels across).""",
    raises="A bad ``q`` or grid (unsorted, duplicated, non-finite) raises before any spend.",
    notes="""\
        One level: permute-and-flip, sampled exactly, on the score of each
        grid point c: the distance from ``q·n`` to ``[#(x < c), #(x ≤ c)]``
        (lower is better; zero exactly when c is a q-quantile, so ties count).
        The score is not monotone, so ``c = ε/(2Δ)`` with sensitivity
        ``Δ = max(q, 1 − q)`` under add_remove and ``Δ = 1`` under substitute
        (a changed row leaves one side and joins another). Costs ``epsilon``.
        Public: $public the grid, ``q``, ``epsilon``.

        A list of levels ``q_1 < ... < q_m`` is one release, not m: the
        exponential mechanism over every non-decreasing vector of grid points
        (JointExp: Gillenwater, Joseph & Kulesza, ICML 2021), whose utility is
        minus the total distance between the rows each gap of the vector holds
        and ``(q_j − q_{j−1})·n``; sensitivity ``2·(1 − min_j (q_j −
        q_{j−1}))`` rows under add_remove (``q_0 = 0``, ``q_{m+1} = 1``), 2
        under substitute, rate ``ε/(2Δ)``. A grid point carrying tied rows is
        split into 17 virtual points across the ranks its rows span. Sampled
        exactly (integer weights, an exact rejection step), costs ``epsilon``
        once for all the levels: for 19 levels at ``epsilon=1``, about 4.7x
        lower rank error than splitting ``epsilon`` across separate releases
        (``bench/bench_quantiles.py``).

        This is the honest way to choose clip bounds: spend a little ε on,
        e.g., the 0.05 and 0.95 quantiles and pass them as ``clip=`` to
        ``sum``/``mean``, instead of reading ``df[column].max()``.""",
    grouped="""\
        The scores per key and grid point come from one searchsorted and one
        2-D bincount; ``Δ = 2·max(q, 1 − q)`` under substitute (a row that
        moves between keys changes two keys' scores). A key with no rows gets
        a grid point close to uniform at random.""",
    columns=lambda args: (args["column"],),
)


MEDIAN = Signature(
    "median",
    (NUMERIC, _GRID, EPSILON, RHO_SELECT, MAX_ROWS),
    (Form(("float", "pd.Series")),),
    _median,
    summary="The median of ``column``$per_key, privately chosen from a public grid: "
    "``quantile(column, 0.5)``.",
    gridded=True,
    returns="One grid point. $indexed",
    notes="""\
        See :meth:`quantile`. Sensitivity of the score 1/2 under add_remove
        (``c = ε``) and 1 under substitute (``c = ε/2``). Costs ``epsilon``.
        Public: $public the grid, ``epsilon``.""",
    columns=lambda args: (args["column"],),
)
