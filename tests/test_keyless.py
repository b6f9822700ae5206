"""Grouped releases without public keys: ``df.dp.groupby(by)``, ``value_counts``, ``crosstab``.

End to end through the accessors (pandas and Dask): which keys appear (a key of
2,000 people always, of one person never, whatever the seed and however many
rows that person has), exactly what is spent and recorded, the refusals, the
keys' dtypes and missing values, and an empirical (ε, δ) audit on neighbours
that differ by the person holding a unique key, with its positive control.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable
from fractions import Fraction
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

import pandas_dp
from pandas_dp.errors import BudgetExceededError
from pandas_dp.mechanisms import policy
from pandas_dp.mechanisms.key_selection import SelectionPlan, one_form
from pandas_dp.pipeline import run as release

SEEDS = range(200)
LONELY = "lonely-key-7f3a"  # held by one person: must never appear, nor be named anywhere


def crowd(lonely_rows: int = 1, seed: int = 0, **budget: Any) -> pd.DataFrame:
    """2,000 rows of key "a", 50 of "b", ``lonely_rows`` of LONELY (one person), budget attached."""
    keys = ["a"] * 2000 + ["b"] * 50 + [LONELY] * lonely_rows
    df = pd.DataFrame({"k": keys, "x": np.arange(len(keys)) % 10})
    df.dp.set_budget(**{"epsilon": 1000.0, "delta": 1e-3, "seed": seed, **budget})
    return df


RELEASES: dict[str, Callable[[pd.DataFrame], pd.Series]] = {
    "count": lambda df: df.dp.groupby("k").count(epsilon=0.5, delta=1e-7),
    "count-rho": lambda df: df.dp.groupby("k").count(rho=0.1, delta=1e-7),
    "mean": lambda df: df.dp.groupby("k").mean("x", clip=(0, 10), epsilon=0.5, delta=1e-7),
    "median": lambda df: df.dp.groupby("k").median(
        "x", candidates=list(range(10)), epsilon=0.5, delta=1e-7
    ),
    "value_counts": lambda df: df.dp.value_counts("k", epsilon=0.5, delta=1e-7),
}


@pytest.mark.parametrize("name", RELEASES)
def test_a_key_of_2000_people_always_appears_and_one_of_one_person_never(name: str) -> None:
    budget = {"epsilon": None, "rho": 1000.0} if name.endswith("rho") else {}
    for seed in SEEDS:
        released = RELEASES[name](crowd(seed=seed, **budget))
        assert "a" in released.index
        assert LONELY not in released.index


@pytest.mark.parametrize("max_rows", [1, 1000])
@pytest.mark.parametrize("engine", ["pandas", "dask"])
def test_one_persons_1000_rows_of_a_rare_key_never_release_it(max_rows: int, engine: str) -> None:
    rows = 1000
    keys = ["a"] * 2000 + [LONELY] * rows
    units = list(range(2000)) + [-1] * rows  # the lonely key's rows are one person's
    seeds = SEEDS if engine == "pandas" else range(20)
    for seed in seeds:
        df = pd.DataFrame({"k": keys, "u": units, "run": f"{engine}-{max_rows}-{seed}"})
        if engine == "dask":  # each collection's data its own: Dask binds budgets by content
            dd = dask_dataframe()
            df = dd.from_pandas(df, npartitions=3)
        df.dp.set_budget(epsilon=1000.0, delta=1e-3, seed=seed, privacy_unit="u")
        released = df.dp.groupby("k").count(
            epsilon=1.0, delta=1e-7, max_rows=max_rows, max_groups=1
        )
        assert list(released.index) == ["a"]


def test_released_keys_are_keys_of_the_data() -> None:
    rng = np.random.default_rng(0)
    keys = rng.zipf(1.3, 20_000) % 500
    df = pd.DataFrame({"k": keys})
    df.dp.set_budget(epsilon=10.0, delta=1e-5, seed=3)
    released = df.dp.groupby("k").count(epsilon=1.0, delta=1e-6)
    assert len(released) > 5
    assert set(released.index) <= set(keys)
    assert released.index.is_monotonic_increasing  # sorted, as pandas' groupby


@pytest.mark.parametrize("call", ["count", "value_counts", "mean", "crosstab"])
def test_the_call_spends_exactly_its_epsilon_and_delta_in_one_entry(call: str) -> None:
    df = crowd(accountant="epsilon")  # spent added up, exactly (by default: PLD's ε at δ)
    df["y"] = df["x"] % 2
    before = df.dp.budget.spent
    if call == "count":
        df.dp.groupby("k").count(epsilon=0.3, delta=1e-7)
    elif call == "value_counts":
        df.dp.value_counts("k", epsilon=0.3, delta=1e-7)
    elif call == "mean":
        df.dp.groupby("k").mean("x", clip=(0, 10), epsilon=0.3, delta=1e-7)
    else:
        df.dp.crosstab("k", "y", epsilon=0.3, delta=1e-7)
    (entry,) = df.dp.budget.entries
    assert entry.epsilon == Fraction(3, 10)
    assert entry.delta == Fraction(1, 10**7)
    assert df.dp.budget.spent == before + Fraction(3, 10)
    assert df.dp.budget.delta_spent == Fraction(1, 10**7)


@pytest.mark.parametrize(
    "call",
    [
        lambda g: g.sum("x", clip=(0, 10), rho=0.25, delta=1e-7),
        lambda g: g.var("x", clip=(0, 10), rho=0.25, delta=1e-7),
        lambda g: g.nunique("x", rho=0.25, delta=1e-7),
        lambda g: g.median("x", candidates=[0, 5, 10], rho=0.25, delta=1e-7),
    ],
    ids=["sum", "var", "nunique", "median"],
)
def test_a_zcdp_call_spends_exactly_its_rho_and_delta(call: Callable[..., Any]) -> None:
    df = crowd(epsilon=None, rho=1.0)
    released = call(df.dp.groupby("k"))
    assert "a" in released.index
    assert LONELY not in released.index
    (entry,) = df.dp.budget.entries
    assert (entry.rho, entry.epsilon, entry.delta) == (Fraction(1, 4), None, Fraction(1, 10**7))


STATISTICS: dict[str, Callable[..., Any]] = {
    "count-ci": lambda g, **loss: g.count(ci=0.9, **loss),
    "sum": lambda g, **loss: g.sum("x", clip=(0, 10), **loss),
    "mean": lambda g, **loss: g.mean("x", clip=(0, 10), **loss),
    "var": lambda g, **loss: g.var("x", clip=(0, 10), **loss),
    "std": lambda g, **loss: g.std("x", clip=(0, 10), **loss),
    "nunique": lambda g, **loss: g.nunique("x", **loss),
    "median": lambda g, **loss: g.median("x", candidates=[0, 5, 10], **loss),
}


@pytest.mark.parametrize("accountant", ["epsilon", "rho"])
@pytest.mark.parametrize("name", STATISTICS)
def test_the_statistic_is_planned_as_the_keyed_release_at_half_the_loss(
    name: str, accountant: str
) -> None:
    # The statistic's share is the keyed release's at loss/2: the same sensitivity and noise
    # (a kind keeping a field planned from the whole loss would spend more than it is charged).
    df = crowd(**({"epsilon": 10.0} if accountant == "epsilon" else {"epsilon": None, "rho": 10.0}))
    STATISTICS[name](df.dp.groupby("k"), **{accountant: 0.5, "delta": 1e-7})
    STATISTICS[name](df.dp.groupby("k", keys=["a"]), **{accountant: 0.25})
    keyless, keyed = df.dp.budget.entries
    assert keyless.noise_scale == keyed.noise_scale
    assert keyless.sensitivity == keyed.sensitivity
    assert keyless.epsilon == (Fraction(1, 2) if accountant == "epsilon" else None)


def test_no_message_or_entry_names_an_observed_key() -> None:
    df = crowd(lonely_rows=1)
    df.dp.groupby("k").count(epsilon=0.3, delta=1e-7)
    df.dp.value_counts("k", epsilon=0.3, delta=1e-7)
    text = df.dp.budget.ledger.to_string() + repr(df.dp.budget) + df.dp.budget._repr_html_()
    assert LONELY not in text
    assert "'a'" not in text


def test_a_budget_without_delta_is_refused_naming_delta_and_keys() -> None:
    df = pd.DataFrame({"k": ["a"] * 10})
    df.dp.set_budget(epsilon=1.0, seed=0)
    with pytest.raises(TypeError, match=r"delta=.*keys=") as caught:
        df.dp.groupby("k").count(epsilon=0.5, delta=1e-7)
    assert "'a'" not in str(caught.value)
    assert df.dp.budget.spent == 0


@pytest.mark.parametrize(
    "call",
    [
        lambda df: df.dp.groupby("k").count(epsilon=0.5),
        lambda df: df.dp.value_counts("k", epsilon=0.5),
        lambda df: df.dp.crosstab("k", "x", epsilon=0.5),
    ],
    ids=["groupby", "value_counts", "crosstab"],
)
def test_a_call_without_delta_is_refused_naming_delta_and_keys(call: Callable[..., Any]) -> None:
    df = crowd()
    with pytest.raises(TypeError, match=r"`delta` is missing.*delta=.*keys="):
        call(df)
    assert df.dp.budget.spent == 0


@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        (lambda g: g.count(epsilon=0.5, delta=1.5), ValueError, "between 0 and 1"),
        (lambda g: g.mean("x", clip=(0, 1), epsilon=0.5), TypeError, "`delta` is missing"),
        (lambda g: g.count(epsilon=0.5, delta=1e-7, max_groups=2), TypeError, "max_groups"),
    ],
)
def test_misuse_is_refused_before_any_spend(
    call: Callable[[pandas_dp.DPGroupBy[pandas_dp.Keyless]], Any],
    error: type[Exception],
    match: str,
) -> None:
    df = crowd()
    with pytest.raises(error, match=match):
        call(df.dp.groupby("k"))
    assert df.dp.budget.spent == 0


def test_a_delta_beyond_the_budgets_is_refused_with_nothing_spent() -> None:
    df = crowd()  # the budget's delta is 1e-3
    with pytest.raises(BudgetExceededError):
        df.dp.groupby("k").count(epsilon=0.5, delta=2e-3)
    assert df.dp.budget.spent == 0


def test_the_substitute_adjacency_is_refused() -> None:
    df = crowd(adjacency="substitute")
    with pytest.raises(ValueError, match=r"add_remove.*keys="):
        df.dp.groupby("k").count(epsilon=0.5, delta=1e-7)
    assert df.dp.budget.spent == 0


@pytest.mark.parametrize("dropna", [True, False])
def test_missing_values_are_a_key_only_with_dropna_false(dropna: bool) -> None:
    df = pd.DataFrame({"k": ["a"] * 500 + [None] * 500})
    df.dp.set_budget(epsilon=10.0, delta=1e-5, seed=0)
    released = df.dp.groupby("k", dropna=dropna).count(epsilon=1.0, delta=1e-6)
    assert "a" in released.index
    assert bool(released.index.isna().any()) is not dropna
    counts = df.dp.value_counts("k", epsilon=1.0, delta=1e-6, dropna=dropna)
    assert bool(counts.index.isna().any()) is not dropna


KEY_COLUMNS = {
    "str": ["x", "y"],
    "int": [7, -3],
    "category": pd.Categorical(["x", "y"], categories=["z", "y", "x"]),
    "datetime": pd.to_datetime(["2024-01-01", "2025-06-30"]),
}


@pytest.mark.parametrize("values", KEY_COLUMNS.values(), ids=KEY_COLUMNS)
def test_keys_of_any_dtype(values: Any) -> None:
    column = pd.Series(values).repeat(300).reset_index(drop=True)
    df = pd.DataFrame({"k": column, "x": 1.0})
    df.dp.set_budget(epsilon=10.0, delta=1e-5, seed=0)
    released = df.dp.groupby("k").mean("x", clip=(0, 2), epsilon=1.0, delta=1e-6)
    assert sorted(released.index) == sorted(pd.Series(values))
    assert released.index.name == "k"


def test_several_columns_give_tuple_keys_whose_levels_hold_only_chosen_values() -> None:
    df = pd.DataFrame({"a": ["x", "x", "y"] * 400 + [LONELY], "b": [1, 2, 1] * 400 + [99]})
    df.dp.set_budget(epsilon=10.0, delta=1e-5, seed=0)
    released = df.dp.groupby(["a", "b"]).count(epsilon=1.0, delta=1e-6)
    assert list(released.index) == [("x", 1), ("x", 2), ("y", 1)]
    assert list(released.index.names) == ["a", "b"]
    assert LONELY not in released.index.levels[0]  # no observed key leaks through the levels
    assert 99 not in released.index.levels[1]


# ------------------------------------------------------------ the form of a released key

#: A NaN whose sign and payload differ from np.nan's (0x7ff8000000000000).
ODD_NAN = np.frombuffer(np.uint64(0xFFF8_0000_0000_0123).tobytes(), np.float64)[0]

#: name: (the column's dtype, the crowd's key, the target's key: equal to it, but looking
#: different). The target's row comes first, where pandas takes a key's form from.
FORMS: dict[str, tuple[Any, Any, Any]] = {
    "zero": ("float64", 0.0, -0.0),  # np.round(-0.3) is -0.0
    "nan": ("float64", np.nan, ODD_NAN),  # a key with dropna=False
    "np_str": (pd.StringDtype("python"), "a", np.str_("a")),
    "categories": ("category", 0.0, -0.0),  # the categories are built from the rows
    "missing": (pd.CategoricalDtype([1, 2]), 1, None),  # Int64 whether or not one is missing
}


def form(key: Any) -> Any:
    """What a released key looks like beyond its value: its type, a number's bits, a time zone."""
    if isinstance(key, tuple):
        return tuple(form(value) for value in key)
    if isinstance(key, float | np.floating):
        return type(key).__name__, np.asarray(key).tobytes().hex()
    return type(key).__name__, str(getattr(key, "tz", None)), str(key)


def forms(released: pd.Series | pd.DataFrame) -> Any:
    """The forms of a release's keys (and of a crosstab's columns), with the index dtypes."""
    indexes = [released.index] + ([released.columns] if isinstance(released, pd.DataFrame) else [])
    dtypes = [
        [str(level.dtype) for level in index.levels]
        if isinstance(index, pd.MultiIndex)
        else str(index.dtype)
        for index in indexes
    ]
    return dtypes, [sorted(form(key) for key in index) for index in indexes]  # any order


def neighbours(name: str, engine: str, unit: str | None) -> tuple[Any, Any]:
    """The frames with and without the target (one person), ``FORMS[name]``, on ``engine``.

    With a privacy unit the target holds 2,000 rows (the 600 others one each). Dask brings
    each person's rows together by a hash of the id, into a partition, and orders them by a
    hash of the row (key and id, for a count): the target takes an id that lands in the
    first partition and comes first there.
    """
    dtype, crowd_key, target_key = FORMS[name]
    target = 10_000
    if engine == "dask" and unit is not None:
        ids = pd.DataFrame({"pid": np.arange(10_000, 30_000)})
        first = dask_dataframe().from_pandas(ids, npartitions=2).shuffle(on="pid").partitions[0]
        ids = first.compute()["pid"].to_numpy()
        rows = pd.DataFrame({"k": pd.Series([crowd_key] * ids.size, dtype=dtype), "pid": ids})
        target = int(ids[np.argmin(pd.util.hash_pandas_object(rows, index=False))])
    other = 1.0 if name != "np_str" else "b"
    other = 2 if name == "missing" else other
    frames = []
    for with_target in (True, False):
        rows = with_target * (1 if unit is None else 2000)
        keys = [target_key] * rows + [crowd_key] * 300 + [other] * 300
        n = len(keys)
        data = {"k": pd.Series(keys, dtype=dtype), "j": np.arange(n) % 2, "x": np.ones(n)}
        pid = np.concatenate([np.full(rows, target), np.arange(600)])
        run = f"{name}-{unit}-{with_target}"  # Dask binds budgets by content
        df: Any = pd.DataFrame({**data, "pid": pid, "run": run})
        if engine == "dask":
            df = dask_dataframe().from_pandas(df, npartitions=2)
        df.dp.set_budget(epsilon=1000.0, delta=1e-3, seed=4, privacy_unit=unit)
        frames.append(df)
    return frames[0], frames[1]


FORM_RELEASES: dict[str, Callable[..., Any]] = {
    "value_counts": lambda d, **b: d.dp.value_counts("k", dropna=False, **b),
    "count": lambda d, **b: d.dp.groupby("k", dropna=False).count(**b),
    "mean": lambda d, **b: d.dp.groupby("k", dropna=False).mean("x", clip=(0, 1), **b),
    "median": lambda d, **b: d.dp.groupby("k", dropna=False).median("x", candidates=[0, 1], **b),
    "pairs": lambda d, **b: d.dp.groupby(["j", "k"], dropna=False).count(**b),
    "crosstab": lambda d, **b: d.dp.crosstab("j", "k", dropna=False, **b),
    "crosstab-row-keys": lambda d, **b: d.dp.crosstab("j", "k", keys=([0, 1], None), **b),
}


@pytest.mark.parametrize("unit", [None, "pid"])
@pytest.mark.parametrize("engine", ["pandas", "dask"])
@pytest.mark.parametrize("name", FORMS)
def test_a_chosen_key_is_released_in_the_same_form_with_or_without_the_first_person(
    name: str, engine: str, unit: str | None
) -> None:
    # The target holds a key of 300 people in another form (-0.0 for 0.0, a NaN of its own,
    # np.str_ for str, a missing category), in the first row: the key is shown on both
    # neighbours, and must look the same, its index's dtype too (and so the levels of a
    # MultiIndex, a crosstab's columns, the categories of a categorical).
    with_target, without = neighbours(name, engine, unit)
    bounds = {} if unit is None else {"max_rows": 1, "max_groups": 1}
    for release_name, call in FORM_RELEASES.items():
        a = call(with_target, epsilon=1.0, delta=1e-6, **bounds)
        b = call(without, epsilon=1.0, delta=1e-6, **bounds)
        assert forms(a) == forms(b), release_name
        assert len(a.index) >= (2 if release_name != "crosstab-row-keys" else 1), release_name


def test_keys_are_released_in_the_one_form_of_their_dtype() -> None:
    nan = pd.Index([ODD_NAN, -0.0, 1.0])
    assert [form(k) for k in one_form(nan, nan.dtype)] == [form(k) for k in [np.nan, 0.0, 1.0]]
    halves = pd.Index(np.array([-0.0, ODD_NAN], dtype=np.float32))
    assert (
        one_form(halves, halves.dtype).to_numpy().tobytes()
        == np.array([0.0, np.nan], dtype=np.float32).tobytes()
    )
    parts = one_form(pd.Index(np.array([complex(-0.0, ODD_NAN)])), np.dtype(np.complex128))[0]
    assert (form(float(parts.real)), form(float(parts.imag))) == (form(0.0), form(np.nan))
    python = pd.Index(pd.array([np.str_("a"), None], dtype=pd.StringDtype("python")))
    assert type(one_form(python, python.dtype)[0]) is str
    eastern = pd.DatetimeTZDtype(tz="US/Eastern")
    utc = pd.DatetimeIndex(["2024-01-01 05:00"], tz="UTC")
    assert str(one_form(utc, eastern)[0].tz) == "US/Eastern"  # the schema's time zone
    intervals = pd.IntervalIndex.from_arrays([-0.0], [1.0])
    assert form(float(one_form(intervals, intervals.dtype)[0].left)) == form(0.0)
    for dtype in ["Float64", "double[pyarrow]"]:
        masked = pd.Index(pd.array([-0.0, None], dtype=dtype))
        assert form(float(one_form(masked, masked.dtype)[0])) == form(0.0)


@pytest.mark.parametrize(
    "column",
    [
        pd.Series([1.5], dtype="float16"),
        pd.Series([datetime.time(1, 2)], dtype=pd.ArrowDtype(pa.time64("us"))),
    ],
    ids=["float16", "arrow_time"],
)
def test_a_key_column_without_one_form_per_value_is_refused_before_any_spend(
    column: pd.Series,
) -> None:
    df = pd.DataFrame({"k": column.repeat(100).reset_index(drop=True)})
    df.dp.set_budget(epsilon=10.0, delta=1e-5, seed=0)
    for call in (
        lambda: df.dp.groupby("k").count(epsilon=1.0, delta=1e-6),
        lambda: df.dp.value_counts("k", epsilon=1.0, delta=1e-6),
    ):
        with pytest.raises(TypeError, match=r"column 'k' has dtype .*one form per value"):
            call()
    assert df.dp.budget.spent == 0


def test_arrow_floats_are_keys_as_pandas_compares_them() -> None:
    # Arrow factorizes floats by their bits: -0.0 and 0.0 would be two keys, each NaN one.
    values = pa.array(np.array([-0.0, 0.0, ODD_NAN, np.nan] * 200))
    df = pd.DataFrame({"k": pd.arrays.ArrowExtensionArray(values), "x": [1.0, 1.0, 0.0, 0.0] * 200})
    df.dp.set_budget(epsilon=1e6, delta=1e-5, seed=0)
    missing = ("NAType", "None", "<NA>")
    for dropna in (True, False):
        released = df.dp.groupby("k", dropna=dropna).count(epsilon=100.0, delta=1e-6)
        assert [form(k) for k in released.index] == [form(0.0)] + [missing] * (not dropna)
        assert released.index.dtype == df["k"].dtype
        assert released.iloc[0] == pytest.approx(400, abs=1)
    # a median's second pass finds the rows of the chosen key 0.0 among those of -0.0 too
    grid = np.linspace(0, 1, 101)  # a table without rows would pick any of them
    median = df.dp.groupby("k").median("x", candidates=grid, epsilon=1e4, delta=1e-6)
    assert median.tolist() == [1.0]


def tables_built(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The number of keys of every quantile table built from now on (``quantile_table`` spied)."""
    built: list[int] = []
    table = pandas_dp.kinds.quantile.quantile_table

    def spy(values: Any, codes: Any, n_keys: int, grid: Any) -> Any:
        built.append(n_keys)
        return table(values, codes, n_keys, grid)

    monkeypatch.setattr(pandas_dp.kinds.quantile, "quantile_table", spy)
    return built


@pytest.mark.parametrize("unit", [None, "u"])
@pytest.mark.parametrize("engine", ["pandas", "dask"])
def test_a_keyless_median_builds_its_table_for_the_chosen_keys_only(
    engine: str, unit: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    # 17,000 keys of two persons × 1,000 candidates is refused with public keys (over
    # MAX_CELLS); without keys the reservation must not build that table: an out-of-memory
    # error there would refund the budget and show that the data has many keys.
    lonely = np.arange(34_000) % 17_000
    df: Any = pd.DataFrame({"k": np.concatenate([lonely, np.full(2000, -1)]), "x": 1.0})
    df["u"] = np.arange(len(df))
    df["run"] = str(unit)  # each collection's data its own: Dask binds budgets by content
    if engine == "dask":
        df = dask_dataframe().from_pandas(df, npartitions=3)
    df.dp.set_budget(epsilon=100.0, delta=1e-3, seed=0, privacy_unit=unit)
    built = tables_built(monkeypatch)
    bounds = {} if unit is None else {"max_rows": 1, "max_groups": 1}
    released = df.dp.groupby("k").median(
        "x", candidates=list(range(1000)), epsilon=1.0, delta=1e-6, **bounds
    )
    assert list(released.index) == [-1]
    assert released[-1] == 1.0
    assert built  # the table was built: for the chosen keys × candidates, never the observed'
    assert set(built) == {1}


@pytest.mark.parametrize("accountant", ["epsilon", "rho"])
def test_a_keyless_median_keeps_at_most_its_cap_of_keys_the_most_crowded(
    monkeypatch: pytest.MonkeyPatch, accountant: str
) -> None:
    # More chosen keys than MAX_CELLS // candidates: those of the highest noisy person
    # counts are kept (post-processing of the selection), and no table is larger. Under ε
    # the selection is the truncated geometric, which has no noisy count: any 3 are kept.
    monkeypatch.setattr(pandas_dp.kinds.quantile, "MAX_CELLS", 3 * 10)
    sizes = {"a": 900, "b": 800, "c": 700, "d": 300, "e": 200}
    df = pd.DataFrame({"k": [k for k, n in sizes.items() for _ in range(n)], "x": 2.0})
    df.dp.set_budget(**{accountant: 1000.0}, delta=1e-3, seed=0)
    built = tables_built(monkeypatch)
    released = df.dp.groupby("k").median(
        "x", candidates=list(range(10)), **{accountant: 100.0}, delta=1e-6
    )
    if accountant == "rho":
        assert list(released.index) == ["a", "b", "c"]
    else:
        assert len(released) == 3
        assert set(released.index) <= set(sizes)
    assert (released == 2.0).all()
    assert built == [3]
    (entry,) = df.dp.budget.entries
    assert (entry.charge(accountant), entry.delta) == (Fraction(100), Fraction(1, 10**6))


def test_value_counts_is_most_frequent_first_and_normalize_sums_to_one() -> None:
    df = pd.DataFrame({"k": ["a"] * 900 + ["b"] * 300 + ["c"] * 600})
    df.dp.set_budget(epsilon=10.0, delta=1e-5, seed=0)
    counts = df.dp.value_counts("k", epsilon=1.0, delta=1e-6)
    assert list(counts.index) == ["a", "c", "b"]
    assert counts.name == "count"
    shares = df.dp.value_counts("k", epsilon=1.0, delta=1e-6, normalize=True)
    assert shares.name == "proportion"
    assert shares.sum() == pytest.approx(1.0)


def test_crosstab_without_keys_shows_the_chosen_pairs_and_nan_elsewhere() -> None:
    df = pd.DataFrame({"r": ["p"] * 600 + ["q"] * 300 + ["q"], "c": [1] * 600 + [2] * 300 + [1]})
    df.dp.set_budget(epsilon=10.0, delta=1e-5, seed=0)
    table = df.dp.crosstab("r", "c", epsilon=1.0, delta=1e-6)
    assert list(table.index) == ["p", "q"]
    assert list(table.columns) == [1, 2]
    assert np.isnan(table.loc["q", 1])  # one person's pair is not shown
    assert np.isnan(table.loc["p", 2])


def one_axis(axis: int, seed: int = 0, **budget: Any) -> tuple[pd.DataFrame, Callable[..., Any]]:
    """Public key "p" (2,000 persons of value "a", one of LONELY) and "outside" (2,000 of "b").

    ``axis`` 0: "p" is a row key, the values columns; 1: the other way round.
    The crosstab returned gives the table with the public keys as rows.
    """
    public = ["p"] * 2001 + ["outside"] * 2000
    values = ["a"] * 2000 + [LONELY] + ["b"] * 2000
    df = pd.DataFrame({"pub": public, "val": values})
    df.dp.set_budget(**{"epsilon": 1000.0, "delta": 1e-3, "seed": seed, **budget})
    keys = ["p", "absent"]

    def crosstab(**options: Any) -> Any:
        if axis == 0:
            return df.dp.crosstab("pub", "val", keys=(keys, None), **options)
        return df.dp.crosstab("val", "pub", keys=(None, keys), **options).T

    return df, crosstab


@pytest.mark.parametrize("axis", [0, 1], ids=["row_keys", "column_keys"])
def test_a_crosstab_with_keys_on_one_axis_shows_crowded_pairs_only(axis: int) -> None:
    for seed in SEEDS:
        _, crosstab = one_axis(axis, seed)
        table = crosstab(epsilon=0.5, delta=1e-7)
        assert list(table.index) == ["p", "absent"]  # every public key, in order
        assert list(table.columns) == ["a"]  # not LONELY, nor "b" of a key not listed
        assert table.loc["p", "a"] == pytest.approx(2000, abs=100)
        assert table.loc["absent"].isna().all()


@pytest.mark.parametrize("budget", [{}, {"epsilon": None, "rho": 1.0}], ids=["epsilon", "rho"])
@pytest.mark.parametrize("axis", [0, 1], ids=["row_keys", "column_keys"])
def test_a_crosstab_with_keys_on_one_axis_spends_exactly_its_budget_and_delta(
    axis: int, budget: dict[str, Any]
) -> None:
    df, crosstab = one_axis(axis, **budget)
    spend = {"rho": 0.3} if budget else {"epsilon": 0.3}
    crosstab(**spend, delta=1e-7, ci=0.9)  # with ci: half chooses the pairs, half counts
    (entry,) = df.dp.budget.entries
    assert (entry.epsilon, entry.rho) == (
        (None, Fraction(3, 10)) if budget else (Fraction(3, 10), None)
    )
    assert entry.delta == Fraction(1, 10**7)
    text = df.dp.budget.ledger.to_string() + repr(df.dp.budget) + df.dp.budget._repr_html_()
    assert LONELY not in text
    assert "'a'" not in text


def test_a_crosstab_with_column_keys_and_ci_is_one_table_per_statistic() -> None:
    df, _ = one_axis(0)
    table = df.dp.crosstab(
        "val", "pub", keys=(None, ["p", "absent"]), epsilon=0.5, delta=1e-7, ci=0.9
    )
    assert list(table.columns.get_level_values(0).unique()) == ["estimate", "lower", "upper"]
    assert list(table["lower"].columns) == ["p", "absent"]
    assert table.loc["a", ("lower", "p")] <= table.loc["a", ("upper", "p")]
    assert table[("estimate", "absent")].isna().all()


@pytest.mark.parametrize(
    ("keys", "error", "match"),
    [
        ((["p", "p"], None), ValueError, "duplicates"),
        (({"p"}, None), TypeError, "fixed order"),
        (([], None), ValueError, "must not be empty"),
        (([1, 2], None), TypeError, "column 'pub' holds strings"),
        ((None, ["a"], None), TypeError, r"pair \(row_keys, column_keys\).*None"),
        ("p", TypeError, r"pair \(row_keys, column_keys\)"),
    ],
    ids=["duplicates", "set", "empty", "dtype", "three", "string"],
)
def test_a_crosstab_refuses_bad_keys_on_one_axis_before_any_spend(
    keys: Any, error: Any, match: str
) -> None:
    df, _ = one_axis(0)
    with pytest.raises(error, match=match) as caught:
        df.dp.crosstab("pub", "val", keys=keys, epsilon=0.5, delta=1e-7)
    assert LONELY not in str(caught.value)
    assert df.dp.budget.spent == 0


@pytest.mark.parametrize("axis", [0, 1], ids=["row_keys", "column_keys"])
def test_a_crosstab_with_keys_on_one_axis_needs_delta(axis: int) -> None:
    _, crosstab = one_axis(axis)
    with pytest.raises(TypeError, match=r"`delta` is missing.*delta=.*keys="):
        crosstab(epsilon=0.5)


def test_the_one_pass_count_shows_the_selections_noisy_counts(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    plans: list[SelectionPlan] = []
    plan = release.selection_plan

    def spy(**kwargs: Any) -> SelectionPlan:
        plans.append(plan(**kwargs))
        return plans[-1]

    monkeypatch.setattr(release, "selection_plan", spy)
    rng = np.random.default_rng(1)
    df = pd.DataFrame({"k": rng.integers(0, 60, 3000)})
    df.dp.set_budget(epsilon=10.0, delta=1e-5, seed=0)
    released = df.dp.groupby("k").count(epsilon=0.5, delta=1e-7)
    (used,) = plans
    assert used.epsilon == Fraction(1, 2)  # the whole epsilon: one pass
    assert (released >= used.threshold).all()


@pytest.mark.parametrize("dropna", [True, False])
def test_the_release_does_not_depend_on_how_the_keys_were_observed(dropna: bool) -> None:
    # A string column is counted by value_counts; a categorical one (with an unused
    # category) through its codes: the same keys draw the same noise.
    rng = np.random.default_rng(2)
    keys = pd.Series(rng.choice(["x", "y", "z", None], 4000, p=[0.5, 0.3, 0.15, 0.05]))
    results = []
    for column in (keys, keys.astype(pd.CategoricalDtype(["w", "z", "y", "x"]))):
        df = pd.DataFrame({"k": column})
        df.dp.set_budget(epsilon=10.0, delta=1e-5, seed=4)
        results.append(df.dp.value_counts("k", epsilon=1.0, delta=1e-6, dropna=dropna))
    plain, coded = results
    assert [str(k) for k in plain.index] == [str(k) for k in coded.index]
    assert plain.tolist() == coded.tolist()


def test_keys_given_by_the_data_are_marked_not_private_only_in_the_docs() -> None:
    # keys=df.col.unique() still runs (the library cannot tell): the README warns.
    doc = pandas_dp.DPAccessor.groupby.__doc__ or ""
    assert "unique()" in doc
    assert "not private" in doc


# ------------------------------------------------------------------------------------- Dask


def dask_dataframe() -> Any:
    """``dask.dataframe`` with ``ddf.dp`` registered (skip without dask)."""
    pytest.importorskip("pandas_dp.dask")
    return pytest.importorskip("dask.dataframe")


def dask_and_pandas(run: str, npartitions: int = 4) -> tuple[Any, pd.DataFrame]:
    """The same data as a Dask collection (budget first: Dask binds by content) and pandas."""
    dd = dask_dataframe()
    rng = np.random.default_rng(5)
    keys = np.where(rng.random(5000) < 0.02, None, rng.choice(list("abcdefgh"), 5000))
    data = {"k": keys, "j": rng.integers(0, 3, 5000), "x": rng.random(5000), "run": run}
    ddf = dd.from_pandas(pd.DataFrame(data), npartitions=npartitions)
    ddf.dp.set_budget(epsilon=10.0, delta=1e-5, seed=11)
    frame = pd.DataFrame(data)
    frame.dp.set_budget(epsilon=10.0, delta=1e-5, seed=11)
    return ddf, frame


def text(key: Any) -> str:
    """A released key as text, any missing value (NaN, <NA>) as ``NA``."""
    if isinstance(key, tuple):
        return str(tuple("NA" if pd.isna(value) else value for value in key))
    return "NA" if pd.isna(key) else str(key)


PARITY: dict[str, Callable[[Any], Any]] = {
    "count": lambda d: d.dp.groupby("k").count(epsilon=1.0, delta=1e-6),
    "mean": lambda d: d.dp.groupby("k").mean("x", clip=(0, 1), epsilon=1.0, delta=1e-6),
    "nunique": lambda d: d.dp.groupby("k").nunique("j", epsilon=1.0, delta=1e-6),
    "var": lambda d: d.dp.groupby("k").var("x", clip=(0, 1), epsilon=1.0, delta=1e-6),
    "pairs": lambda d: d.dp.groupby(["k", "j"], dropna=False).count(epsilon=1.0, delta=1e-6),
    "median": lambda d: d.dp.groupby("k").median(
        "x", candidates=np.linspace(0, 1, 11), epsilon=1.0, delta=1e-6
    ),
    "median-pairs": lambda d: d.dp.groupby(["k", "j"], dropna=False).median(
        "x", candidates=np.linspace(0, 1, 11), epsilon=1.0, delta=1e-6
    ),
    "value_counts": lambda d: d.dp.value_counts("k", epsilon=1.0, delta=1e-6, dropna=False),
    "crosstab": lambda d: d.dp.crosstab("k", "j", epsilon=1.0, delta=1e-6),
    "crosstab-row-keys": lambda d: d.dp.crosstab(
        "k", "j", keys=(["h", "zz", "a", "c"], None), epsilon=1.0, delta=1e-6
    ),
    "crosstab-column-keys": lambda d: d.dp.crosstab(
        "k", "j", keys=(None, [2, 7, 0]), epsilon=1.0, delta=1e-6, dropna=False, ci=0.9
    ),
}


@pytest.mark.parametrize("name", PARITY)
def test_dask_gives_the_pandas_release_bit_for_bit(name: str) -> None:
    ddf, frame = dask_and_pandas(name)
    got, want = PARITY[name](ddf), PARITY[name](frame)
    # A missing key is NaN in pandas' default strings (`str`), <NA> in Dask's (`string`).
    assert [text(k) for k in got.index] == [text(k) for k in want.index]
    if isinstance(want, pd.DataFrame):
        assert list(got.columns) == list(want.columns)
    np.testing.assert_array_equal(np.asarray(got, dtype=float), np.asarray(want, dtype=float))
    assert ddf.dp.budget.entries[0].delta == frame.dp.budget.entries[0].delta


def test_a_dask_privacy_unit_release_keeps_only_crowded_keys() -> None:
    dd = dask_dataframe()
    frame = pd.DataFrame(
        {"k": ["a"] * 3000 + [LONELY] * 50, "u": list(range(3000)) + [7] * 50, "x": 0.5}
    )
    ddf = dd.from_pandas(frame, npartitions=3)
    ddf.dp.set_budget(epsilon=10.0, delta=1e-5, seed=0, privacy_unit="u")
    released = ddf.dp.groupby("k").mean(
        "x", clip=(0, 1), epsilon=1.0, delta=1e-6, max_rows=1, max_groups=1
    )
    assert list(released.index) == ["a"]


# ---------------------------------------------------------------------------------- audit
#
# Replicates r = 0..N-1 in one call, under a privacy unit: D has 40 persons with one row
# of the common key r each; D′ adds one person with a row of r and one of the unique key
# N + r.  Per replicate the release is seen through y = count(r) + 10,000·[N + r shown];
# the (ε, δ) lower bound of the audit must stay under the call's ε at its δ, and the
# same audit must catch a selection that ignores δ (a threshold of 1).

N = 40_000
COMMON = 40
AUDIT_EPSILON, AUDIT_DELTA = 2.0, 1e-6


def replicate_releases(with_person: bool, seed: int) -> np.ndarray:
    common = np.repeat(np.arange(N), COMMON)
    keys, units = [common], [np.arange(common.size)]
    if with_person:
        person = common.size + np.arange(N)
        keys += [np.arange(N), N + np.arange(N)]
        units += [person, person]
    df = pd.DataFrame({"k": np.concatenate(keys), "u": np.concatenate(units)})
    df.dp.set_budget(epsilon=AUDIT_EPSILON, delta=1e-3, seed=seed, privacy_unit="u")
    released = df.dp.groupby("k").count(
        epsilon=AUDIT_EPSILON, delta=AUDIT_DELTA, max_rows=1, max_groups=2
    )
    counts = released.reindex(np.arange(N)).fillna(-1.0).to_numpy(dtype=float)
    shown = np.isin(N + np.arange(N), released.index.to_numpy())
    return counts + 10_000.0 * shown


def selection_audit(bound: Callable[..., float]) -> float:
    d, d_prime = replicate_releases(False, 1), replicate_releases(True, 2)
    return bound(d, d_prime, delta=AUDIT_DELTA)


def test_the_selection_keeps_its_epsilon_and_delta(
    epsilon_lower_bound: Callable[..., float],
) -> None:
    assert selection_audit(epsilon_lower_bound) <= AUDIT_EPSILON


def test_the_audit_catches_a_selection_that_ignores_delta(
    epsilon_lower_bound: Callable[..., float], monkeypatch: pytest.MonkeyPatch
) -> None:
    plan = release.selection_plan

    def careless(**kwargs: Any) -> SelectionPlan:
        found = plan(**kwargs)
        return SelectionPlan(
            found.method,
            found.max_groups,
            found.delta,
            found.epsilon,
            found.rho,
            threshold=1,
            scale=found.scale,
            sigma2=found.sigma2,
        )

    monkeypatch.setattr(release, "selection_plan", careless)
    monkeypatch.setattr(policy, "selection_plan", careless)  # each round of the policy's
    assert selection_audit(epsilon_lower_bound) > AUDIT_EPSILON
