"""Clipped sums and means: plans on a data-independent grid, exact sums, noise, the kinds.

An ungrouped release is the one-key case of the same code: ``codes`` is None
and ``n_keys`` is 1.  Each release is split in parts that never mix:

- a *plan* (:func:`plan_sum`, :func:`plan_mean`) computed
  from public parameters only (clip, epsilon, and the neighbour relation
  :class:`~pandas_dp.kinds.base.Neighbours`): sensitivity, grid step ``2**exponent``
  and integer noise scale.  Exactly testable.
- the *statistics* (:func:`grid_sums`): clip, round each
  row to the grid, sum exactly in integers.  They add up across row slices.
- the *noise* (:func:`noisy_sums`, :func:`noisy_means`):
  exact discrete Laplace in grid units, drawn only after the spend is committed.

:class:`Sum` and :class:`Mean` are release kinds that
:mod:`pandas_dp.pipeline.run` runs (counts are in :mod:`pandas_dp.kinds.count`, the
variance's in :mod:`pandas_dp.kinds.variance`).
"""

from __future__ import annotations

import functools
import math
from abc import abstractmethod
from collections.abc import Hashable, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from ..accounting.events import Event
from ..accounting.ledger import LedgerEntry
from ..core.noise import (
    F64,
    I64,
    Gauss,
    RandomSource,
    draw_noise,
    gaussian_grid_exponent,
    gaussian_scale,
    grid_exponent,
    integer_scale,
)
from ..core.text import column_names, figures
from ..core.validation import (
    Clip,
    check_clip,
    check_clip_map,
    check_column,
    given,
    loss_fields,
    numeric_values,
)
from ..mechanisms.accuracy import (
    check_ci,
    level_miss,
    mean_interval,
    mean_miss,
    mean_pad,
    sum_interval,
    units_half_width,
)
from .base import (
    DEPENDS_ON_N,
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
from .signature import CI, CUT, MAX_ROWS, OMIT, REQUIRED, RHO, Form, Param, Signature

__all__ = [
    "CHUNK",
    "GridPlan",
    "Mean",
    "MeanPlan",
    "Sum",
    "complementary_mean",
    "complementary_mean_one",
    "grid_sums",
    "means_of_pairs",
    "noisy_means",
    "noisy_pairs",
    "noisy_sums",
    "plan_mean",
    "plan_mean_rho",
    "plan_sum",
    "plan_sum_rho",
]

#: Rows per chunk: cache-sized, and small enough that a float64 sum of rounded
#: rows (each below 2**31 in magnitude) is exact (2**16 * 2**31 < 2**53).
CHUNK = 1 << 16
#: Up to this many keys, the means are computed on Python numbers (less overhead than arrays).
FEW_KEYS = 8


# ----------------------------------------------------------------------------- plans


@dataclass(frozen=True)
class GridPlan:
    """A clipped sum on the grid ``step = 2**exponent``.

    Each row becomes ``q = rint((clip(x, lower, upper) - center) / step)`` in
    ``[q_lo, q_hi]``; ``delta`` is the L1 sensitivity in grid units and
    ``scale = ceil(delta / epsilon)`` the integer noise scale, so the realised
    epsilon ``delta / scale`` never exceeds ``epsilon``.  Under ρ (``rho``
    set, ``epsilon`` None), ``delta`` is ``Δ₂²`` in grid units and ``scale``
    the :class:`~pandas_dp.core.noise.Gauss` noise of ``σ² >= delta/(2ρ)``.
    """

    lower: float
    upper: float
    center: float
    exponent: int
    q_lo: int
    q_hi: int
    delta: int
    scale: int | Gauss
    epsilon: Fraction | None
    rho: Fraction | None = None

    @functools.cached_property
    def texts(self) -> tuple[str, str]:
        """The ledger's sensitivity and noise scale in data units (formatted once per plan)."""
        if isinstance(self.scale, Gauss):  # L2 sensitivity and σ
            return (
                figures([math.sqrt(self.delta) * self.step]),
                figures([self.scale.sigma * self.step]),
            )
        return figures([self.delta * self.step]), figures([self.scale * self.step])

    @property
    def step(self) -> float:
        return math.ldexp(1.0, self.exponent)

    def declared(self) -> tuple[Declared]:
        """``delta`` in grid units: Δ₁ under ε, Δ₂² under ρ."""
        return (Declared(sq=self.delta) if self.rho else Declared(self.delta),)

    def event(self) -> Event:
        """The noise, exactly: discrete Laplace of the integer scale on the grid, L1 ``delta``.

        Under ρ, its realised ρ (``Δ₂²/(2σ²)`` on the grid): its σ is too wide,
        in grid steps, for a discrete Gaussian PLD (see
        :mod:`pandas_dp.accounting._pld`).
        """
        if isinstance(self.scale, Gauss):
            return Event("zcdp", rho=Fraction(self.delta) / (2 * self.scale.sigma2))
        return Event("discrete_laplace", scale=Fraction(self.scale), sensitivity=self.delta)

    @property
    def laplace_scale(self) -> int:
        """The integer discrete Laplace scale (a plan under ε: never :class:`Gauss`)."""
        assert not isinstance(self.scale, Gauss), "a Gaussian grid has no Laplace scale"
        return self.scale

    @property
    def realised_epsilon(self) -> Fraction:
        return Fraction(self.delta, self.laplace_scale) if self.scale else Fraction(0)


@dataclass(frozen=True)
class MeanPlan:
    """The complementary-sums mean.

    Release ``A = Σq`` and ``B = N·Q - A`` (``Q = grid.q_hi``), each with
    independent noise of scale ``grid.scale``; the pair moves by ``(q, Q - q)``
    when a row is added, an L1 norm of exactly ``Q`` (``2Q`` under substitute).
    """

    grid: GridPlan

    def declared(self) -> tuple[Declared]:
        """The pair's, jointly."""
        return self.grid.declared()


#: The mechanism the ledger records for a kind's release under ρ, by its Laplace one.
GAUSSIAN_MECHANISM = {
    "discrete_laplace on grid": "discrete_gaussian on grid",
    "discrete_laplace on grid (complementary sums)": (
        "discrete_gaussian on grid (complementary sums)"
    ),
}

#: Largest grid exponent: an int64 number of grid steps stays a finite float.
MAX_EXPONENT = 1023 - 63


def _grid(
    lower: float,
    upper: float,
    center: float,
    real_delta: Fraction | float,
    epsilon: Fraction | None,
    rho: Fraction | None = None,
) -> tuple[int, int, int]:
    """The grid exponent and the rounded bounds; under ρ, ``real_delta`` is ``Δ₂²``."""
    magnitude = max(
        abs(Fraction(lower) - Fraction(center)), abs(Fraction(upper) - Fraction(center))
    )
    if rho is not None:
        exponent = gaussian_grid_exponent(real_delta, rho, magnitude)
    else:
        assert epsilon is not None
        exponent = grid_exponent(real_delta, epsilon, magnitude)
    if exponent > MAX_EXPONENT:
        loss = "epsilon" if rho is None else "rho"
        raise ValueError(
            f"`clip` and `{loss}` give a noise scale too large to release as a float "
            f"(grid step 2**{exponent}). Use a larger {loss} or tighter clip bounds."
        )
    q_lo, q_hi = (
        int(q)
        for q in round_rows(
            np.array([lower, upper], dtype=np.float64), lower, upper, center, exponent
        )
    )
    return exponent, q_lo, q_hi


@functools.lru_cache(maxsize=512)  # plans are pure functions of public parameters
def plan_sum(clip: tuple[float, float], epsilon: Fraction, neighbours: Neighbours) -> GridPlan:
    lower, upper = float(clip[0]), float(clip[1])
    real_delta = neighbours.sum_sensitivity(lower, upper)
    exponent, q_lo, q_hi = _grid(lower, upper, 0.0, real_delta, epsilon)
    delta = neighbours.sum_sensitivity(q_lo, q_hi)
    return GridPlan(
        lower, upper, 0.0, exponent, q_lo, q_hi, delta, integer_scale(delta, epsilon), epsilon
    )


@functools.lru_cache(maxsize=512)  # plans are pure functions of public parameters
def plan_mean(clip: tuple[float, float], epsilon: Fraction, neighbours: Neighbours) -> MeanPlan:
    lower, upper = float(clip[0]), float(clip[1])
    width = Fraction(upper) - Fraction(lower)
    exponent, q_lo, q_hi = _grid(lower, upper, lower, neighbours.pair_sensitivity(width), epsilon)
    delta = neighbours.pair_sensitivity(q_hi)
    grid = GridPlan(
        lower, upper, lower, exponent, q_lo, q_hi, delta, integer_scale(delta, epsilon), epsilon
    )
    return MeanPlan(grid)


@functools.lru_cache(maxsize=512)  # plans are pure functions of public parameters
def plan_sum_rho(clip: tuple[float, float], rho: Fraction, neighbours: Neighbours) -> GridPlan:
    """A clipped sum under ρ: ``Δ₂²`` on the grid, the discrete Gaussian of ``σ² >= Δ₂²/(2ρ)``."""
    lower, upper = float(clip[0]), float(clip[1])
    real_sq = neighbours.sum_sq_sensitivity(Fraction(lower), Fraction(upper))
    exponent, q_lo, q_hi = _grid(lower, upper, 0.0, real_sq, None, rho)
    sq = neighbours.sum_sq_sensitivity(q_lo, q_hi)
    noise = Gauss(gaussian_scale(sq, rho))
    return GridPlan(lower, upper, 0.0, exponent, q_lo, q_hi, sq, noise, None, rho)


@functools.lru_cache(maxsize=512)  # plans are pure functions of public parameters
def plan_mean_rho(clip: tuple[float, float], rho: Fraction, neighbours: Neighbours) -> MeanPlan:
    """The complementary-sums mean under ρ: the pair's ``Δ₂²`` (``W²``, see Neighbours)."""
    lower, upper = float(clip[0]), float(clip[1])
    width = Fraction(upper) - Fraction(lower)
    real_sq = neighbours.pair_sq_sensitivity(width)
    exponent, q_lo, q_hi = _grid(lower, upper, lower, real_sq, None, rho)
    sq = neighbours.pair_sq_sensitivity(q_hi)
    noise = Gauss(gaussian_scale(sq, rho))
    return MeanPlan(GridPlan(lower, upper, lower, exponent, q_lo, q_hi, sq, noise, None, rho))


# --------------------------------------------------------------------------- kernels


def round_rows(
    x: F64, lower: float, upper: float, center: float, exponent: int, out: F64 | None = None
) -> F64:
    """``rint((clip(x) - center) / 2**exponent)`` as floats (NaN stays NaN).

    Every step is monotone in x, so rows land in ``[q(lower), q(upper)]``.
    """
    out = x.clip(lower, upper, out=out)  # np.clip's ufunc, without np.clip's dispatch
    if center:
        np.subtract(out, center, out=out)
    if -1022 <= exponent <= 1023:
        np.multiply(out, math.ldexp(1.0, -exponent), out=out)
    else:
        np.ldexp(out, -exponent, out=out)
    return np.rint(out, out=out)


def grid_sums(values: F64, codes: I64 | None, n_keys: int, plan: GridPlan) -> tuple[I64, I64]:
    """Exact integer sums of the rounded rows per key, and the non-missing counts.

    One pass in cache-sized chunks; each chunk's float sum is exact because its
    rows are integers below 2**31 and the chunk has at most 2**16 of them.
    """
    sums = np.zeros(n_keys, dtype=np.int64)
    counts = np.zeros(n_keys, dtype=np.int64)
    buf = np.empty(min(CHUNK, len(values)), dtype=np.float64)
    total = 0
    missing = 0
    for start in range(0, len(values), CHUNK):
        x = values[start : start + CHUNK]
        q = round_rows(x, plan.lower, plan.upper, plan.center, plan.exponent, out=buf[: len(x)])
        shifted = None if codes is None else codes[start : start + CHUNK] + 1
        chunk_sum = q.sum()
        if chunk_sum != chunk_sum:  # NaN present: skip missing values, like pandas
            nan = np.isnan(q)
            q[nan] = 0.0
            if shifted is None:
                missing += int(np.count_nonzero(nan))
                chunk_sum = q.sum()
            else:
                shifted[nan] = 0  # bin 0 is dropped
        if shifted is None:
            total += int(chunk_sum)
            continue
        sums += np.bincount(shifted, weights=q, minlength=n_keys + 1)[1:].astype(np.int64)
        counts += np.bincount(shifted, minlength=n_keys + 1)[1:]
    if codes is None:
        sums[0] = total
        counts[0] = len(values) - missing
    return sums, counts


def noisy_sums(src: RandomSource, sums: I64, plan: GridPlan) -> F64:
    """Noisy clipped sums per key from their exact grid sums: ``step · (Σq + dLap(scale))``."""
    noisy = sums + draw_noise(src, plan.scale, sums.size)
    return np.ldexp(noisy.astype(np.float64), plan.exponent)


def noisy_means(src: RandomSource, sums: I64, counts: I64, plan: MeanPlan) -> F64:
    """Noisy clipped means per key from exact grid sums and counts, always inside the clip.

    ``A = Σq`` and ``B = N·Q − A`` each get discrete Laplace noise; the mean is
    :func:`complementary_mean` of the two.
    """
    a, b = noisy_pairs(src, sums, counts, plan)
    return means_of_pairs(a, b, plan)


def complementary_sums(sums: I64, counts: I64, grid: GridPlan) -> tuple[I64, I64]:
    """The exact complementary sums ``A = Σq`` and ``B = N·Q − Σq`` per key."""
    return sums, counts * grid.q_hi - sums


def noisy_pairs(src: RandomSource, sums: I64, counts: I64, plan: MeanPlan) -> tuple[I64, I64]:
    """The noisy complementary sums ``a = Σq + Z₁`` and ``b = N·Q − Σq + Z₂`` per key."""
    a, b = complementary_sums(sums, counts, plan.grid)
    noise = draw_noise(src, plan.grid.scale, 2 * sums.size)
    return a + noise[: sums.size], b + noise[sums.size :]


def means_of_pairs(a: I64, b: I64, plan: MeanPlan) -> F64:
    """The clipped means from the noisy complementary sums (post-processing)."""
    grid = plan.grid
    if a.size <= FEW_KEYS:  # the same arithmetic on Python numbers, without array overhead
        lower, upper = grid.lower, grid.upper
        return np.array(
            [
                complementary_mean_one(int(x), int(y), lower, upper)
                for x, y in zip(a.tolist(), b.tolist(), strict=True)
            ],
            dtype=np.float64,
        )
    return complementary_mean(a, b, grid.lower, grid.upper)


def complementary_mean(a: I64, b: I64, lower: float, upper: float) -> F64:
    """``lower + (upper − lower)·a⁺/(a⁺ + b⁺)`` per key (the midpoint when both are 0)."""
    a_pos = np.maximum(a, 0).astype(np.float64)
    b_pos = np.maximum(b, 0).astype(np.float64)
    both = a_pos + b_pos
    share = np.divide(a_pos, both, out=np.full(a.size, 0.5), where=both > 0)
    mean = lower + (upper - lower) * share
    clipped: F64 = np.clip(mean, lower, upper)
    return clipped


def complementary_mean_one(a: int, b: int, lower: float, upper: float) -> float:
    """:func:`complementary_mean` of one key, in float64 arithmetic step for step."""
    a_pos, b_pos = float(max(a, 0)), float(max(b, 0))
    both = a_pos + b_pos
    share = a_pos / both if both > 0 else 0.5
    return min(max(lower + (upper - lower) * share, lower), upper)


# ----------------------------------------------------------------------------- kinds


@dataclass(frozen=True)
class _Clipped(Kind[float | pd.Series, pd.Series | pd.DataFrame]):
    """A clipped statistic of one column, or of several (``clip`` as a mapping) at once.

    ``epsilon`` is split equally across the columns; the ledger records one entry.
    ``ci``: a confidence level; each column's answer then comes with its noise
    interval at that level (per column, not simultaneous).
    """

    epsilon: Fraction | None
    column: Hashable | None
    clip: Any
    #: ``(column, (lower, upper))`` pairs, filled from ``column`` and ``clip``.
    clips: tuple[tuple[Hashable, Clip], ...] = field(init=False, repr=False, default=())
    #: The columns and their bounds apart, and the columns as the ledger names them.
    _columns: tuple[Hashable, ...] = field(init=False, repr=False, default=())
    _bounds: tuple[Clip, ...] = field(init=False, repr=False, default=())
    _names: tuple[str, ...] = field(init=False, repr=False, default=())
    ci: float | None = None
    #: Under a ρ budget: the discrete Gaussian at this ρ instead (``epsilon`` None).
    rho: Fraction | None = None

    mechanism: ClassVar[str]

    def __post_init__(self) -> None:
        if self.column is None:
            if not isinstance(self.clip, Mapping):
                raise TypeError(
                    f"Name the column, df.dp.{self.name}('salary', clip=(0, 200_000), ...), "
                    "or pass `clip` as a mapping {column: (lower, upper)}; got column=None and "
                    f"clip={given(self.clip)}."
                )
            clips = tuple(check_clip_map(self.clip).items())
        else:
            if isinstance(self.clip, Mapping):
                raise TypeError("`clip` must be a pair (lower, upper) when `column` is given.")
            clips = ((self.column, check_clip(self.clip)),)
        object.__setattr__(self, "clips", clips)
        columns = tuple([col for col, _ in clips])
        object.__setattr__(self, "_columns", columns)
        object.__setattr__(self, "_bounds", tuple([bounds for _, bounds in clips]))
        object.__setattr__(self, "_names", column_names(columns))
        object.__setattr__(self, "ci", check_ci(self.ci))

    def columns(self) -> tuple[Hashable, ...]:
        return self._columns

    def read(self, df: pd.DataFrame, n_keys: int) -> Rows:
        for col in self._columns:
            check_column(df, col)
        return Rows(len(df), tuple([numeric_values(df, col) for col in self._columns]))

    def plan(self, neighbours: Neighbours) -> tuple[Any, ...]:
        if self.rho is not None:  # ρ composes by addition too: an equal share per column
            share = self.rho / len(self.clips)
            return tuple([self._plan_rho(bounds, share, neighbours) for bounds in self._bounds])
        assert self.epsilon is not None
        share = self.epsilon if len(self.clips) == 1 else self.epsilon / len(self.clips)
        return tuple([self._plan(bounds, share, neighbours) for bounds in self._bounds])

    def _plan_rho(self, bounds: Clip, rho: Fraction, neighbours: Neighbours) -> Any:
        """The plan of one column under ρ (Gaussian noise)."""
        raise TypeError(f"`rho=` is not available for {self.name} yet; pass epsilon=.")

    def noise_free(self, plan: tuple[Any, ...], stats: Stats, n_keys: int) -> tuple[I64, ...]:
        pairs = zip(stats[::2], stats[1::2], strict=True)
        return tuple([self._exact(s, c, p) for (s, c), p in zip(pairs, plan, strict=True)])

    @classmethod
    def examples(cls, columns: ExampleColumns) -> tuple[_Clipped, ...]:
        return tuple(
            [cls(e, columns.value, c, rho=r) for c in columns.clips for e, r in EXAMPLE_LOSSES]
        )

    def events(self, plan: tuple[Any, ...], neighbours: Neighbours) -> tuple[Event, ...]:
        """Each column's grid noise (a column every row rounds to 0 has none)."""
        return tuple([g.event() for g in (self._grid(p) for p in plan) if g.scale])

    def entry(self, plan: tuple[Any, ...], neighbours: Neighbours, keys: int | None) -> LedgerEntry:
        grids = [self._grid(p) for p in plan]
        return ledger_entry(
            self,
            plan,
            neighbours,
            keys,
            epsilon=self.epsilon,
            rho=self.rho,
            columns=self._names,
            mechanism=self.mechanism if self.rho is None else GAUSSIAN_MECHANISM[self.mechanism],
            sensitivity="; ".join([g.texts[0] for g in grids]),
            noise_scale="; ".join([g.texts[1] for g in grids]),
            clip=self._bounds,
        )

    def tally(self, plan: tuple[Any, ...], rows: Rows, codes: I64 | None, n_keys: int) -> Stats:
        stats: list[I64] = []
        for values, column_plan in zip(rows.arrays, plan, strict=True):
            stats.extend(grid_sums(values, codes, n_keys, self._grid(column_plan)))
        return tuple(stats)

    def finish(
        self, plan: tuple[Any, ...], stats: Stats, source: RandomSource, n_keys: int
    ) -> list[Any]:
        if self.ci is not None:
            level = self.ci
            return [
                self._noisy_ci(source, stats[2 * i], stats[2 * i + 1], column_plan, level)
                for i, column_plan in enumerate(plan)
            ]
        return [
            self._noisy(source, stats[2 * i], stats[2 * i + 1], column_plan)
            for i, column_plan in enumerate(plan)
        ]

    def shape_one(self, answer: list[Any]) -> float | pd.Series:
        columns = [col for col, _ in self.clips]
        if self.ci is not None:
            if self.column is not None:
                return interval_one(answer[0], self.column)
            labels = pd.Index(columns, tupleize_cols=False)
            series: pd.Series = pd.concat([interval_one(a, None) for a in answer], keys=labels)
            return series
        if self.column is not None:
            return float(answer[0][0])
        return pd.Series(
            {col: float(a[0]) for col, a in zip(columns, answer, strict=True)},
            dtype=np.float64,
        )

    def shape_many(self, answer: list[Any], keys: pd.Index) -> pd.Series | pd.DataFrame:
        columns = [col for col, _ in self.clips]
        if self.ci is not None:
            if self.column is not None:
                return interval_many(answer[0], keys)
            labels = pd.Index(columns, tupleize_cols=False)
            frame: pd.DataFrame = pd.concat(
                [interval_many(a, keys) for a in answer], axis=1, keys=labels
            )
            return frame
        if self.column is not None:
            return pd.Series(answer[0], index=keys, name=self.column)
        return pd.DataFrame({col: a for col, a in zip(columns, answer, strict=True)}, index=keys)

    @abstractmethod
    def _plan(self, bounds: Clip, epsilon: Fraction, neighbours: Neighbours) -> Any:
        """The plan of one column."""

    @abstractmethod
    def _grid(self, plan: Any) -> GridPlan:
        """The grid of one column's plan."""

    @abstractmethod
    def _exact(self, sums: I64, counts: I64, plan: Any) -> I64:
        """One column's exact statistics that ``_noisy`` adds its noise to."""

    @abstractmethod
    def _noisy(self, source: RandomSource, sums: I64, counts: I64, plan: Any) -> F64:
        """One column's noisy answer per key from its grid sums and counts."""

    @abstractmethod
    def _noisy_ci(
        self, source: RandomSource, sums: I64, counts: I64, plan: Any, level: float
    ) -> tuple[F64, F64, F64]:
        """One column's noisy answer per key and its interval (the same noise as ``_noisy``)."""


@dataclass(frozen=True)
class Sum(_Clipped):
    """Clipped sums on the grid: ``step · (Σq + dLap(scale))`` per key."""

    planners: ClassVar = (plan_sum, plan_sum_rho)
    name: ClassVar[str] = "sum"
    totals: ClassVar[bool] = True
    mechanism: ClassVar[str] = "discrete_laplace on grid"
    plannable: ClassVar[bool] = True

    def half_width(
        self, plan: tuple[GridPlan, ...], level: float, n: int | None = None
    ) -> tuple[float, ...]:
        """``t·step`` per column (infinite when every row rounds to 0: see sum_interval)."""
        miss = level_miss(level)
        return tuple(
            [
                math.ldexp(float(units_half_width(g.scale, miss)), g.exponent)
                if g.scale
                else math.inf
                for g in plan
            ]
        )

    def _plan(self, bounds: Clip, epsilon: Fraction, neighbours: Neighbours) -> GridPlan:
        return plan_sum(bounds, epsilon, neighbours)

    def _plan_rho(self, bounds: Clip, rho: Fraction, neighbours: Neighbours) -> GridPlan:
        return plan_sum_rho(bounds, rho, neighbours)

    def _grid(self, plan: GridPlan) -> GridPlan:
        return plan

    def _exact(self, sums: I64, counts: I64, plan: GridPlan) -> I64:
        return sums

    def _noisy(self, source: RandomSource, sums: I64, counts: I64, plan: GridPlan) -> F64:
        return noisy_sums(source, sums, plan)

    def _noisy_ci(
        self, source: RandomSource, sums: I64, counts: I64, plan: GridPlan, level: float
    ) -> tuple[F64, F64, F64]:
        estimate = noisy_sums(source, sums, plan)
        return (estimate, *sum_interval(estimate, plan.scale, plan.exponent, level))


@dataclass(frozen=True)
class Mean(_Clipped):
    """Clipped means from the complementary sums, always inside the clip."""

    planners: ClassVar = (plan_mean, plan_mean_rho)
    name: ClassVar[str] = "mean"
    mechanism: ClassVar[str] = "discrete_laplace on grid (complementary sums)"
    plannable: ClassVar[bool] = True

    def half_width(
        self, plan: tuple[MeanPlan, ...], level: float, n: int | None = None
    ) -> tuple[float, ...] | str:
        """Per column, at ``n`` rows: ``(U − L)·t/(n·Q)`` plus one grid step, at most ``(U − L)/2``.

        The half-width when the noisy complementary sums add up to the ``n``
        rows' total and the mean is at least ``t`` grid steps from both bounds;
        nearer a bound it is narrower.
        """
        if n is None:
            return DEPENDS_ON_N
        widths = []
        for p, (lower, upper) in zip(plan, self._bounds, strict=True):
            g = p.grid
            if not g.scale:  # every row rounds to 0: the interval is the whole clip
                widths.append((upper - lower) / 2)
                continue
            t = units_half_width(g.scale, mean_miss(level))
            spread = (upper - lower) * t / (n * g.q_hi) + mean_pad(lower, upper, g.exponent)
            widths.append(min(spread, (upper - lower) / 2))
        return tuple(widths)

    def _plan(self, bounds: Clip, epsilon: Fraction, neighbours: Neighbours) -> MeanPlan:
        return plan_mean(bounds, epsilon, neighbours)

    def _plan_rho(self, bounds: Clip, rho: Fraction, neighbours: Neighbours) -> MeanPlan:
        return plan_mean_rho(bounds, rho, neighbours)

    def _grid(self, plan: MeanPlan) -> GridPlan:
        return plan.grid

    def _exact(self, sums: I64, counts: I64, plan: MeanPlan) -> I64:
        return np.concatenate(complementary_sums(sums, counts, plan.grid))

    def _noisy(self, source: RandomSource, sums: I64, counts: I64, plan: MeanPlan) -> F64:
        return noisy_means(source, sums, counts, plan)

    def _noisy_ci(
        self, source: RandomSource, sums: I64, counts: I64, plan: MeanPlan, level: float
    ) -> tuple[F64, F64, F64]:
        a, b = noisy_pairs(source, sums, counts, plan)
        estimate = means_of_pairs(a, b, plan)
        g = plan.grid
        return (
            estimate,
            *mean_interval(a, b, estimate, g.scale, g.lower, g.upper, g.exponent, level),
        )


# ------------------------------------------------------------------ distinct values


# ------------------------------------------------------------------ signatures

_COLUMN_MANY = Param(
    "column",
    "Hashable | None",
    "None",
    """\
    column : label, optional
        The numeric column; missing values are skipped. Omit it and pass
        ``clip`` as a mapping for several columns.""",
    positional=True,
)
_CLIP_MANY = Param(
    "clip",
    "Any",
    doc="""\
    clip : (float, float), dict or "auto"
        Public clip bounds, never read from the data; values are clipped to
        them first (±inf to the bounds). A mapping ``{column: (lower,
        upper)}`` (with ``column`` omitted) releases several columns at once.
        ``"auto"``: chosen privately by :meth:`bounds` with a quarter of
        ``epsilon`` (or ``rho``), after a private count of the column's values
        with a twentieth (too few for this ``epsilon``: a ValueError says
        what to do, only the count spent); the call costs ``epsilon`` in
        total, held at once (one ledger entry per part; a grouped call finds
        one pair from every key's rows, a call without ``keys=`` from all the
        rows); the bounds are returned with an interval (or ``cut``) as
        ``clip_lower``/``clip_upper``.""",
)
_EPSILON_SPLIT = Param(
    "epsilon",
    "float | None",
    "None",
    """\
    epsilon : float
        $cost Split equally across columns.""",
)
#: The typed forms of a clipped sum or mean: several columns at once, one column, with ``ci``.
_CLIPPED_FORMS = (
    Form(
        ("pd.Series", "pd.DataFrame"),
        {"column": ("None", "None"), "clip": ("Mapping[Hashable, Bounds]", REQUIRED), "cut": OMIT},
    ),
    Form(
        ("float", "pd.Series"),
        {
            "column": ("Hashable", REQUIRED),
            "clip": ('Bounds | Literal["auto"]', REQUIRED),
            "ci": ("None", "None"),
            "cut": ("Literal[False]", "False"),
        },
    ),
    Form(
        ("pd.Series", "pd.DataFrame"),
        {"column": ("Hashable", REQUIRED), "clip": ('Bounds | Literal["auto"]', REQUIRED)},
    ),
)
_INTERVAL = """
        With ``ci``: $interval (for a mapping, under each column name)."""


def _sum(args: Mapping[str, Any], loss: tuple[str, Fraction]) -> Sum:
    return Sum(column=args["column"], clip=args["clip"], ci=args["ci"], **loss_fields(*loss))


def _mean(args: Mapping[str, Any], loss: tuple[str, Fraction]) -> Mean:
    return Mean(column=args["column"], clip=args["clip"], ci=args["ci"], **loss_fields(*loss))


def _one_column(args: Mapping[str, Any]) -> tuple[Hashable, ...]:
    return (args["column"],)


SUM = Signature(
    "sum",
    (_COLUMN_MANY, _CLIP_MANY, _EPSILON_SPLIT, RHO, CI, CUT, MAX_ROWS),
    _CLIPPED_FORMS,
    _sum,
    summary="Noisy sum of ``column``$per_key after clipping to the public bounds ``clip``.",
    returns="""\
        The clipped sum plus noise, on a power-of-two grid; for a mapping, one
        per column. $indexed"""
    + _INTERVAL,
    notes="""\
        Costs ``epsilon``. L1 sensitivity ``max(|L|, |U|)`` under add_remove;
        under substitute ``max(U − L, |L|, |U|)`` (a changed row's value may
        move by ``U − L``, or appear or disappear: a missing value, a filtered
        frame). Each clipped row is rounded to a power-of-two grid chosen from
        (sensitivity, epsilon) only, summed exactly in integers and given exact
        discrete Laplace noise, so the result lies on the grid. Public:
        $public``clip``, ``epsilon``.

        With ``ci``, ``estimate ± t·step`` (``t`` the exact discrete Laplace
        quantile on the grid) holds the clipped sum with probability at least
        ``ci``, per column. It covers the noise, not the bias of clipping:
        values beyond ``clip`` are counted at the bound. Strictly it covers the
        sum of the rows as rounded to the grid, which is within ``n·step/2`` of
        the exact clipped sum (``step`` is about 2**-30 of the noise scale:
        negligible below a billion rows). See ``pandas_dp.half_width``.""",
    grouped="""\
        Per column, L1 sensitivity ``max(|L|, |U|)`` under add_remove and
        ``2·max(|L|, |U|)`` under substitute; its L2 sensitivity (``rho=``)
        ``max(sqrt(2)·max(|L|, |U|), U − L)`` (a row may leave one key and join
        another, or change its value inside one key).""",
    columns=_one_column,
    clipped=True,
)

MEAN = Signature(
    "mean",
    (_COLUMN_MANY, _CLIP_MANY, _EPSILON_SPLIT, RHO, CI, CUT, MAX_ROWS),
    _CLIPPED_FORMS,
    _mean,
    summary="Noisy mean of ``column``$per_key after clipping to ``clip``; always inside the clip.",
    returns="""\
        Inside ``clip``; for a mapping, one per column. $indexed A key with no
        rows gets the clip midpoint plus noise."""
    + _INTERVAL,
    notes="""\
        Costs ``epsilon`` in total. Releases ``A = Σ(x − L)`` and
        ``B = Σ(U − x)`` with independent discrete Laplace noise of scale
        ``(U − L)/ε``: one person moves the pair by an L1 distance of exactly
        ``U − L``. The mean is ``L + (U − L)·a/(a + b)`` with ``a, b`` the
        noisy sums floored at 0 (the midpoint if both are 0): half the mean
        squared error of noisy-sum over noisy-count. Under substitute the pair
        has sensitivity ``2(U − L)``. Public: $public``clip``, ``epsilon``.

        With ``ci``: both noises lie within their exact discrete Laplace
        quantile ``t`` with probability ``ci`` (each at ``sqrt(ci)``); the
        mean is monotone in each sum, so the extreme sums give ``lower`` and
        ``upper``, widened by one grid step for rounding. The interval always
        lies inside ``clip`` and holds the exact clipped mean of a non-empty
        column with probability at least ``ci``: the noise, not the bias of
        clipping. Its half-width is about ``(U − L)·t/(n·Q)``, i.e. shrinks as
        ``1/n``; ``pandas_dp.half_width("mean", n=...)`` plans it.""",
    grouped="""\
        The complementary sums per key: jointly of L1 sensitivity ``U − L``
        under add_remove and ``2(U − L)`` under substitute. A key with no rows
        has no true mean, and its interval is wide.""",
    columns=_one_column,
    clipped=True,
)
