"""Grouped DP mean from parquet files: pandas against Dask, each in a fresh process.

    python bench/bench_dask.py                     # 20,000,000 rows, 10,000 public keys
    python bench/bench_dask.py --rows 2e8          # the bigger-than-memory case
    python bench/bench_dask.py --rows 2e6 --repeat 1   # quick
    python bench/bench_dask.py --unit --rows 5e6       # person-level releases

Writes parquet files of 1,000,000 rows each (``k`` int64 in [0, 10050): 50 keys
outside the public ones; ``x`` float64 with 1 % missing) into ``--dir`` (a
temporary folder by default), then runs, each in a fresh Python process,

* pandas: ``pd.read_parquet(dir)`` and
  ``df.dp.groupby("k", keys=KEYS).mean("x", clip=(0, 200_000), epsilon=0.5)``;
* dask: ``dd.read_parquet(dir)`` and the same call on ``ddf.dp`` (threaded scheduler),

With ``--unit`` the files also hold ``pid`` (``rows / 10`` persons, 2 % of the
rows from ``rows / 50,000`` heavy users) and ``k`` has 20 public keys; both
engines set ``privacy_unit="pid"`` and release the person count
(``count(epsilon=0.5, max_rows=1)``) and the person-level grouped mean
(``groupby("k", keys=range(20)).mean("x", clip=..., epsilon=0.5, max_rows=5,
max_groups=5)``).  Which rows a bounded release keeps depends on the
partitioning, so pandas and Dask are not compared bit for bit then; each
engine's repeats (same seed and partitioning) must agree.

The script reports each run's wall time (imports, read and release, measured inside the
process) and peak resident memory (``ru_maxrss`` of the process), the best of
``--repeat`` runs, and the Dask/pandas ratios.  Both paths use the same seed and
the script checks that they release the same Series.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

N_KEYS = 10_000
UNIT_KEYS = 20
PART = 1_000_000

CHILD = r"""
import json, resource, sys, time
start = time.perf_counter()
import numpy as np, pandas as pd
import pandas_dp
path, engine, unit = sys.argv[1], sys.argv[2], sys.argv[3] == "unit"
keys = np.arange(UNIT_KEYS if unit else N_KEYS)
if engine == "pandas":
    data = pd.read_parquet(path)
else:
    import dask, dask.dataframe as dd
    import pandas_dp.dask
    dask.config.set(scheduler="threads")
    data = dd.read_parquet(path)
if unit:
    data.dp.set_budget(epsilon=1.0, seed=1, privacy_unit="pid")
    persons = data.dp.count(epsilon=0.5, max_rows=1)
    result = data.dp.groupby("k", keys=keys).mean(
        "x", clip=(0.0, 200_000.0), epsilon=0.5, max_rows=5, max_groups=5
    )
    result = pd.concat([result, pd.Series([float(persons)])])
else:
    data.dp.set_budget(epsilon=1.0, seed=1)
    result = data.dp.groupby("k", keys=keys).mean("x", clip=(0.0, 200_000.0), epsilon=0.5)
wall = time.perf_counter() - start
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
digest = float(np.nansum(result.to_numpy() * np.arange(1, len(result) + 1)))
print(json.dumps({"wall": wall, "peak": peak, "digest": digest}))
""".replace("UNIT_KEYS", str(UNIT_KEYS)).replace("N_KEYS", str(N_KEYS))


def write(folder: Path, rows: int, unit: bool) -> None:
    """Parquet files of ``PART`` rows each (reused when they are already there)."""
    marker = folder / f"_rows_{rows}_{'unit' if unit else 'rows'}"
    if marker.exists():
        return
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.glob("*.parquet"):
        old.unlink()
    rng = np.random.Generator(np.random.PCG64(7))
    for i, start in enumerate(range(0, rows, PART)):
        n = min(PART, rows - start)
        x = rng.normal(50_000, 30_000, size=n)
        x[rng.uniform(size=n) < 0.01] = np.nan
        if unit:
            persons, heavy = max(rows // 10, 2), max(rows // 50_000, 1)
            pid = np.where(
                rng.uniform(size=n) < heavy * 1_000 / rows,
                rng.integers(0, heavy, size=n),
                rng.integers(heavy, persons, size=n),
            )
            frame = pd.DataFrame({"pid": pid, "k": rng.integers(0, UNIT_KEYS, size=n), "x": x})
        else:
            frame = pd.DataFrame({"k": rng.integers(0, N_KEYS + 50, size=n), "x": x})
        frame.to_parquet(folder / f"part-{i:05d}.parquet", index=False)
    marker.touch()


def run(folder: Path, engine: str, unit: bool) -> dict[str, float]:
    out = subprocess.run(
        [sys.executable, "-c", CHILD, str(folder), engine, "unit" if unit else "rows"],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def _figures(result: dict[str, float]) -> str:
    return f"wall {result['wall']:6.2f} s   peak {result['peak'] / 2**30:5.2f} GiB"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=float, default=20_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--dir", type=Path, default=None, help="where to write the parquet files")
    parser.add_argument("--skip-pandas", action="store_true", help="when pandas cannot fit")
    parser.add_argument("--unit", action="store_true", help="person-level releases (pid)")
    args = parser.parse_args()
    rows = int(args.rows)
    name = f"pandas_dp_bench_dask_{rows}{'_unit' if args.unit else ''}"
    folder = args.dir or Path(tempfile.gettempdir()) / name
    t0 = time.perf_counter()
    write(folder, rows, args.unit)
    print(f"{rows:,} rows in {folder} ({time.perf_counter() - t0:.1f} s to prepare)")
    engines = ["dask"] if args.skip_pandas else ["pandas", "dask"]
    best: dict[str, dict[str, float]] = {}
    for _ in range(args.repeat):
        for engine in engines:
            result = run(folder, engine, args.unit)
            print(f"  {engine:6s} {_figures(result)}")
            seen = best.setdefault(engine, result)
            seen["wall"] = min(seen["wall"], result["wall"])
            seen["peak"] = min(seen["peak"], result["peak"])
            if seen["digest"] != result["digest"]:
                raise SystemExit("the same seed gave another release")
    for engine, result in best.items():
        print(f"best {engine:6s} {_figures(result)}")
    if len(best) == 2:
        if not args.unit and best["pandas"]["digest"] != best["dask"]["digest"]:
            raise SystemExit("pandas and dask released different answers from the same seed")
        same = "repeats agree" if args.unit else "same release, bit for bit"
        print(
            f"dask / pandas: time {best['dask']['wall'] / best['pandas']['wall']:.2f}x, "
            f"peak memory {best['dask']['peak'] / best['pandas']['peak']:.2f}x ({same})"
        )


if __name__ == "__main__":
    main()
