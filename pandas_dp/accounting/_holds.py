"""Holds in a ledger file: shares of a budget set aside for one process.

``with df.dp.reserve(epsilon=0.5):`` on a named ledger budget writes one row
in the ``holds`` table (schema version 6, :mod:`pandas_dp.accounting._sqlite_format`):
the budget, what is left of the share (an exact Fraction), the process id,
the host name and the time.  Every process's reservation counts the rows of
its budget as taken (:func:`~pandas_dp.accounting.ledger.check_fits`), so nobody else
can spend the share; the holder's releases draw on it first.  The row is
deleted when the block ends, and what is left is free again.

A process that dies inside the block cannot delete its row.  The rule: when
a ledger is opened for writing, the holds recorded on this host by processes
that no longer exist are deleted (their shares are free again; releases they
made stay spent).  So a hold is freed only by a later open on its own host,
and never automatically on a system without POSIX signals (Windows).  A
process id reused by a new process keeps the dead one's hold until the new
process ends.

These functions run inside :class:`~pandas_dp.accounting.sqlite.Ledger`'s
transactions (they take its connection); they never open one.
"""

from __future__ import annotations

import os
import socket
import sqlite3
from fractions import Fraction

from ..core.errors import CorruptLedgerError, ReservationError
from ._sqlite_format import fraction_text, parse_fraction
from .events import Event, events_text, parse_events
from .ledger import Accountant, Taken

__all__ = [
    "close_hold",
    "dead_holds",
    "draw",
    "held",
    "held_events",
    "open_hold",
    "process_alive",
]


def held(conn: sqlite3.Connection, name: str, version: int) -> Fraction:
    """What the open holds of budget ``name`` set aside (0 in a ledger older than holds)."""
    if version < 6:
        return Fraction(0)
    rows = conn.execute("SELECT epsilon FROM holds WHERE budget = ?", (name,)).fetchall()
    return sum((parse_fraction(row[0], "a hold") for row in rows), Fraction(0))


def held_events(
    conn: sqlite3.Connection, name: str, version: int, skip: int | None = None
) -> tuple[tuple[Event, ...], ...]:
    """What the open holds of ``name`` (but ``skip``) stand for, to a composing accountant."""
    if version < 9:
        return ()
    rows = conn.execute("SELECT id, events FROM holds WHERE budget = ?", (name,)).fetchall()
    try:
        return tuple(parse_events(str(text or "")) for token, text in rows if token != skip)
    except ValueError as err:
        raise CorruptLedgerError(f"The ledger is damaged: a hold cannot be read ({err}).") from err


def open_hold(
    conn: sqlite3.Connection,
    name: str,
    epsilon: Fraction,
    taken: Taken,
    rule: Accountant,
    events: tuple[Event, ...] = (),
) -> int:
    """Record a hold of ``epsilon`` on ``name`` for this process if it fits; its row id.

    ``taken``: what the budget's entries and open holds have taken; ``rule``:
    its accountant (``events``: what the hold stands for, when it composes).
    """
    rule.check(taken, epsilon, Fraction(0), events)
    cursor = conn.execute(
        "INSERT INTO holds (budget, epsilon, process, host, time, events) "
        "VALUES (?, ?, ?, ?, strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), ?)",
        (name, fraction_text(epsilon), os.getpid(), socket.gethostname(), events_text(events)),
    )
    assert cursor.lastrowid is not None
    return cursor.lastrowid


def _left(conn: sqlite3.Connection, name: str, token: int) -> Fraction:
    row = conn.execute(
        "SELECT epsilon FROM holds WHERE id = ? AND budget = ?", (token, name)
    ).fetchone()
    if row is None:
        raise ReservationError(
            f"The budget {name!r} has no open hold {token!r} (it was closed, or released "
            "because its process was found dead)."
        )
    return parse_fraction(row[0], "a hold")


def draw(conn: sqlite3.Connection, name: str, token: int, epsilon: Fraction) -> Fraction:
    """Take up to ``epsilon`` from the hold ``token`` of ``name``; the amount taken."""
    left = _left(conn, name, token)
    drawn = min(left, epsilon)
    conn.execute("UPDATE holds SET epsilon = ? WHERE id = ?", (fraction_text(left - drawn), token))
    return drawn


def close_hold(conn: sqlite3.Connection, name: str, token: int) -> Fraction:
    """Delete the hold ``token`` of ``name``; what was left of it (free again)."""
    left = _left(conn, name, token)
    conn.execute("DELETE FROM holds WHERE id = ?", (token,))
    return left


def process_alive(pid: int) -> bool:
    """Whether process ``pid`` exists on this host (True where that cannot be told)."""
    if os.name != "posix":  # os.kill(pid, 0) would end the process on Windows
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # PermissionError: it exists, owned by someone else
        return True
    return True


def dead_holds(conn: sqlite3.Connection) -> list[int]:
    """The ids of the holds recorded on this host by processes that no longer exist."""
    rows = conn.execute(
        "SELECT id, process FROM holds WHERE host = ?", (socket.gethostname(),)
    ).fetchall()
    return [int(token) for token, pid in rows if not process_alive(int(pid))]
