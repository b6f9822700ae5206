"""``python -m pandas_dp demo``: the salary story on generated data.

``python -m pandas_dp ledger FILE [--name NAME]``: the budgets of a ledger file,
or the history of one budget (public parameters only).
"""

from __future__ import annotations

import argparse
import sys
import textwrap
from collections.abc import Sequence

import pandas as pd

from . import datasets, dp
from .accounting.ledger import SEEDED
from .accounting.sqlite import open_ledger
from .core.errors import BudgetExceededError, LedgerError
from .core.text import labelled_figures, number_text

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
    print(f"df.dp.set_budget(epsilon=5.0)  ->  {budget!r}\n")

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


#: The widest line ``python -m pandas_dp ledger`` prints.
WIDTH = 100
#: Per row of the ledger views: the columns of its first line (a table), then the columns
#: written below it as "label value" pairs, wrapped to WIDTH.
BUDGET_LINE = ("name", "total", "spent", "held", "remaining", "releases", "pending")
BUDGET_DETAILS = (
    "accountant",
    "epsilon_at",
    "at_delta",
    "delta",
    "adjacency",
    "privacy_unit",
    "public_rows",
    "seeded_releases",
    "created",
)
HISTORY_LINE = ("time", "operation", "state", "epsilon", "spent", "process")
HISTORY_DETAILS = (
    "release",
    "grouping",
    "parameters",
    "rho",
    "delta",
    "columns",
    "clip",
    "keys",
    "mechanism",
    "adjacency",
    "sensitivity",
    "noise_scale",
    "half_width_95",
    "planned",
    "realised",
    "events",
    "privacy_unit",
    "max_rows",
    "max_groups",
    "total",
)
_EPSILONS = {"total", "spent", "held", "remaining", "epsilon", "rho", "epsilon_at"}
LABELS = {
    "half_width_95": "± at 95%",
    "total": "total after",
    "epsilon_at": "spent as ε",
    "at_delta": "at δ",
    "planned": "planned ±",
    "realised": "realised ±",
}


def _cell(column: str, value: object) -> str:
    """One value of a ledger view as text: figures by number_text, nothing for a missing one."""
    if value is None or value is pd.NA or (isinstance(value, float) and value != value):
        return ""
    if isinstance(value, pd.Timestamp):
        return value.strftime("%Y-%m-%d %H:%M:%S")
    if column in _EPSILONS:
        return number_text(float(str(value)), 6)
    if isinstance(value, int | float) and not isinstance(value, bool):
        return number_text(value)
    return str(value)


def blocks(frame: pd.DataFrame, line: Sequence[str], details: Sequence[str]) -> list[str]:
    """``frame`` as text no wider than :data:`WIDTH`: per row, a table line and its details.

    The ``line`` columns form an aligned table (figures right-aligned); the
    non-empty ``details`` follow below each row as ``label value`` pairs,
    wrapped and indented.  A table wider than WIDTH (a very long name) is cut
    at WIDTH with ``…``.
    """
    cells = [
        [_cell(c, v) for c, v in zip(line, row, strict=True)]
        for row in frame[list(line)].itertuples(index=False)
    ]
    widths = [max([len(c), *(len(r[i]) for r in cells)]) for i, c in enumerate(line)]
    right = [c in _EPSILONS or pd.api.types.is_numeric_dtype(frame[c]) for c in line]

    def row_text(values: Sequence[str]) -> str:
        text = "  ".join(
            v.rjust(w) if r else v.ljust(w) for v, w, r in zip(values, widths, right, strict=True)
        ).rstrip()
        return text if len(text) <= WIDTH else text[: WIDTH - 1] + "…"

    out = [row_text(line)]
    for values, (_, record) in zip(cells, frame.iterrows(), strict=True):
        out.append(row_text(values))
        pairs = [
            f"{LABELS.get(column, column.replace('_', ' '))} {text}"
            for column in details
            if (text := _cell(column, record[column]))
        ]
        out += _wrap(pairs)
    return out


def _wrap(pairs: Sequence[str], indent: str = "    ") -> list[str]:
    """``pairs`` joined by `` · ``, in lines of at most WIDTH that break between pairs."""
    lines: list[str] = []
    for pair in pairs:
        if lines and len(lines[-1]) + 3 + len(pair) <= WIDTH:
            lines[-1] += f" · {pair}"
        else:  # a pair longer than a line (a long mechanism) is wrapped on its own
            lines += textwrap.wrap(pair, WIDTH, initial_indent=indent, subsequent_indent=indent)
    return lines


def show_ledger(path: str, name: str | None) -> int:
    """Print the budgets of the ledger at ``path``, or the history of budget ``name``.

    Reads only: the file is opened read-only (``open_ledger(path, read_only=True)``),
    so nothing is created, upgraded or written, and a ledger in a read-only
    folder can be read.  No line is wider than :data:`WIDTH`: each budget or
    entry is one table line and, below it, its other fields wrapped.
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
        lines = blocks(frame, BUDGET_LINE, BUDGET_DETAILS)
        seeded = frame["seeded_releases"] > 0
        pending = frame["pending"] > 0
    else:
        print(f"History of {name!r} in {path} ({len(frame)} entries, times in UTC):")
        half_widths = [  # each figure labelled by its column, written by number_text
            labelled_figures(str(columns).split(", "), str(text))
            for columns, text in zip(frame["columns"], frame["half_width_95"], strict=True)
        ]
        lines = blocks(frame.assign(half_width_95=half_widths), HISTORY_LINE, HISTORY_DETAILS)
        seeded = frame["mechanism"].str.endswith(SEEDED)
        pending = frame["state"] == "pending"
    print("\n".join(lines))
    if seeded.any():
        notes.append(
            f"Releases marked {SEEDED} were drawn from seeded, reproducible noise "
            "(set_budget(..., seed=...)): they are NOT private, whatever epsilon they spent."
        )
    budgets = frame if name is None else _budget(path, name)
    composed = budgets["accountant"] == "pld"
    if composed.any():
        notes.append(
            "A budget whose accountant is pld composes its releases by their privacy loss "
            "distributions (dp_accounting): its spent is the ε at its δ of all of them, "
            "recomputed from the events each entry records"
            + (
                "."
                if frame["spent"].notna().all()
                else "; without dp_accounting installed it "
                'cannot be computed here (pip install "pandas-dp[pld]").'
            )
        )
    if ((budgets["accountant"] == "epsilon") & (budgets["delta"] > 0)).any():
        notes.append(
            "A budget whose accountant is epsilon and that holds a delta adds its releases' ε "
            'and δ up: it was created with accountant="epsilon", or where dp_accounting was not '
            "installed (it keeps its accountant; a new budget, with dp_accounting installed, "
            'composes by privacy loss distributions: pip install "pandas-dp[pld]").'
        )
    if pending.any():
        notes.append(
            "Pending reservations belong to a release still being computed, or to a process "
            "that stopped before committing it; they count as spent."
        )
    for note in notes:
        print()
        print(textwrap.fill(f"Note: {note}", WIDTH, subsequent_indent="      "))
    return 0


def _budget(path: str, name: str) -> pd.DataFrame:
    """The row of :meth:`~pandas_dp.accounting.sqlite.Ledger.budgets` of budget ``name``."""
    with open_ledger(path, read_only=True) as ledger:
        budgets = ledger.budgets()
    return budgets[budgets["name"] == name]


DESCRIPTION = """\
pandas_dp from the command line.

  python -m pandas_dp demo                      the salary story on generated data
  python -m pandas_dp ledger FILE               the budgets of a ledger file
  python -m pandas_dp ledger FILE --name NAME   the history of one budget

Ledgers are read only, and show public parameters only (never a data value).
"""


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m pandas_dp",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("demo", help="the salary story on generated data")
    run.add_argument("--seed", type=int, default=None, help="reproducible noise (not private)")
    show = commands.add_parser(
        "ledger",
        help="show the budgets of a ledger file, or the history of one budget",
        description="Show the budgets of a pandas_dp ledger file (name, total, spent, held, "
        "remaining, releases, pending, ...), or with --name every entry of one budget. Reads "
        "only: never creates, upgrades or writes the file.",
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
