"""Planning a whole analysis: target accuracies in, the losses that reach them out.

``df.dp.plan(releases, half_width=..., level=...)`` asks, for each release,
the smallest loss whose interval at ``level`` is at most its half-width
(:func:`pandas_dp.pipeline.planning.smallest` on the very plan the release
would make), and composes them with what the budget has spent and holds under
the budget's own accountant (:data:`~pandas_dp.accounting.ledger.ACCOUNTANTS`:
the rule every reservation obeys).  Under a ρ budget each release takes the
cheaper of Laplace (charged ``ε²/2``) and Gaussian noise; under PLD the noise
of each release is chosen among the two to minimise the ε the whole composes
to (all Laplace, all Gaussian, then one release switched at a time while that
lowers it).  A plan that does not fit is refused (nothing is spent) saying by
how much, and by what factor every half-width would have to widen to fit.

Planning is data-free: it reads the frame's schema (column names and
dtypes), never a value; the only count it uses is the frame's row count where
the adjacency makes it public (under substitute, one row per person, the
frame the budget was set on: its count is then exact and free).  A mean's, a
variance's or a std's interval depends on the rows per key: pass an assumed
``n`` (never read it from the data).
"""

from __future__ import annotations

import dataclasses
import math
import numbers
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import pandas as pd

from ..accounting.budget import PrivacyBudget
from ..accounting.ledger import ACCOUNTANTS, PLD, LedgerEntry, Taken
from ..core.errors import BudgetExceededError
from ..core.text import number_text
from ..core.validation import check_readable, given
from ..kinds.base import DEPENDS_ON_N, Kind
from ..kinds.signature import Param
from ..mechanisms.accuracy import check_ci
from ..mechanisms.keys import Grouping, normalize_keys
from .planning import KINDS, SIGNATURES, TABLES, Loss, release_kind, smallest
from .run import ContributionBounds, Frame, Planned, Spender, contribution_bounds, plan_release

__all__ = [
    "Option",
    "Wanted",
    "WorkloadPlan",
    "entries_for",
    "parse",
    "plan_workload",
]

#: The arguments a planned release may not be given: the plan chooses its loss, and asks
#: for its interval itself.
_CHOSEN = ("epsilon", "rho", "ci", "delta", "cut")


@dataclass(frozen=True)
class Wanted:
    """One release of a plan, parsed: what it releases and the accuracy it must reach.

    ``name`` is one of :data:`~pandas_dp.pipeline.planning.KINDS`; ``args``
    its arguments by name, besides its loss; ``by`` and ``keys`` its public
    grouping (None ungrouped; a histogram's column and bin edges, a crosstab's
    two columns and pair of key lists); ``n`` the assumed rows per key of a
    mean, var or std.
    """

    label: str
    name: str
    args: Mapping[str, Any]
    by: tuple[Hashable, ...] | None = None
    keys: Any = None
    half_width: Any = None
    level: float = 0.95
    n: int | None = None

    @property
    def grouped(self) -> bool:
        return self.by is not None


@dataclass(frozen=True)
class Option:
    """One way to make a release: its loss, and the plan and ledger entry that loss gives.

    ``widths``: the half-width it reaches at the plan's level, per column.
    """

    loss: Loss
    kind: Kind[Any, Any]
    planned: Planned
    widths: tuple[float, ...]

    @property
    def entry(self) -> LedgerEntry:
        return self.planned.entry


def _positional(name: str) -> list[Param]:
    return [p for p in SIGNATURES[TABLES.get(name, name)].params if p.positional]


def parse(release: object, half_width: object, level: object, n: object = None) -> Wanted:
    """A plan's release as given (``"count"``, or ``(name, *positional, {keywords})``).

    ``"groupby.name"`` takes the ``by`` columns first and ``keys=`` among the
    keywords; ``"histogram"`` a column and ``bins=``; ``"crosstab"`` two
    columns and ``keys=(row_keys, column_keys)``.  Keywords may hold ``n``.
    """
    parts: tuple[Any, ...] = (
        (release,)
        if isinstance(release, str)
        else tuple(release)
        if isinstance(release, tuple)
        else ()
    )
    if not parts or not isinstance(parts[0], str):
        raise TypeError(
            "each release of a plan is a name or a tuple (name, *positional, {keywords}), e.g. "
            f'("mean", "salary", {{"clip": (0, 2e5)}}); got {given(release)}.'
        )
    kwargs: dict[str, Any] = dict(parts[-1]) if isinstance(parts[-1], Mapping) else {}
    positional = list(parts[1:-1] if isinstance(parts[-1], Mapping) else parts[1:])
    grouped, _, name = parts[0].rpartition(".")
    if grouped not in ("", "groupby") or name not in KINDS or (grouped and name in TABLES):
        raise ValueError(
            f"a plan's release is one of {KINDS!r} (groupby.name for a grouped one, with "
            f"keys=), got {parts[0]!r}."
        )
    chosen = sorted(set(kwargs) & set(_CHOSEN))
    if chosen:
        raise TypeError(
            f"a planned release takes no {', '.join(chosen)}: the plan chooses its loss from "
            "its half-width, and gives its interval."
        )
    rows = kwargs.pop("n", n)
    by: tuple[Hashable, ...] | None = None
    keys = None
    if grouped or name in TABLES:
        width = 2 if name == "crosstab" else 1
        if len(positional) < width:
            raise TypeError(f"a {parts[0]} names its column(s) first, got {given(release)}.")
        taken, positional = positional[:width], positional[width:]
        by = tuple(taken[0]) if grouped and isinstance(taken[0], list) else tuple(taken)
        keys = kwargs.pop("bins" if name == "histogram" else "keys", None)
        if keys is None:
            what = "bins=" if name == "histogram" else "keys="
            raise TypeError(
                f"a planned {parts[0]} needs public {what}: its keys must be known to plan it "
                "(keys chosen privately spend a delta on a choice no interval covers)."
            )
    params = _positional(name) if name not in TABLES else []
    if len(positional) > len(params):
        raise TypeError(f"too many positional arguments for {parts[0]}: {given(release)}.")
    args = {p.name: value for p, value in zip(params, positional, strict=False)} | kwargs
    if name == "histogram":
        args = {k: v for k, v in args.items() if k not in ("right", "include_lowest")}
    level_ = check_ci(level, "level")
    assert level_ is not None
    return Wanted(_label(parts[0], positional, by), name, args, by, keys, half_width, level_,
                  _rows(rows))  # fmt: skip


def _label(name: str, positional: list[Any], by: tuple[Hashable, ...] | None) -> str:
    inner = ", ".join(repr(p) for p in positional)
    if name.startswith("groupby."):
        return f"groupby({', '.join(map(repr, by or ()))}).{name[8:]}({inner})"
    if by is not None:
        return f"{name}({', '.join(map(repr, by))})"
    return f"{name}({inner})"


def _rows(n: object) -> int | None:
    if n is None:
        return None
    if isinstance(n, bool) or not isinstance(n, numbers.Integral) or int(n) < 1:
        raise TypeError(f"`n` must be a positive integer (an assumed number), got {given(n)}.")
    return int(n)


def _targets(wanted: Wanted, columns: tuple[Hashable, ...]) -> list[float]:
    """The wanted half-width of each column of ``wanted``'s release."""
    target = wanted.half_width
    if isinstance(target, Mapping):
        if set(target) != set(columns):
            raise ValueError(f"the half-widths of {wanted.label} must name exactly {columns!r}.")
        values = [target[c] for c in columns]
    else:
        values = [target] * len(columns)
    for value in values:
        if isinstance(value, bool) or not isinstance(value, numbers.Real) or not float(value) >= 0:
            raise TypeError(f"a half-width must be a non-negative number, got {given(value)}.")
    return [float(v) for v in values]


# --------------------------------------------------------------------- one release


@dataclass(frozen=True)
class _Setting:
    """What a plan knows of the frame: public parameters only."""

    budget: PrivacyBudget
    unit: Hashable | None
    root: bool
    schema: pd.DataFrame | None  # empty: the columns and dtypes; None for budget.fits
    #: The frame's default bounds when not the budget's (a merge, concat or explode made it).
    defaults: tuple[int | None, int | None] | None = None


def _grouping(wanted: Wanted, setting: _Setting) -> Grouping | None:
    """The public grouping of ``wanted``: its keys' count is all a plan needs of it."""
    if wanted.by is None:
        return None
    if wanted.name == "histogram":
        edges = list(wanted.keys)
        return Grouping(wanted.by, pd.RangeIndex(max(len(edges) - 1, 1)))
    if wanted.name == "crosstab":
        rows, cols = wanted.keys
        size = len(normalize_keys([wanted.by[0]], rows)) * len(normalize_keys([wanted.by[1]], cols))
        return Grouping(wanted.by, pd.RangeIndex(size))
    if setting.schema is not None:
        return Grouping.of(setting.schema, list(wanted.by), wanted.keys).check(setting.schema)
    return Grouping(wanted.by, normalize_keys(list(wanted.by), wanted.keys))


def _option(
    wanted: Wanted, setting: _Setting, loss: Loss, group: Grouping | bool | None = True
) -> Option:
    """The release ``wanted`` at ``loss``: its kind, plan, ledger entry and half-widths.

    ``group``: its grouping once known (True: make it, and check the columns
    and dtypes on the schema; a search re-plans with the grouping it made).
    """
    kind = release_kind(wanted.name, loss, _probe_args(wanted))
    checking = group is True
    group = _grouping(wanted, setting) if group is True else group or None
    if checking and setting.schema is not None:
        check_readable(setting.schema, [*(wanted.by or ()), *kind.columns()])
        kind.read(setting.schema, 0)  # the columns' dtypes, as the release checks them
    bounds = ContributionBounds(wanted.args.get("max_rows"), wanted.args.get("max_groups"))
    budget = setting.budget
    spender = Spender(budget, setting.unit, setting.root, setting.defaults)
    max_rows, max_groups = contribution_bounds(bounds, spender, group is not None)
    unit = None if setting.unit is None else str(setting.unit)
    planned = plan_release(
        kind, group, budget.adjacency, root=setting.root, unit=unit, max_rows=max_rows,
        max_groups=max_groups,
    )  # fmt: skip
    widths = kind.half_width(planned.plan, wanted.level, wanted.n)
    if widths == DEPENDS_ON_N:
        raise TypeError(
            f"the half-width of {wanted.label} depends on its rows per key: pass an assumed n "
            '(in its keywords, {"n": 1000}, or plan(..., n=1000)); never read it from the data.'
        )
    if not isinstance(widths, tuple):
        raise ValueError(f"{wanted.label} has no interval to plan.")
    if isinstance(kind.half_width(planned.plan, wanted.level), tuple) and wanted.n is not None:
        raise TypeError(f"`n` is for a mean, var or std only; {wanted.label}'s does not use it.")
    return Option(loss, kind, planned, widths)


def _families(wanted: Wanted, setting: _Setting) -> list[str]:
    """The noises a release may take under the budget: Laplace, and Gaussian where it has one."""
    if setting.budget.accountant == "epsilon":
        return ["epsilon"]
    gaussian = release_kind(wanted.name, ("rho", Fraction(1)), _probe_args(wanted)).epsilon is None
    return ["epsilon", "rho"] if gaussian else ["epsilon"]


def _probe_args(wanted: Wanted) -> dict[str, Any]:
    args = {k: v for k, v in wanted.args.items() if k not in ("max_rows", "max_groups")}
    return args | ({"column": None} if wanted.name in TABLES else {})


def cheapest(wanted: Wanted, setting: _Setting, family: str, scale: float = 1.0) -> Option:
    """The smallest loss of ``family`` whose release reaches ``scale`` times its half-widths."""
    probe = _option(wanted, setting, (family, Fraction(1)))
    group = _grouping(wanted, dataclasses.replace(setting, schema=None)) if wanted.by else False
    columns = probe.kind.columns() if isinstance(wanted.half_width, Mapping) else None
    targets = [t * scale for t in _targets(wanted, columns or (None,) * len(probe.widths))]
    if len(targets) != len(probe.widths):
        raise ValueError(f"{wanted.label} has {len(probe.widths)} half-widths to plan.")
    found: list[Option] = []

    def reaches(loss: Loss) -> bool:
        option = _option(wanted, setting, loss, group)
        ok = all(w <= t for w, t in zip(option.widths, targets, strict=True))
        if ok:
            found.append(option)
        return ok

    amount = smallest(family, reaches)
    if amount is None:
        raise ValueError(
            f"no {family} reaches the half-width {given(wanted.half_width)} of {wanted.label} at "
            f"level {wanted.level:g}: ask for a wider interval or a lower level."
        )
    return next(o for o in reversed(found) if o.loss[1] == Fraction(repr(amount)))


# --------------------------------------------------------------------- the whole


def _taken(budget: PrivacyBudget) -> Taken:
    return budget.store.taken()


def _check(budget: PrivacyBudget, options: Sequence[Option]) -> None:
    """The budget's own rule on everything at once: BudgetExceededError if it does not fit."""
    accountant = budget.accountant
    entries = [o.entry.charged(accountant) for o in options]
    cost = sum((e.charge(accountant) for e in entries), Fraction(0))
    delta = sum((e.delta for e in entries), Fraction(0))
    events = [event for e in entries for event in e.privacy_events]
    ACCOUNTANTS[accountant].check(_taken(budget), cost, delta, events)


def _figure(budget: PrivacyBudget, options: Sequence[Option]) -> Fraction:
    """What the budget would have spent and held with ``options`` released (its unit)."""
    accountant = budget.accountant
    taken = _taken(budget)
    entries = tuple(o.entry.charged(accountant) for o in options)
    if ACCOUNTANTS[accountant].composes:
        return PLD.with_holds(dataclasses.replace(taken, entries=taken.entries + entries))
    return taken.spent + taken.held + sum((e.charge(accountant) for e in entries), Fraction(0))


def _choose(budget: PrivacyBudget, choices: list[dict[str, Option]]) -> list[Option]:
    """One option per release: the cheapest each (additive), or the least ε composed (PLD)."""
    accountant = budget.accountant
    if not ACCOUNTANTS[accountant].composes:
        return [min(c.values(), key=lambda o: o.entry.charged(accountant).charge(accountant))
                for c in choices]  # fmt: skip
    starts = [[c.get(family, c["epsilon"]) for c in choices] for family in ("epsilon", "rho")]
    best = min(starts, key=lambda options: _figure(budget, options))
    score = _figure(budget, best)
    improved = True
    while improved:  # switch one release's noise while that lowers the whole
        improved = False
        for i, c in enumerate(choices):
            for option in c.values():
                if option is best[i]:
                    continue
                trial = [*best[:i], option, *best[i + 1 :]]
                value = _figure(budget, trial)
                if value < score:
                    best, score, improved = trial, value, True
    return best


@dataclass
class WorkloadPlan:
    """The losses that reach a plan's half-widths, and what the budget has left after them.

    ``releases``: one row per release (its loss, noise, targeted and realised
    half-widths at its level); ``total``: what the budget would have spent
    and held with them all, in the unit of its accountant (under PLD: the ε
    at its δ of everything composed); ``remaining``: what would be left.
    :meth:`run` releases them, each with its planned loss, in order.
    """

    accountant: str
    wanted: list[Wanted]
    options: list[Option]
    total: Fraction
    remaining: Fraction
    releases: pd.DataFrame = field(repr=False)
    runner: Callable[[Wanted, Option], Any] | None = field(default=None, repr=False)

    def run(self) -> list[Any]:
        """Release every planned release, in order, each at its planned loss; their answers.

        Each is one release of ``df.dp`` (with ``ci=level`` where it has an
        interval), and the ledger records beside it its planned and realised
        half-widths.  A release refused on the way (the budget was spent
        meanwhile) raises, having released those before it.
        """
        if self.runner is None:
            raise TypeError("this plan was made without a frame to run it on.")
        return [self.runner(w, o) for w, o in zip(self.wanted, self.options, strict=True)]

    def __str__(self) -> str:
        unit = {"epsilon": "ε", "rho": "ρ", "pld": "ε"}[self.accountant]
        head = f"Plan of {len(self.options)} releases ({self.accountant} accountant)"
        table = self.releases.to_string(index=False)
        return (
            f"{head}\n{table}\n  total {unit}: {number_text(self.total, 6)}"
            f"   left: {number_text(self.remaining, 6)}"
        )


def _table(wanted: list[Wanted], options: list[Option]) -> pd.DataFrame:
    rows = []
    for w, o in zip(wanted, options, strict=True):
        family, amount = o.loss
        unit = o.kind.interval_unit or ("rows" if w.name in ("count", *TABLES) else "")
        rows.append(
            {
                "release": w.label,
                "loss": family,
                "amount": float(amount),
                "noise": "gaussian" if o.kind.epsilon is None else "laplace",
                "half_width": w.half_width,
                "realised": o.widths[0] if len(o.widths) == 1 else list(o.widths),
                "unit": unit,
                "level": w.level,
            }
        )
    return pd.DataFrame(rows)


def plan_workload(
    frame: Frame | None,
    budget: PrivacyBudget,
    releases: Sequence[object],
    half_width: object,
    level: object = 0.95,
    n: object = None,
    setting: _Setting | None = None,
) -> WorkloadPlan:
    """Plan ``releases`` on ``frame`` to their half-widths (see the module docstring)."""
    if isinstance(releases, str | tuple) or not isinstance(releases, Sequence) or not releases:
        raise TypeError(f"`releases` must be a non-empty list of releases, got {given(releases)}.")
    widths = _each(half_width, len(releases), "half_width")
    levels = _each(level, len(releases), "level")
    wanted = [parse(r, h, lv, n) for r, h, lv in zip(releases, widths, levels, strict=True)]
    if setting is None:
        assert frame is not None
        spender = frame.binding()
        schema = frame.schema().iloc[:0]  # columns and dtypes: no value is read
        setting = _Setting(spender.budget, spender.unit, spender.root, schema, spender.defaults)
    options = _solve(setting, wanted, 1.0)
    try:
        _check(budget, options)
    except BudgetExceededError as refused:
        refused.add_note(_how_far(budget, setting, wanted, options))
        raise
    total = _figure(budget, options)
    return WorkloadPlan(
        budget.accountant, wanted, options, total, max(budget.total - total, Fraction(0)),
        _table(wanted, options),
    )  # fmt: skip


def _solve(setting: _Setting, wanted: list[Wanted], scale: float) -> list[Option]:
    choices = [
        {family: cheapest(w, setting, family, scale) for family in _families(w, setting)}
        for w in wanted
    ]
    return _choose(setting.budget, choices)


def _how_far(
    budget: PrivacyBudget, setting: _Setting, wanted: list[Wanted], options: list[Option]
) -> str:
    """How much the plan exceeds the budget, and by what factor its half-widths should widen."""
    need = _figure(budget, options)
    unit = "rho" if budget.accountant == "rho" else "epsilon"
    over = f"{float(need / budget.total - 1):.0%} over" if budget.total else "over"
    lo, hi = 1.0, 2.0
    while hi < 2**20 and not _fits(budget, setting, wanted, hi):
        lo, hi = hi, hi * 2
    for _ in range(7):  # to within 1% or so
        mid = math.sqrt(lo * hi)
        lo, hi = (lo, mid) if _fits(budget, setting, wanted, mid) else (mid, hi)
    widen = f" Widen every half-width by ×{hi:.3g} (or drop releases) to fit." if hi < 2**20 else ""
    return (
        f"The plan needs {unit}={number_text(need, 6)} with what is spent and held; the budget's "
        f"total is {number_text(budget.total, 6)} ({over}).{widen} "
        "Nothing was spent."
    )


def _fits(budget: PrivacyBudget, setting: _Setting, wanted: list[Wanted], scale: float) -> bool:
    try:
        _check(budget, _solve(setting, wanted, scale))
    except (BudgetExceededError, ValueError):
        return False
    return True


def _each(value: object, count: int, name: str) -> list[Any]:
    """``value`` for each of ``count`` releases: one for all, or a list of one each."""
    if isinstance(value, list | tuple):
        if len(value) != count:
            raise ValueError(f"`{name}` has {len(value)} values for {count} releases.")
        return list(value)
    return [value] * count


def entries_for(
    budget: PrivacyBudget, release: object, half_width: object, level: float, n: int | None
) -> tuple[LedgerEntry, ...]:
    """The cheapest entry of each noise reaching ``half_width``: what ``budget.fits`` counts.

    Planned from the budget's own parameters (adjacency, privacy unit and
    default bounds), on a frame that is not its root (so a count is never
    free), without a schema: no column is checked.
    """
    wanted = parse(release, half_width, level, n)
    setting = _Setting(budget, budget.privacy_unit, False, None)
    families = _families(wanted, setting)
    return tuple(cheapest(wanted, setting, family).entry for family in families)
