"""What every release is made of: the neighbour relation, and the steps a kind supplies.

:class:`Neighbours` is the one value that says which datasets are neighbours
for a release (adjacency; whether the release is a vector over public keys;
whether the row count is public), and the one place where a person's reach on
a count or a clipped sum is written down.  Every plan takes it.

:class:`Kind` is a release kind (count, sum, mean, argmax, quantile, ...):
its validated public arguments and the steps that only it knows.  The
pipeline in :mod:`pandas_dp.release` runs them in one fixed order::

    read → plan → encode keys → reserve ε → tally → commit → finish → shape

``tally`` computes exact integer statistics that add up across row slices
(:class:`Rows` slices), so a statistic computed on part of the data adds to
another part's; ``finish`` alone draws noise.
"""

from __future__ import annotations

import functools
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, ClassVar, Generic, TypeVar

import pandas as pd

from .ledger import LedgerEntry
from .noise import I64, RandomSource
from .validation import ADJACENCIES

__all__ = ["Kind", "Neighbours", "Rows", "Stats", "grouped_operation"]

_Num = TypeVar("_Num", int, float, Fraction)
One = TypeVar("One")
Many = TypeVar("Many")

#: Exact integer statistics of a release: arrays that add up across row slices.
Stats = tuple[I64, ...]


@dataclass(frozen=True)
class Neighbours:
    """Which datasets are neighbours for one release: the input of every privacy map.

    Attributes
    ----------
    adjacency : {"add_remove", "substitute"}
        One person added or removed, or one person's row changed.
    grouped : bool
        The release is a vector over public keys: under substitute a changed
        row may leave one key and join another.
    n_public : bool
        The frame's row count is public (substitute, the rows the budget was
        set on, and only the row count itself).
    """

    adjacency: str
    grouped: bool = False
    n_public: bool = False

    def __post_init__(self) -> None:
        if self.adjacency not in ADJACENCIES:
            raise ValueError(f"`adjacency` must be one of {ADJACENCIES}, got {self.adjacency!r}.")
        if self.n_public and (self.adjacency != "substitute" or self.grouped):
            raise ValueError("the row count is public only under substitute, ungrouped.")

    @staticmethod
    @functools.cache
    def of(adjacency: str, grouped: bool = False, n_public: bool = False) -> Neighbours:
        """The relation, built and checked once per distinct value (it is immutable)."""
        return Neighbours(adjacency, grouped, n_public)

    @property
    def monotone(self) -> bool:
        """One person moves every score the same way (add_remove, one row per person)."""
        return self.adjacency == "add_remove"

    def per_key(self) -> Neighbours:
        """The relation inside one key of a grouped release (parallel composition)."""
        return Neighbours(self.adjacency)

    def count_sensitivity(self) -> int:
        """How far one person moves a count (L1 over keys when grouped)."""
        if self.adjacency == "add_remove":
            return 1
        if self.grouped:
            return 2  # a changed row leaves one key and joins another
        return 0 if self.n_public else 1

    def sum_sensitivity(self, lower: _Num, upper: _Num) -> _Num:
        """How far one person moves a sum of rows in ``[lower, upper]`` (any units)."""
        reach = max(abs(lower), abs(upper))
        if self.adjacency == "add_remove":
            return reach
        if self.grouped:
            return 2 * reach
        # A row's value may change, or (missing values, filtered frames) a value may
        # appear or disappear.
        return max(upper - lower, reach)

    def pair_sensitivity(self, width: _Num) -> _Num:
        """How far one person moves the mean's pair (Σ(x − L), Σ(U − x)) in L1."""
        return width if self.adjacency == "add_remove" else 2 * width


def grouped_operation(name: str, keys: int | None) -> str:
    """The operation a ledger entry names: ``groupby.name`` for a release over keys."""
    return name if keys is None else f"groupby.{name}"


@dataclass(frozen=True)
class Rows:
    """The row-aligned inputs of a release's statistics: ``n`` rows, numpy arrays or Series."""

    n: int
    arrays: tuple[Any, ...] = ()

    def slice(self, start: int, stop: int) -> Rows:
        """Rows ``start:stop``: what one partition of the data would hold."""
        stop = min(stop, self.n)
        return Rows(
            max(stop - start, 0),
            tuple(
                a.iloc[start:stop] if isinstance(a, pd.Series) else a[start:stop]
                for a in self.arrays
            ),
        )


class Kind(ABC, Generic[One, Many]):
    """A release kind: validated public arguments, and the steps only this kind knows.

    ``One`` is the type of an ungrouped answer, ``Many`` of a grouped one.
    """

    #: The plan functions of this kind (pure functions of public parameters, cached).
    planners: ClassVar[tuple[Callable[..., Any], ...]] = ()

    epsilon: Any

    def counts_rows(self) -> bool:
        """Whether this release is the frame's row count (public under substitute, own rows)."""
        return False

    @abstractmethod
    def read(self, df: pd.DataFrame, n_keys: int) -> Rows:
        """Check the columns and dtypes this release reads (never their values); its inputs."""

    @abstractmethod
    def plan(self, neighbours: Neighbours) -> Any:
        """The privacy map, from public parameters only: sensitivity, grid, scale or rate."""

    @abstractmethod
    def entry(self, plan: Any, neighbours: Neighbours, keys: int | None) -> LedgerEntry:
        """What the ledger records of this release (``keys``: how many, when grouped).

        Public parameters only; the operation is named by :func:`grouped_operation`.
        """

    @abstractmethod
    def tally(self, plan: Any, rows: Rows, codes: I64 | None, n_keys: int) -> Stats:
        """Exact integer statistics per key (code -1: dropped); they add up across row slices."""

    @abstractmethod
    def finish(self, plan: Any, stats: Stats, source: RandomSource) -> Any:
        """The noisy answer from the statistics: noise and post-processing only."""

    @abstractmethod
    def shape_one(self, answer: Any) -> One:
        """The ungrouped answer as the pandas/Python value the user gets."""

    @abstractmethod
    def shape_many(self, answer: Any, keys: pd.Index) -> Many:
        """The grouped answer, indexed by exactly the public keys."""
