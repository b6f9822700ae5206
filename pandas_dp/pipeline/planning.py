"""Planning before spending: the half-width a release would have, and the ε (or ρ) reaching one.

Data-free: :func:`half_width`, :func:`epsilon_for` and :func:`rho_for` read only
public parameters (kind, ε or ρ, level, clip bounds, the neighbour relation, and for the
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

from ..core.validation import check_adjacency, check_bound, check_epsilon, check_loss, given
from ..kinds.base import DEPENDS_ON_N, Kind, Neighbours
from ..mechanisms.accuracy import check_ci
from .run import KINDS as RELEASE_KINDS

__all__ = ["KINDS", "epsilon_for", "half_width", "rho_for"]

#: The kinds :func:`half_width` and :func:`epsilon_for` plan: the registry's plannable ones.
KINDS = tuple(name for name, kind in RELEASE_KINDS.items() if kind.plannable)

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


def _release(kind: object, loss: tuple[str, Fraction], clip: object) -> Kind[Any, Any]:
    """The release planned: the registry's kind named ``kind``, at ``loss``, with ``clip``.

    ``loss``: ``("epsilon", ε)`` (Laplace noise) or ``("rho", ρ)`` (Gaussian).
    """
    if not isinstance(kind, str) or kind not in KINDS:
        raise ValueError(f"`kind` must be one of {KINDS!r}, got {given(kind)}.")
    accountant, amount = loss
    if accountant == "rho":
        return RELEASE_KINDS[kind].planned(None, clip, amount)
    return RELEASE_KINDS[kind].planned(amount, clip)


def _check_n(release: Kind[Any, Any], nb: Neighbours, n: object) -> int | None:
    """``n`` if this release's half-width depends on it (then it must be given), else None."""
    depends = release.half_width(release.plan(nb), 0.5) == DEPENDS_ON_N
    if not depends:
        if n is not None:
            raise TypeError(
                f"`n` is for the mean only: a {release.name}'s noise does not depend on it."
            )
        return None
    if isinstance(n, bool) or not isinstance(n, numbers.Integral) or int(n) < 1:
        raise TypeError(
            f"the {release.name}'s half-width depends on the number of rows: pass an assumed "
            f"`n`, a positive integer (never read it from the data); got {given(n)}."
        )
    return int(n)


def _widths(release: Kind[Any, Any], level: float, nb: Neighbours, n: int | None) -> list[float]:
    """Each column's half-width (one for a count): the release's plan, exactly."""
    widths = release.half_width(release.plan(nb), level, n)
    assert isinstance(widths, tuple)
    return list(widths)


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
    epsilon: None = ...,
    rho: float,
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


@overload
def half_width(
    kind: str,
    *,
    epsilon: None = ...,
    rho: float,
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
    epsilon: float | None = None,
    rho: float | None = None,
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
    rho : float
        Instead of ``epsilon`` (exactly one): its ρ, for a release with
        ``rho=`` under a zCDP budget (discrete Gaussian noise; the intervals
        use its exact quantiles).
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
    >>> half_width("count", rho=0.01, level=0.95)  # σ² = 50
    14.0
    """
    if not isinstance(kind, str) or kind not in KINDS:
        raise ValueError(f"`kind` must be one of {KINDS!r}, got {given(kind)}.")
    loss = check_loss(epsilon, rho)
    level_ = check_ci(level, "level")
    assert level_ is not None
    release = _release(kind, loss, clip)
    nb = _neighbours(adjacency, grouped, max_rows, max_groups)
    widths = _widths(release, level_, nb, _check_n(release, nb, n))
    if not isinstance(clip, Mapping):
        return widths[0]
    return pd.Series(dict(zip(release.columns(), widths, strict=True)), dtype="float64")


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
    return _search(
        "epsilon", kind, half_width, level, clip, n, adjacency, grouped, max_rows, max_groups
    )


def rho_for(
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
    """The smallest ρ whose ``ci=level`` interval (discrete Gaussian) is at most ``half_width``.

    :func:`epsilon_for` for a release with ``rho=`` under a zCDP budget: the
    same parameters, the same binary search on the exact plan (round the
    answer up, never down).

    Parameters
    ----------
    kind : {"count", "sum", "mean"}
        The release.
    half_width : float or dict
        The wanted half-width, as for :func:`epsilon_for`.
    level, clip, n, adjacency, grouped, max_rows, max_groups
        As for :func:`half_width`.

    Returns
    -------
    float
        A ρ with ``half_width(kind, rho=ρ, ...) <= half_width`` while the
        next float below it gives more.

    Raises
    ------
    ValueError
        If no ρ reaches the half-width, or for bad arguments.

    Examples
    --------
    >>> rho_for("count", half_width=10, level=0.95)
    0.017371155519983295
    >>> half_width("count", rho=rho_for("count", half_width=10, level=0.95), level=0.95)
    10.0
    """
    return _search(
        "rho", kind, half_width, level, clip, n, adjacency, grouped, max_rows, max_groups
    )


def _search(
    accountant: str,
    kind: str,
    half_width: float | Mapping[Hashable, float],
    level: float,
    clip: Any,
    n: int | None,
    adjacency: str,
    grouped: bool,
    max_rows: int | None,
    max_groups: int | None,
) -> float:
    """The smallest ε (or ρ) whose half-width is at most ``half_width``: a search on floats."""
    level_ = check_ci(level, "level")
    assert level_ is not None
    probe = _release(kind, (accountant, Fraction(1)), clip)
    nb = _neighbours(adjacency, grouped, max_rows, max_groups)
    rows = _check_n(probe, nb, n)
    columns = probe.columns() if isinstance(clip, Mapping) else (None,)
    targets = _targets(half_width, columns)

    def reaches(total: float) -> bool:
        try:
            loss = (accountant, check_epsilon(total, accountant))
            widths = _widths(_release(kind, loss, clip), level_, nb, rows)
        except ValueError:  # too small to plan (a noise scale beyond what can be drawn)
            return False
        return all(w <= targets[col] for col, w in zip(columns, widths, strict=True))

    lo, hi = (_bits(x) for x in _SEARCH)
    if not reaches(_float(hi)):
        raise ValueError(
            f"no {accountant} reaches a half-width of {given(half_width)} at level {level_:g}: "
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


def _targets(half_width: object, columns: tuple[Hashable, ...]) -> dict[Hashable, float]:
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
