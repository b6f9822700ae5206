"""The releases of ``df.dp`` and ``df.dp.groupby(...)``, each written once.

:class:`Releases` holds ``count``, ``nunique``, ``sum``, ``mean``, ``var``, ``std``
and ``describe``, and inherits the selections (``argmax_exp``, ``quantile``,
``median``, ``bounds``, ``clipped_share``) from :class:`pandas_dp.selections.Selections`.
Each takes exactly one of ``epsilon=`` and ``rho=``.  Self-typed
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
from collections.abc import Callable, Hashable, Mapping
from fractions import Fraction
from typing import Any, Literal, TypeVar, overload

import pandas as pd

from .aggregate import Count, Mean, Nunique, Sum
from .auto import AUTO_ROWS_SHARE, is_auto, release_with, with_rows
from .budget import PrivacyBudget
from .describe import Describe
from .docstrings import RELEASES, Scope, for_scope
from .kind import Kind
from .selections import Grouped, Selections, Ungrouped
from .validation import Bounds, check_readable, loss
from .variance import Var

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

    def _spend(self, kind: Kind[Any, Any], max_rows: int | None, max_groups: int | None) -> Any:
        """Release ``kind`` (one answer, or one per key) under these contribution bounds."""
        raise NotImplementedError

    def _budget(self) -> PrivacyBudget:
        """The budget this surface's releases spend (MissingBudgetError if none)."""
        raise NotImplementedError

    def _rows_per_unit(self, amount: Fraction, accountant: str = "epsilon") -> int:
        """``rows_per_unit(0.9, candidates=AUTO_ROWS, epsilon=amount)`` (or ``rho=``)."""
        raise NotImplementedError

    def _units(self) -> Releases[Ungrouped] | None:
        """The surface of the frame of rows per person (column ``rows``); None without a unit."""
        raise NotImplementedError

    def _schema(self) -> pd.DataFrame:
        """A pandas frame with the columns and dtypes of the data (its rows are never read)."""
        raise NotImplementedError

    def _check(self, kind: Kind[Any, Any]) -> Kind[Any, Any]:
        """``kind``, once what its release would refuse from the dtypes alone is refused.

        A call of several parts (``max_rows="auto"``, ``clip="auto"``,
        ``cut=True``) checks its statistic first, so that a column it cannot
        read is refused before the first part spends.
        """
        schema = self._schema().iloc[:0]
        check_readable(schema, kind.columns())
        kind.read(schema, 0)
        return kind

    def _hold(self, amount: Fraction, accountant: str) -> contextlib.AbstractContextManager[Any]:
        """Hold ``amount`` (ε or ρ) for a call of several releases (not if this thread holds)."""
        budget = self._budget()
        return contextlib.nullcontext() if budget.holding else budget.hold(amount, accountant)

    def _go(self, kind: Kind[Any, Any], max_rows: Any, max_groups: int | None) -> Any:
        """Release ``kind``; with ``max_rows="auto"``, choose the bound first.

        ``max_rows="auto"`` spends :data:`AUTO_ROWS_SHARE` of the kind's ε on
        ``rows_per_unit`` (q = 0.9) and the rest on the kind with that bound,
        the whole ε held first: two ledger entries, the second recording the
        bound.  Given ``rho=``, the same shares of ρ (a selection's ε is then
        recomputed from its share: :func:`pandas_dp.validation.selection_loss`).
        """
        if not is_auto(max_rows):
            return self._spend(kind, max_rows, max_groups)
        self._check(kind)
        accountant, total = kind.loss()
        share = total * AUTO_ROWS_SHARE
        with self._hold(total, accountant):
            rows = self._rows_per_unit(share, accountant)
            answer = self._spend(kind.at(accountant, total - share), rows, max_groups)
        return with_rows(answer, rows)

    def _clipped(
        self,
        column: Hashable | None,
        clip: Any,
        loss_given: tuple[float | None, float | None],
        build: Callable[[Any, dict[str, Fraction | None]], Kind[Any, Any]],
        max_rows: Any,
        max_groups: int | None,
        *,
        cut: bool,
        ci: float | None,
    ) -> Any:
        """Release ``build(clip, loss)``: a statistic of ``column`` clipped to ``clip``.

        With ``clip="auto"`` or ``cut=True``, through
        :func:`pandas_dp.auto.release_with` (its parts first, then ``build``
        with the chosen bounds and the rest of the loss); otherwise :meth:`_go`.
        """
        if is_auto(clip) or cut:
            return release_with(
                self,
                (column,),
                loss_given,
                clip,
                lambda clips, f: build(clips[column], f),
                max_rows,
                max_groups,
                cut=cut,
                ci=ci,
            )
        return self._go(build(clip, loss(*loss_given)), max_rows, max_groups)

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
        return self._go(Nunique(column=column, **loss(epsilon, rho)), max_rows, max_groups)

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
        return self._clipped(
            column,
            clip,
            (epsilon, rho),
            lambda bounds, f: Sum(column=column, clip=bounds, ci=ci, **f),
            max_rows,
            max_groups,
            cut=cut,
            ci=ci,
        )

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
        return self._clipped(
            column,
            clip,
            (epsilon, rho),
            lambda bounds, f: Mean(column=column, clip=bounds, ci=ci, **f),
            max_rows,
            max_groups,
            cut=cut,
            ci=ci,
        )

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
        return self._clipped(
            column,
            clip,
            (epsilon, rho),
            lambda bounds, f: Var.of(f["epsilon"], column, bounds, std=False, ci=ci, rho=f["rho"]),
            max_rows,
            max_groups,
            cut=cut,
            ci=ci,
        )

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
        return self._clipped(
            column,
            clip,
            (epsilon, rho),
            lambda bounds, f: Var.of(f["epsilon"], column, bounds, std=True, ci=ci, rho=f["rho"]),
            max_rows,
            max_groups,
            cut=cut,
            ci=ci,
        )

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
        if is_auto(clip) or cut:
            labels = tuple(columns) if isinstance(columns, list | tuple | pd.Index) else (columns,)
            return release_with(
                self,
                labels,
                (epsilon, rho),
                clip,
                lambda clips, f: Describe.of(
                    f["epsilon"], list(labels), clips, candidates, ci, f["rho"]
                ),
                max_rows,
                max_groups,
                cut=cut,
                ci=ci,
                table=True,
            )
        f = loss(epsilon, rho)
        kind = Describe.of(f["epsilon"], columns, clip, candidates, ci, f["rho"])
        return self._go(kind, max_rows, max_groups)
