"""The accounting core: ledger entries, the accountants, and the store interface.

:class:`LedgerEntry` is what is recorded of a release (public parameters
only, its :mod:`~pandas_dp.accounting.events` included); an
:class:`Accountant` is how a budget composes its releases, the one rule that
says whether a charge fits (:data:`ACCOUNTANTS`: ε added up, ρ added up
(:func:`check_fits`), or privacy loss distributions composed,
:class:`Composed`); :class:`BudgetStore` is the interface of reservations
(reserve, commit, cancel), with two stores: :class:`MemoryStore` here (one
process) and :class:`~pandas_dp.accounting.sqlite.SqliteStore` (a named budget
in a ledger file, in :mod:`pandas_dp.accounting.sqlite`); both ask the
budget's accountant.  Kinds import this module only; it imports nothing of
the package above it, and nothing of SQLite.

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
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Final, Protocol

from ..core.errors import (
    AccountingWarning,
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
from . import _pld
from .events import Event, default_events, events_text

__all__ = [
    "ACCOUNTANTS",
    "LEDGER_COLUMNS",
    "NO_PLD",
    "PLD",
    "RHO_NEEDS_ZCDP",
    "SEEDED",
    "Accountant",
    "Additive",
    "BudgetMismatchError",
    "BudgetStore",
    "Composed",
    "CorruptLedgerError",
    "LedgerAccessError",
    "LedgerEntry",
    "LedgerError",
    "LedgerFormatError",
    "LedgerLockedError",
    "MemoryStore",
    "NotALedgerError",
    "ReservationError",
    "Taken",
    "UnknownBudgetError",
    "check_fits",
    "check_name",
    "choose_accountant",
    "how_many",
    "spent_after",
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
    #: The mechanisms it ran, with their exact parameters (:mod:`~pandas_dp.accounting.events`);
    #: empty: what its ε (or ρ) and δ say (:attr:`privacy_events`).
    events: tuple[Event, ...] = ()
    #: For a release of a plan (``df.dp.plan(...).run()``): its planned and realised
    #: intervals, as text (``"±50 at 95%"``, ``"±49 at 95%"``); empty otherwise.
    planned: str = ""
    realised: str = ""
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

    @property
    def privacy_events(self) -> tuple[Event, ...]:
        """What this release ran: its :attr:`events`, else what its ε (or ρ) and δ guarantee.

        The key selection's δ comes with its own event (``approx``, ``zcdp``).
        """
        return self.events or default_events(self.epsilon, self.rho, self.delta)

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
        """This entry as a budget of ``accountant`` (``"epsilon"``, ``"rho"``, ``"pld"``) takes it.

        A ρ budget charges a pure release ``ε²/2`` (Bun & Steinke 2016,
        Prop. 1.4), exactly, and a release given ``rho=`` its ρ; an ε budget
        refuses every release given ``rho=`` (ValueError: Gaussian noise is
        not pure ε-DP, and a selection given ``rho=`` is accounted in ρ); a
        budget composed by PLD takes either, by its events.
        """
        if accountant == "rho":
            if self.rho is not None:
                return self
            assert self.epsilon is not None
            return dataclasses.replace(self, rho=self.epsilon**2 / 2)
        if accountant == "pld":
            return self
        if self.rho is not None:  # a rho= release (Gaussian, or a selection charged ρ)
            raise ValueError(RHO_NEEDS_ZCDP)
        return self

    def charge(self, accountant: str) -> Fraction:
        """What this entry adds to a budget's running sum: its ρ, or its ε (nothing under PLD)."""
        if accountant == "pld":
            return Fraction(0)
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
            "events": events_text(self.privacy_events),
            "planned": self.planned,
            "realised": self.realised,
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


@dataclass(frozen=True)
class Taken:
    """What a budget has taken when a charge is checked: what every accountant reads.

    ``spent`` is the running sum of the entries' charges (released and
    pending; :meth:`LedgerEntry.charge`), ``held`` what the holds counted
    against this charge set aside (in the same unit), ``delta_spent`` the
    entries' δ.  ``entries`` and ``holds`` (each hold's events) are given to
    an accountant that :attr:`~Accountant.composes` only.
    """

    total: Fraction
    delta: Fraction = Fraction(0)
    spent: Fraction = Fraction(0)
    held: Fraction = Fraction(0)
    delta_spent: Fraction = Fraction(0)
    entries: tuple[LedgerEntry, ...] = ()
    holds: tuple[tuple[Event, ...], ...] = ()

    def events(self, *, holds: bool = True) -> list[Event]:
        """Every event of the entries (and, with ``holds``, of the holds), oldest first."""
        found = [event for entry in self.entries for event in entry.privacy_events]
        if holds:
            found += [event for hold in self.holds for event in hold]
        return found


class Accountant(Protocol):
    """How a budget composes its releases: the one rule that says whether a charge fits.

    Every store asks its budget's accountant (:data:`ACCOUNTANTS`, by the
    budget's ``accountant`` name), for every reservation and every hold, in
    the same atomic step that records it.
    """

    #: ``"epsilon"``, ``"rho"`` or ``"pld"``.
    name: str
    #: Whether :meth:`check` composes the entries' events (they must be in ``Taken``).
    composes: bool

    def check(self, taken: Taken, cost: Fraction, delta: Fraction, events: Sequence[Event]) -> None:
        """Refuse (BudgetExceededError) a charge that would exceed the budget; else nothing.

        ``cost`` is the charge's :meth:`LedgerEntry.charge`, ``delta`` its δ,
        ``events`` what it runs (a hold: :meth:`hold_events`).
        """
        ...

    def spent(self, taken: Taken) -> Fraction:
        """What the entries spent, in the total's unit (under PLD: the ε at the budget's δ)."""
        ...

    def hold_events(self, amount: Fraction, unit: str) -> tuple[Event, ...]:
        """What a hold of ``amount`` (of ``unit``: ``"epsilon"`` or ``"rho"``) stands for."""
        ...


class Additive:
    """ε (pure) or ρ (zCDP), added up exactly: :func:`check_fits` on the running sums."""

    composes = False

    def __init__(self, name: str) -> None:
        self.name = name

    def check(self, taken: Taken, cost: Fraction, delta: Fraction, events: Sequence[Event]) -> None:
        check_fits(taken.total, taken.spent + taken.held, cost, self.name)
        if delta:
            check_fits(taken.delta, taken.delta_spent, delta, "delta")

    def spent(self, taken: Taken) -> Fraction:
        return taken.spent

    def hold_events(self, amount: Fraction, unit: str) -> tuple[Event, ...]:
        return ()

    def __repr__(self) -> str:
        return f"Additive({self.name!r})"


#: What a refusal under PLD adds to its error.
PLD_NOTE: Final = (
    "This budget composes every release by its privacy loss distribution (PLD): a release "
    "costs the ε its composition with everything spent and held adds at the budget's delta."
)


def _exact(value: float) -> Fraction:
    return Fraction(value) if math.isfinite(value) else Fraction(10**18)


class Composed:
    """(ε, δ) by privacy loss distributions: every event composed, pessimistically.

    A charge fits when the δ at the budget's ε of all the events composed
    (entries, holds, the charge) is at most the budget's δ
    (:mod:`pandas_dp.accounting._pld`; needs ``dp_accounting``).  Refused,
    :class:`BudgetExceededError` names ``"epsilon"``: what the charge adds to
    the ε at the budget's δ, and what is left of it (``"delta"`` when the
    key selections' δ alone no longer fits).
    """

    name = "pld"
    composes = True

    def check(self, taken: Taken, cost: Fraction, delta: Fraction, events: Sequence[Event]) -> None:
        before = taken.events()
        after = [*before, *events]
        if _pld.delta_at(after, taken.total, taken.delta) <= taken.delta:
            return
        sure = [e.delta * e.count for e in after if e.kind in ("approx", "zcdp")]
        if sum(sure, Fraction(0)) >= taken.delta:  # the δ of key selections alone
            spent = sum((e.delta * e.count for e in before if e.kind in ("approx", "zcdp")), 0)
            error = BudgetExceededError(delta, taken.delta - spent, "delta")
        else:
            was = _exact(_pld.epsilon_at(before, taken.delta, taken.delta))
            now = _exact(_pld.epsilon_at(after, taken.delta, taken.delta))
            error = BudgetExceededError(now - was, max(taken.total - was, Fraction(0)))
        error.add_note(PLD_NOTE)
        raise error

    def spent(self, taken: Taken) -> Fraction:
        return _exact(_pld.epsilon_at(taken.events(holds=False), taken.delta, taken.delta))

    def with_holds(self, taken: Taken) -> Fraction:
        """The ε at the budget's δ of the entries and the holds composed."""
        return _exact(_pld.epsilon_at(taken.events(), taken.delta, taken.delta))

    def hold_events(self, amount: Fraction, unit: str) -> tuple[Event, ...]:
        if unit == "rho":
            return (Event("zcdp", rho=amount),)
        return (Event("pure", epsilon=amount),)

    def __repr__(self) -> str:
        return "Composed()"


#: The accountant of the budgets composed by PLD.
PLD: Final = Composed()
#: The accountants, by the name a budget stores.
ACCOUNTANTS: Final[dict[str, Accountant]] = {
    "epsilon": Additive("epsilon"),
    "rho": Additive("rho"),
    "pld": PLD,
}


def spent_after(
    entries: Sequence[LedgerEntry], accountant: str, total: Fraction, delta: Fraction
) -> list[Fraction]:
    """What was spent after each entry, under ``accountant``: the views' running figure.

    The running sum of the charges (ε or ρ), or under PLD the ε at ``delta``
    of the entries so far composed (ImportError without ``dp_accounting``).
    """
    rule = ACCOUNTANTS[accountant]
    if not rule.composes:
        return list(itertools.accumulate(e.charge(accountant) for e in entries))
    return [
        rule.spent(Taken(total, delta, entries=tuple(entries[: i + 1])))
        for i in range(len(entries))
    ]


#: The most releases :func:`how_many` counts.
MOST = 10**6


def _most(fit: Callable[[int], bool]) -> int:
    """The largest k <= :data:`MOST` with ``fit(k)`` (``fit`` true up to it, then false)."""
    if not fit(1):
        return 0
    lo, hi = 1, 2
    while hi <= MOST and fit(hi):
        lo, hi = hi, hi * 2
    hi = min(hi, MOST + 1)
    while hi - lo > 1:  # fit(lo) and not fit(hi), or hi past MOST
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if fit(mid) else (lo, mid)
    return lo


def how_many(accountant: str, taken: Taken, entry: LedgerEntry) -> int:
    """How many more releases of ``entry`` the budget's rule lets in beside ``taken``.

    ``entry`` as the budget takes it (:meth:`LedgerEntry.charged`); at most :data:`MOST`.
    """
    rule = ACCOUNTANTS[accountant]
    cost, delta, events = entry.charge(accountant), entry.delta, entry.privacy_events

    def fit(k: int) -> bool:
        try:
            rule.check(taken, k * cost, k * delta, events * k)
        except BudgetExceededError:
            return False
        return True

    return _most(fit)


#: What the views of an (ε, δ) budget say when it adds ε and δ up for want of ``dp_accounting``.
NO_PLD = (
    "dp_accounting is not installed, so this (epsilon, delta) budget adds its releases' epsilon "
    "and delta up (the same promise, less of it usable; rho= is refused) instead of composing "
    'them by privacy loss distributions: pip install "pandas-dp[pld]" for that, the default '
    'where it is installed (accountant="epsilon" asks for the addition on purpose).'
)
_WARNED: set[str] = set()


def choose_accountant(loss: str, accountant: object, delta: Fraction) -> tuple[str, str]:
    """The accountant of a new budget of ``loss`` (its total's unit), and what its views note.

    ``accountant``:

    - None (the default): an ``epsilon=`` total with a ``delta`` composes by
      privacy loss distributions (``"pld"``, :class:`Composed`) where
      ``dp_accounting`` is installed (looked for, not imported), else adds ε
      and δ up (``"epsilon"``) with :data:`NO_PLD` in its views and no
      warning: that is a valid accounting of the same promise, only less of it
      is usable.  Any other total composes by its own unit (``"epsilon"``: pure
      ε; ``"rho"``: ρ).
    - ``"epsilon"``, with ``epsilon=``: ε (and a key selection's δ) added up,
      whatever is installed; ``"rho"`` with ``rho=``: ρ added up.
    - ``"pld"``, with ``epsilon=`` and ``delta=``: by PLD; without
      ``dp_accounting`` it adds ε and δ up, with an
      :class:`~pandas_dp.errors.AccountingWarning` once per process (what was
      asked is not what it gets) and the note.

    A named budget that exists keeps the accountant it was created with
    (:meth:`pandas_dp.accounting.sqlite.Ledger.attach`, ``adopt``): this is
    the choice for a budget being created.
    """
    if accountant is None:
        if loss != "epsilon" or not delta:
            return loss, ""
        return ("pld", "") if _pld.available() else ("epsilon", NO_PLD)
    if accountant == loss:
        return loss, ""
    if accountant != "pld":
        raise ValueError(
            f'`accountant` must be "pld" or {loss!r} (or None: "pld" for an epsilon= total with a '
            f"delta where dp_accounting is installed, else the total's own), got {accountant!r}."
        )
    if loss != "epsilon" or not delta:
        raise ValueError(
            'accountant="pld" composes an (epsilon, delta) budget: pass epsilon= and delta=, '
            'e.g. set_budget(epsilon=1.0, delta=1e-6, accountant="pld").'
        )
    if _pld.available():
        return "pld", ""
    if "pld" not in _WARNED:
        _WARNED.add("pld")
        warnings.warn(NO_PLD, AccountingWarning, stacklevel=3)
    return "epsilon", NO_PLD


class BudgetStore(Protocol):
    """Where a budget's accounting lives: atomic reservations, committed or returned.

    A release reserves its epsilon before it reads the data (the reservation
    counts against every other query at once), commits it before any noise is
    drawn, and returns it only if computing the statistics raised (nothing was
    released).

    ``accountant`` names the budget's :class:`Accountant` (:data:`ACCOUNTANTS`),
    which every reservation and hold asks: ``"epsilon"`` (pure ε, composed by
    addition), ``"rho"`` (zCDP, composed by addition in ρ) or ``"pld"``
    (the total is ε, with the budget's δ: privacy loss distributions composed).
    """

    accountant: str

    @property
    def total(self) -> Fraction: ...

    def spent(self) -> Fraction:
        """Released and reserved epsilon together (under PLD: their ε at the budget's δ)."""
        ...

    def held(self) -> Fraction:
        """Epsilon set aside by open holds (:meth:`hold`), of every process."""
        ...

    def hold(self, epsilon: Fraction, events: tuple[Event, ...] = ()) -> int:
        """Set ``epsilon`` aside for one holder if it fits beside what is spent and held; a token.

        Nothing else may spend it: the accountant counts it for every other
        reservation (``events``: what it stands for, to an accountant that
        composes them).  BudgetExceededError, holding nothing, if it does not fit.
        """
        ...

    def taken(self) -> Taken:
        """What the entries and the holds have taken, as the budget's accountant reads it."""
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
        #: How charges compose (:data:`ACCOUNTANTS`): ``"epsilon"``, ``"rho"`` or ``"pld"``.
        self.accountant = accountant
        self._rule = ACCOUNTANTS[accountant]
        #: The δ the releases may spend, and what they spent (checked with the charge).
        self.delta = delta
        self._delta_spent = Fraction(0)
        self._spent = Fraction(0)
        self._entries: dict[int, LedgerEntry] = {}
        self._pending: set[int] = set()
        self._holds: dict[int, Fraction] = {}
        self._hold_events: dict[int, tuple[Event, ...]] = {}
        self._tokens = itertools.count()
        self._lock = threading.Lock()
        self._pid = os.getpid()

    @property
    def total(self) -> Fraction:
        return self._total

    def _taken(self, skip: int | None = None) -> Taken:
        """What is taken (held: every hold but ``skip``'s); call it holding the lock."""
        composes = self._rule.composes
        return Taken(
            self._total,
            self.delta,
            self._spent,
            sum(self._holds.values(), Fraction(0)),
            self._delta_spent,
            tuple(self._entries.values()) if composes else (),
            tuple(e for t, e in self._hold_events.items() if t != skip) if composes else (),
        )

    def taken(self) -> Taken:
        """What the entries and the holds have taken, as the accountant reads it."""
        with self._lock:
            return self._taken()

    def spent(self) -> Fraction:
        with self._lock:
            return self._rule.spent(self._taken())

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

    def hold(self, epsilon: Fraction, events: tuple[Event, ...] = ()) -> int:
        self._check_process()
        with self._lock:
            self._rule.check(self._taken(), epsilon, Fraction(0), events)
            token = next(self._tokens)
            self._holds[token] = epsilon
            self._hold_events[token] = events
        return token

    def unhold(self, token: int) -> Fraction:
        with self._lock:
            if token not in self._holds:
                raise ReservationError(f"No open hold {token!r} in this budget.")
            self._hold_events.pop(token)
            return self._holds.pop(token)

    def reserve(self, entry: LedgerEntry, hold: int | None = None) -> int:
        self._check_process()
        with self._lock:
            if hold is not None and hold not in self._holds:
                raise ReservationError(f"No open hold {hold!r} in this budget.")
            cost = entry.charge(self.accountant)
            # What other holds keep aside is not free; this one's share is.
            drawn = Fraction(0) if hold is None else min(self._holds[hold], cost)
            taken = self._taken(skip=hold)
            taken = dataclasses.replace(taken, held=taken.held - drawn)
            self._rule.check(taken, cost, entry.delta, entry.privacy_events)
            if hold is not None:  # only once it fits: a refusal leaves the hold whole
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
