"""Grouped releases against plain pandas, measured in the same run.

    python bench/bench_groupby.py                  # 10,000,000 rows, 10,000 keys
    python bench/bench_groupby.py --rows 1e6       # quicker

For string keys and for categorical keys, times
``df.dp.groupby("key", keys=KEYS).mean("salary", clip=..., epsilon=...)`` (and
``.count``) against ``df.groupby("key")["salary"].agg(["sum", "count"]).reindex(KEYS)``
and prints best-of-N times and the ratios.
"""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd
from bench_core import best_of

import pandas_dp  # noqa: F401

CLIP = (0.0, 200_000.0)


def frame(rows: int, n_keys: int) -> tuple[pd.DataFrame, list[str]]:
    rng = np.random.Generator(np.random.PCG64(1))
    keys = [f"key-{i:05d}" for i in range(n_keys)]
    codes = rng.integers(0, n_keys, size=rows)
    df = pd.DataFrame(
        {
            "key": np.array(keys, dtype=object)[codes],
            "salary": rng.lognormal(np.log(60_000), 0.5, size=rows),
        }
    )
    return df, keys


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=float, default=1e7)
    parser.add_argument("--keys", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    df, keys = frame(int(args.rows), args.keys)
    cat = df.assign(key=df["key"].astype(pd.CategoricalDtype(keys)))
    print(f"{len(df):,} rows, {len(keys):,} keys (best of {args.repeat})")
    for label, data in (("string keys", df), ("categorical keys", cat)):
        data.dp.set_budget(epsilon=1e12)
        group = data.dp.groupby("key", keys=keys)
        t_mean = best_of(lambda g=group: g.mean("salary", clip=CLIP, epsilon=1.0), args.repeat)
        t_sum = best_of(lambda g=group: g.sum("salary", clip=CLIP, epsilon=1.0), args.repeat)
        t_count = best_of(lambda g=group: g.count(epsilon=1.0), args.repeat)
        t_pandas = best_of(
            lambda d=data: (
                d.groupby("key", observed=True)["salary"].agg(["sum", "count"]).reindex(keys)
            ),
            args.repeat,
        )
        print(f"  {label}:")
        print(f"    pandas agg(sum, count)   {t_pandas * 1e3:8.1f} ms")
        for name, seconds in (("mean", t_mean), ("sum", t_sum), ("count", t_count)):
            ratio = seconds / t_pandas
            print(f"    dp {name:<22}{seconds * 1e3:8.1f} ms   ratio {ratio:.2f}")


if __name__ == "__main__":
    main()
