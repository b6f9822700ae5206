"""Counts: rows (or a column's non-missing values) per key, and histograms over public bins.

The plan (:func:`plan_count`, :func:`plan_count_rho`) is computed from public
parameters only (epsilon or rho, and the neighbour relation
:class:`~pandas_dp.kinds.base.Neighbours`): sensitivity and an exact integer
noise scale.  The statistic (:func:`count_rows`) is an integer bincount that
adds up across row slices; the noise (:func:`release_counts`) is exact
discrete Laplace (or Gaussian) drawn only after the spend is committed.
:class:`Count` and :class:`Histogram` are the kinds, ``COUNT`` the signature
of ``df.dp.count``.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Hashable, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from ..accounting.events import Event
from ..accounting.ledger import LedgerEntry
from ..core.noise import (
    I64,
    Bools,
    Gauss,
    Noise,
    RandomSource,
    draw_noise,
    gaussian_scale,
    integer_scale,
)
from ..core.text import column_names, figures
from ..core.validation import (
    check_column,
    loss_fields,
)
from ..mechanisms.accuracy import (
    check_ci,
    count_interval,
    level_miss,
    units_half_width,
)
from .base import (
    EXAMPLE_LOSSES,
    Declared,
    ExampleColumns,
    Kind,
    Neighbours,
    Rows,
    Stats,
    interval_many,
    interval_one,
    ledger_entry,
)
from .signature import CI, CUT_UNIT, EPSILON, MAX_ROWS, RHO, Form, Param, Signature

__all__ = [
    "COUNT",
    "Count",
    "CountPlan",
    "Histogram",
    "count_events",
    "count_rows",
    "plan_count",
    "plan_count_rho",
    "release_counts",
]


@dataclass(frozen=True)
class CountPlan:
    """Noise on integer counts: discrete Laplace of ``scale = sensitivity / epsilon`` exactly.

    Under ρ (``rho`` set, ``epsilon`` None): the discrete Gaussian of ``σ² =
    sq_sensitivity / (2ρ)`` (``scale`` is then :class:`~pandas_dp.core.noise.Gauss`).
    """

    sensitivity: int
    epsilon: Fraction | None
    rho: Fraction | None = None
    #: ``Δ₂²`` (under ρ).
    sq_sensitivity: int = 0
    #: Under ρ: ``(m, b)``, at most m counts move, each by at most b
    #: (:meth:`~pandas_dp.kinds.base.Neighbours.count_coordinates`).
    coordinates: tuple[int, int] = (1, 0)
    #: The noise, computed once (plans are cached).
    scale: Noise = field(init=False, repr=False)

    def __post_init__(self) -> None:
        if self.rho is not None:
            noise: Noise = Gauss(gaussian_scale(self.sq_sensitivity, self.rho))
        else:
            assert self.epsilon is not None
            noise = Fraction(self.sensitivity) / self.epsilon
        object.__setattr__(self, "scale", noise)

    @functools.cached_property
    def texts(self) -> tuple[str, str]:
        """The ledger's sensitivity and noise scale (formatted once per plan)."""
        if isinstance(self.scale, Gauss):  # L2 sensitivity and σ
            return figures([math.sqrt(self.sq_sensitivity)]), figures([self.scale.sigma])
        return figures([self.sensitivity]), figures([self.scale])

    def declared(self) -> tuple[Declared]:
        """Δ₁ of the counts under ε; under ρ, Δ₂² and the counts moved and by how much."""
        if self.rho:
            return (Declared(sq=self.sq_sensitivity, coordinates=self.coordinates),)
        return (Declared(self.sensitivity),)


@functools.lru_cache(maxsize=512)  # plans are pure functions of public parameters
def plan_count(epsilon: Fraction, neighbours: Neighbours) -> CountPlan:
    sensitivity = neighbours.count_sensitivity()
    if sensitivity:
        integer_scale(sensitivity, epsilon)  # refuses, before the spend, a scale too large to draw
    return CountPlan(sensitivity, epsilon)


@functools.lru_cache(maxsize=512)  # plans are pure functions of public parameters
def plan_count_rho(rho: Fraction, neighbours: Neighbours) -> CountPlan:
    """A count under ρ: the discrete Gaussian of ``σ² = Δ₂²/(2ρ)`` (rounded up, exactly)."""
    sq = neighbours.count_sq_sensitivity()
    return CountPlan(neighbours.count_sensitivity(), None, rho, sq, neighbours.count_coordinates())


def count_events(plan: CountPlan, neighbours: Neighbours) -> tuple[Event, ...]:
    """The noise of integer counts, exactly: discrete Laplace, or the discrete Gaussian.

    Laplace: its exact scale and the L1 sensitivity (a vector of counts moves
    like one count by Δ₁). Gaussian: its exact ``σ²`` over the counts one
    person moves (:meth:`~pandas_dp.kinds.base.Neighbours.count_coordinates`;
    ungrouped, the one count by the plan's sensitivity).  None for the public
    row count, which is exact and free.
    """
    if not plan.sensitivity:
        return ()
    if isinstance(plan.scale, Gauss):
        moved, shift = (
            neighbours.count_coordinates() if neighbours.grouped else (1, plan.sensitivity)
        )
        return (
            Event("discrete_gaussian", sigma2=plan.scale.sigma2, sensitivity=shift, count=moved),
        )
    return (Event("discrete_laplace", scale=Fraction(plan.scale), sensitivity=plan.sensitivity),)


def count_rows(codes: I64 | None, n_keys: int, valid: Bools | None, n: int) -> I64:
    """Exact row counts per key (rows with code -1 or ``valid`` False dropped)."""
    if codes is None:
        total = n if valid is None else int(np.count_nonzero(valid))
        return np.array([total], dtype=np.int64)
    shifted = codes + 1
    if valid is not None:
        shifted[~valid] = 0
    return np.bincount(shifted, minlength=n_keys + 1)[1:].astype(np.int64)


def release_counts(src: RandomSource, counts: I64, plan: CountPlan) -> I64:
    """Noisy integer counts: ``counts + dLap(sensitivity / epsilon)``."""
    return counts + draw_noise(src, plan.scale, counts.size)


@dataclass(frozen=True)
class Count(Kind[int | pd.Series, pd.Series | pd.DataFrame]):
    """Rows, or non-missing values of ``column``, per key: discrete Laplace on integers.

    ``ci``: a confidence level; the answer then comes with its noise interval
    (:func:`~pandas_dp.mechanisms.accuracy.count_interval`).
    """

    name: ClassVar[str] = "count"
    totals: ClassVar[bool] = True
    planners: ClassVar = (plan_count, plan_count_rho)
    plannable: ClassVar[bool] = True
    #: Always grouped (a histogram's bins): the ledger names it without ``groupby.``.
    always_grouped: ClassVar[bool] = False

    epsilon: Fraction | None
    column: Hashable | None = None
    ci: float | None = None
    #: Under a ρ budget: the discrete Gaussian at this ρ instead (``epsilon`` None).
    rho: Fraction | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "ci", check_ci(self.ci))

    def half_width(self, plan: CountPlan, level: float, n: int | None = None) -> tuple[float, ...]:
        """``t`` in rows: ``P(|noise| > t) <= 1 − level`` (0 for the public row count)."""
        return (float(units_half_width(plan.scale, level_miss(level))),)

    def counts_rows(self) -> bool:
        return self.column is None

    def events(self, plan: CountPlan, neighbours: Neighbours) -> tuple[Event, ...]:
        return count_events(plan, neighbours)

    def counts_kept(self) -> bool:
        """A row count, not a column's: which rows are kept decides its missing values."""
        return self.column is None

    def from_counts(self, counts: I64) -> Stats:
        return (counts,)

    def noise_free(self, plan: CountPlan, stats: Stats, n_keys: int) -> tuple[I64, ...]:
        return (stats[0],)

    @classmethod
    def examples(cls, columns: ExampleColumns) -> tuple[Count, ...]:
        return tuple([cls(e, c, rho=r) for c in (None, columns.value) for e, r in EXAMPLE_LOSSES])

    def columns(self) -> tuple[Hashable, ...]:
        return () if self.column is None else (self.column,)

    def read(self, df: pd.DataFrame, n_keys: int) -> Rows:
        if self.column is None:
            return Rows(len(df))
        check_column(df, self.column)
        return Rows(len(df), (df[self.column],))

    def plan(self, neighbours: Neighbours) -> CountPlan:
        if self.rho is not None:
            return plan_count_rho(self.rho, neighbours)
        assert self.epsilon is not None
        return plan_count(self.epsilon, neighbours)

    def entry(self, plan: CountPlan, neighbours: Neighbours, keys: int | None) -> LedgerEntry:
        free = not plan.sensitivity  # the public row count: exact, costs nothing
        gauss = self.rho is not None
        return ledger_entry(
            self,
            plan,
            neighbours,
            keys,
            always_grouped=self.always_grouped,
            epsilon=None if gauss else Fraction(0) if free else self.epsilon,
            rho=Fraction(0) if gauss and free else self.rho,
            columns=column_names([] if self.column is None else [self.column]),
            mechanism="exact (n public)"
            if free
            else "discrete_gaussian"
            if gauss
            else "discrete_laplace",
            sensitivity=plan.texts[0],
            noise_scale=plan.texts[1],
        )

    def tally(self, plan: CountPlan, rows: Rows, codes: I64 | None, n_keys: int) -> Stats:
        valid = None
        if rows.arrays:
            valid = rows.arrays[0].notna().to_numpy(dtype=np.bool_)
        return (count_rows(codes, n_keys, valid, rows.n),)

    def finish(self, plan: CountPlan, stats: Stats, source: RandomSource, n_keys: int) -> Any:
        counts = release_counts(source, stats[0], plan)
        if self.ci is None:
            return counts
        return (counts, *count_interval(counts, plan.scale, self.ci))

    def shape_one(self, answer: Any) -> int | pd.Series:
        name = "count" if self.column is None else self.column
        if self.ci is None:
            return int(answer[0])
        return interval_one(answer, name)

    def shape_many(self, answer: Any, keys: pd.Index) -> pd.Series | pd.DataFrame:
        name = "count" if self.column is None else self.column
        if self.ci is None:
            return pd.Series(answer, index=keys, name=name)
        return interval_many(answer, keys)


@dataclass(frozen=True)
class Histogram(Count):
    """Rows per public bin of ``column``: a count over interval keys, named ``histogram``.

    The bins are the keys of the :class:`~pandas_dp.mechanisms.keys.Bins` grouping the
    pipeline runs it with; missing values and values outside the bins are
    dropped.  ``ci``: as :class:`Count`, a DataFrame ``estimate``, ``lower``,
    ``upper`` indexed by the bins.
    """

    name: ClassVar[str] = "histogram"
    plannable: ClassVar[bool] = False  # always grouped: plan it as a grouped count
    always_grouped: ClassVar[bool] = True

    column: Hashable | None = None

    def counts_kept(self) -> bool:
        """Missing values and values outside the bins have no key (dropped before bounding)."""
        return True

    def shape_many(self, answer: Any, keys: pd.Index) -> pd.Series | pd.DataFrame:
        if self.ci is None:
            return pd.Series(answer, index=keys, name="count")
        return interval_many(answer, keys)


def _count(args: Mapping[str, Any], loss: tuple[str, Fraction]) -> Count:
    return Count(column=args["column"], ci=args["ci"], **loss_fields(*loss))


COUNT = Signature(
    "count",
    (
        Param(
            "column",
            "Hashable | None",
            "None",
            """\
            column : label, optional
                Count the non-missing values of this column (like
                ``df[column].count()``) instead of rows.""",
            positional=True,
        ),
        EPSILON,
        RHO,
        CI,
        CUT_UNIT,
        MAX_ROWS,
    ),
    (
        Form(("int", "pd.Series"), {"ci": ("None", "None"), "cut": ("Literal[False]", "False")}),
        Form(("pd.Series", "pd.DataFrame"), {}),
    ),
    _count,
    summary="Noisy number of rows$per_key, or of non-missing values of ``column``.",
    returns="""\
        The exact count plus discrete Laplace noise$per_key; may be negative when
        tiny. $indexed With ``ci``: $interval. With ``cut``: the shares of persons the
        bounds cut, beside the estimate (see ``cut``).""",
    notes="""\
        Costs ``epsilon``. Sensitivity 1 under add_remove. Under substitute the
        row count of the frame the budget was set on is public: ``count()`` is
        returned exactly and costs nothing (ungrouped). The count of a column's
        non-missing values, and any count of a filtered frame, has sensitivity
        1 (a changed row may gain or lose a value, or enter or leave the
        filter). Discrete Laplace noise of scale Δ/ε. Public: $public``epsilon``.

        With ``ci``, ``[lower, upper] = estimate ± t`` where ``t`` is the exact
        discrete Laplace quantile: the true count lies inside with probability
        at least ``ci``. Computed from the released count and public
        parameters only (post-processing); ``pandas_dp.half_width("count",
        ...)`` gives ``t`` before anything is spent.""",
    grouped="""\
        A count per key: L1 sensitivity 1 under add_remove, 2 under substitute;
        with a privacy unit ``max_groups·max_rows`` (twice under substitute).""",
)
