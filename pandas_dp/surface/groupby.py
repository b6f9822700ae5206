"""``df.dp.groupby(by)``: the one grouped surface, over public keys or keys chosen privately.

With ``keys=`` the keys are public: passed by the caller, never read from the
data (see :mod:`pandas_dp.mechanisms.keys`).  Rows whose key is not among
``keys`` (or is missing) are dropped; keys with no rows are answered too (a
noisy zero count, a mean inside the clip).  Without ``keys=`` every release
takes ``delta=`` and chooses the keys it shows privately
(:class:`~pandas_dp.mechanisms.key_selection.KeySelection`): a key is shown
only if its noisy count of *persons* passes a threshold set by ``delta``, so a
key held by few people appears with probability at most ``delta``; keys
absent from the answer were either absent from the data or held by too few
people, and the two cannot be told apart.  ``keys=df[col].unique()`` is *not*
a private list of keys: a key of one person then shows that person is in it.

A grouped release is charged once for all its keys (parallel composition:
with one row per person, each person is in one group).  Every release runs
the pipeline (:func:`pandas_dp.pipeline.recipes.answer`).
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Literal, TypeVar, overload

import pandas as pd

from ..kinds.count import COUNT
from ..kinds.signature import Grouped, Keyless
from ..mechanisms.key_selection import KeySelection
from ..mechanisms.keys import Grouping
from ..pipeline.run import PandasFrame
from ._releases import Releases

__all__ = ["DPGroupBy", "DPGroupedReleases", "DPSelectedGroupBy"]

#: The scope of a grouped surface: public keys (:class:`Grouped`) or chosen ones (:class:`Keyless`).
G = TypeVar("G", Grouped, Keyless)


class DPGroupedReleases(Releases[G], scope="grouped"):
    """Grouped private releases: ``df.dp.groupby`` and ``ddf.dp.groupby``, with or without keys.

    The releases of :class:`pandas_dp.surface._releases.Releases`, one answer
    per key.  A subclass holds the grouping (``_group``: a
    :class:`~pandas_dp.mechanisms.keys.Grouping` of public keys, or a
    :class:`~pandas_dp.mechanisms.key_selection.KeySelection`) and the
    backend: :class:`DPGroupBy` on pandas, ``pandas_dp.dask.DaskDPGroupBy``
    on Dask.

    Holds only the frame, the ``by`` columns and the keys; the budget is read
    from the frame at each release.  With public keys, every release returns
    a Series (or a DataFrame for several columns) indexed by exactly ``keys``,
    in the order given, and costs its epsilon once for all keys.  Without,
    each release takes ``delta=`` and is indexed by the keys it chose, sorted
    by key as pandas' groupby (in the selection's order if the keys do not
    compare).

    Notes
    -----
    Keys are public. Rows whose key is not in ``keys``, or is missing, are
    dropped; keys with no rows still get an answer (a noisy zero count; a mean
    inside the clip). Answers for small groups are noisy by design: a count
    may be negative, which is the honest, unbiased answer.
    """

    _group: Grouping

    def _grouping(self) -> Grouping:
        return self._group

    @property
    def by(self) -> list[Hashable]:
        """The key columns."""
        return list(self._group.by)

    @property
    def keys(self) -> pd.Index:
        """The public keys, in the order results are indexed by (a view: rename it freely).

        Without ``keys=`` there are none: each release chooses its own (the
        index of its answer); TypeError.
        """
        if isinstance(self._group, KeySelection):
            raise TypeError(
                "This groupby has no public keys: each release chooses its keys privately, "
                "and they are the index of its answer."
            )
        return self._group.keys.view()

    @overload
    def size(
        self,
        *,
        epsilon: float | None = None,
        rho: float | None = None,
        ci: None = None,
        delta: float | None = None,
        max_rows: int | Literal["auto"] | None = None,
        max_groups: int | Literal["auto"] | None = None,
    ) -> pd.Series: ...

    @overload
    def size(
        self,
        *,
        epsilon: float | None = None,
        rho: float | None = None,
        ci: float,
        delta: float | None = None,
        max_rows: int | Literal["auto"] | None = None,
        max_groups: int | Literal["auto"] | None = None,
    ) -> pd.DataFrame: ...

    def size(
        self,
        *,
        epsilon: float | None = None,
        rho: float | None = None,
        ci: float | None = None,
        delta: float | None = None,
        max_rows: int | Literal["auto"] | None = None,
        max_groups: int | Literal["auto"] | None = None,
    ) -> pd.Series | pd.DataFrame:
        """Noisy rows per key, like pandas' ``groupby(...).size()``: ``count()`` of rows.

        Parameters
        ----------
        epsilon : float
            Privacy cost, charged once for all keys.
        rho : float
            Instead of ``epsilon``, under a zCDP budget.
        ci : float, optional
            A confidence level: each key's count with its noise interval.
        delta : float
            Without ``keys=``, required: as for :meth:`count`.
        max_rows : int or "auto", optional
            With a privacy unit: rows of one person kept per key.
        max_groups : int or "auto", optional
            With a privacy unit: keys of one person kept.

        Returns
        -------
        pandas.Series or pandas.DataFrame
            The counts, unnamed as pandas names ``size()``'s (with ``ci``: a
            DataFrame ``estimate``, ``lower``, ``upper``).

        Raises
        ------
        MissingBudgetError, BudgetExceededError, KeyError, ValueError, TypeError
            Refused before anything is spent.

        Notes
        -----
        The release of :meth:`count` without a column: its cost (``epsilon``
        once for all keys), sensitivity (1 under add_remove, 2 under
        substitute; times the bounds with a privacy unit) and noise. Public:
        the keys, ``epsilon``.
        """
        counted = self._call(
            COUNT,
            column=None,
            epsilon=epsilon,
            rho=rho,
            ci=ci,
            cut=False,
            max_rows=max_rows,
            max_groups=max_groups,
            delta=delta,
        )
        return counted.rename(None) if isinstance(counted, pd.Series) else counted

    def __repr__(self) -> str:
        if isinstance(self._group, KeySelection):
            chosen = f"keys chosen privately, dropna={self._group.dropna}"
            return f"{type(self).__name__}(by={self.by!r}, {chosen})"
        return f"{type(self).__name__}(by={self.by!r}, keys={len(self._group.keys)})"


class DPGroupBy(DPGroupedReleases[G]):
    """Grouped private releases of a pandas DataFrame; created by ``df.dp.groupby``."""

    def __init__(self, df: pd.DataFrame, by: object, keys: object) -> None:
        self._df = df
        # A KeySelection (keys chosen privately) comes checked. Public keys are checked
        # against their column's dtype by each release, when it reads the column (before
        # any ε is reserved; max_rows="auto" before its first part): groupby() itself
        # reads no column.
        self._group = keys if isinstance(keys, KeySelection) else Grouping.of(df, by, keys)

    def _frame(self) -> PandasFrame:
        return PandasFrame(self._df)


#: The name of the grouped surface without ``keys=`` when it was a class of its own: the
#: same class now (``df.dp.groupby(by)`` is a ``DPGroupBy[Keyless]``).
DPSelectedGroupBy = DPGroupBy
