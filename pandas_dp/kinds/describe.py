"""``describe``: pandas' summary rows of numeric columns as one private release of parts.

A :class:`~pandas_dp.kinds.composite.Composite`: per column, one joint
release gives count, mean and std (a :class:`~pandas_dp.kinds.variance.Var`
part, :func:`pandas_dp.kinds.variance.plan_variance`), and one score table on
the public candidate grid gives the 25 %, 50 % and 75 % points (a
:class:`~pandas_dp.kinds.quantile.Quantiles` part, permute-and-flip,
:func:`pandas_dp.kinds.quantile.plan_quantile`).  The parts' statistics add up
across row slices; the ledger records one entry that states the split of ε.
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
from .argmax import MAX_CELLS
from .base import EXAMPLE_LOSSES, ExampleColumns, Kind, Rows
from .composite import Composite
from .quantile import Quantiles
from .signature import MAX_ROWS, RHO, Form, Param, Signature
from .sums import plan_mean
from .variance import Var, plan_variance, plan_variance_rho

__all__ = ["NO_INTERVAL", "QUANTILES", "ROWS", "Describe"]

#: The quantile levels of pandas' describe.
QUANTILES = (Fraction(1, 4), Fraction(1, 2), Fraction(3, 4))
#: The rows of the result, as pandas names them (min and max are left out: see Describe).
ROWS = ("count", "mean", "std", "25%", "50%", "75%")
#: Share of each column's ε: the count/mean/std release, then each quantile.
MOMENTS_SHARE = Fraction(1, 2)
QUANTILE_SHARE = Fraction(1, 6)
#: Why ``describe(ci=...)`` is refused, and what to call instead.
NO_INTERVAL = (
    "`describe` has no `ci=`, got ci={ci}: its quartiles are picked from the public grid by a "
    "selection mechanism (permute-and-flip), which adds no noise to a statistic and so has no "
    "noise interval. For intervals, release per column with `ci=`: `.dp.count(column, "
    "epsilon=..., ci=0.95)`, `.dp.mean(column, clip=..., epsilon=..., ci=0.95)`, "
    "`.dp.std(column, clip=..., epsilon=..., ci=0.95)`."
)


@dataclass(frozen=True, eq=False)
class Describe(Composite[pd.DataFrame, pd.DataFrame]):
    """count, mean, std and the quartiles of numeric columns, one release of parts.

    ``epsilon`` is split equally across the columns; within a column, half
    goes to the joint count/mean/std release (a :class:`~pandas_dp.kinds.variance.Var`
    part) and half to the quartiles, a sixth each (a
    :class:`~pandas_dp.kinds.quantile.Quantiles` part on one score table).
    min and max are not released: on a public grid the private 0- and
    1-quantiles score every point beyond the data equally (the 0-quantile's
    score is ``#(x < c)``, zero for every c below the minimum), so their
    answer would be close to uniform over those points, not an estimate.
    """

    planners: ClassVar = (plan_mean, plan_variance, plan_variance_rho)

    name: ClassVar[str] = "describe"

    epsilon: Fraction | None
    labels: tuple[Hashable, ...]
    clips: tuple[Clip, ...]
    grids: tuple[F64, ...]
    #: Under a ρ budget: ρ instead (``epsilon`` None), split as ε is; see :meth:`parts`.
    rho: Fraction | None = None

    @classmethod
    def of(
        cls,
        epsilon: Fraction | None,
        columns: object,
        clip: object,
        candidates: object,
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
        for name, given_map in (("clip", clip), ("candidates", candidates)):
            if not isinstance(given_map, Mapping):
                raise TypeError(
                    f"`{name}` must be a mapping {{column: ...}} naming every column, got "
                    f"{type(given_map).__name__}."
                )
            missing = [c for c in labels if c not in given_map]
            if missing:
                raise ValueError(f"`{name}` lacks column(s) {missing!r}: give each column's.")
        assert isinstance(clip, Mapping)
        assert isinstance(candidates, Mapping)
        clips = tuple(check_clip(clip[c]) for c in labels)
        grids = tuple(check_quantile_grid(candidates[c]) for c in labels)
        return cls(epsilon, labels, clips, grids, rho)

    @functools.cached_property
    def _parts(self) -> tuple[Kind[Any, Any], ...]:
        k = len(self.labels)
        quartiles = QUANTILE_SHARE * len(QUANTILES)
        parts: list[Kind[Any, Any]] = []
        for label, clip, grid in zip(self.labels, self.clips, self.grids, strict=True):
            if self.rho is not None:  # the quartiles at the largest ε with ε²/2 <= ρ/6 each
                share = self.rho / k
                moments = Var(None, label, clip, rho=share * MOMENTS_SHARE, moments=True)
                whole = share * quartiles
                quantiles = Quantiles(pure_epsilon(whole), label, QUANTILES, grid, rho=whole)
            else:
                assert self.epsilon is not None
                share = self.epsilon / k
                moments = Var(share * MOMENTS_SHARE, label, clip, moments=True)
                quantiles = Quantiles(share * quartiles, label, QUANTILES, grid)
            parts += [moments, quantiles]
        return tuple(parts)

    def parts(self) -> tuple[Kind[Any, Any], ...]:
        """Per column, the moments (half of its share) and the quartiles (a sixth each).

        Under ρ, each column's share of ρ is split like ε: half to the
        moments (discrete Gaussian, :func:`pandas_dp.kinds.variance.plan_variance_rho`),
        a sixth to each quartile, run by permute-and-flip at the largest ε
        with ``ε²/2 <= ρ/6`` (:func:`pandas_dp.core.zcdp.pure_epsilon`: it is not
        known to be bounded-range, so it is charged as any ε-DP release).
        The parts add up to at most ρ.
        """
        return self._parts

    def mechanism(self, entries: list[LedgerEntry]) -> str:
        k = len(self.labels)
        unit = "ε" if self.rho is None else "ρ"
        per = "" if k == 1 else f" of each of {k} columns ({unit}/{k} each)"
        return (
            f"count/mean/std: discrete_{'laplace' if self.rho is None else 'gaussian'} on "
            f"grid at 1/2{per}; 25%/50%/75%: permute_and_flip at 1/6 each{per}"
            + ("" if self.rho is None else " (ε = sqrt(2·ρ/6), charged ε²/2)")
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
        return tuple(
            [
                cls.of(e, [value], {value: c}, {value: grid}, rho=r)
                for c in columns.clips
                for e, r in EXAMPLE_LOSSES
            ]
        )

    def combined(self, answers: list[Any]) -> list[F64]:
        """Per column: count (rounded), mean, std, then the quartiles, keys down."""
        out: list[F64] = []
        for (count, mean, variance), points in zip(answers[::2], answers[1::2], strict=True):
            out.append(np.column_stack([np.rint(count), mean, np.sqrt(variance), points]))
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
    return tuple(columns) if isinstance(columns, list | tuple | pd.Index) else (columns,)


DESCRIBE = Signature(
    "describe",
    (
        Param(
            "columns",
            "Any",
            doc="""\
            columns : label or list of labels
                Numeric columns; missing values are skipped.""",
            positional=True,
        ),
        Param(
            "clip",
            "Any",
            doc="""\
            clip : dict or "auto"
                ``{column: (lower, upper)}``: public clip bounds of every column.
                ``"auto"``: each column's chosen privately by :meth:`bounds` (a
                quarter of ``epsilon``, after a count of its values with a
                twentieth, each split across the columns; the call still costs
                ``epsilon``), returned as the rows (grouped: columns)
                ``clip_lower`` and ``clip_upper``.""",
        ),
        Param(
            "candidates",
            "Any",
            doc="""\
            candidates : dict
                ``{column: grid}``: the public grid each column's quartiles are
                chosen from (finite, strictly increasing).""",
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
    "quartiles.",
    returns="""\
        $shape, like $pandas without ``min`` and ``max``.""",
    words={
        "shape": (
            "Indexed ``count, mean, std, 25%, 50%, 75%``, one column per column",
            "Indexed by ``keys``, columns ``(column, stat)`` with stat in ``count, mean, std, "
            "25%, 50%, 75%``",
        ),
        "pandas": ("``df[columns].describe()``", "``df.groupby(by)[columns].describe()``"),
    },
    notes="""\
        Costs ``epsilon``, split equally across the columns; each column's
        share ε_c is spent as ε_c/2 on one joint release that gives count,
        mean and std (see :meth:`var`: the count and the mean come from the
        complementary sums, so they cost nothing extra; its sensitivities
        under add_remove and substitute) and ε_c/6 on each of the 25 %, 50 %
        and 75 % points (permute-and-flip on one score table, as
        :meth:`quantile`). The ledger records one entry stating this split.
        With ``rho``: ρ is split the same way; the moments get discrete
        Gaussian noise (as :meth:`var` with ``rho``) and each quartile runs at
        the largest ε with ``ε²/2 <= ρ_c/6`` (permute-and-flip is ε-DP, hence
        ``ε²/2``-zCDP; it is not known to be bounded-range). Public:
        $public``clip``, the grids, ``epsilon``. min and max are left out: on a
        public grid the private 0- and 1-quantiles cannot tell the points
        beyond the data apart, so they would be close to a uniform pick, not an
        estimate; the quantile grid and the clip bounds are the honest public
        range.

        There is no ``ci=`` on ``describe``: its quartiles are picked by a
        selection mechanism (permute-and-flip), which adds no noise to a
        statistic and so has no noise interval. For intervals, release per
        column: :meth:`count`, :meth:`mean` or :meth:`std` with ``ci=``.""",
    grouped="""\
        A key with no rows is answered too, but only with noise: a count near
        0, a mean somewhere inside the clip, a std of 0 when the noisy count is
        0, and quartiles picked almost uniformly from the grid (not even in
        order).""",
    columns=_labels,
    table=True,
    clipped=True,
)
