"""Planning before spending: the half-width a release would have, and the ε that reaches one.

Data-free: :func:`half_width` and :func:`epsilon_for` read only public
parameters (kind, ε, level, clip bounds, the neighbour relation, and for the
mean an assumed number of rows) and build the very plan a release builds, so
the numbers are the ones its ``ci=`` interval gives.  Nothing is spent and no
frame is touched.
"""

from __future__ import annotations

import math
import numbers
import struct
from collections.abc import Hashable, Mapping, Sequence
from fractions import Fraction
from typing import Any, overload

import pandas as pd

from .accuracy import check_ci, level_miss, mean_miss, mean_pad, noise_half_width
from .aggregate import plan_count, plan_mean, plan_sum
from .kind import Neighbours
from .ledger import LedgerEntry, register_half_width
from .text import exact_number, figures
from .validation import (
    Clip,
    check_adjacency,
    check_bound,
    check_clip,
    check_clip_map,
    check_epsilon,
    given,
)

__all__ = ["entry_half_width", "epsilon_for", "half_width"]

KINDS = ("count", "sum", "mean")

#: The range of ε that :func:`epsilon_for` searches.
_SEARCH = (1e-300, 1e300)


def _neighbours(
    adjacency: object, grouped: object, max_rows: object, max_groups: object
) -> Neighbours:
    """The neighbour relation of the planned release.

    With a privacy unit, its bounds (``max_rows``, and ``max_groups`` when
    grouped) multiply the sensitivities of the plans, as in a release.
    """
    if not isinstance(grouped, bool):
        raise TypeError(f"`grouped` must be True or False, got {given(grouped)}.")
    if max_rows is None:
        if max_groups is not None:
            raise TypeError("`max_groups` goes with `max_rows` (a privacy unit's bounds).")
        return Neighbours.of(check_adjacency(adjacency), grouped)
    rows = check_bound(max_rows, "max_rows")
    groups = None
    if grouped:
        if max_groups is None:
            raise TypeError("a grouped release with a privacy unit needs `max_groups`.")
        groups = check_bound(max_groups, "max_groups")
    elif max_groups is not None:
        raise TypeError("`max_groups` bounds the keys of a grouped release: pass grouped=True.")
    return Neighbours.of(check_adjacency(adjacency), grouped, False, rows, groups, "unit")


def _check_kind(kind: object) -> str:
    if not isinstance(kind, str) or kind not in KINDS:
        raise ValueError(f"`kind` must be one of {KINDS!r}, got {given(kind)}.")
    return kind


def _check_arguments(kind: str, clip: object, n: object) -> tuple[dict[Hashable, Clip], int]:
    """The clip bounds per column (``{None: ...}`` for one pair, ``{}`` for a count) and n."""
    if kind == "count":
        if clip is not None or n is not None:
            raise TypeError("a count takes neither `clip` nor `n`.")
        return {}, 0
    clips: dict[Hashable, Clip] = (
        check_clip_map(clip) if isinstance(clip, Mapping) else {None: check_clip(clip)}
    )
    if kind == "sum":
        if n is not None:
            raise TypeError("`n` is for the mean only: a sum's noise does not depend on it.")
        return clips, 0
    if isinstance(n, bool) or not isinstance(n, numbers.Integral) or int(n) < 1:
        raise TypeError(
            "the mean's half-width depends on the number of rows: pass an assumed `n`, "
            f"a positive integer (never read it from the data); got {given(n)}."
        )
    return clips, int(n)


def _width(
    kind: str, epsilon: Fraction, level: float, bounds: Clip | None, n: int, nb: Neighbours
) -> float:
    """One column's half-width at ``epsilon`` (the plan's, exactly as a release builds it)."""
    if kind == "count":
        return float(noise_half_width(plan_count(epsilon, nb).scale, level_miss(level)))
    assert bounds is not None
    if kind == "sum":
        g = plan_sum(bounds, epsilon, nb)
        if g.scale == 0:  # every row rounds to 0 (see sum_interval)
            return math.inf
        return math.ldexp(float(noise_half_width(g.scale, level_miss(level))), g.exponent)
    g = plan_mean(bounds, epsilon, nb).grid
    t = noise_half_width(g.scale, mean_miss(level))
    lower, upper = bounds
    if g.scale == 0:  # every row rounds to 0: the interval is the whole clip
        return (upper - lower) / 2
    spread = (upper - lower) * t / (n * g.q_hi) + mean_pad(lower, upper, g.exponent)
    return min(spread, (upper - lower) / 2)


@overload
def half_width(
    kind: str,
    *,
    epsilon: float,
    level: float = ...,
    clip: Mapping[Hashable, Sequence[float]],
    n: int | None = ...,
    adjacency: str = ...,
    grouped: bool = ...,
    max_rows: int | None = ...,
    max_groups: int | None = ...,
) -> pd.Series: ...


@overload
def half_width(
    kind: str,
    *,
    epsilon: float,
    level: float = ...,
    clip: Sequence[float] | None = ...,
    n: int | None = ...,
    adjacency: str = ...,
    grouped: bool = ...,
    max_rows: int | None = ...,
    max_groups: int | None = ...,
) -> float: ...


def half_width(
    kind: str,
    *,
    epsilon: float,
    level: float = 0.95,
    clip: Any = None,
    n: int | None = None,
    adjacency: str = "add_remove",
    grouped: bool = False,
    max_rows: int | None = None,
    max_groups: int | None = None,
) -> float | pd.Series:
    """The half-width of a release's ``ci=level`` interval, from public parameters only.

    Parameters
    ----------
    kind : {"count", "sum", "mean"}
        The release.
    epsilon : float
        Its ε (for several columns, the whole call's ε: split equally, as a
        release splits it).
    level : float, default 0.95
        The confidence level, in (0, 1).
    clip : (float, float) or dict, optional
        The clip bounds of a sum or mean; a mapping ``{column: (lower, upper)}``
        plans a several-column release.
    n : int, optional
        The mean only: an assumed number of rows (per key, when grouped).
    adjacency : {"add_remove", "substitute"}
        The budget's adjacency.
    grouped : bool, default False
        A grouped release (under substitute a row may move between keys).
    max_rows, max_groups : int, optional
        With a privacy unit: the release's contribution bounds (they multiply
        the noise scale, as in the release).

    Returns
    -------
    float, or pandas.Series indexed by column for a mapping
        In the release's units: rows for a count, data units for a sum or mean.

    Raises
    ------
    ValueError, TypeError
        For an unknown kind, a bad ε, level or clip, or ``n`` missing for a
        mean (or given for a count or sum).

    Notes
    -----
    Costs nothing and reads no data. Count and sum: exactly the ``t`` (count)
    or ``t·step`` (sum) of every interval the release gives. Mean: the
    half-width when the noisy complementary sums add up to the ``n`` rows'
    total and the mean is at least ``t`` grid steps from both bounds, i.e.
    ``(U − L)·t/(n·Q)`` plus one grid step; nearer a bound it is narrower, and
    it is never more than ``(U − L)/2``. A count of the frame the budget was
    set on is exact under substitute (half-width 0); this plans the count of a
    filtered frame.

    Examples
    --------
    >>> half_width("count", epsilon=0.5, level=0.9)
    5.0
    """
    kind = _check_kind(kind)
    eps = check_epsilon(epsilon)
    level_ = check_ci(level, "level")
    assert level_ is not None
    clips, rows = _check_arguments(kind, clip, n)
    nb = _neighbours(adjacency, grouped, max_rows, max_groups)
    if not clips:
        return _width(kind, eps, level_, None, rows, nb)
    share = eps / len(clips)
    widths = {col: _width(kind, share, level_, b, rows, nb) for col, b in clips.items()}
    if None in widths:
        return widths[None]
    return pd.Series(widths, dtype="float64")


def _bits(x: float) -> int:
    return int(struct.unpack("<q", struct.pack("<d", x))[0])


def _float(bits: int) -> float:
    return float(struct.unpack("<d", struct.pack("<q", bits))[0])


def epsilon_for(
    kind: str,
    *,
    half_width: float | Mapping[Hashable, float],
    level: float = 0.95,
    clip: Any = None,
    n: int | None = None,
    adjacency: str = "add_remove",
    grouped: bool = False,
    max_rows: int | None = None,
    max_groups: int | None = None,
) -> float:
    """The smallest ε whose ``ci=level`` interval is at most ``half_width`` wide.

    Parameters
    ----------
    kind : {"count", "sum", "mean"}
        The release.
    half_width : float or dict
        The wanted half-width, in the release's units; a mapping
        ``{column: half_width}`` (or one number for all) with a ``clip`` mapping.
    level, clip, n, adjacency, grouped, max_rows, max_groups
        As for :func:`half_width`.

    Returns
    -------
    float
        An ε with ``half_width(kind, epsilon=ε, ...) <= half_width`` while the
        next float below it gives more; for several columns, the whole call's
        ε (every column reaches its half-width).

    Raises
    ------
    ValueError
        If no ε reaches the half-width (a sum's grid step is never finer than
        about 2**-31 of the clip, and a noise scale of 1 grid step still has a
        quantile of 1 or more at most levels), or for bad arguments.

    Notes
    -----
    Costs nothing and reads no data. A binary search over floats on the
    exact plan: the half-width falls with ε, by steps (integer noise scales
    and quantiles), so the answer is the lower end of a step. Round it up,
    never down, before use.

    Examples
    --------
    >>> epsilon_for("count", half_width=5, level=0.9)
    0.41476968285868987
    >>> half_width("count", epsilon=epsilon_for("count", half_width=5, level=0.9), level=0.9)
    5.0
    """
    kind = _check_kind(kind)
    level_ = check_ci(level, "level")
    assert level_ is not None
    clips, rows = _check_arguments(kind, clip, n)
    nb = _neighbours(adjacency, grouped, max_rows, max_groups)
    columns: dict[Hashable, Clip | None] = dict(clips) if clips else {None: None}
    targets = _targets(half_width, columns)

    def reaches(total: float) -> bool:
        share = check_epsilon(total) / len(columns)
        try:
            return all(
                _width(kind, share, level_, b, rows, nb) <= targets[col]
                for col, b in columns.items()
            )
        except ValueError:  # ε too small to plan (a noise scale beyond what can be drawn)
            return False

    lo, hi = (_bits(x) for x in _SEARCH)
    if not reaches(_float(hi)):
        raise ValueError(
            f"no epsilon reaches a half-width of {given(half_width)} at level {level_:g}: "
            "ask for a wider interval or a lower level."
        )
    if reaches(_float(lo)):
        return _float(lo)
    while hi - lo > 1:  # reaches(hi) and not reaches(lo)
        mid = (lo + hi) // 2
        if reaches(_float(mid)):
            hi = mid
        else:
            lo = mid
    return _float(hi)


def _targets(half_width: object, columns: Mapping[Hashable, Clip | None]) -> dict[Hashable, float]:
    """The wanted half-width per column: non-negative finite numbers."""
    if isinstance(half_width, Mapping):
        if set(half_width) != set(columns):
            raise ValueError("`half_width` as a mapping must name exactly the columns of `clip`.")
        wanted = dict(half_width)
    else:
        wanted = dict.fromkeys(columns, half_width)
    out: dict[Hashable, float] = {}
    for col, value in wanted.items():
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise TypeError(f"`half_width` must be a non-negative number, got {given(value)}.")
        if not (math.isfinite(float(value)) and float(value) >= 0):
            raise ValueError(f"`half_width` must be a non-negative number, got {given(value)}.")
        out[col] = float(value)
    return out


#: Releases whose half-width depends on the number of rows (never read from the data).
_DEPENDS_ON_N = ("mean", "var", "std", "describe")


def entry_half_width(entry: LedgerEntry, level: float = 0.95) -> str:
    """The half-width at ``level`` of a recorded release, as the ledger's views show it.

    Read from the entry's public fields only (operation, ε, clip, adjacency,
    keys, privacy unit and bounds): the release's plan is rebuilt, and shown
    only if it gives the sensitivity and noise scale the entry recorded.

    Returns
    -------
    str
        A count (or histogram, crosstab): its exact ``t``, the number
        :func:`half_width` gives (``"0"`` for an exact count). A sum: ``t·step``
        on the grid, one figure per column (``"; "`` apart), each exactly
        :func:`half_width` of that column. ``"depends on n"`` for a mean,
        variance, standard deviation or describe (plan it with
        ``half_width("mean", n=...)``). Empty for a selection (argmax,
        quantiles), for entries that are not releases, and for an entry whose
        recorded figures its rebuilt plan does not reproduce.

    Examples
    --------
    >>> from fractions import Fraction
    >>> entry_half_width(LedgerEntry("count", Fraction(1, 2), sensitivity="1", noise_scale="2"))
    '6'
    >>> half_width("count", epsilon=0.5)
    6.0
    """
    operation = entry.operation.removeprefix("groupby.")
    grouped = entry.operation != operation or operation == "histogram"
    if operation in _DEPENDS_ON_N:
        return "depends on n"
    if operation not in ("count", "histogram", "sum"):
        return ""
    if entry.mechanism.startswith("exact"):  # the public row count: no noise
        return "0"
    try:
        nb = Neighbours.of(
            entry.adjacency,
            grouped,
            False,
            entry.max_rows,
            entry.max_groups,
            entry.privacy_unit,
        )
        if operation == "sum":
            if not entry.clip:
                return ""
            share = entry.epsilon / len(entry.clip)
            grids = [plan_sum(bounds, share, nb) for bounds in entry.clip]
            sensitivity = figures(g.delta * g.step for g in grids)
            scale = figures(g.scale * g.step for g in grids)
            widths = [_width("sum", share, level, bounds, 0, nb) for bounds in entry.clip]
        else:
            plan = plan_count(entry.epsilon, nb)
            sensitivity, scale = figures([plan.sensitivity]), figures([plan.scale])
            widths = [_width("count", entry.epsilon, level, None, 0, nb)]
    except (ValueError, ZeroDivisionError):  # not a plan this version would make
        return ""
    if (sensitivity, scale) != (entry.sensitivity, entry.noise_scale):
        return ""
    return "; ".join(exact_number(w) for w in widths)


register_half_width(entry_half_width)
