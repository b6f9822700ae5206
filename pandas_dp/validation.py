"""Argument checks that return normalised values.

Each check names the argument, says what it must be and what was given, and
raises before anything is spent.  Only public parameters (epsilon, clip bounds,
argument types) are ever echoed, never data values.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Hashable, Mapping, Sequence
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pandas as pd

__all__ = [
    "ADJACENCIES",
    "Bounds",
    "can_be_missing",
    "check_adjacency",
    "check_clip",
    "check_clip_map",
    "check_column",
    "check_epsilon",
    "check_seed",
    "given",
    "numeric_values",
]

ADJACENCIES = ("add_remove", "substitute")

Clip = tuple[float, float]
#: Clip bounds beyond this magnitude are refused: noisy sums of them could overflow a float.
MAX_CLIP = 1e100
#: What a caller may pass as clip bounds: a pair (lower, upper).
Bounds = Sequence[float]


def given(value: object) -> str:
    """What was given, for a message: never the contents of a data container.

    A Series, frame, Index, array or long list passed by mistake may hold data
    values (and its length may be the private row count), so only its type is
    shown; scalars and short literals are echoed.
    """
    if isinstance(value, pd.Series | pd.DataFrame | pd.Index | np.ndarray):
        return f"a {type(value).__name__}"
    if isinstance(value, list | tuple | set | frozenset | dict) and len(value) > 4:
        return f"a {type(value).__name__} of more than 4 items"
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def check_epsilon(epsilon: object, name: str = "epsilon") -> Fraction:
    """``epsilon`` as an exact Fraction: the shortest decimal that round-trips.

    ``0.1`` becomes exactly ``1/10``, so ten charges of 0.1 spend exactly 1.
    """
    if isinstance(epsilon, bool | np.bool_) or not isinstance(epsilon, numbers.Real | Decimal):
        raise TypeError(f"`{name}` must be a positive finite number, got {given(epsilon)}.")
    if isinstance(epsilon, Fraction):
        value = epsilon
    elif isinstance(epsilon, numbers.Integral):
        value = Fraction(int(epsilon))
    else:
        as_float = float(epsilon)
        if not math.isfinite(as_float):
            raise ValueError(f"`{name}` must be a positive finite number, got {given(epsilon)}.")
        if isinstance(epsilon, Decimal):
            value = Fraction(epsilon)
        elif isinstance(epsilon, np.floating) and not isinstance(epsilon, np.float64):
            # Shortest decimal that round-trips in the value's own precision
            # (np.float32(0.1) -> 1/10, not 0.100000001490116...).
            value = Fraction(np.format_float_positional(epsilon, unique=True, trim="-"))
        else:
            value = Fraction(repr(as_float))
    if value <= 0:
        raise ValueError(f"`{name}` must be a positive finite number, got {given(epsilon)}.")
    return value


def check_adjacency(adjacency: object) -> str:
    if not isinstance(adjacency, str) or adjacency not in ADJACENCIES:
        raise ValueError(
            f"`adjacency` must be one of {ADJACENCIES!r}, got {given(adjacency)}. "
            "'add_remove' (default): a person may be present or absent, so the row count is "
            "private; 'substitute': a person's row may change, the row count is public."
        )
    return adjacency


def check_seed(seed: object) -> int | None:
    if seed is None:
        return None
    if isinstance(seed, bool | np.bool_) or not isinstance(seed, numbers.Integral):
        raise TypeError(f"`seed` must be None or a non-negative integer, got {given(seed)}.")
    if int(seed) < 0:
        raise ValueError(f"`seed` must be None or a non-negative integer, got {given(seed)}.")
    return int(seed)


def check_clip(clip: object, name: str = "clip") -> Clip:
    """``clip`` as a pair of finite floats ``(lower, upper)`` with ``lower < upper``."""
    hint = f"`{name}` must be a pair (lower, upper) of finite numbers with lower < upper"
    if clip is None:
        raise TypeError(
            f"{hint}, got None. Clip bounds are required and must not be read from the data: "
            "choose them from domain knowledge, or privately with df.dp.quantile(...)."
        )
    if isinstance(clip, str | bytes | Mapping) or not hasattr(clip, "__len__"):
        raise TypeError(f"{hint}, got {given(clip)}.")
    items = list(clip)  # type: ignore[call-overload]
    if len(items) != 2:
        raise ValueError(f"{hint}, got {given(clip)}.")
    bounds: list[float] = []
    for item in items:
        if isinstance(item, bool | np.bool_) or not isinstance(item, numbers.Real | Decimal):
            raise TypeError(f"{hint}, got {given(clip)}.")
        bounds.append(float(item))
    lower, upper = bounds
    if not (math.isfinite(lower) and math.isfinite(upper)):
        raise ValueError(f"{hint}, got {given(clip)}.")
    if max(abs(lower), abs(upper)) > MAX_CLIP:
        raise ValueError(f"{hint} within ±{MAX_CLIP:g}, got {given(clip)}.")
    if not lower < upper:
        raise ValueError(f"{hint}, got {given(clip)} (reversed or empty).")
    if not math.isfinite(upper - lower):
        raise ValueError(f"{hint} and a finite width upper - lower, got {given(clip)}.")
    return lower, upper


def check_clip_map(clip: object) -> dict[Hashable, Clip]:
    """A ``{column: (lower, upper)}`` mapping with at least one column."""
    if not isinstance(clip, Mapping) or not clip:
        raise TypeError(
            f"`clip` must be a non-empty mapping {{column: (lower, upper)}}, got {given(clip)}."
        )
    return {col: check_clip(bounds, f"clip[{col!r}]") for col, bounds in clip.items()}


def check_column(df: pd.DataFrame, column: object) -> Hashable:
    """The column label itself; a missing column raises KeyError naming it."""
    if not isinstance(column, Hashable):
        raise TypeError(f"`column` must be a column label, got {given(column)}.")
    if column not in df.columns:
        raise KeyError(column)
    if not df.columns.is_unique and np.count_nonzero(df.columns == column) > 1:
        # df[column] would be a frame: a count over it would count each person twice.
        raise ValueError(
            f"column {column!r} is duplicated in the frame; give columns unique names."
        )
    return column


def numeric_values(df: pd.DataFrame, column: Hashable) -> tuple[np.ndarray, bool]:
    """The column as a float64 array with NaN for missing values, and whether its
    dtype can hold a missing value at all (a schema fact, not a data fact).

    Raises TypeError for a non-numeric column, before anything is spent.
    """
    series = df[column]
    if isinstance(series, pd.DataFrame):
        raise ValueError(
            f"column {column!r} is duplicated in the frame; give columns unique names."
        )
    dtype = series.dtype
    if (
        not pd.api.types.is_numeric_dtype(dtype)
        or pd.api.types.is_complex_dtype(dtype)
        or isinstance(dtype, pd.CategoricalDtype)
    ):
        raise TypeError(
            f"column {column!r} must be numeric for a sum or mean, got dtype {dtype}. "
            "Convert it first, e.g. with df.dp.assign(col=pd.to_numeric(df.col))."
        )
    values = series.to_numpy(dtype=np.float64, na_value=np.nan)
    return values, can_be_missing(dtype)


def can_be_missing(dtype: object) -> bool:
    """Whether a column of this dtype can hold a missing value (numpy ints and bools cannot)."""
    return not (isinstance(dtype, np.dtype) and dtype.kind in "iub")
