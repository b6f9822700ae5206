"""Row-wise masks: ``df.dp.query`` accepts only row-wise expressions (issue 9, item 4), and a
mask is accepted from its dtype alone, a missing value counting as False (item 7)."""

from __future__ import annotations

import ast
import datetime
import decimal
import itertools
import re
from collections.abc import Callable
from functools import partial
from typing import Any

import numpy as np
import pandas as pd
import pytest
from pandas.core.computation import expr as pandas_expr
from pandas.core.computation.parsing import clean_backtick_quoted_toks

from pandas_dp.surface.rowwise import _preparse, axis_names, check_rowwise

Check = Callable[[], None]


@pytest.fixture
def people(protected: pd.DataFrame) -> pd.DataFrame:
    """``protected`` (same budget) with a date, a nullable integer and a name with a space."""
    n = len(protected)
    rng = np.random.Generator(np.random.PCG64(3))
    level = pd.array(rng.integers(1, 5, size=n), dtype="Int64")
    level[::7] = pd.NA
    return protected.dp.assign(
        hired=pd.Timestamp("2015-01-01") + pd.to_timedelta(rng.integers(0, 3000, size=n), "D"),
        level=level,
        **{"home town": rng.choice(["Lyon", "Oslo", "Quito"], size=n)},
    )


ACCEPTED = [
    "age > 30",
    "30 < age <= 50",
    "age > 30 and dept != 'Ops'",
    "age > 30 & salary < 60000 | ~(dept == 'Eng')",
    "not age > 30",
    "(age > 30) or (bonus > 1000)",
    "salary / 1000 + age * 2 - 1 > 100",
    "age % 2 == 0",
    "age // 10 == 3",
    "age ** 2 > -900",
    "dept in ['Eng', 'Ops']",
    "dept not in ('Sales',)",
    "age in [30, 31, -1]",
    "dept == ['Eng', 'Sales']",
    "age > @cut",
    "dept in @depts",
    "age in [@cut, 50]",
    "`age` > 40",
    "`home town` == 'Oslo'",
    "bonus.isna()",
    "bonus.notna()",
    "bonus.isnull() | bonus.notnull()",
    "age.between(30, 40)",
    "age.between(@cut, 60, inclusive='left')",
    "age.isin([30, 40])",
    "(salary - 60000).abs() < 5000",
    "dept.str.startswith('E')",
    "dept.str.contains('a', case=False)",
    "dept.str.len() == 3",
    "dept.str.lower().str.endswith('s')",
    "dept.str.match('[EO]')",
    "`home town`.str.upper() == 'LYON'",
    "sqrt(salary) > 250",
    "log10(salary) > 4.7",
    "abs(age - 40) < 5",
    "arctan2(age, 10) > 1.5",
    "salary > -inf",
    "hired.dt.year == 2016",
    "hired.dt.day_of_week < 5",
    "hired.dt.is_month_start",
    "hired.dt.floor('D') == hired",
    "hired.dt.month_name() == 'March'",
    "level > 2",
    "~(level > 2)",
    "level.isna() | (level >= 3)",
]

REFUSED = [
    ("salary > salary.mean()", "`mean`"),
    ("age > age.median()", "`median`"),
    ("salary >= salary.quantile(0.9)", "`quantile`"),
    ("age == age.max()", "`max`"),
    ("age.min() < age", "`min`"),
    ("age > age.sum() / 200", "`sum`"),
    ("salary.rank() <= 10", "`rank`"),
    ("salary > salary.shift()", "`shift`"),
    ("salary.cumsum() < 1e6", "`cumsum`"),
    ("salary.diff() > 0", "`diff`"),
    ("dept.value_counts() > 1", "`value_counts`"),
    ("salary.rolling(3).max() > 0", "`max`"),
    ("salary.std() > 0", "`std`"),
    ("age.transform('mean') > age", "`transform`"),
    ("age.apply(abs) > 30", "`apply`"),
    ("age.astype('int64') > 30", "`astype`"),
    ("age.values > 30", "`values`"),
    ("sum(age) > 1", "function sum"),
    ("max(age, 30) > 30", "function max"),
    ("@scale(age) > 30", "function @scale"),
    ("age > age[0]", r"indexing with \[\.\.\.\]"),
    ("age in age", "`in` with age"),
    ("30 in age", "`in` with age"),
    ("age.isin(age)", "age as an argument"),
    ("age.between(age.min(), 60)", r"age\.min\(\.\.\.\) as an argument"),
    ("salary > @protected.salary.mean()", "`mean`"),
    ("salary > @protected.salary", "`salary`"),
    ("age.isin(@protected.age)", "@protected.age as an argument"),
    ("dept.str.cat() == 'x'", "`.str.cat`"),
    ("dept.str.get_dummies() == 1", "`.str.get_dummies`"),
    ("hired.dt.freq == 'D'", "`.dt.freq`"),
    ("hired.dt.floor('h', 'infer') == hired", "`.dt.floor` with arguments other than freq"),
    ("hired.dt.floor('h', ambiguous='infer') == hired", "`.dt.floor` with arguments"),
    ("age + [1, 2] > 0", "a list here"),
    ("age > (lambda: 30)()", "this call"),
    ("age > 30 if True else False", "IfExp"),
    ("age > {30}.pop()", "`pop`"),
]


@pytest.mark.parametrize("expr", ACCEPTED)
def test_a_row_wise_query_is_the_filter_by_its_expression(people: pd.DataFrame, expr: str) -> None:
    cut = 40  # noqa: F841  (read by ``@cut``)
    depts = ["Eng", "Sales"]  # noqa: F841  (read by ``@depts``)
    result = people.dp.query(expr)
    mask = people.eval(expr)
    assert mask.dtype in (np.dtype(bool), pd.BooleanDtype())
    expected = people[mask.to_numpy(dtype=bool, na_value=False)]
    pd.testing.assert_frame_equal(result, expected)
    assert result.dp.budget is people.dp.budget
    assert people.dp.budget.spent == 0


@pytest.mark.parametrize(("expr", "named"), REFUSED, ids=[e for e, _ in REFUSED])
def test_a_query_that_looks_across_rows_is_refused_before_anything_runs(
    people: pd.DataFrame,
    protected: pd.DataFrame,
    nothing_spent: Check,
    monkeypatch: pytest.MonkeyPatch,
    expr: str,
    named: str,
) -> None:
    scale = abs  # noqa: F841  (read by ``@scale``)

    def no_eval(*args: object, **kwargs: object) -> None:
        raise AssertionError("the expression was evaluated")

    monkeypatch.setattr(pd.DataFrame, "eval", no_eval)
    with pytest.raises(ValueError, match=named) as refusal:
        people.dp.query(expr)
    message = str(refusal.value)
    assert "may depend only on that row and on public constants" in message
    assert "df.dp.quantile" in message
    assert "@cut" in message
    nothing_spent()


def test_the_refusal_never_echoes_a_data_value(protected: pd.DataFrame) -> None:
    with pytest.raises(ValueError, match="`mean`") as refusal:
        protected.dp.query("salary > salary.mean()")
    message = str(refusal.value)
    for value in (protected.salary.mean(), protected.salary.iloc[0], protected.age.iloc[0]):
        assert str(value) not in message
    assert not re.search(r"\d{4,}", message)


def test_the_audited_example_is_refused(nothing_spent: Check, protected: pd.DataFrame) -> None:
    with pytest.raises(ValueError, match="`mean`"):
        protected.dp.query("salary > salary.mean()").dp.count(epsilon=1)
    nothing_spent()


@pytest.mark.parametrize(
    ("expr", "error"),
    [
        ("doubled = age * 2", TypeError),
        ("age > 30\nage < 50", ValueError),
        ("age >", SyntaxError),
        ("age > `unclosed", SyntaxError),
    ],
    ids=["assignment", "two-statements", "incomplete", "open-backtick"],
)
def test_what_is_not_one_expression_is_refused(
    protected: pd.DataFrame, nothing_spent: Check, expr: str, error: type[Exception]
) -> None:
    with pytest.raises(error, match="`expr`"):
        protected.dp.query(expr)
    nothing_spent()


def test_an_unknown_parser_is_refused(protected: pd.DataFrame) -> None:
    with pytest.raises(ValueError, match="`parser`"):
        protected.dp.query("age > 30", parser="sql")


def test_the_python_parser_is_checked_too(protected: pd.DataFrame) -> None:
    result = protected.dp.query("(age > 30) & (salary < 60000)", parser="python")
    pd.testing.assert_frame_equal(
        result, protected[(protected.age > 30) & (protected.salary < 60000)]
    )
    with pytest.raises(ValueError, match="`mean`"):
        protected.dp.query("salary > salary.mean()", parser="python")


def test_a_row_wise_query_keeps_the_bound_frame_spending(protected: pd.DataFrame) -> None:
    result = protected.dp.query("age >= 30 and dept.str.startswith('E')")
    result.dp.count(epsilon=0.5)
    assert protected.dp.budget.spent == 0.5
    assert result.dp.budget is protected.dp.budget


# ------------------------------------------------------------ same parse as pandas


def _pandas_source(expr: str) -> str:
    preparse = partial(
        pandas_expr._preparse,
        f=pandas_expr._compose(
            pandas_expr._replace_locals,
            pandas_expr._replace_booleans,
            clean_backtick_quoted_toks,
        ),
    )
    return str(preparse(expr))


def _shape(source: str, labels: dict[str, str] | None = None) -> str:
    """The AST of ``source`` with placeholder names reduced to their kind."""
    tree = ast.parse(source.strip())
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id in (labels or {}):
            label = (labels or {})[node.id]
            node.id = label if label.isidentifier() else "`column`"  # pandas keeps `age` as age
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            for prefix in ("__pd_eval_local_", "__pandas_dp_local_"):
                if node.id.startswith(prefix):
                    node.id = "@" + node.id[len(prefix) :]
            if node.id.startswith(("BACKTICK_QUOTED_STRING_", "__pandas_dp_column_")):
                node.id = "`column`"
    return ast.dump(tree)


@pytest.mark.parametrize("expr", ACCEPTED + [e for e, _ in REFUSED])
def test_the_checker_reads_an_expression_as_pandas_does(expr: str) -> None:
    ours, labels = _preparse(expr)
    assert _shape(ours, labels) == _shape(_pandas_source(expr))


def test_a_backtick_name_maps_back_to_its_column() -> None:
    source, labels = _preparse("`a ``b`` c` > 1 and `x` < '`y`'")
    assert sorted(labels.values()) == ["a `b` c", "x"]
    assert "'`y`'" in source


def test_the_checker_alone_needs_no_frame() -> None:
    check_rowwise("x > 1 and s.str.contains('a')")
    with pytest.raises(ValueError, match="`mean`"):
        check_rowwise("x > x.mean()")


# ------------------------------------------------------------ item 7: masks by dtype alone


def _nullable(values: list[int | None]) -> pd.DataFrame:
    df = pd.DataFrame({"n": pd.array(values, dtype="Int64"), "s": ["a", "b", "c", "d"]})
    df.dp.set_budget(epsilon=1, seed=3)
    return df


@pytest.mark.parametrize(
    ("values", "kept"),
    [([1, 2, 3, 4], [1, 2, 3]), ([1, None, 3, 4], [2, 3])],
    ids=["no-missing", "missing"],
)
@pytest.mark.parametrize("how", ["query", "series", "boolean-array", "arrow", "callable"])
def test_a_nullable_mask_is_accepted_with_or_without_a_missing_value(
    values: list[int | None], kept: list[int], how: str
) -> None:
    df = _nullable(values)
    mask = df["n"] > 1  # pandas' nullable boolean: <NA> where n is missing
    assert mask.dtype == pd.BooleanDtype()
    if how == "query":
        result = df.dp.query("n > 1")
    elif how == "series":
        result = df.dp.filter(mask)
    elif how == "boolean-array":
        result = df.dp.filter(mask.array)
    elif how == "arrow":
        result = df.dp.filter(mask.astype("bool[pyarrow]"))
    else:
        result = df.dp.filter(lambda d: d["n"] > 1)
    assert list(result.index) == kept  # a missing value is False, as in SQL
    assert df.dp.budget.spent == 0


@pytest.mark.parametrize("values", [[1, 2, 3, 4], [1, None, 3, 4]], ids=["no-missing", "missing"])
def test_a_missing_value_is_false_after_negation_too(values: list[int | None]) -> None:
    df = _nullable(values)
    assert list(df.dp.query("~(n > 1)").index) == [0]
    assert list(df.dp.query("not n > 1").index) == [0]


@pytest.mark.parametrize("missing", [False, True], ids=["no-missing", "missing"])
@pytest.mark.parametrize(
    "make",
    [
        lambda s: s.astype(object),
        lambda s: s.astype(object).to_numpy(),
        lambda s: s.astype("Float64"),
        lambda s: s.astype("Int64"),
        lambda s: s.astype("Int64").to_numpy(dtype=float, na_value=np.nan),
        lambda s: list(s),
        lambda s: pd.Index(s.astype(object)),
    ],
    ids=[
        "object-series",
        "object-array",
        "float-series",
        "int-series",
        "float-array",
        "list",
        "index",
    ],
)
def test_a_non_boolean_mask_is_refused_whatever_its_values(
    missing: bool, make: Callable[[pd.Series], object]
) -> None:
    df = _nullable([1, None if missing else 2, 3, 4])
    mask = (df["n"] > 1).astype("boolean")
    with pytest.raises(TypeError, match="`mask`"):
        df.dp.filter(make(mask))
    assert df.dp.budget.spent == 0


@pytest.mark.parametrize("missing", [False, True], ids=["no-missing", "missing"])
def test_str_on_an_object_column_is_refused_whatever_its_values(missing: bool) -> None:
    """pandas gives ``bool`` without a missing value and ``object`` with one: refuse by dtype."""
    df = pd.DataFrame({"o": pd.Series(["ab", None if missing else "b", "ca"], dtype=object)})
    df.dp.set_budget(epsilon=1, seed=3)
    with pytest.raises(TypeError, match="string dtype"):
        df.dp.query("o.str.contains('a')")
    converted = df.dp.assign(o=df["o"].astype("string"))
    assert list(converted.dp.query("o.str.contains('a')").index) == [0, 2]


@pytest.mark.parametrize("missing", [False, True], ids=["no-missing", "missing"])
@pytest.mark.parametrize("dtype", ["str", "string", "string[pyarrow]"])
def test_str_on_a_string_column_is_accepted_with_or_without_a_missing_value(
    missing: bool, dtype: str
) -> None:
    df = pd.DataFrame({"s": pd.Series(["ab", None if missing else "b", "ca"], dtype=dtype)})
    df.dp.set_budget(epsilon=1, seed=3)
    assert list(df.dp.query("s.str.contains('a')").index) == [0, 2]


def test_query_refuses_per_row_values_smuggled_in_as_names_or_resolvers() -> None:
    df = pd.DataFrame({"x": [1.0, 2.0, 3.0, 4.0]})
    budget = df.dp.set_budget(epsilon=1, seed=0)
    ranks = df.x.rank()
    with pytest.raises(ValueError, match="@ranks is a Series: an @name must be a public constant"):
        df.dp.query("x > @ranks")
    with pytest.raises(ValueError, match="@r is a Series"):
        df.dp.query("@r > 2", local_dict={"r": ranks})
    with pytest.raises(ValueError, match="@a is a ndarray"):
        df.dp.query("x > @a", local_dict={"a": ranks.to_numpy()})
    for argument in ("resolvers", "global_dict"):
        with pytest.raises(TypeError, match=f"`{argument}` is not supported"):
            df.dp.query("x > 3", **{argument: ({"x": df.x.cumsum()},)})
    cut, regions = 2.5, [1.0, 4.0]  # noqa: F841  (used as @cut, @regions)
    assert len(df.dp.query("x > @cut")) == 2
    assert len(df.dp.query("x in @regions")) == 2
    assert len(df.dp.query("x > @c", local_dict={"c": 3})) == 1
    assert budget.spent == 0


# ------------------------------------------------------------ both engines

ENGINES = ["pandas", "dask"]
_FRESH = itertools.count(1)


def bound(df: pd.DataFrame, engine: str) -> Any:
    """``df`` with a budget of 1: the frame itself, or a new Dask collection of it."""
    if engine == "dask":
        dd = pytest.importorskip("dask.dataframe")
        pytest.importorskip("pandas_dp.dask")  # registers ddf.dp
        # Another index range: another expression name (a second collection of the same
        # data would be a re-read of it, which set_budget refuses).
        df = dd.from_pandas(df.set_axis(df.index + 10_000 * next(_FRESH)), npartitions=2)
    df.dp.set_budget(epsilon=1, seed=3)
    return df


def computed(result: Any) -> pd.DataFrame:
    return result if isinstance(result, pd.DataFrame) else result.compute()


@pytest.fixture
def no_eval(monkeypatch: pytest.MonkeyPatch) -> None:
    """Any ``DataFrame.eval`` (pandas', or Dask's on its metadata) fails the test."""

    def evaluated(*args: object, **kwargs: object) -> None:
        raise AssertionError("the expression was evaluated")

    monkeypatch.setattr(pd.DataFrame, "eval", evaluated)


# ------------------------------------------------------------ issue 17, item 1: the index


def _rows(**index: Any) -> pd.DataFrame:
    return pd.DataFrame({"x": [10.0, 0.0, 10.0, 0.0, 10.0, 0.0]}, **index)


INDEX_NAMES = {
    "index": ("index % 2 == 0", {}),
    "index-order": ("index < 3", {}),
    "index-in-math": ("abs(index - 2) < 1", {}),
    "index-method": ("index.isin([0, 2, 4])", {}),
    "ilevel_0": ("ilevel_0 % 2 == 0", {}),
    "backtick-index": ("`index` % 2 == 0", {}),
    "backtick-ilevel_0": ("`ilevel_0` < 3", {}),
    "named-level": ("row % 2 == 0", {"index": pd.RangeIndex(6, name="row")}),
    "backtick-level": ("`row number` % 2 == 0", {"index": pd.RangeIndex(6, name="row number")}),
    "column-labels": ("columns == 'x'", {}),
    "column-level": ("clevel_0 == 'x'", {}),
}


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize(("expr", "index"), INDEX_NAMES.values(), ids=INDEX_NAMES.keys())
@pytest.mark.usefixtures("no_eval")
def test_a_name_that_resolves_to_the_index_is_refused_before_anything_runs(
    engine: str, expr: str, index: dict[str, Any]
) -> None:
    df = bound(_rows(**index), engine)
    with pytest.raises(ValueError, match="position is not a value of that row") as refusal:
        df.dp.query(expr)
    assert "df.dp.query('id % 2 == 0')" in str(refusal.value)  # the fix
    assert df.dp.budget.spent == 0


@pytest.mark.parametrize(
    "expr", ["ilevel_1 == 'a'", "sex == 'a'", "index == (0, 'a')", "ilevel_0 > 0 and x > 1"]
)
def test_every_level_of_a_multiindex_is_refused(expr: str) -> None:
    index = pd.MultiIndex.from_product([range(3), ["a", "b"]], names=[None, "sex"])
    df = bound(_rows(index=index), "pandas")
    if "ilevel_1" in expr:
        df.index = df.index.set_names(["pid", None])
    with pytest.raises(ValueError, match="position is not a value of that row"):
        df.dp.query(expr)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize(
    "expr", ["index % 2 == 0", "`index` == 1", "ilevel_0 > 0", "row > 0 and index > 0"]
)
def test_a_column_named_like_the_index_is_the_column_as_in_pandas(engine: str, expr: str) -> None:
    """pandas resolves the columns before the index: such a column is a value of the row."""
    df = pd.DataFrame(
        {"index": [1, 2, 3, 4], "ilevel_0": [0, 1, 0, 1], "row": [1, 0, 1, 1]},
        index=pd.RangeIndex(10, 14, name="row"),
    )
    expected = df[df.eval(expr).to_numpy()]
    result = computed(bound(df, engine).dp.query(expr))
    pd.testing.assert_frame_equal(result.set_axis(expected.index), expected)


@pytest.mark.parametrize(
    "index",
    [
        pd.RangeIndex(2),
        pd.Index([3, 4], name="pid"),
        pd.Index([3, 4], name="my id"),
        pd.Index([3, 4], name=0),
        pd.MultiIndex.from_tuples([(1, "a"), (2, "b")], names=[None, "sex"]),
        pd.MultiIndex.from_tuples([(1, "a"), (2, "b")], names=["a b", 1]),
    ],
    ids=["range", "named", "spaced", "int-name", "multi", "multi-odd-names"],
)
@pytest.mark.parametrize(
    "columns",
    [
        pd.Index(["x", "y"]),
        pd.Index(["x", "y"], name="measure"),
        pd.MultiIndex.from_tuples([("x", "a"), ("y", "b")]),
    ],
    ids=["flat", "named", "multi"],
)
def test_the_names_of_the_axes_are_those_pandas_resolves(
    index: pd.Index, columns: pd.Index
) -> None:
    df = pd.DataFrame([[1, 2], [3, 4]], index=index, columns=columns)
    assert axis_names(df) == set(df._get_index_resolvers())


@pytest.mark.usefixtures("no_eval")
def test_a_name_that_is_neither_a_column_nor_the_index_is_a_missing_column() -> None:
    df = bound(_rows(), "pandas")
    with pytest.raises(KeyError, match="`expr` names 'y', which is not a column"):
        df.dp.query("y > 1")
    with pytest.raises(KeyError, match="`expr` names 'a b', which is not a column"):
        df.dp.query("`a b` > 1")


def test_inf_is_the_constant_even_beside_a_column_named_inf() -> None:
    df = bound(pd.DataFrame({"x": [1.0, 2.0], "inf": [0.0, 5.0]}), "pandas")
    assert len(df.dp.query("x < inf")) == len(df.query("x < inf")) == 2


# ------------------------------------------------------------ item 6: @name values


class _Threshold:
    """A custom object: it compares with each row, so it could answer per row."""

    def __lt__(self, other: object) -> bool:
        return True


class _Float(float):
    """A float subclass, which could bring its own comparison."""


def _people() -> pd.DataFrame:
    return pd.DataFrame({"x": [1.0, 2.0, 3.0, 4.0], "s": ["a", "b", "c", "d"]})


PER_ROW = [1.0, 0.0, 1.0, 0.0]  # one value per row of _people()

REFUSED_VALUES = {
    "list-as-value": ("x > @v", PER_ROW, "is a list, used where pandas reads it as one value"),
    "list-in-arithmetic": ("x + @v > 2", PER_ROW, "is a list, used where"),
    "list-left-of-eq": ("@v == x", PER_ROW, "is a list, used where"),
    "list-in-chain": ("x == @v < x", PER_ROW, "is a list, used where"),
    "tuple-as-value": ("x >= @v", tuple(PER_ROW), "is a tuple, used where"),
    "tuple-after-eq": ("x == @v", tuple(PER_ROW), "is a tuple, used where"),
    "set-after-eq": ("x == @v", {1.0, 2.0}, "is a set, used where"),
    "memoryview": ("x > @v", memoryview(np.array(PER_ROW)), "is a memoryview"),
    "ndarray-in": ("x in @v", np.array([1.0, 2.0]), "is a ndarray"),
    "ndarray-0d": ("x > @v", np.array(2.0), "is a ndarray"),
    "range": ("x in @v", range(3), "is a range"),
    "dict": ("x in @v", {1.0: 0}, "is a dict"),
    "custom-object": ("x > @v", _Threshold(), "is a _Threshold"),
    "float-subclass": ("x > @v", _Float(2.0), "is a _Float"),
    "callable": ("x > @v", lambda: 2.0, "is a function"),
    "series": ("x > @v", pd.Series(PER_ROW), "is a Series"),
    "index-in": ("x in @v", pd.Index([1.0]), "is a Index"),
    "list-of-lists": ("x in @v", [[1.0], [2.0]], "is a list holding a list"),
    "list-of-objects": ("x in @v", [_Threshold()], "is a list holding a _Threshold"),
    "isin-of-series": ("x.isin(@v)", pd.Series(PER_ROW), "is a Series"),
    "argument": ("x.between(@v, 3)", [1.0, 2.0], "is a list, used where"),
    "str-argument": ("s.str.contains(@v)", ["a"], "is a list, used where"),
}


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize(
    ("expr", "value", "named"), REFUSED_VALUES.values(), ids=REFUSED_VALUES.keys()
)
@pytest.mark.usefixtures("no_eval")
def test_an_at_name_that_is_not_a_public_scalar_is_refused_before_anything_runs(
    engine: str, expr: str, value: object, named: str
) -> None:
    df = bound(_people(), engine)
    with pytest.raises(ValueError, match=re.escape(f"@v {named}")) as refusal:
        df.dp.query(expr, local_dict={"v": value})
    message = str(refusal.value)
    assert "an @name must be a public constant" in message
    assert "only after `in` / `not in`" in message  # what is accepted, and where
    assert "1.0" not in message  # never the value
    assert df.dp.budget.spent == 0


ACCEPTED_VALUES = {
    "int": ("x > @v", 2),
    "float": ("x > @v", 2.5),
    "bool": ("(x > 2) == @v", True),
    "none": ("s in [@v, 'a']", None),
    "str": ("s == @v", "b"),
    "numpy-int": ("x > @v", np.int64(2)),
    "numpy-float32": ("x > @v", np.float32(2.5)),
    "numpy-bool": ("(x > 2) == @v", np.bool_(False)),
    "numpy-str": ("s < @v", np.str_("c")),
    "decimal": ("x > @v", decimal.Decimal("2.5")),
    "list-in": ("x in @v", [1.0, 4.0]),
    "list-not-in": ("x not in @v", [1.0, 4.0]),
    "tuple-in": ("s in @v", ("a", "d")),
    "set-in": ("x in @v", {2.0, 3.0}),
    "frozenset-not-in": ("s not in @v", frozenset({"a"})),
    "list-eq": ("x == @v", [1.0, 3.0]),
    "list-ne": ("s != @v", ["a", "b"]),
    "chain-right": ("x > 1 == @v", [True]),
    "isin": ("x.isin(@v)", [2.0, 3.0]),
    "isin-set": ("s.isin(values=@v)", {"a"}),
    "numpy-scalars-in": ("x in @v", [np.float64(1.0), np.int64(2)]),
    "in-list-literal": ("x in [@v, 4.0]", 1.0),
}


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize(("expr", "value"), ACCEPTED_VALUES.values(), ids=ACCEPTED_VALUES.keys())
def test_a_public_scalar_or_a_list_of_them_after_in_is_accepted(
    engine: str, expr: str, value: object
) -> None:
    df = _people()
    expected = df[df.eval(expr, local_dict={"v": value}).to_numpy()]
    assert 0 < len(expected) < len(df)
    result = computed(bound(df, engine).dp.query(expr, local_dict={"v": value}))
    assert result["x"].tolist() == expected["x"].tolist()


@pytest.mark.parametrize(
    ("expr", "value"),
    [
        ("t > @v", pd.Timestamp("2020-03-01")),
        ("t > @v", datetime.datetime(2020, 3, 1)),
        ("t > @v", np.datetime64("2020-03-01")),
        ("d > @v", pd.Timedelta(days=1)),
        ("d > @v", datetime.timedelta(days=1)),
        ("d > @v", np.timedelta64(1, "D")),
    ],
    ids=["Timestamp", "datetime", "datetime64", "Timedelta", "timedelta", "timedelta64"],
)
def test_dates_and_durations_are_scalars(expr: str, value: object) -> None:
    df = pd.DataFrame(
        {"t": pd.to_datetime(["2020-01-01", "2020-06-01"]), "d": pd.to_timedelta(["1h", "3D"])}
    )
    assert list(bound(df, "pandas").dp.query(expr, local_dict={"v": value}).index) == [1]


@pytest.mark.parametrize("missing", [False, True], ids=["no-missing", "missing"])
@pytest.mark.parametrize("expr", ["n > 1", "s < 'c'", "~(n > 1)"])
def test_a_nullable_mask_keeps_the_rows_on_dask(missing: bool, expr: str) -> None:
    df = pd.DataFrame(
        {
            "n": pd.array([1, None if missing else 2, 3, 4], dtype="Int64"),
            "s": pd.array(["a", None if missing else "b", "c", "d"], dtype="string"),
        }
    )
    expected = df[df.eval(expr).to_numpy(dtype=bool, na_value=False)]
    result = bound(df, "dask").dp.query(expr).compute()
    assert isinstance(result, pd.DataFrame)
    assert result["n"].tolist() == expected["n"].tolist()


# ------------------------------------------------------------ item 10: errors from dtypes alone


def _objects(missing: bool) -> pd.DataFrame:
    b = pd.Series([True, None if missing else False, False, True], dtype=object)
    return pd.DataFrame({"x": [1.0, 2.0, 3.0, 4.0], "b": b})


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("expr", ["~b", "b", "b == True", "b.isna()", "x > 1 and not b"])
@pytest.mark.usefixtures("no_eval")
def test_an_object_column_is_refused_from_its_dtype_whatever_it_holds(
    engine: str, expr: str
) -> None:
    messages = set()
    for missing in (False, True):
        if engine == "dask":
            dask = pytest.importorskip("dask")
            with dask.config.set({"dataframe.convert-string": False}):
                df = bound(_objects(missing), engine)
            assert df.dtypes["b"] == np.dtype(object)
        else:
            df = bound(_objects(missing), engine)
        with pytest.raises(TypeError, match="column 'b' of dtype object") as refusal:
            df.dp.query(expr)
        messages.add(str(refusal.value))
        assert df.dp.budget.spent == 0
    assert len(messages) == 1
    assert "astype('string')" in messages.pop()  # the fix


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize(
    "expr",
    ["s + 1 > 0", "x.dt.year > 2000", "n ** @p > 0"],
    ids=["str-plus-int", "dt-on-numbers", "integer-to-negative-power"],
)
def test_whatever_eval_raises_is_one_fixed_message(engine: str, expr: str) -> None:
    p = -1  # noqa: F841  (read by ``@p``)
    df = bound(pd.DataFrame({"s": ["a", "b", "c"], "x": [1.5, 2.5, 3.5], "n": [1, 2, 3]}), engine)
    with pytest.raises(TypeError) as refusal:
        df.dp.query(expr)
    error = refusal.value
    assert str(error).startswith("`expr` could not be evaluated. pandas' error is not shown")
    assert error.__context__ is None  # no pandas text in a traceback
    assert error.__cause__ is None
    assert df.dp.budget.spent == 0


@pytest.mark.parametrize("expr", ["2 ** n > 0", "x ** n > 0", "x ** (n + 1) > 0"])
def test_a_power_that_varies_by_row_is_refused(expr: str) -> None:
    """``2 ** n`` fails in pandas exactly when some ``n`` is negative: refused from the syntax."""
    df = bound(pd.DataFrame({"x": [1, 2, 3], "n": [1, 2, 3]}), "pandas")
    with pytest.raises(ValueError, match="`\\*\\*` only with a constant power"):
        df.dp.query(expr)


def test_floating_point_warnings_are_silenced_whatever_the_values() -> None:
    """``sqrt`` of a negative number warns in numpy: the warning would tell that one exists."""
    df = bound(pd.DataFrame({"x": [-4.0, 1.0, 9.0]}), "pandas")
    assert list(df.dp.query("sqrt(x) > 2 or log(x) > 5").index) == [2]
