"""argmax_exp and quantiles: the exponential-mechanism family.

Private selection picks one of a *public* list of candidates: the product that
sells most (``df.dp.argmax_exp``), or the point of a public grid nearest a
quantile (``df.dp.quantile`` / ``df.dp.median``).  The mechanism is
permute-and-flip (McKenna & Sheldon 2020), which equals report-noisy-max with
exponential noise (Ding et al. 2021), sampled exactly:

    for every candidate r, independently, B_r ~ Bernoulli(exp(-c·(u* - u_r)))
    return a uniformly random r among those with B_r = 1

where ``u_r`` is the candidate's integer utility and ``u*`` the largest.  The
best candidate always succeeds, so the success set is never empty; the first
success in a uniformly random order (permute-and-flip) is a uniform element of
the success set, so the two are the same distribution.  Nothing is ever
exponentiated in floating point: the Bernoullis are drawn exactly from integer
words (:func:`pandas_dp.core.noise.bernoulli_exp`), so huge counts cannot overflow.

The module has the same two halves as :mod:`pandas_dp.kinds.sums`:

- *plans* (:func:`plan_argmax`, :func:`plan_quantile`): the privacy map, from
  public parameters only.  The rate ``c`` is ``ε/Δ`` when one person moves one
  candidate's score in one direction (add_remove counts and clipped sums:
  monotone utilities, McKenna & Sheldon Remark 1) and ``ε/(2Δ)`` otherwise;
  it is rounded *down* to a dyadic rational (:class:`Rate`), so the realised ε
  never exceeds the one charged.
- *kernels*: utilities per (key, candidate) cell in one vectorized pass
  (bincounts of codes; exact integer grid sums; for quantiles one searchsorted
  and one 2-D bincount), then :func:`permute_and_flip` over all keys at once,
  and :func:`peel` for top-k.

:class:`Argmax` and :class:`Quantile` are the release kinds that
:mod:`pandas_dp.pipeline.run` runs; their statistics are integer score tables (or
the quantile's per-key counts below and at each candidate) that add up across
row slices.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from ..accounting.ledger import LedgerEntry
from ..core.noise import F64, I64, U64, Bools, RandomSource, bernoulli_exp, uniform_below
from ..core.text import column_names, figures
from ..core.validation import (
    Clip,
    check_candidates,
    check_clip,
    check_column,
    check_k,
    check_keys_match,
    check_quantile,
    check_quantile_grid,
    numeric_values,
    selection_loss,
)
from ..mechanisms.keys import level_codes
from . import sums
from .base import Declared, ExampleColumns, Kind, Neighbours, Rows, Stats, ledger_entry
from .signature import EPSILON, MAX_ROWS, REQUIRED, RHO_SELECT, Form, Param, Signature

__all__ = [
    "GAMMA_CAP",
    "MAX_CELLS",
    "Argmax",
    "Quantile",
    "Rate",
    "SelectPlan",
    "candidate_counts",
    "count_utilities",
    "evenly_spaced",
    "gamma_parts",
    "grid_cells",
    "peel",
    "permute_and_flip",
    "plan_argmax",
    "plan_quantile",
    "quantile_scores",
    "quantile_table",
    "rate_for",
    "sum_utilities",
]


#: Significant bits of the rate c (its relative rounding is below 2**-31).
RATE_BITS = 32
#: The rate's denominator is at most 2**MAX_SHIFT (the samplers need < 2**63).
MAX_SHIFT = 62
#: ``c·gap`` is capped here; see :func:`gamma_parts` for why that is exact DP.
GAMMA_CAP = 1 << 62
#: At most this many (key, candidate) cells per release.
MAX_CELLS = 1 << 24

_M32 = np.uint64(0xFFFFFFFF)


# ----------------------------------------------------------------------------- plans


@dataclass(frozen=True)
class Rate:
    """The permute-and-flip rate ``c = num / 2**shift`` (accept r w.p. ``exp(-c·gap_r)``).

    ``num < 2**32`` and ``shift <= 62`` so that ``c·gap`` splits exactly into
    whole and fractional parts in uint64 arithmetic.
    """

    num: int
    shift: int

    def __post_init__(self) -> None:
        if not 0 <= self.num < 1 << RATE_BITS or not 0 <= self.shift <= MAX_SHIFT:
            raise ValueError(f"invalid rate {self.num}/2**{self.shift}")

    @classmethod
    def at_most(cls, c: Fraction) -> Rate:
        """The largest rate with 32 significant bits that does not exceed ``c``.

        Rounding down only lowers the privacy loss.  Rates of 2**32 and more
        (every non-best candidate already has probability below exp(-2**32))
        are capped at 2**32 - 1; rates below 2**-62 become 0 (a uniform pick).
        """
        if c < 0:
            raise ValueError(f"the rate must be non-negative, got {c}")
        if c == 0:
            return cls(0, 0)
        log2 = c.numerator.bit_length() - c.denominator.bit_length()
        if c < Fraction(2) ** log2:
            log2 -= 1  # now 2**log2 <= c < 2**(log2 + 1)
        shift = min(max(RATE_BITS - 1 - log2, 0), MAX_SHIFT)
        num = min(c.numerator * 2**shift // c.denominator, (1 << RATE_BITS) - 1)
        return cls(num, shift)

    @property
    def value(self) -> Fraction:
        return Fraction(self.num, 1 << self.shift)


def rate_for(epsilon: Fraction, sensitivity: int, monotone: bool) -> Rate:
    """``c = ε/Δ`` for monotone utilities, else ``ε/(2Δ)``, rounded down.

    The one place the rate is computed (McKenna & Sheldon 2020, Theorem 1 and
    Remark 1): with this c, permute-and-flip is ``epsilon``-DP for utilities of
    sensitivity ``sensitivity`` (in score units).
    """
    factor = 1 if monotone else 2
    return Rate.at_most(epsilon / (factor * sensitivity))


@dataclass(frozen=True)
class SelectPlan:
    """The privacy map of one selection release, from public parameters only.

    ``rounds`` peels (top-k), each at ``epsilon / rounds`` with rate ``rate``;
    ``sensitivity`` is in score units and ``unit`` converts one score unit to
    data units (1 for counts, the grid step for clipped sums, ``1/q_den`` for
    quantile scores).  ``grid`` is the clipped-sum grid, ``q`` the quantile
    level as a fraction ``q_num/q_den``.  ``keys_touched``: how many keys
    one person's change may reach (:meth:`Neighbours.keys_touched`), each
    key's selection at that fraction of a round's ε and ``sensitivity`` a
    bound per key (an argmax's); 1 when ``sensitivity`` bounds the sum over
    the keys (a quantile's).
    """

    epsilon: Fraction
    rounds: int
    sensitivity: int
    monotone: bool
    rate: Rate
    unit: Fraction = Fraction(1)
    grid: sums.GridPlan | None = None
    q: Fraction | None = None
    keys_touched: int = 1

    @property
    def realised_epsilon(self) -> Fraction:
        """``rounds · keys_touched · (1 or 2) · Δ · c``: never more than ``epsilon``."""
        factor = 1 if self.monotone else 2
        return self.rounds * self.keys_touched * factor * self.sensitivity * self.rate.value

    def declared(self) -> tuple[Declared]:
        """What a round's ε covers, in score units: ``keys_touched · (1 or 2) · Δ``.

        Permute-and-flip at rate c costs ``c·δ`` for a key whose scores all
        moved one way by at most δ, ``2c·δ`` otherwise (McKenna & Sheldon
        2020, Theorem 1 and Remark 1); a round's ε is ``keys_touched · (1 or
        2) · Δ · c``.
        """
        covered = self.keys_touched * (1 if self.monotone else 2) * self.sensitivity
        return (Declared(covered, weights=(Fraction(1), Fraction(2))),)

    @property
    def noise_scale(self) -> float:
        """``1/c`` in data units: the scale of the equivalent exponential noise."""
        if self.rate.num == 0:
            return float("inf")
        return float(self.unit / self.rate.value)


def plan_argmax(
    epsilon: Fraction,
    neighbours: Neighbours,
    *,
    k: int = 1,
    clip: Clip | None = None,
) -> SelectPlan:
    """Rate and sensitivity of ``argmax_exp``: counts, or clipped sums of a value.

    Within one key, one row: under add_remove one person changes one
    candidate's score in one direction (a count by 1, a clipped sum by at most
    ``max(|L|, |U|)``): the utility is monotone and ``c = ε/Δ``.  Under
    substitute a changed row can lower one candidate and raise another (or
    move one candidate's sum by up to ``U − L``): ``Δ = 1`` for counts,
    ``max(U − L, |L|, |U|)`` for sums, and ``c = ε/(2Δ)``.  Across the keys of
    a groupby this is parallel composition: a row that moves between keys is a
    removal in one key and an addition in the other, each a monotone change
    costing at most ``c·Δ = ε/2``.  Top-k peels ``k`` times at ``ε/k`` each.

    With a privacy unit, a person has at most ``max_rows`` rows per
    candidate, so each score moves by at most ``max_rows`` times the one-row
    figure (a removal and an addition move one score in opposite directions:
    the same bound holds under substitute).  Counts and sums of a value whose
    clip does not span zero still move one way under add_remove; a clip with
    ``L < 0 < U`` lets one person raise one candidate and lower another, so
    the rate halves.  A grouped selection runs each key at ``ε`` divided by
    the keys one person can reach (:meth:`Neighbours.keys_touched`).
    """
    touched = neighbours.keys_touched()
    per_round = epsilon / k / touched
    per_key = neighbours.per_key()
    rows = per_key.max_rows or 1
    one_row = Neighbours(per_key.adjacency)
    spans_zero = clip is not None and clip[0] < 0 < clip[1]
    monotone = per_key.monotone and not (per_key.unit and spans_zero)
    if clip is None:
        sensitivity = rows * one_row.count_sensitivity()
        rate = rate_for(per_round, sensitivity, monotone)
        return SelectPlan(epsilon, k, sensitivity, monotone, rate, keys_touched=touched)
    # The grid is chosen from (clip, ε) only: that of an add_remove sum.
    grid = sums.plan_sum(clip, per_round, Neighbours("add_remove"))
    sensitivity = rows * one_row.sum_sensitivity(grid.q_lo, grid.q_hi)
    rate = rate_for(per_round, sensitivity, monotone)
    unit = Fraction(2) ** grid.exponent
    return SelectPlan(epsilon, k, sensitivity, monotone, rate, unit, grid, keys_touched=touched)


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


# ---------------------------------------------------------------------- utilities


def candidate_counts(series: pd.Series, candidates: pd.Index) -> I64:
    """Rows per candidate, shape ``(1, n_candidates)``: the ungrouped fast path.

    Counts per distinct value with pandas' own ``value_counts`` (a bincount of
    the codes for a categorical column, arrow's kernel for an arrow-backed
    one), then looks the distinct values up among the candidates.  Missing
    values and values that are not candidates are dropped.
    """
    per_value = series.value_counts(sort=False, dropna=True)
    position = np.asarray(candidates.get_indexer(per_value.index), dtype=np.int64)
    found = position >= 0
    counts = np.zeros(len(candidates), dtype=np.int64)
    np.add.at(counts, position[found], per_value.to_numpy(dtype=np.int64)[found])
    return counts.reshape(1, -1)


def count_utilities(cells: I64, n_keys: int, n_candidates: int) -> I64:
    """Rows per (key, candidate) cell, shape ``(n_keys, n_candidates)``; cell -1 is dropped."""
    size = n_keys * n_candidates
    counts = np.bincount(cells + 1, minlength=size + 1)[1:]
    return counts.astype(np.int64).reshape(n_keys, n_candidates)


def sum_utilities(
    values: F64, cells: I64, n_keys: int, n_candidates: int, grid: sums.GridPlan
) -> I64:
    """Exact integer sums of the clipped values on the grid, per cell (missing values skipped)."""
    totals, _ = sums.grid_sums(values, cells, n_keys * n_candidates, grid)
    return totals.reshape(n_keys, n_candidates)


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


# ------------------------------------------------------------------------ sampler


def gamma_parts(gap: U64, rate: Rate) -> tuple[U64, U64, U64]:
    """``(whole, num, den)`` with ``whole + num/den = min(c·gap, GAMMA_CAP)``, exactly.

    ``c·gap`` can need 96 bits (``gap < 2**64``, ``c``'s numerator below
    2**32), so it is formed as ``top·2**32 + low`` from two 64-bit partial
    products and then shifted, all in uint64 without overflow.

    The cap is exact differential privacy, not an approximation: accepting
    with ``exp(-min(c·gap, GAMMA_CAP))`` is permute-and-flip run on the utility
    ``max(u_r, u* − GAMMA_CAP/c)``, which has the same sensitivity and is
    monotone whenever u is.  (And reaching the cap takes 2**62 successive
    Bernoulli(1/e) successes.)
    """
    gap = np.asarray(gap, dtype=np.uint64)
    c = np.uint64(rate.num)
    s = rate.shift
    low_product = (gap & _M32) * c  # < 2**64
    top = (gap >> np.uint64(32)) * c + (low_product >> np.uint64(32))  # < 2**64
    low = low_product & _M32  # c·gap = top·2**32 + low
    cap = np.uint64(GAMMA_CAP)
    if s >= 32:
        whole = np.minimum(top >> np.uint64(s - 32), cap)
        high_bits = (top & np.uint64((1 << (s - 32)) - 1)) << np.uint64(32)
        frac = np.where(whole == cap, np.uint64(0), high_bits | low)
    else:
        up = np.uint64(32 - s)
        limit = np.uint64(GAMMA_CAP >> (32 - s))
        small = top < limit  # then top·2**(32 - s) < 2**62: no overflow
        whole = np.where(small, (top << up) | (low >> np.uint64(s)), cap)
        whole = np.minimum(whole, cap)
        frac = np.where(whole == cap, np.uint64(0), low & np.uint64((1 << s) - 1))
    den = np.full(gap.shape, 1 << s, dtype=np.uint64)
    return whole.astype(np.uint64), frac.astype(np.uint64), den


def permute_and_flip(
    src: RandomSource, utility: I64, rate: Rate, alive: Bools | None = None
) -> I64:
    """One exact permute-and-flip selection per row of ``utility`` (higher is better).

    ``utility`` has shape ``(n_keys, n_candidates)``; ``alive`` (same shape)
    excludes candidates already taken (top-k).  Returns the winning column
    per row.  Each alive candidate succeeds independently with probability
    ``exp(-c·(u* − u_r))``; the winner is a uniform pick among the successes.
    """
    utility = np.asarray(utility, dtype=np.int64)
    n_keys, n_cands = utility.shape
    if alive is None:
        alive = np.ones(utility.shape, dtype=np.bool_)
    masked = np.where(alive, utility, np.iinfo(np.int64).min)
    best = masked.max(axis=1)
    # u* − u_r in [0, 2**64): exact in wrap-around uint64 arithmetic.
    gap = best.view(np.uint64)[:, None] - utility.view(np.uint64)
    flat = np.flatnonzero(alive)
    whole, num, den = gamma_parts(gap.reshape(-1)[flat], rate)
    success = np.zeros(n_keys * n_cands, dtype=np.bool_)
    success[flat] = bernoulli_exp(src, whole, num, den)
    success = success.reshape(n_keys, n_cands)
    n_success = success.sum(axis=1).astype(np.uint64)  # >= 1: the best has gap 0
    pick = uniform_below(src, n_success).astype(np.int64)
    rank = np.cumsum(success, axis=1)
    winners: I64 = np.argmax(rank > pick[:, None], axis=1).astype(np.int64)
    return winners


def peel(src: RandomSource, utility: I64, rate: Rate, k: int) -> I64:
    """Top-k by peeling: k permute-and-flip rounds, best first, distinct per row.

    Returns shape ``(n_keys, k)``.  Each round costs the ε that ``rate`` was
    computed for; the caller charges ``k`` of them.
    """
    n_keys = utility.shape[0]
    alive = np.ones(utility.shape, dtype=np.bool_)
    out = np.empty((n_keys, k), dtype=np.int64)
    rows = np.arange(n_keys)
    for r in range(k):
        winners = permute_and_flip(src, utility, rate, alive)
        out[:, r] = winners
        alive[rows, winners] = False
    return out


# -------------------------------------------------------------------------- kinds


def _check_cells(n_keys: int, n_candidates: int) -> None:
    if n_keys * n_candidates > MAX_CELLS:
        raise ValueError(
            f"{n_keys} keys × {n_candidates} candidates = {n_keys * n_candidates} cells; at most "
            f"{MAX_CELLS} are supported in one release. Use fewer keys or candidates."
        )


def _plain(item: object) -> Any:
    """A numpy scalar as the matching Python scalar; anything else unchanged."""
    return item.item() if isinstance(item, np.generic) else item


@dataclass(frozen=True, eq=False)
class Argmax(Kind[Any, pd.Series | pd.DataFrame]):
    """The candidate with the most rows (or largest clipped sum of ``value``), top-k by peeling."""

    name: ClassVar[str] = "argmax_exp"
    planners: ClassVar = (sums.plan_sum,)

    epsilon: Fraction
    column: Hashable
    candidates: pd.Index
    k: int = 1
    value: Hashable | None = None
    clip: Clip | None = None
    #: ``k`` was given: the answer is a list (a DataFrame per key), also for ``k=1``.
    listed: bool = False
    #: Given ``rho=``: the ρ charged (``epsilon`` is then the largest with ε²/2 <= ρ).
    rho: Fraction | None = None

    @classmethod
    def of(
        cls,
        epsilon: Fraction,
        column: Hashable,
        candidates: object,
        *,
        k: object,
        value: Hashable | None,
        clip: object,
        rho: Fraction | None = None,
    ) -> Argmax:
        cands = check_candidates(candidates)
        top = 1 if k is None else check_k(k, len(cands))
        listed = k is not None
        if value is None:
            if clip is not None:
                raise TypeError(
                    "`clip` bounds the per-row `value` summed per candidate; pass value='column' "
                    "with it, or drop `clip` to score candidates by their row counts."
                )
            return cls(epsilon, column, cands, top, listed=listed, rho=rho)
        return cls(epsilon, column, cands, top, value, check_clip(clip), listed, rho)

    def columns(self) -> tuple[Hashable, ...]:
        return (self.column,) if self.value is None else (self.column, self.value)

    def cells(self, rows: Rows) -> tuple[I64 | None, int]:
        """A person's rows are bounded per (key, candidate): each row's candidate."""
        return level_codes(rows.arrays[0], self.candidates), len(self.candidates)

    def read(self, df: pd.DataFrame, n_keys: int) -> Rows:
        check_column(df, self.column)
        check_keys_match(df[self.column], self.candidates, "candidates")
        _check_cells(n_keys, len(self.candidates))
        if self.value is None:
            return Rows(len(df), (df[self.column],))
        check_column(df, self.value)
        return Rows(len(df), (df[self.column], numeric_values(df, self.value)))

    def plan(self, neighbours: Neighbours) -> SelectPlan:
        return plan_argmax(self.epsilon, neighbours, k=self.k, clip=self.clip)

    def entry(self, plan: SelectPlan, neighbours: Neighbours, keys: int | None) -> LedgerEntry:
        columns = [self.column] if self.value is None else [self.column, self.value]
        return ledger_entry(
            self,
            plan,
            neighbours,
            keys,
            operation=self.name if self.k == 1 else f"{self.name}(k={self.k})",
            epsilon=self.epsilon,
            rho=self.rho,
            columns=column_names(columns),
            mechanism="permute_and_flip",
            sensitivity=figures([plan.sensitivity * plan.unit]),
            noise_scale=figures([plan.noise_scale]),
            clip=() if self.clip is None else (self.clip,),
        )

    def tally(self, plan: SelectPlan, rows: Rows, codes: I64 | None, n_keys: int) -> Stats:
        series = rows.arrays[0]
        n_cands = len(self.candidates)
        if codes is None and self.value is None:
            return (candidate_counts(series, self.candidates),)
        cells = level_codes(series, self.candidates)
        if codes is not None:
            cells = np.where((cells >= 0) & (codes >= 0), codes * n_cands + cells, -1)
        if self.value is None:
            return (count_utilities(cells, n_keys, n_cands),)
        assert plan.grid is not None
        return (sum_utilities(rows.arrays[1], cells, n_keys, n_cands, plan.grid),)

    def noise_free(self, plan: SelectPlan, stats: Stats, n_keys: int) -> tuple[I64]:
        """The scores per key and candidate."""
        return (stats[0],)

    @classmethod
    def examples(cls, columns: ExampleColumns) -> tuple[Argmax, ...]:
        one = Fraction(1)
        return (
            cls.of(one, columns.label, columns.labels, k=None, value=None, clip=None),
            cls.of(one, columns.label, columns.labels, k=2, value=None, clip=None),
            *[
                cls.of(one, columns.label, columns.labels, k=None, value=columns.value, clip=c)
                for c in columns.clips
            ],
        )

    def finish(self, plan: SelectPlan, stats: Stats, source: RandomSource, n_keys: int) -> I64:
        return peel(source, *self.noise_free(plan, stats, n_keys), plan.rate, self.k)

    def shape_one(self, answer: I64) -> Any:
        chosen = [_plain(self.candidates[i]) for i in answer[0]]
        return chosen if self.listed else chosen[0]

    def shape_many(self, answer: I64, keys: pd.Index) -> pd.Series | pd.DataFrame:
        cands = self.candidates.rename(self.column)
        if not self.listed:
            return pd.Series(cands.take(answer[:, 0]), index=keys, name=self.column)
        return pd.DataFrame({r + 1: cands.take(answer[:, r]) for r in range(self.k)}, index=keys)


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
        """By rank: how many rows beyond the best grid point's the answer may miss ``q·n`` by.

        Each key's answer is a candidate whose score, its distance in rows from
        ``q·n`` to its ranks (times ``q``'s denominator), exceeds the best
        candidate's by more than ``t`` with probability at most ``1 − level``:
        permute-and-flip accepts a candidate ``g`` score units behind with
        probability ``exp(−c·g)`` and returns one it accepted, so the ``m − 1``
        others of ``m`` candidates fall more than ``k`` units behind with
        probability at most ``(m − 1)·exp(−c·(k + 1))`` (scores are integers).
        ``t`` is the smallest such ``k``, in rows.  Data-free; ``n`` plays no part.
        """
        others, rate = self.grid.size - 1, plan.rate.value
        if others == 0:
            return (0.0,)
        if rate == 0:
            return (math.inf,)
        miss = 1 - Fraction(repr(level))
        k = max(0, math.ceil(math.log(others / float(miss)) / float(rate)) - 1)
        while others * math.exp(-float(rate) * (k + 1)) > miss:  # float rounding: never narrower
            k += 1
        return (float(k * plan.unit),)

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


# ------------------------------------------------------------------ signatures

_NUMERIC = Param(
    "column",
    "Hashable",
    doc="""\
    column : label
        A numeric column; missing values are skipped.""",
    positional=True,
)
_GRID = Param(
    "candidates",
    "Any",
    "None",
    """\
    candidates : list, array or Index of numbers
        $grid_doc""",
)


#: argmax_exp's candidates and k, as its forms type them.
_ITERABLE, _CATEGORIES = ("Iterable[C]", REQUIRED), ("pd.CategoricalDtype", REQUIRED)
_NO_K, _K = ("None", "None"), ("int", REQUIRED)


def _argmax(args: Mapping[str, Any], loss: tuple[str, Fraction]) -> Argmax:
    epsilon, charged = selection_loss(*loss)
    return Argmax.of(
        epsilon,
        args["column"],
        args["candidates"],
        k=args["k"],
        value=args["value"],
        clip=args["clip"],
        rho=charged,
    )


def _quantile(args: Mapping[str, Any], loss: tuple[str, Fraction]) -> Quantile:
    epsilon, charged = selection_loss(*loss)
    return Quantile.of(epsilon, args["column"], args["q"], args["candidates"], "quantile", charged)


def _median(args: Mapping[str, Any], loss: tuple[str, Fraction]) -> Quantile:
    epsilon, charged = selection_loss(*loss)
    return Quantile.of(epsilon, args["column"], 0.5, args["candidates"], "median", charged)


ARGMAX_EXP = Signature(
    "argmax_exp",
    (
        Param(
            "column",
            "Hashable",
            doc="""\
            column : label
                The column whose values are the candidates (e.g. ``"product"``).""",
            positional=True,
        ),
        Param(
            "candidates",
            "Any",
            "None",
            """\
            candidates : list, array, Index or CategoricalDtype
                The public candidates, keyword-only. Never read them from the data
                (``df[column].unique()``): which values occur can reveal who is in
                it. Rows whose value is missing or not a candidate are dropped; a
                candidate with no rows can still win.""",
        ),
        EPSILON,
        RHO_SELECT,
        Param(
            "k",
            "int | None",
            "None",
            """\
            k : int, optional
                How many candidates to return, best first (top-k by peeling): with
                ``k``, always a list (per key, a DataFrame), also for ``k=1``.""",
        ),
        Param(
            "value",
            "Hashable | None",
            "None",
            """\
            value : label, optional
                Score each candidate by the sum of this numeric column over its
                rows (after clipping to ``clip``) instead of by its row count.
                Missing values are skipped.""",
        ),
        Param(
            "clip",
            "Any",
            "None",
            """\
            clip : (float, float), optional
                Public clip bounds for ``value``; required with it.""",
        ),
        MAX_ROWS,
    ),
    (
        Form(("C", "pd.Series"), {"candidates": _ITERABLE, "k": _NO_K}),
        Form(("list[C]", "pd.DataFrame"), {"candidates": _ITERABLE, "k": _K}),
        Form(("Any", "pd.Series"), {"candidates": _CATEGORIES, "k": _NO_K}),
        Form(("list[Any]", "pd.DataFrame"), {"candidates": _CATEGORIES, "k": _K}),
    ),
    _argmax,
    summary="The candidate with the most rows (or the largest clipped sum of ``value``)$per_key, "
    "privately.",
    returns="""\
        One candidate (no ``k``; typed as the candidates' element type), or a
        list of ``k`` distinct candidates, best first. $indexed Grouped: with
        ``k``, columns ``1..k``, best first.""",
    raises="""\
        All argument errors (missing candidates, duplicates, ``k`` larger than
        the number of candidates, ...) are raised before any spend.""",
    notes="""\
        Permute-and-flip (report-noisy-max with exponential noise), sampled
        exactly: each candidate is accepted independently with probability
        ``exp(-c·(best − score))`` and the answer is a uniform pick among the
        accepted ones. Nothing is exponentiated in floating point, so huge
        counts cannot overflow. Costs ``epsilon`` (``epsilon/k`` per peel).
        Under add_remove one person moves one candidate's score one way
        (sensitivity 1 for counts, ``max(|L|, |U|)`` for sums), so
        ``c = ε/Δ``; under substitute ``Δ = 1`` or ``max(U − L, |L|, |U|)`` and
        ``c = ε/(2Δ)``. Clipped sums are scored exactly in integers on a
        power-of-two grid chosen from (clip, ε) only; c is rounded down, so the
        realised ε never exceeds ``epsilon``. Public: $public the candidates,
        ``k``, ``clip``, ``epsilon``.""",
    grouped="""\
        One exact permute-and-flip per key, all keys in one vectorized pass
        (a row moving between keys under substitute is a removal in one and an
        addition in the other). A key with no rows gets a uniformly random
        candidate.""",
)

QUANTILE = Signature(
    "quantile",
    (
        _NUMERIC,
        Param(
            "q",
            "float",
            doc="""\
            q : float
                The quantile level in ``[0, 1]``, read as the shortest decimal
                (``0.9`` is ``9/10``).""",
            positional=True,
        ),
        _GRID,
        EPSILON,
        RHO_SELECT,
        MAX_ROWS,
    ),
    (Form(("float", "pd.Series")),),
    _quantile,
    summary="The ``q``-quantile of ``column``$per_key, privately chosen from a public grid.",
    returns="One grid point. $indexed",
    raises="A bad ``q`` or grid (unsorted, duplicated, non-finite) raises before any spend.",
    notes="""\
        Permute-and-flip, sampled exactly, on the score of each grid point c:
        the distance from ``q·n`` to ``[#(x < c), #(x ≤ c)]`` (lower is
        better; zero exactly when c is a q-quantile, so ties count). The score
        is not monotone, so ``c = ε/(2Δ)`` with sensitivity
        ``Δ = max(q, 1 − q)`` under add_remove and ``Δ = 1`` under substitute
        (a changed row leaves one side and joins another). Costs ``epsilon``.
        Public: $public the grid, ``q``, ``epsilon``.

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
    (_NUMERIC, _GRID, EPSILON, RHO_SELECT, MAX_ROWS),
    (Form(("float", "pd.Series")),),
    _median,
    summary="The median of ``column``$per_key, privately chosen from a public grid: "
    "``quantile(column, 0.5)``.",
    returns="One grid point. $indexed",
    notes="""\
        See :meth:`quantile`. Sensitivity of the score 1/2 under add_remove
        (``c = ε``) and 1 under substitute (``c = ε/2``). Costs ``epsilon``.
        Public: $public the grid, ``epsilon``.""",
    columns=lambda args: (args["column"],),
)
