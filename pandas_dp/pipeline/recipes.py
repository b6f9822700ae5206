"""Composite releases: several releases under one hold, each step able to read earlier ones.

A surface hands every release down as a :class:`Request` (the kind to build,
the call's arguments); :func:`answer` plans it as a :class:`Recipe`, data
the pipeline runs: one step when the call is one release, more when it asks
for ``clip="auto"``, ``max_rows="auto"`` or ``cut=True``.  The whole loss is
held first (:meth:`~pandas_dp.accounting.budget.PrivacyBudget.hold`; refused,
nothing spent, if it does not fit), then each step is one release of
:func:`~pandas_dp.pipeline.run.run` with its share (one ledger entry each,
adding up to exactly the call's ε or ρ), built when it runs from the answers
of the steps before it.  Nothing here calls back up into a surface.

=====================  ==========================  =================================
step                   share of ε                  release
=====================  ==========================  =================================
``max_rows="auto"``    :data:`AUTO_ROWS_SHARE`     a total (count, sum): the cap that
                                                   balances truncation against noise
                                                   (:class:`~pandas_dp.kinds.truncation.RowsCap`);
                                                   else ``rows_per_unit(0.9)`` on
                                                   :data:`AUTO_ROWS`
``clip="auto"``        :data:`AUTO_CHECK_SHARE`    a count of the column's values (the check)
                       :data:`AUTO_SHARE`          :class:`~pandas_dp.kinds.clip_bounds.ClipBounds`
the statistic          the rest                    clipped to the bounds
``cut=True``           :data:`CUT_SHARE`           the share of values outside the clip
                       :data:`CUT_SHARE`           with a privacy unit: the share of
                                                   persons ``max_rows`` cut
=====================  ==========================  =================================

Several columns split a step's share equally.  The check: AboveThreshold
stops where about its threshold ``T`` of values lie beyond a bound, and each
of its steps below the data (hundreds, on a ladder of ratio 2**(1/8)) may
stop it there by noise unless the values outnumber ``T`` by several noise
scales of a step: with fewer than ``T`` + :data:`AUTO_MIN_SCALES` scales the
bounds may land inside the data (at ε = 0.1 on 1,000 incomes, near the
median: the mean far off).  A private count comes first; below that many
values, the call stops with a ValueError saying what to do (more ε, or
``clip=``), having spent only the count.  :func:`persons_steps` checks the
persons of ``max_rows="auto"`` and ``rows_per_unit`` likewise.  The chosen
bounds, ``max_rows`` and the cut are returned with the answer where it has
room (:func:`with_bounds`, :func:`with_rows`, :func:`with_cut`); the ledger
records each step in every case.

Without public keys (a :class:`~pandas_dp.mechanisms.key_selection.KeySelection`),
the statistic chooses its keys; the bounds of ``clip="auto"`` are then found
from all the rows at once (ungrouped, each person's rows bounded by
``max_rows·max_groups``: the most a person keeps in the grouped release), and
``cut=True`` measures the cut in the keys the statistic chose, public once
released.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import numbers
from collections.abc import Callable, Hashable, Mapping, Sized
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import pandas as pd

from ..core.errors import warn_poor
from ..core.validation import check_loss, check_readable, loss_fields, selection_loss
from ..kinds.base import Kind, Neighbours
from ..kinds.clip_bounds import ClipBounds, ClippedShare, plan_search
from ..kinds.count import Count
from ..kinds.describe import grid_of
from ..kinds.quantile import Quantile, persons_needed
from ..kinds.truncation import RowsCap
from ..mechanisms.key_selection import ChosenKeys, KeySelection
from ..mechanisms.keys import Grouping
from .policy import POLICY_SHARE, select_by_policy, uses_policy
from .run import NO_BOUNDS, Asked, ContributionBounds, Frame, check_unit, run

__all__ = [
    "AUTO_CHECK_SHARE",
    "AUTO_GROUPS",
    "AUTO_GROUPS_SHARE",
    "AUTO_MIN_SCALES",
    "AUTO_ROWS",
    "AUTO_ROWS_SHARE",
    "AUTO_SHARE",
    "CUT_SHARE",
    "TRUNCATED_KEYS",
    "Loss",
    "Recipe",
    "Request",
    "Step",
    "answer",
    "auto_minimum",
    "cook",
    "every_numeric",
    "is_auto",
    "parameters_text",
    "persons_steps",
    "recipe",
    "rows_per_unit",
    "with_bounds",
    "with_cut",
    "with_rows",
]

#: The share of a ``clip="auto"`` call's epsilon (or rho) that finds the bounds.
AUTO_SHARE = Fraction(1, 4)
#: The share of a ``clip="auto"`` call's epsilon (or rho) that counts the column's values first.
AUTO_CHECK_SHARE = Fraction(1, 20)
#: ``clip="auto"`` needs the search's threshold and this many noise scales of a step in values
#: (counted privately): then a step below the data stops the search with chance below 1e-4.
AUTO_MIN_SCALES = 10
#: The share of a ``max_rows="auto"`` call's epsilon (or rho) that chooses ``max_rows``
#: (``rows_per_unit`` at q = 0.9 on :data:`AUTO_ROWS`).
AUTO_ROWS_SHARE = Fraction(1, 4)
#: The public grid ``max_rows="auto"`` chooses from: 1 to 32, then powers of two to 2**20.
AUTO_ROWS = tuple(range(1, 33)) + tuple(2**k for k in range(6, 21))
#: The share of a ``cut=True`` call's epsilon each share of the cut costs.
CUT_SHARE = Fraction(1, 10)
#: The share of a ``max_groups="auto"`` call's epsilon (or rho) that chooses ``max_groups``
#: (a private 0.9-quantile of the keys per person on :data:`AUTO_GROUPS`).
AUTO_GROUPS_SHARE = Fraction(1, 4)
#: The public grid ``max_groups="auto"`` chooses from: that of ``max_rows="auto"``.
AUTO_GROUPS = AUTO_ROWS
#: How ``cut=True`` names the share of persons with more keys than ``max_groups``.
TRUNCATED_KEYS = "truncated_keys_share"

#: A privacy loss: ``("epsilon", ε)`` or ``("rho", ρ)``, exact.
Loss = tuple[str, Fraction]
Clips = dict[Hashable, tuple[float, float]]
#: The answers of a recipe's steps so far, by step name.
Answers = dict[str, Any]
#: The budget's ``(max_rows, max_groups)`` when the frame has a privacy unit, else None.
Defaults = tuple[int | None, int | None] | None
#: A step's grouping: the recipe's (``"same"``), or built from the answers before it.
GroupOf = str | Callable[[Answers], Grouping | None]
#: A step's contribution bounds, built from the answers before it.
BoundsOf = Callable[[Answers], ContributionBounds]


def is_auto(value: object) -> bool:
    """Whether ``value`` (a ``clip`` or ``max_rows``) is the string ``"auto"``."""
    return isinstance(value, str) and value == "auto"


# ------------------------------------------------------------------ requests


@dataclass(frozen=True)
class Request:
    """One call of a release, as a surface hands it down: what to build, and the call's arguments.

    ``build(args, loss)`` is the kind the call releases, from its arguments
    (``clip`` already a pair or a mapping of pairs) and its share of the
    loss.  ``args`` holds every argument of the call by name; the pipeline
    reads ``epsilon``, ``rho``, ``clip``, ``cut``, ``ci``, ``max_rows``,
    ``max_groups`` and ``delta`` from it when present.  ``columns``: the
    columns a ``clip`` applies to, in order; ``table``: the answer is a
    table of columns (``describe``), where ``cut=True`` takes several;
    ``clipped``: ``clip`` is the statistic's (``"auto"`` and ``cut=True``
    apply to it), not, say, the clip of argmax's ``value``; ``gridded``: the
    release picks from a grid ``candidates`` (without one, its bounds make it).
    ``name``: the release as the caller called it (``value_counts``), for the ledger.
    """

    build: Callable[[Mapping[str, Any], Loss], Kind[Any, Any]]
    args: Mapping[str, Any]
    columns: tuple[Hashable, ...] = ()
    table: bool = False
    clipped: bool = False
    gridded: bool = False
    name: str = ""

    def get(self, name: str, default: Any = None) -> Any:
        """The argument ``name`` as the call gave it (``default`` if the release has none)."""
        return self.args.get(name, default)


@dataclass(frozen=True)
class Step:
    """One release of a recipe, built when it runs from the answers before it.

    ``on="units"``: over the frame of rows per person (column ``rows``) on
    the same budget; ``group``: the recipe's grouping (``"same"``), none, or
    built from the earlier answers; ``bounds`` likewise; ``check`` reads the
    answers once the step has run and may stop the recipe (a ValueError: what
    was spent stays spent and recorded).
    """

    name: str
    kind: Callable[[Answers], Kind[Any, Any]]
    on: str = "frame"
    group: GroupOf = "same"
    bounds: BoundsOf = lambda answers: NO_BOUNDS
    check: Callable[[Answers], None] | None = None


@dataclass(frozen=True)
class Recipe:
    """Steps run in order under one hold of ``loss``, then ``shape`` of their answers.

    ``statistic``: when other steps come before it, the statistic the call
    releases as built to check its arguments, so that what its release would
    refuse from the dtypes alone is refused before the first step spends.
    """

    loss: Loss
    steps: tuple[Step, ...]
    shape: Callable[[Answers], Any] = field(default=lambda answers: answers["answer"])
    statistic: Kind[Any, Any] | None = None
    #: Why the answer is poor, read from the steps' answers (public, or released): each
    #: reason is given as a :class:`~pandas_dp.core.errors.PoorAnswerWarning`.
    poor: Callable[[Answers], list[str]] = field(default=lambda answers: [])


def cook(frame: Frame, group: Grouping | None, recipe: Recipe, asked: Asked | None = None) -> Any:
    """Run ``recipe`` over ``frame`` (grouped by ``group``): one hold, each step a release.

    A recipe of one step runs without a hold (its release reserves its own
    loss); otherwise the whole loss is held first, unless this thread
    already holds a share of the budget (``df.dp.reserve``).  ``asked``: what
    the caller asked, recorded in the ledger entry of every step.
    """
    answers: Answers = {}
    if len(recipe.steps) == 1:
        _step(frame, group, recipe.steps[0], answers, asked)
    else:
        budget = frame.binding().budget
        accountant, amount = recipe.loss
        hold = contextlib.nullcontext() if budget.holding else budget.hold(amount, accountant)
        with hold:
            for step in recipe.steps:
                _step(frame, group, step, answers, asked)
    shaped = recipe.shape(answers)
    for reason in recipe.poor(answers):  # after every step: each was paid for and is shown
        warn_poor(reason)
    return shaped


def _step(
    frame: Frame, group: Grouping | None, step: Step, answers: Answers, asked: Asked | None
) -> None:
    over, grouping = frame, group
    if step.on == "units":  # one row per person: never grouped
        over, grouping = frame.units(_WHY[step.name.partition(" ")[0]]), None
    elif step.on == "keys":  # one row per person holding a key of the call's grouping
        assert group is not None
        over, grouping = frame.keys_per_unit(group, _WHY[step.name.partition(" ")[0]]), None
    elif not isinstance(step.group, str):
        grouping = step.group(answers)
    answers[step.name] = run(over, step.kind(answers), grouping, step.bounds(answers), asked)
    if step.check is not None:
        step.check(answers)


#: What a step over the frame of rows per person is for, as a refusal names it.
_WHY = {
    "max_rows": 'max_rows="auto"',
    "max_groups": 'max_groups="auto"',
    "truncated": "cut=True",
    "rows_per_unit": "rows_per_unit()",
    "persons": "rows_per_unit()",
}


# ------------------------------------------------------------------- recipes


def answer(frame: Frame, group: Grouping | None, request: Request) -> Any:
    """Release ``request`` on ``frame``: the surfaces' one way down into the pipeline."""

    def defaults() -> Defaults:
        binding = frame.binding()
        if binding.unit is None:
            return None
        return binding.bounds()

    request = every_numeric(frame, group, request)
    by = () if group is None else tuple(str(b) for b in group.by)
    asked = Asked(request.name, by, parameters_text(request.args)) if request.name else None
    if isinstance(group, KeySelection):
        unit = defaults()
        groups = request.get("max_groups")
        if groups is None and unit is not None:
            groups = unit[1]  # the budget's default
        if uses_policy(None if unit is None else "unit", groups):
            scoped = _scoped(request, group)
            assert isinstance(scoped, KeySelection)
            return _by_policy(frame, scoped, request, defaults, asked)
    cooked = recipe(request, group, defaults)
    if cooked.statistic is not None:  # several steps: what the last would refuse, refused first
        schema = frame.schema().iloc[:0]
        if type(group) is Grouping:
            group.check(schema)  # keys of the wrong type or dtype
        check_readable(schema, cooked.statistic.columns())
        cooked.statistic.read(schema, 0)
    return cook(frame, _scoped(request, group), cooked, asked)


def _by_policy(
    frame: Frame,
    group: KeySelection,
    request: Request,
    defaults: Callable[[], Defaults],
    asked: Asked | None,
) -> Any:
    """A keyless release whose persons keep several keys: the policy selection, then the rest.

    :data:`~pandas_dp.pipeline.policy.POLICY_SHARE` of the loss (and all of
    δ) chooses the keys (:func:`~pandas_dp.pipeline.policy.select_by_policy`);
    the release over them, public once chosen, is the recipe of the rest,
    as with public keys.  Everything the release would refuse from the
    public arguments and the dtypes is refused before the selection spends;
    the whole loss is held first.
    """
    accountant, total = check_loss(request.get("epsilon"), request.get("rho"))
    rest = {"epsilon": None, "rho": None, accountant: total * (1 - POLICY_SHARE), "delta": None}
    later = dataclasses.replace(request, args={**request.args, **rest})
    placeholder = ChosenKeys(group.by, pd.Index([]), group)
    cooked = recipe(later, placeholder, defaults)  # its arguments checked, data-free
    statistic = cooked.statistic or cooked.steps[0].kind({})
    schema = frame.schema().iloc[:0]
    check_readable(schema, [*group.by, *statistic.columns()])
    statistic.read(schema, 0)
    check_unit(schema, frame.binding().unit, statistic, group)
    budget = frame.binding().budget
    hold = contextlib.nullcontext() if budget.holding else budget.hold(total, accountant)
    with hold:
        chosen = select_by_policy(frame, group, (accountant, total * POLICY_SHARE), asked)
        answered = cook(frame, chosen, recipe(later, chosen, defaults), asked)
    if not len(chosen.keys):
        warn_poor(_NO_KEY)
    return answered


#: Arguments whose values are column labels (the ledger records them as columns).
_COLUMN_ARGS = frozenset({"column", "columns", "value", "subset", "index", "by"})
#: Arguments the ledger has a column of its own for.
_OWN_FIELDS = frozenset({"epsilon", "rho", "delta", "keys"})
#: Public lists recorded by their length only (never their items).
_COUNTED = frozenset({"candidates", "bins"})


def parameters_text(args: Mapping[str, Any]) -> str:
    """A call's public parameters as the ledger records them: ``"q=0.9, candidates=101"``.

    Scalars (numbers, booleans, ``"auto"``) by value, lists of candidates or
    bins by their length; never a column (recorded as columns), the loss (its
    own fields), keys (their number is ``keys``) or a mapping of clip bounds
    (the entry's ``clip``).  Arguments left at None or False are left out.
    """
    parts = []
    for name, value in args.items():
        if value is None or value is False or name in _COLUMN_ARGS or name in _OWN_FIELDS:
            continue
        if name in _COUNTED:
            if isinstance(value, pd.CategoricalDtype):
                value = value.categories
            if isinstance(value, Sized):  # checked by the release before: a list, never data
                parts.append(f"{name}={len(value)}")
            continue
        if isinstance(value, numbers.Real) or is_auto(value):
            parts.append(f"{name}={value}")
    return ", ".join(parts)


def every_numeric(frame: Frame, group: Grouping | None, request: Request) -> Request:
    """A table release (``describe``) given no ``columns``: every numeric column of the frame.

    From the schema's dtypes only (numbers, not booleans), in the frame's
    order, without the grouping's columns or the privacy unit's.
    """
    if not request.table or request.get("columns", ()) is not None:
        return request
    skipped = set(() if group is None else group.by)
    unit = frame.binding().unit
    if unit is not None:
        skipped.add(unit)
    schema = frame.schema()
    found = [
        c
        for c, dtype in schema.dtypes.items()
        if c not in skipped
        and pd.api.types.is_numeric_dtype(dtype)
        and not pd.api.types.is_bool_dtype(dtype)
    ]
    if not found:
        raise ValueError(
            "describe() found no numeric column (numbers, not booleans, besides the keys and "
            "the privacy unit); name the columns: describe(['col', ...], epsilon=...)."
        )
    return dataclasses.replace(
        request, args={**request.args, "columns": found}, columns=tuple(found)
    )


def rows_per_unit(frame: Frame, q: object, candidates: object, loss: Loss) -> int:
    """A private ``q``-quantile of the rows per person of ``frame``: one of ``candidates``.

    After the check of :func:`persons_steps`, under one hold of ``loss``.
    """
    _rows_kind(q, candidates, loss)  # its arguments, checked before anything is spent
    steps = persons_steps("rows_per_unit", q, candidates, loss)
    asked = Asked("rows_per_unit", (), parameters_text({"q": q, "candidates": candidates}))
    cooked = Recipe(loss, tuple(steps), lambda answers: answers["rows_per_unit"])
    return int(cook(frame, None, cooked, asked))


def _rows_kind(q: object, candidates: object, loss: Loss) -> Kind[Any, Any]:
    epsilon, charged = selection_loss(*loss)
    return Quantile.of(epsilon, "rows", q, candidates, "rows_per_unit", charged)


#: The share of a ``rows_per_unit`` (or ``max_rows="auto"``) step that counts the persons first.
PERSONS_SHARE = Fraction(1, 20)


def persons_steps(name: str, q: object, candidates: object, loss: Loss) -> list[Step]:
    """``name``'s quantile of rows per person, after a private count of the persons (the check).

    :data:`PERSONS_SHARE` of ``loss`` counts the persons (one row each, on the
    frame of rows per person); with fewer than
    :func:`~pandas_dp.kinds.quantile.persons_needed` at the
    rest of ``loss``, the call stops with a ValueError naming the ``epsilon``
    (or ``rho``) that would suffice for the persons counted, having spent only
    the count; else the quantile runs with the rest.
    """
    accountant, total = loss
    rest = (accountant, total * (1 - PERSONS_SHARE))
    kind = _rows_kind(q, candidates, rest)
    assert isinstance(kind, Quantile)
    level, size = kind.q, kind.grid.size
    count = loss_fields(accountant, total * PERSONS_SHARE)

    def enough(answers: Answers) -> None:
        counted = max(float(answers[f"persons {name}"]), 1.0)
        needed = persons_needed(kind.epsilon, level, size)
        if counted >= math.ceil(needed):
            return  # else the ε for the whole call at which the persons counted suffice (∝ 1/ε)
        whole = float(kind.epsilon) * needed / counted / float(1 - PERSONS_SHARE)
        suffice = f"epsilon={whole:.2g}" if accountant == "epsilon" else f"rho={whole**2 / 2:.2g}"
        raise ValueError(
            f"{name}(q={float(level):g}) over {size} candidates at {accountant}="
            f"{float(total):g} would likely answer a candidate beyond the data: too few persons "
            f"for this {accountant} (a private count, in the ledger: the only spend of this "
            f"call). About {suffice} would suffice for them, or fewer candidates (e.g. "
            "range(1, 33))."
        )

    return [
        Step(
            f"persons {name}",
            _constant(Count(count["epsilon"], rho=count["rho"])),
            on="units",
            check=enough,
        ),
        Step(name, _constant(kind), on="units"),
    ]


def _cap_kind(share: Loss, statistic: Loss, totals: bool) -> Kind[Any, Any]:
    """The step of ``max_rows="auto"`` at ``share``, for a statistic at ``statistic``.

    A total (a count, a sum: :attr:`~pandas_dp.kinds.base.Kind.totals`) gets
    the cap that balances truncation against its noise
    (:class:`~pandas_dp.kinds.truncation.RowsCap`); anything else the 0.9
    quantile of rows per person on :data:`AUTO_ROWS` (a mean is shifted, not
    shrunk, by what a cap drops).
    """
    if not totals:
        return _rows_kind(0.9, AUTO_ROWS, share)
    epsilon, charged = selection_loss(*share)
    return RowsCap(epsilon, "rows", statistic, rho=charged)


def _groups_kind(loss: Loss) -> Kind[Any, Any]:
    """``max_groups="auto"``'s release: a 0.9-quantile of the keys per person."""
    epsilon, charged = selection_loss(*loss)
    return Quantile.of(epsilon, "keys", 0.9, AUTO_GROUPS, "keys_per_unit", charged)


def _scoped(request: Request, group: Grouping | None) -> Grouping | None:
    """The grouping a release runs over, after the scope's own arguments are checked.

    ``max_groups`` only on a grouped release; ``delta`` where the keys are
    chosen from the data (required there: the selection spends it), never
    with public keys.
    """
    delta, max_groups = request.get("delta"), request.get("max_groups")
    if group is None and max_groups is not None:
        raise TypeError(
            "`max_groups` bounds the keys of one person in a grouped release; this release "
            "has one answer. Drop it, or group: df.dp.groupby(by, keys=...)."
        )
    if isinstance(group, KeySelection):
        return group if delta is None and group.delta else group.at(delta)
    if delta is not None:
        raise TypeError(
            "`delta` goes with a groupby without keys= (the keys are then chosen from the "
            "data, which spends delta); with public keys, or without a groupby, drop it."
        )
    return group


def recipe(
    request: Request, group: Grouping | None, defaults: Callable[[], Defaults] = lambda: None
) -> Recipe:
    """The steps of ``request`` (data-free: built from the call's public arguments).

    ``defaults()``: the budget's ``(max_rows, max_groups)`` when the frame has
    a privacy unit, else None; asked only once the call's arguments are
    checked (it resolves the budget), and only if a step needs it.  Refused
    before anything is built or spent: ``max_groups`` on an ungrouped
    release, ``delta`` where the keys are public (or missing where they are
    chosen), ``cut=True`` with a mapping ``clip`` outside a table or with
    nothing to measure (no clip, no privacy unit); the statistic's own
    arguments are checked by building it once first.
    """
    accountant, total = check_loss(request.get("epsilon"), request.get("rho"))
    _scoped(request, group)
    clip: Any = request.get("clip") if request.clipped else None
    cut = bool(request.get("cut", False))
    cut_clip = cut and request.clipped
    max_rows, max_groups = request.get("max_rows"), request.get("max_groups")
    auto_clip, auto_rows, auto_groups = is_auto(clip), is_auto(max_rows), is_auto(max_groups)
    auto_clip = auto_clip or _finds_bounds(request)
    if cut_clip and not request.table and isinstance(clip, Mapping):
        raise TypeError(
            "`cut=True` shows the cut of one column beside its answer; with a mapping `clip`, "
            "release each column on its own: e.g. df.dp.mean('col', clip=(lower, upper), "
            "epsilon=..., cut=True)."
        )
    whole = (accountant, total)
    keyless = isinstance(group, KeySelection)
    if not (auto_clip or auto_rows or auto_groups or cut):
        given_bounds = ContributionBounds(max_rows, max_groups)
        kind = request.build(request.args, whole)
        answer = Step("answer", lambda _: kind, bounds=lambda _: given_bounds)
        return Recipe(whole, (answer,), poor=lambda answers: _poor(answers, keyless))
    columns = request.columns
    if auto_clip:
        given: Clips = {c: (0.0, 1.0) for c in columns}
    elif isinstance(clip, Mapping):
        given = dict(clip)
    else:
        given = dict.fromkeys(columns, clip)
    parts = [AUTO_ROWS_SHARE] * auto_rows + [AUTO_GROUPS_SHARE] * auto_groups
    parts += [AUTO_CHECK_SHARE, AUTO_SHARE] * auto_clip + [CUT_SHARE] * cut_clip
    statistic = request.build(_with_clips(request, given), _rest(whole, parts))  # checked
    unit = defaults() if cut or isinstance(group, KeySelection) else None
    people = cut and unit is not None
    if cut and not (cut_clip or people):
        raise TypeError(
            "`cut=True` measures what bounds cut: a clip's, or a privacy unit's `max_rows` and "
            "`max_groups`; this release has no clip and this frame's rows are persons. Drop it."
        )
    keys_cut = people and group is not None
    rest = _rest(whole, parts + [CUT_SHARE] * people + [CUT_SHARE] * keys_cut)
    if auto_rows:
        chooser = _cap_kind((accountant, total * AUTO_ROWS_SHARE), rest, statistic.totals)

    def rows(answers: Answers) -> Any:
        return int(answers["max_rows"]) if auto_rows else max_rows

    def groups(answers: Answers) -> Any:
        return int(answers["max_groups"]) if auto_groups else max_groups

    def bounds(answers: Answers) -> ContributionBounds:
        return ContributionBounds(rows(answers), groups(answers))

    def clips(answers: Answers) -> Clips:
        return {c: _pair(answers[f"bounds {c!r}"]) for c in columns} if auto_clip else given

    steps: list[Step] = []
    if auto_rows:
        if statistic.totals:  # the cap balancing truncation and noise (RowsCap)
            steps.append(Step("max_rows", _constant(chooser), on="units"))
        else:  # a 0.9-quantile of rows per person, after the check of the persons
            share_r = (accountant, total * AUTO_ROWS_SHARE)
            steps += persons_steps("max_rows", 0.9, AUTO_ROWS, share_r)
    if auto_groups:
        share_g = (accountant, total * AUTO_GROUPS_SHARE)
        steps.append(Step("max_groups", lambda _: _groups_kind(share_g), on="keys"))
    few = (accountant, 0)
    if auto_clip:
        steps += _auto_clips(columns, whole, _all_rows(rows, groups, unit, keyless))
        searched = selection_loss(accountant, total * AUTO_SHARE / len(columns))[0]
        few = (accountant, math.ceil(FEW_RATIO * _needed(searched)))
    steps.append(
        Step(
            "answer",
            lambda answers: request.build(_with_clips(request, clips(answers)), rest),
            bounds=bounds,
        )
    )
    if cut_clip:
        cut_epsilon, cut_rho = selection_loss(accountant, total * CUT_SHARE / len(columns))

        def share_of(column: Hashable) -> Callable[[Answers], Kind[Any, Any]]:
            def share(answers: Answers) -> Kind[Any, Any]:
                return ClippedShare(cut_epsilon, column, clips(answers)[column], rho=cut_rho)

            return share

        steps += [
            Step(f"cut {c!r}", share_of(c), group=_released_keys(group), bounds=bounds)
            for c in columns
        ]
    if people:
        assert unit is not None
        steps += _truncated(
            selection_loss(accountant, total * CUT_SHARE),
            lambda answers: unit[0] if rows(answers) is None else int(rows(answers)),
            (lambda answers: unit[1] if groups(answers) is None else int(groups(answers)))
            if keys_cut
            else None,
        )
    return Recipe(
        whole,
        tuple(steps),
        lambda answers: _shaped(
            answers,
            request,
            clips(answers) if is_auto(clip) else None,
            (auto_rows, auto_groups),
            (cut_clip, people, keys_cut),
        ),
        statistic,
        lambda answers: _poor(answers, keyless, columns if auto_clip else (), few),
    )


#: A share cut by a bound (values outside the clip, persons over ``max_rows`` or
#: ``max_groups``) from which an answer warns that it is poor.
POOR_SHARE = 0.05
#: ``clip="auto"`` warns below this many times the values it needs (it refuses below 1×):
#: there, whether it answers at all is decided by the noise of its count.
FEW_RATIO = Fraction(5, 4)

_NO_KEY = (
    "No key was chosen: without keys=, a key is shown only if enough persons hold it for "
    "this epsilon, delta and max_groups, and none held one often enough. The answer is "
    "empty; the column may not be. Give the call more epsilon (or delta), a smaller "
    "max_groups (or max_groups='auto'), or pass the public keys with keys=[...]."
)
_CUT = (
    "A large share was cut ({names} at {share:.0%} or more; each is in the answer): the "
    "answer leaves out what the bounds dropped, a bias its interval does not cover. {fixes}"
)
_FIXES = {
    "clipped_share": "Widen clip= (or use clip='auto').",
    "truncated_share": "Raise max_rows= (or use max_rows='auto').",
    TRUNCATED_KEYS: "Raise max_groups= (or use max_groups='auto').",
}
_FEW = (
    '`clip="auto"` found few values of {column!r} for its {accountant} (a private count, in '
    "the ledger: fewer than {few:,}, 5/4 of what it needs): its bounds may lie inside the data. "
    "Give the call more {accountant}, or pass clip=(lower, upper) from what you know."
)


def _poor(
    answers: Answers,
    keyless: bool,
    auto_columns: tuple[Hashable, ...] = (),
    few: tuple[str, int] = ("epsilon", 0),
) -> list[str]:
    """Why the answer of a recipe is poor, from its steps' answers (released values only).

    ``auto_columns``: the columns ``clip="auto"`` counted; ``few``: the call's
    accountant and how many values each count warns below (data-free).
    """
    reasons = []
    answer = answers["answer"]
    if keyless and isinstance(answer, pd.Series | pd.DataFrame) and not len(answer):
        reasons.append(_NO_KEY)
    cut = {"clipped_share": [v for k, v in answers.items() if k.startswith("cut ")]}
    cut["truncated_share"] = [answers[k] for k in ("truncated share",) if k in answers]
    cut[TRUNCATED_KEYS] = [answers[k] for k in ("truncated keys",) if k in answers]
    large = [
        name
        for name, shares in cut.items()
        if any(float(pd.Series(share, dtype="float64").max()) >= POOR_SHARE for share in shares)
    ]
    if large:
        fixes = " ".join(_FIXES[name] for name in large)
        reasons.append(_CUT.format(names=", ".join(large), share=POOR_SHARE, fixes=fixes))
    accountant, below = few
    for column in auto_columns:
        if float(pd.Series(answers[f"count {column!r}"]).sum()) < below:
            reasons.append(_FEW.format(column=column, accountant=accountant, few=below))
    return reasons


def _truncated(
    loss: tuple[Fraction, Fraction | None],
    rows: Callable[[Answers], Any],
    groups: Callable[[Answers], Any] | None,
) -> list[Step]:
    """``cut=True``'s shares of persons: over ``max_rows`` rows, and over ``max_groups`` keys.

    Each a :class:`ClippedShare` of the persons' rows (or keys) outside
    ``(0, bound)`` with the bound the release used, at ``loss`` (one
    :data:`CUT_SHARE` each).  ``groups`` None: an ungrouped release.
    """
    epsilon, rho = loss

    def truncated(answers: Answers) -> Kind[Any, Any]:
        bound = float(rows(answers))  # as released
        return ClippedShare(epsilon, "rows", (0.0, bound), alias="truncated_share", rho=rho)

    steps = [Step("truncated share", truncated, on="units", group=lambda _: None)]
    if groups is not None:
        count_groups = groups

        def truncated_keys(answers: Answers) -> Kind[Any, Any]:
            bound = float(count_groups(answers))
            return ClippedShare(epsilon, "keys", (0.0, bound), alias=TRUNCATED_KEYS, rho=rho)

        steps.append(Step("truncated keys", truncated_keys, on="keys", group=lambda _: None))
    return steps


def _rest(loss: Loss, shares: list[Fraction]) -> Loss:
    """What the statistic gets of ``loss`` after the other steps' ``shares`` of it."""
    accountant, total = loss
    return accountant, total - sum((total * share for share in shares), Fraction(0))


def _with_clips(request: Request, clips: Clips) -> Mapping[str, Any]:
    """The call's arguments with ``clip`` as these pairs: one pair, or the mapping of a table.

    A release on a grid given none (:func:`_finds_bounds`) gets the grid of its
    bounds as ``candidates`` (:func:`~pandas_dp.kinds.describe.grid_of`).
    """
    one = not request.table and not isinstance(request.get("clip"), Mapping)
    pairs: Any = next(iter(clips.values())) if one and len(clips) == 1 else clips
    if _finds_grid(request):
        return {**request.args, "clip": pairs, "candidates": grid_of(pairs)}
    return {**request.args, "clip": pairs}


def _finds_grid(request: Request) -> bool:
    """A release on a grid (a quantile's) given no ``candidates``: its bounds make one."""
    return request.gridded and not request.table and request.get("candidates") is None


def _finds_bounds(request: Request) -> bool:
    """Whether the release needs bounds found first although ``clip`` is not ``"auto"``.

    A release on a grid without ``candidates`` (``quantile``, ``median``: the
    grid spans the bounds), and a table (``describe``) without ``clip``.  The
    steps are ``clip="auto"``'s: a private count of the values, then the
    bounds (:func:`_auto_clips`), with the same shares of the call's loss.
    """
    return _finds_grid(request) or (request.table and request.get("clip") is None)


def _released_keys(group: Grouping | None) -> GroupOf:
    """The grouping of a step after the statistic: its keys, once released, if it chose them."""
    if not isinstance(group, KeySelection):
        return "same"

    def chosen(answers: Answers) -> Grouping:
        index = answers["answer"].index
        return Grouping(group.by, index.view())

    return chosen


def _all_rows(
    rows: Callable[[Answers], Any],
    groups: Callable[[Answers], Any],
    defaults: Defaults,
    keyless: bool,
) -> tuple[GroupOf, BoundsOf]:
    """Where ``clip="auto"``'s count and bounds run: with the statistic's keys, or all rows.

    With public keys, over every key's rows (pooled); without, ungrouped, each
    person bounded to ``max_rows·max_groups`` rows (what they keep at most in
    the grouped release).
    """
    if not keyless:
        return "same", lambda answers: ContributionBounds(rows(answers), groups(answers))

    def bounds(answers: Answers) -> ContributionBounds:
        if defaults is None:
            return NO_BOUNDS
        k = rows(answers) if rows(answers) is not None else defaults[0]
        g = groups(answers) if groups(answers) is not None else defaults[1]
        return ContributionBounds(None if k is None or g is None else int(k) * int(g))

    return (lambda _: None), bounds


def auto_minimum(epsilon: Fraction) -> int:
    """The values ``clip="auto"`` at ``epsilon`` (one column) needs: threshold + 10 noise scales.

    Data-free: the threshold of the search for one row per person under
    add_remove (a privacy unit needs ``max_rows`` times more).
    """
    return _needed(epsilon * AUTO_SHARE)


def _needed(bounds_epsilon: Fraction) -> int:
    """:func:`auto_minimum` for a search for bounds that runs at ``bounds_epsilon``."""
    side = plan_search(bounds_epsilon / 2, Neighbours.of("add_remove"))
    return side.threshold + math.ceil(AUTO_MIN_SCALES * side.nu_scale)


def _auto_clips(
    columns: tuple[Hashable, ...],
    loss: Loss,
    where: tuple[GroupOf, BoundsOf],
) -> list[Step]:
    """The check (a private count per column), then the bounds of each column."""
    accountant, total = loss
    epsilon, charged = selection_loss(accountant, total * AUTO_SHARE / len(columns))
    check = loss_fields(accountant, total * AUTO_CHECK_SHARE / len(columns))
    needed = _needed(epsilon)
    group, over = where

    def enough(column: Hashable) -> Callable[[Answers], None]:
        def refuse_below(answers: Answers) -> None:
            counted = answers[f"count {column!r}"]
            if float(pd.Series(counted).sum()) >= needed:
                return
            falls = "1/epsilon" if accountant == "epsilon" else "1/sqrt(rho)"
            raise ValueError(
                f'Finding bounds of {column!r} privately (clip="auto", or no clip or '
                f"candidates given) at {accountant}={float(total):g} needs about {needed:,} "
                "values (the private search for bounds stops where a few lie beyond a bound, "
                "and with fewer values its noise stops it inside the data), and a private "
                "count (in the ledger: the only spend of this call) found fewer. Give the call "
                f"more {accountant} (the values needed fall as {falls}; several columns share "
                "it), or pass clip=(lower, upper) (or a grid, candidates=) from what you know "
                "of the column (a legal or plausible range)."
            )

        return refuse_below

    def counted(column: Hashable) -> Callable[[Answers], Kind[Any, Any]]:
        return _constant(Count(check["epsilon"], column, rho=check["rho"]))

    def found(column: Hashable) -> Callable[[Answers], Kind[Any, Any]]:
        def bounds(answers: Answers) -> Kind[Any, Any]:  # the count sets the bounds' margin
            count = float(pd.Series(answers[f"count {column!r}"]).sum())
            return ClipBounds(epsilon, column, pooled=True, rho=charged, count=count)

        return bounds

    return [
        Step(f"{step} {c!r}", build(c), group=group, bounds=over, check=checked)
        for step, build in (("count", counted), ("bounds", found))
        for c in columns
        for checked in [enough(c) if step == "count" else None]
    ]


def _constant(kind: Kind[Any, Any]) -> Callable[[Answers], Kind[Any, Any]]:
    """A step's kind that reads no earlier answer."""
    return lambda _: kind


def _pair(found: Any) -> tuple[float, float]:
    """The bounds a pooled search released: every key's row is the same pair."""
    if isinstance(found, pd.DataFrame):
        return float(found["lower"].min()), float(found["upper"].max())
    lower, upper = found
    return lower, upper


def _shaped(
    answers: Answers,
    request: Request,
    clips: Clips | None,
    auto: tuple[bool, bool],
    cuts: tuple[bool, bool, bool],
) -> Any:
    """The statistic's answer with what the other steps chose or measured, where it has room.

    ``auto``: whether ``max_rows`` and ``max_groups`` were chosen; ``cuts``:
    whether the cut of the clip, of ``max_rows`` and of ``max_groups`` were measured.
    """
    answer = answers["answer"]
    columns, cut, ci = request.columns, any(cuts), request.get("ci")
    name = columns[0] if columns else "count"
    if cut and ci is None and not isinstance(answer, pd.Series | pd.DataFrame):
        answer = pd.Series([answer], index=["estimate"], name=name)
    elif cut and ci is None and isinstance(answer, pd.Series):  # grouped: one value per key
        answer = answer.to_frame("estimate")
    if clips is not None:
        counted = {c: float(pd.Series(answers[f"count {c!r}"]).sum()) for c in clips}
        answer = with_bounds(answer, clips, counted)
    (auto_rows, auto_groups), (cut_clip, people, keys_cut) = auto, cuts
    if auto_rows:
        answer = with_rows(answer, int(answers["max_rows"]))
    if auto_groups:
        answer = with_rows(answer, int(answers["max_groups"]), "max_groups")
    if not cut:
        return answer
    shares = {c: answers[f"cut {c!r}"] for c in columns} if cut_clip else {name: None}
    truncated = answers["truncated share"] if people else None
    return with_cut(answer, shares, truncated, answers["truncated keys"] if keys_cut else None)


def with_bounds(
    answer: Any,
    clips: Mapping[Hashable, tuple[float, float]],
    counted: Mapping[Hashable, float] | None = None,
) -> Any:
    """``answer`` with the bounds ``clip="auto"`` chose, where it has room for them.

    An interval (a Series or DataFrame with ``estimate``, ``lower``, ``upper``)
    gets ``clip_lower`` and ``clip_upper`` (and ``clip_count``, the private
    count of values the search checked first, from ``counted``); a
    ``describe`` table gets them as rows (ungrouped) or as columns under each
    column name (grouped).  A plain number is returned as it is: the bounds
    are in the ledger entry.
    """
    pairs: dict[Hashable, dict[str, float]] = {
        c: {"clip_lower": lower, "clip_upper": upper} for c, (lower, upper) in clips.items()
    }
    for c, count in (counted or {}).items():
        pairs[c]["clip_count"] = count
    return _with(answer, pairs)


def with_rows(answer: Any, bound: int, field: str = "max_rows") -> Any:
    """``answer`` with the bound that ``max_rows="auto"`` (``max_groups="auto"``) chose.

    An interval (a Series or DataFrame with ``estimate``) gets it as ``field``;
    a plain answer is returned as it is: the bound is in the ledger entry.
    """
    if isinstance(answer, pd.Series) and "estimate" in answer.index:
        chosen = pd.Series([float(bound)], index=[field], name=answer.name)
        return pd.concat([answer.astype("float64"), chosen])
    if isinstance(answer, pd.DataFrame) and "estimate" in answer.columns:
        return answer.assign(**{field: bound})
    return answer


def with_cut(
    answer: Any,
    clipped: Mapping[Hashable, Any],
    truncated: float | None,
    truncated_keys: float | None = None,
) -> Any:
    """``answer`` with the cut: ``clipped_share`` per column, ``truncated_share`` and
    :data:`TRUNCATED_KEYS`.

    As :func:`with_bounds` places the bounds; a grouped ``clipped_share`` is
    one value per key, the shares of persons one for the frame.  A column
    whose clip was not measured (None: a count) gets the shares of persons only.
    """
    fields: dict[Hashable, dict[str, Any]] = {
        c: {} if s is None else {"clipped_share": s} for c, s in clipped.items()
    }
    for named in fields.values():
        if truncated is not None:
            named["truncated_share"] = truncated
        if truncated_keys is not None:
            named[TRUNCATED_KEYS] = truncated_keys
    return _with(answer, fields)


def _with(answer: Any, fields: Mapping[Hashable, Mapping[str, Any]]) -> Any:
    """``answer`` with named ``fields`` of each column where it has room (else as it is)."""
    if "estimate" in (answer.index if isinstance(answer, pd.Series) else ()) or (
        isinstance(answer, pd.DataFrame) and "estimate" in answer.columns
    ):  # an interval: one column's fields by their names, several columns' as field[column]
        flat = {
            (field if len(fields) == 1 else f"{field}[{column}]"): value
            for column, values in fields.items()
            for field, value in values.items()
        }
        if isinstance(answer, pd.DataFrame):
            return answer.assign(**flat)
        extra = pd.Series([float(v) for v in flat.values()], index=list(flat), name=answer.name)
        return pd.concat([answer.astype("float64"), extra])
    if isinstance(answer, pd.DataFrame) and isinstance(answer.columns, pd.MultiIndex):
        out = answer.copy()
        for column, named in fields.items():
            for field, value in named.items():
                out[(column, field)] = value
        return out[list(fields)]
    if isinstance(answer, pd.DataFrame) and set(fields) <= set(answer.columns):
        rows = pd.DataFrame(
            {c: [float(v) for v in named.values()] for c, named in fields.items()},
            index=list(next(iter(fields.values()))),
        )
        return pd.concat([answer, rows])
    return answer
