"""The join of bench_relational.py's ``utility`` in Tumult Analytics, side by side.

Run it in a virtual environment of its own (Tumult needs pandas < 2 and a Java
runtime for Spark)::

    python3 -m venv tmlt && . tmlt/bin/activate && pip install tmlt.analytics
    python bench/bench_relational_tumult.py --runs 20

The same orders and returns (the same generator and seed as
``bench_relational.customers``; numpy's PCG64 draws are the same across
versions), each a private table of one ID space (``AddRowsWithID``),
``join_private`` on ``customer_id``, then ``enforce(MaxRowsPerID(cap))`` and
``count()`` at ε = 1: Tumult has no private choice of the cap, so it is run at
the best fixed cap in hindsight (as bench_relational.py computes it) and at
the public worst case (1,000 × 100).  Prints the relative RMSE of each and the
seconds per release.  Imports nothing of pandas_dp.
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np
import pandas as pd
from pyspark.sql import SparkSession
from tmlt.analytics import (
    AddRowsWithID,
    MaxRowsPerID,
    PureDPBudget,
    QueryBuilder,
    Session,
)

ORDER_CAP, RETURN_CAP = 1_000, 100


def customers(n: int, a: float, b: float, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """As bench_relational.customers."""
    rng = np.random.default_rng(seed)
    orders = np.minimum(np.floor(rng.random(n) ** (-1 / a)), ORDER_CAP).astype(np.int64)
    returns = np.minimum(np.floor(rng.random(n) ** (-1 / b)) - 1, RETURN_CAP).astype(np.int64)
    return orders, returns


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--customers", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--caps", default="939,100000")
    args = parser.parse_args()
    spark = SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false")
    spark = spark.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    orders, returns = customers(args.customers, 1.5, 2.5)
    ids = np.arange(orders.size)
    tx = pd.DataFrame({"customer_id": np.repeat(ids, orders)})
    tx["order"] = np.arange(len(tx))
    back = pd.DataFrame({"customer_id": np.repeat(ids, returns)})
    back["ret"] = np.arange(len(back))
    joined = orders * returns
    truth = float(joined.sum())
    for cap in (int(c) for c in args.caps.split(",")):
        errors, seconds = [], []
        for run in range(args.runs):
            session = (
                Session.Builder()
                .with_privacy_budget(PureDPBudget(1))
                .with_id_space("customers")
                .with_private_dataframe(
                    "orders",
                    spark.createDataFrame(tx),
                    AddRowsWithID("customer_id", "customers"),
                )
                .with_private_dataframe(
                    "returns",
                    spark.createDataFrame(back),
                    AddRowsWithID("customer_id", "customers"),
                )
                .build()
            )
            query = (
                QueryBuilder("orders")
                .join_private("returns", join_columns=["customer_id"])
                .enforce(MaxRowsPerID(cap))
                .count()
            )
            start = time.perf_counter()
            answer = session.evaluate(query, PureDPBudget(1)).collect()[0][0]
            seconds.append(time.perf_counter() - start)
            errors.append(float(answer) - truth)
            if run == 0:
                print(f"  cap {cap}: first answer {answer}, truth {truth:.0f}", flush=True)
        rmse = math.sqrt(np.mean(np.square(errors))) / truth
        print(
            f"Tumult join_private, MaxRowsPerID({cap}), ε = 1: relative RMSE {rmse:.4g}, "
            f"{np.median(seconds):.2f} s per release ({args.runs} runs)"
        )


if __name__ == "__main__":
    main()
