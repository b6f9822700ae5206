"""Row-wise masks: the expression checker of ``df.dp.query`` and the mask dtype rule.

A derived frame spends the budget of the frame it came from with the same
sensitivity only if each row's membership (or new value) depends on that row
alone and on public constants. ``x > x.mean()`` breaks this: one person's value
moves the mean, and with it every other row in or out of the result, so a count
of that frame can change by many where the release assumes one.

:func:`check_rowwise` reads a ``DataFrame.eval`` expression with Python's
:mod:`ast` (after the same token rewriting pandas applies: ``@name``,
backtick-quoted columns, ``&``/``|`` as ``and``/``or``) and accepts only an
allowlist of row-wise operations, before anything is evaluated. Everything not
on the list is refused (fail closed). Given the frame, it also resolves each name
as ``DataFrame.eval`` does (columns first, then the index) and refuses the
index: a row's position (or label) is not a value of the row. It refuses
``object`` columns too: whether an operation on one works depends on the values
it holds.

:func:`query_values` checks the ``@name`` values (public scalars, and lists of
them only after a membership test), and :func:`evaluate` runs ``eval`` with one
fixed message for whatever it raises, since pandas' own may quote the data.

:func:`row_mask` turns a mask into a numpy boolean array deciding from its dtype
alone: numpy ``bool``, pandas ``boolean`` or ``bool[pyarrow]``; a missing value
is False (as in SQL's ``WHERE``), so whether the data hold one is never told by
an acceptance or a refusal.
"""

from __future__ import annotations

import ast
import datetime
import decimal
import fractions
import io
import sys
import tokenize
from collections.abc import Hashable, Mapping
from typing import Any, NoReturn

import numpy as np
import pandas as pd
from pandas.core.computation.parsing import clean_column_name  # type: ignore[import-not-found]

from ..core.errors import MissingColumnError

__all__ = [
    "check_rowwise",
    "evaluate",
    "is_boolean_dtype",
    "is_string_dtype",
    "query_values",
    "row_mask",
]

#: Placeholder prefixes for ``@name`` and backtick-quoted column names.
_LOCAL = "__pandas_dp_local_"
_COLUMN = "__pandas_dp_column_"

#: ``DataFrame.eval``'s elementwise math functions (pandas.core.computation.ops.MATHOPS).
MATH_FUNCTIONS = frozenset(
    {
        "sin", "cos", "tan", "exp", "log", "expm1", "log1p", "sqrt", "sinh", "cosh", "tanh",
        "arcsin", "arccos", "arctan", "arccosh", "arcsinh", "arctanh", "abs", "log10", "floor",
        "ceil", "arctan2",
    }
)  # fmt: skip

#: Methods of a row-wise value; every argument must be a public constant.
METHODS = frozenset({"isin", "between", "isna", "notna", "isnull", "notnull", "abs"})

#: ``.str`` methods that return a string per row (and so may be chained).
STR_TO_STR = frozenset(
    {
        "lower", "upper", "strip", "lstrip", "rstrip", "title", "capitalize", "casefold",
        "swapcase", "slice", "slice_replace", "replace", "get", "zfill", "pad", "center",
        "ljust", "rjust", "removeprefix", "removesuffix", "repeat", "normalize",
    }
)  # fmt: skip

#: Elementwise ``.str`` methods. Not ``cat`` (joins rows), ``get_dummies``, ``split``/``extract``
#: (frames whose width depends on the data), nor ``index``/``rindex`` (raise on data).
STR_METHODS = STR_TO_STR | frozenset(
    {
        "contains", "startswith", "endswith", "match", "fullmatch", "len", "find", "rfind",
        "count", "isalpha", "isdigit", "isnumeric", "isalnum", "isspace", "islower", "isupper",
        "istitle", "isdecimal", "isascii",
    }
)  # fmt: skip

#: ``.dt`` fields. Not ``freq`` (inferred from all rows) nor ``tz``/``unit`` (not per row).
DT_FIELDS = frozenset(
    {
        "year", "month", "day", "hour", "minute", "second", "microsecond", "nanosecond",
        "dayofweek", "day_of_week", "weekday", "dayofyear", "day_of_year", "quarter",
        "days_in_month", "daysinmonth", "is_month_start", "is_month_end", "is_quarter_start",
        "is_quarter_end", "is_year_start", "is_year_end", "is_leap_year", "date", "time",
        "days", "seconds", "microseconds", "nanoseconds",
    }
)  # fmt: skip

#: ``.dt`` methods. ``floor``/``ceil``/``round`` take ``freq`` only: their ``ambiguous="infer"``
#: reads daylight-saving transitions from the order of all rows.
DT_METHODS = frozenset(
    {"normalize", "day_name", "month_name", "total_seconds", "strftime", "floor", "ceil", "round"}
)
_DT_FREQ_ONLY = frozenset({"floor", "ceil", "round"})

_BOOL_OPS = (ast.And, ast.Or)
_UNARY_OPS = (ast.Not, ast.Invert, ast.USub, ast.UAdd)
_BIN_OPS = (
    ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow, ast.BitAnd, ast.BitOr,
)  # fmt: skip
_ORDER_OPS = (ast.Lt, ast.LtE, ast.Gt, ast.GtE)
_EQ_OPS = (ast.Eq, ast.NotEq)
_IN_OPS = (ast.In, ast.NotIn)
_CONSTANT_TYPES = (str, int, float, bool, type(None))
#: Names pandas-eval resolves to constants, never to a column.
_CONSTANT_NAMES = frozenset({"inf", "Inf"})

_ROW_WISE = (
    "a row's mask may depend only on that row and on public constants: a function that looks "
    "across rows lets one person's value move other people in or out"
)
_FIX = (
    "To compare with a statistic of the data, compute it privately and pass it in as @name, "
    "e.g. cut = df.dp.quantile('x', 0.9, candidates=grid, epsilon=0.1); "
    "df.dp.query('x > @cut')."
)


def _refuse(what: str) -> NoReturn:
    raise ValueError(
        f"`expr` may not use {what}: only row-wise operations are allowed (comparisons, "
        "arithmetic, and/or/not, in [constants], isin/between/isna/notna/abs, .str and .dt "
        f"methods, elementwise math), because {_ROW_WISE}. {_FIX}"
    )


# ------------------------------------------------------------------- parsing


def _split_by_backtick(source: str) -> list[tuple[bool, str]]:
    """``source`` cut at backtick-quoted names outside quotes, as pandas cuts it.

    A mirror of ``pandas.core.computation.parsing._split_by_backtick`` (pandas 3.1):
    a doubled backtick inside a quoted name is a literal backtick; quotes inside
    backticks do not open a string.
    """
    pieces: list[tuple[bool, str]] = []
    current: list[str] = []
    state = ""  # "", "`", "'" or '"'
    i = 0
    while i < len(source):
        char = source[i]
        if char == "`" and state == "":
            if current:
                pieces.append((False, "".join(current)))
            current, state = [char], "`"
            i += 1
            continue
        if char == "`" and state == "`":
            if source[i + 1 : i + 2] == "`":
                current.append("``")
                i += 2
                continue
            current.append(char)
            pieces.append((True, "".join(current)))
            current, state = [], ""
            i += 1
            continue
        if char in "'\"":
            if state == "":
                state = char
            elif state == char and source[i - 1] != "\\":
                state = ""
        current.append(char)
        i += 1
    if current:
        pieces.append((False, "".join(current)))
    return pieces


def _preparse(expr: str) -> tuple[str, dict[str, str]]:
    """Python source for a pandas-parser expression, and the column label of each placeholder.

    The token rewriting of pandas' ``PandasExprVisitor``: ``@name`` becomes a
    local placeholder name, a backtick-quoted name a column placeholder, and
    ``&``/``|`` become ``and``/``or`` (pandas gives them boolean precedence).
    """
    labels: dict[str, str] = {}
    parts = []
    for quoted, text in _split_by_backtick(expr):
        if quoted:
            name = f"{_COLUMN}{len(labels)}"
            labels[name] = text[1:-1].replace("``", "`")
            parts.append(name)
        else:
            parts.append(text)
    tokens: list[tuple[int, str]] = []
    try:
        for token in tokenize.generate_tokens(io.StringIO("".join(parts)).readline):
            kind, text = token.type, token.string
            if kind == tokenize.OP and text == "@":
                tokens.append((tokenize.OP, _LOCAL))
            elif kind == tokenize.OP and text in ("&", "|"):
                tokens.append((tokenize.NAME, "and" if text == "&" else "or"))
            else:
                tokens.append((kind, text))
    except (tokenize.TokenError, SyntaxError) as err:
        raise SyntaxError(f"`expr` is not a valid expression: {err.args[0]}") from None
    return tokenize.untokenize(tokens), labels


def _parse(expr: str, parser: str) -> tuple[ast.expr, dict[str, str]]:
    if parser == "pandas":
        source, labels = _preparse(expr)
    elif parser == "python":
        source, labels = expr, {}
    else:
        raise ValueError(f"`parser` must be 'pandas' or 'python', got {parser!r}.")
    try:
        module = ast.parse(source.strip(), mode="exec")
    except SyntaxError as err:
        raise SyntaxError(f"`expr` is not a valid expression: {err.msg}") from None
    if len(module.body) == 1 and isinstance(module.body[0], ast.Expr):
        return module.body[0].value, labels
    if any(isinstance(s, ast.Assign | ast.AugAssign | ast.AnnAssign) for s in module.body):
        raise TypeError(
            "`expr` must be a boolean expression per row, not an assignment; add columns with "
            "df.dp.assign(...)."
        )
    raise ValueError("`expr` must be a single expression.")


# ------------------------------------------------------------------- checking


class _Checker:
    """Walks an expression and refuses anything not known to be row-wise."""

    def __init__(self, labels: dict[str, str], frame: pd.DataFrame | None):
        self.labels = labels
        self.frame = frame
        #: ``DataFrame.eval``'s name of each column -> its position (the last of a name wins).
        self.columns: dict[Hashable, int] = {}
        self.axes: frozenset[Hashable] = frozenset()
        if frame is not None:
            self.columns = {clean_column_name(label): i for i, label in enumerate(frame.columns)}
            self.axes = axis_names(frame)

    def show(self, node: ast.expr) -> str:
        """A short name for ``node`` in a message: never a data value."""
        if isinstance(node, ast.Name):
            if node.id.startswith(_LOCAL):
                return f"@{node.id[len(_LOCAL) :]}"
            if node.id in self.labels:
                return f"`{self.labels[node.id]}`"
            return node.id
        if isinstance(node, ast.Attribute):
            return f"{self.show(node.value)}.{node.attr}"
        if isinstance(node, ast.Call):
            return f"{self.show(node.func)}(...)"
        return "(...)"

    # -- values that vary by row

    def row_wise(self, node: ast.expr) -> None:
        if isinstance(node, ast.Constant):
            self.constant(node)
        elif isinstance(node, ast.Name):
            self.name(node)  # a column or a constant (never the index), or an @name
        elif isinstance(node, ast.BoolOp) and isinstance(node.op, _BOOL_OPS):
            for value in node.values:
                self.row_wise(value)
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, _UNARY_OPS):
            self.row_wise(node.operand)
        elif isinstance(node, ast.BinOp) and isinstance(node.op, _BIN_OPS):
            self.row_wise(node.left)
            self.row_wise(node.right)
            if isinstance(node.op, ast.Pow) and not self.is_public(node.right):
                raise ValueError(
                    "`expr` may use `**` only with a constant power (a number or an @name): "
                    "whether pandas can raise a column to a power that varies by row (an "
                    "integer to a negative power) would depend on the data."
                )
        elif isinstance(node, ast.Compare):
            self.compare(node)
        elif isinstance(node, ast.Call):
            self.call(node)
        elif isinstance(node, ast.Attribute):
            self.attribute(node)
        elif isinstance(node, ast.Subscript):
            _refuse("indexing with [...] (it reads other rows)")
        elif isinstance(node, ast.List | ast.Tuple):
            _refuse("a list here (lists of constants go after `in`, or into isin)")
        else:
            _refuse(f"this syntax ({type(node).__name__})")

    def name(self, node: ast.Name) -> object:
        """The dtype of the column ``node`` names; None for a constant, an @name, or no frame.

        Resolved as ``DataFrame.eval`` resolves it (``DataFrame.eval`` puts the
        column resolvers before the index resolvers): ``inf`` is a constant even
        beside a column of that name, then a column wins, then a name of the
        index or column axis (``index``, ``ilevel_0``, a level's name, ...) is
        refused, and any other name is not in the frame.
        """
        if node.id.startswith(_LOCAL) or self.frame is None:
            return None
        label = self.labels.get(node.id, node.id)
        key = clean_column_name(label) if node.id in self.labels else node.id
        if key in _CONSTANT_NAMES:
            return None
        position = self.columns.get(key)
        if position is None and key in self.axes:
            raise ValueError(
                f"`expr` may not use `{label}`: it names the frame's index (or its column "
                "labels), and a row's position is not a value of that row. A RangeIndex (what "
                "read_csv gives) moves every later row when one person is added or removed "
                "earlier in the file, so a split such as `index % 2 == 0` lets one person move "
                "many rows in or out. Split on a column of the row itself instead, e.g. "
                "df.dp.query('id % 2 == 0') on a person id."
            )
        if position is None:
            raise MissingColumnError(
                f"`expr` names {label!r}, which is not a column of the frame (a value from your "
                f"scope is written @{label})."
            )
        if self.frame.columns.duplicated(keep=False)[position]:
            raise ValueError(
                f"`expr` names {label!r}, which labels several columns of the frame; give the "
                "columns unique names."
            )
        dtype = self.frame.dtypes.iloc[position]
        if pd.api.types.is_object_dtype(dtype):
            raise TypeError(
                f"`expr` reads the column {label!r} of dtype object: such a column may hold "
                "values of any type, so whether an operation on it works would depend on the "
                "data. Convert it to a string dtype, 'boolean', a number or 'category' first, "
                f"e.g. df.dp.assign(**{{{label!r}: df[{label!r}].astype('string')}})."
            )
        return dtype

    def constant(self, node: ast.Constant) -> None:
        if not isinstance(node.value, _CONSTANT_TYPES):
            _refuse(f"a constant of type {type(node.value).__name__}")

    def compare(self, node: ast.Compare) -> None:
        left = node.left
        for op, right in zip(node.ops, node.comparators, strict=True):
            if isinstance(op, _IN_OPS):
                # `x in y` with a column y is x.isin(y): is the value anywhere in the column.
                self.row_wise(left)
                if not self.is_public(right):
                    _refuse(
                        f"`in` with {self.show(right)} (after `in` put a list of constants "
                        "or an @name)"
                    )
            elif isinstance(op, _EQ_OPS + _ORDER_OPS):
                for side in (left, right):
                    if isinstance(side, ast.List | ast.Tuple) and isinstance(op, _EQ_OPS):
                        self.public(side)  # pandas reads `x == [1, 2]` as `x in [1, 2]`
                    else:
                        self.row_wise(side)
            else:
                _refuse(f"the comparison {type(op).__name__}")
            left = right

    # -- public constants (arguments of methods, right side of `in`)

    def is_public(self, node: ast.expr) -> bool:
        if isinstance(node, ast.Constant):
            return isinstance(node.value, _CONSTANT_TYPES)
        if isinstance(node, ast.Name):
            return node.id.startswith(_LOCAL) or node.id in _CONSTANT_NAMES
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
            return isinstance(node.operand, ast.Constant | ast.Name) and self.is_public(
                node.operand
            )
        if isinstance(node, ast.List | ast.Tuple):
            return all(
                self.is_public(e) and not isinstance(e, ast.List | ast.Tuple) for e in node.elts
            )
        return False

    def public(self, node: ast.expr) -> None:
        if not self.is_public(node):
            _refuse(
                f"{self.show(node)} as an argument (arguments must be constants, lists of "
                "constants, or @names)"
            )

    # -- calls and attributes

    def arguments(self, node: ast.Call) -> None:
        for arg in node.args:
            self.public(arg)
        for keyword in node.keywords:
            if keyword.arg is None:
                _refuse("**keyword arguments")
            self.public(keyword.value)

    def receiver(self, node: ast.expr) -> None:
        """The value a method is called on: row-wise, not an @name (attributes of public objects
        are not checked: an @name is a value, e.g. ``@df.x.mean()`` is refused)."""
        if isinstance(node, ast.Name) and node.id.startswith(_LOCAL):
            _refuse(f"attributes of {self.show(node)} (pass the value itself as an @name)")
        if isinstance(node, ast.Constant):
            _refuse("methods of a constant")
        self.row_wise(node)

    def call(self, node: ast.Call) -> None:
        func = node.func
        if isinstance(func, ast.Name):
            name = self.show(func)
            if func.id in MATH_FUNCTIONS:
                if node.keywords:
                    _refuse(f"keyword arguments of {name}")
                for arg in node.args:
                    self.row_wise(arg)
            else:
                _refuse(f"the function {name}")
            return
        if not isinstance(func, ast.Attribute):
            _refuse("this call")
        owner, method = func.value, func.attr
        if isinstance(owner, ast.Attribute) and owner.attr == "str":
            if method not in STR_METHODS:
                _refuse(f"`.str.{method}`")
            self.string_receiver(owner.value)
        elif isinstance(owner, ast.Attribute) and owner.attr == "dt":
            if method not in DT_METHODS:
                _refuse(f"`.dt.{method}`")
            if method in _DT_FREQ_ONLY and (
                len(node.args) > 1 or any(k.arg != "freq" for k in node.keywords)
            ):
                _refuse(f"`.dt.{method}` with arguments other than freq")
            self.receiver(owner.value)
        elif method in METHODS:
            self.receiver(owner)
        else:
            _refuse(f"`{method}`")
        self.arguments(node)

    def attribute(self, node: ast.Attribute) -> None:
        owner = node.value
        if isinstance(owner, ast.Attribute) and owner.attr == "dt" and node.attr in DT_FIELDS:
            self.receiver(owner.value)
            return
        if isinstance(owner, ast.Attribute) and owner.attr in ("dt", "str"):
            _refuse(f"`.{owner.attr}.{node.attr}`")
        _refuse(f"`{node.attr}`")

    def string_receiver(self, node: ast.expr) -> None:
        """``.str`` on a column of a string dtype, or on a string-returning ``.str`` method.

        On an ``object`` column pandas returns ``bool`` without missing values and
        ``object`` with them; the dtype rule would then tell which.
        """
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Attribute)
            and node.func.value.attr == "str"
            and node.func.attr in STR_TO_STR
        ):
            self.call(node)
            return
        self.receiver(node)
        if self.frame is None:
            return
        if not isinstance(node, ast.Name) or not is_string_dtype(self.name(node)):
            raise TypeError(
                f"`.str` methods in `expr` need a column of a string dtype ('str' or 'string'); "
                f"{self.show(node)} is not one. Convert it first, e.g. "
                "df.dp.assign(name=df['name'].astype('string'))."
            )


def axis_names(frame: pd.DataFrame) -> frozenset[Hashable]:
    """The names ``DataFrame.eval`` resolves to the frame's axes rather than to a column.

    As pandas' ``NDFrame._get_index_resolvers`` makes them: each level of the
    index by its name, or ``ilevel_<i>`` when it has none, then ``index``; the
    same for the column labels (``clevel_<i>``, ``columns``); cleaned like a
    backtick-quoted name, integer names left out. A column of the same name
    comes first (see :meth:`_Checker.name`).
    """
    names: list[Hashable] = []
    for axis in ("index", "columns"):
        levels = getattr(frame, axis).names
        names += [f"{axis[0]}level_{i}" if n is None else n for i, n in enumerate(levels)]
        names.append(axis)
    return frozenset(clean_column_name(n) for n in names if not isinstance(n, int))


def check_rowwise(expr: str, *, parser: str = "pandas", frame: pd.DataFrame | None = None) -> None:
    """Refuse ``expr`` unless every row's value depends only on that row and on public constants.

    Nothing is evaluated. ``@name`` values are checked by :func:`query_values`.

    Parameters
    ----------
    expr : str
        A ``DataFrame.eval`` expression.
    parser : {"pandas", "python"}
        The parser ``DataFrame.eval`` will use.
    frame : pandas.DataFrame, optional
        The frame ``expr`` will run on (for Dask, its ``_meta``): only its
        labels and dtypes are read. Each name is then resolved as
        ``DataFrame.eval`` resolves it; the index, unknown names, ``object``
        columns, and ``.str`` on a column not of a string dtype are refused.
        ``None`` checks the expression alone.

    Raises
    ------
    ValueError
        If ``expr`` uses anything not on the row-wise allowlist, or a name that
        resolves to the index (``index``, ``ilevel_0``, an index level's name);
        the message names it. Also if ``expr`` is not a single expression, or
        ``parser`` is unknown.
    TypeError
        If ``expr`` is an assignment, reads a column of dtype ``object``, or uses
        ``.str`` on a column that is not of a string dtype.
    KeyError
        If ``expr`` names something that is not a column of ``frame``.
    SyntaxError
        If ``expr`` does not parse.
    """
    node, labels = _parse(expr, parser)
    _Checker(labels, frame).row_wise(node)


#: The types of an ``@name`` used as a value: exact types, so that no subclass can bring
#: its own comparison (a custom object could answer per row with values of other rows).
SCALAR_TYPES = frozenset(
    {
        bool, int, float, complex, str, bytes, type(None), decimal.Decimal, fractions.Fraction,
        datetime.datetime, datetime.date, datetime.time, datetime.timedelta, pd.Timestamp,
        pd.Timedelta, pd.Period, type(pd.NaT), type(pd.NA),
    }
    | {t for t in np.sctypeDict.values() if t not in (np.object_, np.void)}
)  # fmt: skip

#: List-likes an ``@name`` may hold after ``in`` / ``not in`` (and in ``isin``): pandas reads
#: them as a set of values. After ``==`` / ``!=`` pandas reads only a list so (as ``in``): it
#: compares a tuple, a set or an array row by row.
_IN_TYPES = (list, tuple, set, frozenset)
_EQ_TYPES = (list,)

_ACCEPTED = (
    "an @name must be a public constant: a number, a string, a bool, None, a date or time "
    "(Timestamp, Timedelta, datetime, ...) or a numpy scalar; a list, tuple or set of these only "
    "after `in` / `not in` or in isin(...) (a list also after `==` / `!=`, which pandas reads as "
    "`in`). Never values computed from the rows: for a statistic of the data, compute it "
    "privately (e.g. cut = df.dp.quantile('x', 0.9, candidates=grid, epsilon=0.1)) and pass it "
    "as @cut."
)


def _membership(node: ast.expr) -> dict[int, tuple[type, ...]]:
    """The ``@name`` nodes of ``node`` that are a set of values, and the list-likes each may be.

    The right side of ``in`` / ``not in`` or of ``==`` / ``!=`` (unless it is
    also the left side of a chained comparison), and the argument of ``isin``.
    """
    found: dict[int, tuple[type, ...]] = {}
    for n in ast.walk(node):
        if isinstance(n, ast.Compare):
            op, right = n.ops[-1], n.comparators[-1]
            if isinstance(op, _IN_OPS):
                found[id(right)] = _IN_TYPES
            elif isinstance(op, _EQ_OPS):
                found[id(right)] = _EQ_TYPES
        elif (
            isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "isin"
        ):
            for arg in [*n.args, *(k.value for k in n.keywords)]:
                found[id(arg)] = _IN_TYPES
    return found


def _check_value(name: str, value: object, list_likes: tuple[type, ...]) -> None:
    """Refuse ``value`` unless it is a public scalar, or one of ``list_likes`` of them."""
    if type(value) in SCALAR_TYPES:
        return
    if isinstance(value, list | tuple | set | frozenset) and type(value) in list_likes:
        inner = [type(v) for v in value if type(v) not in SCALAR_TYPES]
        if not inner:
            return
        raise ValueError(
            f"@{name} is a {type(value).__name__} holding a {inner[0].__name__}: {_ACCEPTED}"
        )
    if isinstance(value, _IN_TYPES):
        raise ValueError(
            f"@{name} is a {type(value).__name__}, used where pandas reads it as one value per "
            f"row (not after `in` / `not in` / `==` / `!=`): {_ACCEPTED}"
        )
    raise ValueError(f"@{name} is a {type(value).__name__}: {_ACCEPTED}")


def query_values(expr: str, parser: str, kwargs: Mapping[str, Any], depth: int) -> dict[str, Any]:
    """The ``@name`` values of a checked ``expr``: from ``local_dict``, else the caller's scope.

    ``depth`` counts the frames above this function to the code that called
    ``query``. ``resolvers`` and ``global_dict`` are refused (they could
    rebind a column or smuggle in a Series). An ``@name`` must be a public
    scalar (an exact type of :data:`SCALAR_TYPES`: a number, a string, a bool,
    None, a date or time, a numpy scalar); a list, tuple, set or frozenset of
    such scalars only as the right side of ``in`` / ``not in`` or the argument
    of ``isin``, and a list as the right side of ``==`` / ``!=`` (pandas reads
    ``x == [1, 2]`` as ``x in [1, 2]``, but compares a tuple row by row).
    Anything else (a Series, an array, a memoryview, a callable, a custom
    object) may hold one value per row and is refused, before anything is
    evaluated.
    """
    for argument in ("resolvers", "global_dict"):
        if argument in kwargs:
            raise TypeError(
                f"`{argument}` is not supported by df.dp.query: pass public constants as @names "
                "(from your scope or local_dict)."
            )
    node, _ = _parse(expr, parser)
    sets = _membership(node)
    given = dict(kwargs.get("local_dict") or {})
    frame = sys._getframe(depth + 1)
    scope = {**frame.f_globals, **frame.f_locals, **given}
    values: dict[str, Any] = {}
    for n in ast.walk(node):
        if not isinstance(n, ast.Name) or not n.id.startswith(_LOCAL):
            continue
        name = n.id[len(_LOCAL) :]
        if name not in scope:
            raise NameError(f"name {name!r} (used as @{name}) is not defined.")
        _check_value(name, scope[name], sets.get(id(n), ()))
        values[name] = scope[name]
    return values


def evaluate(frame: Any, expr: str, kwargs: Mapping[str, Any]) -> Any:
    """``frame.eval(expr, **kwargs)`` (pandas or Dask) of a checked ``expr``.

    Whatever ``eval`` raises becomes one fixed message: pandas' own text may
    quote a value, or differ with the values (a missing value, a negative
    number). numpy's floating-point warnings (``sqrt`` of a negative number)
    are silenced for the same reason.
    """
    try:
        with np.errstate(all="ignore"):
            return frame.eval(expr, **kwargs)
    except Exception:  # raised below, outside the handler: no context holds pandas' text
        pass
    raise TypeError(
        "`expr` could not be evaluated. pandas' error is not shown, since its text may depend on "
        "the data. Check that each operation suits the dtypes of its columns (e.g. `~` and "
        "`and`/`or` on boolean columns, arithmetic on numbers, .dt on dates)."
    )


# ------------------------------------------------------------------- masks


def is_string_dtype(dtype: object) -> bool:
    """A pandas string dtype (``str``, ``string``, ``string[pyarrow]``): not ``object``."""
    if isinstance(dtype, pd.StringDtype):
        return True
    if isinstance(dtype, pd.ArrowDtype):
        return str(dtype.pyarrow_dtype) in ("string", "large_string")
    return False


def is_boolean_dtype(dtype: object) -> bool:
    """numpy ``bool``, pandas ``boolean``, or pyarrow-backed ``bool[pyarrow]``."""
    if isinstance(dtype, np.dtype):
        return dtype == np.bool_
    if isinstance(dtype, pd.BooleanDtype):
        return True
    if isinstance(dtype, pd.ArrowDtype):
        return str(dtype.pyarrow_dtype) == "bool"
    return False


def row_mask(mask: object, index: pd.Index, *, argument: str = "mask") -> np.ndarray:
    """``mask`` as a numpy boolean array, one entry per row; a missing value is False.

    Acceptance depends on the dtype alone, never on the values: a nullable
    mask is accepted whether or not it holds a missing value. A Series must be
    indexed like the frame. Messages never show the row count (it is private
    under add_remove).
    """
    if isinstance(mask, pd.Series) and not mask.index.equals(index):
        raise ValueError(f"`{argument}` must be indexed like the frame (same index, same order).")
    if not isinstance(mask, pd.Series | pd.Index | np.ndarray | pd.api.extensions.ExtensionArray):
        raise TypeError(
            f"`{argument}` must be a boolean Series, numpy array or pandas BooleanArray, one "
            f"entry per row, got {type(mask).__name__}."
        )
    if not is_boolean_dtype(mask.dtype):
        raise TypeError(
            f"`{argument}` must be a boolean array or Series (numpy bool, pandas 'boolean' or "
            f"'bool[pyarrow]'), one entry per row, got dtype {mask.dtype}."
        )
    if isinstance(mask, np.ndarray):
        array = mask.astype(np.bool_, copy=False)
    else:
        array = mask.to_numpy(dtype=np.bool_, na_value=False)
    if array.shape != (len(index),):
        raise ValueError(f"`{argument}` must have exactly one entry per row of the frame.")
    return array
