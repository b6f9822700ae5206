"""Joint quantiles (JointExp) against the split of ε over separate releases, and their speed.

Rank error: n = 1,000 values of N(0, 5²), the grid ``np.linspace(-50, 50,
2001)`` for both methods; the mean over levels and runs of how many data
points the released value is from being a q-quantile (0 when it is one).

- ``joint``: ``df.dp.quantile("x", levels, candidates=GRID, epsilon=ε)``, one
  release (the exponential mechanism over ordered vectors, sampled exactly);
- ``split``: each level its own single-level release (permute-and-flip) at
  ``ε/m``, what a list of levels did before issue 31.

Settings: describe's quartiles at ½ of ε = 1 (the issue's targets: joint at
most 5.5 points, split 7.5), and 19 levels (5 %..95 %) at ε = 1 (at most 9;
split 39).  Then the time of one joint release of 19 levels at n = 1,000
(the sampling alone, and the whole call), and of ``--large`` rows (one
histogram pass, then the same sampling; 10 million is the issue's target),
with how far the whole call's answers land from the true quantiles there, in
steps of the grid, over 9 seeds (a large table is answered at the grid points
nearest its quantiles: at most 1 step).

Run ``python bench/bench_quantiles.py [--runs 200] [--seed 5] [--large 10000000]``.
"""

from __future__ import annotations

import argparse
import time
from fractions import Fraction

import numpy as np
import pandas as pd

import pandas_dp  # noqa: F401  (registers df.dp)
from pandas_dp.core.noise import SeededSource
from pandas_dp.kinds._joint import joint_sample, kernel, runs
from pandas_dp.kinds.base import Neighbours
from pandas_dp.kinds.quantile import plan_joint, quantile_table

GRID = np.linspace(-50, 50, 2001)
SETTINGS = (
    ("describe's quartiles", [0.25, 0.5, 0.75], 0.5),
    ("19 levels, 5%..95%", [j / 20 for j in range(1, 20)], 1.0),
)


def rank_error(x: np.ndarray, q: float, value: float) -> float:
    """How many data points ``value`` is from being a q-quantile of ``x``."""
    below, at_most, target = (x < value).sum(), (x <= value).sum(), q * x.size
    return float(max(below - target, target - at_most, 0.0))


def errors(levels: list[float], epsilon: float, runs_: int, seed: int) -> tuple[float, float]:
    """Mean rank error of the joint release and of the split, on the same data and seeds."""
    rng = np.random.default_rng(seed)
    joint, split = [], []
    for r in range(runs_):
        x = rng.normal(0, 5, 1_000)
        df = pd.DataFrame({"x": x})
        df.dp.set_budget(epsilon=2 * epsilon, seed=seed + r)
        got = df.dp.quantile("x", levels, candidates=GRID, epsilon=epsilon)
        joint += [rank_error(x, q, v) for q, v in got.items()]
        each = float(Fraction(repr(epsilon)) / len(levels))
        split += [
            rank_error(x, q, df.dp.quantile("x", q, candidates=GRID, epsilon=each)) for q in levels
        ]
    return float(np.mean(joint)), float(np.mean(split))


def timings(n: int, repeats: int) -> tuple[float, float]:
    """Best time of (the histogram pass, the sampling) of 19 levels over ``n`` rows."""
    x = np.random.default_rng(0).normal(0, 5, n)
    levels = tuple(Fraction(j, 20) for j in range(1, 20))
    plan = plan_joint(levels, Fraction(1), Neighbours.of("add_remove"))
    kern = kernel(plan.rate)
    src = SeededSource(0)
    tally = sample = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        table = quantile_table(x, None, 1, GRID)[0]
        middle = time.perf_counter()
        found = runs(table[0], table[1, :-1], plan.scale, plan.sub)
        joint_sample(src, kern, found, plan.targets(n), plan.sub)
        end = time.perf_counter()
        tally, sample = min(tally, middle - start), min(sample, end - middle)
    return tally, sample


def large_accuracy(n: int) -> None:
    """The whole call on ``n`` rows: the farthest answer from its quantile, in grid steps."""
    x = np.random.default_rng(2).normal(0, 5, n)
    step = GRID[1] - GRID[0]
    for name, levels, epsilon in SETTINGS:
        true = np.quantile(x, levels)
        worst, cpu = 0.0, float("inf")
        for seed in range(9):
            df = pd.DataFrame({"x": x})
            df.dp.set_budget(epsilon=2 * epsilon, seed=seed)
            start = time.process_time()
            got = df.dp.quantile("x", levels, candidates=GRID, epsilon=epsilon).to_numpy()
            cpu = min(cpu, time.process_time() - start)
            worst = max(worst, float(np.abs(got - true).max() / step))
        print(
            f"{name}, n = {n:,}, ε = {epsilon:g}: farthest answer {worst:.2f} grid steps "
            f"from its quantile over 9 seeds; the whole call {cpu:.2f} s of CPU"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--seed", type=int, default=5)
    parser.add_argument(
        "--large",
        type=int,
        default=10_000_000,
        help="rows of the second timing and of the large table's accuracy",
    )
    args = parser.parse_args()
    print("| levels | ε | joint: mean rank error | split: mean rank error | ratio |")
    print("|---|---|---|---|---|")
    for name, levels, epsilon in SETTINGS:
        joint, split = errors(levels, epsilon, args.runs, args.seed)
        print(f"| {name} | {epsilon:g} | {joint:.1f} | {split:.1f} | {split / joint:.1f}x |")
    print()
    for n, repeats in ((1_000, 20), (args.large, 2)):
        tally, sample = timings(n, repeats)
        ms = f"histogram {1e3 * tally:.1f} ms, sampling {1e3 * sample:.1f} ms"
        print(f"19 levels, n = {n:,}: {ms}")
    large_accuracy(args.large)
    df = pd.DataFrame({"x": np.random.default_rng(1).normal(0, 5, 1_000)})
    df.dp.set_budget(epsilon=1e6)
    best = cpu = float("inf")
    for _ in range(20):
        start, start_cpu = time.perf_counter(), time.process_time()
        df.dp.quantile("x", [j / 20 for j in range(1, 20)], candidates=GRID, epsilon=1)
        best = min(best, time.perf_counter() - start)
        cpu = min(cpu, time.process_time() - start_cpu)
    print(
        f"the whole call, 19 levels, n = 1,000: {1e3 * best:.1f} ms wall, {1e3 * cpu:.1f} ms CPU "
        "(best of 20; CPU time is what a loaded machine does not inflate)"
    )


if __name__ == "__main__":
    main()
