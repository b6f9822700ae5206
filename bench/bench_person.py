"""Person-level releases (a privacy unit) against the plain pandas recipe, in one process.

    python bench/bench_person.py                    # 20,000,000 rows over 2,000,000 persons
    python bench/bench_person.py --rows 2e6         # quicker (persons scale with rows)

Two frames of ``--rows`` rows over ``rows / 10`` persons, 20 public keys:

* ``skewed``: most persons a few rows (geometric), and ``rows / 20,000`` heavy
  users with 1,000 rows each (1,000 of them at 20,000,000 rows);
* ``crowded``: about 10 rows per person (Poisson), so most persons exceed ``max_rows=5``.

Each line times a release and its pandas counterpart alternately, three times
each, and prints the medians and their ratio (targets in brackets):

* ``count``: ``df.dp.count(max_rows=3)`` against ``df[unit].nunique()`` [<= 2.0];
* ``grouped count``: ``groupby(key).count(max_rows=3, max_groups=2)`` against
  ``df.groupby([unit, key]).size()`` [<= 1.0];
* ``sum`` / ``mean``: ``df.dp.sum/mean(col, max_rows=K)`` against
  ``df.sample(frac=1).groupby(unit).head(K)[col].clip(L, U).sum()`` [<= 1.0];

and the extra memory of the count (tracemalloc peak of the call, bytes per row) [<= 40].
"""

from __future__ import annotations

import argparse
import gc
import statistics
import time
import tracemalloc
from collections.abc import Callable

import numpy as np
import pandas as pd

import pandas_dp  # noqa: F401

CLIP = (0.0, 500.0)
N_KEYS = 20
HEAVY_ROWS = 1_000


def skewed(rows: int, persons: int, rng: np.random.Generator) -> np.ndarray:
    """Unit ids: ``rows // 20,000`` heavy users of 1,000 rows, the rest a few rows each."""
    heavy = max(rows // 20_000, 1)
    light_rows = rows - heavy * HEAVY_ROWS
    light = persons - heavy
    weight = 1.0 / np.arange(1, light + 1, dtype=np.float64) ** 0.6  # Zipf-like activity
    ids = np.concatenate(
        [
            np.repeat(np.arange(heavy), HEAVY_ROWS),
            heavy + rng.choice(light, size=light_rows, p=weight / weight.sum()),
        ]
    )
    return ids[rng.permutation(ids.size)]


def frame(shape: str, rows: int, persons: int) -> pd.DataFrame:
    rng = np.random.Generator(np.random.PCG64(5))
    unit = skewed(rows, persons, rng) if shape == "skewed" else rng.integers(0, persons, size=rows)
    return pd.DataFrame(
        {
            "customer_id": unit.astype(np.int64),
            "key": rng.integers(0, N_KEYS, size=rows),
            "amount": np.round(rng.lognormal(np.log(40.0), 0.8, size=rows), 2),
        }
    )


def medians(
    dp: Callable[[], object], plain: Callable[[], object], repeat: int
) -> tuple[float, float]:
    """Median wall times of ``dp`` and ``plain``, run alternately ``repeat`` times each."""
    a: list[float] = []
    b: list[float] = []
    for _ in range(repeat):
        for fn, out in ((dp, a), (plain, b)):
            gc.collect()
            start = time.perf_counter()
            fn()
            out.append(time.perf_counter() - start)
    return statistics.median(a), statistics.median(b)


def peak_bytes(fn: Callable[[], object]) -> int:
    gc.collect()
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def bench_shape(shape: str, rows: int, repeat: int) -> None:
    """Print the lines of one frame shape."""
    persons = max(rows // 10, 1)
    keys = np.arange(N_KEYS)
    df = frame(shape, rows, persons)
    df.dp.set_budget(epsilon=1e12, privacy_unit="customer_id")
    k = 3 if shape == "skewed" else 5
    per_person = df.groupby("customer_id").size()
    print(
        f"{shape}: {rows:,} rows, {per_person.size:,} persons (max {per_person.max():,} rows, "
        f"{(per_person > k).mean():.0%} over {k}), medians of {repeat}"
    )

    def report(label: str, dp: Callable[[], object], plain: Callable[[], object]) -> None:
        t_dp, t_plain = medians(dp, plain, repeat)
        print(
            f"  {label:<44} {t_dp * 1e3:9.1f} ms  pandas {t_plain * 1e3:9.1f} ms  "
            f"ratio {t_dp / t_plain:.2f}"
        )

    unit = df["customer_id"]
    if shape == "skewed":
        report(
            "count(max_rows=3) vs nunique",
            lambda: df.dp.count(epsilon=1.0, max_rows=3),
            unit.nunique,
        )
        report(
            "groupby.count(3, max_groups=2) vs size",
            lambda: df.dp.groupby("key", keys=keys).count(epsilon=1.0, max_rows=3, max_groups=2),
            lambda: df.groupby(["customer_id", "key"]).size(),
        )
        extra = peak_bytes(lambda: df.dp.count(epsilon=1.0, max_rows=3))
        print(f"  {'count(max_rows=3) extra memory':<44} {extra / rows:9.1f} bytes/row")

    def plain_head() -> object:
        return df.sample(frac=1).groupby("customer_id").head(k)["amount"].clip(*CLIP).sum()

    for name in ("sum", "mean"):
        release = getattr(df.dp, name)
        report(
            f"{name}(max_rows={k}) vs sample/head/clip/sum",
            lambda release=release: release("amount", clip=CLIP, epsilon=1.0, max_rows=k),
            plain_head,
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=float, default=2e7)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--shape", choices=["skewed", "crowded", "both"], default="both")
    args = parser.parse_args()
    for shape in ["skewed", "crowded"] if args.shape == "both" else [args.shape]:
        bench_shape(shape, int(args.rows), args.repeat)


if __name__ == "__main__":
    main()
