"""Bad input is refused with a clear error naming the argument, before anything is spent.

And no message, warning, repr or ledger ever shows a data value or a true statistic.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator
from collections.abc import Set as AbstractSet
from decimal import Decimal
from fractions import Fraction
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

import pandas_dp
from pandas_dp import BudgetExceededError, MissingBudgetError, PandasDPError
from pandas_dp.core import validation

KEYS = ["Eng", "Ops", "Sales"]
CLIP = (0, 200_000)

Call = Callable[[pd.DataFrame], object]


# ------------------------------------------------------------------------- epsilon

BAD_EPSILONS = [
    (0, ValueError),
    (0.0, ValueError),
    (-1, ValueError),
    (-0.5, ValueError),
    (Fraction(0), ValueError),
    (float("nan"), ValueError),
    (np.nan, ValueError),
    (float("inf"), ValueError),
    (-np.inf, ValueError),
    (Decimal("NaN"), ValueError),
    (Decimal("sNaN"), ValueError),
    (Decimal("-sNaN"), ValueError),
    (Decimal("Infinity"), ValueError),
    (Decimal("-Infinity"), ValueError),
    ("0.1", TypeError),
    (True, TypeError),
    (np.bool_(True), TypeError),
    ([0.1], TypeError),
    (1j, TypeError),
]

EPSILON_RELEASES: dict[str, Callable[[pd.DataFrame, Any], object]] = {
    "count": lambda df, eps: df.dp.count(epsilon=eps),
    "count_column": lambda df, eps: df.dp.count("bonus", epsilon=eps),
    "sum": lambda df, eps: df.dp.sum("salary", clip=CLIP, epsilon=eps),
    "mean": lambda df, eps: df.dp.mean("salary", clip=CLIP, epsilon=eps),
    "sum_many": lambda df, eps: df.dp.sum(clip={"salary": CLIP, "age": (0, 99)}, epsilon=eps),
    "groupby_count": lambda df, eps: df.dp.groupby("dept", keys=KEYS).count(epsilon=eps),
    "groupby_mean": lambda df, eps: df.dp.groupby("dept", keys=KEYS).mean(
        "salary", clip=CLIP, epsilon=eps
    ),
}


@pytest.mark.parametrize(("epsilon", "error"), BAD_EPSILONS, ids=repr)
@pytest.mark.parametrize("release", EPSILON_RELEASES.values(), ids=EPSILON_RELEASES.keys())
def test_bad_epsilon_is_refused_before_spending(
    protected: pd.DataFrame,
    nothing_spent: Callable[[], None],
    release: Callable[[pd.DataFrame, Any], object],
    epsilon: object,
    error: type[Exception],
) -> None:
    with pytest.raises(error, match="`epsilon` must be a positive finite number"):
        release(protected, epsilon)
    nothing_spent()


@pytest.mark.parametrize(("epsilon", "error"), BAD_EPSILONS, ids=repr)
def test_bad_total_epsilon_is_refused_without_attaching(
    salaries: pd.DataFrame, epsilon: object, error: type[Exception]
) -> None:
    with pytest.raises(error, match="`epsilon`"):
        salaries.dp.set_budget(epsilon=epsilon)  # type: ignore[arg-type]
    assert "pandas_dp" not in salaries.attrs
    salaries.dp.set_budget(epsilon=1)  # still possible afterwards


def test_arguments_are_validated_before_the_budget_is_resolved(salaries: pd.DataFrame) -> None:
    with pytest.raises(ValueError, match="`epsilon`"):
        salaries.dp.count(epsilon=-1)
    with pytest.raises(ValueError, match="`clip`"):
        salaries.dp.sum("salary", clip=(1, 0), epsilon=1)
    with pytest.raises(KeyError):
        salaries.dp.mean("nope", clip=CLIP, epsilon=1)
    with pytest.raises(MissingBudgetError):
        salaries.dp.count(epsilon=1)


def test_epsilon_too_small_for_a_count_is_refused_before_spending(
    protected: pd.DataFrame,
    nothing_spent: Callable[[], None],
) -> None:
    with pytest.raises(ValueError, match="`epsilon` is too small"):
        protected.dp.count(epsilon=1e-30)
    nothing_spent()


def test_noise_too_large_for_a_float_is_refused_before_spending(
    protected: pd.DataFrame,
    nothing_spent: Callable[[], None],
) -> None:
    with pytest.raises(ValueError, match="`clip` and `epsilon`"):
        protected.dp.sum("salary", clip=(0, 1e100), epsilon=1e-300)
    nothing_spent()


def test_clip_beyond_1e100_is_refused_before_spending(
    protected: pd.DataFrame,
    nothing_spent: Callable[[], None],
) -> None:
    with pytest.raises(ValueError, match=r"`clip` .* within ±1e\+100"):
        protected.dp.sum("salary", clip=(-1e308, 1e308), epsilon=1)
    nothing_spent()


def test_query_larger_than_the_whole_budget_is_refused(
    protected: pd.DataFrame, nothing_spent: Callable[[], None]
) -> None:
    with pytest.raises(BudgetExceededError):
        protected.dp.mean("salary", clip=CLIP, epsilon=10.5)
    nothing_spent()


@pytest.mark.parametrize(
    "q",
    [
        Decimal("sNaN"),
        Decimal("NaN"),
        Decimal("Infinity"),
        Decimal("-Infinity"),
        pytest.param(10**400, id="10**400"),
    ],
    ids=repr,
)
def test_bad_quantile_level_is_refused_before_spending(
    protected: pd.DataFrame, nothing_spent: Callable[[], None], q: object
) -> None:
    with pytest.raises(ValueError, match="`q` must be a number between 0 and 1"):
        protected.dp.quantile("salary", q, candidates=[0, 100_000], epsilon=1)
    nothing_spent()


# ---------------------------------------------------------------------------- clip

BAD_CLIPS = [
    ((10, 0), ValueError),
    ((5, 5), ValueError),
    ((float("nan"), 1), ValueError),
    ((0, float("inf")), ValueError),
    ((-np.inf, 0), ValueError),
    ((-1e308, 1e308), ValueError),  # finite bounds, infinite width
    ((0, Decimal("sNaN")), ValueError),
    ((Decimal("NaN"), 1), ValueError),
    ((0, Decimal("Infinity")), ValueError),
    # Beyond the float range: no raw OverflowError.
    pytest.param((0, 10**400), ValueError, id="(0, 10**400)"),
    pytest.param((Fraction(-(10**400)), 0), ValueError, id="(Fraction(-10**400), 0)"),
    ((0, 1, 2), ValueError),
    ((1,), ValueError),
    ("0,1", TypeError),
    (5, TypeError),
    (("a", "b"), TypeError),
    ((True, 1), TypeError),
    ({"salary": (0, 1)}, TypeError),  # a mapping when the column is named
    (None, TypeError),
]

CLIP_RELEASES: dict[str, Callable[[pd.DataFrame, Any], object]] = {
    "sum": lambda df, clip: df.dp.sum("salary", clip=clip, epsilon=1),
    "mean": lambda df, clip: df.dp.mean("salary", clip=clip, epsilon=1),
    "groupby_sum": lambda df, clip: df.dp.groupby("dept", keys=KEYS).sum(
        "salary", clip=clip, epsilon=1
    ),
    "groupby_mean": lambda df, clip: df.dp.groupby("dept", keys=KEYS).mean(
        "salary", clip=clip, epsilon=1
    ),
}


@pytest.mark.parametrize(("clip", "error"), BAD_CLIPS, ids=repr)
@pytest.mark.parametrize("release", CLIP_RELEASES.values(), ids=CLIP_RELEASES.keys())
def test_bad_clip_is_refused_before_spending(
    protected: pd.DataFrame,
    nothing_spent: Callable[[], None],
    release: Callable[[pd.DataFrame, Any], object],
    clip: object,
    error: type[Exception],
) -> None:
    with pytest.raises(error, match="`clip"):
        release(protected, clip)
    nothing_spent()


@pytest.mark.parametrize(
    ("clip", "error", "names"),
    [
        ({"salary": (1, 0)}, ValueError, "clip['salary']"),
        ({"salary": CLIP, "bonus": None}, TypeError, "clip['bonus']"),
        ({}, TypeError, "`clip`"),
        ((0, 1), TypeError, "`clip`"),  # a pair but no column named
    ],
    ids=["reversed", "none", "empty", "pair"],
)
def test_bad_clip_mapping_is_refused_before_spending(
    protected: pd.DataFrame,
    nothing_spent: Callable[[], None],
    clip: object,
    error: type[Exception],
    names: str,
) -> None:
    with pytest.raises(error) as info:
        protected.dp.sum(clip=clip, epsilon=1)
    assert names in str(info.value)
    nothing_spent()


# ---------------------------------------------------------------- columns and dtypes


@pytest.fixture
def typed(protected: pd.DataFrame) -> pd.DataFrame:
    """``protected`` with a column of each non-numeric kind, via the accessor."""
    n = len(protected)
    return protected.dp.assign(
        obj=pd.Series(["x"] * n, dtype=object, index=protected.index),
        text=pd.Series(["x"] * n, dtype="string", index=protected.index),
        cat=pd.Categorical(["1"] * n),
        when=pd.Timestamp("2024-01-01"),
        span=pd.Timedelta("1D"),
        cplx=np.full(n, 1 + 1j),
    )


@pytest.mark.parametrize("column", ["dept", "obj", "text", "cat", "when", "span", "cplx"])
@pytest.mark.parametrize("kind", ["sum", "mean"])
def test_non_numeric_column_is_refused_before_spending(
    typed: pd.DataFrame, nothing_spent: Callable[[], None], column: str, kind: str
) -> None:
    refused = f"column '{column}' (must be numeric|has dtype object)"
    with pytest.raises(TypeError, match=refused):
        getattr(typed.dp, kind)(column, clip=(0, 1), epsilon=1)
    with pytest.raises(TypeError, match=refused):
        getattr(typed.dp.groupby("dept", keys=KEYS), kind)(column, clip=(0, 1), epsilon=1)
    nothing_spent()


@pytest.mark.parametrize(
    "call",
    [
        lambda df: df.dp.count("nope", epsilon=1),
        lambda df: df.dp.sum("nope", clip=CLIP, epsilon=1),
        lambda df: df.dp.mean("nope", clip=CLIP, epsilon=1),
        lambda df: df.dp.sum(clip={"salary": CLIP, "nope": CLIP}, epsilon=1),
        lambda df: df.dp.groupby("nope", keys=KEYS),
        lambda df: df.dp.groupby(["dept", "nope"], keys=[("Eng", 1)]),
        lambda df: df.dp.groupby("dept", keys=KEYS).count("nope", epsilon=1),
        lambda df: df.dp.groupby("dept", keys=KEYS).mean("nope", clip=CLIP, epsilon=1),
    ],
    ids=["count", "sum", "mean", "sum_many", "by", "by_many", "g_count", "g_mean"],
)
def test_missing_column_raises_key_error_naming_it(
    protected: pd.DataFrame, nothing_spent: Callable[[], None], call: Call
) -> None:
    with pytest.raises(KeyError) as info:
        call(protected)
    assert str(info.value) == (
        "column 'nope' is not in the frame. Its columns: ['dept', 'age', 'salary', 'bonus']."
    )
    nothing_spent()


def test_a_missing_column_message_suggests_close_names_and_shortens_long_schemas() -> None:
    df = pd.DataFrame({"income": [1.0], "age": [3]})
    df.dp.set_budget(epsilon=1)
    with pytest.raises(KeyError, match=r"^column 'incom' is not in the frame\. Did you mean "):
        df.dp.mean("incom", clip=(0, 1), epsilon=1)
    wide = pd.DataFrame(np.zeros((1, 100)), columns=[f"c{i}" for i in range(100)])
    wide.dp.set_budget(epsilon=1)
    with pytest.raises(KeyError, match=r"'c29', \.\.\. \(70 more\)\]\.$"):
        wide.dp.count("zzz", epsilon=1)


@pytest.mark.parametrize(
    "call",
    [
        lambda df: df.dp.count(0.1, epsilon=0.1),
        lambda df: df.dp.sum(0.1, clip=CLIP, epsilon=0.1),
        lambda df: df.dp.mean(0.1, clip=CLIP, epsilon=0.1),
        lambda df: df.dp.var(0.1, clip=CLIP, epsilon=0.1),
        lambda df: df.dp.std(np.float64(0.1), clip=CLIP, epsilon=0.1),
        lambda df: df.dp.histogram(0.1, bins=[0, 1], epsilon=0.1),
        lambda df: df.dp.median(0.1, candidates=[0, 1], epsilon=0.1),
        lambda df: df.dp.quantile(0.1, 0.5, candidates=[0, 1], epsilon=0.1),
        lambda df: df.dp.argmax_exp(0.1, candidates=KEYS, epsilon=0.1),
        lambda df: df.dp.groupby("dept", keys=KEYS).count(0.1, epsilon=0.1),
        lambda df: df.dp.groupby("dept", keys=KEYS).mean(0.1, clip=CLIP, epsilon=0.1),
    ],
    ids=[
        "count", "sum", "mean", "var", "std", "histogram", "median", "quantile", "argmax",
        "g_count", "g_mean",
    ],
)  # fmt: skip
def test_a_number_where_the_column_goes_says_epsilon_is_keyword_only(
    protected: pd.DataFrame, nothing_spent: Callable[[], None], call: Call
) -> None:
    with pytest.raises(
        TypeError, match=r"^`epsilon` is keyword-only: write df\.dp\.count\(epsilon=0\.1\)"
    ):
        call(protected)
    nothing_spent()


def test_a_number_is_read_as_a_column_when_the_frame_has_that_column() -> None:
    df = pd.DataFrame({0: [1.0, 2.0], 1: [3.0, 4.0]})
    df.dp.set_budget(epsilon=1, seed=0)
    df.dp.count(1, epsilon=0.5)
    with pytest.raises(TypeError, match=r"keyword-only.*Its columns: \[0, 1\]"):
        df.dp.count(2, epsilon=0.5)
    with pytest.raises(KeyError, match="column True is not in the frame"):
        df.dp.count(True, epsilon=0.5)
    assert df.dp.budget.spent == Fraction(1, 2)


def test_duplicated_column_label_is_refused_before_spending(spy: Any) -> None:
    df = pd.DataFrame(np.ones((4, 2)), columns=["x", "x"])
    df.dp.set_budget(epsilon=1)
    df.dp.budget.source = spy
    derived = df.dp.filter(np.ones(4, dtype=bool))
    for call in (
        lambda: derived.dp.count("x", epsilon=0.5),
        lambda: derived.dp.sum("x", clip=(0, 1), epsilon=0.5),
        lambda: derived.dp.groupby("x", keys=[1.0]),
    ):
        with pytest.raises(ValueError, match="duplicated"):
            call()
    assert df.dp.budget.spent == 0
    assert df.dp.budget.entries == []
    assert spy.calls == 0


# -------------------------------------------------------------- adjacency and seed


@pytest.mark.parametrize("adjacency", ["bounded", "ADD_REMOVE", "", None, 1])
def test_unknown_adjacency_is_refused(salaries: pd.DataFrame, adjacency: object) -> None:
    with pytest.raises(ValueError, match="`adjacency` must be one of"):
        salaries.dp.set_budget(epsilon=1, adjacency=adjacency)  # type: ignore[arg-type]
    assert "pandas_dp" not in salaries.attrs


@pytest.mark.parametrize(
    ("seed", "error"),
    [(-1, ValueError), (1.5, TypeError), ("7", TypeError), (True, TypeError), ([1], TypeError)],
    ids=repr,
)
def test_bad_seed_is_refused(salaries: pd.DataFrame, seed: object, error: type[Exception]) -> None:
    with pytest.raises(error, match="`seed`"):
        salaries.dp.set_budget(epsilon=1, seed=seed)  # type: ignore[arg-type]
    assert "pandas_dp" not in salaries.attrs


def test_dp_function_refuses_a_series(salaries: pd.DataFrame) -> None:
    with pytest.raises(TypeError, match="`df` must be a pandas DataFrame"):
        pandas_dp.dp(salaries.salary)  # type: ignore[arg-type]


# ------------------------------------------------------ a planted distinctive value

SECRET_SALARY = 987654.321
SECRET_DEPT = "ZZ-SECRET-KEY"
N_ROWS = 1357


@pytest.fixture
def planted() -> pd.DataFrame:
    rng = np.random.Generator(np.random.PCG64(99))
    df = pd.DataFrame(
        {
            "dept": rng.choice(KEYS, size=N_ROWS).astype(object),
            "age": rng.integers(18, 70, size=N_ROWS),
            "salary": np.round(rng.lognormal(np.log(60_000), 0.5, size=N_ROWS), 2),
            "bonus": np.where(rng.uniform(size=N_ROWS) < 0.2, np.nan, 100.0),
        }
    )
    df.loc[17, "salary"] = SECRET_SALARY
    df.loc[29, "dept"] = SECRET_DEPT
    return df


def _forbidden(df: pd.DataFrame) -> list[str]:
    """The planted values and true statistics, in the forms a message would print them."""
    texts = ["987654", "987,654", "9.87654e", SECRET_DEPT, "SECRET", str(N_ROWS), "1,357"]
    for clip in ((0, 200_000), (0, 1e6)):
        clipped = df.salary.clip(*clip)
        for value in (clipped.sum(), clipped.mean(), df.salary.sum(), df.salary.mean()):
            texts += [repr(value), f"{value:.2f}", f"{value:g}", f"{value:,.0f}", str(int(value))]
    return texts


VALID_CALLS: list[Call] = [
    lambda df: df.dp.count(epsilon=0.1),
    lambda df: df.dp.count("bonus", epsilon=0.1),
    lambda df: df.dp.sum("salary", clip=(0, 200_000), epsilon=0.1),
    lambda df: df.dp.mean("salary", clip=(0, 1e6), epsilon=0.1),
    lambda df: df.dp.sum(clip={"salary": (0, 1e6), "bonus": (0, 500)}, epsilon=0.1),
    lambda df: df.dp.groupby("dept", keys=KEYS).mean("salary", clip=(0, 1e6), epsilon=0.1),
    lambda df: df.dp.groupby("dept", keys=KEYS).count(epsilon=0.1),
    lambda df: df.dp.filter(df.salary > 50_000).dp.mean("salary", clip=(0, 1e6), epsilon=0.1),
    lambda df: repr(df.dp.groupby(["dept", "age"], keys=[("Eng", 30), ("Ops", 40)])),
    lambda df: df.dp.argmax_exp("dept", candidates=KEYS, epsilon=0.1),
    lambda df: df.dp.median("salary", candidates=np.linspace(0, 1e6, 101), epsilon=0.1),
]

#: Invalid arguments, some of them carrying data: each must raise.
INVALID_CALLS: list[Call] = [
    lambda df: df.dp.sum("salary", clip=df.salary, epsilon=0.1),
    lambda df: df.dp.sum(clip=df.salary, epsilon=0.1),
    lambda df: df.dp.sum("salary", clip=df.salary.to_numpy(), epsilon=0.1),
    lambda df: df.dp.mean("salary", clip=CLIP, epsilon=df.salary),
    lambda df: df.dp.count(df.salary, epsilon=0.1),
    lambda df: df.dp.sum("dept", clip=CLIP, epsilon=0.1),
    lambda df: df.dp.mean(clip={"salary": CLIP, "dept": CLIP}, epsilon=0.1),
    lambda df: df.dp.filter(df.salary),
    lambda df: df.dp.filter(df.salary.to_numpy()[:-1] > 0),
    lambda df: df.dp.query("dept"),
    lambda df: df.dp.groupby("dept", keys=df.dept),
    lambda df: df.dp.groupby("dept", keys=list(df.dept)),
    lambda df: df.dp.groupby(df.dept, keys=KEYS),
    lambda df: df.dp.groupby("dept").count(epsilon=0.1),  # no delta: keys chosen privately
    lambda df: df.dp.groupby("dept").count(epsilon=0.1, delta=1e-7),  # the budget holds none
    lambda df: df.dp.value_counts("dept", epsilon=0.1, delta=1e-7),
    lambda df: df.dp.groupby("dept", keys=[*KEYS, np.nan]),
    lambda df: df.dp.groupby(["dept", "age"], keys=KEYS),
    lambda df: df.dp.select(["salary", "nope"]),
    lambda df: df.dp.inherit(df.salary),
    lambda df: pandas_dp.dp(df.salary),  # type: ignore[arg-type]
    lambda df: df.dp.set_budget(epsilon=1),
    lambda df: df.copy().dp.mean("salary", clip=CLIP, epsilon=0.1),
    lambda df: df.copy().dp.set_budget(epsilon=1),
    lambda df: df.dp.mean("salary", clip=CLIP, epsilon=1e6),
    lambda df: df.dp.count(epsilon=1e-30),
]


def test_no_output_but_the_release_shows_a_planted_value_or_true_statistic(
    planted: pd.DataFrame,
) -> None:
    forbidden = _forbidden(planted)
    budget = planted.dp.set_budget(epsilon=100)
    texts: list[str] = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for call in VALID_CALLS:
            call(planted)
        for call in INVALID_CALLS:
            with pytest.raises((PandasDPError, ValueError, TypeError, LookupError)) as err:
                call(planted)
            texts += [str(err.value), repr(err.value)]
    texts += [str(w.message) for w in caught]
    texts += [repr(budget), budget._repr_html_()]
    texts.append(budget.ledger.drop(columns="time").to_string())
    texts.append(budget.ledger.drop(columns="time").to_csv())
    leaks = [(f, t) for t in texts for f in forbidden if f in t]
    assert leaks == [], "\n".join(f"{f!r} in {t!r}" for f, t in leaks)
    assert caught == []


def test_a_partial_multiindex_column_label_is_refused_before_spending() -> None:
    df = pd.DataFrame(
        {("bonus", "a"): [1.0, np.nan], ("bonus", "b"): [2.0, 3.0], ("k", ""): [1, 2]}
    )
    df.dp.set_budget(epsilon=1, seed=0)
    filtered = df.dp.filter(np.ones(2, dtype=bool))
    for release in (
        lambda: filtered.dp.count("bonus", epsilon=0.5),
        lambda: filtered.dp.groupby("k", keys=[1, 2]).count("bonus", epsilon=0.5),
        lambda: filtered.dp.groupby("bonus", keys=[1, 2]).count(epsilon=0.5),
        lambda: filtered.dp.sum("bonus", clip=(0, 1), epsilon=0.5),
    ):
        with pytest.raises(ValueError, match="names several columns"):
            release()
    assert df.dp.budget.spent == 0


# ------------------------------------------------------------------- quantile grid

HUGE = float(np.finfo(np.float64).max)
HUGE_GRIDS = [[-1.7e308, 1.7e308], [-1.7e308, 0, 1.7e308], [-HUGE, -1e308, HUGE]]


@pytest.mark.parametrize("grid", HUGE_GRIDS, ids=["two", "three", "largest"])
def test_a_grid_spanning_the_float_range_is_released_without_warnings(
    protected: pd.DataFrame, grid: list[float]
) -> None:
    # pytest turns warnings into errors: np.diff overflowed on such grids.
    assert protected.dp.quantile("salary", 0.5, candidates=grid, epsilon=1) in grid
    assert (
        protected.dp.groupby("dept", keys=KEYS)
        .quantile("salary", 0.5, candidates=grid, epsilon=1)
        .isin(grid)
        .all()
    )


@pytest.mark.parametrize(
    "grid", [[1.7e308, -1.7e308], [-1.7e308, 1.7e308, 0]], ids=["reversed", "unsorted"]
)
def test_an_unsorted_grid_spanning_the_float_range_is_refused_before_spending(
    protected: pd.DataFrame, nothing_spent: Callable[[], None], grid: list[float]
) -> None:
    with pytest.raises(ValueError, match="increasing order"):
        protected.dp.quantile("salary", 0.5, candidates=grid, epsilon=1)
    nothing_spent()


# ------------------------------------------------------------------------- order


class _Bag(AbstractSet[str]):
    """A set-like collection that is not a set: no fixed order either."""

    def __init__(self, items: list[str]) -> None:
        self._items = set(items)

    def __contains__(self, item: object) -> bool:
        return item in self._items

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)


@pytest.mark.parametrize(
    "values", [set(KEYS), frozenset(KEYS), _Bag(KEYS)], ids=["set", "frozenset", "set-like"]
)
def test_check_ordered_refuses_collections_without_an_order(values: object) -> None:
    with pytest.raises(TypeError, match=r"`keys` must have a fixed order .* pass sorted"):
        validation.check_ordered(values, "keys")


@pytest.mark.parametrize(
    "values",
    [KEYS, tuple(KEYS), pd.Index(KEYS), dict.fromkeys(KEYS).keys(), {1: "a"}.items()],
    ids=["list", "tuple", "index", "dict_keys", "dict_items"],
)
def test_check_ordered_accepts_ordered_collections(values: object) -> None:
    validation.check_ordered(values, "keys")


@pytest.mark.parametrize(
    "values", [set(KEYS), frozenset(KEYS), _Bag(KEYS)], ids=["set", "frozenset", "set-like"]
)
def test_candidates_and_keys_refuse_a_set_alike(
    protected: pd.DataFrame, nothing_spent: Callable[[], None], values: object
) -> None:
    with pytest.raises(TypeError, match="`candidates` must have a fixed order"):
        protected.dp.argmax_exp("dept", candidates=values, epsilon=1)
    with pytest.raises(TypeError, match="`keys` must have a fixed order"):
        protected.dp.groupby("dept", keys=values)
    nothing_spent()


# ------------------------------------------------------------------- privacy unit

NOT_REDUCING = ["cumsum", "rank", "shift", "diff", "cumcount", "head", "tail", "idxmax", "ohlc"]


@pytest.mark.parametrize("function", NOT_REDUCING)
def test_per_unit_refuses_an_aggregation_that_does_not_reduce(function: str) -> None:
    schema = pd.DataFrame({"pid": [1], "x": [1.0]})
    with pytest.raises(ValueError, match=rf"with '{function}', which does not reduce .* 'sum'"):
        validation.check_per_unit("pid", {"v": ("x", function)}, schema, "pandas")


@pytest.mark.parametrize("function", sorted(validation.PER_UNIT_AGGREGATIONS))
def test_every_accepted_aggregation_gives_pandas_one_row_per_person(function: str) -> None:
    df = pd.DataFrame({"pid": [3, 3, 3, 5, 5, 9], "x": [1.0, 2.0, 4.0, 8.0, 0.0, 1.0]})
    checked = validation.check_per_unit("pid", {"v": ("x", function)}, df, "pandas")
    persons = df.groupby("pid", sort=False)
    result = persons.agg(**checked)
    assert result.index.equals(persons.size().index)
    assert result["v"].map(pd.api.types.is_scalar).all()


def test_per_unit_wraps_callables_so_that_a_non_scalar_raises() -> None:
    df = pd.DataFrame({"pid": [1, 1, 2], "x": [1.0, 2.0, 3.0]})
    checked = validation.check_per_unit(
        "pid", {"spread": ("x", lambda s: s.max() - s.min()), "all": ("x", list)}, df, "pandas"
    )
    spread = checked["spread"][1]
    assert callable(spread)
    assert spread(pd.Series([1.0, 4.0])) == 3.0
    whole = checked["all"][1]
    assert callable(whole)
    with pytest.raises(TypeError, match=r"`all` must return one value per person") as info:
        whole(pd.Series([1.0, 4.0]))
    assert "4.0" not in str(info.value)


@pytest.mark.parametrize("function", [np.sum, lambda s: s.sum()])
def test_per_unit_on_dask_takes_functions_by_name_only(function: object) -> None:
    schema = pd.DataFrame({"pid": [1], "x": [1.0]})
    with pytest.raises(TypeError, match=r"`v` must aggregate with a function name \(Dask"):
        validation.check_per_unit("pid", {"v": ("x", function)}, schema, "dask")


UNIT_DTYPES_ACCEPTED = {
    "int64": pd.Series([1, 2], dtype="int64"),
    "uint8": pd.Series([1, 2], dtype="uint8"),
    "Int64": pd.Series([1, None], dtype="Int64"),
    "int64[pyarrow]": pd.Series([1, 2], dtype="int64[pyarrow]"),
    "str": pd.Series(["a", "b"], dtype="str"),
    "string": pd.Series(["a", None], dtype="string"),
    "string[pyarrow]": pd.Series(["a", "b"], dtype="string[pyarrow]"),
    "category of int": pd.Series([1, 2]).astype("category"),
    "category of str": pd.Series(["a", "b"]).astype("category"),
}
UNIT_DTYPES_REFUSED = {
    "object": pd.Series([1, 1.0, True], dtype=object),
    "object of strings": pd.Series(["a", "b"], dtype=object),
    "float64": pd.Series([1.0, 2.0]),
    "Float64": pd.Series([1.0, None], dtype="Float64"),
    "bool": pd.Series([True, False]),
    "boolean": pd.Series([True, None], dtype="boolean"),
    "datetime": pd.Series(pd.to_datetime(["2020-01-01", "2020-01-02"])),
    "category of float": pd.Series([1.0, 2.5]).astype("category"),
    "category of object": pd.Series([1, "1"], dtype=object).astype("category"),
}


@pytest.mark.parametrize("ids", UNIT_DTYPES_ACCEPTED.values(), ids=list(UNIT_DTYPES_ACCEPTED))
def test_a_unit_of_integer_string_or_categorical_ids_is_accepted(ids: pd.Series) -> None:
    df = pd.DataFrame({"pid": ids})
    assert validation.check_privacy_unit(df, "pid", 2, None) == ("pid", 2, None)


@pytest.mark.parametrize("ids", UNIT_DTYPES_REFUSED.values(), ids=list(UNIT_DTYPES_REFUSED))
def test_a_unit_of_other_ids_is_refused_from_its_dtype_naming_the_fix(ids: pd.Series) -> None:
    df = pd.DataFrame({"pid": ids})
    with pytest.raises(TypeError, match=r"column 'pid' has dtype .*astype\('string'\)") as info:
        validation.check_privacy_unit(df, "pid", 2, None)
    with pytest.raises(TypeError) as other_values:  # the same dtype, other values
        validation.check_privacy_unit(
            pd.DataFrame({"pid": ids.iloc[::-1].iloc[:1]}), "pid", 2, None
        )
    assert str(other_values.value) == str(info.value)


def test_set_budget_refuses_ids_that_are_one_person_to_pandas_and_three_to_dask() -> None:
    df = pd.DataFrame({"pid": pd.Series([1, 1.0, True] * 5, dtype=object), "x": 1.0})
    with pytest.raises(TypeError, match="integer, string or categorical"):
        df.dp.set_budget(epsilon=1, privacy_unit="pid", max_rows=5)
    with pytest.raises(MissingBudgetError):
        df.dp.budget  # noqa: B018  (nothing was attached)


@pytest.mark.parametrize(
    "clip",
    [
        (0, 200_000),
        (0.0, 2e5),
        [0, 200_000],
        (np.float32(0), np.int64(200_000)),
        (Decimal(0), Fraction(200_000)),
    ],
    ids=repr,
)
def test_a_clip_pair_is_the_same_floats_however_given(clip: object) -> None:
    lower, upper = validation.check_clip(clip)
    assert (lower, upper) == (0.0, 200_000.0)
    assert type(lower) is float
    assert type(upper) is float


@pytest.mark.parametrize(
    "dtype",
    ["float64", "float32", "int8", "uint64", "bool", "Float64", "Int64", "float64[pyarrow]"],
)
def test_numeric_values_are_the_columns_floats_with_nan_for_missing(dtype: str) -> None:
    raw = [1, 0, None, 3] if dtype[0].isupper() or "[" in dtype else [1, 0, 1, 3]
    if dtype.startswith("float"):
        raw = [1.5, np.nan, -0.0, 3.0]
    df = pd.DataFrame({"x": pd.Series(raw, dtype=dtype)})
    values = validation.numeric_values(df, "x")
    expected = df["x"].to_numpy(dtype=np.float64, na_value=np.nan)
    assert values.dtype == np.float64
    np.testing.assert_array_equal(values, expected)
    assert np.signbit(values).tolist() == np.signbit(expected).tolist()
    # writing to it can never touch df: a read-only view, or a copy
    assert not values.flags.writeable or not np.shares_memory(values, df["x"].to_numpy())


@pytest.mark.parametrize(
    "dtype", [bool, np.int8, np.int64, np.uint16, np.uint64, np.float16, np.float64, np.complex128]
)
def test_what_a_numpy_column_holds_is_what_pandas_says_of_its_dtype(dtype: type) -> None:
    numpy_dtype = np.dtype(dtype)
    expected = "booleans" if pd.api.types.is_bool_dtype(numpy_dtype) else "numbers"
    assert pd.api.types.is_numeric_dtype(numpy_dtype)
    assert validation._column_holds(numpy_dtype) == expected


# ---------------------------------------------------------------- reading a column


def _columns() -> pd.DataFrame:
    n = 6
    frame = pd.DataFrame(
        {
            "f64": np.linspace(-1.0, 1.0, n),
            "f32": np.arange(n, dtype=np.float32),
            "i8": np.arange(n, dtype=np.int8) - 3,
            "i64": np.arange(n) * 2**40,
            "u64": np.arange(n, dtype=np.uint64) + np.uint64(2**63),
            "bool": np.arange(n) % 2 == 0,
            "obj": pd.Series(["a", 1, None, 2.5, "b", "c"], dtype=object),
            "nan": [1.0, np.nan, 3.0, np.nan, 5.0, 6.0],
        }
    )
    return frame


def _strided() -> pd.DataFrame:
    """Columns of one 2-D block from an ndarray, every other row (strided, F-ordered views)."""
    block = np.arange(24.0).reshape(12, 2)
    return pd.DataFrame(block, columns=["a", "b"]).iloc[::2]


@pytest.mark.parametrize("column", list(_columns().columns))
def test_a_numpy_column_is_read_as_stored_read_only_and_equal_to_the_series_values(
    column: str,
) -> None:
    frame = _columns()
    before = frame.copy()
    values = validation.column_values(frame, column)
    assert values is not None
    expected = frame[column].to_numpy()
    assert values.dtype == expected.dtype
    pd.testing.assert_series_equal(pd.Series(values, name=column), frame[column], check_index=False)
    with pytest.raises(ValueError, match="read-only"):
        values[0] = values[1]
    pd.testing.assert_frame_equal(frame, before)


@pytest.mark.parametrize("column", ["a", "b"])
def test_a_column_of_a_strided_2d_block_is_read_as_the_series_values(column: str) -> None:
    frame = _strided()
    values = validation.column_values(frame, column)
    assert values is not None
    assert values.tolist() == frame[column].tolist()
    assert validation.numeric_values(frame, column).tolist() == frame[column].tolist()


@pytest.mark.parametrize(
    "frame",
    [
        pd.DataFrame({"x": pd.array([1, None, 3], dtype="Int64")}),
        pd.DataFrame({"x": pd.Series(["a", None, "b"], dtype="str")}),
        pd.DataFrame({"x": pd.Categorical([1, 2, 1])}),
        pd.DataFrame({"x": pd.to_datetime(["2020-01-01", None, "2020-01-03"])}),
        pd.DataFrame([[1.0, 2.0]], columns=["x", "x"]),  # a duplicated label
        pd.DataFrame([[1.0, 2.0]], columns=pd.MultiIndex.from_tuples([("x", "a"), ("x", "b")])),
    ],
    ids=["nullable", "str", "categorical", "datetime", "duplicated", "multiindex_part"],
)
def test_a_column_not_stored_as_one_numpy_array_is_read_as_a_series(frame: pd.DataFrame) -> None:
    assert validation.column_values(frame, "x") is None


def test_numeric_values_are_the_same_with_or_without_reading_as_stored(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    frame = _columns().drop(columns="obj")
    fast = {col: validation.numeric_values(frame, col) for col in frame.columns}
    monkeypatch.delattr(pd.DataFrame, "_get_column_array")  # a pandas without the method
    assert validation.column_values(frame, "f64") is None
    for col in frame.columns:
        np.testing.assert_array_equal(validation.numeric_values(frame, col), fast[col])
        assert validation.numeric_values(frame, col).dtype == np.float64


def test_releases_are_the_same_without_reading_columns_as_stored(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def answers() -> list[Any]:
        df = pd.DataFrame({"pay": np.arange(200.0), "dept": np.arange(200) % 4})
        df.dp.set_budget(epsilon=100, seed=7)
        grouped = df.dp.groupby("dept", keys=[0, 1, 2, 5])
        return [
            df.dp.mean("pay", clip=(0, 100), epsilon=1),
            grouped.sum("pay", clip=(0, 100), epsilon=1).tolist(),
            grouped.count(epsilon=1).tolist(),
        ]

    fast = answers()
    monkeypatch.delattr(pd.DataFrame, "_get_column_array")
    assert answers() == fast


# ------------------------------------------------------------------- object columns

#: One person's value that pandas cannot hash or compare (or none: the neighbour without it).
ODD_VALUES: dict[str, object] = {
    "none": None,
    "list": [1],
    "dict": {"a": 1},
    "range": range(3),
    "signaling_nan": Decimal("sNaN"),
}


def with_objects(odd: object, engine: str, unit: str | None, run: str) -> Any:
    """60 rows whose ``k`` (keys "a", "b") and ``v`` (1.5) are object columns; ``odd`` in row 0."""
    keys: list[object] = ["a", "b"] * 30
    values: list[object] = [1.5] * 60
    if odd is not None:
        keys[0] = values[0] = odd
    run = f"{run}-{engine}-{unit}-{odd!r}"  # Dask binds budgets by content
    df: Any = pd.DataFrame(
        {
            "k": pd.Series(keys, dtype=object),
            "v": pd.Series(values, dtype=object),
            "x": np.linspace(0, 1, 60),
            "j": np.arange(60) % 2,
            "pid": np.arange(60) % 20,
            "run": run,
        }
    )
    if engine == "dask":
        dask = pytest.importorskip("dask")
        dd = pytest.importorskip("dask.dataframe")
        pytest.importorskip("pandas_dp.dask")
        with dask.config.set({"dataframe.convert-string": False}):  # the columns stay object
            df = dd.from_pandas(df, npartitions=2)
        assert df._meta["k"].dtype == object
    df.dp.set_budget(epsilon=10.0, delta=1e-5, seed=1, privacy_unit=unit)
    return df


def _bounds(unit: str | None, grouped: bool) -> dict[str, Any]:
    if unit is None:
        return {}
    return {"max_rows": 1, "max_groups": 1} if grouped else {"max_rows": 1}


OBJECT_RELEASES: dict[str, Callable[[Any, str | None], object]] = {
    "count_column": lambda d, u: d.dp.count("v", epsilon=1, **_bounds(u, False)),
    "count_column_auto": lambda d, u: d.dp.count(
        "v", epsilon=1, **({"max_rows": "auto"} if u else {})
    ),
    "nunique": lambda d, u: d.dp.nunique("v", epsilon=1, **_bounds(u, False)),
    "mean_auto_rows": lambda d, u: d.dp.mean(
        "v", clip=(0, 2), epsilon=1, **({"max_rows": "auto"} if u else {})
    ),
    "mean_auto_clip": lambda d, u: d.dp.mean(
        "v", clip="auto", epsilon=1, **({"max_rows": "auto"} if u else {})
    ),
    "argmax_exp": lambda d, u: d.dp.argmax_exp(
        "k", candidates=["a", "b"], epsilon=1, **_bounds(u, False)
    ),
    "histogram": lambda d, u: d.dp.histogram("v", bins=[0, 1, 2], epsilon=1, **_bounds(u, False)),
    "value_counts": lambda d, u: d.dp.value_counts("k", epsilon=1, delta=1e-6, **_bounds(u, False)),
    "crosstab": lambda d, u: d.dp.crosstab("k", "j", epsilon=1, delta=1e-6, **_bounds(u, True)),
    "crosstab_keys": lambda d, u: d.dp.crosstab(
        "k", "j", keys=(["a", "b"], [0, 1]), epsilon=1, **_bounds(u, True)
    ),
    "crosstab_one_axis": lambda d, u: d.dp.crosstab(
        "k", "j", keys=(None, [0, 1]), epsilon=1, delta=1e-6, **_bounds(u, True)
    ),
    "groupby_keys_count": lambda d, u: d.dp.groupby("k", keys=["a", "b"]).count(
        epsilon=1, **_bounds(u, True)
    ),
    "groupby_keys_mean": lambda d, u: d.dp.groupby("k", keys=["a", "b"]).mean(
        "x", clip=(0, 1), epsilon=1, **_bounds(u, True)
    ),
    "groupby_keys_count_auto": lambda d, u: d.dp.groupby("k", keys=["a", "b"]).count(
        epsilon=1, **({"max_rows": "auto", "max_groups": 1} if u else {})
    ),
    "groupby_keys_nunique": lambda d, u: d.dp.groupby("j", keys=[0, 1]).nunique(
        "v", epsilon=1, **_bounds(u, True)
    ),
    "groupby_keys_argmax": lambda d, u: d.dp.groupby("j", keys=[0, 1]).argmax_exp(
        "k", candidates=["a", "b"], epsilon=1, **_bounds(u, True)
    ),
    "groupby_count": lambda d, u: d.dp.groupby("k").count(
        epsilon=1, delta=1e-6, **_bounds(u, True)
    ),
    "groupby_mean": lambda d, u: d.dp.groupby("k").mean(
        "x", clip=(0, 1), epsilon=1, delta=1e-6, **_bounds(u, True)
    ),
    "groupby_median": lambda d, u: d.dp.groupby("k").median(
        "x", candidates=[0, 1], epsilon=1, delta=1e-6, **_bounds(u, True)
    ),
    "groupby_nunique": lambda d, u: d.dp.groupby("j").nunique(
        "v", epsilon=1, delta=1e-6, **_bounds(u, True)
    ),
    "groupby_count_column": lambda d, u: d.dp.groupby("j").count(
        "v", epsilon=1, delta=1e-6, **_bounds(u, True)
    ),
}


@pytest.mark.parametrize("unit", [None, "pid"])
@pytest.mark.parametrize("engine", ["pandas", "dask"])
@pytest.mark.parametrize("name", OBJECT_RELEASES)
def test_a_release_reading_an_object_column_is_refused_before_any_spend_whatever_its_values(
    name: str, engine: str, unit: str | None
) -> None:
    # A list, dict, range or Decimal('sNaN') in one person's row made these raise only when
    # that person was there: a free yes/no probe. The dtype decides now, never the values.
    messages = set()
    for odd in ODD_VALUES.values():
        df = with_objects(odd, engine, unit, name)
        refused = r"column '[kv]' (has dtype object|must be numeric)"
        with pytest.raises(TypeError, match=refused) as raised:
            OBJECT_RELEASES[name](df, unit)
        messages.add(str(raised.value))
        assert df.dp.budget.spent == 0
        assert df.dp.budget.entries == []
    assert len(messages) == 1  # the same refusal whether or not the odd value is there
    (message,) = messages
    for value in ("'a'", "'b'", "1.5", "sNaN", "range("):
        assert value not in message
    if "has dtype object" in message:
        assert "astype('string')" in message


@pytest.mark.parametrize(
    "column",
    [
        pd.Series(pd.Categorical([1, "a"] * 30)),  # categories of object dtype
        pd.Series([[1], [2]] * 30, dtype=pd.ArrowDtype(pa.list_(pa.int64()))),
        pd.Series([1, "a"] * 30, dtype=pd.SparseDtype(object)),
    ],
    ids=["object_categories", "arrow_lists", "sparse_objects"],
)
@pytest.mark.parametrize("engine", ["pandas", "dask"])
def test_columns_of_objects_in_another_dtype_are_refused_too(
    column: pd.Series, engine: str
) -> None:
    df: Any = pd.DataFrame({"k": column, "x": 1.0, "run": f"{engine}-{column.dtype}"})
    if engine == "dask":
        if isinstance(column.dtype, pd.SparseDtype):
            pytest.skip("Dask keeps no sparse column")
        pytest.importorskip("pandas_dp.dask")
        df = pytest.importorskip("dask.dataframe").from_pandas(df, npartitions=2)
    df.dp.set_budget(epsilon=10.0, delta=1e-5, seed=1)
    for call in (
        lambda: df.dp.groupby("k").count(epsilon=1, delta=1e-6),
        lambda: df.dp.value_counts("k", epsilon=1, delta=1e-6),
        lambda: df.dp.nunique("k", epsilon=1),
        lambda: df.dp.count("k", epsilon=1),
    ):
        with pytest.raises(TypeError, match=r"column 'k' has dtype .*may hold any Python object"):
            call()
    assert df.dp.budget.spent == 0


@pytest.mark.parametrize(
    "call",
    [
        lambda d: d.dp.mean("s", clip=(0, 1), epsilon=1, max_rows="auto"),
        lambda d: d.dp.mean("s", clip="auto", epsilon=1, max_rows="auto"),
        lambda d: d.dp.groupby("j", keys=[0, 1]).sum(
            "s", clip=(0, 1), epsilon=1, max_rows="auto", max_groups=1
        ),
    ],
    ids=["max_rows_auto", "clip_auto", "grouped"],
)
def test_a_call_of_several_parts_checks_its_statistic_before_the_first_spends(
    call: Callable[[pd.DataFrame], object],
) -> None:
    # max_rows="auto" spends on rows_per_unit first: a column the statistic cannot read is
    # refused before (it spent a quarter of epsilon, then raised).
    df = pd.DataFrame({"s": ["x"] * 40, "j": np.arange(40) % 2, "pid": np.arange(40) % 8})
    df.dp.set_budget(epsilon=10.0, seed=0, privacy_unit="pid")
    with pytest.raises(TypeError, match="column 's' must be numeric"):
        call(df)
    assert df.dp.budget.spent == 0


@pytest.mark.parametrize(
    ("dtype", "refused"),
    [
        (np.dtype(object), True),
        (pd.CategoricalDtype(pd.Index([1, "a"], dtype=object)), True),
        (pd.SparseDtype(object), True),
        (pd.ArrowDtype(pa.list_(pa.int64())), True),
        (pd.ArrowDtype(pa.struct([("a", pa.int64())])), True),
        (np.dtype(np.int64), False),
        (np.dtype(np.float64), False),
        (np.dtype(np.complex128), False),
        (np.dtype("datetime64[ns]"), False),
        (pd.StringDtype(), False),
        (pd.StringDtype("python"), False),
        (pd.CategoricalDtype(["a", "b"]), False),
        (pd.Float64Dtype(), False),
        (pd.ArrowDtype(pa.string()), False),
        (pd.IntervalDtype("float64"), False),
        (pd.SparseDtype(float), False),
    ],
)
def test_check_values_decides_from_the_dtype(dtype: Any, refused: bool) -> None:
    if refused:
        with pytest.raises(TypeError, match="column 'c' has dtype"):
            validation.check_values(dtype, "c")
    else:
        validation.check_values(dtype, "c")
