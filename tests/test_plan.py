"""Planning a whole analysis: ``df.dp.plan(releases, half_width=..., level=...)``, ``budget.fits``.

The planned releases reach their half-widths: over 10,000 seeded trials (one
per key of a grouped release, so the release's own tally and noise run once,
vectorized), the share of answers within the planned half-width of the truth
is at least the level, for every kind with an interval.  The total is within
1.02 of the optimum found by a direct numerical solve (scipy's root finder on
each release's half-width, every choice of noise).  Planning reads no value
and spends nothing.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction
from typing import Any

import numpy as np
import pandas as pd
import pytest
import scipy.optimize

import pandas_dp
from pandas_dp.accounting.ledger import ACCOUNTANTS, PLD, Taken
from pandas_dp.core.noise import SeededSource
from pandas_dp.errors import BudgetExceededError
from pandas_dp.kinds import quantile
from pandas_dp.kinds.base import Neighbours
from pandas_dp.mechanisms.accuracy import units_half_width, var_miss
from pandas_dp.pipeline import planning
from pandas_dp.pipeline.run import plan_release
from pandas_dp.pipeline.workload import WorkloadPlan

pytest.importorskip("dp_accounting")

KEYS = 10_000
GRID = np.linspace(0.0, 100.0, 201)


def _frame(rows_per_key: int, seed: int) -> pd.DataFrame:
    """``KEYS`` keys of ``rows_per_key`` rows: values of a different spread in each key."""
    rng = np.random.default_rng(seed)
    key = np.repeat(np.arange(KEYS), rows_per_key)
    centre = rng.uniform(0, 100, KEYS)[key]
    spread = rng.uniform(0, 40, KEYS)[key]
    value = centre + spread * rng.standard_normal(key.size)
    label = rng.integers(0, 12, key.size)  # a few distinct labels per key
    return pd.DataFrame({"k": key, "x": value, "label": label})


def _answers(df: pd.DataFrame, plan: WorkloadPlan, seed: int) -> pd.Series:
    """The plan's one (grouped) release, tallied and noised as the pipeline does, per key."""
    (option,) = plan.options
    kind, planned = option.kind, option.planned
    rows = kind.read(df, KEYS)
    codes = df["k"].to_numpy(dtype=np.int64)
    stats = kind.tally(planned.plan, rows, codes, KEYS)
    answer = kind.finish(planned.plan, stats, SeededSource(seed), KEYS)
    if kind.name == "quantile":  # by rank: how far its score is behind the best one's
        (scores,) = kind.noise_free(planned.plan, stats, KEYS)
        behind = scores.max(axis=1) - scores[np.arange(KEYS), answer]
        return pd.Series(behind * float(planned.plan.unit))
    return kind.shape_many(answer, pd.RangeIndex(KEYS))


CASES: list[tuple[str, tuple[Any, ...], float, int, Any]] = [
    # (name, release, half-width, rows per key, truth per key of the clipped frame)
    ("count", ("groupby.count", "k", {}), 20.0, 3, lambda g: g.size()),
    ("gaussian count", ("groupby.count", "k", {}), 12.0, 3, lambda g: g.size()),
    ("nunique", ("groupby.nunique", "k", "label", {}), 15.0, 6, lambda g: g["label"].nunique()),
    ("sum", ("groupby.sum", "k", "x", {"clip": (0, 100)}), 800.0, 20, lambda g: g["x"].sum()),
    ("mean", ("groupby.mean", "k", "x", {"clip": (0, 100), "n": 40}), 6.0, 40,
     lambda g: g["x"].mean()),
    ("var", ("groupby.var", "k", "x", {"clip": (0, 100), "n": 30}), 900.0, 30,
     lambda g: g["x"].var()),
    ("std", ("groupby.std", "k", "x", {"clip": (0, 100), "n": 30}), 30.0, 30,
     lambda g: g["x"].std()),
    ("median", ("groupby.median", "k", "x", {"candidates": GRID}), 6.0, 25, None),
]  # fmt: skip


@pytest.mark.parametrize(
    ("name", "release", "width", "rows", "truth"), CASES, ids=[c[0] for c in CASES]
)
@pytest.mark.parametrize("level", [0.9])
def test_planned_releases_meet_their_half_widths_10000_times(
    name: str, release: tuple[Any, ...], width: float, rows: int, truth: Any, level: float
) -> None:
    df = _frame(rows, seed=len(name))
    gaussian = name.startswith("gaussian")
    if gaussian:
        df.dp.set_budget(rho=10, seed=1)
    else:
        df.dp.set_budget(epsilon=50, seed=1)
    release = (*release[:-1], {**release[-1], "keys": range(KEYS)})
    plan = df.dp.plan([release], half_width=width, level=level)
    assert plan.releases.noise.tolist() == ["gaussian" if gaussian else "laplace"]
    realised = plan.options[0].widths[0]
    assert 0 < realised <= width
    answers = _answers(df, plan, seed=7)
    if truth is None:  # by rank
        covered = (answers <= realised).mean()
    else:
        exact = truth(df.assign(x=df["x"].clip(0, 100)).groupby("k"))
        covered = (np.abs(answers.to_numpy() - exact.to_numpy()) <= realised).mean()
    assert covered >= level, (name, covered)
    # and the planned loss is the smallest: a hair less misses the half-width
    amount = plan.options[0].loss[1]
    if name in ("count", "sum", "nunique"):
        kw: dict[str, Any] = {"clip": (0, 100)} if name == "sum" else {}
        less = float(amount) * (1 - 1e-9)
        assert planning.half_width(name, epsilon=less, level=level, grouped=True, **kw) > width


@pytest.mark.parametrize("level", [0.5, 0.9, 0.99])
@pytest.mark.parametrize("candidates", [2, 11, 201])
def test_a_quantile_half_width_is_the_least_rank_the_tail_bound_allows(
    level: float, candidates: int
) -> None:
    """``k`` score units: the smallest with ``(m − 1)·exp(−c·(k + 1)) <= 1 − level``."""
    grid = np.linspace(0, 1, candidates)
    kind = planning.release_kind(
        "median", ("epsilon", Fraction(1, 3)), {"column": "x", "candidates": grid}
    )
    plan = plan_release(kind, None, "add_remove", root=False).plan
    (width,) = kind.half_width(plan, level)
    k = Fraction(repr(width)) / plan.unit
    assert k.denominator == 1
    rate, miss = float(plan.rate.value), 1 - level
    assert (candidates - 1) * math.exp(-rate * (int(k) + 1)) <= miss
    assert k == 0 or (candidates - 1) * math.exp(-rate * int(k)) > miss


def test_several_quantiles_are_planned_as_one_joint_release() -> None:
    grid = np.linspace(0, 1, 101)
    several = pandas_dp.half_width("quantile", epsilon=1, q=[0.25, 0.75, 0.5], candidates=grid)
    assert list(several.index) == [0.25, 0.75, 0.5]
    levels = (Fraction(1, 4), Fraction(1, 2), Fraction(3, 4))
    plan = quantile.plan_joint(levels, Fraction(1), Neighbours.of("add_remove"))
    assert several.tolist() == [quantile.joint_rank_half_width(plan, 101, 0.95)] * 3


def test_the_variance_half_width_is_the_documented_bound() -> None:
    """The bound of Var.half_width, term by term from the plan (t, t₃, Q, offset, step)."""
    clip, n, level = (0.0, 100.0), 300, 0.9
    kind = planning.release_kind("var", ("epsilon", Fraction(1, 2)), {"column": "x", "clip": clip})
    plan = plan_release(kind, None, "add_remove", root=False).plan
    grid, miss = plan.grid, var_miss(level)
    t, t3 = units_half_width(grid.scale, miss), units_half_width(plan.scale3, miss)
    top, width = grid.q_hi, clip[1] - clip[0]
    moved = t + t3 + 2 * t * plan.offset / top + n / 2 + n * t / (2 * (n - 1))
    units = top * (moved / (n - 1 - 2 * t / top) + t / (2 * (n - 1) ** 2))
    want = math.ldexp(units, 2 * grid.exponent) + grid.step * width * n / (2 * (n - 1))
    (got,) = kind.half_width(plan, level, n)
    assert got == pytest.approx(want, rel=1e-9)
    (std,) = planning.release_kind(
        "std", ("epsilon", Fraction(1, 2)), {"column": "x", "clip": clip}
    ).half_width(plan, level, n)
    assert std == pytest.approx(math.sqrt(got), rel=1e-12)


# ------------------------------------------------------------------- the optimum


def _losses_by_root_finding(
    budget: pandas_dp.accounting.budget.PrivacyBudget,
    specs: list[tuple[str, dict[str, Any], float]],
    family: list[str],
) -> list[Fraction]:
    """Each release's least loss reaching its half-width, by scipy's brentq on log(loss).

    The half-width falls by steps, so the root of ``width(loss) − target`` is
    bracketed and refined until the bracket is a hundred-millionth of the loss.
    """
    out = []
    for (name, kwargs, target), fam in zip(specs, family, strict=True):

        def gap(
            log_loss: float,
            name: str = name,
            kwargs: Any = kwargs,
            target: float = target,
            fam: str = fam,
        ) -> float:
            loss = {fam: math.exp(log_loss)}
            return planning.half_width(name, level=0.95, **loss, **kwargs) - target - 1e-12

        root = scipy.optimize.brentq(gap, math.log(1e-6), math.log(1e3), xtol=1e-10, rtol=1e-10)
        amount = math.exp(root)
        while gap(math.log(amount)) > 0:  # the root found may sit just below the step
            amount *= 1 + 1e-9
        out.append(Fraction(repr(amount)))
    return out


def _composed_total(
    budget: pandas_dp.accounting.budget.PrivacyBudget,
    specs: list[tuple[str, dict[str, Any], float]],
    family: list[str],
    losses: list[Fraction],
) -> Fraction:
    entries = []
    for (name, kwargs, _), fam, loss in zip(specs, family, losses, strict=True):
        args: dict[str, Any] = {k: v for k, v in kwargs.items() if k not in ("n",)}
        if name in ("sum", "mean"):
            args["column"] = "x"
        kind = planning.release_kind(name, (fam, loss), args)
        entries.append(plan_release(kind, None, "add_remove", root=False).entry)
    if budget.accountant == "pld":
        return PLD.spent(Taken(budget.total, budget.delta, entries=tuple(entries)))
    accountant = budget.accountant
    return sum((e.charged(accountant).charge(accountant) for e in entries), Fraction(0))


SPECS: list[tuple[str, dict[str, Any], float]] = [
    ("count", {}, 40.0),
    ("count", {}, 25.0),
    ("sum", {"clip": (0, 100)}, 3_000.0),
    ("mean", {"clip": (0, 100), "n": 500}, 2.0),
    ("nunique", {}, 30.0),
]


@pytest.mark.parametrize("accountant", ["epsilon", "rho", "pld"])
def test_the_total_is_within_2_percent_of_a_direct_numerical_solve(accountant: str) -> None:
    df = pd.DataFrame({"x": np.arange(10.0), "label": np.arange(10)})
    kwargs: dict[str, Any] = {"epsilon": 10} if accountant != "rho" else {"rho": 10}
    if accountant == "pld":
        kwargs |= {"delta": 1e-6, "accountant": "pld"}
    budget = df.dp.set_budget(**kwargs, seed=3)
    releases: list[Any] = []
    for name, kw, _ in SPECS:
        extra = {k: v for k, v in kw.items()}
        releases.append((name, "x", extra) if name in ("sum", "mean") else
                        (name, "label", extra) if name == "nunique" else (name,))  # fmt: skip
    plan = df.dp.plan(releases, half_width=[s[2] for s in SPECS])
    options = ["epsilon"] if accountant == "epsilon" else ["epsilon", "rho"]
    best = None
    for family in itertools.product(options, repeat=len(SPECS)):
        losses = _losses_by_root_finding(budget, SPECS, list(family))
        total = _composed_total(budget, SPECS, list(family), losses)
        best = total if best is None else min(best, total)
    assert best is not None
    assert plan.total <= best * Fraction(102, 100), (plan.total, best)
    assert plan.total >= best * Fraction(98, 100)  # and the solve found the same optimum


# --------------------------------------------------------------- refusals, fits, run


@pytest.fixture
def people() -> pd.DataFrame:
    rng = np.random.default_rng(1)
    return pd.DataFrame(
        {"salary": rng.uniform(0, 2e5, 800), "dept": rng.choice(["a", "b", "c"], 800)}
    )


WORKLOAD = [
    ("count",),
    ("mean", "salary", {"clip": (0, 2e5), "n": 800}),
    ("groupby.count", "dept", {"keys": ["a", "b", "c"]}),
]


def test_a_plan_that_does_not_fit_is_refused_saying_by_how_much(people: pd.DataFrame) -> None:
    budget = people.dp.set_budget(epsilon=1, delta=1e-6, accountant="pld", seed=2)
    people.dp.count(epsilon=0.2)
    before = (budget.spent, len(budget.entries))
    with pytest.raises(BudgetExceededError) as refused:
        people.dp.plan(WORKLOAD, half_width=[5, 500, 5])
    assert refused.value.quantity == "epsilon"
    note = refused.value.__notes__[-1]
    assert "Nothing was spent" in note
    factor = float(note.split("×")[1].split(" ")[0])
    assert (budget.spent, len(budget.entries)) == before
    # widened by the factor it names, the plan fits; a little less, it does not
    fits = people.dp.plan(WORKLOAD, half_width=[5 * factor, 500 * factor, 5 * factor])
    assert fits.total <= 1
    narrower = [w * factor * 0.9 for w in (5, 500, 5)]
    with pytest.raises(BudgetExceededError):
        people.dp.plan(WORKLOAD, half_width=narrower)


def test_run_releases_the_plan_and_the_ledger_shows_planned_and_realised(
    people: pd.DataFrame,
) -> None:
    budget = people.dp.set_budget(epsilon=1, delta=1e-6, accountant="pld", seed=2)
    plan = people.dp.plan(WORKLOAD, half_width=[40, 4_000, 40], level=0.9)
    assert plan.remaining == 1 - plan.total
    count, _, grouped = plan.run()
    assert list(count.index) == ["estimate", "lower", "upper"]
    assert (count["upper"] - count["lower"]) / 2 == plan.options[0].widths[0] <= 40
    assert list(grouped.columns) == ["estimate", "lower", "upper"]
    assert budget.spent == plan.total  # what the plan said it would spend
    ledger = budget.ledger
    assert list(ledger.planned) == ["±40 at 90%", "±4,000 at 90%", "±40 at 90%"]
    assert ledger.realised[0] == f"±{plan.options[0].widths[0]:g} at 90%"
    assert "planned → realised" in str(budget)
    assert "±40 → ±" in budget._repr_html_()
    people.dp.count(epsilon=0.01)  # a release outside the plan records none
    assert budget.ledger.planned.iloc[-1] == ""


def _released_until_refused(df: pd.DataFrame, **loss: float) -> int:
    done = 0
    while done < 1000:
        try:
            df.dp.count(**loss)  # type: ignore[call-overload]
        except BudgetExceededError:
            return done
        done += 1
    return done


def test_fits_counts_how_many_more_releases_fit(people: pd.DataFrame) -> None:
    counts = []
    for loss in (
        {"epsilon": pandas_dp.epsilon_for("count", half_width=50)},
        {"rho": pandas_dp.rho_for("count", half_width=50)},
    ):
        df = people.copy()
        budget = df.dp.set_budget(epsilon=1, delta=1e-6, accountant="pld", seed=4)
        df.dp.mean("salary", clip=(0, 2e5), epsilon=0.3)
        more = budget.fits("count", half_width=50)
        counts.append(_released_until_refused(df, **loss))
    assert more == max(counts)  # of whichever noise lets the most fit
    assert counts[0] != counts[1]
    basic = pd.DataFrame({"x": [1.0]}).dp.set_budget(epsilon=1, seed=5)
    epsilon = Fraction(repr(pandas_dp.epsilon_for("count", half_width=50)))
    assert basic.fits("count", half_width=50) == math.floor(1 / epsilon)  # ε added up


def test_planning_reads_no_value(people: pd.DataFrame) -> None:
    """Two frames of the same schema and different values get the same plan."""
    other = people.assign(salary=people.salary[::-1].to_numpy() * 0.5, dept="a")
    plans = []
    for df in (people, other):
        df.dp.set_budget(epsilon=1, delta=1e-6, accountant="pld", seed=6)
        plans.append(df.dp.plan(WORKLOAD, half_width=[40, 4_000, 40]))
    assert plans[0].releases.equals(plans[1].releases)
    assert plans[0].total == plans[1].total


def test_under_substitute_the_public_row_count_is_free(people: pd.DataFrame) -> None:
    people.dp.set_budget(epsilon=1, adjacency="substitute", seed=7)
    plan = people.dp.plan([("count",), ("count", "salary")], half_width=10)
    assert plan.options[0].entry.epsilon == 0  # the root frame's row count: exact
    assert plan.options[1].entry.epsilon > 0  # a column's non-missing values: private


@pytest.mark.parametrize(
    ("releases", "error", "match"),
    [
        ([("argmax_exp", "dept")], ValueError, "a plan's release is one of"),
        ([("groupby.count", "dept", {})], TypeError, "needs public keys="),
        ([("mean", "salary", {"clip": (0, 1)})], TypeError, "assumed n"),
        ([("count", {"epsilon": 1})], TypeError, "takes no epsilon"),
        ([("count", "nope")], KeyError, "nope"),
        ("count", TypeError, "non-empty list"),
    ],
)
def test_bad_plans_are_refused(
    people: pd.DataFrame, releases: Any, error: type[Exception], match: str
) -> None:
    people.dp.set_budget(epsilon=1, seed=8)
    with pytest.raises(error, match=match):
        people.dp.plan(releases, half_width=10)
    assert people.dp.budget.entries == []


def test_rho_plans_each_release_at_its_cheaper_noise(people: pd.DataFrame) -> None:
    people.dp.set_budget(rho=1, seed=9)
    plan = people.dp.plan([("count",), ("median", "salary", {"candidates": GRID * 2000})],
                          half_width=[20, 40])  # fmt: skip
    assert plan.releases.noise.tolist() == ["gaussian", "laplace"]  # a median is a selection
    assert plan.total == sum(
        (o.entry.charged("rho").charge("rho") for o in plan.options), Fraction(0)
    )
    assert ACCOUNTANTS["rho"].spent(people.dp.budget.store.taken()) == 0
