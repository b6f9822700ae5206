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

from collections.abc import Hashable, Iterable, Mapping
from fractions import Fraction
from typing import Any, Generic, TypeVar, overload

import pandas as pd

from .aggregate import Count, Mean, Nunique, Sum
from .describe import Describe
from .docstrings import RELEASES, Scope, for_scope
from .kind import Kind
from .select import Argmax, Quantile
from .validation import Bounds, check_loss
from .variance import Var

__all__ = ["Grouped", "Releases", "Ungrouped"]

S = TypeVar("S")
C = TypeVar("C")  # a candidate of argmax_exp


class Ungrouped:
    """Marker type of a surface whose releases give one answer (``df.dp``)."""


class Grouped:
    """Marker type of a surface whose releases give one answer per public key."""


# ---------------------------------------------------------------- the privacy loss


def loss(epsilon: object, rho: object) -> dict[str, Fraction | None]:
    """A release's ``epsilon=`` / ``rho=`` (exactly one) as the fields of a kind that takes both.

    ``rho`` draws discrete Gaussian noise; its budget must be a ρ budget (an
    ε budget refuses it when the release is reserved, before any noise).
    """
    accountant, amount = check_loss(epsilon, rho)
    if accountant == "rho":
        return {"epsilon": None, "rho": amount}
    return {"epsilon": amount, "rho": None}


def pure(epsilon: object, rho: object, name: str) -> Fraction:
    """A release's ``epsilon=`` where ``rho=`` has no Gaussian form yet: the ε, exactly.

    Under a ρ budget the release is charged ``ε²/2`` (pure ε-DP is
    ``ε²/2``-zCDP); ``rho=`` is refused with that fix.
    """
    accountant, amount = check_loss(epsilon, rho)
    if accountant == "rho":
        raise TypeError(
            f"`rho=` is not available for {name}: it has no Gaussian form yet. Pass epsilon= "
            "(a zCDP budget set with rho= charges an epsilon release epsilon**2/2 exactly)."
        )
    return amount


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

    @overload
    def count(
        self: Releases[Ungrouped],
        column: Hashable | None = None,
        *,
        epsilon: float,
        ci: None = None,
        max_rows: int | None = None,
    ) -> int: ...

    @overload
    def count(
        self: Releases[Ungrouped],
        column: Hashable | None = None,
        *,
        epsilon: None = None,
        rho: float,
        ci: None = None,
        max_rows: int | None = None,
    ) -> int: ...

    @overload
    def count(
        self: Releases[Ungrouped],
        column: Hashable | None = None,
        *,
        epsilon: float,
        ci: float,
        max_rows: int | None = None,
    ) -> pd.Series: ...

    @overload
    def count(
        self: Releases[Ungrouped],
        column: Hashable | None = None,
        *,
        epsilon: None = None,
        rho: float,
        ci: float,
        max_rows: int | None = None,
    ) -> pd.Series: ...

    @overload
    def count(
        self: Releases[Grouped],
        column: Hashable | None = None,
        *,
        epsilon: float,
        ci: None = None,
        max_rows: int | None = None,
        max_groups: int | None = None,
    ) -> pd.Series: ...

    @overload
    def count(
        self: Releases[Grouped],
        column: Hashable | None = None,
        *,
        epsilon: None = None,
        rho: float,
        ci: None = None,
        max_rows: int | None = None,
        max_groups: int | None = None,
    ) -> pd.Series: ...

    @overload
    def count(
        self: Releases[Grouped],
        column: Hashable | None = None,
        *,
        epsilon: float,
        ci: float,
        max_rows: int | None = None,
        max_groups: int | None = None,
    ) -> pd.DataFrame: ...

    @overload
    def count(
        self: Releases[Grouped],
        column: Hashable | None = None,
        *,
        epsilon: None = None,
        rho: float,
        ci: float,
        max_rows: int | None = None,
        max_groups: int | None = None,
    ) -> pd.DataFrame: ...

    def count(
        self,
        column: Hashable | None = None,
        *,
        epsilon: float | None = None,
        rho: float | None = None,
        ci: float | None = None,
        max_rows: int | None = None,
        max_groups: int | None = None,
    ) -> Any:
        return self._spend(Count(column=column, ci=ci, **loss(epsilon, rho)), max_rows, max_groups)

    @overload
    def nunique(
        self: Releases[Ungrouped],
        column: Hashable,
        *,
        epsilon: float,
        max_rows: int | None = None,
    ) -> int: ...

    @overload
    def nunique(
        self: Releases[Grouped],
        column: Hashable,
        *,
        epsilon: float,
        max_rows: int | None = None,
        max_groups: int | None = None,
    ) -> pd.Series: ...

    def nunique(
        self,
        column: Hashable,
        *,
        epsilon: float | None = None,
        rho: float | None = None,
        max_rows: int | None = None,
        max_groups: int | None = None,
    ) -> Any:
        return self._spend(Nunique(pure(epsilon, rho, "nunique"), column), max_rows, max_groups)

    @overload
    def sum(
        self: Releases[Ungrouped],
        column: None = None,
        *,
        clip: Mapping[Hashable, Bounds],
        epsilon: float,
        ci: float | None = None,
        max_rows: int | None = None,
    ) -> pd.Series: ...

    @overload
    def sum(
        self: Releases[Ungrouped],
        column: None = None,
        *,
        clip: Mapping[Hashable, Bounds],
        epsilon: None = None,
        rho: float,
        ci: float | None = None,
        max_rows: int | None = None,
    ) -> pd.Series: ...

    @overload
    def sum(
        self: Releases[Ungrouped],
        column: Hashable,
        *,
        clip: Bounds,
        epsilon: float,
        ci: None = None,
        max_rows: int | None = None,
    ) -> float: ...

    @overload
    def sum(
        self: Releases[Ungrouped],
        column: Hashable,
        *,
        clip: Bounds,
        epsilon: None = None,
        rho: float,
        ci: None = None,
        max_rows: int | None = None,
    ) -> float: ...

    @overload
    def sum(
        self: Releases[Ungrouped],
        column: Hashable,
        *,
        clip: Bounds,
        epsilon: float,
        ci: float,
        max_rows: int | None = None,
    ) -> pd.Series: ...

    @overload
    def sum(
        self: Releases[Ungrouped],
        column: Hashable,
        *,
        clip: Bounds,
        epsilon: None = None,
        rho: float,
        ci: float,
        max_rows: int | None = None,
    ) -> pd.Series: ...

    @overload
    def sum(
        self: Releases[Grouped],
        column: None = None,
        *,
        clip: Mapping[Hashable, Bounds],
        epsilon: float,
        ci: float | None = None,
        max_rows: int | None = None,
        max_groups: int | None = None,
    ) -> pd.DataFrame: ...

    @overload
    def sum(
        self: Releases[Grouped],
        column: None = None,
        *,
        clip: Mapping[Hashable, Bounds],
        epsilon: None = None,
        rho: float,
        ci: float | None = None,
        max_rows: int | None = None,
        max_groups: int | None = None,
    ) -> pd.DataFrame: ...

    @overload
    def sum(
        self: Releases[Grouped],
        column: Hashable,
        *,
        clip: Bounds,
        epsilon: float,
        ci: None = None,
        max_rows: int | None = None,
        max_groups: int | None = None,
    ) -> pd.Series: ...

    @overload
    def sum(
        self: Releases[Grouped],
        column: Hashable,
        *,
        clip: Bounds,
        epsilon: None = None,
        rho: float,
        ci: None = None,
        max_rows: int | None = None,
        max_groups: int | None = None,
    ) -> pd.Series: ...

    @overload
    def sum(
        self: Releases[Grouped],
        column: Hashable,
        *,
        clip: Bounds,
        epsilon: float,
        ci: float,
        max_rows: int | None = None,
        max_groups: int | None = None,
    ) -> pd.DataFrame: ...

    @overload
    def sum(
        self: Releases[Grouped],
        column: Hashable,
        *,
        clip: Bounds,
        epsilon: None = None,
        rho: float,
        ci: float,
        max_rows: int | None = None,
        max_groups: int | None = None,
    ) -> pd.DataFrame: ...

    def sum(
        self,
        column: Hashable | None = None,
        *,
        clip: Any,
        epsilon: float | None = None,
        rho: float | None = None,
        ci: float | None = None,
        max_rows: int | None = None,
        max_groups: int | None = None,
    ) -> Any:
        kind = Sum(column=column, clip=clip, ci=ci, **loss(epsilon, rho))
        return self._spend(kind, max_rows, max_groups)

    @overload
    def mean(
        self: Releases[Ungrouped],
        column: None = None,
        *,
        clip: Mapping[Hashable, Bounds],
        epsilon: float,
        ci: float | None = None,
        max_rows: int | None = None,
    ) -> pd.Series: ...

    @overload
    def mean(
        self: Releases[Ungrouped],
        column: None = None,
        *,
        clip: Mapping[Hashable, Bounds],
        epsilon: None = None,
        rho: float,
        ci: float | None = None,
        max_rows: int | None = None,
    ) -> pd.Series: ...

    @overload
    def mean(
        self: Releases[Ungrouped],
        column: Hashable,
        *,
        clip: Bounds,
        epsilon: float,
        ci: None = None,
        max_rows: int | None = None,
    ) -> float: ...

    @overload
    def mean(
        self: Releases[Ungrouped],
        column: Hashable,
        *,
        clip: Bounds,
        epsilon: None = None,
        rho: float,
        ci: None = None,
        max_rows: int | None = None,
    ) -> float: ...

    @overload
    def mean(
        self: Releases[Ungrouped],
        column: Hashable,
        *,
        clip: Bounds,
        epsilon: float,
        ci: float,
        max_rows: int | None = None,
    ) -> pd.Series: ...

    @overload
    def mean(
        self: Releases[Ungrouped],
        column: Hashable,
        *,
        clip: Bounds,
        epsilon: None = None,
        rho: float,
        ci: float,
        max_rows: int | None = None,
    ) -> pd.Series: ...

    @overload
    def mean(
        self: Releases[Grouped],
        column: None = None,
        *,
        clip: Mapping[Hashable, Bounds],
        epsilon: float,
        ci: float | None = None,
        max_rows: int | None = None,
        max_groups: int | None = None,
    ) -> pd.DataFrame: ...

    @overload
    def mean(
        self: Releases[Grouped],
        column: None = None,
        *,
        clip: Mapping[Hashable, Bounds],
        epsilon: None = None,
        rho: float,
        ci: float | None = None,
        max_rows: int | None = None,
        max_groups: int | None = None,
    ) -> pd.DataFrame: ...

    @overload
    def mean(
        self: Releases[Grouped],
        column: Hashable,
        *,
        clip: Bounds,
        epsilon: float,
        ci: None = None,
        max_rows: int | None = None,
        max_groups: int | None = None,
    ) -> pd.Series: ...

    @overload
    def mean(
        self: Releases[Grouped],
        column: Hashable,
        *,
        clip: Bounds,
        epsilon: None = None,
        rho: float,
        ci: None = None,
        max_rows: int | None = None,
        max_groups: int | None = None,
    ) -> pd.Series: ...

    @overload
    def mean(
        self: Releases[Grouped],
        column: Hashable,
        *,
        clip: Bounds,
        epsilon: float,
        ci: float,
        max_rows: int | None = None,
        max_groups: int | None = None,
    ) -> pd.DataFrame: ...

    @overload
    def mean(
        self: Releases[Grouped],
        column: Hashable,
        *,
        clip: Bounds,
        epsilon: None = None,
        rho: float,
        ci: float,
        max_rows: int | None = None,
        max_groups: int | None = None,
    ) -> pd.DataFrame: ...

    def mean(
        self,
        column: Hashable | None = None,
        *,
        clip: Any,
        epsilon: float | None = None,
        rho: float | None = None,
        ci: float | None = None,
        max_rows: int | None = None,
        max_groups: int | None = None,
    ) -> Any:
        kind = Mean(column=column, clip=clip, ci=ci, **loss(epsilon, rho))
        return self._spend(kind, max_rows, max_groups)

    @overload
    def var(
        self: Releases[Ungrouped],
        column: Hashable,
        *,
        clip: Any,
        epsilon: float,
        ci: None = None,
        max_rows: int | None = None,
    ) -> float: ...

    @overload
    def var(
        self: Releases[Ungrouped],
        column: Hashable,
        *,
        clip: Any,
        epsilon: float,
        ci: float,
        max_rows: int | None = None,
    ) -> pd.Series: ...

    @overload
    def var(
        self: Releases[Grouped],
        column: Hashable,
        *,
        clip: Any,
        epsilon: float,
        ci: None = None,
        max_rows: int | None = None,
        max_groups: int | None = None,
    ) -> pd.Series: ...

    @overload
    def var(
        self: Releases[Grouped],
        column: Hashable,
        *,
        clip: Any,
        epsilon: float,
        ci: float,
        max_rows: int | None = None,
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
        max_rows: int | None = None,
        max_groups: int | None = None,
    ) -> Any:
        kind = Var.of(pure(epsilon, rho, "var"), column, clip, std=False, ci=ci)
        return self._spend(kind, max_rows, max_groups)

    @overload
    def std(
        self: Releases[Ungrouped],
        column: Hashable,
        *,
        clip: Any,
        epsilon: float,
        ci: None = None,
        max_rows: int | None = None,
    ) -> float: ...

    @overload
    def std(
        self: Releases[Ungrouped],
        column: Hashable,
        *,
        clip: Any,
        epsilon: float,
        ci: float,
        max_rows: int | None = None,
    ) -> pd.Series: ...

    @overload
    def std(
        self: Releases[Grouped],
        column: Hashable,
        *,
        clip: Any,
        epsilon: float,
        ci: None = None,
        max_rows: int | None = None,
        max_groups: int | None = None,
    ) -> pd.Series: ...

    @overload
    def std(
        self: Releases[Grouped],
        column: Hashable,
        *,
        clip: Any,
        epsilon: float,
        ci: float,
        max_rows: int | None = None,
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
        max_rows: int | None = None,
        max_groups: int | None = None,
    ) -> Any:
        kind = Var.of(pure(epsilon, rho, "std"), column, clip, std=True, ci=ci)
        return self._spend(kind, max_rows, max_groups)

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
        max_rows: int | None = None,
        max_groups: int | None = None,
    ) -> Any:
        kind = Argmax.of(
            pure(epsilon, rho, "argmax_exp"), column, candidates, k=k, value=value, clip=clip
        )
        return self._spend(kind, max_rows, max_groups)

    @overload
    def quantile(
        self: Releases[Ungrouped],
        column: Hashable,
        q: float,
        *,
        candidates: Any = None,
        epsilon: float,
        max_rows: int | None = None,
    ) -> float: ...

    @overload
    def quantile(
        self: Releases[Grouped],
        column: Hashable,
        q: float,
        *,
        candidates: Any = None,
        epsilon: float,
        max_rows: int | None = None,
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
        max_rows: int | None = None,
        max_groups: int | None = None,
    ) -> Any:
        kind = Quantile.of(pure(epsilon, rho, "quantile"), column, q, candidates, "quantile")
        return self._spend(kind, max_rows, max_groups)

    @overload
    def median(
        self: Releases[Ungrouped],
        column: Hashable,
        *,
        candidates: Any = None,
        epsilon: float,
        max_rows: int | None = None,
    ) -> float: ...

    @overload
    def median(
        self: Releases[Grouped],
        column: Hashable,
        *,
        candidates: Any = None,
        epsilon: float,
        max_rows: int | None = None,
        max_groups: int | None = None,
    ) -> pd.Series: ...

    def median(
        self,
        column: Hashable,
        *,
        candidates: Any = None,
        epsilon: float | None = None,
        rho: float | None = None,
        max_rows: int | None = None,
        max_groups: int | None = None,
    ) -> Any:
        kind = Quantile.of(pure(epsilon, rho, "median"), column, 0.5, candidates, "median")
        return self._spend(kind, max_rows, max_groups)

    @overload
    def describe(
        self: Releases[Ungrouped],
        columns: Any,
        *,
        clip: Any,
        candidates: Any,
        epsilon: float,
        max_rows: int | None = None,
        ci: None = None,
    ) -> pd.DataFrame: ...

    @overload
    def describe(
        self: Releases[Grouped],
        columns: Any,
        *,
        clip: Any,
        candidates: Any,
        epsilon: float,
        max_rows: int | None = None,
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
        max_rows: int | None = None,
        max_groups: int | None = None,
        ci: None = None,
    ) -> Any:
        kind = Describe.of(pure(epsilon, rho, "describe"), columns, clip, candidates, ci)
        return self._spend(kind, max_rows, max_groups)
