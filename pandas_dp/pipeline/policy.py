"""Keys chosen privately when a person holds many: the policy selection as a step of a call.

A grouped release without ``keys=`` on a frame with a privacy unit, whose
persons may keep several keys (``max_groups`` above 1, or ``"auto"``), runs
in two parts under one hold (:func:`pandas_dp.pipeline.recipes.answer`):

1. :func:`select_by_policy`: :data:`POLICY_SHARE` of the call's ε (or ρ) and
   all of its δ on the rounds of :mod:`pandas_dp.mechanisms.policy`, which
   steer each person's weight to the keys likely to pass, over the distinct
   (person, key) pairs of the data (:meth:`~pandas_dp.pipeline.run.Frame.pairs`);
   one ledger entry, ``select_keys``;
2. the release itself over the keys chosen, public once released
   (:class:`~pandas_dp.mechanisms.key_selection.ChosenKeys`), with the rest:
   a recipe like any other, so ``max_groups="auto"`` chooses the bound from
   the keys per person among the chosen keys, and ``cut=True`` measures what
   it cut there.

Against a selection whose persons keep ``max_groups`` random keys, the
statistic's keys are those the rounds found, and its counts those of every
person holding them (up to ``max_groups`` of the chosen keys each), not of
the persons who happened to keep them.
"""

from __future__ import annotations

import contextlib
from collections.abc import Hashable
from fractions import Fraction

import numpy as np

from ..accounting.ledger import LedgerEntry
from ..core.validation import check_readable
from ..mechanisms.key_selection import ChosenKeys, KeySelection, rebuilt
from ..mechanisms.policy import policy_plan, policy_select
from .run import Asked, Frame, canonical_order, check_selection_budget

__all__ = ["POLICY_SHARE", "select_by_policy", "uses_policy"]

#: The share of the call's ε (or ρ) the policy selection takes; the release gets the rest.
POLICY_SHARE = Fraction(3, 4)


def uses_policy(unit: Hashable | None, max_groups: object) -> bool:
    """Whether a keyless release chooses its keys by policy: a unit, several keys per person."""
    if unit is None:
        return False
    if isinstance(max_groups, str):
        return max_groups == "auto"
    return isinstance(max_groups, int) and not isinstance(max_groups, bool) and max_groups > 1


def select_by_policy(
    frame: Frame, group: KeySelection, loss: tuple[str, Fraction], asked: Asked | None
) -> ChosenKeys:
    """Choose ``group``'s keys by the policy rounds, spending ``loss`` and ``group.delta``.

    Validate (columns, dtypes, the budget's δ and adjacency) → plan → reserve
    (one ledger entry) → the pairs of the data → commit → the rounds (noise).
    Returns the chosen keys as public keys, each in the one form of its
    value, sorted when ``group.sort`` (else in the order of release).
    """
    schema = frame.schema()
    check_readable(schema, list(group.by))
    group = group.typed(schema)  # the dtypes its keys leave in, from the schema alone
    spender = frame.binding()
    budget, unit = spender.budget, spender.unit
    assert unit is not None
    check_selection_budget(budget)
    accountant, amount = loss
    epsilon, rho = (amount, None) if accountant == "epsilon" else (None, amount)
    plan = policy_plan(epsilon=epsilon, rho=rho, delta=group.delta)
    entry = LedgerEntry(
        "select_keys",
        epsilon,
        rho=rho,
        delta=group.delta,
        mechanism=plan.describe(),
        adjacency=budget.adjacency,
        privacy_unit=str(unit),
    )
    if asked is not None:
        entry = entry.asked(*asked)
    pairs = frame.pairs(group, unit)  # prepared (dtypes checked) before the reservation
    with budget.reserve(entry):  # committed before any noise; returned if it raised
        observed, keys, persons, _ = pairs(budget.source)
        observed = group.released(observed)  # each key in the one form of its value
    # The noise goes to the keys in the order of a hash of their values (as release_selected).
    canonical = canonical_order(observed)
    rank = np.empty_like(canonical)
    rank[canonical] = np.arange(canonical.size)
    chosen = canonical[policy_select(plan, rank[keys], persons, len(observed), budget.source)]
    picked = rebuilt(observed[chosen])
    if group.sort:
        with contextlib.suppress(TypeError):  # keys that do not compare: the order of release
            picked = picked.sort_values(na_position="last")
    return ChosenKeys(group.by, picked, group)
