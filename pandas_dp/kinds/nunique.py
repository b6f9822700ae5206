"""Distinct values: ``df.dp.nunique(column)``, per key with parallel composition.

Values are compared by a 64-bit hash, so the statistics of two slices of rows
combine by a union of their distinct ``(key, hash)`` pairs; the noise is a
count's (:mod:`pandas_dp.kinds.count`).  :class:`Nunique` is the kind,
``NUNIQUE`` the signature of ``df.dp.nunique``.
"""

from __future__ import annotations

import functools
from collections.abc import Hashable, Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from ..accounting.events import Event
from ..accounting.ledger import LedgerEntry
from ..core.noise import (
    I64,
    RandomSource,
    integer_scale,
)
from ..core.text import column_names
from ..core.validation import (
    check_column,
    loss_fields,
)
from ..mechanisms.accuracy import (
    level_miss,
    units_half_width,
)
from .base import (
    EXAMPLE_LOSSES,
    ExampleColumns,
    Kind,
    Neighbours,
    Rows,
    Stats,
    ledger_entry,
)
from .count import CountPlan, count_events, plan_count_rho, release_counts
from .signature import EPSILON, MAX_ROWS, RHO, Form, Param, Signature

__all__ = ["NUNIQUE", "Nunique", "distinct_pairs", "plan_nunique", "plan_nunique_rho"]


@functools.lru_cache(maxsize=512)  # plans are pure functions of public parameters
def plan_nunique(epsilon: Fraction, neighbours: Neighbours) -> CountPlan:
    """Discrete Laplace on distinct counts: ``Δ`` as :class:`Nunique` states it.

    Ungrouped, ``Δ`` is the rows one person may contribute (1, or
    ``max_rows``) under both adjacencies: removing ``k`` rows lowers the
    distinct count by at most ``k``, adding ``k`` raises it by at most ``k``,
    so changing them moves it by at most ``k``.  Grouped, a count's ``Δ`` (L1
    over keys): a changed row may leave one key's values and reach another's.
    """
    sensitivity = neighbours.count_sensitivity() if neighbours.grouped else neighbours.contributions
    integer_scale(sensitivity, epsilon)  # refuses, before the spend, a scale too large to draw
    return CountPlan(sensitivity, epsilon)


@functools.lru_cache(maxsize=512)  # plans are pure functions of public parameters
def plan_nunique_rho(rho: Fraction, neighbours: Neighbours) -> CountPlan:
    """The discrete Gaussian on distinct counts: ``Δ₂²`` as :func:`plan_nunique` reasons.

    Ungrouped, one person moves the one distinct count by at most its rows:
    ``Δ₂² = max_rows²`` (1 for one row per person).  Grouped, a count's
    ``Δ₂²`` over the keys (:meth:`Neighbours.count_sq_sensitivity`: ``k²·g``).
    """
    if neighbours.grouped:
        return plan_count_rho(rho, neighbours)
    reach = neighbours.contributions
    return CountPlan(reach, None, rho, reach * reach, (1, reach))


def distinct_pairs(keys: I64, hashes: I64) -> Stats:
    """The distinct ``(key, value hash)`` pairs, sorted by key then hash."""
    order = np.lexsort((hashes, keys))
    keys, hashes = keys[order], hashes[order]
    first = np.ones(keys.size, dtype=np.bool_)
    first[1:] = (keys[1:] != keys[:-1]) | (hashes[1:] != hashes[:-1])
    return keys[first], hashes[first]


@dataclass(frozen=True)
class Nunique(Kind[int, pd.Series]):
    """Distinct non-missing values of ``column`` per key (``Series.nunique()``): discrete Laplace.

    Values are compared by a 64-bit hash (``pd.util.hash_pandas_object``, the
    same in every process), so the statistics of two slices of rows combine
    by a union of their distinct ``(key, hash)`` pairs; two values whose
    hashes collide (chance about ``d²/2**65`` for ``d`` distinct values)
    count once, which never raises the sensitivity.
    """

    name: ClassVar[str] = "nunique"
    totals: ClassVar[bool] = True
    planners: ClassVar = (plan_nunique, plan_nunique_rho)
    plannable: ClassVar[bool] = True

    epsilon: Fraction | None
    column: Hashable
    #: Under a ρ budget: the discrete Gaussian at this ρ instead (``epsilon`` None).
    rho: Fraction | None = None

    def columns(self) -> tuple[Hashable, ...]:
        return (self.column,)

    def read(self, df: pd.DataFrame, n_keys: int) -> Rows:
        check_column(df, self.column)
        return Rows(len(df), (df[self.column],))

    def plan(self, neighbours: Neighbours) -> CountPlan:
        if self.rho is not None:
            return plan_nunique_rho(self.rho, neighbours)
        assert self.epsilon is not None
        return plan_nunique(self.epsilon, neighbours)

    def half_width(self, plan: CountPlan, level: float, n: int | None = None) -> tuple[float, ...]:
        """``t`` in distinct values: ``P(|noise| > t) <= 1 − level`` (a count's noise)."""
        return (float(units_half_width(plan.scale, level_miss(level))),)

    def events(self, plan: CountPlan, neighbours: Neighbours) -> tuple[Event, ...]:
        return count_events(plan, neighbours)

    def entry(self, plan: CountPlan, neighbours: Neighbours, keys: int | None) -> LedgerEntry:
        return ledger_entry(
            self,
            plan,
            neighbours,
            keys,
            epsilon=self.epsilon,
            rho=self.rho,
            columns=column_names([self.column]),
            mechanism="discrete_laplace" if self.rho is None else "discrete_gaussian",
            sensitivity=plan.texts[0],
            noise_scale=plan.texts[1],
        )

    def tally(self, plan: CountPlan, rows: Rows, codes: I64 | None, n_keys: int) -> Stats:
        values = rows.arrays[0]
        valid = values.notna().to_numpy(dtype=np.bool_)
        present = values[valid]
        if present.dtype.kind == "f":
            present = present + 0.0  # -0.0 is 0.0, as for Series.nunique
        hashes = pd.util.hash_pandas_object(present, index=False).to_numpy().view(np.int64)
        keys = np.zeros(hashes.size, dtype=np.int64) if codes is None else codes[valid]
        kept = keys >= 0
        return distinct_pairs(keys[kept], hashes[kept])

    def combine(self, a: Stats, b: Stats) -> Stats:
        """The union of two slices' distinct pairs (a value in both counts once)."""
        return distinct_pairs(np.concatenate([a[0], b[0]]), np.concatenate([a[1], b[1]]))

    def recode(self, stats: Stats, mapping: I64, n_keys: int) -> Stats:
        """The distinct pairs with their keys' codes moved (a pair of a dropped key goes)."""
        codes = mapping[stats[0]]
        kept = codes >= 0
        return distinct_pairs(codes[kept], stats[1][kept])

    def noise_free(self, plan: CountPlan, stats: Stats, n_keys: int) -> tuple[I64, ...]:
        """The distinct values per key."""
        return (np.bincount(stats[0], minlength=n_keys).astype(np.int64),)

    @classmethod
    def examples(cls, columns: ExampleColumns) -> tuple[Nunique, ...]:
        return tuple([cls(e, columns.value, r) for e, r in EXAMPLE_LOSSES])

    def finish(self, plan: CountPlan, stats: Stats, source: RandomSource, n_keys: int) -> I64:
        return release_counts(source, self.noise_free(plan, stats, n_keys)[0], plan)

    def shape_one(self, answer: I64) -> int:
        return int(answer[0])

    def shape_many(self, answer: I64, keys: pd.Index) -> pd.Series:
        return pd.Series(answer, index=keys, name=self.column)


def _one_column(args: Mapping[str, Any]) -> tuple[Hashable, ...]:
    return (args["column"],)


def _nunique(args: Mapping[str, Any], loss: tuple[str, Fraction]) -> Nunique:
    return Nunique(column=args["column"], **loss_fields(*loss))


NUNIQUE = Signature(
    "nunique",
    (
        Param(
            "column",
            "Hashable",
            doc="""\
            column : label
                The column whose distinct non-missing values are counted (like
                ``df[column].nunique()``).""",
            positional=True,
        ),
        EPSILON,
        RHO,
        MAX_ROWS,
    ),
    (Form(("int", "pd.Series")),),
    _nunique,
    summary="Noisy number of distinct non-missing values of ``column``$per_key.",
    returns="""\
        The exact distinct count plus discrete Laplace noise; may be negative
        when tiny. $indexed""",
    notes="""\
        Costs ``epsilon``. Sensitivity 1 under add_remove and under substitute
        alike: adding or removing a row, or changing its value, moves the
        distinct count by at most one; with a privacy unit ``max_rows`` (a
        person's ``k`` rows changed: at most ``k`` values leave and ``k``
        arrive). Discrete Laplace noise of scale Δ/ε. Values are compared by a
        64-bit hash (:class:`pandas_dp.kinds.nunique.Nunique`). Public:
        $public``epsilon``.""",
    grouped="""\
        A distinct count per key: L1 sensitivity 1 under add_remove, 2 under
        substitute (a changed row may leave one key's values and reach
        another's).""",
    columns=_one_column,
)
