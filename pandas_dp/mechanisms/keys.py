"""Public keys and candidates: normalised, checked against the column dtypes, encoded.

Keys are public: passed by the caller, never read from the data.  Rows whose
key is not among ``keys`` (or is missing) are dropped; keys with no rows are
answered too.  Encoding is one vectorized pass: look a numeric key column up in
the key list, or factorize it (or take the codes of a categorical column) and
map its uniques onto the key list; each row gets the position of its key, or
-1.  No Python loop over rows or keys.  The codes of a row depend only on that
row and the public keys, so a partition of the rows encodes to the same codes
as the whole frame.
"""

from __future__ import annotations

import functools
from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

try:  # optional: pandas stores its default strings in pyarrow only when it is installed
    import pyarrow.compute as pc
except ImportError:  # pragma: no cover - exercised by tests/test_keys.py in a subprocess
    pc = None

from ..core.noise import I64
from ..core.validation import (
    check_column,
    check_keys_dtype,
    check_ordered,
    check_quantile_grid,
    check_readable,
    column_dtype,
    column_values,
    numeric_values,
)

__all__ = [
    "Bins",
    "CrossKeys",
    "Grouping",
    "encode_keys",
    "level_codes",
    "normalize_by",
    "normalize_keys",
]


@dataclass(frozen=True)
class Grouping:
    """The ``by`` columns of a grouped release and its public keys (an Index or MultiIndex)."""

    by: tuple[Hashable, ...]
    keys: pd.Index

    @classmethod
    def of(cls, df: pd.DataFrame, by: object, keys: object) -> Grouping:
        """Normalise ``by`` and ``keys`` and check them against ``df``'s columns (no value read).

        The keys' type is checked against each column's dtype by :meth:`check`,
        or by :meth:`codes` with ``check=True`` as it reads the columns.
        """
        labels = normalize_by(df, by)
        return cls(tuple(labels), normalize_keys(labels, keys))

    def check(self, schema: pd.DataFrame) -> Grouping:
        """Refuse key columns of any object (:func:`~pandas_dp.validation.check_values`), and
        keys that no value of their column's dtype can equal (``schema``'s dtypes)."""
        check_readable(schema, self.by)
        for label, level in zip(self.by, _levels(self.keys), strict=True):
            check_keys_dtype(column_dtype(schema, label), label, level, "keys")
        return self

    def codes(self, df: pd.DataFrame, *, check: bool = False) -> I64:
        """Per row of ``df``, the position of its key in ``keys``, or -1 if it is dropped.

        ``check``: first refuse keys of the wrong type as :meth:`check` does,
        on each column as it is read (pandas, before the reservation).  Never on
        a Dask partition: its dtype may differ from the collection's ``_meta``
        (checked when the groupby is made), and an error raised while the
        partitions are computed would depend on the data.
        """
        return encode_keys(df, list(self.by), self.keys, check=check)


_BINS_HINT = (
    "Pass public bin edges, e.g. bins=[18, 30, 45, 65, 100]: an increasing list of at least two "
    "finite numbers chosen without looking at the data (an integer number of bins would take "
    "the edges from the data's minimum and maximum)."
)


@dataclass(frozen=True)
class Bins(Grouping):
    """Public bin edges of one numeric column: the keys are ``pd.cut``'s intervals.

    Each row's code is its bin as ``pd.cut(values, edges, right=...,
    include_lowest=..., labels=False)`` gives it (-1: missing or outside every
    bin), and the keys are the IntervalIndex that ``pd.cut(...).value_counts(
    sort=False)`` is indexed by, built from the edges alone (never the data).
    """

    edges: np.ndarray = field(default_factory=lambda: np.empty(0), repr=False)
    right: bool = True
    include_lowest: bool = False

    @classmethod
    def of_edges(
        cls, df: pd.DataFrame, column: Hashable, bins: object, *, right: bool, include_lowest: bool
    ) -> Bins:
        """Check ``column`` and the public ``bins`` edges; the intervals are data-free."""
        check_column(df, column)
        numeric_values(df.iloc[:0], column)  # the dtype check alone, reading no value
        if isinstance(bins, int | np.integer | pd.IntervalIndex) or bins is None:
            raise TypeError(
                f"`bins` must be public bin edges, got {type(bins).__name__}. {_BINS_HINT}"
            )
        edges = check_quantile_grid(bins, "bins")
        if edges.size < 2:
            raise ValueError(f"`bins` needs at least two edges, got {edges.size}. {_BINS_HINT}")
        for flag, name in ((right, "right"), (include_lowest, "include_lowest")):
            if not isinstance(flag, bool | np.bool_):
                raise TypeError(f"`{name}` must be True or False, got {type(flag).__name__}.")
        public: Any = bins if isinstance(bins, pd.Index) else pd.Index(list(bins))  # type: ignore[call-overload]
        cut = pd.cut(np.empty(0), public, right=bool(right), include_lowest=bool(include_lowest))
        # value_counts of the empty cut: exactly the index pandas gives, from the edges alone
        keys = pd.Series(cut).value_counts(sort=False).index.rename(column)
        return cls((column,), keys, edges, bool(right), bool(include_lowest))

    def codes(self, df: pd.DataFrame, *, check: bool = False) -> I64:
        values = numeric_values(df, self.by[0])  # its dtype checked by of_edges
        bins = pd.cut(
            values,
            pd.Index(self.edges),
            right=self.right,
            include_lowest=self.include_lowest,
            labels=False,
        )
        out: I64 = np.nan_to_num(np.asarray(bins, dtype=np.float64), nan=-1.0).astype(np.int64)
        return out


@dataclass(frozen=True)
class CrossKeys(Grouping):
    """The product of public row keys and column keys: the cells of ``pd.crosstab``.

    A grouping over ``(index, columns)`` whose keys are every pair of
    ``rows`` × ``cols`` (row-major), built from the public keys alone;
    :meth:`table` reshapes a release over it into the crosstab.
    """

    rows: pd.Index = field(default_factory=lambda: pd.Index([]), repr=False)
    cols: pd.Index = field(default_factory=lambda: pd.Index([]), repr=False)

    @classmethod
    def of_pair(
        cls, df: pd.DataFrame, index: Hashable, columns: Hashable, keys: object
    ) -> CrossKeys:
        """Check ``index``, ``columns`` and ``keys = (row_keys, column_keys)`` against ``df``."""
        if not isinstance(keys, tuple | list) or len(keys) != 2:
            raise TypeError(
                "`keys` must be a pair (row_keys, column_keys) of public key lists, got "
                f"{type(keys).__name__}."
            )
        rows = normalize_keys([index], keys[0])
        cols = normalize_keys([columns], keys[1])
        product = pd.MultiIndex.from_product([rows, cols], names=[index, columns])
        group = Grouping.of(df, [index, columns], product).check(df)
        return cls(group.by, group.keys, rows, cols)

    def table(self, counts: pd.Series | pd.DataFrame) -> pd.DataFrame:
        """A release over these keys as the crosstab: ``rows`` down, ``cols`` across.

        A DataFrame release (one column per statistic, e.g. ``estimate``,
        ``lower``, ``upper``) gives one table per statistic side by side: the
        columns are a MultiIndex ``(statistic, column key)``, so
        ``table["lower"]`` is the crosstab of the lower bounds.
        """
        if isinstance(counts, pd.DataFrame):
            tables = [self.table(counts[stat]) for stat in counts.columns]
            frame: pd.DataFrame = pd.concat(tables, axis=1, keys=counts.columns)
            return frame
        values = counts.to_numpy().reshape(len(self.rows), len(self.cols))
        return pd.DataFrame(values, index=self.rows.view(), columns=self.cols.view())


_KEYS_HINT = (
    "Pass the public list of groups, e.g. keys=['Eng', 'Ops', 'Sales'], a pd.Index, a "
    "pd.MultiIndex for several columns, a DataFrame of key combinations, or a pd.CategoricalDtype. "
    "Keys must not be read from the data (df[col].unique()): which groups exist can itself reveal "
    "who is in the data. Take them from a code list, a schema, or bins such as pd.cut edges; keys "
    "with no rows are answered with noise too."
)


#: Up to this many rows, a numeric column is looked up in keys of its dtype by binary search
#: (less fixed cost than get_indexer, which hashes: faster beyond).
_SEARCH_ROWS = 2048
#: Up to this many int64 keys spanning at most ``_TABLE_SPREAD`` times as many integers
#: (plus ``_TABLE_SLACK``), an int64 column is looked up in a table indexed by
#: ``value - min(keys)`` (no hashing, no search); at most 8·(8·1024 + 64) bytes a table.
_TABLE_KEYS = 1024
_TABLE_SPREAD = 8
_TABLE_SLACK = 64
#: Up to this many rows, a pyarrow string column is looked up in string keys by arrow's
#: ``index_in`` (1.5-4x faster than factorize and get_indexer there; slower on millions).
_ARROW_ROWS = 100_000
#: Lists of up to this many plain keys (all ``str`` or all ``int``) have their Index cached.
_CACHED_KEYS = 64
#: Python ints in [-2**63, 2**63) make an int64 Index.
_I64 = 1 << 63


def normalize_by(df: pd.DataFrame, by: object) -> list[Hashable]:
    """``by`` as a non-empty list of existing, distinct column labels."""
    # A tuple that is itself a column label (MultiIndex columns) is one label.
    is_list = isinstance(by, list) or (isinstance(by, tuple) and by not in df.columns)
    labels: list[Hashable] = list(by) if is_list else [by]  # type: ignore[call-overload]
    if not labels:
        raise ValueError("`by` must name at least one column, got an empty list.")
    for label in labels:
        if not isinstance(label, Hashable):
            raise TypeError(
                f"`by` must be a column label or a list of them, got {type(label).__name__}."
            )
        check_column(df, label)
    if len(set(labels)) != len(labels):
        raise ValueError(f"`by` names a column twice: {labels!r}.")
    return labels


def normalize_keys(by: list[Hashable], keys: object) -> pd.Index:
    """The public keys as an Index (one ``by`` column) or MultiIndex, named after ``by``.

    A MultiIndex or DataFrame of keys whose level/column names are the ``by``
    labels in another order is matched by name; otherwise levels are matched
    by position.  The result is indexed in the order of ``keys``, so a
    ``set`` or ``frozenset`` (no fixed order) is refused; a dict's ``keys()``
    view is accepted (insertion order).
    """
    if keys is None:
        raise TypeError(f"`keys` is required for a private groupby. {_KEYS_HINT}")
    check_ordered(keys, "keys")
    index: pd.Index
    if isinstance(keys, pd.CategoricalDtype):
        if keys.categories is None:
            raise ValueError("`keys` is a CategoricalDtype without categories; list them.")
        index = pd.Index(keys.categories)
    elif isinstance(keys, pd.DataFrame):
        index = pd.MultiIndex.from_frame(keys) if keys.shape[1] > 1 else pd.Index(keys.iloc[:, 0])
    elif isinstance(keys, pd.Index):
        index = keys
    elif isinstance(keys, str | bytes) or not hasattr(keys, "__iter__"):
        raise TypeError(
            f"`keys` must be a collection of public keys, got {type(keys).__name__}. {_KEYS_HINT}"
        )
    else:
        items = list(keys)
        if len(by) == 1 and _plain(items):
            if len(set(items)) != len(items):
                raise ValueError("`keys` must not contain duplicates (each public key once).")
            small = len(items) <= _CACHED_KEYS
            index = _plain_index(tuple(items)) if small else _index_of(items, by)
            return index.rename(by[0]) if small else index.set_names(by[0])
        index = _index_of(items, by)
        if len(by) == 1 and not isinstance(index, pd.MultiIndex):
            # built here: named in place (no copy), once every check passed
            _check_index(index, by)
            index.name = by[0]
            return index
    if (
        isinstance(index, pd.MultiIndex)
        and list(index.names) != by
        and sorted(map(repr, index.names)) == sorted(map(repr, by))
    ):
        # Keys named after the `by` columns in another order: match them by name.
        index = index.reorder_levels(by)
    _check_index(index, by)
    return index.set_names(list(by)) if len(by) > 1 else index.rename(by[0])


def _index_of(items: list[Any], by: list[Hashable]) -> pd.Index:
    """A list of keys as the Index (tuples for several ``by`` columns: a MultiIndex)."""
    index: pd.Index
    if len(by) > 1 and items and all(isinstance(k, tuple) for k in items):
        index = pd.MultiIndex.from_tuples(items)
    elif items and all(type(k) is int for k in items) and -_I64 <= min(items) <= max(items) < _I64:
        index = pd.Index(np.array(items, dtype=np.int64), copy=False)  # what pd.Index infers
    else:
        index = pd.Index(items)
    return index


def _plain(items: list[Any]) -> bool:
    """Keys that are all Python ``str`` or all Python ``int``: none missing, and two of them are
    one key of an Index exactly when they are one element of a ``set``."""
    kinds = set(map(type, items))
    return kinds == {str} or kinds == {int}


@functools.lru_cache(maxsize=256)
def _plain_index(items: tuple[Any, ...]) -> pd.Index:
    """A short list of distinct :func:`_plain` keys as its Index, built once per list.

    An Index is immutable; each caller gets its own (shallow, renamed) copy,
    so a release made with the same keys again skips the Index construction.
    """
    return _index_of(list(items), [None])


def _check_index(index: pd.Index, by: list[Hashable]) -> None:
    """Refuse keys that are empty, of the wrong depth, missing, overlapping or repeated."""
    if len(index) == 0:
        raise ValueError(f"`keys` must not be empty. {_KEYS_HINT}")
    if index.nlevels != len(by):
        raise ValueError(
            f"`keys` must have one level per `by` column ({len(by)}), got keys with "
            f"{index.nlevels} level(s)."
        )
    if isinstance(index, pd.MultiIndex):
        has_missing = any(-1 in codes for codes in index.codes)
    else:
        has_missing = index.hasnans
    if has_missing:
        raise ValueError(
            "`keys` must not contain missing values; rows with a missing key are dropped."
        )
    if isinstance(index, pd.IntervalIndex) and index.is_overlapping:
        raise ValueError("`keys` must not overlap: each row may fall in one interval only.")
    if not index.is_unique:
        raise ValueError("`keys` must not contain duplicates (each public key once).")


#: numpy number, bool and datetime kinds: such an array's values are the column's values.
_NUMPY_KINDS = "biufmM"


def _is_numpy_scalar(dtype: object) -> bool:
    """A numpy number, bool or datetime dtype: its array's values are the column's values."""
    return isinstance(dtype, np.dtype) and dtype.kind in _NUMPY_KINDS


def row_codes(series: pd.Series) -> tuple[I64, pd.Index]:
    """Each row's code into the column's own distinct values (-1 if missing), and those values.

    One vectorized pass: a categorical column's codes, else ``pd.factorize``.
    Values are equal as pandas compares them (``-0.0`` is ``0.0``, a NaN is
    missing), also in an Arrow float column, which Arrow would factorize by
    its bits: it goes through ``Float64`` (its distinct values back in its own dtype).
    """
    if isinstance(series.dtype, pd.CategoricalDtype):
        return np.asarray(series.cat.codes, dtype=np.int64), pd.Index(series.cat.categories)
    if isinstance(series.dtype, pd.ArrowDtype) and series.dtype.kind == "f":
        codes, floats = row_codes(series.astype(pd.Float64Dtype()))
        return codes, floats.astype(series.dtype)
    # A numpy number, bool or datetime column factorizes as its array: the same codes and
    # uniques without the Series round trip (a large share of a small release's cost).
    # Object columns stay Series: an object array's uniques would be inferred as strings.
    values = series.to_numpy() if _is_numpy_scalar(series.dtype) else series
    factorized, uniques = pd.factorize(values, use_na_sentinel=True)
    return np.asarray(factorized, dtype=np.int64), pd.Index(uniques)


def level_codes(series: pd.Series, level: pd.Index) -> I64:
    """Each row's position in ``level`` (-1 if absent or missing), one vectorized pass.

    A numpy number, bool or datetime column is looked up in ``level`` directly
    (the keys hold no missing value, so a missing row gets -1), and so is a
    pyarrow string column of up to ``_ARROW_ROWS`` rows with string keys
    (:func:`_arrow_lookup`); any other column is factorized and its distinct
    values looked up.
    """
    if _is_numpy_scalar(series.dtype):
        return array_codes(series.to_numpy(), level)
    if (
        len(series) <= _ARROW_ROWS
        and _is_arrow_string(series.dtype)
        and _is_arrow_string(level.dtype)
    ):
        return _arrow_lookup(series.array, level.array)
    codes, uniques = row_codes(series)
    mapping = np.append(np.asarray(level.get_indexer(uniques), dtype=np.int64), -1)
    return mapping[codes]  # code -1 (missing) picks the trailing -1


def array_codes(values: Any, level: pd.Index) -> I64:
    """:func:`level_codes` of a numpy number, bool or datetime array (the keys hold no NaN).

    int64 keys over a short range: a table; numbers of the keys' dtype on up
    to ``_SEARCH_ROWS`` rows: a binary search; else ``get_indexer``.
    """
    if values.dtype == level.dtype and values.dtype.kind in "iuf":
        if values.dtype == np.int64:
            found = _table_lookup(level.to_numpy(), values)
            if found is not None:
                return found
        if len(values) <= _SEARCH_ROWS:
            return _search(level.to_numpy(), values)
    return np.asarray(level.get_indexer(values), dtype=np.int64)


def _is_arrow_string(dtype: object) -> bool:
    """A pandas string dtype stored in pyarrow (``str``, ``string[pyarrow]``)."""
    return pc is not None and isinstance(dtype, pd.StringDtype) and dtype.storage == "pyarrow"


def _arrow_lookup(values: Any, keys: Any) -> I64:
    """Each value's position in the distinct string ``keys`` (-1 if absent or missing).

    One ``pyarrow.compute.index_in`` pass over the column's arrow data: the
    codes of factorizing it and looking its uniques up in the keys (exact
    string equality; the keys hold no missing value, so a missing row, null in
    arrow, gets -1), without the factorize and the Index of uniques.
    """
    wanted = keys.__arrow_array__()  # the arrow protocol: the data, no copy
    wanted = wanted.combine_chunks() if hasattr(wanted, "combine_chunks") else wanted
    found = pc.index_in(values.__arrow_array__(), value_set=wanted)
    out: I64 = np.asarray(pc.fill_null(found, -1), dtype=np.int64)
    return out


def _table_lookup(keys: I64, values: I64) -> I64 | None:
    """Each int64 value's position in the distinct int64 ``keys`` (-1 if absent), by a table.

    When there are at most ``_TABLE_KEYS`` keys and they are not spread out
    (:func:`_int_table`): a table indexed by ``value - min(keys)`` (computed
    modulo 2**64, so a value below the smallest key, or far above, lands past
    the table's end and reads -1).  None otherwise.
    """
    built = None if len(keys) > _TABLE_KEYS else _int_table(keys.tobytes())
    if built is None:
        return None
    low, table = built
    at = values.view(np.uint64) - np.uint64(low % (1 << 64))
    np.minimum(at, np.uint64(len(table) - 1), out=at)
    found: I64 = table.take(at.view(np.int64))  # every slot below 2**63
    return found


@functools.lru_cache(maxsize=64)
def _int_table(key_bytes: bytes) -> tuple[int, I64] | None:
    """The smallest of the int64 keys (given as their bytes) and the table of their positions.

    ``table[value - low]`` is the value's position among the keys, -1 for a
    value between them, and the table's last entry is -1 (every value outside
    the keys' range is sent there).  None when the keys are spread out (over
    more than ``_TABLE_SPREAD`` integers per key, plus ``_TABLE_SLACK``).
    Built once per list of keys (read-only, shared; at most 64 tables kept).
    """
    keys = np.frombuffer(key_bytes, dtype=np.int64)
    items = keys.tolist()
    low = min(items)
    span = max(items) - low + 1
    if span > _TABLE_SPREAD * len(items) + _TABLE_SLACK:
        return None
    table = np.full(span + 1, -1, dtype=np.int64)
    table[keys - low] = np.arange(len(items))
    table.flags.writeable = False
    return low, table


def _search(keys: np.ndarray, values: np.ndarray) -> I64:
    """Each value's position in the distinct ``keys`` (-1 if absent), both numbers of one dtype.

    A binary search in the sorted keys: what ``get_indexer`` finds (numeric
    equality: -0.0 is 0.0, NaN is never a key), without building an Index of the rows.
    """
    order = np.argsort(keys, kind="stable")
    ordered = keys[order]
    at = np.searchsorted(ordered, values)
    np.minimum(at, ordered.size - 1, out=at)
    found: I64 = np.where(ordered[at] == values, order[at], -1)
    return found


def _levels(keys: pd.Index) -> list[pd.Index]:
    """The keys of each ``by`` column: a MultiIndex's levels, or the Index itself."""
    return list(keys.levels) if isinstance(keys, pd.MultiIndex) else [keys]


def encode_keys(
    df: pd.DataFrame, by: list[Hashable], keys: pd.Index, *, check: bool = False
) -> I64:
    """Per row, the position of its key in ``keys``, or -1 if the row is dropped.

    ``check``: refuse keys of a type that no value of the column's dtype can
    equal (:func:`~pandas_dp.core.validation.check_keys_dtype`), on each column as it is read.
    """
    if not isinstance(keys, pd.MultiIndex):
        return _column_codes(df, by[0], keys, check)
    combined = np.zeros(len(df), dtype=np.int64)
    key_combined = np.zeros(len(keys), dtype=np.int64)
    dropped = np.zeros(len(df), dtype=np.bool_)
    stride = 1
    for i, label in enumerate(by):
        level = keys.levels[i]
        codes = _column_codes(df, label, level, check)
        dropped |= codes < 0
        combined += codes * stride
        key_combined += np.asarray(keys.codes[i], dtype=np.int64) * stride
        stride *= max(len(level), 1)
    if stride <= max(4 * len(df), 1 << 20):
        table = np.full(stride, -1, dtype=np.int64)
        table[key_combined] = np.arange(len(keys))
        out = table[np.where(dropped, 0, combined)]
    else:
        found = pd.Index(key_combined).get_indexer(pd.Index(combined))
        out = np.asarray(found, dtype=np.int64)
    out[dropped] = -1
    return out


def _column_codes(df: pd.DataFrame, label: Hashable, level: pd.Index, check: bool) -> I64:
    """:func:`level_codes` of column ``label`` (``check``: its dtype checked against the keys).

    A column pandas stores as a numpy number, bool or datetime array is read
    as stored (:func:`~pandas_dp.core.validation.column_values`: no Series built).
    """
    stored = column_values(df, label)
    if stored is not None and stored.dtype.kind in _NUMPY_KINDS:
        if check:
            check_keys_dtype(stored.dtype, label, level, "keys")
        return array_codes(stored, level)
    column = df[label]
    if check:
        check_keys_dtype(column.dtype, label, level, "keys")
    return level_codes(column, level)
