"""The privacy budget and frame binding.

One :class:`PrivacyBudget` is attached to one frame by ``df.dp.set_budget``.
Its accounting lives in a store (in memory, or SQLite for budgets in a ledger
file: :mod:`pandas_dp.accounting.sqlite`), behind one interface,
:class:`pandas_dp.accounting.ledger.BudgetStore`, and one rule, ``check_fits``: a charge
that would exceed the total is refused whole, before any noise is drawn.
Releases reserve through :meth:`PrivacyBudget.reserve`.

Binding is fail-closed.  The budget is held by the frame *object* (never in
``attrs``, which pandas copies into frames whose rows mix or repeat people);
``attrs["pandas_dp"]`` keeps only a JSON-safe string marker naming the budget,
so that a derived frame can say where it came from and how to fix it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import itertools
import json
import threading
import uuid
from collections.abc import Hashable, Iterator
from dataclasses import dataclass
from fractions import Fraction
from types import TracebackType
from typing import Any, NoReturn, Protocol

import pandas as pd

from ..core import zcdp
from ..core.errors import BudgetMismatchError, MissingBudgetError, PandasDPError
from ..core.noise import RandomSource
from ..core.text import epsilon_text, number_text
from ..core.validation import check_delta
from . import _pld
from ._view import epsilon_figure, html_view, text_view
from .events import Event
from .ledger import (
    ACCOUNTANTS,
    LEDGER_COLUMNS,
    PLD,
    RHO_NEEDS_ZCDP,
    SEEDED,
    BudgetStore,
    LedgerEntry,
    MemoryStore,
    how_many,
    spent_after,
)

__all__ = [
    "Epsilon",
    "Fitter",
    "FrameBinding",
    "Hold",
    "Lineage",
    "PrivacyBudget",
    "attach",
    "bind",
    "binding_of",
    "budget_lock",
    "claim_root",
    "keep_spent",
    "marker_of",
    "named_memory_store",
    "require_binding",
    "same_budget",
]

MARKER_KEY = "pandas_dp"
#: The δ at which a ρ budget's views state the (ε, δ) it means, unless it holds a δ.
FACT_DELTA = Fraction(1, 10**6)
#: How the views name the PLD accountant.
PLD_FACT = "PLD (privacy loss distributions composed by dp_accounting, pessimistic)"
_BINDING_ATTR = "_pandas_dp_binding"


class Epsilon(Fraction):
    """An exact amount of epsilon that also formats like a number on every Python.

    ``f"{budget.remaining:.2f}"`` works on Python 3.11 too, where
    ``Fraction`` has no ``__format__`` of its own (it arrived in 3.12); a
    format spec is applied exactly where Fraction supports it, else to the
    float.  Arithmetic gives plain Fractions.

    ``str()`` (so ``print`` and an f-string) writes a decimal, ``2.67`` (ten
    significant figures at most: :func:`pandas_dp.core.text.epsilon_text`); the
    value, ``==`` and arithmetic stay exact, and ``repr()`` shows the
    fraction: ``Epsilon(267, 100)``.
    """

    __slots__ = ()

    def __str__(self) -> str:
        return epsilon_text(self)

    def __format__(self, spec: str) -> str:
        if not spec:
            return str(self)
        try:
            return super().__format__(spec)
        except (TypeError, ValueError):
            return format(float(self), spec)


# Every budget created in this process, by id, kept for the life of the process:
# a marked frame can always find the budget it came from, so set_budget on it is
# refused even after the original frame is gone (df = df.reset_index() would
# otherwise silently reset the accounting), and inherit() can rebind it.
_LIVE: dict[str, PrivacyBudget] = {}
# Named in-memory budgets (set_budget(epsilon, name=...) without a ledger), by name,
# with their adjacency and privacy unit: attaching the same name again continues
# the same store.
_NAMED: dict[str, tuple[MemoryStore, str, str | None]] = {}
# Held while a frame's binding is checked and set, so that two threads calling
# set_budget on one frame cannot both succeed.
_BINDING_LOCK = threading.RLock()


class Fitter(Protocol):
    """Plans ``release`` to ``half_width``: its cheapest ledger entry of each noise it may take.

    What :meth:`PrivacyBudget.fits` counts (``pandas_dp.pipeline.workload.entries_for``).
    """

    def __call__(
        self,
        budget: PrivacyBudget,
        release: object,
        half_width: object,
        level: float,
        n: int | None,
    ) -> tuple[LedgerEntry, ...]: ...


def named_memory_store(
    name: str,
    total: Fraction,
    adjacency: str,
    privacy_unit: str | None = None,
    accountant: str = "epsilon",
    delta: Fraction = Fraction(0),
    adopt: bool = False,
) -> MemoryStore:
    """The in-memory store of budget ``name`` in this process, created at the first attach.

    Attaching the same name again continues it (same total, adjacency and
    privacy unit, or BudgetMismatchError): re-reading the data in a notebook
    does not reset the accounting.  With ``adopt`` (``accountant`` was the
    default, not asked for), an ε budget continues with the accountant it was
    created with, ``"epsilon"`` or ``"pld"`` (as a ledger's budget does).
    """
    with _BINDING_LOCK:
        found = _NAMED.get(name)
        if found is None:
            store = MemoryStore(total, accountant, delta)
            _NAMED[name] = (store, adjacency, privacy_unit)
            return store
        store, existing, unit = found
    if adopt and {store.accountant, accountant} <= {"epsilon", "pld"}:
        accountant = store.accountant
    if store.delta != delta:
        raise BudgetMismatchError(
            f"The in-memory budget {name!r} of this process holds delta="
            f"{number_text(store.delta)}, not {number_text(delta)}. Pass that delta to continue "
            "it, or choose another name."
        )
    if store.accountant != accountant or store.total != total:
        pld = store.accountant == "pld"  # its total is an epsilon; accountant= left out keeps it
        kept = f"{'epsilon' if pld else store.accountant}={epsilon_text(store.total)}"
        given = epsilon_text(total)
        if store.accountant != accountant:
            given = f"{accountant}={given} (its accountant stays)"
        raise BudgetMismatchError(
            f"The in-memory budget {name!r} of this process has total {kept}, not {given}. "
            f"Pass {kept}{' and no accountant=' if pld else ''} to continue it, or choose "
            "another name."
        )
    if existing != adjacency:
        raise BudgetMismatchError(
            f"The in-memory budget {name!r} of this process was created with "
            f"adjacency={existing!r}, not {adjacency!r}; its releases are accounted under that "
            "adjacency."
        )
    if unit != privacy_unit:
        raise BudgetMismatchError(
            f"The in-memory budget {name!r} of this process was created with "
            f"privacy_unit={unit!r}, not {privacy_unit!r}; its releases are accounted per that "
            "unit."
        )
    return store


#: Set on an error raised inside a reservation once the exact statistics may have been
#: seen (see :func:`keep_spent`): the reservation is then committed, not returned.
_KEEP_SPENT = "_pandas_dp_keep_spent"


def keep_spent(error: BaseException) -> None:
    """Let the reservation ``error`` ends stay spent: the exact statistics may have been seen.

    For an error raised after a computation's partial results existed (a Dask
    task that tallied a partition had returned, and a callback or a worker
    may have recorded it): returning the ε would make those statistics free.
    """
    setattr(error, _KEEP_SPENT, True)
    error.add_note(
        "pandas_dp: the epsilon reserved for this release stays spent: part of its exact "
        "statistics had been computed when this error was raised."
    )


class Reservation:
    """A pending reservation: committed when its ``with`` block ends, returned if it raised.

    Committed as well when the error is marked by :func:`keep_spent`.
    """

    __slots__ = ("_store", "_token")

    def __init__(self, store: BudgetStore, token: int) -> None:
        self._store = store
        self._token = token

    def __enter__(self) -> None:
        return None

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if kind is None or getattr(value, _KEEP_SPENT, False):
            self._store.commit(self._token)
        else:
            self._store.cancel(self._token)


class Hold:
    """A share of a budget held for one report: ``with df.dp.reserve(epsilon=0.5):``.

    Entering the block sets the share aside atomically (in the store: with a
    ledger, a row every process counts), or raises BudgetExceededError
    holding nothing.  Inside the block, the releases of this budget made in
    this thread (by any frame that shares the budget) draw on the share
    first, and on what is free only for the rest; other threads, frames of
    other budgets and other processes can no longer spend it.  On exit, also
    when the block raises, what is left of the share is free again
    (``returned``).  A release that raised inside the block returns its
    epsilon to the budget, not to the share.  Holds do not nest: a second
    ``reserve`` of the same budget in the same thread inside the block is a
    ValueError (hold the whole report's share once).
    """

    __slots__ = ("_budget", "_events", "_token", "epsilon", "returned")

    def __init__(
        self, budget: PrivacyBudget, epsilon: Fraction, events: tuple[Event, ...] = ()
    ) -> None:
        self._budget = budget
        self._events = events
        self._token: int | None = None
        #: The share held, and (after the block) what was left of it and returned.
        self.epsilon = Epsilon(epsilon)
        self.returned: Epsilon | None = None

    def __enter__(self) -> Hold:
        local = self._budget._holding
        if getattr(local, "token", None) is not None:
            raise ValueError(
                "`reserve` is already holding a share of this budget in this thread; holds do "
                "not nest. Reserve the whole report's epsilon in one block."
            )
        if self._token is not None:
            raise ValueError("This reservation was already used; call df.dp.reserve(...) again.")
        self._token = self._budget.store.hold(self.epsilon, self._events)
        local.token = self._token
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self._budget._holding.token = None
        assert self._token is not None
        self.returned = Epsilon(self._budget.store.unhold(self._token))

    def __repr__(self) -> str:
        return f"Hold(epsilon={self.epsilon})"


class PrivacyBudget:
    """A total epsilon, what has been spent of it, and the randomness that spends it.

    Created by ``df.dp.set_budget(...)``; read it as ``df.dp.budget``.
    ``total``, ``spent`` and ``remaining`` are exact Fractions; ``ledger`` is a
    DataFrame with one row per release (public parameters only).
    """

    def __init__(
        self,
        store: BudgetStore,
        *,
        adjacency: str,
        source: RandomSource,
        seed: int | None = None,
        name: str | None = None,
        privacy_unit: Hashable | None = None,
        max_rows: int | None = None,
        max_groups: int | None = None,
        delta: Fraction = Fraction(0),
        note: str = "",
        fitter: Fitter | None = None,
    ) -> None:
        self._store = store
        #: Plans a release from its target accuracy, for :meth:`fits` (given by ``set_budget``).
        self._fitter = fitter
        #: What the views say about how the budget composes, when it is not what the default
        #: or ``accountant="pld"`` would have it (an (ε, δ) budget without ``dp_accounting``:
        #: it adds ε and δ up instead).
        self.note = note
        #: The δ releases of this budget may spend (0: none; see :meth:`reserve`).
        self.delta = delta
        self.adjacency = adjacency
        self.source = source
        self.seed = seed
        self.name = name
        #: The column identifying a person (None: one row is one person), and the
        #: default bounds of its releases.
        self.privacy_unit = privacy_unit
        self.max_rows = max_rows
        self.max_groups = max_groups
        self.id = uuid.uuid4().hex
        # The open hold of each thread (Hold): its releases draw on it first.
        self._holding = threading.local()
        # The planned and realised intervals of this thread's release of a plan (Plan.run).
        self._noting = threading.local()
        _LIVE[self.id] = self

    @property
    def accountant(self) -> str:
        """How the releases compose: ``"epsilon"`` (pure ε: total, spent and remaining are ε),
        ``"rho"`` (zCDP: ρ) or ``"pld"`` (an (ε, δ) budget: ``spent`` is the ε at its δ of
        every release's privacy loss distribution composed, see ``set_budget(accountant=)``)."""
        return self._store.accountant

    @property
    def composed(self) -> bool:
        """Whether the releases compose by privacy loss distributions (``accountant="pld"``)."""
        return ACCOUNTANTS[self.accountant].composes

    def _taken_epsilons(self) -> tuple[Fraction, Fraction]:
        """Under PLD: the ε at the budget's δ of the entries, and of the entries and holds."""
        taken = self._store.taken()
        return PLD.spent(taken), PLD.with_holds(taken)

    @property
    def total(self) -> Epsilon:
        """The total, in the unit of the :attr:`accountant` (ε, or ρ)."""
        return Epsilon(self._store.total)

    @property
    def delta_spent(self) -> Fraction:
        """The δ spent so far: the sum of the releases' δ, exact."""
        return sum((e.delta for e in self._store.entries()), Fraction(0))

    def epsilon_at(self, delta: float | Fraction, *, of: str = "spent") -> float:
        """The ε of the (ε, δ)-DP guarantee of what was spent (or of the total), at ``delta``.

        ``delta`` is the guarantee's whole δ: it includes the δ the releases
        spent themselves (:attr:`delta_spent`, key selections; ``of="total"``:
        the budget's δ), so it must be at least that, and under a ρ budget
        more.  Under a ρ budget: the smallest ε that the Canonne–Kamath–Steinke
        bound certifies for the ρ spent (``of="total"``: for the whole total)
        at the δ left, ``delta - delta_spent``, rounded so that it can only
        over-state ε (:func:`pandas_dp.core.zcdp.epsilon_at`).  Under an ε budget:
        the ε itself ((ε, ``delta_spent``)-DP, hence (ε, δ) at every larger δ).

        Parameters
        ----------
        delta : float or Fraction
            In (0, 1), e.g. ``1e-6``; at least the δ spent (more under ρ).
        of : {"spent", "total"}
            What was spent so far (default), or the budget's total.

        Returns
        -------
        float

        Raises
        ------
        ValueError
            ``delta`` below the δ the releases spent (under ρ: not above it).
        """
        if of not in ("spent", "total"):
            raise ValueError(f'`of` must be "spent" or "total", got {of!r}.')
        if self.composed:
            return self._pld_epsilon_at(delta, of)
        amount = self._store.spent() if of == "spent" else self._store.total
        used = self.delta_spent if of == "spent" else self.delta
        zcdp.epsilon_at(Fraction(1), delta)  # checks delta
        left = check_delta(delta) - used  # a float read as its shortest decimal
        rho = self.accountant == "rho"
        if left < 0 or (rho and left == 0):
            what = "the releases spent" if of == "spent" else "the budget holds"
            raise ValueError(
                f"`delta` must be {'above' if rho else 'at least'} the delta {what} "
                f"({float(used):g}): the guarantee's delta includes it; got {float(delta):g}. "
                f"Pass e.g. delta={float(used + (FACT_DELTA if rho else 0)):g}."
            )
        return zcdp.epsilon_at(amount, left) if rho else float(amount)

    def _pld_epsilon_at(self, delta: float | Fraction, of: str) -> float:
        """:meth:`epsilon_at` under PLD: the composition's ε at ``delta`` (the total's at its δ)."""
        wanted = check_delta(delta)
        if not 0 < wanted < 1:
            raise ValueError(f"`delta` must be strictly between 0 and 1, got {delta!r}.")
        if of == "total":
            if wanted < self.delta:
                raise ValueError(
                    f"`delta` must be at least the budget's delta ({float(self.delta):g}): its "
                    f"total promises (epsilon, delta) = ({self.total}, {float(self.delta):g})."
                )
            return float(self.total)
        events = self._store.taken().events(holds=False)
        return _pld.epsilon_at(events, wanted, self.delta)

    @property
    def spent(self) -> Epsilon:
        """What the releases spent (and reservations hold), in the unit of the :attr:`accountant`.

        Under PLD: the ε at the budget's δ of their privacy loss distributions
        composed, rounded up (never below the true ε, see ``set_budget``).
        """
        return Epsilon(self._store.spent())

    @property
    def held(self) -> Epsilon:
        """Epsilon set aside by open ``reserve`` blocks (of every thread, and process).

        Under PLD: what the holds add to the ε spent at the budget's δ.
        """
        if self.composed:
            spent, with_holds = self._taken_epsilons()
            return Epsilon(max(with_holds - spent, Fraction(0)))
        return Epsilon(self._store.held())

    @property
    def remaining(self) -> Epsilon:
        """What a new reservation may still take: the total less what is spent and held.

        Under PLD the ε still free at the budget's δ: releases compose below
        their sum, so more than ``remaining`` worth of ε may still fit (ask
        :meth:`fits`).
        """
        if self.composed:
            return Epsilon(max(self._store.total - self._taken_epsilons()[1], Fraction(0)))
        return Epsilon(self._store.total - self._store.spent() - self._store.held())

    @property
    def store(self) -> BudgetStore:
        """Where the accounting lives: a MemoryStore, or a ledger's SqliteStore."""
        return self._store

    @property
    def entries(self) -> list[LedgerEntry]:
        return self._store.entries()

    @property
    def ledger(self) -> pd.DataFrame:
        """Every release so far, oldest first, with the cumulative amount spent.

        ``half_width_95`` states each release's noise: the half-width of its
        95% interval (see :meth:`pandas_dp.kinds.base.Kind.half_width`; text, one
        figure per column, computed from the plan when the release was made).
        ``spent`` is cumulative, in the :attr:`accountant`'s unit (ε, or ρ);
        ``epsilon_at`` is the ε of the (ε, δ)-DP guarantee of that spend at the
        δ ``at_delta``: the δ spent so far (key selections) plus, under a ρ
        budget, the δ of the conversion (the budget's δ, else 1e-6).  Under an
        ε budget ``epsilon_at`` is the ε spent itself.
        """
        entries = self.entries
        frame = pd.DataFrame([e.as_record() for e in entries], columns=LEDGER_COLUMNS)
        for column in ("keys", "max_rows", "max_groups"):
            frame[column] = frame[column].astype("Int64")
        spent = spent_after(entries, self.accountant, self._store.total, self.delta)
        deltas = itertools.accumulate((e.delta for e in entries), initial=Fraction(0))
        rho = self.accountant == "rho"
        at = (self.delta or FACT_DELTA) if rho else Fraction(0)  # the conversion's δ
        frame["spent"] = [float(s) for s in spent]
        frame["epsilon_at"] = [zcdp.epsilon_at(s, at) if rho else float(s) for s in spent]
        frame["at_delta"] = [float(at + d) for d in list(deltas)[1:]]
        if self.composed:  # the ε at the budget's δ, every release composed by PLD
            frame["at_delta"] = float(self.delta)
        return frame

    def reserve(self, entry: LedgerEntry) -> Reservation:
        """Reserve ``entry.epsilon`` for the statistics computed inside a ``with`` block.

        The reservation counts against every other query at once (with a
        ledger, it is on disk and counts as spent if the process dies).  It is
        committed when the block ends, before any noise is drawn, and returned
        if the block raised: nothing was released.  BudgetExceededError, with
        nothing reserved, if it does not fit.
        """
        entry = entry.charged(self.accountant)  # a ρ budget charges ε²/2; an ε one refuses ρ
        if self.seed is not None:  # reproducible noise: the ledger must say it is not private
            entry = entry.marked(SEEDED)
        planned = getattr(self._noting, "intervals", None)
        if planned is not None:  # a release of a plan: the ledger shows what was planned
            entry = dataclasses.replace(entry, planned=planned[0], realised=planned[1])
        hold = getattr(self._holding, "token", None)  # the store checks ε (ρ) and δ at once
        return Reservation(self._store, self._store.reserve(entry, hold))

    @contextlib.contextmanager
    def planned(self, planned: str, realised: str) -> Iterator[None]:
        """Record ``planned`` and ``realised`` intervals with this thread's releases in the block.

        ``df.dp.plan(...).run()`` wraps each release so: its ledger entry says
        the half-width it was planned for and the one its noise gives.
        """
        self._noting.intervals = (planned, realised)
        try:
            yield
        finally:
            self._noting.intervals = None

    def fits(
        self, release: object, /, *, half_width: object, level: float = 0.95, n: int | None = None
    ) -> int:
        """How many more releases of ``release`` at ``half_width`` fit in what is left.

        ``release`` as a plan takes it (``"count"``, ``("mean", "salary",
        {"clip": (0, 2e5)})``, ``("groupby.count", "dept", {"keys": DEPTS})``);
        each is planned to the smallest loss whose ``level`` interval is at
        most ``half_width`` (see ``df.dp.plan``), on a frame of this budget
        that is not its root, and counted under the budget's accountant with
        what is spent and held: under PLD, the most that compose within its
        (ε, δ), of whichever noise lets the most fit.  Reads no data.

        Returns
        -------
        int
            0 when not even one fits (at most 10**6).
        """
        if self._fitter is None:
            raise TypeError("this budget was made without a planner; attach one with set_budget.")
        taken = self._store.taken()
        entries = self._fitter(self, release, half_width, level, n)
        counts = (how_many(self.accountant, taken, e.charged(self.accountant)) for e in entries)
        return max(counts, default=0)

    @property
    def holding(self) -> bool:
        """Whether this thread holds a share of this budget (inside ``df.dp.reserve``)."""
        return getattr(self._holding, "token", None) is not None

    def hold(self, amount: Fraction, accountant: str = "epsilon") -> Hold:
        """Set ``amount`` aside for the releases of this thread inside a ``with`` block.

        ``df.dp.reserve(epsilon=...)`` (or ``rho=``) calls it; see :class:`Hold`.
        An ε held on a ρ budget holds ``ε²/2``; a ρ on an ε budget is refused
        (ValueError), as a ``rho=`` release is.
        """
        if self.accountant == "rho" and accountant == "epsilon":
            amount = zcdp.pure_rho(amount)
        elif self.accountant == "epsilon" and accountant == "rho":
            raise ValueError(RHO_NEEDS_ZCDP)
        return Hold(self, amount, ACCOUNTANTS[self.accountant].hold_events(amount, accountant))

    def spend(self, entry: LedgerEntry) -> None:
        """Charge ``entry.epsilon`` at once (a reservation with nothing to compute)."""
        with self.reserve(entry):
            pass

    def __reduce__(self) -> NoReturn:
        """Refuse to be pickled or copied: a budget never leaves the process that created it.

        A copy would be a second budget for the same people (each copy would
        spend the whole total), and a copy shipped to a worker process
        (Dask, multiprocessing) would spend where nobody accounts for it.
        Share one budget between processes with a named ledger budget.
        """
        raise TypeError(
            "A PrivacyBudget cannot be pickled or copied: it never leaves the process that "
            "created it (a copy would spend the same people's budget twice). Pass public "
            "parameters to workers, and share a budget between processes with "
            "set_budget(..., ledger=..., name=...)."
        )

    @property
    def marker(self) -> str:
        """The JSON-safe string kept in ``attrs['pandas_dp']`` of bound frames."""
        return json.dumps({"budget": self.id, "name": self.name}, sort_keys=True)

    def __repr__(self) -> str:
        """One line: the amounts (decimals, like ``str(budget.remaining)``) and the settings."""
        seeded = f", seed={self.seed} (NOT PRIVATE)" if self.seed is not None else ""
        named = f", name={self.name!r}" if self.name else ""
        unit = "" if self.privacy_unit is None else f", privacy_unit={self.privacy_unit!r}"
        rho = f", accountant={self.accountant!r}" if self.accountant != "epsilon" else ""
        delta = f", delta={number_text(self.delta)}" if self.delta else ""
        return (
            f"PrivacyBudget(total={self.total}, spent={self.spent}, "
            f"remaining={self.remaining}{rho}{delta}, adjacency={self.adjacency!r}{unit}{named}"
            f"{seeded})"
        )

    def facts(self) -> list[tuple[str, str]]:
        """What the views state about this budget, one ``(label, value)`` per line.

        Both views (:meth:`_repr_html_`, ``str(budget)``) show these; a new
        fact is one more pair.  Public parameters only.
        """
        held = self.held
        unit = "one row" if self.privacy_unit is None else f"column {self.privacy_unit!s}"
        bounds = ", ".join(
            f"{name}={number_text(value)}"
            for name, value in (("max_rows", self.max_rows), ("max_groups", self.max_groups))
            if value is not None
        )
        rho = self.accountant == "rho"
        at = FACT_DELTA if not self.delta else self.delta
        if self.composed:
            totals: list[tuple[str, str] | None] = [
                ("total (ε, δ)", f"({epsilon_figure(self.total)}, {number_text(self.delta)})"),
                (f"spent (ε at δ={number_text(self.delta)})", epsilon_figure(self.spent)),
                ("held (reserve)", epsilon_figure(held)) if held else None,
                ("remaining", epsilon_figure(self.remaining)),
                ("accountant", PLD_FACT),
            ]
        else:
            pure = "ε (pure; ε and δ add up)" if self.delta else "ε (pure)"
            totals = [
                ("total ρ" if rho else "total ε", epsilon_figure(self.total)),
                ("spent", epsilon_figure(self.spent)),
                ("held (reserve)", epsilon_figure(held)) if held else None,
                ("remaining", epsilon_figure(self.remaining)),
                ("accountant", "ρ (zCDP)" if rho else pure),
                (
                    f"spent as (ε, δ={number_text(at + self.delta_spent)})",
                    epsilon_figure(Fraction(self.epsilon_at(at + self.delta_spent))),
                )
                if rho
                else None,
                ("δ spent / total", f"{number_text(self.delta_spent)} / {number_text(self.delta)}")
                if self.delta
                else None,
            ]
        facts = [
            *totals,
            ("note", self.note) if self.note else None,
            ("adjacency", self.adjacency),
            ("privacy unit", unit),
            ("bounds", bounds) if bounds else None,
            ("noise", f"seeded ({self.seed}): NOT private") if self.seed is not None else None,
        ]
        return [fact for fact in facts if fact is not None]

    def _title(self) -> str:
        return "PrivacyBudget" if self.name is None else f"PrivacyBudget {self.name}"

    def __str__(self) -> str:
        """Several lines: the facts and the latest releases (``print(budget)``)."""
        entries = self.entries
        return text_view(
            self._title(), self.facts(), entries, self.accountant, self._spent_after(entries)
        )

    def _spent_after(self, entries: list[LedgerEntry]) -> list[Fraction]:
        """What was spent after each entry (the views' running figure)."""
        return spent_after(entries, self.accountant, self._store.total, self.delta)

    def _repr_html_(self) -> str:
        """Jupyter's view: the share spent as a bar, the facts, and the latest releases.

        Shows public parameters only (operations, column names, epsilons, and
        each release's half-width at 95%, labelled per column), like the
        ledger.  Cells are padded by inline styles (no notebook CSS needed).
        """
        total, spent = self.total, self.spent
        share = min(float(spent / total), 1.0) if total else 1.0
        entries = self.entries
        return html_view(
            self._title(),
            self.facts(),
            entries,
            share,
            self.accountant,
            self._spent_after(entries),
        )


# ---------------------------------------------------------------------- frame binding


@dataclass(frozen=True)
class FrameBinding:
    """Which budget a frame may spend, and whether its rows are the budget's own rows.

    ``root`` is True for the frame the budget was set on and for frames that
    keep exactly its rows (``select``, ``assign``): there, under the
    substitute adjacency, the row count is public (one row per person only).
    ``unit`` is the frame's privacy-unit column, or None when each row is one
    person (a frame without a unit, or ``per_unit``'s).  ``index`` is the frame's
    index object when bound.  pandas installs a new index object whenever rows
    are added, removed or reordered in place (``df.loc[new] = ...``,
    ``drop``/``dropna``/``fillna(inplace=True)``, ...; whatever the data, even
    when nothing was dropped), so a bound frame whose index object changed
    spends nothing until ``df.dp.inherit()`` asserts again that it holds at
    most one row per person (see :func:`require_binding`).  Likewise a unit
    column replaced, overwritten or renamed in place (``df["customer_id"] = ...``,
    ``df.loc[:, "customer_id"] = ...``) stops
    the frame: bounding by other ids would understate a person's reach.  The
    tests are on objects' identities, never on the data, so a refusal reveals
    nothing.
    """

    budget: PrivacyBudget
    root: bool
    index: pd.Index
    #: The column identifying a person in this frame (None: one row per person).
    unit: Hashable | None = None
    #: The identity of the unit column's values when bound (see :func:`column_token`).
    unit_token: ColumnToken | None = None
    #: This frame's default ``(max_rows, max_groups)`` where they are not the budget's: a
    #: frame made by a merge, a concat or an explode (:mod:`pandas_dp.surface.relational`),
    #: whose unit may hold more rows than the budget's defaults were set for.  None: the
    #: budget's.
    defaults: tuple[int | None, int | None] | None = None
    #: Where this frame's rows come from, when known (see :class:`Lineage`): None unless
    #: the budget has no privacy unit.
    lineage: Lineage | None = None

    def is_root(self, df: pd.DataFrame) -> bool:
        """Whether ``df`` (the bound frame) still has the rows the budget was set on."""
        return self.root and df.index is self.index

    def unit_unchanged(self, df: pd.DataFrame) -> bool:
        """Whether ``df``'s unit column still holds the values bound (by identity)."""
        if self.unit is None:
            return True
        now = column_token(df, self.unit)
        if self.unit_token is None or now is None:
            return self.unit_token is now
        return self.unit_token.same(now)


class Lineage:
    """The rows of one frame attached to a budget without a privacy unit, by their labels.

    A frame attached with a ``RangeIndex`` (what ``read_csv`` gives: unique
    labels, known from the index's type alone) gets one; the row-wise
    derivations (``filter``, ``query``, ``assign``, ``select``) keep its
    rows' labels and pass it on, and a merge, concat or explode that makes
    several rows of one original row names them by those labels in a unit
    column of the same lineage.  Frames of one lineage can then be stacked
    (``df.dp.concat``) and each original row bounded, wherever its rows are.
    ``inherit()`` and ``per_unit`` start no lineage: their labels are not
    known to name the original rows.  Compared by identity, never by value.
    """

    __slots__ = ()

    def __repr__(self) -> str:
        return "Lineage(...)"


def same_budget(a: PrivacyBudget, b: PrivacyBudget) -> bool:
    """Whether ``a`` and ``b`` account in one store: the same budget, or one named budget.

    Two frames attached to one named budget (in this process's memory, or
    in one ledger file) get two :class:`PrivacyBudget` objects on one store:
    their spends add up in one place, and the store holds their privacy unit
    and adjacency, so they are tables of the same people.
    """
    if a is b or a.store is b.store:
        return True
    if a.name is None or a.name != b.name:
        return False
    book_a, book_b = getattr(a.store, "ledger", None), getattr(b.store, "ledger", None)
    path_a, path_b = getattr(book_a, "path", None), getattr(book_b, "path", None)
    return path_a is not None and path_b is not None and path_a.resolve() == path_b.resolve()


def binding_of(df: pd.DataFrame) -> FrameBinding | None:
    binding = vars(df).get(_BINDING_ATTR)
    return binding if isinstance(binding, FrameBinding) else None


def marker_of(df: pd.DataFrame) -> dict[str, str | None] | None:
    """The parsed marker in ``df.attrs``, or None when there is none (or it is foreign)."""
    raw = df.attrs.get(MARKER_KEY)
    if not isinstance(raw, str):
        return None
    try:
        parsed = json.loads(raw)
    except ValueError:
        return None
    if not isinstance(parsed, dict) or not isinstance(parsed.get("budget"), str):
        return None
    return {"budget": parsed["budget"], "name": parsed.get("name")}


def live_budget(budget_id: str) -> PrivacyBudget | None:
    return _LIVE.get(budget_id)


_BUDGET_UNIT: Any = object()


@dataclass(frozen=True, eq=False)
class ColumnToken:
    """The identity of a column's stored values: what holds them, never what they are.

    ``owner`` is the object that owns the values' memory (a numpy column is a
    view into its block's array; an extension array is its own owner), held
    by a strong reference: while the binding lives, that memory cannot be
    freed, so no other column can ever be allocated at its address (a check
    on the address alone passed about half the time after ``del df[unit]``,
    ``gc.collect()``, ``df[unit] = new_ids``).  ``where`` is the column's
    place inside the owner (address, shape, strides, dtype), which tells
    apart two columns of one block.  ``view`` is the column as a Series,
    held so that pandas' copy-on-write sees a reference to the values: a write
    into them in place (``df.loc[:, unit] = ...``, ``df.loc[0, unit] = ...``)
    then copies them first, which changes the owner.  Compared with ``is`` and
    ``==``, never elementwise.
    """

    owner: object
    where: tuple[Any, ...] = ()
    view: object = None

    def same(self, other: ColumnToken) -> bool:
        """Whether ``other`` reads the very values this token was taken from."""
        return other.owner is self.owner and other.where == self.where


def column_token(df: pd.DataFrame, label: Hashable) -> ColumnToken | None:
    """The identity of a column's stored values (see :class:`ColumnToken`).

    The same across reads of an unchanged column; different once the column
    is replaced (``df[label] = ...``, a rename that moves another column under
    the label, ``astype``) or, while the token lives, written in place.
    None when the frame has no such column.
    """
    if label not in df.columns:
        return None
    view = df[label]
    values = view.array
    if isinstance(values, pd.arrays.NumpyExtensionArray):
        array = values.to_numpy()
        owner = array if array.base is None else array.base
        where = (array.__array_interface__["data"][0], array.shape, array.strides, array.dtype.str)
        return ColumnToken(owner, where, view)
    return ColumnToken(values, view=view)


def bind(
    df: pd.DataFrame,
    budget: PrivacyBudget,
    *,
    root: bool,
    unit: Hashable | None = _BUDGET_UNIT,
    defaults: tuple[int | None, int | None] | None = None,
    lineage: Lineage | None = None,
) -> None:
    """Let ``df`` (this object only) spend ``budget``; mark its attrs.

    ``unit`` is the frame's privacy-unit column: by default the budget's;
    ``defaults`` its default bounds when not the budget's, ``lineage`` where
    its rows come from (see :class:`FrameBinding`).
    """
    frame_unit = budget.privacy_unit if unit is _BUDGET_UNIT else unit
    token = None if frame_unit is None else column_token(df, frame_unit)
    binding = FrameBinding(budget, root, df.index, frame_unit, token, defaults, lineage)
    object.__setattr__(df, _BINDING_ATTR, binding)
    df.attrs[MARKER_KEY] = budget.marker


def budget_lock() -> threading.RLock:
    """The lock held while a frame's binding is checked and changed."""
    return _BINDING_LOCK


# The named budgets attached in this process, as (where, name): a frame attached to one
# of them again is never the root frame (its rows are not known to be the first ones).
_ATTACHED: set[tuple[str, str]] = set()


def claim_root(name: str | None, where: str | None, *, stored: bool = True) -> bool:
    """Whether the frame now attached to budget ``name`` (in ``where``) is its root frame.

    Root means: the rows the budget was set on, whose row count is public
    under substitute (a count released there is exact and free).  A new
    unnamed budget's frame is its root.  A named budget's root is the first
    frame attached to it in this process, and only if its store agrees
    (``stored``): a ledger budget created by this attach, or whose stored
    public row count equals this frame's (:meth:`pandas_dp.accounting.sqlite.Ledger.attach`),
    so that a subset attached first in a new process does not become root.
    A frame attached to the same name again in this process (the data read
    afresh) continues the accounting but is never root.  Once per attach.
    """
    if name is None or where is None:
        return stored
    with _BINDING_LOCK:
        key = (where, name)
        first = key not in _ATTACHED
        _ATTACHED.add(key)
    return first and stored


def attach(
    df: pd.DataFrame, budget: PrivacyBudget, *, where: str | None = None, stored_root: bool = True
) -> None:
    """Bind ``df`` as the frame ``budget`` was set on, atomically with the check that it may be.

    ``where`` names the store of a named budget (a ledger file, or the
    process's memory); whether ``df`` is the budget's root is
    :func:`claim_root`'s answer (``stored_root``: what the store says).
    """
    # Labels of a RangeIndex are unique by its type: they name the rows (see Lineage).
    known = budget.privacy_unit is None and isinstance(df.index, pd.RangeIndex)
    with _BINDING_LOCK:
        refuse_rebinding(df)
        root = claim_root(budget.name, where, stored=stored_root)
        bind(df, budget, root=root, lineage=Lineage() if known else None)


def require_binding(df: pd.DataFrame) -> FrameBinding:
    """The binding a release of ``df`` may spend, or MissingBudgetError that names the fix."""
    binding = binding_of(df)
    if binding is not None:
        if df.index is not binding.index:
            raise MissingBudgetError(
                "Rows of this frame were changed in place after its budget was attached (rows "
                "added, removed or reordered: df.loc[new_label] = ..., drop/dropna/fillna/"
                "sort_values(inplace=True), ...). A row added that way may repeat a person, so "
                "the frame spends nothing until you assert again that it holds at most one row "
                "per person: df.dp.inherit()."
            )
        if not binding.unit_unchanged(df):
            raise MissingBudgetError(
                f"The privacy unit column {binding.unit!r} was replaced, overwritten or renamed "
                "in place after the budget was attached (df[unit] = ..., df.loc[:, unit] = ..., "
                "rename(inplace=True), ...): "
                "bounding by other ids would understate what one person contributes. If it "
                "still identifies the same persons, say so with df.dp.inherit()."
            )
        return binding
    if marker_of(df) is not None:
        raise MissingBudgetError(
            "This frame cannot spend a privacy budget. It was derived from a protected frame by "
            "a pandas operation (copy, indexing, concat, merge, groupby, pickling, ...), which "
            "may mix or repeat people. Derive it with df.dp.filter(...) / df.dp.query(...) / "
            "df.dp.assign(...) / df.dp.select(...); join and stack with df.dp.merge(...) / "
            "df.dp.join(...) / df.dp.concat([...]) / df.dp.explode(...), whose results bound "
            "what one person contributes; or call result.dp.inherit() if it still has at most "
            "one row per person."
        )
    raise MissingBudgetError(
        "This frame has no privacy budget. Attach one first, on the frame that holds one row per "
        "person: df.dp.set_budget(epsilon=1.0). (A frame made from a protected one by "
        "df.merge(...) or pd.concat(...) may have lost the mark that says so: join and stack "
        "with df.dp.merge(...) / df.dp.concat([...]) instead.)"
    )


def refuse_rebinding(df: pd.DataFrame) -> None:
    """Refuse ``set_budget`` on a frame that has, or came from, a budget of this process.

    A new budget would reset the accounting for the same people; attaching the
    same named budget again would make a derived frame (``df[df.hiv]``,
    ``concat([df, df])``) the frame the budget was set on, whose row count is
    public under substitute.  ``inherit()`` is the one way back, and it asks
    for the analyst's assertion.  A frame without a marker of a live budget
    (read afresh) may attach a named budget again and continue it.
    """
    if binding_of(df) is not None:
        raise PandasDPError(
            "This frame already has a privacy budget; a second one would reset the accounting for "
            "the same people. Read it with df.dp.budget."
        )
    marker = marker_of(df)
    live = None if marker is None or marker["budget"] is None else live_budget(marker["budget"])
    if live is not None:
        named = f" {live.name!r}" if live.name else ""
        raise PandasDPError(
            f"This frame was derived from a frame whose privacy budget{named} was created in "
            "this process: a new budget would reset the accounting for the same people, and "
            "attaching the same budget again would treat this frame as the one it was set on. "
            "If it still has at most one row per person, continue that budget with "
            "result.dp.inherit(); or derive it with df.dp.filter(...) / df.dp.query(...), and "
            "join or stack with df.dp.merge(...) / df.dp.concat([...])."
        )
