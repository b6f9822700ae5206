"""What every release is made of: the neighbour relation, and the steps a kind supplies.

:class:`Neighbours` is the one value that says which datasets are neighbours
for a release (adjacency; whether the release is a vector over public keys;
whether the row count is public), and the one place where a person's reach on
a count or a clipped sum is written down.  Every plan takes it.

:class:`Kind` is a release kind (count, sum, mean, argmax, quantile, ...):
its validated public arguments and the steps that only it knows.  The
pipeline in :mod:`pandas_dp.pipeline.run` runs them in one fixed order::

    read → plan → encode keys → reserve ε → tally → commit → finish → shape

``tally`` computes exact integer statistics of a slice of rows
(:class:`Rows` slices); ``combine`` joins two slices' statistics into those of
both (an exact elementwise sum unless a kind says otherwise), so a partitioned
backend tallies each part and combines; ``finish`` alone draws noise.  A kind
is registered by existing: :data:`pandas_dp.pipeline.run.KINDS` lists every
concrete subclass of :class:`Kind`.
"""

from __future__ import annotations

import dataclasses
import functools
from abc import ABC, abstractmethod
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, ClassVar, Generic, NamedTuple, Self, TypeVar

import numpy as np
import pandas as pd

from ..accounting.events import Event
from ..accounting.ledger import LedgerEntry
from ..core.noise import I64, Bools, RandomSource
from ..core.text import numbers_text
from ..core.validation import ADJACENCIES, selection_loss

__all__ = [
    "DEPENDS_ON_N",
    "EXAMPLE_LOSSES",
    "Declared",
    "ExampleColumns",
    "Kind",
    "Neighbours",
    "Rows",
    "Stats",
    "exact_sum",
    "interval_many",
    "interval_one",
    "ledger_entry",
]

_Num = TypeVar("_Num", int, float, Fraction)
One = TypeVar("One")
Many = TypeVar("Many")

#: Exact integer statistics of a release: arrays that add up across row slices.
Stats = tuple[I64, ...]

#: The half-width of a release whose noise interval depends on the number of rows
#: (never read from the data: plan it with an assumed ``n``).
DEPENDS_ON_N = "depends on n"


def exact_sum(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a + b`` exactly: int64 when it cannot wrap, Python integers (object arrays) otherwise."""
    if a.dtype == np.int64 and b.dtype == np.int64:
        reach = sum(max(int(x.max(initial=0)), -int(x.min(initial=0))) for x in (a, b))
        if reach < 1 << 63:
            out: np.ndarray = a + b
            return out
    wide: np.ndarray = a.astype(object) + b.astype(object)
    return wide


@dataclass(frozen=True)
class Neighbours:
    """Which datasets are neighbours for one release: the input of every privacy map.

    Attributes
    ----------
    adjacency : {"add_remove", "substitute"}
        One person added or removed, or one person's data changed.
    grouped : bool
        The release is a vector over public keys: under substitute a changed
        row may leave one key and join another.
    n_public : bool
        The frame's row count is public (substitute, one row per person, the
        rows the budget was set on, and only the row count itself).
    max_rows : int or None
        None: one row is one person.  Else the frame has a privacy unit and a
        person contributes at most this many rows to each cell (the frame, one
        key, one candidate of a key): every one-row figure is multiplied.
    max_groups : int or None
        With a privacy unit, a grouped release keeps at most this many keys
        of one person.

    Notes
    -----
    With a privacy unit, a person's reach is the one-row reach times
    ``max_rows`` (times ``max_groups`` over the keys of a grouped release, in
    L1), and under substitute (a person's rows removed, then other rows
    added, by the triangle inequality) twice the add_remove figure.
    """

    adjacency: str
    grouped: bool = False
    n_public: bool = False
    max_rows: int | None = None
    max_groups: int | None = None
    #: The privacy unit's column, as the ledger records it (with ``max_rows``).
    privacy_unit: str | None = None

    def __post_init__(self) -> None:
        if self.adjacency not in ADJACENCIES:
            raise ValueError(f"`adjacency` must be one of {ADJACENCIES}, got {self.adjacency!r}.")
        if self.n_public and (self.adjacency != "substitute" or self.grouped or self.unit):
            raise ValueError(
                "the row count is public only under substitute, ungrouped, one row per person."
            )
        if (self.max_rows is None) != (self.privacy_unit is None):
            raise ValueError("`max_rows` goes with a privacy unit, and a privacy unit with it.")
        if self.max_rows is not None and self.max_rows < 1:
            raise ValueError("`max_rows` must be a positive integer.")
        if self.max_groups is not None and (
            self.max_rows is None or not self.grouped or self.max_groups < 1
        ):
            raise ValueError("`max_groups` bounds a privacy unit's keys in a grouped release.")
        if self.unit and self.grouped and self.max_groups is None:
            raise ValueError("a grouped release with a privacy unit needs `max_groups`.")

    @staticmethod
    @functools.cache
    def of(
        adjacency: str,
        grouped: bool = False,
        n_public: bool = False,
        max_rows: int | None = None,
        max_groups: int | None = None,
        privacy_unit: str | None = None,
    ) -> Neighbours:
        """The relation, built and checked once per distinct value (it is immutable)."""
        return Neighbours(adjacency, grouped, n_public, max_rows, max_groups, privacy_unit)

    @property
    def unit(self) -> bool:
        """Whether a person may have many rows (a privacy unit with bounds)."""
        return self.max_rows is not None

    @property
    def monotone(self) -> bool:
        """One person moves every score the same way (add_remove)."""
        return self.adjacency == "add_remove"

    @property
    def contributions(self) -> int:
        """Rows of one person a release can see: ``max_rows``, times ``max_groups`` if grouped."""
        if self.max_rows is None:
            return 1
        if self.grouped and self.max_groups is not None:
            return self.max_rows * self.max_groups
        return self.max_rows

    def per_key(self) -> Neighbours:
        """The relation inside one key of a grouped release (``max_rows`` still applies)."""
        return Neighbours(self.adjacency, max_rows=self.max_rows, privacy_unit=self.privacy_unit)

    def keys_touched(self) -> int:
        """How many keys of a grouped release one person's change can reach.

        One row (one key, or under substitute a row that moves: two, each a
        one-way change handled by the per-key analysis) counts as 1; with a
        privacy unit, ``max_groups`` under add_remove and ``2·max_groups``
        under substitute (the old keys and the new ones).
        """
        if not self.grouped or self.max_rows is None:
            return 1
        assert self.max_groups is not None
        return self.max_groups * (1 if self.adjacency == "add_remove" else 2)

    def count_sensitivity(self) -> int:
        """How far one person moves a count (L1 over keys when grouped)."""
        if self.unit:
            return self._person(1)
        if self.adjacency == "add_remove":
            return 1
        if self.grouped:
            return 2  # a changed row leaves one key and joins another
        return 0 if self.n_public else 1

    def sum_sensitivity(self, lower: _Num, upper: _Num) -> _Num:
        """How far one person moves a sum of rows in ``[lower, upper]`` (any units)."""
        reach = max(abs(lower), abs(upper))
        if self.unit:
            return self._person(reach)
        if self.adjacency == "add_remove":
            return reach
        if self.grouped:
            return 2 * reach
        # A row's value may change, or (missing values, filtered frames) a value may
        # appear or disappear.
        return max(upper - lower, reach)

    def pair_sensitivity(self, width: _Num) -> _Num:
        """How far one person moves the mean's pair (Σ(x − L), Σ(U − x)) in L1."""
        if self.unit:
            return self._person(width)
        return width if self.adjacency == "add_remove" else 2 * width

    # L2 (zCDP): squared sensitivities, exact (integers or Fractions: never a square root).

    def count_coordinates(self) -> tuple[int, int]:
        """``(m, b)``: one person moves at most m counts of a grouped count, each by at most b.

        What the discrete Gaussian's privacy loss distribution composes over
        (:class:`~pandas_dp.accounting.events.Event`).  One row per person: one
        key by 1 under add_remove; under substitute a changed row leaves one
        key and joins another (2, 1).  With a privacy unit (``k = max_rows``,
        ``g = max_groups``): at most g keys by at most k rows each under
        add_remove; under substitute the person's kept rows in up to g keys
        are replaced by up to k rows in each of up to g keys, so up to 2g keys
        move, each by at most k (the new count less the old, both in
        ``[0, k]``).  Ungrouped: the one count, by :meth:`count_sensitivity`.
        """
        if not self.grouped:
            return 1, self.count_sensitivity()
        touched = 1 if self.adjacency == "add_remove" else 2
        if self.max_rows is None:
            return touched, 1
        assert self.max_groups is not None
        return touched * self.max_groups, self.max_rows

    def count_sq_sensitivity(self) -> int:
        """``Δ₂²`` of a count (over the keys when grouped): ``k²·g`` for a privacy unit.

        A person with at most ``k = max_rows`` rows in each of at most ``g =
        max_groups`` keys moves each of those counts by at most k: ``Δ₂ =
        k·√g`` (``k`` ungrouped); twice that under substitute.  One row per
        person: 1, or 2 for a grouped release under substitute (a row leaves
        one key and joins another), 0 for the public row count.
        """
        if self.unit:
            return self._sq_person(1)
        if self.adjacency == "add_remove":
            return 1
        if self.grouped:
            return 2
        return 0 if self.n_public else 1

    def sum_sq_sensitivity(self, lower: _Num, upper: _Num) -> _Num:
        """``Δ₂²`` of a sum of rows in ``[lower, upper]`` (over the keys when grouped).

        One row per person: ``reach²`` under add_remove (``reach = max(|L|, |U|)``);
        under substitute ``max(U − L, reach)²`` ungrouped and, grouped,
        ``max(2·reach², (U − L)²)`` (a row that moves moves two keys by at most
        ``reach`` each; one whose value changes moves its key by up to ``U − L``,
        which is more when the clip spans zero: clip (−1, 1) gives 4, not 2).
        With a privacy unit, ``k²·g·reach²``, four times that under substitute.
        """
        reach = max(abs(lower), abs(upper))
        if self.unit:
            return self._sq_person(reach * reach)
        if self.adjacency == "add_remove":
            return reach * reach
        if self.grouped:
            # one key loses a row and another gains one (2·reach²), or a row's value
            # changes inside one key ((U − L)², more when the clip spans zero)
            return max(2 * reach * reach, (upper - lower) * (upper - lower))
        widest = max(upper - lower, reach)
        return widest * widest

    def pair_sq_sensitivity(self, width: _Num) -> _Num:
        """``Δ₂²`` of the mean's pair ``(Σ(x − L), Σ(U − x))`` (over the keys when grouped).

        One row moves the pair by ``(q, W − q)``, of squared norm at most ``W²``
        (``q² + (W − q)² <= W²`` for ``0 <= q <= W``); a changed row (substitute)
        by at most twice that; ``k`` rows of a person in one key by at most
        ``(k·W)²``, over ``g`` keys ``k²·g·W²``.
        """
        if self.unit:
            return self._sq_person(width * width)
        return width * width if self.adjacency == "add_remove" else 2 * width * width

    def _sq_person(self, sq_reach: _Num) -> _Num:
        """A row's add_remove squared reach for a whole person: ``k²·g`` times, 4x if substitute."""
        assert self.max_rows is not None
        keys = self.max_groups if self.grouped and self.max_groups is not None else 1
        factor = self.max_rows * self.max_rows * keys * (1 if self.adjacency == "add_remove" else 4)
        return factor * sq_reach

    def _person(self, reach: _Num) -> _Num:
        """A row's add_remove ``reach`` for a whole person: times its rows, 2x if substitute."""
        factor = self.contributions * (1 if self.adjacency == "add_remove" else 2)
        return factor * reach


@functools.lru_cache(maxsize=1024)
def _widths_text(widths: tuple[float, ...]) -> str:
    """Half-widths as the ledger records them (cached: a pure function of public numbers)."""
    return numbers_text(widths)


def ledger_entry(
    kind: Kind[Any, Any],
    plan: Any,
    neighbours: Neighbours,
    keys: int | None,
    *,
    operation: str | None = None,
    always_grouped: bool = False,
    **fields: Any,
) -> LedgerEntry:
    """A release's ledger entry: the kind's ``fields`` and what the pipeline knows.

    ``operation`` (by default the kind's name) is recorded as
    ``groupby.operation`` for a release over ``keys`` public keys (unless the
    operation is always one, as a histogram over its bins); the adjacency,
    privacy unit and bounds come from ``neighbours``, the half-width at 95%
    from ``kind.half_width(plan, 0.95)``.
    """
    name = kind.name if operation is None else operation
    grouped = keys is not None and not always_grouped
    widths = kind.half_width(plan, 0.95)
    text = widths if isinstance(widths, str) else _widths_text(widths)
    if kind.interval_unit and not isinstance(widths, str):
        text = f"±{text} {kind.interval_unit}"
    fields.setdefault("events", kind.events(plan, neighbours) or ())
    return LedgerEntry(
        operation=f"groupby.{name}" if grouped else name,
        adjacency=neighbours.adjacency,
        keys=keys,
        privacy_unit=neighbours.privacy_unit,
        max_rows=neighbours.max_rows,
        max_groups=neighbours.max_groups,
        half_width_95=text,
        **fields,
    )


#: The labels of an answer with its interval.
INTERVAL = pd.Index(["estimate", "lower", "upper"])


def interval_one(answer: tuple[Any, Any, Any], name: Hashable | None) -> pd.Series:
    """One key's (estimate, lower, upper) as a Series indexed by :data:`INTERVAL`."""
    values = [a[0] for a in answer]
    series: pd.Series = pd.Series(values, index=INTERVAL, name=name, dtype=answer[0].dtype)
    return series


def interval_many(answer: tuple[Any, Any, Any], keys: pd.Index) -> pd.DataFrame:
    """Every key's (estimate, lower, upper) as a DataFrame with those columns."""
    return pd.DataFrame(dict(zip(INTERVAL, answer, strict=True)), index=keys)


@dataclass(frozen=True)
class Declared:
    """The sensitivity a plan declares for one block of a release's noise-free statistics.

    In the block's own units (grid steps for a clipped sum, score units for a
    selection), from the plan alone: ``l1`` is Δ₁ (the noise under ε is
    scaled to it), ``sq`` is Δ₂² (the Gaussian noise under ρ), each None
    where the block's noise does not use it.  Without ``weights`` they bound
    the L1 norm and the squared L2 norm of the change of the whole block.
    ``weights`` marks a selection, one choice per key (a row of scores):
    Δ₁ bounds the sum over the keys of each key's largest move, times
    ``weights[0]`` if every score of the key moved the same way and
    ``weights[1]`` otherwise (permute-and-flip: 1 and 2).  ``coordinates``
    ``(m, b)``: at most m entries of the block move, each by at most b (what a
    discrete Gaussian's privacy loss distribution is composed over, see
    :meth:`Neighbours.count_coordinates`).
    """

    l1: int | Fraction | None = None
    sq: int | Fraction | None = None
    weights: tuple[Fraction, Fraction] | None = None
    coordinates: tuple[int, int] | None = None


#: ``(epsilon, rho)`` of :meth:`Kind.examples`: one release under ε, one under ρ (Gaussian).
EXAMPLE_LOSSES = ((Fraction(1), None), (None, Fraction(1, 2)))


class ExampleColumns(NamedTuple):
    """The columns of the sensitivity oracle's frames, for :meth:`Kind.examples`.

    ``value``: a float column (with missing values), ``clips`` clip bounds for
    it, ``grid`` increasing points on it (quantile candidates); ``label``: an
    integer column, ``labels`` candidates among its values (not all of them).
    """

    value: Hashable
    clips: tuple[tuple[float, float], ...]
    grid: tuple[float, ...]
    label: Hashable
    labels: tuple[int, ...]


@dataclass(frozen=True)
class Rows:
    """The row-aligned inputs of a release's statistics: ``n`` rows, numpy arrays or Series.

    ``splits``: for a composite release, how many of ``arrays`` each of its
    parts reads, in order (:meth:`parts`); empty for any other release.
    """

    n: int
    arrays: tuple[Any, ...] = ()
    splits: tuple[int, ...] = ()

    def take(self, keep: Bools) -> Rows:
        """The rows where ``keep`` is True (what contribution bounding keeps)."""
        return Rows(
            int(np.count_nonzero(keep)),
            tuple(a[keep] for a in self.arrays),
            self.splits,
        )

    def slice(self, start: int, stop: int) -> Rows:
        """Rows ``start:stop``: what one partition of the data would hold."""
        stop = min(stop, self.n)
        return Rows(
            max(stop - start, 0),
            tuple(
                a.iloc[start:stop] if isinstance(a, pd.Series) else a[start:stop]
                for a in self.arrays
            ),
            self.splits,
        )

    def parts(self) -> list[Rows]:
        """The rows of each part of a composite release (``splits``), in order."""
        out, start = [], 0
        for width in self.splits:
            out.append(Rows(self.n, self.arrays[start : start + width]))
            start += width
        return out


class Kind(ABC, Generic[One, Many]):
    """A release kind: validated public arguments, and the steps only this kind knows.

    ``One`` is the type of an ungrouped answer, ``Many`` of a grouped one.
    Every concrete subclass is a release kind of the pipeline (see
        :data:`pandas_dp.pipeline.run.KINDS`): nothing else lists it.  Each also says
    what its plan declares (:meth:`declared`), of which statistics
    (:meth:`noise_free`), and gives :meth:`examples` of itself: the
    sensitivity oracle (``tests/test_sensitivity.py``) checks every kind so.
    """

    #: The kind's name: the operation the ledger records (``groupby.`` prefixed when grouped).
    name: ClassVar[str]
    #: The plan functions of this kind (pure functions of public parameters, cached).
    planners: ClassVar[tuple[Callable[..., Any], ...]] = ()
    #: Whether it has a data-free interval that :func:`pandas_dp.pipeline.planning.half_width`
    #: and ``df.dp.plan`` plan (:meth:`half_width`).
    plannable: ClassVar[bool] = False
    #: Whether the answer adds rows up (a count, a sum): ``max_rows="auto"`` then chooses the
    #: cap that balances truncation against noise (:mod:`pandas_dp.kinds.truncation`), else a
    #: high quantile of rows per person.
    totals: ClassVar[bool] = False
    #: The unit of :meth:`half_width` when it is not the answer's own (a quantile's: ranks).
    interval_unit: ClassVar[str] = ""

    epsilon: Any

    def loss(self) -> tuple[str, Fraction]:
        """What this release is charged: ``("rho", ρ)`` if it has a ρ, else ``("epsilon", ε)``.

        The counterpart of :meth:`at`: ``kind.at(*kind.loss())`` is the same release.
        """
        rho: Fraction | None = getattr(self, "rho", None)
        return ("epsilon", self.epsilon) if rho is None else ("rho", rho)

    def at(self, accountant: str, amount: Fraction) -> Self:
        """The same release at ``amount`` of ``accountant`` (``"epsilon"`` or ``"rho"``).

        The one way to give a kind a share of a call's loss (``max_rows="auto"``,
        a key selection): a Gaussian release (``epsilon`` None) gets ``rho``; a
        pure-ε release gets ``epsilon``, or, given ρ, runs at the largest ε with
        ``ε²/2 <= ρ`` and is charged ρ
        (:func:`~pandas_dp.core.validation.selection_loss`).  Both fields are set
        together, so no kind keeps a stale one.  A kind whose other fields
        derive from its loss overrides this.
        """
        if accountant == "rho" and self.epsilon is None:
            fields: dict[str, Fraction | None] = {"rho": amount}
        else:
            epsilon, rho = selection_loss(accountant, amount)
            fields = {"epsilon": epsilon} if rho is None else {"epsilon": epsilon, "rho": rho}
        return dataclasses.replace(self, **fields)  # type: ignore[type-var]

    def columns(self) -> tuple[Hashable, ...]:
        """The columns this release reads, besides the keys (never the privacy unit's)."""
        return ()

    def cells(self, rows: Rows) -> tuple[I64 | None, int]:
        """Each row's cell within its key for contribution bounding, and cells per key.

        One cell per key (None, 1) unless a kind counts per candidate.
        """
        return None, 1

    def most_keys(self) -> int | None:
        """The most keys one release may have (its statistics grow with keys × candidates).

        None: no cap.  A grouped release with public keys over more is refused
        by :meth:`read`, before any spend; without public keys, such a kind is
        tallied after the selection over the chosen keys only, at most this
        many (those of the highest noisy person counts:
        :func:`pandas_dp.pipeline.run.release_selected`).
        """
        return None

    def counts_rows(self) -> bool:
        """Whether this release is the frame's row count (public under substitute, own rows)."""
        return False

    def counts_kept(self) -> bool:
        """Whether the statistics are ``(rows per key,)`` and nothing else of the rows.

        Contribution bounding then needs no choice of rows: a person keeps
        ``min(rows, max_rows)`` in each of its kept keys
        (:func:`pandas_dp.mechanisms.contributions.kept_counts`).  Such a kind's :meth:`tally`
        is never given rows a bounding kept, only :meth:`from_counts` these counts.
        """
        return False

    def from_counts(self, counts: I64) -> Stats:
        """The statistics of a :meth:`counts_kept` kind from the rows kept per key."""
        raise TypeError(f"a {self.name} is computed from its rows, not from counts.")

    def combine(self, a: Stats, b: Stats) -> Stats:
        """The statistics of two disjoint slices of rows together: by default their exact sum.

        Elementwise, never wrapping (an array that would leave int64 comes
        back as Python integers; the pipeline refuses it before ``finish``).
        """
        return tuple([exact_sum(x, y) for x, y in zip(a, b, strict=True)])

    def recode(self, stats: Stats, mapping: I64, n_keys: int) -> Stats:
        """The statistics over other keys: key code ``c`` becomes ``mapping[c]`` (-1: dropped).

        ``mapping`` is one-to-one on the codes it keeps, into ``n_keys`` keys
        (a key without a code gets zeros).  By default each statistic is an
        array whose first axis is the keys.  A selection of keys
        (:mod:`pandas_dp.mechanisms.key_selection`) keeps the chosen keys' statistics this
        way, and Dask joins partitions whose keys were observed apart.
        """
        kept = np.flatnonzero(mapping >= 0)
        out = []
        for a in stats:
            moved = np.zeros((n_keys, *a.shape[1:]), dtype=a.dtype)
            moved[mapping[kept]] = a[kept]
            out.append(moved)
        return tuple(out)

    def declared(self, plan: Any) -> tuple[Declared, ...]:
        """The sensitivity ``plan`` declares for each block of :meth:`noise_free`.

        What the noise is scaled to, read from the plan alone: by default each
        part's ``declared()`` in order (a tuple of plans, nested or not, is a
        composition).  The sensitivity oracle (``tests/test_sensitivity.py``)
        checks, for every kind, that no neighbouring frame moves a block
        further; a kind whose plan does not say fails it.
        """
        if isinstance(plan, tuple):
            return tuple([d for part in plan for d in self.declared(part)])
        blocks: tuple[Declared, ...] = plan.declared()
        return blocks

    def noise_free(self, plan: Any, stats: Stats, n_keys: int) -> tuple[np.ndarray, ...]:
        """The exact statistics :meth:`finish` adds its noise to (or selects on), per block."""
        raise TypeError(f"a {self.name} does not show its noise-free statistics.")

    @classmethod
    def examples(cls, columns: ExampleColumns) -> tuple[Kind[Any, Any], ...]:
        """Releases of this kind reading ``columns``: each accountant, clip and option it has.

        The sensitivity oracle checks each; a kind without examples fails it.
        """
        raise TypeError(f"a {cls.name} gives no examples to the sensitivity oracle.")

    def events(self, plan: Any, neighbours: Neighbours) -> tuple[Event, ...] | None:
        """The mechanisms this release runs, with their exact parameters, for the ledger.

        What a budget composed by PLD composes
        (:mod:`pandas_dp.accounting.events`).  None (the default): what the
        entry's ε (or ρ) and δ guarantee, ``pure(ε)`` or ``zcdp(ρ)``, true of
        every release charged so; a kind whose noise is known exactly says so.
        """
        return None

    def half_width(self, plan: Any, level: float, n: int | None = None) -> tuple[float, ...] | str:
        """The half-width of this release's ``ci=level`` interval, per column, from ``plan``.

        Data-free.  :data:`DEPENDS_ON_N` if it depends on the number of rows
        and ``n`` (an assumed number, per key) is None; ``""`` if the release
        has no interval (a selection).  The ledger records it at level 0.95.
        """
        return ""

    @abstractmethod
    def read(self, df: pd.DataFrame, n_keys: int) -> Rows:
        """Check the columns and dtypes this release reads (never their values); its inputs."""

    @abstractmethod
    def plan(self, neighbours: Neighbours) -> Any:
        """The privacy map, from public parameters only: sensitivity, grid, scale or rate."""

    @abstractmethod
    def entry(self, plan: Any, neighbours: Neighbours, keys: int | None) -> LedgerEntry:
        """What the ledger records of this release (``keys``: how many, when grouped).

        Public parameters only; build it with :func:`ledger_entry`.
        """

    @abstractmethod
    def tally(self, plan: Any, rows: Rows, codes: I64 | None, n_keys: int) -> Stats:
        """Exact integer statistics per key (code -1: dropped) of a slice of rows.

        The statistics of two slices give those of both by :meth:`combine`.
        """

    @abstractmethod
    def finish(self, plan: Any, stats: Stats, source: RandomSource, n_keys: int) -> Any:
        """The noisy answer over ``n_keys`` keys from the statistics: noise and post-processing."""

    @abstractmethod
    def shape_one(self, answer: Any) -> One:
        """The ungrouped answer as the pandas/Python value the user gets."""

    @abstractmethod
    def shape_many(self, answer: Any, keys: pd.Index) -> Many:
        """The grouped answer, indexed by exactly the public keys."""
