"""What ``clip="auto"``, ``max_rows="auto"`` and ``cut=True`` spend, and how the answer shows it.

The releases of :mod:`pandas_dp.surface` that take a clip (``sum``, ``mean``,
``var``, ``std``, ``describe``) hand a call with ``clip="auto"``,
``max_rows="auto"`` or ``cut=True`` to :func:`release_with`: it holds the
call's whole ε, then spends it in parts, each a release of its own (one
ledger entry each, adding up to exactly ε):

=====================  ==========================  =================================
part                   share of ε                  release
=====================  ==========================  =================================
``max_rows="auto"``    :data:`AUTO_ROWS_SHARE`     ``rows_per_unit(0.9)`` on :data:`AUTO_ROWS`
``clip="auto"``        :data:`AUTO_CHECK_SHARE`    a count of the column's values (the check)
                       :data:`AUTO_SHARE`          :class:`~pandas_dp.clipbounds.ClipBounds`
the statistic          the rest                    clipped to the bounds
``cut=True``           :data:`CUT_SHARE`           the share of values outside the clip
                       :data:`CUT_SHARE`           with a privacy unit: the share of
                                                   persons ``max_rows`` cut
=====================  ==========================  =================================

Several columns split a part's share equally.  The check: AboveThreshold
stops where about its threshold ``T`` of values lie beyond a bound, so with
fewer than :data:`AUTO_MIN_RATIO` · ``T`` values the bounds land inside the
data (at ε = 0.1 on 1,000 incomes, near the median: the mean 100% off).  A
private count comes first; below that many values, the call stops with a
ValueError saying what to do (more ε, or ``clip=``), having spent only the
count.  The chosen bounds, ``max_rows`` and the cut are returned with the
answer where it has room (:func:`with_bounds`, :func:`with_rows`,
:func:`with_cut`); the ledger records each part in every case.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Hashable, Mapping
from fractions import Fraction
from typing import Any, Protocol

import pandas as pd

from .aggregate import Count
from .clipbounds import ClipBounds, ClippedShare, plan_bounds
from .kind import Kind, Neighbours
from .validation import check_loss, loss_fields, selection_loss

__all__ = [
    "AUTO_CHECK_SHARE",
    "AUTO_MIN_RATIO",
    "AUTO_ROWS",
    "AUTO_ROWS_SHARE",
    "AUTO_SHARE",
    "CUT_SHARE",
    "is_auto",
    "release_with",
    "with_bounds",
    "with_cut",
    "with_rows",
]

#: The share of a ``clip="auto"`` call's epsilon (or rho) that finds the bounds.
AUTO_SHARE = Fraction(1, 4)
#: The share of a ``clip="auto"`` call's epsilon (or rho) that counts the column's values first.
AUTO_CHECK_SHARE = Fraction(1, 20)
#: ``clip="auto"`` needs this many times the search's threshold in values (counted privately).
AUTO_MIN_RATIO = 5
#: The share of a ``max_rows="auto"`` call's epsilon (or rho) that chooses ``max_rows``
#: (``rows_per_unit`` at q = 0.9 on :data:`AUTO_ROWS`).
AUTO_ROWS_SHARE = Fraction(1, 4)
#: The public grid ``max_rows="auto"`` chooses from: 1 to 32, then powers of two to 2**20.
AUTO_ROWS = tuple(range(1, 33)) + tuple(2**k for k in range(6, 21))
#: The share of a ``cut=True`` call's epsilon each share of the cut costs.
CUT_SHARE = Fraction(1, 10)

Clips = dict[Hashable, tuple[float, float]]


class Surface(Protocol):
    """What :func:`release_with` needs of a surface (:class:`pandas_dp.surface.Releases`)."""

    def _spend(self, kind: Kind[Any, Any], max_rows: Any, max_groups: int | None) -> Any: ...

    def _hold(
        self, amount: Fraction, accountant: str
    ) -> contextlib.AbstractContextManager[Any]: ...

    def _rows_per_unit(self, amount: Fraction, accountant: str = "epsilon") -> int: ...

    def _units(self) -> Any: ...

    def _budget(self) -> Any: ...

    def _check(self, kind: Kind[Any, Any]) -> Kind[Any, Any]: ...


def is_auto(clip: object) -> bool:
    """Whether ``clip`` (or ``max_rows``) is the string ``"auto"``."""
    return isinstance(clip, str) and clip == "auto"


def auto_minimum(epsilon: Fraction) -> int:
    """The values ``clip="auto"`` at ``epsilon`` (one column) needs: ratio × the threshold.

    Data-free: the threshold of the search for one row per person under
    add_remove (a privacy unit needs ``max_rows`` times more).
    """
    return _needed(epsilon * AUTO_SHARE)


def _needed(bounds_epsilon: Fraction) -> int:
    """:func:`auto_minimum` for a search for bounds that runs at ``bounds_epsilon``."""
    return AUTO_MIN_RATIO * plan_bounds(bounds_epsilon, Neighbours.of("add_remove")).threshold


def release_with(
    surface: Surface,
    columns: tuple[Hashable, ...],
    loss_given: tuple[float | None, float | None],
    clip: Any,
    build: Callable[[Clips, dict[str, Fraction | None]], Kind[Any, Any]],
    max_rows: Any,
    max_groups: int | None,
    *,
    cut: bool,
    ci: float | None,
    table: bool = False,
) -> Any:
    """Release ``build(clips, rest)`` with ``clip="auto"``, ``max_rows="auto"`` or ``cut=True``.

    ``clip`` is ``"auto"``, a pair (one column) or a mapping ``{column:
    pair}``.  The whole ``epsilon`` is held first (refused, nothing spent, if
    it does not fit), unless this thread already holds a share
    (``df.dp.reserve``); the statistic's arguments are checked before
    anything is spent.  A grouped surface finds one pair of bounds from the
    rows of every key together; its cut is per key.  The parts and their
    shares: the module's table.  ``table``: a ``describe`` (several columns,
    a table); otherwise ``cut=True`` takes one column (TypeError).

    ``loss_given`` is the call's ``(epsilon, rho)``, exactly one given; ``build``
    takes the statistic's share as a kind's fields (``epsilon``/``rho``).
    Given ``rho=``, ρ is split by the same shares: the check and the
    statistic are Gaussian, and the ε-DP parts (the bounds' AboveThreshold,
    ``rows_per_unit``, the cut's shares) run at the largest ε with ``ε²/2``
    within their share (:func:`pandas_dp.validation.selection_loss`).
    """
    if cut and not table and isinstance(clip, Mapping):
        raise TypeError(
            "`cut=True` shows the cut of one column beside its answer; with a mapping `clip`, "
            "release each column on its own: e.g. df.dp.mean('col', clip=(lower, upper), "
            "epsilon=..., cut=True)."
        )
    accountant, total = check_loss(*loss_given)
    auto_clip, auto_rows = is_auto(clip), is_auto(max_rows)
    people = surface._units() if cut else None
    rows_share = total * AUTO_ROWS_SHARE if auto_rows else Fraction(0)
    check_share = total * AUTO_CHECK_SHARE if auto_clip else Fraction(0)
    bounds_share = total * AUTO_SHARE if auto_clip else Fraction(0)
    cut_share = total * CUT_SHARE if cut else Fraction(0)
    unit_share = total * CUT_SHARE if people is not None else Fraction(0)
    rest = loss_fields(
        accountant, total - rows_share - check_share - bounds_share - cut_share - unit_share
    )
    if auto_clip:
        given: Clips = {c: (0.0, 1.0) for c in columns}
    elif isinstance(clip, Mapping):
        given = dict(clip)
    else:
        given = dict.fromkeys(columns, clip)
    surface._check(build(given, rest))  # its arguments and the dtypes it reads, checked first
    n = len(columns)
    cut_eps, cut_rho = selection_loss(accountant, cut_share / n) if cut else (total, None)
    unit_eps, unit_rho = (
        selection_loss(accountant, unit_share) if people is not None else (total, None)
    )
    with surface._hold(total, accountant):
        rows = surface._rows_per_unit(rows_share, accountant) if auto_rows else max_rows
        clips = (
            _auto_clips(surface, columns, (accountant, total), rows, max_groups)
            if auto_clip
            else given
        )
        answer = surface._spend(build(clips, rest), rows, max_groups)
        shares = {
            c: surface._spend(ClippedShare(cut_eps, c, clips[c], rho=cut_rho), rows, max_groups)
            for c in (columns if cut else ())
        }
        truncated = None
        if people is not None:
            bound = surface._budget().max_rows if rows is None else int(rows)  # as released
            share = ClippedShare(
                unit_eps, "rows", (0.0, float(bound)), alias="truncated_share", rho=unit_rho
            )
            truncated = people._spend(share, None, None)
    if cut and ci is None and not isinstance(answer, pd.Series | pd.DataFrame):
        answer = pd.Series([answer], index=["estimate"], name=columns[0])
    elif cut and ci is None and isinstance(answer, pd.Series):  # grouped: one value per key
        answer = answer.to_frame("estimate")
    if auto_clip:
        answer = with_bounds(answer, clips)
    if auto_rows:
        answer = with_rows(answer, rows)
    return with_cut(answer, shares, truncated) if cut else answer


def _auto_clips(
    surface: Surface,
    columns: tuple[Hashable, ...],
    loss: tuple[str, Fraction],
    rows: Any,
    max_groups: int | None,
) -> Clips:
    """The check (a private count per column), then the bounds of each column."""
    accountant, total = loss
    eps, charged = selection_loss(accountant, total * AUTO_SHARE / len(columns))
    check = loss_fields(accountant, total * AUTO_CHECK_SHARE / len(columns))
    needed = _needed(eps)
    falls = "1/epsilon" if accountant == "epsilon" else "1/sqrt(rho)"
    for column in columns:
        counted = surface._spend(
            Count(check["epsilon"], column, rho=check["rho"]), rows, max_groups
        )
        if float(pd.Series(counted).sum()) < needed:
            raise ValueError(
                f'`clip="auto"` at {accountant}={float(total):g} needs about {needed:,} values of '
                f"{column!r} (the private search for bounds stops where about "
                f"{needed // AUTO_MIN_RATIO:,} lie beyond a bound, and finds bounds inside the "
                "data with fewer than five times that), and a private count (in the ledger: "
                f"the only spend of this call) found fewer. Give the call more {accountant} (the "
                f"values needed fall as {falls}), or pass clip=(lower, upper) from what you "
                "know of the column (a legal or plausible range)."
            )
    clips: Clips = {}
    for column in columns:
        finder = ClipBounds(eps, column, pooled=True, rho=charged)
        found = surface._spend(finder, rows, max_groups)
        if isinstance(found, pd.DataFrame):  # pooled: every key's row is the same
            found = (float(found["lower"].min()), float(found["upper"].max()))
        clips[column] = found
    return clips


def with_bounds(answer: Any, clips: Mapping[Hashable, tuple[float, float]]) -> Any:
    """``answer`` with the bounds ``clip="auto"`` chose, where it has room for them.

    An interval (a Series or DataFrame with ``estimate``, ``lower``, ``upper``)
    gets ``clip_lower`` and ``clip_upper``; a ``describe`` table gets them as
    rows (ungrouped) or as columns under each column name (grouped).  A plain
    number is returned as it is: the bounds are in the ledger entry.
    """
    pairs = {c: {"clip_lower": lower, "clip_upper": upper} for c, (lower, upper) in clips.items()}
    return _with(answer, pairs)


def with_rows(answer: Any, max_rows: int) -> Any:
    """``answer`` with the ``max_rows`` that ``max_rows="auto"`` chose, where it has room.

    An interval (a Series or DataFrame with ``estimate``) gets ``max_rows``; a
    plain answer is returned as it is: the bound is in the ledger entry.
    """
    if isinstance(answer, pd.Series) and "estimate" in answer.index:
        chosen = pd.Series([float(max_rows)], index=["max_rows"], name=answer.name)
        return pd.concat([answer.astype("float64"), chosen])
    if isinstance(answer, pd.DataFrame) and "estimate" in answer.columns:
        return answer.assign(max_rows=max_rows)
    return answer


def with_cut(answer: Any, clipped: Mapping[Hashable, Any], truncated: float | None) -> Any:
    """``answer`` with the cut: ``clipped_share`` per column, and ``truncated_share``.

    As :func:`with_bounds` places the bounds; a grouped ``clipped_share`` is
    one value per key, ``truncated_share`` one for the frame.
    """
    fields: dict[Hashable, dict[str, Any]] = {c: {"clipped_share": s} for c, s in clipped.items()}
    if truncated is not None:
        for named in fields.values():
            named["truncated_share"] = truncated
    return _with(answer, fields)


def _with(answer: Any, fields: Mapping[Hashable, Mapping[str, Any]]) -> Any:
    """``answer`` with named ``fields`` of each column where it has room (else as it is)."""
    if isinstance(answer, pd.Series) and "estimate" in answer.index:
        ((named),) = fields.values()
        extra = pd.Series([float(v) for v in named.values()], index=list(named), name=answer.name)
        return pd.concat([answer.astype("float64"), extra])
    if isinstance(answer, pd.DataFrame) and "estimate" in answer.columns:
        ((named),) = fields.values()
        return answer.assign(**named)
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
