"""Public numbers as text, in one place: epsilons, clip bounds, ledger figures.

Only public amounts pass through here (epsilons, bounds, sensitivities, noise
scales); never a data value.  Imports nothing of the package.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from fractions import Fraction

__all__ = ["clip_text", "column_names", "epsilon_text", "exact_number", "figures"]


def epsilon_text(x: Fraction) -> str:
    """An epsilon for a message or a view: exact when whole, else ten significant digits."""
    return str(x.numerator) if x.denominator == 1 else f"{float(x):.10g}"


def exact_number(x: float) -> str:
    """The shortest text that reads back as ``x`` exactly, without a trailing ``.0``."""
    text = repr(float(x))
    return text[:-2] if text.endswith(".0") else text


def numbers_text(values: Iterable[float]) -> str:
    """Numbers written exactly (:func:`exact_number`), ``"; "`` apart: a ledger's half-widths."""
    return "; ".join(exact_number(v) for v in values)


def figures(values: Iterable[float | Fraction]) -> str:
    """Sensitivities or noise scales of a ledger entry: six significant digits, ``; `` apart."""
    return "; ".join(f"{float(v):.6g}" for v in values)


def clip_text(clips: Iterable[tuple[float, float]]) -> str:
    """Public clip bounds written exactly: ``[0, 200000]; [-1.5, 2]``, never rounded."""
    return "; ".join(f"[{exact_number(lo)}, {exact_number(hi)}]" for lo, hi in clips)


def column_names(columns: Iterable[Hashable]) -> tuple[str, ...]:
    """Column labels as the ledger records them (names are schema, not data)."""
    return tuple(str(c) for c in columns)
