"""``ddf.dp`` on Dask DataFrames: the same releases, one pass over the partitions.

This room, top to bottom (``_``: used only inside it):

========================  ====================================================
``_units``                Dask with a privacy unit: rows split into buckets by unit, then bounded
``_binding``              which collections may spend which budget: bindings, lineage marks
``_graph``                what a Dask collection is made of: markers, row alignment, schedulers
``_relational``           ddf.dp.merge: a public table, or a collection of the same people
========================  ====================================================

``import pandas_dp.dask`` registers the accessor (plain ``import pandas_dp``
never imports dask)::

    import dask.dataframe as dd
    import pandas_dp.dask

    ddf = dd.read_parquet("events/")
    ddf.dp.set_budget(epsilon=3.0)
    ddf.dp.groupby("country", keys=COUNTRIES).mean("amount", clip=(0, 500), epsilon=0.5)

Every release runs the pipeline of :mod:`pandas_dp.pipeline.run` with the same
:class:`~pandas_dp.kinds.base.Kind`: arguments and dtypes are validated on the
collection's ``_meta`` (never its data), the plan is data-free, ε is reserved
on the client, then each partition reads, encodes and tallies its rows (the
kind's exact integer statistics), the per-partition statistics are summed in
a tree (overflow-safe), the reservation is committed and the noise is drawn
once, on the client, from the budget's source.  The statistics are exact
integers, so the same seed gives the same release as the pandas path, bit
for bit, whatever the partitioning or scheduler.

Binding fails closed.  A budget is bound to the collection *object* it was
set on (an id-keyed registry of weak references) and to the collections made
from it by ``ddf.dp.filter/query/assign/select/persist/repartition``; every
expression name of a bound collection is recorded, so any other collection
whose expression graph contains one (``ddf[mask]``, ``dd.concat``, merges,
``map_partitions``, ``repartition``, a re-read of the same files) is marked
and refused with the fix named; so is one made of a pandas frame carrying the
marker of a budget of this process (``dd.from_pandas(df)``, ...): it spends
only after ``ddf.dp.inherit(df)``.  A plain ``ddf.persist()`` gets new keys
and loses its lineage: it is unbound and unmarked (a documented hole).  A mask
or an assigned column may reach the collection only through row-wise
expressions (:mod:`pandas_dp.dask._graph`), refused before anything runs.

ε is reserved before ``compute()`` and returned if it raised, unless the exact
statistics may have been seen: whatever sees task results (a callback, the
dashboard) sees a partition's statistics when its tally returns, so an error
after any tally returned keeps ε spent (:func:`_compute`); on process or
distributed workers, where tallies cannot be counted, once compute started.

With a privacy unit (``set_budget(..., privacy_unit="customer_id")``) the
rows of one person may sit in any partition, so a release first brings each
person's rows together: each partition keeps only what the bounding and the
tally read (the unit, the kind's columns, each row's key code in the
narrowest integers) and splits its rows into buckets by a hash of the unit
(:func:`split_by_unit`); each bucket gathers its pieces from every partition,
in the data's order, bounds each person's contribution
(:func:`pandas_dp.pipeline.run.bounded_tally`, as on pandas) and tallies
(:func:`unit_statistics`; :func:`unit_selected` when the keys are chosen
from the data).  A plain task graph, never a Dask shuffle: distributed's P2P
shuffle logs two WARNING lines per run that users would read as warnings of
their release.  There are ``BUCKETS_PER_PARTITION`` buckets per input
partition (at most ``MAX_BUCKETS``), so a bucket is smaller than a partition
and its bounding's temporaries stay small; what waits for the last partition
is about 17 bytes per row for a grouped mean (the unit, the value, an int8
key code), 8 for a person count.  On the schedulers of this process that is
one ``compute()`` (one progress bar); on a ``distributed`` cluster a task
takes a range of buckets, and when the workers' memory could not hold what
waits, the buckets are taken in rounds, each reading the data again
(:func:`bucket_rounds`): no number depends on the rounds.  The bounding's
random choices come from the budget's source: inside the reservation, the
client draws four words of it per bucket (a 256-bit key), and each task
expands its key with SHAKE-256
(:class:`KeyedWords`), so no worker uses a random generator of its own.  A
release whose bounding chooses nothing (a person count: ``min(rows,
max_rows)`` per person) draws no key, so it is the pandas release bit for
bit.  Which rows or keys are kept otherwise depends on the seed and the
partitioning (never the scheduler: a bucket's rows come in the data's
order), so those releases are not the pandas ones bit for bit; the bounds
hold whatever the partitioning.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass
from typing import Any, TypeVar, overload

import numpy as np
import pandas as pd

try:
    import dask
    import dask.dataframe as dd
    from dask.dataframe.extensions import register_dataframe_accessor
except ImportError as error:
    raise ImportError(
        'pandas_dp.dask needs Dask: in your clone of pandas_dp, run pip install ".[dask]"'
    ) from error

from ..accounting.budget import (
    PrivacyBudget,
    bind,
    claim_root,
    keep_spent,
    require_binding,
)
from ..core.errors import PandasDPError
from ..core.noise import RandomSource
from ..core.validation import (
    MAX_ROWS,
    check_column,
    check_per_unit,
)
from ..kinds.base import Kind, Rows, Stats
from ..kinds.signature import Grouped, Keyless
from ..mechanisms.contributions import person_key_pairs
from ..mechanisms.key_selection import KeySelection
from ..mechanisms.keys import Grouping
from ..pipeline.run import (
    Pairs,
    Spender,
    Task,
    bounded_tally,
    combine_selected,
    key_codes,
    no_unit,
    selection_tally,
)
from ..surface.accessor import DPReleases
from ..surface.groupby import DPGroupedReleases, G
from ..surface.relational import Side, key_labels
from ..surface.rowwise import check_rowwise, evaluate, is_boolean_dtype, query_values
from ._binding import (
    LOCK,
    bind_collection,
    binding,
    marked_by,
    refuse_rebinding,
    require,
)
from ._graph import TALLIES, check_unit_sources, runs_here, same_rows
from ._relational import merge_private, merge_public
from ._units import (
    BUCKETS_PER_PARTITION,
    KEY_WORDS,
    MAX_BUCKETS,
    KeyedWords,
    Partial,
    Selected,
    bucket_rounds,
    bucket_tallies,
    chooses,
    pair_rounds,
)

__all__ = ["DaskDPAccessor", "DaskDPGroupBy", "DaskFrame", "KeyedWords"]

One = TypeVar("One")
Many = TypeVar("Many")

#: How many partial statistics one task of the tree adds up.
SPLIT_EVERY = 8

# ------------------------------------------------------------- statistics


def partition_statistics(part: pd.DataFrame, task: Task) -> Partial:
    """One partition's row count and exact statistics (no privacy unit): read, encode, tally."""
    rows = task.kind.read(part, task.n_keys)
    codes = None if task.group is None else task.group.codes(part)
    stats = bounded_tally(task, rows, codes, None, None)
    TALLIES.add()  # before the exact statistics leave this function (see _compute)
    return len(part), stats


def partition_pairs(part: pd.DataFrame, group: KeySelection, unit: Hashable) -> Pairs:
    """One partition's distinct (person, key) pairs (persons numbered in this partition)."""
    codes, observed = group.observe(part)
    pairs = Pairs(observed, *person_key_pairs(part[unit], codes))
    TALLIES.add()  # before the exact statistics leave this function (see _compute)
    return pairs


def add_pairs(*parts: Pairs) -> Pairs:
    """Partitions' pairs together (each person in one partition): keys unioned by value."""
    observed = functools.reduce(lambda a, b: a.append(b), [p.observed for p in parts])
    codes, union = observed.factorize(use_na_sentinel=False)
    assert isinstance(union, pd.Index)  # an Index factorizes to an Index (MultiIndex kept)
    codes = np.asarray(codes, dtype=np.int64)
    keys, persons, offset, start = [], [], 0, 0
    for part in parts:
        mapping = codes[start : start + len(part.observed)]
        keys.append(mapping[part.keys])
        persons.append(part.persons + offset)
        offset += int(part.persons.max(initial=-1)) + 1
        start += len(part.observed)
    rows = [part.rows for part in parts]
    return Pairs(
        union.set_names(parts[0].observed.names), *map(np.concatenate, (keys, persons, rows))
    )


def rows_with_keys(part: pd.DataFrame, group: Grouping) -> pd.DataFrame:
    """The rows of one partition whose key is one of ``group``'s (observed, or public)."""
    return part[key_codes(group, part) >= 0]


def partition_selected(part: pd.DataFrame, task: Task) -> Selected:
    """One partition's row count, observed keys and :func:`~pandas_dp.pipeline.run.selection_tally`.

    As :func:`partition_statistics`, for a grouping whose keys are chosen
    from the data (one row per person: with a privacy unit, :func:`unit_selected`
    tallies buckets of persons); the keys are this partition's (joined by
    value after).  A row count reads pandas' ``value_counts`` of the key
    where it can, as on pandas (:meth:`~pandas_dp.mechanisms.key_selection.KeySelection.counted`).
    """
    assert isinstance(task.group, KeySelection)
    assert task.selection is not None
    counted = task.group.counted(part) if task.kind.counts_kept() else None
    if counted is not None:  # each row a person: its counts are both statistics
        keys, counts = counted
        stats = (task.selection.weight(1) * counts, *task.kind.from_counts(counts))
    else:
        codes, keys = task.group.observe(part)
        stats = selection_tally(task, task.kind.read(part, 0), codes, keys, None, None)
    TALLIES.add()  # before the exact statistics leave this function (see _compute)
    return len(part), keys, stats


def add_selected(kind: Kind[Any, Any], *parts: Selected) -> Selected:
    """Partitions' :func:`partition_selected` together: keys unioned by value."""
    keys, stats = functools.reduce(
        lambda a, b: combine_selected(kind, a, b), [(p[1], p[2]) for p in parts]
    )
    return sum(p[0] for p in parts), keys, stats


def add_statistics(kind: Kind[Any, Any], *parts: Partial) -> Partial:
    """The partial statistics of ``parts`` together: rows added, statistics by ``kind.combine``."""
    return sum(p[0] for p in parts), functools.reduce(kind.combine, [p[1] for p in parts])


def _exact(partial: Partial) -> Stats:
    """The combined statistics as int64 arrays, or an error (the reservation is returned)."""
    n, stats = partial
    if n >= MAX_ROWS:
        raise ValueError(f"frames of {MAX_ROWS} rows or more are not supported.")
    out = []
    for a in stats:
        if a.dtype != np.int64:
            if a.size and (max(a.flat) >= 1 << 63 or min(a.flat) < -(1 << 63)):
                raise OverflowError("an exact statistic of this release exceeds 64-bit integers.")
            a = a.astype(np.int64)
        out.append(a)
    return tuple(out)


def _tree(kind: Kind[Any, Any], parts: list[Any], add: Callable[..., Any] = add_statistics) -> Any:
    """A Delayed of ``parts`` combined: a tree of ``add``, ``SPLIT_EVERY`` wide."""
    combine = dask.delayed(add, pure=False)
    while len(parts) > 1:
        parts = [
            combine(kind, *parts[i : i + SPLIT_EVERY]) for i in range(0, len(parts), SPLIT_EVERY)
        ]
    return parts[0]


def _compute(
    lazy: Any, exact: Callable[[Any], Any] = _exact, join: Callable[..., Any] | None = None
) -> Any:
    """Compute the exact statistics; an error once any tally has returned keeps ε spent.

    Tallies are counted in this process (synchronous and threaded schedulers;
    any release's: a concurrent one can only keep more spent); elsewhere none
    can be shown not to have returned, so ε stays spent once this started.
    ``lazy`` may be a list of rounds (:func:`bucket_rounds`): each computed
    after the one before, their partials joined by ``join`` before ``exact``;
    a round may be a tuple of lazy values, computed together.
    """
    rounds = lazy if isinstance(lazy, list) else [lazy]
    counted = runs_here(rounds[0][0] if isinstance(rounds[0], tuple) else rounds[0])
    before = TALLIES.value
    try:
        partials = [dask.compute(one)[0] for one in rounds]
        return exact(partials[0] if join is None else join(*partials))
    except BaseException as error:
        if not counted or TALLIES.value != before:
            keep_spent(error)
        raise


@dataclass(frozen=True)
class DaskFrame:
    """A Dask collection as a :class:`~pandas_dp.pipeline.run.Frame` of :func:`.run`.

    The schema is the collection's ``_meta`` (dtypes, never data); the
    binding is the lineage binding of this module; the statistics are one
    task per partition (projected to the columns the release reads: the
    keys' and ``kind.columns()``), combined in a tree of ``kind.combine``,
    ``SPLIT_EVERY`` inputs per task.  With a privacy unit, each partition's rows
    are first split into buckets by unit (:func:`split_by_unit`: every person's
    rows land in one bucket, whatever the input partitioning), and each bucket
    bounds its persons with a key drawn, inside the reservation, from the
    budget's source (:func:`bucket_tallies`), in the rounds of :func:`bucket_rounds`.
    """

    ddf: dd.DataFrame

    def schema(self) -> pd.DataFrame:
        meta: pd.DataFrame = self.ddf._meta
        return meta

    def binding(self) -> Spender:
        bound = require(self.ddf)
        return Spender(bound.budget, bound.unit, bound.root, bound.defaults)

    def units(self, what: str) -> DaskFrame:
        bound = require(self.ddf)
        if bound.unit is None:
            raise TypeError(
                f"{what} needs a privacy unit: this collection has one row per person. "
                "Attach the budget with set_budget(..., privacy_unit='customer_id')."
            )
        people = self.ddf.groupby(bound.unit, dropna=True).size().rename("rows").to_frame()
        with LOCK:
            bind_collection(people, bound.budget, root=bound.root, unit=None)
        return DaskFrame(people)

    def keys_per_unit(self, group: Grouping, what: str) -> DaskFrame:
        bound = require(self.ddf)
        if bound.unit is None:
            raise TypeError(no_unit(what))
        columns = [bound.unit, *group.by]
        meta = self.ddf._meta[columns]
        if not isinstance(group, KeySelection):
            group.codes(meta, check=True)  # the keys against their columns' dtypes, here
        held = self.ddf[columns].map_partitions(rows_with_keys, group, meta=meta)
        pairs = held.drop_duplicates()  # each person once per key (by value: any partition)
        people = pairs.groupby(bound.unit, dropna=True).size().rename("keys").to_frame()
        with LOCK:
            bind_collection(people, bound.budget, root=bound.root, unit=None)
        return DaskFrame(people)

    def _columns(self, task: Task) -> list[Hashable]:
        """The columns a release reads: the keys, then the kind's in the collection's order.

        Else the first column (the row count needs one), or with a unit only the unit's.
        """
        meta = self.ddf._meta
        needed = [] if task.group is None else list(task.group.by)
        read = set(task.kind.columns())
        needed += [label for label in meta.columns if label in read and label not in needed]
        if task.unit is None:
            return needed or list(meta.columns[:1])
        return [*(label for label in needed if label != task.unit), task.unit]

    def statistics(self, task: Task, rows: Rows) -> Callable[[RandomSource], Stats]:
        projected = self.ddf[self._columns(task)]
        if task.unit is None:
            chunk = dask.delayed(partition_statistics, pure=False)
            lazy = _tree(task.kind, [chunk(p, task) for p in projected.to_delayed()])

            def statistics(source: RandomSource) -> Stats:
                stats: Stats = _compute(lazy)
                return stats

            return statistics

        inputs = projected.to_delayed()
        buckets = min(BUCKETS_PER_PARTITION * len(inputs), MAX_BUCKETS)
        rounds = bucket_rounds(projected, task, buckets)

        def bounded_statistics(source: RandomSource) -> Stats:
            # Inside the reservation: the bounding's keys come from the budget's source, here.
            keys: list[bytes | None] = [None] * buckets
            if chooses(task):
                words = source.words(KEY_WORDS * buckets).astype("<u8").reshape(buckets, -1)
                keys = [k.tobytes() for k in words]
            lazy = [
                _tree(task.kind, bucket_tallies(inputs, task, buckets, keys, tasks))
                for tasks in rounds
            ]
            stats: Stats = _compute(lazy, join=functools.partial(add_statistics, task.kind))
            return stats

        return bounded_statistics

    def pairs(self, group: KeySelection, unit: Hashable) -> Callable[[RandomSource], Pairs]:
        columns = [*group.by, *([] if unit in group.by else [unit])]
        shuffled = self.ddf[columns].shuffle(on=unit, shuffle_method="tasks")
        parts = shuffled.to_delayed()
        chunk = dask.delayed(partition_pairs, pure=False)
        # each partition's pairs come here, where the selection reads them all: no worker
        # holds every pair (a task adding them up would, on a cluster), in rounds on a
        # cluster whose memory would not hold them until they are gathered
        lazy = [
            tuple(chunk(parts[i], group, unit) for i in span)
            for span in pair_rounds(shuffled, len(parts))
        ]

        def pairs(source: RandomSource) -> Pairs:
            joined = _compute(lazy, lambda found: found, lambda *r: add_pairs(*itertools.chain(*r)))
            combined: Pairs = joined
            return combined

        return pairs

    def selected(self, task: Task, rows: Rows) -> Callable[[RandomSource], tuple[pd.Index, Stats]]:
        projected = self.ddf[self._columns(task)]
        chunk = dask.delayed(partition_selected, pure=False)

        def exact(partial: Selected) -> tuple[pd.Index, Stats]:
            return partial[1], _exact((partial[0], partial[2]))

        if task.unit is None:
            lazy = _tree(task.kind, [chunk(p, task) for p in projected.to_delayed()], add_selected)

            def statistics(source: RandomSource) -> tuple[pd.Index, Stats]:
                return _compute(lazy, exact)  # type: ignore[no-any-return]

            return statistics

        inputs = projected.to_delayed()
        buckets = min(BUCKETS_PER_PARTITION * len(inputs), MAX_BUCKETS)
        rounds = bucket_rounds(projected, task, buckets)

        def bounded_statistics(source: RandomSource) -> tuple[pd.Index, Stats]:
            words = source.words(KEY_WORDS * buckets).astype("<u8").reshape(buckets, -1)
            keys: list[bytes | None] = [k.tobytes() for k in words]
            lazy = [
                _tree(task.kind, bucket_tallies(inputs, task, buckets, keys, tasks), add_selected)
                for tasks in rounds
            ]
            join = functools.partial(add_selected, task.kind)
            return _compute(lazy, exact, join)  # type: ignore[no-any-return]

        return bounded_statistics


# ---------------------------------------------------------------- surfaces


@register_dataframe_accessor("dp")
class DaskDPAccessor(DPReleases):
    """Differentially private releases of a Dask DataFrame: ``ddf.dp``.

    The surface of :class:`pandas_dp.DPAccessor` (``df.dp``), with the same
    arguments, results and errors; releases are computed eagerly (one
    ``compute()`` each) and return the same pandas objects.  Holds no state:
    the budget is bound to the collection object.

    The releases are those of :class:`pandas_dp.surface.accessor.DPReleases`, shared
    with ``df.dp``; here each runs by :func:`~pandas_dp.pipeline.run.run` over a
    :class:`DaskFrame` (one pass over the partitions), and histogram bins and
    crosstab keys are checked against the collection's ``_meta`` (its dtypes, never its data).
    """

    def __init__(self, ddf: dd.DataFrame) -> None:
        self._ddf = ddf

    @property
    def budget(self) -> PrivacyBudget:
        """The collection's :class:`PrivacyBudget` (MissingBudgetError if it has none)."""
        return require(self._ddf).budget

    def _budget(self) -> PrivacyBudget:
        return self.budget

    def _frame(self) -> DaskFrame:
        return DaskFrame(self._ddf)

    def _schema(self) -> pd.DataFrame:
        meta: pd.DataFrame = self._ddf._meta  # dtypes only: bins and keys never read the data
        return meta

    def _refuse_rebinding(self) -> None:
        refuse_rebinding(self._ddf)

    def _rows(self) -> int | None:
        return None  # not known without computing the collection

    def _check_unit(self, unit: Hashable | None) -> None:
        check_unit_sources(self._ddf, unit)

    def _attach(self, budget: PrivacyBudget, where: str | None, stored_root: bool) -> None:
        with LOCK:
            refuse_rebinding(self._ddf)
            root = claim_root(budget.name, where, stored=stored_root)
            bind_collection(self._ddf, budget, root=root, unit=budget.privacy_unit)

    @overload
    def groupby(
        self, by: Hashable | list[Hashable], *, keys: None = None, dropna: bool = True
    ) -> DaskDPGroupBy[Keyless]: ...

    @overload
    def groupby(
        self, by: Hashable | list[Hashable], *, keys: Any, dropna: bool = True
    ) -> DaskDPGroupBy[Grouped]: ...

    def groupby(
        self, by: Hashable | list[Hashable], *, keys: Any = None, dropna: bool = True
    ) -> DaskDPGroupBy[Grouped] | DaskDPGroupBy[Keyless]:
        """Group by ``by``, over public ``keys`` or keys chosen privately: as ``df.dp.groupby``.

        Parameters
        ----------
        by : label or list of labels
            The key column(s).
        keys : list, array, Index, MultiIndex, DataFrame or CategoricalDtype, optional
            The public keys, in the order the result is indexed by. Without
            them, the keys are chosen privately (each release takes ``delta=``).
        dropna : bool, default True
            Without ``keys``: whether to leave out missing keys.

        Returns
        -------
        DaskDPGroupBy
        """
        if keys is None:
            selection = KeySelection.of_columns(self._ddf._meta, by, dropna=dropna)
            return DaskDPGroupBy[Keyless](self._ddf, selection.by, selection)
        if dropna is not True:
            raise TypeError("`dropna` goes with a groupby without keys=; with public keys drop it.")
        return DaskDPGroupBy[Grouped](self._ddf, by, keys)

    # ------------------------------------------------ row-wise derived frames

    def _derive(self, result: dd.DataFrame, *, same_rows: bool) -> dd.DataFrame:
        bound = require(self._ddf)
        if result is self._ddf:
            result = result.copy()
        with LOCK:
            root = bound.root and same_rows
            bind_collection(
                result, bound.budget, root=root, unit=bound.unit, defaults=bound.defaults
            )
        return result

    def _unit(self) -> Hashable | None:
        """This collection's privacy-unit column (None: one row is one person)."""
        return require(self._ddf).unit

    def filter(self, mask: Any) -> dd.DataFrame:
        """The rows where ``mask`` is True, spending from this collection's budget.

        Parameters
        ----------
        mask : dask Series or callable
            A boolean Series computed row-wise from this collection's own
            columns (``ddf.amount > 0``), or a callable that takes the
            collection and returns one. A missing value counts as False.

        Returns
        -------
        dask.dataframe.DataFrame
            The selected rows, bound to this budget (never its root).

        Raises
        ------
        TypeError
            If ``mask`` is not a boolean Dask Series.
        ValueError
            If ``mask`` is not built row by row from this collection itself:
            it goes through ``set_index``, ``shuffle``, ``sort_values``,
            ``repartition``, ``reset_index``, ``ddf[mask]``, ``map_partitions``
            or another collection, which may line other rows up with these.

        Notes
        -----
        Costs nothing, as :meth:`pandas_dp.DPAccessor.filter`. Each row's entry
        may depend only on that row and on public constants, which the library
        cannot check: never ``ddf.x > ddf.x.mean()``, nor a row's position (the
        index of a ``read_csv`` collection, the common ``index % k`` split),
        which moves when one person is added earlier in a file.
        """
        if callable(mask):
            mask = mask(self._ddf)
        if not isinstance(mask, dd.Series):
            raise TypeError(
                "`mask` must be a boolean Dask Series computed from this collection, e.g. "
                f"ddf.amount > 0, got {type(mask).__name__}."
            )
        if not is_boolean_dtype(mask.dtype):
            raise TypeError(
                f"`mask` must be a boolean Series (numpy bool, pandas 'boolean' or "
                f"'bool[pyarrow]'), got dtype {mask.dtype}."
            )
        same_rows(mask, self._ddf, "mask")
        if mask.dtype != np.bool_:
            mask = mask.fillna(False)
        # `& True`, not .astype(bool): Dask's optimizer moves a filter whose mask ends in
        # astype onto the mask itself (ddf[m.astype(bool)] computes the mask, not the rows),
        # and a caller's mask may end in astype too; so the mask ends in an `and`.
        return self._derive(self._ddf[mask & True], same_rows=False)

    def query(self, expr: str, **kwargs: Any) -> dd.DataFrame:
        """The rows where the row-wise boolean expression ``expr`` holds.

        Parameters
        ----------
        expr : str
            A row-wise expression, checked on the collection's metadata as in
            :meth:`pandas_dp.DPAccessor.query` (never the index, no ``object``
            column); ``@name`` takes a public scalar from the caller's scope (a
            list of them only after ``in`` / ``not in`` / ``==`` / ``!=``).
        **kwargs
            Passed to ``DataFrame.eval`` on each partition (``parser``, ``engine``,
            ``local_dict``).

        Returns
        -------
        dask.dataframe.DataFrame
            The selected rows, bound to this budget, as with :meth:`filter`.

        Raises
        ------
        ValueError, TypeError, KeyError
            As :meth:`pandas_dp.DPAccessor.query`, before any task runs. An
            expression that fails on any rows of its dtypes fails here, with one
            fixed message; what fails only on some values fails in a task.
        """
        if not isinstance(expr, str):
            raise TypeError(f"`expr` must be a string, got {type(expr).__name__}.")
        if "inplace" in kwargs:
            raise TypeError("`inplace` is not supported: ddf.dp.query returns a new collection.")
        check_rowwise(expr, parser=kwargs.get("parser", "pandas"), frame=self._ddf._meta)
        kwargs["local_dict"] = query_values(expr, kwargs.get("parser", "pandas"), kwargs, 1)
        # Made-up rows of the same dtypes first: what fails on any rows fails here, not in a task.
        evaluate(self._ddf._meta_nonempty, expr, kwargs)
        mask = evaluate(self._ddf, expr, kwargs)
        if not isinstance(mask, dd.Series) or not is_boolean_dtype(mask.dtype):
            raise TypeError(f"`expr` must evaluate to a boolean per row, got {expr!r}.")
        return self.filter(mask)

    def assign(self, **columns: Any) -> dd.DataFrame:
        """A collection with new or replaced columns; same rows, same budget.

        Parameters
        ----------
        **columns
            A scalar, a callable that takes the collection, or a Dask Series
            computed row-wise from this collection's own columns (as the
            ``mask`` of :meth:`filter`).

        Returns
        -------
        dask.dataframe.DataFrame
            Bound to this budget (still its root if this one is).

        Raises
        ------
        ValueError
            If a Series is not built row by row from this collection itself.

        Notes
        -----
        Costs nothing. Each row's value may depend only on that row and on
        public constants, which the library cannot check: never
        ``ddf.x - ddf.x.mean()``, nor a row's position (the common ``index % k``
        split), which moves when one person is added earlier in a file.
        """
        for label, value in columns.items():
            if callable(value):
                value = value(self._ddf)
                columns[label] = value
            if isinstance(value, dd.Series):
                same_rows(value, self._ddf, label)
            elif not np.isscalar(value):
                raise TypeError(
                    f"`{label}` must be a scalar, a callable, or a Dask Series computed from this "
                    f"collection, got {type(value).__name__}."
                )
        unit = self._unit()
        if unit is not None and unit in columns:
            raise ValueError(
                f"{unit!r} is the privacy unit: it identifies each row's person, and "
                "overwriting it would change who is who. Assign another column."
            )
        return self._derive(self._ddf.assign(**columns), same_rows=True)

    def select(self, columns: Iterable[Hashable]) -> dd.DataFrame:
        """A collection with only ``columns``; same rows, same budget.

        Parameters
        ----------
        columns : list of labels
            The columns to keep.

        Returns
        -------
        dask.dataframe.DataFrame
        """
        if isinstance(columns, str) or not isinstance(columns, Iterable):
            raise TypeError(f"`columns` must be a list of column labels, got {columns!r}.")
        labels = list(columns)
        if len(set(labels)) != len(labels):
            raise ValueError("`columns` names a column twice.")
        for label in labels:
            check_column(self._ddf._meta, label)
        unit = self._unit()
        if unit is not None and unit not in labels:
            raise ValueError(
                f"{unit!r} is the privacy unit; keep it in `columns`, since every release "
                "bounds each person's rows by it."
            )
        return self._derive(self._ddf[labels], same_rows=True)

    def persist(self, **kwargs: Any) -> dd.DataFrame:
        """``ddf.persist()`` that keeps the budget (same rows; the budget stays here).

        Parameters
        ----------
        **kwargs
            Passed to ``DataFrame.persist``.

        Returns
        -------
        dask.dataframe.DataFrame
        """
        return self._derive(self._ddf.persist(**kwargs), same_rows=True)

    def repartition(self, **kwargs: Any) -> dd.DataFrame:
        """``ddf.repartition(...)`` that keeps the budget (the same rows, moved).

        Parameters
        ----------
        **kwargs
            Passed to ``DataFrame.repartition`` (``npartitions``, ``partition_size``).

        Returns
        -------
        dask.dataframe.DataFrame
        """
        if "divisions" in kwargs:
            raise TypeError("`divisions` is not supported: it may drop or duplicate rows.")
        return self._derive(self._ddf.repartition(**kwargs), same_rows=True)

    def per_unit(self, **aggregations: Any) -> dd.DataFrame:
        """One row per person: Dask's named aggregation over the privacy unit.

        ``tx.dp.per_unit(spend=("amount", "sum"), orders=("amount", "size"))``
        is ``tx.groupby(unit).agg(spend=..., orders=...)``, lazily: a
        collection indexed by the unit (rows whose unit id is missing are
        dropped), bound to the same budget with one row per person, so its
        releases need no bounds. As :meth:`pandas_dp.DPAccessor.per_unit`.

        Parameters
        ----------
        **aggregations
            ``name=(column, function)`` pairs: reductions by name, as on pandas,
            among those Dask's named aggregation knows
            (:data:`pandas_dp.core.validation.DASK_PER_UNIT_AGGREGATIONS`: not
            ``"all"``, ``"any"``, ``"kurt"``, ``"nunique"``, ``"quantile"``,
            ``"sem"``, ``"skew"``).

        Returns
        -------
        dask.dataframe.DataFrame
            One row per person, spending from this collection's budget.

        Raises
        ------
        MissingBudgetError
            If this collection has no budget it may spend.
        TypeError, ValueError
            As :meth:`pandas_dp.DPAccessor.per_unit`; callables are refused.

        Notes
        -----
        Releases nothing and costs nothing. Dask's groupby-aggregation
        brings each person's rows together (a tree reduction or a shuffle).
        """
        bound = require(self._ddf)
        checked = check_per_unit(bound.unit, aggregations, self._ddf._meta, "dask")
        result = self._ddf.groupby(bound.unit, dropna=True).agg(**checked)
        with LOCK:
            bind_collection(result, bound.budget, root=bound.root, unit=None)
        return result

    def merge(
        self,
        right: pd.DataFrame | dd.DataFrame,
        *,
        on: Hashable | list[Hashable],
        how: str = "inner",
        suffixes: tuple[str | None, str | None] = ("_x", "_y"),
    ) -> dd.DataFrame:
        """Join a public pandas table, or a collection of the same people on the unit.

        As :meth:`pandas_dp.DPAccessor.merge`: a public table joins with
        ``how="inner"`` or ``"left"``; a collection bound to this budget (the
        same, or the same named budget; see :meth:`inherit`) joins on keys
        that include the privacy unit. On Dask a collection without a privacy
        unit joins only public tables with one row per key (its rows have no
        identity across partitions to bound an original row by).

        Parameters
        ----------
        right : pandas.DataFrame or dask.dataframe.DataFrame
            A public table, or a private collection.
        on : label or list of labels
            The key columns, of one dtype in both.
        how : str
            ``"inner"`` or ``"left"`` (and ``"right"``, ``"outer"`` between two
            private collections).
        suffixes : pair of str
            As in ``DataFrame.merge``.

        Returns
        -------
        dask.dataframe.DataFrame
            Bound to this budget; its releases bound each person's rows.
        """
        bound = require(self._ddf)
        keys = key_labels(on)
        mine = Side(bound.budget, bound.unit, bound.defaults)
        if isinstance(right, dd.DataFrame):
            other = require(right)
            sides = (mine, Side(other.budget, other.unit, other.defaults))
            result, unit, defaults = merge_private(self._ddf, right, sides, keys, how, suffixes)
        else:
            result, defaults = merge_public(self._ddf, mine, right, keys, how, suffixes)
            unit = bound.unit
        with LOCK:
            bind_collection(result, bound.budget, root=False, unit=unit, defaults=defaults)
        return result

    def compute(self, **kwargs: Any) -> pd.DataFrame:
        """The collection as a pandas frame bound to the same budget (same rows).

        Parameters
        ----------
        **kwargs
            Passed to ``DataFrame.compute``.

        Returns
        -------
        pandas.DataFrame
        """
        bound = require(self._ddf)
        frame: pd.DataFrame = self._ddf.compute(**kwargs)
        bind(frame, bound.budget, root=bound.root, unit=bound.unit, defaults=bound.defaults)
        return frame

    def inherit(self, source: dd.DataFrame | pd.DataFrame) -> dd.DataFrame:
        """Bind this collection to ``source``'s budget; returns this collection.

        Call it only when this collection still has at most one row per person
        of ``source``: that is your assertion, which the library cannot check.

        Parameters
        ----------
        source : dask or pandas DataFrame
            A collection (or frame) that may spend the budget.

        Returns
        -------
        dask.dataframe.DataFrame
        """
        if isinstance(source, dd.DataFrame):
            found = binding(source) if source is self._ddf else None
            found = found or require(source)
            budget, unit = found.budget, found.unit
        elif isinstance(source, pd.DataFrame):
            attached = require_binding(source)  # as other.dp.inherit(df): unchanged in place
            budget, unit = attached.budget, attached.unit
        else:
            raise TypeError(f"`source` must be a DataFrame, got {type(source).__name__}.")
        with LOCK:
            own = binding(self._ddf)
            if own is not None and own.budget is not budget:
                raise PandasDPError("This collection already spends another privacy budget.")
            other = marked_by(self._ddf)
            if other is not None and other is not budget:
                raise PandasDPError(
                    "This collection was derived from a collection with another live privacy "
                    "budget."
                )
            if own is None or (own.unit is not None and own.name != self._ddf._name):
                bind_collection(
                    self._ddf, budget, root=False, unit=unit if own is None else own.unit
                )
        return self._ddf


class DaskDPGroupBy(DPGroupedReleases[G]):
    """Grouped private releases over public keys: ``ddf.dp.groupby(by, keys=...)``.

    As :class:`pandas_dp.DPGroupBy`: ``by`` and ``keys`` are checked against the
    collection's dtypes (never its data); each release returns a pandas Series
    or DataFrame indexed by exactly ``keys``.  The releases are those of
    :class:`pandas_dp.surface.groupby.DPGroupedReleases`, each run over a :class:`DaskFrame`.
    """

    def __init__(self, ddf: dd.DataFrame, by: object, keys: object) -> None:
        self._ddf = ddf
        # A KeySelection (keys chosen privately) comes checked.
        self._group = (
            keys
            if isinstance(keys, KeySelection)
            else Grouping.of(ddf._meta, by, keys).check(ddf._meta)
        )

    def _frame(self) -> DaskFrame:
        return DaskFrame(self._ddf)

    def _schema(self) -> pd.DataFrame:
        meta: pd.DataFrame = self._ddf._meta
        return meta

    def _budget(self) -> PrivacyBudget:
        return require(self._ddf).budget
