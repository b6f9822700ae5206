"""Tests of pandas_dp.keys: encoding rows against public keys."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from pandas_dp.keys import level_codes, normalize_keys, row_codes

NUMERIC_CASES = [
    (pd.Series([1.0, np.nan, 2.0, -0.0, 0.0, 5.5]), pd.Index([0, 2, 5.5])),
    (pd.Series([1.0, np.nan, 2.0, -0.0, 0.0, 5.5]), pd.IntervalIndex.from_breaks([0, 1, 3, 6])),
    (
        pd.Series(pd.to_datetime(["2020-01-01", None, "2020-01-02"])),
        pd.to_datetime(["2020-01-02", "2020-01-01"]),
    ),
    (pd.Series([True, False, True]), pd.Index([False, True], dtype=object)),
    (pd.Series([1, 2, 3], dtype="uint8"), pd.Index([3, 1], dtype=object)),
    (pd.Series([1, 2, 3]), pd.Index([3.0, 1.0])),
    (pd.Series([1, 2, 3]), pd.CategoricalIndex([3, 1])),
    # one numpy dtype on both sides: looked up by a binary search
    (pd.Series([5, -3, 0, 7, 5, 2**62]), pd.Index([7, 5, -3, 2**62])),
    (pd.Series([5, 3, 0], dtype="uint64"), pd.Index([3, 2**63 + 1], dtype="uint64")),
    (
        pd.Series([1.0, np.nan, -0.0, 0.0, np.inf, -np.inf, 2.5, 9.0]),
        pd.Index([2.5, 0.0, -np.inf, np.inf, 1.0]),
    ),
    (pd.Series([1.0, -0.0, 0.0]), pd.Index([-0.0, 1.0])),
    (pd.Series([4, 1, 9, -2]), pd.Index([9])),
    (pd.Series(np.arange(5_000) % 7), pd.Index([3, 5, 100])),  # beyond the binary search's rows
]


@pytest.mark.parametrize(("series", "level"), NUMERIC_CASES)
def test_level_codes_of_a_numeric_column_match_its_factorized_values(
    series: pd.Series, level: pd.Index
) -> None:
    # the direct lookup gives each row the code its distinct value gets
    codes, uniques = row_codes(series)
    mapped = np.append(np.asarray(level.get_indexer(uniques), dtype=np.int64), -1)[codes]
    assert level_codes(series, level).tolist() == mapped.tolist()


@pytest.mark.parametrize(
    "keys",
    [
        [2, 0, 1],
        [-(2**63), 2**63 - 1, 0],
        [2**63, 1],  # beyond int64: pandas' own inference
        [True, 2],
        [1, 2.0],
        [1, "a"],
        [np.int64(3), 4],
    ],
)
def test_a_list_of_keys_is_the_index_pandas_makes_of_it(keys: list[object]) -> None:
    made = normalize_keys(["k"], keys)
    expected = pd.Index(keys, name="k")
    assert made.dtype == expected.dtype
    assert made.name == "k"
    assert made.tolist() == expected.tolist()
    assert [type(k) for k in made] == [type(k) for k in expected]
