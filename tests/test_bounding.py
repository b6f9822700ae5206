"""A privacy unit: per-person contribution bounding, its sensitivities, and person-level audits.

With ``set_budget(..., privacy_unit="customer")`` neighbouring datasets differ
in all the rows of one person.  The audits here draw thousands of releases on
two such datasets (one of them with an extra person of 30 rows) through the
real grouped path, one replicate of the data per public key, and check that a
Clopper-Pearson lower bound on ε stays under the claim; the same audit
catches an implementation that skips the bounding.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from fractions import Fraction
from typing import Any

import numpy as np
import pandas as pd
import pytest
import scipy.stats

from pandas_dp.core.noise import SeededSource
from pandas_dp.errors import BudgetMismatchError
from pandas_dp.kinds import argmax, count, quantile, sums
from pandas_dp.kinds.base import Neighbours
from pandas_dp.mechanisms.contributions import (
    bound_contributions,
    kept_counts,
    rows_per_person,
    unit_codes,
)
from pandas_dp.pipeline import run as release
from pandas_dp.surface import accessor

Bound = Callable[[np.ndarray, np.ndarray], float]
EPSILON = 1.0
N = 20_000
TIGHT = 0.6
BIG = 30  # rows of the extra person


# ------------------------------------------------------------------ the bounding itself


def _random_rows(seed: int, n: int = 5_000) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.Generator(np.random.PCG64(seed))
    units = rng.integers(-1, 300, n)  # -1: a missing unit id
    keys = rng.integers(-1, 6, n)  # -1: not a public key
    cells = rng.integers(-1, 4, n)
    return units, keys, cells


@pytest.mark.parametrize("max_rows", [1, 3])
@pytest.mark.parametrize("max_groups", [None, 1, 2])
@pytest.mark.parametrize("with_cells", [False, True])
def test_bounding_keeps_exactly_the_bounded_rows(
    max_rows: int, max_groups: int | None, with_cells: bool
) -> None:
    units, keys, cells = _random_rows(1)
    grouped = max_groups is not None
    keep = bound_contributions(
        SeededSource(3),
        units,
        keys if grouped else None,
        cells if with_cells else None,
        n_keys=6,
        n_cells=4,
        max_rows=max_rows,
        max_groups=max_groups,
    )
    frame = pd.DataFrame({"u": units, "k": keys if grouped else 0, "c": cells if with_cells else 0})
    valid = (frame.u >= 0) & (frame.k >= 0) & (frame.c >= 0)
    assert not keep[~valid.to_numpy()].any()  # missing ids and rows outside the keys dropped
    kept = frame[keep]
    per_cell = kept.groupby(["u", "k", "c"]).size()
    assert per_cell.max() <= max_rows
    if grouped:
        assert kept.groupby("u").k.nunique().max() <= max_groups
        # as many keys as allowed, each with as many rows as allowed (never fewer)
        chosen = kept.groupby("u").k.nunique()
        available = frame[valid].groupby("u").k.nunique()
        assert (chosen == np.minimum(available[chosen.index], max_groups)).all()
    full = frame[valid].groupby(["u", "k", "c"]).size().clip(upper=max_rows)
    assert (per_cell == full[per_cell.index]).all()


def test_bounding_chooses_rows_and_keys_uniformly_not_the_first() -> None:
    # 4,000 persons, each with 10 rows spread over 5 keys (2 rows per key): keep 1 key
    # and 1 row of it. Each row must be kept with probability 1/10, whatever its place.
    persons, rows = 4_000, 10
    units = np.repeat(np.arange(persons), rows)
    keys = np.tile(np.repeat(np.arange(5), 2), persons)
    keep = bound_contributions(
        SeededSource(8), units, keys, None, n_keys=5, n_cells=1, max_rows=1, max_groups=1
    )
    position = np.tile(np.arange(rows), persons)
    counts = np.bincount(position[keep], minlength=rows)
    assert counts.sum() == persons
    pvalue = scipy.stats.chisquare(counts).pvalue
    assert pvalue > 1e-6, counts
    first = np.bincount(position[position == 0], minlength=rows)  # "the first k"
    assert scipy.stats.chisquare(first + 1e-9).pvalue < 1e-6


def test_a_sum_keeps_uniform_rows_of_the_persons_over_the_cap_and_all_of_the_others() -> None:
    # 3,000 persons of 10 rows (3 kept: each row 3/10 of the time, wherever it stands)
    # between 3,000 of 2 rows (both kept, always), interleaved as a frame would hold them
    crowded, rows, k = 3_000, 10, 3
    units = np.concatenate([np.repeat(np.arange(crowded), rows), np.arange(crowded, 2 * crowded)])
    units = np.concatenate([units, np.arange(crowded, 2 * crowded)])
    order = np.random.Generator(np.random.PCG64(1)).permutation(units.size)
    units = units[order]
    position = np.full(units.size, -1)  # each crowded row's place among its person's rows
    for person_rows in pd.Series(np.arange(units.size)).groupby(units).indices.values():
        if person_rows.size == rows:
            position[person_rows] = np.arange(rows)
    keep = bound_contributions(
        SeededSource(11), units, None, None, n_keys=1, n_cells=1, max_rows=k, max_groups=None
    )
    assert keep[position < 0].all()  # persons under the cap keep every row
    counts = np.bincount(position[keep & (position >= 0)], minlength=rows)
    assert counts.sum() == crowded * k
    assert scipy.stats.chisquare(counts).pvalue > 1e-6, counts
    first = np.bincount(position[(position >= 0) & (position < k)], minlength=rows)  # first k
    assert scipy.stats.chisquare(first + 1e-9).pvalue < 1e-6


class _NoWords:
    def words(self, n: int) -> np.ndarray:
        raise AssertionError(f"drew {n} words")


@pytest.mark.parametrize("grouped", [False, True])
def test_persons_within_the_bounds_draw_no_random_word(grouped: bool) -> None:
    units = np.repeat(np.arange(1_000), 3)  # 3 rows each, in 3 keys
    keys = np.tile(np.arange(3), 1_000)
    keep = bound_contributions(
        _NoWords(),
        units,
        keys if grouped else None,
        None,
        n_keys=3,
        n_cells=1,
        max_rows=1 if grouped else 3,
        max_groups=3 if grouped else None,
    )
    assert keep.all()


@pytest.mark.parametrize("max_rows", [1, 3])
@pytest.mark.parametrize("max_groups", [None, 1, 2])
@pytest.mark.parametrize("sparse", [False, True])  # sparse keys: pairs factorized, not counted
def test_kept_counts_are_the_rows_bounding_keeps_from_the_same_words(
    max_rows: int, max_groups: int | None, sparse: bool
) -> None:
    units, keys, _ = _random_rows(2)
    n_keys = 6
    if sparse:
        keys, n_keys = np.where(keys >= 0, keys * 1_000, -1), 6_000
    grouped = max_groups is not None
    bounds = {"n_keys": n_keys, "max_rows": max_rows, "max_groups": max_groups}
    ids = pd.Series(units).where(units >= 0).astype("Int64")  # -1: a missing id
    counts = kept_counts(SeededSource(4), ids, keys if grouped else None, **bounds)
    keep = bound_contributions(
        SeededSource(4),
        unit_codes(ids, sort=True),
        keys if grouped else None,
        None,
        n_cells=1,
        **bounds,
    )
    if grouped:
        expected = np.bincount(keys[keep], minlength=n_keys)
    else:
        expected = np.array([np.count_nonzero(keep)])
    assert counts.tolist() == expected.tolist()


def test_kept_counts_do_not_depend_on_the_order_of_the_rows() -> None:
    units, keys, _ = _random_rows(5)
    ids = pd.Series(units).where(units >= 0).astype("Int64")
    order = np.random.Generator(np.random.PCG64(6)).permutation(units.size)
    bounds = {"n_keys": 6, "max_rows": 2, "max_groups": 1}
    counts = kept_counts(SeededSource(7), ids, keys, **bounds)
    shuffled = kept_counts(SeededSource(7), ids.iloc[order], keys[order], **bounds)
    assert counts.tolist() == shuffled.tolist()


@pytest.mark.parametrize(
    ("ids", "expected"),
    [
        (pd.Series([7, 7, 7, 9, -3, 7, 9]), [1, 2, 4]),
        (pd.Series([7, 7, 7, 9, 3, 7, 9], dtype="uint16"), [1, 2, 4]),
        (pd.Series([-128, -128, -128, 127, 0, -128, 127], dtype="int8"), [1, 2, 4]),
        (pd.Series([1 << 40, 1 << 40, 1 << 40, 5, 0, 1 << 40, 5]), [1, 2, 4]),  # hashed
        (pd.Series(["a", "a", "a", "b", "c", "a", "b"]), [1, 2, 4]),
        (pd.Series([7, 7, 7, 9, None, 7, 9, None], dtype="Int64"), [2, 4]),  # missing dropped
    ],
)
def test_rows_per_person_counts_each_persons_rows(ids: pd.Series, expected: list[int]) -> None:
    assert sorted(c for c in rows_per_person(ids).tolist() if c) == expected


def test_kept_counts_choose_keys_uniformly_not_the_first() -> None:
    # 3,000 persons with one row in each of 5 keys, one key kept each: uniform over keys
    persons = 3_000
    units = np.repeat(np.arange(persons), 5)
    keys = np.tile(np.arange(5), persons)
    counts = kept_counts(
        SeededSource(9), pd.Series(units), keys, n_keys=5, max_rows=2, max_groups=1
    )
    assert counts.sum() == persons
    assert scipy.stats.chisquare(counts).pvalue > 1e-6, counts


def test_kept_rows_and_keys_are_uniform_over_many_seeds_on_a_tiny_frame() -> None:
    # one person, 6 rows over 3 keys (rows 0-1: key 0, rows 2-3: key 1, rows 4-5: key 2)
    # and a second person of one row: keep 1 key and 1 row; over 3,000 seeds each of the
    # first person's rows is kept 1/6 of the time, wherever it stands.
    units = np.array([0, 0, 0, 0, 0, 0, 1])
    keys = np.array([0, 0, 1, 1, 2, 2, 0])
    kept = np.zeros(7, dtype=np.int64)
    for seed in range(3_000):
        kept += bound_contributions(
            SeededSource(seed), units, keys, None, n_keys=3, n_cells=1, max_rows=1, max_groups=1
        )
    assert kept[6] == 3_000
    assert kept[:6].sum() == 3_000
    assert scipy.stats.chisquare(kept[:6]).pvalue > 1e-6, kept


class _TiedSource:
    """The first ``ties`` draws' words all equal (every value of a cell ties), then random words."""

    def __init__(self, seed: int, ties: int = 1) -> None:
        self.rng = np.random.Generator(np.random.PCG64(seed))
        self.ties = ties

    def words(self, n: int) -> np.ndarray:
        if self.ties:
            self.ties -= 1
            return np.full(n, 0xABCD_0123_4567_89EF, dtype=np.uint64)
        return self.rng.integers(0, 1 << 64, n, dtype=np.uint64)


@pytest.mark.parametrize("ties", [1, 3])  # 3: the whole-word draws tie too, and draw again
def test_tied_values_draw_again_and_keep_uniform_rows(ties: int) -> None:
    # one person of 4 rows and one of 1: the first values all tie, so the crowded person
    # draws again; each of its rows is kept 1/4 of the time (the first, were ties kept)
    units = np.array([5, 5, 5, 5, (1 << 20) - 1])
    kept = np.zeros(5, dtype=np.int64)
    for seed in range(2_000):
        source = _TiedSource(seed, ties)
        kept += bound_contributions(
            source, units, None, None, n_keys=1, n_cells=1, max_rows=1, max_groups=None
        )
    assert kept[4] == 2_000
    assert kept[:4].sum() == 2_000
    assert scipy.stats.chisquare(kept[:4]).pvalue > 1e-6, kept


def test_a_person_of_very_many_rows_is_bounded_without_failing() -> None:
    # 300,000 rows of one person in one cell: their 32-bit values tie almost surely; the
    # redraw must finish (a recursion on ties raised RecursionError inside the
    # reservation, a data-dependent failure that returned the budget)
    units = np.r_[np.zeros(300_000, dtype=np.int64), np.arange(1, 1_001)]
    kept = bound_contributions(
        SeededSource(1), units, None, None, n_keys=1, n_cells=1, max_rows=5, max_groups=None
    )
    assert kept[:300_000].sum() == 5
    assert kept[300_000:].all()


@pytest.mark.parametrize(
    ("ids", "expected"),
    [
        (pd.Series([7, 9, 7, 12]), [0, 2, 0, 5]),  # a narrow range: the ids less the smallest
        (pd.Series([-3, 0, -3], dtype="int8"), [0, 3, 0]),
        (pd.Series([9, 7, 9], dtype="uint32"), [2, 0, 2]),
        (pd.Series([1 << 40, 5, 1 << 40, 9]), [0, 1, 0, 2]),  # a wide range: factorized
        (pd.Series(["b", "a", "b"]), [0, 1, 0]),
    ],
)
def test_unit_codes_give_one_code_per_person(ids: pd.Series, expected: list[int]) -> None:
    before = ids.copy()
    codes = unit_codes(ids)
    assert codes.dtype == np.int64
    assert codes.tolist() == expected
    codes[:] = -5  # the codes are a new array: the ids are never written
    assert ids.equals(before)


def test_unit_codes_mark_missing_ids() -> None:
    codes = unit_codes(pd.Series(["a", None, "b", "a", np.nan]))
    assert codes.tolist() == [0, -1, 1, 0, -1]


@pytest.mark.parametrize(
    "ids",
    [pd.Series([1, 1.0, True], dtype=object), pd.Series([1.0, -0.0, 0.0])],
    ids=["object", "float"],
)
def test_unit_codes_refuse_ids_that_may_be_one_person_or_several(ids: pd.Series) -> None:
    with pytest.raises(TypeError, match="integer, string or categorical"):
        unit_codes(ids)


@pytest.mark.parametrize(
    "call",
    [
        lambda d: d.dp.count(epsilon=1, max_rows=5),
        lambda d: d.dp.groupby("g", keys=[0, 1]).count(epsilon=1, max_rows=5, max_groups=1),
        lambda d: d.dp.per_unit(n=("x", "size")),
        lambda d: d.dp.rows_per_unit(0.5, candidates=range(1, 20), epsilon=1),
    ],
    ids=["count", "grouped", "per_unit", "rows_per_unit"],
)
def test_a_unit_column_made_object_later_is_refused_before_any_spend(call: Any) -> None:
    df = pd.DataFrame({"pid": [1, 2, 3] * 5, "g": [0, 1] * 7 + [0], "x": 1.0})
    budget = df.dp.set_budget(epsilon=10, privacy_unit="pid", seed=1)
    df["pid"] = pd.Series([1, 1.0, True] * 5, dtype=object)
    df.dp.inherit()  # "the same persons": the ids still name them, but not as one type
    with pytest.raises(TypeError, match=r"privacy unit column 'pid' has dtype object"):
        call(df)
    assert budget.entries == []


# ------------------------------------------------------------------ sensitivities


def _unit(adjacency: str, grouped: bool = False, rows: int = 3, groups: int | None = None):  # type: ignore[no-untyped-def]
    return Neighbours(adjacency, grouped, max_rows=rows, max_groups=groups, privacy_unit="customer")


@pytest.mark.parametrize(
    ("adjacency", "grouped", "expected"),
    [
        ("add_remove", False, 3),
        ("add_remove", True, 6),
        ("substitute", False, 6),
        ("substitute", True, 12),
    ],
)
def test_unit_sensitivities_are_the_one_row_figures_times_the_bounds(
    adjacency: str, grouped: bool, expected: int
) -> None:
    relation = _unit(adjacency, grouped, rows=3, groups=2 if grouped else None)
    eps = Fraction(1, 2)
    assert count.plan_count(eps, relation).sensitivity == expected
    assert relation.sum_sensitivity(-4, 10) == expected * 10
    assert relation.pair_sensitivity(Fraction(7)) == expected * 7
    grid = sums.plan_sum((-4.0, 10.0), eps, relation)
    assert grid.delta == expected * max(abs(grid.q_lo), abs(grid.q_hi))
    mean = sums.plan_mean((-4.0, 10.0), eps, relation).grid
    assert mean.delta == expected * mean.q_hi
    q = Fraction(9, 10)
    assert quantile.plan_quantile(q, eps, relation).sensitivity == expected * 9


def test_one_row_per_person_keeps_the_one_row_figures() -> None:
    eps = Fraction(1)
    assert count.plan_count(eps, Neighbours("substitute")).sensitivity == 1
    assert count.plan_count(eps, Neighbours("substitute", n_public=True)).sensitivity == 0
    assert Neighbours("substitute").sum_sensitivity(-4, 10) == 14


@pytest.mark.parametrize(
    ("clip", "adjacency", "monotone"),
    [
        (None, "add_remove", True),
        ((0.0, 10.0), "add_remove", True),
        ((-5.0, 10.0), "add_remove", False),  # a person raises one candidate, lowers another
        (None, "substitute", False),
    ],
)
def test_selection_needs_only_max_rows_and_halves_where_not_monotone(
    clip: tuple[float, float] | None, adjacency: str, monotone: bool
) -> None:
    eps = Fraction(1)
    plan = argmax.plan_argmax(eps, _unit(adjacency, rows=4), clip=clip)
    one_row = argmax.plan_argmax(eps, Neighbours(adjacency), clip=clip)
    assert plan.sensitivity == 4 * one_row.sensitivity
    assert plan.monotone is monotone
    factor = 1 if monotone else 2
    assert plan.rate == argmax.Rate.at_most(eps / (factor * plan.sensitivity))
    grouped = argmax.plan_argmax(eps, _unit(adjacency, True, rows=4, groups=3), clip=clip)
    touched = 3 if adjacency == "add_remove" else 6  # keys one person reaches
    per_key = argmax.plan_argmax(eps / touched, Neighbours(adjacency), clip=clip)
    assert grouped.sensitivity == 4 * per_key.sensitivity
    assert grouped.rate == argmax.Rate.at_most(eps / touched / (factor * grouped.sensitivity))


# ------------------------------------------------------------------ releases


@pytest.fixture
def orders() -> pd.DataFrame:
    rng = np.random.Generator(np.random.PCG64(7))
    n = 3_000
    return pd.DataFrame(
        {
            "customer": pd.array(rng.integers(0, 400, n), dtype="Int64"),
            "amount": rng.uniform(0, 600, n),
            "region": rng.choice(["N", "S", "E", "W"], n),
            "product": rng.choice(list("abcdef"), n),
        }
    )


def test_releases_at_huge_epsilon_are_the_bounded_statistics(orders: pd.DataFrame) -> None:
    orders.loc[::50, "customer"] = pd.NA  # rows without a person: dropped
    orders.dp.set_budget(epsilon=1e12, privacy_unit="customer", seed=2)
    per = orders.dropna(subset=["customer"]).groupby("customer")
    assert orders.dp.count(epsilon=1e9, max_rows=3) == per.size().clip(upper=3).sum()
    g = orders.dp.groupby("region", keys=list("NSEW")).count(epsilon=1e9, max_rows=1, max_groups=1)
    assert g.sum() == orders.customer.nunique()  # one key, and one row of it, per person
    people_in = orders.dropna(subset=["customer"]).groupby("region").customer.nunique()
    assert (g <= people_in[list("NSEW")].to_numpy()).all()
    total = orders.dp.sum("amount", clip=(0, 1000), epsilon=1e9, max_rows=1)
    assert per.amount.min().sum() <= total + 1
    assert total <= per.amount.max().sum() + 1


def test_bounds_default_from_set_budget_and_may_be_overridden(orders: pd.DataFrame) -> None:
    budget = orders.dp.set_budget(
        epsilon=1e12, privacy_unit="customer", max_rows=2, max_groups=1, seed=2
    )
    per = orders.groupby("customer")
    assert orders.dp.count(epsilon=1e9) == per.size().clip(upper=2).sum()
    assert orders.dp.count(epsilon=1e9, max_rows=4) == per.size().clip(upper=4).sum()
    orders.dp.groupby("region", keys=list("NSEW")).count(epsilon=1e9)
    ledger = budget.ledger
    assert ledger.privacy_unit.tolist() == ["customer"] * 3
    assert ledger.max_rows.tolist() == [2, 4, 2]
    assert ledger.max_groups.tolist()[2] == 1


def test_the_first_k_rows_are_not_what_is_kept(orders: pd.DataFrame) -> None:
    orders = orders.sort_values("amount").reset_index(drop=True)  # rows ordered by value
    orders.dp.set_budget(epsilon=1e12, privacy_unit="customer", seed=4)
    first = orders.groupby("customer").head(1).amount.sum()
    last = orders.groupby("customer").tail(1).amount.sum()
    got = orders.dp.sum("amount", clip=(0, 1000), epsilon=1e9, max_rows=1)
    assert first + 0.2 * (last - first) < got < last - 0.2 * (last - first)


BAD: dict[str, tuple[Callable[[pd.DataFrame], Any], type[Exception], str]] = {
    "missing max_rows": (lambda d: d.dp.count(epsilon=1), TypeError, "needs `max_rows=`"),
    "missing max_groups": (
        lambda d: d.dp.groupby("region", keys=list("NSEW")).count(epsilon=1, max_rows=1),
        TypeError,
        "needs `max_groups=`",
    ),
    "zero max_rows": (lambda d: d.dp.count(epsilon=1, max_rows=0), ValueError, "positive"),
    "bool max_rows": (lambda d: d.dp.count(epsilon=1, max_rows=True), TypeError, "positive"),
    "float max_groups": (
        lambda d: d.dp.groupby("region", keys=["N"]).count(epsilon=1, max_rows=1, max_groups=1.5),
        TypeError,
        "positive",
    ),
    "group by the unit": (
        lambda d: d.dp.groupby("customer", keys=[1.0]).count(epsilon=1, max_rows=1, max_groups=1),
        ValueError,
        "privacy unit",
    ),
    "select the unit": (
        lambda d: d.dp.argmax_exp("customer", candidates=[1.0], epsilon=1, max_rows=1),
        ValueError,
        "privacy unit",
    ),
    "sum the unit": (
        lambda d: d.dp.sum("customer", clip=(0, 1), epsilon=1, max_rows=1),
        ValueError,
        "privacy unit",
    ),
    "drop the unit": (lambda d: d.dp.select(["amount"]), ValueError, "privacy unit"),
    "overwrite the unit": (lambda d: d.dp.assign(customer=0), ValueError, "privacy unit"),
    # assign's callables get a copy of the frame: replacing the unit there changes who is who
    "overwrite the unit in a function": (
        lambda d: d.dp.assign(z=lambda c: c.__setitem__("customer", np.arange(len(c))) or 0),
        ValueError,
        "privacy unit",
    ),
    "rename onto the unit in a function": (
        lambda d: d.dp.assign(
            z=lambda c: setattr(
                c, "columns", [{"customer": "c", "amount": "customer"}.get(k, k) for k in c]
            )
        ),
        ValueError,
        "privacy unit",
    ),
}


@pytest.mark.parametrize(("call", "error", "message"), BAD.values(), ids=BAD.keys())
def test_bad_bounds_are_refused_before_any_spend(
    orders: pd.DataFrame, call: Callable[[pd.DataFrame], Any], error: type, message: str
) -> None:
    orders.loc[3, "customer"] = 987654.0  # a unit id that must never appear in a message
    budget = orders.dp.set_budget(epsilon=10, privacy_unit="customer", seed=1)
    words: list[int] = []
    inner = budget.source
    budget.source = type("Spy", (), {"words": lambda self, n: words.append(n) or inner.words(n)})()
    with pytest.raises(error, match=message) as err:
        call(orders)
    assert "987654" not in str(err.value)
    assert budget.spent == 0
    assert budget.entries == []
    assert words == []


def test_set_budget_checks_the_unit_and_its_defaults(orders: pd.DataFrame) -> None:
    with pytest.raises(KeyError, match="custommer"):
        orders.dp.set_budget(epsilon=1, privacy_unit="custommer")
    with pytest.raises(TypeError, match="go with `privacy_unit`"):
        orders.dp.set_budget(epsilon=1, max_rows=3)
    with pytest.raises(ValueError, match="`max_rows` must be a positive integer"):
        orders.dp.set_budget(epsilon=1, privacy_unit="customer", max_rows=-1)
    budget = orders.dp.set_budget(epsilon=1, privacy_unit="customer")
    assert "privacy_unit='customer'" in repr(budget)


def test_bounds_on_a_frame_of_persons_are_refused(salaries: pd.DataFrame) -> None:
    salaries.dp.set_budget(epsilon=1, seed=1)
    with pytest.raises(TypeError, match="each row of this frame is one person"):
        salaries.dp.count(epsilon=0.5, max_rows=3)
    assert salaries.dp.budget.spent == 0


def test_per_unit_gives_one_row_per_person_on_the_same_budget(orders: pd.DataFrame) -> None:
    orders.loc[::40, "customer"] = np.nan
    budget = orders.dp.set_budget(epsilon=1e12, adjacency="substitute", privacy_unit="customer")
    people = orders.dp.per_unit(spend=("amount", "sum"), orders=("amount", "size"))
    expected = orders.groupby("customer").agg(spend=("amount", "sum"), orders=("amount", "size"))
    pd.testing.assert_frame_equal(people.sort_index(), expected.sort_index())
    assert people.dp.budget is budget
    assert budget.spent == 0
    # its rows are persons: no bounds, and under substitute the number of persons is public
    assert people.dp.count(epsilon=1) == orders.customer.nunique()
    assert budget.spent == 0
    people.dp.mean("spend", clip=(0, 5_000), epsilon=1)
    assert budget.entries[-1].privacy_unit is None
    with pytest.raises(TypeError, match="one row per person"):
        people.dp.per_unit(n=("spend", "size"))
    with pytest.raises(TypeError, match=r"pair \(column, function\)"):
        orders.dp.per_unit(spend="amount")


def thirty_row_person(adjacency: str) -> tuple[pd.DataFrame, Any]:
    """Persons 0..9 with one row each, and person 99 with 30 rows."""
    df = pd.DataFrame({"pid": [*range(10), *[99] * 30], "x": 1.0})
    return df, df.dp.set_budget(epsilon=10, adjacency=adjacency, privacy_unit="pid", seed=1)


@pytest.mark.parametrize(
    "function",
    ["cumsum", "rank", "shift", "diff", "cumcount", "head", "idxmax", lambda s: s.to_numpy()],
    ids=["cumsum", "rank", "shift", "diff", "cumcount", "head", "idxmax", "callable-array"],
)
@pytest.mark.parametrize("adjacency", ["add_remove", "substitute"])
def test_per_unit_refuses_a_transform_before_binding_anything(
    function: Any, adjacency: str
) -> None:
    df, budget = thirty_row_person(adjacency)
    derived: list[pd.DataFrame] = []
    with pytest.raises((TypeError, ValueError), match="one value"):
        derived.append(df.dp.per_unit(v=("x", function)))
    assert derived == []
    assert budget.spent == 0
    assert budget.entries == []


def test_per_unit_binds_only_a_result_indexed_by_the_persons(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Past the argument check (here switched off), the result's index is checked too."""
    df, budget = thirty_row_person("substitute")
    monkeypatch.setattr(
        accessor, "check_per_unit", lambda unit, aggregations, *a, **k: aggregations
    )
    with pytest.raises(ValueError, match="must give one row per person, indexed by the unit"):
        df.dp.per_unit(v=("x", "cumsum"))
    assert budget.entries == []


def test_per_unit_with_a_reducing_callable_gives_one_row_per_person() -> None:
    df, budget = thirty_row_person("substitute")
    people = df.dp.per_unit(rows=("x", lambda s: len(s)), total=("x", "sum"))
    assert people["rows"].to_dict() == {**dict.fromkeys(range(10), 1), 99: 30}
    assert people.dp.count(epsilon=1) == 11  # the public number of persons
    assert budget.spent == 0


@pytest.mark.parametrize(
    "function",
    [lambda s: s.index[0], lambda s: s.idxmax()],
    ids=["first-label", "idxmax"],
)
def test_per_unit_callables_never_see_row_positions(function: Any) -> None:
    """A callable sees one person's values, never their row labels.

    A ``RangeIndex`` (what ``read_csv`` gives) is the row's position: with a
    30-row person at the top of the file, everyone else's labels move by 30.
    The persons 0..9 must get the same values whether or not person 99 is in.
    """
    rows = [*[99] * 30, *range(10)]
    values = []
    for pids in (rows, rows[30:]):  # neighbours, each indexed 0..n-1 as read_csv gives
        df = pd.DataFrame({"pid": pids, "x": 1.0})
        df.dp.set_budget(epsilon=1, privacy_unit="pid")
        values.append(df.dp.per_unit(v=("x", function))["v"].loc[range(10)].tolist())
    assert values[0] == values[1]


def test_rows_per_unit_is_a_private_quantile_that_says_so(orders: pd.DataFrame) -> None:
    budget = orders.dp.set_budget(epsilon=1e4, privacy_unit="customer", seed=5)
    got = orders.dp.rows_per_unit(0.9, candidates=range(1, 41), epsilon=1e3)
    truth = orders.groupby("customer").size().quantile(0.9)
    assert abs(got - truth) <= 1
    assert budget.entries[-1].operation == "rows_per_unit(q=0.9)"
    assert budget.spent == 1e3


def test_the_persons_needed_are_the_union_bound_of_the_candidates_beyond_the_data() -> None:
    """At rate ε/(2·0.9) per person, 100 candidates win together with chance 0.05 up to 1,369."""
    needed = quantile.persons_needed
    assert needed(Fraction(1, 10), Fraction(9, 10), 100) == pytest.approx(
        1.8 * math.log(2000) / 0.01
    )
    assert needed(Fraction(1, 5), Fraction(1, 2), 20) == pytest.approx(math.log(400) / 0.1)
    assert needed(Fraction(1), Fraction(1), 100) == 0  # the top: no check


def test_rows_per_unit_with_too_few_persons_refuses_with_the_epsilon_that_suffices(
    orders: pd.DataFrame,
) -> None:
    """400 persons, 100 candidates at ε = 0.1 (1,440 needed): refused, only the count spent."""
    budget = orders.dp.set_budget(epsilon=1, privacy_unit="customer", seed=5)
    with pytest.raises(ValueError, match=r"About epsilon=(\S+) would suffice") as refused:
        orders.dp.rows_per_unit(0.9, candidates=range(1, 101), epsilon=0.1)
    assert [(e.operation, e.epsilon) for e in budget.entries] == [("count", Fraction(1, 200))]
    found = re.search(r"About epsilon=(\S+) would", str(refused.value))
    assert found is not None
    suffice = float(found.group(1))
    assert 0.2 <= suffice <= 0.8  # 2·0.9·ln(2000)/0.1 / 400 / 0.95 = 0.36 at the true count
    got = orders.dp.rows_per_unit(0.9, candidates=range(1, 101), epsilon=suffice * 1.1)
    assert abs(got - orders.groupby("customer").size().quantile(0.9)) <= 3


def test_max_rows_auto_of_a_mean_checks_the_persons_too(orders: pd.DataFrame) -> None:
    budget = orders.dp.set_budget(epsilon=1, privacy_unit="customer", seed=5)
    with pytest.raises(ValueError, match=r"max_rows.*would suffice"):
        orders.dp.mean("amount", clip=(0, 600), epsilon=0.2, max_rows="auto")
    assert [e.operation for e in budget.entries] == ["count"]  # the check: the only spend


@pytest.mark.parametrize("ledger", [False, True])
def test_a_named_budget_keeps_its_privacy_unit(tmp_path: Any, ledger: bool) -> None:
    frame = pd.DataFrame({"customer": [1, 1, 2], "x": [1.0, 2.0, 3.0]})
    where = {"ledger": tmp_path / "l.sqlite"} if ledger else {}
    name = f"shop-{ledger}-{id(tmp_path)}"
    frame.dp.set_budget(epsilon=1, privacy_unit="customer", name=name, **where)
    again = frame.copy(deep=True)
    again.attrs.clear()  # read afresh
    with pytest.raises(BudgetMismatchError, match="privacy_unit='customer', not None"):
        again.dp.set_budget(epsilon=1, name=name, **where)
    again.dp.set_budget(epsilon=1, privacy_unit="customer", name=name, **where)


# ------------------------------------------------------------------ person-level audits


def _replicated(
    extra: bool, rows_of: list[int], values: list[float], regions: int = 1
) -> pd.DataFrame:
    """N replicates of a small table of persons, each replicate under its own key ``k``.

    Person ``p`` of replicate ``j`` has ``rows_of[p]`` rows of value ``values[p]``, spread
    over ``regions`` regions; ``extra`` adds one person with BIG rows of value 10.
    """
    if extra:
        rows_of, values = [*rows_of, BIG], [*values, 10.0]
    per = np.repeat(np.arange(len(rows_of)), rows_of)
    x = np.repeat(values, rows_of)
    region = np.concatenate([np.arange(r) % regions for r in rows_of])
    size = per.size
    k = np.repeat(np.arange(N), size)
    return pd.DataFrame(
        {
            "k": k,
            "person": k * 100 + np.tile(per, N),
            "x": np.tile(x, N),
            "region": np.tile(region, N),
            "product": np.where(np.tile(per, N) == len(rows_of) - 1, "b", "a") if extra else "a",
        }
    )


BASE_ROWS = [1, 2, 3, 1]
BASE_VALUES = [3.0, 7.0, 10.0, 1.0]


def _release(df: pd.DataFrame, stat: str, seed: int) -> np.ndarray:
    df.dp.set_budget(epsilon=EPSILON, privacy_unit="person", seed=seed)
    if stat == "grouped count":
        keys = pd.MultiIndex.from_product([range(N), range(3)], names=["k", "region"])
        g = df.dp.groupby(["k", "region"], keys=keys)
        counts = g.count(epsilon=EPSILON, max_rows=2, max_groups=2).to_numpy(dtype=float)
        return counts.reshape(N, 3).sum(axis=1)  # post-processing: one number per replicate
    g = df.dp.groupby("k", keys=pd.RangeIndex(N))
    if stat == "count":
        out = g.count(epsilon=EPSILON, max_rows=5, max_groups=1)
    elif stat == "argmax":
        out = g.argmax_exp(
            "product", candidates=["a", "b"], epsilon=EPSILON, max_rows=3, max_groups=1
        )
        return (out == "b").to_numpy(dtype=float)
    else:
        out = getattr(g, stat)("x", clip=(0.0, 10.0), epsilon=EPSILON, max_rows=5, max_groups=1)
    return out.to_numpy(dtype=float)


AUDITS = {
    "count": ("count", 1, True),
    "sum": ("sum", 1, True),
    "mean": ("mean", 1, False),
    "grouped count": ("grouped count", 3, False),
    "argmax": ("argmax", 1, False),
}


def _audit(stat: str, regions: int, bound: Bound) -> float:
    rows, values = BASE_ROWS, BASE_VALUES
    if stat == "mean":
        rows, values = [1] * 8, [0.0] * 8
    if stat == "argmax":
        rows = [2, 1]  # 'a' leads by 3 rows; the extra person's rows are all 'b'
        values = [1.0, 1.0]
    y = _release(_replicated(False, rows, values, regions), stat, seed=1)
    y_prime = _release(_replicated(True, rows, values, regions), stat, seed=2)
    return bound(y, y_prime)


@pytest.mark.parametrize(("stat", "regions", "tight"), AUDITS.values(), ids=AUDITS.keys())
def test_a_person_with_many_rows_moves_a_release_by_at_most_epsilon(
    stat: str, regions: int, tight: bool, epsilon_lower_bound: Bound
) -> None:
    eps_lb = _audit(stat, regions, epsilon_lower_bound)
    assert eps_lb <= EPSILON
    if tight:
        assert eps_lb >= TIGHT * EPSILON


@pytest.mark.parametrize(("stat", "regions", "tight"), AUDITS.values(), ids=AUDITS.keys())
def test_the_audit_catches_a_release_that_skips_the_bounding(
    stat: str,
    regions: int,
    tight: bool,
    epsilon_lower_bound: Bound,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def keep_everything(source: Any, units: np.ndarray, keys: Any, cells: Any, **_: Any) -> Any:
        valid = units >= 0
        if keys is not None:
            valid &= keys >= 0
        if cells is not None:
            valid &= cells >= 0
        return valid

    def count_everything(source: Any, units: pd.Series, keys: Any, **bounds: Any) -> Any:
        valid = keep_everything(source, unit_codes(units), keys, None)
        if keys is None:
            return np.array([np.count_nonzero(valid)])
        return np.bincount(keys[valid], minlength=bounds["n_keys"])

    monkeypatch.setattr(release, "bound_contributions", keep_everything)
    monkeypatch.setattr(release, "kept_counts", count_everything)
    assert _audit(stat, regions, epsilon_lower_bound) > EPSILON
