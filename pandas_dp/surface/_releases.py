"""The releases of ``df.dp`` and ``df.dp.groupby(...)``, written once, from their signatures.

:class:`Releases` holds every release declared beside its kind
(:class:`~pandas_dp.kinds.signature.Signature`), through the generated mixins
of :mod:`pandas_dp.surface._typed` (their self-typed overloads give each
method its typed forms on each surface: ``Releases[Ungrouped]`` one answer,
``Releases[Grouped]`` one per public key, ``Releases[Keyless]`` one per key
chosen privately, with ``delta=``).  A call hands its signature and
arguments to :meth:`Releases._call`, which hands a
:class:`~pandas_dp.pipeline.recipes.Request` down to the pipeline.  A class
declared with ``scope="ungrouped"`` or ``scope="grouped"`` gets each method
with that surface's docstring and signature (the same code: nothing added
per call), rendered by :func:`pandas_dp.surface._docs.for_scope`.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from typing import Any, Literal, TypeVar

import pandas as pd

from ..kinds.signature import Signature
from ..mechanisms.keys import Grouping
from ..pipeline.aggregate import aggregate
from ..pipeline.recipes import Request, answer
from ..pipeline.run import Frame
from ._docs import for_scope
from ._typed import SIGNATURES, Typed

__all__ = ["Releases"]

S = TypeVar("S")


class Releases(Typed[S]):
    """Every release of a surface: ``S`` is its scope's marker type.

    A subclass declares its ``scope`` (``class DPReleases(Releases[Ungrouped],
    scope="ungrouped")``) to get the methods documented for it, and gives the
    backend (:meth:`_frame`) and the grouping (:meth:`_grouping`).
    """

    def __init_subclass__(
        cls, *, scope: Literal["ungrouped", "grouped"] | None = None, **kwargs: Any
    ) -> None:
        super().__init_subclass__(**kwargs)
        if scope is not None:
            for signature in SIGNATURES:
                method = getattr(Typed, signature.name)
                setattr(cls, signature.name, for_scope(cls, method, signature, scope))

    def _frame(self) -> Frame:
        """The backend this surface's releases run over (pandas or Dask)."""
        raise NotImplementedError

    def _grouping(self) -> Grouping | None:
        """The keys of a grouped surface (public, or chosen privately); None ungrouped."""
        raise NotImplementedError

    def agg(
        self,
        func: Mapping[Hashable, str | list[str]],
        *,
        epsilon: float | None = None,
        rho: float | None = None,
        clip: Any = None,
        candidates: Any = None,
        max_rows: int | Literal["auto"] | None = None,
        max_groups: int | Literal["auto"] | None = None,
        delta: float | None = None,
    ) -> pd.Series | pd.DataFrame:
        """Several statistics of several columns in one call, like pandas' ``agg``.

        ``df.dp.agg({"salary": ["mean", "std"], "age": "median"}, epsilon=1,
        clip={"salary": (0, 2e5)}, candidates={"age": range(101)})``.

        Parameters
        ----------
        func : mapping
            Each column to a statistic's name or a list of them: ``"count"``,
            ``"sum"``, ``"mean"``, ``"var"``, ``"std"``, ``"median"``, ``"nunique"``.
        epsilon : float
            Privacy cost of the whole call, split equally over the statistics;
            held at once.
        rho : float
            Instead of ``epsilon``, under a zCDP budget: split the same way.
        clip : (lower, upper), "auto", or a mapping of them by column
            The public bounds of ``sum``, ``mean``, ``var`` and ``std``.
        candidates : grid, or a mapping of grids by column
            The public grid of ``median``.
        max_rows, max_groups, delta
            As for each statistic (grouped: ``max_groups``; without ``keys=``:
            ``delta``, spent by the first statistic, whose keys the others answer).

        Returns
        -------
        pandas.Series or pandas.DataFrame
            As pandas' ``agg``: a mapping of single names gives a Series indexed
            by column (grouped: a DataFrame, a column each); any list a DataFrame
            indexed by statistic, a column each, NaN where a statistic was not
            asked of a column (grouped: columns ``(column, statistic)``).

        Raises
        ------
        MissingBudgetError, BudgetExceededError, KeyError, ValueError, TypeError
            What any statistic of the call would refuse is refused before the
            first one spends.

        Notes
        -----
        One release per (column, statistic), each at ``epsilon / k`` for ``k``
        statistics, a ledger entry each (release ``agg``); the sensitivity and
        noise of each are those of the statistic under the budget's adjacency
        (add_remove or substitute; see its method). Public: the clip bounds,
        the grids, the keys, ``epsilon``.
        """
        given = {
            "epsilon": epsilon,
            "rho": rho,
            "clip": clip,
            "candidates": candidates,
            "max_rows": max_rows,
            "max_groups": max_groups,
            "delta": delta,
        }
        return aggregate(self._frame(), self._grouping(), func, given)  # type: ignore[no-any-return]

    def _call(self, signature: Signature, /, **args: Any) -> Any:
        """Hand a call down to the pipeline (:func:`pandas_dp.pipeline.recipes.answer`)."""
        request = Request(
            signature.build,
            args,
            signature.columns(args),
            table=signature.table,
            clipped=signature.clipped,
            gridded=signature.gridded,
            name=signature.name,
        )
        return answer(self._frame(), self._grouping(), request)
