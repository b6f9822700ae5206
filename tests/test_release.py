"""The release pipeline, for every kind of :data:`pandas_dp.pipeline.run.KINDS`.

The registry: every concrete kind, so a new kind fails here until it has examples.

- The statistics of row slices of a frame, joined by the kind's ``combine``,
  are exactly the whole frame's, and the same seed then gives the same release
  as the pipeline does on the whole frame.  This is what lets a partitioned
  backend (Dask) combine per-partition statistics before the noise.
- The parts of every release's plan realise, added up, the ε its ledger entry
  charges (no more, and not needlessly less).
- A release that fails after drawing its noise keeps its charge.
"""

from __future__ import annotations

import itertools
import sys
from collections.abc import Callable
from fractions import Fraction
from typing import Any

import numpy as np
import pandas as pd
import pytest

import pandas_dp
import pandas_dp.kinds
from pandas_dp.accounting.ledger import LedgerEntry
from pandas_dp.core import noise
from pandas_dp.core.noise import SeededSource
from pandas_dp.kinds.argmax import Argmax, SelectPlan
from pandas_dp.kinds.base import DEPENDS_ON_N, Kind, Neighbours
from pandas_dp.kinds.clip_bounds import ClipBounds, ClippedShare, SearchPlan, SharePlan
from pandas_dp.kinds.count import Count, CountPlan, Histogram
from pandas_dp.kinds.describe import Describe
from pandas_dp.kinds.extremes import Extreme
from pandas_dp.kinds.nunique import Nunique
from pandas_dp.kinds.quantile import JointPlan, Quantile, Quantiles
from pandas_dp.kinds.sums import GridPlan, Mean, MeanPlan, Sum
from pandas_dp.kinds.truncation import CapPlan, RowsCap
from pandas_dp.kinds.variance import Corr, Cov, Var, VarPlan
from pandas_dp.mechanisms.keys import Grouping
from pandas_dp.pipeline import run as release

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
    Quantiles: [
        Quantiles(EPS, "age", (Fraction(1, 4), Fraction(1, 2), Fraction(9, 10)), GRID),
    ],
    Var: [
        Var.of(EPS, "salary", CLIP, std=False),
        Var.of(EPS, "age", (18.0, 70.0), std=True),
    ],
    Histogram: [Histogram(EPS, "age")],
    Cov: [Cov.of(EPS, "age", "salary", {"age": (18.0, 70.0), "salary": CLIP})],
    Corr: [Corr.of(EPS, "salary", "bonus", {"salary": CLIP, "bonus": (0.0, 8e3)}, ci=0.9)],
    Nunique: [Nunique(EPS, "age"), Nunique(EPS, "dept")],
    ClipBounds: [
        ClipBounds(EPS, "salary"),
        ClipBounds(EPS, "age", pooled=True),
        ClipBounds(EPS, "bonus", count=2_400.0),
    ],
    Extreme: [
        Extreme(EPS, "salary", "max"),
        Extreme(EPS, "age", "min", start=70.0),
    ],
    ClippedShare: [ClippedShare(EPS, "salary", CLIP)],
    RowsCap: [RowsCap(EPS, "age", ("epsilon", Fraction(1)))],
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
    if isinstance(widths, tuple):  # a number per column (a quantile's: in ranks)
        figures = "; ".join(repr(w).removesuffix(".0") for w in widths)
        unit = kind_type.interval_unit
        assert planned.entry.half_width_95 == (f"±{figures} {unit}" if unit else figures)
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
    """The kinds room's map names no kind by hand: it says which of its modules hold kinds."""
    rows = {}
    for line in (pandas_dp.kinds.__doc__ or "").splitlines():
        if line.startswith("``"):
            module, _, text = line.partition("  ")
            rows[module.strip("`")] = text
    for kind in release.KINDS.values():
        room, _, leaf = kind.__module__.rpartition(".")
        assert room == "pandas_dp.kinds", kind.__module__
        assert "kind" in rows[leaf], kind.__module__


# ------------------------------------------------------------ ε: charged = realised
#
# Every kind through its public call, ungrouped and grouped, one column and
# several: the realised ε of the parts of its plan (as the plan defines it, added
# exactly) is the ε the ledger charges, up to the rounding that only lowers it
# (integer noise scales rounded up, selection rates rounded down, both at about
# 30 significant bits).  A split that charges ε and spends 1.5ε, or k·ε over k
# columns, fails here; so does one that wastes half of ε.

SPLIT_EPS = 0.3
BANDS = ["young", "old"]
AGE_GRID = np.arange(18.0, 71.0)
SALARY_GRID = np.linspace(0, 3e5, 31)
TWO_CLIPS = {"salary": CLIP, "bonus": (0.0, 5e3)}

Call = Callable[[pd.DataFrame], object]


def _grouped(df: pd.DataFrame) -> Any:
    return df.dp.groupby("dept", keys=DEPTS)


#: One public call per kind and shape; the table must reach every kind of release.KINDS.
CALLS: dict[str, Call] = {
    "count": lambda df: df.dp.count(epsilon=SPLIT_EPS),
    "count-column": lambda df: df.dp.count("bonus", epsilon=SPLIT_EPS),
    "sum": lambda df: df.dp.sum("salary", clip=CLIP, epsilon=SPLIT_EPS),
    "sum-2-columns": lambda df: df.dp.sum(clip=TWO_CLIPS, epsilon=SPLIT_EPS),
    "mean": lambda df: df.dp.mean("salary", clip=CLIP, epsilon=SPLIT_EPS),
    "mean-2-columns-ci": lambda df: df.dp.mean(clip=TWO_CLIPS, epsilon=SPLIT_EPS, ci=0.9),
    "var": lambda df: df.dp.var("salary", clip=CLIP, epsilon=SPLIT_EPS),
    "std": lambda df: df.dp.std("age", clip=(18, 70), epsilon=SPLIT_EPS),
    "histogram": lambda df: df.dp.histogram("age", bins=[18, 30, 45, 70], epsilon=SPLIT_EPS),
    "crosstab": lambda df: df.dp.crosstab("dept", "band", keys=(DEPTS, BANDS), epsilon=SPLIT_EPS),
    "argmax": lambda df: df.dp.argmax_exp("dept", candidates=DEPTS, epsilon=SPLIT_EPS),
    "argmax-top2-of-sums": lambda df: df.dp.argmax_exp(
        "dept", candidates=DEPTS, k=2, value="salary", clip=(-1e4, 1e5), epsilon=SPLIT_EPS
    ),
    "quantile": lambda df: df.dp.quantile("age", 0.9, candidates=AGE_GRID, epsilon=SPLIT_EPS),
    "quantiles": lambda df: df.dp.quantile(
        "age", [0.1, 0.5, 0.9], candidates=AGE_GRID, epsilon=SPLIT_EPS
    ),
    "median": lambda df: df.dp.median("salary", candidates=SALARY_GRID, epsilon=SPLIT_EPS),
    "describe": lambda df: df.dp.describe(
        "age", clip={"age": (18, 70)}, candidates={"age": AGE_GRID}, epsilon=SPLIT_EPS
    ),
    "describe-2-columns": lambda df: df.dp.describe(
        ["age", "salary"],
        clip={"age": (18, 70), "salary": CLIP},
        candidates={"age": AGE_GRID, "salary": SALARY_GRID},
        epsilon=SPLIT_EPS,
    ),
    "nunique": lambda df: df.dp.nunique("age", epsilon=SPLIT_EPS),
    "cov": lambda df: df.dp.cov(
        "age", "salary", clip={"age": (18, 70), "salary": CLIP}, epsilon=SPLIT_EPS
    ),
    "groupby.corr-ci": lambda df: _grouped(df).corr(
        "age", "salary", clip={"age": (18, 70), "salary": CLIP}, epsilon=SPLIT_EPS, ci=0.9
    ),
    "bounds": lambda df: df.dp.bounds("salary", epsilon=SPLIT_EPS),
    "max": lambda df: df.dp.max("salary", epsilon=SPLIT_EPS),
    "groupby.min": lambda df: _grouped(df).min("age", epsilon=SPLIT_EPS),
    "groupby.bounds": lambda df: _grouped(df).bounds("age", epsilon=SPLIT_EPS),
    "clipped_share": lambda df: df.dp.clipped_share("salary", clip=CLIP, epsilon=SPLIT_EPS),
    "groupby.clipped_share": lambda df: _grouped(df).clipped_share(
        "age", clip=(18, 70), epsilon=SPLIT_EPS
    ),
    "groupby.count": lambda df: _grouped(df).count(epsilon=SPLIT_EPS),
    "groupby.nunique": lambda df: _grouped(df).nunique("band", epsilon=SPLIT_EPS),
    "groupby.sum-2-columns": lambda df: _grouped(df).sum(clip=TWO_CLIPS, epsilon=SPLIT_EPS),
    "groupby.mean": lambda df: _grouped(df).mean("salary", clip=CLIP, epsilon=SPLIT_EPS),
    "groupby.mean-2-columns": lambda df: _grouped(df).mean(clip=TWO_CLIPS, epsilon=SPLIT_EPS),
    "groupby.var-ci": lambda df: _grouped(df).var("age", clip=(18, 70), epsilon=SPLIT_EPS, ci=0.9),
    "groupby.std": lambda df: _grouped(df).std("salary", clip=CLIP, epsilon=SPLIT_EPS),
    "groupby.argmax": lambda df: _grouped(df).argmax_exp(
        "band", candidates=BANDS, epsilon=SPLIT_EPS
    ),
    "groupby.argmax-top2-of-sums": lambda df: _grouped(df).argmax_exp(
        "age", candidates=[20.0, 30.0, 40.0], k=2, value="salary", clip=CLIP, epsilon=SPLIT_EPS
    ),
    "groupby.quantile": lambda df: _grouped(df).quantile(
        "age", 0.25, candidates=AGE_GRID, epsilon=SPLIT_EPS
    ),
    "groupby.median": lambda df: _grouped(df).median("age", candidates=AGE_GRID, epsilon=SPLIT_EPS),
    "groupby.describe-2-columns": lambda df: _grouped(df).describe(
        ["age", "salary"],
        clip={"age": (18, 70), "salary": CLIP},
        candidates={"age": AGE_GRID, "salary": SALARY_GRID},
        epsilon=SPLIT_EPS,
    ),
}


def _charged(name: str, adjacency: str) -> Fraction:
    """The ε a call of CALLS charges: all of it, but nothing for the public row count."""
    return Fraction(0) if (name, adjacency) == ("count", "substitute") else Fraction("0.3")


def realised_epsilon(plan: object) -> Fraction:
    """The ε a plan's noise realises, from its own figures, added over its parts.

    A Laplace part of L1 sensitivity Δ and noise scale T (grid units, or exact
    for counts) realises Δ/T; a selection ``rounds · (1 if monotone else 2) · Δ · c``
    with c its rate (McKenna & Sheldon).  A tuple of plans is a composition.
    """
    if isinstance(plan, tuple):
        return sum((realised_epsilon(part) for part in plan), Fraction(0))
    if isinstance(plan, CountPlan):
        return Fraction(plan.sensitivity) / plan.scale if plan.sensitivity else Fraction(0)
    if isinstance(plan, GridPlan):
        return Fraction(plan.delta, plan.scale) if plan.delta else Fraction(0)
    if isinstance(plan, MeanPlan):
        return realised_epsilon(plan.grid)
    if isinstance(plan, VarPlan):
        return realised_epsilon(plan.grid) + Fraction(plan.delta3, plan.scale3)
    if isinstance(plan, SharePlan):
        return plan.sensitivity / plan.scale
    if isinstance(plan, SearchPlan):  # AboveThreshold: ε₁ + ε₂ (Lyu et al.)
        c = 1 if plan.monotone else 2
        return plan.sensitivity / plan.rho_scale + c * plan.sensitivity / plan.nu_scale
    if isinstance(plan, JointPlan):  # the exponential mechanism: 2·c·Δ
        return 2 * plan.rate * plan.sensitivity
    if isinstance(plan, CapPlan):
        return realised_epsilon(plan.select)
    if isinstance(plan, SelectPlan):
        rate = Fraction(plan.rate.num, 2**plan.rate.shift)
        return plan.rounds * (1 if plan.monotone else 2) * plan.sensitivity * rate
    raise AssertionError(f"no rule for the realised ε of a {type(plan).__name__}: add one here")


@pytest.fixture
def split_frame() -> pd.DataFrame:
    rng = np.random.Generator(np.random.PCG64(8))
    n = 400
    return pd.DataFrame(
        {
            "dept": rng.choice(DEPTS[:3], size=n),
            "band": rng.choice(BANDS, size=n),
            "age": rng.integers(18, 70, size=n).astype(float),
            "salary": np.round(rng.lognormal(np.log(60_000), 0.6, size=n), 2),
            "bonus": np.where(rng.uniform(size=n) < 0.2, np.nan, rng.uniform(0, 8000, size=n)),
        }
    )


def _planned(monkeypatch: pytest.MonkeyPatch) -> list[tuple[Kind[Any, Any], release.Planned]]:
    """Every (kind, planned release) the pipeline plans from now on, in order."""
    seen: list[tuple[Kind[Any, Any], release.Planned]] = []
    plan_release = release.plan_release

    def recording(kind: Kind[Any, Any], *args: Any, **kwargs: Any) -> release.Planned:
        planned = plan_release(kind, *args, **kwargs)
        seen.append((kind, planned))
        return planned

    monkeypatch.setattr(release, "plan_release", recording)
    return seen


@pytest.mark.parametrize("adjacency", ["add_remove", "substitute"])
@pytest.mark.parametrize("name", CALLS)
def test_the_parts_realise_the_epsilon_charged(
    split_frame: pd.DataFrame, name: str, adjacency: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    split_frame.dp.set_budget(epsilon=1, adjacency=adjacency, seed=3)
    planned = _planned(monkeypatch)
    CALLS[name](split_frame)
    [(_, release_plan)] = planned
    charged = _charged(name, adjacency)
    assert split_frame.dp.budget.spent == release_plan.entry.epsilon == charged
    realised = realised_epsilon(release_plan.plan)
    assert charged * (1 - Fraction(1, 2**20)) <= realised <= charged


def test_the_split_table_reaches_every_kind(
    split_frame: pd.DataFrame, monkeypatch: pytest.MonkeyPatch
) -> None:
    split_frame.dp.set_budget(epsilon=100, seed=3)
    planned = _planned(monkeypatch)
    for call in CALLS.values():
        call(split_frame)
    people = pd.DataFrame({"pid": np.arange(len(split_frame)) % 50})
    people.dp.set_budget(epsilon=100, privacy_unit="pid", seed=3)
    people.dp.count(epsilon=SPLIT_EPS, max_rows="auto")  # the cap of a total: RowsCap
    assert {type(kind) for kind, _ in planned} >= set(release.KINDS.values())


# ------------------------------------------------------- a failure after the noise
#
# The reservation is committed before any noise is drawn: a release that fails
# after drawing its noise may have shown something (to a debugger, a log, a
# timing) and keeps its charge.  Each sampler is replaced, in every module that
# imported it, by one that draws and then raises.

SAMPLERS = ("discrete_laplace", "bernoulli_exp", "uniform_below")


class NoiseFault(Exception):
    """Raised by a sampler after it drew."""


def _break_samplers(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Make every sampler draw, record its name, then raise NoiseFault."""
    drawn: list[str] = []

    def failing(name: str, sampler: Callable[..., Any]) -> Callable[..., Any]:
        def draw_then_fail(*args: Any, **kwargs: Any) -> Any:
            sampler(*args, **kwargs)
            drawn.append(name)
            raise NoiseFault(name)

        return draw_then_fail

    for name in SAMPLERS:
        original = getattr(noise, name)
        replacement = failing(name, original)
        for module in list(sys.modules.values()):
            if module.__name__.startswith("pandas_dp") and getattr(module, name, None) is original:
                monkeypatch.setattr(module, name, replacement)
    return drawn


@pytest.mark.parametrize("adjacency", ["add_remove", "substitute"])
@pytest.mark.parametrize("name", CALLS)
def test_a_failure_after_the_noise_keeps_the_charge(
    split_frame: pd.DataFrame, name: str, adjacency: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    budget = split_frame.dp.set_budget(epsilon=1, adjacency=adjacency, seed=3)
    drawn = _break_samplers(monkeypatch)
    with pytest.raises(NoiseFault):
        CALLS[name](split_frame)
    assert drawn  # the noise was drawn ...
    assert budget.spent == _charged(name, adjacency)  # ... and is paid for
    assert len(budget.entries) == 1


# ------------------------------------------------------- grouped releases without public keys


def _selection_budget(**budget: Any) -> Any:
    df = pd.DataFrame({"k": ["a"], "u": [1]})
    df.dp.set_budget(**{"epsilon": 10.0, "delta": 1e-3, "seed": 0, **budget})
    return df.dp.budget


SELECTION = release.KeySelection(("k",), pd.Index([]), Fraction(1, 10**5))


@pytest.mark.parametrize(
    ("kind", "unit", "max_rows", "max_groups", "method", "threshold", "one_pass"),
    [
        (Count(Fraction(1)), None, None, None, "laplace", 13, True),
        (Count(Fraction(1)), "u", 1, 3, "laplace", 38, True),
        # one key per person, pure ε, not the selection's own counts: the truncated geometric
        (Count(Fraction(1)), "u", 2, 1, "truncated_geometric", 0, False),
        (Count(Fraction(1), ci=0.9), None, None, None, "truncated_geometric", 0, False),
        (Mean(Fraction(1), "x", (0.0, 1.0)), None, None, None, "truncated_geometric", 0, False),
        (Mean(Fraction(1), "x", (0.0, 1.0)), "u", 5, 3, "laplace", 73, False),
        (Count(None, rho=Fraction(1, 2)), None, None, None, "gaussian", 6, True),
        (
            Sum(None, "x", (0.0, 1.0), rho=Fraction(1, 2)),
            "u",
            1,
            3,
            "weighted_gaussian",
            461822,
            False,
        ),
    ],
    ids=[
        "count",
        "count-unit-g3",
        "count-k2",
        "count-ci",
        "mean",
        "mean-unit",
        "count-rho",
        "sum-rho-g3",
    ],
)
def test_the_selection_plan_is_exact(
    kind: Kind[Any, Any],
    unit: str | None,
    max_rows: int | None,
    max_groups: int | None,
    method: str,
    threshold: int,
    one_pass: bool,
) -> None:
    """A row count whose persons count once per key is the selection's (all of ε, one pass);
    anything else gives the selection half of ε (or ρ) and the statistic the rest; δ: all.
    Under ε with one key per person that half goes to the optimal truncated geometric."""
    pure = method in ("laplace", "truncated_geometric")
    budget = _selection_budget() if pure else _selection_budget(epsilon=None, rho=10.0)
    planned = release.plan_selection(kind, SELECTION, budget, unit, max_rows, max_groups)
    assert (planned.plan.method, planned.plan.threshold, planned.one_pass) == (
        method,
        threshold,
        one_pass,
    )
    assert planned.plan.delta == SELECTION.delta
    assert planned.plan.max_groups == (1 if unit is None else max_groups)
    loss = "epsilon" if pure else "rho"
    whole = getattr(kind, loss)
    share = whole if one_pass else whole / 2
    assert getattr(planned.plan, loss) == share
    assert getattr(planned.kind, loss) == whole - (0 if one_pass else share)
    statistic = {"epsilon": None, "rho": Fraction(1)} if loss == "rho" else {"epsilon": Fraction(1)}
    entry = planned.entry(LedgerEntry("groupby.count", **statistic))  # type: ignore[arg-type]
    assert (getattr(entry, loss), entry.delta, entry.keys) == (whole, SELECTION.delta, None)


@pytest.mark.parametrize(
    ("budget", "error", "match"),
    [
        ({"delta": None}, TypeError, r"no delta.*delta=.*keys="),
        ({"adjacency": "substitute"}, ValueError, "add_remove"),
    ],
    ids=["no-delta", "substitute"],
)
def test_the_selection_is_refused_without_delta_or_under_substitute(
    budget: dict[str, Any], error: type[Exception], match: str
) -> None:
    with pytest.raises(error, match=match):
        release.plan_selection(
            Count(Fraction(1)), SELECTION, _selection_budget(**budget), None, None, None
        )


def test_recode_keeps_the_chosen_keys_statistics_and_joins_partitions() -> None:
    codes = np.array([0, 0, 1, 2, 2, 2, -1])
    stats = Count(Fraction(1)).tally(None, pandas_dp.kinds.base.Rows(7), codes, 3)
    kept = Count(Fraction(1)).recode(stats, np.array([1, -1, 0]), 2)
    assert kept[0].tolist() == [3, 2]
    pairs = Nunique(Fraction(1), "x").recode(
        (np.array([0, 0, 2]), np.array([5, 6, 5])), np.array([1, -1, 0]), 2
    )
    assert [p.tolist() for p in pairs] == [[0, 1, 1], [5, 5, 6]]
