"""A bounded sum and mean with a privacy unit against pandas doing the same bounding, in one run.

    python bench/bench_unit.py                     # 5,000,000 rows over 500,000 persons
    python bench/bench_unit.py --rows 1e6          # quicker (persons scale with rows)

Times ``df.dp.sum("amount", clip=CLIP, epsilon=1.0, max_rows=K)`` (and
``df.dp.mean``) on a frame attached with ``privacy_unit="customer_id"`` (which
keeps at most K random rows of each person, clips, sums and adds noise) against
plain pandas doing the same bounding without privacy:
``df.sample(frac=1).groupby("customer_id").head(K)["amount"].clip(L, U).sum()``
(``.mean()``), alternately.  Prints the medians of ``--repeat`` runs and their
ratio (target: at most 1.0).
"""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd
from bench_person import medians

import pandas_dp  # noqa: F401

CLIP = (0.0, 500.0)
MAX_ROWS = 10


def frame(rows: int, persons: int) -> pd.DataFrame:
    """``rows`` orders of ``persons`` customers; a skewed number of orders each."""
    rng = np.random.Generator(np.random.PCG64(3))
    # Zipf-like activity: a few customers with many orders, most with few.
    weight = 1.0 / np.arange(1, persons + 1, dtype=np.float64) ** 0.6
    customer = rng.choice(persons, size=rows, p=weight / weight.sum())
    return pd.DataFrame(
        {
            "customer_id": customer.astype(np.int64),
            "amount": np.round(rng.lognormal(np.log(40.0), 0.8, size=rows), 2),
        }
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=float, default=5e6)
    parser.add_argument("--persons", type=float, default=None, help="default: rows / 10")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    rows = int(args.rows)
    persons = int(args.persons) if args.persons is not None else max(rows // 10, 1)
    df = frame(rows, persons)
    df.dp.set_budget(epsilon=1e12, privacy_unit="customer_id")
    per_person = df.groupby("customer_id").size()
    print(
        f"{len(df):,} rows, {per_person.size:,} persons (max {per_person.max():,} rows, "
        f"{(per_person > MAX_ROWS).mean():.0%} over {MAX_ROWS}), medians of {args.repeat}"
    )
    for name in ("sum", "mean"):

        def plain(name: str = name) -> object:
            kept = df.sample(frac=1).groupby("customer_id").head(MAX_ROWS)
            return getattr(kept["amount"].clip(*CLIP), name)()

        def dp(name: str = name) -> object:
            return getattr(df.dp, name)("amount", clip=CLIP, epsilon=1.0, max_rows=MAX_ROWS)

        t_dp, t_pandas = medians(dp, plain, args.repeat)
        print(
            f"  {name}(max_rows={MAX_ROWS}) {t_dp * 1e3:8.1f} ms   pandas sample/head/clip/{name} "
            f"{t_pandas * 1e3:8.1f} ms   ratio {t_dp / t_pandas:.2f}"
        )


if __name__ == "__main__":
    main()
