"""Accuracy of ``clip="auto"`` on real data, against the manual recipe (a private quantile).

Data: the PUMS income sample ``../shared/data/pums_1000.csv`` beside the
repository (n = 1,000, a heavy tail: maximum 420,500, mean 34,380).  Each
method spends ε in total, a quarter of it on the bounds:

- ``auto``: ``df.dp.mean("income", clip="auto", epsilon=ε)`` (and ``std``):
  :class:`~pandas_dp.clipbounds.ClipBounds` with ε/4, then the statistic with
  3ε/4 clipped to the bounds it found;
- ``p95`` / ``p99``: the README's manual recipe: a private 95th (99th)
  percentile on a wide geometric grid (0, then 400 points from 1 to 10**7)
  with ε/4, then the statistic clipped to ``(0, quantile)`` with 3ε/4.

Each run is one seeded release; the exact statistics of each distinct clip are
tallied once (the answers are those of separate calls, drawn faster).  Also
``describe`` (count, mean and std of ``clip="auto"`` through the public call).

Run ``python bench/bench_bounds.py [--runs 300] [--seed 19]``; the statistical
test ``tests/test_clipbounds.py`` checks the ``auto`` mean's figures at
ε = 1 and 0.5.  Prints the median relative error and the share of runs more
than 50% off, per method, statistic and ε.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

import pandas_dp  # noqa: F401  (registers df.dp)
from pandas_dp.aggregate import Mean
from pandas_dp.auto import AUTO_SHARE
from pandas_dp.clipbounds import ClipBounds
from pandas_dp.kind import Kind, Neighbours
from pandas_dp.noise import SeededSource
from pandas_dp.select import Quantile
from pandas_dp.variance import Var

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "pums_1000.csv"
GRID = np.concatenate([[0.0], np.geomspace(1, 1e7, 400)])
NEIGHBOURS = Neighbours.of("add_remove")

Statistic = Callable[[Fraction, tuple[float, float]], Kind[Any, Any]]
STATISTICS: dict[str, Statistic] = {
    "mean": lambda e, clip: Mean(e, "income", clip),
    "std": lambda e, clip: Var.of(e, "income", clip, std=True),
}


def clips(
    df: pd.DataFrame, method: str, epsilon: Fraction, source: SeededSource, runs: int
) -> list[tuple[float, float]]:
    """The bounds step of ``method``, ``runs`` times."""
    kind: Kind[Any, Any]
    if method == "auto":
        kind = ClipBounds(epsilon, "income")
    else:
        kind = Quantile.of(epsilon, "income", int(method[1:]) / 100, GRID, "quantile")
    plan = kind.plan(NEIGHBOURS)
    stats = kind.tally(plan, kind.read(df, 1), None, 1)
    out = []
    for _ in range(runs):
        found = kind.shape_one(kind.finish(plan, stats, source, 1))
        out.append(found if method == "auto" else (0.0, max(found, 1.0)))
    return out


def answers(
    df: pd.DataFrame, method: str, statistic: str, epsilon: Fraction, runs: int, seed: int
) -> np.ndarray:
    source = SeededSource(seed)
    share = epsilon * AUTO_SHARE
    tallies: dict[tuple[float, float], Any] = {}
    out = []
    for clip in clips(df, method, share, source, runs):
        kind = STATISTICS[statistic](epsilon - share, clip)
        plan = kind.plan(NEIGHBOURS)
        if clip not in tallies:
            tallies[clip] = kind.tally(plan, kind.read(df, 1), None, 1)
        out.append(kind.shape_one(kind.finish(plan, tallies[clip], source, 1)))
    return np.array(out, dtype=np.float64)


def describe_errors(df: pd.DataFrame, epsilon: float, runs: int, seed: int) -> dict[str, Any]:
    """``describe(["income"], clip="auto")`` through the public call: mean and std errors."""
    truth = {"mean": df["income"].mean(), "std": df["income"].std()}
    errors: dict[str, list[float]] = {"mean": [], "std": []}
    frame = df.copy()
    frame.dp.set_budget(epsilon=epsilon * runs, seed=seed)
    candidates = {"income": GRID}
    for _ in range(runs):
        table = frame.dp.describe(["income"], clip="auto", candidates=candidates, epsilon=epsilon)
        for row in errors:
            errors[row].append(abs(table.loc[row, "income"] / truth[row] - 1))
    return {row: np.array(e) for row, e in errors.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=300)
    parser.add_argument("--seed", type=int, default=19)
    parser.add_argument("--describe-runs", type=int, default=100)
    parser.add_argument("--data", type=Path, default=DATA, help="the PUMS income CSV")
    args = parser.parse_args()
    if not args.data.is_file():
        raise SystemExit(f"needs {args.data} (pass --data PATH to pums_1000.csv)")
    df = pd.read_csv(args.data)[["income"]]
    truth = {"mean": df["income"].mean(), "std": df["income"].std()}
    print(f"PUMS income: n = {len(df)}, mean {truth['mean']:,.0f}, std {truth['std']:,.0f}")
    print(f"{args.runs} runs per cell, seed {args.seed}; a quarter of ε for the bounds\n")
    print("| statistic | ε | method | median error | runs > 50% off |")
    print("|---|---|---|---|---|")
    for statistic in STATISTICS:
        for epsilon in (Fraction(1), Fraction(1, 2), Fraction(1, 10)):
            for method in ("auto", "p95", "p99"):
                got = answers(df, method, statistic, epsilon, args.runs, args.seed)
                errors = np.abs(got / truth[statistic] - 1)
                print(
                    f"| {statistic} | {float(epsilon):g} | {method} | "
                    f"{np.median(errors):.1%} | {np.mean(errors > 0.5):.1%} |"
                )
    for epsilon in (1.0, 0.5):
        described = describe_errors(df, epsilon, args.describe_runs, args.seed)
        for row, errors in described.items():
            print(
                f"| describe {row} | {epsilon:g} | auto ({args.describe_runs} runs) | "
                f"{np.median(errors):.1%} | {np.mean(errors > 0.5):.1%} |"
            )


if __name__ == "__main__":
    main()
