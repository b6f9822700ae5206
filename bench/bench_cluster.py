"""``ddf.dp`` on a ``distributed.LocalCluster`` against Dask's own, bigger than a worker.

    python bench/bench_cluster.py                          # 100,000,000 rows; 1, 2 and 4 workers
    python bench/bench_cluster.py --rows 2e7 --workers 2   # quicker
    python bench/bench_cluster.py --releases mean,count --repeat 3

Writes parquet files of 1,000,000 rows each into ``--dir`` (a temporary
folder by default; reused when it already holds the same rows): ``pid``
int64 (``rows / 10`` persons, 2 % of the rows from ``rows / 50,000`` heavy
users), ``k`` int64 in [0, 10050) (10,000 public keys), ``x`` float64 (1 %
missing), ``y`` float64, ``product`` str (5,000 names, Zipf-like): 45 bytes a
row in memory, 4.2 GiB at 100,000,000 rows, about four times a worker's
``--memory-limit`` (1 GiB).

Then, for each ``--workers`` count, in a fresh process, a cluster of that
many process workers (one thread each, ``memory_limit`` as given, every
other setting Dask's default) runs each release and the same computation
without privacy (Dask's own), alternately, ``--repeat`` times:

- ``mean``: ``groupby("k", keys=range(10_000)).mean("x", clip=(0, 200_000))``;
  Dask: ``assign(x=x.clip(0, 200_000)).groupby("k").x.mean()``.
- ``value_counts``: ``value_counts("product", delta=1e-7)``; Dask:
  ``product.value_counts()``.
- ``auto``: ``mean("x", clip="auto")`` (a count, the bounds, the mean: three
  passes); Dask: ``x.mean()`` (one).
- ``count``: the person count, ``max_rows=5``; Dask: ``[["pid"]].shuffle("pid")``
  (each person's rows brought together, Dask's way), then in each partition
  the rows per person capped at 5, summed.
- ``grouped_count``: ``groupby("k", keys=...).count(max_rows=1, max_groups=5)``;
  Dask: ``[["pid", "k"]].shuffle("pid")``, then in each partition the distinct
  (person, key) pairs counted per key, added up over the partitions.
- ``sum``: ``sum("x", clip=(0, 200_000), max_rows=5)``; Dask:
  ``[["pid", "x"]].shuffle("pid")``, then in each partition the first 5 rows
  of each person, clipped, summed.
- ``unit_value_counts``: ``value_counts("product", max_rows=1, max_groups=5)``;
  Dask: as ``grouped_count``, per product.

A run that fails (Dask's own computation killing its workers, say) is
reported and the script goes on.

The first three read a collection whose budget has one row per person, the
last four one with ``privacy_unit="pid"``; each release reads a collection
of its own (its own columns), so its first run is the first release of a
budget seeded 1.  For every run: wall time, the peak resident memory of each
worker (sampled every 50 ms), the bytes the workers sent (to one another and
to this process: ``transfer_outgoing_bytes_total``), the bytes they spilled
to disk (their ``SpillBuffer``'s, not a P2P shuffle's own files), and whether
a worker died or was restarted.  Last, unless ``--no-threads``, the releases
and Dask's own run once more on the threaded scheduler in a fresh process,
with the same seeds: the script checks that every release (first run) is the same number
on every cluster and on threads, and reports the ratios ``ddf.dp`` / Dask's
own (medians), the time on threads, and the figures per worker.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import dask
import dask.dataframe as dd
import distributed
import numpy as np
import pandas as pd
import psutil
from dask.utils import parse_bytes

import pandas_dp.dask  # noqa: F401  (registers ddf.dp)

PART = 1_000_000
N_KEYS = 10_000
PRODUCTS = np.array([f"p{i:04d}" for i in range(5_000)], dtype=object)
RELEASES = ("mean", "value_counts", "auto", "count", "grouped_count", "sum", "unit_value_counts")
#: Each release's columns (its own collection, so its own budget).
COLUMNS = {
    "mean": ["k", "x"],
    "value_counts": ["product"],
    "auto": ["x"],
    "count": ["pid"],
    "grouped_count": ["pid", "k"],
    "sum": ["pid", "x"],
    "unit_value_counts": ["pid", "product"],
}


def write(folder: Path, rows: int) -> None:
    """Parquet files of ``PART`` rows each (reused when they are already there)."""
    marker = folder / f"_rows_{rows}"
    if marker.exists():
        return
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.glob("*.parquet"):
        old.unlink()
    persons, heavy = max(rows // 10, 2), max(rows // 50_000, 1)
    for i, start in enumerate(range(0, rows, PART)):
        rng = np.random.Generator(np.random.PCG64([7, i]))
        n = min(PART, rows - start)
        x = rng.normal(50_000, 30_000, size=n)
        x[rng.uniform(size=n) < 0.01] = np.nan
        pid = np.where(
            rng.uniform(size=n) < heavy * 1_000 / rows,
            rng.integers(0, heavy, size=n),
            rng.integers(heavy, persons, size=n),
        )
        product = np.minimum(rng.zipf(1.3, size=n) - 1, len(PRODUCTS) - 1)
        frame = pd.DataFrame(
            {
                "pid": pid,
                "k": rng.integers(0, N_KEYS + 50, size=n),
                "x": x,
                "y": rng.exponential(100.0, size=n),
                "product": pd.array(PRODUCTS[product], dtype="str"),
            }
        )
        frame.to_parquet(folder / f"part-{i:05d}.parquet", index=False)
    marker.touch()


# ---------------------------------------------------------------- the child


def _first_rows_sum(part: pd.DataFrame) -> pd.Series:
    return pd.Series([part.groupby("pid").x.head(5).clip(0, 200_000).sum()])


def _capped_rows(part: pd.DataFrame) -> pd.Series:
    return pd.Series([part.pid.value_counts().clip(upper=5).sum()])


def _distinct(part: pd.DataFrame, key: str) -> pd.DataFrame:
    return part.drop_duplicates()[key].value_counts().rename("n").reset_index()


def _per_key(ddf: Any, key: str) -> Any:
    """Persons per key: each person's rows brought together (Dask's shuffle), then counted."""
    meta = pd.DataFrame({key: ddf._meta[key].iloc[:0], "n": pd.Series([], dtype="int64")})
    return ddf.shuffle("pid").map_partitions(_distinct, key, meta=meta).groupby(key).n.sum()


def releases(path: str) -> dict[str, tuple[Callable[[], Any], Callable[[], Any]]]:
    """Each release's ``(ddf.dp, Dask's own)``, on collections read from ``path``."""
    data = {}
    for name, columns in COLUMNS.items():
        ddf = dd.read_parquet(path, columns=columns)
        unit = "pid" in columns
        if unit:
            ddf.dp.set_budget(epsilon=1e6, delta=1e-3, seed=1, privacy_unit="pid")
        else:
            ddf.dp.set_budget(epsilon=1e6, delta=1e-3, seed=1)
        data[name] = ddf
    keys = np.arange(N_KEYS)
    d = data
    return {
        "mean": (
            lambda: d["mean"].dp.groupby("k", keys=keys).mean("x", clip=(0, 200_000), epsilon=0.5),
            lambda: d["mean"].assign(x=d["mean"].x.clip(0, 200_000)).groupby("k").x.mean(),
        ),
        "value_counts": (
            lambda: d["value_counts"].dp.value_counts("product", epsilon=0.5, delta=1e-7),
            lambda: d["value_counts"]["product"].value_counts(),
        ),
        "auto": (
            lambda: d["auto"].dp.mean("x", clip="auto", epsilon=0.5),
            lambda: d["auto"].x.mean(),
        ),
        "count": (
            lambda: d["count"].dp.count(epsilon=0.5, max_rows=5),
            lambda: d["count"].shuffle("pid").map_partitions(_capped_rows, meta=(None, "i8")).sum(),
        ),
        "grouped_count": (
            lambda: (
                d["grouped_count"]
                .dp.groupby("k", keys=keys)
                .count(epsilon=0.5, max_rows=1, max_groups=5)
            ),
            lambda: _per_key(d["grouped_count"], "k"),
        ),
        "sum": (
            lambda: d["sum"].dp.sum("x", clip=(0, 200_000), epsilon=0.5, max_rows=5),
            lambda: (
                d["sum"].shuffle("pid").map_partitions(_first_rows_sum, meta=(None, "f8")).sum()
            ),
        ),
        "unit_value_counts": (
            lambda: d["unit_value_counts"].dp.value_counts(
                "product", epsilon=0.5, delta=1e-7, max_rows=1, max_groups=5
            ),
            lambda: _per_key(d["unit_value_counts"], "product"),
        ),
    }


def digest(result: Any) -> str:
    """The release as exact text: every value by repr, with its index."""
    if isinstance(result, pd.Series | pd.DataFrame):
        return result.to_json(orient="split", double_precision=15)
    return repr(result)


class Watch:
    """Wall time, peak RSS per worker, bytes sent and spilled, restarts, around one run."""

    def __init__(self, client: Any) -> None:
        self.client = client
        self.pids = client.run(os.getpid)
        self.procs = {a: psutil.Process(p) for a, p in self.pids.items()}
        self.peak = dict.fromkeys(self.procs, 0)
        self.stop = threading.Event()

    def _counters(self) -> dict[str, tuple[int, float]]:
        def read(dask_worker: Any) -> tuple[int, float]:
            metrics = getattr(dask_worker.data, "cumulative_metrics", {})
            spilled = metrics.get(("disk-write", "bytes"), 0)
            return dask_worker.transfer_outgoing_bytes_total, spilled

        return self.client.run(read)  # type: ignore[no-any-return]

    def _sample(self) -> None:
        while not self.stop.wait(0.05):
            for address, process in self.procs.items():
                with contextlib.suppress(psutil.Error):  # a worker died: reported after
                    self.peak[address] = max(self.peak[address], process.memory_info().rss)

    def run(self, function: Callable[[], Any]) -> tuple[Any, dict[str, Any]]:
        before = self._counters()
        self.stop.clear()
        sampler = threading.Thread(target=self._sample)
        sampler.start()
        start = time.perf_counter()
        try:
            result = function()
            if dask.is_dask_collection(result):
                result = result.compute()
        finally:
            wall = time.perf_counter() - start
            self.stop.set()
            sampler.join()
        after = self._counters()
        restarted = self.client.run(os.getpid) != self.pids
        common = [w for w in after if w in before]
        figures = {
            "wall": wall,
            "peak": max(self.peak.values()),
            "moved": sum(after[w][0] - before[w][0] for w in common),
            "spilled": sum(after[w][1] - before[w][1] for w in common),
            "restarted": restarted,
        }
        return result, figures


def child(path: str, workers: int, limit: str, names: list[str], repeat: int) -> None:
    """Print one JSON line per run: on a cluster of ``workers`` (0: the threaded scheduler)."""

    def emit(**line: Any) -> None:
        print(json.dumps(line), flush=True)

    if workers == 0:
        dask.config.set(scheduler="threads")
        work = releases(path)
        for name in names:
            for engine, function in (("dask", work[name][1]), ("dp", work[name][0])):
                start = time.perf_counter()
                try:
                    result = function()
                    if dask.is_dask_collection(result):
                        result = result.compute()
                except Exception as error:
                    emit(name=name, engine=engine, digest=None, failed=type(error).__name__)
                    continue
                wall = time.perf_counter() - start
                emit(
                    name=name,
                    engine=engine,
                    wall=wall,
                    digest=digest(result) if engine == "dp" else None,
                )
        return
    with (
        distributed.LocalCluster(
            n_workers=workers, threads_per_worker=1, memory_limit=limit, dashboard_address=":0"
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        work = releases(path)
        for name in names:
            for i in range(repeat):
                for engine, function in (("dask", work[name][1]), ("dp", work[name][0])):
                    watch = Watch(client)
                    try:
                        result, figures = watch.run(function)
                    except Exception as error:  # Dask's own may not fit: say so, go on
                        emit(name=name, engine=engine, digest=None, failed=type(error).__name__)
                        client.wait_for_workers(workers, timeout=120)
                        continue
                    text = digest(result) if engine == "dp" and i == 0 else None
                    emit(name=name, engine=engine, digest=text, **figures)
                    client.wait_for_workers(workers, timeout=120)


# --------------------------------------------------------------- the parent


def run_child(args: argparse.Namespace, workers: int, names: list[str]) -> list[dict[str, Any]]:
    command = [sys.executable, __file__, "--child", str(workers), "--dir", str(args.dir)]
    command += ["--memory-limit", args.memory_limit, "--releases", ",".join(names)]
    command += ["--repeat", str(args.repeat)]
    lines = []
    with subprocess.Popen(command, stdout=subprocess.PIPE, text=True) as process:
        assert process.stdout is not None
        for raw in process.stdout:
            line = json.loads(raw)
            lines.append(line)
            print(f"  {_line(workers, line)}", flush=True)
    if process.returncode:
        raise SystemExit(f"the run on {workers} workers failed ({process.returncode})")
    return lines


def _line(workers: int, line: dict[str, Any]) -> str:
    where = f"{workers} worker{'s' * (workers > 1)}" if workers else "threads"
    if "failed" in line:
        return f"{where:9s} {line['name']:17s} {line['engine']:4s} FAILED: {line['failed']}"
    text = f"{where:9s} {line['name']:17s} {line['engine']:4s} {line['wall']:7.2f} s"
    if "peak" in line:
        text += (
            f"   peak/worker {line['peak'] / 2**30:5.2f} GiB"
            f"   sent {line['moved'] / 2**20:8.1f} MiB"
            f"   spilled {line['spilled'] / 2**20:6.1f} MiB"
            f"{'   WORKER RESTARTED' if line['restarted'] else ''}"
        )
    return text


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=float, default=100_000_000)
    parser.add_argument("--workers", default="1,2,4", help="worker counts, e.g. 2 or 1,2,4")
    parser.add_argument("--memory-limit", default="1GiB", help="each worker's memory_limit")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--releases", default=",".join(RELEASES))
    parser.add_argument("--dir", type=Path, default=None, help="where to write the parquet files")
    parser.add_argument("--no-threads", action="store_true", help="skip the threaded comparison")
    parser.add_argument("--child", type=int, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    names = [n for n in args.releases.split(",") if n]
    if unknown := set(names) - set(RELEASES):
        raise SystemExit(f"unknown releases {sorted(unknown)}; known: {', '.join(RELEASES)}")
    if args.child is not None:
        child(str(args.dir), args.child, args.memory_limit, names, args.repeat)
        return
    rows = int(args.rows)
    args.dir = args.dir or Path(tempfile.gettempdir()) / f"pandas_dp_bench_cluster_{rows}"
    start = time.perf_counter()
    write(args.dir, rows)
    one = pd.read_parquet(next(args.dir.glob("*.parquet")))
    size = one.memory_usage(deep=True).sum() / len(one) * rows
    print(
        f"{rows:,} rows in {args.dir} ({time.perf_counter() - start:.1f} s to prepare): "
        f"{size / 2**30:.2f} GiB in memory, {size / _bytes(args.memory_limit):.1f}x one "
        f"worker's memory_limit ({args.memory_limit})"
    )
    runs: dict[int, list[dict[str, Any]]] = {}
    for workers in [int(w) for w in args.workers.split(",")]:
        runs[workers] = run_child(args, workers, names)
    if not args.no_threads:
        runs[0] = run_child(args, 0, names)
    report(runs, names)


def _bytes(text: str) -> float:
    return float(parse_bytes(text))


def report(runs: dict[int, list[dict[str, Any]]], names: list[str]) -> None:
    """Medians, ratios, and whether every engine released the same numbers."""
    print("\nmedians: ddf.dp / Dask's own (wall), ddf.dp peak per worker, sent, spilled")
    for name in names:
        digests = {
            w: next((r["digest"] for r in lines if r["name"] == name and r["digest"]), None)
            for w, lines in runs.items()
        }
        same = len(set(digests.values())) == 1
        cells = []
        for workers, lines in runs.items():
            mine = [r for r in lines if r["name"] == name and "failed" not in r]
            dps = [r for r in mine if r["engine"] == "dp"]
            owns = [r["wall"] for r in mine if r["engine"] == "dask"]
            if not dps:
                cells.append(f"{workers}w ddf.dp FAILED")
                continue
            dp = statistics.median(r["wall"] for r in dps)
            vs = f"{dp:6.2f}/Dask's own failed"
            if owns:
                own = statistics.median(owns)
                vs = f"{dp:6.2f}/{own:6.2f} s = {dp / own:4.2f}x"
            if workers == 0:
                cells.append(f"threads {vs}")
                continue
            cells.append(
                f"{workers}w {vs}"
                f" {max(r['peak'] for r in dps) / 2**30:4.2f} GiB"
                f" {statistics.median(r['moved'] for r in dps) / 2**20:6.1f} MiB"
                f" {max(r['spilled'] for r in dps) / 2**20:4.0f}"
                f"{' RESTARTED' if any(r['restarted'] for r in dps) else ''}"
            )
        verdict = "same numbers everywhere" if same else "DIFFERENT NUMBERS"
        print(f"{name:17s} " + " | ".join(cells) + f" | {verdict}")


if __name__ == "__main__":
    main()
