"""Docstrings of the surfaces: each release's rendered from its signature, per surface.

pandas shares docstrings between Series and DataFrame (``pandas.util._decorators.doc``
and ``core/shared_docs.py``); so does this module.  A release's docstring is
rendered from its :class:`~pandas_dp.kinds.signature.Signature` for each
surface (:func:`~pandas_dp.kinds.signature.document`), and :func:`for_scope`
gives the method that docstring and the signature of that surface.  The few
methods written by hand (``histogram``, ``value_counts``, ``crosstab``,
``rows_per_unit``) render theirs with :func:`doc`, from the same parameter
paragraphs (:data:`PARAGRAPHS`).
"""

from __future__ import annotations

import inspect
import types
from collections.abc import Callable
from typing import Any, Literal, TypeVar

from ..kinds.signature import (
    CUT_UNIT,
    DELTA,
    MAX_GROUPS,
    MAX_ROWS,
    RHO,
    RHO_SELECT,
    SCOPE_FIELDS,
    Signature,
    document,
    render,
)

__all__ = ["PARAGRAPHS", "doc", "for_scope"]

F = TypeVar("F", bound=Callable[..., Any])

#: Parameter paragraphs a hand-written docstring may use as ``$name`` (written once, in
#: the signatures' vocabulary), and the exceptions every release may raise.
PARAGRAPHS: dict[str, str] = {
    "max_rows": MAX_ROWS.doc,
    "max_groups": MAX_GROUPS.doc,
    "cut_unit": render(CUT_UNIT.doc, SCOPE_FIELDS["grouped"]),  # value_counts: grouped
    "rho": RHO.doc,
    "rho_select": RHO_SELECT.doc,
    "delta": DELTA.doc,
    "raises": "MissingBudgetError, BudgetExceededError, KeyError, ValueError, TypeError",
}


def doc(**fields: str) -> Callable[[F], F]:
    """Render a hand-written method's docstring template with :data:`PARAGRAPHS` and ``fields``."""

    def mark(method: F) -> F:
        method.__doc__ = render(method.__doc__ or "", {**PARAGRAPHS, **fields})
        return method

    return mark


def for_scope(
    owner: type,
    method: Callable[..., Any],
    signature: Signature,
    scope: Literal["ungrouped", "grouped"],
) -> Callable[..., Any]:
    """``method`` as ``owner``'s: the same code, with ``scope``'s docstring and signature.

    The signature shows the parameters of the scope (no ``max_groups`` or
    ``delta`` on an ungrouped surface), so ``help()`` and
    ``inspect.signature`` show what the overloads accept.
    """
    if not isinstance(method, types.FunctionType):
        raise TypeError(f"`method` must be a function, got {type(method).__name__}.")
    copy = types.FunctionType(
        method.__code__,
        method.__globals__,
        method.__name__,
        method.__defaults__,
        method.__closure__,
    )
    copy.__kwdefaults__ = dict(method.__kwdefaults__ or {})
    copy.__qualname__ = f"{owner.__qualname__}.{method.__name__}"
    copy.__annotations__ = dict(method.__annotations__)
    copy.__doc__ = document(signature, scope)
    shown = {p.name for p in signature.scoped("ungrouped" if scope == "ungrouped" else "keyless")}
    full = inspect.signature(method)
    parameters = [p for p in full.parameters.values() if p.name == "self" or p.name in shown]
    pick = 0 if scope == "ungrouped" else 1
    returns = dict.fromkeys(
        part for form in signature.forms for part in form.returns[pick].split(" | ")
    )
    copy.__dict__["__signature__"] = full.replace(
        parameters=parameters, return_annotation=" | ".join(returns)
    )
    return copy
