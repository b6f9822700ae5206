"""Speed of the core releases against plain pandas, measured in the same run.

    python bench/bench_core.py            # 10,000,000 rows (about 1 minute)
    python bench/bench_core.py --rows 1e6 # quicker

Reports best-of-N wall times and the ratio to the plain pandas equivalent:

- ``df.dp.mean`` and ``df.dp.count`` on a large frame against
  ``df.salary.clip(L, U).mean()`` and ``len(df)``-style ``df.salary.count()``;
- the per-call overhead of ``df.dp.mean`` on a 1,000-row frame (µs per call, its
  ratio to ``clip().mean()``: target at most 0.25), and how much a grouped mean over
  3 public keys adds to it (target: at most 20 µs), with ``df.dp.groupby(...)``
  called for each release as a user writes it, and made once (the release alone),
  and the grouped mean's ratio to pandas' own ``groupby("key").salary.mean()``.
  These are timed in alternation (``--small`` runs only them).
"""

from __future__ import annotations

import argparse
import gc
import time
from collections.abc import Callable

import numpy as np
import pandas as pd

import pandas_dp  # noqa: F401

CLIP = (0.0, 200_000.0)


def best_of(fn: Callable[[], object], repeat: int, number: int = 1) -> float:
    """The best mean time per call over ``repeat`` runs of ``number`` calls."""
    best = float("inf")
    for _ in range(repeat):
        gc.collect()
        start = time.perf_counter()
        for _ in range(number):
            fn()
        best = min(best, (time.perf_counter() - start) / number)
    return best


def alternating(fns: dict[str, Callable[[], object]], repeat: int, number: int) -> dict[str, float]:
    """The best mean time per call of each function, timed in turns (``repeat`` rounds)."""
    best = dict.fromkeys(fns, float("inf"))
    for _ in range(repeat):
        for name, fn in fns.items():
            gc.collect()
            start = time.perf_counter()
            for _ in range(number):
                fn()
            best[name] = min(best[name], (time.perf_counter() - start) / number)
    return best


def frame(rows: int) -> pd.DataFrame:
    rng = np.random.Generator(np.random.PCG64(0))
    salary = rng.lognormal(np.log(60_000), 0.5, size=rows)
    return pd.DataFrame({"salary": salary})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=float, default=1e7)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--small", action="store_true", help="only the 1,000-row timings")
    args = parser.parse_args()
    if not args.small:
        large(int(args.rows), args.repeat)
    small_frame(args.repeat)


def large(rows: int, repeat: int) -> None:
    df = frame(rows)
    df.dp.set_budget(epsilon=1e12)
    results = {
        "dp.mean": best_of(lambda: df.dp.mean("salary", clip=CLIP, epsilon=1.0), repeat),
        "pandas clip().mean()": best_of(lambda: df.salary.clip(*CLIP).mean(), repeat),
        "dp.count(col)": best_of(lambda: df.dp.count("salary", epsilon=1.0), repeat),
        "pandas count()": best_of(lambda: df.salary.count(), repeat),
        "dp.sum": best_of(lambda: df.dp.sum("salary", clip=CLIP, epsilon=1.0), repeat),
        "pandas clip().sum()": best_of(lambda: df.salary.clip(*CLIP).sum(), repeat),
    }
    print(f"{rows:,} rows (best of {repeat})")
    for name, seconds in results.items():
        print(f"  {name:<24}{seconds * 1e3:9.1f} ms")
    print(f"  ratio mean  dp/pandas: {results['dp.mean'] / results['pandas clip().mean()']:.2f}")
    print(f"  ratio sum   dp/pandas: {results['dp.sum'] / results['pandas clip().sum()']:.2f}")
    print(f"  ratio count dp/pandas: {results['dp.count(col)'] / results['pandas count()']:.2f}")


def small_frame(repeat: int) -> None:
    small = frame(1_000)
    small["key"] = np.arange(1_000) % 3
    small.dp.set_budget(epsilon=1e12)
    keys = [0, 1, 2]
    grouped = small.dp.groupby("key", keys=keys)
    t = alternating(
        {
            "mean": lambda: small.dp.mean("salary", clip=CLIP, epsilon=1.0),
            "pandas": lambda: small.salary.clip(*CLIP).mean(),
            "grouped": lambda: small.dp.groupby("key", keys=keys).mean(
                "salary", clip=CLIP, epsilon=1.0
            ),
            "grouped once": lambda: grouped.mean("salary", clip=CLIP, epsilon=1.0),
            "count": lambda: small.dp.count(epsilon=1.0),
            "pandas grouped": lambda: small.groupby("key").salary.mean(),
        },
        max(repeat, 5),
        2_000,
    )
    print(f"1,000 rows, per call (best of {max(repeat, 5)}, in alternation):")
    print(f"  dp.mean                 {t['mean'] * 1e6:9.1f} µs")
    print(f"  dp.groupby(3 keys).mean {t['grouped'] * 1e6:9.1f} µs")
    print(f"  the same, groupby once  {t['grouped once'] * 1e6:9.1f} µs")
    print(f"  dp.count                {t['count'] * 1e6:9.1f} µs")
    print(f"  pandas clip().mean()    {t['pandas'] * 1e6:9.1f} µs")
    print(f"  pandas groupby().mean() {t['pandas grouped'] * 1e6:9.1f} µs")
    print(f"  ratio mean  dp/pandas: {t['mean'] / t['pandas']:.2f} (target <= 0.25)")
    print(f"  grouped - ungrouped:   {(t['grouped'] - t['mean']) * 1e6:.1f} µs (target <= 20)")
    print(f"    with groupby once:   {(t['grouped once'] - t['mean']) * 1e6:.1f} µs")
    print(
        f"  ratio grouped mean dp/pandas groupby().mean(): {t['grouped'] / t['pandas grouped']:.2f}"
    )


if __name__ == "__main__":
    main()
