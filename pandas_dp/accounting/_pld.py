"""Privacy loss distributions of ledger events, composed by Google's ``dp_accounting``.

The one module that uses ``dp_accounting`` (``pip install "pandas-dp[pld]"``),
and it imports it only when a budget composed by PLD first composes its
releases (:func:`library`; :func:`available` only looks for it): ``import
pandas_dp`` never does.  Nothing here computes a privacy loss distribution by
hand: each event of :mod:`pandas_dp.accounting.events` becomes
one of the library's pessimistic PLDs (Doroshenko, Ghazi, Kamath, Kumar &
Manurangsi, "Connect the Dots", PETS 2022: every loss rounded *up* to the grid
of :data:`INTERVAL`, truncated tails counted as infinite loss), and the
library composes them (Koskela et al.; Gopi, Lee & Wutschitz, NeurIPS 2021).
So the δ it reports at an ε, and the ε at a δ, are never below the true ones
but for the library's floating-point arithmetic, which :data:`MARGIN` covers:
a δ is reported :data:`MARGIN` (relative) above the library's, an ε is
computed at a δ that much below the one asked.  Every float handed to the
library is rounded the pessimistic way: less noise, larger ε and δ.

==========================  ====================================================
event                       the library's PLD
==========================  ====================================================
``discrete_laplace``        ``from_discrete_laplace_mechanism(1/scale, Δ)``; an
                            L1-bounded vector moves like one coordinate by Δ
                            (the library's DiscreteLaplaceDpEvent documents
                            that semantics).  Above :data:`EXACT_SPAN` grid
                            steps of Δ (a real-valued statistic on its fine
                            grid) the library would enumerate every step:
                            the release is then accounted as ``Δ/scale``-DP
                            (``pure``), which it is.
``discrete_gaussian``       ``from_discrete_gaussian_mechanism(σ, s)`` composed
                            over the ``count`` coordinates a person moves by at
                            most s each.  Above :data:`EXACT_SIGMA` (a
                            real-valued statistic's grid), as ``zcdp``.
``pure``                    ``from_privacy_parameters(ε, 0)``: randomized
                            response, the tight pessimistic PLD of every ε-DP
                            mechanism (Kairouz, Oh & Viswanath 2015)
``approx``                  ``from_privacy_parameters(ε, δ)``
``zcdp``                    ``from_privacy_parameters(ε', δ + δ')``, ε' the
                            Canonne–Kamath–Steinke conversion of ρ at δ' (a
                            ρ-zCDP mechanism is (ε', δ')-DP): δ' is
                            :data:`ZCDP_SHARE` of the budget's δ
==========================  ====================================================

An event whose runs together are ε-DP only for an ε above :data:`LARGE` (a
release at a huge ε, or many at a large one) is not handed to the library: its
(ε, δ) is added to the library's figure for the others, by basic composition.
And every figure is at most that of basic composition (each event's ε and δ
added up, :func:`_basic`), which is valid too: a budget composed by PLD accepts
whatever one that adds ε and δ up accepts (a release of the budget's whole (ε,
δ), say, which the library's rounding and :data:`MARGIN` would put a hair above
it).
"""

from __future__ import annotations

import dataclasses
import functools
import importlib
import importlib.util
import math
from collections import Counter
from collections.abc import Sequence
from fractions import Fraction
from types import ModuleType
from typing import Any, Final

from ..core import zcdp
from .events import Event

__all__ = [
    "EXACT_SIGMA",
    "EXACT_SPAN",
    "INTERVAL",
    "LARGE",
    "MARGIN",
    "ZCDP_SHARE",
    "available",
    "delta_at",
    "epsilon_at",
    "float_down",
    "float_up",
    "library",
]

#: The width of the PLD's grid of privacy losses (the library's default).
INTERVAL: Final = 1e-4
#: The largest discrete Laplace sensitivity whose PLD is computed exactly (the library
#: enumerates each step of it).
EXACT_SPAN: Final = 1 << 16
#: The largest discrete Gaussian σ whose PLD is computed exactly (the library builds
#: arrays of about 23σ).
EXACT_SIGMA: Final = 1 << 13
#: The share of the budget's δ at which a ``zcdp`` event's ρ is converted to (ε', δ').
ZCDP_SHARE: Final = Fraction(1, 100)
#: The relative margin on every δ, covering the floating-point error of the library's
#: composition (about 1e-16 of the probabilities it adds up, far below 1e-6 of a δ).
MARGIN: Final = Fraction(1, 10**6)
#: The largest ε of one run of an event (its basic guarantee) that the library composes:
#: an event above it (a release at a huge ε, as tests of exactness make) is added to the
#: library's composition of the others by basic composition (its ε and δ added up), a valid
#: bound that PLD could not better by anything of use there.  The library's pessimistic PLD
#: of ε holds about 2ε/INTERVAL losses, and overflows past ε ≈ 709.
LARGE: Final = 64
#: What the library is imported as.
NAME: Final = "dp_accounting"


@functools.cache
def library() -> ModuleType | None:
    """The library's PLD module, imported at the first call; None when it is not installed."""
    try:
        return importlib.import_module(f"{NAME}.pld.privacy_loss_distribution")
    except ImportError:
        return None


def available() -> bool:
    """Whether ``dp_accounting`` is installed: looked for, not imported (at ``import pandas_dp``).

    The library is imported at the first composition (:func:`library`); an
    installation found here that then fails to import raises ImportError there,
    naming the extra.
    """
    try:
        return importlib.util.find_spec(NAME) is not None
    except (ImportError, ValueError):  # a parent package that fails, or sys.modules[NAME] = None
        return False


def float_up(value: Fraction) -> float:
    """The smallest float at least ``value``."""
    out = float(value)
    return math.nextafter(out, math.inf) if Fraction(out) < value else out


def float_down(value: Fraction) -> float:
    """The largest float at most ``value``."""
    out = float(value)
    return math.nextafter(out, -math.inf) if Fraction(out) > value else out


def _sigma_down(sigma2: Fraction) -> float:
    """The largest float whose square is at most ``sigma2``: less noise, more loss."""
    out = math.sqrt(float(sigma2))
    while Fraction(out) ** 2 > sigma2:
        out = math.nextafter(out, 0.0)
    return out


def _module() -> Any:
    found = library()
    if found is None:
        raise ImportError(
            "A budget composed by privacy loss distributions needs Google's dp_accounting: "
            'pip install "pandas-dp[pld]" (or pip install dp-accounting).'
        )
    return found


def _approx(epsilon: Fraction | float, delta: Fraction) -> Any:
    """The library's pessimistic PLD of an (ε, δ)-DP mechanism (randomized response)."""
    pld = _module()
    up = float_up(epsilon) if isinstance(epsilon, Fraction) else epsilon
    parameters = pld.common.DifferentialPrivacyParameters(up, min(float_up(delta), 1.0))
    return pld.from_privacy_parameters(parameters, value_discretization_interval=INTERVAL)


def _converted(rho: Fraction, delta: Fraction, budget_delta: Fraction) -> tuple[float, Fraction]:
    """A ρ-zCDP (and δ-approximate) mechanism's (ε', δ + δ'), at δ' = a share of the budget's."""
    share = budget_delta * ZCDP_SHARE
    if not share:
        raise ValueError("a Gaussian release composed by PLD needs a budget with a delta.")
    return zcdp.epsilon_at(rho, share), delta + share


def _zcdp(rho: Fraction, delta: Fraction, budget_delta: Fraction) -> Any:
    """A ρ-zCDP (and δ-approximate) mechanism as (ε', δ + δ')-DP at δ' = a share of the budget's."""
    return _approx(*_converted(rho, delta, budget_delta))


@functools.lru_cache(maxsize=4096)
def _bound(event: Event, budget_delta: Fraction) -> tuple[Fraction, Fraction]:
    """The (ε, δ) one run of ``event`` (``count`` 1) is DP with: its basic guarantee, exact.

    A Gaussian or ρ-zCDP event's ε is its ρ converted as :func:`_zcdp` does.
    """
    one = dataclasses.replace(event, count=1)
    if one.basic is not None:
        return one.basic
    epsilon, delta = _converted(*one.zcdp, budget_delta)
    return Fraction(epsilon), delta


def _basic(events: Sequence[Event], budget_delta: Fraction) -> tuple[Fraction, Fraction]:
    """(Σε, Σδ) of ``events`` by basic composition of each run's :func:`_bound`, exact."""
    epsilon = delta = Fraction(0)
    for event in events:
        one_epsilon, one_delta = _bound(event, budget_delta)
        epsilon += event.count * one_epsilon
        delta += event.count * one_delta
    return epsilon, delta


def _split(
    events: Sequence[Event], budget_delta: Fraction
) -> tuple[list[Event], Fraction, Fraction]:
    """The events the library composes, and the (Σε, Σδ) of those above :data:`LARGE`."""
    composed: list[Event] = []
    epsilon = delta = Fraction(0)
    for event in events:
        one_epsilon, one_delta = _bound(event, budget_delta)
        if event.count * one_epsilon > LARGE:  # the run's total: the library's grid holds less
            epsilon += event.count * one_epsilon
            delta += event.count * one_delta
        else:
            composed.append(event)
    return composed, epsilon, delta


@functools.lru_cache(maxsize=4096)
def _event_pld(event: Event, budget_delta: Fraction) -> Any:
    """The library's pessimistic PLD of one event (``count`` times)."""
    pld = _module()
    one = dataclasses.replace(event, count=1)
    if event.kind == "discrete_laplace":
        if event.sensitivity > EXACT_SPAN:
            single = _approx(event.sensitivity / event.scale, Fraction(0))
        else:
            single = pld.from_discrete_laplace_mechanism(
                parameter=float_up(1 / event.scale),
                sensitivity=event.sensitivity,
                value_discretization_interval=INTERVAL,
            )
    elif event.kind == "discrete_gaussian":
        sigma = _sigma_down(event.sigma2)
        if sigma > EXACT_SIGMA or not event.sensitivity:
            single = _zcdp(one.zcdp[0], Fraction(0), budget_delta)
        else:
            single = pld.from_discrete_gaussian_mechanism(
                sigma=sigma,
                sensitivity=event.sensitivity,
                value_discretization_interval=INTERVAL,
            )
    elif event.kind in ("pure", "approx"):
        single = _approx(event.epsilon, event.delta)
    else:
        single = _zcdp(event.rho, event.delta, budget_delta)
    return single if event.count == 1 else single.self_compose(event.count)


@functools.lru_cache(maxsize=256)
def _composed(events: tuple[tuple[Event, int], ...], budget_delta: Fraction) -> Any:
    """The composition of ``events`` (each with its multiplicity), or None for none."""
    total = None
    for event, times in events:
        single = _event_pld(event, budget_delta)
        part = single if times == 1 else single.self_compose(times)
        total = part if total is None else total.compose(part)
    return total


def _key(events: Sequence[Event]) -> tuple[tuple[Event, int], ...]:
    """The events as a multiset, in one order: composition does not depend on the order."""
    return tuple(sorted(Counter(events).items()))


def delta_at(events: Sequence[Event], epsilon: Fraction, budget_delta: Fraction) -> Fraction:
    """An upper bound on the δ at ``epsilon`` of ``events`` composed (0 for none).

    The library's figure, :data:`MARGIN` above it, at ``epsilon`` less the ε of
    the events above :data:`LARGE`, plus their δ (basic composition); or,
    where smaller, the δ of all of them by basic composition (:func:`_basic`):
    what fits when ε and δ are added up fits here too.
    """
    basic_epsilon, basic_delta = _basic(events, budget_delta)
    basic = basic_delta if basic_epsilon <= epsilon else Fraction(1)
    small, large_epsilon, large_delta = _split(events, budget_delta)
    if large_epsilon > epsilon:
        return basic
    composed = _composed(_key(small), budget_delta)
    found = Fraction(0)
    if composed is not None:
        at = float_down(epsilon - large_epsilon)
        found = max(Fraction(float(composed.get_delta_for_epsilon(at))), Fraction(0)) * (1 + MARGIN)
    return min(found + large_delta, basic, Fraction(1))


def epsilon_at(events: Sequence[Event], delta: Fraction, budget_delta: Fraction) -> float:
    """An upper bound on the ε at ``delta`` of ``events`` composed (0 for none; inf if none).

    The library's ε at a δ :data:`MARGIN` below ``delta`` less the δ of the
    events above :data:`LARGE`, plus their ε (basic composition), rounded up;
    or, where smaller, the ε of all of them by basic composition
    (:func:`_basic`), if their δ added up is at most ``delta``.
    """
    basic_epsilon, basic_delta = _basic(events, budget_delta)
    basic = float_up(basic_epsilon) if basic_delta <= delta else math.inf
    small, large_epsilon, large_delta = _split(events, budget_delta)
    if large_delta >= delta:
        return basic
    composed = _composed(_key(small), budget_delta)
    found = 0.0
    if composed is not None:
        at = float_down((delta - large_delta) * (1 - MARGIN))
        found = float(composed.get_epsilon_for_delta(at))
    if not math.isfinite(found):
        return basic
    total = found + float_up(large_epsilon)
    return min(math.nextafter(total, math.inf) if found or large_epsilon else total, basic)
