"""The releases of ``df.dp`` and ``df.dp.groupby(...)``, each written once.

:class:`Releases` holds ``count``, ``nunique``, ``sum``, ``mean``, ``var``, ``std``
and ``describe``, and inherits the selections (``argmax_exp``, ``quantile``,
``median``, ``bounds``, ``clipped_share``) from :class:`pandas_dp.surface._selections.Selections`.
Each takes exactly one of ``epsilon=`` and ``rho=``.  Self-typed
overloads give each method its two typed forms: on an ungrouped surface
(``Releases[Ungrouped]``: :class:`pandas_dp.surface.accessor.DPReleases`) one answer,
on a grouped one (``Releases[Grouped]``:
:class:`pandas_dp.surface.groupby.DPGroupedReleases`) one answer per public key, with
``max_groups``.  A method checks its arguments into a
:class:`~pandas_dp.kinds.base.Kind` and hands it to the surface's :meth:`_spend`.
A class declared with ``scope="ungrouped"`` or ``scope="grouped"`` gets each
method with that surface's docstring and signature (the same code: nothing
added per call), rendered from the templates of :mod:`pandas_dp.surface._docs`.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from typing import Any, Literal, TypeVar, overload

import pandas as pd

from ..core.validation import Bounds, loss_fields
from ..kinds.aggregate import Count, Mean, Nunique, Sum
from ..kinds.base import Kind
from ..kinds.describe import Describe
from ..kinds.variance import Var
from ..mechanisms.keys import Grouping
from ..pipeline.recipes import Loss, Request, answer
from ..pipeline.run import Frame
from ._docs import RELEASES, Scope, for_scope
from ._selections import Grouped, Selections, Ungrouped

__all__ = ["Grouped", "Releases", "Ungrouped"]

S = TypeVar("S")


# ---------------------------------------------------------------- releases


class Releases(Selections[S]):
    """The releases written once for ``df.dp`` (``S = Ungrouped``) and its groupby (``Grouped``).

    A subclass declares its ``scope`` (``class DPReleases(Releases[Ungrouped],
    scope="ungrouped")``) to get the methods documented for it, and
    implements :meth:`_spend`.
    """

    def __init_subclass__(cls, *, scope: Scope | None = None, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if scope is not None:
            for name in RELEASES:
                setattr(cls, name, for_scope(cls, getattr(Releases, name), scope))

    def _frame(self) -> Frame:
        """The backend this surface's releases run over (pandas or Dask)."""
        raise NotImplementedError

    def _grouping(self) -> Grouping | None:
        """The keys of a grouped surface (public, or chosen privately); None ungrouped."""
        raise NotImplementedError

    def _request(self, request: Request) -> Any:
        """Hand a call down to the pipeline (:func:`pandas_dp.pipeline.recipes.answer`)."""
        return answer(self._frame(), self._grouping(), request)

    @overload
    def count(
        self: Releases[Ungrouped],
        column: Hashable | None = None,
        *,
        epsilon: float,
        ci: None = None,
        max_rows: int | Literal["auto"] | None = None,
    ) -> int: ...

    @overload
    def count(
        self: Releases[Ungrouped],
        column: Hashable | None = None,
        *,
        epsilon: float,
        ci: float,
        max_rows: int | Literal["auto"] | None = None,
    ) -> pd.Series: ...

    @overload
    def count(
        self: Releases[Grouped],
        column: Hashable | None = None,
        *,
        epsilon: float,
        ci: None = None,
        max_rows: int | Literal["auto"] | None = None,
        max_groups: int | None = None,
    ) -> pd.Series: ...

    @overload
    def count(
        self: Releases[Grouped],
        column: Hashable | None = None,
        *,
        epsilon: float,
        ci: float,
        max_rows: int | Literal["auto"] | None = None,
        max_groups: int | None = None,
    ) -> pd.DataFrame: ...

    @overload
    def count(
        self: Releases[Ungrouped],
        column: Hashable | None = None,
        *,
        epsilon: None = None,
        rho: float,
        ci: float | None = None,
        max_rows: int | Literal["auto"] | None = None,
    ) -> int | pd.Series: ...

    @overload
    def count(
        self: Releases[Grouped],
        column: Hashable | None = None,
        *,
        epsilon: None = None,
        rho: float,
        ci: float | None = None,
        max_rows: int | Literal["auto"] | None = None,
        max_groups: int | None = None,
    ) -> pd.Series | pd.DataFrame: ...

    def count(
        self,
        column: Hashable | None = None,
        *,
        epsilon: float | None = None,
        rho: float | None = None,
        ci: float | None = None,
        max_rows: int | Literal["auto"] | None = None,
        max_groups: int | None = None,
    ) -> Any:
        args = {"column": column, "epsilon": epsilon, "rho": rho, "ci": ci}
        args |= {"max_rows": max_rows, "max_groups": max_groups}
        return self._request(Request(_count, args))

    @overload
    def nunique(
        self: Releases[Ungrouped],
        column: Hashable,
        *,
        epsilon: float,
        max_rows: int | Literal["auto"] | None = None,
    ) -> int: ...

    @overload
    def nunique(
        self: Releases[Grouped],
        column: Hashable,
        *,
        epsilon: float,
        max_rows: int | Literal["auto"] | None = None,
        max_groups: int | None = None,
    ) -> pd.Series: ...

    @overload
    def nunique(
        self: Releases[Ungrouped],
        column: Hashable,
        *,
        epsilon: None = None,
        rho: float,
        max_rows: int | Literal["auto"] | None = None,
    ) -> int: ...

    @overload
    def nunique(
        self: Releases[Grouped],
        column: Hashable,
        *,
        epsilon: None = None,
        rho: float,
        max_rows: int | Literal["auto"] | None = None,
        max_groups: int | None = None,
    ) -> pd.Series: ...

    def nunique(
        self,
        column: Hashable,
        *,
        epsilon: float | None = None,
        rho: float | None = None,
        max_rows: int | Literal["auto"] | None = None,
        max_groups: int | None = None,
    ) -> Any:
        args = {"column": column, "epsilon": epsilon, "rho": rho}
        args |= {"max_rows": max_rows, "max_groups": max_groups}
        return self._request(Request(_nunique, args))

    @overload
    def sum(
        self: Releases[Ungrouped],
        column: None = None,
        *,
        clip: Mapping[Hashable, Bounds],
        epsilon: float,
        ci: float | None = None,
        max_rows: int | Literal["auto"] | None = None,
    ) -> pd.Series: ...

    @overload
    def sum(
        self: Releases[Ungrouped],
        column: Hashable,
        *,
        clip: Bounds | Literal["auto"],
        epsilon: float,
        ci: None = None,
        cut: Literal[False] = False,
        max_rows: int | Literal["auto"] | None = None,
    ) -> float: ...

    @overload
    def sum(
        self: Releases[Ungrouped],
        column: Hashable,
        *,
        clip: Bounds | Literal["auto"],
        epsilon: float,
        ci: float | None = None,
        cut: bool = False,
        max_rows: int | Literal["auto"] | None = None,
    ) -> pd.Series: ...

    @overload
    def sum(
        self: Releases[Grouped],
        column: None = None,
        *,
        clip: Mapping[Hashable, Bounds],
        epsilon: float,
        ci: float | None = None,
        max_rows: int | Literal["auto"] | None = None,
        max_groups: int | None = None,
    ) -> pd.DataFrame: ...

    @overload
    def sum(
        self: Releases[Grouped],
        column: Hashable,
        *,
        clip: Bounds | Literal["auto"],
        epsilon: float,
        ci: None = None,
        cut: Literal[False] = False,
        max_rows: int | Literal["auto"] | None = None,
        max_groups: int | None = None,
    ) -> pd.Series: ...

    @overload
    def sum(
        self: Releases[Grouped],
        column: Hashable,
        *,
        clip: Bounds | Literal["auto"],
        epsilon: float,
        ci: float | None = None,
        cut: bool = False,
        max_rows: int | Literal["auto"] | None = None,
        max_groups: int | None = None,
    ) -> pd.DataFrame: ...

    @overload
    def sum(
        self: Releases[Ungrouped],
        column: Hashable | None = None,
        *,
        clip: Any,
        epsilon: None = None,
        rho: float,
        ci: float | None = None,
        max_rows: int | Literal["auto"] | None = None,
    ) -> float | pd.Series: ...

    @overload
    def sum(
        self: Releases[Grouped],
        column: Hashable | None = None,
        *,
        clip: Any,
        epsilon: None = None,
        rho: float,
        ci: float | None = None,
        max_rows: int | Literal["auto"] | None = None,
        max_groups: int | None = None,
    ) -> pd.Series | pd.DataFrame: ...

    def sum(
        self,
        column: Hashable | None = None,
        *,
        clip: Any,
        epsilon: float | None = None,
        rho: float | None = None,
        ci: float | None = None,
        cut: bool = False,
        max_rows: int | Literal["auto"] | None = None,
        max_groups: int | None = None,
    ) -> Any:
        args = {"column": column, "clip": clip, "epsilon": epsilon, "rho": rho, "ci": ci}
        args |= {"cut": cut, "max_rows": max_rows, "max_groups": max_groups}
        return self._request(Request(_sum, args, (column,)))

    @overload
    def mean(
        self: Releases[Ungrouped],
        column: None = None,
        *,
        clip: Mapping[Hashable, Bounds],
        epsilon: float,
        ci: float | None = None,
        max_rows: int | Literal["auto"] | None = None,
    ) -> pd.Series: ...

    @overload
    def mean(
        self: Releases[Ungrouped],
        column: Hashable,
        *,
        clip: Bounds | Literal["auto"],
        epsilon: float,
        ci: None = None,
        cut: Literal[False] = False,
        max_rows: int | Literal["auto"] | None = None,
    ) -> float: ...

    @overload
    def mean(
        self: Releases[Ungrouped],
        column: Hashable,
        *,
        clip: Bounds | Literal["auto"],
        epsilon: float,
        ci: float | None = None,
        cut: bool = False,
        max_rows: int | Literal["auto"] | None = None,
    ) -> pd.Series: ...

    @overload
    def mean(
        self: Releases[Grouped],
        column: None = None,
        *,
        clip: Mapping[Hashable, Bounds],
        epsilon: float,
        ci: float | None = None,
        max_rows: int | Literal["auto"] | None = None,
        max_groups: int | None = None,
    ) -> pd.DataFrame: ...

    @overload
    def mean(
        self: Releases[Grouped],
        column: Hashable,
        *,
        clip: Bounds | Literal["auto"],
        epsilon: float,
        ci: None = None,
        cut: Literal[False] = False,
        max_rows: int | Literal["auto"] | None = None,
        max_groups: int | None = None,
    ) -> pd.Series: ...

    @overload
    def mean(
        self: Releases[Grouped],
        column: Hashable,
        *,
        clip: Bounds | Literal["auto"],
        epsilon: float,
        ci: float | None = None,
        cut: bool = False,
        max_rows: int | Literal["auto"] | None = None,
        max_groups: int | None = None,
    ) -> pd.DataFrame: ...

    @overload
    def mean(
        self: Releases[Ungrouped],
        column: Hashable | None = None,
        *,
        clip: Any,
        epsilon: None = None,
        rho: float,
        ci: float | None = None,
        max_rows: int | Literal["auto"] | None = None,
    ) -> float | pd.Series: ...

    @overload
    def mean(
        self: Releases[Grouped],
        column: Hashable | None = None,
        *,
        clip: Any,
        epsilon: None = None,
        rho: float,
        ci: float | None = None,
        max_rows: int | Literal["auto"] | None = None,
        max_groups: int | None = None,
    ) -> pd.Series | pd.DataFrame: ...

    def mean(
        self,
        column: Hashable | None = None,
        *,
        clip: Any,
        epsilon: float | None = None,
        rho: float | None = None,
        ci: float | None = None,
        cut: bool = False,
        max_rows: int | Literal["auto"] | None = None,
        max_groups: int | None = None,
    ) -> Any:
        args = {"column": column, "clip": clip, "epsilon": epsilon, "rho": rho, "ci": ci}
        args |= {"cut": cut, "max_rows": max_rows, "max_groups": max_groups}
        return self._request(Request(_mean, args, (column,)))

    @overload
    def var(
        self: Releases[Ungrouped],
        column: Hashable,
        *,
        clip: Any,
        epsilon: float,
        ci: None = None,
        cut: Literal[False] = False,
        max_rows: int | Literal["auto"] | None = None,
    ) -> float: ...

    @overload
    def var(
        self: Releases[Ungrouped],
        column: Hashable,
        *,
        clip: Any,
        epsilon: float,
        ci: float | None = None,
        cut: bool = False,
        max_rows: int | Literal["auto"] | None = None,
    ) -> pd.Series: ...

    @overload
    def var(
        self: Releases[Grouped],
        column: Hashable,
        *,
        clip: Any,
        epsilon: float,
        ci: None = None,
        cut: Literal[False] = False,
        max_rows: int | Literal["auto"] | None = None,
        max_groups: int | None = None,
    ) -> pd.Series: ...

    @overload
    def var(
        self: Releases[Grouped],
        column: Hashable,
        *,
        clip: Any,
        epsilon: float,
        ci: float | None = None,
        cut: bool = False,
        max_rows: int | Literal["auto"] | None = None,
        max_groups: int | None = None,
    ) -> pd.DataFrame: ...

    @overload
    def var(
        self: Releases[Ungrouped],
        column: Hashable,
        *,
        clip: Any,
        epsilon: None = None,
        rho: float,
        ci: float | None = None,
        max_rows: int | Literal["auto"] | None = None,
    ) -> float | pd.Series: ...

    @overload
    def var(
        self: Releases[Grouped],
        column: Hashable,
        *,
        clip: Any,
        epsilon: None = None,
        rho: float,
        ci: float | None = None,
        max_rows: int | Literal["auto"] | None = None,
        max_groups: int | None = None,
    ) -> pd.Series | pd.DataFrame: ...

    def var(
        self,
        column: Hashable,
        *,
        clip: Any,
        epsilon: float | None = None,
        rho: float | None = None,
        ci: float | None = None,
        cut: bool = False,
        max_rows: int | Literal["auto"] | None = None,
        max_groups: int | None = None,
    ) -> Any:
        args = {"column": column, "clip": clip, "epsilon": epsilon, "rho": rho, "ci": ci}
        args |= {"cut": cut, "max_rows": max_rows, "max_groups": max_groups}
        return self._request(Request(_var, args, (column,)))

    @overload
    def std(
        self: Releases[Ungrouped],
        column: Hashable,
        *,
        clip: Any,
        epsilon: float,
        ci: None = None,
        cut: Literal[False] = False,
        max_rows: int | Literal["auto"] | None = None,
    ) -> float: ...

    @overload
    def std(
        self: Releases[Ungrouped],
        column: Hashable,
        *,
        clip: Any,
        epsilon: float,
        ci: float | None = None,
        cut: bool = False,
        max_rows: int | Literal["auto"] | None = None,
    ) -> pd.Series: ...

    @overload
    def std(
        self: Releases[Grouped],
        column: Hashable,
        *,
        clip: Any,
        epsilon: float,
        ci: None = None,
        cut: Literal[False] = False,
        max_rows: int | Literal["auto"] | None = None,
        max_groups: int | None = None,
    ) -> pd.Series: ...

    @overload
    def std(
        self: Releases[Grouped],
        column: Hashable,
        *,
        clip: Any,
        epsilon: float,
        ci: float | None = None,
        cut: bool = False,
        max_rows: int | Literal["auto"] | None = None,
        max_groups: int | None = None,
    ) -> pd.DataFrame: ...

    @overload
    def std(
        self: Releases[Ungrouped],
        column: Hashable,
        *,
        clip: Any,
        epsilon: None = None,
        rho: float,
        ci: float | None = None,
        max_rows: int | Literal["auto"] | None = None,
    ) -> float | pd.Series: ...

    @overload
    def std(
        self: Releases[Grouped],
        column: Hashable,
        *,
        clip: Any,
        epsilon: None = None,
        rho: float,
        ci: float | None = None,
        max_rows: int | Literal["auto"] | None = None,
        max_groups: int | None = None,
    ) -> pd.Series | pd.DataFrame: ...

    def std(
        self,
        column: Hashable,
        *,
        clip: Any,
        epsilon: float | None = None,
        rho: float | None = None,
        ci: float | None = None,
        cut: bool = False,
        max_rows: int | Literal["auto"] | None = None,
        max_groups: int | None = None,
    ) -> Any:
        args = {"column": column, "clip": clip, "epsilon": epsilon, "rho": rho, "ci": ci}
        args |= {"cut": cut, "max_rows": max_rows, "max_groups": max_groups}
        return self._request(Request(_std, args, (column,)))

    @overload
    def describe(
        self: Releases[Ungrouped],
        columns: Any,
        *,
        clip: Any,
        candidates: Any,
        epsilon: float,
        max_rows: int | Literal["auto"] | None = None,
        ci: None = None,
        cut: bool = False,
    ) -> pd.DataFrame: ...

    @overload
    def describe(
        self: Releases[Grouped],
        columns: Any,
        *,
        clip: Any,
        candidates: Any,
        epsilon: float,
        max_rows: int | Literal["auto"] | None = None,
        max_groups: int | None = None,
        ci: None = None,
        cut: bool = False,
    ) -> pd.DataFrame: ...

    @overload
    def describe(
        self: Releases[Ungrouped],
        columns: Any,
        *,
        clip: Any,
        candidates: Any,
        epsilon: None = None,
        rho: float,
        max_rows: int | Literal["auto"] | None = None,
        ci: None = None,
    ) -> pd.DataFrame: ...

    @overload
    def describe(
        self: Releases[Grouped],
        columns: Any,
        *,
        clip: Any,
        candidates: Any,
        epsilon: None = None,
        rho: float,
        max_rows: int | Literal["auto"] | None = None,
        max_groups: int | None = None,
        ci: None = None,
    ) -> pd.DataFrame: ...

    def describe(
        self,
        columns: Any,
        *,
        clip: Any,
        candidates: Any,
        epsilon: float | None = None,
        rho: float | None = None,
        max_rows: int | Literal["auto"] | None = None,
        max_groups: int | None = None,
        ci: None = None,
        cut: bool = False,
    ) -> Any:
        labels = tuple(columns) if isinstance(columns, list | tuple | pd.Index) else (columns,)
        args = {"columns": columns, "clip": clip, "candidates": candidates, "epsilon": epsilon}
        args |= {"rho": rho, "ci": ci, "cut": cut, "max_rows": max_rows, "max_groups": max_groups}
        return self._request(Request(_describe, args, labels, table=True))


# ------------------------------------------------- what each call builds


def _count(args: Mapping[str, Any], loss: Loss) -> Kind[Any, Any]:
    return Count(column=args["column"], ci=args["ci"], **loss_fields(*loss))


def _nunique(args: Mapping[str, Any], loss: Loss) -> Kind[Any, Any]:
    return Nunique(column=args["column"], **loss_fields(*loss))


def _sum(args: Mapping[str, Any], loss: Loss) -> Kind[Any, Any]:
    return Sum(column=args["column"], clip=args["clip"], ci=args["ci"], **loss_fields(*loss))


def _mean(args: Mapping[str, Any], loss: Loss) -> Kind[Any, Any]:
    return Mean(column=args["column"], clip=args["clip"], ci=args["ci"], **loss_fields(*loss))


def _var(args: Mapping[str, Any], loss: Loss, std: bool = False) -> Kind[Any, Any]:
    f = loss_fields(*loss)
    return Var.of(f["epsilon"], args["column"], args["clip"], std=std, ci=args["ci"], rho=f["rho"])


def _std(args: Mapping[str, Any], loss: Loss) -> Kind[Any, Any]:
    return _var(args, loss, std=True)


def _describe(args: Mapping[str, Any], loss: Loss) -> Kind[Any, Any]:
    f = loss_fields(*loss)
    columns = args["columns"]
    labels = list(columns) if isinstance(columns, tuple | pd.Index) else columns
    return Describe.of(f["epsilon"], labels, args["clip"], args["candidates"], args["ci"], f["rho"])
