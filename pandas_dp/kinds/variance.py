"""The clipped sample variance and standard deviation: plan, statistics, kind.

One joint release per key of three integer sums on the mean's grid (the
complementary sums ``Σq`` and ``Σ(Q − q)``, and the centred ``Σ r(q)``):
:func:`plan_variance` splits ε between them, :func:`grid_triples` tallies
them, :func:`noisy_triples` adds the noise, :func:`variance_estimates` turns
them into counts, means and variances; :class:`Var` is the release kind of
``var`` and ``std``.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Hashable, Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from ..accounting.ledger import LedgerEntry
from ..core.noise import F64, I64, Gauss, RandomSource, draw_noise, gaussian_scale, integer_scale
from ..core.text import column_names, figures
from ..core.validation import Clip, check_clip, check_column, given, loss_fields, numeric_values
from ..core.zcdp import gaussian_rho
from ..mechanisms.accuracy import check_ci, units_half_width, var_miss, variance_interval
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
from .composite import Composite
from .signature import CI, CUT, EPSILON, MAX_ROWS, NUMERIC, REQUIRED, RHO, Form, Param, Signature
from .sums import CHUNK, GridPlan, complementary_mean, plan_mean, plan_mean_rho, round_rows

__all__ = [
    "Var",
    "VarPlan",
    "exact_triples",
    "grid_triples",
    "noisy_triples",
    "plan_variance",
    "plan_variance_rho",
    "triple_bump",
    "variance_estimates",
]


def triple_bump(top: int) -> int:
    """``R = max_q r(q)`` over ``q ∈ [0, top]``, with ``r(q) = round(q·(top − q)/top)``.

    ``r`` rounds half up in integers: ``(q·(top − q) + top // 2) // top``.  It
    is non-decreasing in ``q·(top − q)``, which peaks at ``q = top // 2``, so
    ``R = r(top // 2)``.  ``R`` can exceed ``top / 4`` (``top = 2``: ``R = 1``),
    so sensitivities are built from ``R``, never from ``top / 4``.  0 when
    ``top`` is 0.
    """
    if top <= 0:
        return 0
    half = top // 2
    return (half * (top - half) + half) // top


@dataclass(frozen=True)
class VarPlan:
    """The variance's joint release: the mean's pair and a centred second moment.

    Each row on the grid, ``q ∈ [0, Q]`` (``Q = grid.q_hi``), contributes
    ``(q, Q − q)`` to the pair ``(A, B)`` and ``z = r(q) − offset`` to ``C``,
    with ``r(q) = round(q·(Q − q)/Q) ∈ [0, bump]`` (:func:`triple_bump`) and
    ``offset = bump // 2``.  ``A`` and ``B`` get discrete Laplace noise of
    integer scale ``grid.scale`` (sensitivity ``grid.delta``), ``C`` of scale
    ``scale3`` (sensitivity ``delta3``).
    """

    grid: GridPlan
    bump: int
    offset: int
    delta3: int
    scale3: int | Gauss
    epsilon: Fraction | None
    #: Under ρ: ``grid`` is the mean's Gaussian plan at ρ/2, ``delta3`` is ``Δ₂²`` of C
    #: and ``scale3`` its :class:`~pandas_dp.core.noise.Gauss` noise at the other ρ/2.
    rho: Fraction | None = None

    @property
    def realised_epsilon(self) -> Fraction:
        """``Δ_pair/T + Δ_C/T_C``: the privacy loss of the joint release, at most ``epsilon``."""
        pair = (
            Fraction(self.grid.delta, self.grid.laplace_scale) if self.grid.scale else Fraction(0)
        )
        assert not isinstance(self.scale3, Gauss), "a Gaussian plan has no realised epsilon"
        third = Fraction(self.delta3, self.scale3) if self.scale3 else Fraction(0)
        return pair + third

    def declared(self) -> tuple[Declared, Declared]:
        """The pair's (jointly) and C's, in grid units: Δ₁ under ε, Δ₂² under ρ."""
        third = Declared(sq=self.delta3) if self.rho else Declared(self.delta3)
        return (*self.grid.declared(), third)

    def sensitivities(self) -> list[float]:
        """The ledger's sensitivities of the pair and of C in data units (L2 under ρ)."""
        step = self.grid.step
        if self.rho is None:
            return [self.grid.delta * step, self.delta3 * step]
        return [math.sqrt(self.grid.delta) * step, math.sqrt(self.delta3) * step]

    def noise_scales(self) -> list[float]:
        """The ledger's noise scales of the pair and of C in data units (σ under ρ)."""
        step = self.grid.step
        return [
            (n.sigma if isinstance(n, Gauss) else float(n)) * step
            for n in (self.grid.scale, self.scale3)
        ]

    @property
    def realised_rho(self) -> Fraction:
        """``Δ²_pair/(2σ²) + Δ²_C/(2σ_C²)``: the zCDP cost of the joint release, at most ``rho``."""
        parts = ((self.grid.delta, self.grid.scale), (self.delta3, self.scale3))
        return sum(
            (gaussian_rho(d, n.sigma2) for d, n in parts if isinstance(n, Gauss) and n),
            Fraction(0),
        )


#: The mechanism the ledger records for ``var``/``std``, under ε and under ρ.
MECHANISM = "discrete_laplace on grid (complementary sums ε/2, centred r(q) ε/2)"
GAUSSIAN_MECHANISM = "discrete_gaussian on grid (complementary sums ρ/2, centred r(q) ρ/2)"


@functools.lru_cache(maxsize=512)  # plans are pure functions of public parameters
def plan_variance(clip: tuple[float, float], epsilon: Fraction, neighbours: Neighbours) -> VarPlan:
    """The privacy map of ``var``/``std``: one joint release of three sums per key.

    Rows are clipped to ``[L, U]`` and put on the mean's grid (centre L, step
    ``g = 2**k`` chosen from public parameters only): ``q ∈ [0, Q]``.  Every
    row adds the integer vector ``v(q) = (q, Q − q, r(q) − o)`` to the
    statistics ``(A, B, C)``, with ``r(q) = round(q(Q − q)/Q)`` (computed
    exactly in int64: ``q(Q − q) < 2**63`` because ``Q < 2**32``),
    ``R = max r = r(Q // 2)`` and ``o = R // 2``, so ``|r(q) − o| ≤ R − o``.

    Sensitivity (L1, per block; the blocks add up because one neighbour
    change moves both at once):

    - the pair ``(A, B)``: an added or removed row moves it by
      ``(q, Q − q)``, L1 norm exactly ``Q``; under substitute a changed value
      moves it by ``2|q − q′| ≤ 2Q`` (and a row moving between keys by ``2Q``):
      ``Neighbours.pair_sensitivity(Q)``.
    - ``C``: an added or removed row moves it by ``r(q) − o ∈ [−o, R − o]``;
      a changed value by ``|r(q) − r(q′)| ≤ R``; a row moving between keys by
      ``2·max(o, R − o)``: ``Neighbours.sum_sensitivity(−o, R − o)``, the
      sensitivity of a sum of rows in ``[−o, R − o]``.

    Both are attained (q = 0 or Q for the pair, ``q = Q // 2`` for C), so the
    bound is tight; tests check it exhaustively for small Q.  The pair gets
    ``ε/2`` (``T = ceil(Δ_pair/(ε/2))``) and C the other half
    (``T_C = ceil(Δ_C/(ε/2))``): independent discrete Laplace noise per
    coordinate is ε-DP for the whole vector because
    ``Δ_pair/T + Δ_C/T_C ≤ ε``.  Count and mean come from the pair jointly
    (complementary sums) instead of two shares, and the centred second moment
    has range ``≈ Q/8``: at n = 2,000 this beats a three-way split of ε over
    count, sum and sum of squares (``bench/bench_statistics.py``), and the
    uncentred triple ``(y, 1 − y, y(1 − y))`` at one scale, whose second
    moment carries the noise of an L1 norm of 1.25.

    ``Q`` is 0 when the clip is narrower than half a grid step (a tiny ε):
    every sensitivity is then 0 and the release says nothing about the data.
    """
    half = epsilon / 2
    grid = plan_mean(clip, half, neighbours).grid
    bump = triple_bump(grid.q_hi)
    offset = bump // 2
    delta3 = neighbours.sum_sensitivity(-offset, bump - offset)
    return VarPlan(grid, bump, offset, delta3, integer_scale(delta3, half), epsilon)


@functools.lru_cache(maxsize=512)  # plans are pure functions of public parameters
def plan_variance_rho(clip: tuple[float, float], rho: Fraction, neighbours: Neighbours) -> VarPlan:
    """The privacy map of ``var``/``std`` under ρ: :func:`plan_variance` with Gaussian noise.

    The same three sums on the same kind of grid; the L2 figures replace the
    L1 ones.  The pair ``(A, B)`` is the mean's, ``Δ₂² = Neighbours.pair_sq_sensitivity(Q)``
    (an added row moves it by ``(q, Q − q)``, ``q² + (Q − q)² <= Q²``);
    ``C`` is a sum of rows in ``[−o, R − o]``: ``Δ₂² =
    Neighbours.sum_sq_sensitivity(−o, R − o)``.  Each block gets ρ/2 (the
    pair by :func:`pandas_dp.kinds.sums.plan_mean_rho`, C the discrete
    Gaussian of ``σ_C² >= Δ₂²_C/ρ``): Gaussian mechanisms on the same
    neighbour change compose by adding their ρ, so the release is ρ-zCDP
    (:attr:`VarPlan.realised_rho`).
    """
    half = rho / 2
    grid = plan_mean_rho(clip, half, neighbours).grid
    bump = triple_bump(grid.q_hi)
    offset = bump // 2
    sq3 = neighbours.sum_sq_sensitivity(-offset, bump - offset)
    return VarPlan(grid, bump, offset, sq3, Gauss(gaussian_scale(sq3, half)), None, rho)


def grid_triples(
    values: F64, codes: I64 | None, n_keys: int, plan: VarPlan
) -> tuple[I64, I64, I64]:
    """Exact per-key ``Σq``, non-missing counts and ``Σr(q)`` (see :func:`plan_variance`).

    One pass in cache-sized chunks; ``r`` is computed in int64.  Missing values
    are skipped; rows with code -1 are dropped.  All three add up across row
    slices.
    """
    grid = plan.grid
    top = grid.q_hi
    half = top // 2
    sums = np.zeros(n_keys, dtype=np.int64)
    counts = np.zeros(n_keys, dtype=np.int64)
    bumps = np.zeros(n_keys, dtype=np.int64)
    size = min(CHUNK, len(values))
    buf = np.empty(size, dtype=np.float64)
    q_int = np.empty(size, dtype=np.int64)
    r = np.empty(size, dtype=np.int64)
    total = total_r = missing = 0
    for start in range(0, len(values), CHUNK):
        x = values[start : start + CHUNK]
        m = len(x)
        q = round_rows(x, grid.lower, grid.upper, grid.center, grid.exponent, out=buf[:m])
        shifted = None if codes is None else codes[start : start + CHUNK] + 1
        chunk_sum = q.sum()
        if chunk_sum != chunk_sum:  # NaN present: skip missing values, like pandas
            nan = np.isnan(q)
            q[nan] = 0.0  # r(0) = 0: a missing row adds nothing
            chunk_sum = q.sum()
            if shifted is None:
                missing += int(np.count_nonzero(nan))
            else:
                shifted[nan] = 0  # bin 0 is dropped
        qi, ri = q_int[:m], r[:m]
        np.copyto(qi, q, casting="unsafe")  # integers below 2**32: exact
        if top:
            np.subtract(top, qi, out=ri)
            np.multiply(ri, qi, out=ri)  # q(Q − q) < 2**62
            np.add(ri, half, out=ri)
            np.floor_divide(ri, top, out=ri)
        else:
            ri[:] = 0
        if shifted is None:
            total += int(chunk_sum)
            total_r += int(ri.sum())
            continue
        sums += np.bincount(shifted, weights=q, minlength=n_keys + 1)[1:].astype(np.int64)
        bumps += np.bincount(shifted, weights=ri, minlength=n_keys + 1)[1:].astype(np.int64)
        counts += np.bincount(shifted, minlength=n_keys + 1)[1:]
    if codes is None:
        sums[0], bumps[0] = total, total_r
        counts[0] = len(values) - missing
    return sums, counts, bumps


def exact_triples(sums: I64, counts: I64, bumps: I64, plan: VarPlan) -> tuple[I64, I64, I64]:
    """The exact ``A = Σq``, ``B = N·Q − Σq`` and ``C = Σr − N·o`` per key."""
    return sums, counts * plan.grid.q_hi - sums, bumps - counts * plan.offset


def noisy_triples(
    src: RandomSource, sums: I64, counts: I64, bumps: I64, plan: VarPlan
) -> tuple[I64, I64, I64]:
    """``A′ = Σq + Z``, ``B′ = N·Q − Σq + Z``, ``C′ = Σr − N·o + Z_C`` per key."""
    a, b, c = exact_triples(sums, counts, bumps, plan)
    n_keys = sums.size
    pair = draw_noise(src, plan.grid.scale, 2 * n_keys)
    return a + pair[:n_keys], b + pair[n_keys:], c + draw_noise(src, plan.scale3, n_keys)


def variance_estimates(a: I64, b: I64, c: I64, plan: VarPlan) -> tuple[F64, F64, F64]:
    """Count, mean and variance (``ddof=1``) per key from the noisy triple: post-processing.

    With ``a = max(A′, 0)``, ``b = max(B′, 0)``: ``n = (a + b)/Q`` and the mean
    is :func:`complementary_mean`.  On the grid, ``Σ(q − q̄)² = Q·Σq − Σq(Q − q)
    − (Σq)²/n = Q·(AB/(A + B) − Σq(Q − q)/Q)`` and ``Σq(Q − q)/Q ≈ Σr =
    C + n·o``, so ``var = g²·Q·(ab/(a + b) − C′ − n·o)/max(n − 1, 1)``, clamped
    to ``[0, (Qg)²/4 · d/(d − 1)]`` (the largest sample variance of values in
    the clip).  Never negative; 0 for a key whose noisy count is 0.
    """
    grid = plan.grid
    top = grid.q_hi
    n_keys = a.size
    mean = complementary_mean(a, b, grid.lower, grid.upper)
    if top == 0:
        return np.zeros(n_keys), mean, np.zeros(n_keys)
    a_pos = np.maximum(a, 0).astype(np.float64)
    b_pos = np.maximum(b, 0).astype(np.float64)
    both = a_pos + b_pos
    count = both / top
    spread = np.divide(a_pos * b_pos, both, out=np.zeros(n_keys), where=both > 0)
    squares = top * (spread - c.astype(np.float64) - count * plan.offset)
    dof = np.maximum(count - 1.0, 1.0)
    var_q = np.clip(squares / dof, 0.0, top * (top / 4.0) * (dof + 1.0) / dof)
    variance: F64 = np.ldexp(var_q, 2 * grid.exponent)
    return count, mean, variance


@dataclass(frozen=True)
class Var(Kind[float | pd.Series, pd.Series | pd.DataFrame]):
    """The clipped sample variance (``ddof=1``) of ``column``, or its square root.

    One joint release per key (:func:`plan_variance`); never negative.
    ``ci``: a confidence level; the answer then comes with its interval
    (:func:`~pandas_dp.mechanisms.accuracy.variance_interval`), post-processing of the
    same three noisy sums.
    """

    name: ClassVar[str] = "var"
    planners: ClassVar = (plan_mean, plan_variance, plan_mean_rho, plan_variance_rho)
    plannable: ClassVar[bool] = True

    epsilon: Fraction | None
    column: Hashable
    clip: Clip
    std: bool = False
    ci: float | None = None
    #: Under a ρ budget: the discrete Gaussian at this ρ instead (``epsilon`` None).
    rho: Fraction | None = None
    #: A part of a composite (``describe``, ``cov``): the answer is the three estimates
    #: (count, mean, variance) per key, which the composite combines (and with ``ci``
    #: the variance's interval, two more).
    moments: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "ci", check_ci(self.ci))

    @classmethod
    def of(
        cls,
        epsilon: Fraction | None,
        column: Hashable,
        clip: object,
        *,
        std: bool,
        ci: object = None,
        rho: Fraction | None = None,
    ) -> Var:
        if isinstance(clip, Mapping):
            raise TypeError("`clip` must be a pair (lower, upper) for one column.")
        return cls(epsilon, column, check_clip(clip), std, check_ci(ci), rho)

    def columns(self) -> tuple[Hashable, ...]:
        return (self.column,)

    def read(self, df: pd.DataFrame, n_keys: int) -> Rows:
        check_column(df, self.column)
        return Rows(len(df), (numeric_values(df, self.column),))

    def plan(self, neighbours: Neighbours) -> VarPlan:
        if self.rho is not None:
            return plan_variance_rho(self.clip, self.rho, neighbours)
        assert self.epsilon is not None
        return plan_variance(self.clip, self.epsilon, neighbours)

    def half_width(
        self, plan: VarPlan, level: float, n: int | None = None
    ) -> tuple[float, ...] | str:
        """At ``n`` rows per key: how far the answer may be from the clipped sample variance (std).

        Whatever the data.  With probability ``level`` the three noises are
        within ``t``, ``t`` and ``t₃`` (:func:`~pandas_dp.mechanisms.accuracy.var_miss`).
        In grid units, with ``Q = q_hi``, ``o`` the offset, ``N = n`` and the
        estimator's ``N′ = (a + b)/Q`` within ``2t/Q`` of N (see
        :func:`variance_estimates` and
        :func:`~pandas_dp.mechanisms.accuracy.variance_interval`): the sum of
        squares over Q, ``M = AB/(A + B) − C − N·o + e`` with ``|e| <= N/2``,
        moves by at most ``t + t₃ + 2t·o/Q + N/2`` (``AB/(A + B)`` has partial
        derivatives in [0, 1] summing to at most 1), and ``M <= QN/4``; so the
        variance ``Q·M/(N − 1)``, divided by ``N′ − 1`` instead, moves by at
        most ``Q·((t + t₃ + 2t·o/Q + N/2) + N·t/(2(N − 1)))/(N − 1 − 2t/Q)``,
        the clamp to the largest variance by at most ``Q·t/(2(N − 1)²)`` more,
        and rounding each row to the grid by ``step·(U − L)·N/(2(N − 1))``
        (data units).  Never more than the largest variance of values in the
        clip, ``(U − L)²/4·N/(N − 1)``.  The std: the square root of the
        variance's (``|√x − √y| <= √|x − y|``), so it holds for data of any
        spread, and is wide for data of little.
        """
        if n is None:
            return DEPENDS_ON_N
        grid = plan.grid
        lower, upper = self.clip
        width = upper - lower
        rows = max(int(n), 2)
        widest = width * width / 4 * rows / (rows - 1)
        top = grid.q_hi
        miss = var_miss(level)
        t = float(units_half_width(grid.scale, miss)) if grid.scale else math.inf
        t3 = float(units_half_width(plan.scale3, miss)) if plan.scale3 else 0.0
        spare = rows - 1 - 2 * t / top if top else -1.0
        if n < 2 or spare <= 0:
            variance = widest
        else:
            moved = t + t3 + 2 * t * plan.offset / top + rows / 2 + rows * t / (2 * (rows - 1))
            units = top * (moved / spare + t / (2 * (rows - 1) ** 2))
            rounding = grid.step * width * rows / (2 * (rows - 1))
            variance = math.ldexp(units, 2 * grid.exponent) + rounding
            variance = min(variance * (1 + 1e-12), widest)  # float slack
        return (math.sqrt(variance) if self.std else variance,)

    def entry(self, plan: VarPlan, neighbours: Neighbours, keys: int | None) -> LedgerEntry:
        return ledger_entry(
            self,
            plan,
            neighbours,
            keys,
            operation="std" if self.std else self.name,
            epsilon=self.epsilon,
            rho=self.rho,
            columns=column_names([self.column]),
            mechanism=MECHANISM if self.rho is None else GAUSSIAN_MECHANISM,
            sensitivity=figures(plan.sensitivities()),
            noise_scale=figures(plan.noise_scales()),
            clip=(self.clip,),
        )

    def tally(self, plan: VarPlan, rows: Rows, codes: I64 | None, n_keys: int) -> Stats:
        return grid_triples(rows.arrays[0], codes, n_keys, plan)

    def noise_free(self, plan: VarPlan, stats: Stats, n_keys: int) -> tuple[I64, I64]:
        """The pair ``(A, B)`` and ``C``."""
        a, b, c = exact_triples(stats[0], stats[1], stats[2], plan)
        return np.concatenate([a, b]), c

    @classmethod
    def examples(cls, columns: ExampleColumns) -> tuple[Var, ...]:
        clips = columns.clips
        return tuple([cls(e, columns.value, c, rho=r) for c in clips for e, r in EXAMPLE_LOSSES])

    def finish(self, plan: VarPlan, stats: Stats, source: RandomSource, n_keys: int) -> Any:
        a, b, c = noisy_triples(source, stats[0], stats[1], stats[2], plan)
        count, mean, variance = variance_estimates(a, b, c, plan)
        if self.moments and self.ci is None:
            return count, mean, variance
        estimate = np.sqrt(variance) if self.std else variance
        if self.ci is None:
            return estimate
        grid = plan.grid
        lo, hi = variance_interval(
            a,
            b,
            c,
            top=grid.q_hi,
            offset=plan.offset,
            scale=grid.scale,
            scale3=plan.scale3,
            lower=grid.lower,
            upper=grid.upper,
            exponent=grid.exponent,
            level=self.ci,
        )
        if not self.std:
            lo, hi = lo * lo, hi * hi
        lo, hi = np.minimum(lo, estimate), np.maximum(hi, estimate)
        if self.moments:  # the variance's interval beside the three estimates
            return count, mean, variance, lo, hi
        return estimate, lo, hi

    def shape_one(self, answer: Any) -> float | pd.Series:
        if self.ci is None:
            return float(answer[0])
        return interval_one(answer, self.column)

    def shape_many(self, answer: Any, keys: pd.Index) -> pd.Series | pd.DataFrame:
        if self.ci is None:
            return pd.Series(answer, index=keys, name=self.column)
        return interval_many(answer, keys)


@dataclass(frozen=True, eq=False)
class Cov(Composite[float | pd.Series, pd.Series | pd.DataFrame]):
    """The clipped sample covariance (``ddof=1``) of columns ``a`` and ``b``: a composite.

    ``cov(a, b) = (var(a + b) − var(a − b)) / 4`` on the clipped values, each
    variance a :class:`Var` part at half the loss: ``a + b`` clipped to
    ``[La + Lb, Ua + Ub]`` and ``a − b`` to ``[La − Ub, Ua − Lb]`` (a row
    clipped to its two bounds lies inside both).  Rows where either value is
    missing are skipped (pairwise complete, as pandas).  ``ci``: each
    variance's interval at ``ci**(1/2)``, the covariance's from their ends
    (both hold with probability at least ``ci``).
    """

    name: ClassVar[str] = "cov"
    planners: ClassVar = (plan_mean, plan_variance, plan_mean_rho, plan_variance_rho)
    #: How many variances the release is made of (``corr`` adds those of a and b).
    _WIDTH: ClassVar[int] = 2

    epsilon: Fraction | None
    a: Hashable
    b: Hashable
    clip_a: Clip
    clip_b: Clip
    ci: float | None = None
    #: Under a ρ budget: the discrete Gaussian at this ρ instead (``epsilon`` None).
    rho: Fraction | None = None

    @classmethod
    def of(
        cls,
        epsilon: Fraction | None,
        a: Hashable,
        b: Hashable,
        clip: object,
        *,
        ci: object = None,
        rho: Fraction | None = None,
    ) -> Cov:
        if not isinstance(clip, Mapping) or set(clip) != {a, b} or a == b:
            raise TypeError(
                f"`clip` must map each of the two columns to its public bounds, e.g. "
                f"clip={{'a': (0, 10), 'b': (-1, 1)}} (or clip=\"auto\"); got {given(clip)}"
                + (" for one column twice." if a == b else ".")
            )
        return cls(epsilon, a, b, check_clip(clip[a]), check_clip(clip[b]), check_ci(ci), rho)

    @functools.cached_property
    def _parts(self) -> tuple[Var, ...]:
        (la, ua), (lb, ub) = self.clip_a, self.clip_b
        clips = [(la + lb, ua + ub), (la - ub, ua - lb), self.clip_a, self.clip_b]
        labels = [f"{self.a}+{self.b}", f"{self.a}-{self.b}", self.a, self.b]
        level = None if self.ci is None else self.ci ** (1 / self._WIDTH)
        if self.rho is not None:
            loss = {"epsilon": None, "rho": self.rho / self._WIDTH}
        else:
            assert self.epsilon is not None
            loss = {"epsilon": self.epsilon / self._WIDTH, "rho": None}
        return tuple(
            Var(loss["epsilon"], label, check_clip(clip), ci=level, rho=loss["rho"], moments=True)
            for label, clip in zip(labels[: self._WIDTH], clips[: self._WIDTH], strict=True)
        )

    def parts(self) -> tuple[Kind[Any, Any], ...]:
        """The variances of the clipped sum and difference (at half the loss each)."""
        return self._parts

    def columns(self) -> tuple[Hashable, ...]:
        return (self.a, self.b)

    def read(self, df: pd.DataFrame, n_keys: int) -> Rows:
        check_column(df, self.a)
        check_column(df, self.b)
        x = np.clip(numeric_values(df, self.a), *self.clip_a)
        y = np.clip(numeric_values(df, self.b), *self.clip_b)
        both = ~(np.isnan(x) | np.isnan(y))
        x, y = np.where(both, x, np.nan), np.where(both, y, np.nan)
        arrays = (x + y, x - y, x, y)[: self._WIDTH]
        return Rows(len(df), arrays, (1,) * self._WIDTH)

    @classmethod
    def examples(cls, columns: ExampleColumns) -> tuple[Cov, ...]:
        a, b = columns.value, columns.label
        label_clip = (float(min(columns.labels)), float(max(columns.labels)))
        return tuple(
            [
                cls.of(e, a, b, {a: c, b: label_clip}, rho=r)
                for c in columns.clips
                for e, r in EXAMPLE_LOSSES
            ]
        )

    def combined(self, answers: list[Any]) -> Any:
        """``(var(a + b) − var(a − b)) / 4``, with its interval from the parts' with ``ci``."""
        total, difference = answers[0], answers[1]
        estimate = (total[2] - difference[2]) / 4
        if self.ci is None:
            return estimate
        lower, upper = (total[3] - difference[4]) / 4, (total[4] - difference[3]) / 4
        return estimate, np.minimum(lower, estimate), np.maximum(upper, estimate)

    def shape_one(self, answer: Any) -> float | pd.Series:
        if self.ci is None:
            return float(answer[0])
        return interval_one(answer, self.name)

    def shape_many(self, answer: Any, keys: pd.Index) -> pd.Series | pd.DataFrame:
        if self.ci is None:
            return pd.Series(answer, index=keys, name=self.name)
        return interval_many(answer, keys)


@dataclass(frozen=True, eq=False)
class Corr(Cov):
    """The correlation of the clipped ``a`` and ``b``: ``cov / (std(a)·std(b))``, in [−1, 1].

    Four :class:`Var` parts at a quarter of the loss each: the variances of
    ``a + b`` and ``a − b`` (the covariance, as :class:`Cov`) and of ``a`` and
    ``b`` (pairwise complete rows).  0 where a noisy variance of ``a`` or
    ``b`` is 0.  ``ci``: each part's interval at ``ci**(1/4)``; the
    correlation's ends are the extremes of the ratio over them.
    """

    name: ClassVar[str] = "corr"
    _WIDTH: ClassVar[int] = 4

    def parts(self) -> tuple[Kind[Any, Any], ...]:
        """The variances of the clipped sum, difference, ``a`` and ``b`` (a quarter each)."""
        return self._parts

    def combined(self, answers: list[Any]) -> Any:
        total, difference, va, vb = answers
        cov = (total[2] - difference[2]) / 4
        estimate = _ratio(cov, va[2] * vb[2])
        if self.ci is None:
            return estimate
        covs = ((total[3] - difference[4]) / 4, (total[4] - difference[3]) / 4)
        products = (va[3] * vb[3], va[4] * vb[4])
        corners = [_ratio(c, p) for c in covs for p in products]
        lower, upper = np.minimum.reduce(corners), np.maximum.reduce(corners)
        return estimate, np.minimum(lower, estimate), np.maximum(upper, estimate)


def _ratio(cov: F64, product: F64) -> F64:
    """``cov / sqrt(product)`` in [−1, 1]; where the product is 0, its sign (0 for 0)."""
    scale = np.sqrt(np.maximum(product, 0.0))
    safe = np.where(scale > 0, scale, 1.0)
    ratio: F64 = np.where(scale > 0, cov / safe, np.sign(cov))
    return np.clip(ratio, -1.0, 1.0)


# ------------------------------------------------------------------ signatures

_CLIP_ONE = Param(
    "clip",
    "Any",
    doc="""\
    clip : (float, float) or "auto"
        Public clip bounds, never read from the data; values are clipped to
        them first (±inf to the bounds). ``"auto"``: chosen privately by
        :meth:`bounds` with a quarter of ``epsilon`` (or of ``rho``), after a
        private count of the column's values with a twentieth (too few for this
        ``epsilon``, a ValueError says what to do, only the count spent); the
        call costs ``epsilon`` in total, held at once (one ledger entry per
        part); the bounds are returned with an interval (or ``cut``) as
        ``clip_lower``/``clip_upper``.""",
)
_FORMS = (
    Form(("float", "pd.Series"), {"ci": ("None", "None"), "cut": ("Literal[False]", "False")}),
    Form(("pd.Series", "pd.DataFrame")),
)


def _var(args: Mapping[str, Any], loss: tuple[str, Fraction], std: bool = False) -> Var:
    f = loss_fields(*loss)
    return Var.of(f["epsilon"], args["column"], args["clip"], std=std, ci=args["ci"], rho=f["rho"])


def _std(args: Mapping[str, Any], loss: tuple[str, Fraction]) -> Var:
    return _var(args, loss, std=True)


def _one_column(args: Mapping[str, Any]) -> tuple[Hashable, ...]:
    return (args["column"],)


VAR = Signature(
    "var",
    (NUMERIC, _CLIP_ONE, EPSILON, RHO, CI, CUT, MAX_ROWS),
    _FORMS,
    _var,
    summary="Noisy sample variance of ``column``$per_key (``ddof=1``, like pandas) after clipping.",
    returns="""\
        Never negative, at most ``(U − L)²/2``; 0 when the noisy count is 0.
        $indexed With ``ci``: $interval.""",
    notes="""\
        Costs ``epsilon``: one joint release, with no separate count. Each
        clipped row on the grid ``q ∈ [0, Q]`` adds ``(q, Q − q)`` to the
        mean's complementary sums (ε/2; L1 sensitivity ``U − L`` under
        add_remove, ``2(U − L)`` under substitute) and the centred second
        moment ``round(q(Q − q)/Q) − o`` to a third sum (ε/2; range
        ``≈ (U − L)/8``). Count, mean and variance all come from these three
        (see :func:`pandas_dp.kinds.variance.plan_variance` for the proof of
        the sensitivity). Public: $public``clip``, ``epsilon``.

        With ``ci``: each of the three noises lies within its exact discrete
        Laplace quantile with probability ``ci**(1/3)`` (independent, so all
        three with probability ``ci``); bounding the variance over that box
        of noiseless sums, widened by the grid rounding, gives an interval
        inside ``[0, (U − L)²/2]`` that holds the sample variance of the
        clipped values (at least two rows) with probability at least ``ci``
        (:func:`pandas_dp.mechanisms.accuracy.variance_interval` proves it). It
        is conservative (coverage well above ``ci`` in practice) and covers
        the noise, not the bias of clipping. Post-processing: same cost, same
        estimate.

        With ``rho``: the same three sums with discrete Gaussian noise, ρ/2
        on the pair (L2 sensitivity ``U − L``: ``q² + (Q − q)² <= Q²``;
        ``sqrt(2)·(U − L)`` under substitute) and ρ/2 on the third (L2: its
        range); the interval uses the Gaussian's quantiles
        (:func:`pandas_dp.kinds.variance.plan_variance_rho`).""",
    grouped="""\
        Per key, the complementary sums (L1 sensitivity ``U − L`` under
        add_remove, ``2(U − L)`` under substitute, where a row may move between
        keys) and the centred second moment (about ``(U − L)/8``, doubled under
        substitute).""",
    columns=_one_column,
    clipped=True,
)

STD = Signature(
    "std",
    (NUMERIC, _CLIP_ONE, EPSILON, RHO, CI, CUT, MAX_ROWS),
    _FORMS,
    _std,
    summary="Noisy standard deviation of ``column``$per_key (``ddof=1``): the square root of "
    ":meth:`var`.",
    returns="""\
        Never negative, at most ``(U − L)/sqrt(2)``. $indexed With ``ci``:
        $interval.""",
    notes="""\
        Costs ``epsilon``: the same release, sensitivity (under add_remove and
        substitute) and public parameters as :meth:`var` (post-processing is
        free). With ``ci``: the square roots of :meth:`var`'s interval, so it
        holds the clipped sample standard deviation with probability at least
        ``ci``; always inside ``[0, (U − L)/sqrt(2)]``. Public:
        $public``clip``, ``epsilon``.""",
    columns=_one_column,
    clipped=True,
)


def _cov(args: Mapping[str, Any], loss: tuple[str, Fraction], corr: bool = False) -> Cov:
    f = loss_fields(*loss)
    kind = Corr if corr else Cov
    return kind.of(f["epsilon"], args["a"], args["b"], args["clip"], ci=args["ci"], rho=f["rho"])


def _corr(args: Mapping[str, Any], loss: tuple[str, Fraction]) -> Cov:
    return _cov(args, loss, corr=True)


def _pair(args: Mapping[str, Any]) -> tuple[Hashable, ...]:
    return (args["a"], args["b"])


_A = Param(
    "a",
    "Hashable",
    doc="""\
    a, b : label
        Two numeric columns; rows where either is missing are skipped.""",
    positional=True,
)
_B = Param("b", "Hashable", positional=True)
_CLIP_PAIR = Param(
    "clip",
    "Any",
    doc="""\
    clip : dict or "auto"
        ``{a: (lower, upper), b: (lower, upper)}``: public clip bounds of
        each column, never read from the data; values are clipped to them
        first. ``"auto"``: each column's chosen privately by :meth:`bounds`
        (a quarter of ``epsilon``, after a count of its values with a
        twentieth, each split across the two columns; the call still costs
        ``epsilon``), returned with an interval as ``clip_lower[a]``,
        ``clip_upper[a]``, ``clip_lower[b]`` and ``clip_upper[b]``.""",
)
_PAIR_FORMS = (
    Form(("float", "pd.Series"), {"ci": ("None", "None")}),
    Form(("pd.Series", "pd.DataFrame"), {"ci": ("float", REQUIRED)}),
)

COV = Signature(
    "cov",
    (_A, _B, _CLIP_PAIR, EPSILON, RHO, CI, MAX_ROWS),
    _PAIR_FORMS,
    _cov,
    summary="Noisy sample covariance of the clipped ``a`` and ``b``$per_key (``ddof=1``, like "
    "pandas).",
    returns="""\
        The covariance of the clipped values. $indexed With ``ci``: $interval.""",
    notes="""\
        Costs ``epsilon``: ``(var(a + b) − var(a − b)) / 4``, each variance one
        joint release of :meth:`var` at ``epsilon/2`` on the clipped sum (clip
        ``[La + Lb, Ua + Ub]``) and difference (``[La − Ub, Ua − Lb]``), with
        :meth:`var`'s sensitivities under add_remove and substitute. With
        ``ci``, each variance's interval at ``ci**(1/2)``: the covariance's
        interval holds the clipped sample covariance with probability at least
        ``ci``. Public: $public``clip``, ``epsilon``.""",
    columns=_pair,
    clipped=True,
)

CORR = Signature(
    "corr",
    (_A, _B, _CLIP_PAIR, EPSILON, RHO, CI, MAX_ROWS),
    _PAIR_FORMS,
    _corr,
    summary="Noisy correlation of the clipped ``a`` and ``b``$per_key, in [−1, 1].",
    returns="""\
        The correlation of the clipped values, in [−1, 1]. $indexed With ``ci``:
        $interval.""",
    notes="""\
        Costs ``epsilon``: ``cov(a, b) / (std(a)·std(b))``, four joint releases
        of :meth:`var` at ``epsilon/4`` each, on the clipped sum, difference,
        ``a`` and ``b`` (pairwise complete rows), with :meth:`var`'s
        sensitivities under add_remove and substitute; 0 where a noisy
        variance of ``a`` or ``b`` is 0. With ``ci``, each part's interval at
        ``ci**(1/4)``; the correlation's is the range of the ratio over them,
        holding the clipped correlation with probability at least ``ci``.
        Public: $public``clip``, ``epsilon``.""",
    columns=_pair,
    clipped=True,
)
