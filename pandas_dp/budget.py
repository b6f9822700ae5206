"""The privacy budget: exact accounting, its ledger, and frame binding.

One :class:`PrivacyBudget` is attached to one frame by ``df.dp.set_budget``.
Its accounting lives in a store (in memory here; SQLite for named budgets),
behind one interface and one rule, :func:`check_fits`: a charge that would
exceed the total is refused whole, before any noise is drawn.

Binding is fail-closed.  The budget is held by the frame *object* (never in
``attrs``, which pandas copies into frames whose rows mix or repeat people);
``attrs["pandas_dp"]`` keeps only a JSON-safe string marker naming the budget,
so that a derived frame can say where it came from and how to fix it.
"""

from __future__ import annotations

import datetime as dt
import html
import itertools
import json
import threading
import uuid
import weakref
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Protocol

import pandas as pd

from .errors import BudgetExceededError, MissingBudgetError, PandasDPError
from .noise import RandomSource

__all__ = [
    "FrameBinding",
    "LedgerEntry",
    "MemoryStore",
    "PrivacyBudget",
    "bind",
    "binding_of",
    "check_fits",
    "marker_of",
    "require_binding",
]

MARKER_KEY = "pandas_dp"
_BINDING_ATTR = "_pandas_dp_binding"


@dataclass(frozen=True)
class LedgerEntry:
    """One release as the ledger records it: public parameters only.

    Never a data value, a released value or a key observed in the data.
    """

    operation: str
    epsilon: Fraction
    columns: tuple[str, ...] = ()
    mechanism: str = "discrete_laplace"
    adjacency: str = "add_remove"
    sensitivity: str = ""
    noise_scale: str = ""
    clip: tuple[tuple[float, float], ...] = ()
    keys: int | None = None
    time: dt.datetime = field(default_factory=lambda: dt.datetime.now(dt.UTC))

    def __post_init__(self) -> None:
        if not isinstance(self.epsilon, Fraction) or self.epsilon < 0:
            raise ValueError(f"`epsilon` must be a non-negative Fraction, got {self.epsilon!r}.")
        if not self.operation:
            raise ValueError("`operation` must be a non-empty string.")

    def as_record(self) -> dict[str, object]:
        return {
            "time": self.time,
            "operation": self.operation,
            "columns": ", ".join(self.columns),
            "epsilon": float(self.epsilon),
            "mechanism": self.mechanism,
            "adjacency": self.adjacency,
            "sensitivity": self.sensitivity,
            "noise_scale": self.noise_scale,
            "clip": "; ".join(f"[{lo:g}, {hi:g}]" for lo, hi in self.clip),
            "keys": self.keys,
        }


LEDGER_COLUMNS = list(LedgerEntry("x", Fraction(0)).as_record())


def check_fits(total: Fraction, spent: Fraction, requested: Fraction) -> None:
    """The one accounting rule: refuse a charge that would exceed ``total``."""
    if spent + requested > total:
        raise BudgetExceededError(requested=requested, remaining=total - spent)


class BudgetStore(Protocol):
    """Where a budget's accounting lives: atomic check-and-record."""

    @property
    def total(self) -> Fraction: ...

    def spent(self) -> Fraction: ...

    def charge(self, entry: LedgerEntry) -> None:
        """Record ``entry`` if it fits (:func:`check_fits`), atomically; else raise."""
        ...

    def entries(self) -> list[LedgerEntry]: ...


class MemoryStore:
    """The in-process store: a lock, a running Fraction and a list."""

    def __init__(self, total: Fraction) -> None:
        self._total = total
        self._spent = Fraction(0)
        self._entries: list[LedgerEntry] = []
        self._lock = threading.Lock()

    @property
    def total(self) -> Fraction:
        return self._total

    def spent(self) -> Fraction:
        with self._lock:
            return self._spent

    def charge(self, entry: LedgerEntry) -> None:
        with self._lock:
            check_fits(self._total, self._spent, entry.epsilon)
            self._spent += entry.epsilon
            self._entries.append(entry)

    def entries(self) -> list[LedgerEntry]:
        with self._lock:
            return list(self._entries)


# Budgets alive in this process, by id: lets a marked frame tell whether the
# budget it came from still exists (then set_budget on it is refused).
_LIVE: weakref.WeakValueDictionary[str, PrivacyBudget] = weakref.WeakValueDictionary()


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
    ) -> None:
        self._store = store
        self.adjacency = adjacency
        self.source = source
        self.seed = seed
        self.name = name
        self.id = uuid.uuid4().hex
        _LIVE[self.id] = self

    @property
    def total(self) -> Fraction:
        return self._store.total

    @property
    def spent(self) -> Fraction:
        return self._store.spent()

    @property
    def remaining(self) -> Fraction:
        return self.total - self.spent

    @property
    def entries(self) -> list[LedgerEntry]:
        return self._store.entries()

    @property
    def ledger(self) -> pd.DataFrame:
        """Every release so far, oldest first, with the cumulative epsilon spent."""
        entries = self.entries
        frame = pd.DataFrame([e.as_record() for e in entries], columns=LEDGER_COLUMNS)
        frame["spent"] = [float(s) for s in itertools.accumulate(e.epsilon for e in entries)]
        return frame

    def spend(self, entry: LedgerEntry) -> None:
        """Charge ``entry.epsilon`` atomically, or raise BudgetExceededError spending nothing."""
        self._store.charge(entry)

    @property
    def marker(self) -> str:
        """The JSON-safe string kept in ``attrs['pandas_dp']`` of bound frames."""
        return json.dumps({"budget": self.id, "name": self.name}, sort_keys=True)

    def __repr__(self) -> str:
        seeded = f", seed={self.seed} (NOT PRIVATE)" if self.seed is not None else ""
        named = f", name={self.name!r}" if self.name else ""
        return (
            f"PrivacyBudget(total={float(self.total):g}, spent={float(self.spent):g}, "
            f"remaining={float(self.remaining):g}, adjacency={self.adjacency!r}{named}{seeded})"
        )

    def _repr_html_(self) -> str:
        total, spent = self.total, self.spent
        share = float(spent / total) if total else 1.0
        last = self.entries[-5:]
        rows = "".join(
            "<tr>"
            f"<td>{html.escape(e.operation)}</td><td>{html.escape(', '.join(e.columns))}</td>"
            f"<td style='text-align:right'>{float(e.epsilon):g}</td>"
            "</tr>"
            for e in reversed(last)
        )
        table = (
            "<table style='margin-top:4px'>"
            "<tr><th>last releases</th><th>columns</th><th>ε</th></tr>"
            f"{rows}</table>"
            if rows
            else "<div style='color:#666'>no releases yet</div>"
        )
        warning = (
            "<div style='color:#b00'>seeded: reproducible, NOT private</div>"
            if self.seed is not None
            else ""
        )
        title = f"PrivacyBudget {html.escape(self.name)}" if self.name else "PrivacyBudget"
        return (
            "<div style='font-family:sans-serif;font-size:13px'>"
            f"<b>{title}</b> ({html.escape(self.adjacency)})<br>"
            f"total ε = {float(total):g} · spent {float(spent):g} · "
            f"<b>remaining {float(total - spent):g}</b>"
            "<div style='width:240px;height:10px;background:#e5e5e5;border-radius:3px'>"
            f"<div style='width:{min(share, 1.0) * 100:.1f}%;height:10px;background:#4a7;"
            "border-radius:3px'></div></div>"
            f"{warning}{table}</div>"
        )


# ---------------------------------------------------------------------- frame binding


@dataclass(frozen=True)
class FrameBinding:
    """Which budget a frame may spend, and whether its rows are the budget's own rows.

    ``root`` is True for the frame the budget was set on and for frames that
    keep exactly its rows (``select``, ``assign``): there, under the
    substitute adjacency, the row count is public.  ``rows`` is the row count
    when bound: a root frame whose rows were since dropped or appended in place
    is no longer treated as root (see :meth:`is_root`).
    """

    budget: PrivacyBudget
    root: bool
    rows: int = -1

    def is_root(self, df: pd.DataFrame) -> bool:
        """Whether ``df`` (the bound frame) still has exactly the budget's own rows."""
        return self.root and len(df) == self.rows


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


def bind(df: pd.DataFrame, budget: PrivacyBudget, *, root: bool) -> None:
    """Let ``df`` (this object only) spend ``budget``; mark its attrs."""
    object.__setattr__(df, _BINDING_ATTR, FrameBinding(budget, root, len(df)))
    df.attrs[MARKER_KEY] = budget.marker


def require_binding(df: pd.DataFrame) -> FrameBinding:
    """The frame's binding, or MissingBudgetError that names the fix."""
    binding = binding_of(df)
    if binding is not None:
        return binding
    if marker_of(df) is not None:
        raise MissingBudgetError(
            "This frame cannot spend a privacy budget. It was derived from a protected frame by "
            "a pandas operation (copy, indexing, concat, merge, groupby, pickling, ...), which "
            "may mix or repeat people. Derive it with df.dp.filter(...) / df.dp.query(...) / "
            "df.dp.assign(...) / df.dp.select(...), or call result.dp.inherit(df) if it still has "
            "at most one row per person."
        )
    raise MissingBudgetError(
        "This frame has no privacy budget. Attach one first, on the frame that holds one row per "
        "person: df.dp.set_budget(epsilon=1.0)."
    )


def column_names(columns: Sequence[Hashable]) -> tuple[str, ...]:
    return tuple(str(c) for c in columns)


def refuse_rebinding(df: pd.DataFrame) -> None:
    """Refuse ``set_budget`` on a frame that has, or came from, a live budget."""
    if binding_of(df) is not None:
        raise PandasDPError(
            "This frame already has a privacy budget; a second one would reset the accounting for "
            "the same people. Read it with df.dp.budget."
        )
    marker = marker_of(df)
    if marker is not None and marker["budget"] is not None and live_budget(marker["budget"]):
        raise PandasDPError(
            "This frame was derived from a frame whose privacy budget is still in use; a new "
            "budget would reset the accounting for the same people. Derive it with "
            "df.dp.filter(...) / df.dp.query(...), or call result.dp.inherit(df)."
        )
