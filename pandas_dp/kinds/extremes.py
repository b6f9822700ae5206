"""The largest and smallest values, privately and with no bound given: ``df.dp.max``, ``min``.

Durfee, "Unbounded Differentially Private Quantile and Maximum Estimation"
(NeurIPS 2023): AboveThreshold over a fine geometric ladder, read upwards,
stopping at the first candidate with few values above it.  The ladder here is
:data:`SIGNED`: the candidates of :mod:`pandas_dp.kinds.clip_bounds` and
their negatives (``±2**(k/8)`` from ``2**-20`` to ``2**100``, and 0), so the
data may have any sign and no bound is needed::

    ρ ~ dLap(Δ/ε₁),  ν_j ~ dLap(c·Δ/ε₂)
    max = the first candidate c_j with  #{x > c_j} + ν_j ≤ T + ρ

(:func:`pandas_dp.kinds.clip_bounds.above_threshold`, its privacy argument;
``ε₁ = ¾ε``, ``ε₂ = ¼ε``, ``T = ⌈⅛·(Δ/ε₁ + c·Δ/ε₂)⌉``: :data:`THRESHOLD`
noise scales, 1 row at ``epsilon=1``); ``min`` is the same on ``-x``,
negated.  What it estimates is a *high quantile*: the point where a few
values (about ``T`` plus the noise) are left above, within a ladder step
(9%).  The largest value itself cannot be released with bounded noise: one
person can move it anywhere.  On a lognormal column (median 60,000, σ = 0.5)
at ``epsilon=1`` the median relative error is about 29% at n = 100 and 18% at
n = 10,000, above twice the maximum in about 1% of runs
(``bench/bench_extremes.py``).  A key with no values answers the
bottom of the ladder (about ``-1.3e30`` for a max).
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from ..accounting.ledger import LedgerEntry
from ..core.noise import F64, I64, RandomSource
from ..core.text import column_names, figures
from ..core.validation import check_column, numeric_values, selection_loss
from .base import ExampleColumns, Kind, Neighbours, Rows, Stats, ledger_entry
from .clip_bounds import (
    CANDIDATES,
    STEPS,
    SearchPlan,
    above_threshold,
    histogram,
    plan_search,
    tail_counts,
)
from .signature import EPSILON, MAX_ROWS, NUMERIC, RHO_SELECT, Form, Signature

__all__ = ["MAX", "MIN", "SIGNED", "THRESHOLD", "Extreme"]

#: The ladder: ``-2**100 ... -2**-20, 0, 2**-20 ... 2**100`` in steps of 2**(1/8).
SIGNED: F64 = np.concatenate([-CANDIDATES[:0:-1], CANDIDATES])
#: The tail count the search stops at, before noise, in noise scales.
THRESHOLD = Fraction(1, 8)
SIDES = ("max", "min")


@dataclass(frozen=True)
class Extreme(Kind[float, pd.Series]):
    """A private estimate of the largest (``side="max"``) or smallest value of ``column``."""

    epsilon: Fraction
    column: Hashable
    side: str = "max"
    #: Given ``rho=``: the ρ charged (``epsilon`` is then the largest with ε²/2 <= ρ).
    rho: Fraction | None = None
    #: A public point the search starts from (a max reads the ladder upwards from it, a
    #: min downwards): ``describe`` starts from the other end of a column's clip.
    start: float | None = None

    planners: ClassVar = (plan_search,)
    name: ClassVar[str] = "extreme"

    def __post_init__(self) -> None:
        if self.side not in SIDES:
            raise ValueError(f"`side` must be one of {SIDES}, got {self.side!r}.")

    def columns(self) -> tuple[Hashable, ...]:
        return (self.column,)

    def read(self, df: pd.DataFrame, n_keys: int) -> Rows:
        check_column(df, self.column)
        return Rows(len(df), (numeric_values(df, self.column),))

    def plan(self, neighbours: Neighbours) -> SearchPlan:
        return plan_search(self.epsilon, neighbours, THRESHOLD)

    def entry(self, plan: SearchPlan, neighbours: Neighbours, keys: int | None) -> LedgerEntry:
        return ledger_entry(
            self,
            plan,
            neighbours,
            keys,
            operation=self.side,
            epsilon=self.epsilon,
            rho=self.rho,
            columns=column_names([self.column]),
            mechanism=f"above_threshold (discrete_laplace) on ±2**(k/{STEPS}), "
            f"threshold {plan.threshold}",
            sensitivity=figures([plan.sensitivity]),
            noise_scale=figures([float(plan.rho_scale), float(plan.nu_scale)]),
        )

    def tally(self, plan: SearchPlan, rows: Rows, codes: I64 | None, n_keys: int) -> Stats:
        values = np.asarray(rows.arrays[0], dtype=np.float64)
        return (histogram(values if self.side == "max" else -values, codes, n_keys, SIGNED),)

    def first(self) -> int:
        """The first candidate searched: the ladder's bottom, or the start's place in it."""
        if self.start is None:
            return 0
        start = self.start if self.side == "max" else -self.start
        return min(int(np.searchsorted(SIGNED, start, side="left")), SIGNED.size - 1)

    def noise_free(self, plan: SearchPlan, stats: Stats, n_keys: int) -> tuple[I64]:
        """The values above each candidate searched (below minus it, for ``min``), per key."""
        return (tail_counts(stats[0], n_keys, SIGNED)[:, self.first() :],)

    @classmethod
    def examples(cls, columns: ExampleColumns) -> tuple[Extreme, ...]:
        one = Fraction(1)
        return (
            *(cls(one, columns.value, side) for side in SIDES),
            cls(one, columns.value, "max", start=columns.clips[0][0]),
        )

    def finish(self, plan: SearchPlan, stats: Stats, source: RandomSource, n_keys: int) -> F64:
        stop = above_threshold(source, *self.noise_free(plan, stats, n_keys), plan)
        found: F64 = SIGNED[self.first() + stop]
        return found if self.side == "max" else -found

    def shape_one(self, answer: F64) -> float:
        return float(answer[0])

    def shape_many(self, answer: F64, keys: pd.Index) -> pd.Series:
        return pd.Series(answer, index=keys, name=self.column)


# ------------------------------------------------------------------ signatures


def _builder(side: str) -> Any:
    def build(args: Mapping[str, Any], loss: tuple[str, Fraction]) -> Extreme:
        epsilon, charged = selection_loss(*loss)
        return Extreme(epsilon, args["column"], side, rho=charged)

    return build


_NOTES = """\
    A private {what} needs no bound: AboveThreshold (the sparse vector
    technique, exact discrete Laplace noise) reads the public ladder
    ``±2**(k/8)`` (``2**-20`` to ``2**100``, and 0){order} and stops at
    the first point with few values {beyond} it (Durfee, NeurIPS 2023).
    The answer is a point of the ladder near a *high quantile*{low}: about
    ``T`` values, plus noise, lie {beyond} it (``T = ⌈(4/3 + 4)/(8·epsilon)⌉``
    rows: 1 at ``epsilon=1``). The {what} itself cannot be released with
    bounded noise, since one person can move it anywhere: this is where the
    {top} of the data is, to within a few values and a ladder step (9%).
    Costs ``epsilon``: 3/4 noises the threshold, 1/4 the counts; count
    sensitivity 1 (``max_rows``, twice under substitute, with a privacy
    unit). Public: $public the ladder, the threshold, ``epsilon``."""

MAX = Signature(
    "max",
    (NUMERIC, EPSILON, RHO_SELECT, MAX_ROWS),
    (Form(("float", "pd.Series")),),
    _builder("max"),
    summary="A private estimate of the largest value of ``column``$per_key, with no bound given.",
    returns="A point of the public ladder. $indexed",
    notes=_NOTES.format(
        what="maximum", order=" upwards", beyond="above", low=" (not the largest value)", top="top"
    ),
    grouped="""\
        Each key runs its own search (count sensitivity 2 under substitute: a
        row may leave one key and join another). A key with no values answers
        the bottom of the ladder, about ``-1.3e30``.""",
)

MIN = Signature(
    "min",
    (NUMERIC, EPSILON, RHO_SELECT, MAX_ROWS),
    (Form(("float", "pd.Series")),),
    _builder("min"),
    summary="A private estimate of the smallest value of ``column``$per_key, with no bound given.",
    returns="A point of the public ladder. $indexed",
    notes=_NOTES.format(
        what="minimum",
        order=" downwards",
        beyond="below",
        low=" from below (not the smallest value)",
        top="bottom",
    ),
    grouped="""\
        Each key runs its own search (count sensitivity 2 under substitute: a
        row may leave one key and join another). A key with no values answers
        the top of the ladder, about ``1.3e30``.""",
)
