"""Privacy events: what each release ran, with the exact parameters its privacy loss depends on.

A ledger entry records its release's *events* (:class:`Event`), so that any
process can recompute what was spent under any accountant: the sum of ε
(pure), of ρ (zCDP), or the composition of their privacy loss distributions
(PLD, :mod:`pandas_dp.accounting._pld`).  Every parameter is exact: a
:class:`~fractions.Fraction` or an int, written ``num/den`` in the ledger,
never a float.  An event is one of:

====================  ==========================================================
``discrete_laplace``  noise ``P(Z = z) ∝ exp(−|z|/scale)`` on integers whose L1
                      sensitivity is ``sensitivity`` (in the noise's units)
``discrete_gaussian`` noise ``P(Z = z) ∝ exp(−z²/(2·sigma2))`` on ``count``
                      integer coordinates, each moved by at most ``sensitivity``
                      by one person, independently
``pure``              any ε-DP mechanism (a selection: permute-and-flip,
                      AboveThreshold; a release whose noise the accountant
                      does not model more tightly)
``approx``            any (ε, δ)-DP mechanism (a key selection under ε)
``zcdp``              any ρ-zCDP mechanism that is also δ-approximate
                      (a key selection under ρ: ``delta``; else 0)
====================  ==========================================================

``count`` repeats an event (independent mechanisms of the same parameters:
the coordinates of a Gaussian vector, the rounds of a top-k).  An entry
written before events were recorded gets :func:`default_events` of its ε, ρ
and δ: ``pure(ε)`` (or ``approx``), else ``zcdp(ρ)``, which every release so
charged satisfies.  This module imports nothing of the package.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from fractions import Fraction
from typing import Final

__all__ = [
    "KINDS",
    "Event",
    "basic_epsilon",
    "default_events",
    "events_text",
    "parse_events",
]

#: The events there are, with the parameters each takes (besides ``count``).
KINDS: Final = {
    "discrete_laplace": ("scale", "sensitivity"),
    "discrete_gaussian": ("sigma2", "sensitivity"),
    "pure": ("epsilon",),
    "approx": ("epsilon", "delta"),
    "zcdp": ("rho", "delta"),
}
_INTEGERS = {"sensitivity", "count"}


@dataclass(frozen=True, order=True)
class Event:
    """One mechanism of a release, with exact parameters (see the module docstring).

    ``scale`` is the discrete Laplace scale, ``sigma2`` the discrete
    Gaussian's variance parameter (both in the noise's own units: rows, or
    grid steps); ``sensitivity`` is an integer in the same units.
    """

    kind: str
    scale: Fraction = Fraction(0)
    sigma2: Fraction = Fraction(0)
    sensitivity: int = 0
    epsilon: Fraction = Fraction(0)
    delta: Fraction = Fraction(0)
    rho: Fraction = Fraction(0)
    count: int = 1

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"an event is one of {sorted(KINDS)}, got {self.kind!r}.")
        for name in ("scale", "sigma2", "epsilon", "delta", "rho"):
            value = getattr(self, name)
            if not isinstance(value, Fraction) or value < 0:
                raise ValueError(f"an event's `{name}` must be a non-negative Fraction: {value!r}.")
        for name in _INTEGERS:
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ValueError(f"an event's `{name}` must be a non-negative int: {value!r}.")
        if self.delta >= 1:
            raise ValueError(f"an event's `delta` must be below 1: {self.delta!r}.")
        needs = {"discrete_laplace": self.scale, "discrete_gaussian": self.sigma2}
        if self.kind in needs and not needs[self.kind]:
            raise ValueError(f"a {self.kind} event needs positive noise (a free release has none).")
        if self.count < 1:
            raise ValueError("an event's `count` must be at least 1.")

    @property
    def basic(self) -> tuple[Fraction, Fraction] | None:
        """``(ε, δ)`` under basic composition, exact; None for a ρ-only event (Gaussian).

        A discrete Laplace release of scale b and L1 sensitivity Δ is ``Δ/b``-DP.
        """
        if self.kind == "discrete_laplace":
            return self.count * self.sensitivity / self.scale, Fraction(0)
        if self.kind in ("pure", "approx"):
            return self.count * self.epsilon, self.count * self.delta
        return None

    @property
    def zcdp(self) -> tuple[Fraction, Fraction]:
        """``(ρ, δ)`` of this event as zCDP (pure ε is ``ε²/2``-zCDP), exact.

        The discrete Gaussian of ``σ²`` on ``count`` coordinates each moved by
        at most s is ``count·s²/(2σ²)``-zCDP (Canonne, Kamath & Steinke 2020).
        """
        if self.kind == "discrete_gaussian":
            return self.count * self.sensitivity**2 / (2 * self.sigma2), Fraction(0)
        if self.kind == "zcdp":
            return self.count * self.rho, self.count * self.delta
        basic = self.basic
        assert basic is not None
        epsilon, delta = basic
        per = epsilon / self.count
        return self.count * per * per / 2, delta

    def text(self) -> str:
        """The event as the ledger stores it, exactly: ``pure(epsilon=1/10)``."""
        parts = [f"{name}={_number(getattr(self, name))}" for name in KINDS[self.kind]]
        if self.count != 1:
            parts.append(f"count={self.count}")
        return f"{self.kind}({', '.join(parts)})"


def _number(value: Fraction | int) -> str:
    if isinstance(value, int) or value.denominator == 1:
        return str(int(value))
    return f"{value.numerator}/{value.denominator}"


def events_text(events: Iterable[Event]) -> str:
    """Events as the ledger stores them: each :meth:`Event.text`, joined by ``"; "``."""
    return "; ".join(event.text() for event in events)


_EVENT = re.compile(r"([a-z_]+)\(([^()]*)\)")
_PARAM = re.compile(r"([a-z0-9_]+)=(0|[1-9][0-9]*)(?:/([1-9][0-9]*))?")


def parse_events(text: str) -> tuple[Event, ...]:
    """The events :func:`events_text` wrote (ValueError for anything else)."""
    if not text:
        return ()
    events = []
    for part in text.split("; "):
        match = _EVENT.fullmatch(part)
        if match is None or match[1] not in KINDS:
            raise ValueError(f"not an event: {part!r}")
        fields: dict[str, Fraction | int] = {}
        for item in match[2].split(", "):
            found = _PARAM.fullmatch(item)
            if found is None:
                raise ValueError(f"not an event's parameter: {item!r}")
            name, value = found[1], Fraction(int(found[2]), int(found[3] or 1))
            if name not in (*KINDS[match[1]], "count") or name in fields:
                raise ValueError(f"an event {match[1]} has no parameter {name!r} (or twice)")
            if name in _INTEGERS:
                if value.denominator != 1:
                    raise ValueError(f"an event's {name} is an integer, got {item!r}")
                fields[name] = int(value)
            else:
                fields[name] = value
        if set(fields) - {"count"} != set(KINDS[match[1]]):
            raise ValueError(f"the event {part!r} lacks a parameter")
        events.append(Event(match[1], **fields))  # type: ignore[arg-type]
    return tuple(events)


def default_events(
    epsilon: Fraction | None, rho: Fraction | None, delta: Fraction = Fraction(0)
) -> tuple[Event, ...]:
    """What a release charged ``epsilon`` (or only ``rho``) and ``delta`` is known to satisfy.

    An ε-DP release (with its δ, (ε, δ)-DP): ``pure(ε)`` or ``approx(ε, δ)``;
    a release with a ρ and no ε: ``zcdp(ρ, δ)``.  None for a release that
    cost nothing (the public row count).
    """
    if epsilon is not None:
        if delta:
            return (Event("approx", epsilon=epsilon, delta=delta),)
        return (Event("pure", epsilon=epsilon),) if epsilon else ()
    if rho or delta:
        return (Event("zcdp", rho=rho or Fraction(0), delta=delta),)
    return ()


def basic_epsilon(events: Iterable[Event]) -> tuple[Fraction, Fraction] | None:
    """``(Σε, Σδ)`` of events under basic composition, exact; None if one is ρ-only."""
    epsilon = delta = Fraction(0)
    for event in events:
        basic = event.basic
        if basic is None:
            return None
        epsilon += basic[0]
        delta += basic[1]
    return epsilon, delta
