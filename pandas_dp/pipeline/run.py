"""The release pipeline: one skeleton for every release, ungrouped or grouped.

Every release of ``df.dp`` and ``df.dp.groupby(...)``, on pandas and on Dask,
runs :func:`run` over a :class:`Frame` (the backend: schema, binding,
statistics per slice), in one order that the privacy argument depends on::

    read (validate columns and dtypes on the schema: no column of any
          Python object, :func:`~pandas_dp.validation.check_readable`)
      → resolve the budget
      → plan (data-free: sensitivity, grid, scale or rate, from the public
        parameters and the neighbour relation; without public keys, the key
        selection's threshold from δ and ``max_groups`` too)
      → encode rows to public key codes
      → reserve ε (one ledger entry; it counts against every other query)
      → bound each person's contribution (privacy unit: ``max_rows`` rows per
        cell, ``max_groups`` keys; random rows from the budget's randomness)
      → tally (exact integer statistics of each slice of rows, joined by
        the kind's ``combine``: one slice on pandas, partitions on Dask)
      → commit (before any noise; a reservation whose tally raised is
        returned: nothing was released)
      → finish (noise and post-processing; without public keys, the keys
        first: those whose noisy person count passes the threshold, each in
        the one form of its value, :func:`~pandas_dp.partition.public_keys`)
      → shape (the pandas result)

An ungrouped release is the one-key grouped release (``codes`` None, one key).
A grouped release without public keys (a :class:`~pandas_dp.mechanisms.key_selection.KeySelection`)
is the same run with one more statistic, the persons per observed key, and one
more finishing step, the selection (:func:`plan_selection`, :func:`release_selected`).
A kind with a table per key (:meth:`~pandas_dp.kinds.base.Kind.most_keys`: a median's
keys × candidates) tallies only the persons in the reservation, and its own
statistics after the selection over the chosen keys
(:class:`~pandas_dp.mechanisms.key_selection.ChosenKeys`), as with public keys.
What is particular to a kind lives in its class (:mod:`pandas_dp.kinds.sums`,
:mod:`pandas_dp.kinds.argmax`, :mod:`pandas_dp.kinds.describe`); :data:`KINDS`, the
registry, is every concrete subclass of :class:`~pandas_dp.kinds.base.Kind` defined
by the modules below this one: a kind is registered by existing.
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Callable, Hashable, Iterator
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, NamedTuple, Protocol, TypeVar, overload

import numpy as np
import pandas as pd

from .. import kinds
from ..accounting.budget import PrivacyBudget, bind, require_binding
from ..accounting.ledger import LedgerEntry
from ..core.noise import I64, RandomSource
from ..core.validation import check_bound, check_column, check_readable, check_rows, check_unit_ids
from ..kinds.base import Kind, Neighbours, Rows, Stats
from ..kinds.count import Count
from ..mechanisms.contributions import (
    bound_contributions,
    kept_counts,
    kept_pair_counts,
    keys_per_person,
    person_key_pairs,
    unit_codes,
)
from ..mechanisms.key_selection import (
    ChosenKeys,
    KeySelection,
    SelectionPlan,
    people_for_half,
    person_statistics,
    rebuilt,
    select_codes,
    selection_plan,
)
from ..mechanisms.keys import Grouping

__all__ = [
    "KINDS",
    "NO_BOUNDS",
    "Asked",
    "ContributionBounds",
    "Frame",
    "Pairs",
    "PandasFrame",
    "Planned",
    "Selecting",
    "Spender",
    "Task",
    "bounded_tally",
    "canonical_order",
    "check_unit",
    "combine_selected",
    "contribution_bounds",
    "key_codes",
    "no_unit",
    "plan_caches",
    "plan_release",
    "plan_selection",
    "registry",
    "release",
    "release_selected",
    "run",
    "selection_tally",
]

One = TypeVar("One")
Many = TypeVar("Many")

#: The modules whose kinds are registered: a new kind in one of them is registered by
#: existing (a new module of kinds is imported above and named here).


def _concrete(base: type[Kind[Any, Any]]) -> Iterator[type[Kind[Any, Any]]]:
    """Every concrete subclass of ``base``, depth first, in the order they were defined."""
    for sub in base.__subclasses__():
        if not inspect.isabstract(sub):
            yield sub
        yield from _concrete(sub)


def registry(base: type[Kind[Any, Any]] = Kind) -> dict[str, type[Kind[Any, Any]]]:
    """The concrete kinds defined in :mod:`pandas_dp.kinds` by name; TypeError if two share one.

    Importing that room imports each of its modules, so a kind defined in
    any of them is here; a kind defined elsewhere (a test's) is not.  In the
    order of the modules' names, then of definition: the same in every process.
    """
    room = kinds.__name__ + "."
    found: dict[str, type[Kind[Any, Any]]] = {}
    ordered = sorted(_concrete(base), key=lambda kind: kind.__module__)  # stable: definitions
    for kind in ordered:
        if not kind.__module__.startswith(room):
            continue
        name = getattr(kind, "name", None)
        if not isinstance(name, str) or name in found:
            raise TypeError(f"the release kind {kind.__qualname__} needs a name of its own.")
        found[name] = kind
    return found


#: Every release kind, by name: the registry the pipeline, planning, the ledger's
#: views and the tests derive from.  Nothing lists a kind by hand.
KINDS = registry()


def plan_caches() -> list[Any]:
    """The cached plan functions of every kind (tests clear them around each test)."""
    return list(dict.fromkeys(p for kind in KINDS.values() for p in kind.planners))


@dataclass(frozen=True)
class ContributionBounds:
    """The contribution bounds a call passes (None: the budget's default, if any)."""

    max_rows: object = None
    max_groups: object = None


NO_BOUNDS = ContributionBounds()


class Asked(NamedTuple):
    """What the caller asked, as the ledger records it beside each entry of the call.

    ``release``: the call's own name (``value_counts``, ``crosstab``, ``mean``);
    ``grouping``: the columns it was grouped by; ``parameters``: its other
    public parameters as text (:func:`pandas_dp.pipeline.recipes.parameters_text`).
    Public only: never a key, a candidate or a value of the data.
    """

    release: str
    grouping: tuple[str, ...] = ()
    parameters: str = ""

    def recorded(self, planned: Planned) -> Planned:
        """``planned`` with its ledger entry saying what was asked."""
        return planned._replace(entry=planned.entry.asked(*self))


class Task(NamedTuple):
    """What a slice of rows needs to compute its statistics: public parameters only.

    ``unit`` is the privacy unit's column (None: a row is a person), with the
    release's bounds.  A backend may ship it to other processes (Dask workers).
    """

    kind: Kind[Any, Any]
    plan: Any
    group: Grouping | None
    n_keys: int
    unit: Hashable | None = None
    max_rows: int | None = None
    max_groups: int | None = None
    #: The key selection's plan, when the keys are not public (``group`` a KeySelection).
    selection: SelectionPlan | None = None


class Spender(NamedTuple):
    """The binding a release spends from: the budget, the privacy unit, and whether it is root.

    ``root``: the frame still has the rows the budget was set on (under
    substitute, one row per person, its row count is public).
    """

    budget: PrivacyBudget
    unit: Hashable | None
    root: bool
    #: The frame's default ``(max_rows, max_groups)`` when not the budget's (a frame made
    #: by a merge, a concat or an explode); None: the budget's.
    defaults: tuple[int | None, int | None] | None = None

    def bounds(self) -> tuple[int | None, int | None]:
        """The default ``(max_rows, max_groups)`` of this frame's releases."""
        if self.defaults is not None:
            return self.defaults
        return self.budget.max_rows, self.budget.max_groups


class Frame(Protocol):
    """What a backend gives :func:`run`: the schema, the binding, and the statistics.

    pandas implements it in :class:`PandasFrame`, Dask in
    :class:`pandas_dp.dask.DaskFrame` (partitions, a tree of ``kind.combine``,
    lineage binding).  Everything else of a release is :func:`run`'s.
    """

    def schema(self) -> pd.DataFrame:
        """A pandas frame with the data's columns and dtypes, that the release is checked on.

        Its rows (all of them on pandas, none on Dask) are the rows ``kind.read``
        returns to :meth:`statistics`.  Refuses a frame of ``MAX_ROWS`` rows or more.
        """
        ...

    def binding(self) -> Spender:
        """The budget this frame may spend, or MissingBudgetError naming the fix."""
        ...

    def statistics(self, task: Task, rows: Rows) -> Callable[[RandomSource], Stats]:
        """Prepare the exact statistics of ``task`` (``rows``: ``kind.read`` of the schema).

        Anything that may refuse the release and reads no statistic is done
        here, before ε is reserved; the function returned computes the
        statistics inside the reservation, the bounding's random choices drawn
        from the source it is given.
        """
        ...

    def units(self, what: str) -> Frame:
        """The frame of rows per person (one column, ``rows``), bound to the same budget.

        One row per person, so its releases need no bounds: what
        ``rows_per_unit``, ``max_rows="auto"`` and ``cut=True``'s share of
        truncated persons release.  TypeError naming ``what`` if this frame's
        rows are persons.
        """
        ...

    def keys_per_unit(self, group: Grouping, what: str) -> Frame:
        """The frame of keys per person (one column, ``keys``), bound to the same budget.

        How many of ``group``'s keys (public, or observed when they are chosen
        from the data) each person has rows in; persons with none are left out.
        What ``max_groups="auto"`` and ``cut=True``'s share of persons whose
        keys ``max_groups`` cut release.  TypeError naming ``what`` if this
        frame's rows are persons.
        """
        ...

    def pairs(self, group: KeySelection, unit: Hashable) -> Callable[[RandomSource], Pairs]:
        """Prepare the distinct (person, key) pairs of the keys ``group`` observes.

        What a policy selection reads (:mod:`pandas_dp.pipeline.policy`): the
        function returned computes, inside the reservation, the observed keys
        (never shown: only those selected leave) and each pair's key code,
        person and rows (:func:`~pandas_dp.mechanisms.contributions.person_key_pairs`).
        """
        ...

    def selected(self, task: Task, rows: Rows) -> Callable[[RandomSource], tuple[pd.Index, Stats]]:
        """As :meth:`statistics` for a ``task`` whose group is a KeySelection.

        The function returned gives the keys observed in the data (never shown:
        the pipeline keeps only those it selects) and :func:`selection_tally`
        over them.
        """
        ...


def key_codes(group: Grouping, df: pd.DataFrame, *, check: bool = False) -> I64:
    """Each row's key code: into ``group``'s public keys, or the keys observed in ``df``."""
    if isinstance(group, KeySelection):
        return group.observe(df)[0]
    return group.codes(df, check=check)


def no_unit(what: str) -> str:
    """Why ``what`` (a step over the persons) is refused on a frame whose rows are persons."""
    return (
        f"{what} needs a privacy unit: this frame has one row per person. "
        "Attach the budget with set_budget(..., privacy_unit='customer_id')."
    )


class Pairs(NamedTuple):
    """The distinct (person, key) pairs of a frame: what a policy selection reads.

    ``observed``: the keys observed (codes index it); per pair its ``keys``
    code, ``persons`` code and ``rows``.
    """

    observed: pd.Index
    keys: I64
    persons: I64
    rows: I64


class PandasFrame:
    """A pandas frame as a :class:`Frame`: one slice, the frame itself.

    Within one call (a recipe's steps share the frame object), the keys a
    selection observes are computed once (:meth:`observed`): a policy
    selection and the statistic over the keys it chose read the same codes.
    """

    __slots__ = ("_paired", "_seen", "df")

    def __init__(self, df: pd.DataFrame) -> None:
        self.df = df
        self._seen: dict[tuple[Hashable, ...], tuple[I64, pd.Index]] = {}
        self._paired: dict[tuple[Hashable, ...], Pairs] = {}

    def observed(self, group: KeySelection) -> tuple[I64, pd.Index]:
        """``group.observe(df)``, computed once per call for the same columns."""
        key = (*group.by, group.dropna, type(group).__name__)
        if type(group) is not KeySelection:  # a subclass filters its rows: never shared
            return group.observe(self.df)
        if key not in self._seen:
            self._seen[key] = group.observe(self.df)
        return self._seen[key]

    def schema(self) -> pd.DataFrame:
        check_rows(self.df)
        return self.df

    def binding(self) -> Spender:
        binding = require_binding(self.df)
        return Spender(binding.budget, binding.unit, binding.is_root(self.df), binding.defaults)

    def units(self, what: str) -> PandasFrame:
        binding = require_binding(self.df)
        if binding.unit is None:
            raise TypeError(no_unit(what))
        check_unit_ids(self.df[binding.unit].dtype, binding.unit)
        counts = self.df.groupby(self.df[binding.unit], dropna=True, sort=False).size()
        people = counts.rename("rows").to_frame()
        bind(people, binding.budget, root=binding.is_root(self.df), unit=None)
        return PandasFrame(people)

    def keys_per_unit(self, group: Grouping, what: str) -> PandasFrame:
        binding = require_binding(self.df)
        if binding.unit is None:
            raise TypeError(no_unit(what))
        check_unit_ids(self.df[binding.unit].dtype, binding.unit)
        if isinstance(group, ChosenKeys):
            codes = group.codes_of(*self.observed(group.selection))
        elif type(group) is KeySelection:
            codes = self.observed(group)[0]
        else:
            codes = key_codes(group, self.df, check=True)
        held = keys_per_person(self.df[binding.unit], codes)
        people = pd.DataFrame({"keys": held})
        bind(people, binding.budget, root=binding.is_root(self.df), unit=None)
        return PandasFrame(people)

    def pairs(self, group: KeySelection, unit: Hashable) -> Callable[[RandomSource], Pairs]:
        units = self.df[unit]
        check_unit_ids(units.dtype, unit)  # before the reservation

        def pairs(source: RandomSource) -> Pairs:
            codes, observed = self.observed(group)
            found = Pairs(observed, *person_key_pairs(units, codes))
            if type(group) is KeySelection:  # the counts over the keys chosen read them again
                self._paired[(*group.by, group.dropna, unit)] = found
            return found

        return pairs

    def statistics(self, task: Task, rows: Rows) -> Callable[[RandomSource], Stats]:
        paired = self._counted_pairs(task)
        if paired is not None:  # a count over keys a policy chose: from its pairs, no pass
            return paired
        # the keys' type checked as their columns are read, before the reservation
        if isinstance(task.group, ChosenKeys):  # the selection's observation, computed once
            codes: I64 | None = task.group.codes_of(*self.observed(task.group.selection))
        else:
            codes = None if task.group is None else task.group.codes(self.df, check=True)
        units = None if task.unit is None else self.df[task.unit]
        if units is not None:
            check_unit_ids(units.dtype, units.name)  # before the reservation

        def statistics(source: RandomSource) -> Stats:
            return bounded_tally(task, rows, codes, units, source)

        return statistics

    def _counted_pairs(self, task: Task) -> Callable[[RandomSource], Stats] | None:
        """A row count over the keys a policy chose, from the pairs it read: None otherwise."""
        group = task.group
        if not (
            isinstance(group, ChosenKeys) and task.unit is not None and task.kind.counts_kept()
        ):
            return None
        selection = group.selection
        found = self._paired.get((*selection.by, selection.dropna, task.unit))
        if found is None or type(selection) is not KeySelection:
            return None
        assert task.max_rows is not None
        chosen = group.codes_of(np.arange(len(found.observed)), found.observed)
        max_rows, max_groups, kind = task.max_rows, task.max_groups, task.kind

        def statistics(source: RandomSource) -> Stats:
            keys = chosen[found.keys]  # each pair's position among the chosen keys (-1: not)
            counts = kept_pair_counts(
                source,
                found.persons,
                keys,
                found.rows,
                len(group.keys),
                max_rows=max_rows,
                max_groups=max_groups,
            )
            return kind.from_counts(counts)

        return statistics

    def selected(self, task: Task, rows: Rows) -> Callable[[RandomSource], tuple[pd.Index, Stats]]:
        assert isinstance(task.group, KeySelection)
        group = task.group
        units = None if task.unit is None else self.df[task.unit]
        if units is not None:
            check_unit_ids(units.dtype, units.name)  # before the reservation

        def statistics(source: RandomSource) -> tuple[pd.Index, Stats]:
            counted = group.counted(self.df) if units is None and task.kind.counts_kept() else None
            if counted is not None:  # a row count, each row a person: its counts are both
                assert task.selection is not None
                people = task.selection.weight(1) * counted[1]
                return counted[0], (people, *task.kind.from_counts(counted[1]))
            codes, keys = group.observe(self.df)
            return keys, selection_tally(task, rows, codes, keys, units, source)

        return statistics


@overload
def run(
    frame: Frame,
    kind: Kind[One, Many],
    group: None,
    bounds: ContributionBounds = NO_BOUNDS,
    asked: Asked | None = None,
) -> One: ...


@overload
def run(
    frame: Frame,
    kind: Kind[One, Many],
    group: Grouping,
    bounds: ContributionBounds = NO_BOUNDS,
    asked: Asked | None = None,
) -> Many: ...


def run(
    frame: Frame,
    kind: Kind[One, Many],
    group: Grouping | None,
    bounds: ContributionBounds = NO_BOUNDS,
    asked: Asked | None = None,
) -> One | Many:
    """Release ``kind`` on ``frame`` (grouped by ``group``), spending from its budget.

    The one orchestration of every release on every backend: validate on the
    schema, resolve the budget and the bounds, plan, prepare the statistics,
    then :func:`release` (reserve, compute, commit, noise, shape).  ``asked``:
    what the caller asked, recorded in the ledger entry (by default the kind's
    name and the grouping's columns).
    """
    n_keys = 1 if group is None else len(group.keys)
    schema = frame.schema()
    check_readable(schema, [*(() if group is None else group.by), *kind.columns()])
    rows = kind.read(schema, n_keys)
    spender = frame.binding()
    budget, unit = spender.budget, spender.unit
    max_rows, max_groups = contribution_bounds(bounds, spender, group is not None)
    if unit is not None:
        check_unit(schema, unit, kind, group)
    selecting = None
    if isinstance(group, KeySelection):
        group = group.typed(schema)  # the dtypes its keys leave in, from the schema alone
        selecting = plan_selection(kind, group, budget, unit, max_rows, max_groups)
        kind = selecting.kind
    planned = plan_release(
        kind,
        group,
        budget.adjacency,
        root=spender.root,
        unit=None if unit is None else str(unit),
        max_rows=max_rows,
        max_groups=max_groups,
    )
    if asked is None:
        asked = Asked(kind.name, () if group is None else tuple(str(b) for b in group.by))
    if selecting is None:
        planned = asked.recorded(planned)
        task = Task(kind, planned.plan, group, n_keys, unit, max_rows, max_groups)
        compute = frame.statistics(task, rows)
        return release(budget, kind, group, planned, lambda: compute(budget.source))
    assert isinstance(group, KeySelection)
    task = Task(kind, planned.plan, group, 0, unit, max_rows, max_groups, selecting.plan)
    planned = asked.recorded(planned._replace(entry=selecting.entry(planned.entry)))
    if kind.most_keys() is None:
        select = frame.selected(task, rows)
        return release_selected(budget, group, planned, selecting, lambda: select(budget.source))  # type: ignore[no-any-return]
    # A table per key (a median's): the reservation tallies only the persons per key; the
    # statistic waits for the chosen keys, public once chosen, and is bounded over them as
    # with public keys (at most kind.most_keys() of them: no table larger than with keys=).
    persons = frame.selected(task._replace(kind=PERSONS, plan=None), PERSONS.read(schema, 0))

    def chosen(keys: pd.Index) -> Stats:
        over = ChosenKeys(group.by, keys, group)
        tally = task._replace(group=over, n_keys=len(keys), selection=None)
        return frame.statistics(tally, rows)(budget.source)  # rows read once, above

    return release_selected(  # type: ignore[no-any-return]
        budget, group, planned, selecting, lambda: persons(budget.source), chosen
    )


def bounded_tally(
    task: Task,
    rows: Rows,
    codes: I64 | None,
    units: pd.Series | None,
    source: RandomSource | None,
) -> Stats:
    """The exact statistics of ``rows`` (one slice) after bounding each person's contribution.

    ``units`` (the unit column of these rows, or None when a row is a person)
    must hold every row of each person it names: the whole frame on pandas, one
    bucket of persons on Dask (:func:`pandas_dp.dask.split_by_unit`).  The random choices of the
    bounding draw from ``source`` (None only without a unit).
    """
    kind, n_keys = task.kind, task.n_keys
    if units is None:
        return kind.tally(task.plan, rows, codes, n_keys)
    assert task.max_rows is not None
    assert source is not None
    if kind.counts_kept():
        counts = kept_counts(
            source,
            units,
            codes,
            n_keys=n_keys,
            max_rows=task.max_rows,
            max_groups=task.max_groups,
        )
        return kind.from_counts(counts)
    cells, n_cells = kind.cells(rows)
    keep = bound_contributions(
        source,
        unit_codes(units),
        codes,
        cells,
        n_keys=n_keys,
        n_cells=n_cells,
        max_rows=task.max_rows,
        max_groups=task.max_groups,
    )
    return kind.tally(task.plan, rows.take(keep), None if codes is None else codes[keep], n_keys)


class Planned(NamedTuple):
    """The data-free part of a release: neighbour relation, plan, ledger entry."""

    neighbours: Neighbours
    plan: Any
    entry: LedgerEntry


def plan_release(
    kind: Kind[Any, Any],
    group: Grouping | None,
    adjacency: str,
    *,
    root: bool,
    unit: str | None = None,
    max_rows: int | None = None,
    max_groups: int | None = None,
) -> Planned:
    """Plan a release from public parameters only (``root``: the budget's own rows).

    ``unit``, ``max_rows`` and ``max_groups`` describe a privacy unit and the
    bounds of this release.  Shared by every backend (pandas here, Dask in
    :mod:`pandas_dp.dask`).
    """
    neighbours = Neighbours.of(
        adjacency,
        group is not None,
        adjacency == "substitute"
        and unit is None
        and group is None
        and kind.counts_rows()
        and root,
        max_rows,
        max_groups,
        unit,
    )
    plan = kind.plan(neighbours)
    entry = kind.entry(plan, neighbours, None if group is None else len(group.keys))
    return Planned(neighbours, plan, entry)


@overload
def release(
    budget: PrivacyBudget,
    kind: Kind[One, Many],
    group: None,
    planned: Planned,
    statistics: Callable[[], Stats],
) -> One: ...


@overload
def release(
    budget: PrivacyBudget,
    kind: Kind[One, Many],
    group: Grouping,
    planned: Planned,
    statistics: Callable[[], Stats],
) -> Many: ...


def release(
    budget: PrivacyBudget,
    kind: Kind[One, Many],
    group: Grouping | None,
    planned: Planned,
    statistics: Callable[[], Stats],
) -> One | Many:
    """Reserve ε, compute the exact ``statistics()``, commit, then noise and shape.

    The reservation is returned if ``statistics()`` raised (nothing was
    released); it is committed before any noise is drawn.  Every backend's
    releases end here.
    """
    with budget.reserve(planned.entry):  # committed before any noise; returned if it raised
        stats = statistics()
    answer = kind.finish(
        planned.plan, stats, budget.source, 1 if group is None else len(group.keys)
    )
    if group is None:
        return kind.shape_one(answer)
    # A view: each result's index is its own (renaming it leaves the keys and later results be).
    return kind.shape_many(answer, group.keys.view())


class Selecting(NamedTuple):
    """The data-free plan of a grouped release without public keys (:func:`plan_selection`).

    ``plan``: the key selection's; ``kind``: the statistic with what the
    selection leaves of ``epsilon``/``rho`` (all of it when ``one_pass``: the
    selection's noisy counts are the release); ``loss``: the whole
    ``epsilon`` or ``rho`` the call gave (the other None).
    """

    plan: SelectionPlan
    kind: Kind[Any, Any]
    one_pass: bool
    epsilon: Fraction | None
    rho: Fraction | None

    def _how(self) -> str:
        """The selection's rule as the ledger names it: its threshold, or its release odds."""
        if self.plan.method == "truncated_geometric":
            even = people_for_half(self.plan)
            return f"the optimal rule: a key of {even} persons shown at even odds"
        return f"threshold {self.plan.threshold}"

    def entry(self, statistic: LedgerEntry) -> LedgerEntry:
        """The one ledger entry of the release: the whole ε (or ρ) and δ, public parameters only.

        Its events are what the whole is: (ε, δ)-DP, or ρ-zCDP and δ (the
        statistic's own noise is part of it).
        """
        return dataclasses.replace(
            statistic,
            epsilon=self.epsilon,
            rho=self.rho,
            delta=self.plan.delta,
            events=(),
            keys=None,
            mechanism=f"{self.plan.method} key selection ({self._how()}"
            f"{'' if self.one_pass else ', half the budget'}) + {statistic.mechanism}",
        )


#: The statistic the reservation of a selection tallies beside the persons per key when the
#: release's own waits for the chosen keys (:meth:`~pandas_dp.kinds.base.Kind.most_keys`): rows per
#: key, never released (its plan is never made: a count's tally reads none).
PERSONS = Count(None)

#: The share of ``epsilon`` (or ``rho``) the key selection takes when the statistic is
#: not the selection's own counts; the statistic gets the rest.
SELECTION_SHARE = Fraction(1, 2)


def check_selection_budget(budget: PrivacyBudget) -> None:
    """Refuse, before any spend, a budget that cannot choose keys from the data.

    A budget without δ (the message names ``delta=`` and ``keys=``), and the
    substitute adjacency.
    """
    if not budget.delta:
        raise TypeError(
            "This budget has no delta. A groupby without `keys=` chooses its keys from the "
            "data, which needs a delta: attach the budget with set_budget(..., delta=1e-6) and "
            "pass `delta=` (e.g. delta=1e-7), or pass the public keys with keys=[...]."
        )
    if budget.adjacency != "add_remove":
        raise ValueError(
            "A groupby without `keys=` chooses its keys under adjacency='add_remove' only; "
            f"this budget's adjacency is {budget.adjacency!r}. Pass the public keys with keys=."
        )


def plan_selection(
    kind: Kind[Any, Any],
    group: KeySelection,
    budget: PrivacyBudget,
    unit: Hashable | None,
    max_rows: int | None,
    max_groups: int | None,
) -> Selecting:
    """Plan a grouped release whose keys are chosen from the data (data-free).

    A count of rows whose persons count once per key (no privacy unit, or
    ``max_rows=1``) is the selection's own noisy count: one pass, the whole
    ``epsilon``/``rho`` to a Laplace (Gaussian) thresholding whose counts are
    released.  Any other statistic: :data:`SELECTION_SHARE` of it to the
    selection (under ε the optimal truncated geometric when each person keeps
    one key, Desfontaines et al. 2022, else Laplace thresholding; Gaussian,
    weighted when a person keeps several keys, under ρ), the rest to the
    statistic over the chosen keys.  All of ``group.delta`` goes to the
    selection.  Refused, before any spend: a budget without δ (the message
    names ``delta=`` and ``keys=``), and the substitute adjacency.
    """
    check_selection_budget(budget)
    name, total = kind.loss()
    g = 1 if unit is None else max_groups
    assert g is not None
    assert total is not None
    whole = (None, total) if name == "rho" else (total, None)
    one_pass = (
        isinstance(kind, Count)
        and kind.column is None
        and kind.ci is None
        and (unit is None or max_rows == 1)
    )
    if one_pass:
        method = "gaussian" if name == "rho" else "laplace"
        epsilon, rho = whole
        plan = selection_plan(
            epsilon=epsilon, rho=rho, delta=group.delta, max_groups=g, method=method
        )
        return Selecting(plan, kind, True, *whole)
    share = total * SELECTION_SHARE
    epsilon, rho = (None, share) if name == "rho" else (share, None)
    # Under pure ε with one key per person, the optimal mechanism (releases no count).
    optimal = "truncated_geometric" if name == "epsilon" and g == 1 else None
    plan = selection_plan(epsilon=epsilon, rho=rho, delta=group.delta, max_groups=g, method=optimal)
    return Selecting(plan, kind.at(name, total - share), False, *whole)


def selection_tally(
    task: Task,
    rows: Rows,
    codes: I64,
    keys: pd.Index,
    units: pd.Series | None,
    source: RandomSource | None,
) -> Stats:
    """``(persons per key, *the kind's statistics)`` over the observed ``keys`` of one slice.

    ``codes``: each row's code into ``keys`` (-1: dropped); ``units`` as in
    :func:`bounded_tally`.  The persons are counted by
    :func:`~pandas_dp.mechanisms.key_selection.person_statistics` (each person keeps at most
    ``max_groups`` keys, at random), the statistic bounded on its own.
    """
    assert task.selection is not None
    n_keys = len(keys)
    if units is None:
        people = person_statistics(codes, n_keys, None, task.selection, source)  # type: ignore[arg-type]
    else:
        assert source is not None
        people = person_statistics(codes, n_keys, unit_codes(units), task.selection, source)
    tally = bounded_tally(task._replace(n_keys=n_keys), rows, codes, units, source)
    return (people, *tally)


def combine_selected(
    kind: Kind[Any, Any], a: tuple[pd.Index, Stats], b: tuple[pd.Index, Stats]
) -> tuple[pd.Index, Stats]:
    """Two slices' :func:`selection_tally` together: keys unioned by value, statistics joined."""
    codes, uniques = a[0].append(b[0]).factorize(use_na_sentinel=False)
    assert isinstance(uniques, pd.Index)  # an Index factorizes to an Index (MultiIndex kept)
    union = uniques.set_names(a[0].names)
    n_keys, split = len(union), len(a[0])
    moved = []
    for mapping, (_, stats) in ((codes[:split], a), (codes[split:], b)):
        mapping = np.asarray(mapping, dtype=np.int64)
        people = np.zeros(n_keys, dtype=np.int64)
        people[mapping] = stats[0]
        moved.append((people, kind.recode(stats[1:], mapping, n_keys)))
    (pa, sa), (pb, sb) = moved
    return union, (pa + pb, *kind.combine(sa, sb))


def canonical_order(keys: pd.Index) -> I64:
    """The positions of ``keys`` in the order of a 64-bit hash of their values (stable)."""
    hashes = pd.util.hash_pandas_object(keys, index=False).to_numpy()
    return np.argsort(hashes, kind="stable").astype(np.int64)


def _sorted(keys: pd.Index) -> I64:
    """The positions of ``keys`` in sorted order (missing last); as given if not comparable."""
    try:
        order = keys.sort_values(return_indexer=True, na_position="last")[1]
    except TypeError:
        return np.arange(len(keys), dtype=np.int64)
    return np.asarray(order, dtype=np.int64)


def release_selected(
    budget: PrivacyBudget,
    group: KeySelection,
    planned: Planned,
    selecting: Selecting,
    statistics: Callable[[], tuple[pd.Index, Stats]],
    chosen_statistics: Callable[[pd.Index], Stats] | None = None,
) -> Any:
    """Reserve, compute, commit; then choose the keys from the noisy person counts and finish.

    Only the chosen keys' statistics are finished (noise) and shown, indexed
    by the chosen keys, sorted if ``group.sort``; no other observed key leaves.
    Every observed key is first put in the one form of its value
    (:meth:`~pandas_dp.mechanisms.key_selection.KeySelection.released`: ``+0.0``, one NaN, a
    plain ``str``, the schema's dtype), so what is hashed, sorted and shown
    depends on the keys' values and the schema, never on which row (or
    partition) pandas kept a key from.
    ``chosen_statistics``: for a kind with :meth:`~pandas_dp.kinds.base.Kind.most_keys`,
    its exact statistics over the chosen keys (the reservation's are the
    persons only), computed after the commit; of more chosen keys than that
    cap, those of the highest noisy person counts are kept.
    """
    kind = selecting.kind
    with budget.reserve(planned.entry):  # committed before any noise; returned if it raised
        keys, stats = statistics()
        # Each key in the one form of its value, whichever row (or partition) pandas kept
        # it from: what is hashed, sorted and shown below reads no row's form.
        keys = group.released(keys)
    # The noise goes to the keys in the order of a hash of their values, the same on every
    # engine whatever order the rows (or partitions, or value_counts) gave them.
    canonical = canonical_order(keys)
    chosen, noisy = select_codes(selecting.plan, stats[0][canonical], budget.source)
    chosen = canonical[chosen]
    most = kind.most_keys()
    if most is not None:  # the order of select_codes: descending noisy statistic
        chosen, noisy = chosen[:most], None if noisy is None else noisy[:most]
    picked = rebuilt(keys[chosen])  # the order reads no other observed key
    if group.sort:
        order = _sorted(picked)
        chosen, picked = chosen[order], picked[order]
        noisy = None if noisy is None else noisy[order]
    if selecting.one_pass:
        answer: Any = noisy
    elif chosen_statistics is not None:
        kept = chosen_statistics(picked)
        answer = kind.finish(planned.plan, kept, budget.source, chosen.size)
    else:
        mapping = np.full(len(keys), -1, dtype=np.int64)
        mapping[chosen] = np.arange(chosen.size)
        kept = kind.recode(stats[1:], mapping, chosen.size)
        answer = kind.finish(planned.plan, kept, budget.source, chosen.size)
    return kind.shape_many(answer, picked)


def contribution_bounds(
    bounds: ContributionBounds, spender: Spender, grouped: bool
) -> tuple[int | None, int | None]:
    """``(max_rows, max_groups)`` for this release: the call's, else the frame's defaults.

    The frame's defaults are the budget's, or those a merge, concat or explode
    gave it (:meth:`Spender.bounds`).  Refused, before any spend: a bound on a
    frame whose rows are persons, or a missing bound the privacy unit needs
    (the message says what it means).
    """
    unit = spender.unit
    default_rows, default_groups = spender.bounds()
    given_rows = None if bounds.max_rows is None else check_bound(bounds.max_rows, "max_rows")
    given_groups = (
        None if bounds.max_groups is None else check_bound(bounds.max_groups, "max_groups")
    )
    if unit is None:
        if given_rows is not None or given_groups is not None:
            name = "max_rows" if given_rows is not None else "max_groups"
            raise TypeError(
                f"`{name}` bounds the rows of one person, but each row of this frame is one "
                "person (its budget has no privacy_unit, or it came from df.dp.per_unit); drop "
                f"`{name}`, or attach the budget with set_budget(..., privacy_unit='<column>')."
            )
        return None, None
    max_rows = default_rows if given_rows is None else given_rows
    if max_rows is None:
        raise TypeError(
            f"This frame's privacy unit is {unit!r}: one person may have many rows, so this "
            "release needs `max_rows=`, the most rows of one person it may use (in each key, "
            "and for argmax_exp in each candidate); the rest of that person's rows are dropped "
            "at random. Pass e.g. max_rows=10, or set a default with set_budget(..., "
            "max_rows=10); df.dp.rows_per_unit(...) chooses it privately."
        )
    if not grouped:
        return max_rows, None
    max_groups = default_groups if given_groups is None else given_groups
    if max_groups is None:
        raise TypeError(
            f"This frame's privacy unit is {unit!r}: one person may have rows under many keys, "
            "so a grouped release needs `max_groups=`, the most keys of one person it may use "
            "(the others are dropped at random). Pass e.g. max_groups=3, or set a default with "
            "set_budget(..., max_groups=3)."
        )
    return max_rows, max_groups


def check_unit(
    schema: pd.DataFrame, unit: Hashable, kind: Kind[Any, Any], group: Grouping | None
) -> None:
    """Refuse a release that groups by the privacy unit or reads it (or a frame without it)."""
    check_column(schema, unit)
    if group is not None and unit in group.by:
        raise ValueError(
            f"{unit!r} is the privacy unit: grouping by it would release one answer per "
            "person. Group by another column, or use df.dp.per_unit(...) for per-person values."
        )
    if unit in kind.columns():
        raise ValueError(
            f"{unit!r} is the privacy unit; a release may not read it as a value or candidate."
        )
