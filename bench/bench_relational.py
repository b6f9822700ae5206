"""Joins (issue 30): the utility of max_rows="auto" on a join, and the speed of a public merge.

    python bench/bench_relational.py utility            # 10**5 customers, ε = 1 (about 1 min)
    python bench/bench_relational.py utility --sweep    # the same at four tail indices
    python bench/bench_relational.py speed              # 10**7 orders (about 3 min, 4 GB)
    python bench/bench_relational.py speed --rows 1e6   # quicker

``utility``: orders and returns of the same customers, joined on
``customer_id`` (``tx.dp.merge(returns, on="customer_id")``): ``--customers``
customers, orders per customer ``⌊U^(−1/a)⌋`` capped at 1,000 (Pareto, tail
index ``a = 1.5``), returns ``⌊U^(−1/b)⌋ − 1`` capped at 100 (``b = 2.5``;
most customers return nothing). The relative RMSE of the joined count at ε = 1
(``--runs`` releases each; targets in brackets):

* ``auto``: ``count(epsilon=1, max_rows="auto")`` (a quarter of ε chooses the cap);
* ``best fixed``: the best cap of a fine grid chosen in hindsight, at the whole ε
  (exact: the truncation of each cap computed, the discrete Laplace's variance
  added);  auto must be within 2x of it [<= 2.0];
* ``worst case``: the cap of the public worst case, 1,000 × 100 rows per customer
  (auto must be 10x better) [>= 10];
* ``quantile``: the rule before issue 30, ``rows_per_unit(0.9)`` at ε/4 then
  the count at 3ε/4.

``speed``: ``--rows`` orders without a privacy unit (and with one: a customer
id), a public table of 1,000 stores with one region each (some stores in two):
``df.dp.merge(stores, on="store").dp.groupby("region", keys=R).sum("amount",
clip=(0, 500), epsilon=1)`` against ``df.merge(stores, on="store")
.groupby("region")["amount"].sum()``, each in a fresh process (time of the
merge and the release, and the process's peak memory, ``ru_maxrss``), three
times, medians and their ratio [<= 1.2].

Tumult Analytics (``join_private`` then ``MaxRowsPerID``) runs the same
utility data in ``bench_relational_tumult.py`` (its own virtual environment:
Tumult needs pandas < 2).
"""

from __future__ import annotations

import argparse
import math
import resource
import statistics
import subprocess
import sys
import time

import numpy as np
import pandas as pd

import pandas_dp  # noqa: F401

ORDER_CAP, RETURN_CAP = 1_000, 100
REGIONS = ["N", "S", "E", "W"]


def customers(n: int, a: float, b: float, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Orders and returns per customer: Pareto-tailed counts, capped (public caps)."""
    rng = np.random.default_rng(seed)
    orders = np.minimum(np.floor(rng.random(n) ** (-1 / a)), ORDER_CAP).astype(np.int64)
    returns = np.minimum(np.floor(rng.random(n) ** (-1 / b)) - 1, RETURN_CAP).astype(np.int64)
    return orders, returns


def tables(orders: np.ndarray, returns: np.ndarray) -> tuple[pd.DataFrame, pd.DataFrame]:
    ids = np.arange(orders.size)
    tx = pd.DataFrame({"customer_id": np.repeat(ids, orders)})
    tx["amount"] = np.arange(len(tx)) % 500
    back = pd.DataFrame({"customer_id": np.repeat(ids, returns)})
    return tx, back


def laplace_sd(scale: float) -> float:
    """The standard deviation of a discrete Laplace of scale ``scale`` (≈ √2·scale)."""
    p = math.exp(-1 / scale)
    return math.sqrt(2 * p) / (1 - p)


def fixed_cap_rmse(joined: np.ndarray, cap: int, epsilon: float) -> float:
    """The exact RMSE of the count bounded to ``cap`` rows per customer, at ``epsilon``."""
    bias = float(np.maximum(joined - cap, 0).sum())
    return math.sqrt(bias**2 + laplace_sd(cap / epsilon) ** 2)


def utility(n: int, a: float, b: float, runs: int, epsilon: float = 1.0) -> dict[str, float]:
    orders, returns = customers(n, a, b)
    joined = orders * returns
    joined = joined[joined > 0]
    truth = float(joined.sum())
    grid = np.unique(np.round(2 ** np.arange(0, 20.01, 1 / 16)).astype(np.int64))
    best_cap = min(grid, key=lambda c: fixed_cap_rmse(joined, int(c), epsilon))
    best = fixed_cap_rmse(joined, int(best_cap), epsilon) / truth
    worst = fixed_cap_rmse(joined, ORDER_CAP * RETURN_CAP, epsilon) / truth
    tx, back = tables(orders, returns)
    tx.dp.set_budget(epsilon=2 * epsilon * runs + 1, privacy_unit="customer_id", seed=11)
    back.dp.inherit(tx)
    both = tx.dp.merge(back, on="customer_id")
    assert len(both) == truth
    auto, caps, quantile = [], [], []
    start = time.perf_counter()
    for _ in range(runs):
        answer = both.dp.count(epsilon=epsilon, max_rows="auto", ci=0.5)
        auto.append(answer["estimate"] - truth)
        caps.append(int(answer["max_rows"]))
    seconds = (time.perf_counter() - start) / runs
    for _ in range(runs):
        cut = both.dp.rows_per_unit(0.9, candidates=range(1, 2**20), epsilon=epsilon / 4)
        quantile.append(both.dp.count(epsilon=3 * epsilon / 4, max_rows=cut) - truth)
    rmse = math.sqrt(np.mean(np.square(auto))) / truth
    return {
        "customers in the join": float(joined.size),
        "joined rows": truth,
        "heaviest customer's rows": float(joined.max()),
        "best fixed cap": float(best_cap),
        "auto: median cap": float(np.median(caps)),
        "auto": rmse,
        "best fixed": best,
        "worst case": worst,
        "quantile": math.sqrt(np.mean(np.square(quantile))) / truth,
        "auto / best fixed": rmse / best,
        "worst case / auto": worst / rmse,
        "seconds per auto release": seconds,
    }


def report_utility(args: argparse.Namespace) -> None:
    tails = [(1.5, 2.5)] if not args.sweep else [(1.5, 2.5), (1.2, 1.5), (1.5, 1.5), (2.0, 2.0)]
    for a, b in tails:
        found = utility(args.customers, a, b, args.runs)
        print(f"orders tail {a}, returns tail {b}, {args.customers:,} customers, ε = 1:")
        for name, value in found.items():
            print(f"  {name:>26}: {value:,.4g}")


# ----------------------------------------------------------------------------- speed


def speed_data(rows: int, unit: bool) -> tuple[pd.DataFrame, pd.DataFrame]:
    rng = np.random.default_rng(5)
    df = pd.DataFrame({"store": rng.integers(0, 1_000, rows), "amount": rng.uniform(0, 600, rows)})
    if unit:
        df["customer_id"] = rng.integers(0, rows // 10, rows)
    stores = pd.DataFrame({"store": np.arange(1_000), "region": np.resize(REGIONS, 1_000)})
    return df, stores


def run_one(kind: str, rows: int, unit: bool) -> None:
    """One timed variant in this process: prints seconds and the peak resident memory (MB)."""
    df, stores = speed_data(rows, unit)
    if kind == "dp":
        df.dp.set_budget(epsilon=1, seed=1, privacy_unit="customer_id" if unit else None)
    start = time.perf_counter()
    if kind == "dp":
        merged = df.dp.merge(stores, on="store")
        bounds = {"max_rows": 20, "max_groups": 4} if unit else {}
        grouped = merged.dp.groupby("region", keys=REGIONS)
        grouped.sum("amount", clip=(0, 500), epsilon=1, **bounds)
    else:
        merged = df.merge(stores, on="store")
        merged["amount"].clip(0, 500).groupby(merged["region"]).sum()
    seconds = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"{seconds} {peak}")


def report_speed(args: argparse.Namespace) -> None:
    rows = int(float(args.rows))
    for unit in (False, True):
        found: dict[str, list[tuple[float, float]]] = {"pandas": [], "dp": []}
        for _ in range(3):
            for kind in ("pandas", "dp"):
                command = [sys.executable, __file__, "one", kind, str(rows), str(int(unit))]
                out = subprocess.run(command, capture_output=True, text=True, check=True)
                seconds, peak = map(float, out.stdout.split())
                found[kind].append((seconds, peak))
        t = {k: statistics.median(s for s, _ in v) for k, v in found.items()}
        m = {k: statistics.median(p for _, p in v) for k, v in found.items()}
        label = "with a privacy unit" if unit else "without a privacy unit"
        print(f"{rows:,} rows, {label}: merge + grouped clipped sum")
        ratio_t, ratio_m = t["dp"] / t["pandas"], m["dp"] / m["pandas"]
        print(f"  time   pandas {t['pandas']:.2f} s, df.dp {t['dp']:.2f} s, ratio {ratio_t:.2f}")
        print(f"  memory pandas {m['pandas']:.0f} MB, df.dp {m['dp']:.0f} MB, ratio {ratio_m:.2f}")


def main() -> None:
    if sys.argv[1:2] == ["one"]:
        kind, rows, unit = sys.argv[2], int(sys.argv[3]), bool(int(sys.argv[4]))
        run_one(kind, rows, unit)
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=["utility", "speed"])
    parser.add_argument("--customers", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--sweep", action="store_true")
    parser.add_argument("--rows", default="1e7")
    args = parser.parse_args()
    if args.what == "utility":
        report_utility(args)
    else:
        report_speed(args)


if __name__ == "__main__":
    main()
