"""``max_rows="auto"`` for a total: the cap that balances truncation against noise.

A count or a sum over rows bounded to ``τ`` rows per person loses the rows
above ``τ`` (truncation) and carries noise proportional to ``τ``.  Raising the
cap from ``c`` to the next candidate ``c'`` saves at most ``(c' − c)`` rows of
each person with more than ``c`` rows and adds ``(c' − c)`` times the
statistic's noise per unit of cap (its standard deviation ``s``, in rows): it
pays while more than about ``s`` persons lie above the cap.  The best cap in
hindsight therefore leaves about ``s`` persons above it (R2T, Dong et al.,
SIGMOD 2022, chooses the same trade-off by releasing truncated answers at
every cap; here one selection chooses the cap, and the statistic is released
once with it).  A high quantile of rows per person cuts far lower on a
heavy-tailed join (orders × returns of the same customers): a tenth of the
persons hold most of the rows there.

The selection is permute-and-flip (:mod:`pandas_dp.kinds.argmax`) over the
public caps :data:`CAPS` (ratio about √2 between neighbours, 1 to 2**20) on
the frame of rows per person, with the score of the ``j``-th cap::

    max(N_j − t, 0) + λ·j         (lower is better)

``N_j`` the persons with more than ``CAPS[j]`` rows (sensitivity 1, and under
add_remove every score moves one way: rate ε/Δ), ``t = ⌈s⌉`` the persons the
statistic can afford above its cap, ``λ = ⌈1/ε⌉`` (ε: the selection's) a
public penalty per step up, so that caps above the heaviest person, whose
``N_j`` are all 0, are chosen less and less often (each step up ``e``-fold
less), instead of uniformly up to 2**20.  ``s`` is read from the statistic's
share of the call's loss and the adjacency only: ``√2·f/ε`` (Laplace noise of
a count, ``f = 2`` under substitute, where a person's rows are replaced) or
``f/√(2ρ)`` (Gaussian).  Measured against the best fixed cap in hindsight
(``bench/bench_relational.py``): within 1.5 to 2.6 times its error on joins
with Pareto-tailed rows per person, where the 0.9 quantile is 20 to 100 times
off.
"""

from __future__ import annotations

import math
from collections.abc import Hashable
from dataclasses import dataclass
from fractions import Fraction
from typing import ClassVar

import numpy as np
import pandas as pd

from ..accounting.ledger import LedgerEntry
from ..core.noise import I64, RandomSource
from ..core.text import column_names, figures
from ..core.validation import check_column, numeric_values
from .argmax import MAX_CELLS, SelectPlan, permute_and_flip, rate_for
from .base import Declared, ExampleColumns, Kind, Neighbours, Rows, Stats, ledger_entry
from .quantile import quantile_table

__all__ = ["CAPS", "CapPlan", "RowsCap", "cap_scores", "noise_per_row"]

#: The public caps ``max_rows="auto"`` chooses from for a total: ``round(2**(k/2))``, 1 to 2**20.
CAPS = tuple(sorted({round(2 ** (k / 2)) for k in range(41)}))


def noise_per_row(loss: tuple[str, Fraction], adjacency: str) -> float:
    """The noise a cap adds per row of it, in rows: the standard deviation of a count's noise.

    A count bounded to ``τ`` rows per person has sensitivity ``τ`` (``2τ``
    under substitute): Laplace noise of standard deviation ``√2·τ·f/ε``,
    Gaussian ``τ·f/√(2ρ)``.  Data-free.
    """
    accountant, amount = loss
    factor = 1 if adjacency == "add_remove" else 2
    if accountant == "rho":
        return factor / math.sqrt(2 * float(amount))
    return math.sqrt(2) * factor / float(amount)


@dataclass(frozen=True)
class CapPlan:
    """The selection's plan, the persons a cap may leave above it, the penalty per step up."""

    select: SelectPlan
    target: int
    step: int

    def declared(self) -> tuple[Declared, ...]:
        return self.select.declared()


def cap_scores(table: I64, target: int, step: int) -> I64:
    """Minus the score of every cap, per key, from :func:`~.select.quantile_table`'s table."""
    m = table.shape[2] - 1
    n = table.sum(axis=(1, 2))
    at_most = np.cumsum(table.sum(axis=1)[:, :m], axis=1)  # #(x <= c_j)
    above = n[:, None] - at_most  # N_j = #(x > c_j)
    penalty = step * np.arange(m, dtype=np.int64)
    utility: I64 = -(np.maximum(above - target, 0) + penalty).astype(np.int64)
    return utility


@dataclass(frozen=True, eq=False)
class RowsCap(Kind[int, pd.Series]):
    """The cap on rows per person that balances truncation against noise (``max_rows="auto"``).

    ``column``: rows per person (the frame of :meth:`~pandas_dp.pipeline.run.Frame.units`);
    ``noise``: the loss of the statistic that will use the cap, which sets
    how many persons it can afford above it.
    """

    epsilon: Fraction
    column: Hashable
    noise: tuple[str, Fraction]
    grid: tuple[int, ...] = CAPS
    #: Given ``rho=``: the ρ charged (``epsilon`` is then the largest with ε²/2 <= ρ).
    rho: Fraction | None = None

    name: ClassVar[str] = "max_rows"

    def columns(self) -> tuple[Hashable, ...]:
        return (self.column,)

    def read(self, df: pd.DataFrame, n_keys: int) -> Rows:
        check_column(df, self.column)
        if n_keys * len(self.grid) > MAX_CELLS:
            raise ValueError(f"at most {MAX_CELLS // len(self.grid)} keys are supported here.")
        return Rows(len(df), (numeric_values(df, self.column),))

    def most_keys(self) -> int:
        return MAX_CELLS // len(self.grid)

    def plan(self, neighbours: Neighbours) -> CapPlan:
        """Δ: how far one person moves the persons above each cap (a count of rows)."""
        sensitivity = neighbours.count_sensitivity()
        rate = rate_for(self.epsilon, sensitivity, neighbours.monotone)
        select = SelectPlan(self.epsilon, 1, sensitivity, neighbours.monotone, rate)
        target = math.ceil(noise_per_row(self.noise, neighbours.adjacency))
        return CapPlan(select, target, math.ceil(1 / self.epsilon))

    def entry(self, plan: CapPlan, neighbours: Neighbours, keys: int | None) -> LedgerEntry:
        return ledger_entry(
            self,
            plan,
            neighbours,
            keys,
            operation=f"max_rows(t={plan.target})",
            epsilon=self.epsilon,
            rho=self.rho,
            columns=column_names([self.column]),
            mechanism=f"permute_and_flip over caps: persons above beyond {plan.target}, "
            f"+{plan.step} per step of √2",
            sensitivity=figures([plan.select.sensitivity]),
            noise_scale=figures([plan.select.noise_scale]),
        )

    def tally(self, plan: CapPlan, rows: Rows, codes: I64 | None, n_keys: int) -> Stats:
        grid = np.asarray(self.grid, dtype=np.float64)
        return (quantile_table(rows.arrays[0], codes, n_keys, grid),)

    def noise_free(self, plan: CapPlan, stats: Stats, n_keys: int) -> tuple[I64]:
        """The utilities (minus each cap's score) per key."""
        return (cap_scores(stats[0], plan.target, plan.step),)

    @classmethod
    def examples(cls, columns: ExampleColumns) -> tuple[RowsCap, ...]:
        grid = (1, 2, 4)
        return (
            cls(Fraction(1), columns.value, ("epsilon", Fraction(3)), grid),
            cls(Fraction(1, 2), columns.value, ("rho", Fraction(1, 2)), grid),
        )

    def finish(self, plan: CapPlan, stats: Stats, source: RandomSource, n_keys: int) -> I64:
        return permute_and_flip(source, *self.noise_free(plan, stats, n_keys), plan.select.rate)

    def shape_one(self, answer: I64) -> int:
        return int(self.grid[int(answer[0])])

    def shape_many(self, answer: I64, keys: pd.Index) -> pd.Series:
        return pd.Series(np.asarray(self.grid)[answer], index=keys, name=self.column)
