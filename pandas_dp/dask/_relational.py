"""``ddf.dp.merge``: a public pandas table, or a collection of the same people on the unit.

The checks are those of :mod:`pandas_dp.surface.relational` (made on the
collections' ``_meta`` and the public table, never on the private data); the
join is Dask's own (a public pandas table is broadcast to every partition).
A collection without a privacy unit joins only a public table with one row
per key: a row that matched several would need an identity across partitions
to be bounded by, which a Dask collection's rows do not have.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence

import dask.dataframe as dd

from ..surface.relational import (
    Bounds,
    Side,
    check_keys,
    person_defaults,
    private_merge,
    public_join,
    public_table,
)

__all__ = ["merge_private", "merge_public"]

Suffixes = tuple[str | None, str | None]


def merge_public(
    ddf: dd.DataFrame,
    side: Side,
    right: object,
    keys: Sequence[Hashable],
    how: str,
    suffixes: Suffixes,
) -> tuple[dd.DataFrame, Bounds | None]:
    """``ddf`` joined to the public pandas table ``right``, and the result's default bounds."""
    public = public_table(right, "right")
    missing = [k for k in keys if k not in public.columns]
    if missing:
        raise KeyError(f"the public table has no column {missing[0]!r} to join on.")
    dtypes = [public[k].dtype for k in keys]
    rows = public_join(ddf._meta, side.unit, public.set_index(list(keys)), keys, how, dtypes)
    if side.unit is None and rows > 1:
        raise ValueError(
            "On Dask, a collection without a privacy unit joins only public tables with one row "
            "per key: a row that matched several would need an identity across partitions to "
            "be bounded by. Give the collection a privacy unit, or join with df.dp.merge on "
            "pandas."
        )
    result = ddf.merge(public, on=list(keys), how=how, suffixes=suffixes)
    return result, (side.defaults if side.unit is None else person_defaults(side, rows))


def merge_private(
    left: dd.DataFrame,
    right: dd.DataFrame,
    sides: tuple[Side, Side],
    keys: Sequence[Hashable],
    how: str,
    suffixes: Suffixes,
) -> tuple[dd.DataFrame, Hashable, Bounds | None]:
    """Two collections of the same people joined on keys that include the unit.

    Rows without a unit id are in no release; they are left out first (pandas
    would match them all with each other).
    """
    unit, defaults = private_merge(*sides, keys, how)
    check_keys(left._meta, keys, [right._meta[k].dtype for k in keys], "`right`")
    kept_left = left.dropna(subset=[unit])
    kept_right = right.dropna(subset=[unit])
    result = kept_left.merge(kept_right, on=list(keys), how=how, suffixes=suffixes)
    return result, unit, defaults
