"""Seeded releases as canonical text: same seeds, same numbers, before and after a refactoring.

    python bench/seeded_releases.py > before.txt
    # ... restructure the package ...
    python bench/seeded_releases.py > after.txt && diff before.txt after.txt

Prints, for many seeded releases of every kind and option the README documents
(ungrouped, grouped over public keys, keyless; ε and ρ budgets, δ; add_remove
and substitute; with and without a privacy unit; ``ci=``, ``cut=True``,
``clip="auto"``, ``max_rows="auto"``; derivations, ``reserve``, a SQLite
ledger, Dask when it is importable), the result, or the refusal (the
exception's type and message), then the budget's ``print()`` text and its
ledger DataFrame.  Uses the public API only (``import pandas_dp``, ``df.dp``,
``pandas_dp.datasets``, the planning functions, ``open_ledger``, ``python -m
pandas_dp ledger`` and ``import pandas_dp.dask``), never a module inside the
package, so that the same script runs before and after the package moves.

Each case builds its own frame and budget, seeded from a hash of the case's
name: a case that changes or fails does not shift the noise of the others.
Floats are printed exactly (``repr``), with the type of each scalar and the
dtypes of each Series or DataFrame.  What depends on the machine or the clock
(the ledger's temporary folder, times, process ids) is masked, so two runs of
the same code print the same text.  Seeded noise is NOT private: this is a
regression check, never an example of a private analysis.
"""

from __future__ import annotations

import contextlib
import re
import shutil
import subprocess
import sys
import tempfile
import warnings
import zlib
from collections.abc import Callable, Iterator
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

import pandas_dp
from pandas_dp import datasets
from pandas_dp.datasets import DEPARTMENTS, LEVELS, PRODUCTS, REGIONS

try:
    import dask
    import dask.dataframe as dd

    import pandas_dp.dask  # registers ddf.dp
except ImportError:  # the extra is not installed: the Dask section says so
    dask = None

DEPTS = [*DEPARTMENTS, "Legal"]  # "Legal" has no rows: a noisy zero, a mean inside the clip
CLIP = {"salary": (0, 2e5), "bonus": (0, 5e4)}
GRIDS = {"salary": np.linspace(0, 500_000, 1001), "age": range(101)}
DESCRIBE_CLIP = {"salary": (0, 2e5), "age": (0, 100)}
REVENUE_GRID = np.linspace(0, 1_000, 1001)
SALARY_GRID = range(0, 300_001, 1_000)
TIMESTAMP = re.compile(r"\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(\.\d+)?(\+00:00)?")
MASKS: list[tuple[str, str]] = []  # (text, replacement), e.g. the ledger's temporary folder


# --- canonical text ---------------------------------------------------------------------------


def emit(text: str) -> None:
    for line in text.splitlines() or [""]:
        for secret, replacement in MASKS:
            line = line.replace(secret, replacement)
        print(TIMESTAMP.sub("<time>", line).rstrip())


def cell(value: Any) -> str:
    """One value as exact text: floats by repr, containers element by element."""
    if value is None or value is pd.NA or value is pd.NaT:
        return str(value)
    if isinstance(value, bool | np.bool_):
        return str(bool(value))
    if isinstance(value, Fraction):  # budget amounts: their text, and the exact value
        return f"{value} (exactly {value.numerator}/{value.denominator})"
    if isinstance(value, float | np.floating):
        return repr(float(value))
    if isinstance(value, int | np.integer):
        return str(int(value))
    if isinstance(value, pd.Interval):
        left = "[" if value.closed in ("left", "both") else "("
        right = "]" if value.closed in ("right", "both") else ")"
        return f"{left}{cell(value.left)}, {cell(value.right)}{right}"
    if isinstance(value, tuple):
        return "(" + ", ".join(cell(v) for v in value) + ")"
    if isinstance(value, list):
        return "[" + ", ".join(cell(v) for v in value) + "]"
    return str(value)


def labels(index: pd.Index) -> pd.Index:
    if isinstance(index, pd.MultiIndex):
        arrays = [[cell(v) for v in index.get_level_values(i)] for i in range(index.nlevels)]
        return pd.MultiIndex.from_arrays(arrays, names=index.names)
    return pd.Index([cell(v) for v in index], name=index.name, dtype=object)


def text(value: Any) -> str:
    """A result as canonical text: its type, its values exactly, its dtypes."""
    if isinstance(value, pd.DataFrame):
        rows = [[cell(v) for v in row] for row in value.itertuples(index=False)]
        shown = pd.DataFrame(rows, index=labels(value.index), columns=labels(value.columns))
        dtypes = ", ".join(f"{cell(c)}={t}" for c, t in value.dtypes.items())
        return f"DataFrame {value.shape}\n{shown.to_string()}\ndtypes: {dtypes}"
    if isinstance(value, pd.Series):
        shown = pd.Series([cell(v) for v in value], index=labels(value.index), dtype=object)
        return (
            f"Series name={cell(value.name)} dtype={value.dtype} len={len(value)}\n"
            f"{shown.to_string()}"
        )
    if isinstance(value, list | tuple):
        inner = ", ".join(f"{type(v).__name__} {cell(v)!s}" for v in value)
        return f"{type(value).__name__} [{inner}]"
    if isinstance(value, str):
        return f"str:\n{value}" if "\n" in value else f"str {value!r}"
    return f"{type(value).__name__} {cell(value)}"


def refusal(err: BaseException) -> str:
    notes = "".join(f"\nnote: {note}" for note in getattr(err, "__notes__", ()))
    return f"{type(err).__name__}: {err}{notes}"


def indent(block: str) -> str:
    return "\n".join("    " + line for line in block.splitlines())


def ledger_text(ledger: pd.DataFrame) -> str:
    return text(ledger.drop(columns=["time", "created", "process"], errors="ignore"))


# --- cases ------------------------------------------------------------------------------------


class Case:
    """One case: its seed, the budgets it attached (printed after it), its releases."""

    def __init__(self, seed: int) -> None:
        self.seed = seed
        self.budgets: list[pandas_dp.PrivacyBudget] = []

    def budget(self, frame: Any, **kwargs: Any) -> pandas_dp.PrivacyBudget:
        """``frame.dp.set_budget(seed=..., **kwargs)``, each budget of the case its own seed."""
        budget = frame.dp.set_budget(seed=self.seed + len(self.budgets), **kwargs)
        self.budgets.append(budget)
        return budget

    def show(self, label: str, release: Callable[[], Any]) -> Any:
        """Run one release; print its result, or the refusal."""
        emit(f"  {label}")
        try:
            value = release()
        except Exception as err:
            emit(indent(indent("raised " + refusal(err))))
            return None
        emit(indent(indent(text(value))))
        return value


CASES: list[tuple[str, str, Callable[[Case], None]]] = []


def case(section: str) -> Callable[[Callable[[Case], None]], Callable[[Case], None]]:
    def register(body: Callable[[Case], None]) -> Callable[[Case], None]:
        CASES.append((section, body.__name__, body))
        return body

    return register


def run(section: str, name: str, body: Callable[[Case], None]) -> None:
    seed = zlib.crc32(f"{section}/{name}".encode())
    emit(f"=== {section} / {name} (seed {seed})")
    ctx = Case(seed)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            body(ctx)
        except Exception as err:
            emit(indent("case raised " + refusal(err)))
    for warning in caught:
        emit(indent(f"warning {warning.category.__name__}: {warning.message}"))
    for number, budget in enumerate(ctx.budgets, 1):
        emit(f"  budget {number}: {budget!r}")
        amounts = ("total", "spent", "held", "remaining", "delta_spent")
        emit(indent(indent(", ".join(f"{a} {cell(getattr(budget, a))}" for a in amounts))))
        try:  # the (ε, δ) of what was spent, exactly (a budget holding δ > 1e-5 refuses)
            emit(indent(indent(f"epsilon_at(1e-5) {cell(budget.epsilon_at(1e-5))}")))
        except Exception as err:
            emit(indent(indent("epsilon_at(1e-5) raised " + refusal(err))))
        emit(indent(indent(str(budget))))
        emit(indent(indent("ledger " + ledger_text(budget.ledger))))


Call = Callable[[Any], Any]


def single(frame: Callable[[], pd.DataFrame], call: Call, **budget: Any) -> Callable[[Case], None]:
    """A case body: a fresh frame, a budget of its own, one release."""

    def body(c: Case) -> None:
        data = frame()
        c.budget(data, **budget)
        c.show("release", lambda: call(data))

    return body


def table(
    section: str,
    frame: Callable[[], pd.DataFrame],
    budget: dict[str, Any],
    calls: dict[str, Call | tuple[Call, dict[str, Any]]],
) -> None:
    """One case per call; a pair (call, changes) changes the section's budget for that case."""
    for name, entry in calls.items():
        call, changes = entry if isinstance(entry, tuple) else (entry, {})
        CASES.append((section, name, single(frame, call, **(budget | changes))))


# --- data: the library's generators and small frames from a fixed generator -------------------


def salaries(seed: int = 0) -> pd.DataFrame:
    return datasets.salaries(1_000, seed=seed)


def sales(seed: int = 0) -> pd.DataFrame:
    return datasets.sales(3_000, seed=seed)


def orders(seed: int = 0) -> pd.DataFrame:
    return datasets.orders(600, seed=seed)


def events(n: int = 2_000) -> pd.DataFrame:
    """Int, date and categorical keys, missing keys, missing and infinite values, a flag."""
    rng = np.random.Generator(np.random.PCG64(20_261_206))
    x = rng.normal(50.0, 20.0, size=n)
    x[rng.uniform(size=n) < 0.05] = np.nan
    x[:3] = [np.inf, -np.inf, 1e9]
    tag = np.where(rng.uniform(size=n) < 0.1, None, rng.choice(["p", "q", "r"], size=n))
    return pd.DataFrame(
        {
            "pid": pd.array(rng.integers(1, 401, size=n), dtype="Int64"),
            "code": rng.integers(0, 5, size=n),
            "day": pd.Timestamp("2026-01-01") + pd.to_timedelta(rng.integers(0, 7, size=n), "D"),
            "kind": pd.Categorical(rng.choice(["a", "b", "c"], size=n), categories=list("abcd")),
            "tag": pd.array(tag, dtype="string"),
            "x": x,
            "flag": rng.uniform(size=n) < 0.3,
        }
    )


# --- planning: no data, no noise --------------------------------------------------------------


@case("planning")
def half_width_and_epsilon_for(c: Case) -> None:
    hw, ef, rf = pandas_dp.half_width, pandas_dp.epsilon_for, pandas_dp.rho_for
    c.show("half_width count eps 0.5", lambda: hw("count", epsilon=0.5, level=0.95))
    c.show("half_width count eps 0.5 level 0.9", lambda: hw("count", epsilon=0.5, level=0.9))
    c.show("half_width sum", lambda: hw("sum", epsilon=0.5, clip=(0, 200_000)))
    c.show("half_width sum mapping", lambda: hw("sum", epsilon=0.5, clip=CLIP))
    c.show("half_width mean n", lambda: hw("mean", epsilon=0.5, clip=(0, 200_000), n=1_000))
    c.show("half_width mean without n", lambda: hw("mean", epsilon=0.5, clip=(0, 200_000)))
    c.show("half_width count rho", lambda: hw("count", rho=0.01, level=0.95))
    c.show("half_width sum rho", lambda: hw("sum", rho=0.01, clip=(-5, 10)))
    c.show("half_width mean rho", lambda: hw("mean", rho=0.02, clip=(0, 2e5), n=1_000))
    c.show("half_width count substitute", lambda: hw("count", epsilon=1, adjacency="substitute"))
    c.show(
        "half_width count grouped substitute",
        lambda: hw("count", epsilon=1, adjacency="substitute", grouped=True),
    )
    c.show(
        "half_width grouped unit",
        lambda: hw("count", epsilon=1, grouped=True, max_rows=3, max_groups=2),
    )
    c.show(
        "half_width grouped unit rho",
        lambda: hw("count", rho=0.1, grouped=True, max_rows=3, max_groups=4),
    )
    c.show("half_width var", lambda: hw("var", epsilon=1, clip=(0, 1), n=100))
    c.show("half_width unknown kind", lambda: hw("median", epsilon=1))
    c.show("epsilon_for count", lambda: ef("count", half_width=10, level=0.95))
    c.show("epsilon_for mean", lambda: ef("mean", half_width=1_000, clip=(0, 2e5), n=1_000))
    c.show(
        "epsilon_for sum mapping",
        lambda: ef("sum", half_width={"salary": 1e6, "bonus": 1e5}, clip=CLIP),
    )
    c.show(
        "epsilon_for sum grouped", lambda: ef("sum", half_width=5e5, clip=(0, 2e5), grouped=True)
    )
    c.show("rho_for count", lambda: rf("count", half_width=10, level=0.95))
    c.show("rho_for mean", lambda: rf("mean", half_width=1_000, clip=(0, 2e5), n=1_000))
    c.show("rho_for unit", lambda: rf("count", half_width=20, max_rows=5))
    c.show("epsilon_for negative", lambda: ef("count", half_width=-1))


# --- ungrouped releases under an ε budget (add_remove, one row per person) --------------------


SCALAR: dict[str, Call] = {
    "count_rows": lambda df: df.dp.count(epsilon=0.1),
    "count_column": lambda df: df.dp.count("bonus", epsilon=0.1),
    "count_ci": lambda df: df.dp.count(epsilon=0.5, ci=0.95),
    "count_column_ci": lambda df: df.dp.count("bonus", epsilon=0.5, ci=0.9),
    "sum_one": lambda df: df.dp.sum("salary", clip=(0, 200_000), epsilon=0.5),
    "sum_negative_clip": lambda df: df.dp.sum("age", clip=(-10, 60), epsilon=0.5),
    "sum_mapping": lambda df: df.dp.sum(clip=CLIP, epsilon=0.5),
    "sum_ci": lambda df: df.dp.sum("salary", clip=(0, 2e5), epsilon=0.5, ci=0.95),
    "sum_mapping_ci": lambda df: df.dp.sum(clip=CLIP, epsilon=0.5, ci=0.9),
    "sum_cut": lambda df: df.dp.sum("salary", clip=(0, 1e5), epsilon=0.5, cut=True),
    "sum_auto": lambda df: df.dp.sum("salary", clip="auto", epsilon=1),
    "sum_auto_cut_ci": lambda df: df.dp.sum("salary", clip="auto", epsilon=1, cut=True, ci=0.9),
    "mean_one": lambda df: df.dp.mean("salary", clip=(0, 200_000), epsilon=0.5),
    "mean_mapping": lambda df: df.dp.mean(clip=CLIP, epsilon=0.5),
    "mean_ci": lambda df: df.dp.mean("salary", clip=(0, 2e5), epsilon=0.5, ci=0.95),
    "mean_mapping_ci": lambda df: df.dp.mean(clip=CLIP, epsilon=0.5, ci=0.95),
    "mean_cut_ci": lambda df: df.dp.mean("salary", clip=(0, 1e5), epsilon=0.5, ci=0.95, cut=True),
    "mean_auto": lambda df: df.dp.mean("salary", clip="auto", epsilon=0.5, cut=True),
    "mean_auto_ci": lambda df: df.dp.mean("salary", clip="auto", epsilon=1, ci=0.95),
    "mean_auto_too_few": lambda df: df.dp.mean("salary", clip="auto", epsilon=0.1),
    "var_one": lambda df: df.dp.var("salary", clip=(0, 200_000), epsilon=0.5),
    "var_ci": lambda df: df.dp.var("salary", clip=(0, 2e5), epsilon=0.5, ci=0.95),
    "var_cut": lambda df: df.dp.var("salary", clip=(0, 1e5), epsilon=0.5, cut=True),
    "var_auto": lambda df: df.dp.var("salary", clip="auto", epsilon=1),
    "std_one": lambda df: df.dp.std("salary", clip=(0, 200_000), epsilon=0.5),
    "std_ci": lambda df: df.dp.std("salary", clip=(0, 2e5), epsilon=0.5, ci=0.95),
    "std_cut_ci": lambda df: df.dp.std("age", clip=(20, 50), epsilon=0.5, ci=0.9, cut=True),
    "std_auto_cut": lambda df: df.dp.std("salary", clip="auto", epsilon=1, cut=True),
    "std_mapping": lambda df: df.dp.std("salary", clip=CLIP, epsilon=0.5),
    "describe": lambda df: df.dp.describe(
        ["salary", "age"], clip=DESCRIBE_CLIP, candidates=GRIDS, epsilon=1.0
    ),
    "describe_auto": lambda df: df.dp.describe(
        ["salary"], clip="auto", candidates={"salary": GRIDS["salary"]}, epsilon=2.0
    ),
    "describe_cut": lambda df: df.dp.describe(
        ["salary", "age"], clip=DESCRIBE_CLIP, candidates=GRIDS, epsilon=1.0, cut=True
    ),
    "describe_ci_refused": lambda df: df.dp.describe(
        ["age"], clip={"age": (0, 100)}, candidates={"age": range(101)}, epsilon=1, ci=0.9
    ),
    "nunique": lambda df: df.dp.nunique("level", epsilon=0.1),
    "histogram": lambda df: df.dp.histogram("age", bins=[18, 30, 45, 65, 100], epsilon=0.3),
    "histogram_ci": lambda df: df.dp.histogram("age", bins=[21, 40, 66], epsilon=0.3, ci=0.9),
    "histogram_left": lambda df: df.dp.histogram(
        "age", bins=[21, 30, 40, 50, 66], epsilon=0.3, right=False
    ),
    "histogram_lowest_float": lambda df: df.dp.histogram(
        "salary", bins=[0.0, 5e4, 7.5e4, 1.25e5, 1e6], epsilon=0.3, include_lowest=True
    ),
    "histogram_int_bins_refused": lambda df: df.dp.histogram("age", bins=10, epsilon=0.3),
    "crosstab": lambda df: df.dp.crosstab("dept", "level", keys=(DEPARTMENTS, LEVELS), epsilon=0.5),
    "crosstab_ci": lambda df: df.dp.crosstab(
        "dept", "level", keys=(DEPTS, LEVELS), epsilon=0.5, ci=0.95
    ),
    "bounds": lambda df: df.dp.bounds("salary", epsilon=0.25),
    "bounds_age": lambda df: df.dp.bounds("age", epsilon=1),
    "clipped_share": lambda df: df.dp.clipped_share("salary", clip=(0, 100_000), epsilon=0.2),
    "quantile": lambda df: df.dp.quantile("salary", 0.9, candidates=SALARY_GRID, epsilon=0.2),
    "quantile_no_candidates": lambda df: df.dp.quantile("salary", 0.5, epsilon=0.2),
    "median": lambda df: df.dp.median("age", candidates=range(101), epsilon=0.2),
    "typed_dp": lambda df: pandas_dp.dp(df).mean("salary", clip=(0, 2e5), epsilon=0.5),
    "positional_epsilon": lambda df: df.dp.count(0.1),
    "missing_epsilon": lambda df: df.dp.count(),
    "epsilon_and_rho": lambda df: df.dp.count(epsilon=0.1, rho=0.1),
    "rho_under_epsilon": lambda df: df.dp.count(rho=0.01),
    "over_budget": lambda df: df.dp.count(epsilon=11),
    "unknown_column": lambda df: df.dp.sum("wage", clip=(0, 1), epsilon=0.1),
    "string_column_sum": lambda df: df.dp.sum("dept", clip=(0, 1), epsilon=0.1),
    "bad_clip": lambda df: df.dp.mean("salary", clip=(10, 0), epsilon=0.1),
    "negative_epsilon": lambda df: df.dp.mean("salary", clip=(0, 1), epsilon=-1),
}
table("scalar", salaries, {"epsilon": 10}, SCALAR)


@case("scalar")
def ten_tenths(c: Case) -> None:
    df = salaries()
    c.budget(df, epsilon=1)
    for i in range(10):
        c.show(f"count {i}", lambda: df.dp.count(epsilon=0.1))
    c.show("eleventh refused", lambda: df.dp.count(epsilon=0.1))


@case("scalar")
def events_frame(c: Case) -> None:
    ev = events()
    c.budget(ev, epsilon=10)
    c.show("sum x with inf and nan", lambda: ev.dp.sum("x", clip=(0, 100), epsilon=0.5))
    c.show("mean x", lambda: ev.dp.mean("x", clip=(0, 100), epsilon=0.5, ci=0.9))
    c.show("count x", lambda: ev.dp.count("x", epsilon=0.5))
    c.show("count tag", lambda: ev.dp.count("tag", epsilon=0.5))
    c.show("nunique tag", lambda: ev.dp.nunique("tag", epsilon=0.5))
    c.show("sum flag", lambda: ev.dp.sum("flag", clip=(0, 1), epsilon=0.5))
    c.show("median code", lambda: ev.dp.median("code", candidates=range(5), epsilon=0.5))
    c.show(
        "argmax day",
        lambda: ev.dp.argmax_exp(
            "day", candidates=pd.date_range("2026-01-01", periods=7), epsilon=0.5
        ),
    )
    c.show(
        "argmax kind categorical",
        lambda: ev.dp.argmax_exp("kind", candidates=pd.CategoricalDtype(list("abcd")), epsilon=0.5),
    )


# --- private selection and quantiles (sales) --------------------------------------------------


SELECTION: dict[str, Call] = {
    "argmax": lambda df: df.dp.argmax_exp("product", candidates=PRODUCTS, epsilon=0.5),
    "argmax_k3": lambda df: df.dp.argmax_exp("product", candidates=PRODUCTS, epsilon=0.5, k=3),
    "argmax_k1": lambda df: df.dp.argmax_exp("product", candidates=PRODUCTS, epsilon=0.5, k=1),
    "argmax_value": lambda df: df.dp.argmax_exp(
        "product", candidates=PRODUCTS, value="revenue", clip=(0, 500), epsilon=0.5
    ),
    "argmax_value_k2": lambda df: df.dp.argmax_exp(
        "product", candidates=PRODUCTS, value="revenue", clip=(0, 500), epsilon=0.5, k=2
    ),
    "argmax_value_spanning_zero": lambda df: df.dp.argmax_exp(
        "product", candidates=PRODUCTS, value="revenue", clip=(-100, 500), epsilon=0.5
    ),
    "argmax_index_candidates": lambda df: df.dp.argmax_exp(
        "region", candidates=pd.Index(REGIONS), epsilon=0.5
    ),
    "argmax_int_candidates": lambda df: df.dp.argmax_exp(
        "quantity", candidates=np.arange(1, 6), epsilon=0.5
    ),
    "argmax_k_too_large": lambda df: df.dp.argmax_exp(
        "region", candidates=REGIONS, epsilon=0.5, k=5
    ),
    "argmax_duplicates": lambda df: df.dp.argmax_exp(
        "region", candidates=["North", "North"], epsilon=0.5
    ),
    "quantile_09": lambda df: df.dp.quantile("revenue", 0.9, candidates=REVENUE_GRID, epsilon=0.2),
    "quantile_0": lambda df: df.dp.quantile("revenue", 0.0, candidates=REVENUE_GRID, epsilon=0.2),
    "quantile_geom": lambda df: df.dp.quantile(
        "revenue", 0.99, candidates=np.geomspace(1, 100_000, 200), epsilon=0.1
    ),
    "quantile_q_refused": lambda df: df.dp.quantile(
        "revenue", 1.5, candidates=REVENUE_GRID, epsilon=0.2
    ),
    "quantile_grid_refused": lambda df: df.dp.quantile(
        "revenue", 0.5, candidates=[3, 2, 1], epsilon=0.2
    ),
    "median": lambda df: df.dp.median("revenue", candidates=REVENUE_GRID, epsilon=0.2),
    "grouped_argmax": lambda df: df.dp.groupby("region", keys=REGIONS).argmax_exp(
        "product", candidates=PRODUCTS, epsilon=0.5
    ),
    "grouped_argmax_k2": lambda df: df.dp.groupby("region", keys=REGIONS).argmax_exp(
        "product", candidates=PRODUCTS, epsilon=0.5, k=2
    ),
    "grouped_argmax_value": lambda df: df.dp.groupby("region", keys=REGIONS).argmax_exp(
        "product", candidates=PRODUCTS, value="revenue", clip=(0, 500), epsilon=0.5
    ),
    "grouped_median": lambda df: df.dp.groupby("region", keys=REGIONS).median(
        "revenue", candidates=REVENUE_GRID, epsilon=0.2
    ),
    "grouped_quantile": lambda df: df.dp.groupby("region", keys=REGIONS).quantile(
        "revenue", 0.25, candidates=REVENUE_GRID, epsilon=0.2
    ),
    "mean_auto_revenue": lambda df: df.dp.mean("revenue", clip="auto", epsilon=0.5),
    "manual_recipe": lambda df: df.dp.mean(
        "revenue",
        clip=(
            0,
            df.dp.quantile("revenue", 0.99, candidates=np.geomspace(1, 100_000, 200), epsilon=0.1),
        ),
        epsilon=0.5,
    ),
}
table("selection", sales, {"epsilon": 4}, SELECTION)


# --- grouped releases over public keys (salaries) ---------------------------------------------


def by_dept(df: pd.DataFrame) -> Any:
    return df.dp.groupby("dept", keys=DEPTS)


GROUPED: dict[str, Call] = {
    "count": lambda df: by_dept(df).count(epsilon=0.5),
    "count_column": lambda df: by_dept(df).count("bonus", epsilon=0.5),
    "count_ci": lambda df: by_dept(df).count(epsilon=0.5, ci=0.9),
    "sum": lambda df: by_dept(df).sum("salary", clip=(0, 200_000), epsilon=0.5),
    "sum_mapping": lambda df: by_dept(df).sum(clip=CLIP, epsilon=0.5),
    "sum_ci": lambda df: by_dept(df).sum("salary", clip=(0, 2e5), epsilon=0.5, ci=0.95),
    "sum_auto_cut": lambda df: by_dept(df).sum("salary", clip="auto", epsilon=1, cut=True),
    "mean": lambda df: by_dept(df).mean("salary", clip=(0, 200_000), epsilon=1.0),
    "mean_mapping": lambda df: by_dept(df).mean(clip=CLIP, epsilon=1.0),
    "mean_mapping_ci": lambda df: by_dept(df).mean(clip=CLIP, epsilon=1.0, ci=0.9),
    "mean_ci": lambda df: by_dept(df).mean("salary", clip=(0, 2e5), epsilon=1.0, ci=0.95),
    "mean_cut": lambda df: by_dept(df).mean("salary", clip=(0, 1e5), epsilon=1.0, cut=True),
    "mean_auto_ci": lambda df: by_dept(df).mean("salary", clip="auto", epsilon=1.0, ci=0.95),
    "var": lambda df: by_dept(df).var("salary", clip=(0, 2e5), epsilon=0.5),
    "var_ci": lambda df: by_dept(df).var("salary", clip=(0, 2e5), epsilon=0.5, ci=0.9),
    "std": lambda df: by_dept(df).std("salary", clip=(0, 200_000), epsilon=0.5),
    "std_ci_cut": lambda df: by_dept(df).std(
        "salary", clip=(0, 1e5), epsilon=0.5, ci=0.95, cut=True
    ),
    "std_auto": lambda df: by_dept(df).std("salary", clip="auto", epsilon=1),
    "describe": lambda df: by_dept(df).describe(
        ["salary", "age"], clip=DESCRIBE_CLIP, candidates=GRIDS, epsilon=1.0
    ),
    "describe_cut": lambda df: by_dept(df).describe(
        ["age"], clip={"age": (0, 40)}, candidates={"age": range(101)}, epsilon=1.0, cut=True
    ),
    "nunique": lambda df: by_dept(df).nunique("level", epsilon=0.5),
    "bounds": lambda df: by_dept(df).bounds("salary", epsilon=1),
    "clipped_share": lambda df: by_dept(df).clipped_share("salary", clip=(0, 1e5), epsilon=0.5),
    "quantile": lambda df: by_dept(df).quantile(
        "salary", 0.75, candidates=SALARY_GRID, epsilon=0.5
    ),
    "median": lambda df: by_dept(df).median("age", candidates=range(101), epsilon=0.5),
    "argmax": lambda df: by_dept(df).argmax_exp("level", candidates=LEVELS, epsilon=0.5),
    "two_keys": lambda df: df.dp.groupby(
        ["dept", "level"], keys=pd.MultiIndex.from_product([DEPTS, LEVELS])
    ).count(epsilon=0.5),
    "two_keys_mean": lambda df: df.dp.groupby(
        ["dept", "level"], keys=pd.MultiIndex.from_product([DEPARTMENTS, LEVELS])
    ).mean("salary", clip=(0, 2e5), epsilon=0.5, ci=0.9),
    "categorical_keys": lambda df: df.dp.groupby("level", keys=pd.CategoricalDtype(LEVELS)).count(
        epsilon=0.5
    ),
    "int_keys_cut_bins": lambda df: (
        df.dp.assign(band=pd.cut(df.age, bins=[18, 30, 50, 120]))
        .dp.groupby("band", keys=pd.cut(df.age, bins=[18, 30, 50, 120]).cat.categories)
        .count(epsilon=0.5)
    ),
    "duplicate_keys": lambda df: df.dp.groupby("dept", keys=["Sales", "Sales"]).count(epsilon=0.5),
    "wrong_key_type": lambda df: df.dp.groupby("age", keys=["a", "b"]).count(epsilon=0.5),
    "keys_positional": lambda df: df.dp.groupby("dept", DEPTS),
}
table("grouped", salaries, {"epsilon": 10}, GROUPED)


@case("grouped")
def events_keys(c: Case) -> None:
    ev = events()
    c.budget(ev, epsilon=10)
    c.show("int keys", lambda: ev.dp.groupby("code", keys=range(6)).count(epsilon=0.5))
    days = pd.date_range("2026-01-01", periods=8)
    c.show(
        "date keys",
        lambda: ev.dp.groupby("day", keys=days).mean("x", clip=(0, 100), epsilon=0.5),
    )
    c.show(
        "categorical column", lambda: ev.dp.groupby("kind", keys=list("abcd")).count(epsilon=0.5)
    )
    c.show(
        "string keys with missing",
        lambda: ev.dp.groupby("tag", keys=["p", "q", "r", "s"]).sum(
            "x", clip=(0, 100), epsilon=0.5
        ),
    )
    c.show(
        "int and categorical keys",
        lambda: ev.dp.groupby(
            ["code", "kind"], keys=pd.MultiIndex.from_product([range(5), list("abcd")])
        ).median("x", candidates=range(101), epsilon=0.5),
    )


# --- keys chosen privately (no keys=), with δ ---------------------------------------------------


KEYLESS: dict[str, Call | tuple[Call, dict[str, Any]]] = {
    "count": lambda df: df.dp.groupby("product").count(epsilon=0.5, delta=1e-7),
    "count_ci": lambda df: df.dp.groupby("product").count(epsilon=0.5, delta=1e-7, ci=0.9),
    "count_column": lambda df: df.dp.groupby("region").count("revenue", epsilon=0.5, delta=1e-7),
    "sum": lambda df: df.dp.groupby("product").sum(
        "revenue", clip=(0, 500), epsilon=0.5, delta=1e-7
    ),
    "mean": lambda df: df.dp.groupby("product").mean(
        "revenue", clip=(0, 500), epsilon=0.5, delta=1e-7
    ),
    "mean_ci": lambda df: df.dp.groupby("region").mean(
        "revenue", clip=(0, 500), epsilon=0.5, delta=1e-7, ci=0.95
    ),
    "mean_mapping": lambda df: df.dp.groupby("region").mean(
        clip={"revenue": (0, 500), "quantity": (1, 5)}, epsilon=0.5, delta=1e-7
    ),
    "var": lambda df: df.dp.groupby("region").var(
        "revenue", clip=(0, 500), epsilon=0.5, delta=1e-7
    ),
    "std_ci": lambda df: df.dp.groupby("region").std(
        "revenue", clip=(0, 500), epsilon=0.5, delta=1e-7, ci=0.9
    ),
    "nunique": lambda df: df.dp.groupby("region").nunique("product", epsilon=0.5, delta=1e-7),
    "median": lambda df: df.dp.groupby("region").median(
        "revenue", candidates=REVENUE_GRID, epsilon=0.5, delta=1e-7
    ),
    "two_columns": lambda df: df.dp.groupby(["region", "product"]).count(epsilon=0.5, delta=1e-7),
    "value_counts": lambda df: df.dp.value_counts("product", epsilon=0.5, delta=1e-7),
    "value_counts_normalize": lambda df: df.dp.value_counts(
        "product", epsilon=0.5, delta=1e-7, normalize=True
    ),
    "value_counts_subset": lambda df: df.dp.value_counts(
        ["region", "product"], epsilon=0.5, delta=1e-7
    ),
    "crosstab": lambda df: df.dp.crosstab("region", "product", epsilon=0.5, delta=1e-7),
    "crosstab_ci": lambda df: df.dp.crosstab("region", "quantity", epsilon=0.5, delta=1e-7, ci=0.9),
    "crosstab_row_keys": lambda df: df.dp.crosstab(
        "region", "product", keys=(REGIONS, None), epsilon=0.5, delta=1e-7
    ),
    "crosstab_column_keys": lambda df: df.dp.crosstab(
        "product", "region", keys=(None, [*REGIONS, "Nowhere"]), epsilon=0.5, delta=1e-7
    ),
    "no_delta_in_call": lambda df: df.dp.groupby("product").count(epsilon=0.5),
    "delta_over_budget": lambda df: df.dp.value_counts("product", epsilon=0.5, delta=1e-5),
    "clip_auto_refused": lambda df: df.dp.groupby("region").mean(
        "revenue", clip="auto", epsilon=0.5, delta=1e-7
    ),
    "budget_without_delta": (
        lambda df: df.dp.value_counts("product", epsilon=0.5, delta=1e-7),
        {"delta": None},
    ),
    "substitute_refused": (
        lambda df: df.dp.groupby("product").count(epsilon=0.5, delta=1e-7),
        {"adjacency": "substitute"},
    ),
    "rho_budget": (
        lambda df: df.dp.groupby("product").count(rho=0.05, delta=1e-7),
        {"epsilon": None, "rho": 0.5},
    ),
    "rho_value_counts": (
        lambda df: df.dp.value_counts("product", rho=0.05, delta=1e-7, normalize=True),
        {"epsilon": None, "rho": 0.5},
    ),
}
table("keyless", sales, {"epsilon": 3, "delta": 1e-6}, KEYLESS)


@case("keyless")
def dropna_false(c: Case) -> None:
    ev = events()
    c.budget(ev, epsilon=3, delta=1e-6)
    c.show("dropna=True", lambda: ev.dp.value_counts("tag", epsilon=0.5, delta=1e-7))
    c.show(
        "dropna=False",
        lambda: ev.dp.value_counts("tag", epsilon=0.5, delta=1e-7, dropna=False),
    )
    g = ev.dp.groupby("tag", dropna=False)
    c.show("groupby dropna=False", lambda: g.mean("x", clip=(0, 100), epsilon=0.5, delta=1e-7))
    c.show("date keys", lambda: ev.dp.groupby("day").count(epsilon=0.5, delta=1e-7))


@case("keyless")
def with_unit(c: Case) -> None:
    tx = orders()
    c.budget(tx, epsilon=4, delta=1e-6, privacy_unit="customer_id")
    c.show(
        "count",
        lambda: tx.dp.groupby("product").count(epsilon=1.0, delta=1e-7, max_groups=3, max_rows=1),
    )
    c.show(
        "value_counts",
        lambda: tx.dp.value_counts("product", epsilon=1.0, delta=1e-7, max_groups=2, max_rows=1),
    )
    c.show(
        "mean",
        lambda: tx.dp.groupby("region").mean(
            "amount", clip=(0, 500), epsilon=0.5, delta=1e-7, max_groups=1, max_rows=3
        ),
    )
    c.show(
        "crosstab",
        lambda: tx.dp.crosstab(
            "region",
            "product",
            keys=(REGIONS, None),
            epsilon=0.5,
            delta=1e-7,
            max_groups=2,
            max_rows=1,
        ),
    )


@case("keyless")
def weighted_gaussian(c: Case) -> None:
    tx = orders()
    c.budget(tx, rho=0.5, delta=1e-6, privacy_unit="customer_id")
    c.show(
        "count rho max_groups 4",
        lambda: tx.dp.groupby("product").count(rho=0.1, delta=1e-7, max_groups=4, max_rows=1),
    )
    c.show(
        "median rho",
        lambda: tx.dp.groupby("region").median(
            "amount", candidates=range(0, 601, 5), rho=0.1, delta=1e-7, max_groups=1, max_rows=2
        ),
    )


# --- a zCDP budget (rho=) ---------------------------------------------------------------------


ZCDP: dict[str, Call] = {
    "count": lambda df: df.dp.count(rho=0.01),
    "count_ci": lambda df: df.dp.count("bonus", rho=0.01, ci=0.95),
    "sum": lambda df: df.dp.sum("salary", clip=(0, 2e5), rho=0.02),
    "sum_mapping_ci": lambda df: df.dp.sum(clip=CLIP, rho=0.02, ci=0.9),
    "mean_ci": lambda df: df.dp.mean("salary", clip=(0, 2e5), rho=0.02, ci=0.95),
    "mean_auto_cut": lambda df: df.dp.mean("salary", clip="auto", rho=0.1, cut=True),
    "var_ci": lambda df: df.dp.var("salary", clip=(0, 2e5), rho=0.05, ci=0.9),
    "std": lambda df: df.dp.std("age", clip=(0, 100), rho=0.05),
    "grouped_sum": lambda df: by_dept(df).sum("salary", clip=(0, 2e5), rho=0.05),
    "grouped_count_ci": lambda df: by_dept(df).count(rho=0.05, ci=0.95),
    "grouped_std_ci": lambda df: by_dept(df).std("salary", clip=(0, 2e5), rho=0.05, ci=0.9),
    "median_epsilon": lambda df: df.dp.median(
        "salary", candidates=range(0, 200_001, 1000), epsilon=0.1
    ),
    "median_rho": lambda df: df.dp.median("salary", candidates=SALARY_GRID, rho=0.01),
    "argmax_rho": lambda df: df.dp.argmax_exp("dept", candidates=DEPARTMENTS, rho=0.02, k=2),
    "describe": lambda df: df.dp.describe(
        ["salary", "age"], clip=DESCRIBE_CLIP, candidates=GRIDS, rho=0.1
    ),
    "nunique": lambda df: df.dp.nunique("dept", rho=0.01),
    "histogram_ci": lambda df: df.dp.histogram("age", bins=[18, 30, 45, 65, 100], rho=0.02, ci=0.9),
    "crosstab": lambda df: df.dp.crosstab("dept", "level", keys=(DEPARTMENTS, LEVELS), rho=0.02),
    "bounds": lambda df: df.dp.bounds("salary", rho=0.05),
    "clipped_share": lambda df: df.dp.clipped_share("salary", clip=(0, 1e5), rho=0.02),
    "grouped_median": lambda df: by_dept(df).median("age", candidates=range(101), rho=0.02),
    "reserve_rho": lambda df: _reserved(df, rho=0.1),
    "reserve_epsilon": lambda df: _reserved(df, epsilon=0.3),
    "over_budget": lambda df: df.dp.count(rho=0.6),
}


def _reserved(df: pd.DataFrame, **amount: float) -> Any:
    with df.dp.reserve(**amount):
        inside = str(df.dp.budget)
        value = df.dp.count(rho=0.01)
    return [value, inside]


table("zcdp", salaries, {"rho": 0.5}, ZCDP)


@case("zcdp")
def epsilon_at_total(c: Case) -> None:
    df = salaries()
    budget = c.budget(df, rho=0.02436, delta=1e-6)
    c.show("count", lambda: df.dp.count(rho=0.01))
    c.show("epsilon_at spent", lambda: budget.epsilon_at(1e-6))
    c.show("epsilon_at total", lambda: budget.epsilon_at(1e-6, of="total"))
    c.show("epsilon_at too small", lambda: budget.epsilon_at(0))
    c.show("facts", lambda: budget.facts())


# --- substitute adjacency ---------------------------------------------------------------------


SUBSTITUTE: dict[str, Call] = {
    "count_free": lambda df: [df.dp.count(epsilon=0.1), df.dp.count(epsilon=0.1, ci=0.95)],
    "count_filtered": lambda df: df.dp.query("age >= 30").dp.count(epsilon=0.1),
    "count_column": lambda df: df.dp.count("bonus", epsilon=0.1),
    "sum": lambda df: df.dp.sum("salary", clip=(0, 2e5), epsilon=0.5, ci=0.95),
    "sum_spanning_zero": lambda df: df.dp.sum("age", clip=(-100, 50), epsilon=0.5),
    "mean": lambda df: df.dp.mean("salary", clip=(0, 2e5), epsilon=0.5, ci=0.95),
    "var": lambda df: df.dp.var("salary", clip=(0, 2e5), epsilon=0.5),
    "grouped_count": lambda df: by_dept(df).count(epsilon=0.5, ci=0.9),
    "grouped_mean": lambda df: by_dept(df).mean("salary", clip=(0, 2e5), epsilon=0.5),
    "argmax": lambda df: df.dp.argmax_exp("level", candidates=LEVELS, epsilon=0.5),
    "argmax_value": lambda df: df.dp.argmax_exp(
        "dept", candidates=DEPARTMENTS, value="salary", clip=(0, 2e5), epsilon=0.5
    ),
    "median": lambda df: df.dp.median("age", candidates=range(101), epsilon=0.5),
    "grouped_quantile": lambda df: by_dept(df).quantile(
        "age", 0.9, candidates=range(101), epsilon=0.5
    ),
    "histogram": lambda df: df.dp.histogram("age", bins=[18, 30, 45, 65, 100], epsilon=0.3),
    "crosstab": lambda df: df.dp.crosstab("dept", "level", keys=(DEPARTMENTS, LEVELS), epsilon=0.5),
    "describe": lambda df: df.dp.describe(
        ["age"], clip={"age": (0, 100)}, candidates={"age": range(101)}, epsilon=1
    ),
    "mean_auto": lambda df: df.dp.mean("salary", clip="auto", epsilon=1, ci=0.9),
    "keyless_refused": lambda df: df.dp.groupby("dept").count(epsilon=0.5, delta=1e-7),
}
table("substitute", salaries, {"epsilon": 10, "adjacency": "substitute"}, SUBSTITUTE)


# --- a privacy unit: many rows per person (orders) --------------------------------------------


def by_region(tx: pd.DataFrame) -> Any:
    return tx.dp.groupby("region", keys=REGIONS)


UNIT_BUDGET = {"epsilon": 10.0, "privacy_unit": "customer_id", "max_rows": 10, "max_groups": 2}
UNIT: dict[str, Call | tuple[Call, dict[str, Any]]] = {
    "count_max_rows": lambda tx: tx.dp.count(epsilon=0.2, max_rows=5),
    "count_default": lambda tx: tx.dp.count(epsilon=0.2),
    "count_persons_ci": lambda tx: tx.dp.count(epsilon=0.5, max_rows=1, ci=0.95),
    "count_auto": lambda tx: tx.dp.count(epsilon=0.5, max_rows="auto", ci=0.9),
    "sum": lambda tx: tx.dp.sum("amount", clip=(0, 500), epsilon=0.5, max_rows=5),
    "sum_auto": lambda tx: tx.dp.sum("amount", clip=(0, 500), epsilon=0.4, max_rows="auto"),
    "sum_cut": lambda tx: tx.dp.sum("amount", clip=(0, 500), epsilon=1, max_rows=10, cut=True),
    "mean": lambda tx: tx.dp.mean("amount", clip=(0, 500), epsilon=0.5),
    "mean_ci": lambda tx: tx.dp.mean("amount", clip=(0, 300), epsilon=0.5, max_rows=1, ci=0.9),
    "mean_auto_both": lambda tx: tx.dp.mean(
        "amount", clip="auto", epsilon=2, max_rows="auto", ci=0.95, cut=True
    ),
    "var": lambda tx: tx.dp.var("amount", clip=(0, 500), epsilon=0.5, max_rows=3),
    "std_ci": lambda tx: tx.dp.std("amount", clip=(0, 500), epsilon=0.5, max_rows=3, ci=0.9),
    "describe": lambda tx: tx.dp.describe(
        ["amount"],
        clip={"amount": (0, 500)},
        candidates={"amount": range(0, 601, 5)},
        epsilon=1,
        max_rows=3,
    ),
    "nunique": lambda tx: tx.dp.nunique("product", epsilon=0.5, max_rows=1),
    "histogram": lambda tx: tx.dp.histogram(
        "amount", bins=[0, 20, 50, 100, 600], epsilon=0.5, max_rows=3
    ),
    "crosstab": lambda tx: tx.dp.crosstab(
        "region",
        "product",
        keys=(REGIONS, PRODUCTS[:4]),
        epsilon=0.5,
        max_rows=2,
        max_groups=2,
    ),
    "grouped_count": lambda tx: by_region(tx).count(epsilon=0.5, max_rows=5, max_groups=1),
    "grouped_count_defaults": lambda tx: by_region(tx).count(epsilon=0.5),
    "grouped_mean_ci": lambda tx: by_region(tx).mean(
        "amount", clip=(0, 500), epsilon=0.5, max_rows=3, max_groups=1, ci=0.9
    ),
    "grouped_sum_auto": lambda tx: by_region(tx).sum(
        "amount", clip=(0, 500), epsilon=0.5, max_rows="auto", max_groups=1
    ),
    "grouped_median": lambda tx: by_region(tx).median(
        "amount", candidates=range(0, 601, 5), epsilon=0.5, max_rows=2, max_groups=1
    ),
    "grouped_argmax": lambda tx: by_region(tx).argmax_exp(
        "product", candidates=PRODUCTS, epsilon=0.5, max_rows=1, max_groups=1
    ),
    "argmax_customers": lambda tx: tx.dp.argmax_exp(
        "product", candidates=PRODUCTS, epsilon=0.5, max_rows=1
    ),
    "argmax_value": lambda tx: tx.dp.argmax_exp(
        "product", candidates=PRODUCTS, value="amount", clip=(0, 500), epsilon=0.5, max_rows=2
    ),
    "quantile": lambda tx: tx.dp.quantile(
        "amount", 0.5, candidates=range(0, 601, 5), epsilon=0.5, max_rows=2
    ),
    "bounds": lambda tx: tx.dp.bounds("amount", epsilon=1, max_rows=3),
    "clipped_share": lambda tx: tx.dp.clipped_share(
        "amount", clip=(0, 100), epsilon=0.5, max_rows=3
    ),
    "rows_per_unit": lambda tx: tx.dp.rows_per_unit(0.9, candidates=range(1, 101), epsilon=0.1),
    "rows_per_unit_default": lambda tx: tx.dp.rows_per_unit(epsilon=0.5),
    "per_unit_mean": lambda tx: tx.dp.per_unit(spend=("amount", "sum")).dp.mean(
        "spend", clip=(0, 2_000), epsilon=0.5
    ),
    "per_unit_many": lambda tx: tx.dp.per_unit(
        spend=("amount", "sum"),
        orders=("amount", "size"),
        top=("amount", "max"),
        kinds=("product", "nunique"),
        middle=("amount", lambda s: float(s.median())),
    ).dp.describe(
        ["spend", "orders"],
        clip={"spend": (0, 3_000), "orders": (0, 60)},
        candidates={"spend": range(0, 3_001, 10), "orders": range(61)},
        epsilon=1,
    ),
    "per_unit_transform_refused": lambda tx: tx.dp.per_unit(run=("amount", "cumsum")),
    "select_without_unit_refused": lambda tx: tx.dp.select(["amount"]),
    "no_defaults_refused": (
        lambda tx: tx.dp.count(epsilon=0.2),
        {"max_rows": None, "max_groups": None},
    ),
    "grouped_no_max_groups_refused": (
        lambda tx: by_region(tx).count(epsilon=0.2, max_rows=3),
        {"max_groups": None},
    ),
    "substitute_count": (
        lambda tx: tx.dp.count(epsilon=0.5, max_rows=3),
        {"adjacency": "substitute"},
    ),
    "substitute_grouped_mean": (
        lambda tx: by_region(tx).mean("amount", clip=(0, 500), epsilon=0.5, max_groups=1),
        {"adjacency": "substitute"},
    ),
    "substitute_per_unit_count": (
        lambda tx: tx.dp.per_unit(n=("amount", "size")).dp.count(epsilon=0.5),
        {"adjacency": "substitute"},
    ),
    "rho_grouped_count": (
        lambda tx: by_region(tx).count(rho=0.05, max_rows=3, max_groups=2, ci=0.9),
        {"epsilon": None, "rho": 1.0},
    ),
    "rho_mean_auto": (
        lambda tx: tx.dp.mean("amount", clip="auto", rho=0.5, max_rows="auto", cut=True),
        {"epsilon": None, "rho": 1.0},
    ),
}
table("unit", orders, UNIT_BUDGET, UNIT)


@case("unit")
def unit_dtypes(c: Case) -> None:
    ev = events()
    c.budget(ev, epsilon=5, privacy_unit="pid", max_rows=3, max_groups=2)
    c.show("Int64 unit count", lambda: ev.dp.count(epsilon=0.5))
    c.show("Int64 unit grouped", lambda: ev.dp.groupby("code", keys=range(5)).count(epsilon=0.5))
    floats = events().assign(pid=lambda f: f.pid.astype("float64"))
    c.show("float unit refused", lambda: floats.dp.set_budget(epsilon=1, privacy_unit="pid"))
    objects = events().assign(pid=lambda f: f.pid.astype(object))
    c.show("object unit refused", lambda: objects.dp.set_budget(epsilon=1, privacy_unit="pid"))


# --- derivations: filter, query, assign, select; fail closed ----------------------------------


DERIVE: dict[str, Call] = {
    "filter": lambda df: df.dp.filter(df.age >= 40).dp.mean("salary", clip=(0, 2e5), epsilon=0.5),
    "query": lambda df: df.dp.query("age >= 18 and dept == 'Sales'").dp.sum(
        "salary", clip=(0, 2e5), epsilon=0.5
    ),
    "query_at_name": lambda df: (lambda cut: df.dp.query("salary > @cut").dp.count(epsilon=0.5))(
        80_000
    ),
    "query_isin": lambda df: df.dp.query("level in ['senior', 'lead']").dp.count(epsilon=0.5),
    "assign": lambda df: df.dp.assign(total=df.salary + df.bonus.fillna(0)).dp.mean(
        "total", clip=(0, 3e5), epsilon=0.5
    ),
    "assign_key": lambda df: (
        df.dp.assign(old=df.age >= 50).dp.groupby("old", keys=[False, True]).count(epsilon=0.5)
    ),
    "select": lambda df: df.dp.select(["salary", "age"]).dp.std("age", clip=(0, 100), epsilon=0.5),
    "chained": lambda df: (
        df.dp.query("age < 60")
        .dp.filter(df.query("age < 60").dept != "Sales")
        .dp.select(["dept", "salary"])
        .dp.groupby("dept", keys=DEPTS)
        .median("salary", candidates=SALARY_GRID, epsilon=0.5)
    ),
    "query_reduction_refused": lambda df: df.dp.query("salary > salary.mean()"),
    "query_index_refused": lambda df: df.dp.query("index % 2 == 0"),
    "plain_mask_refused": lambda df: df[df.age > 30].dp.count(epsilon=0.5),
    "copy_refused": lambda df: df.copy().dp.count(epsilon=0.5),
    "set_budget_on_derived_refused": lambda df: df[df.age > 30].dp.set_budget(epsilon=1),
    "set_budget_twice_refused": lambda df: df.dp.set_budget(epsilon=1),
    "inherit": lambda df: df[df.age > 30].dp.inherit(df).dp.count(epsilon=0.5),
    "inherit_marker": lambda df: df[df.age > 30].dp.inherit().dp.count(epsilon=0.5),
    "object_mask_refused": lambda df: df.dp.filter((df.age > 30).astype(object)),
}
table("derive", salaries, {"epsilon": 10}, DERIVE)


@case("derive")
def changed_in_place(c: Case) -> None:
    df = salaries()
    c.budget(df, epsilon=10)
    c.show("before", lambda: df.dp.count(epsilon=0.5))
    df.loc[10_000] = df.loc[0]  # a row added in place: the frame stops spending
    c.show("after a row added in place", lambda: df.dp.count(epsilon=0.5))
    c.show("inherit", lambda: df.dp.inherit() is df)
    c.show("after inherit", lambda: df.dp.count(epsilon=0.5))


# --- reserve: a share held before a report --------------------------------------------------


@case("reserve")
def hold_then_release(c: Case) -> None:
    df = salaries()
    budget = c.budget(df, epsilon=2)
    with df.dp.reserve(epsilon=0.6):
        c.show("inside", lambda: str(budget))
        c.show("count", lambda: by_dept(df).count(epsilon=0.2))
        c.show("mean", lambda: by_dept(df).mean("salary", clip=(0, 2e5), epsilon=0.2))
        c.show("held", lambda: budget.held)
        c.show("nested refused", lambda: df.dp.reserve(epsilon=0.1).__enter__())
    c.show("after: held", lambda: budget.held)
    c.show("after: remaining", lambda: budget.remaining)
    c.show("too much refused", lambda: df.dp.reserve(epsilon=5).__enter__())


@case("reserve")
def hold_with_exception(c: Case) -> None:
    df = salaries()
    budget = c.budget(df, epsilon=2)
    with contextlib.suppress(RuntimeError), df.dp.reserve(epsilon=1):
        df.dp.count(epsilon=0.3)
        c.show("inside", lambda: (budget.spent, budget.held, budget.remaining))
        raise RuntimeError("stop")
    c.show("after", lambda: (budget.spent, budget.held, budget.remaining))
    with df.dp.reserve(epsilon=0.5):
        c.show("over the share", lambda: df.dp.count(epsilon=0.6))
        c.show("over everything", lambda: df.dp.count(epsilon=1.8))


# --- sessions: several releases on one budget (the README's seeded blocks) --------------------


@case("session")
def readme_ci(c: Case) -> None:
    df = salaries()
    budget = df.dp.set_budget(epsilon=3, seed=2024)
    c.budgets.append(budget)
    c.show("mean", lambda: df.dp.mean("salary", clip=(0, 200_000), epsilon=0.5, ci=0.95))
    c.show("count", lambda: df.dp.groupby("dept", keys=DEPARTMENTS).count(epsilon=0.5, ci=0.9))
    c.show("sum", lambda: df.dp.sum(clip=CLIP, epsilon=0.5, ci=0.9))


@case("session")
def readme_auto(c: Case) -> None:
    df = salaries()
    budget = df.dp.set_budget(epsilon=3, seed=7)
    c.budgets.append(budget)
    c.show("bounds", lambda: df.dp.bounds("salary", epsilon=0.25))
    c.show("auto", lambda: df.dp.mean("salary", clip="auto", epsilon=1, ci=0.95))
    c.show("too few", lambda: df.dp.mean("salary", clip="auto", epsilon=0.1))
    c.show("cut", lambda: df.dp.mean("salary", clip=(0, 100_000), epsilon=0.5, ci=0.95, cut=True))


@case("session")
def readme_unit_cut(c: Case) -> None:
    tx = datasets.orders(1_000, seed=0)
    budget = tx.dp.set_budget(epsilon=3, privacy_unit="customer_id", seed=7)
    c.budgets.append(budget)
    c.show("sum cut", lambda: tx.dp.sum("amount", clip=(0, 500), epsilon=1, max_rows=10, cut=True))


@case("session")
def exploration(c: Case) -> None:
    tx = orders()
    c.budget(tx, epsilon=6, privacy_unit="customer_id", max_rows=10, max_groups=2)
    k = c.show(
        "rows_per_unit", lambda: tx.dp.rows_per_unit(0.9, candidates=range(1, 101), epsilon=0.1)
    )
    c.show("mean at k", lambda: tx.dp.mean("amount", clip=(0, 300), epsilon=0.5, max_rows=k or 1))
    c.show(
        "best seller",
        lambda: tx.dp.argmax_exp("product", candidates=PRODUCTS, epsilon=0.3, max_rows=1),
    )
    people = tx.dp.per_unit(spend=("amount", "sum"))
    c.show("per person", lambda: people.dp.mean("spend", clip=(0, 2_000), epsilon=0.5))
    c.show(
        "per person median",
        lambda: people.dp.median("spend", candidates=range(0, 2_001, 10), epsilon=0.5),
    )
    big = tx.dp.query("amount > 50")
    c.show(
        "big orders",
        lambda: big.dp.groupby("region", keys=REGIONS).count(epsilon=0.5, max_groups=1),
    )
    c.show("remaining", lambda: tx.dp.budget.remaining)


@case("session")
def named_in_memory(c: Case) -> None:
    first, again = salaries(), salaries()
    c.budget(first, epsilon=2, name="seeded-releases.in-memory")
    c.show("first", lambda: first.dp.count(epsilon=0.5))
    c.budget(again, epsilon=2, name="seeded-releases.in-memory")
    c.show("again, same budget", lambda: again.dp.count(epsilon=0.5))
    c.show("spent", lambda: again.dp.budget.spent)
    c.show(
        "mismatch", lambda: salaries().dp.set_budget(epsilon=3, name="seeded-releases.in-memory")
    )


# --- a ledger file (SQLite) in a temporary folder ---------------------------------------------


@contextlib.contextmanager
def ledger_folder() -> Iterator[Path]:
    folder = Path(tempfile.mkdtemp(prefix="seeded-releases-"))
    MASKS.append((str(folder), "<tmp>"))
    try:
        yield folder
    finally:
        MASKS.remove((str(folder), "<tmp>"))
        shutil.rmtree(folder, ignore_errors=True)


def command_line(*args: str) -> str:
    """``python -m pandas_dp ledger ...``; each entry's trailing process id masked."""
    done = subprocess.run(
        [sys.executable, "-m", "pandas_dp", "ledger", *args],
        capture_output=True,
        text=True,
        check=False,
    )
    lines = [
        re.sub(r"\s+\d+$", "  <pid>", line) if TIMESTAMP.match(line) else line
        for line in (done.stdout + done.stderr).splitlines()
    ]
    return f"exit {done.returncode}\n" + "\n".join(lines)


@case("ledger")
def nightly(c: Case) -> None:
    with ledger_folder() as folder:
        path = folder / "privacy-ledger.sqlite"
        for night in range(3):
            df = salaries()
            budget = df.dp.set_budget(
                epsilon=1.0, ledger=path, name="hr.salaries", seed=c.seed + night
            )
            c.budgets.append(budget)

            def report(df: pd.DataFrame = df) -> pd.DataFrame:
                with df.dp.reserve(epsilon=0.3):
                    g = df.dp.groupby("dept", keys=DEPARTMENTS)
                    return pd.DataFrame(
                        {
                            "headcount": g.count(epsilon=0.1),
                            "mean_salary": g.mean("salary", clip=(0, 250_000), epsilon=0.2),
                        }
                    )

            c.show(f"night {night}", report)
        c.show(
            "mismatch", lambda: salaries().dp.set_budget(epsilon=2, ledger=path, name="hr.salaries")
        )
        ledger = pandas_dp.open_ledger(path)
        c.show("raise_total", lambda: ledger.raise_total("hr.salaries", 2.0))
        df = salaries()
        c.budgets.append(
            df.dp.set_budget(epsilon=2.0, ledger=path, name="hr.salaries", seed=c.seed)
        )
        c.show("after raise", lambda: df.dp.sum("salary", clip=(0, 2e5), epsilon=0.5, ci=0.9))
        c.show("backup", lambda: ledger.backup(folder / "copy.sqlite").name)
        c.show("backup again refused", lambda: ledger.backup(folder / "copy.sqlite"))
        ledger.close()
        reader = pandas_dp.open_ledger(folder / "copy.sqlite", read_only=True)
        c.show("budgets", lambda: reader.budgets().drop(columns=["created"]))
        c.show("history", lambda: reader.history("hr.salaries").drop(columns=["time", "process"]))
        c.show(
            "read only spend refused",
            lambda: salaries().dp.set_budget(epsilon=2.0, ledger=reader, name="hr.salaries"),
        )
        reader.close()
        c.show("cli budgets", lambda: command_line(str(path)))
        c.show("cli history", lambda: command_line(str(path), "--name", "hr.salaries"))


@case("ledger")
def kinds_of_budget(c: Case) -> None:
    with ledger_folder() as folder:
        path = folder / "ledger.sqlite"
        sub = salaries()
        c.budgets.append(
            sub.dp.set_budget(
                epsilon=3, adjacency="substitute", ledger=path, name="sub", seed=c.seed
            )
        )
        c.show("substitute count", lambda: sub.dp.count(epsilon=0.5))
        c.show("substitute mean", lambda: sub.dp.mean("salary", clip=(0, 2e5), epsilon=0.5))
        shop = sales()
        c.budgets.append(
            shop.dp.set_budget(rho=0.5, delta=1e-6, ledger=path, name="zcdp", seed=c.seed + 1)
        )
        c.show("rho keyless", lambda: shop.dp.value_counts("product", rho=0.1, delta=1e-7))
        c.show("rho mean", lambda: shop.dp.mean("revenue", clip=(0, 500), rho=0.1, ci=0.9))
        tx = orders()
        c.budgets.append(
            tx.dp.set_budget(
                epsilon=3,
                privacy_unit="customer_id",
                max_rows=5,
                max_groups=1,
                ledger=path,
                name="unit",
                seed=c.seed + 2,
            )
        )
        c.show("unit grouped", lambda: by_region(tx).count(epsilon=0.5))
        c.show(
            "unit auto", lambda: tx.dp.sum("amount", clip=(0, 500), epsilon=0.5, max_rows="auto")
        )
        with tx.dp.reserve(epsilon=0.5):
            c.show("held in file", lambda: command_line(str(path)))
        ledger = pandas_dp.open_ledger(path, read_only=True)
        c.show("budgets", lambda: ledger.budgets().drop(columns=["created"]))
        for name in ("sub", "zcdp", "unit"):
            c.show(
                f"history {name}",
                lambda name=name: ledger.history(name).drop(columns=["time", "process"]),
            )
        ledger.close()
        c.show("cli zcdp", lambda: command_line(str(path), "--name", "zcdp"))
        c.show(
            "not a ledger", lambda: pandas_dp.open_ledger(folder / "nothing.sqlite", create=False)
        )


# --- Dask: threaded scheduler, three partitions -----------------------------------------------


def on_dask(
    call: Callable[[Any], Any], frame: Callable[..., pd.DataFrame], **budget: Any
) -> Callable[[Case], None]:
    """A case body on Dask; its data generated with the case's own seed.

    Dask names a collection by its data, so a second collection of the same
    rows would be a re-read of the first one's (refused: see the README).
    """

    def body(c: Case) -> None:
        if dask is None:
            emit("  dask is not importable: skipped")
            return
        data = frame(seed=c.seed % 10_000)
        with dask.config.set(scheduler="threads"):
            ddf = dd.from_pandas(data, npartitions=3)
            c.budget(ddf, **budget)
            c.show("release", lambda: call(ddf))

    return body


DASK: list[tuple[str, Callable[[Any], Any], Callable[[], pd.DataFrame], dict[str, Any]]] = [
    ("count", lambda d: d.dp.count(epsilon=0.1, ci=0.9), sales, {"epsilon": 3}),
    (
        "grouped_mean",
        lambda d: d.dp.groupby("region", keys=REGIONS).mean("revenue", clip=(0, 500), epsilon=0.5),
        sales,
        {"epsilon": 3},
    ),
    (
        "argmax",
        lambda d: d.dp.argmax_exp("product", candidates=PRODUCTS, epsilon=0.5),
        sales,
        {"epsilon": 3},
    ),
    (
        "median",
        lambda d: d.dp.median("revenue", candidates=range(1_001), epsilon=0.2),
        sales,
        {"epsilon": 3},
    ),
    (
        "filter_sum",
        lambda d: d.dp.filter(d.revenue > 100).dp.sum("revenue", clip=(0, 500), epsilon=0.5),
        sales,
        {"epsilon": 3},
    ),
    (
        "mean_auto",
        lambda d: d.dp.mean("revenue", clip="auto", epsilon=1, cut=True),
        sales,
        {"epsilon": 3},
    ),
    (
        "keyless_count",
        lambda d: d.dp.groupby("product").count(epsilon=0.5, delta=1e-7),
        sales,
        {"epsilon": 3, "delta": 1e-6},
    ),
    (
        "value_counts",
        lambda d: d.dp.value_counts("product", epsilon=0.5, delta=1e-7),
        sales,
        {"epsilon": 3, "delta": 1e-6},
    ),
    (
        "rho_std",
        lambda d: d.dp.std("salary", clip=(0, 2e5), rho=0.05, ci=0.9),
        salaries,
        {"rho": 0.5},
    ),
    (
        "unit_count",
        lambda d: d.dp.count(epsilon=0.5, max_rows=3),
        orders,
        {"epsilon": 3, "privacy_unit": "customer_id"},
    ),
    (
        "unit_grouped_mean",
        lambda d: d.dp.groupby("region", keys=REGIONS).mean(
            "amount", clip=(0, 500), epsilon=0.5, max_rows=3, max_groups=1
        ),
        orders,
        {"epsilon": 3, "privacy_unit": "customer_id"},
    ),
    (
        "unit_per_unit",
        lambda d: d.dp.per_unit(spend=("amount", "sum")).dp.mean(
            "spend", clip=(0, 2_000), epsilon=0.5
        ),
        orders,
        {"epsilon": 3, "privacy_unit": "customer_id"},
    ),
    (
        "unit_rows_per_unit",
        lambda d: d.dp.rows_per_unit(0.9, candidates=range(1, 101), epsilon=0.1),
        orders,
        {"epsilon": 3, "privacy_unit": "customer_id"},
    ),
    (
        "plain_mask_refused",
        lambda d: d[d.revenue > 100].dp.count(epsilon=0.5),
        sales,
        {"epsilon": 3},
    ),
]
for _name, _call, _frame, _budget in DASK:
    CASES.append(("dask", _name, on_dask(_call, _frame, **_budget)))


@case("dask")
def same_as_pandas(c: Case) -> None:
    """Without a privacy unit, the same seed gives the pandas release bit for bit."""
    if dask is None:
        emit("  dask is not importable: skipped")
        return
    data = sales(seed=c.seed % 10_000)
    with dask.config.set(scheduler="threads"):
        ddf = dd.from_pandas(data, npartitions=3)
        ddf.dp.set_budget(epsilon=3, seed=c.seed)
        c.budgets.append(ddf.dp.budget)
        df = data.copy()
        c.budgets.append(df.dp.set_budget(epsilon=3, seed=c.seed))
        for name, call in (
            ("count", lambda f: f.dp.count(epsilon=0.5)),
            (
                "mean",
                lambda f: f.dp.groupby("region", keys=REGIONS).mean(
                    "revenue", clip=(0, 500), epsilon=0.5
                ),
            ),
            ("median", lambda f: f.dp.median("revenue", candidates=REVENUE_GRID, epsilon=0.5)),
        ):
            on_dask_value = c.show(f"{name} dask", lambda call=call: call(ddf))
            on_pandas_value = c.show(f"{name} pandas", lambda call=call: call(df))
            c.show(f"{name} equal", lambda a=on_dask_value, b=on_pandas_value: text(a) == text(b))


def main() -> None:
    for option, value in (
        ("display.width", 10_000),
        ("display.max_columns", None),
        ("display.max_rows", None),
        ("display.max_colwidth", None),
    ):
        pd.set_option(option, value)
    emit(f"pandas_dp seeded releases: {len(CASES)} cases")
    for section, name, body in CASES:
        run(section, name, body)


if __name__ == "__main__":
    main()
