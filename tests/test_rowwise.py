"""Row-wise masks: ``df.dp.query`` accepts only row-wise expressions (issue 9, item 4), and a
mask is accepted from its dtype alone, a missing value counting as False (item 7)."""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from functools import partial

import numpy as np
import pandas as pd
import pytest
from pandas.core.computation import expr as pandas_expr
from pandas.core.computation.parsing import clean_backtick_quoted_toks

from pandas_dp.rowwise import _preparse, check_rowwise

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
    "index % 2 == 0",
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
