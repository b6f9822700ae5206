"""``agg`` (several statistics in one call) and ``size``: pandas habits, as pandas shapes them."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

import pandas_dp  # noqa: F401  (registers df.dp)
from pandas_dp.datasets import DEPARTMENTS, salaries
from pandas_dp.pipeline.aggregate import parts_of

CLIP = {"salary": (0, 200_000)}
GRID = {"age": range(101)}


@pytest.fixture
def df() -> pd.DataFrame:
    frame = salaries(2_000, seed=0)
    frame.dp.set_budget(epsilon=20, delta=1e-6, accountant="epsilon", seed=1)  # exact splits
    return frame


def test_agg_is_shaped_like_pandas_agg_and_splits_epsilon_equally(df: pd.DataFrame) -> None:
    spec = {"salary": ["mean", "std"], "age": "median"}
    got = df.dp.agg(spec, epsilon=1.5, clip=CLIP, candidates=GRID)
    want = df.agg(spec)
    assert list(got.index) == list(want.index) == ["mean", "std", "median"]
    assert list(got.columns) == list(want.columns) == ["salary", "age"]
    assert got.isna().equals(want.isna())  # NaN where pandas has NaN
    assert abs(got.loc["mean", "salary"] / want.loc["mean", "salary"] - 1) < 0.05
    assert abs(got.loc["median", "age"] - want.loc["median", "age"]) <= 3
    entries = df.dp.budget.entries
    assert [e.operation for e in entries] == ["mean", "std", "median"]
    assert [e.epsilon for e in entries] == [Fraction(1, 2)] * 3  # 1.5 split in three, exactly
    assert {e.release for e in entries} == {"agg"}
    assert df.dp.budget.spent == Fraction(3, 2)


def test_agg_of_single_names_is_a_series_by_column(df: pd.DataFrame) -> None:
    got = df.dp.agg({"salary": "mean", "age": "count"}, epsilon=1, clip=(0, 200_000))
    want = df.agg({"salary": "mean", "age": "count"})
    assert isinstance(got, pd.Series)
    assert list(got.index) == list(want.index) == ["salary", "age"]


def test_grouped_agg_has_column_statistic_columns_over_the_keys(df: pd.DataFrame) -> None:
    g = df.dp.groupby("dept", keys=DEPARTMENTS)
    spec = {"salary": ["mean", "std"], "age": "median"}
    got = g.agg(spec, epsilon=3, clip=CLIP, candidates=GRID)
    want = df.groupby("dept").agg(spec).reindex(list(DEPARTMENTS))
    assert list(got.columns) == list(want.columns)  # (salary, mean), (salary, std), (age, median)
    assert list(got.index) == list(want.index)
    flat = g.agg({"salary": "mean", "age": "count"}, epsilon=1, clip=(0, 200_000))
    assert list(flat.columns) == ["salary", "age"]


def test_keyless_agg_chooses_its_keys_once_and_spends_delta_once(df: pd.DataFrame) -> None:
    got = df.dp.groupby("dept").agg(
        {"salary": ["mean", "sum"], "age": "count"}, epsilon=3, clip=(0, 2e5), delta=1e-7
    )
    assert set(got.index) <= set(DEPARTMENTS)
    assert [e.delta for e in df.dp.budget.entries] == [Fraction(1, 10**7), 0, 0]


def test_agg_refuses_before_any_spend_what_any_part_would(df: pd.DataFrame) -> None:
    with pytest.raises(TypeError, match="clip"):  # std without a clip
        df.dp.agg({"salary": ["mean", "std"]}, epsilon=1, clip={"bonus": (0, 1)})
    with pytest.raises(KeyError, match="missing"):
        df.dp.agg({"salary": "count", "missing": "count"}, epsilon=1)
    with pytest.raises(ValueError, match="does not take: 'max'"):
        df.dp.agg({"salary": "max"}, epsilon=1)
    with pytest.raises(ValueError, match="twice"):
        parts_of({"salary": ["mean", "mean"]})
    assert df.dp.budget.spent == 0


def test_size_is_the_count_of_rows_per_key_unnamed_as_pandas(df: pd.DataFrame) -> None:
    g = df.dp.groupby("dept", keys=DEPARTMENTS)
    got = g.size(epsilon=1)
    want = df.groupby("dept").size().reindex(list(DEPARTMENTS))
    assert got.name == want.name is None
    assert np.all(np.abs(got.to_numpy() - want.to_numpy()) < 20)
    interval = g.size(epsilon=1, ci=0.9)
    assert list(interval.columns) == ["estimate", "lower", "upper"]
    assert [e.operation for e in df.dp.budget.entries] == ["groupby.count"] * 2
    assert not hasattr(df.dp, "size")  # pandas' DataFrame.size is its number of cells
