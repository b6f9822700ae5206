"""The store of one named budget in a SQLite ledger file (:class:`SqliteStore`).

Kept beside :mod:`pandas_dp.accounting.sqlite`, whose :class:`~pandas_dp.accounting.sqlite.Ledger`
does the transactions; a store only names the budget it reads and spends.
"""

from __future__ import annotations

from fractions import Fraction
from typing import TYPE_CHECKING

from ._sqlite_format import PENDING, RELEASED
from ._sqlite_reads import snapshot
from .events import Event
from .ledger import ACCOUNTANTS, LedgerEntry, Taken

if TYPE_CHECKING:
    from .sqlite import Ledger

__all__ = ["SqliteStore"]


class SqliteStore:
    """The :class:`~pandas_dp.accounting.budget.BudgetStore` of one named budget in a ledger file.

    Every read goes to the file, so charges by other threads and processes
    (and a :meth:`Ledger.raise_total`) are seen at once.  ``root`` is whether
    the frame attached with it may be the budget's root frame (see
    :meth:`Ledger.attach`); False for :meth:`Ledger.store`.
    """

    def __init__(
        self, ledger: Ledger, name: str, *, root: bool = False, accountant: str = "epsilon"
    ) -> None:
        self.ledger = ledger
        self.name = name
        self.root = root
        #: The budget's accountant, as stored with it: ``"epsilon"`` or ``"rho"``.
        self.accountant = accountant

    @property
    def total(self) -> Fraction:
        return self.ledger._budget_row(self.name)[0]

    def spent(self) -> Fraction:
        """What the releases and the pending reservations of every process spent.

        Under PLD, their ε at the budget's δ, composed afresh from their events.
        """
        if ACCOUNTANTS[self.accountant].composes:
            return ACCOUNTANTS[self.accountant].spent(self.taken())
        return self.ledger._budget_row(self.name)[1]

    def taken(self) -> Taken:
        """What the entries and the holds of every process have taken (one snapshot)."""
        ledger = self.ledger
        return ledger._read(
            "reading a budget",
            lambda conn: snapshot(conn, self.name, ledger._version, self.accountant),
        )

    def held(self) -> Fraction:
        """What the open holds of every process set aside (:mod:`pandas_dp.accounting._holds`)."""
        return self.ledger._held(self.name)

    def hold(self, epsilon: Fraction, events: tuple[Event, ...] = ()) -> int:
        """Record a hold of ``epsilon`` for this process if it fits (a row every process counts)."""
        return self.ledger._hold(self.name, epsilon, self.accountant, events)

    def unhold(self, token: int) -> Fraction:
        """Delete the hold ``token``; what was left of it is free again (returned)."""
        return self.ledger._unhold(self.name, token)

    def reserve(self, entry: LedgerEntry, hold: int | None = None) -> int:
        """Record ``entry`` as a pending reservation if it fits (:func:`check_fits`); its token.

        One ``BEGIN IMMEDIATE`` transaction checks what remains, inserts the
        entry in state "pending" and updates the amount spent: the reservation
        is on disk before the caller computes anything, and counts as spent for
        every other query and process, even if this process dies before
        :meth:`commit` or :meth:`cancel`. A refusal
        (:class:`~pandas_dp.errors.BudgetExceededError`) writes nothing.
        """
        return self.ledger._reserve(self.name, entry, PENDING, hold, self.accountant)

    def commit(self, token: int) -> None:
        """The pending reservation ``token`` becomes a release (before any noise is drawn).

        Committing it again changes nothing. Raises a :class:`LedgerError`
        only: :class:`ReservationError` for a token this budget does not hold
        (cancelled, or of another budget), :class:`LedgerLockedError` if the
        file stays locked (the reservation then stays pending, and spent).
        """
        self.ledger._commit(self.name, token, self.accountant)

    def cancel(self, token: int) -> None:
        """Return the pending reservation ``token``: nothing was released, its epsilon is unspent.

        Deletes the entry and subtracts its epsilon from the amount spent,
        exactly, in one transaction. :class:`ReservationError` if the token is
        unknown or was already committed (a release is never returned).
        """
        self.ledger._cancel(self.name, token, self.accountant)

    def charge(self, entry: LedgerEntry) -> None:
        """:meth:`reserve` and :meth:`commit` in one transaction; BudgetExceededError if over."""
        self.ledger._reserve(self.name, entry, RELEASED, None, self.accountant)

    def entries(self) -> list[LedgerEntry]:
        """The releases and pending reservations of this budget, by any process, oldest first.

        Cancelled reservations are gone. The full record, with the creation,
        every ``raise_total`` and the state of each entry, is
        :meth:`Ledger.history`.
        """
        return [row.entry for row in self.ledger._entries(self.name, releases_only=True)]

    def __repr__(self) -> str:
        return f"SqliteStore({self.ledger!r}, {self.name!r})"
