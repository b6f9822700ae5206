"""``df.dp.groupby(by, keys=...)``: the grouped surface (its releases: :mod:`pandas_dp.surface`).

Keys are public: passed by the caller, never read from the data (see
:mod:`pandas_dp.keys`).  Rows whose key is not among ``keys`` (or is missing)
are dropped; keys with no rows are answered too (a noisy zero count, a mean
inside the clip).  A grouped release is charged once for all its keys
(parallel composition: with one row per person, each person is in one group).
Every release runs the pipeline of :mod:`pandas_dp.release`.
"""

from __future__ import annotations

from collections.abc import Hashable
from fractions import Fraction
from typing import Any, TypeVar

import pandas as pd

from .budget import PrivacyBudget, require_binding
from .keys import Grouping
from .kind import Kind
from .partition import KeySelection
from .release import ContributionBounds, PandasFrame, run
from .surface import Grouped, Releases, Ungrouped

__all__ = ["DPGroupBy", "DPGroupedReleases"]

Many = TypeVar("Many")


class DPGroupedReleases(Releases[Grouped], scope="grouped"):
    """Grouped private releases over public keys: ``df.dp.groupby`` and ``ddf.dp.groupby``.

    The releases of :class:`pandas_dp.surface.Releases`, one answer per key.
    A subclass holds the grouping (``_group``) and runs each built kind with
    :meth:`_release`: :class:`DPGroupBy` on pandas,
    ``pandas_dp.dask.DaskDPGroupBy`` on Dask.

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

    _group: Grouping

    def _release(self, kind: Kind[Any, Many], bounds: ContributionBounds) -> Many:
        """Release ``kind`` per key, spending from the frame's budget."""
        raise NotImplementedError

    def _spend(self, kind: Kind[Any, Any], max_rows: int | None, max_groups: int | None) -> Any:
        return self._release(kind, ContributionBounds(max_rows, max_groups))

    @property
    def by(self) -> list[Hashable]:
        """The key columns."""
        return list(self._group.by)

    @property
    def keys(self) -> pd.Index:
        """The public keys, in the order results are indexed by (a view: rename it freely)."""
        return self._group.keys.view()

    def __repr__(self) -> str:
        return f"{type(self).__name__}(by={self.by!r}, keys={len(self.keys)})"


class DPGroupBy(DPGroupedReleases):
    """Grouped private releases of a pandas DataFrame; created by ``df.dp.groupby``."""

    def __init__(self, df: pd.DataFrame, by: object, keys: object) -> None:
        self._df = df
        # A KeySelection (keys chosen privately: pandas_dp.keyless) comes checked. Public keys
        # are checked against their column's dtype by each release, when it reads the column
        # (before any ε is reserved; max_rows="auto" before its first part): groupby() itself
        # reads no column.
        self._group = keys if isinstance(keys, KeySelection) else Grouping.of(df, by, keys)

    def _release(self, kind: Kind[Any, Many], bounds: ContributionBounds) -> Many:
        return run(PandasFrame(self._df), kind, self._group, bounds)

    def _schema(self) -> pd.DataFrame:
        return self._df

    def _budget(self) -> PrivacyBudget:
        return require_binding(self._df).budget

    def _rows_per_unit(self, amount: Fraction, accountant: str = "epsilon") -> int:
        # max_rows="auto" spends this first, on the ungrouped frame: the keys' type is
        # checked before it, so that keys of the wrong type are refused before any spend.
        if not isinstance(self._group, KeySelection):
            self._group.check(self._df)
        return int(self._df.dp._rows_per_unit(amount, accountant))

    def _units(self) -> Releases[Ungrouped] | None:
        units: Releases[Ungrouped] | None = self._df.dp._units()
        return units
