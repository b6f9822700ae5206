"""Composite kinds: a release made of parts, in one pass, under one reservation.

A :class:`Composite` declares its parts (:meth:`Composite.parts`: kinds, each
with its share of the loss); everything else of it is theirs, in order:

- its plan is the tuple of their plans, and what it declares (the sensitivity
  oracle's :meth:`~pandas_dp.kinds.base.Kind.declared`) is theirs;
- it reads the rows each part reads (:class:`~pandas_dp.kinds.base.Rows` with
  ``splits``), and with a privacy unit one bounding keeps the same rows for
  every part (one neighbour relation: each part's sensitivity holds on the
  bounded rows, and the parts compose sequentially);
- its statistics are theirs, with a header of how many arrays each gave, so
  two slices combine and a selection of keys recodes part by part;
- its noise is theirs, drawn in the parts' order, and its answer combines
  their answers (:meth:`Composite.combined`);
- its one ledger entry states each part's mechanism, sensitivities, noise
  scales and clips; its loss is the whole.

``describe`` (moments and quartiles per column) and ``cov``/``corr`` (the
variances of a sum and a difference) are composites.  A part never bounds its
rows per candidate (:meth:`~pandas_dp.kinds.base.Kind.cells`): one bounding
serves all the parts.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Hashable
from typing import Any, TypeVar

import numpy as np
import pandas as pd

from ..accounting.ledger import LedgerEntry
from ..core.noise import I64, RandomSource
from ..core.text import column_names
from .base import DEPENDS_ON_N, Declared, Kind, Neighbours, Rows, Stats, ledger_entry

__all__ = ["Composite"]

One = TypeVar("One")
Many = TypeVar("Many")


class Composite(Kind[One, Many]):
    """A release of several parts, run as one: see the module docstring.

    A subclass is a frozen dataclass with ``epsilon`` (and ``rho``) fields:
    :meth:`parts` builds the parts with their shares of it (so
    :meth:`~pandas_dp.kinds.base.Kind.at` gives the same composite at another
    loss), :meth:`combined` joins their answers, and it shapes the result.
    """

    @abstractmethod
    def parts(self) -> tuple[Kind[Any, Any], ...]:
        """The parts, in the order they are tallied, noised and combined."""

    @abstractmethod
    def combined(self, answers: list[Any]) -> Any:
        """This release's answer from the parts' (what each part's ``finish`` returned)."""

    def mechanism(self, entries: list[LedgerEntry]) -> str:
        """The ledger's mechanism text: by default each part's, ``; `` apart."""
        return "; ".join(entry.mechanism for entry in entries)

    # ------------------------------------------------------------- the parts'

    def columns(self) -> tuple[Hashable, ...]:
        return tuple(dict.fromkeys(c for part in self.parts() for c in part.columns()))

    def read(self, df: pd.DataFrame, n_keys: int) -> Rows:
        rows = [part.read(df, n_keys) for part in self.parts()]
        for part, read in zip(self.parts(), rows, strict=True):
            if part.cells(read)[0] is not None:
                raise TypeError(f"a part of {self.name} bounds rows per candidate: not supported.")
        arrays = tuple(a for read in rows for a in read.arrays)
        return Rows(len(df), arrays, tuple(len(read.arrays) for read in rows))

    def most_keys(self) -> int | None:
        caps = [cap for part in self.parts() if (cap := part.most_keys()) is not None]
        return min(caps) if caps else None

    def plan(self, neighbours: Neighbours) -> tuple[Any, ...]:
        return tuple(part.plan(neighbours) for part in self.parts())

    def declared(self, plan: Any) -> tuple[Declared, ...]:
        return tuple(
            block
            for part, own in zip(self.parts(), plan, strict=True)
            for block in part.declared(own)
        )

    def half_width(self, plan: Any, level: float, n: int | None = None) -> tuple[float, ...] | str:
        return DEPENDS_ON_N

    def entry(self, plan: Any, neighbours: Neighbours, keys: int | None) -> LedgerEntry:
        entries = [
            part.entry(own, neighbours, keys) for part, own in zip(self.parts(), plan, strict=True)
        ]
        return ledger_entry(
            self,
            plan,
            neighbours,
            keys,
            epsilon=getattr(self, "epsilon", None),
            rho=getattr(self, "rho", None),
            columns=column_names(self.columns()),
            mechanism=self.mechanism(entries),
            sensitivity="; ".join(e.sensitivity for e in entries if e.sensitivity),
            noise_scale="; ".join(e.noise_scale for e in entries if e.noise_scale),
            clip=tuple(clip for e in entries for clip in e.clip),
        )

    def tally(self, plan: Any, rows: Rows, codes: I64 | None, n_keys: int) -> Stats:
        stats = [
            part.tally(own, part_rows, codes, n_keys)
            for part, own, part_rows in zip(self.parts(), plan, rows.parts(), strict=True)
        ]
        widths = np.array([len(s) for s in stats], dtype=np.int64)
        return (widths, *(a for s in stats for a in s))

    def combine(self, a: Stats, b: Stats) -> Stats:
        joined = [
            part.combine(x, y)
            for part, x, y in zip(self.parts(), _split(a), _split(b), strict=True)
        ]
        return (a[0], *(array for stats in joined for array in stats))

    def recode(self, stats: Stats, mapping: I64, n_keys: int) -> Stats:
        moved = [
            part.recode(own, mapping, n_keys)
            for part, own in zip(self.parts(), _split(stats), strict=True)
        ]
        return (stats[0], *(array for s in moved for array in s))

    def noise_free(self, plan: Any, stats: Stats, n_keys: int) -> tuple[np.ndarray, ...]:
        return tuple(
            block
            for part, own, part_stats in zip(self.parts(), plan, _split(stats), strict=True)
            for block in part.noise_free(own, part_stats, n_keys)
        )

    def finish(self, plan: Any, stats: Stats, source: RandomSource, n_keys: int) -> Any:
        answers = [
            part.finish(own, part_stats, source, n_keys)
            for part, own, part_stats in zip(self.parts(), plan, _split(stats), strict=True)
        ]
        return self.combined(answers)


def _split(stats: Stats) -> list[Stats]:
    """A composite's statistics, part by part (the header says how many arrays each gave)."""
    out, start = [], 1
    for width in stats[0].tolist():
        out.append(tuple(stats[start : start + width]))
        start += width
    return out
