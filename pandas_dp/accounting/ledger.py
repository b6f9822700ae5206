"""The accounting core: ledger entries, the one fits rule, and the store interface.

:class:`LedgerEntry` is what is recorded of a release (public parameters
only); :func:`check_fits` is the one accounting rule; :class:`BudgetStore` is
the interface of reservations (reserve, commit, cancel), with two stores:
:class:`MemoryStore` here (one process) and
:class:`~pandas_dp.accounting.sqlite.SqliteStore` (a named budget in a ledger
file, in :mod:`pandas_dp.accounting.sqlite`).  Kinds import this module only;
it imports nothing of the package above it, and nothing of SQLite.

The ledger's errors are importable from here too (they live in
:mod:`pandas_dp.errors`).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import itertools
import math
import os
import threading
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Final, Protocol

from ..core.errors import (
    BudgetExceededError,
    BudgetMismatchError,
    BudgetProcessError,
    CorruptLedgerError,
    LedgerAccessError,
    LedgerError,
    LedgerFormatError,
    LedgerLockedError,
    NotALedgerError,
    ReservationError,
    UnknownBudgetError,
)
from ..core.text import clip_text

__all__ = [
    "LEDGER_COLUMNS",
    "RHO_NEEDS_ZCDP",
    "SEEDED",
    "BudgetMismatchError",
    "BudgetStore",
    "CorruptLedgerError",
    "LedgerAccessError",
    "LedgerEntry",
    "LedgerError",
    "LedgerFormatError",
    "LedgerLockedError",
    "MemoryStore",
    "NotALedgerError",
    "ReservationError",
    "UnknownBudgetError",
    "check_fits",
    "check_name",
]


#: Appended to the mechanism of every release drawn from a seeded (reproducible) source,
#: by PrivacyBudget before it hands the entry to any store; budgets() counts releases so marked.
SEEDED: Final = "(seeded: NOT private)"


#: Why an epsilon budget refuses ``rho=`` (a release's, or a hold's), and the fix.
RHO_NEEDS_ZCDP: Final = (
    "`rho` needs a zCDP budget: this frame's budget is an epsilon budget, and Gaussian noise "
    "(what rho= draws) is not pure epsilon-DP: no epsilon bounds its privacy loss with "
    "certainty (an epsilon budget cannot account a rho, not even a selection's). Pass epsilon= "
    "instead, or attach a zCDP budget with set_budget(rho=...)."
)


@dataclass(frozen=True)
class LedgerEntry:
    """One release as the ledger records it: public parameters only.

    Never a data value, a released value or a key observed in the data.
    """

    operation: str
    #: The release's ε (pure ε-DP); None for a release that is only ρ-zCDP (Gaussian noise).
    epsilon: Fraction | None
    columns: tuple[str, ...] = ()
    mechanism: str = "discrete_laplace"
    adjacency: str = "add_remove"
    sensitivity: str = ""
    noise_scale: str = ""
    clip: tuple[tuple[float, float], ...] = ()
    keys: int | None = None
    time: dt.datetime = field(default_factory=lambda: dt.datetime.now(dt.UTC))
    #: The privacy unit's column (None: one row is one person) and the bounds used.
    privacy_unit: str | None = None
    max_rows: int | None = None
    max_groups: int | None = None
    #: The half-width of the release's 95% interval, as text, computed from its plan
    #: when it was made (see :meth:`pandas_dp.kinds.base.Kind.half_width`): one figure per
    #: column, ``"depends on n"``, or empty (a selection, or an entry of an older ledger).
    half_width_95: str = ""
    #: The release's ρ (zCDP): set for Gaussian noise, and by a ρ budget for a pure
    #: release (``ε²/2``); None for a release of an ε budget.
    rho: Fraction | None = None
    #: The δ this release spends of the budget's δ (0: it needs none).
    delta: Fraction = Fraction(0)
    #: What was asked: the release's own name as the caller wrote it (``value_counts``,
    #: ``crosstab``, ``describe``, ``mean``: also on each step of a composite release such
    #: as ``clip="auto"``'s bounds, whose ``operation`` is the step's), the columns it was
    #: grouped by, and its other public parameters as text (``max_groups=auto, dropna=True``;
    #: never a key, candidate or bin: those are counted in ``keys``). Empty for an entry of
    #: an older ledger.
    release: str = ""
    grouping: tuple[str, ...] = ()
    parameters: str = ""

    def __post_init__(self) -> None:
        for name in ("epsilon", "rho"):
            value = getattr(self, name)
            # A Fraction's sign is its numerator's (the denominator is positive).
            if value is not None and (not isinstance(value, Fraction) or value.numerator < 0):
                raise ValueError(f"`{name}` must be a non-negative Fraction, got {value!r}.")
        if self.epsilon is None and self.rho is None:
            raise ValueError("a ledger entry needs an `epsilon` or a `rho`.")
        if not isinstance(self.delta, Fraction) or not (
            0 <= self.delta.numerator < self.delta.denominator
        ):
            raise ValueError(f"`delta` must be a Fraction in [0, 1), got {self.delta!r}.")
        if not self.operation:
            raise ValueError("`operation` must be a non-empty string.")

    def marked(self, mark: str) -> LedgerEntry:
        """This entry with ``mark`` appended to its mechanism (e.g. :data:`SEEDED`)."""
        return dataclasses.replace(self, mechanism=f"{self.mechanism} {mark}".lstrip())

    def asked(self, release: str, grouping: tuple[str, ...], parameters: str) -> LedgerEntry:
        """This entry recording what the caller asked: release name, grouping, parameters."""
        return dataclasses.replace(self, release=release, grouping=grouping, parameters=parameters)

    @property
    def label(self) -> str:
        """How the views name this release: its operation, after the call's name if they differ.

        ``value_counts: groupby.count`` and ``crosstab: groupby.count`` tell apart two
        grouped counts; ``mean: bounds`` is a step of ``mean(clip="auto")``.
        """
        if not self.release or self.operation.rpartition(".")[2].startswith(self.release):
            return self.operation
        return f"{self.release}: {self.operation}"

    def charged(self, accountant: str) -> LedgerEntry:
        """This entry as a budget of ``accountant`` (``"epsilon"`` or ``"rho"``) charges it.

        A ρ budget charges a pure release ``ε²/2`` (Bun & Steinke 2016,
        Prop. 1.4), exactly, and a release given ``rho=`` its ρ; an ε budget
        refuses every release given ``rho=`` (ValueError: Gaussian noise is
        not pure ε-DP, and a selection given ``rho=`` is accounted in ρ).
        """
        if accountant == "rho":
            if self.rho is not None:
                return self
            assert self.epsilon is not None
            return dataclasses.replace(self, rho=self.epsilon**2 / 2)
        if self.rho is not None:  # a rho= release (Gaussian, or a selection charged ρ)
            raise ValueError(RHO_NEEDS_ZCDP)
        return self

    def charge(self, accountant: str) -> Fraction:
        """What this entry costs a budget of ``accountant``: its ρ, or its ε."""
        value = self.rho if accountant == "rho" else self.epsilon
        assert value is not None, "charge an entry through charged() first"
        return value

    def as_record(self) -> dict[str, object]:
        return {
            "time": self.time,
            "operation": self.operation,
            "release": self.release,
            "grouping": ", ".join(self.grouping),
            "parameters": self.parameters,
            "columns": ", ".join(self.columns),
            "epsilon": math.nan if self.epsilon is None else float(self.epsilon),
            "rho": math.nan if self.rho is None else float(self.rho),
            "delta": float(self.delta),
            "mechanism": self.mechanism,
            "adjacency": self.adjacency,
            "sensitivity": self.sensitivity,
            "noise_scale": self.noise_scale,
            "half_width_95": self.half_width_95,
            "clip": clip_text(self.clip),
            "keys": self.keys,
            "privacy_unit": self.privacy_unit,
            "max_rows": self.max_rows,
            "max_groups": self.max_groups,
        }


LEDGER_COLUMNS = list(LedgerEntry("x", Fraction(0)).as_record())


def check_fits(
    total: Fraction, spent: Fraction, requested: Fraction, quantity: str = "epsilon"
) -> None:
    """The one accounting rule: refuse a charge that would exceed ``total``.

    ``spent`` counts everything no longer free for this charge: releases,
    pending reservations, and the shares that open holds set aside (less the
    part of its own hold the charge draws on).  ``quantity`` names what the
    three amounts are (``"epsilon"``, ``"rho"`` or ``"delta"``), for the
    error: a charge that does not fit raises :class:`BudgetExceededError`
    with that quantity, what it asked for and what is left.
    """
    if spent + requested > total:
        raise BudgetExceededError(requested, total - spent, quantity)


class BudgetStore(Protocol):
    """Where a budget's accounting lives: atomic reservations, committed or returned.

    A release reserves its epsilon before it reads the data (the reservation
    counts against every other query at once), commits it before any noise is
    drawn, and returns it only if computing the statistics raised (nothing was
    released).

    ``accountant`` is the unit of the total and of every charge
    (:meth:`LedgerEntry.charge`): ``"epsilon"`` (pure ε, composed by
    addition) or ``"rho"`` (zCDP, composed by addition in ρ).
    """

    accountant: str

    @property
    def total(self) -> Fraction: ...

    def spent(self) -> Fraction:
        """Released and reserved epsilon together."""
        ...

    def held(self) -> Fraction:
        """Epsilon set aside by open holds (:meth:`hold`), of every process."""
        ...

    def hold(self, epsilon: Fraction) -> int:
        """Set ``epsilon`` aside for one holder if it fits beside what is spent and held; a token.

        Nothing else may spend it: :func:`check_fits` counts it for every other
        reservation.  BudgetExceededError, holding nothing, if it does not fit.
        """
        ...

    def unhold(self, token: int) -> Fraction:
        """Close the hold ``token``: what is left of it is free again (returned)."""
        ...

    def reserve(self, entry: LedgerEntry, hold: int | None = None) -> int:
        """Record ``entry`` as pending if it fits (:func:`check_fits`), atomically; a token.

        Its δ (``entry.delta``) must fit in the budget's δ beside what every
        entry spent, checked in the same atomic step (with a ledger: the same
        transaction, so across processes).

        With ``hold``, the entry's epsilon comes from that hold first (as much
        as is left of it), and only the rest must fit in what is free.
        """
        ...

    def commit(self, token: int) -> None:
        """The pending reservation becomes a release."""
        ...

    def cancel(self, token: int) -> None:
        """Return a pending reservation: nothing was released, its epsilon is free again."""
        ...

    def charge(self, entry: LedgerEntry) -> None:
        """Reserve and commit ``entry`` in one step."""
        ...

    def entries(self) -> list[LedgerEntry]:
        """Releases and pending reservations, oldest first."""
        ...


class MemoryStore:
    """The in-process store: a lock, a running Fraction and the entries.

    It belongs to the process that created it: a forked child holds a copy,
    and what it spent would never count here, so there it refuses to spend
    (:class:`~pandas_dp.errors.BudgetProcessError`).
    """

    def __init__(
        self, total: Fraction, accountant: str = "epsilon", delta: Fraction = Fraction(0)
    ) -> None:
        self._total = total
        #: The unit of ``total`` and of every charge: ``"epsilon"`` or ``"rho"``.
        self.accountant = accountant
        #: The δ the releases may spend, and what they spent (checked with the charge).
        self.delta = delta
        self._delta_spent = Fraction(0)
        self._spent = Fraction(0)
        self._entries: dict[int, LedgerEntry] = {}
        self._pending: set[int] = set()
        self._holds: dict[int, Fraction] = {}
        self._tokens = itertools.count()
        self._lock = threading.Lock()
        self._pid = os.getpid()

    @property
    def total(self) -> Fraction:
        return self._total

    def spent(self) -> Fraction:
        with self._lock:
            return self._spent

    def held(self) -> Fraction:
        with self._lock:
            return sum(self._holds.values(), Fraction(0))

    def _check_process(self) -> None:
        if os.getpid() != self._pid:
            raise BudgetProcessError(
                "This in-memory privacy budget belongs to the process that created it; this is "
                "a forked child, and what it spent would not count there. To share one budget "
                "between processes, use a named ledger budget: df.dp.set_budget(epsilon=..., "
                "ledger='privacy-ledger.sqlite', name='...'), attached in each process."
            )

    def hold(self, epsilon: Fraction) -> int:
        self._check_process()
        with self._lock:
            held = sum(self._holds.values(), Fraction(0))
            check_fits(self._total, self._spent + held, epsilon, self.accountant)
            token = next(self._tokens)
            self._holds[token] = epsilon
        return token

    def unhold(self, token: int) -> Fraction:
        with self._lock:
            if token not in self._holds:
                raise ReservationError(f"No open hold {token!r} in this budget.")
            return self._holds.pop(token)

    def reserve(self, entry: LedgerEntry, hold: int | None = None) -> int:
        self._check_process()
        with self._lock:
            if hold is not None and hold not in self._holds:
                raise ReservationError(f"No open hold {hold!r} in this budget.")
            cost = entry.charge(self.accountant)
            # What other holds keep aside is not free; this one's share is.
            drawn = Fraction(0) if hold is None else min(self._holds[hold], cost)
            held = sum(self._holds.values(), Fraction(0))
            check_fits(self._total, self._spent + held - drawn, cost, self.accountant)
            if entry.delta:
                check_fits(self.delta, self._delta_spent, entry.delta, "delta")
            if hold is not None:  # only once both fit: a refusal leaves the hold whole
                self._holds[hold] -= drawn
            token = next(self._tokens)
            self._spent += cost
            self._delta_spent += entry.delta
            self._entries[token] = entry
            self._pending.add(token)
        return token

    def commit(self, token: int) -> None:
        with self._lock:
            self._settle(token)

    def cancel(self, token: int) -> None:
        with self._lock:
            self._settle(token)
            entry = self._entries.pop(token)
            self._spent -= entry.charge(self.accountant)
            self._delta_spent -= entry.delta

    def _settle(self, token: int) -> None:
        if token not in self._pending:
            raise ReservationError(f"No pending reservation {token!r} in this budget.")
        self._pending.remove(token)

    def charge(self, entry: LedgerEntry) -> None:
        self.commit(self.reserve(entry))

    def entries(self) -> list[LedgerEntry]:
        with self._lock:
            return list(self._entries.values())


def check_name(name: object) -> str:
    """A budget name: a non-empty string (it is public and stored in the ledger)."""
    if not isinstance(name, str):
        raise TypeError(f"`name` must be a non-empty string, got {type(name).__name__}.")
    if not name.strip():
        raise ValueError(f"`name` must be a non-empty string, got {name!r}.")
    return name
