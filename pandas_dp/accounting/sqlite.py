"""The SQLite ledger: named budgets that outlive a process, in one file.

Budgets that outlive a process are named budgets in a SQLite ledger file:
``df.dp.set_budget(epsilon=5, ledger="privacy-ledger.sqlite", name="hr.salaries")``
keeps the accounting of the budget ``hr.salaries`` in a file, so a nightly
job that re-reads the same people continues from what earlier runs spent, and
two jobs on the same data share one total.  SQLite ships with Python: no
server, safe across threads and processes.  While in use a ledger is three
files, the database and its ``-wal`` and ``-shm`` companions; copy it with
:meth:`Ledger.backup`, never file by file.

The store is :class:`SqliteStore`, the second implementation of
:class:`~pandas_dp.accounting.ledger.BudgetStore` beside the in-memory one; both apply the
one accounting rule :func:`~pandas_dp.accounting.ledger.check_fits`.  A release is
first reserved in one transaction (``BEGIN IMMEDIATE``, check what remains,
insert the entry as "pending", update the running total, ``COMMIT``) before
its statistics are computed, committed ("released") before any noise is
drawn, or cancelled (deleted, its epsilon returned exactly) if computing
raised.  A process killed at any moment leaves a ledger that never shows less
than was released (a reservation it left pending stays spent); a refused
release writes nothing.  :func:`open_ledger` checks that every budget's
stored amount spent is the exact sum of its entries.

The file's format (schema, migrations, exact stored values) is
:mod:`pandas_dp.accounting._sqlite_format`.
"""

from __future__ import annotations

import datetime as dt
import os
import sqlite3
import threading
import time
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from fractions import Fraction
from pathlib import Path
from types import TracebackType
from typing import Final, TypeVar

import pandas as pd

from ..core.errors import (
    CorruptLedgerError,
    LedgerAccessError,
    LedgerError,
    LedgerLockedError,
    NotALedgerError,
    ReservationError,
    UnknownBudgetError,
)
from ..core.text import epsilon_text
from ..core.validation import check_adjacency, check_epsilon, check_timeout
from ._holds import close_hold, dead_holds, draw, held, open_hold
from ._sqlite_format import (
    APPLICATION_ID,
    CREATE,
    INSERT_ENTRY,
    MIGRATIONS,
    PENDING,
    RAISE_TOTAL,
    RELEASED,
    SCHEMA_VERSION,
    SQLITE_HEADER,
    StoredEntry,
    budget_accountant,
    budgets_frame,
    check_new_budget,
    check_same_budget,
    check_spent,
    classify,
    column_sql,
    entry_row,
    fraction_text,
    history_frame,
    mark_entry,
    parse_fraction,
    stored_entry,
)
from ._sqlite_reads import budget_rows
from ._sqlite_reads import taken as stored_taken
from ._sqlite_store import SqliteStore
from .events import Event
from .ledger import ACCOUNTANTS, LedgerEntry, check_name

__all__ = [
    "DEFAULT_TIMEOUT",
    "Ledger",
    "SqliteStore",
    "open_ledger",
]

#: Seconds a write waits for the lock. Measured (bench/ledger_contention.py): eight
#: writers hammering one budget beside three CPU-bound processes on two cores waited
#: at most 4.8 s (29 s with SQLite's own busy handler, which starves old waiters).
DEFAULT_TIMEOUT: Final = 60.0
# Waiting for the write lock (Ledger._begin_immediate): SQLite's busy handler
# for a slice of milliseconds, then a short sleep, until the timeout.
_BUSY_SLICE_MS: Final = 5
_BUSY_SLEEP: Final = 0.002
_T = TypeVar("_T")


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


# ------------------------------------------------------------------------ the ledger

# Connections inherited through fork() are never used nor closed in the child
# (SQLite forbids it); they are kept here so that garbage collection does not
# close them either.
_INHERITED: list[sqlite3.Connection] = []


def _close_in(conn: sqlite3.Connection, pid: int) -> None:
    """Close ``conn`` when its ledger is closed or collected, only in the process that opened it."""
    if os.getpid() == pid:
        conn.close()


class Ledger:
    """A ledger file of named privacy budgets. Open it with :func:`open_ledger`.

    Thread-safe; any number of processes may open the same file. Read it with
    :meth:`budgets` and :meth:`history`; raise a total with :meth:`raise_total`.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        timeout: float,
        create: bool,
        read_only: bool = False,
    ) -> None:
        if not isinstance(path, str | os.PathLike):
            raise TypeError(f"`ledger` must be a path or a Ledger, got {type(path).__name__}.")
        self.path = Path(path)
        self.timeout = check_timeout(timeout)
        self.read_only = bool(read_only)
        self._lock = threading.RLock()
        self._closed = False
        self._pid = os.getpid()
        self._version = SCHEMA_VERSION
        self._immutable: tuple[int, int, int] | None = None  # the file as read, when immutable
        self._conn = self._open(create and not self.read_only)
        self._finalizer = weakref.finalize(self, _close_in, self._conn, self._pid)

    # ---------------------------------------------------------------- opening

    def _open(self, create: bool) -> sqlite3.Connection:
        path = self.path
        if path.is_dir():
            raise LedgerAccessError(f"The ledger path {str(path)!r} is a directory, not a file.")
        if path.exists():
            self._check_header()
        elif not create:
            raise LedgerAccessError(f"There is no ledger at {str(path)!r}.")
        try:
            if self.read_only:
                conn = self._connect_read_only()
            else:
                conn = sqlite3.connect(
                    path, timeout=self.timeout, isolation_level=None, check_same_thread=False
                )
        except sqlite3.Error as err:
            raise self._error(err, "opening it") from err
        try:
            self._prepare(conn)
        except BaseException:
            conn.close()
            raise
        return conn

    def _connect_read_only(self) -> sqlite3.Connection:
        """A connection that never creates, migrates or writes a file, not even ``-wal``/``-shm``.

        SQLite reads a WAL database through its ``-wal`` and ``-shm``
        companions and creates them when they are missing, even with
        ``mode=ro`` (and fails if the folder is read-only). When another
        connection has the ledger open, they exist: read through them
        (``mode=ro``). When none exists, every change is in the file itself:
        read it as ``immutable=1``, which touches nothing, and check before and
        after every read that the file did not change meanwhile (if it did,
        the read is repeated on a fresh connection).
        """
        uri = self.path.resolve().as_uri()
        self._immutable = None
        if Path(f"{self.path}-wal").exists():
            options = "mode=ro"
        else:
            options, self._immutable = "mode=ro&immutable=1", self._stat()
        conn = sqlite3.connect(
            f"{uri}?{options}",
            uri=True,
            timeout=self.timeout,
            isolation_level=None,
            check_same_thread=False,
        )
        conn.execute("PRAGMA query_only = ON")
        return conn

    def _stat(self) -> tuple[int, int, int]:
        """What tells that the file changed (or that a writer opened it: a ``-wal`` file)."""
        if Path(f"{self.path}-wal").exists():
            return (-1, -1, -1)
        try:
            info = self.path.stat()
        except OSError:
            return (-1, -1, -1)
        return (info.st_ino, info.st_size, info.st_mtime_ns)

    def _check_header(self) -> None:
        """Refuse a non-empty file that is not SQLite before SQLite touches it."""
        try:
            with self.path.open("rb") as file:
                head = file.read(len(SQLITE_HEADER))
        except OSError as err:
            raise LedgerAccessError(f"Cannot read the ledger {str(self.path)!r}: {err}") from err
        if head and head != SQLITE_HEADER:
            raise NotALedgerError(
                f"{str(self.path)!r} is not a pandas_dp ledger (not a SQLite database); it was "
                "left untouched. Choose another path for the ledger."
            )

    def _prepare(self, conn: sqlite3.Connection) -> None:
        """Check what the file is; create or migrate the schema; WAL, full sync."""
        try:
            self._version = classify(conn, self.path)
            if self._version < SCHEMA_VERSION and not self.read_only:
                self._begin_immediate(conn)
                try:
                    version = classify(conn, self.path)  # again, under the write lock
                    for step in MIGRATIONS[version:]:
                        for statement in step:
                            conn.execute(statement)
                    conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
                    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
                    conn.execute("COMMIT")
                    self._version = SCHEMA_VERSION
                finally:
                    if conn.in_transaction:
                        conn.execute("ROLLBACK")
            if self._version == 0:  # read-only: an empty database is no ledger yet
                raise LedgerAccessError(
                    f"{str(self.path)!r} is an empty file, not a ledger yet; it was left untouched."
                )
            tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master")}
            if not {"budgets", "entries"} <= tables:
                raise CorruptLedgerError(
                    f"The ledger {str(self.path)!r} is damaged: its tables are missing."
                )
            problems = [row[0] for row in conn.execute("PRAGMA quick_check")]
            if problems != ["ok"]:
                raise CorruptLedgerError(
                    f"The ledger {str(self.path)!r} is damaged (SQLite quick_check failed)."
                )
            check_spent(conn, self.path, self._version)
            if self.read_only:
                return
            self._release_dead(conn)
            mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
            if str(mode).lower() != "wal":
                raise LedgerAccessError(
                    f"The ledger {str(self.path)!r} cannot use write-ahead logging (journal mode "
                    f"{mode!r}); put it on a local disk where it can be written."
                )
            conn.execute("PRAGMA synchronous = FULL")
            conn.execute("PRAGMA foreign_keys = ON")
        except sqlite3.Error as err:
            raise self._error(err, "opening it") from err

    def _release_dead(self, conn: sqlite3.Connection) -> None:
        """Delete the holds of processes of this host that no longer exist (ledger_holds)."""
        if dead_holds(conn):
            self._begin_immediate(conn)
            try:
                for token in dead_holds(conn):  # again, under the write lock
                    conn.execute("DELETE FROM holds WHERE id = ?", (token,))
                conn.execute("COMMIT")
            finally:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")

    def _column(self, name: str, table: str = "") -> str:
        """Column ``name`` in SQL, or its value in an older schema read without migrating."""
        return column_sql(name, self._version, table)

    # ------------------------------------------------------------ connections

    def _error(self, err: sqlite3.Error, doing: str) -> LedgerError:
        """Translate a SQLite error into the ledger error a user can act on."""
        code = str(getattr(err, "sqlite_errorname", "") or "")
        where = f"the ledger {str(self.path)!r}"
        if code.startswith(("SQLITE_BUSY", "SQLITE_LOCKED")):
            return LedgerLockedError(
                f"{where} stayed locked by another connection for more than {self.timeout:g} s "
                f"while {doing}; nothing was spent. Retry later, or pass a longer timeout to "
                "open_ledger(path, timeout=...)."
            )
        if code.startswith(
            ("SQLITE_CANTOPEN", "SQLITE_READONLY", "SQLITE_PERM", "SQLITE_IOERR", "SQLITE_FULL")
        ):
            return LedgerAccessError(
                f"Cannot write {where} while {doing} ({err}); nothing was spent. Check that the "
                "folder exists and is writable."
            )
        if code == "SQLITE_NOTADB":
            return NotALedgerError(
                f"{where} is not a SQLite database; it was left untouched. Choose another path."
            )
        return CorruptLedgerError(f"{where} is damaged ({err}) while {doing}; nothing was spent.")

    def _connection(self) -> sqlite3.Connection:
        if self._closed:
            raise LedgerAccessError(f"The ledger {str(self.path)!r} was closed.")
        if os.getpid() != self._pid:  # forked: the parent's connection is off limits
            _INHERITED.append(self._conn)
            self._finalizer.detach()
            self._pid = os.getpid()
            self._conn = self._open(create=False)
            self._finalizer = weakref.finalize(self, _close_in, self._conn, self._pid)
        elif self._immutable is not None and self._stat() != self._immutable:
            self._reopen()  # changed since it was read as immutable: read it afresh
        return self._conn

    def _reopen(self) -> None:
        self._finalizer()
        self._conn = self._open(create=False)
        self._finalizer = weakref.finalize(self, _close_in, self._conn, self._pid)

    def _begin_immediate(self, conn: sqlite3.Connection) -> None:
        """``BEGIN IMMEDIATE``, waiting up to ``timeout`` for the write lock, fairly.

        SQLite's own busy handler backs off to one attempt every 100 ms, so a
        writer that has waited long loses the lock, again and again, to fresh
        writers that still try every millisecond: with eight busy writers on
        two loaded cores one waited 29 s. Here every waiter tries again within
        a few milliseconds (SQLite's handler for 5 ms, then a short sleep),
        and the timeout only bounds the wait.
        """
        deadline = time.monotonic() + self.timeout
        conn.execute(f"PRAGMA busy_timeout = {_BUSY_SLICE_MS}")
        try:
            while True:
                try:
                    conn.execute("BEGIN IMMEDIATE")
                    return
                except sqlite3.OperationalError as err:
                    busy = str(getattr(err, "sqlite_errorname", "")).startswith("SQLITE_BUSY")
                    if not busy or time.monotonic() >= deadline:
                        raise
                time.sleep(_BUSY_SLEEP)
        finally:
            conn.execute(f"PRAGMA busy_timeout = {round(self.timeout * 1000)}")

    @contextmanager
    def _transaction(self, doing: str) -> Iterator[sqlite3.Connection]:
        """``BEGIN IMMEDIATE`` ... ``COMMIT``; rolled back, writing nothing, on any error."""
        if self.read_only:
            raise LedgerAccessError(
                f"The ledger {str(self.path)!r} was opened read-only; it cannot be changed while "
                f"{doing}. Open it with open_ledger(path) to attach, spend or raise a total."
            )
        with self._lock:
            conn = self._connection()
            try:
                self._begin_immediate(conn)
                try:
                    yield conn
                    conn.execute("COMMIT")
                finally:
                    if conn.in_transaction:
                        conn.execute("ROLLBACK")
            except sqlite3.Error as err:
                raise self._error(err, doing) from err

    def _read(self, doing: str, query: Callable[[sqlite3.Connection], _T]) -> _T:
        """``query(connection)``; read again if an immutable file changed meanwhile."""
        with self._lock:
            for _ in range(5):
                conn = self._connection()
                try:
                    result = query(conn)
                except (sqlite3.Error, CorruptLedgerError) as err:
                    if self._immutable is not None and self._stat() != self._immutable:
                        continue  # a torn read of a file being written: read it again
                    if isinstance(err, sqlite3.Error):
                        raise self._error(err, doing) from err
                    raise
                if self._immutable is None or self._stat() == self._immutable:
                    return result
        raise LedgerLockedError(
            f"The ledger {str(self.path)!r} kept changing while {doing} read-only; retry."
        )

    def backup(self, dest: str | os.PathLike[str]) -> Path:
        """Copy the ledger, consistently, into the new single file ``dest``; returns its path.

        While a ledger is in use it is not one file but three: the database,
        its ``-wal`` file (recent transactions not yet written back) and its
        ``-shm`` index. Copying the database file alone may lose the latest
        releases or give a damaged copy. This uses SQLite's online backup
        API: the copy is one consistent snapshot, taken while other
        connections and processes keep reading and spending, and it opens with
        :func:`open_ledger` with the same budgets and entries. Works on a
        ledger opened ``read_only`` too.

        Raises
        ------
        LedgerAccessError
            If ``dest`` exists (a backup never overwrites a file, which could be
            another ledger) or cannot be written.
        """
        if not isinstance(dest, str | os.PathLike):
            raise TypeError(f"`dest` must be a path, got {type(dest).__name__}.")
        target_path = Path(dest)
        if any(Path(f"{target_path}{end}").exists() for end in ("", "-wal", "-shm")):
            raise LedgerAccessError(
                f"The backup path {str(target_path)!r} exists; a backup never overwrites a file. "
                "Choose a new path."
            )
        try:
            with target_path.open("xb"):  # claim the path: no race with another backup
                pass
            target = sqlite3.connect(target_path, isolation_level=None)
        except (OSError, sqlite3.Error) as err:
            raise LedgerAccessError(
                f"Cannot write the backup {str(target_path)!r}: {err}. Check that the folder "
                "exists and is writable."
            ) from err
        try:
            self._read("copying it", lambda conn: conn.backup(target))
            target.execute("PRAGMA journal_mode = DELETE")  # one self-contained file
        except sqlite3.Error as err:
            raise LedgerAccessError(
                f"Cannot write the backup {str(target_path)!r}: {err}."
            ) from err
        finally:
            target.close()
        return target_path

    def close(self) -> None:
        """Close the connection; stores of this ledger can no longer spend."""
        with self._lock:
            if not self._closed:
                self._closed = True
                self._finalizer()

    def __enter__(self) -> Ledger:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Ledger({str(self.path)!r})"

    # ------------------------------------------------------------ budgets

    def attach(
        self,
        name: str,
        *,
        total: object,
        adjacency: str = "add_remove",
        privacy_unit: str | None = None,
        public_rows: int | None = None,
        accountant: str = "epsilon",
        delta: Fraction = Fraction(0),
        adopt: bool = False,
    ) -> SqliteStore:
        """The store of budget ``name``, created with ``total`` if the ledger has none.

        ``accountant`` (``"epsilon"`` or ``"rho"``: the unit of ``total``; or
        ``"pld"``: an ε total composed by PLD) and ``delta`` (the δ the budget
        holds) are stored with it when it is created: every process that
        attaches the name continues the same accountant, or is refused.  With
        ``adopt`` (``accountant`` was this process's default, not asked for),
        an existing ε budget is continued with its stored accountant,
        ``"epsilon"`` or ``"pld"``, whatever this process has installed.

        A budget stored as ``"pld"`` is refused (BudgetMismatchError, naming
        the ``pld`` extra) in a process without ``dp_accounting``, rather than
        spent by adding its releases' ε and δ up: that sum bounds only the
        ε-DP releases (a Gaussian ``rho=`` release has no ε to add), and it
        would read releases the other processes composed by PLD as overspent.
        Reading it (:meth:`budgets`, :meth:`history`, the CLI) still works,
        with NaN where a figure needs the library.

        The store records entries as it is given them: a budget with ``seed=``
        marks its entries' mechanism with :data:`SEEDED` before handing them to
        any store.

        Parameters
        ----------
        public_rows : int, optional
            The row count of the frame being attached, given only where it is
            public: under ``adjacency="substitute"`` without a privacy unit.
            The attach that creates the budget stores it; a later attach is the
            budget's own (root) frame only if its count equals the stored one.
            Never given under add_remove, where the row count is data.

        Returns
        -------
        SqliteStore
            Its ``root`` says whether the frame attached may be the budget's
            root: True when this attach created the budget, or ``public_rows``
            equals the stored count; False otherwise (also for budgets created
            before the count was stored: unknown).

        Raises
        ------
        BudgetMismatchError
            If the budget exists with another total, adjacency or privacy unit
            (a total is raised only by :meth:`raise_total`, never silently).
        """
        name = check_name(name)
        exact = check_epsilon(total, "total")
        adjacency = check_adjacency(adjacency)
        check_new_budget(adjacency, privacy_unit, public_rows, accountant)
        with self._transaction("attaching a budget") as conn:
            row = conn.execute(
                "SELECT total, adjacency, privacy_unit, public_rows, "
                f"{self._column('accountant')}, delta FROM budgets WHERE name = ?",
                (name,),
            ).fetchone()
            if row is None:
                created = _now()
                pld = accountant == "pld"  # stored as an epsilon budget that composes by PLD
                conn.execute(
                    "INSERT INTO budgets (name, total, spent, adjacency, created, privacy_unit, "
                    "public_rows, accountant, delta, composition) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (
                        name,
                        fraction_text(exact),
                        "0/1",
                        adjacency,
                        created.isoformat(),
                        privacy_unit,
                        public_rows,
                        "epsilon" if pld else accountant,
                        fraction_text(delta),
                        "pld" if pld else "sum",
                    ),
                )
                self._insert(
                    conn,
                    name,
                    mark_entry(CREATE, accountant, adjacency, created),
                    exact,
                )
            else:
                if adopt and {str(row[4]), accountant} <= {"epsilon", "pld"}:
                    accountant = str(row[4])
                check_same_budget(
                    self.path, name, row, exact, adjacency, privacy_unit, accountant, delta
                )
        root = row is None or (public_rows is not None and row[3] == public_rows)
        return SqliteStore(self, name, root=root, accountant=accountant)

    def store(self, name: str) -> SqliteStore:
        """The store of the existing budget ``name`` (UnknownBudgetError if none)."""
        name = check_name(name)
        self._budget_row(name)
        return SqliteStore(self, name, accountant=self._accountant(name))

    def raise_total(self, name: str, new_total: float) -> None:
        """Raise the total of budget ``name`` to ``new_total``, recorded in its history.

        Parameters
        ----------
        name : str
            An existing budget.
        new_total : float
            The new total epsilon; it must exceed the current one. Later
            ``set_budget`` calls on this budget must ask for it.

        Raises
        ------
        UnknownBudgetError
            If the ledger has no budget ``name``.
        ValueError
            If ``new_total`` does not exceed the current total.

        Notes
        -----
        Raising a total weakens the promise made to the people in the data:
        the guarantee of all releases of the budget together is now
        ``new_total``-DP. The history keeps the time and the new total.
        """
        name = check_name(name)
        exact = check_epsilon(new_total, "new_total")
        with self._transaction("raising a total") as conn:
            row = conn.execute(
                "SELECT total, adjacency FROM budgets WHERE name = ?", (name,)
            ).fetchone()
            if row is None:
                raise self._unknown(name)
            current = parse_fraction(row[0], "a total")
            if exact <= current:
                raise ValueError(
                    f"`new_total` must exceed the current total epsilon={epsilon_text(current)} of "
                    f"{name!r}, got {new_total!r}. A total can only be raised."
                )
            kept = str(budget_accountant(conn, name, self._version))
            self._insert(conn, name, mark_entry(RAISE_TOTAL, kept, str(row[1]), _now()), exact)
            conn.execute(
                "UPDATE budgets SET total = ? WHERE name = ?", (fraction_text(exact), name)
            )

    def budgets(self) -> pd.DataFrame:
        """One row per budget: what it holds, what was spent, and how.

        Columns: name, total, spent, remaining, held, accountant ("rho": total
        and spent are ρ; "pld": spent is the ε at its δ of every release
        composed, NaN without ``dp_accounting``), epsilon_at (the ε of the ρ
        spent at the δ at_delta: the budget's δ, else 1e-6), delta (the δ it
        holds), delta_spent (what its releases spent of it), adjacency,
        privacy_unit (empty: one row per person), public_rows (the root
        frame's row count, public under substitute only), releases, pending
        (reservations not committed: running queries, or processes that died
        before committing; they count as spent), seeded_releases, created.

        ``seeded_releases`` counts the releases drawn from a seeded,
        reproducible noise source (``set_budget(..., seed=...)``, their
        mechanism ends in "(seeded: NOT private)"): **those releases are not
        private**, whatever epsilon they spent. A budget with any of them no
        longer protects the people in its data.

        ``total``, ``spent`` and ``remaining`` are floats for reading; the
        exact values are ``open_ledger(path).store(name).spent()`` etc.

        Raises
        ------
        CorruptLedgerError
            If a budget's stored amount spent is not the exact sum of its
            entries (the file was damaged or edited by hand).
        """
        return budgets_frame(
            *self._read(
                "reading the budgets", lambda conn: budget_rows(conn, self.path, self._version)
            )
        )

    def history(self, name: str) -> pd.DataFrame:
        """Every entry of budget ``name``, oldest first: what a privacy officer needs.

        Columns: time (UTC), operation, state, columns, clip, keys (number of
        public keys), epsilon (float), epsilon_exact (Fraction), mechanism,
        adjacency, sensitivity, noise_scale, half_width_95 (the half-width of
        the release's 95% interval, computed from its plan when it was made:
        see :meth:`pandas_dp.kinds.base.Kind.half_width`; blank in entries of a
        ledger older than that), privacy_unit,
        max_rows, max_groups (the unit's column and the contribution bounds of the release; empty
        when one row is one person), events (the mechanisms it ran, exactly), planned and
        realised (a plan's half-widths), total (the budget's total after the entry), spent
        (cumulative, pending reservations included; under PLD the ε at the budget's δ of the
        releases so far), process (id of the recording process).

        ``state`` is ``"released"`` for a release, ``"pending"`` for a
        reservation whose release was not committed yet (a running query, or a
        process that died before committing: it counts as spent all the same,
        since the ledger cannot know whether a result was seen), and empty for
        the ``create`` and ``raise_total`` entries, which spend nothing. A
        mechanism ending in "(seeded: NOT private)" marks a release drawn from
        reproducible noise. No data value, released value or key is ever stored.
        """
        rows = self._entries(self._known(name))
        return history_frame(rows, self._accountant(name), self.store(name).taken().delta)

    # ------------------------------------------------------ store operations

    def _known(self, name: str) -> str:
        name = check_name(name)
        self._budget_row(name)
        return name

    def _unknown(self, name: str) -> UnknownBudgetError:
        return UnknownBudgetError(
            f"The ledger {str(self.path)!r} has no budget named {name!r}; attach one with "
            f"df.dp.set_budget(epsilon=..., ledger=..., name={name!r})."
        )

    def _accountant(self, name: str) -> str:
        """The accountant stored with budget ``name`` (``"epsilon"`` before schema 8)."""
        row = self._read(
            "reading a budget", lambda conn: budget_accountant(conn, name, self._version)
        )
        if row is None:
            raise self._unknown(name)
        return row

    def _budget_row(self, name: str) -> tuple[Fraction, Fraction]:
        row = self._read(
            "reading a budget",
            lambda conn: conn.execute(
                "SELECT total, spent FROM budgets WHERE name = ?", (name,)
            ).fetchone(),
        )
        if row is None:
            raise self._unknown(name)
        return parse_fraction(row[0], "a total"), parse_fraction(row[1], "an amount spent")

    def _reserve(
        self,
        name: str,
        entry: LedgerEntry,
        state: str,
        hold: int | None = None,
        accountant: str = "epsilon",
    ) -> int:
        """Check that ``entry`` (and its δ) fits and record it in ``state``, in one transaction.

        Returns its row id.
        With ``hold``, the entry draws on that hold first (:func:`ledger_holds.draw`).
        ``entry`` costs its charge under the budget's ``accountant``, which
        decides whether it fits (:data:`~pandas_dp.accounting.ledger.ACCOUNTANTS`).
        """
        cost = entry.charge(accountant)
        with self._transaction("recording a release") as conn:
            total, spent = self._totals(conn, name)
            if hold is not None:
                draw(conn, name, hold, cost)  # the hold shrinks: held() counts less
            taken = stored_taken(conn, name, self._version, total, spent, accountant, hold)
            # ε (ρ) and δ in this transaction: atomic across processes
            ACCOUNTANTS[accountant].check(taken, cost, entry.delta, entry.privacy_events)
            token = self._insert(conn, name, entry, total, state=state)
            conn.execute(
                "UPDATE budgets SET spent = ? WHERE name = ?",
                (fraction_text(spent + cost), name),
            )
        return token

    def _totals(self, conn: sqlite3.Connection, name: str) -> tuple[Fraction, Fraction]:
        row = conn.execute("SELECT total, spent FROM budgets WHERE name = ?", (name,)).fetchone()
        if row is None:
            raise self._vanished(name)
        return parse_fraction(row[0], "a total"), parse_fraction(row[1], "an amount spent")

    def _hold(
        self,
        name: str,
        epsilon: Fraction,
        accountant: str = "epsilon",
        events: tuple[Event, ...] = (),
    ) -> int:
        """Set ``epsilon`` (ρ under ``accountant="rho"``) of ``name`` aside if it fits; its id."""
        with self._transaction("holding a share") as conn:
            taken = stored_taken(conn, name, self._version, *self._totals(conn, name), accountant)
            return open_hold(conn, name, epsilon, taken, ACCOUNTANTS[accountant], events)

    def _unhold(self, name: str, token: int) -> Fraction:
        """Close the hold ``token``; what was left of it, free again."""
        with self._transaction("closing a hold") as conn:
            return close_hold(conn, name, token)

    def _held(self, name: str) -> Fraction:
        return self._read("reading the holds", lambda conn: held(conn, name, self._version))

    def _commit(self, name: str, token: int, accountant: str = "epsilon") -> None:
        """The pending reservation ``token`` becomes a release; a second commit changes nothing."""
        with self._transaction("committing a release") as conn:
            self._reservation(conn, name, token, accountant)
            conn.execute(
                "UPDATE entries SET state = ? WHERE id = ? AND budget = ?",
                (RELEASED, token, name),
            )

    def _cancel(self, name: str, token: int, accountant: str = "epsilon") -> None:
        """Delete the pending reservation ``token`` and return its charge, exactly."""
        with self._transaction("cancelling a reservation") as conn:
            epsilon, state = self._reservation(conn, name, token, accountant)
            if state != PENDING:
                raise ReservationError(
                    f"The reservation {token} of budget {name!r} in {str(self.path)!r} was "
                    "already committed: its release may have been drawn, so its epsilon stays "
                    "spent."
                )
            row = conn.execute("SELECT spent FROM budgets WHERE name = ?", (name,)).fetchone()
            if row is None:
                raise self._vanished(name)
            spent = parse_fraction(row[0], "an amount spent") - epsilon
            if spent < 0:
                raise CorruptLedgerError(
                    f"The ledger {str(self.path)!r} is damaged: the budget {name!r} spent less "
                    "than one of its reservations."
                )
            conn.execute("DELETE FROM entries WHERE id = ?", (token,))
            conn.execute(
                "UPDATE budgets SET spent = ? WHERE name = ?", (fraction_text(spent), name)
            )

    def _reservation(
        self, conn: sqlite3.Connection, name: str, token: int, accountant: str = "epsilon"
    ) -> tuple[Fraction, str]:
        """The charge (ε, or ρ) and state of the reservation ``token`` of budget ``name``."""
        if isinstance(token, bool) or not isinstance(token, int):
            raise ReservationError(
                f"A reservation token is the int that reserve() returned, got "
                f"{type(token).__name__}."
            )
        charge = "rho" if accountant == "rho" else "epsilon"
        row = conn.execute(
            f"SELECT {charge}, state FROM entries WHERE id = ? AND budget = ? "
            "AND operation NOT IN (?, ?)",
            (token, name, CREATE, RAISE_TOTAL),
        ).fetchone()
        if row is None:
            raise ReservationError(
                f"The budget {name!r} in {str(self.path)!r} has no reservation {token} (it was "
                "cancelled, or it belongs to another budget or ledger)."
            )
        if accountant == "pld":  # composed, not added up: nothing to return to a sum
            return Fraction(0), str(row[1])
        return parse_fraction(row[0], f"a reservation's {charge}"), str(row[1])

    def _vanished(self, name: str) -> CorruptLedgerError:
        return CorruptLedgerError(
            f"The ledger {str(self.path)!r} is damaged: the budget {name!r} vanished."
        )

    @staticmethod
    def _insert(
        conn: sqlite3.Connection,
        name: str,
        entry: LedgerEntry,
        total: Fraction,
        *,
        state: str = RELEASED,
    ) -> int:
        cursor = conn.execute(INSERT_ENTRY, entry_row(name, entry, total, state))
        assert cursor.lastrowid is not None
        return cursor.lastrowid

    def _entries(self, name: str, *, releases_only: bool = False) -> list[StoredEntry]:
        """The entries of ``name``, oldest first (only releases: no create / raise_total)."""
        skip = (CREATE, RAISE_TOTAL) if releases_only else ("", "")
        columns = ", ".join(
            self._column(c)
            for c in (
                "process",
                "state",
                "privacy_unit",
                "max_rows",
                "max_groups",
                "half_width_95",
                "rho",
                "delta",
                "events",
                "planned",
                "realised",
                "release",
                "grouping",
                "parameters",
            )
        )
        rows = self._read(
            "reading a history",
            lambda conn: conn.execute(
                "SELECT time, operation, columns, clip, keys, epsilon, mechanism, adjacency, "
                f"sensitivity, noise_scale, total, {columns} FROM entries "
                "WHERE budget = ? AND operation NOT IN (?, ?) ORDER BY id",
                (name, *skip),
            ).fetchall(),
        )
        return [stored_entry(row) for row in rows]


def open_ledger(
    path: str | os.PathLike[str],
    *,
    timeout: float = DEFAULT_TIMEOUT,
    create: bool = True,
    read_only: bool = False,
) -> Ledger:
    """Open (or create) the ledger file at ``path``.

    Parameters
    ----------
    path : str or path-like
        The SQLite file. Keep it on a local disk (WAL mode needs shared memory).
    timeout : float, default 60
        Seconds to wait for another process's transaction before
        :class:`LedgerLockedError`.
    create : bool, default True
        Create an empty ledger when there is no file; with False a missing file
        is a :class:`LedgerAccessError`.
    read_only : bool, default False
        Only read: never create, migrate or write the file, nor its ``-wal``
        and ``-shm`` companions, so a ledger in a read-only folder can be read
        (``python -m pandas_dp ledger FILE`` does this). A ledger of an older
        schema is read as it is, without upgrading it. Attaching a budget,
        spending or raising a total is a :class:`LedgerAccessError`.

    Returns
    -------
    Ledger

    Raises
    ------
    LedgerAccessError (an OSError)
        The path cannot be opened or written.
    NotALedgerError, CorruptLedgerError, LedgerFormatError (ValueErrors)
        The file is not a pandas_dp ledger, is damaged, or has a newer schema;
        it is left untouched.
    LedgerLockedError (a TimeoutError)
        Creating or migrating the schema waited longer than ``timeout``.
    """
    return Ledger(path, timeout=timeout, create=create, read_only=read_only)
