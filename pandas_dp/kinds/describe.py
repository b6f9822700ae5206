"""``describe``: pandas' summary rows of numeric columns as one private release of parts.

A :class:`~pandas_dp.kinds.composite.Composite`: per column, one joint
release gives count, mean and std (a :class:`~pandas_dp.kinds.variance.Var`
part, :func:`pandas_dp.kinds.variance.plan_variance`), one joint release the
25 %, 50 % and 75 % points on a public grid (a
:class:`~pandas_dp.kinds.quantile.Quantiles` part: JointExp,
:func:`pandas_dp.kinds.quantile.plan_joint`), and two searches the min and
max (:class:`~pandas_dp.kinds.extremes.Extreme` parts, unbounded).  The
parts' statistics add up across row slices; the ledger records one entry
that states the split of ε.  Without a grid, each column's is
:data:`GRID_POINTS` points evenly over its clip (public: so are the bounds);
without ``clip``, the recipe of :mod:`pandas_dp.pipeline.recipes` finds the
bounds privately first.
"""

from __future__ import annotations

import functools
from collections.abc import Hashable, Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from ..accounting.ledger import LedgerEntry
from ..core.noise import F64
from ..core.validation import (
    Clip,
    check_clip,
    check_column,
    check_quantile_grid,
    given,
    loss_fields,
)
from ..core.zcdp import pure_epsilon
from ._joint import SUB
from .argmax import MAX_CELLS
from .base import EXAMPLE_LOSSES, ExampleColumns, Kind, Rows
from .clip_bounds import plan_search
from .composite import Composite
from .extremes import Extreme
from .quantile import Quantiles, plan_joint
from .signature import MAX_ROWS, RHO, Form, Param, Signature
from .sums import plan_mean
from .variance import Var, plan_variance, plan_variance_rho

__all__ = ["GRID_POINTS", "NO_INTERVAL", "QUANTILES", "ROWS", "SHARES", "Describe", "grid_of"]

#: The quantile levels of pandas' describe.
QUANTILES = (Fraction(1, 4), Fraction(1, 2), Fraction(3, 4))
#: The rows of the result, in pandas' order.
ROWS = ("count", "mean", "std", "min", "25%", "50%", "75%", "max")
#: Share of each column's ε: count/mean/std, the min, the quartiles (jointly), the max.
SHARES = (Fraction(3, 10), Fraction(1, 10), Fraction(1, 2), Fraction(1, 10))
#: Points of the grid made from a column's clip when none is given.
GRID_POINTS = 2001
#: Why ``describe(ci=...)`` is refused, and what to call instead.
NO_INTERVAL = (
    "`describe` has no `ci=`, got ci={ci}: its quartiles, min and max are chosen by selection "
    "mechanisms (the exponential mechanism, AboveThreshold), which add no noise to a statistic "
    "and so have no noise interval. For intervals, release per column with `ci=`: "
    "`.dp.count(column, epsilon=..., ci=0.95)`, `.dp.mean(column, clip=..., epsilon=..., "
    "ci=0.95)`, `.dp.std(column, clip=..., epsilon=..., ci=0.95)`."
)


def grid_of(clip: Clip) -> F64:
    """The public grid of a column without one: :data:`GRID_POINTS` points evenly over its clip."""
    lower, upper = clip
    grid: F64 = np.unique(np.linspace(lower, upper, GRID_POINTS))
    return grid


@dataclass(frozen=True, eq=False)
class Describe(Composite[pd.DataFrame, pd.DataFrame]):
    """count, mean, std, min, quartiles and max of numeric columns, one release of parts.

    ``epsilon`` is split equally across the columns; within a column
    (:data:`SHARES`): 3/10 to the joint count/mean/std release (a
    :class:`~pandas_dp.kinds.variance.Var` part), 1/2 to the quartiles, one
    joint release (a :class:`~pandas_dp.kinds.quantile.Quantiles` part), and
    1/10 each to the min and the max (:class:`~pandas_dp.kinds.extremes.Extreme`
    parts, which need no bound; each searches from the other end of the
    column's clip, public, so that few of its queries lie below the data).
    """

    planners: ClassVar = (plan_mean, plan_variance, plan_variance_rho, plan_joint, plan_search)

    name: ClassVar[str] = "describe"

    epsilon: Fraction | None
    labels: tuple[Hashable, ...]
    clips: tuple[Clip, ...]
    grids: tuple[F64, ...]
    #: Under a ρ budget: ρ instead (``epsilon`` None), split as ε is; see :meth:`parts`.
    rho: Fraction | None = None
    #: The quartiles' virtual points per grid point (public; see :class:`Quantiles`).
    sub: int = SUB

    @classmethod
    def of(
        cls,
        epsilon: Fraction | None,
        columns: object,
        clip: object,
        candidates: object = None,
        ci: object = None,
        rho: Fraction | None = None,
    ) -> Describe:
        if ci is not None:
            raise TypeError(NO_INTERVAL.format(ci=given(ci)))
        if isinstance(columns, str) or not isinstance(columns, list | tuple | pd.Index):
            columns = [columns]
        labels = tuple(columns)
        if not labels:
            raise ValueError("`columns` must name at least one column, got an empty list.")
        grids_given = {} if candidates is None else candidates
        for name, given_map in (("clip", clip), ("candidates", grids_given)):
            if not isinstance(given_map, Mapping):
                raise TypeError(
                    f"`{name}` must be a mapping {{column: ...}} naming every column, got "
                    f"{type(given_map).__name__}."
                )
        assert isinstance(clip, Mapping)
        assert isinstance(grids_given, Mapping)
        missing = [c for c in labels if c not in clip]
        if missing:
            raise ValueError(f"`clip` lacks column(s) {missing!r}: give each column's.")
        clips = tuple(check_clip(clip[c]) for c in labels)
        grids = tuple(
            check_quantile_grid(grids_given[c]) if c in grids_given else grid_of(bounds)
            for c, bounds in zip(labels, clips, strict=True)
        )
        return cls(epsilon, labels, clips, grids, rho)

    @functools.cached_property
    def _parts(self) -> tuple[Kind[Any, Any], ...]:
        k = len(self.labels)
        moments_share, low_share, quartiles_share, high_share = SHARES
        parts: list[Kind[Any, Any]] = []
        for label, clip, grid in zip(self.labels, self.clips, self.grids, strict=True):
            if self.rho is not None:  # selections at the largest ε with ε²/2 <= their ρ
                share = self.rho / k
                moments = Var(None, label, clip, rho=share * moments_share, moments=True)
                low, high = (
                    Extreme(pure_epsilon(share * s), label, side, rho=share * s, start=start)
                    for s, side, start in (
                        (low_share, "min", clip[1]),
                        (high_share, "max", clip[0]),
                    )
                )
                whole = share * quartiles_share
                quartiles = Quantiles(
                    pure_epsilon(whole), label, QUANTILES, grid, rho=whole, sub=self.sub
                )
            else:
                assert self.epsilon is not None
                share = self.epsilon / k
                moments = Var(share * moments_share, label, clip, moments=True)
                low = Extreme(share * low_share, label, "min", start=clip[1])
                high = Extreme(share * high_share, label, "max", start=clip[0])
                quartiles = Quantiles(share * quartiles_share, label, QUANTILES, grid, sub=self.sub)
            parts += [moments, low, quartiles, high]
        return tuple(parts)

    def parts(self) -> tuple[Kind[Any, Any], ...]:
        """Per column, in :data:`ROWS`' order: moments, min, quartiles, max (:data:`SHARES`).

        Under ρ, each column's share of ρ is split like ε: the moments get
        discrete Gaussian noise (:func:`pandas_dp.kinds.variance.plan_variance_rho`);
        the quartiles, min and max run at the largest ε with ``ε²/2`` at most
        their share (:func:`pandas_dp.core.zcdp.pure_epsilon`: charged as any
        ε-DP release).  The parts add up to at most ρ.
        """
        return self._parts

    def mechanism(self, entries: list[LedgerEntry]) -> str:
        k = len(self.labels)
        unit = "ε" if self.rho is None else "ρ"
        per = "" if k == 1 else f" of each of {k} columns ({unit}/{k} each)"
        return (
            f"count/mean/std: discrete_{'laplace' if self.rho is None else 'gaussian'} on "
            f"grid at 3/10; min, max: above_threshold at 1/10 each; 25%/50%/75%: joint "
            f"exponential mechanism at 1/2{per}"
            + ("" if self.rho is None else " (selections at ε = sqrt(2·share), charged ε²/2)")
        )

    def read(self, df: pd.DataFrame, n_keys: int) -> Rows:
        for column, grid in zip(self.labels, self.grids, strict=True):
            check_column(df, column)
            if n_keys * grid.size > MAX_CELLS:
                raise ValueError(
                    f"{n_keys} keys × {grid.size} candidates = {n_keys * grid.size} cells; at "
                    f"most {MAX_CELLS} are supported in one release. Use fewer keys or candidates."
                )
        return super().read(df, n_keys)

    @classmethod
    def examples(cls, columns: ExampleColumns) -> tuple[Describe, ...]:
        value, grid = columns.value, columns.grid
        return tuple(  # a clip across zero and one beside it (the parts have their own)
            [
                cls.of(e, [value], {value: c}, {value: grid}, rho=r).small()
                for c in (columns.clips[0], columns.clips[2])
                for e, r in EXAMPLE_LOSSES
            ]
        )

    def small(self) -> Describe:
        """The same release with 3 virtual points per grid point (the oracle enumerates them)."""
        return Describe(self.epsilon, self.labels, self.clips, self.grids, self.rho, sub=2)

    def combined(self, answers: list[Any]) -> list[F64]:
        """Per column: count (rounded), mean, std, min, the quartiles, max; keys down."""
        out: list[F64] = []
        for (count, mean, variance), low, points, high in zip(
            answers[::4], answers[1::4], answers[2::4], answers[3::4], strict=True
        ):
            out.append(
                np.column_stack([np.rint(count), mean, np.sqrt(variance), low, points, high])
            )
        return out

    def shape_one(self, answer: list[F64]) -> pd.DataFrame:
        return pd.DataFrame(
            {c: a[0] for c, a in zip(self.labels, answer, strict=True)}, index=list(ROWS)
        )

    def shape_many(self, answer: list[F64], keys: pd.Index) -> pd.DataFrame:
        blocks = [pd.DataFrame(a, index=keys, columns=list(ROWS)) for a in answer]
        return pd.concat(blocks, axis=1, keys=list(self.labels))


# ------------------------------------------------------------------ signatures


def _describe(args: Mapping[str, Any], loss: tuple[str, Fraction]) -> Describe:
    f = loss_fields(*loss)
    columns = args["columns"]
    labels = list(columns) if isinstance(columns, tuple | pd.Index) else columns
    return Describe.of(f["epsilon"], labels, args["clip"], args["candidates"], args["ci"], f["rho"])


def _labels(args: Mapping[str, Any]) -> tuple[Hashable, ...]:
    columns = args["columns"]
    if columns is None:  # every numeric column: found from the schema by the pipeline
        return ()
    return tuple(columns) if isinstance(columns, list | tuple | pd.Index) else (columns,)


DESCRIBE = Signature(
    "describe",
    (
        Param(
            "columns",
            "Any",
            "None",
            doc="""\
            columns : label or list of labels, optional
                Numeric columns; missing values are skipped. By default every
                numeric column (numbers, not booleans), as pandas, besides the
                keys and the privacy unit's column.""",
            positional=True,
        ),
        Param(
            "clip",
            "Any",
            "None",
            doc="""\
            clip : dict or "auto", optional
                ``{column: (lower, upper)}``: public clip bounds of every column
                (for count/mean/std). By default, or ``"auto"``: each column's
                chosen privately by :meth:`bounds` (a quarter of ``epsilon``,
                after a count of its values with a twentieth, each split
                across the columns; the call still costs ``epsilon``);
                ``"auto"`` also returns them as the rows (grouped: columns)
                ``clip_lower`` and ``clip_upper``.""",
        ),
        Param(
            "candidates",
            "Any",
            "None",
            doc="""\
            candidates : dict, optional
                ``{column: grid}``: the public grid each column's quartiles are
                chosen from (finite, strictly increasing). A column without one
                gets 2,001 points evenly over its clip bounds.""",
        ),
        Param(
            "epsilon",
            "float | None",
            "None",
            """\
            epsilon : float
                $cost Split equally across columns.""",
        ),
        RHO,
        MAX_ROWS,
        Param(
            "ci",
            "None",
            "None",
            """\
            ci : None
                Not available (a level raises TypeError saying why): see Notes.""",
        ),
        Param(
            "cut",
            "bool",
            "False",
            """\
            cut : bool, default False
                Also release, privately, how much the bounds cut: per column, the
                share of values outside its clip (a tenth of ``epsilon``, split
                across the columns) and, with a privacy unit, the share of persons
                with more rows than ``max_rows`` (another tenth), as the rows
                (grouped: columns under each column name) ``clipped_share`` and
                ``truncated_share``; the rest of ``epsilon`` goes to ``describe``.""",
        ),
    ),
    (Form(("pd.DataFrame", "pd.DataFrame")),),
    _describe,
    summary="pandas' ``describe`` rows of numeric columns$per_key, privately: count, mean, std, "
    "min, quartiles, max.",
    returns="""\
        $shape, like $pandas.""",
    words={
        "shape": (
            "Indexed ``count, mean, std, min, 25%, 50%, 75%, max``, one column per column",
            "Indexed by ``keys``, columns ``(column, stat)`` with stat in ``count, mean, std, "
            "min, 25%, 50%, 75%, max``",
        ),
        "pandas": ("``df[columns].describe()``", "``df.groupby(by)[columns].describe()``"),
    },
    notes="""\
        Costs ``epsilon``, split equally across the columns; each column's
        share ε_c is spent as 3ε_c/10 on one joint release that gives count,
        mean and std (see :meth:`var`: the count and the mean come from the
        complementary sums, so they cost nothing extra; its sensitivities
        under add_remove and substitute), ε_c/2 on the 25 %, 50 % and 75 %
        points jointly (one exponential mechanism over ordered triples of grid
        points, as :meth:`quantile` with a list) and ε_c/10 each on the min
        and the max (as :meth:`min` and :meth:`max`: no bound needed; each is
        a high quantile from its side, not the extreme value itself). The
        ledger records one entry stating this split. Without ``clip``, a
        twentieth of ``epsilon`` counts each column's values and a quarter
        finds its bounds first (as ``clip="auto"``), in entries of their own;
        the statistic gets the rest. With ``rho``: ρ is split the same way;
        the moments get discrete Gaussian noise (as :meth:`var` with
        ``rho``), the other parts run at the largest ε with ``ε²/2`` at most
        their share (ε-DP, hence ``ε²/2``-zCDP). Public: $public``clip``, the
        grids, ``epsilon``.

        There is no ``ci=`` on ``describe``: its quartiles, min and max are
        picked by selection mechanisms, which add no noise to a statistic and
        so have no noise interval. For intervals, release per column:
        :meth:`count`, :meth:`mean` or :meth:`std` with ``ci=``.""",
    grouped="""\
        A key with no rows is answered too, but only with noise: a count near
        0, a mean somewhere inside the clip, a std of 0 when the noisy count is
        0, quartiles picked almost uniformly from the grid, and a min at the
        top of the clip and a max at its bottom (each search stops at once).""",
    columns=_labels,
    table=True,
    clipped=True,
)
