"""The ledger file's format: schema, migrations, and stored values read back exactly.

What is stored, per budget: the exact total, the exact amount spent, the
adjacency, the privacy unit's column and, under substitute with one row per
person only, the root frame's row count (public by that adjacency); per
entry: time, operation, column names, clip bounds, number of public keys,
epsilon, mechanism, adjacency, sensitivity, noise scale, the budget's total
after the entry and the process id, and (schema 9) the events it ran with
their exact parameters, a plan's half-widths, and what was asked (the release's
own name, its grouping columns, its public parameters).  Never a data value, a
released value or a key.  Every epsilon is stored exactly, as the text
``"numerator/denominator"`` of a Fraction, never as a float.

The file carries ``PRAGMA application_id`` (so a foreign database is refused
untouched) and ``PRAGMA user_version`` (the schema version; older ledgers
are migrated in one transaction when opened, newer ones are refused):
:data:`MIGRATIONS` holds one step per version.  :mod:`pandas_dp.accounting.sqlite`
reads and writes the file.
"""

from __future__ import annotations

import datetime as dt
import itertools
import json
import math
import os
import re
import sqlite3
from fractions import Fraction
from pathlib import Path
from typing import Final, NamedTuple

import pandas as pd

from ..core import zcdp
from ..core.errors import (
    BudgetMismatchError,
    CorruptLedgerError,
    LedgerFormatError,
    NotALedgerError,
)
from ..core.text import clip_text, epsilon_text
from . import _pld
from .events import events_text, parse_events
from .ledger import PLD, LedgerEntry, Taken, spent_after

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
    "budget_accountant",
    "budgets_frame",
    "check_new_budget",
    "check_same_budget",
    "check_spent",
    "classify",
    "column_sql",
    "delta_spent",
    "entry_row",
    "fraction_text",
    "history_frame",
    "mark_entry",
    "parse_fraction",
    "pld_figures",
    "stored_entry",
    "taken_entries",
    "timestamp",
]

#: ``PRAGMA application_id`` of a pandas_dp ledger (the bytes ``pdLg``).
APPLICATION_ID: Final = 0x70644C67
#: The schema version this code writes (``PRAGMA user_version``).
SCHEMA_VERSION: Final = 9

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
    # open finds its process dead on this host (pandas_dp.accounting._holds).
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
    # 7 -> 8: zCDP (issue 20). A budget's accountant ('epsilon': its total and spent are
    # ε; 'rho': ρ, composed exactly) and the δ it holds; per entry its ρ (NULL under an
    # ε budget) and the δ it spent. An entry of a ρ budget that has no pure ε (Gaussian
    # noise) stores '' as its epsilon.
    (
        "ALTER TABLE budgets ADD COLUMN accountant TEXT NOT NULL DEFAULT 'epsilon' "
        "CHECK (accountant IN ('epsilon', 'rho'))",
        "ALTER TABLE budgets ADD COLUMN delta TEXT NOT NULL DEFAULT '0/1'",
        "ALTER TABLE entries ADD COLUMN rho TEXT",
        "ALTER TABLE entries ADD COLUMN delta TEXT NOT NULL DEFAULT '0/1'",
    ),
    # 8 -> 9: events and PLD (issue 32). Per entry the mechanisms it ran, with their exact
    # parameters (pandas_dp.accounting.events; NULL before: what its epsilon, rho and delta
    # say), and for a release of a plan its planned and realised intervals; per budget how
    # it composes ('sum': its accountant's amounts add up; 'pld': an (epsilon, delta) budget
    # whose events compose by privacy loss distributions; its accountant stays 'epsilon'
    # and its spent '0/1'); per hold what it stands for under PLD. And what was asked
    # (issue 34): the release's own name as the caller wrote it (value_counts, crosstab,
    # describe, ...), the columns it was grouped by (JSON list) and its other public
    # parameters (text). Entries written before version 9 read them blank.
    (
        "ALTER TABLE entries ADD COLUMN events TEXT",
        "ALTER TABLE entries ADD COLUMN planned TEXT",
        "ALTER TABLE entries ADD COLUMN realised TEXT",
        "ALTER TABLE budgets ADD COLUMN composition TEXT NOT NULL DEFAULT 'sum' "
        "CHECK (composition IN ('sum', 'pld'))",
        "ALTER TABLE holds ADD COLUMN events TEXT",
        "ALTER TABLE entries ADD COLUMN release TEXT",
        "ALTER TABLE entries ADD COLUMN grouping TEXT",
        "ALTER TABLE entries ADD COLUMN parameters TEXT",
    ),
)
assert len(MIGRATIONS) == SCHEMA_VERSION

BUDGET_COLUMNS = [
    "name",
    "total",
    "spent",
    "remaining",
    "held",
    "accountant",
    "epsilon_at",
    "at_delta",
    "delta",
    "delta_spent",
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
    "release",
    "grouping",
    "parameters",
    "state",
    "columns",
    "clip",
    "keys",
    "epsilon",
    "epsilon_exact",
    "rho",
    "rho_exact",
    "delta",
    "delta_exact",
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


def check_spent(conn: sqlite3.Connection, path: Path, version: int = SCHEMA_VERSION) -> None:
    """Refuse a ledger whose stored ``spent`` is not the exact sum of a budget's entries.

    The sum of their ε, or of their ρ for a ρ budget (``version`` 8 on).  One
    statement, so one consistent snapshot, even while others write.
    """
    charge = "e.epsilon" if version < 8 else CHARGE if version < 9 else CHARGE_PLD
    rows = conn.execute(
        f"SELECT b.name, b.spent, {charge} AS c, count(e.id) FROM budgets AS b "
        "LEFT JOIN entries AS e ON e.budget = b.name GROUP BY b.name, c"
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


def column_sql(name: str, version: int, table: str = "") -> str:
    """Column ``name`` in SQL, or its value in a ledger of schema ``version`` read unmigrated."""
    missing = {
        "state": (3, f"'{RELEASED}'"),
        "process": (2, "NULL"),
        "privacy_unit": (4, "NULL"),
        "max_rows": (4, "NULL"),
        "max_groups": (4, "NULL"),
        "public_rows": (5, "NULL"),
        "half_width_95": (7, "NULL"),
        "accountant": (8, "'epsilon'"),
        "rho": (8, "NULL"),
        "delta": (8, "'0/1'"),
        "events": (9, "NULL"),
        "planned": (9, "NULL"),
        "realised": (9, "NULL"),
        "composition": (9, "'sum'"),
        "release": (9, "NULL"),
        "grouping": (9, "NULL"),
        "parameters": (9, "NULL"),
    }
    added, default = missing.get(name, (0, ""))
    if version < added:
        return default
    at = f"{table}." if table else ""
    if name == "accountant" and version >= 9:  # a PLD budget stores 'epsilon', composition 'pld'
        return f"CASE WHEN {at}composition = 'pld' THEN 'pld' ELSE {at}accountant END"
    return f"{at}{name}"


def check_new_budget(
    adjacency: str, privacy_unit: str | None, public_rows: object, accountant: str
) -> None:
    """Refuse the settings of an attach that no budget may have (ValueError)."""
    if accountant not in ("epsilon", "rho", "pld"):
        raise ValueError(f'`accountant` must be "epsilon", "rho" or "pld", got {accountant!r}.')
    if public_rows is not None and (adjacency != "substitute" or privacy_unit is not None):
        raise ValueError(
            "`public_rows` is stored only where a frame's row count is public: "
            "adjacency='substitute' without a privacy unit; got "
            f"adjacency={adjacency!r}, privacy_unit={privacy_unit!r}. Pass public_rows=None."
        )
    if public_rows is not None and (
        isinstance(public_rows, bool) or not isinstance(public_rows, int) or public_rows < 0
    ):
        raise ValueError(f"`public_rows` must be a non-negative int or None, got {public_rows!r}.")


def check_same_budget(
    path: Path,
    name: str,
    row: tuple[object, ...],
    total: Fraction,
    adjacency: str,
    privacy_unit: str | None,
    accountant: str,
    delta: Fraction,
) -> None:
    """Refuse to attach budget ``name`` with other settings than stored (BudgetMismatchError).

    ``row``: its stored total, adjacency, privacy_unit, public_rows, accountant, delta.
    """
    where = f"The budget {name!r} in {str(path)!r}"
    stored, kept = parse_fraction(row[0], "a total"), str(row[4])
    if kept == "pld" and not _pld.available():
        raise BudgetMismatchError(
            f"{where} composes its releases by privacy loss distributions, which needs "
            'dp_accounting in this process: pip install "pandas-dp[pld]". It is not spent here '
            "by adding epsilon and delta up instead (a Gaussian release has no epsilon to add)."
        )
    if kept == "pld" and accountant != "pld":
        raise BudgetMismatchError(
            f"{where} composes its releases by privacy loss distributions: attach it with "
            'epsilon= and delta= and without accountant= (or accountant="pld"); its '
            "accountant stays."
        )
    if kept != accountant or stored != total:
        given = epsilon_text(total)
        if kept != accountant:
            given = f"{accountant}={given} (its accountant stays)"
        raise BudgetMismatchError(
            f"{where} has total {kept}={epsilon_text(stored)}, not {given}. Pass "
            f"{kept}={epsilon_text(stored)} to continue it; a total can be raised only "
            f"explicitly, with open_ledger(path).raise_total({name!r}, new_total)."
        )
    held = parse_fraction(row[5], "a delta")
    if held != delta:
        raise BudgetMismatchError(
            f"{where} holds delta={epsilon_text(held)}, not {epsilon_text(delta)}; pass that "
            "delta to continue it."
        )
    if row[1] != adjacency:
        raise BudgetMismatchError(
            f"{where} was created with adjacency={row[1]!r}, not {adjacency!r}; its releases "
            "are accounted under that adjacency."
        )
    if row[2] != privacy_unit:
        raise BudgetMismatchError(
            f"{where} was created with privacy_unit={row[2]!r}, not {privacy_unit!r}; its "
            "releases are accounted per that unit."
        )


def budget_accountant(conn: sqlite3.Connection, name: str, version: int) -> str | None:
    """The accountant stored with budget ``name`` (None: no such budget)."""
    sql = f"SELECT {column_sql('accountant', version)} FROM budgets WHERE name = ?"
    row = conn.execute(sql, (name,)).fetchone()
    return None if row is None else str(row[0])


def delta_spent(
    conn: sqlite3.Connection, name: str, version: int = SCHEMA_VERSION
) -> tuple[Fraction, Fraction]:
    """The δ budget ``name`` holds and what its entries (pending or released) spent, exactly.

    Read inside the transaction that reserves a release spending δ
    (:meth:`pandas_dp.accounting.sqlite.Ledger._reserve`), so the check of its fit
    is atomic across processes.
    """
    delta = column_sql("delta", version)
    row = conn.execute(f"SELECT {delta} FROM budgets WHERE name = ?", (name,)).fetchone()
    spent = conn.execute(f"SELECT {delta} FROM entries WHERE budget = ?", (name,)).fetchall()
    total = Fraction(0) if row is None else parse_fraction(row[0], "a delta")
    return total, sum((parse_fraction(d, "a delta") for (d,) in spent), Fraction(0))


def taken_entries(
    conn: sqlite3.Connection, name: str, version: int = SCHEMA_VERSION
) -> tuple[LedgerEntry, ...]:
    """The releases and reservations of budget ``name``, as an accountant composes them.

    Each with its ε, ρ, δ and events only (the rest of an entry plays no
    part in what it cost), oldest first; read inside the transaction that
    checks a new charge, so the check is atomic across processes.
    """
    columns = ", ".join(column_sql(c, version) for c in ("rho", "delta", "events"))
    rows = conn.execute(
        f"SELECT epsilon, {columns} FROM entries WHERE budget = ? "
        "AND operation NOT IN (?, ?) ORDER BY id",
        (name, CREATE, RAISE_TOTAL),
    ).fetchall()
    try:
        return tuple(
            LedgerEntry(
                "release",
                parse_optional(epsilon, "an epsilon"),
                rho=parse_optional(rho, "a rho"),
                delta=parse_fraction(delta, "a delta"),
                events=parse_events("" if events is None else str(events)),
            )
            for epsilon, rho, delta, events in rows
        )
    except ValueError as err:
        raise CorruptLedgerError(
            f"The ledger is damaged: an entry cannot be read ({err})."
        ) from err


def mark_entry(operation: str, accountant: str, adjacency: str, time: dt.datetime) -> LedgerEntry:
    """A budget's creation or a raised total: an entry that spends nothing, in its accountant."""
    rho = Fraction(0) if accountant == "rho" else None
    return LedgerEntry(
        operation, Fraction(0), mechanism="", adjacency=adjacency, time=time, rho=rho
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


#: The δ at which a ρ budget's (ε, δ) is stated when it holds no δ of its own.
FACT_DELTA: Final = Fraction(1, 10**6)

#: What entry ``e`` of budget ``b`` charged, in SQL: its ρ under a ρ budget, else its ε.
CHARGE: Final = "CASE WHEN b.accountant = 'rho' THEN e.rho ELSE e.epsilon END"
#: :data:`CHARGE` from schema 9: nothing under PLD (a PLD budget's spent stays 0/1).
CHARGE_PLD: Final = f"CASE WHEN b.composition = 'pld' THEN '0/1' ELSE {CHARGE} END"

#: Writes one entry; its values are :func:`entry_row`.
INSERT_ENTRY: Final = (
    "INSERT INTO entries (budget, time, operation, columns, clip, keys, epsilon, "
    "mechanism, adjacency, sensitivity, noise_scale, total, process, state, "
    "privacy_unit, max_rows, max_groups, half_width_95, rho, delta, events, planned, realised, "
    "release, grouping, parameters) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
    "?, ?, ?, ?, ?, ?, ?, ?, ?)"
)


def optional_fraction(value: Fraction | None) -> str:
    """An optional exact amount as stored: :func:`fraction_text`, or ``""`` for none."""
    return "" if value is None else fraction_text(value)


def parse_optional(text: object, what: str) -> Fraction | None:
    """The amount stored by :func:`optional_fraction` (NULL or ``""``: None)."""
    return None if text is None or text == "" else parse_fraction(text, what)


def entry_row(name: str, entry: LedgerEntry, total: Fraction, state: str) -> tuple[object, ...]:
    """The values :data:`INSERT_ENTRY` stores for ``entry`` of budget ``name`` (this process)."""
    return (
        name,
        entry.time.isoformat(),
        entry.operation,
        json.dumps(list(entry.columns)),
        json.dumps([list(pair) for pair in entry.clip]),
        entry.keys,
        optional_fraction(entry.epsilon),
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
        None if entry.rho is None else fraction_text(entry.rho),
        fraction_text(entry.delta),
        events_text(entry.privacy_events),
        entry.planned,
        entry.realised,
        entry.release,
        json.dumps(list(entry.grouping)),
        entry.parameters,
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
    half_width, rho, delta, events, planned, realised = row[16:22]
    release, grouping, parameters = row[22:25]
    try:
        entry = LedgerEntry(
            operation=str(operation),
            epsilon=parse_optional(epsilon, "an epsilon"),
            rho=parse_optional(rho, "a rho"),
            delta=parse_fraction(delta, "a delta"),
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
            events=parse_events("" if events is None else str(events)),
            planned="" if planned is None else str(planned),
            realised="" if realised is None else str(realised),
            release="" if release is None else str(release),
            grouping=() if grouping is None else tuple(str(c) for c in json.loads(str(grouping))),
            parameters="" if parameters is None else str(parameters),
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


def budgets_frame(
    rows: list[tuple[object, ...]],
    holds: dict[str, Fraction],
    deltas: dict[str, Fraction],
    composed: dict[str, Taken] | None = None,
) -> pd.DataFrame:
    """:meth:`~pandas_dp.accounting.sqlite.Ledger.budgets` from the rows of its query.

    Each row: name, total, spent, adjacency, privacy_unit, public_rows, created,
    the counts of releases, pending reservations and seeded releases, the
    accountant and the budget's δ; ``epsilon_at`` is the ε of what was spent
    at ``at_delta``: the δ spent plus, under ρ, the conversion's (the
    budget's δ, else :data:`FACT_DELTA`; under ε, ``epsilon_at`` is the ε spent);
    ``holds``: what the open holds of each budget set aside; ``deltas``: the
    δ each budget's entries spent; ``composed``: what each budget composed by
    PLD has taken, whose spent is the ε at its δ (NaN without ``dp_accounting``).
    """
    records = []
    for row in rows:
        name, total_text, spent_text, adjacency, unit, public_rows, created = row[:7]
        counts, (accountant, delta_text) = row[7:10], row[10:12]
        total = parse_fraction(total_text, "a total")
        spent = parse_fraction(spent_text, "an amount spent")
        delta = parse_fraction(delta_text, "a delta")
        rho = accountant == "rho"
        at = (delta or FACT_DELTA) if rho else Fraction(0)  # the conversion's δ
        used = deltas.get(str(name), Fraction(0))
        held = holds.get(str(name), Fraction(0))
        released, pending, seeded = (int(str(count)) for count in counts)
        figures = {
            "spent": float(spent),
            "remaining": float(total - spent - held),
            "held": float(held),
            "epsilon_at": zcdp.epsilon_at(spent, at) if rho else float(spent),
            "at_delta": float(at + used),
        }
        if str(name) in (composed or {}):
            figures = pld_figures((composed or {})[str(name)])
        records.append(
            {
                "name": name,
                "total": float(total),
                **figures,
                "accountant": accountant,
                "delta": float(delta),
                "delta_spent": float(used),
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


def pld_figures(taken: Taken) -> dict[str, float]:
    """A PLD budget's spent (the ε at its δ), remaining, held, epsilon_at and at_delta.

    NaN where ``dp_accounting`` is not installed (nothing can compose its events).
    """
    if not _pld.available():
        spent = with_holds = math.nan
    else:
        spent, with_holds = float(PLD.spent(taken)), float(PLD.with_holds(taken))
    return {
        "spent": spent,
        "remaining": max(float(taken.total) - with_holds, 0.0),
        "held": max(with_holds - spent, 0.0),
        "epsilon_at": spent,
        "at_delta": float(taken.delta),
    }


def history_frame(
    rows: list[StoredEntry], accountant: str = "epsilon", delta: Fraction = Fraction(0)
) -> pd.DataFrame:
    """:meth:`~pandas_dp.accounting.sqlite.Ledger.history` from a budget's stored entries.

    ``spent`` accumulates each entry's charge under the budget's ``accountant``
    (under PLD: the ε at the budget's ``delta`` of the releases so far, NaN
    without ``dp_accounting``; the create and raise_total entries spend nothing).
    """
    records = []
    releases = [row.entry for row in rows if row.entry.operation not in (CREATE, RAISE_TOTAL)]
    if accountant != "pld":
        spent: list[float] = [
            float(s) for s in itertools.accumulate(row.entry.charge(accountant) for row in rows)
        ]
    else:
        after = iter(
            spent_after(releases, accountant, Fraction(1), delta)
            if _pld.available()
            else [Fraction(0)] * len(releases)
        )
        last = 0.0
        spent = []
        for row in rows:
            if row.entry.operation not in (CREATE, RAISE_TOTAL):
                last = float(next(after)) if _pld.available() else math.nan
            spent.append(last)
    for row, cumulative in zip(rows, spent, strict=True):
        entry = row.entry
        record = entry.as_record()
        record.update(
            state="" if entry.operation in (CREATE, RAISE_TOTAL) else row.state,
            clip=clip_text(entry.clip),
            epsilon_exact=entry.epsilon,
            rho_exact=entry.rho,
            delta_exact=entry.delta,
            total=float(row.total),
            spent=cumulative,
            process=row.process,
        )
        records.append(record)
    frame = pd.DataFrame(records, columns=HISTORY_COLUMNS)
    frame["time"] = pd.to_datetime(frame["time"], utc=True)
    for column in ("keys", "process", "max_rows", "max_groups"):
        frame[column] = frame[column].astype("Int64")
    return frame
