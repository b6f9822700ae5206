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

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar, overload

import pandas as pd

from .aggregate import Count, Mean, Sum
from .budget import PrivacyBudget, require_binding
from .keys import Grouping
from .kind import Kind, Neighbours, Stats
from .ledger import LedgerEntry
from .select import Argmax, Quantile
from .validation import check_rows

__all__ = ["KINDS", "Planned", "plan_caches", "plan_release", "release", "run"]

One = TypeVar("One")
Many = TypeVar("Many")

#: Every release kind: the one list the pipeline, the surfaces and the tests share.
KINDS: tuple[type[Kind[Any, Any]], ...] = (Count, Sum, Mean, Argmax, Quantile)


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
    planned = plan_release(kind, group, budget.adjacency, root=binding.is_root(df))
    codes = None if group is None else group.codes(df)
    return release(
        budget, kind, group, planned, lambda: kind.tally(planned.plan, rows, codes, n_keys)
    )


@dataclass(frozen=True)
class Planned:
    """The data-free part of a release: neighbour relation, plan, ledger entry."""

    neighbours: Neighbours
    plan: Any
    entry: LedgerEntry


def plan_release(
    kind: Kind[Any, Any], group: Grouping | None, adjacency: str, *, root: bool
) -> Planned:
    """Plan a release from public parameters only (``root``: the budget's own rows).

    Shared by every backend (pandas here, Dask in :mod:`pandas_dp.dask`).
    """
    neighbours = Neighbours.of(
        adjacency,
        group is not None,
        adjacency == "substitute" and group is None and kind.counts_rows() and root,
    )
    plan = kind.plan(neighbours)
    entry = kind.entry(plan, neighbours, None if group is None else len(group.keys))
    return Planned(neighbours, plan, entry)


@overload
def release(
    budget: PrivacyBudget,
    kind: Kind[One, Many],
    group: None,
    planned: Planned,
    statistics: Callable[[], Stats],
) -> One: ...


@overload
def release(
    budget: PrivacyBudget,
    kind: Kind[One, Many],
    group: Grouping,
    planned: Planned,
    statistics: Callable[[], Stats],
) -> Many: ...


def release(
    budget: PrivacyBudget,
    kind: Kind[One, Many],
    group: Grouping | None,
    planned: Planned,
    statistics: Callable[[], Stats],
) -> One | Many:
    """Reserve ε, compute the exact ``statistics()``, commit, then noise and shape.

    The reservation is returned if ``statistics()`` raised (nothing was
    released); it is committed before any noise is drawn.  Every backend's
    releases end here.
    """
    with budget.reserve(planned.entry):  # committed before any noise; returned if it raised
        stats = statistics()
    answer = kind.finish(planned.plan, stats, budget.source)
    if group is None:
        return kind.shape_one(answer)
    return kind.shape_many(answer, group.keys)
