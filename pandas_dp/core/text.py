"""Public numbers as text, in one place: epsilons, clip bounds, ledger figures.

Only public amounts pass through here (epsilons, bounds, sensitivities, noise
scales); never a data value.  Imports nothing of the package.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable
from fractions import Fraction

__all__ = [
    "clip_text",
    "column_names",
    "epsilon_text",
    "exact_number",
    "figures",
    "labelled_figures",
    "number_text",
]


def number_text(x: float | Fraction, significant: int = 3, *, grouping: bool = True) -> str:
    """A figure as the README writes numbers: the one place where a number becomes text.

    Whole numbers are written in full (``1,948``); others to ``significant``
    significant figures without trailing zeros (``2.67``, ``0.333``,
    ``2,400,000`` for 2396585.8), with thousands separators unless
    ``grouping=False`` (text a reader may paste back as code).  Very small or
    very large magnitudes (below 1e-4, from 1e15) in scientific notation.

    Examples
    --------
    >>> number_text(2396585.818359375), number_text(Fraction(267, 100)), number_text(1948)
    ('2,400,000', '2.67', '1,948')
    >>> number_text(Fraction(10, 3), 10, grouping=False)
    '3.333333333'
    """
    value = float(x)
    if not math.isfinite(value):
        return str(value)
    group = "," if grouping else ""
    if value == int(value) and abs(value) < 1e15:
        whole = x.numerator if isinstance(x, Fraction) else int(value)
        return f"{whole:{group}d}"
    exponent = math.floor(math.log10(abs(value)))
    if exponent < -4 or exponent >= 15:
        return f"{value:.{significant}g}"
    decimals = max(significant - 1 - exponent, 0)
    if not decimals:  # 2396585.8 -> 2400000: round the whole digits too
        value = round(value, significant - 1 - exponent)
    text = f"{value:{group}.{decimals}f}"
    return text.rstrip("0").rstrip(".") if decimals else text


def epsilon_text(x: Fraction) -> str:
    """An epsilon for a message or a view: exact when whole, else ten significant digits.

    Never grouped (``epsilon=1000`` may be pasted back as code).
    """
    return number_text(x, 10, grouping=False)


def labelled_figures(columns: Iterable[str], text: str) -> str:
    """A ledger entry's figures (``"2396585.8; 599146.4"``) for a reader, one per column.

    Each figure through :func:`number_text` with a ``±``; labelled with its
    column when there are several (``"salary ±2,400,000; bonus ±599,000"``).
    Text that is not figures (``"depends on n"``, empty) is returned as it is.
    """
    parts = text.split("; ")
    try:
        values = [float(part) for part in parts]
    except ValueError:
        return text
    names = list(columns)
    shown = [f"±{number_text(v)}" for v in values]
    if len(names) > 1 and len(names) == len(shown):
        shown = [f"{name} {figure}" for name, figure in zip(names, shown, strict=True)]
    return "; ".join(shown)


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
