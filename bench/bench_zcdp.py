"""Many grouped counts at one total (ε, δ) = (1, 1e-6): a zCDP budget against a pure-ε split.

    python bench/bench_zcdp.py                 # 100 grouped counts of 100 keys each
    python bench/bench_zcdp.py --queries 30    # another number of counts

Releases ``--queries`` grouped counts (100 public keys each) on one frame
twice, with seeded budgets: under a pure budget of ε = 1 split evenly
(``count(epsilon=1/m)``, discrete Laplace) and under a zCDP budget of the
largest ρ whose ``budget.epsilon_at(1e-6)`` is at most 1, split evenly
(``count(rho=ρ/m)``, discrete Gaussian).  Prints the RMSE per count of each
against the exact counts and their ratio (target: at most 0.35 for 100
counts), then the README's "which budget should I use?" table: the RMSE per
count of each budget for several numbers of counts, from the exact noise
variances, and the break-even number of counts.
"""

from __future__ import annotations

import argparse
import math
from fractions import Fraction

import numpy as np
import pandas as pd

import pandas_dp  # noqa: F401
from pandas_dp.core import zcdp
from pandas_dp.core.noise import gaussian_scale

DELTA = Fraction(1, 10**6)
KEYS = pd.Index(range(100), name="key")
TABLE = (1, 3, 10, 30, 100, 300, 1000)


def frame(rows: int = 100_000) -> pd.DataFrame:
    rng = np.random.Generator(np.random.PCG64(20))
    return pd.DataFrame({"key": rng.integers(0, len(KEYS), size=rows)})


def released_rmse(df: pd.DataFrame, queries: int, **budget: object) -> tuple[float, float]:
    """RMSE per count of ``queries`` grouped counts spending the whole budget; its ε at δ."""
    data = df.copy()
    spent = data.dp.set_budget(**budget, seed=11)
    rho = budget.get("rho")
    share = {"rho": rho / queries} if rho is not None else {"epsilon": Fraction(1, queries)}
    truth = df["key"].value_counts().reindex(KEYS, fill_value=0).to_numpy()
    errors = [
        data.dp.groupby("key", keys=KEYS).count(**share).to_numpy() - truth for _ in range(queries)
    ]
    error = np.concatenate(errors).astype(np.float64)
    return float(np.sqrt(np.mean(error**2))), spent.epsilon_at(float(DELTA))


def laplace_rmse(queries: int) -> float:
    """RMSE of a count's discrete Laplace noise at ε = 1/queries (scale = queries)."""
    p = math.exp(-1 / queries)
    return math.sqrt(2 * p / (1 - p) ** 2)


def gaussian_rmse(queries: int, rho: Fraction) -> float:
    """RMSE of a count's discrete Gaussian noise at ρ/queries (σ² rounded up, as released)."""
    return math.sqrt(gaussian_scale(1, rho / queries))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--queries", type=int, default=100)
    args = parser.parse_args()
    rho = zcdp.rho_within(1, DELTA)
    df = frame()
    pure, pure_eps = released_rmse(df, args.queries, epsilon=1)
    gauss, gauss_eps = released_rmse(df, args.queries, rho=rho)
    print(f"{args.queries} grouped counts of {len(KEYS)} keys, total (ε, δ) = (1, 1e-6)")
    print(f"  pure ε = {pure_eps:g}, split evenly: RMSE per count {pure:.1f}")
    print(f"  zCDP ρ = {float(rho):.5f} (ε at 1e-6 = {gauss_eps:.6f}): RMSE per count {gauss:.1f}")
    print(f"  ratio {gauss / pure:.3f} (target: at most 0.35 for 100 counts)")
    print()
    print("| counts | pure ε = 1: RMSE per count | ρ-zCDP at (1, 1e-6): RMSE per count | ratio |")
    print("|---:|---:|---:|---:|")
    for m in TABLE:
        lap, gau = laplace_rmse(m), gaussian_rmse(m, rho)
        print(f"| {m:,} | {lap:,.1f} | {gau:,.1f} | {gau / lap:.2f} |")
    even = next(m for m in range(1, 10_000) if gaussian_rmse(m, rho) < laplace_rmse(m))
    print(f"\nbreak-even: zCDP is more accurate from {even} counts on")


if __name__ == "__main__":
    main()
