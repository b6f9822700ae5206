"""argmax_exp, and the exponential-mechanism family it shares with the quantiles.

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

- *plans* (:func:`plan_argmax`; the quantiles' in :mod:`pandas_dp.kinds.quantile`): the
  privacy map, from
  public parameters only.  The rate ``c`` is ``ε/Δ`` when one person moves one
  candidate's score in one direction (add_remove counts and clipped sums:
  monotone utilities, McKenna & Sheldon Remark 1) and ``ε/(2Δ)`` otherwise;
  it is rounded *down* to a dyadic rational (:class:`Rate`), so the realised ε
  never exceeds the one charged.
- *kernels*: utilities per (key, candidate) cell in one vectorized pass
  (bincounts of codes; exact integer grid sums; for quantiles one searchsorted
  and one 2-D bincount), then :func:`permute_and_flip` over all keys at once,
  and :func:`peel` for top-k.

:class:`Argmax` is the release kind here (:class:`~pandas_dp.kinds.quantile.Quantile`
is the quantiles'); its statistics are integer score tables that add up across
row slices.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from dataclasses import dataclass
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
    "Rate",
    "SelectPlan",
    "candidate_counts",
    "count_utilities",
    "gamma_parts",
    "peel",
    "permute_and_flip",
    "plan_argmax",
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


# ------------------------------------------------------------------ signatures


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
