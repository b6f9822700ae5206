"""Grouped releases over public keys: the index, dropped rows, absent keys, cost, bad keys."""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction
from typing import Any

import numpy as np
import pandas as pd
import pytest

from pandas_dp.kinds.base import Neighbours
from pandas_dp.kinds.sums import plan_mean, plan_sum
from pandas_dp.mechanisms.keys import Grouping

CLIP = (0.0, 150_000.0)
KEYS = ["Sales", "HR", "Eng", "Ops"]  # not sorted; "HR" has no rows

Release = Callable[[Any], pd.Series | pd.DataFrame]

RELEASES: dict[str, Release] = {
    "count": lambda g: g.count(epsilon=1),
    "count_column": lambda g: g.count("bonus", epsilon=1),
    "sum": lambda g: g.sum("salary", clip=CLIP, epsilon=1),
    "mean": lambda g: g.mean("salary", clip=CLIP, epsilon=1),
}


# ------------------------------------------------------------------------ the index


@pytest.mark.parametrize("release", RELEASES.values(), ids=RELEASES.keys())
def test_index_is_exactly_the_keys_in_order_named_after_by(
    protected: pd.DataFrame, release: Release
) -> None:
    result = release(protected.dp.groupby("dept", keys=KEYS))
    pd.testing.assert_index_equal(result.index, pd.Index(KEYS, name="dept"))
    assert result.notna().all()


@pytest.fixture
def levelled(protected: pd.DataFrame) -> pd.DataFrame:
    """``protected`` with a second key column, derived through the accessor."""
    level = np.where(protected.age < 40, "junior", "senior")
    return protected.dp.assign(level=level)


MULTI_KEYS = pd.MultiIndex.from_product([["Ops", "Eng", "HR"], ["senior", "junior"]])

MULTI_FORMS: dict[str, object] = {
    "multiindex": MULTI_KEYS,
    "named_multiindex": MULTI_KEYS.set_names(["dept", "level"]),
    "levels_in_other_order": MULTI_KEYS.swaplevel().set_names(["level", "dept"]),
    "tuples": list(MULTI_KEYS),
    "dict_keys": dict.fromkeys(MULTI_KEYS).keys(),  # ordered: a dict keeps insertion order
    "frame": MULTI_KEYS.to_frame(index=False, name=["dept", "level"]),
    "frame_other_order": MULTI_KEYS.to_frame(index=False, name=["dept", "level"])[
        ["level", "dept"]
    ],
}


@pytest.mark.parametrize("keys", MULTI_FORMS.values(), ids=MULTI_FORMS.keys())
def test_multi_column_keys_in_every_form_give_the_same_release(
    levelled: pd.DataFrame, keys: object
) -> None:
    def release(keys: object) -> pd.Series:
        levelled.dp.budget.source = type(levelled.dp.budget.source)(5)  # same noise each time
        return levelled.dp.groupby(["dept", "level"], keys=keys).count(epsilon=1)

    result = release(keys)
    reference = release(MULTI_KEYS)
    pd.testing.assert_index_equal(result.index, MULTI_KEYS.set_names(["dept", "level"]))
    pd.testing.assert_series_equal(result, reference)


def test_multi_column_keys_are_matched_to_their_columns(
    exact: pd.DataFrame, huge_eps: float
) -> None:
    df = exact.dp.assign(level=np.where(exact.age < 40, "junior", "senior"))
    keys = MULTI_FORMS["frame_other_order"]
    result = df.dp.groupby(["dept", "level"], keys=keys).count(epsilon=huge_eps)
    truth = df.groupby(["dept", "level"]).size().reindex(MULTI_KEYS, fill_value=0)
    np.testing.assert_array_equal(result.to_numpy(), truth.to_numpy())
    assert result.sum() < len(df)  # "Sales" is not among the keys


@pytest.mark.parametrize(
    "keys",
    [
        pd.CategoricalDtype(KEYS),
        pd.Index(KEYS, name="other"),
        pd.Series(KEYS),
        tuple(KEYS),
        dict.fromkeys(KEYS).keys(),
    ],
    ids=["categorical_dtype", "named_index", "series", "tuple", "dict_keys"],
)
def test_single_column_key_forms(protected: pd.DataFrame, keys: object) -> None:
    result = protected.dp.groupby("dept", keys=keys).count(epsilon=1)
    pd.testing.assert_index_equal(result.index, pd.Index(KEYS, name="dept"))


FAST_COLUMNS: dict[str, Callable[[pd.Series], object]] = {
    # categories in another order than the keys, with one that is not a key
    "categorical": lambda dept: pd.Categorical(dept, categories=["Ops", "Legal", "Sales", "Eng"]),
    # looked up in the keys by pyarrow, a missing value among them
    "pyarrow_str": lambda dept: dept.where(dept.index % 7 != 0).astype("str"),
}


@pytest.mark.parametrize("release", RELEASES.values(), ids=RELEASES.keys())
@pytest.mark.parametrize("column", FAST_COLUMNS.values(), ids=FAST_COLUMNS.keys())
def test_fast_key_columns_give_the_release_of_a_factorized_column(
    salaries: pd.DataFrame, release: Release, column: Callable[[pd.Series], object]
) -> None:
    fast = salaries.assign(dept=column(salaries.dept))
    # strings stored as Python objects: factorized, their uniques looked up in the keys
    factorized = salaries.assign(dept=fast.dept.astype(pd.StringDtype("python")))
    factorized.dp.set_budget(epsilon=10, seed=21)
    fast.dp.set_budget(epsilon=10, seed=21)
    a = release(factorized.dp.groupby("dept", keys=KEYS))
    b = release(fast.dp.groupby("dept", keys=KEYS))
    pd.testing.assert_series_equal(a, b)


# ---------------------------------------------------------- which rows are counted


@pytest.fixture
def dirty(exact: pd.DataFrame) -> pd.DataFrame:
    """``exact`` with keys outside KEYS, missing keys and missing values, via assign."""
    dept = exact.dept.copy()
    dept.iloc[::7] = "Legal"  # not a key: dropped
    dept.iloc[3::11] = np.nan  # missing key: dropped
    salary = exact.salary.copy()
    salary.iloc[1::5] = np.nan  # missing value: skipped
    return exact.dp.assign(dept=dept, salary=salary)


def reference(df: pd.DataFrame, column: str, clip: tuple[float, float]) -> pd.DataFrame:
    """pandas' answer on the clipped column, reindexed to the public keys."""
    clipped = df.assign(**{column: df[column].clip(*clip)})
    return clipped.groupby("dept")[column].agg(["size", "count", "sum", "mean"]).reindex(KEYS)


def test_counts_at_huge_epsilon_match_pandas(dirty: pd.DataFrame, huge_eps: float) -> None:
    ref = reference(dirty, "salary", CLIP)
    g = dirty.dp.groupby("dept", keys=KEYS)
    np.testing.assert_array_equal(g.count(epsilon=huge_eps), ref["size"].fillna(0))
    np.testing.assert_array_equal(g.count("salary", epsilon=huge_eps), ref["count"].fillna(0))
    assert g.count(epsilon=huge_eps).sum() < len(dirty)  # Legal and missing keys dropped


def test_sums_at_huge_epsilon_match_pandas_up_to_the_grid(
    dirty: pd.DataFrame, huge_eps: float
) -> None:
    ref = reference(dirty, "salary", CLIP)
    p = plan_sum(CLIP, Fraction(10**9), Neighbours("add_remove", grouped=True))
    got = dirty.dp.groupby("dept", keys=KEYS).sum("salary", clip=CLIP, epsilon=huge_eps)
    bound = (ref["count"].fillna(0) / 2 + 40 * p.scale) * p.step
    assert (abs(got - ref["sum"].fillna(0)) <= bound).all()


def test_means_at_huge_epsilon_match_pandas_within_one_step(
    dirty: pd.DataFrame, huge_eps: float
) -> None:
    ref = reference(dirty, "salary", CLIP)
    step = plan_mean(CLIP, Fraction(10**9), Neighbours("add_remove", grouped=True)).grid.step
    got = dirty.dp.groupby("dept", keys=KEYS).mean("salary", clip=CLIP, epsilon=huge_eps)
    present = ref["count"].notna()
    assert (abs(got[present] - ref["mean"][present]) <= step).all()
    assert CLIP[0] <= got["HR"] <= CLIP[1]  # absent key answered inside the clip


def test_absent_key_gets_a_noisy_answer(protected: pd.DataFrame) -> None:
    counts = [protected.dp.groupby("dept", keys=KEYS).count(epsilon=0.5)["HR"] for _ in range(10)]
    assert len(set(counts)) > 1  # noise, not a fixed zero that would reveal absence


# --------------------------------------------------------------------- cost and shape


@pytest.mark.parametrize("release", RELEASES.values(), ids=RELEASES.keys())
def test_grouped_release_charges_once_for_all_keys(
    protected: pd.DataFrame, release: Release
) -> None:
    release(protected.dp.groupby("dept", keys=KEYS))
    budget = protected.dp.budget
    assert budget.spent == 1
    (entry,) = budget.entries
    assert entry.keys == len(KEYS)
    assert entry.operation.startswith("groupby.")


@pytest.mark.parametrize("kind", ["sum", "mean"])
def test_multi_column_grouped_release_is_a_frame_charged_once(
    protected: pd.DataFrame, kind: str
) -> None:
    clip = {"salary": CLIP, "bonus": (0.0, 5_000.0)}
    result = getattr(protected.dp.groupby("dept", keys=KEYS), kind)(clip=clip, epsilon=0.5)
    assert isinstance(result, pd.DataFrame)
    assert list(result.columns) == list(clip)
    pd.testing.assert_index_equal(result.index, pd.Index(KEYS, name="dept"))
    assert protected.dp.budget.spent == Fraction(1, 2)
    assert len(protected.dp.budget.entries) == 1


@pytest.mark.parametrize(("adjacency", "sensitivity"), [("add_remove", "1"), ("substitute", "2")])
def test_grouped_count_sensitivity_follows_the_adjacency(
    salaries: pd.DataFrame, adjacency: str, sensitivity: str
) -> None:
    salaries.dp.set_budget(epsilon=1, adjacency=adjacency)
    salaries.dp.groupby("dept", keys=KEYS).count(epsilon=1)
    assert salaries.dp.budget.entries[0].sensitivity == sensitivity
    assert salaries.dp.budget.spent == 1


# ------------------------------------------------------------------------ bad keys


@pytest.mark.parametrize(
    ("by", "keys", "error", "match"),
    [
        ("dept", None, TypeError, r"`delta` is missing.*keys=.*unique\(\)"),
        ("dept", "Eng", TypeError, "collection of public keys"),
        ("dept", 3, TypeError, "collection of public keys"),
        ("dept", ["Eng", "Ops", "Eng"], ValueError, "duplicates"),
        ("dept", ["Eng", np.nan], ValueError, "missing values"),
        ("dept", [], ValueError, "must not be empty"),
        ("dept", pd.CategoricalDtype(), ValueError, "without categories"),
        ("dept", MULTI_KEYS, ValueError, "one level per `by` column"),
        (["dept", "age"], ["Eng", "Ops"], ValueError, "one level per `by` column"),
        (["dept", "age"], [("Eng", 30), ("Eng", 30)], ValueError, "duplicates"),
        (["dept", "age"], [("Eng", np.nan)], ValueError, "missing values"),
        ([], KEYS, ValueError, "at least one column"),
        (["dept", "dept"], [("Eng", "Eng")], ValueError, "names a column twice"),
        ("nope", KEYS, KeyError, "nope"),
        (["dept", "nope"], [("Eng", 1)], KeyError, "nope"),
        ("dept", set(KEYS), TypeError, "`keys` must have a fixed order"),
        ("dept", frozenset(KEYS), TypeError, "`keys` must have a fixed order"),
        (["dept", "age"], {("Eng", 30), ("Ops", 40)}, TypeError, "`keys` must have a fixed order"),
        ("age", ["30", "40"], TypeError, r"`keys` are strings but column 'age' holds numbers"),
        ("dept", [1, 2], TypeError, r"`keys` are numbers but column 'dept' holds strings"),
        (["dept", "age"], [("Eng", "30")], TypeError, "`keys` are strings but column 'age'"),
    ],
    ids=[
        "missing",
        "string",
        "scalar",
        "duplicated",
        "nan",
        "empty",
        "no_categories",
        "too_many_levels",
        "too_few_levels",
        "duplicated_tuples",
        "nan_in_tuple",
        "no_by",
        "by_twice",
        "by_not_a_column",
        "one_by_not_a_column",
        "set",
        "frozenset",
        "set_of_tuples",
        "strings_on_numbers",
        "numbers_on_strings",
        "one_level_of_the_wrong_type",
    ],
)
def test_bad_keys_or_by_raise_before_any_spend(
    protected: pd.DataFrame,
    nothing_spent: Callable[[], None],
    by: object,
    keys: object,
    error: type,
    match: str,
) -> None:
    with pytest.raises(error, match=match):
        protected.dp.groupby(by, keys=keys).count(epsilon=1)  # type: ignore[arg-type]
    nothing_spent()


def test_missing_keys_and_delta_error_explains_why_and_what_to_pass(
    protected: pd.DataFrame,
) -> None:
    # Without keys=, the keys are chosen privately (tests/test_keyless.py): that needs delta=.
    with pytest.raises(TypeError) as info:
        protected.dp.groupby("dept").count(epsilon=0.1)
    message = str(info.value)
    assert "`delta` is missing" in message
    assert "keys=[" in message
    assert "not private" in message


@pytest.mark.parametrize("by", [("dept", "x"), [("dept", "x")]], ids=["tuple", "list-of-tuple"])
def test_a_tuple_column_label_groups_as_one_column(by: Any) -> None:
    df = pd.DataFrame({("dept", "x"): ["a", "b", "a"], ("pay", "y"): [1.0, 2.0, 3.0]})
    df.dp.set_budget(epsilon=1e12, seed=0)
    counts = df.dp.groupby(by, keys=["a", "b"]).count(epsilon=1e9)
    assert counts.index.name == ("dept", "x")
    assert counts.tolist() == [2, 1]


@pytest.mark.parametrize(
    ("column", "keys"),
    [
        (pd.Series([1, 2], dtype="int64"), [1.0, 2.5]),  # numbers of another width
        (pd.Series(pd.Categorical(["a", "b"])), ["a", "c"]),
        (pd.Series([0.5, 1.5]), pd.interval_range(0, 2)),  # values fall into intervals
        (pd.Series([True, False]), [1, 0]),
    ],
    ids=["float_keys_on_ints", "categorical", "intervals", "ints_on_bools"],
)
def test_keys_that_may_match_are_accepted_from_the_dtypes_alone(
    column: pd.Series, keys: list[object]
) -> None:
    df = pd.DataFrame({"k": column})
    df.dp.set_budget(epsilon=1, seed=1)
    # the refusal reads dtypes only: an empty frame of the same dtype decides the same way
    df.dp.groupby("k", keys=keys).count(epsilon=1)
    Grouping.of(df, "k", keys).check(df.iloc[:0])


def test_renaming_a_results_index_leaves_the_keys_and_later_results_alone() -> None:
    df = pd.DataFrame({"dept": ["a", "b", "a"] * 10, "team": [1, 2, 3] * 10})
    df.dp.set_budget(epsilon=100, seed=0)
    grouped = df.dp.groupby("dept", keys=["a", "b"])
    first = grouped.count(epsilon=1)
    first.index.name = "renamed"
    grouped.keys.name = "renamed too"
    assert grouped.keys.name == "dept"
    assert grouped.count(epsilon=1).index.name == "dept"
    several = df.dp.groupby(["dept", "team"], keys=[("a", 1), ("b", 2)])
    several.count(epsilon=1).index.names = ["x", "y"]
    assert list(several.count(epsilon=1).index.names) == ["dept", "team"]
    table = df.dp.crosstab("dept", "team", keys=(["a", "b"], [1, 2]), epsilon=1)
    table.index.name, table.columns.name = "x", "y"
    again = df.dp.crosstab("dept", "team", keys=(["a", "b"], [1, 2]), epsilon=1)
    assert (again.index.name, again.columns.name) == ("dept", "team")


def test_groupby_reads_no_column_and_the_keys_type_is_checked_at_the_release(
    protected: pd.DataFrame, nothing_spent: Callable[[], None], monkeypatch: pytest.MonkeyPatch
) -> None:
    # groupby() checks the labels and normalises the keys; the keys' type is checked when a
    # release reads the column, before anything is spent
    with monkeypatch.context() as reads:
        for read in ("__getitem__", "_get_column_array"):
            reads.setattr(pd.DataFrame, read, lambda *a: pytest.fail("groupby() read a column"))
        grouped = protected.dp.groupby("age", keys=["30", "40"])
    with pytest.raises(TypeError, match="`keys` are strings but column 'age' holds numbers"):
        grouped.mean("salary", clip=(0, 1), epsilon=1)
    nothing_spent()


@pytest.mark.parametrize("call", ["count", "mean", "mean_cut"])
def test_keys_of_the_wrong_type_are_refused_before_max_rows_auto_spends(call: str) -> None:
    # max_rows="auto" first spends on the rows per person of the ungrouped frame: the keys'
    # type must be refused before that part
    orders = pd.DataFrame(
        {
            "customer": np.arange(600) % 200,
            "region": np.array(["N", "S", "E"])[np.arange(600) % 3],
            "amount": np.arange(600.0) % 90,
        }
    )
    orders.dp.set_budget(epsilon=10, seed=0, privacy_unit="customer", max_groups=1)
    grouped = orders.dp.groupby("region", keys=[1, 2])
    release = {
        "count": lambda: grouped.count(epsilon=1, max_rows="auto"),
        "mean": lambda: grouped.mean("amount", clip=(0, 100), epsilon=1, max_rows="auto"),
        "mean_cut": lambda: grouped.mean(
            "amount", clip=(0, 100), epsilon=1, max_rows="auto", cut=True
        ),
    }[call]
    with pytest.raises(TypeError, match="`keys` are numbers but column 'region' holds strings"):
        release()
    assert orders.dp.budget.spent == 0
    assert orders.dp.budget.entries == []
