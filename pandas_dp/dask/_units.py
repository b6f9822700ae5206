"""Person-level releases on Dask: each person's rows brought together in one bucket.

With a privacy unit a person's rows may sit in any partition.  :mod:`pandas_dp.dask`
runs, for every input partition, :func:`split_by_unit` (only what the release
reads, split into buckets by a hash of the unit), then for every bucket
:func:`unit_statistics` (its pieces from every partition, in the data's order,
bounded and tallied as on pandas, with the random words of :class:`KeyedWords`
keyed from the budget's source), or :func:`unit_selected` when the keys are
chosen from the data.  A plain task graph: no Dask shuffle.

On a ``distributed`` cluster the moved rows of all buckets wait in the
workers' memory until the last partition is split; when they would not fit
in a share of the workers' memory limits (:func:`bucket_rounds`), the buckets
are taken in rounds, one ``compute()`` each, every round reading the data
again and moving only its own buckets' rows.  A bucket's rows, its key and
its statistics are the same in any round, so the release is too.
"""

from __future__ import annotations

import functools
import hashlib
import itertools
from typing import Any

import dask
import numpy as np
import pandas as pd
from numpy.typing import NDArray

from ..core.noise import I64, U64
from ..kinds.base import Stats
from ..mechanisms.key_selection import KeySelection
from ..pipeline.run import Task, bounded_tally, combine_selected, selection_tally
from ._graph import TALLIES, cluster_workers, rows_known, runs_here

__all__ = [
    "BUCKETS_PER_PARTITION",
    "KEY_WORDS",
    "MAX_BUCKETS",
    "ROUND_SHARE",
    "TASKS_PER_THREAD",
    "KeyedWords",
    "Partial",
    "Piece",
    "Round",
    "Selected",
    "bucket_rounds",
    "bucket_tallies",
    "buckets_statistics",
    "chooses",
    "split_by_unit",
    "unit_selected",
    "unit_statistics",
]

#: Words of the budget's source drawn per bucket for its bounding (a 256-bit key).
KEY_WORDS = 4
#: Buckets per input partition that the rows of a person-level release are split into by
#: unit, and at most how many in all (on process or distributed workers, one task per input
#: partition and bucket moves a piece; in this process a bucket reads the splits directly).
BUCKETS_PER_PARTITION = 4
MAX_BUCKETS = 256
#: The share of the workers' memory limits (added up) that one round's moved rows may fill
#: (:func:`bucket_rounds`): below Dask's 60 % at which workers spill, with room for
#: their own memory (a quarter of a 1 GiB worker), the partitions being read, the
#: pieces fetched for the next tasks and the buckets' temporaries.
ROUND_SHARE = 0.15
#: Tasks per worker thread in each round (:func:`bucket_rounds`): each holds its share
#: of the round's moved rows while it runs.
TASKS_PER_THREAD = 8
#: Bytes a moved value of a dtype without a fixed width (strings, ...) is counted as.
WIDE_VALUE = 16
#: Bytes of one distinct (person, key) pair of a policy selection (its key, person and rows).
PAIR_BYTES = 24

#: A row count and the exact statistics of those rows (a partition's, a bucket's, or added up).
Partial = tuple[int, Stats]
#: One input partition's rows of one bucket: its input rows (kept or dropped), the rows
#: kept (the unit and the columns the kind reads), and their key codes (None: ungrouped,
#: or keys chosen from the data, whose columns are then among the rows kept).
Piece = tuple[int, pd.DataFrame, NDArray[np.signedinteger[Any]] | None]
#: Rows, the keys observed (never shown) and :func:`~pandas_dp.pipeline.run.selection_tally`.
Selected = tuple[int, pd.Index, Stats]


class KeyedWords:
    """A word stream expanded from a key drawn from the budget's source on the client.

    ``words(n)`` is SHAKE-256 of the key and a call counter, read as ``n``
    little-endian 64-bit words: an extendable-output function keyed with 256
    bits of the budget's CSPRNG (or of its seeded stream), so a task draws no
    randomness of its own.  Shipped to workers with its partition's task.
    """

    __slots__ = ("_calls", "_key")

    def __init__(self, key: bytes) -> None:
        self._key = key
        self._calls = 0

    def words(self, n: int) -> U64:
        """``n`` words: the next block of the stream."""
        block = hashlib.shake_256(self._key + self._calls.to_bytes(8, "little")).digest(8 * n)
        self._calls += 1
        return np.frombuffer(block, dtype="<u8").astype(np.uint64)

    def __getstate__(self) -> tuple[bytes, int]:
        return self._key, self._calls

    def __setstate__(self, state: tuple[bytes, int]) -> None:
        self._key, self._calls = state

    def __repr__(self) -> str:
        return "KeyedWords(...)"


def _buckets_of(units: pd.Series, buckets: int) -> NDArray[np.uint8]:
    """Each row's bucket: a 64-bit hash of its unit id modulo ``buckets`` (at most 256).

    Ids are hashed in one form whatever a partition stores them as (a
    partition may carry another dtype than the collection's): a categorical
    as its categories' values, integers of any width, numpy, nullable or
    arrow, as ``Int64`` (whose hash is int64's), so a person whose ids are
    int32 in one file and int64 in another lands in one bucket; strings of
    any string dtype already hash alike.
    """
    if isinstance(units.dtype, pd.CategoricalDtype):
        units = units.astype(units.dtype.categories.dtype)
    dtype = units.dtype
    if isinstance(dtype, np.dtype) and dtype.kind == "i":
        units = units.astype("int64")  # the same hash as Int64, without a mask
    elif pd.api.types.is_integer_dtype(dtype) and dtype != np.uint64:
        units = units.astype("Int64")
    hashes = pd.util.hash_pandas_object(units, index=False).to_numpy()
    return (hashes % np.uint64(buckets)).astype(np.uint8)


def _take(column: pd.Series, order: I64) -> Any:
    """The values of ``column`` at the positions ``order`` (no index: a gather of the values)."""
    values = column.to_numpy() if isinstance(column.dtype, np.dtype) else column.array
    return values[order] if isinstance(values, np.ndarray) else values.take(order)


def split_by_unit(
    part: pd.DataFrame, task: Task, buckets: int, first: int = 0, last: int | None = None
) -> list[Piece]:
    """One partition's rows of a person-level release, split into ``buckets`` by unit.

    Every row of one person goes to the same bucket, whatever its partition
    (:func:`_buckets_of`).  Only what the bounding and the tally read moves: the
    unit and the kind's columns, the key columns replaced by each row's key code
    (the narrowest signed integers that hold it; keys chosen from the data move
    as they are); rows the bounding drops anyway (a missing unit id, a key
    outside the public ones) are dropped here.  Rows keep their order within a
    bucket, so a bucket's rows come in the order of the data (input partition,
    then row) on any scheduler: the same seed and partitioning keep the same
    rows.  Only the pieces of buckets ``first`` to ``last`` (excluded; all by
    default) are returned, one round of :func:`bucket_rounds`; the input rows
    dropped are counted once, in bucket 0's piece.
    """
    assert task.unit is not None
    last = buckets if last is None else last
    units = part[task.unit]
    keep = units.notna().to_numpy()
    selecting = isinstance(task.group, KeySelection)
    codes = None if task.group is None or selecting else task.group.codes(part)
    if codes is not None:
        keep = keep & (codes >= 0)
    read = {*task.kind.columns(), task.unit, *(task.group.by if selecting else ())}  # type: ignore[union-attr]
    frame = part[[label for label in part.columns if label in read]]
    dropped = len(part) - int(np.count_nonzero(keep))
    bucket = _buckets_of(units, buckets)
    if first > 0 or last < buckets:
        keep = keep & (bucket >= first) & (bucket < last)
    if keep.all():
        order = np.argsort(bucket, kind="stable")
    else:  # the rows kept only: a round's few, in the data's order within each bucket
        index = np.flatnonzero(keep)
        order = index[np.argsort(bucket[index], kind="stable")]
    sizes = np.bincount(bucket[order], minlength=buckets)[first:last]
    ordered = pd.DataFrame(
        {label: _take(frame[label], order) for label in frame.columns}, copy=False
    )
    narrow = np.min_scalar_type(-task.n_keys)  # int8 for up to 128 keys: codes are below n_keys
    ordered_codes = None if codes is None else codes[order].astype(narrow)
    ends = np.cumsum(sizes)
    pieces: list[Piece] = []
    for b, (start, end) in enumerate(zip((ends - sizes).tolist(), ends.tolist(), strict=True)):
        pieces.append(
            (
                end - start + (dropped if b + first == 0 else 0),  # counted once, in bucket 0
                ordered.iloc[start:end],
                None if ordered_codes is None else ordered_codes[start:end],
            )
        )
    return pieces


def _moved_bytes(schema: pd.DataFrame, task: Task) -> int:
    """The bytes one row of a person-level release moves (:func:`split_by_unit`), about.

    From the dtypes alone: a fixed-width value its width, any other
    :data:`WIDE_VALUE`; a key code the width :func:`split_by_unit` gives it.
    """
    assert task.unit is not None
    selecting = isinstance(task.group, KeySelection)
    read = {*task.kind.columns(), task.unit, *(task.group.by if selecting else ())}  # type: ignore[union-attr]
    total = 0 if task.group is None or selecting else np.min_scalar_type(-task.n_keys).itemsize
    for label, dtype in schema.dtypes.items():
        if label in read:
            width = dtype.itemsize if isinstance(dtype, np.dtype) else 0
            total += width if width and dtype.kind in "iufbmM" else WIDE_VALUE
    return total


#: A round: the ranges ``(first, last)`` of buckets that one task each bounds and tallies.
Round = list[tuple[int, int]]


def bucket_rounds(projected: Any, task: Task, buckets: int) -> list[Round]:
    """The rounds a person-level release takes its buckets in, and the tasks of each round.

    One round of one task per bucket on the schedulers of this process (the
    splits are shared, nothing moves).  On a ``distributed`` cluster, one task
    per group of buckets, :data:`TASKS_PER_THREAD` groups per worker thread (a
    task per piece would be one per partition and bucket, too many for the
    scheduler), and
    more rounds when the moved rows, estimated from the rows Dask knows
    without computing (parquet metadata, ``from_pandas``; else the rows of a
    collection it derives from row-wise) and the dtypes (:func:`_moved_bytes`),
    would exceed :data:`ROUND_SHARE` of the workers' memory limits added up:
    each round reads the data again.  Where Dask does not know the rows, or a
    worker has no memory limit, one round.  Rounds and groups change time and
    memory only: no number of a release depends on them.
    """
    workers = cluster_workers(projected)
    if not workers:
        return [[(b, b + 1) for b in range(buckets)]]
    limits = [limit for limit, _ in workers]
    rows = rows_known(projected) if min(limits) > 0 else None
    rounds = 1
    if rows is not None:
        moved = rows * _moved_bytes(projected._meta, task)
        rounds = min(buckets, max(1, -(-moved // max(int(ROUND_SHARE * sum(limits)), 1))))
    groups = TASKS_PER_THREAD * sum(threads for _, threads in workers)
    out = []
    for first, last in itertools.pairwise([buckets * r // rounds for r in range(rounds + 1)]):
        tasks = min(groups, last - first)
        edges = [first + (last - first) * g // tasks for g in range(tasks + 1)]
        out.append(list(itertools.pairwise(edges)))
    return out


def pair_rounds(shuffled: Any, parts: int) -> list[range]:
    """The rounds a policy selection's pairs are computed in: ranges of ``shuffled``'s partitions.

    One round on the schedulers of this process, where Dask does not know
    the rows, or where a worker has no memory limit; on a ``distributed``
    cluster, as many as keep the pairs of a round (at most one a row,
    :data:`PAIR_BYTES` each) within :data:`ROUND_SHARE` of the workers'
    memory limits added up, until the client gathers them: each round reads
    and shuffles the data again.  The pairs and their order are the same in
    any rounds.
    """
    workers = cluster_workers(shuffled)
    limits = [limit for limit, _ in workers]
    rows = rows_known(shuffled) if limits and min(limits) > 0 else None
    rounds = 1
    if rows is not None:
        room = max(int(ROUND_SHARE * sum(limits)), 1)
        rounds = min(parts, max(1, -(-rows * PAIR_BYTES // room)))
    edges = [parts * r // rounds for r in range(rounds + 1)]
    return [range(a, b) for a, b in itertools.pairwise(edges)]


def bucket_tallies(
    inputs: list[Any], task: Task, buckets: int, keys: list[bytes | None], tasks: Round
) -> list[Any]:
    """The lazy statistics of one round of a person-level release: one per range of ``tasks``.

    Every input partition is split (:func:`split_by_unit`, only this round's
    buckets' rows); each range of buckets then bounds and tallies each of its
    buckets' pieces (:func:`unit_statistics`, or :func:`unit_selected` when the
    keys are chosen from the data) with the bucket's key, and adds them up.
    """
    first, last = tasks[0][0], tasks[-1][1]
    split = dask.delayed(split_by_unit, pure=False)
    splits = [split(p, task, buckets, first, last) for p in inputs]
    tally = dask.delayed(buckets_statistics, pure=False)
    if runs_here(inputs[0]):  # threads share the splits: no task per piece
        return [tally(task, keys[a:b], a - first, *splits) for a, b in tasks]
    # each range's pieces move alone, from its partition's worker to the range's
    return [
        tally(task, keys[a:b], 0, *[s[a - first : b - first] for s in splits]) for a, b in tasks
    ]


def buckets_statistics(
    task: Task, keys: list[bytes | None], offset: int, *splits: list[Piece]
) -> Partial | Selected:
    """The buckets ``offset``, ``offset + 1``, ... of ``splits`` (one per input partition), added.

    Each bucket is bounded and tallied alone, with its key: :func:`unit_statistics`,
    or :func:`unit_selected` when the keys are chosen from the data.
    """
    if isinstance(task.group, KeySelection):
        chosen = [
            unit_selected(task, key, *[split[offset + i] for split in splits])  # type: ignore[arg-type]
            for i, key in enumerate(keys)
        ]
        keys_seen, stats = functools.reduce(
            lambda a, b: combine_selected(task.kind, a, b), [(c[1], c[2]) for c in chosen]
        )
        return sum(c[0] for c in chosen), keys_seen, stats
    partials = [
        unit_statistics(task, key, *[split[offset + i] for split in splits])
        for i, key in enumerate(keys)
    ]
    return sum(p[0] for p in partials), functools.reduce(
        task.kind.combine, [p[1] for p in partials]
    )


def chooses(task: Task) -> bool:
    """Whether a release's bounding draws random words (not: :func:`.contributions.kept_counts`).

    A release that reads only the rows kept per key keeps ``min(rows, max_rows)``
    of each person: it chooses nothing unless a person's keys are capped by
    ``max_groups``.  One that chooses nothing draws nothing from the budget's
    source, so its noise is the pandas release's, bit for bit.
    """
    return not task.kind.counts_kept() or (task.group is not None and task.max_groups is not None)


class _NoChoice:
    """The words of a bounding that makes no random choice (:func:`chooses`): none."""

    def words(self, n: int) -> U64:
        raise AssertionError("this release's bounding makes no random choice")


def unit_statistics(task: Task, key: bytes | None, *pieces: Piece) -> Partial:
    """One bucket's row count and exact statistics: its persons bounded, then tallied.

    ``pieces`` are the bucket's rows from each input partition, in the order
    of the partitions (:func:`split_by_unit`); ``key`` (drawn on the client from
    the budget's source; None when the release chooses nothing, :func:`chooses`)
    seeds the bounding's random choices (:func:`~pandas_dp.pipeline.run.bounded_tally`,
    as on pandas).
    """
    assert task.unit is not None
    frames = [piece[1] for piece in pieces]
    part = frames[0] if len(frames) == 1 else pd.concat(frames, ignore_index=True)
    codes = None
    if task.group is not None:
        codes = np.concatenate([piece[2] for piece in pieces if piece[2] is not None])
        codes = codes.astype(np.int64)
    rows = task.kind.read(part, task.n_keys)
    source = _NoChoice() if key is None else KeyedWords(key)
    stats = bounded_tally(task, rows, codes, part[task.unit], source)
    TALLIES.add()  # before the exact statistics leave this function (see _compute)
    return sum(piece[0] for piece in pieces), stats


def unit_selected(task: Task, key: bytes, *pieces: Piece) -> Selected:
    """One bucket's rows, keys observed and selection tally, when the keys are chosen from the data.

    As :func:`unit_statistics`, for a grouping whose keys are chosen privately:
    the pieces carry the key columns, the keys are this bucket's (joined by
    value after), and each person's keys and rows are chosen with the words
    of ``key`` (:func:`~pandas_dp.pipeline.run.selection_tally`, as on pandas).
    """
    assert isinstance(task.group, KeySelection)
    assert task.unit is not None
    frames = [piece[1] for piece in pieces]
    part = frames[0] if len(frames) == 1 else pd.concat(frames, ignore_index=True)
    rows = task.kind.read(part, 0)
    codes, keys = task.group.observe(part)
    stats = selection_tally(task, rows, codes, keys, part[task.unit], KeyedWords(key))
    TALLIES.add()  # before the exact statistics leave this function (see _compute)
    return sum(piece[0] for piece in pieces), keys, stats
