"""How long a ledger write waits for the lock when the machine is busy.

Eight processes hammer one named budget with reserve/commit (and an occasional
reserve/cancel) beside three CPU-bound processes (``python -c "while True:
pass"``), as on a loaded two-core CI machine. Each call runs with a very long
lock timeout, so that nothing fails and the worst wait is measured, not cut
off. The result chooses ``pandas_dp.accounting.sqlite.DEFAULT_TIMEOUT`` with margin.

    PYTHONPATH=. python bench/ledger_contention.py [--seconds 60] [--writers 8] [--burners 3]
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import statistics
import subprocess
import sys
import tempfile
import time
from fractions import Fraction
from pathlib import Path
from typing import Any

from pandas_dp.accounting.ledger import LedgerEntry
from pandas_dp.accounting.sqlite import open_ledger

NAME = "load"


def hammer(path: str, seconds: float, results: Any) -> None:
    """Reserve and commit (every tenth: cancel) until ``seconds`` pass; report every wait."""
    waits: list[float] = []
    start = time.perf_counter()
    with open_ledger(path, timeout=3600) as ledger:
        opened = time.perf_counter() - start  # opening reads and checks the whole ledger
        store = ledger.store(NAME)
        entry = LedgerEntry("count", Fraction(1, 1024))
        calls = 0
        while time.perf_counter() - start < seconds:
            t0 = time.perf_counter()
            token = store.reserve(entry)
            t1 = time.perf_counter()
            if calls % 10 == 9:
                store.cancel(token)
            else:
                store.commit(token)
            t2 = time.perf_counter()
            waits += [t1 - t0, t2 - t1]
            calls += 1
    results.put((opened, waits))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--writers", type=int, default=8)
    parser.add_argument("--burners", type=int, default=3)
    args = parser.parse_args()
    burners = [
        subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(args.burners)
    ]
    try:
        with tempfile.TemporaryDirectory() as folder:
            path = str(Path(folder) / "ledger.sqlite")
            with open_ledger(path) as ledger:
                ledger.attach(NAME, total=10**9)
            ctx = multiprocessing.get_context("forkserver")
            results = ctx.Queue()
            procs = [
                ctx.Process(target=hammer, args=(path, args.seconds, results))
                for _ in range(args.writers)
            ]
            for proc in procs:
                proc.start()
            reports = [results.get(timeout=args.seconds + 3600) for _ in procs]
            opening = max(opened for opened, _ in reports)
            waits = sorted(w for _, calls in reports for w in calls)
            for proc in procs:
                proc.join()
            with open_ledger(path) as ledger:
                entries = int(ledger.budgets().releases.iloc[0])
    finally:
        for burner in burners:
            burner.kill()
            burner.wait()
    print(
        f"{args.writers} writers, {args.burners} CPU-bound processes, {os.cpu_count()} cores, "
        f"{args.seconds:g} s: {len(waits)} calls, {entries} releases committed"
    )
    quantiles = statistics.quantiles(waits, n=1000)
    print(
        f"call time (lock wait + work): median {statistics.median(waits) * 1000:.1f} ms, "
        f"p99 {quantiles[989] * 1000:.1f} ms, p99.9 {quantiles[998] * 1000:.1f} ms, "
        f"worst {waits[-1]:.3f} s; slowest open_ledger {opening:.3f} s"
    )


if __name__ == "__main__":
    main()
