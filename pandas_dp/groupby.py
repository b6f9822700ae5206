"""Public keys and the grouped releases (``df.dp.groupby(by, keys=...)``).

Keys are public: passed by the caller, never read from the data.  Rows whose
key is not among ``keys`` (or is missing) are dropped; keys with no rows are
answered too (a noisy zero count, a mean inside the clip).  A grouped release
is charged once for all its keys (parallel composition: with one row per
person, each person is in one group).

Encoding is one vectorized pass: factorize the key column (or take the codes
of a categorical column), map its uniques onto the key list, then integer
bincounts in :mod:`pandas_dp.aggregate`.  No Python loop over rows or keys.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from typing import TYPE_CHECKING, Any, overload

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from .validation import Bounds, check_column, check_keys_match, check_ordered

if TYPE_CHECKING:
    from .accessor import Result

__all__ = ["DPGroupBy", "encode_keys", "normalize_by", "normalize_keys"]

I64 = NDArray[np.int64]

_KEYS_HINT = (
    "Pass the public list of groups, e.g. keys=['Eng', 'Ops', 'Sales'], a pd.Index, a "
    "pd.MultiIndex for several columns, a DataFrame of key combinations, or a pd.CategoricalDtype. "
    "Keys must not be read from the data (df[col].unique()): which groups exist can itself reveal "
    "who is in the data. Take them from a code list, a schema, or bins such as pd.cut edges; keys "
    "with no rows are answered with noise too."
)


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
        if len(by) > 1 and items and all(isinstance(k, tuple) for k in items):
            index = pd.MultiIndex.from_tuples(items)
        else:
            index = pd.Index(items)
    if (
        isinstance(index, pd.MultiIndex)
        and list(index.names) != by
        and sorted(map(repr, index.names)) == sorted(map(repr, by))
    ):
        # Keys named after the `by` columns in another order: match them by name.
        index = index.reorder_levels(by)
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
    return index.set_names(list(by)) if len(by) > 1 else index.rename(by[0])


def _row_codes(series: pd.Series) -> tuple[I64, pd.Index]:
    """Each row's code into the column's own distinct values (-1 if missing), and those values.

    One vectorized pass: a categorical column's codes, else ``pd.factorize``.
    """
    if isinstance(series.dtype, pd.CategoricalDtype):
        return np.asarray(series.cat.codes, dtype=np.int64), pd.Index(series.cat.categories)
    factorized, uniques = pd.factorize(series, use_na_sentinel=True)
    return np.asarray(factorized, dtype=np.int64), pd.Index(uniques)


def _level_codes(series: pd.Series, level: pd.Index) -> I64:
    """Each row's position in ``level`` (-1 if absent or missing), one vectorized pass."""
    row_codes, uniques = _row_codes(series)
    mapping = np.append(np.asarray(level.get_indexer(uniques), dtype=np.int64), -1)
    return mapping[row_codes]  # code -1 (missing) picks the trailing -1


def check_keys_of(df: pd.DataFrame, by: list[Hashable], keys: pd.Index) -> None:
    """Refuse, from dtypes alone, keys that no row of their ``by`` column could match."""
    levels = keys.levels if isinstance(keys, pd.MultiIndex) else [keys]
    for label, level in zip(by, levels, strict=True):
        check_keys_match(df[label], level, "keys")


def encode_keys(df: pd.DataFrame, by: list[Hashable], keys: pd.Index) -> I64:
    """Per row, the position of its key in ``keys``, or -1 if the row is dropped."""
    if not isinstance(keys, pd.MultiIndex):
        return _level_codes(df[by[0]], keys)
    combined = np.zeros(len(df), dtype=np.int64)
    key_combined = np.zeros(len(keys), dtype=np.int64)
    dropped = np.zeros(len(df), dtype=np.bool_)
    stride = 1
    for i, label in enumerate(by):
        level = keys.levels[i]
        codes = _level_codes(df[label], level)
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


class DPGroupBy:
    """Grouped private releases over public keys; created by ``df.dp.groupby``.

    Holds only the frame, the ``by`` columns and the keys; the budget is read
    from the frame at each release.  Every release returns a Series (or a
    DataFrame for several columns) indexed by exactly ``keys``, in the order
    given, and costs its epsilon once for all keys.

    Notes
    -----
    Keys are public. Rows whose key is not in ``keys``, or is missing, are
    dropped; keys with no rows still get an answer (a noisy zero count; a mean
    inside the clip). Answers for small groups are noisy by design: a count
    may be negative, which is the honest, unbiased answer.
    """

    def __init__(self, df: pd.DataFrame, by: list[Hashable], keys: pd.Index) -> None:
        check_keys_of(df, by, keys)
        self._df = df
        self.by = by
        self.keys = keys

    def __repr__(self) -> str:
        return f"DPGroupBy(by={self.by!r}, keys={len(self.keys)})"

    def codes(self) -> I64:
        return encode_keys(self._df, self.by, self.keys)

    def count(self, column: Hashable | None = None, *, epsilon: float) -> pd.Series:
        """Noisy count of rows (or non-missing values of ``column``) per key.

        Parameters
        ----------
        column : label, optional
            Count the non-missing values of this column instead of rows.
        epsilon : float
            Privacy cost of the whole release (all keys), keyword-only.

        Returns
        -------
        pandas.Series
            Integer counts indexed by ``keys``; may be negative for tiny groups.

        Raises
        ------
        MissingBudgetError, BudgetExceededError, KeyError, ValueError, TypeError

        Notes
        -----
        Costs ``epsilon`` once. L1 sensitivity 1 (add_remove) or 2 (substitute:
        a row may move between keys). Discrete Laplace noise, scale Δ/ε.
        """
        from .accessor import release_count

        return _as_series(release_count(self._df, column, epsilon, self))

    @overload
    def sum(
        self, column: None = None, *, clip: Mapping[Hashable, Bounds], epsilon: float
    ) -> pd.DataFrame: ...

    @overload
    def sum(self, column: Hashable, *, clip: Bounds, epsilon: float) -> pd.Series: ...

    def sum(
        self, column: Hashable | None = None, *, clip: Any, epsilon: float
    ) -> pd.Series | pd.DataFrame:
        """Noisy clipped sum per key.

        Parameters
        ----------
        column : label, optional
            The numeric column; omit it and pass ``clip`` as a mapping
            ``{column: (lower, upper)}`` for several columns at once.
        clip : (float, float) or dict
            Public clip bounds; values are clipped to them before summing.
        epsilon : float
            Privacy cost of the whole release, split equally across columns.

        Returns
        -------
        pandas.Series or pandas.DataFrame
            Indexed by ``keys``; a DataFrame (one column per value) for a mapping.

        Raises
        ------
        MissingBudgetError, BudgetExceededError, KeyError, ValueError, TypeError

        Notes
        -----
        Costs ``epsilon`` once. L1 sensitivity per column ``max(|L|, |U|)``
        (add_remove) or ``2·max(|L|, |U|)`` (substitute), on a data-independent
        power-of-two grid with exact discrete Laplace noise.
        """
        from .accessor import release_sum

        return release_sum(self._df, column, clip, epsilon, self)  # type: ignore[return-value]

    @overload
    def mean(
        self, column: None = None, *, clip: Mapping[Hashable, Bounds], epsilon: float
    ) -> pd.DataFrame: ...

    @overload
    def mean(self, column: Hashable, *, clip: Bounds, epsilon: float) -> pd.Series: ...

    def mean(
        self, column: Hashable | None = None, *, clip: Any, epsilon: float
    ) -> pd.Series | pd.DataFrame:
        """Noisy clipped mean per key, always inside the clip bounds.

        Parameters
        ----------
        column : label, optional
            The numeric column; omit it and pass ``clip`` as a mapping for
            several columns (a DataFrame is returned).
        clip : (float, float) or dict
            Public clip bounds.
        epsilon : float
            Privacy cost of the whole release, split equally across columns.

        Returns
        -------
        pandas.Series or pandas.DataFrame
            Indexed by ``keys``; an empty group's mean is the clip midpoint plus noise.

        Raises
        ------
        MissingBudgetError, BudgetExceededError, KeyError, ValueError, TypeError

        Notes
        -----
        Costs ``epsilon`` once: the complementary sums ``Σ(x − L)`` and
        ``Σ(U − x)`` per key, jointly of L1 sensitivity ``U − L`` (add_remove)
        or ``2(U − L)`` (substitute).
        """
        from .accessor import release_mean

        return release_mean(self._df, column, clip, epsilon, self)  # type: ignore[return-value]

    def argmax_exp(
        self,
        column: Hashable,
        *,
        candidates: Any = None,
        epsilon: float,
        k: int = 1,
        value: Hashable | None = None,
        clip: Any = None,
    ) -> pd.Series | pd.DataFrame:
        """The candidate with the most rows (or largest clipped sum) in every key, privately.

        Parameters
        ----------
        column : label
            The column whose values are the candidates.
        candidates : list, array, Index or CategoricalDtype
            The public candidates, keyword-only; never read from the data. Rows
            whose value is not a candidate are dropped; a candidate with no
            rows can still win.
        epsilon : float
            Privacy cost of the whole release (all keys), keyword-only.
        k : int, default 1
            How many candidates per key, best first (top-k by peeling).
        value : label, optional
            Score candidates by the clipped sum of this numeric column.
        clip : (float, float), optional
            Public clip bounds for ``value``; required with it.

        Returns
        -------
        pandas.Series or pandas.DataFrame
            The winner per key, indexed by ``keys`` (named after ``column``);
            for ``k > 1`` a DataFrame with columns ``1..k``, best first.

        Raises
        ------
        MissingBudgetError, BudgetExceededError, KeyError, ValueError, TypeError

        Notes
        -----
        Costs ``epsilon`` once for all keys (parallel composition: each person
        is in one key). One exact permute-and-flip per key, all keys in one
        vectorized pass; ``c = ε/Δ`` under add_remove and ``ε/(2Δ)`` under
        substitute (a row moving between keys is a removal in one and an
        addition in the other, each costing at most ε/2). Keys with no rows
        get a uniformly random candidate. Public: keys, candidates, ``k``,
        ``clip``.
        """
        from .select import release_argmax

        return release_argmax(  # type: ignore[no-any-return]
            self._df, column, candidates, epsilon, k=k, value=value, clip=clip, group=self
        )

    def quantile(
        self, column: Hashable, q: float, *, candidates: Any = None, epsilon: float
    ) -> pd.Series:
        """The ``q``-quantile of ``column`` in every key, chosen from a public grid.

        Parameters
        ----------
        column : label
            A numeric column; missing values are skipped.
        q : float
            The quantile level in ``[0, 1]``.
        candidates : list, array or Index of numbers
            The public grid, finite and strictly increasing, keyword-only.
        epsilon : float
            Privacy cost of the whole release (all keys), keyword-only.

        Returns
        -------
        pandas.Series
            One grid point per key, indexed by ``keys``.

        Raises
        ------
        MissingBudgetError, BudgetExceededError, KeyError, ValueError, TypeError

        Notes
        -----
        Costs ``epsilon`` once for all keys. Score: the distance from ``q·n``
        to ``[#(x < c), #(x ≤ c)]`` per key and grid point (one
        searchsorted and one 2-D bincount), permute-and-flip with
        ``c = ε/(2Δ)``: ``Δ = max(q, 1 − q)`` under add_remove and
        ``2·max(q, 1 − q)`` under substitute (a row that moves between keys
        changes two keys' scores; 1 for the median). A key with no rows gets
        a grid point close to uniform at random.
        """
        from .select import release_quantile

        return _as_series(release_quantile(self._df, column, q, candidates, epsilon, group=self))

    def median(self, column: Hashable, *, candidates: Any = None, epsilon: float) -> pd.Series:
        """The median of ``column`` in every key, chosen from a public grid.

        Parameters
        ----------
        column : label
            A numeric column; missing values are skipped.
        candidates : list, array or Index of numbers
            The public grid, finite and strictly increasing, keyword-only.
        epsilon : float
            Privacy cost of the whole release (all keys), keyword-only.

        Returns
        -------
        pandas.Series
            One grid point per key, indexed by ``keys``.

        Raises
        ------
        MissingBudgetError, BudgetExceededError, KeyError, ValueError, TypeError

        Notes
        -----
        ``quantile(column, 0.5, ...)``: sensitivity 1/2 under add_remove
        (``c = ε``) and 1 under substitute (``c = ε/2``). Costs ``epsilon``
        once for all keys.
        """
        from .select import release_quantile

        return _as_series(
            release_quantile(self._df, column, 0.5, candidates, epsilon, group=self, name="median")
        )


def _as_series(result: Result) -> pd.Series:
    assert isinstance(result, pd.Series)
    return result
