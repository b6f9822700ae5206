"""Empirical privacy audits (ALGORITHMS.md §6.2): a Clopper-Pearson lower bound on ε.

Each audit draws N = 100,000 releases on each of two neighbouring datasets D
and D′ through the real groupby path: one replicate of D per public key, so
one vectorized call gives N independent releases.  ``epsilon_lower_bound``
turns the frequencies of ``{y >= c}`` and ``{y < c}`` at 19 pooled quantiles
into a bound that exceeds the true ε with probability at most 1e-6.  We assert
it never exceeds the claimed ε, that it comes close to ε for neighbours that
use the whole sensitivity (catching over-noising), and that the same audit
catches a deliberately halved noise scale.

A neighbour that moves a row between two keys changes a pair of releases
``(y_a, y_b)``; it is observed through ``min(y_a − m_a, m_b − y_b)`` (``m`` the
pooled medians), whose upper events are the quadrants where the privacy loss
of the pair peaks.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from pandas_dp.core import zcdp
from pandas_dp.core.noise import SeededSource
from pandas_dp.kinds import count, nunique, sums
from pandas_dp.kinds.base import Neighbours as Relation

EPSILON = 1.0
N = 100_000
CLIP = (0.0, 10.0)
D = (3.0, 7.0, 10.0, 1.0)
#: Fraction of the claimed ε a sensitivity-tight audit must reach at this N.
TIGHT = 0.7

Groups = tuple[tuple[float, ...], ...]
Bound = Callable[[np.ndarray, np.ndarray], float]


@dataclass(frozen=True)
class Neighbours:
    """Two neighbouring datasets, as the rows of each key of one replicate."""

    stat: str
    adjacency: str
    d: Groups
    d_prime: Groups
    clip: tuple[float, float] = CLIP
    tight: bool = True


def grouped_releases(groups: Groups, case: Neighbours, seed: int) -> np.ndarray:
    """N releases of ``case.stat`` on ``groups`` through ``df.dp.groupby``: shape (N, keys)."""
    n_groups = len(groups)
    sizes = [len(rows) for rows in groups]
    values = np.tile(np.concatenate([np.asarray(rows, dtype=float) for rows in groups]), N)
    within = np.repeat(np.arange(n_groups), sizes)
    keys = np.repeat(np.arange(N), sum(sizes)) * n_groups + np.tile(within, N)
    df = pd.DataFrame({"k": keys, "x": values})
    df.dp.set_budget(epsilon=EPSILON, adjacency=case.adjacency, seed=seed)
    g = df.dp.groupby("k", keys=pd.RangeIndex(N * n_groups))
    if case.stat == "count":
        released = g.count(epsilon=EPSILON)
    else:
        released = getattr(g, case.stat)("x", clip=case.clip, epsilon=EPSILON)
    return released.to_numpy(dtype=float).reshape(N, n_groups)


def observed(y: np.ndarray, y_prime: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """One number per release: the release itself, or the quadrant statistic of a pair."""
    if y.shape[1] == 1:
        return y[:, 0], y_prime[:, 0]
    m = np.median(np.concatenate([y, y_prime]), axis=0)

    def quadrant(pair: np.ndarray) -> np.ndarray:
        return np.minimum(pair[:, 0] - m[0], m[1] - pair[:, 1])

    return quadrant(y), quadrant(y_prime)


def audit(case: Neighbours, bound: Bound) -> float:
    y = grouped_releases(case.d, case, seed=1)
    y_prime = grouped_releases(case.d_prime, case, seed=2)
    return bound(*observed(y, y_prime))


AT_L = (0.0,) * 8
MIDDLE = (5.0,) * 8

CASES = {
    # add_remove: one row added; vector sensitivity = scalar sensitivity
    "count-add": Neighbours("count", "add_remove", (D,), ((*D, 5.0),)),
    "count-empty-key": Neighbours("count", "add_remove", ((),), ((4.0,),)),
    "sum-add-at-upper": Neighbours("sum", "add_remove", (D,), ((*D, 10.0),)),
    "sum-add-beyond-clip": Neighbours("sum", "add_remove", (D,), ((*D, 1000000.0),)),
    "sum-add-at-negative-lower": Neighbours(
        "sum", "add_remove", (D,), ((*D, -10.0),), clip=(-10.0, 5.0)
    ),
    "sum-empty-key": Neighbours("sum", "add_remove", ((),), ((-1e9,),), clip=(-10.0, 5.0)),
    "mean-add-at-upper": Neighbours("mean", "add_remove", (AT_L,), ((*AT_L, 10.0),)),
    "mean-add-beyond-clip": Neighbours("mean", "add_remove", (AT_L,), ((*AT_L, 1000000.0),)),
    "mean-small-group": Neighbours("mean", "add_remove", (D,), ((*D, 10.0),)),
    "mean-empty-key": Neighbours("mean", "add_remove", ((),), ((10.0,),)),
    # substitute: one row changes its value, or moves to another key (sensitivity doubles)
    "sum-sub-value": Neighbours(
        "sum", "substitute", ((1.0, -10.0),), ((1.0, 10.0),), clip=(-10.0, 10.0)
    ),
    "sum-sub-value-beyond-clip": Neighbours(
        "sum", "substitute", ((1.0, -1e9),), ((1.0, 1e9),), clip=(-10.0, 10.0)
    ),
    "sum-sub-move": Neighbours("sum", "substitute", ((3.0, 10.0), (1.0,)), ((3.0,), (1.0, 10.0))),
    "count-sub-move": Neighbours(
        "count", "substitute", ((3.0, 10.0), (1.0,)), ((3.0,), (1.0, 10.0))
    ),
    "mean-sub-move": Neighbours("mean", "substitute", ((*AT_L, 10.0), AT_L), (AT_L, (*AT_L, 10.0))),
    # A single mean cannot show the loss of its (A, B) pair when a value changes
    # in place (A and B move in opposite directions): only the upper bound applies.
    "mean-sub-value": Neighbours(
        "mean", "substitute", ((*MIDDLE, 0.0),), ((*MIDDLE, 10.0),), tight=False
    ),
}


@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
def test_grouped_release_keeps_its_epsilon(case: Neighbours, epsilon_lower_bound: Bound) -> None:
    eps_lb = audit(case, epsilon_lower_bound)
    assert eps_lb <= EPSILON
    if case.tight:
        assert eps_lb >= TIGHT * EPSILON


@pytest.mark.parametrize(
    "case",
    [CASES["count-add"], CASES["sum-add-beyond-clip"], CASES["mean-add-at-upper"]],
    ids=["count", "sum", "mean"],
)
def test_audit_catches_a_halved_noise_scale(
    case: Neighbours, epsilon_lower_bound: Bound, monkeypatch: pytest.MonkeyPatch
) -> None:
    plan_count, integer_scale = count.plan_count, sums.integer_scale

    def half_count(epsilon: Fraction, adjacency: str, **scope: bool) -> count.CountPlan:
        return count.CountPlan(plan_count(epsilon, adjacency, **scope).sensitivity, 2 * epsilon)

    def half_scale(delta: int, epsilon: Fraction) -> int:
        return max(1, integer_scale(delta, epsilon) // 2)

    monkeypatch.setattr(count, "plan_count", half_count)
    for module in (count, sums):  # the counts' noise scale, and the sums'
        monkeypatch.setattr(module, "integer_scale", half_scale)
    assert audit(case, epsilon_lower_bound) > EPSILON


# ------------------------------------------------------------------- ungrouped path
#
# An ungrouped release runs the same kernel with one key (codes None) and the
# ungrouped plan.  The API is pinned to "plan + kernel" exactly (same seed, same
# value); the plans only the ungrouped path uses (substitute with n public, or
# on a filtered frame) are then audited with the kernel over N keys.


def kernel_releases(rows: tuple[float, ...], kind: str, plan: object, seed: int) -> np.ndarray:
    values = np.tile(np.asarray(rows, dtype=float), N)
    codes = np.repeat(np.arange(N), len(rows))
    src = SeededSource(seed)
    if isinstance(plan, count.CountPlan):
        return count.release_counts(src, count.count_rows(codes, N, None, len(values)), plan)
    if isinstance(plan, sums.MeanPlan):
        return sums.noisy_means(src, *sums.grid_sums(values, codes, N, plan.grid), plan)
    assert isinstance(plan, sums.GridPlan)
    return sums.noisy_sums(src, sums.grid_sums(values, codes, N, plan)[0], plan)


def _ungrouped_plan(kind: str, clip: tuple[float, float]) -> object:
    """The plan of a column statistic under substitute (a column's n is never public)."""
    eps = Fraction(EPSILON)
    if kind == "count":
        return count.plan_count(eps, Relation("substitute", grouped=False, n_public=False))
    planner = sums.plan_sum if kind == "sum" else sums.plan_mean
    return planner(clip, eps, Relation("substitute", grouped=False))


UNGROUPED = {
    "sum-value-changes": ("sum", (-10.0, 5.0), (1.0, -10.0), (1.0, 5.0)),
    "sum-value-appears": ("sum", (0.0, 10.0), (1.0,), (1.0, 10.0)),
    "count-value-appears": ("count", CLIP, D, (*D, 5.0)),
}


@pytest.mark.parametrize(
    ("kind", "clip", "rows", "rows_prime"), UNGROUPED.values(), ids=UNGROUPED.keys()
)
def test_ungrouped_substitute_plan_keeps_its_epsilon(
    kind: str,
    clip: tuple[float, float],
    rows: tuple[float, ...],
    rows_prime: tuple[float, ...],
    epsilon_lower_bound: Bound,
) -> None:
    plan = _ungrouped_plan(kind, clip)
    y = kernel_releases(rows, kind, plan, seed=1).astype(float)
    y_prime = kernel_releases(rows_prime, kind, plan, seed=2).astype(float)
    eps_lb = epsilon_lower_bound(y, y_prime)
    assert TIGHT * EPSILON <= eps_lb <= EPSILON


@pytest.mark.parametrize("kind", ["count", "sum", "mean"])
@pytest.mark.parametrize("filtered", [False, True], ids=["own-frame", "filtered"])
def test_ungrouped_release_is_plan_plus_kernel(kind: str, filtered: bool) -> None:
    clip = (-10.0, 5.0)
    df = pd.DataFrame({"x": np.array([3, -7, 12, 0, 5, 1], dtype=np.int64)})
    df.dp.set_budget(epsilon=10, adjacency="substitute", seed=5)
    frame = df.dp.filter(df["x"] != 0) if filtered else df
    rows = frame["x"].to_numpy(dtype=float)
    plan = _ungrouped_plan(kind, clip)
    src = SeededSource(5)
    if kind == "count":
        assert isinstance(plan, count.CountPlan)
        released = frame.dp.count("x", epsilon=EPSILON)
        expected = count.release_counts(src, np.array([rows.size]), plan)[0]
    elif kind == "sum":
        assert isinstance(plan, sums.GridPlan)
        released = frame.dp.sum("x", clip=clip, epsilon=EPSILON)
        expected = sums.noisy_sums(src, sums.grid_sums(rows, None, 1, plan)[0], plan)[0]
    else:
        assert isinstance(plan, sums.MeanPlan)
        released = frame.dp.mean("x", clip=clip, epsilon=EPSILON)
        expected = sums.noisy_means(src, *sums.grid_sums(rows, None, 1, plan.grid), plan)[0]
    assert released == expected


# --------------------------------------------------------- ungrouped, one release at a time
#
# The releases above draw N noises per call; an ungrouped release draws one
# (count) or two (mean), on the sampler's own path for few draws.  These audits
# make N_ONE separate one-key calls of plan + kernel, which give the API's
# values exactly (checked first; the API costs 2-10x more per call).

N_ONE = 20_000


def one_key_releaser(stat: str, rows: tuple[float, ...], seed: int) -> Callable[[], float]:
    """A function making one ungrouped release of ``stat`` at EPSILON on ``rows`` per call."""
    src = SeededSource(seed)
    relation = Relation("add_remove")
    values = np.asarray(rows, dtype=float)
    if stat == "count":
        count_plan = count.plan_count(Fraction(EPSILON), relation)
        n = np.array([values.size])
        return lambda: float(count.release_counts(src, n, count_plan)[0])
    plan = sums.plan_mean(CLIP, Fraction(EPSILON), relation)
    totals, counts = sums.grid_sums(values, None, 1, plan.grid)
    return lambda: float(sums.noisy_means(src, totals, counts, plan)[0])


def one_by_one(stat: str, rows: tuple[float, ...], seed: int) -> np.ndarray:
    """N_ONE ungrouped releases of ``stat``, each its own call."""
    release = one_key_releaser(stat, rows, seed)
    return np.array([release() for _ in range(N_ONE)])


@pytest.mark.parametrize("stat", ["count", "mean"])
def test_one_key_releases_are_those_of_the_api(stat: str) -> None:
    df = pd.DataFrame({"x": MIDDLE})
    df.dp.set_budget(epsilon=10 * EPSILON, seed=4)
    if stat == "count":
        api = [float(df.dp.count(epsilon=EPSILON)) for _ in range(10)]
    else:
        api = [df.dp.mean("x", clip=CLIP, epsilon=EPSILON) for _ in range(10)]
    release = one_key_releaser(stat, MIDDLE, seed=4)
    assert api == [release() for _ in range(10)]


ONE_BY_ONE = {
    "count": ("count", D, (*D, 5.0)),
    "mean": ("mean", AT_L, (*AT_L, 10.0)),
}


@pytest.mark.parametrize(("stat", "rows", "rows_prime"), ONE_BY_ONE.values(), ids=ONE_BY_ONE)
def test_ungrouped_release_keeps_its_epsilon(
    stat: str, rows: tuple[float, ...], rows_prime: tuple[float, ...], epsilon_lower_bound: Bound
) -> None:
    eps_lb = epsilon_lower_bound(one_by_one(stat, rows, 1), one_by_one(stat, rows_prime, 2))
    assert TIGHT * EPSILON <= eps_lb <= EPSILON


@pytest.mark.parametrize(("stat", "rows", "rows_prime"), ONE_BY_ONE.values(), ids=ONE_BY_ONE)
def test_ungrouped_audit_catches_a_halved_noise_scale(
    stat: str,
    rows: tuple[float, ...],
    rows_prime: tuple[float, ...],
    epsilon_lower_bound: Bound,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    plan_count, integer_scale = count.plan_count, sums.integer_scale

    def half_count(epsilon: Fraction, neighbours: Relation) -> count.CountPlan:
        return count.CountPlan(plan_count(epsilon, neighbours).sensitivity, 2 * epsilon)

    def half_scale(delta: int, epsilon: Fraction) -> int:
        return max(1, integer_scale(delta, epsilon) // 2)

    monkeypatch.setattr(count, "plan_count", half_count)
    for module in (count, sums):  # the counts' noise scale, and the sums'
        monkeypatch.setattr(module, "integer_scale", half_scale)
    eps_lb = epsilon_lower_bound(one_by_one(stat, rows, 1), one_by_one(stat, rows_prime, 2))
    assert eps_lb > EPSILON


# ------------------------------------------------------------------- row-wise masks
#
# A mask computed across rows lets one person move everyone: D has four rows at
# 0 and four at 10; D′ adds one person at 1000. ``x > x.mean()`` keeps 4 rows of
# D and 1 of D′ (the mean moves from 5 to about 116), so a count at ε changes by
# 3 and leaks 3ε; the row-wise ``x > 5`` keeps 4 and 5, a change of 1. Each
# frame below holds N replicates (key ``k``); one grouped count gives N releases.

ROWS = (0.0,) * 4 + (10.0,) * 4
ROWS_PRIME = (*ROWS, 1000.0)

Select = Callable[[pd.DataFrame], pd.DataFrame]


def masked_counts(rows: tuple[float, ...], select: Select, seed: int) -> np.ndarray:
    """N counts at ε, one per replicate of ``rows``, of the rows ``select`` keeps."""
    df = pd.DataFrame({"k": np.repeat(np.arange(N), len(rows)), "x": np.tile(np.asarray(rows), N)})
    df.dp.set_budget(epsilon=EPSILON, seed=seed)
    counts = select(df).dp.groupby("k", keys=pd.RangeIndex(N)).count(epsilon=EPSILON)
    return counts.to_numpy(dtype=float)


def masked_audit(select: Select, bound: Bound) -> float:
    return bound(masked_counts(ROWS, select, seed=1), masked_counts(ROWS_PRIME, select, seed=2))


@pytest.mark.parametrize("rows", [ROWS, ROWS_PRIME], ids=["D", "D-prime"])
def test_a_query_across_rows_is_refused_on_neighbouring_frames(rows: tuple[float, ...]) -> None:
    df = pd.DataFrame({"x": rows})
    df.dp.set_budget(epsilon=EPSILON, seed=1)
    with pytest.raises(ValueError, match="`mean`"):
        df.dp.query("x > x.mean()")
    assert df.dp.budget.spent == 0


def test_a_row_wise_query_keeps_its_epsilon(epsilon_lower_bound: Bound) -> None:
    eps_lb = masked_audit(lambda df: df.dp.query("x > 5"), epsilon_lower_bound)
    assert TIGHT * EPSILON <= eps_lb <= EPSILON


def test_audit_catches_a_mask_computed_across_rows(epsilon_lower_bound: Bound) -> None:
    """The same mask, computed outside the library (per replicate) and passed to filter."""

    def above_mean(df: pd.DataFrame) -> pd.DataFrame:
        return df.dp.filter(df["x"] > df.groupby("k")["x"].transform("mean"))

    assert masked_audit(above_mean, epsilon_lower_bound) > EPSILON


# ------------------------------------------------------------------- row position
#
# A RangeIndex (what read_csv gives) is a row's position in the file, so one
# person near the top moves every later row (issue 17, item 1). D is a CSV file
# of eight people, x = 10 for odd ids; D′ adds one person (id 0, x = 10) on the
# first line. ``index % 2 == 0`` keeps ids 1, 3, 5, 7 of D (sum 40) but ids 0,
# 2, 4, 6, 8 of D′ (sum 10): a clipped sum at Δ = 10 moves by 30. The split on
# the person's own id, ``pid % 2 == 0``, keeps the same people of both files
# and the new one: a move of 10, the whole sensitivity and no more.

PEOPLE = tuple((pid, 10.0 if pid % 2 else 0.0) for pid in range(1, 9))
PEOPLE_PRIME = ((0, 10.0), *PEOPLE)

People = tuple[tuple[int, float], ...]


def csv_text(people: People, replicates: int = 1) -> str:
    """A CSV file of ``people`` (columns k, pid, x), ``replicates`` times, one k each."""
    pids, xs = zip(*people, strict=True)
    return pd.DataFrame(
        {
            "k": np.repeat(np.arange(replicates), len(people)),
            "pid": np.tile(pids, replicates),
            "x": np.tile(xs, replicates),
        }
    ).to_csv(index=False)


def csv_sums(people: People, select: Select, seed: int) -> np.ndarray:
    """N sums at ε of what ``select`` keeps of the CSV file of N replicates of ``people``."""
    df = pd.read_csv(io.StringIO(csv_text(people, N)))
    df.dp.set_budget(epsilon=EPSILON, seed=seed)
    g = select(df).dp.groupby("k", keys=pd.RangeIndex(N))
    return g.sum("x", clip=CLIP, epsilon=EPSILON).to_numpy(dtype=float)


def csv_audit(select: Select, bound: Bound) -> float:
    return bound(csv_sums(PEOPLE, select, seed=1), csv_sums(PEOPLE_PRIME, select, seed=2))


@pytest.mark.parametrize("people", [PEOPLE, PEOPLE_PRIME], ids=["D", "D-prime"])
@pytest.mark.parametrize("engine", ["pandas", "dask"])
def test_a_split_by_row_position_is_refused_on_neighbouring_csv_files(
    people: People, engine: str, tmp_path: Path
) -> None:
    if engine == "pandas":
        df = pd.read_csv(io.StringIO(csv_text(people)))
    else:
        dd = pytest.importorskip("dask.dataframe")
        pytest.importorskip("pandas_dp.dask")  # registers ddf.dp
        (tmp_path / "people.csv").write_text(csv_text(people))
        df = dd.read_csv(tmp_path / "people.csv")
    df.dp.set_budget(epsilon=EPSILON, seed=1)
    for expr in ("index % 2 == 0", "index < 4", "`index` % 2 == 1", "ilevel_0 % 2 == 0"):
        with pytest.raises(ValueError, match="position is not a value of that row"):
            df.dp.query(expr)
    assert df.dp.budget.spent == 0


def test_a_split_on_the_persons_own_id_keeps_its_epsilon(epsilon_lower_bound: Bound) -> None:
    eps_lb = csv_audit(lambda df: df.dp.query("pid % 2 == 0"), epsilon_lower_bound)
    assert TIGHT * EPSILON <= eps_lb <= EPSILON


def test_audit_catches_a_split_by_row_position(epsilon_lower_bound: Bound) -> None:
    """The position split, computed outside the library (each replicate's own file position)."""

    def even_lines(df: pd.DataFrame) -> pd.DataFrame:
        return df.dp.filter((df.groupby("k").cumcount() % 2 == 0).to_numpy())

    assert csv_audit(even_lines, epsilon_lower_bound) > EPSILON


# -------------------------------------------------------- person-level Gaussian (zCDP)
#
# A ρ budget with a privacy unit: D has one row of a different person in each key;
# D′ adds one person with K rows in each of G keys of every replicate.  The
# discrete Gaussian's privacy loss over those G counts is seen through their sum
# (the direction of the shift, so the one-number statistic loses nothing).  The
# audit bounds ε at a stated δ; it must stay below ``epsilon_at(ρ, δ)``, the
# guarantee the budget states, and exceed it when the noise is 2x too small.

RHO = Fraction(1, 8)
AUDIT_DELTA = Fraction(1, 100)
K_ROWS, G_KEYS = 2, 3


#: The Gaussian person-level releases audited: rows per key, and distinct values per key
#: (each row of the added person holds a new value, so each of its keys gains K).
PERSON_RELEASES = {
    "count": lambda g: g.count(rho=RHO, max_rows=K_ROWS, max_groups=G_KEYS),
    "nunique": lambda g: g.nunique("v", rho=RHO, max_rows=K_ROWS, max_groups=G_KEYS),
}


def person_counts(release: str, with_person: bool, seed: int) -> np.ndarray:
    """N sums of the G released counts of a replicate, under a ρ budget with a privacy unit."""
    keys = np.arange(N * G_KEYS)
    rows_k, rows_u = [keys], [keys]  # one person (id = key) per key
    if with_person:
        rows_k.append(np.repeat(keys, K_ROWS))  # the person of replicate r: K rows per key
        rows_u.append(N * G_KEYS + np.repeat(keys // G_KEYS, K_ROWS))
    k = np.concatenate(rows_k)
    df = pd.DataFrame({"k": k, "u": np.concatenate(rows_u), "v": np.arange(k.size)})
    df.dp.set_budget(rho=RHO, seed=seed, privacy_unit="u")
    released = PERSON_RELEASES[release](df.dp.groupby("k", keys=pd.RangeIndex(N * G_KEYS)))
    return released.to_numpy(dtype=float).reshape(N, G_KEYS).sum(axis=1)


def person_audit(release: str, bound: Callable[..., float]) -> float:
    d, d_prime = person_counts(release, False, 1), person_counts(release, True, 2)
    return bound(d, d_prime, delta=float(AUDIT_DELTA))


@pytest.mark.parametrize("release", sorted(PERSON_RELEASES))
def test_a_person_level_gaussian_release_keeps_its_epsilon_at_delta(
    epsilon_lower_bound: Callable[..., float], release: str
) -> None:
    claimed = zcdp.epsilon_at(RHO, AUDIT_DELTA)
    eps_lb = person_audit(release, epsilon_lower_bound)
    assert eps_lb <= claimed
    assert eps_lb >= 0.5 * claimed  # the noise is not far larger than it needs to be


@pytest.mark.parametrize("release", sorted(PERSON_RELEASES))
def test_the_person_level_audit_catches_twice_too_little_gaussian_noise(
    epsilon_lower_bound: Callable[..., float], monkeypatch: pytest.MonkeyPatch, release: str
) -> None:
    scale = sums.gaussian_scale

    def too_little(sq_sensitivity: Fraction | int, rho: Fraction) -> Fraction:
        return scale(sq_sensitivity, rho) / 4  # σ halved

    for module in (count, sums):  # the counts' noise scale, and the sums'
        monkeypatch.setattr(module, "gaussian_scale", too_little)
    count.plan_count_rho.cache_clear()
    nunique.plan_nunique_rho.cache_clear()
    assert person_audit(release, epsilon_lower_bound) > zcdp.epsilon_at(RHO, AUDIT_DELTA)
