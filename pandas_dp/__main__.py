"""``python -m pandas_dp demo``: the salary story on generated data."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

import pandas as pd

from . import datasets, dp
from .errors import BudgetExceededError

CLIP = (0, 250_000)


def demo(seed: int | None = None) -> None:
    """Attach a budget, release count / sum / mean at a few epsilons, run out of budget."""
    df = datasets.salaries(400, seed=7)
    depts = list(datasets.DEPARTMENTS)
    print("pandas_dp demo: a generated company of 400 employees, one row per person.")
    print("The data is synthetic, so we may compare the private answers with the truth.\n")
    print(df.head(3).to_string(index=False), "\n")

    budget = df.dp.set_budget(epsilon=5.0, seed=seed)
    private = dp(df)  # df.dp, typed (pandas-stubs reads df.dp as a column)
    print(f"df.dp.set_budget(epsilon=5.0)  ->  {budget}\n")

    truth_sum = df.salary.clip(*CLIP).sum()
    truth_mean = df.salary.clip(*CLIP).mean()
    print(f"{'release':<42}{'epsilon':>8}{'private':>14}{'true':>14}{'error':>10}")
    rows: list[tuple[str, float, float, float]] = []
    for eps in (0.1, 1.0):
        rows.append((f"df.dp.count(epsilon={eps})", eps, private.count(epsilon=eps), len(df)))
    for eps in (0.1, 1.0):
        value = private.sum("salary", clip=CLIP, epsilon=eps)
        rows.append((f'df.dp.sum("salary", clip={CLIP}, ...)', eps, value, truth_sum))
    for eps in (0.1, 1.0):
        value = private.mean("salary", clip=CLIP, epsilon=eps)
        rows.append((f'df.dp.mean("salary", clip={CLIP}, ...)', eps, value, truth_mean))
    for label, eps, value, truth in rows:
        error = abs(value - truth) / truth
        print(f"{label:<42}{eps:>8g}{value:>14,.0f}{truth:>14,.0f}{error:>10.2%}")

    grouped = private.groupby("dept", keys=depts).mean("salary", clip=CLIP, epsilon=1.0)
    truth_grouped = df.salary.clip(*CLIP).groupby(df.dept).mean().reindex(depts)
    print('\nMean salary per department, df.dp.groupby("dept", keys=DEPTS).mean(..., epsilon=1):')
    print(pd.DataFrame({"private": grouped.round(0), "true": truth_grouped.round(0)}).to_string())

    print("\nLess epsilon means more noise: a larger error, a stronger guarantee.")
    print(f"\nThe ledger (df.dp.budget.ledger), spent {float(budget.spent):g} of 5:")
    ledger = budget.ledger[["operation", "columns", "epsilon", "sensitivity", "spent"]]
    print(ledger.to_string())

    print("\nOne more mean at epsilon=1 would overspend:")
    try:
        private.mean("salary", clip=CLIP, epsilon=1.0)
    except BudgetExceededError as err:
        print(f"  BudgetExceededError: {err}")
    print(f"\nStill spent: {float(budget.spent):g}. A query that fits still runs:")
    print(f"  df.dp.count(epsilon=0.1) -> {private.count(epsilon=0.1)}")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pandas_dp", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("demo", help="the salary story on generated data")
    run.add_argument("--seed", type=int, default=None, help="reproducible noise (not private)")
    args = parser.parse_args(argv)
    if args.command == "demo":
        demo(args.seed)
    return 0


if __name__ == "__main__":
    sys.exit(main())
