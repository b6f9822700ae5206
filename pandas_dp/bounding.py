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
One vectorized pass: a bincount per cell, then one random word and one sort
for the rows of the cells over their bound only (and likewise for the
person-key pairs); no Python loop over persons.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .noise import I64, Bools, RandomSource
from .validation import check_unit_ids

__all__ = ["bound_contributions", "unit_codes"]


def unit_codes(series: pd.Series) -> I64:
    """Each row's person as a code (-1 where the unit id is missing); one factorize.

    The ids' dtype is checked first (:func:`pandas_dp.validation.check_unit_ids`):
    object or float ids could make one person several (a Dask partition holds
    the dtype its data gave it, whatever the collection's ``_meta`` says).
    """
    check_unit_ids(series.dtype, series.name)
    codes, _ = pd.factorize(series, use_na_sentinel=True)
    return np.asarray(codes, dtype=np.int64)


def _compact(combined: I64, bound: int) -> tuple[I64, int]:
    """Cell ids in ``[0, m)`` for the values of ``combined`` (all in ``[0, bound)``), and ``m``.

    Values are kept as they are when ``bound`` is small enough to count them
    with one bincount; otherwise one factorize makes them dense.
    """
    if bound <= max(4 * combined.size, 1 << 20):
        return combined, bound
    return _dense(combined)


def _dense(ids: I64) -> tuple[I64, int]:
    """Dense ids ``0..m-1`` for the distinct values of ``ids``, and ``m``."""
    dense, uniques = pd.factorize(ids)
    return np.asarray(dense, dtype=np.int64), len(uniques)


def _kept(cells: I64, n_cells: int, source: RandomSource, limit: int) -> I64:
    """Positions of the items kept: at most ``limit`` per cell, uniformly at random.

    Cells with at most ``limit`` items keep them all.  The items of the other
    cells get one random word each and are sorted by
    ``cell · 2**(64 − b) + (word >> b)`` (b bits hold a cell id): within a
    cell the order is that of the words, and the first ``limit`` are kept.
    When two items of a cell draw the same truncated word (probability about
    k²/2**(65 − b) for a cell of k items), an exact pass sorts by the full
    words instead.
    """
    if cells.size == 0:
        return np.zeros(0, dtype=np.int64)
    crowded = np.bincount(cells, minlength=n_cells)[cells] > limit
    whole = np.flatnonzero(~crowded)
    over = np.flatnonzero(crowded)
    if over.size == 0:
        return whole
    over_cells = cells[over]
    words = source.words(over.size)
    bits = max(int(n_cells - 1).bit_length(), 1)
    key = (over_cells.astype(np.uint64) << np.uint64(64 - bits)) | (words >> np.uint64(bits))
    order = np.argsort(key)
    sorted_key = key[order]
    if bool(np.any(sorted_key[1:] == sorted_key[:-1])):
        order = np.lexsort((words, over_cells))
        sorted_cells = over_cells[order]
    else:
        sorted_cells = (sorted_key >> np.uint64(64 - bits)).astype(np.int64)
    n = over.size
    index = np.arange(n, dtype=np.int64)
    starts = np.empty(n, dtype=np.bool_)
    starts[0] = True
    np.not_equal(sorted_cells[1:], sorted_cells[:-1], out=starts[1:])
    first = np.maximum.accumulate(np.where(starts, index, 0))
    kept: I64 = np.concatenate([whole, over[order[index - first < limit]]])
    return kept


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
    rows = np.flatnonzero(valid)
    person = units[rows]
    n_persons = int(person.max(initial=-1)) + 1
    keep = np.zeros(units.size, dtype=np.bool_)
    if keys is not None and max_groups is not None:
        pairs, n_pairs = _dense(person * n_keys + keys[rows])
        # one word per (person, key) pair: a uniform choice of the person's keys
        pair_person = np.empty(n_pairs, dtype=np.int64)
        pair_person[pairs] = person
        chosen = np.zeros(n_pairs, dtype=np.bool_)
        chosen[_kept(pair_person, n_persons, source, max_groups)] = True
        inside = chosen[pairs]
        rows, pairs = rows[inside], pairs[inside]
        cell_of_row, bound = pairs, n_pairs
        if cells is not None:
            cell_of_row, bound = pairs * n_cells + cells[rows], n_pairs * n_cells
    else:
        cell_of_row, bound = person, n_persons
        if keys is not None:
            cell_of_row, bound = cell_of_row * n_keys + keys[rows], bound * n_keys
        if cells is not None:
            cell_of_row, bound = cell_of_row * n_cells + cells[rows], bound * n_cells
    compact, n_compact = _compact(cell_of_row, bound)
    keep[rows[_kept(compact, n_compact, source, max_rows)]] = True
    return keep
