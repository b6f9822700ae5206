"""``ddf.dp`` on Dask DataFrames: the releases of ``df.dp`` bit for bit; fail-closed binding.

The main test runs the pandas recipes against ``ddf.dp`` with the same seed and
compares the results exactly, for several partitionings and schedulers and
on a ``distributed.LocalCluster`` with process workers.  Skipped when dask is
not installed (``pip install ".[dask]"`` from the clone).
"""

from __future__ import annotations

import logging
import os
import pickle
import re
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

dd = pytest.importorskip("dask.dataframe")
dask = pytest.importorskip("dask")
distributed = pytest.importorskip("distributed")

import pandas_dp  # noqa: E402
import pandas_dp.dask as pdd  # noqa: E402  (after the skip: it imports dask)
import pandas_dp.dask._units as units  # noqa: E402
from pandas_dp import BudgetExceededError, MissingBudgetError, PandasDPError  # noqa: E402
from pandas_dp.errors import PoorAnswerWarning  # noqa: E402
from pandas_dp.kinds.count import Count  # noqa: E402
from pandas_dp.pipeline.run import KINDS  # noqa: E402

DEPTS = ["Eng", "Ops", "Sales", "Legal"]  # Legal has no rows; "Other" and None are dropped
AGES = [20, 30, 40, 50, 60]
GRID = np.linspace(0, 100, 21)
CLIP = (0.0, 150_000.0)

#: The pandas recipes, run unchanged on ``df`` and on ``ddf``: name -> release.
RECIPES: dict[str, Callable[[Any], Any]] = {
    "count": lambda d: d.dp.count(epsilon=0.5),
    "count_column": lambda d: d.dp.count("bonus", epsilon=0.5),
    "sum": lambda d: d.dp.sum("salary", clip=CLIP, epsilon=0.5),
    "sum_mapping": lambda d: d.dp.sum(clip={"salary": CLIP, "bonus": (0, 5e3)}, epsilon=0.5),
    "mean": lambda d: d.dp.mean("salary", clip=CLIP, epsilon=0.5),
    "argmax": lambda d: d.dp.argmax_exp("age", candidates=AGES, epsilon=0.5),
    "top2_by_value": lambda d: d.dp.argmax_exp(
        "age", candidates=AGES, k=2, value="salary", clip=(-1e4, 1e5), epsilon=0.5
    ),
    "median": lambda d: d.dp.median("age", candidates=GRID, epsilon=0.5),
    "quantile": lambda d: d.dp.quantile(
        "salary", 0.9, candidates=np.linspace(0, 3e5, 31), epsilon=0.5
    ),
    "quantiles": lambda d: d.dp.quantile(
        "salary", [0.25, 0.5, 0.75], candidates=np.linspace(0, 3e5, 31), epsilon=0.5
    ),
    "bounds": lambda d: d.dp.bounds("salary", epsilon=0.5),
    "max": lambda d: d.dp.max("salary", epsilon=0.5),
    "grouped_min": lambda d: d.dp.groupby("dept", keys=DEPTS).min("age", epsilon=0.5),
    "cov": lambda d: d.dp.cov("age", "salary", clip={"age": (18, 70), "salary": CLIP}, epsilon=0.5),
    "grouped_corr": lambda d: d.dp.groupby("dept", keys=DEPTS).corr(
        "age", "salary", clip={"age": (18, 70), "salary": CLIP}, epsilon=0.5, ci=0.9
    ),
    "grouped_bounds": lambda d: d.dp.groupby("dept", keys=DEPTS).bounds("age", epsilon=0.5),
    "clipped_share": lambda d: d.dp.clipped_share("salary", clip=CLIP, epsilon=0.5),
    "grouped_count": lambda d: d.dp.groupby("dept", keys=DEPTS).count(epsilon=0.5),
    "grouped_sum": lambda d: d.dp.groupby("dept", keys=DEPTS).sum("salary", clip=CLIP, epsilon=0.5),
    "grouped_mean_mapping": lambda d: d.dp.groupby("dept", keys=DEPTS).mean(
        clip={"salary": CLIP, "age": (18, 70)}, epsilon=0.5
    ),
    "grouped_two_keys": lambda d: d.dp.groupby(
        ["dept", "cat"],
        keys=pd.MultiIndex.from_product([DEPTS, ["a", "b", "c"]], names=["dept", "cat"]),
    ).mean("salary", clip=CLIP, epsilon=0.5),
    "grouped_argmax": lambda d: d.dp.groupby("dept", keys=DEPTS).argmax_exp(
        "age", candidates=AGES, k=2, epsilon=0.5
    ),
    "grouped_median": lambda d: d.dp.groupby("cat", keys=["a", "b", "c", "d"]).median(
        "age", candidates=GRID, epsilon=0.5
    ),
    "filtered_sum": lambda d: d.dp.filter(d.salary > 50_000).dp.sum(
        "salary", clip=CLIP, epsilon=0.5
    ),
    "queried_mean": lambda d: d.dp.query("age >= 30 and dept in ['Eng', 'Ops']").dp.mean(
        "salary", clip=CLIP, epsilon=0.5
    ),
    "assigned_count": lambda d: (
        d.dp.assign(rich=d.salary > 80_000)
        .dp.groupby("rich", keys=[False, True])
        .count(epsilon=0.5)
    ),
    "selected_sum": lambda d: d.dp.select(["salary"]).dp.sum("salary", clip=CLIP, epsilon=0.5),
    "count_ci": lambda d: d.dp.count(epsilon=0.5, ci=0.9),
    "sum_ci": lambda d: d.dp.sum("salary", clip=CLIP, epsilon=0.5, ci=0.9),
    "mean_mapping_ci": lambda d: d.dp.mean(
        clip={"salary": CLIP, "age": (18, 70)}, epsilon=0.5, ci=0.95
    ),
    "var": lambda d: d.dp.var("age", clip=(18, 70), epsilon=0.5),
    "std": lambda d: d.dp.std("salary", clip=CLIP, epsilon=0.5),
    "histogram": lambda d: d.dp.histogram("age", bins=[18, 30, 45, 70], epsilon=0.5),
    "histogram_left": lambda d: d.dp.histogram(
        "salary", bins=np.linspace(0, 2e5, 9), right=False, include_lowest=True, epsilon=0.5
    ),
    "crosstab": lambda d: d.dp.crosstab("dept", "cat", keys=(DEPTS, ["c", "a", "b"]), epsilon=0.5),
    "describe": lambda d: d.dp.describe(
        ["age", "salary"],
        clip={"age": (18, 70), "salary": CLIP},
        candidates={"age": GRID, "salary": np.linspace(0, 3e5, 31)},
        epsilon=0.5,
    ),
    "grouped_count_ci": lambda d: d.dp.groupby("dept", keys=DEPTS).count(
        "bonus", epsilon=0.5, ci=0.9
    ),
    "grouped_sum_ci": lambda d: d.dp.groupby("dept", keys=DEPTS).sum(
        "salary", clip=CLIP, epsilon=0.5, ci=0.9
    ),
    "grouped_mean_mapping_ci": lambda d: d.dp.groupby("cat", keys=["a", "b", "c"]).mean(
        clip={"salary": CLIP, "bonus": (0, 5e3)}, epsilon=0.5, ci=0.8
    ),
    "grouped_var": lambda d: d.dp.groupby("dept", keys=DEPTS).var(
        "age", clip=(18, 70), epsilon=0.5
    ),
    "grouped_std": lambda d: d.dp.groupby("cat", keys=["a", "b", "c", "d"]).std(
        "salary", clip=CLIP, epsilon=0.5
    ),
    "grouped_describe": lambda d: d.dp.groupby("dept", keys=DEPTS).describe(
        "age", clip={"age": (18, 70)}, candidates={"age": GRID}, epsilon=0.5
    ),
    "var_ci": lambda d: d.dp.var("age", clip=(18, 70), epsilon=0.5, ci=0.9),
    "std_ci": lambda d: d.dp.std("salary", clip=CLIP, epsilon=0.5, ci=0.95),
    "histogram_ci": lambda d: d.dp.histogram("age", bins=[18, 30, 45, 70], epsilon=0.5, ci=0.9),
    "crosstab_ci": lambda d: d.dp.crosstab(
        "dept", "cat", keys=(DEPTS, ["c", "a", "b"]), epsilon=0.5, ci=0.8
    ),
    "grouped_var_ci": lambda d: d.dp.groupby("dept", keys=DEPTS).var(
        "age", clip=(18, 70), epsilon=0.5, ci=0.9
    ),
    "grouped_std_ci": lambda d: d.dp.groupby("cat", keys=["a", "b", "c", "d"]).std(
        "salary", clip=CLIP, epsilon=0.5, ci=0.5
    ),
    "nunique": lambda d: d.dp.nunique("age", epsilon=0.5),
    "grouped_nunique": lambda d: d.dp.groupby("dept", keys=DEPTS).nunique("cat", epsilon=0.5),
}

_OFFSET = iter(range(10**6, 10**9, 10**5))


@pytest.fixture(scope="module")
def frame() -> pd.DataFrame:
    """Missing values, keys outside the public ones, a categorical, ages on and off the grid."""
    rng = np.random.Generator(np.random.PCG64(2024))
    n = 3_001
    df = pd.DataFrame(
        {
            "dept": rng.choice(["Eng", "Ops", "Sales", "Other", None], size=n),
            "cat": pd.Categorical(rng.choice(["a", "b", "c"], size=n)),
            "age": rng.integers(18, 70, size=n).astype(float),
            "salary": np.round(rng.lognormal(np.log(60_000), 0.6, size=n), 2),
            "bonus": np.where(rng.uniform(size=n) < 0.2, np.nan, rng.uniform(0, 8000, size=n)),
        }
    )
    df.loc[::7, "age"] = np.nan
    df.loc[::5, "age"] = 40.0
    df = df.sort_values("dept", na_position="first")  # whole keys absent from some partitions
    return df.reset_index(drop=True)


def fresh(df: pd.DataFrame, npartitions: int) -> Any:
    """A new collection of ``df``'s rows (a fresh index range: a distinct expression name)."""
    rows = df.set_axis(pd.RangeIndex(next(_OFFSET), next(_OFFSET))[: len(df)])
    return dd.from_pandas(rows, npartitions=npartitions, sort=True)


def same(a: Any, b: Any) -> bool:
    if isinstance(a, pd.Series | pd.DataFrame):
        return bool(a.equals(b)) and type(a) is type(b)
    return bool(a == b) and type(a) is type(b)


def pandas_answers(frame: pd.DataFrame, seed: int) -> dict[str, Any]:
    df = frame.copy()
    df.dp.set_budget(epsilon=1_000, seed=seed)
    return {name: recipe(df) for name, recipe in RECIPES.items()}


@pytest.fixture(scope="module")
def expected(frame: pd.DataFrame) -> dict[str, Any]:
    return pandas_answers(frame, seed=5)


@pytest.mark.parametrize("npartitions", [1, 4, 11])
@pytest.mark.parametrize("scheduler", ["sync", "threads"])
def test_same_seed_same_release_as_pandas(
    frame: pd.DataFrame, expected: dict[str, Any], npartitions: int, scheduler: str
) -> None:
    """Every pandas recipe, in order from one seeded budget, gives exactly the pandas answers."""
    ddf = fresh(frame, npartitions)
    ddf.dp.set_budget(epsilon=1_000, seed=5)
    with dask.config.set(scheduler=scheduler):
        got = {name: recipe(ddf) for name, recipe in RECIPES.items()}
    for name, answer in expected.items():
        assert same(got[name], answer), name
    ledger = ddf.dp.budget.ledger
    assert len(ledger) == len(RECIPES)
    assert ledger["epsilon"].sum() == pytest.approx(0.5 * len(RECIPES))


@pytest.mark.parametrize("grouped", [False, True])
def test_clip_auto_gives_the_pandas_answer_and_spends_epsilon(
    frame: pd.DataFrame, grouped: bool
) -> None:
    """clip="auto" is two releases (bounds, then the mean): the same on both engines."""
    answers = []
    for data in (frame.copy(), fresh(frame, 4)):
        data.dp.set_budget(epsilon=1, seed=9)
        surface = data.dp.groupby("dept", keys=DEPTS) if grouped else data.dp
        answers.append(surface.mean("salary", clip="auto", epsilon=0.8, ci=0.9))
        assert data.dp.budget.spent == Fraction(4, 5)
    assert same(*answers)


@pytest.mark.parametrize("grouped", [False, True])
def test_cut_gives_the_pandas_answer_and_spends_epsilon(frame: pd.DataFrame, grouped: bool) -> None:
    """cut=True adds the share clipped (a release of its own): the same on both engines."""
    answers = []
    for data in (frame.copy(), fresh(frame, 4)):
        data.dp.set_budget(epsilon=1, seed=9)
        surface = data.dp.groupby("dept", keys=DEPTS) if grouped else data.dp
        with pytest.warns(PoorAnswerWarning, match="clipped_share"):  # on both engines
            answers.append(surface.mean("salary", clip=(0, 80_000), epsilon=0.8, ci=0.9, cut=True))
        assert data.dp.budget.spent == Fraction(4, 5)
    assert same(*answers)
    assert "clipped_share" in (answers[0].columns if grouped else answers[0].index)


def test_the_recipes_release_every_kind_of_the_registry(frame: pd.DataFrame) -> None:
    """A new kind fails here until a recipe runs it on pandas and on Dask."""
    df = frame.copy()
    df.dp.set_budget(epsilon=1_000, seed=5)
    for recipe in RECIPES.values():
        recipe(df)
    # the cap of max_rows="auto" on a total runs on a frame with a privacy unit (on Dask:
    # test_max_rows_auto_gives_the_pandas_answer)
    people = frame.assign(pid=np.arange(len(frame)) % 300)
    people.dp.set_budget(epsilon=1_000, privacy_unit="pid", seed=5)
    people.dp.count(epsilon=1, max_rows="auto")
    recorded = [*df.dp.budget.ledger["operation"], *people.dp.budget.ledger["operation"]]
    kinds = {op.removeprefix("groupby.").split("(")[0] for op in recorded}
    assert set(KINDS) <= kinds | ({"extreme"} if {"max", "min"} & kinds else set())  # their kind


def test_same_release_under_the_process_scheduler(
    frame: pd.DataFrame, expected: dict[str, Any]
) -> None:
    ddf = fresh(frame, 3)
    ddf.dp.set_budget(epsilon=1_000, seed=5)
    with dask.config.set(scheduler="processes", num_workers=2):
        got = {name: recipe(ddf) for name, recipe in list(RECIPES.items())[:6]}
    for name, answer in got.items():
        assert same(answer, expected[name]), name


def test_parquet_files_with_other_categories_and_an_empty_file(tmp_path: Path) -> None:
    """Per-file categorical categories differ (unknown in the meta), one file is empty."""
    parts = [
        pd.DataFrame({"k": pd.Categorical(["a", "a"]), "x": [1.0, 2.0]}),
        pd.DataFrame({"k": pd.Categorical(["b", "q", None]), "x": [3.0, np.nan, 5.0]}),
        pd.DataFrame({"k": pd.Categorical([], categories=["c"]), "x": np.array([], float)}),
        pd.DataFrame({"k": pd.Categorical(["c", "b", "a"]), "x": [7.0, 9e9, -1.0]}),
    ]
    for i, part in enumerate(parts):
        part.to_parquet(tmp_path / f"part{i}.parquet")
    ddf = dd.read_parquet(str(tmp_path))
    ddf.dp.set_budget(epsilon=1e12, seed=1)
    counts = ddf.dp.groupby("k", keys=["a", "b", "c", "d"]).count(epsilon=1e9)
    assert counts.tolist() == [3, 2, 1, 0]
    whole = pd.concat([p.astype({"k": "str"}) for p in parts], ignore_index=True)
    whole.dp.set_budget(epsilon=1e12, seed=1)
    expected = whole.dp.groupby("k", keys=["a", "b", "c", "d"]).count(epsilon=1e9)
    assert counts.equals(expected)


def test_statistics_add_up_exactly_without_wrapping() -> None:
    big = np.array([2**62, -(2**62), 7], dtype=np.int64)
    n, (summed,) = pdd.add_statistics(Count(Fraction(1)), (1, (big,)), (2, (big,)), (3, (big,)))
    assert n == 6
    assert summed.dtype == object  # int64 would have wrapped
    assert summed.tolist() == [3 * 2**62, -3 * 2**62, 21]
    with pytest.raises(OverflowError, match="64-bit"):
        pdd._exact((6, (summed,)))
    small = np.array([1, 2], dtype=np.int64)
    n, (kept,) = pdd.add_statistics(Count(Fraction(1)), (1, (small,)), (1, (small,)))
    assert kept.dtype == np.int64
    assert pdd._exact((n, (np.array([2**62, 3], dtype=object),)))[0].dtype == np.int64


def test_import_pandas_dp_never_imports_dask() -> None:
    code = "import sys, pandas_dp; print(any(m.split('.')[0] == 'dask' for m in sys.modules))"
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONPATH": str(Path(pdd.__file__).parents[1])},
    )
    assert out.stdout.strip() == "False"


# ------------------------------------------------------------------ binding


def test_collections_derived_through_the_accessor_share_the_budget(frame: pd.DataFrame) -> None:
    ddf = fresh(frame, 3)
    budget = ddf.dp.set_budget(epsilon=10, seed=1)
    derived = [
        ddf.dp.filter(ddf.salary > 0),
        ddf.dp.filter(lambda d: d.age.isna()),
        ddf.dp.query("age > @limit", local_dict={"limit": 30}),
        ddf.dp.assign(y=ddf.salary * 2, z=1),
        ddf.dp.select(["salary"]),
        ddf.dp.persist(),
        ddf.dp.repartition(npartitions=2),
        ddf.dp.select(["age"]).dp.filter(lambda d: d.age > 20),
    ]
    for d in derived:
        assert d.dp.budget is budget
    computed = ddf.dp.compute()
    assert isinstance(computed, pd.DataFrame)
    assert computed.dp.budget is budget
    ddf["w"] = ddf.salary + 1  # in place, row-wise: the same object stays bound
    assert ddf.dp.budget is budget


def _boom(part: pd.DataFrame) -> pd.DataFrame:
    return part


@pytest.mark.parametrize(
    "derive",
    [
        pytest.param(lambda d: d[d.salary > 0], id="mask"),
        pytest.param(lambda d: dd.concat([d, d]), id="concat"),
        pytest.param(lambda d: d.merge(d, on="dept"), id="merge"),
        pytest.param(lambda d: d.map_partitions(_boom), id="map_partitions"),
        pytest.param(lambda d: d.repartition(npartitions=2), id="repartition"),
        pytest.param(lambda d: d.dp.filter(d.age > 0)[["age"]], id="indexing_a_derived"),
    ],
)
def test_other_derivations_are_refused_with_the_fix_named(
    frame: pd.DataFrame, derive: Callable[[Any], Any]
) -> None:
    ddf = fresh(frame, 3)
    ddf.dp.set_budget(epsilon=10, seed=1)
    other = derive(ddf)
    with pytest.raises(MissingBudgetError, match=r"ddf\.dp\.filter"):
        other.dp.count(epsilon=1)
    with pytest.raises(PandasDPError, match="reset the accounting"):
        other.dp.set_budget(epsilon=10)
    assert ddf.dp.budget.spent == 0
    # The analyst's explicit assertion rebinds it, never as the root.
    assert other.dp.inherit(ddf).dp.budget is ddf.dp.budget


def test_a_re_read_of_the_same_data_is_marked(frame: pd.DataFrame) -> None:
    rows = frame.set_axis(pd.RangeIndex(next(_OFFSET), next(_OFFSET))[: len(frame)])
    ddf = dd.from_pandas(rows, npartitions=2)
    ddf.dp.set_budget(epsilon=10)
    again = dd.from_pandas(rows, npartitions=2)  # the same name: the same data
    with pytest.raises(PandasDPError, match="reset the accounting"):
        again.dp.set_budget(epsilon=10)


@pytest.mark.parametrize("ledger", [False, True], ids=["memory", "ledger"])
def test_a_named_budget_attached_again_is_not_root(
    frame: pd.DataFrame, tmp_path: Path, ledger: bool
) -> None:
    """As on pandas: only the first collection attached to a name in a process counts n free."""
    where = {"ledger": tmp_path / "l.sqlite"} if ledger else {}
    name = f"dask.root.{next(_OFFSET)}"
    first = fresh(frame, 2)
    first.dp.set_budget(epsilon=10, adjacency="substitute", name=name, **where)
    assert first.dp.count(epsilon=1) == len(frame)
    assert first.dp.budget.spent == 0
    subset = fresh(frame.iloc[: len(frame) // 2], 2)  # the data read afresh, fewer rows
    subset.dp.set_budget(epsilon=10, adjacency="substitute", name=name, **where)
    subset.dp.count(epsilon=1)
    assert subset.dp.budget.spent == 1
    assert subset.dp.budget.entries[-1].mechanism == "discrete_laplace"


def test_a_plain_persist_is_unbound_and_unmarked(frame: pd.DataFrame) -> None:
    """The documented hole: new keys, no lineage; it cannot spend, but nothing marks it."""
    ddf = fresh(frame, 2)
    ddf.dp.set_budget(epsilon=10)
    persisted = ddf.persist()
    with pytest.raises(MissingBudgetError, match="has no privacy budget"):
        persisted.dp.count(epsilon=1)


def test_filter_refuses_masks_of_other_collections_and_other_dtypes(frame: pd.DataFrame) -> None:
    ddf = fresh(frame, 2)
    ddf.dp.set_budget(epsilon=10)
    other = fresh(frame, 2)
    with pytest.raises(ValueError, match="this collection's own columns"):
        ddf.dp.filter(other.salary > 0)
    with pytest.raises(TypeError, match="boolean"):
        ddf.dp.filter(ddf.salary)
    with pytest.raises(TypeError, match="Dask Series"):
        ddf.dp.filter(np.ones(len(frame), dtype=bool))
    with pytest.raises(ValueError, match=r"mean"):
        ddf.dp.query("salary > salary.mean()")
    with pytest.raises(TypeError, match="scalar, a callable"):
        ddf.dp.assign(y=np.arange(len(frame)))
    assert ddf.dp.budget.spent == 0


def _plain_meta(df: pd.DataFrame) -> pd.DataFrame:
    """``df``'s empty frame without its attrs (a meta written by hand)."""
    meta = df.iloc[:0].copy()
    meta.attrs = {}
    return meta


def _concat_nested(holder: dict[str, list[tuple[pd.DataFrame]]]) -> pd.DataFrame:
    return pd.concat([part for (part,) in holder["parts"]])


#: Ways a bound pandas frame becomes a Dask collection: each carries its marker.
FROM_PANDAS: dict[str, Callable[[pd.DataFrame, Path], Any]] = {
    "from_pandas": lambda df, _: dd.from_pandas(df, npartitions=3),
    "chunksize": lambda df, _: dd.from_pandas(df, chunksize=500),
    "unsorted": lambda df, _: dd.from_pandas(df, npartitions=2, sort=False),
    "a column of it": lambda df, _: dd.from_pandas(df, npartitions=2)[["salary"]],
    "concat with other rows": lambda df, _: dd.concat(
        [dd.from_pandas(df, npartitions=2), dd.from_pandas(_plain_meta(df), npartitions=1)]
    ),
    "from_delayed": lambda df, _: dd.from_delayed(
        [dask.delayed(df.iloc[:1000]), dask.delayed(df.iloc[1000:])], meta=_plain_meta(df)
    ),
    "from_delayed of a call": lambda df, _: dd.from_delayed(
        [dask.delayed(pd.DataFrame.copy)(df)], meta=_plain_meta(df)
    ),
    "from_delayed of a concat": lambda df, _: dd.from_delayed(
        [dask.delayed(pd.concat)([df.iloc[:1000], df.iloc[1000:]])], meta=_plain_meta(df)
    ),
    "from_delayed, nested": lambda df, _: dd.from_delayed(
        [dask.delayed(_concat_nested)({"parts": [(df.iloc[:1000],), (df.iloc[1000:],)]})],
        meta=_plain_meta(df),
    ),
    "parquet written by pandas": lambda df, tmp: (
        df.to_parquet(tmp / "one.parquet"),
        dd.read_parquet(tmp / "one.parquet"),
    )[1],
    "parquet files": lambda df, tmp: (
        (tmp / "many").mkdir(),
        df.iloc[:1000].to_parquet(tmp / "many" / "0.parquet"),
        df.iloc[1000:].to_parquet(tmp / "many" / "1.parquet"),
        dd.read_parquet(tmp / "many"),
    )[-1],
}


@pytest.mark.parametrize("make", list(FROM_PANDAS))
def test_a_collection_of_a_bound_pandas_frame_continues_its_budget_only_by_inherit(
    frame: pd.DataFrame, tmp_path: Path, make: str
) -> None:
    """The attrs marker of a bound frame is read: no second budget for the same people."""
    df = frame.set_axis(pd.RangeIndex(next(_OFFSET), next(_OFFSET))[: len(frame)])  # new rows
    budget = df.dp.set_budget(epsilon=1, seed=3)
    ddf = FROM_PANDAS[make](df, tmp_path)
    with pytest.raises(PandasDPError, match=r"reset the accounting.*ddf\.dp\.inherit\(df\)"):
        ddf.dp.set_budget(epsilon=1)
    with pytest.raises(PandasDPError, match="reset the accounting"):
        ddf.dp.set_budget(epsilon=1, name=f"dask.from_pandas.{make}")
    with pytest.raises(MissingBudgetError, match=r"dd\.from_pandas\(df\).*inherit\(df\)"):
        ddf.dp.count(epsilon=0.5)
    assert budget.spent == 0
    # The fix the messages name: continue the frame's budget.
    assert ddf.dp.inherit(df).dp.budget is budget
    ddf.dp.count(epsilon=0.5)
    assert budget.spent == pytest.approx(0.5)


#: Masks and columns that may line other rows up with the collection's rows.
MISALIGNED: dict[str, Callable[[Any, Any], Any]] = {
    "set_index": lambda d, _: d.set_index("age").salary > 50_000,
    "shuffle": lambda d, _: d.shuffle("dept").salary > 50_000,
    "sort_values": lambda d, _: d.sort_values("salary").salary > 50_000,
    "repartition": lambda d, _: d.repartition(npartitions=3).salary > 50_000,
    "reset_index": lambda d, _: d.reset_index().salary > 50_000,
    "a filtered collection": lambda d, _: d[d.age > 30].salary > 50_000,
    "map_partitions": lambda d, _: d.salary.map_partitions(lambda s: s.iloc[::-1] > 5e4),
    "another collection, same partitions": lambda _, other: other.salary > 50_000,
    "a lookup in other rows": lambda d, _: d.age.map(d.salary, meta=("age", "f8")) > 5e4,
    "a pandas series": lambda d, _: d.salary > pd.Series(np.full(3_001, 5e4)),
}


#: The argument a series is passed as, and the call.
USES: dict[str, tuple[str, Callable[[Any, Any], Any]]] = {
    "filter": ("mask", lambda d, value: d.dp.filter(value)),
    "assign": ("rich", lambda d, value: d.dp.assign(rich=value)),
}


@pytest.mark.parametrize("how", list(MISALIGNED))
@pytest.mark.parametrize("use", list(USES))
def test_masks_and_columns_must_line_up_with_the_collections_own_rows(
    frame: pd.DataFrame, how: str, use: str
) -> None:
    ddf = fresh(frame, 3)
    budget = ddf.dp.set_budget(epsilon=1)
    other = fresh(frame, 3)
    value = MISALIGNED[how](ddf, other)
    argument, apply = USES[use]
    with (
        dask.config.set(scheduler=_no_compute),
        pytest.raises(ValueError, match=rf"`{argument}` must be computed row by row.*dp\.filter"),
    ):
        apply(ddf, value)
    assert budget.spent == 0


def test_the_set_index_mask_of_the_issue_is_refused() -> None:
    """``ddf.dp.filter(ddf.set_index("pid").x > 0.5)`` kept rows with x = 0."""
    df = pd.DataFrame({"pid": np.arange(40)[::-1], "x": np.r_[np.zeros(20), np.ones(20)]})
    ddf = dd.from_pandas(df.set_axis(pd.RangeIndex(next(_OFFSET), next(_OFFSET))[:40]), 2)
    ddf.dp.set_budget(epsilon=1)
    with pytest.raises(ValueError, match="SetIndex"):
        ddf.dp.filter(ddf.set_index("pid").x > 0.5)


#: Row-wise masks: still accepted, and the rows they keep are pandas' rows.
ROWWISE: dict[str, Callable[[Any], Any]] = {
    "comparison": lambda d: d.salary > 50_000,
    "and, isin": lambda d: (d.age > 30) & d.dept.isin(["Eng", "Ops"]),
    "str.len": lambda d: d.dept.str.len() > 3,
    "not, between, isna": lambda d: ~d.age.between(30, 40) | d.bonus.isna(),
    "fillna, astype, where": lambda d: (
        (d.bonus.where(d.bonus > 10, 0) > 5e3).fillna(False).astype(bool)
    ),
    "replace": lambda d: d.dept.replace({"Eng": "E", "Ops": "E"}) == "E",
    "eval": lambda d: d.eval("age * 2 > salary / 1000"),
}


@pytest.mark.parametrize("how", list(ROWWISE))
def test_row_wise_masks_are_accepted_and_keep_the_rows_pandas_keeps(
    frame: pd.DataFrame, how: str
) -> None:
    ddf = fresh(frame, 3)
    ddf.dp.set_budget(epsilon=1)
    kept = ddf.dp.filter(ROWWISE[how](ddf)).compute()
    assigned = ddf.dp.assign(keep=ROWWISE[how](ddf)).compute()
    rows = ddf.compute()
    want = rows[ROWWISE[how](rows).fillna(False).astype(bool)]
    pd.testing.assert_frame_equal(kept, want)
    pd.testing.assert_series_equal(
        assigned.keep.fillna(False).astype(bool),
        ROWWISE[how](rows).fillna(False).astype(bool),
        check_names=False,
    )


# ---------------------------------------------------------------- spending


def _never(value: float) -> float:
    raise AssertionError("a partition was computed")


def test_argument_errors_and_overspend_come_before_any_compute(frame: pd.DataFrame) -> None:
    ddf = fresh(frame, 2)
    budget = ddf.dp.set_budget(epsilon=1, seed=1)
    bad = ddf.dp.assign(salary=ddf.salary.map(_never, meta=("salary", "f8")))
    with pytest.raises(TypeError, match=r"numeric|dtype"):
        bad.dp.mean("dept", clip=(0, 1), epsilon=0.5)
    with pytest.raises(KeyError, match="nope"):
        bad.dp.sum("nope", clip=(0, 1), epsilon=0.5)
    with pytest.raises(TypeError, match="keys"):
        bad.dp.groupby("age", keys=["x", "y"]).count(epsilon=0.5)
    with pytest.raises(BudgetExceededError):
        bad.dp.mean("salary", clip=(0, 1), epsilon=2)
    assert budget.spent == 0
    assert budget.entries == []


def _no_compute(*args: Any, **kwargs: Any) -> Any:
    raise AssertionError("a graph was computed")


#: Bad arguments of the newer releases: the pandas error, raised before any compute or spend.
SURFACE_ERRORS: dict[str, Callable[[Any], Any]] = {
    "count ci out of range": lambda d: d.dp.count(epsilon=1, ci=1.5),
    "sum ci not a number": lambda d: d.dp.sum("salary", clip=CLIP, epsilon=1, ci="95%"),
    "grouped mean ci zero": lambda d: d.dp.groupby("dept", keys=DEPTS).mean(
        "salary", clip=CLIP, epsilon=1, ci=0
    ),
    "var ci one": lambda d: d.dp.var("age", clip=(18, 70), epsilon=1, ci=1),
    "grouped std ci bool": lambda d: d.dp.groupby("dept", keys=DEPTS).std(
        "age", clip=(18, 70), epsilon=1, ci=True
    ),
    "histogram ci nan": lambda d: d.dp.histogram("age", bins=[0, 50, 100], epsilon=1, ci=np.nan),
    "crosstab ci negative": lambda d: d.dp.crosstab(
        "dept", "cat", keys=(DEPTS, ["a"]), epsilon=1, ci=-0.5
    ),
    "var clip mapping": lambda d: d.dp.var("age", clip={"age": (0, 1)}, epsilon=1),
    "std of a string column": lambda d: d.dp.std("dept", clip=(0, 1), epsilon=1),
    "grouped var missing column": lambda d: d.dp.groupby("dept", keys=DEPTS).var(
        "nope", clip=(0, 1), epsilon=1
    ),
    "histogram bin count": lambda d: d.dp.histogram("age", bins=5, epsilon=1),
    "histogram unsorted": lambda d: d.dp.histogram("age", bins=[30, 18, 70], epsilon=1),
    "histogram string column": lambda d: d.dp.histogram("dept", bins=[0, 1], epsilon=1),
    "histogram max_rows without unit": lambda d: d.dp.histogram(
        "age", bins=[0, 50, 100], epsilon=1, max_rows=2
    ),
    "crosstab keys not a pair": lambda d: d.dp.crosstab("dept", "cat", keys=DEPTS, epsilon=1),
    "crosstab keys of another dtype": lambda d: d.dp.crosstab(
        "dept", "age", keys=(DEPTS, ["x"]), epsilon=1
    ),
    "grouped describe clip pair": lambda d: d.dp.groupby("dept", keys=DEPTS).describe(
        "age", clip=(18, 70), candidates={"age": GRID}, epsilon=1
    ),
    "overspend": lambda d: d.dp.describe(
        "age", clip={"age": (18, 70)}, candidates={"age": GRID}, epsilon=2
    ),
}


@pytest.mark.parametrize("case", list(SURFACE_ERRORS))
def test_bad_arguments_of_the_newer_releases_are_the_pandas_errors_before_any_compute(
    frame: pd.DataFrame, case: str
) -> None:
    call = SURFACE_ERRORS[case]
    df = frame.copy()
    df.dp.set_budget(epsilon=1)
    ddf = fresh(frame, 2)
    budget = ddf.dp.set_budget(epsilon=1)
    with pytest.raises(Exception) as on_pandas:  # noqa: PT011  (compared below)
        call(df)
    with dask.config.set(scheduler=_no_compute), pytest.raises(type(on_pandas.value)) as on_dask:
        call(ddf)
    # Dask stores pandas' ``str`` columns as ``string[pyarrow]``: the messages name the dtype.
    dtype = re.compile(r"dtype \w+")
    assert dtype.sub("dtype", str(on_dask.value)) == dtype.sub("dtype", str(on_pandas.value))
    assert budget.spent == 0
    assert budget.entries == []


def _fails(value: float) -> float:
    raise RuntimeError("a worker failed")


@pytest.mark.parametrize("scheduler", ["sync", "threads"])
def test_a_failed_graph_costs_nothing_and_a_retry_spends_once(
    frame: pd.DataFrame, scheduler: str
) -> None:
    """A task upstream of every tally fails: no tally returned, so the ε is returned."""
    ddf = fresh(frame, 3)
    budget = ddf.dp.set_budget(epsilon=1, seed=1)
    broken = ddf.dp.assign(salary=ddf.salary.map(_fails, meta=("salary", "f8")))
    with dask.config.set(scheduler=scheduler), pytest.raises(RuntimeError, match="a worker failed"):
        broken.dp.mean("salary", clip=CLIP, epsilon=0.75)
    assert budget.spent == 0
    assert budget.entries == []
    ddf.dp.mean("salary", clip=CLIP, epsilon=0.75)
    assert budget.spent == pytest.approx(0.75)
    assert len(budget.entries) == 1


class _Peek(dask.callbacks.Callback):  # type: ignore[misc]
    """A local-scheduler callback that records each tally's result, then raises."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[Any] = []

    def _posttask(self, key: Any, result: Any, dsk: Any, state: Any, worker_id: Any) -> None:
        name = key[0] if isinstance(key, tuple) else key
        if str(name).startswith(("partition_statistics", "buckets_statistics")):
            self.seen.append(result)
            raise RuntimeError("a callback failed")


class _Refuse(dask.callbacks.Callback):  # type: ignore[misc]
    """A local-scheduler callback that raises before the first task runs."""

    def _pretask(self, key: Any, dsk: Any, state: Any) -> None:
        raise RuntimeError("a callback failed")


@pytest.mark.parametrize("unit", [False, True], ids=["rows", "privacy unit"])
@pytest.mark.parametrize("scheduler", ["sync", "threads"])
def test_a_failure_after_a_tally_returned_keeps_the_epsilon_spent(
    frame: pd.DataFrame, orders: pd.DataFrame, scheduler: str, unit: bool
) -> None:
    """A callback that saw a tally's exact statistics cannot get the ε back by raising."""
    if unit:
        ddf = fresh(orders, 3)
        budget = ddf.dp.set_budget(epsilon=1, privacy_unit="customer", max_rows=2)
    else:
        ddf = fresh(frame, 3)
        budget = ddf.dp.set_budget(epsilon=1)
    peek = _Peek()
    with dask.config.set(scheduler=scheduler), peek, pytest.raises(RuntimeError) as info:
        ddf.dp.count(epsilon=0.25)
    rows, stats = peek.seen[0]  # a partition's exact row count and statistics
    assert rows > 0
    assert stats
    assert budget.spent == pytest.approx(0.25)
    assert len(budget.entries) == 1
    assert any("stays spent" in note for note in getattr(info.value, "__notes__", []))
    ddf.dp.count(epsilon=0.25)  # the next release runs
    assert budget.spent == pytest.approx(0.5)


@pytest.mark.parametrize("scheduler", ["sync", "threads"])
def test_a_failure_before_any_task_ran_costs_nothing(frame: pd.DataFrame, scheduler: str) -> None:
    ddf = fresh(frame, 3)
    budget = ddf.dp.set_budget(epsilon=1)
    with dask.config.set(scheduler=scheduler), _Refuse(), pytest.raises(RuntimeError):
        ddf.dp.count(epsilon=0.25)
    assert budget.spent == 0
    assert budget.entries == []


_SEEN: dict[str, Any] = {}


def _record_spent(value: float) -> float:
    _SEEN.setdefault("spent", []).append(_SEEN["budget"].spent)
    return value


@pytest.mark.parametrize("store", ["memory", "sqlite"])
def test_the_reservation_is_made_before_compute(
    frame: pd.DataFrame, tmp_path: Path, store: str
) -> None:
    """While the partitions run, ε is already counted (on disk, with a ledger)."""
    ddf = fresh(frame, 2)
    if store == "sqlite":
        budget = ddf.dp.set_budget(epsilon=1, ledger=tmp_path / "l.sqlite", name="dask.test")
    else:
        budget = ddf.dp.set_budget(epsilon=1)
    _SEEN.clear()
    _SEEN["budget"] = budget
    spy = ddf.dp.assign(salary=ddf.salary.map(_record_spent, meta=("salary", "f8")))
    with dask.config.set(scheduler="sync"):
        spy.dp.sum("salary", clip=CLIP, epsilon=0.25)
    assert _SEEN["spent"]
    assert all(s == pytest.approx(0.25) for s in _SEEN["spent"])
    assert budget.spent == pytest.approx(0.25)


def test_threads_racing_never_overspend(frame: pd.DataFrame) -> None:
    ddf = fresh(frame, 2)
    budget = ddf.dp.set_budget(epsilon=1)
    outcomes: list[str] = []

    def one() -> None:
        try:
            ddf.dp.count(epsilon=0.3)
            outcomes.append("ok")
        except BudgetExceededError:
            outcomes.append("refused")

    threads = [threading.Thread(target=one) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(outcomes) == ["ok"] * 3 + ["refused"] * 3
    assert budget.spent == pytest.approx(0.9)


# ------------------------------------------------------------ privacy unit

WHALE = -1  # one person whose rows are in every input partition


@pytest.fixture(scope="module")
def orders() -> pd.DataFrame:
    """Persons with many rows, ids missing on some rows, one person spread over all rows."""
    rng = np.random.Generator(np.random.PCG64(7))
    n = 2_400
    df = pd.DataFrame(
        {
            "customer": pd.array(rng.integers(0, 300, n), dtype="Int64"),
            "amount": rng.uniform(0, 600, n),
            "region": rng.choice(["N", "S", "E", "W", "X"], n),  # X is not a public key
        }
    )
    df.loc[::40, "customer"] = pd.NA
    df.loc[3::30, "customer"] = WHALE
    return df


def bounded_count(df: pd.DataFrame, max_rows: int) -> int:
    return int(df.dropna(subset=["customer"]).groupby("customer").size().clip(upper=max_rows).sum())


def unit_fresh(df: pd.DataFrame, npartitions: int) -> Any:
    ddf = fresh(df, npartitions)
    ddf.dp.set_budget(epsilon=1e12, privacy_unit="customer", seed=npartitions)
    return ddf


@pytest.mark.parametrize("npartitions", [1, 3, 8])
@pytest.mark.parametrize("scheduler", ["sync", "threads"])  # processes: the cluster test
def test_with_a_privacy_unit_huge_epsilon_releases_are_the_bounded_counts(
    orders: pd.DataFrame, npartitions: int, scheduler: str
) -> None:
    """Each person's rows are brought together first: the bounds hold across partitions."""
    ddf = unit_fresh(orders, npartitions)
    whale_parts = ddf.map_partitions(lambda p: (p.customer == WHALE).any()).compute()
    assert whale_parts.all()  # the whale has rows in every input partition
    persons = orders.customer.nunique()
    in_keys = orders[orders.region != "X"]
    keys = ["N", "S", "E", "W"]
    with dask.config.set(scheduler=scheduler):
        for max_rows in (1, 3):
            assert ddf.dp.count(epsilon=1e9, max_rows=max_rows) == bounded_count(orders, max_rows)
        g = ddf.dp.groupby("region", keys=keys).count(epsilon=1e9, max_rows=1, max_groups=1)
        assert g.sum() == in_keys.customer.nunique() <= persons
        people_in = in_keys.groupby("region").customer.nunique()
        assert (g <= people_in[keys].to_numpy()).all()
        wide = ddf.dp.groupby("region", keys=keys).count(epsilon=1e9, max_rows=2, max_groups=2)
        upper = in_keys.groupby(["region", "customer"]).size().clip(upper=2).groupby("region")
        assert (wide <= upper.sum()[keys].to_numpy()).all()
        assert wide.sum() <= 2 * 2 * in_keys.customer.nunique()
        everything = ddf.dp.groupby("region", keys=keys).count(
            epsilon=1e9, max_rows=10**6, max_groups=4
        )
        exact = in_keys.dropna(subset=["customer"]).groupby("region").size()[keys]
        assert everything.tolist() == exact.tolist()


def test_with_a_privacy_unit_releases_run_as_on_pandas(orders: pd.DataFrame) -> None:
    """Sums, means, selection and quantiles keep at most the bounds; the ledger records them."""
    df = orders.copy()
    df.dp.set_budget(epsilon=1e12, privacy_unit="customer", max_rows=2, max_groups=1, seed=1)
    ddf = fresh(orders, 4)
    budget = ddf.dp.set_budget(
        epsilon=1e12, privacy_unit="customer", max_rows=2, max_groups=1, seed=1
    )
    per = orders.dropna(subset=["customer"]).groupby("customer")
    total = ddf.dp.sum("amount", clip=(0, 1000), epsilon=1e9, max_rows=1)
    assert per.amount.min().sum() - 1 <= total <= per.amount.max().sum() + 1
    assert ddf.dp.count(epsilon=1e9) == bounded_count(orders, 2)  # the budget's default
    calls: list[Callable[[Any], Any]] = [
        lambda d: d.dp.count(epsilon=1e9),
        lambda d: d.dp.mean("amount", clip=(0, 600), epsilon=1e9, max_rows=3),
        lambda d: d.dp.argmax_exp("region", candidates=["N", "S", "X"], epsilon=1e9),
        lambda d: d.dp.median("amount", candidates=np.linspace(0, 600, 13), epsilon=1e9),
        lambda d: d.dp.groupby("region", keys=["N", "S"]).sum(
            "amount", clip=(0, 600), epsilon=1e9, max_groups=2
        ),
        lambda d: d.dp.count(epsilon=1e9, ci=0.9),
        lambda d: d.dp.groupby("region", keys=["N", "S"]).mean(
            "amount", clip=(0, 600), epsilon=1e9, ci=0.9, max_groups=2
        ),
        lambda d: d.dp.std("amount", clip=(0, 600), epsilon=1e9, max_rows=3),
        lambda d: d.dp.groupby("region", keys=["N", "S", "E"]).var(
            "amount", clip=(0, 600), epsilon=1e9, max_groups=3
        ),
        lambda d: d.dp.histogram("amount", bins=[0, 200, 400, 600], epsilon=1e9, max_groups=3),
        lambda d: d.dp.assign(big=d.amount > 300).dp.crosstab(
            "region", "big", keys=(["N", "S"], [False, True]), epsilon=1e9, max_groups=4
        ),
        lambda d: d.dp.describe(
            "amount",
            clip={"amount": (0, 600)},
            candidates={"amount": np.linspace(0, 600, 13)},
            epsilon=1e9,
        ),
        lambda d: d.dp.groupby("region", keys=["N", "S"]).describe(
            "amount",
            clip={"amount": (0, 600)},
            candidates={"amount": np.linspace(0, 600, 13)},
            epsilon=1e9,
            max_groups=2,
        ),
        lambda d: d.dp.nunique("region", epsilon=1e9),
        lambda d: d.dp.groupby("region", keys=["N", "S"]).nunique(
            "amount", epsilon=1e9, max_groups=2
        ),
    ]
    for call in calls:
        got, want = call(ddf), call(df)
        if isinstance(want, pd.DataFrame):
            assert got.index.equals(want.index)
            assert got.columns.equals(want.columns)
            # Other rows kept: a quartile may land one grid step (50) away.
            np.testing.assert_allclose(got.to_numpy(float), want.to_numpy(float), 0.2, 50)
        elif isinstance(want, pd.Series):
            assert got.index.equals(want.index)
            np.testing.assert_allclose(got.to_numpy(), want.to_numpy(), rtol=0.2)
        elif isinstance(want, float):
            assert got == pytest.approx(want, rel=0.05)
        else:
            assert got == want
    columns = ["operation", "privacy_unit", "max_rows", "max_groups", "epsilon"]
    assert (
        budget.ledger[columns].iloc[2:].reset_index(drop=True).equals(df.dp.budget.ledger[columns])
    )
    assert budget.ledger.privacy_unit.eq("customer").all()


@pytest.mark.parametrize("npartitions", [1, 4])
def test_rows_per_unit_is_the_pandas_release(orders: pd.DataFrame, npartitions: int) -> None:
    """The quantile of the rows per person needs no bounding: the pandas answer, bit for bit."""
    df = orders.copy()
    df.dp.set_budget(epsilon=10, privacy_unit="customer", seed=4)
    ddf = fresh(orders, npartitions)
    budget = ddf.dp.set_budget(epsilon=10, privacy_unit="customer", seed=4)
    grid = range(1, 31)
    for q, epsilon in ((0.5, 1), (0.9, 1), (0.99, 6)):  # 0.99 needs ε ≈ 4.7 for 300 persons
        got = ddf.dp.rows_per_unit(q, candidates=grid, epsilon=epsilon)
        assert type(got) is int
        assert got == df.dp.rows_per_unit(q, candidates=grid, epsilon=epsilon)
    assert budget.ledger.drop(columns="time").equals(df.dp.budget.ledger.drop(columns="time"))
    operations = budget.ledger.operation  # each after the count of its persons (the check)
    quantiles = [f"rows_per_unit(q={q})" for q in (0.5, 0.9, 0.99)]
    assert operations.tolist() == [op for q in quantiles for op in ("count", q)]
    with pytest.raises(ValueError, match="increasing"):
        ddf.dp.rows_per_unit(candidates=[3, 2, 1], epsilon=1)
    people = ddf.dp.per_unit(n=("amount", "size"))
    with pytest.raises(TypeError, match="needs a privacy unit"):
        people.dp.rows_per_unit(candidates=grid, epsilon=1)
    assert budget.spent == 8  # 1 + 1 + 6


def test_the_bounding_draws_from_the_budgets_source_inside_the_reservation(
    orders: pd.DataFrame,
) -> None:
    """Keys of KEY_WORDS words per bucket of persons, drawn on the client after the reserve."""
    ddf = fresh(orders, 5)
    budget = ddf.dp.set_budget(epsilon=10, privacy_unit="customer", seed=3)
    inner = budget.source
    drawn: list[tuple[int, float]] = []

    class Spy:
        def words(self, n: int) -> Any:
            drawn.append((n, float(budget.spent)))
            return inner.words(n)

    budget.source = Spy()
    with dask.config.set(scheduler="threads"):
        ddf.dp.sum("amount", clip=(0, 600), epsilon=0.5, max_rows=2)
    buckets = min(pdd.BUCKETS_PER_PARTITION * ddf.npartitions, pdd.MAX_BUCKETS)
    assert drawn[0] == (pdd.KEY_WORDS * buckets, 0.5)  # reserved before the keys are drawn
    assert len(drawn) == 2  # the keys, then the noise: no other draw on the client


def test_with_a_privacy_unit_the_seed_chooses_the_rows_kept(orders: pd.DataFrame) -> None:
    """Which rows are kept follows the budget's seed (no worker generator): same seed and
    partitioning, same rows under any scheduler; other seeds, other rows."""

    def kept_sum(seed: int, scheduler: str = "sync") -> float:
        ddf = fresh(orders, 4)
        ddf.dp.set_budget(epsilon=1e12, privacy_unit="customer", seed=seed)
        with dask.config.set(scheduler=scheduler):
            return float(ddf.dp.sum("amount", clip=(0, 1000), epsilon=1e9, max_rows=1))

    assert kept_sum(1) == kept_sum(1) == kept_sum(1, "threads") == kept_sum(1, "processes")
    assert len({kept_sum(seed) for seed in (1, 2, 3)}) == 3


@pytest.mark.parametrize("npartitions", [1, 3, 8])
@pytest.mark.parametrize("max_rows", [1, 3])
def test_a_person_count_is_the_pandas_release_bit_for_bit(
    orders: pd.DataFrame, npartitions: int, max_rows: int
) -> None:
    """min(rows, max_rows) per person chooses nothing: no key is drawn, the noise is pandas'."""
    df = orders.copy()
    df.dp.set_budget(epsilon=10, privacy_unit="customer", seed=5)
    ddf = fresh(orders, npartitions)
    ddf.dp.set_budget(epsilon=10, privacy_unit="customer", seed=5)
    for _ in range(2):
        want = df.dp.count(epsilon=1, max_rows=max_rows)
        assert same(ddf.dp.count(epsilon=1, max_rows=max_rows), want)


def test_only_what_the_bounding_reads_moves_to_a_persons_bucket(
    orders: pd.DataFrame, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every row of a person goes to one bucket, in the data's order; only the unit, the
    kind's columns and int8 key codes move; rows without a unit id or a public key stay."""
    keys = ["N", "S", "E", "W"]
    ddf = fresh(orders.assign(note="not read by the release"), 3)
    ddf.dp.set_budget(epsilon=1e12, privacy_unit="customer", seed=1)
    split, seen = units.split_by_unit, []

    def spy(part: pd.DataFrame, task: Any, buckets: int, *span: int) -> Any:
        seen.append((part, split(part, task, buckets, *span)))
        return seen[-1][1]

    monkeypatch.setattr(units, "split_by_unit", spy)
    with dask.config.set(scheduler="sync"):
        ddf.dp.groupby("region", keys=keys).sum(
            "amount", clip=(0, 600), epsilon=1e9, max_rows=2, max_groups=2
        )
    assert len(seen) == 3
    bucket_of: dict[Any, int] = {}
    for part, pieces in seen:
        assert sum(n for n, _, _ in pieces) == len(part)  # every input row counted once
        kept = part[part.customer.notna() & part.region.isin(keys)]
        for b, (_, rows, codes) in enumerate(pieces):
            assert list(rows.columns) == ["amount", "customer"]
            assert codes is not None
            assert codes.dtype == np.int8
            for person in rows.customer:
                assert bucket_of.setdefault(person, b) == b
            mine = kept[kept.customer.isin(rows.customer)]  # all this partition's rows of them
            assert rows.amount.tolist() == mine.amount.tolist()  # in the data's order
            assert codes.tolist() == [keys.index(r) for r in mine.region]


def _persons_with_rows_in_order(persons: int, rows: int) -> pd.DataFrame:
    """Each person's rows hold 0, 1, ..., rows - 1 in the data's order, in keys 0 .. rows - 1."""
    return pd.DataFrame(
        {
            "customer": np.repeat(np.arange(persons), rows),
            "step": np.tile(np.arange(rows), persons),
        }
    )


def test_on_dask_a_persons_kept_rows_are_uniform_not_the_first() -> None:
    """max_rows=1 of rows 0..4: the kept row's mean is 2 (the first row would give 0)."""
    ddf = fresh(_persons_with_rows_in_order(2_000, 5), 4)
    ddf.dp.set_budget(epsilon=1e12, privacy_unit="customer", seed=11)
    with dask.config.set(scheduler="sync"):
        total = ddf.dp.sum("step", clip=(0, 4), epsilon=1e9, max_rows=1)
    assert total / 2_000 == pytest.approx(2.0, abs=0.15)  # sd of the mean: 0.03


def test_on_dask_a_persons_kept_keys_are_uniform_not_the_first() -> None:
    """max_groups=1 of keys 0..4 (one row each): each key keeps about a fifth of the persons."""
    ddf = fresh(_persons_with_rows_in_order(2_000, 5), 4)
    ddf.dp.set_budget(epsilon=1e12, privacy_unit="customer", seed=12)
    with dask.config.set(scheduler="sync"):
        counts = ddf.dp.groupby("step", keys=range(5)).count(epsilon=1e9, max_rows=1, max_groups=1)
    assert counts.sum() == pytest.approx(2_000, abs=1)
    assert counts.between(300, 500).all()  # binomial(2000, 1/5): sd 18


def test_keyed_words_are_a_stream_of_the_key() -> None:
    a, b = pdd.KeyedWords(b"k" * 32), pdd.KeyedWords(b"k" * 32)
    first = a.words(5)
    assert first.dtype == np.uint64
    assert first.shape == (5,)
    assert (first == b.words(5)).all()
    assert not (a.words(5) == first).all()  # each call is a new block
    clone = pickle.loads(pickle.dumps(a))
    assert (clone.words(3) == a.words(3)).all()
    assert not (pdd.KeyedWords(b"j" * 32).words(5) == first).all()
    assert a.words(0).shape == (0,)


UNIT_ERRORS: dict[str, Callable[[Any], Any]] = {
    "missing max_rows": lambda d: d.dp.count(epsilon=1),
    "missing max_groups": lambda d: d.dp.groupby("region", keys=["N"]).count(epsilon=1, max_rows=1),
    "zero max_rows": lambda d: d.dp.count(epsilon=1, max_rows=0),
    "bool max_rows": lambda d: d.dp.count(epsilon=1, max_rows=True),
    "float max_groups": lambda d: d.dp.groupby("region", keys=["N"]).count(
        epsilon=1, max_rows=1, max_groups=1.5
    ),
    "group by the unit": lambda d: d.dp.groupby("customer", keys=[1.0]).count(
        epsilon=1, max_rows=1, max_groups=1
    ),
    "read the unit": lambda d: d.dp.sum("customer", clip=(0, 1), epsilon=1, max_rows=1),
    "drop the unit": lambda d: d.dp.select(["amount"]),
    "overwrite the unit": lambda d: d.dp.assign(customer=1.0),
    "bounds without a unit": lambda d: d.dp.per_unit(n=("amount", "size")).dp.count(
        epsilon=1, max_rows=1
    ),
}


@pytest.mark.parametrize("case", list(UNIT_ERRORS))
def test_privacy_unit_errors_are_the_pandas_ones_before_any_spend(
    orders: pd.DataFrame, case: str
) -> None:
    call = UNIT_ERRORS[case]
    df = orders.copy()
    df.dp.set_budget(epsilon=3, privacy_unit="customer")
    ddf = fresh(orders, 2)
    budget = ddf.dp.set_budget(epsilon=3, privacy_unit="customer")
    with pytest.raises(Exception) as on_pandas:  # noqa: PT011  (compared below)
        call(df)
    with pytest.raises(type(on_pandas.value)) as on_dask:
        call(ddf)
    assert str(on_dask.value) == str(on_pandas.value)
    assert budget.spent == 0


def test_set_budget_checks_the_unit_as_on_pandas(orders: pd.DataFrame) -> None:
    with pytest.raises(TypeError, match="go with `privacy_unit`"):
        fresh(orders, 2).dp.set_budget(epsilon=1, max_rows=2)
    with pytest.raises(KeyError, match="nope"):
        fresh(orders, 2).dp.set_budget(epsilon=1, privacy_unit="nope")
    with pytest.raises(ValueError, match="positive"):
        fresh(orders, 2).dp.set_budget(epsilon=1, privacy_unit="customer", max_rows=0)
    ddf = fresh(orders, 2)
    budget = ddf.dp.set_budget(epsilon=1, privacy_unit="customer", max_rows=2, max_groups=1)
    assert (budget.privacy_unit, budget.max_rows, budget.max_groups) == ("customer", 2, 1)


def test_a_failed_bounded_graph_costs_nothing(orders: pd.DataFrame) -> None:
    ddf = fresh(orders, 3)
    budget = ddf.dp.set_budget(epsilon=1, privacy_unit="customer", seed=1)
    broken = ddf.dp.assign(amount=ddf.amount.map(_fails, meta=("amount", "f8")))
    with pytest.raises(RuntimeError, match="a worker failed"):
        broken.dp.sum("amount", clip=(0, 600), epsilon=0.75, max_rows=2)
    assert budget.spent == 0
    assert budget.entries == []
    ddf.dp.sum("amount", clip=(0, 600), epsilon=0.75, max_rows=2)
    assert budget.spent == pytest.approx(0.75)


def test_per_unit_gives_one_row_per_person_on_the_same_budget(orders: pd.DataFrame) -> None:
    ddf = fresh(orders, 4)
    budget = ddf.dp.set_budget(epsilon=1e12, privacy_unit="customer", seed=1)
    people = ddf.dp.per_unit(spend=("amount", "sum"), orders=("amount", "size"))
    want = orders.groupby("customer").agg(spend=("amount", "sum"), orders=("amount", "size"))
    got = people.compute().sort_index()
    pd.testing.assert_frame_equal(got, want, check_dtype=False)
    assert people.dp.count(epsilon=1e9) == orders.customer.nunique()  # no bounds needed
    assert people.dp.budget is budget
    assert budget.ledger.privacy_unit.isna().all()
    with pytest.raises(TypeError, match="needs a privacy unit"):
        people.dp.per_unit(n=("orders", "size"))
    with pytest.raises(TypeError, match="at least one"):
        ddf.dp.per_unit()


@pytest.mark.parametrize("function", ["all", "any", "kurt", "nunique", "quantile", "sem", "skew"])
def test_per_unit_refuses_a_reduction_dask_lacks_naming_the_fix(
    orders: pd.DataFrame, function: str
) -> None:
    ddf = fresh(orders, 3)
    budget = ddf.dp.set_budget(epsilon=3, privacy_unit="customer")
    with pytest.raises(ValueError, match=r"Dask's named aggregation does not support.*compute"):
        ddf.dp.per_unit(v=("amount", function))
    assert budget.entries == []


@pytest.mark.parametrize("function", ["cumsum", "rank", "shift", "diff", "cumcount", "head"])
def test_per_unit_refuses_a_transform_as_on_pandas(orders: pd.DataFrame, function: str) -> None:
    df = orders.copy()
    df.dp.set_budget(epsilon=3, privacy_unit="customer")
    ddf = fresh(orders, 3)
    budget = ddf.dp.set_budget(epsilon=3, privacy_unit="customer")
    with pytest.raises(ValueError, match="does not reduce") as on_pandas:
        df.dp.per_unit(v=("amount", function))
    with pytest.raises(ValueError, match="does not reduce") as on_dask:
        ddf.dp.per_unit(v=("amount", function))
    assert str(on_dask.value) == str(on_pandas.value)
    assert budget.entries == []


def test_per_unit_on_dask_refuses_a_callable_naming_the_fix(orders: pd.DataFrame) -> None:
    ddf = fresh(orders, 3)
    ddf.dp.set_budget(epsilon=3, privacy_unit="customer")
    with pytest.raises(TypeError, match=r"function name \(Dask: by name\).*'sum'"):
        ddf.dp.per_unit(v=("amount", lambda s: s.cumsum()))


@pytest.mark.parametrize("convert_string", [True, False], ids=["strings", "object"])
def test_ids_one_person_to_pandas_and_three_to_dask_are_refused(convert_string: bool) -> None:
    """``1``, ``1.0``, ``True``: one id to pandas, three here (``"1"``, ``"1.0"``, ``"True"``)."""
    frame = pd.DataFrame({"pid": pd.Series([1, 1.0, True] * 5, dtype=object), "x": 1.0})
    with dask.config.set({"dataframe.convert-string": convert_string}):
        ddf = dd.from_pandas(frame, npartitions=3)
    with pytest.raises(TypeError, match=r"'pid' has dtype object.*integer, string or categorical"):
        ddf.dp.set_budget(epsilon=1, privacy_unit="pid", max_rows=5)
    with pytest.raises(MissingBudgetError):
        ddf.dp.budget  # noqa: B018  (nothing was attached)


@pytest.mark.parametrize(
    "call",
    [
        lambda d: d.dp.count(epsilon=1, max_rows=2),
        lambda d: d.dp.per_unit(n=("amount", "size")),
        lambda d: d.dp.rows_per_unit(0.5, candidates=range(1, 20), epsilon=1),
    ],
    ids=["count", "per_unit", "rows_per_unit"],
)
def test_a_unit_column_made_float_later_is_never_bound_again(
    orders: pd.DataFrame, call: Callable[[Any], Any]
) -> None:
    ddf = fresh(orders, 3)
    budget = ddf.dp.set_budget(epsilon=3, privacy_unit="customer")
    ddf["customer"] = ddf["customer"].astype("float64")
    with pytest.raises(TypeError, match="'customer' has dtype float64"):
        ddf.dp.inherit(ddf)  # bound again only with ids of one type
    with pytest.raises(MissingBudgetError, match="changed in place"):
        call(ddf)
    assert budget.entries == []


@pytest.mark.parametrize("unit", [None, "pid"])
def test_a_partition_whose_key_dtype_differs_from_meta_releases_like_the_others(
    unit: str | None,
) -> None:
    """Keys are checked against ``_meta`` when the groupby is made, never per partition.

    A row-wise step can give a partition its own dtype (here its digits become int64,
    under a meta of strings); a check on partitions would raise inside the reservation,
    depending on the data.
    """
    pdf = pd.DataFrame({"k": ["a", "b", "a", "1", "2", "1"], "v": np.arange(6.0), "pid": range(6)})
    ddf = fresh(pdf, 2)
    ddf.dp.set_budget(epsilon=1e10, seed=0, privacy_unit=unit)
    cleaned = ddf.dp.assign(
        k=lambda d: d.k.apply(lambda x: int(x) if x.isdigit() else x, meta=("k", "str"))
    )
    dtypes = {str(part.compute().k.dtype) for part in cleaned.to_delayed()}
    assert len(dtypes) == 2  # the partitions' dtypes differ
    bounds = {} if unit is None else {"max_rows": 1, "max_groups": 1}
    counts = cleaned.dp.groupby("k", keys=["a", "b"]).count(epsilon=1e9, **bounds)
    assert counts.tolist() == [2, 1]
    assert ddf.dp.budget.spent == Fraction(10**9)


# ------------------------------------------------------ process workers


@pytest.fixture(scope="module")
def client() -> Iterator[Any]:
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0"
        ) as cluster,
        distributed.Client(cluster) as c,
    ):
        yield c


def test_on_a_local_cluster_with_process_workers(
    client: Any, frame: pd.DataFrame, expected: dict[str, Any]
) -> None:
    """The same answers as pandas; no task runs in this process; the budget never travels."""
    ddf = fresh(frame, 5)
    budget = ddf.dp.set_budget(epsilon=1_000, seed=5)
    got = {name: recipe(ddf) for name, recipe in RECIPES.items()}
    for name, answer in expected.items():
        assert same(got[name], answer), name
    pids = set(client.run(os.getpid).values())
    assert os.getpid() not in pids
    assert len(pids) == 2
    with pytest.raises(TypeError, match="never leaves the process"):
        pickle.dumps(budget)
    with pytest.raises(Exception, match=r"never leaves the process|deterministically hashed"):
        ddf.map_partitions(lambda part, b: part, budget).compute()
    with pytest.raises(Exception) as info:  # noqa: PT011  (distributed wraps our TypeError)
        client.submit(lambda b: b, budget).result()
    chain, error = [], info.value
    while error is not None:
        chain.append(str(error))
        error = error.__cause__ or error.__context__
    assert any("never leaves the process" in message for message in chain)


def test_a_privacy_unit_on_a_local_cluster_with_process_workers(
    client: Any, orders: pd.DataFrame
) -> None:
    """The shuffle and the keyed bounding run on process workers; the bounds hold."""
    ddf = unit_fresh(orders, 6)
    assert ddf.dp.count(epsilon=1e9, max_rows=2) == bounded_count(orders, 2)
    g = ddf.dp.groupby("region", keys=["N", "S", "E", "W"]).count(
        epsilon=1e9, max_rows=1, max_groups=1
    )
    assert g.sum() == orders[orders.region != "X"].customer.nunique()


class _Records(logging.Handler):
    """Every log record of warning level or above it receives."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


def test_a_privacy_unit_release_on_a_local_cluster_logs_no_warning(
    client: Any, orders: pd.DataFrame
) -> None:
    """The unit's shuffle is not distributed's P2P one, which logs two warnings per run."""
    ddf = unit_fresh(orders, 6)
    handler = _Records()
    logger = logging.getLogger("distributed")  # the scheduler runs in this process
    logger.addHandler(handler)
    try:
        ddf.dp.count(epsilon=1.0, max_rows=2)
        ddf.dp.groupby("region", keys=["N", "S"]).mean(
            "amount", clip=(0, 100), epsilon=1.0, max_rows=1, max_groups=1
        )
    finally:
        logger.removeHandler(handler)
    assert [r.getMessage() for r in handler.records] == []


class _Computes(dask.callbacks.Callback):  # type: ignore[misc]
    """Counts the computes of the local schedulers (one progress bar each)."""

    def __init__(self) -> None:
        super().__init__()
        self.computes = 0

    def _start(self, dsk: Any) -> None:
        self.computes += 1


@pytest.mark.parametrize("grouped", [False, True])
def test_a_privacy_unit_release_is_one_compute(orders: pd.DataFrame, grouped: bool) -> None:
    ddf = unit_fresh(orders, 4)
    with dask.config.set(scheduler="threads"), _Computes() as seen:
        if grouped:
            ddf.dp.groupby("region", keys=["N"]).sum(
                "amount", clip=(0, 100), epsilon=1.0, max_rows=1, max_groups=1
            )
        else:
            ddf.dp.count(epsilon=1.0, max_rows=2)
    assert seen.computes == 1


def test_on_process_workers_a_failed_graph_keeps_the_epsilon_spent(
    client: Any, frame: pd.DataFrame
) -> None:
    """No task can be shown not to have returned where tasks run elsewhere: fail closed."""
    ddf = fresh(frame, 3)
    budget = ddf.dp.set_budget(epsilon=1)
    broken = ddf.dp.assign(salary=ddf.salary.map(_fails, meta=("salary", "f8")))
    with pytest.raises(RuntimeError, match="a worker failed"):
        broken.dp.mean("salary", clip=CLIP, epsilon=0.75)
    assert budget.spent == pytest.approx(0.75)
    with pytest.raises(KeyError, match="nope"):  # refused before compute: nothing reserved
        ddf.dp.sum("nope", clip=CLIP, epsilon=0.25)
    assert budget.spent == pytest.approx(0.75)


def test_a_collection_changed_in_place_spends_nothing_until_inherit() -> None:
    frame = pd.DataFrame({"x": [1.0] * 8, "pid": [7] * 8})
    ddf = dd.from_pandas(frame, npartitions=2)
    budget = ddf.dp.set_budget(epsilon=1e6, privacy_unit="pid", max_rows=1, seed=0)
    with dask.config.set({"scheduler": "sync", "dataframe.shuffle.method": "tasks"}):
        assert ddf.dp.count(epsilon=1e5) == 1
        # every row its own "person": bounding by it would be void
        ddf["pid"] = ddf["x"].cumsum().astype("int64")
        with pytest.raises(MissingBudgetError, match="privacy unit and was changed in place"):
            ddf.dp.count(epsilon=1e5)
        assert len(budget.entries) == 1
        ddf.dp.inherit(ddf)  # the analyst's assertion
        ddf.dp.count(epsilon=1e5)
    assert len(budget.entries) == 2


#: In-place changes to a bound pandas frame after which it spends nothing until inherit().
CHANGED_IN_PLACE: dict[str, Callable[[pd.DataFrame], None]] = {
    "unit replaced": lambda f: f.__setitem__("pid", np.arange(len(f))),  # each row a "person"
    "row added": lambda f: f.loc.__setitem__(10**9, [7, 1.0]),  # df.loc[new] = a repeat
}


@pytest.mark.parametrize("change", list(CHANGED_IN_PLACE))
def test_a_collection_inherits_only_from_a_frame_that_may_spend(change: str) -> None:
    """As ``other.dp.inherit(df)`` on pandas: a frame changed in place lends no budget."""
    frame = pd.DataFrame({"pid": [7] * 8, "x": [1.0] * 8}).set_axis(
        pd.RangeIndex(next(_OFFSET), next(_OFFSET))[:8]
    )
    budget = frame.dp.set_budget(epsilon=1, privacy_unit="pid", max_rows=1)
    CHANGED_IN_PLACE[change](frame)
    with pytest.raises(MissingBudgetError, match=r"changed in place|was replaced"):
        frame.copy().dp.inherit(frame)  # pandas
    ddf = dd.from_pandas(frame, npartitions=2)
    with pytest.raises(MissingBudgetError, match=r"changed in place|was replaced"):
        ddf.dp.inherit(frame)
    with pytest.raises(MissingBudgetError):
        ddf.dp.count(epsilon=0.5)
    assert budget.spent == 0


def test_set_budget_is_one_path_for_both_engines() -> None:
    """One set_budget, over the engine's hooks (binding), so the engines cannot drift apart."""
    assert pdd.DaskDPAccessor.set_budget is pandas_dp.DPAccessor.set_budget
    assert pdd.DaskDPAccessor.reserve is pandas_dp.DPAccessor.reserve


def test_without_dask_the_import_error_gives_the_install_command() -> None:
    code = "import sys; sys.modules['dask'] = None; import pandas_dp.dask"
    root = Path(__file__).resolve().parents[1]
    child = subprocess.run(
        [sys.executable, "-c", code], cwd=root, capture_output=True, text=True, check=False
    )
    assert child.returncode == 1
    last = child.stderr.rstrip().splitlines()[-1]
    assert last.startswith("ImportError: pandas_dp.dask needs Dask: in your clone of pandas_dp, ")
    assert last.endswith('run pip install ".[dask]"')


@pytest.mark.parametrize("scheduler", ["sync", "threads"])
def test_reserve_holds_a_share_for_the_collection_releases(
    frame: pd.DataFrame, scheduler: str
) -> None:
    """ddf.dp.reserve is df.dp.reserve: the releases inside draw on the held share first."""
    ddf = fresh(frame, 3)
    budget = ddf.dp.set_budget(epsilon=1, seed=5)
    with dask.config.set(scheduler=scheduler), ddf.dp.reserve(epsilon=0.5) as hold:
        ddf.dp.count(epsilon=0.125)
        ddf.dp.sum("age", clip=(0, 100), epsilon=0.125)
        assert (budget.spent, budget.held, budget.remaining) == (0.25, 0.25, 0.5)
    assert hold.returned == 0.25
    assert (budget.spent, budget.held, budget.remaining) == (0.25, 0, 0.75)


#: Releases with ``rho=`` under a zCDP budget (discrete Gaussian), and a pure one charged ε²/2.
RHO_RECIPES: dict[str, Callable[[Any], Any]] = {
    "count": lambda d: d.dp.count(rho=0.01),
    "count_ci": lambda d: d.dp.count("bonus", rho=0.01, ci=0.9),
    "sum": lambda d: d.dp.sum("salary", clip=CLIP, rho=0.02),
    "mean_ci": lambda d: d.dp.mean("salary", clip=CLIP, rho=0.02, ci=0.95),
    "grouped_count": lambda d: d.dp.groupby("dept", keys=DEPTS).count(rho=0.01),
    "grouped_sum_ci": lambda d: d.dp.groupby("dept", keys=DEPTS).sum(
        "salary", clip=CLIP, rho=0.02, ci=0.9
    ),
    "grouped_mean_mapping": lambda d: d.dp.groupby("cat", keys=["a", "b", "c"]).mean(
        clip={"salary": CLIP, "bonus": (0, 5e3)}, rho=0.02
    ),
    "pure_median": lambda d: d.dp.median("age", candidates=GRID, epsilon=0.1),
    # The releases that took rho= later: Gaussian forms, and selections at ε = sqrt(2ρ).
    "nunique": lambda d: d.dp.nunique("dept", rho=0.01),
    "grouped_nunique": lambda d: d.dp.groupby("dept", keys=DEPTS).nunique("age", rho=0.01),
    "var_ci": lambda d: d.dp.var("salary", clip=CLIP, rho=0.02, ci=0.9),
    "grouped_std": lambda d: d.dp.groupby("dept", keys=DEPTS).std("salary", clip=CLIP, rho=0.02),
    "describe": lambda d: d.dp.describe(
        ["age"], clip={"age": (0, 100)}, candidates={"age": GRID}, rho=0.03
    ),
    "argmax": lambda d: d.dp.argmax_exp("dept", candidates=DEPTS, rho=0.01),
    "grouped_quantile": lambda d: d.dp.groupby("dept", keys=DEPTS).quantile(
        "age", 0.25, candidates=GRID, rho=0.01
    ),
    "bounds": lambda d: d.dp.bounds("salary", rho=0.01),
    "clipped_share": lambda d: d.dp.clipped_share("salary", clip=CLIP, rho=0.01),
    "mean_auto": lambda d: d.dp.mean("salary", clip="auto", rho=0.02),
}


@pytest.mark.parametrize("npartitions", [1, 4])
def test_rho_releases_are_the_pandas_ones_bit_for_bit(
    frame: pd.DataFrame, npartitions: int
) -> None:
    df = frame.copy()
    df.dp.set_budget(rho=10, seed=8)
    expected = {name: recipe(df) for name, recipe in RHO_RECIPES.items()}
    ddf = fresh(frame, npartitions)
    ddf.dp.set_budget(rho=10, seed=8)
    got = {name: recipe(ddf) for name, recipe in RHO_RECIPES.items()}
    for name, answer in expected.items():
        assert same(got[name], answer), name
    assert ddf.dp.budget.spent == df.dp.budget.spent == Fraction(53, 200)  # 0.26 + 0.1²/2


@pytest.mark.parametrize("grouped", [False, True])
def test_max_rows_auto_gives_the_pandas_answer(orders: pd.DataFrame, grouped: bool) -> None:
    """max_rows="auto": the cap of a count is the same on both engines, then the release.

    (The rows a person keeps are drawn per engine: the counts themselves differ.)
    """
    answers = []
    for data in (orders.copy(), fresh(orders, 3)):
        data.dp.set_budget(epsilon=2, privacy_unit="customer", seed=11)
        surface = data.dp.groupby("region", keys=["N", "S", "E", "W"]) if grouped else data.dp
        extra = {"max_groups": 1} if grouped else {}
        answers.append(surface.count(epsilon=1, max_rows="auto", ci=0.9, **extra))
        entries = data.dp.budget.entries
        assert [e.epsilon for e in entries] == [Fraction(1, 4), Fraction(3, 4)]
        assert entries[1].max_rows == int(np.unique(answers[-1]["max_rows"])[0])
    assert same(answers[0]["max_rows"], answers[1]["max_rows"])


@pytest.mark.parametrize("grouped", [False, True])
def test_cut_with_a_privacy_unit_gives_the_pandas_truncated_share(
    orders: pd.DataFrame, grouped: bool
) -> None:
    """The share of persons max_rows cuts comes from the rows per person: the same on Dask."""
    shares: list[np.ndarray] = []
    keys: list[float] = []
    for data in (orders.copy(), fresh(orders, 3)):
        data.dp.set_budget(epsilon=4, privacy_unit="customer", seed=11)
        surface = data.dp.groupby("region", keys=["N", "S", "E", "W"]) if grouped else data.dp
        extra = {"max_groups": 2} if grouped else {}
        with pytest.warns(PoorAnswerWarning, match="truncated_share"):
            answer = surface.sum("amount", clip=(0, 600), epsilon=4, max_rows=8, cut=True, **extra)
        shares.append(np.unique(answer["truncated_share"]))
        if grouped:  # and the share of persons over max_groups keys, from the keys per person
            keys.append(float(answer["truncated_keys_share"].iloc[0]))
        last = "truncated_keys_share" if grouped else "truncated_share"
        assert data.dp.budget.entries[-1].operation == last
    truth = (orders.groupby("customer").size() > 8).mean()
    assert all(abs(float(s[0]) - truth) < 0.05 for s in shares)
    public = orders[orders["region"] != "X"]  # X is not a public key: not among their keys
    over = (public.groupby("customer")["region"].nunique() > 2).mean()
    assert all(abs(k - over) < 0.05 for k in keys)


@pytest.mark.parametrize(
    "other", ["Int32", "int32[pyarrow]", "int16", "category"], ids=lambda d: str(d)
)
def test_a_person_is_one_bucket_whatever_dtype_a_partition_stores_their_id_as(other: str) -> None:
    # person -5 has 3 rows in a partition typed int64 and 3 in one typed otherwise: hashed in
    # two forms, they were two persons of one bucket each, and max_rows=1 kept 2 rows
    first = pd.DataFrame({"u": np.array([-5, -5, -5], dtype="int64"), "x": 1.0})
    ids = pd.Series([-5, -5, -5], dtype="int16" if other == "category" else other)
    second = pd.DataFrame({"u": ids.astype("category") if other == "category" else ids, "x": 1.0})
    parts = [dask.delayed(lambda f=f: f)() for f in (first, second)]
    ddf = dd.from_delayed(parts, meta=first.iloc[:0], verify_meta=False)
    ddf.dp.set_budget(epsilon=1e9, privacy_unit="u", max_rows=1, seed=1)
    assert ddf.dp.count(epsilon=1e8) == 1
