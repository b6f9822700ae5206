"""Which Dask collections may spend which budget: bindings by identity, and lineage markers.

A collection is bound by its identity (a weak reference, forgotten when it
dies) and marked by its expression name, so a collection derived from it by a
plain Dask operation is recognised as coming from a protected one and refused
(:func:`require` names the fix). Used by :mod:`pandas_dp.dask` only.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Hashable
from dataclasses import dataclass

import dask.dataframe as dd

from ..accounting.budget import PrivacyBudget, live_budget, marker_of
from ..core.errors import MissingBudgetError, PandasDPError
from ._graph import check_unit_sources, pandas_parts

__all__ = [
    "LOCK",
    "Bound",
    "bind_collection",
    "binding",
    "marked_by",
    "refuse_rebinding",
    "require",
]


@dataclass(frozen=True)
class Bound:
    """A collection that may spend: a weak reference to it, its budget, whether it is root.

    ``unit`` is its privacy-unit column (None: one row is one person).
    ``name`` is its expression name when bound: a collection with a privacy
    unit changed in place (``ddf["customer_id"] = ...``) has another one and
    spends nothing until ``inherit`` (its unit column may no longer identify
    the persons bound).
    """

    ref: weakref.ref[dd.DataFrame]
    budget: PrivacyBudget
    root: bool
    unit: Hashable | None
    #: The collection's expression name when bound: ``ddf[col] = ...`` changes it in place.
    name: str
    #: Default ``(max_rows, max_groups)`` when not the budget's (a merged collection).
    defaults: tuple[int | None, int | None] | None = None


# id(collection) -> its binding (the weak reference removes the entry when it dies).
BOUND: dict[int, Bound] = {}
# Expression name of every bound collection -> the id of its budget (the lineage marker).
MARKED: dict[str, str] = {}
LOCK = threading.RLock()


def binding(ddf: dd.DataFrame) -> Bound | None:
    found = BOUND.get(id(ddf))
    return found if found is not None and found.ref() is ddf else None


def _forget(key: int, ref: weakref.ref[dd.DataFrame]) -> None:
    with LOCK:
        found = BOUND.get(key)
        if found is not None and found.ref is ref:
            del BOUND[key]


def bind_collection(
    ddf: dd.DataFrame,
    budget: PrivacyBudget,
    *,
    root: bool,
    unit: Hashable | None,
    defaults: tuple[int | None, int | None] | None = None,
) -> None:
    key = id(ddf)
    ref = weakref.ref(ddf, lambda r: _forget(key, r))
    check_unit_sources(ddf, unit)  # once bound, a unit changed in place stops the collection
    with LOCK:
        BOUND[key] = Bound(ref, budget, root, unit, ddf._name, defaults)
        MARKED[ddf._name] = budget.id


def marked_by(ddf: dd.DataFrame) -> PrivacyBudget | None:
    """The live budget ``ddf`` comes from: a bound collection in its graph, or a frame's marker.

    The marker is in the ``attrs`` of a pandas object it is made of (``dd.from_pandas(df)``, ...).
    """
    for node in ddf.expr.walk():
        budget_id = MARKED.get(node._name)
        if budget_id is not None:
            found = live_budget(budget_id)
            if found is not None:
                return found
        for part in pandas_parts(node):
            if isinstance(getattr(part, "attrs", None), dict):
                marker = marker_of(part)
                found = None if marker is None else live_budget(str(marker["budget"]))
                if found is not None:
                    return found
    return None


def require(ddf: dd.DataFrame) -> Bound:
    """The binding a release of ``ddf`` may spend, or MissingBudgetError that names the fix."""
    found = binding(ddf)
    if found is not None:
        if found.unit is not None and found.name != ddf._name:
            raise MissingBudgetError(
                "This Dask collection has a privacy unit and was changed in place after its "
                "budget was attached (ddf[column] = ...): its unit column may no longer identify "
                "the persons bound. Derive columns with ddf.dp.assign(...), or assert it still "
                "holds the same persons with ddf.dp.inherit(ddf)."
            )
        return found
    if marked_by(ddf) is not None:
        raise MissingBudgetError(
            "This Dask collection cannot spend a privacy budget. It was derived from a protected "
            "collection by a Dask operation (ddf[mask], concat, merge, map_partitions, "
            "repartition, groupby, a re-read of the same files, ...), or made from a protected "
            "pandas frame (dd.from_pandas(df), dd.from_delayed, parquet written from it), which "
            "may mix or repeat people. Derive it with ddf.dp.filter(...) / ddf.dp.query(...) / "
            "ddf.dp.assign(...) / ddf.dp.select(...) / ddf.dp.persist() / "
            "ddf.dp.repartition(...), join it with ddf.dp.merge(...), or call "
            "result.dp.inherit(ddf) (or "
            "result.dp.inherit(df), the pandas frame) if it still has at most one row per person."
        )
    raise MissingBudgetError(
        "This Dask collection has no privacy budget. Attach one first, on the collection that "
        "holds one row per person: ddf.dp.set_budget(epsilon=1.0)."
    )


def refuse_rebinding(ddf: dd.DataFrame) -> None:
    if binding(ddf) is not None:
        raise PandasDPError(
            "This collection already has a privacy budget; a second one would reset the "
            "accounting for the same people. Read it with ddf.dp.budget."
        )
    live = marked_by(ddf)
    if live is not None:
        named = f" {live.name!r}" if live.name else ""
        raise PandasDPError(
            "This collection reads the data of, or was derived from, a collection or pandas frame "
            f"(dd.from_pandas(df), ...) whose privacy budget{named} was created in this process: "
            "a new budget would reset the accounting for the same people. Continue that budget "
            "with ddf.dp.inherit(source), where source is that collection or the pandas frame "
            "(ddf.dp.inherit(df)); to resume a budget across sessions, use a named ledger "
            "budget: set_budget(epsilon=..., ledger=..., name=...)."
        )
