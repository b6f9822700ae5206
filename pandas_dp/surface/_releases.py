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

from typing import Any, Literal, TypeVar

from ..kinds.signature import Signature
from ..mechanisms.keys import Grouping
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

    def _call(self, signature: Signature, /, **args: Any) -> Any:
        """Hand a call down to the pipeline (:func:`pandas_dp.pipeline.recipes.answer`)."""
        request = Request(
            signature.build,
            args,
            signature.columns(args),
            table=signature.table,
            clipped=signature.clipped,
            name=signature.name,
        )
        return answer(self._frame(), self._grouping(), request)
