"""Tests of pandas_dp.keys: encoding rows against public keys."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from pandas_dp.keys import level_codes, row_codes

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
]


@pytest.mark.parametrize(("series", "level"), NUMERIC_CASES)
def test_level_codes_of_a_numeric_column_match_its_factorized_values(
    series: pd.Series, level: pd.Index
) -> None:
    # the direct lookup gives each row the code its distinct value gets
    codes, uniques = row_codes(series)
    mapped = np.append(np.asarray(level.get_indexer(uniques), dtype=np.int64), -1)[codes]
    assert level_codes(series, level).tolist() == mapped.tolist()
