"""Argument checks that return normalised values.

Each check names the argument, says what it must be and what was given, and
raises before anything is spent.  Only public parameters (epsilon, clip bounds,
argument types) are ever echoed, never data values.  A column's values are
never checked, only its dtype: a release refuses columns that may hold any
Python object (:func:`check_values`), so no error depends on a value.
"""

from __future__ import annotations

import difflib
import functools
import math
import numbers
from collections.abc import Hashable, ItemsView, KeysView, Mapping, Sequence
from collections.abc import Set as AbstractSet
from decimal import Decimal
from fractions import Fraction
from typing import Any

import numpy as np
import pandas as pd

from . import zcdp
from .errors import MissingColumnError

__all__ = [
    "ADJACENCIES",
    "DASK_PER_UNIT_AGGREGATIONS",
    "MAX_ROWS",
    "PER_UNIT_AGGREGATIONS",
    "Bounds",
    "check_adjacency",
    "check_bound",
    "check_candidates",
    "check_clip",
    "check_clip_map",
    "check_column",
    "check_delta",
    "check_epsilon",
    "check_k",
    "check_keys_dtype",
    "check_keys_match",
    "check_loss",
    "check_ordered",
    "check_per_person",
    "check_per_unit",
    "check_privacy_unit",
    "check_quantile",
    "check_quantile_grid",
    "check_readable",
    "check_rows",
    "check_seed",
    "check_timeout",
    "check_unit_ids",
    "check_values",
    "column_dtype",
    "column_values",
    "given",
    "loss",
    "loss_fields",
    "numeric_values",
    "selection",
    "selection_loss",
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


def _as_float(value: numbers.Real | Decimal) -> float:
    """``value`` as a float, never raising: NaN for every Decimal NaN (quiet or signaling), ±inf
    beyond the float range (a huge int or Fraction), so callers answer with their own message."""
    if isinstance(value, Decimal) and value.is_nan():
        return math.nan
    try:
        return float(value)
    except OverflowError:
        if not isinstance(value, numbers.Rational):
            raise
        return math.inf if int(value.numerator) > 0 else -math.inf


@functools.lru_cache(maxsize=256)
def _shortest_decimal(x: float) -> Fraction:
    """``x`` read as the shortest decimal that round-trips (``0.1`` is ``1/10``)."""
    return Fraction(repr(x))


def check_loss(epsilon: object, rho: object) -> tuple[str, Fraction]:
    """Exactly one of ``epsilon`` / ``rho``: ``("epsilon", ε)`` or ``("rho", ρ)``, exact.

    Every release and ``set_budget`` take their privacy loss through here:
    keyword-only, one of the two (TypeError naming both otherwise).
    """
    if (epsilon is None) == (rho is None):
        raise TypeError(
            "Pass exactly one of `epsilon=` (pure epsilon-DP, Laplace noise) and `rho=` "
            "(zero-concentrated DP, Gaussian noise: needs a budget set with rho=), got "
            + ("neither." if epsilon is None else "both.")
        )
    if rho is not None:
        return "rho", check_epsilon(rho, "rho")
    return "epsilon", check_epsilon(epsilon)


def loss(epsilon: object, rho: object) -> dict[str, Fraction | None]:
    """A release's ``epsilon=`` / ``rho=`` (exactly one) as the fields of a kind that takes both.

    ``rho`` draws discrete Gaussian noise; its budget must be a ρ budget (an
    ε budget refuses it when the release is reserved, before any noise).
    """
    return loss_fields(*check_loss(epsilon, rho))


def loss_fields(accountant: str, amount: Fraction) -> dict[str, Fraction | None]:
    """``amount`` of ``accountant`` (``"epsilon"`` or ``"rho"``) as a kind's two fields."""
    if accountant == "rho":
        return {"epsilon": None, "rho": amount}
    return {"epsilon": amount, "rho": None}


def selection(epsilon: object, rho: object) -> tuple[Fraction, Fraction | None]:
    """A pure-ε release's ``epsilon=`` / ``rho=``: the ε it runs at, and the ρ it is charged.

    See :func:`selection_loss`.
    """
    return selection_loss(*check_loss(epsilon, rho))


def selection_loss(accountant: str, amount: Fraction) -> tuple[Fraction, Fraction | None]:
    """The ε a pure-ε release runs at, and the ρ it is charged (None: charged its ε).

    Given ρ, it runs at the largest ε with ``ε²/2 <= ρ`` (ε-DP is
    ``ε²/2``-zCDP: :func:`pandas_dp.core.zcdp.pure_epsilon`) and is charged exactly
    ``ρ``; only a ρ budget accepts it.
    """
    if accountant == "rho":
        return zcdp.pure_epsilon(amount), amount
    return amount, None


def check_delta(delta: object) -> Fraction:
    """A budget's ``delta`` in [0, 1) as an exact Fraction (None: 0, no δ)."""
    if delta is None:
        return Fraction(0)
    if isinstance(delta, numbers.Real) and not isinstance(delta, bool) and delta == 0:
        return Fraction(0)
    value = check_epsilon(delta, "delta")
    if value >= 1:
        raise ValueError(f"`delta` must be in [0, 1), e.g. delta=1e-6; got {given(delta)}.")
    return value


def check_epsilon(epsilon: object, name: str = "epsilon") -> Fraction:
    """``epsilon`` as an exact Fraction: the shortest decimal that round-trips.

    ``0.1`` becomes exactly ``1/10``, so ten charges of 0.1 spend exactly 1.
    """
    if type(epsilon) is float and 0 < epsilon < math.inf:  # the usual case, without ABC checks
        return _shortest_decimal(epsilon)
    if isinstance(epsilon, bool | np.bool_) or not isinstance(epsilon, numbers.Real | Decimal):
        raise TypeError(f"`{name}` must be a positive finite number, got {given(epsilon)}.")
    if isinstance(epsilon, Fraction):
        value = epsilon
    elif isinstance(epsilon, numbers.Integral):
        value = Fraction(int(epsilon))
    else:
        as_float = _as_float(epsilon)
        if not math.isfinite(as_float):
            raise ValueError(f"`{name}` must be a positive finite number, got {given(epsilon)}.")
        if isinstance(epsilon, Decimal):
            value = Fraction(epsilon)
        elif isinstance(epsilon, np.floating) and not isinstance(epsilon, np.float64):
            # Shortest decimal that round-trips in the value's own precision
            # (np.float32(0.1) -> 1/10, not 0.100000001490116...).
            value = Fraction(np.format_float_positional(epsilon, unique=True, trim="-"))
        else:
            value = _shortest_decimal(as_float)
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


def check_timeout(timeout: object) -> float:
    """A positive, finite number of seconds (a ledger's lock timeout)."""
    if (
        isinstance(timeout, bool)
        or not isinstance(timeout, numbers.Real)
        or not math.isfinite(float(timeout))
        or float(timeout) <= 0
    ):
        raise ValueError(f"`timeout` must be a positive number of seconds, got {timeout!r}.")
    return float(timeout)


def check_seed(seed: object) -> int | None:
    if seed is None:
        return None
    if isinstance(seed, bool | np.bool_) or not isinstance(seed, numbers.Integral):
        raise TypeError(f"`seed` must be None or a non-negative integer, got {given(seed)}.")
    if int(seed) < 0:
        raise ValueError(f"`seed` must be None or a non-negative integer, got {given(seed)}.")
    return int(seed)


#: The number types a clip bound usually has (exactly these: a bool is refused).
_PLAIN = (float, int)


def check_clip(clip: object, name: str = "clip") -> Clip:
    """``clip`` as a pair of finite floats ``(lower, upper)`` with ``lower < upper``."""
    hint = f"`{name}` must be a pair (lower, upper) of finite numbers with lower < upper"
    if clip is None:
        raise TypeError(
            f"{hint}, got None. Clip bounds are required and must not be read from the data: "
            "choose them from domain knowledge, or privately with df.dp.quantile(...)."
        )
    pair = clip if type(clip) is tuple and len(clip) == 2 else ()
    if pair and type(pair[0]) in _PLAIN and type(pair[1]) in _PLAIN:
        # The usual pair of Python floats or ints, without the ABC checks of _bounds.
        lower, upper = _as_float(pair[0]), _as_float(pair[1])
    else:
        lower, upper = _bounds(clip, hint)
    if not (math.isfinite(lower) and math.isfinite(upper)):
        raise ValueError(f"{hint}, got {given(clip)}.")
    if max(abs(lower), abs(upper)) > MAX_CLIP:
        raise ValueError(f"{hint} within ±{MAX_CLIP:g}, got {given(clip)}.")
    if not lower < upper:
        raise ValueError(f"{hint}, got {given(clip)} (reversed or empty).")
    if not math.isfinite(upper - lower):
        raise ValueError(f"{hint} and a finite width upper - lower, got {given(clip)}.")
    return lower, upper


def _bounds(clip: object, hint: str) -> tuple[float, float]:
    """The two numbers of a pair-like ``clip`` as floats (TypeError/ValueError naming ``hint``)."""
    if isinstance(clip, str | bytes | Mapping) or not hasattr(clip, "__len__"):
        raise TypeError(f"{hint}, got {given(clip)}.")
    items = list(clip)  # type: ignore[call-overload]
    if len(items) != 2:
        raise ValueError(f"{hint}, got {given(clip)}.")
    bounds: list[float] = []
    for item in items:
        if isinstance(item, bool | np.bool_) or not isinstance(item, numbers.Real | Decimal):
            raise TypeError(f"{hint}, got {given(clip)}.")
        bounds.append(_as_float(item))
    return bounds[0], bounds[1]


def check_clip_map(clip: object) -> dict[Hashable, Clip]:
    """A ``{column: (lower, upper)}`` mapping with at least one column."""
    if not isinstance(clip, Mapping) or not clip:
        raise TypeError(
            f"`clip` must be a non-empty mapping {{column: (lower, upper)}}, got {given(clip)}."
        )
    return {col: check_clip(bounds, f"clip[{col!r}]") for col, bounds in clip.items()}


#: How many of the frame's columns a missing-column message lists.
_COLUMNS_SHOWN = 30


def _columns_of(df: pd.DataFrame) -> str:
    """The frame's column labels, for a message (schema, not data)."""
    labels = list(df.columns)
    shown = ", ".join(repr(label) for label in labels[:_COLUMNS_SHOWN])
    if len(labels) > _COLUMNS_SHOWN:
        shown += f", ... ({len(labels) - _COLUMNS_SHOWN} more)"
    return f"Its columns: [{shown}]."


def _missing_column(df: pd.DataFrame, column: Hashable) -> str:
    """Which column is missing, the close names, and the frame's columns (schema, not data)."""
    names = {str(label): label for label in df.columns}
    close = difflib.get_close_matches(str(column), list(names), n=3)
    hint = f" Did you mean {' or '.join(repr(names[c]) for c in close)}?" if close else ""
    return f"column {column!r} is not in the frame.{hint} {_columns_of(df)}"


#: int64 sums of rows below 2**31 are exact, and integer scores too, below this many rows.
MAX_ROWS = 1 << 32


def check_rows(df: pd.DataFrame) -> None:
    """Refuse frames of ``MAX_ROWS`` rows or more (its length is compared, never printed)."""
    if len(df) >= MAX_ROWS:
        raise ValueError(f"frames of {MAX_ROWS} rows or more are not supported.")


def check_column(df: pd.DataFrame, column: object) -> Hashable:
    """The column label itself; a missing column raises KeyError naming it."""
    if not isinstance(column, Hashable):
        raise TypeError(f"`column` must be a column label, got {given(column)}.")
    if column not in df.columns:
        if isinstance(column, numbers.Number) and not isinstance(column, bool | np.bool_):
            # df.dp.count(0.1): ε passed where the column goes (or the column left out).
            eps = repr(column.item() if isinstance(column, np.generic) else column)
            raise TypeError(
                f"`epsilon` is keyword-only: write df.dp.count(epsilon={eps}), not "
                f"df.dp.count({eps}). The number {eps} was read as a column label and the "
                "frame has no such column (a release that reads a column takes it first: "
                f"df.dp.mean(column, clip=..., epsilon={eps})). {_columns_of(df)}"
            )
        raise MissingColumnError(_missing_column(df, column))
    if not isinstance(df.columns.get_loc(column), int | np.integer):
        # df[column] would be a frame (a duplicated label, or part of a MultiIndex
        # label): a count over it would count each person more than once.
        raise ValueError(
            f"column {column!r} names several columns of the frame (a duplicated label or part "
            "of a MultiIndex label); name exactly one column."
        )
    return column


def column_values(df: pd.DataFrame, column: Hashable) -> np.ndarray | None:
    """A column stored as a plain numpy array: a read-only view of it; else None.

    ``df[column]`` builds a Series (and copies the frame's ``attrs`` into it):
    a large share of a small release's cost.  A column that pandas stores as a
    numpy array (numbers, bools, objects; not extension or datetime arrays) is
    read as stored, through ``DataFrame._get_column_array``: its array, the same
    values ``df[column].to_numpy()`` gives, made read-only as copy-on-write
    makes those.  None when the label is not exactly one column or pandas
    has no such method: the caller reads ``df[column]`` instead.
    """
    read = getattr(df, "_get_column_array", None)
    loc = df.columns.get_loc(column)
    if read is None or not isinstance(loc, int):
        return None
    stored = read(loc)
    if not isinstance(stored, np.ndarray) or stored.ndim != 1 or len(stored) != len(df):
        return None
    view = stored.view()
    view.flags.writeable = False
    return view


def column_dtype(df: pd.DataFrame, column: Hashable) -> Any:
    """The dtype of ``column`` (one column), read without building its Series when it can be."""
    stored = column_values(df, column)
    return df[column].dtype if stored is None else stored.dtype


def _any_object(dtype: Any) -> bool:
    """Whether a column of this dtype may hold any Python object, or values that cannot be hashed.

    ``object``, a categorical (or sparse) column of ``object`` values, and
    dtypes whose values are lists or dicts (Arrow ``list``, ``struct``).
    Decided from the dtype alone.
    """
    if isinstance(dtype, pd.CategoricalDtype) and dtype.categories is not None:
        dtype = dtype.categories.dtype
    elif isinstance(dtype, pd.SparseDtype):
        dtype = dtype.subtype
    scalar = getattr(dtype, "type", object)
    return bool(dtype == np.dtype(object) or getattr(scalar, "__hash__", None) is None)


def check_values(dtype: Any, column: Hashable) -> None:
    """Refuse a column a release reads (keys, values, candidates) whose dtype admits any object.

    In an ``object`` column one row may hold a list, a dict, a ``range`` or
    ``Decimal('sNaN')``, which pandas cannot hash or compare, or ``True``
    beside ``1``: whether the release raises, or which of two equal forms it
    shows, would then depend on one person's value.  The rule is the dtype's
    (see :func:`_any_object`), checked before anything is spent; the message
    names the column and the conversion, never a value.
    """
    if not _any_object(dtype):
        return
    name = column if isinstance(column, str) and column.isidentifier() else None
    read = f"df[{column!r}]"
    assign = (
        f"df.dp.assign({name}={read}.astype('string'))"
        if name
        else f"df.dp.assign(**{{{column!r}: {read}.astype('string')}})"
    )
    raise TypeError(
        f"column {column!r} has dtype {dtype}, which may hold any Python object (a list, a dict, "
        "a signaling NaN, True beside 1): whether one person's value can be hashed or compared "
        "would decide the release. Convert it first, through a function of every value: "
        f"text with {assign}, numbers with pd.to_numeric({read}), or a categorical of strings "
        f"({read}.astype('string').astype('category'))."
    )


def check_readable(schema: pd.DataFrame, columns: Sequence[Hashable]) -> None:
    """:func:`check_values` of each of ``columns`` (checked to exist) on ``schema``'s dtypes."""
    for label in columns:
        check_column(schema, label)
        check_values(column_dtype(schema, label), label)


def numeric_values(df: pd.DataFrame, column: Hashable) -> np.ndarray:
    """The column as a float64 array with NaN for missing values.

    Raises TypeError for a non-numeric column, before anything is spent.
    """
    stored = column_values(df, column)
    if stored is not None and stored.dtype.kind in "biuf":
        # A numpy number or bool column holds no missing marker but NaN: its values as
        # floats (a float64 column's read-only view), as the Series path below gives them.
        floats: np.ndarray = stored.astype(np.float64, copy=False)
        return floats
    series = df[column]
    if isinstance(series, pd.DataFrame):
        raise ValueError(
            f"column {column!r} is duplicated in the frame; give columns unique names."
        )
    dtype = series.dtype
    if isinstance(dtype, np.dtype) and dtype.kind in "biuf":
        # A numpy number or bool column holds no missing marker but NaN: its values as
        # floats (a float64 column's read-only view), without the checks and the
        # missing-value pass below: the same array.
        plain: np.ndarray = series.to_numpy(dtype=np.float64)
        return plain
    if (
        not pd.api.types.is_numeric_dtype(dtype)
        or pd.api.types.is_complex_dtype(dtype)
        or isinstance(dtype, pd.CategoricalDtype)
    ):
        raise TypeError(
            f"column {column!r} must be numeric for this release, got dtype {dtype}. "
            "Convert it first, e.g. with df.dp.assign(col=pd.to_numeric(df.col))."
        )
    values = series.to_numpy(dtype=np.float64, na_value=np.nan)
    return values


# ---------------------------------------------------------------- candidates

_CANDIDATES_HINT = (
    "Pass the public list of candidates, e.g. candidates=['shoes', 'hats', 'bags'], an array, "
    "a pd.Index or a pd.CategoricalDtype. Candidates must not be read from the data "
    "(df[col].unique()): which values occur can itself reveal who is in the data. Take them from "
    "a product catalogue, a code list or a schema; a candidate with no rows can still win."
)
_GRID_HINT = (
    "Pass a public grid of finite numbers in increasing order, e.g. "
    "candidates=np.linspace(0, 500_000, 1001). Choose it from domain knowledge, never from the "
    "data (no df[col].unique() or sorted values): the answer is always one of these candidates."
)
#: Quantile levels are read as fractions with a denominator at most this.
MAX_QUANTILE_DENOMINATOR = 1 << 20


def check_ordered(values: object, name: str) -> None:
    """Refuse a collection without a fixed order: the result is laid out in its order.

    A ``set``, ``frozenset`` or any other ``collections.abc.Set`` is refused.
    A mapping's ``keys()`` or ``items()`` view is a Set too but follows the
    mapping's order (a dict's is insertion order), so it is accepted.
    """
    if isinstance(values, AbstractSet) and not isinstance(values, KeysView | ItemsView):
        raise TypeError(
            f"`{name}` must have a fixed order (a list, array or Index), got a "
            f"{type(values).__name__}; pass sorted(...) of it."
        )


def _candidate_items(candidates: object, name: str, hint: str) -> pd.Index:
    if candidates is None:
        raise TypeError(f"`{name}` is required: the public set to choose from. {hint}")
    check_ordered(candidates, name)
    if isinstance(candidates, pd.CategoricalDtype):
        if candidates.categories is None:
            raise ValueError(f"`{name}` is a CategoricalDtype without categories; list them.")
        index = pd.Index(candidates.categories)
    elif isinstance(candidates, pd.Index):
        index = candidates
    elif (
        isinstance(candidates, str | bytes | Mapping | pd.DataFrame)
        or not hasattr(candidates, "__iter__")
        or (isinstance(candidates, np.ndarray) and candidates.ndim != 1)
    ):
        raise TypeError(
            f"`{name}` must be a one-dimensional collection, got {type(candidates).__name__}. "
            f"{hint}"
        )
    else:
        index = pd.Index(list(candidates))
    if isinstance(index, pd.MultiIndex):
        raise TypeError(f"`{name}` must name values of one column, got a MultiIndex.")
    if len(index) == 0:
        raise ValueError(f"`{name}` must not be empty. {hint}")
    if index.hasnans:
        raise ValueError(f"`{name}` must not contain missing values.")
    if isinstance(index, pd.IntervalIndex) and index.is_overlapping:
        raise ValueError(f"`{name}` must not overlap: each value may fall in one interval only.")
    if not index.is_unique:
        raise ValueError(f"`{name}` must not contain duplicates (each candidate once).")
    checked: pd.Index = index
    return checked


_KEY_KINDS = {
    "string": "strings",
    "integer": "numbers",
    "floating": "numbers",
    "decimal": "numbers",
    "mixed-integer-float": "numbers",
    "boolean": "booleans",
    "datetime64": "datetimes",
    "datetime": "datetimes",
    "date": "datetimes",
}
#: (what a column holds, what the keys are) pairs that can never match one row.
_NEVER_MATCH = {
    ("numbers", "strings"),
    ("numbers", "datetimes"),
    ("strings", "numbers"),
    ("strings", "booleans"),
    ("strings", "datetimes"),
    ("booleans", "strings"),
    ("booleans", "datetimes"),
    ("datetimes", "numbers"),
    ("datetimes", "booleans"),
}


#: What a column of a numpy dtype holds, by the dtype's kind (the answer of the checks below).
_NUMPY_HOLDS = {"b": "booleans", "i": "numbers", "u": "numbers", "f": "numbers", "c": "numbers"}


def _column_holds(dtype: Any) -> str | None:
    """What a column of this dtype can hold, from the dtype alone (None: anything)."""
    if isinstance(dtype, np.dtype) and dtype.kind in _NUMPY_HOLDS:
        return _NUMPY_HOLDS[dtype.kind]
    if isinstance(dtype, pd.CategoricalDtype):
        dtype = dtype.categories.dtype
    if pd.api.types.is_bool_dtype(dtype):
        return "booleans"
    if pd.api.types.is_numeric_dtype(dtype):
        return "numbers"
    if pd.api.types.is_datetime64_any_dtype(dtype):
        return "datetimes"
    if pd.api.types.is_string_dtype(dtype) and dtype != np.dtype(object):
        return "strings"
    return None  # object and other dtypes may hold anything


def check_keys_match(series: pd.Series, keys: pd.Index, name: str) -> None:
    """Refuse public keys (or candidates) of a type that no value of the column can equal.

    Decided from the column's dtype and the public keys alone, never from the
    column's values: such keys would drop every row and spend epsilon on pure
    noise.
    """
    check_keys_dtype(series.dtype, series.name, keys, name)


def check_keys_dtype(dtype: Any, column: Hashable, keys: pd.Index, name: str) -> None:
    """:func:`check_keys_match` from the dtype of ``column`` (a label) alone."""
    holds = _column_holds(dtype)
    are = _KEY_KINDS.get(pd.api.types.infer_dtype(keys, skipna=True))
    if holds is not None and are is not None and (holds, are) in _NEVER_MATCH:
        raise TypeError(
            f"`{name}` are {are} but column {column!r} holds {holds} (dtype "
            f"{dtype}): no row could ever match them, and the release would be pure "
            f"noise. Pass {name} of the column's type (e.g. [0, 1] rather than ['0', '1'] for "
            "numbers), or convert the column first with df.dp.assign(...)."
        )


def check_candidates(candidates: object, name: str = "candidates") -> pd.Index:
    """The public candidates of a selection as an Index: non-empty, no duplicates, no NaN."""
    return _candidate_items(candidates, name, _CANDIDATES_HINT)


#: The aggregations ``per_unit`` accepts by name: pandas' reductions (one value per group)
#: whose value depends on the person's own rows only.  Left out: transforms and filters
#: (``cumsum``, ``rank``, ``shift``, ``diff``, ``cumcount``, ``head``, ``nth``, ...), which give
#: one row per input row, and ``idxmax``/``idxmin``, which give a row label: a position that
#: moves when other persons' rows are added or removed.
PER_UNIT_AGGREGATIONS = frozenset(
    {
        "all",
        "any",
        "count",
        "first",
        "kurt",
        "last",
        "max",
        "mean",
        "median",
        "min",
        "nunique",
        "prod",
        "quantile",
        "sem",
        "size",
        "skew",
        "std",
        "sum",
        "var",
    }
)
#: The reductions of :data:`PER_UNIT_AGGREGATIONS` that Dask's named aggregation knows.
DASK_PER_UNIT_AGGREGATIONS = PER_UNIT_AGGREGATIONS - {
    "all", "any", "kurt", "nunique", "quantile", "sem", "skew"
}  # fmt: skip
_PER_UNIT_HINT = (
    "per_unit() makes one row per person, so each aggregation must reduce a person's rows to "
    "one value: one of " + ", ".join(repr(name) for name in sorted(PER_UNIT_AGGREGATIONS))
)


class _OneValue:
    """A ``per_unit`` function that must return one value (a scalar) per person.

    A function returning an array, list or Series (``lambda s: s.cumsum()``)
    would put a row's worth of data per person in one cell, or rows in place
    of persons; it is refused with a message that names neither the value nor
    its length.  The function sees the person's values indexed 0, 1, ...: their
    row labels (``s.index[0]``, ``s.idxmax()``) would be row positions, which
    depend on every earlier row.
    """

    __slots__ = ("_function", "_name")

    def __init__(self, function: Any, name: str) -> None:
        self._function = function
        self._name = name

    def __call__(self, values: pd.Series) -> object:
        # the person's values without their row labels: a RangeIndex label is a row's position
        result = self._function(values.reset_index(drop=True))
        if not pd.api.types.is_scalar(result):
            raise TypeError(
                f"The function of `{self._name}` must return one value per person (a number, "
                "string or other scalar), not an array, list or Series: per_unit() makes one row "
                "per person. Use a reducing function, e.g. ('amount', 'sum') or "
                "('amount', lambda s: s.max() - s.min())."
            )
        return result


def check_per_unit(
    unit: Hashable | None,
    aggregations: Mapping[str, object],
    schema: pd.DataFrame,
    engine: str,
) -> dict[str, tuple[Hashable, object]]:
    """The arguments of ``per_unit`` as the named aggregations to run, before anything runs.

    ``schema`` is the frame (or a Dask collection's ``_meta``) whose columns
    and unit dtype are checked; ``engine`` is ``"pandas"`` or ``"dask"``.
    Each aggregation is ``name=(column, function)`` with a function that
    reduces a person's rows to one value: a name of
    :data:`PER_UNIT_AGGREGATIONS`, or (pandas only) a callable, returned
    wrapped so that a non-scalar result raises.
    """
    what, callables = ("frame", True) if engine == "pandas" else ("collection", False)
    if unit is None:
        raise TypeError(
            f"per_unit() needs a privacy unit: this {what} has one row per person already. "
            "Attach the budget with set_budget(..., privacy_unit='customer_id')."
        )
    check_unit_ids(schema[check_column(schema, unit)].dtype, unit)
    if not aggregations:
        raise TypeError("Name at least one aggregation, e.g. per_unit(spend=('amount', 'sum')).")
    checked: dict[str, tuple[Hashable, object]] = {}
    for name, spec in aggregations.items():
        if not isinstance(spec, tuple) or len(spec) != 2:
            raise TypeError(
                f"`{name}` must be a pair (column, function), e.g. ('amount', 'sum'); got "
                f"{type(spec).__name__}."
            )
        column, function = check_column(schema, spec[0]), spec[1]
        if isinstance(function, str):
            if function not in PER_UNIT_AGGREGATIONS:
                raise ValueError(
                    f"`{name}` aggregates with {function!r}, which does not reduce a person's "
                    f"rows to one value. {_PER_UNIT_HINT}."
                )
            if not callables and function not in DASK_PER_UNIT_AGGREGATIONS:
                raise ValueError(
                    f"`{name}` aggregates with {function!r}, which Dask's named aggregation does "
                    "not support; on a Dask collection use one of "
                    + ", ".join(repr(f) for f in sorted(DASK_PER_UNIT_AGGREGATIONS))
                    + ", or ddf.dp.compute() and per_unit on the pandas frame."
                )
        elif callables and callable(function):
            function = _OneValue(function, name)
        else:
            fix = "or a function that returns one value" if callables else "(Dask: by name)"
            raise TypeError(
                f"`{name}` must aggregate with a function name {fix}; got "
                f"{type(function).__name__}. {_PER_UNIT_HINT}."
            )
        checked[name] = (column, function)
    return checked


def check_per_person(indexed_by_persons: bool) -> None:
    """Refuse a ``per_unit`` result that is not indexed by the persons, before it is bound."""
    if not indexed_by_persons:
        raise ValueError(
            "per_unit() must give one row per person, indexed by the unit; these "
            "aggregations did not. Use functions that reduce a person's rows to one value."
        )


def check_bound(value: object, name: str) -> int:
    """A contribution bound (``max_rows``, ``max_groups``): a positive integer."""
    if isinstance(value, bool | np.bool_) or not isinstance(value, numbers.Integral):
        raise TypeError(f"`{name}` must be a positive integer, got {given(value)}.")
    if int(value) < 1:
        raise ValueError(f"`{name}` must be a positive integer, got {given(value)}.")
    return int(value)


def check_k(k: object, n_candidates: int) -> int:
    """``k`` as an int with ``1 <= k <= n_candidates``."""
    if isinstance(k, bool | np.bool_) or not isinstance(k, numbers.Integral):
        raise TypeError(f"`k` must be a positive integer, got {given(k)}.")
    if not 1 <= int(k) <= n_candidates:
        raise ValueError(
            f"`k` must be between 1 and the number of candidates ({n_candidates}), got {int(k)}."
        )
    return int(k)


def check_quantile(q: object) -> Fraction:
    """``q`` in [0, 1] as an exact Fraction (shortest round-tripping decimal).

    ``0.9`` is ``9/10``; a denominator above 2**20 is replaced by the nearest
    fraction with a denominator at most 2**20, so the scores stay integers.
    """
    hint = "`q` must be a number between 0 and 1"
    if isinstance(q, bool | np.bool_) or not isinstance(q, numbers.Real | Decimal):
        raise TypeError(f"{hint}, got {given(q)}.")
    as_float = _as_float(q)
    if not math.isfinite(as_float):
        raise ValueError(f"{hint}, got {given(q)}.")
    if isinstance(q, Fraction | numbers.Integral | Decimal):
        value = Fraction(q)
    else:
        value = Fraction(repr(as_float))
    if not 0 <= value <= 1:
        raise ValueError(f"{hint}, got {given(q)}.")
    return value.limit_denominator(MAX_QUANTILE_DENOMINATOR)


def check_quantile_grid(candidates: object, name: str = "candidates") -> np.ndarray:
    """The public quantile grid as a float64 array: finite and strictly increasing."""
    index = _candidate_items(candidates, name, _GRID_HINT)
    dtype = index.dtype
    if (
        not pd.api.types.is_numeric_dtype(dtype)
        or pd.api.types.is_bool_dtype(dtype)
        or pd.api.types.is_complex_dtype(dtype)
    ):
        raise TypeError(f"`{name}` must be numbers, got dtype {dtype}. {_GRID_HINT}")
    grid = index.to_numpy(dtype=np.float64)
    if not np.isfinite(grid).all():
        raise ValueError(f"`{name}` must be finite numbers (no inf). {_GRID_HINT}")
    # Compared pairwise, not through np.diff: a step from -1.7e308 to 1.7e308 overflows.
    if not (grid[1:] > grid[:-1]).all():
        raise ValueError(f"`{name}` must be sorted in increasing order. {_GRID_HINT}")
    return grid


def _is_unit_dtype(dtype: Any) -> bool:
    """Whether a unit column of this dtype gives one person one id on every engine.

    Integers of any width (numpy, nullable ``Int64``, Arrow), strings (any
    ``string``/``str`` storage, Arrow strings) and categoricals of such
    categories.  Decided from the dtype alone, never from the values.  Refused:
    ``object`` (``1``, ``1.0`` and ``True`` are one id to pandas, three once
    Dask turns them into strings or hashes them per partition), floats
    (``0.0`` and ``-0.0``, rounding, and ids read as floats because one is
    missing), booleans (two ids: a mistake for a unit) and the other dtypes.
    """
    if isinstance(dtype, pd.CategoricalDtype):
        if dtype.categories is None:
            return False
        dtype = dtype.categories.dtype
    if pd.api.types.is_bool_dtype(dtype):
        return False
    if pd.api.types.is_integer_dtype(dtype):
        return True
    return isinstance(dtype, pd.StringDtype) or (
        isinstance(dtype, pd.ArrowDtype) and pd.api.types.is_string_dtype(dtype)
    )


def check_unit_ids(dtype: Any, unit: Hashable) -> None:
    """Refuse a privacy-unit column whose dtype could give one person several ids.

    See :func:`_is_unit_dtype`.  Checked when the unit is declared and again by
    every step that reads the column (a column can be replaced later).
    """
    if not _is_unit_dtype(dtype):
        raise TypeError(
            f"The privacy unit column {unit!r} has dtype {dtype}; it must hold integer, string "
            "or categorical (of integers or strings) ids, so that one person has one id on "
            "every engine: in an object column 1, 1.0 and True are one person to pandas and "
            "three to Dask, and float ids differ by rounding. Convert it before set_budget, "
            f"e.g. df[{unit!r}] = df[{unit!r}].astype('string'), or .astype('int64') for whole "
            "numbers ('Int64' when some ids are missing)."
        )


def check_privacy_unit(
    df: pd.DataFrame, unit: object, max_rows: object, max_groups: object
) -> tuple[Hashable | None, int | None, int | None]:
    """The privacy unit column (checked to exist) and default bounds, before anything is made."""
    if unit is None:
        if max_rows is not None or max_groups is not None:
            raise TypeError(
                "`max_rows` and `max_groups` bound the rows of one person; they go with "
                "`privacy_unit`, the column that identifies a person, e.g. "
                "set_budget(epsilon=3, privacy_unit='customer_id', max_rows=10)."
            )
        return None, None, None
    label = check_column(df, unit)
    check_unit_ids(df[label].dtype, label)
    rows = None if max_rows is None else check_bound(max_rows, "max_rows")
    groups = None if max_groups is None else check_bound(max_groups, "max_groups")
    return label, rows, groups
