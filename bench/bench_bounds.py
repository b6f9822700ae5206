"""Accuracy of ``clip="auto"`` on real data, against the manual recipe (a private quantile).

Data: the PUMS income sample ``../shared/data/pums_1000.csv`` beside the
repository (n = 1,000, a heavy tail: maximum 420,500, mean 34,380).  Each
run is one public call (or two, for the recipe) on a seeded budget, spending
ε in total:

- ``auto``: ``df.dp.mean("income", clip="auto", epsilon=ε)`` (and ``std``):
  a count of the values with ε/20 (the check: with too few values for ε the
  call stops, ValueError, and the run counts as *refused*), bounds with ε/4,
  the statistic with the rest, clipped to the bounds found;
- ``p95`` / ``p99``: the manual recipe of the README: a private 95th (99th)
  percentile on a wide geometric grid (0, then 400 points from 1 to 10**7)
  with ε/4, then the statistic clipped to ``(0, quantile)`` with 3ε/4;
- ``describe``: ``describe(["income"], clip="auto")``: its mean and std rows.

Run ``python bench/bench_bounds.py [--runs 300] [--seed 19]``: it prints the
table of the README's "How accurate is this?" (median relative error, share of
runs more than 50% off, share refused, share that warned with
:class:`pandas_dp.PoorAnswerWarning`, per statistic, ε and method);
then :func:`tops`, where ``clip="auto"`` and ``bounds()`` stop at ε = 1 on the
PUMS incomes and on 54,000 generated prices (``pandas_dp.datasets.prices``).
``tests/test_readme.py`` runs :func:`table` and checks that the README shows
exactly this table, and ``tests/test_clipbounds.py`` the ``auto`` mean's
targets at ε = 1 and 0.5.
"""

from __future__ import annotations

import argparse
import warnings
from collections.abc import Callable
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

import pandas_dp
from pandas_dp.datasets import prices

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "pums_1000.csv"
GRID = np.concatenate([[0.0], np.geomspace(1, 1e7, 400)])
EPSILONS = (1.0, 0.5, 0.25, 0.1)
HEADER = (
    "| statistic | ε | method | median error | runs > 50% off | refused | warned |",
    "|---|---|---|---|---|---|---|",
)

Run = Callable[[pd.DataFrame, float], Any]


def _recipe(statistic: str, q: float) -> Run:
    def run(df: pd.DataFrame, epsilon: float) -> Any:
        share = Fraction(repr(epsilon)) / 4  # exact decimals: the two parts add up to epsilon
        upper = df.dp.quantile("income", q, candidates=GRID, epsilon=float(share))
        release = getattr(df.dp, statistic)
        return release("income", clip=(0, max(upper, 1.0)), epsilon=float(3 * share))

    return run


def _auto(statistic: str) -> Run:
    def run(df: pd.DataFrame, epsilon: float) -> Any:
        return getattr(df.dp, statistic)("income", clip="auto", epsilon=epsilon)

    return run


def _described(df: pd.DataFrame, epsilon: float) -> Any:
    table = df.dp.describe(["income"], clip="auto", candidates={"income": GRID}, epsilon=epsilon)
    return table["income"]


METHODS: dict[tuple[str, str], Run] = {
    (statistic, method): _auto(statistic) if method == "auto" else _recipe(statistic, q)
    for statistic in ("mean", "std")
    for method, q in (("auto", 0.0), ("p95", 0.95), ("p99", 0.99))
}


def answers(
    df: pd.DataFrame, run: Run, epsilon: float, runs: int, seed: int
) -> list[tuple[Any, bool]]:
    """``runs`` separate calls of ``run`` on one seeded budget: (answer, whether it warned).

    The answer is None for a refused call; a call warns
    (:class:`pandas_dp.PoorAnswerWarning`) when ``clip="auto"`` found few values.
    """
    frame = df.copy()
    frame.dp.set_budget(epsilon=float(Fraction(repr(epsilon)) * runs), seed=seed)
    out: list[tuple[Any, bool]] = []
    for _ in range(runs):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", pandas_dp.PoorAnswerWarning)
            try:
                got = run(frame, epsilon)
            except ValueError:  # clip="auto" with too few values for epsilon: only the check spent
                got = None
        poor = any(issubclass(w.category, pandas_dp.PoorAnswerWarning) for w in caught)
        out.append((got, poor))
    return out


def _row(
    statistic: str, epsilon: float, method: str, got: list[tuple[Any, bool]], truth: float
) -> str:
    done = np.array([g for g, _ in got if g is not None], dtype=np.float64)
    refused = 1 - done.size / len(got)
    warned = np.mean([poor for _, poor in got])
    if done.size == 0:
        return f"| {statistic} | {epsilon:g} | {method} | — | — | {refused:.0%} | {warned:.0%} |"
    errors = np.abs(done / truth - 1)
    return (
        f"| {statistic} | {epsilon:g} | {method} | {np.median(errors):.1%} | "
        f"{np.mean(errors > 0.5):.1%} | {refused:.0%} | {warned:.0%} |"
    )


def table(df: pd.DataFrame, runs: int = 300, seed: int = 19) -> list[str]:
    """The README's table: one row per statistic, ε and method (``runs`` calls each)."""
    truth = {"mean": df["income"].mean(), "std": df["income"].std()}
    lines = list(HEADER)
    for statistic in ("mean", "std"):
        for epsilon in EPSILONS:
            for method in ("auto", "p95", "p99"):
                got = answers(df, METHODS[statistic, method], epsilon, runs, seed)
                lines.append(_row(statistic, epsilon, method, got, truth[statistic]))
    for epsilon in EPSILONS[:2]:
        got = answers(df, _described, epsilon, runs, seed)
        for row in ("mean", "std"):
            picked = [(None if g is None else g[row], poor) for g, poor in got]
            lines.append(_row(f"describe {row}", epsilon, "auto", picked, truth[row]))
    return lines


TOPS_HEADER = (
    "| data | release | upper bound / p99.9 (median) | share clipped (median) "
    "| mean: median error | mean: worst run |",
    "|---|---|---|---|---|---|",
)


def tops(frames: dict[str, pd.DataFrame], runs: int = 300, seed: int = 19) -> list[str]:
    """Issue 31's bound targets at ε = 1: where ``clip="auto"`` and ``bounds()`` stop.

    For each frame (one column, ``income``): the chosen upper bound over the
    column's 99.9th percentile and the share of values outside the bounds (the
    median over ``runs`` seeded calls), and for ``clip="auto"`` the mean's
    median and largest relative error.
    """
    lines = list(TOPS_HEADER)
    for name, df in frames.items():
        x = df["income"]
        top, truth = x.quantile(0.999), x.mean()
        frame = df.copy()
        frame.dp.set_budget(epsilon=2 * runs, seed=seed)
        auto = pd.DataFrame(
            [frame.dp.mean("income", clip="auto", epsilon=1, ci=0.5) for _ in range(runs)]
        )
        alone = np.array([frame.dp.bounds("income", epsilon=1) for _ in range(runs)])
        for release, pairs, estimates in (
            ('mean(clip="auto")', auto[["clip_lower", "clip_upper"]].to_numpy(), auto["estimate"]),
            ("bounds()", alone, None),
        ):
            ratio = np.median(pairs[:, 1]) / top
            clipped = np.median([((x < lo) | (x > hi)).mean() for lo, hi in pairs])
            errors = "| — | — |"
            if estimates is not None:
                e = np.abs(estimates.to_numpy() / truth - 1)
                errors = f"| {np.median(e):.1%} | {e.max():.1%} |"
            lines.append(f"| {name} | {release} | {ratio:.2f} | {clipped:.2%} {errors}")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=300)
    parser.add_argument("--seed", type=int, default=19)
    parser.add_argument("--data", type=Path, default=DATA, help="the PUMS income CSV")
    args = parser.parse_args()
    if not args.data.is_file():
        raise SystemExit(f"needs {args.data} (pass --data PATH to pums_1000.csv)")
    df = pd.read_csv(args.data)[["income"]]
    print(
        f"PUMS income: n = {len(df)}, mean {df['income'].mean():,.0f}, "
        f"std {df['income'].std():,.0f}; {args.runs} runs per row, seed {args.seed}\n"
    )
    print("\n".join(table(df, args.runs, args.seed)))
    print(f"\nWhere the bounds stop, epsilon = 1, {args.runs} runs (prices: datasets.prices)\n")
    price = prices(54_000, seed=0)[["price"]].rename(columns={"price": "income"})
    frames = {"PUMS income (n = 1,000)": df, "prices (n = 54,000)": price}
    print("\n".join(tops(frames, args.runs, args.seed)))


if __name__ == "__main__":
    main()
