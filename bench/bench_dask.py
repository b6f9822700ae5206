"""Grouped DP mean from parquet files: pandas against Dask, each in a fresh process.

    python bench/bench_dask.py                     # 20,000,000 rows, 10,000 public keys
    python bench/bench_dask.py --rows 2e8          # the bigger-than-memory case
    python bench/bench_dask.py --rows 2e6 --repeat 1   # quick
    python bench/bench_dask.py --unit --rows 2e7       # person-level releases
    python bench/bench_dask.py --unit --baseline DIR   # and Dask with DIR's pandas_dp

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
max_groups=5)``).  The person count chooses no rows, so pandas and Dask must
release the same count; which rows the mean keeps depends on the seed and the
partitioning, so only each engine's repeats (same seed and partitioning) must
agree on it.

The engines run alternately, ``--repeat`` times each.  The script reports each
run's wall time (imports, read and releases, measured inside the process), peak
resident memory (``ru_maxrss`` of the process) and, with ``--unit``, the time of
each release; then the medians and the Dask/pandas ratios of the medians.  Both
paths use the same seed and, without a unit, the script checks that they
release the same Series.  ``--baseline DIR`` also runs Dask with the
``pandas_dp`` package found in ``DIR`` (e.g. ``git archive main pandas_dp | tar
-x -C DIR``), so before and after are measured against the same pandas runs.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

N_KEYS = 10_000
REPO = Path(__file__).resolve().parents[1]
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
times = {}
if unit:
    data.dp.set_budget(epsilon=1.0, seed=1, privacy_unit="pid")
    t = time.perf_counter()
    persons = data.dp.count(epsilon=0.5, max_rows=1)
    times["count"] = time.perf_counter() - t
    t = time.perf_counter()
    result = data.dp.groupby("k", keys=keys).mean(
        "x", clip=(0.0, 200_000.0), epsilon=0.5, max_rows=5, max_groups=5
    )
    times["mean"] = time.perf_counter() - t
    times["persons"] = float(persons)
    result = pd.concat([result, pd.Series([float(persons)])])
else:
    data.dp.set_budget(epsilon=1.0, seed=1)
    result = data.dp.groupby("k", keys=keys).mean("x", clip=(0.0, 200_000.0), epsilon=0.5)
wall = time.perf_counter() - start
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
digest = float(np.nansum(result.to_numpy() * np.arange(1, len(result) + 1)))
figures = {"wall": wall, "peak": peak, "digest": digest, **times}
print(json.dumps({"path": pandas_dp.__file__, **figures}))
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


def run(folder: Path, engine: str, unit: bool, baseline: Path | None) -> dict[str, Any]:
    """One run in a fresh process; ``dask-before`` imports pandas_dp from ``baseline``.

    The child runs in the data folder (``python -c`` puts its working directory
    first on the path), with this checkout's or the baseline's package on the path.
    """
    root = baseline if engine == "dask-before" and baseline is not None else REPO
    path = os.pathsep.join([str(root), os.environ.get("PYTHONPATH", "")])
    env = {**os.environ, "PYTHONPATH": path}
    out = subprocess.run(
        [sys.executable, "-c", CHILD, str(folder), engine, "unit" if unit else "rows"],
        capture_output=True,
        text=True,
        check=True,
        env=env,
        cwd=folder,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


FIGURES = ("wall", "peak", "count", "mean")


def _figures(result: dict[str, Any]) -> str:
    line = f"wall {result['wall']:6.2f} s   peak {result['peak'] / 2**30:5.2f} GiB"
    if "count" in result:
        line += f"   count {result['count']:6.2f} s   mean {result['mean']:6.2f} s"
    return line


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=float, default=20_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--dir", type=Path, default=None, help="where to write the parquet files")
    parser.add_argument("--skip-pandas", action="store_true", help="when pandas cannot fit")
    parser.add_argument("--unit", action="store_true", help="person-level releases (pid)")
    parser.add_argument(
        "--baseline",
        type=Path,
        default=None,
        help="a folder holding an older pandas_dp package: also run Dask with it (dask-before)",
    )
    args = parser.parse_args()
    rows = int(args.rows)
    name = f"pandas_dp_bench_dask_{rows}{'_unit' if args.unit else ''}"
    folder = args.dir or Path(tempfile.gettempdir()) / name
    t0 = time.perf_counter()
    write(folder, rows, args.unit)
    print(f"{rows:,} rows in {folder} ({time.perf_counter() - t0:.1f} s to prepare)")
    engines = ["dask"] if args.skip_pandas else ["pandas", "dask"]
    if args.baseline is not None:
        engines.append("dask-before")
    runs: dict[str, list[dict[str, Any]]] = {engine: [] for engine in engines}
    for _ in range(args.repeat):
        for engine in engines:  # alternately, each in a fresh process
            result = run(folder, engine, args.unit, args.baseline)
            print(f"  {engine:6s} {_figures(result)}")
            where = Path(result.pop("path")).parent
            if not runs[engine]:
                print(f"  {engine:6s} imports {where}")
            if runs[engine] and runs[engine][0]["digest"] != result["digest"]:
                raise SystemExit("the same seed gave another release")
            runs[engine].append(result)
    median = {
        engine: {f: statistics.median(r[f] for r in seen) for f in FIGURES if f in seen[0]}
        for engine, seen in runs.items()
    }
    for engine, result in median.items():
        print(f"median {engine:6s} {_figures(result)}")
    if "pandas" not in median:
        return
    for engine in [e for e in median if e != "pandas"]:
        if not args.unit and runs["pandas"][0]["digest"] != runs[engine][0]["digest"]:
            raise SystemExit("pandas and dask released different answers from the same seed")
        counts = [runs[e][0].get("persons") for e in ("pandas", engine)]
        if engine == "dask" and counts[0] != counts[1]:  # a count chooses nothing: same noise
            raise SystemExit("pandas and dask released different person counts")
        same = "same release, bit for bit"
        if args.unit:
            same = "same count, repeats agree" if engine == "dask" else "repeats agree"
        ratios = ", ".join(
            f"{f} {median[engine][f] / median['pandas'][f]:.2f}x" for f in median[engine]
        )
        print(f"{engine} / pandas (medians): {ratios} ({same})")


if __name__ == "__main__":
    main()
