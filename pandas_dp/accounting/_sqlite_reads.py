"""What a ledger file's budgets have taken, read in one snapshot.

:func:`taken` is what a budget's accountant reads when a charge is checked
(inside the transaction that records it, so the check is atomic across
processes); :func:`snapshot` the same in a read of its own; :func:`budget_rows`
the rows of :meth:`~pandas_dp.accounting.sqlite.Ledger.budgets`.  These
functions run on :class:`~pandas_dp.accounting.sqlite.Ledger`'s connection; they
never write.
"""

from __future__ import annotations

import sqlite3
from fractions import Fraction
from pathlib import Path

from ._holds import held, held_events
from ._sqlite_format import (
    CREATE,
    PENDING,
    RAISE_TOTAL,
    RELEASED,
    check_spent,
    column_sql,
    delta_spent,
    parse_fraction,
    taken_entries,
)
from .ledger import ACCOUNTANTS, SEEDED, Taken

__all__ = ["BudgetRows", "budget_rows", "snapshot", "taken"]

#: The rows of ``budgets()``, what the holds of each budget set aside, the δ each
#: spent, and what each budget composed by PLD has taken.
BudgetRows = tuple[
    list[tuple[object, ...]], dict[str, Fraction], dict[str, Fraction], dict[str, Taken]
]


def taken(
    conn: sqlite3.Connection,
    name: str,
    version: int,
    total: Fraction,
    spent: Fraction,
    accountant: str,
    skip: int | None = None,
) -> Taken:
    """What budget ``name`` has taken (its entries; its holds but ``skip``'s).

    ``total`` and ``spent`` as stored; the entries and the holds' events are
    read only for an accountant that composes them.
    """
    composes = ACCOUNTANTS[accountant].composes
    delta, delta_used = delta_spent(conn, name, version)
    return Taken(
        total,
        delta,
        spent,
        held(conn, name, version),
        delta_used,
        taken_entries(conn, name, version) if composes else (),
        held_events(conn, name, version, skip) if composes else (),
    )


def snapshot(conn: sqlite3.Connection, name: str, version: int, accountant: str) -> Taken:
    """:func:`taken` of budget ``name`` in one read transaction (unless one is open)."""
    own = not conn.in_transaction
    if own:
        conn.execute("BEGIN")
    try:
        row = conn.execute("SELECT total, spent FROM budgets WHERE name = ?", (name,)).fetchone()
        total = parse_fraction(row[0], "a total")
        return taken(conn, name, version, total, parse_fraction(row[1], "a spent"), accountant)
    finally:
        if own:
            conn.execute("COMMIT")


def budget_rows(conn: sqlite3.Connection, path: Path, version: int) -> BudgetRows:
    """The rows of ``budgets()`` and what it shows beside them, in one snapshot.

    Checks first that every budget's stored amount spent is the exact sum of
    its entries (CorruptLedgerError).
    """
    state = column_sql("state", version, "e")
    unit = column_sql("privacy_unit", version, "b")
    public = column_sql("public_rows", version, "b")
    accountant = column_sql("accountant", version, "b")
    delta = column_sql("delta", version, "b")
    conn.execute("BEGIN")  # one snapshot for the check and the table
    try:
        check_spent(conn, path, version)
        rows = conn.execute(
            f"SELECT b.name, b.total, b.spent, b.adjacency, {unit}, {public}, b.created, "
            f"count(e.id) FILTER (WHERE {state} = ?), "
            f"count(e.id) FILTER (WHERE {state} = ?), "
            f"count(e.id) FILTER (WHERE {state} = ? AND e.mechanism LIKE ?), "
            f"{accountant}, {delta} "
            "FROM budgets AS b LEFT JOIN entries AS e "
            "ON e.budget = b.name AND e.operation NOT IN (?, ?) "
            "GROUP BY b.name ORDER BY b.name",
            (RELEASED, PENDING, RELEASED, f"%{SEEDED}", CREATE, RAISE_TOTAL),
        ).fetchall()
        names = [str(row[0]) for row in rows]
        holds = {n: held(conn, n, version) for n in names}
        deltas = {n: delta_spent(conn, n, version)[1] for n in names}
        composed = {
            str(row[0]): snapshot(conn, str(row[0]), version, str(row[10]))
            for row in rows
            if ACCOUNTANTS[str(row[10])].composes
        }
    finally:
        conn.execute("COMMIT")
    return rows, holds, deltas, composed
