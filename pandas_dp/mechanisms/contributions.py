"""Contribution bounding for a privacy unit: at most ``max_rows`` rows of one person per cell.

With ``set_budget(..., privacy_unit="customer_id")`` neighbouring datasets
differ in *all* the rows of one person.  Before a release computes anything,
:func:`bound_contributions` keeps, for every person,

- at most ``max_groups`` of the person's keys (grouped releases), chosen
  uniformly at random among the keys the person has rows in, and
- at most ``max_rows`` of the person's rows in each cell (the whole frame when
  ungrouped; one key; one (key, candidate) pair for a selection), chosen
  uniformly at random among the person's rows in that cell.

Rows whose unit id is missing, or that fall outside every public key, are
dropped.  The random choices use the budget's own randomness (the CSPRNG, or
the seeded stream): never "the first k", which would follow the frame's order.
One vectorized pass: a bincount per cell, then, for the rows of the cells over
their bound only, a random 32-bit value each (half a word) and one in-place
sort of packed (cell, value) integers (no index sort), and likewise for the
person-key pairs; no Python loop over persons.  The rows of persons within
the bound are kept without a random draw or a sort, and integer unit ids in
a narrow range are their own codes (no hash).  A release that reads only how
many rows are kept (a row count) asks :func:`kept_counts`: no row is chosen,
only the keys of the persons with more than ``max_groups``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from ..core.noise import I64, Bools, RandomSource
from ..core.validation import check_unit_ids

__all__ = ["bound_contributions", "kept_counts", "keys_per_person", "rows_per_person", "unit_codes"]


def unit_codes(series: pd.Series, *, sort: bool = False) -> I64:
    """Each row's person as a code (-1 where the unit id is missing).

    Integer ids within a range of about four times the rows are their offset
    from the smallest id (no hash; codes in the order of the ids, some
    possibly without rows); others one factorize.  ``sort``: codes in the
    order of the ids, not of their first row (then the same persons get the
    same codes whatever the order of the rows).  The ids' dtype is checked
    first (:func:`pandas_dp.core.validation.check_unit_ids`): object or float ids
    could make one person several (a Dask partition holds the dtype its data
    gave it, whatever the collection's ``_meta`` says).
    """
    check_unit_ids(series.dtype, series.name)
    narrow = _narrow_ids(series)
    if narrow is not None:
        ids, low = narrow
        offsets: I64 = np.subtract(ids, low, dtype=np.int64)  # new: the ids are never written
        return offsets
    codes, _ = pd.factorize(series, sort=sort, use_na_sentinel=True)
    return np.asarray(codes, dtype=np.int64)


def _narrow_ids(series: pd.Series) -> tuple[np.ndarray, int] | None:
    """Integer ids (as stored) and the smallest, when they span at most about 4x the rows."""
    dtype = series.dtype
    if not (
        isinstance(dtype, np.dtype)
        and (dtype.kind == "i" or (dtype.kind == "u" and dtype.itemsize < 8))
    ):
        return None
    ids = series.to_numpy()
    if not ids.size:
        return None
    low, high = int(ids.min()), int(ids.max())
    return (ids, low) if _countable(ids, high - low + 1) else None


def _compact(combined: I64, bound: int) -> tuple[I64, int]:
    """Cell ids in ``[0, m)`` for the values of ``combined`` (all in ``[0, bound)``), and ``m``.

    Values are kept as they are when ``bound`` is small enough to count them
    with one bincount; otherwise one factorize makes them dense.
    """
    if _countable(combined, bound):
        return combined, bound
    return _dense(combined)


def _countable(combined: I64, bound: int) -> bool:
    """Whether ids below ``bound`` are counted by one bincount (not too sparse for it)."""
    return bound <= max(4 * combined.size, 1 << 20)


def _dense(ids: I64) -> tuple[I64, int]:
    """Dense ids ``0..m-1`` for the distinct values of ``ids``, and ``m``."""
    dense, uniques = pd.factorize(ids)
    return np.asarray(dense, dtype=np.int64), len(uniques)


def _pairs(combined: I64, bound: int) -> tuple[I64, I64, I64 | None]:
    """The distinct values of ``combined`` (all below ``bound``), their rows, each row's pair.

    Counted by one bincount when ``bound`` allows it (each row's pair is then
    its value, None here), else factorized (each row's index among them); the
    values in increasing order either way, whatever the order of the rows.
    """
    if _countable(combined, bound):
        counts = np.bincount(combined, minlength=bound)
        ids = np.flatnonzero(counts)
        return ids, counts[ids], None
    order = np.argsort(combined)  # one sort of integers: faster than a hash of them
    ordered = combined[order]
    first = np.r_[True, ordered[1:] != ordered[:-1]]
    dense = np.empty(combined.size, dtype=np.int64)
    dense[order] = np.cumsum(first) - 1
    starts = np.flatnonzero(first)
    return ordered[starts], np.diff(np.r_[starts, ordered.size]).astype(np.int64), dense


def _distinct(combined: I64, bound: int) -> tuple[I64, I64]:
    """The distinct values of ``combined`` (all below ``bound``), increasing, and their rows.

    As :func:`_pairs` without each row's pair: one bincount, or one sort.
    """
    if _countable(combined, bound):
        counts = np.bincount(combined, minlength=bound)
        ids = np.flatnonzero(counts)
        return ids, counts[ids]
    ids, counts = np.unique(combined, return_counts=True)
    return ids.astype(np.int64), counts.astype(np.int64)


def _kept(cells: I64, n_cells: int, source: RandomSource, limit: int) -> Bools:
    """Which items are kept: at most ``limit`` per cell, uniformly at random.

    Cells with at most ``limit`` items keep them all, without a random draw;
    the items of the other cells are chosen by :func:`_smallest`.
    """
    counts = np.bincount(cells, minlength=n_cells)
    crowded = counts > limit
    over = np.flatnonzero(crowded[cells])
    kept = np.ones(cells.size, dtype=np.bool_)
    if over.size:
        np.multiply(counts, crowded, out=counts)  # items of the crowded cells only
        kept[over] = _smallest(cells[over], counts, source, limit)
    return kept


def _smallest(cells: I64, counts: I64, source: RandomSource, limit: int) -> Bools:
    """Which items of crowded cells are kept: the ``limit`` with the smallest random values.

    ``counts[c]`` is how many items cell ``c`` has here (all of its items,
    more than ``limit``; or 0).  Each item draws a uniform value of ``w``
    bits, half a word (``w`` = 32 unless cell ids need more than 32 bits),
    packed as ``cell · 2**w + value``, and the packed values alone are
    sorted (in place: no index sort): within a cell their order is that of
    the values, and an item is kept when its value is at most the
    ``limit``-th smallest of its cell (found at the cell's offset in the
    sorted values).  A cell where two items drew the same value (probability
    about m²/2**(w + 1) for m items) draws all its values again: whether a
    cell ties is symmetric in its items, so given no tie its values are still
    exchangeable and the chosen rows a uniform subset.
    """
    n_cells = counts.size
    width = min(32, 64 - max(int(n_cells - 1).bit_length(), 1))
    values = _halves(source, cells.size, width)
    ordered = cells.astype(np.uint64)
    ordered <<= np.uint64(width)
    ordered |= values
    ordered.sort()  # the packed values, in place
    before = np.cumsum(counts) - counts  # a cell's offset in the sorted values
    heads = np.flatnonzero(counts)
    last = np.zeros(n_cells, dtype=np.uint32)  # the largest value kept in each cell
    last[heads] = ordered[before[heads] + limit - 1] & np.uint64((1 << width) - 1)
    chosen = values <= last[cells]
    same = ordered[1:] == ordered[:-1]
    if bool(same.any()):
        tied = np.zeros(n_cells, dtype=np.bool_)
        tied[(ordered[1:][same] >> np.uint64(width)).astype(np.int64)] = True
        again = np.flatnonzero(tied[cells])
        chosen[again] = _smallest_words(cells[again], source, limit)
    return chosen


def _smallest_words(cells: I64, source: RandomSource, limit: int) -> Bools:
    """:func:`_smallest` for cells that tied: whole words, drawn again until no cell ties.

    Each item draws a 64-bit word; a cell keeps the ``limit`` items with the
    smallest words, and a cell where two words are equal draws all of its
    words again (as in :func:`_smallest`: given no tie the words are
    exchangeable, so the kept items are a uniform subset).  A loop, not a
    recursion, and a tie of 64-bit words (about ``m²/2**65`` for a cell of m
    items) is rare at any size, so no data can make this fail inside a
    reservation.
    """
    chosen = np.zeros(cells.size, dtype=np.bool_)
    todo = np.arange(cells.size)
    while todo.size:
        mine = cells[todo]
        words = source.words(todo.size)
        order = np.lexsort((words, mine))
        ordered, drawn = mine[order], words[order]
        start = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])
        rank = np.arange(ordered.size) - np.repeat(start, np.diff(np.r_[start, ordered.size]))
        same = (ordered[1:] == ordered[:-1]) & (drawn[1:] == drawn[:-1])
        tied = np.isin(ordered, ordered[1:][same])
        chosen[todo[order[~tied & (rank < limit)]]] = True
        todo = todo[order[tied]]
    return chosen


def _halves(source: RandomSource, n: int, width: int) -> NDArray[np.uint32]:
    """``n`` uniform values of ``width`` bits (at most 32): one half of a word each."""
    values = source.words((n + 1) // 2).astype("<u8", copy=False).view("<u4")[:n]
    return values if width == 32 else values >> np.uint32(32 - width)


def rows_per_person(series: pd.Series) -> I64:
    """How many rows each person has (missing ids dropped; ids without rows may count 0).

    Integer ids within a range of about four times the rows are counted by one
    bincount; others by one hash count (no codes).  The ids' dtype is checked
    as by :func:`unit_codes`.
    """
    check_unit_ids(series.dtype, series.name)
    narrow = _narrow_ids(series)
    if narrow is not None:  # ids in a narrow range: count, don't hash
        ids, low = narrow
        return np.bincount(np.subtract(ids, low, dtype=np.int64) if low else ids)
    return np.asarray(series.value_counts(sort=False, dropna=True), dtype=np.int64)


def kept_counts(
    source: RandomSource,
    units: pd.Series,
    keys: I64 | None,
    *,
    n_keys: int,
    max_rows: int,
    max_groups: int | None,
) -> I64:
    """The rows per key that :func:`bound_contributions` keeps, without choosing the rows.

    ``units`` is the unit column (one id per row; missing: dropped).  A person
    keeps ``min(rows, max_rows)`` of its rows in each key it keeps; a grouped
    release keeps ``max_groups`` of a person's keys, uniformly at random (one
    word per key of the persons with more keys than that, the same words and
    choice as :func:`bound_contributions` makes from the same source, given
    the same codes).  Ungrouped, one hash count of the unit column
    (:func:`rows_per_person`); grouped, one bincount of the (person, key)
    pairs, persons numbered in the order of their ids: no random word per
    row, no sort of the rows, and the same counts whatever the rows' order.
    """
    if keys is None:
        per_person = rows_per_person(units)
        return np.array([int(np.minimum(per_person, max_rows).sum())], dtype=np.int64)
    codes = unit_codes(units, sort=True)
    valid = (codes >= 0) & (keys >= 0)
    whole = bool(valid.all())
    person = codes if whole else codes[valid]
    key = keys if whole else keys[valid]
    n_persons = int(person.max(initial=-1)) + 1
    ids, rows = _distinct(person * n_keys + key, n_persons * n_keys)
    persons, keys = ids // n_keys, ids % n_keys
    return kept_pair_counts(
        source,
        persons,
        keys,
        rows,
        n_keys,
        max_rows=max_rows,
        max_groups=max_groups,
        n_persons=n_persons,
    )


def kept_pair_counts(
    source: RandomSource,
    persons: I64,
    keys: I64,
    rows: I64,
    n_keys: int,
    *,
    max_rows: int,
    max_groups: int | None,
    n_persons: int | None = None,
) -> I64:
    """The rows per key kept of distinct (person, key) pairs: :func:`kept_counts`' last step.

    Each person keeps ``min(rows, max_rows)`` in each of at most
    ``max_groups`` of its pairs, chosen uniformly at random (one word per
    pair of the persons with more), given the pairs in increasing (person,
    key) order; keys -1 are dropped.  ``n_persons``: more than the largest
    person code (by default one more).
    """
    valid = keys >= 0
    if not bool(valid.all()):
        persons, keys, rows = persons[valid], keys[valid], rows[valid]
    chosen = np.ones(keys.size, dtype=np.bool_)
    if max_groups is not None and keys.size:
        cells = int(persons.max()) + 1 if n_persons is None else n_persons
        chosen = _kept(persons, cells, source, max_groups)
    kept = np.minimum(rows[chosen], max_rows).astype(np.float64)  # sums below 2**53: exact
    return np.bincount(keys[chosen], weights=kept, minlength=n_keys).astype(np.int64)


def bound_contributions(
    source: RandomSource,
    units: I64,
    keys: I64 | None,
    cells: I64 | None,
    *,
    n_keys: int,
    n_cells: int,
    max_rows: int,
    max_groups: int | None,
) -> Bools:
    """Which rows to keep so that each person contributes at most the given bounds.

    Parameters
    ----------
    source : RandomSource
        The budget's randomness.
    units : int64 array
        Each row's person (-1: missing unit id, dropped).
    keys : int64 array or None
        Each row's public key (-1: dropped); None for an ungrouped release.
    cells : int64 array or None
        Each row's cell within its key (e.g. its candidate; -1: dropped), or
        None when a key is one cell.
    n_keys, n_cells : int
        How many keys, and cells per key.
    max_rows : int
        Rows of one person kept per cell.
    max_groups : int or None
        Keys of one person kept (grouped releases).

    Returns
    -------
    bool array
        True for the rows to keep.
    """
    valid = units >= 0
    if keys is not None:
        valid &= keys >= 0
    if cells is not None:
        valid &= cells >= 0
    rows = None if bool(valid.all()) else np.flatnonzero(valid)  # None: every row
    person = units if rows is None else units[rows]
    n_persons = int(person.max(initial=-1)) + 1
    cell_of_row, bound = person, n_persons
    if keys is not None:
        cell_of_row = person * n_keys + (keys if rows is None else keys[rows])
        bound = n_persons * n_keys
    if keys is not None and max_groups is not None:
        # one word per (person, key) pair of a crowded person: a uniform choice of its keys
        ids, _, dense = _pairs(cell_of_row, bound)
        chosen = _kept(ids // n_keys, n_persons, source, max_groups)
        if dense is None:
            table = np.zeros(bound, dtype=np.bool_)
            table[ids[chosen]] = True
            inside = table[cell_of_row]
        else:
            inside = chosen[dense]
            cell_of_row, bound = dense, ids.size
        rows = np.flatnonzero(inside) if rows is None else rows[inside]
        cell_of_row = cell_of_row[inside]
    if cells is not None:
        cell_of_row = cell_of_row * n_cells + (cells if rows is None else cells[rows])
        bound *= n_cells
    compact, n_compact = _compact(cell_of_row, bound)
    kept = _kept(compact, n_compact, source, max_rows)
    if rows is None:
        return kept
    keep = np.zeros(units.size, dtype=np.bool_)
    keep[rows] = kept
    return keep


def keys_per_person(units: pd.Series, keys: I64) -> I64:
    """How many distinct keys each person has rows in (persons with none left out).

    ``units`` is the unit column, ``keys`` each row's key code (-1: a row outside
    every key, or a missing key: dropped); rows whose unit id is missing are
    dropped.  One bincount of the (person, key) pairs (or one factorize when
    they are too sparse), in the order of the persons' ids.  What
    ``max_groups="auto"`` chooses from, and what ``cut=True`` measures.
    """
    codes = unit_codes(units, sort=True)
    valid = (codes >= 0) & (keys >= 0)
    person, key = codes[valid], keys[valid]
    n_keys = int(key.max(initial=-1)) + 1
    n_persons = int(person.max(initial=-1)) + 1
    ids, _ = _distinct(person * n_keys + key, n_persons * n_keys)
    held = np.bincount(ids // max(n_keys, 1), minlength=n_persons)
    return held[held > 0].astype(np.int64)


def person_key_pairs(units: pd.Series, keys: I64) -> tuple[I64, I64, I64]:
    """The distinct (person, key) pairs of the rows: each pair's key, person, and rows.

    ``units`` is the unit column, ``keys`` each row's key code (-1: dropped);
    rows whose unit id is missing are dropped.  Persons are numbered in the
    order of their ids (the same numbers whatever the rows' order); the pairs
    come in increasing (person, key).  One bincount of the pairs (or one
    factorize when they are too sparse): what a policy selection
    (:mod:`pandas_dp.mechanisms.policy`) and the counts over its keys read.
    """
    codes = unit_codes(units, sort=True)
    valid = (codes >= 0) & (keys >= 0)
    whole = bool(valid.all())
    person = codes if whole else codes[valid]
    key = keys if whole else keys[valid]
    n_keys = int(key.max(initial=-1)) + 1
    n_persons = int(person.max(initial=-1)) + 1
    ids, rows = _distinct(person * n_keys + key, n_persons * n_keys)
    if not n_keys:
        return ids, ids, rows
    return ids % n_keys, ids // n_keys, rows
