"""The selection releases of ``df.dp`` and its groupby, each written once.

:class:`Selections` holds ``argmax_exp``, ``quantile``, ``median``, ``bounds``
and ``clipped_share``: releases of ε-DP mechanisms (permute-and-flip,
AboveThreshold, discrete Laplace) with no Gaussian form.  Given ``rho=`` (a
zCDP budget), each runs at the largest ε with ``ε²/2 <= ρ`` and is charged
exactly ρ (:func:`pandas_dp.core.validation.selection`).
:class:`pandas_dp.surface._releases.Releases` inherits them, and renders their
docstrings per surface like its own.

The surface markers :class:`Ungrouped` and :class:`Grouped` live here, the
lowest module whose overloads use them (:mod:`pandas_dp.surface._releases` imports
this one).
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping
from typing import Any, Generic, Literal, TypeVar, overload

import pandas as pd

from ..core.validation import Bounds, selection_loss
from ..kinds.base import Kind
from ..kinds.clip_bounds import ClipBounds, ClippedShare
from ..kinds.select import Argmax, Quantile
from ..pipeline.recipes import Loss, Request

__all__ = ["Grouped", "Selections", "Ungrouped"]

S = TypeVar("S")
C = TypeVar("C")  # a candidate of argmax_exp


class Ungrouped:
    """Marker type of a surface whose releases give one answer (``df.dp``)."""


class Grouped:
    """Marker type of a surface whose releases give one answer per public key."""


class Selections(Generic[S]):
    """The selections written once for ``df.dp`` (``S = Ungrouped``) and its groupby."""

    def _request(self, request: Request) -> Any:
        """Hand a call down (see :meth:`pandas_dp.surface._releases.Releases._request`)."""
        raise NotImplementedError

    @overload
    def argmax_exp(
        self: Selections[Ungrouped],
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
        self: Selections[Ungrouped],
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
        self: Selections[Ungrouped],
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
        self: Selections[Ungrouped],
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
        self: Selections[Grouped],
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
        self: Selections[Grouped],
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

    @overload
    def argmax_exp(
        self: Selections[Ungrouped],
        column: Hashable,
        *,
        candidates: Any,
        epsilon: None = None,
        rho: float,
        k: int | None = ...,
        value: Hashable | None = ...,
        clip: Any = ...,
        max_rows: int | None = ...,
    ) -> Any: ...

    @overload
    def argmax_exp(
        self: Selections[Grouped],
        column: Hashable,
        *,
        candidates: Any = ...,
        epsilon: None = None,
        rho: float,
        k: int | None = ...,
        value: Hashable | None = ...,
        clip: Any = ...,
        max_rows: int | None = ...,
        max_groups: int | None = ...,
    ) -> pd.Series | pd.DataFrame: ...

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
        args = {"column": column, "candidates": candidates, "epsilon": epsilon, "rho": rho}
        args |= {"k": k, "value": value, "clip_value": clip}
        args |= {"max_rows": max_rows, "max_groups": max_groups}
        return self._request(Request(_argmax, args))

    @overload
    def quantile(
        self: Selections[Ungrouped],
        column: Hashable,
        q: float,
        *,
        candidates: Any = None,
        epsilon: float,
        max_rows: int | Literal["auto"] | None = None,
    ) -> float: ...

    @overload
    def quantile(
        self: Selections[Ungrouped],
        column: Hashable,
        q: float,
        *,
        candidates: Any = None,
        epsilon: None = None,
        rho: float,
        max_rows: int | Literal["auto"] | None = None,
    ) -> float: ...

    @overload
    def quantile(
        self: Selections[Grouped],
        column: Hashable,
        q: float,
        *,
        candidates: Any = None,
        epsilon: float,
        max_rows: int | Literal["auto"] | None = None,
        max_groups: int | None = None,
    ) -> pd.Series: ...

    @overload
    def quantile(
        self: Selections[Grouped],
        column: Hashable,
        q: float,
        *,
        candidates: Any = None,
        epsilon: None = None,
        rho: float,
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
        args = {"column": column, "q": q, "candidates": candidates, "epsilon": epsilon}
        args |= {"rho": rho, "max_rows": max_rows, "max_groups": max_groups}
        return self._request(Request(_quantile, args))

    @overload
    def median(
        self: Selections[Ungrouped],
        column: Hashable,
        *,
        candidates: Any = None,
        epsilon: float,
        max_rows: int | Literal["auto"] | None = None,
    ) -> float: ...

    @overload
    def median(
        self: Selections[Ungrouped],
        column: Hashable,
        *,
        candidates: Any = None,
        epsilon: None = None,
        rho: float,
        max_rows: int | Literal["auto"] | None = None,
    ) -> float: ...

    @overload
    def median(
        self: Selections[Grouped],
        column: Hashable,
        *,
        candidates: Any = None,
        epsilon: float,
        max_rows: int | Literal["auto"] | None = None,
        max_groups: int | None = None,
    ) -> pd.Series: ...

    @overload
    def median(
        self: Selections[Grouped],
        column: Hashable,
        *,
        candidates: Any = None,
        epsilon: None = None,
        rho: float,
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
        args = {"column": column, "candidates": candidates, "epsilon": epsilon, "rho": rho}
        args |= {"max_rows": max_rows, "max_groups": max_groups}
        return self._request(Request(_median, args))

    @overload
    def bounds(
        self: Selections[Ungrouped],
        column: Hashable,
        *,
        epsilon: float,
        max_rows: int | Literal["auto"] | None = None,
    ) -> tuple[float, float]: ...

    @overload
    def bounds(
        self: Selections[Ungrouped],
        column: Hashable,
        *,
        epsilon: None = None,
        rho: float,
        max_rows: int | Literal["auto"] | None = None,
    ) -> tuple[float, float]: ...

    @overload
    def bounds(
        self: Selections[Grouped],
        column: Hashable,
        *,
        epsilon: float,
        max_rows: int | Literal["auto"] | None = None,
        max_groups: int | None = None,
    ) -> pd.DataFrame: ...

    @overload
    def bounds(
        self: Selections[Grouped],
        column: Hashable,
        *,
        epsilon: None = None,
        rho: float,
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
        args = {"column": column, "epsilon": epsilon, "rho": rho}
        args |= {"max_rows": max_rows, "max_groups": max_groups}
        return self._request(Request(_bounds, args))

    @overload
    def clipped_share(
        self: Selections[Ungrouped],
        column: Hashable,
        *,
        clip: Bounds,
        epsilon: float,
        max_rows: int | Literal["auto"] | None = None,
    ) -> float: ...

    @overload
    def clipped_share(
        self: Selections[Ungrouped],
        column: Hashable,
        *,
        clip: Bounds,
        epsilon: None = None,
        rho: float,
        max_rows: int | Literal["auto"] | None = None,
    ) -> float: ...

    @overload
    def clipped_share(
        self: Selections[Grouped],
        column: Hashable,
        *,
        clip: Bounds,
        epsilon: float,
        max_rows: int | Literal["auto"] | None = None,
        max_groups: int | None = None,
    ) -> pd.Series: ...

    @overload
    def clipped_share(
        self: Selections[Grouped],
        column: Hashable,
        *,
        clip: Bounds,
        epsilon: None = None,
        rho: float,
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
        args = {"column": column, "clip_share": clip, "epsilon": epsilon, "rho": rho}
        args |= {"max_rows": max_rows, "max_groups": max_groups}
        return self._request(Request(_clipped_share, args))


# ------------------------------------------------- what each call builds


def _argmax(args: Mapping[str, Any], loss: Loss) -> Kind[Any, Any]:
    epsilon, charged = selection_loss(*loss)
    return Argmax.of(
        epsilon,
        args["column"],
        args["candidates"],
        k=args["k"],
        value=args["value"],
        clip=args["clip_value"],
        rho=charged,
    )


def _quantile(args: Mapping[str, Any], loss: Loss) -> Kind[Any, Any]:
    epsilon, charged = selection_loss(*loss)
    return Quantile.of(epsilon, args["column"], args["q"], args["candidates"], "quantile", charged)


def _median(args: Mapping[str, Any], loss: Loss) -> Kind[Any, Any]:
    epsilon, charged = selection_loss(*loss)
    return Quantile.of(epsilon, args["column"], 0.5, args["candidates"], "median", charged)


def _bounds(args: Mapping[str, Any], loss: Loss) -> Kind[Any, Any]:
    epsilon, charged = selection_loss(*loss)
    return ClipBounds(epsilon, args["column"], rho=charged)


def _clipped_share(args: Mapping[str, Any], loss: Loss) -> Kind[Any, Any]:
    epsilon, charged = selection_loss(*loss)
    return ClippedShare(epsilon, args["column"], args["clip_share"], rho=charged)
