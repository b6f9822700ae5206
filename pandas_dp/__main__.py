"""``python -m pandas_dp demo``: the salary story on generated data.

``python -m pandas_dp ledger FILE [--name NAME]``: the budgets of a ledger file,
or the history of one budget (public parameters only).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

import pandas as pd

from . import datasets, dp
from .errors import BudgetExceededError, LedgerError
from .ledger import SEEDED
from .sqlite_ledger import open_ledger

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


def show_ledger(path: str, name: str | None) -> int:
    """Print the budgets of the ledger at ``path``, or the history of budget ``name``.

    Reads only: the file is opened read-only (``open_ledger(path, read_only=True)``),
    so nothing is created, upgraded or written, and a ledger in a read-only
    folder can be read.
    """
    try:
        with open_ledger(path, read_only=True) as ledger:
            frame = ledger.budgets() if name is None else ledger.history(name)
    except LedgerError as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    notes = []
    if name is None:
        print(f"Budgets in {path} ({len(frame)}):")
        if frame.empty:
            return 0
        frame = frame.assign(created=frame["created"].dt.strftime("%Y-%m-%d %H:%M:%S UTC"))
        seeded = frame["seeded_releases"] > 0
        pending = frame["pending"] > 0
    else:
        print(f"History of {name!r} in {path} ({len(frame)} entries, times in UTC):")
        seeded = frame["mechanism"].str.endswith(SEEDED)
        pending = frame["state"] == "pending"
        frame = frame.drop(columns="epsilon_exact").assign(
            time=frame["time"].dt.strftime("%Y-%m-%d %H:%M:%S"),
            keys=frame["keys"].astype("string").fillna(""),
            process=frame["process"].astype("string").fillna(""),
        )
    print(frame.to_string(index=False, na_rep=""))
    if seeded.any():
        notes.append(
            f"Releases marked {SEEDED} were drawn from seeded, reproducible noise "
            "(set_budget(..., seed=...)): they are NOT private, whatever epsilon they spent."
        )
    if pending.any():
        notes.append(
            "Pending reservations belong to a release still being computed, or to a process "
            "that stopped before committing it; they count as spent."
        )
    for note in notes:
        print(f"\nNote: {note}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pandas_dp", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("demo", help="the salary story on generated data")
    run.add_argument("--seed", type=int, default=None, help="reproducible noise (not private)")
    show = commands.add_parser(
        "ledger",
        help="show the budgets of a ledger file, or the history of one budget",
        description="Show the budgets of a pandas_dp ledger file (name, total, spent, "
        "remaining, releases, pending, seeded_releases, ...), or with --name every entry of one "
        "budget. Reads only: never creates, upgrades or writes the file.",
    )
    show.add_argument("path", help="the ledger file, e.g. privacy-ledger.sqlite")
    show.add_argument("--name", default=None, help="show the history of this budget")
    args = parser.parse_args(argv)
    if args.command == "ledger":
        return show_ledger(args.path, args.name)
    demo(args.seed)
    return 0


if __name__ == "__main__":
    sys.exit(main())
