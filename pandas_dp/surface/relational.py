"""Joining and reshaping tables: ``df.dp.merge``, ``join``, ``concat`` and ``explode``.

Each gives a frame bound to the same budget whose releases stay correct for
one person, or, on a budget without a privacy unit, for one original row.
The rule is one: **whatever the operation did to a unit's rows, every
release bounds them** (:mod:`pandas_dp.mechanisms.contributions`, with the
sensitivities of :class:`~pandas_dp.kinds.base.Neighbours`), so no
sensitivity is multiplied by a factor kept anywhere else.

- A frame with a privacy unit keeps it: a person's rows may multiply (a
  public table with several rows per key, an explode, the same person in
  several extracts, two tables of the same people joined on the unit), and
  each release keeps at most ``max_rows`` of them per cell, as before.
- A frame without one is given one when an original row may become several
  rows: the column :data:`ROW_UNIT` names each row's original row (its label
  in the frame the budget was set on, when known: see
  :class:`~pandas_dp.accounting.budget.Lineage`), and releases bound each
  original row's rows like a person's.  When no original row can become
  more than one row (a public table with one row per key), the frame stays
  without a unit.

The derived frame's default bounds (a release may override them) keep what
the source's kept: its ``max_rows`` times the most rows one row can become,
read from public facts only (the public table's largest key multiplicity,
``explode``'s ``max_rows``, the parts of a concat; never the private data).
Without a unit a source row is one row, in one key: the defaults are that
fan-out, for ``max_rows`` and for ``max_groups``.  A merge of two tables of
the same people on keys that include the unit multiplies their defaults.

Refused, from the schemas and arguments alone, before anything is computed:
``right``/``outer`` merges with a public table (an unmatched public row would
appear or not with the private keys, and belongs to no unit), a merge of two
private frames on keys without the unit (one person's rows would meet
another person's), frames of another budget, key columns whose dtypes
differ, an ``explode`` of a column that is not of a list dtype.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Sequence
from typing import Any, Literal, NamedTuple, cast

import numpy as np
import pandas as pd

from ..accounting.budget import (
    FrameBinding,
    Lineage,
    PrivacyBudget,
    bind,
    binding_of,
    live_budget,
    marker_of,
    require_binding,
    same_budget,
)
from ..core.noise import I64
from ..core.validation import check_bound, check_column, check_readable

__all__ = [
    "PRIVATE_HOWS",
    "PUBLIC_HOWS",
    "ROW_UNIT",
    "DPRelational",
    "Derived",
    "Side",
    "check_keys",
    "fan_out",
    "is_list_dtype",
    "key_labels",
    "person_defaults",
    "private_merge",
    "public_join",
    "public_table",
]

#: The column that names each row's original row, on a budget without a privacy unit.
ROW_UNIT = "_dp_row"
#: The joins of a public table: each private row keeps its own rows only.
PUBLIC_HOWS = ("inner", "left")
#: The joins of two tables of the same people on their unit: every row has its person.
PRIVATE_HOWS = ("inner", "left", "right", "outer")

Bounds = tuple[int | None, int | None]
#: A join pandas runs here, once checked.
How = Literal["inner", "left", "right", "outer"]


class Side(NamedTuple):
    """One frame of a join as the checks see it: its budget, unit and default bounds.

    From a pandas frame's :class:`~pandas_dp.accounting.budget.FrameBinding`
    (:meth:`of`) or a Dask collection's binding.
    """

    budget: PrivacyBudget
    unit: Hashable | None
    defaults: Bounds | None = None

    @classmethod
    def of(cls, binding: FrameBinding) -> Side:
        return cls(binding.budget, binding.unit, binding.defaults)


class Derived(NamedTuple):
    """How a derived frame is bound: its unit, default bounds and lineage."""

    unit: Hashable | None
    defaults: Bounds | None
    lineage: Lineage | None


def key_labels(on: object) -> list[Hashable]:
    """``on`` as a list of column labels: one label, or a list of them."""
    if on is None:
        raise TypeError(
            "`on` is required: name the key column(s) to join on, e.g. on='store_id' "
            "(the keys are never guessed from the columns the frames share)."
        )
    labels = list(on) if isinstance(on, list | tuple) else [on]
    if not labels or not all(isinstance(label, Hashable) for label in labels):
        raise TypeError(f"`on` must be a column label or a list of them, got {on!r}.")
    if len(set(labels)) != len(labels):
        raise ValueError("`on` names a column twice.")
    return labels


def is_list_dtype(dtype: object) -> bool:
    """A pyarrow-backed list dtype (``list<...>[pyarrow]``, large or fixed-size): what explodes."""
    if not isinstance(dtype, pd.ArrowDtype):
        return False
    return str(dtype.pyarrow_dtype).startswith(("list<", "large_list<", "fixed_size_list<"))


def public_table(other: object, argument: str) -> pd.DataFrame:
    """``other`` as a public table: a DataFrame that no budget of this process protects.

    A frame derived from a protected frame (``df.groupby(...).sum()``, whose
    ``attrs`` carry the budget's marker) is private data, not a public table.
    """
    if not isinstance(other, pd.DataFrame):
        raise TypeError(f"`{argument}` must be a DataFrame, got {type(other).__name__}.")
    marker = marker_of(other)
    if marker is not None and live_budget(str(marker["budget"])) is not None:
        raise ValueError(
            f"`{argument}` was derived from a frame protected by a privacy budget (its attrs "
            "carry the budget's marker), so it is not a public table: joining it would use "
            "private rows unbounded. Join private tables through df.dp (both bound to one "
            "budget, on keys that include the privacy unit), or pass a table read from "
            "public data."
        )
    return other


def check_keys(
    schema: pd.DataFrame, on: Sequence[Hashable], dtypes: Sequence[Any], where: str
) -> None:
    """Refuse key columns that are missing, of any Python object, or of another dtype there.

    ``dtypes``: the keys' dtypes in the other table, named by ``where``.
    Decided from the dtypes alone: pandas' own checks on keys of different
    dtypes may depend on their values (floats that are whole numbers).
    """
    check_readable(schema, list(on))
    for label, other in zip(on, dtypes, strict=True):
        mine = schema[label].dtype
        if mine != other:
            raise TypeError(
                f"The key {label!r} is of dtype {mine} in this frame and {other} in {where}; "
                "the keys of a join must be of one dtype (whether keys of two dtypes match may "
                "depend on their values). Cast the other table's key first, e.g. "
                f"other.astype({{{label!r}: '{mine}'}})."
            )


def public_join(
    schema: pd.DataFrame,
    unit: Hashable | None,
    right: pd.DataFrame,
    keys: Sequence[Hashable],
    how: str,
    dtypes: Sequence[Any],
) -> int:
    """Check a join of a public table (``right``, indexed by its keys); what one row becomes.

    ``schema``: the private frame's columns and dtypes, ``unit`` its unit
    column, ``dtypes`` the public keys' dtypes.  Refused from these alone:
    ``right``/``outer`` joins, keys of other dtypes, a public column named
    like the unit or :data:`ROW_UNIT`.  Returns the most rows one private row
    becomes: the public table's largest key multiplicity (at least 1).
    """
    if how in ("right", "outer"):
        raise ValueError(
            f'how="{how}" is refused with a public table: its rows that match no private '
            "key would appear or not depending on which keys the private rows hold (one "
            "person could add or remove them), and they belong to no person whose rows a "
            'release could bound. Use how="inner" or how="left".'
        )
    if how not in PUBLIC_HOWS:
        raise ValueError(f"`how` must be one of {PUBLIC_HOWS}, got {how!r}.")
    check_keys(schema, keys, dtypes, "the public table")
    for label in (unit, ROW_UNIT):
        if label is not None and label in right.columns:
            raise ValueError(
                f"The public table has a column {label!r}, the name of this frame's privacy "
                "unit or of its column of original rows: joined, it would be renamed by the "
                "suffixes. Drop or rename it in the public table."
            )
    return max(fan_out(right.index), 1)


def fan_out(keys: pd.Index) -> int:
    """The most rows a public table holds for one key (missing keys match each other too).

    What one private row can become in a join with it: read from the public
    table, never from the private one.
    """
    codes, _ = pd.factorize(keys, use_na_sentinel=False)
    return int(np.bincount(np.asarray(codes, dtype=np.int64)).max(initial=0))


def _bounds_of(binding: FrameBinding | Side) -> Bounds:
    """The default bounds of a frame's releases (a row of a frame without a unit: one, one)."""
    if binding.unit is None:
        return 1, 1
    if binding.defaults is not None:
        return binding.defaults
    return binding.budget.max_rows, binding.budget.max_groups


def _times(bound: int | None, factor: int) -> int | None:
    return None if bound is None else bound * factor


def _is_row_unit(binding: FrameBinding) -> bool:
    """Whether the frame's unit names original rows (its budget has no privacy unit)."""
    return binding.unit is not None and binding.budget.privacy_unit is None


def derived(binding: FrameBinding, rows: int) -> Derived:
    """How a frame is bound whose every source row became at most ``rows`` rows.

    With a privacy unit: the unit, ``max_rows`` times ``rows`` (``max_groups``
    kept: a person's keys are the caller's policy). Without: the frame stays
    without a unit if ``rows`` is 1, else its original rows become the unit
    (:data:`ROW_UNIT`), each of at most ``rows`` rows in at most ``rows``
    keys (times what a row of the source already stood for).
    """
    max_rows, max_groups = _bounds_of(binding)
    if binding.unit is None and rows == 1:
        return Derived(None, None, binding.lineage)
    if binding.unit is None or _is_row_unit(binding):
        lineage = binding.lineage or Lineage()
        return Derived(ROW_UNIT, (_times(max_rows, rows), _times(max_groups, rows)), lineage)
    return Derived(binding.unit, person_defaults(Side.of(binding), rows), None)


def person_defaults(side: Side, rows: int) -> Bounds | None:
    """The default bounds of a frame with a privacy unit whose rows each became ``rows`` rows.

    ``max_rows`` times ``rows`` (what kept a person's rows whole keeps them
    whole); ``max_groups`` as it was (a person's keys are the caller's policy).
    """
    if rows == 1:
        return side.defaults
    max_rows, max_groups = _bounds_of(side)
    return _times(max_rows, rows), max_groups


def _refuse_row_column(df: pd.DataFrame, binding: FrameBinding) -> None:
    """A column named like :data:`ROW_UNIT` that is not this frame's unit would be overwritten."""
    if ROW_UNIT in df.columns and binding.unit != ROW_UNIT:
        raise ValueError(
            f"This frame has a column {ROW_UNIT!r}, the name a join, concat or explode gives "
            "the column of original rows on a budget without a privacy unit; rename it first "
            f"(df.dp.assign(...) of a new name, then df.dp.select(...) without {ROW_UNIT!r})."
        )


def _finish(
    result: pd.DataFrame, source: pd.DataFrame, positions: I64, binding: FrameBinding, how: Derived
) -> pd.DataFrame:
    """``result`` (rows of ``source`` at ``positions``) with the source's labels, bound.

    The unit column of original rows, when ``how`` asks for it, holds the
    source rows' labels (their lineage's names) or else their positions.
    """
    labels = source.index.take(positions)
    if how.unit == ROW_UNIT and binding.unit is None:
        ids = labels if binding.lineage is not None else positions
        result[ROW_UNIT] = np.asarray(ids, dtype=np.int64)
    result.index = labels
    bind(
        result,
        binding.budget,
        root=False,
        unit=how.unit,
        defaults=how.defaults,
        lineage=how.lineage,
    )
    return result


def _positions(df: pd.DataFrame) -> pd.DataFrame:
    """``df`` indexed by row position (the data are not copied)."""
    return df.set_axis(pd.RangeIndex(len(df)), axis=0)


def private_merge(
    left: Side, right: Side, on: Sequence[Hashable], how: str
) -> tuple[Hashable, Bounds | None]:
    """Check a merge of two tables of the same people; their unit and the result's defaults.

    Both bound to one budget (:func:`~pandas_dp.accounting.budget.same_budget`)
    with a privacy unit, joined on keys that include it: each row of the
    result is then two rows of one person, and the person's rows in it are
    at most the product of the two tables' (hence the defaults).
    """
    if not same_budget(left.budget, right.budget):
        raise ValueError(
            "Both frames spend privacy budgets, but not the same one: a merge of two private "
            "tables needs both bound to one budget (attach one named budget to both, or bind "
            "the second with other.dp.inherit(df)); with another budget, the result's releases "
            "would be accounted in neither."
        )
    if left.budget.privacy_unit is None or left.unit is None or right.unit is None:
        raise TypeError(
            "A merge of two private frames needs a privacy unit in its keys: each row of the "
            "result must belong to one person, and one row per person (no unit) cannot say "
            "whose rows meet. Attach the budget with set_budget(..., privacy_unit='<id "
            "column>') and bind the second table with other.dp.inherit(df)."
        )
    if left.unit != right.unit:
        raise ValueError(
            f"The two frames name their persons by different columns ({left.unit!r}, "
            f"{right.unit!r}); a merge of tables of the same people joins on that one column."
        )
    if left.unit not in on:
        raise ValueError(
            f"A merge of two private frames must join on keys that include the privacy unit "
            f"{left.unit!r} (e.g. on=[{left.unit!r}, ...]): on other keys one person's rows "
            "would meet another person's, and a release on the result could not bound what "
            "one person contributes."
        )
    if how not in PRIVATE_HOWS:
        raise ValueError(f"`how` must be one of {PRIVATE_HOWS}, got {how!r}.")
    rows_l, groups_l = _bounds_of(left)
    rows_r, _ = _bounds_of(right)
    rows = None if rows_l is None or rows_r is None else rows_l * rows_r
    return left.unit, None if rows is None and groups_l is None else (rows, groups_l)


class DPRelational:
    """``df.dp.merge``, ``join``, ``concat`` and ``explode``: frames bound to the same budget.

    A mixin of :class:`pandas_dp.surface.accessor.DPAccessor` (``self._df``).
    """

    _df: pd.DataFrame

    def merge(
        self,
        right: pd.DataFrame,
        *,
        on: Hashable | list[Hashable],
        how: str = "inner",
        suffixes: tuple[str | None, str | None] = ("_x", "_y"),
    ) -> pd.DataFrame:
        """Join a public table, or a table of the same people, on the columns ``on``.

        Parameters
        ----------
        right : pandas.DataFrame
            A public table (a frame no budget of this process protects: a code
            list, products, regions), or a private frame bound to this frame's
            budget (the same budget or the same named budget; see
            :meth:`inherit`) with the same privacy unit.
        on : label or list of labels
            The key columns, in both frames, of one dtype in both. With a
            private ``right`` they must include the privacy unit.
        how : {"inner", "left"}, or also "right", "outer" for a private ``right``
            As in ``DataFrame.merge``.
        suffixes : pair of str
            As in ``DataFrame.merge``.

        Returns
        -------
        pandas.DataFrame
            The joined rows, bound to this frame's budget (never its root). A
            public join keeps this frame's row labels (a row that matched m
            rows appears m times).

        Raises
        ------
        TypeError
            ``on`` missing, keys of different dtypes (or of dtype object),
            two private frames without a privacy unit.
        ValueError
            ``how="right"``/``"outer"`` with a public table; two private
            frames of different budgets, or joined on keys without the unit;
            a public table derived from private data.
        MissingBudgetError
            If this frame has no budget it may spend.

        Notes
        -----
        Costs nothing. A private row that matches m rows of a public table
        becomes m rows. With a privacy unit every release bounds each person's
        rows, so the frame keeps the unit and its default ``max_rows`` is
        multiplied by the public table's largest key multiplicity m (read from
        the public table). Without one, if m > 1, the frame gets the unit
        column ``_dp_row`` naming each row's original row, and its releases
        bound each original row's rows to ``max_rows`` (default m) in at most
        ``max_groups`` keys (default m); with m <= 1 it stays without a unit.
        ``right`` and ``outer`` joins with a public table are refused: a
        public row that matches no private key would appear or not depending
        on which private keys exist, and it belongs to no person to bound.
        Two private tables are joined only on keys that include the unit, so
        every row of the result is two rows of one person; its default
        ``max_rows`` is the product of the two tables' (``max_rows="auto"``
        chooses a cap privately).
        """
        binding = require_binding(self._df)
        keys = key_labels(on)
        if isinstance(right, pd.DataFrame) and binding_of(right) is not None:
            return self._merge_private(binding, right, keys, how, suffixes)
        public = public_table(right, "right")
        if not all(label in public.columns for label in keys):
            missing = [label for label in keys if label not in public.columns]
            raise KeyError(f"the public table has no column {missing[0]!r} to join on.")
        dtypes = [public[label].dtype for label in keys]
        return self._merge_public(binding, public.set_index(keys), keys, how, suffixes, dtypes)

    def join(
        self,
        other: pd.DataFrame,
        *,
        on: Hashable | list[Hashable],
        how: str = "left",
        lsuffix: str = "",
        rsuffix: str = "",
    ) -> pd.DataFrame:
        """Join a public table by its index: ``df.join(other, on=...)``.

        Parameters
        ----------
        other : pandas.DataFrame
            A public table indexed by its keys (one level per column of ``on``).
        on : label or list of labels
            The columns of this frame matched to ``other``'s index (required:
            this frame's own index is not joined, its labels being row
            positions, not values of the rows).
        how : {"left", "inner"}
            As in ``DataFrame.join``.
        lsuffix, rsuffix : str
            As in ``DataFrame.join``.

        Returns
        -------
        pandas.DataFrame
            As :meth:`merge`, with this frame's row labels.

        Notes
        -----
        The rules of :meth:`merge` with a public table.
        """
        binding = require_binding(self._df)
        keys = key_labels(on)
        public = public_table(other, "other")
        if binding_of(other) is not None:
            raise ValueError(
                "`other` is a private frame: join tables of the same people with "
                "df.dp.merge(other, on=[<privacy unit>, ...])."
            )
        if public.index.nlevels != len(keys):
            raise ValueError(
                f"`on` names {len(keys)} column(s) and `other`'s index has "
                f"{public.index.nlevels} level(s): one level per key."
            )
        overlap = set(self._df.columns) & set(public.columns)
        if overlap and not (lsuffix or rsuffix):
            raise ValueError(
                f"columns overlap but no suffix specified: {sorted(map(str, overlap))}; pass "
                "lsuffix= or rsuffix=."
            )
        levels = [public.index.get_level_values(i).dtype for i in range(public.index.nlevels)]
        return self._merge_public(binding, public, keys, how, (lsuffix, rsuffix), levels)

    def _merge_public(
        self,
        binding: FrameBinding,
        right: pd.DataFrame,
        keys: list[Hashable],
        how: str,
        suffixes: tuple[str | None, str | None],
        dtypes: list[Any],
    ) -> pd.DataFrame:
        """Join ``right`` (a public table indexed by the keys) to this frame's ``keys`` columns.

        ``dtypes``: the public keys' dtypes, as the caller's table holds them.
        """
        _refuse_row_column(self._df, binding)
        rows = public_join(self._df, binding.unit, right, keys, how, dtypes)
        result = pd.merge(
            _positions(self._df),
            right,
            left_on=keys,
            right_index=True,
            how=cast(How, how),
            suffixes=suffixes,
            sort=False,
        )
        positions = np.asarray(result.index, dtype=np.int64)
        return _finish(result, self._df, positions, binding, derived(binding, rows))

    def _merge_private(
        self,
        binding: FrameBinding,
        right: pd.DataFrame,
        keys: list[Hashable],
        how: str,
        suffixes: tuple[str | None, str | None],
    ) -> pd.DataFrame:
        other = require_binding(right)
        unit, defaults = private_merge(Side.of(binding), Side.of(other), keys, how)
        check_readable(right, keys)
        check_keys(self._df, keys, [right[label].dtype for label in keys], "`right`")
        # rows without a unit id are in no release; pandas would match them all with each other
        left = self._df[self._df[unit].notna()]
        kept = right[right[unit].notna()]
        result = pd.merge(left, kept, on=keys, how=cast(How, how), suffixes=suffixes, sort=False)
        bind(result, binding.budget, root=False, unit=unit, defaults=defaults)
        return result

    def concat(self, frames: Iterable[pd.DataFrame]) -> pd.DataFrame:
        """Stack frames of this frame's budget: ``pd.concat(frames)`` that keeps the budget.

        Parameters
        ----------
        frames : list of pandas.DataFrame
            Frames bound to this frame's budget (this frame itself only if
            listed), with the same columns and dtypes: monthly extracts of one
            table, filters of one frame, ...

        Returns
        -------
        pandas.DataFrame
            Their rows, in order, with their labels; bound to the budget.

        Raises
        ------
        TypeError, ValueError
            A frame that is not bound to this budget, columns or dtypes that
            differ, a frame whose rows are persons (``per_unit``'s) on a
            budget with a unit, or, without a unit, frames whose original
            rows are not known to be one frame's (see Notes).

        Notes
        -----
        Costs nothing. The same person may be in several frames: with a
        privacy unit every release bounds their rows; the default
        ``max_rows`` is the sum of the frames'. Without a unit the frames
        must come from one frame attached with a ``RangeIndex`` (what
        ``read_csv`` gives) by ``filter``/``query``/``assign``/``select``, a
        merge or an explode (``inherit`` and ``per_unit`` start anew): the
        result's column ``_dp_row`` names each row's original row by its
        label, and releases bound each original row's rows, to as many as
        the frames by default (one per frame).
        """
        binding = require_binding(self._df)
        parts = list(frames) if not isinstance(frames, pd.DataFrame) else None
        if not parts or not all(isinstance(part, pd.DataFrame) for part in parts):
            raise TypeError("`frames` must be a non-empty list of DataFrames.")
        if any(binding_of(part) is None for part in parts):
            raise ValueError(
                "Every frame of a concat must be bound to this frame's budget (made from it "
                "through df.dp, or bound with part.dp.inherit(df)); a frame without a budget "
                "would bring rows no release accounts for."
            )
        bindings = [require_binding(part) for part in parts]
        if not all(same_budget(binding.budget, other.budget) for other in bindings):
            raise ValueError(
                "Every frame of a concat must spend this frame's budget (the same budget, or "
                "the same named budget): rows of other budgets would be accounted in neither."
            )
        if binding.budget.privacy_unit is not None:
            return self._concat_persons(parts, bindings)
        return self._concat_rows(parts, bindings)

    def _concat_persons(
        self, parts: list[pd.DataFrame], bindings: list[FrameBinding]
    ) -> pd.DataFrame:
        unit = bindings[0].budget.privacy_unit
        if any(other.unit != unit for other in bindings):
            raise ValueError(
                f"Every frame of a concat must have the privacy unit {unit!r}; a frame whose "
                "rows are persons (per_unit's) cannot be stacked with rows of persons."
            )
        _same_columns(parts)
        result = pd.concat(parts)
        bounds = [_bounds_of(other) for other in bindings]
        rows = [b[0] for b in bounds]
        groups = [b[1] for b in bounds]
        total = None if None in rows else sum(r for r in rows if r is not None)
        widest = None if None in groups else max(g for g in groups if g is not None)
        bind(result, bindings[0].budget, root=False, unit=unit, defaults=(total, widest))
        return result

    def _concat_rows(self, parts: list[pd.DataFrame], bindings: list[FrameBinding]) -> pd.DataFrame:
        lineage = bindings[0].lineage
        if lineage is None or any(other.lineage is not lineage for other in bindings):
            raise ValueError(
                "Without a privacy unit, a concat bounds each original row, wherever its rows "
                "are, so its frames must come from one frame whose rows are known by their "
                "labels: the frame the budget was set on with a RangeIndex (what read_csv "
                "gives), through df.dp.filter/query/assign/select, merge or explode. These "
                "frames are not (inherit() and per_unit start anew). Attach the budget with "
                "a privacy_unit to stack frames of persons."
            )
        ids, plain, total = [], [], 0
        for part, other in zip(parts, bindings, strict=True):
            rows, _ = _bounds_of(other)
            assert rows is not None
            total += rows
            if other.unit is None:
                _refuse_row_column(part, other)
                ids.append(np.asarray(part.index, dtype=np.int64))
                plain.append(part)
            else:
                ids.append(part[ROW_UNIT].to_numpy(dtype=np.int64))
                plain.append(part.drop(columns=[ROW_UNIT]))
        _same_columns(plain)
        result = pd.concat(plain)
        result[ROW_UNIT] = np.concatenate(ids)
        bind(
            result,
            bindings[0].budget,
            root=False,
            unit=ROW_UNIT,
            defaults=(total, total),
            lineage=lineage,
        )
        return result

    def explode(self, column: Hashable, *, max_rows: int) -> pd.DataFrame:
        """One row per element of a list column: ``df.explode(column)`` that keeps the budget.

        Parameters
        ----------
        column : label
            A column of a pyarrow list dtype (``list<item: string>[pyarrow]``,
            e.g. ``df["tags"].str.split(",")`` on an arrow string column such as
            ``"large_string[pyarrow]"``, or
            ``.astype(pd.ArrowDtype(pa.list_(pa.string())))``). Decided from
            the dtype: an object column is refused whatever it holds.
        max_rows : int
            The most elements of one row's list the releases keep by default
            (public: a limit you know, e.g. at most 5 tags per post). Longer
            lists are not cut here: each release keeps at most its
            ``max_rows`` rows of each unit, at random.

        Returns
        -------
        pandas.DataFrame
            One row per element (a row with an empty or missing list: one row
            with a missing value), with this frame's row labels; bound to the
            budget.

        Notes
        -----
        Costs nothing. Without a privacy unit the frame gets the column
        ``_dp_row`` naming each row's original row, whose rows each release
        bounds: at most ``max_rows`` per cell and ``max_rows`` keys by
        default. With a unit, its releases bound each person's rows; the
        default ``max_rows`` is multiplied by this one.
        """
        binding = require_binding(self._df)
        check_column(self._df, column)
        dtype = self._df[column].dtype
        if not is_list_dtype(dtype):
            raise TypeError(
                f"`column` {column!r} is of dtype {dtype}, not a list dtype: explode needs a "
                "pyarrow list column, e.g. df.dp.assign(tags=df['tags'].str.split(',')) on an "
                "arrow string column, or .astype(pd.ArrowDtype(pa.list_(pa.string()))). An "
                "object column is refused whatever it holds (whether each value is a list "
                "would depend on the data)."
            )
        rows = check_bound(max_rows, "max_rows")
        if column == binding.unit:
            raise ValueError(f"{column!r} is the privacy unit: explode another column.")
        _refuse_row_column(self._df, binding)
        result = _positions(self._df).explode([column])
        positions = np.asarray(result.index, dtype=np.int64)
        how = derived(binding, rows)
        if binding.unit is None and rows == 1:  # a list may still hold several elements
            how = Derived(ROW_UNIT, (1, 1), binding.lineage or Lineage())
        return _finish(result, self._df, positions, binding, how)


def _same_columns(parts: list[pd.DataFrame]) -> None:
    """Refuse frames whose columns (labels and dtypes) differ: what pandas would realign."""
    first = parts[0].dtypes
    for part in parts[1:]:
        if not part.dtypes.index.equals(first.index) or not part.dtypes.equals(first):
            raise ValueError(
                "The frames of a concat must have the same columns, in the same order, of the "
                "same dtypes (pandas would fill the missing ones and change dtypes); select and "
                "cast them first with df.dp.select(...) / df.dp.assign(...)."
            )
