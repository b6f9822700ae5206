"""What a Dask collection is made of, read from its expression graph and never its data.

The checks :mod:`pandas_dp.dask` makes before anything runs or is spent:

- :func:`pandas_parts`: the pandas objects an expression holds, whose
  ``attrs`` may carry the marker of a bound frame (``dd.from_pandas(df)``);
- :func:`same_rows`: whether a mask or a column lines up with a collection's
  rows (only row-wise expressions between them);
- :func:`runs_here`: whether a computation's tasks run in this process, where
  the tallies that returned can be counted (:data:`TALLIES`);
- :func:`cluster_workers` and :func:`rows_known`: the workers of
  a ``distributed`` cluster, and the rows Dask knows without computing, from
  which person-level releases plan their rounds (time and memory only);
- :func:`check_unit_sources`: whether a privacy unit's ids are of one type,
  in the collection and in the pandas frames it was made from.
"""

from __future__ import annotations

import threading
from collections.abc import Hashable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import dask
import dask.dataframe as dd
import pandas as pd
from dask.base import get_scheduler
from dask.dataframe.dask_expr._expr import Literal
from dask.dataframe.dask_expr._reductions import Len
from dask.delayed import Delayed
from dask.local import get_sync
from dask.threaded import get as threaded_get

from ..core.validation import check_column, check_unit_ids

__all__ = [
    "TALLIES",
    "Count",
    "check_unit_sources",
    "cluster_workers",
    "pandas_parts",
    "rows_known",
    "runs_here",
    "same_rows",
]


def pandas_parts(node: Any) -> Iterator[Any]:
    """The pandas objects one expression is made of: its metadata and its literal inputs.

    ``dd.from_pandas(df)`` holds ``df``; ``dd.from_delayed`` holds Delayed
    objects whose graphs may hold frames, also inside the lists, tuples, sets
    and dicts of a task's arguments (not inside other objects: a closure or a
    ``functools.partial``); a frame read from parquet written
    from a marked frame has the marker in its metadata.
    """
    try:
        meta = node._meta
    except Exception:  # an expression without metadata (a literal): its operands still count
        meta = None
    yield meta
    walked = {id(dependency) for dependency in node.dependencies()}
    for operand in node.operands:
        if id(operand) in walked:
            continue
        if isinstance(operand, Delayed):  # dd.from_delayed([...]): the frames in its graph
            for task in operand.__dask_graph__().values():
                arguments = (*getattr(task, "args", ()), *getattr(task, "kwargs", {}).values())
                for value in (task, *arguments):
                    yield from _literals(getattr(value, "value", value))
        else:
            yield operand  # dd.from_pandas(df) holds df (wrapped: attributes pass through)


def _literals(value: Any) -> Iterator[Any]:
    """``value`` and what the lists, tuples, sets and dicts in it hold, at any depth.

    A task's argument ``[df_a, df_b]`` (``delayed(pd.concat)([...])``) holds
    frames one level down or deeper.  Objects are walked once each (a
    container that holds itself ends).
    """
    stack, seen = [value], set()
    while stack:
        item = stack.pop()
        yield item
        if isinstance(item, list | tuple | set | frozenset | dict) and id(item) not in seen:
            seen.add(id(item))
            stack.extend(item.values() if isinstance(item, dict) else item)


def check_unit_sources(ddf: dd.DataFrame, unit: Hashable | None) -> None:
    """Refuse a unit column whose ids may not be one type, before anything runs.

    Checked on the collection's dtype and on the pandas frames it was made
    from (:func:`pandas_parts`): ``dd.from_pandas`` turns an object column
    into strings, so ids ``1``, ``1.0`` and ``True`` (one person to pandas)
    become three persons under a ``string`` dtype.  Dtypes only, never values.
    Nothing to check without a unit (None).  :mod:`pandas_dp.dask` checks
    whenever it binds a collection with a unit: a collection changed in place
    spends nothing until it is bound again, so every release reads a checked
    unit.
    """
    if unit is None:
        return
    check_unit_ids(ddf._meta[check_column(ddf._meta, unit)].dtype, unit)
    for node in ddf.expr.walk():
        for part in pandas_parts(node):
            dtypes = getattr(part, "dtypes", None)  # a frame's: a Series of dtypes
            if isinstance(dtypes, pd.Series):
                for label, dtype in dtypes.items():
                    if label == unit:
                        check_unit_ids(dtype, unit)


#: The dask-expr expressions that keep every row in its partition, at its place, with its
#: index label, and compute a row's value from that row alone.  A mask or an assigned
#: column whose expression is built only of these over the collection itself lines up
#: with its rows; any other one (set_index, shuffle, sort_values, repartition,
#: reset_index, a filter, map_partitions, the index, another input, or an expression a
#: later Dask adds) may put other rows, or other labels, where the collection's rows are.
_ROWWISE = frozenset(
    {
        # selection and arithmetic: ddf.x, ddf.x + 1, ddf.x > 0.5, (ddf.a > 1) & ddf.b, ~m
        "Projection", "Add", "Sub", "Mul", "Div", "FloorDiv", "Mod", "Pow", "And", "Or", "XOr",
        "EQ", "NE", "LT", "LE", "GT", "GE", "MethodOperator", "Invert", "Neg", "Pos", "Abs",
        "EQSeries", "NESeries", "LTSeries", "LESeries", "GTSeries", "GESeries",
        "EQFrame", "NEFrame", "LTFrame", "LEFrame", "GTFrame", "GEFrame",
        # elementwise methods: isin, between, fillna, astype, .str / .dt / .cat, map, eval, ...
        "Isin", "Between", "Clip", "Round", "Sqrt", "Fillna", "IsNa", "NotNull", "AsType",
        "Where", "Mask", "Replace", "CaseWhen", "ToNumeric", "ToDatetime", "ToTimedelta",
        "FunctionMap", "PropertyMap", "SplitMap", "AsUnknown", "ArrowStringConversion",
        "Map", "Apply", "Eval", "Assign", "Drop",
    }
)  # fmt: skip


def _rowwise(node: Any) -> bool:
    """Whether one expression keeps each row in place and computes it from that row alone."""
    kind = type(node)
    if not kind.__module__.startswith("dask."):
        return False
    if kind.__name__ == "_DelayedExpr":  # a literal: isin's list of values
        graph = dict(node.obj.__dask_graph__())
        return len(graph) == 1 and type(graph[node.obj.key]).__name__ == "DataNode"
    if kind.__name__ == "Map" and len(node.dependencies()) != 1:
        return False  # ddf.a.map(ddf.b): a lookup in other rows, by value
    return kind.__name__ in _ROWWISE


def same_rows(value: Any, ddf: dd.DataFrame, argument: str) -> None:
    """Refuse a Dask Series that may not line up with ``ddf``'s rows (before anything runs).

    Every path of ``value``'s expression graph must lead to ``ddf``'s own
    expression through row-wise expressions only (see ``_ROWWISE``): Dask
    lines a mask or a column up with the collection partition by partition
    and, inside a partition, by index label, so a series that went through a
    shuffle, a sort, a new index or another collection would select or set
    other persons' rows.  Anything not known to be row-wise is refused.
    """
    target = ddf._name
    stack, seen = [value.expr], set()
    while stack:
        node = stack.pop()
        if node._name == target or node._name in seen:
            continue
        seen.add(node._name)
        if not _rowwise(node):
            raise ValueError(
                f"`{argument}` must be computed row by row from this collection's own columns, "
                "e.g. ddf.amount > 0, (ddf.a > 1) & ddf.b.isin([...]) or ddf.s.str.len() > 2; "
                f"it goes through {type(node).__name__}, which may move rows, change their "
                "index or come from another collection (set_index, shuffle, sort_values, "
                "repartition, reset_index, ddf[mask], map_partitions, another collection), so "
                "it could line other persons' values up with these rows. Build it from this "
                "collection itself, e.g. ddf.dp.filter(lambda d: d.amount > 0), or use "
                "ddf.dp.query(...)."
            )
        stack.extend(node.dependencies())


def runs_here(lazy: Any) -> bool:
    """Whether ``lazy``'s tasks run in this process: the synchronous or threaded scheduler."""
    scheduler = get_scheduler(collections=[lazy])
    if scheduler is get_sync:
        return True
    pool = dask.config.get("pool", None)
    return scheduler is threaded_get and (pool is None or isinstance(pool, ThreadPoolExecutor))


def cluster_workers(lazy: Any) -> list[tuple[int, int]]:
    """Each worker's ``(memory_limit, nthreads)`` on the ``distributed`` cluster running ``lazy``.

    Empty when another scheduler runs it; a limit 0 where a worker has none:
    the cluster's configuration, never the data.
    """
    client = getattr(get_scheduler(collections=[lazy]), "__self__", None)
    if client is None or not type(client).__module__.startswith("distributed."):
        return []
    workers = client.scheduler_info().get("workers", {}).values()
    return [(int(w.get("memory_limit") or 0), int(w.get("nthreads") or 1)) for w in workers]


def rows_known(ddf: dd.DataFrame) -> int | None:
    """The rows of ``ddf`` when Dask knows them without computing, else None.

    Dask knows them from parquet metadata or the pandas frames of
    ``from_pandas``.  Else the rows of the first expression below (in the
    order of a walk of its graph) whose rows Dask knows: the collections
    that spend a budget derive from it row-wise (a filter keeps fewer), so
    this is as many or more.  Used to plan time and memory, never released.
    """
    for node in ddf.expr.walk():
        try:
            known = Len(node).optimize(fuse=False)
        except Exception:  # an expression Dask cannot count without computing it
            continue
        if isinstance(known, Literal):
            return int(known.value)
    return None


class Count:
    """A count that only grows, shared by threads: the tallies that returned in this process."""

    __slots__ = ("_lock", "value")

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.value = 0

    def add(self) -> None:
        with self._lock:
            self.value += 1


#: The tallies (``partition_statistics`` calls) that returned in this process.
TALLIES = Count()
