"""Fail-closed binding: which frames may spend a budget, the attrs marker, derive and inherit."""

from __future__ import annotations

import copy
import gc
import json
import os
import pickle
import subprocess
import sys
import uuid
import warnings
from collections.abc import Callable
from fractions import Fraction
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from pandas_dp import BudgetExceededError, MissingBudgetError, PandasDPError

Derive = Callable[[pd.DataFrame], pd.DataFrame]

#: pandas operations whose result must not spend: pandas copies attrs into all of them.
PANDAS_DERIVED: dict[str, Derive] = {
    "copy": lambda df: df.copy(),
    "boolean_index": lambda df: df[df.age > 30],
    "loc": lambda df: df.loc[df.age > 30, ["age", "salary"]],
    "head": lambda df: df.head(),
    "concat": lambda df: pd.concat([df, df]),
    "merge": lambda df: df.merge(df, on="dept"),
    "groupby_sum": lambda df: df.groupby("dept")[["age", "salary"]].sum(),
    "groupby_agg": lambda df: df.groupby("dept").agg({"salary": "sum"}),
    "pivot_table": lambda df: df.pivot_table(index="dept", values="salary"),
    "describe": lambda df: df.describe(),
    "melt": lambda df: df.melt(id_vars="dept", value_vars=["age", "salary"]),
    "transform": lambda df: df[["age", "salary"]].transform(np.abs),
    "groupby_transform": lambda df: df.groupby("dept")[["age", "salary"]].transform("mean"),
    "pickle": lambda df: pickle.loads(pickle.dumps(df)),
    "deepcopy": copy.deepcopy,
}

#: pandas operations that drop attrs (pandas 3.1): no marker, but still no budget.
ATTRS_DROPPED: dict[str, Derive] = {
    "named_agg": lambda df: df.groupby("dept").agg(total=("salary", "sum")),
    "series_agg_list": lambda df: df.groupby("dept")["salary"].agg(["sum", "mean"]).reset_index(),
}

#: The accessor's row-wise transformations: these share the budget.
ACCESSOR_DERIVED: dict[str, Derive] = {
    "filter": lambda df: df.dp.filter(df.age > 30),
    "filter_callable": lambda df: df.dp.filter(lambda d: d.salary > 50_000),
    "query": lambda df: df.dp.query("age > 30 and dept != 'Ops'"),
    "assign": lambda df: df.dp.assign(k_salary=df.salary / 1000),
    "select": lambda df: df.dp.select(["dept", "salary"]),
    "chained": lambda df: df.dp.filter(df.age > 30).dp.select(["age", "salary"]),
}


# ------------------------------------------------------------------- fail closed


@pytest.mark.parametrize("derive", PANDAS_DERIVED.values(), ids=PANDAS_DERIVED.keys())
def test_pandas_derived_frame_cannot_spend(protected: pd.DataFrame, derive: Derive) -> None:
    derived = derive(protected)
    with pytest.raises(MissingBudgetError) as info:
        derived.dp.count(epsilon=0.1)
    message = str(info.value)
    for fix in ("df.dp.filter", "df.dp.query", "inherit"):
        assert fix in message
    assert protected.dp.budget.spent == 0


@pytest.mark.parametrize("derive", PANDAS_DERIVED.values(), ids=PANDAS_DERIVED.keys())
def test_pandas_derived_frame_has_no_budget_to_read(
    protected: pd.DataFrame, derive: Derive
) -> None:
    with pytest.raises(MissingBudgetError):
        _ = derive(protected).dp.budget


@pytest.mark.parametrize("derive", ATTRS_DROPPED.values(), ids=ATTRS_DROPPED.keys())
def test_frame_derived_without_attrs_cannot_spend_either(
    protected: pd.DataFrame, derive: Derive
) -> None:
    with pytest.raises(MissingBudgetError):
        derive(protected).dp.count(epsilon=0.1)
    assert protected.dp.budget.spent == 0


def test_frame_without_budget_says_how_to_attach_one(salaries: pd.DataFrame) -> None:
    with pytest.raises(MissingBudgetError, match=r"df\.dp\.set_budget\(epsilon="):
        salaries.dp.mean("salary", clip=(0, 1e5), epsilon=0.1)


def test_missing_budget_error_is_a_lookup_error(salaries: pd.DataFrame) -> None:
    with pytest.raises(LookupError):
        salaries.dp.count(epsilon=0.1)


def test_no_budget_is_created_implicitly(salaries: pd.DataFrame) -> None:
    with pytest.raises(MissingBudgetError):
        salaries.dp.count(epsilon=0.1)
    with pytest.raises(MissingBudgetError):
        _ = salaries.dp.budget
    assert "pandas_dp" not in salaries.attrs


# ------------------------------------------------------------------------ marker


def test_marker_is_a_json_safe_string_naming_the_budget(protected: pd.DataFrame) -> None:
    marker = protected.attrs["pandas_dp"]
    assert isinstance(marker, str)
    assert json.loads(json.dumps(protected.attrs)) == protected.attrs
    assert json.loads(marker)["budget"] == protected.dp.budget.id


def test_parquet_round_trip_keeps_data_and_marker_but_not_the_budget(
    protected: pd.DataFrame, tmp_path: object
) -> None:
    path = f"{tmp_path}/protected.parquet"
    protected.to_parquet(path)
    back = pd.read_parquet(path)
    pd.testing.assert_frame_equal(back, protected, check_dtype=False)
    assert back.attrs["pandas_dp"] == protected.attrs["pandas_dp"]
    with pytest.raises(MissingBudgetError, match="inherit"):
        back.dp.count(epsilon=0.1)


def test_set_budget_on_a_derived_frame_is_refused_while_its_budget_lives(
    protected: pd.DataFrame,
) -> None:
    derived = protected[protected.age > 30]
    with pytest.raises(PandasDPError, match="reset the accounting"):
        derived.dp.set_budget(epsilon=5)
    with pytest.raises(MissingBudgetError):
        derived.dp.count(epsilon=0.1)


def test_set_budget_stays_refused_after_the_original_frame_is_gone() -> None:
    # df = df.reset_index() drops the frame the budget was set on; a new budget on
    # the result would silently reset the accounting for the same people.
    df = pd.DataFrame({"age": [31, 45, 27], "salary": [1.0, 2.0, 3.0]})
    budget = df.dp.set_budget(epsilon=1, seed=0)
    df.dp.count(epsilon=1)
    df = df.reset_index(drop=True)
    gc.collect()
    with pytest.raises(PandasDPError, match="reset the accounting"):
        df.dp.set_budget(epsilon=2, seed=0)
    # the analyst asserts one row per person and rebinds through the marker
    assert df.dp.inherit() is df
    assert df.dp.budget is budget
    with pytest.raises(BudgetExceededError):
        df.dp.count(epsilon=0.1)


def test_inherit_without_a_source_needs_a_marker_of_this_process() -> None:
    df = pd.DataFrame({"x": [1.0]})
    with pytest.raises(MissingBudgetError, match="inherit\\(df\\)"):
        df.dp.inherit()
    df.attrs["pandas_dp"] = json.dumps({"budget": "f" * 32, "name": None})
    with pytest.raises(MissingBudgetError):
        df.dp.inherit()


def test_set_budget_on_an_accessor_derived_frame_is_refused(protected: pd.DataFrame) -> None:
    derived = protected.dp.filter(protected.age > 30)
    with pytest.raises(PandasDPError, match="already has a privacy budget"):
        derived.dp.set_budget(epsilon=5)


# ------------------------------------------------------- accessor-derived frames


@pytest.mark.parametrize("derive", ACCESSOR_DERIVED.values(), ids=ACCESSOR_DERIVED.keys())
def test_accessor_derived_frame_shares_the_same_budget(
    protected: pd.DataFrame, derive: Derive
) -> None:
    budget = protected.dp.budget
    derived = derive(protected)
    assert derived.dp.budget is budget
    derived.dp.count(epsilon=0.25)
    protected.dp.count(epsilon=0.5)
    assert budget.spent == Fraction(3, 4)


def test_filter_keeps_exactly_the_masked_rows(protected: pd.DataFrame) -> None:
    mask = protected.age > 30
    pd.testing.assert_frame_equal(protected.dp.filter(mask), protected[mask])


@pytest.mark.parametrize(
    ("mask", "error"),
    [
        (lambda df: (df.age > 30).iloc[::-1], ValueError),  # same labels, other order
        (lambda df: (df.age > 30).reset_index(drop=True).set_axis(df.index + 1), ValueError),
        (lambda df: (df.age > 30).to_numpy()[:-1], ValueError),  # one entry short
        (lambda df: np.ones((len(df), 1), dtype=bool), ValueError),
        (lambda df: (df.age > 30).astype(int), TypeError),  # 0/1, not boolean
        (lambda df: df.age, TypeError),
        (lambda df: df.dept, TypeError),
    ],
    ids=["reordered", "misaligned", "short", "2d", "int", "values", "strings"],
)
def test_filter_rejects_a_bad_mask_without_binding_or_spending(
    protected: pd.DataFrame, mask: Derive, error: type[Exception]
) -> None:
    with pytest.raises(error, match="`mask`"):
        protected.dp.filter(mask(protected))
    assert protected.dp.budget.spent == 0


def test_query_equals_a_filter_by_the_same_expression(protected: pd.DataFrame) -> None:
    result = protected.dp.query("age > 30 and dept != 'Ops'")
    pd.testing.assert_frame_equal(
        result, protected[(protected.age > 30) & (protected.dept != "Ops")]
    )
    assert result.index.is_unique
    assert result.index.isin(protected.index).all()


def test_query_resolves_local_variables(protected: pd.DataFrame) -> None:
    cut = 40
    result = protected.dp.query("age > @cut")
    pd.testing.assert_frame_equal(result, protected[protected.age > cut])


@pytest.mark.parametrize("expr", ["age", "age + 1", "salary * 2", "dept", "doubled = age * 2"])
def test_query_rejects_non_boolean_expressions(protected: pd.DataFrame, expr: str) -> None:
    with pytest.raises(TypeError, match="`expr`"):
        protected.dp.query(expr)


def test_query_rejects_inplace(protected: pd.DataFrame) -> None:
    with pytest.raises(TypeError, match="inplace"):
        protected.dp.query("age > 30", inplace=True)


def test_assign_adds_columns_and_keeps_rows(protected: pd.DataFrame) -> None:
    result = protected.dp.assign(k=lambda d: d.salary / 1000)
    pd.testing.assert_index_equal(result.index, protected.index)
    np.testing.assert_array_equal(result.k, protected.salary / 1000)
    assert "k" not in protected.columns


def test_select_rejects_a_missing_column(protected: pd.DataFrame) -> None:
    with pytest.raises(KeyError, match="nope"):
        protected.dp.select(["salary", "nope"])


def test_select_rejects_a_bare_string(protected: pd.DataFrame) -> None:
    with pytest.raises(TypeError, match="`columns`"):
        protected.dp.select("salary")


# ------------------------------------------------------------------------ inherit


def test_inherit_binds_a_derived_frame_to_the_source_budget(protected: pd.DataFrame) -> None:
    derived = protected[protected.age > 30].sort_values("age")
    assert derived.dp.inherit(protected) is derived
    assert derived.dp.budget is protected.dp.budget
    derived.dp.count(epsilon=0.5)
    assert protected.dp.budget.spent == Fraction(1, 2)


def test_inherit_refuses_a_frame_of_another_live_budget(protected: pd.DataFrame) -> None:
    other = pd.DataFrame({"age": [30, 40], "salary": [1.0, 2.0]})
    other.dp.set_budget(epsilon=1)
    stray = other.copy()
    with pytest.raises(PandasDPError, match="another live privacy budget"):
        stray.dp.inherit(protected)
    with pytest.raises(PandasDPError, match="another privacy budget"):
        other.dp.inherit(protected)
    with pytest.raises(MissingBudgetError):
        stray.dp.count(epsilon=0.1)


def test_inherit_needs_a_source_with_a_budget(protected: pd.DataFrame) -> None:
    derived = protected.copy()
    with pytest.raises(MissingBudgetError):
        derived.dp.inherit(protected.copy())
    with pytest.raises(TypeError, match="`source`"):
        derived.dp.inherit(protected.salary)  # type: ignore[arg-type]


def test_inherited_frame_does_not_claim_the_root_row_count(substituted: pd.DataFrame) -> None:
    derived = substituted.head(50).dp.inherit(substituted)
    derived.dp.count(epsilon=0.5)
    assert substituted.dp.budget.spent == Fraction(1, 2)


# ------------------------------------------------------------------- no mutation


def test_releases_do_not_mutate_the_callers_frame(protected: pd.DataFrame) -> None:
    protected.loc[protected.index[:3], "salary"] = [np.nan, np.inf, -np.inf]
    before = protected.copy()
    attrs = dict(protected.attrs)
    keys = ["Eng", "Ops", "Sales"]
    protected.dp.count("bonus", epsilon=0.1)
    protected.dp.sum(clip={"salary": (0, 1e5), "bonus": (0, 5e3)}, epsilon=0.1)
    protected.dp.mean("salary", clip=(1e4, 1e5), epsilon=0.1)
    protected.dp.groupby("dept", keys=keys).mean("salary", clip=(1e4, 1e5), epsilon=0.1)
    protected.dp.filter(protected.age > 30).dp.sum("salary", clip=(0, 1e5), epsilon=0.1)
    protected.dp.select(["salary"]).dp.mean("salary", clip=(0, 1e5), epsilon=0.1)
    protected.dp.assign(salary=protected.salary * 2)
    pd.testing.assert_frame_equal(protected, before)
    assert protected.attrs == attrs


# ------------------------------------------------- substitute: which n is public


def test_substitute_filtered_count_is_charged_with_sensitivity_one(
    substituted: pd.DataFrame,
) -> None:
    budget = substituted.dp.budget
    filtered = substituted.dp.filter(substituted.age > 30)
    answers = {filtered.dp.count(epsilon=0.5) for _ in range(10)}
    assert len(answers) > 1
    assert budget.spent == 5
    assert set(budget.ledger.sensitivity) == {"1"}


@pytest.mark.parametrize(
    "derive",
    [lambda df: df.dp.select(["dept", "salary"]), lambda df: df.dp.assign(k=df.salary / 1e3)],
    ids=["select", "assign"],
)
def test_substitute_select_and_assign_keep_the_exact_row_count(
    substituted: pd.DataFrame, derive: Derive
) -> None:
    derived = derive(substituted)
    assert derived.dp.count(epsilon=0.5) == len(substituted)
    assert substituted.dp.budget.spent == 0


IN_PLACE: dict[str, Callable[[pd.DataFrame], object]] = {
    "append-a-copy": lambda df: df.loc.__setitem__(len(df) + 10**6, df.iloc[0]),
    "drop": lambda df: df.drop(index=df.index[:1], inplace=True),
    "drop-nothing": lambda df: df.drop(index=[], inplace=True),
    "dropna": lambda df: df.dropna(subset=["salary"], inplace=True),  # drops nothing here
    "query": lambda df: df.query("age >= 0", inplace=True),  # keeps every row
    "sort": lambda df: df.sort_values("age", inplace=True),
    "fillna": lambda df: df.fillna(0.0, inplace=True),
}


@pytest.mark.parametrize("change", IN_PLACE.values(), ids=IN_PLACE.keys())
@pytest.mark.parametrize("frame", ["protected", "substituted", "filtered"])
def test_rows_changed_in_place_stop_the_frame_spending_until_inherit(
    frame: str, change: Callable[[pd.DataFrame], object], request: pytest.FixtureRequest
) -> None:
    df: pd.DataFrame = request.getfixturevalue(
        "substituted" if frame == "substituted" else "protected"
    )
    if frame == "filtered":
        df = df.dp.filter(df.age > 30)
    budget = df.dp.budget
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # pandas 3.1 deprecates inplace; still supported
        change(df)
    # Refused whatever the change did to the data (the test is on the index object):
    # a row added in place may repeat a person.
    for release in (
        lambda: df.dp.count(epsilon=0.5),
        lambda: df.dp.mean("salary", clip=(0, 1e5), epsilon=0.5),
        lambda: df.dp.filter(np.ones(len(df), dtype=bool)),
        lambda: df.dp.groupby("dept", keys=["Eng"]).count(epsilon=0.5),
        lambda: df.dp.median("age", candidates=[20, 40, 60], epsilon=0.5),
    ):
        with pytest.raises(MissingBudgetError, match=r"changed in place.*df\.dp\.inherit\(\)"):
            release()
    assert budget.spent == 0
    assert df.dp.budget is budget  # reading the budget is not a release
    # The analyst asserts one row per person again: the frame spends, never as the root
    # frame (its row count is no longer the public one under substitute).
    assert df.dp.inherit() is df
    df.dp.count(epsilon=0.5)
    assert budget.spent == Fraction(1, 2)
    assert budget.entries[-1].sensitivity == "1"


def test_column_changes_in_place_keep_the_frame_spending(substituted: pd.DataFrame) -> None:
    substituted["bonus2"] = substituted["bonus"] * 2
    del substituted["bonus2"]
    substituted.loc[:, "age"] = 40  # values overwritten in place: not detectable, documented
    assert substituted.dp.count(epsilon=0.5) == len(substituted)  # still root: n public
    assert substituted.dp.budget.spent == 0


# ------------------------------------- re-attaching a named budget in the same process


@pytest.mark.parametrize(
    "derive",
    [
        lambda df: df[df.hiv],  # a plain pandas filter
        lambda df: pd.concat([df, df]),  # every person twice
        lambda df: df.reset_index(drop=True),
    ],
    ids=["filter", "concat", "reset_index"],
)
def test_a_frame_derived_from_a_live_named_budget_never_becomes_its_root(
    derive: Derive,
) -> None:
    name = f"clinic-{uuid.uuid4().hex}"  # named in-memory budgets live for the process
    df = pd.DataFrame({"hiv": [True, False, True, False], "age": [30, 40, 50, 60]})
    budget = df.dp.set_budget(epsilon=1, adjacency="substitute", name=name, seed=1)
    derived = derive(df)
    with pytest.raises(PandasDPError, match=rf"budget '{name}' was created.*inherit\(\)"):
        derived.dp.set_budget(epsilon=1, adjacency="substitute", name=name, seed=1)
    with pytest.raises(MissingBudgetError):
        derived.dp.count(epsilon=0.5)
    assert budget.spent == 0
    # Only the analyst's assertion binds it, and never as the root frame: its row count
    # is not the public one, so a count costs epsilon and carries noise.
    derived.dp.inherit()
    derived.dp.count(epsilon=0.5)
    assert budget.spent == Fraction(1, 2)
    assert budget.entries[-1].sensitivity == "1"


def test_a_frame_without_a_marker_attached_to_a_live_name_again_is_never_root() -> None:
    name = f"hr-{uuid.uuid4().hex}"
    df = pd.DataFrame({"x": [1.0, 2.0, 3.0]})
    budget = df.dp.set_budget(epsilon=10, adjacency="substitute", name=name, seed=1)
    assert df.dp.count(epsilon=1) == 3  # the root frame: n public, exact and free
    assert budget.spent == 0
    # every person twice, and the marker dropped by a round trip through numpy
    dup = pd.DataFrame(pd.concat([df, df]).to_numpy(), columns=["x"])
    again = dup.dp.set_budget(epsilon=10, adjacency="substitute", name=name, seed=2)
    dup.dp.count(epsilon=1)
    assert again.spent == 1  # charged, with noise: not taken as the public row count
    assert again.entries[-1].sensitivity == "1"


@pytest.mark.parametrize("dtype", ["int64", "Int64"])
def test_a_unit_column_deleted_and_set_again_is_caught_whatever_memory_it_reuses(
    dtype: str,
) -> None:
    """``del df[unit]``, then new ids: their copy may be allocated where the old ids were.

    The memory of the old ids is freed by ``del`` (a ``gc.collect()`` changes
    nothing here) and the copy ``df[unit] = ...`` makes reuses it in about half
    of these rounds: a check on the address alone passed those, so 40 rounds
    fail it all but surely.
    """
    for _ in range(40):
        df = pd.DataFrame({"pid": pd.array(np.arange(64) % 4).astype(dtype), "x": 1.0})
        budget = df.dp.set_budget(epsilon=1e6, privacy_unit="pid", max_rows=1, seed=0)
        new_ids = pd.array(np.arange(64)).astype(dtype)  # every row a person of its own
        del df["pid"]
        df["pid"] = new_ids
        with pytest.raises(MissingBudgetError, match=r"privacy unit column 'pid' was replaced"):
            df.dp.count(epsilon=1e5)
        assert budget.entries == []


def test_a_unit_column_read_again_unchanged_is_the_one_bound() -> None:
    df = pd.DataFrame({"pid": [1, 1, 2], "n": [0, 0, 0], "x": 1.0})  # pid shares a block with n
    budget = df.dp.set_budget(epsilon=1e6, privacy_unit="pid", max_rows=1, seed=0)
    df["x"] = 2.0
    gc.collect()
    for _ in range(3):
        df.dp.count(epsilon=1)
    df["pid"] = df["n"]  # another column of the same block, moved under the label
    with pytest.raises(MissingBudgetError, match="was replaced"):
        df.dp.count(epsilon=1)
    assert len(budget.entries) == 3


@pytest.mark.parametrize(
    "change",
    [
        lambda df: df.__setitem__("pid", np.arange(len(df))),
        lambda df: df.rename(columns={"pid": "old", "g": "pid"}, inplace=True),
        lambda df: df.__setitem__("pid", df["pid"].astype(str)),
        lambda df: df.loc.__setitem__((slice(None), "pid"), np.arange(len(df))),
        lambda df: df.iloc.__setitem__((slice(None), 1), np.arange(len(df))),
        lambda df: df.loc.__setitem__((0, "pid"), 8),
    ],
    ids=["replaced", "renamed-over", "astype", "overwritten", "overwritten-iloc", "one-id"],
)
def test_a_unit_column_replaced_in_place_stops_the_frame_until_inherit(
    change: Callable[[pd.DataFrame], object],
) -> None:
    df = pd.DataFrame({"x": [1.0] * 4, "pid": [7, 7, 7, 7], "g": [0, 1, 2, 3]})
    budget = df.dp.set_budget(epsilon=1e6, privacy_unit="pid", max_rows=1, seed=0)
    assert df.dp.count(epsilon=1e5) == 1
    df["x"] = 2.0  # other columns may change
    df.dp.count(epsilon=1e5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        change(df)
    with pytest.raises(MissingBudgetError, match=r"privacy unit column 'pid' was replaced"):
        df.dp.count(epsilon=1e5)
    assert len(budget.entries) == 2
    df.dp.inherit()  # the analyst asserts it still identifies the same persons
    df.dp.count(epsilon=1e5)
    assert len(budget.entries) == 3


@pytest.mark.parametrize(("version", "refused"), [("2.2.3", True), ("3.0.0", False)])
def test_a_pandas_before_3_is_refused_at_import(version: str, refused: bool) -> None:
    """The binding relies on copy-on-write (always on from pandas 3): without it a frame whose
    rows or unit were changed in place kept spending, so an older pandas is refused."""
    script = f"import pandas; pandas.__version__ = {version!r}; import pandas_dp"
    root = Path(__file__).resolve().parents[1]
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(root)},
        check=False,
    )
    assert (done.returncode != 0) == refused, done.stderr
    if refused:
        assert f"needs pandas 3.0 or later; this is pandas {version}" in done.stderr
        assert "copy-on-write" in done.stderr
