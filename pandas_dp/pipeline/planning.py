"""Planning before spending: the half-width a release would have, and the ε (or ρ) reaching one.

Data-free: :func:`half_width`, :func:`epsilon_for` and :func:`rho_for` read only
public parameters (kind, ε or ρ, level, clip bounds, the neighbour relation, and for the
mean an assumed number of rows) and build the very plan a release builds, so
the numbers are the ones its ``ci=`` interval gives.  Nothing is spent and no
frame is touched.
"""

from __future__ import annotations

import ast
import math
import numbers
import pkgutil
import struct
import sys
from collections.abc import Callable, Hashable, Mapping, Sequence
from fractions import Fraction
from typing import Any, overload

import pandas as pd

from .. import kinds
from ..core.validation import (
    check_adjacency,
    check_bound,
    check_epsilon,
    check_loss,
    given,
    loss_fields,
)
from ..kinds.base import DEPENDS_ON_N, Kind, Neighbours
from ..kinds.signature import REQUIRED, Param, Signature
from ..mechanisms.accuracy import check_ci

__all__ = [
    "KINDS",
    "SIGNATURES",
    "TABLES",
    "epsilon_for",
    "half_width",
    "release_kind",
    "rho_for",
    "smallest",
]

#: A privacy loss: ``("epsilon", ε)`` or ``("rho", ρ)``, exact.
Loss = tuple[str, Fraction]


def _signatures() -> dict[str, Signature]:
    """Every release declared beside its kind (:mod:`pandas_dp.kinds`), by name."""
    found: dict[str, Signature] = {}
    for info in pkgutil.iter_modules(kinds.__path__):
        module = sys.modules[f"{kinds.__name__}.{info.name}"]  # the room imported each
        found |= {v.name: v for v in vars(module).values() if isinstance(v, Signature)}
    return found


#: Every release's signature, by name: what a plan builds its releases with.
SIGNATURES = _signatures()
#: The tables, planned as the grouped counts they are (over public bins, or pairs of keys).
TABLES = {"histogram": "count", "crosstab": "count"}


def _default(param: Param) -> Any:
    return None if param.default == REQUIRED else ast.literal_eval(param.default)


def release_kind(name: str, loss: Loss, args: Mapping[str, Any]) -> Kind[Any, Any]:
    """The kind a call of release ``name`` with ``args`` (by name) builds at ``loss``.

    Its signature's own ``build``, on its defaults and ``args``: the very
    release the call makes.  A table (:data:`TABLES`) is a count of rows.
    """
    if name not in KINDS:
        raise ValueError(f"`kind` must be one of {KINDS!r}, got {given(name)}.")
    signature = SIGNATURES[TABLES.get(name, name)]
    full = {param.name: _default(param) for param in signature.params}
    unknown = sorted(set(args) - set(full), key=str)
    if unknown:
        raise TypeError(f"a {name} takes no {', '.join(f'`{u}`' for u in unknown)}.")
    full |= {**args, **loss_fields(*loss)}
    return signature.build(full, loss)


def _plannable(name: str) -> bool:
    """Whether the release ``name`` has a data-free interval (its kind is ``plannable``)."""
    probe = {"column": "x", "clip": (0.0, 1.0), "q": 0.5, "candidates": (0.0, 1.0)}
    signature = SIGNATURES[name]
    args = {k: v for k, v in probe.items() if k in {p.name for p in signature.params}}
    try:
        full = {param.name: _default(param) for param in signature.params} | args
        return type(signature.build(full, ("epsilon", Fraction(1)))).plannable
    except (TypeError, ValueError, KeyError):
        return False


#: The releases :func:`half_width`, :func:`epsilon_for` and ``df.dp.plan`` plan: every
#: release with a data-free interval, and the tables.
KINDS = tuple([name for name in SIGNATURES if _plannable(name)] + list(TABLES))

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


def _release(
    kind: object, loss: Loss, clip: object, options: Mapping[str, Any] | None = None
) -> Kind[Any, Any]:
    """The release planned: ``kind`` on a column named ``"column"`` at ``loss``, with ``clip``.

    ``loss``: ``("epsilon", ε)`` (Laplace noise) or ``("rho", ρ)`` (Gaussian).
    ``options``: the release's other arguments (a quantile's ``q`` and ``candidates``).
    """
    if not isinstance(kind, str) or kind not in KINDS:
        raise ValueError(f"`kind` must be one of {KINDS!r}, got {given(kind)}.")
    args = {k: v for k, v in (options or {}).items() if v is not None}
    params = {p.name: p for p in SIGNATURES[TABLES.get(kind, kind)].params}
    if clip is not None:
        args["clip"] = clip
    column = params.get("column")
    if kind not in TABLES and column is not None:
        # a release of one column: named, unless it is optional (count) or named by clip
        one = column.default == REQUIRED or (clip is not None and not isinstance(clip, Mapping))
        args["column"] = "column" if one else None
    return release_kind(kind, loss, args)


def _check_n(release: Kind[Any, Any], nb: Neighbours, n: object) -> int | None:
    """``n`` if this release's half-width depends on it (then it must be given), else None."""
    depends = release.half_width(release.plan(nb), 0.5) == DEPENDS_ON_N
    if not depends:
        if n is not None:
            raise TypeError(
                f"`n` is for the mean, var and std only: a {release.name}'s noise does not "
                "depend on it."
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
    q: Any = ...,
    candidates: Any = ...,
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
    q: Any = ...,
    candidates: Any = ...,
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
    q: Any = ...,
    candidates: Any = ...,
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
    q: Any = ...,
    candidates: Any = ...,
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
    q: Any = None,
    candidates: Any = None,
) -> float | pd.Series:
    """The half-width of a release's ``ci=level`` interval, from public parameters only.

    Parameters
    ----------
    kind : str
        The release, one of :data:`KINDS`: ``"count"``, ``"sum"``, ``"mean"``,
        ``"nunique"``, ``"var"``, ``"std"``, ``"quantile"``, ``"median"``, and
        the tables ``"histogram"`` and ``"crosstab"`` (grouped counts).
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
        The mean, var and std only: an assumed number of rows (per key, when
        grouped).
    adjacency : {"add_remove", "substitute"}
        The budget's adjacency.
    grouped : bool, default False
        A grouped release (under substitute a row may move between keys).
    max_rows, max_groups : int, optional
        With a privacy unit: the release's contribution bounds (they multiply
        the noise scale, as in the release).
    q, candidates : optional
        A quantile's level (or list of levels: a Series by level) and public
        grid (a median's grid): its half-width is by rank.

    Returns
    -------
    float, or pandas.Series indexed by column for a mapping (by level for a list of ``q``)
        In the release's units: rows for a count, distinct values for a
        nunique, data units for a sum, mean, var or std, rows of rank for a
        quantile (how much farther from ``q·n`` than the best grid point's its
        answer's ranks may be).

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
    filtered frame. Var and std: how far the answer may be from the clipped
    sample variance (std) at ``n`` rows whatever the data (see
    :meth:`pandas_dp.kinds.variance.Var.half_width`).

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
    release = _release(kind, loss, clip, {"q": q, "candidates": candidates})
    nb = _neighbours(adjacency, grouped or kind in TABLES, max_rows, max_groups)
    widths = _widths(release, level_, nb, _check_n(release, nb, n))
    if len(widths) > 1 and not isinstance(clip, Mapping):  # several levels: by level
        levels = [float(Fraction(repr(x))) for x in q]
        return pd.Series(dict(zip(levels, widths, strict=True)), dtype="float64")
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
    q: Any = None,
    candidates: Any = None,
) -> float:
    """The smallest ε whose ``ci=level`` interval is at most ``half_width`` wide.

    Parameters
    ----------
    kind : str
        The release, one of :data:`KINDS` (see :func:`half_width`).
    half_width : float or dict
        The wanted half-width, in the release's units; a mapping
        ``{column: half_width}`` (or one number for all) with a ``clip`` mapping.
    level, clip, n, adjacency, grouped, max_rows, max_groups, q, candidates
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
        "epsilon",
        kind,
        half_width,
        level,
        clip,
        n,
        adjacency,
        grouped,
        max_rows,
        max_groups,
        {"q": q, "candidates": candidates},
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
    q: Any = None,
    candidates: Any = None,
) -> float:
    """The smallest ρ whose ``ci=level`` interval (discrete Gaussian) is at most ``half_width``.

    :func:`epsilon_for` for a release with ``rho=`` under a zCDP budget: the
    same parameters, the same binary search on the exact plan (round the
    answer up, never down).

    Parameters
    ----------
    kind : str
        The release, one of :data:`KINDS` with a Gaussian form (a quantile
        given ``rho=`` runs at ``ε = sqrt(2ρ)``).
    half_width : float or dict
        The wanted half-width, as for :func:`epsilon_for`.
    level, clip, n, adjacency, grouped, max_rows, max_groups, q, candidates
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
        "rho",
        kind,
        half_width,
        level,
        clip,
        n,
        adjacency,
        grouped,
        max_rows,
        max_groups,
        {"q": q, "candidates": candidates},
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
    options: Mapping[str, Any],
) -> float:
    """The smallest ε (or ρ) whose half-width is at most ``half_width``: :func:`smallest`."""
    level_ = check_ci(level, "level")
    assert level_ is not None
    probe = _release(kind, (accountant, Fraction(1)), clip, options)
    nb = _neighbours(adjacency, grouped or kind in TABLES, max_rows, max_groups)
    rows = _check_n(probe, nb, n)
    columns = probe.columns() if isinstance(clip, Mapping) else (None,)
    targets = _targets(half_width, columns)

    def reaches(loss: Loss) -> bool:
        widths = _widths(_release(kind, loss, clip, options), level_, nb, rows)
        if columns == (None,):  # one target: every width (several levels of a quantile) meets it
            return all(w <= targets[None] for w in widths)
        return all(w <= targets[col] for col, w in zip(columns, widths, strict=True))

    found = smallest(accountant, reaches)
    if found is None:
        raise ValueError(
            f"no {accountant} reaches a half-width of {given(half_width)} at level {level_:g}: "
            "ask for a wider interval or a lower level."
        )
    return found


def smallest(accountant: str, reaches: Callable[[Loss], bool]) -> float | None:
    """The smallest float ε (or ρ) whose release ``reaches`` its targets; None if none does.

    A binary search over the floats of :data:`_SEARCH` (the half-width falls
    with the loss, by steps: integer noise scales and quantiles), so the
    answer is the lower end of a step.  A loss too small to plan (a noise
    scale beyond what can be drawn) does not reach.
    """

    def ok(bits: int) -> bool:
        try:
            return reaches((accountant, check_epsilon(_float(bits), accountant)))
        except ValueError:
            return False

    lo, hi = (_bits(x) for x in _SEARCH)
    if not ok(hi):
        return None
    if ok(lo):
        return _float(lo)
    while hi - lo > 1:  # ok(hi) and not ok(lo)
        mid = (lo + hi) // 2
        if ok(mid):
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
