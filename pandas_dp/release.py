"""The release pipeline: one skeleton for every release, ungrouped or grouped.

Every release of ``df.dp`` and ``df.dp.groupby(...)`` runs :func:`run`, in one
order that the privacy argument depends on::

    read (validate columns and dtypes)
      → resolve the budget
      → plan (data-free: sensitivity, grid, scale or rate, from the public
        parameters and the neighbour relation)
      → encode rows to public key codes
      → reserve ε (one ledger entry; it counts against every other query)
      → tally (exact integer statistics, summable across row slices)
      → commit (before any noise; a reservation whose tally raised is
        returned: nothing was released)
      → finish (noise and post-processing)
      → shape (the pandas result)

An ungrouped release is the one-key grouped release (``codes`` None, one key).
The release kinds are listed once, in :data:`KINDS`; what is particular to a
kind lives in its class (:mod:`pandas_dp.aggregate`, :mod:`pandas_dp.select`).
"""

from __future__ import annotations

from typing import Any, TypeVar, overload

import pandas as pd

from .aggregate import Count, Histogram, Mean, Sum, Var
from .budget import require_binding
from .describe import Describe
from .keys import Grouping
from .kind import Kind, Neighbours
from .select import Argmax, Quantile
from .validation import check_rows

__all__ = ["KINDS", "plan_caches", "run"]

One = TypeVar("One")
Many = TypeVar("Many")

#: Every release kind: the one list the pipeline, the surfaces and the tests share.
KINDS: tuple[type[Kind[Any, Any]], ...] = (
    Count,
    Sum,
    Mean,
    Argmax,
    Quantile,
    Var,
    Histogram,
    Describe,
)


def plan_caches() -> list[Any]:
    """The cached plan functions of every kind (tests clear them around each test)."""
    return list(dict.fromkeys(p for kind in KINDS for p in kind.planners))


@overload
def run(df: pd.DataFrame, kind: Kind[One, Many], group: None) -> One: ...


@overload
def run(df: pd.DataFrame, kind: Kind[One, Many], group: Grouping) -> Many: ...


def run(df: pd.DataFrame, kind: Kind[One, Many], group: Grouping | None) -> One | Many:
    """Release ``kind`` on ``df`` (grouped by ``group``), spending from the frame's budget."""
    n_keys = 1 if group is None else len(group.keys)
    rows = kind.read(df, n_keys)
    check_rows(df)
    binding = require_binding(df)
    budget = binding.budget
    neighbours = Neighbours.of(
        budget.adjacency,
        group is not None,
        budget.adjacency == "substitute"
        and group is None
        and kind.counts_rows()
        and binding.is_root(df),
    )
    plan = kind.plan(neighbours)
    codes = None if group is None else group.codes(df)
    entry = kind.entry(plan, neighbours, None if group is None else n_keys)
    with budget.reserve(entry):  # committed before any noise; returned if the tally raised
        stats = kind.tally(plan, rows, codes, n_keys)
    answer = kind.finish(plan, stats, budget.source)
    if group is None:
        return kind.shape_one(answer)
    return kind.shape_many(answer, group.keys)
