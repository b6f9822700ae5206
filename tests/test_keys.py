"""Tests of pandas_dp.mechanisms.keys: encoding rows against public keys."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from pandas_dp.mechanisms.keys import _table_lookup, level_codes, normalize_keys, row_codes

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
    # int64 keys over a short range: a table indexed by value - min(keys), modulo 2**64
    (pd.Series([0, 1, 2, 3, -1, 2**63 - 1, -(2**63)]), pd.Index([2, 0, 1])),
    (
        pd.Series([-(2**63), -(2**63) + 2, -(2**63) + 1, 5, 2**63 - 1]),
        pd.Index([-(2**63) + 2, -(2**63)]),
    ),
    (pd.Series([2**63 - 1, 2**63 - 3, 0, -(2**63), -1]), pd.Index([2**63 - 1, 2**63 - 2])),
    (pd.Series(np.arange(-5, 200)), pd.Index([87, 0, 7])),  # the widest table of 3 keys
    (pd.Series(np.arange(-5, 200)), pd.Index([88, 0, 7])),  # one wider: searched
    (pd.Series(np.arange(10_000) % 11 - 3), pd.Index([-3, 0, 4, 7])),
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
    ("keys", "table"),
    [
        ([0, 1, 2], True),
        ([87, 0, 7], True),  # 3 keys over 88 integers: 8 per key and 64 more
        ([88, 0, 7], False),
        ([2**63 - 1, 2**63 - 80], True),
        ([-(2**63), 2**63 - 1], False),
        (list(range(0, 2048, 2)), True),  # 1,024 keys, the most a table takes
        (list(range(0, 2050, 2)), False),
    ],
)
def test_int64_keys_over_a_short_range_are_looked_up_in_a_table(
    keys: list[int], table: bool
) -> None:
    rng = np.random.Generator(np.random.PCG64(3))
    values = np.concatenate(
        [rng.integers(-100, 2_200, 3_000), np.array(keys), [2**63 - 1, -(2**63), -1, 0]]
    ).astype(np.int64)
    found = _table_lookup(np.array(keys, dtype=np.int64), values)
    assert (found is not None) == table
    expected = pd.Index(keys).get_indexer(values)
    assert level_codes(pd.Series(values), pd.Index(keys)).tolist() == expected.tolist()
    if found is not None:
        assert found.tolist() == expected.tolist()


def _chunked(*chunks: list[str | None]) -> pd.Series:
    """A ``string[pyarrow]`` column whose arrow data is in several chunks."""
    data = pa.chunked_array([pa.array(chunk, pa.string()) for chunk in chunks])
    return pd.Series(pd.arrays.ArrowStringArray(data))


STRING_CASES = [
    (pd.Series(["a", "b", None, "c", "zz", "a"], dtype="str"), pd.Index(["a", "b", "c"])),
    (pd.Series(["a", "", None, "é", "日本"], dtype="string[pyarrow]"), pd.Index(["日本", "", "é"])),
    (pd.Series(["x", "y"], dtype="str"), pd.Index(["a"])),  # no row matches
    (pd.Series([None, None], dtype="str"), pd.Index(["a", "b"])),
    (pd.Series(["b", "a"], dtype="str"), pd.Index(["a", "b"], dtype="string[pyarrow]")),
    (_chunked(["a", None], ["b", "a"], []), pd.Index(["b", "a"])),
    (pd.Series(["a", "B", "b"], dtype="str"), pd.Index(["b", "a"], dtype="string[python]")),
    (pd.Series(["a", None, "b"], dtype="string[python]"), pd.Index(["b", "a"])),
    (pd.Series(["a", None, "b"], dtype=object), pd.Index(["b", "a"])),
    (pd.Series(["1", "2", None], dtype="str"), pd.Index([1, 2])),
    (pd.Series(["a", "b"], dtype="str"), pd.Index(["a", 1], dtype=object)),
]


@pytest.mark.parametrize(("series", "level"), STRING_CASES)
def test_level_codes_of_a_string_column_match_its_factorized_values(
    series: pd.Series, level: pd.Index
) -> None:
    # pyarrow strings are looked up in the keys by arrow; every column gets the codes of
    # factorizing it and looking its distinct values up in the keys
    codes, uniques = row_codes(series)
    mapped = np.append(np.asarray(level.get_indexer(uniques), dtype=np.int64), -1)[codes]
    assert level_codes(series, level).tolist() == mapped.tolist()


@pytest.mark.parametrize("keys", [["a", "b", "a"], [1, 2, 1], ["a", "a"]])
def test_repeated_keys_are_refused(keys: list[object]) -> None:
    with pytest.raises(ValueError, match="duplicates"):
        normalize_keys(["k"], keys)


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
        ["b", "a"],
        ["a", 1],
        [f"k{i}" for i in range(100)],  # beyond the cached lists
        list(range(100, 0, -1)),
    ],
)
def test_a_list_of_keys_is_the_index_pandas_makes_of_it(keys: list[object]) -> None:
    made = normalize_keys(["k"], keys)
    expected = pd.Index(keys, name="k")
    assert made.dtype == expected.dtype
    assert made.name == "k"
    assert made.tolist() == expected.tolist()
    assert [type(k) for k in made] == [type(k) for k in expected]


def test_keys_given_again_are_a_fresh_index_named_after_their_column() -> None:
    # a short list of plain keys is built once; each caller gets its own named copy
    first = normalize_keys(["k"], ["b", "a"])
    first.name = "changed"
    again = normalize_keys(["other"], ["b", "a"])
    assert again is not first
    assert again.name == "other"
    assert normalize_keys(["k"], ["b", "a"]).name == "k"
    assert again.tolist() == ["b", "a"]


@pytest.mark.parametrize("keys", [[1, 2], [1.0, 2.0], [True, False], ["1", "2"]])
def test_equal_looking_keys_of_other_types_keep_their_own_index(keys: list[object]) -> None:
    normalize_keys(["k"], [1, 2])  # cached first
    made = normalize_keys(["k"], keys)
    assert made.dtype == pd.Index(keys).dtype
    assert [type(k) for k in made] == [type(k) for k in pd.Index(keys)]


def test_the_package_works_without_pyarrow() -> None:
    """pyarrow is optional (pandas and numpy are the only dependencies): without it the
    string lookup takes the general path and a grouped release gives the same answer."""
    script = textwrap.dedent(
        """
        import sys
        for name in ("pyarrow", "pyarrow.compute"):
            sys.modules[name] = None  # importing it raises ImportError
        import pandas as pd
        import pandas_dp
        from pandas_dp.mechanisms import keys
        assert keys.pc is None
        df = pd.DataFrame({"dept": ["a", "b", None, "a", "c"], "x": [1.0, 2.0, 3.0, 4.0, 5.0]})
        df.dp.set_budget(epsilon=10, seed=3)
        out = df.dp.groupby("dept", keys=["a", "b", "z"]).count(epsilon=1)
        print(list(out.index), out.dtype)
        """
    )
    root = Path(__file__).resolve().parents[1]
    env = {**os.environ, "PYTHONPATH": str(root)}
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "['a', 'b', 'z'] int64"
