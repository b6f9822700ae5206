"""The release pipeline: every kind's statistics add up across row slices.

For every kind of :data:`pandas_dp.release.KINDS` (the registry: every
concrete kind, so a new kind fails here until it has examples), the
statistics of row slices of a frame, joined by the kind's ``combine``, are
exactly the whole frame's, and the same seed then gives the
same release as the pipeline does on the whole frame.  This is what lets a
partitioned backend (Dask) sum per-partition statistics before the noise.
"""

from __future__ import annotations

import itertools
from fractions import Fraction
from typing import Any

import numpy as np
import pandas as pd
import pytest

import pandas_dp
from pandas_dp import release
from pandas_dp.aggregate import Count, Histogram, Mean, Nunique, Sum
from pandas_dp.describe import Describe
from pandas_dp.keys import Grouping
from pandas_dp.kind import DEPENDS_ON_N, Kind, Neighbours
from pandas_dp.noise import SeededSource
from pandas_dp.select import Argmax, Quantile
from pandas_dp.variance import Var

EPS = Fraction(1)
DEPTS = ["Eng", "Ops", "Sales", "Legal"]  # Legal has no rows
GRID = np.linspace(0, 100, 21)
CLIP = (0.0, 150_000.0)

#: Examples of every kind: (kind, grouped by "dept" or not).
EXAMPLES: dict[type[Kind[Any, Any]], list[Kind[Any, Any]]] = {
    Count: [Count(EPS), Count(EPS, "bonus"), Count(EPS, None, ci=0.9)],
    Sum: [
        Sum(EPS, "salary", CLIP),
        Sum(EPS, None, {"salary": CLIP, "bonus": (0.0, 5e3)}),
        Sum(EPS, None, {"salary": CLIP, "bonus": (0.0, 5e3)}, ci=0.95),
    ],
    Mean: [
        Mean(EPS, "salary", CLIP),
        Mean(EPS, None, {"salary": CLIP, "age": (18.0, 70.0)}),
        Mean(EPS, "salary", CLIP, ci=0.8),
    ],
    Argmax: [
        Argmax.of(EPS, "age", [20, 30, 40, 50, 60], k=1, value=None, clip=None),
        Argmax.of(EPS, "age", [20, 30, 40, 50, 60], k=2, value="salary", clip=(-1e4, 1e5)),
    ],
    Quantile: [
        Quantile.of(EPS, "age", 0.5, GRID, "median"),
        Quantile.of(EPS, "salary", 0.9, np.linspace(0, 3e5, 31), "quantile"),
    ],
    Var: [
        Var.of(EPS, "salary", CLIP, std=False),
        Var.of(EPS, "age", (18.0, 70.0), std=True),
    ],
    Histogram: [Histogram(EPS, "age")],
    Nunique: [Nunique(EPS, "age"), Nunique(EPS, "dept")],
    Describe: [
        Describe.of(
            EPS,
            ["age", "salary"],
            {"age": (18.0, 70.0), "salary": CLIP},
            {"age": GRID, "salary": np.linspace(0, 3e5, 31)},
        )
    ],
}

CASES = [
    pytest.param(
        kind, example, grouped, id=f"{kind.__name__}-{i}-{'grouped' if grouped else 'one'}"
    )
    for kind in release.KINDS.values()
    for i, example in enumerate(EXAMPLES.get(kind, [None]))
    for grouped in (False, True)
]


@pytest.fixture(scope="module")
def frame() -> pd.DataFrame:
    """Missing values, keys outside the public ones, ages on and off the grid."""
    rng = np.random.Generator(np.random.PCG64(2024))
    n = 3_001
    df = pd.DataFrame(
        {
            "dept": rng.choice(["Eng", "Ops", "Sales", "Other", None], size=n),
            "age": rng.integers(18, 70, size=n).astype(float),
            "salary": np.round(rng.lognormal(np.log(60_000), 0.6, size=n), 2),
            "bonus": np.where(rng.uniform(size=n) < 0.2, np.nan, rng.uniform(0, 8000, size=n)),
        }
    )
    df.loc[::7, "age"] = np.nan
    df.loc[::5, "age"] = 40.0  # ties on a grid point and a candidate
    return df


def _parts(n: int) -> list[tuple[int, int]]:
    """Uneven row slices, one of them empty, covering ``0..n``."""
    cuts = [0, 1, n // 3, n // 3, n - 2, n]
    return list(itertools.pairwise(cuts))


@pytest.mark.parametrize(("kind_type", "kind", "grouped"), CASES)
def test_statistics_of_row_slices_add_up_and_give_the_same_release(
    frame: pd.DataFrame, kind_type: type, kind: Kind[Any, Any] | None, grouped: bool
) -> None:
    assert kind is not None, f"add examples of {kind_type.__name__} to EXAMPLES"
    group = Grouping.of(frame, "dept", DEPTS) if grouped else None
    n_keys = 1 if group is None else len(group.keys)
    rows = kind.read(frame, n_keys)
    codes = None if group is None else group.codes(frame)
    plan = kind.plan(Neighbours("add_remove", grouped=grouped))
    whole = kind.tally(plan, rows, codes, n_keys)
    summed = None
    for start, stop in _parts(len(frame)):
        part_codes = None if codes is None else codes[start:stop]
        part = kind.tally(plan, rows.slice(start, stop), part_codes, n_keys)
        summed = part if summed is None else kind.combine(summed, part)
    assert summed is not None
    assert len(summed) == len(whole)
    for a, b in zip(summed, whole, strict=True):
        assert a.dtype == b.dtype == np.int64
        np.testing.assert_array_equal(a, b)
    # The same seed gives the same release from the summed statistics as the pipeline.
    df = frame.copy()
    df.dp.set_budget(epsilon=100, seed=31)
    expected = release.run(release.PandasFrame(df), kind, group)
    answer = kind.finish(plan, summed, SeededSource(31), n_keys)
    got = kind.shape_one(answer) if group is None else kind.shape_many(answer, group.keys)
    if isinstance(expected, pd.Series | pd.DataFrame):
        assert got.equals(expected)
    else:
        assert got == expected


@pytest.mark.parametrize(("kind_type", "kind", "grouped"), CASES)
def test_every_entry_records_the_half_width_its_plan_gives(
    kind_type: type, kind: Kind[Any, Any], grouped: bool
) -> None:
    group = Grouping.of(pd.DataFrame({"dept": DEPTS}), "dept", DEPTS) if grouped else None
    planned = release.plan_release(kind, group, "add_remove", root=False)
    widths = kind.half_width(planned.plan, 0.95)
    if isinstance(widths, tuple):  # a number per column
        assert planned.entry.half_width_95 == "; ".join(repr(w).removesuffix(".0") for w in widths)
        assert all(w > 0 for w in widths)
    else:  # depends on n (planned with an assumed n), or a selection: none
        assert planned.entry.half_width_95 == widths in (DEPENDS_ON_N, "")
    if kind_type.plannable:
        assert isinstance(kind.half_width(planned.plan, 0.95, n=100), tuple)


def test_the_registry_is_every_concrete_kind_by_its_name() -> None:
    assert set(EXAMPLES) == set(release.KINDS.values())
    assert all(name == kind.name for name, kind in release.KINDS.items())


def test_a_new_kind_is_registered_by_existing_and_needs_a_name_of_its_own() -> None:
    class Twice(Count):
        pass  # a concrete kind that kept its parent's name

    Twice.__module__ = Count.__module__
    with pytest.raises(TypeError, match="Twice needs a name of its own"):
        release.registry()
    Twice.name = "twice"
    assert release.registry()["twice"] is Twice


def test_the_package_map_says_which_modules_hold_the_kinds() -> None:
    """The map in ``pandas_dp/__init__.py`` names no kind by hand: it says where kinds live."""
    rows = {}
    for line in (pandas_dp.__doc__ or "").splitlines():
        if line.startswith("``"):
            module, _, text = line.partition("  ")
            rows[module.strip("`")] = text
    for kind in release.KINDS.values():
        assert "kind" in rows[kind.__module__.rpartition(".")[2]], kind.__module__
