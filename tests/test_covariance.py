"""cov and corr (pandas_dp.kinds.variance): composites of the variances of a sum and a difference.

``cov(a, b) = (var(a + b) − var(a − b)) / 4`` on the clipped values, each
variance a release of ``var`` at half the loss (corr: four variances at a
quarter each).  Checked: the answer is pandas' at a huge ε, on every surface;
the parts are planned exactly as ``var`` plans them at their share; an audit
on neighbouring data keeps ε and catches a halved noise scale; intervals
cover; misuse is refused before anything is spent.
"""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction
from typing import Any

import numpy as np
import pandas as pd
import pytest

import pandas_dp  # noqa: F401  (registers df.dp)
from pandas_dp.core.noise import SeededSource
from pandas_dp.kinds import sums, variance
from pandas_dp.kinds.base import Neighbours
from pandas_dp.kinds.variance import Corr, Cov, plan_variance, plan_variance_rho
from pandas_dp.pipeline import run as release

CLIPS = {"x": (-4.0, 4.0), "y": (-2.0, 6.0)}
EPSILON = 1.0
Bound = Callable[[np.ndarray, np.ndarray], float]


def pairs(n: int = 4_000, seed: int = 0, keys: int = 3) -> pd.DataFrame:
    """Correlated x, y inside CLIPS (so the clipped statistics are pandas'), a key, gaps."""
    rng = np.random.Generator(np.random.PCG64(seed))
    x = np.clip(rng.normal(0, 1, n), -3.9, 3.9)
    y = np.clip(2 + 0.7 * x + rng.normal(0, 0.8, n), -1.9, 5.9)
    df = pd.DataFrame({"x": x, "y": y, "k": rng.integers(0, keys, n)})
    df.loc[::17, "y"] = np.nan  # pairwise complete rows only, as pandas
    return df


@pytest.mark.parametrize("name", ["cov", "corr"])
def test_a_huge_epsilon_gives_pandas_answer_ungrouped_grouped_and_keyless(name: str) -> None:
    df = pairs()
    df.dp.set_budget(epsilon=1e7, delta=1e-6, seed=1)
    got = getattr(df.dp, name)("x", "y", clip=CLIPS, epsilon=1e6)
    want = getattr(df["x"], name)(df["y"])
    assert got == pytest.approx(want, rel=1e-4, abs=1e-4)
    grouped = getattr(df.dp.groupby("k", keys=[0, 1, 2]), name)("x", "y", clip=CLIPS, epsilon=1e6)
    keyless = getattr(df.dp.groupby("k"), name)("x", "y", clip=CLIPS, epsilon=1e6, delta=1e-7)
    for key, part in df.groupby("k"):
        truth = getattr(part["x"], name)(part["y"])
        assert grouped[key] == pytest.approx(truth, rel=1e-4, abs=1e-4)
        assert keyless[key] == pytest.approx(truth, rel=1e-3, abs=1e-3)


@pytest.mark.parametrize(("kind", "width"), [(Cov, 2), (Corr, 4)])
@pytest.mark.parametrize("adjacency", ["add_remove", "substitute"])
def test_the_parts_are_planned_as_var_plans_them_at_their_share(
    kind: type[Cov], width: int, adjacency: str
) -> None:
    relation = Neighbours(adjacency)
    (la, ua), (lb, ub) = CLIPS["x"], CLIPS["y"]
    clips = [(la + lb, ua + ub), (la - ub, ua - lb), CLIPS["x"], CLIPS["y"]][:width]
    cov = kind.of(Fraction(1), "x", "y", CLIPS)
    assert cov.plan(relation) == tuple(
        plan_variance(c, Fraction(1, width), relation) for c in clips
    )
    gauss = kind.of(None, "x", "y", CLIPS, rho=Fraction(1, 2))
    assert gauss.plan(relation) == tuple(
        plan_variance_rho(c, Fraction(1, 2 * width), relation) for c in clips
    )


def test_one_ledger_entry_states_the_parts_and_charges_the_whole() -> None:
    df = pairs()
    df.dp.set_budget(epsilon=2, seed=3)
    df.dp.corr("x", "y", clip=CLIPS, epsilon=0.8)
    [entry] = df.dp.budget.entries
    assert entry.operation == "corr"
    assert entry.epsilon == Fraction(4, 5)
    assert entry.columns == ("x", "y")
    assert entry.mechanism.count("discrete_laplace") == 4
    assert len(entry.clip) == 4
    assert entry.clip[0] == (-6.0, 10.0)  # a + b's clip first
    assert df.dp.budget.spent == Fraction(4, 5)


D = [(1.0, 2.0), (-1.0, 1.0), (0.5, 3.0)]
D_PRIME = [*D, (4.0, -2.0)]  # one more row, at the corner that moves a − b the most
N = 50_000


def _loss_statistic(kind: Cov, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """The privacy-loss statistic of N releases of ``kind``'s parts on D and on D′.

    Each part releases its noisy triple (``var``'s); ``L(y) = Σ (|y − s′| −
    |y − s|)/T`` over every part's three sums is the log-likelihood ratio of the
    whole release: the most revealing one-number view of it.
    """
    plan = kind.plan(Neighbours("add_remove"))
    parts = kind.parts()

    def triples(rows: list[tuple[float, float]], n: int, source: Any) -> list[np.ndarray]:
        frame = pd.DataFrame(rows * n, columns=["x", "y"])
        codes = np.repeat(np.arange(n), len(rows))
        read = kind.read(frame, n)
        out = []
        for part, own, part_rows in zip(parts, plan, read.parts(), strict=True):
            stats = part.tally(own, part_rows, codes, n)
            made = (
                variance.exact_triples(*stats, own)
                if source is None
                else (variance.noisy_triples(source, *stats, own))
            )
            out.append(np.stack(made, axis=1))
        return out

    truth = [triples(rows, 1, None) for rows in (D, D_PRIME)]
    scales = [np.array([p.grid.scale, p.grid.scale, p.scale3], dtype=float) for p in plan]

    def loss(noisy: list[np.ndarray]) -> np.ndarray:
        return sum(
            np.sum((np.abs(y - t1) - np.abs(y - t0)) / s, axis=1)
            for y, t0, t1, s in zip(noisy, truth[0], truth[1], scales, strict=True)
        )

    return (
        loss(triples(D, N, SeededSource(seed))),
        loss(triples(D_PRIME, N, SeededSource(seed + 1))),
    )


@pytest.mark.parametrize("kind", [Cov, Corr])
def test_an_audit_on_neighbouring_data_keeps_epsilon(
    kind: type[Cov], epsilon_lower_bound: Bound
) -> None:
    cov = kind.of(Fraction(EPSILON), "x", "y", CLIPS)
    found = epsilon_lower_bound(*_loss_statistic(cov, seed=1))
    assert found <= EPSILON
    assert found >= 0.4 * EPSILON  # the corner row uses much of the sensitivity


def test_the_audit_catches_a_halved_noise_scale(
    epsilon_lower_bound: Bound, monkeypatch: pytest.MonkeyPatch
) -> None:
    for module in (sums, variance):  # the pair's scale and the centred moment's
        real = module.integer_scale
        monkeypatch.setattr(
            module, "integer_scale", lambda d, e, real=real: max(1, real(d, e) // 2)
        )
    for plan in release.plan_caches():
        plan.cache_clear()
    cov = Cov.of(Fraction(EPSILON), "x", "y", CLIPS)
    assert epsilon_lower_bound(*_loss_statistic(cov, seed=1)) > EPSILON


@pytest.mark.parametrize("name", ["cov", "corr"])
def test_intervals_cover_the_clipped_statistic(name: str) -> None:
    rng = np.random.Generator(np.random.PCG64(5))
    rows = pd.DataFrame({"x": rng.uniform(-3, 3, 60)})
    rows["y"] = np.clip(1 + 0.5 * rows["x"] + rng.normal(0, 1, 60), -1.9, 5.9)
    keys = 1_000
    frame = pd.concat([rows] * keys, ignore_index=True)
    frame["k"] = np.repeat(np.arange(keys), len(rows))
    frame.dp.set_budget(epsilon=10, seed=8)
    got = getattr(frame.dp.groupby("k", keys=range(keys)), name)(
        "x", "y", clip=CLIPS, epsilon=2, ci=0.9
    )
    truth = getattr(rows["x"], name)(rows["y"])
    inside = (got["lower"] <= truth) & (truth <= got["upper"])
    assert inside.mean() >= 0.9
    assert ((got["lower"] <= got["estimate"]) & (got["estimate"] <= got["upper"])).all()
    if name == "corr":
        assert got["lower"].min() >= -1
        assert got["upper"].max() <= 1


def test_rho_and_clip_auto_spend_exactly_what_they_are_given() -> None:
    df = pairs(20_000)
    df.dp.set_budget(rho=1, seed=2)
    got = df.dp.corr("x", "y", clip="auto", rho=0.5, ci=0.9)
    assert {"clip_lower[x]", "clip_upper[y]"} <= set(got.index)
    assert df.dp.budget.spent == Fraction(1, 2)
    assert [e.operation for e in df.dp.budget.entries] == [
        "count",
        "count",
        "bounds",
        "bounds",
        "corr",
    ]


def test_dask_gives_the_pandas_release() -> None:
    dd = pytest.importorskip("dask.dataframe")
    pytest.importorskip("pandas_dp.dask")
    answers = []
    for seed_frame in (pairs(seed=4), dd.from_pandas(pairs(seed=4), npartitions=3)):
        seed_frame.dp.set_budget(epsilon=2, seed=6)
        grouped = seed_frame.dp.groupby("k", keys=[0, 1, 2])
        answers.append(grouped.cov("x", "y", clip=CLIPS, epsilon=1, ci=0.9))
    pd.testing.assert_frame_equal(*answers)


MISUSE: dict[str, tuple[Callable[[pd.DataFrame], Any], type[Exception], str]] = {
    "one clip": (
        lambda df: df.dp.cov("x", "y", clip=(0, 1), epsilon=0.5),
        TypeError,
        "map each of the two columns",
    ),
    "a clip missing": (
        lambda df: df.dp.corr("x", "y", clip={"x": (0, 1)}, epsilon=0.5),
        TypeError,
        "map each of the two columns",
    ),
    "one column twice": (
        lambda df: df.dp.cov("x", "x", clip={"x": (0, 1)}, epsilon=0.5),
        TypeError,
        "one column twice",
    ),
    "a column of text": (
        lambda df: df.dp.cov("x", "s", clip={"x": (0, 1), "s": (0, 1)}, epsilon=0.5),
        TypeError,
        "'s'",
    ),
    "a missing column": (
        lambda df: df.dp.cov("x", "z", clip={"x": (0, 1), "z": (0, 1)}, epsilon=0.5),
        KeyError,
        "'z'",
    ),
    "a bad level": (
        lambda df: df.dp.corr("x", "y", clip=CLIPS, epsilon=0.5, ci=1.5),
        ValueError,
        "ci",
    ),
    "a clip=auto text column": (
        lambda df: df.dp.cov("x", "s", clip="auto", epsilon=0.5),
        TypeError,
        "'s'",
    ),
}


@pytest.mark.parametrize("case", MISUSE.values(), ids=MISUSE.keys())
def test_misuse_is_refused_before_anything_is_spent(
    case: tuple[Callable[[pd.DataFrame], Any], type[Exception], str],
) -> None:
    call, error, match = case
    df = pairs(200).assign(s=lambda d: d["x"].astype(str))
    df.dp.set_budget(epsilon=1, seed=0)
    with pytest.raises(error, match=match):
        call(df)
    assert df.dp.budget.spent == 0
