"""var / std accuracy and speed, and the grouped median's speed, against plain pandas.

    python bench/bench_statistics.py                 # defaults of issue 13
    python bench/bench_statistics.py --rows 1e6      # a quicker speed run

Accuracy: RMSE of ``df.dp.var`` (ddof=1) at n = 2,000 uniform(0, 1) rows, clip
(0, 1), ε = 1 over ``--releases`` seeded releases (one grouped call over that
many identical groups), against the usual three-way split of ε across a
noisy count, a noisy centred sum and a noisy centred sum of squares (ALGORITHMS.md
§2, "Variance (AR)"), and against the uncentred triple (y, 1 − y, y(1 − y)) at one
noise scale; the baselines use continuous Laplace noise (an accuracy
reference only, never a release).  Speed: ``df.dp.var`` on ``--rows`` rows
against ``df[col].clip(L, U).var()``, and the grouped median (100 keys, a
2,001-point grid, 2,000,000 rows) against ``groupby(...)[col].median()``;
best of ``--repeat``, ratios measured in the same run.
"""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd
from bench_core import best_of

import pandas_dp  # noqa: F401

TARGET = 1.5


def three_way(y: np.ndarray, releases: int, rng: np.random.Generator) -> np.ndarray:
    """ε/3 each on N, Σ(y − m) and Σ((y − m)² − h²/2), clip [0, 1]: the sample variance."""
    e, h = 1.0 / 3, 0.5
    z = y - h
    n = y.size + rng.laplace(0, 1 / e, releases)
    s1 = z.sum() + rng.laplace(0, h / e, releases)
    s2 = (z * z - h * h / 2).sum() + rng.laplace(0, h * h / 2 / e, releases)
    nn = np.maximum(n, 1)
    var = np.clip(s2 / nn + h * h / 2 - (s1 / nn) ** 2, 0, h * h)
    out: np.ndarray = var * nn / np.maximum(nn - 1, 1)
    return out


def one_scale_triple(y: np.ndarray, releases: int, rng: np.random.Generator) -> np.ndarray:
    """(y, 1 − y, y(1 − y)) with one noise scale 1.25/ε: the L1 ball of issue 13's example."""
    t = 1.25
    a = np.maximum(y.sum() + rng.laplace(0, t, releases), 0)
    b = np.maximum((1 - y).sum() + rng.laplace(0, t, releases), 0)
    c = (y * (1 - y)).sum() + rng.laplace(0, t, releases)
    n = a + b
    d = np.maximum(n - 1, 1)
    out: np.ndarray = np.clip((a * b / n - c) / d, 0, 0.25 * (d + 1) / d)
    return out


def accuracy(n: int, releases: int) -> dict[str, float]:
    rng = np.random.Generator(np.random.PCG64(13))
    y = rng.uniform(0, 1, n)
    truth = float(np.var(y, ddof=1))
    df = pd.DataFrame({"k": np.repeat(np.arange(releases), n), "x": np.tile(y, releases)})
    df.dp.set_budget(epsilon=1, seed=2024)
    ours = df.dp.groupby("k", keys=pd.RangeIndex(releases)).var("x", clip=(0, 1), epsilon=1)

    def rmse(v: np.ndarray) -> float:
        return float(np.sqrt(np.mean((np.asarray(v) - truth) ** 2)))

    return {
        "df.dp.var (joint release)": rmse(ours.to_numpy()),
        "three-way split of ε": rmse(three_way(y, releases, rng)),
        "(y, 1 − y, y(1 − y)) at one scale": rmse(one_scale_triple(y, releases, rng)),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=float, default=5e6)
    parser.add_argument("--median-rows", type=float, default=2e6)
    parser.add_argument("--releases", type=int, default=1_000)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()

    print(
        f"accuracy: RMSE of the variance, n = 2,000, uniform(0, 1), ε = 1, {args.releases} releases"
    )
    rmses = accuracy(2_000, args.releases)
    for label, value in rmses.items():
        print(f"  {label:38s} {value:.3e}")
    ours, split = rmses["df.dp.var (joint release)"], rmses["three-way split of ε"]
    verdict = "lower" if ours < split else "NOT lower"
    print(f"  ratio to the three-way split: {ours / split:.2f} ({verdict})")

    rng = np.random.Generator(np.random.PCG64(7))
    rows = int(args.rows)
    df = pd.DataFrame({"x": rng.lognormal(3, 1, rows)})
    df.dp.set_budget(epsilon=1e12)
    t_dp = best_of(lambda: df.dp.var("x", clip=(0, 100), epsilon=1.0), args.repeat)
    t_pd = best_of(lambda: df["x"].clip(0, 100).var(), args.repeat)
    ratios = {"var": t_dp / t_pd}
    print(f"speed, {rows:,} rows (best of {args.repeat}):")
    print(f"  df['x'].clip(L, U).var()  {t_pd * 1e3:8.1f} ms")
    print(f"  df.dp.var                 {t_dp * 1e3:8.1f} ms   ratio {t_dp / t_pd:.2f}")

    m_rows = int(args.median_rows)
    keys = [f"region-{i:03d}" for i in range(100)]
    frame = pd.DataFrame(
        {
            "region": np.array(keys, dtype=object)[rng.integers(0, 100, m_rows)],
            "revenue": rng.lognormal(3, 1, m_rows),
        }
    )
    frame.dp.set_budget(epsilon=1e12)
    grid = np.linspace(0, 200, 2001)
    group = frame.dp.groupby("region", keys=keys)
    t_mdp = best_of(lambda: group.median("revenue", candidates=grid, epsilon=0.5), args.repeat)
    t_mpd = best_of(lambda: frame.groupby("region")["revenue"].median(), args.repeat)
    ratios["grouped median"] = t_mdp / t_mpd
    print(f"grouped median, {m_rows:,} rows, 100 keys x {grid.size} grid points:")
    print(f"  groupby().median()        {t_mpd * 1e3:8.1f} ms")
    print(f"  g.median                  {t_mdp * 1e3:8.1f} ms   ratio {t_mdp / t_mpd:.2f}")
    for label, ratio in ratios.items():
        verdict = "within" if ratio <= TARGET else "ABOVE"
        print(f"{label} ratio: {ratio:.2f} ({verdict} the {TARGET}x target)")


if __name__ == "__main__":
    main()
