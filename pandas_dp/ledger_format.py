"""The ledger file's format: schema, migrations, and stored values read back exactly.

What is stored, per budget: the exact total, the exact amount spent, the
adjacency, the privacy unit's column and, under substitute with one row per
person only, the root frame's row count (public by that adjacency); per
entry: time, operation, column names, clip bounds, number of public keys,
epsilon, mechanism, adjacency, sensitivity, noise scale, the budget's total
after the entry and the process id.  Never a data value, a
released value or a key.  Every epsilon is stored exactly, as the text
``"numerator/denominator"`` of a Fraction, never as a float.

The file carries ``PRAGMA application_id`` (so a foreign database is refused
untouched) and ``PRAGMA user_version`` (the schema version; older ledgers
are migrated in one transaction when opened, newer ones are refused):
:data:`MIGRATIONS` holds one step per version.  :mod:`pandas_dp.sqlite_ledger`
reads and writes the file.
"""

from __future__ import annotations

import datetime as dt
import itertools
import json
import os
import re
import sqlite3
from fractions import Fraction
from pathlib import Path
from typing import Final, NamedTuple

import pandas as pd

from .errors import CorruptLedgerError, LedgerFormatError, NotALedgerError
from .ledger import LedgerEntry
from .text import clip_text

__all__ = [
    "APPLICATION_ID",
    "BUDGET_COLUMNS",
    "CREATE",
    "HISTORY_COLUMNS",
    "INSERT_ENTRY",
    "MIGRATIONS",
    "PENDING",
    "RAISE_TOTAL",
    "RELEASED",
    "SCHEMA_VERSION",
    "SQLITE_HEADER",
    "StoredEntry",
    "budgets_frame",
    "check_spent",
    "classify",
    "entry_row",
    "fraction_text",
    "history_frame",
    "parse_fraction",
    "stored_entry",
    "timestamp",
]

#: ``PRAGMA application_id`` of a pandas_dp ledger (the bytes ``pdLg``).
APPLICATION_ID: Final = 0x70644C67
#: The schema version this code writes (``PRAGMA user_version``).
SCHEMA_VERSION: Final = 7

#: Operations of the entries that are not releases (they spend nothing).
CREATE: Final = "create"
RAISE_TOTAL: Final = "raise_total"
#: States of a release entry: reserved before its statistics are computed, released once committed.
PENDING: Final = "pending"
RELEASED: Final = "released"

SQLITE_HEADER = b"SQLite format 3\x00"
_FRACTION = re.compile(r"(0|[1-9][0-9]*)/([1-9][0-9]*)")

# One tuple of statements per schema version: MIGRATIONS[v] upgrades version v
# to v + 1.  Released steps never change; a new schema appends a step.
MIGRATIONS: Final[tuple[tuple[str, ...], ...]] = (
    # 0 -> 1: budgets and their entries.
    (
        """CREATE TABLE budgets (
            name      TEXT PRIMARY KEY NOT NULL,
            total     TEXT NOT NULL,   -- exact Fraction, "num/den"
            spent     TEXT NOT NULL,   -- exact Fraction, the sum of its entries' epsilon
            adjacency TEXT NOT NULL,
            created   TEXT NOT NULL    -- ISO 8601, UTC
        )""",
        """CREATE TABLE entries (
            id          INTEGER PRIMARY KEY AUTOINCREMENT,
            budget      TEXT NOT NULL REFERENCES budgets (name),
            time        TEXT NOT NULL,
            operation   TEXT NOT NULL,
            columns     TEXT NOT NULL,  -- JSON list of column labels
            clip        TEXT NOT NULL,  -- JSON list of [lower, upper]
            keys        INTEGER,        -- number of public keys, or NULL
            epsilon     TEXT NOT NULL,  -- exact Fraction, "num/den"
            mechanism   TEXT NOT NULL,
            adjacency   TEXT NOT NULL,
            sensitivity TEXT NOT NULL,
            noise_scale TEXT NOT NULL,
            total       TEXT NOT NULL   -- the budget's total after this entry
        )""",
    ),
    # 1 -> 2: which process recorded an entry (tells concurrent jobs apart),
    # and an index for reading one budget's history.
    (
        "ALTER TABLE entries ADD COLUMN process INTEGER",
        "CREATE INDEX entries_by_budget ON entries (budget, id)",
    ),
    # 2 -> 3: reservations. A release is first recorded 'pending' (it counts as
    # spent) and becomes 'released' before its noise is drawn; a cancelled
    # reservation is deleted. Every entry written before version 3 was released.
    (
        "ALTER TABLE entries ADD COLUMN state TEXT NOT NULL DEFAULT 'released' "
        "CHECK (state IN ('pending', 'released'))",
    ),
    # 3 -> 4: a privacy unit. A budget's unit column (NULL: one row is one person),
    # and per release the unit and the contribution bounds it used.
    (
        "ALTER TABLE budgets ADD COLUMN privacy_unit TEXT",
        "ALTER TABLE entries ADD COLUMN privacy_unit TEXT",
        "ALTER TABLE entries ADD COLUMN max_rows INTEGER",
        "ALTER TABLE entries ADD COLUMN max_groups INTEGER",
    ),
    # 4 -> 5: the row count of a budget's root frame where it is public (substitute, one
    # row per person); NULL where it is not public, and in every budget created before.
    ("ALTER TABLE budgets ADD COLUMN public_rows INTEGER",),
    # 5 -> 6: holds (df.dp.reserve): a share of a budget set aside for one process, which
    # every other reservation counts as taken; deleted when its block ends, or when a later
    # open finds its process dead on this host (pandas_dp.ledger_holds).
    (
        """CREATE TABLE holds (
            id      INTEGER PRIMARY KEY AUTOINCREMENT,
            budget  TEXT NOT NULL REFERENCES budgets (name),
            epsilon TEXT NOT NULL,     -- exact Fraction, what is left of the share
            process INTEGER NOT NULL,  -- the holder's process id ...
            host    TEXT NOT NULL,     -- ... on this host
            time    TEXT NOT NULL      -- ISO 8601, UTC
        )""",
    ),
    # 6 -> 7: each release's half-width at 95%, as text, computed from its plan when it
    # was made. Entries written before version 7 read it blank.
    ("ALTER TABLE entries ADD COLUMN half_width_95 TEXT",),
)
assert len(MIGRATIONS) == SCHEMA_VERSION

BUDGET_COLUMNS = [
    "name",
    "total",
    "spent",
    "remaining",
    "held",
    "adjacency",
    "privacy_unit",
    "public_rows",
    "releases",
    "pending",
    "seeded_releases",
    "created",
]
HISTORY_COLUMNS = [
    "time",
    "operation",
    "state",
    "columns",
    "clip",
    "keys",
    "epsilon",
    "epsilon_exact",
    "mechanism",
    "adjacency",
    "sensitivity",
    "noise_scale",
    "half_width_95",
    "privacy_unit",
    "max_rows",
    "max_groups",
    "total",
    "spent",
    "process",
]


# ------------------------------------------------------------- what a file holds


def classify(conn: sqlite3.Connection, path: Path) -> int:
    """The schema version of a ledger; 0 for an empty database; else NotALedgerError.

    The three reads are one snapshot (a read transaction unless one is open):
    another process creating the ledger at the same moment commits its
    tables, application id and version together, and must never be seen
    half-way (tables, but no application id yet).
    """
    own = not conn.in_transaction
    if own:
        conn.execute("BEGIN")
    try:
        application, version, objects = conn.execute(
            "SELECT (SELECT application_id FROM pragma_application_id), "
            "(SELECT user_version FROM pragma_user_version), "
            "(SELECT count(*) FROM sqlite_master)"
        ).fetchone()
    finally:
        if own:
            conn.execute("COMMIT")
    version = int(version)
    if application == APPLICATION_ID:
        if version > SCHEMA_VERSION:
            raise LedgerFormatError(
                f"The ledger {str(path)!r} has schema version {version}, written by a "
                f"newer pandas_dp; this one reads versions up to {SCHEMA_VERSION}. Upgrade "
                "pandas_dp. The file was left untouched."
            )
        return version
    if application == 0 and version == 0 and objects == 0:
        return 0
    raise NotALedgerError(
        f"{str(path)!r} is a SQLite database of another application, not a pandas_dp "
        "ledger; it was left untouched. Choose another path for the ledger."
    )


def check_spent(conn: sqlite3.Connection, path: Path) -> None:
    """Refuse a ledger whose stored ``spent`` is not the exact sum of a budget's entries.

    One statement, so one consistent snapshot, even while others write.
    """
    rows = conn.execute(
        "SELECT b.name, b.spent, e.epsilon, count(e.id) FROM budgets AS b "
        "LEFT JOIN entries AS e ON e.budget = b.name GROUP BY b.name, e.epsilon"
    ).fetchall()
    stored: dict[str, Fraction] = {}
    summed: dict[str, Fraction] = {}
    for name, spent, epsilon, count in rows:
        stored[name] = parse_fraction(spent, "an amount spent")
        summed.setdefault(name, Fraction(0))
        if epsilon is not None:
            summed[name] += parse_fraction(epsilon, "an epsilon") * int(count)
    for name, spent in stored.items():
        if spent != summed[name]:
            raise CorruptLedgerError(
                f"The ledger {str(path)!r} is damaged: the amount spent stored for the "
                f"budget {name!r} is not the exact sum of its entries (edited by hand, or "
                "damaged). It was left untouched; restore it from a backup."
            )


# ------------------------------------------------------------- exact values as text


def fraction_text(value: Fraction) -> str:
    """``value`` as the exact text ``"numerator/denominator"`` (never a float)."""
    return f"{value.numerator}/{value.denominator}"


def parse_fraction(text: object, what: str) -> Fraction:
    """The non-negative Fraction stored as ``"num/den"``, or CorruptLedgerError."""
    match = _FRACTION.fullmatch(text) if isinstance(text, str) else None
    if match is None:
        raise CorruptLedgerError(
            f"The ledger is damaged: {what} must be stored as 'numerator/denominator', "
            f"got {text!r}."
        )
    return Fraction(int(match[1]), int(match[2]))


#: Writes one entry; its values are :func:`entry_row`.
INSERT_ENTRY: Final = (
    "INSERT INTO entries (budget, time, operation, columns, clip, keys, epsilon, "
    "mechanism, adjacency, sensitivity, noise_scale, total, process, state, "
    "privacy_unit, max_rows, max_groups, half_width_95) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)


def entry_row(name: str, entry: LedgerEntry, total: Fraction, state: str) -> tuple[object, ...]:
    """The values :data:`INSERT_ENTRY` stores for ``entry`` of budget ``name`` (this process)."""
    return (
        name,
        entry.time.isoformat(),
        entry.operation,
        json.dumps(list(entry.columns)),
        json.dumps([list(pair) for pair in entry.clip]),
        entry.keys,
        fraction_text(entry.charge("epsilon")),
        entry.mechanism,
        entry.adjacency,
        entry.sensitivity,
        entry.noise_scale,
        fraction_text(total),
        os.getpid(),
        state,
        entry.privacy_unit,
        entry.max_rows,
        entry.max_groups,
        entry.half_width_95,
    )


class StoredEntry(NamedTuple):
    """An entry as stored: the entry, the budget's total after it, its process and state."""

    entry: LedgerEntry
    total: Fraction
    process: int | None
    state: str


def stored_entry(row: tuple[object, ...]) -> StoredEntry:
    """The entry stored in ``row`` (the columns that ``Ledger._entries`` selects)."""
    time, operation, columns, clip, keys, epsilon, mechanism, adjacency = row[:8]
    sensitivity, noise_scale, total, process, state, unit, max_rows, max_groups = row[8:16]
    half_width = row[16]
    try:
        entry = LedgerEntry(
            operation=str(operation),
            epsilon=parse_fraction(epsilon, "an epsilon"),
            columns=tuple(str(c) for c in json.loads(str(columns))),
            mechanism=str(mechanism),
            adjacency=str(adjacency),
            sensitivity=str(sensitivity),
            noise_scale=str(noise_scale),
            clip=tuple((float(lo), float(hi)) for lo, hi in json.loads(str(clip))),
            keys=None if keys is None else int(str(keys)),
            time=timestamp(time),
            privacy_unit=None if unit is None else str(unit),
            max_rows=None if max_rows is None else int(str(max_rows)),
            max_groups=None if max_groups is None else int(str(max_groups)),
            half_width_95="" if half_width is None else str(half_width),
        )
    except (ValueError, TypeError) as err:  # json.JSONDecodeError is a ValueError
        raise CorruptLedgerError(
            f"The ledger is damaged: an entry cannot be read ({err})."
        ) from err
    if state not in (PENDING, RELEASED):
        raise CorruptLedgerError(f"The ledger is damaged: an entry has the state {state!r}.")
    process_id = None if process is None else int(str(process))
    return StoredEntry(entry, parse_fraction(total, "a total"), process_id, str(state))


def timestamp(text: object) -> dt.datetime:
    """The stored ISO 8601 time ``text``, or CorruptLedgerError."""
    if not isinstance(text, str):
        raise CorruptLedgerError(f"The ledger is damaged: a time must be text, got {text!r}.")
    try:
        return dt.datetime.fromisoformat(text)
    except ValueError as err:
        raise CorruptLedgerError(f"The ledger is damaged: bad time {text!r}.") from err


def budgets_frame(rows: list[tuple[object, ...]], holds: dict[str, Fraction]) -> pd.DataFrame:
    """:meth:`~pandas_dp.sqlite_ledger.Ledger.budgets` from the rows of its query.

    Each row: name, total, spent, adjacency, privacy_unit, public_rows, created,
    and the counts of releases, pending reservations and seeded releases;
    ``holds``: what the open holds of each budget set aside.
    """
    records = []
    for name, total_text, spent_text, adjacency, unit, public_rows, created, *counts in rows:
        total = parse_fraction(total_text, "a total")
        spent = parse_fraction(spent_text, "an amount spent")
        held = holds.get(str(name), Fraction(0))
        released, pending, seeded = (int(str(count)) for count in counts)
        records.append(
            {
                "name": name,
                "total": float(total),
                "spent": float(spent),
                "remaining": float(total - spent - held),
                "held": float(held),
                "adjacency": adjacency,
                "privacy_unit": unit,
                "public_rows": public_rows,
                "releases": released,
                "pending": pending,
                "seeded_releases": seeded,
                "created": timestamp(created),
            }
        )
    frame = pd.DataFrame(records, columns=BUDGET_COLUMNS)
    frame["created"] = pd.to_datetime(frame["created"], utc=True)
    frame["public_rows"] = frame["public_rows"].astype("Int64")
    return frame


def history_frame(rows: list[StoredEntry]) -> pd.DataFrame:
    """:meth:`~pandas_dp.sqlite_ledger.Ledger.history` from a budget's stored entries."""
    records = []
    spent = itertools.accumulate(row.entry.charge("epsilon") for row in rows)
    for row, cumulative in zip(rows, spent, strict=True):
        entry = row.entry
        record = entry.as_record()
        record.update(
            state="" if entry.operation in (CREATE, RAISE_TOTAL) else row.state,
            clip=clip_text(entry.clip),
            epsilon_exact=entry.epsilon,
            total=float(row.total),
            spent=float(cumulative),
            process=row.process,
        )
        records.append(record)
    frame = pd.DataFrame(records, columns=HISTORY_COLUMNS)
    frame["time"] = pd.to_datetime(frame["time"], utc=True)
    for column in ("keys", "process", "max_rows", "max_groups"):
        frame[column] = frame[column].astype("Int64")
    return frame
