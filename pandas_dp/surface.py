"""The releases of ``df.dp`` and ``df.dp.groupby(...)``, each written once.

:class:`Releases` holds ``count``, ``nunique``, ``sum``, ``mean``, ``var``, ``std``,
``argmax_exp``, ``quantile``, ``median`` and ``describe``.  Self-typed
overloads give each method its two typed forms: on an ungrouped surface
(``Releases[Ungrouped]``: :class:`pandas_dp.accessor.DPReleases`) one answer,
on a grouped one (``Releases[Grouped]``:
:class:`pandas_dp.groupby.DPGroupedReleases`) one answer per public key, with
``max_groups``.  A method checks its arguments into a
:class:`~pandas_dp.kind.Kind` and hands it to the surface's :meth:`_spend`.
A class declared with ``scope="ungrouped"`` or ``scope="grouped"`` gets each
method with that surface's docstring and signature (the same code: nothing
added per call), rendered from the templates of :mod:`pandas_dp.docstrings`.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Hashable, Iterable, Mapping
from fractions import Fraction
from typing import Any, Generic, Literal, TypeVar, overload

import pandas as pd

from .aggregate import Count, Mean, Nunique, Sum
from .auto import AUTO_ROWS_SHARE, is_auto, release_with, with_rows
from .budget import PrivacyBudget
from .clipbounds import ClipBounds, ClippedShare
from .describe import Describe
from .docstrings import RELEASES, Scope, for_scope
from .kind import Kind
from .select import Argmax, Quantile
from .validation import Bounds, loss, pure
from .variance import Var

__all__ = ["Grouped", "Releases", "Ungrouped"]

S = TypeVar("S")
C = TypeVar("C")  # a candidate of argmax_exp


class Ungrouped:
    """Marker type of a surface whose releases give one answer (``df.dp``)."""


class Grouped:
    """Marker type of a surface whose releases give one answer per public key."""


# ---------------------------------------------------------------- releases


class Releases(Generic[S]):
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

    def _spend(self, kind: Kind[Any, Any], max_rows: int | None, max_groups: int | None) -> Any:
        """Release ``kind`` (one answer, or one per key) under these contribution bounds."""
        raise NotImplementedError

    def _budget(self) -> PrivacyBudget:
        """The budget this surface's releases spend (MissingBudgetError if none)."""
        raise NotImplementedError

    def _rows_per_unit(self, epsilon: Fraction) -> int:
        """``rows_per_unit(0.9, candidates=AUTO_ROWS, epsilon=epsilon)`` of the surface's frame."""
        raise NotImplementedError

    def _units(self) -> Releases[Ungrouped] | None:
        """The surface of the frame of rows per person (column ``rows``); None without a unit."""
        raise NotImplementedError

    def _hold(self, epsilon: Fraction) -> contextlib.AbstractContextManager[Any]:
        """Hold ``epsilon`` for a call of several releases (nothing if this thread holds)."""
        budget = self._budget()
        return contextlib.nullcontext() if budget.holding else budget.hold(epsilon)

    def _go(self, kind: Kind[Any, Any], max_rows: Any, max_groups: int | None) -> Any:
        """Release ``kind``; with ``max_rows="auto"``, choose the bound first.

        ``max_rows="auto"`` spends :data:`AUTO_ROWS_SHARE` of the kind's ε on
        ``rows_per_unit`` (q = 0.9) and the rest on the kind with that bound,
        the whole ε held first: two ledger entries, the second recording the
        bound.
        """
        if not is_auto(max_rows):
            return self._spend(kind, max_rows, max_groups)
        if getattr(kind, "rho", None) is not None:
            raise TypeError(
                "`max_rows='auto'` spends a share of `epsilon` on rows_per_unit: pass epsilon=, "
                "or give max_rows with rho=."
            )
        total: Fraction = kind.epsilon
        share = total * AUTO_ROWS_SHARE
        with self._hold(total):
            rows = self._rows_per_unit(share)
            rest = dataclasses.replace(kind, epsilon=total - share)  # type: ignore[type-var]
            answer = self._spend(rest, rows, max_groups)
        return with_rows(answer, rows)

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
        return self._go(Count(column=column, ci=ci, **loss(epsilon, rho)), max_rows, max_groups)

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

    def nunique(
        self,
        column: Hashable,
        *,
        epsilon: float | None = None,
        rho: float | None = None,
        max_rows: int | Literal["auto"] | None = None,
        max_groups: int | None = None,
    ) -> Any:
        return self._go(Nunique(pure(epsilon, rho, "nunique"), column), max_rows, max_groups)

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
        if is_auto(clip) or cut:
            pure(epsilon, rho, 'sum with clip="auto" or cut=True')
            return release_with(
                self,
                (column,),
                epsilon,
                clip,
                lambda clips, e: Sum(e, column, clips[column], ci),
                max_rows,
                max_groups,
                cut=cut,
                ci=ci,
            )
        kind = Sum(column=column, clip=clip, ci=ci, **loss(epsilon, rho))
        return self._go(kind, max_rows, max_groups)

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
        if is_auto(clip) or cut:
            pure(epsilon, rho, 'mean with clip="auto" or cut=True')
            return release_with(
                self,
                (column,),
                epsilon,
                clip,
                lambda clips, e: Mean(e, column, clips[column], ci),
                max_rows,
                max_groups,
                cut=cut,
                ci=ci,
            )
        kind = Mean(column=column, clip=clip, ci=ci, **loss(epsilon, rho))
        return self._go(kind, max_rows, max_groups)

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
        if is_auto(clip) or cut:
            pure(epsilon, rho, 'var with clip="auto" or cut=True')
            return release_with(
                self,
                (column,),
                epsilon,
                clip,
                lambda clips, e: Var.of(e, column, clips[column], std=False, ci=ci),
                max_rows,
                max_groups,
                cut=cut,
                ci=ci,
            )
        kind = Var.of(pure(epsilon, rho, "var"), column, clip, std=False, ci=ci)
        return self._go(kind, max_rows, max_groups)

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
        if is_auto(clip) or cut:
            pure(epsilon, rho, 'std with clip="auto" or cut=True')
            return release_with(
                self,
                (column,),
                epsilon,
                clip,
                lambda clips, e: Var.of(e, column, clips[column], std=True, ci=ci),
                max_rows,
                max_groups,
                cut=cut,
                ci=ci,
            )
        kind = Var.of(pure(epsilon, rho, "std"), column, clip, std=True, ci=ci)
        return self._go(kind, max_rows, max_groups)

    @overload
    def argmax_exp(
        self: Releases[Ungrouped],
        column: Hashable,
        *,
        candidates: Iterable[C],
        epsilon: float,
        k: None = ...,
        value: Hashable | None = ...,
        clip: Any = ...,
        max_rows: int | None = ...,
    ) -> C: ...

    @overload
    def argmax_exp(
        self: Releases[Ungrouped],
        column: Hashable,
        *,
        candidates: Iterable[C],
        epsilon: float,
        k: int,
        value: Hashable | None = ...,
        clip: Any = ...,
        max_rows: int | None = ...,
    ) -> list[C]: ...

    @overload
    def argmax_exp(
        self: Releases[Ungrouped],
        column: Hashable,
        *,
        candidates: pd.CategoricalDtype,
        epsilon: float,
        k: None = ...,
        value: Hashable | None = ...,
        clip: Any = ...,
        max_rows: int | None = ...,
    ) -> Any: ...

    @overload
    def argmax_exp(
        self: Releases[Ungrouped],
        column: Hashable,
        *,
        candidates: pd.CategoricalDtype,
        epsilon: float,
        k: int,
        value: Hashable | None = ...,
        clip: Any = ...,
        max_rows: int | None = ...,
    ) -> list[Any]: ...

    @overload
    def argmax_exp(
        self: Releases[Grouped],
        column: Hashable,
        *,
        candidates: Any = ...,
        epsilon: float,
        k: None = ...,
        value: Hashable | None = ...,
        clip: Any = ...,
        max_rows: int | None = ...,
        max_groups: int | None = ...,
    ) -> pd.Series: ...

    @overload
    def argmax_exp(
        self: Releases[Grouped],
        column: Hashable,
        *,
        candidates: Any = ...,
        epsilon: float,
        k: int,
        value: Hashable | None = ...,
        clip: Any = ...,
        max_rows: int | None = ...,
        max_groups: int | None = ...,
    ) -> pd.DataFrame: ...

    def argmax_exp(
        self,
        column: Hashable,
        *,
        candidates: Any = None,
        epsilon: float | None = None,
        rho: float | None = None,
        k: int | None = None,
        value: Hashable | None = None,
        clip: Any = None,
        max_rows: int | Literal["auto"] | None = None,
        max_groups: int | None = None,
    ) -> Any:
        kind = Argmax.of(
            pure(epsilon, rho, "argmax_exp"), column, candidates, k=k, value=value, clip=clip
        )
        return self._go(kind, max_rows, max_groups)

    @overload
    def quantile(
        self: Releases[Ungrouped],
        column: Hashable,
        q: float,
        *,
        candidates: Any = None,
        epsilon: float,
        max_rows: int | Literal["auto"] | None = None,
    ) -> float: ...

    @overload
    def quantile(
        self: Releases[Grouped],
        column: Hashable,
        q: float,
        *,
        candidates: Any = None,
        epsilon: float,
        max_rows: int | Literal["auto"] | None = None,
        max_groups: int | None = None,
    ) -> pd.Series: ...

    def quantile(
        self,
        column: Hashable,
        q: float,
        *,
        candidates: Any = None,
        epsilon: float | None = None,
        rho: float | None = None,
        max_rows: int | Literal["auto"] | None = None,
        max_groups: int | None = None,
    ) -> Any:
        kind = Quantile.of(pure(epsilon, rho, "quantile"), column, q, candidates, "quantile")
        return self._go(kind, max_rows, max_groups)

    @overload
    def median(
        self: Releases[Ungrouped],
        column: Hashable,
        *,
        candidates: Any = None,
        epsilon: float,
        max_rows: int | Literal["auto"] | None = None,
    ) -> float: ...

    @overload
    def median(
        self: Releases[Grouped],
        column: Hashable,
        *,
        candidates: Any = None,
        epsilon: float,
        max_rows: int | Literal["auto"] | None = None,
        max_groups: int | None = None,
    ) -> pd.Series: ...

    def median(
        self,
        column: Hashable,
        *,
        candidates: Any = None,
        epsilon: float | None = None,
        rho: float | None = None,
        max_rows: int | Literal["auto"] | None = None,
        max_groups: int | None = None,
    ) -> Any:
        kind = Quantile.of(pure(epsilon, rho, "median"), column, 0.5, candidates, "median")
        return self._go(kind, max_rows, max_groups)

    @overload
    def bounds(
        self: Releases[Ungrouped],
        column: Hashable,
        *,
        epsilon: float,
        max_rows: int | Literal["auto"] | None = None,
    ) -> tuple[float, float]: ...

    @overload
    def bounds(
        self: Releases[Grouped],
        column: Hashable,
        *,
        epsilon: float,
        max_rows: int | Literal["auto"] | None = None,
        max_groups: int | None = None,
    ) -> pd.DataFrame: ...

    def bounds(
        self,
        column: Hashable,
        *,
        epsilon: float | None = None,
        rho: float | None = None,
        max_rows: int | Literal["auto"] | None = None,
        max_groups: int | None = None,
    ) -> Any:
        kind = ClipBounds(pure(epsilon, rho, "bounds"), column)
        return self._go(kind, max_rows, max_groups)

    @overload
    def clipped_share(
        self: Releases[Ungrouped],
        column: Hashable,
        *,
        clip: Bounds,
        epsilon: float,
        max_rows: int | Literal["auto"] | None = None,
    ) -> float: ...

    @overload
    def clipped_share(
        self: Releases[Grouped],
        column: Hashable,
        *,
        clip: Bounds,
        epsilon: float,
        max_rows: int | Literal["auto"] | None = None,
        max_groups: int | None = None,
    ) -> pd.Series: ...

    def clipped_share(
        self,
        column: Hashable,
        *,
        clip: Any,
        epsilon: float | None = None,
        rho: float | None = None,
        max_rows: int | Literal["auto"] | None = None,
        max_groups: int | None = None,
    ) -> Any:
        kind = ClippedShare(pure(epsilon, rho, "clipped_share"), column, clip)
        return self._go(kind, max_rows, max_groups)

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
        if is_auto(clip) or cut:
            pure(epsilon, rho, 'describe with clip="auto" or cut=True')
            labels = tuple(columns) if isinstance(columns, list | tuple | pd.Index) else (columns,)
            return release_with(
                self,
                labels,
                epsilon,
                clip,
                lambda clips, e: Describe.of(e, list(labels), clips, candidates, ci),
                max_rows,
                max_groups,
                cut=cut,
                ci=ci,
                table=True,
            )
        kind = Describe.of(pure(epsilon, rho, "describe"), columns, clip, candidates, ci)
        return self._go(kind, max_rows, max_groups)
