"""``max_groups="auto"``, the share of persons ``max_groups`` cuts, and answers that warn.

What ``max_groups="auto"`` spends and chooses (a private 0.9-quantile of the
keys per person), what ``cut=True`` measures of ``max_groups``, and when a
release gives :class:`pandas_dp.PoorAnswerWarning`: a keyless release that
chose no key, a large share cut, ``clip="auto"`` with few values.
"""

from __future__ import annotations

import re
import warnings
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

import pandas_dp
from pandas_dp.errors import PoorAnswerWarning
from pandas_dp.mechanisms.contributions import keys_per_person
from pandas_dp.pipeline.recipes import (
    AUTO_GROUPS_SHARE,
    CUT_SHARE,
    FEW_RATIO,
    POOR_SHARE,
    auto_minimum,
)

KEYS = [f"k{i}" for i in range(12)]


def persons(n: int = 3_000, seed: int = 3) -> pd.DataFrame:
    """``n`` persons holding 1 to 12 keys (most 2 or 3; a tenth 8 to 12), 1 to 3 rows in each."""
    rng = np.random.Generator(np.random.PCG64(seed))
    held = np.where(rng.uniform(size=n) < 0.1, rng.integers(8, 13, n), rng.integers(2, 4, n))
    pid = np.repeat(np.arange(n), held)
    key = np.concatenate([rng.choice(12, size=h, replace=False) for h in held])
    rows = rng.integers(1, 4, size=pid.size)
    df = pd.DataFrame({"pid": np.repeat(pid, rows), "k": np.repeat(np.array(KEYS)[key], rows)})
    df["x"] = rng.uniform(0, 10, len(df))
    return df


def test_keys_per_person_counts_distinct_keys_and_leaves_out_persons_without_one() -> None:
    units = pd.Series([7, 7, 7, 9, 9, 4, 5, 5], dtype="int64")
    codes = np.array([0, 0, 2, 1, -1, -1, 3, 1], dtype=np.int64)  # -1: outside every key
    assert sorted(keys_per_person(units, codes).tolist()) == [1, 2, 2]  # 4 has none
    ids = pd.Series(["b", None, "a", "b"], dtype="string")
    assert sorted(keys_per_person(ids, np.array([5, 0, 5, 6])).tolist()) == [1, 2]


@pytest.mark.parametrize("keyless", [False, True])
def test_max_groups_auto_spends_a_quarter_and_chooses_the_keys_of_most_persons(
    keyless: bool,
) -> None:
    df = persons()
    budget = df.dp.set_budget(epsilon=4, delta=1e-6, privacy_unit="pid", seed=5)
    if keyless:
        g = df.dp.groupby("k")
        answer = g.count(epsilon=2, delta=1e-7, max_rows=1, max_groups="auto", ci=0.9)
    else:
        g = df.dp.groupby("k", keys=KEYS)
        answer = g.count(epsilon=2, max_rows=1, max_groups="auto", ci=0.9)
    if keyless:  # by policy (several keys per person): the keys first, 3/4 of epsilon
        selected, chosen, release = budget.entries
        assert selected.operation == "select_keys"
        assert selected.epsilon == Fraction(3, 2)
        assert (chosen.epsilon, release.epsilon) == (Fraction(1, 8), Fraction(3, 8))
    else:
        chosen, release = budget.entries
        assert (chosen.epsilon, release.epsilon) == (Fraction(1, 2), Fraction(3, 2))
    assert chosen.operation == "keys_per_unit(q=0.9)"
    assert chosen.release == release.release == "count"
    assert release.parameters == "ci=0.9, max_rows=1, max_groups=auto"
    assert release.max_groups == answer["max_groups"].iloc[0]
    truth = df.groupby("pid")["k"].nunique().quantile(0.9)  # 10: a tenth hold 8 to 12
    assert abs(answer["max_groups"].iloc[0] - truth) <= 2


def test_the_share_max_groups_auto_takes_is_a_quarter() -> None:
    # The one constant of the step: a mutation of AUTO_GROUPS_SHARE fails here.
    assert Fraction(1, 4) == AUTO_GROUPS_SHARE
    df = persons(600)
    df.dp.set_budget(rho=1, privacy_unit="pid", seed=2)
    df.dp.groupby("k", keys=KEYS).sum("x", clip=(0, 10), rho=0.4, max_rows=2, max_groups="auto")
    chosen, release = df.dp.budget.entries
    assert (chosen.rho, release.rho) == (Fraction(1, 10), Fraction(3, 10))


def test_max_groups_auto_is_refused_where_rows_are_persons_before_any_spend() -> None:
    df = persons(100)
    df.dp.set_budget(epsilon=1, seed=1)
    with pytest.raises(TypeError, match=r'max_groups="auto" needs a privacy unit'):
        df.dp.groupby("k", keys=KEYS).count(epsilon=0.5, max_groups="auto")
    assert df.dp.budget.spent == 0


@pytest.mark.parametrize("ci", [None, 0.9])
def test_cut_measures_the_share_of_persons_whose_keys_max_groups_cut(ci: float | None) -> None:
    df = persons()
    df.dp.set_budget(epsilon=10, privacy_unit="pid", seed=7)
    g = df.dp.groupby("k", keys=KEYS)
    with pytest.warns(PoorAnswerWarning, match=r"truncated_keys_share at 5%.*Raise max_groups="):
        answer = g.count(epsilon=5, max_rows=3, max_groups=3, ci=ci, cut=True)
    fields = ["estimate", *(["lower", "upper"] if ci else []), "truncated_share"]
    assert list(answer.columns) == [*fields, "truncated_keys_share"]
    truth = (df.groupby("pid")["k"].nunique() > 3).mean()  # a tenth hold more than 3 keys
    assert abs(answer["truncated_keys_share"].iloc[0] - truth) < 0.02
    entries = df.dp.budget.entries
    assert [e.operation for e in entries] == [
        "groupby.count",
        "truncated_share",
        "truncated_keys_share",
    ]
    assert [e.epsilon for e in entries] == [4, CUT_SHARE * 5, CUT_SHARE * 5]
    assert entries[-1].clip == ((0, 3),)


def test_an_ungrouped_count_cuts_rows_only_and_a_frame_of_persons_has_no_cut() -> None:
    df = persons(1_000)
    df.dp.set_budget(epsilon=4, privacy_unit="pid", seed=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PoorAnswerWarning)
        answer = df.dp.count(epsilon=1, max_rows=20, cut=True)
    assert list(answer.index) == ["estimate", "truncated_share"]
    people = persons(100).drop(columns="pid")
    people.dp.set_budget(epsilon=1, seed=1)
    with pytest.raises(TypeError, match="measures what bounds cut"):
        people.dp.count(epsilon=0.5, cut=True)
    assert people.dp.budget.spent == 0


def test_value_counts_with_cut_is_a_table_of_counts_and_shares() -> None:
    df = persons()
    df.dp.set_budget(epsilon=4, delta=1e-6, privacy_unit="pid", seed=8)
    with pytest.warns(PoorAnswerWarning, match="truncated_keys_share"):
        table = df.dp.value_counts("k", epsilon=2, delta=1e-7, max_rows=1, max_groups=2, cut=True)
    assert list(table.columns) == ["estimate", "truncated_share", "truncated_keys_share"]
    assert table["estimate"].is_monotonic_decreasing
    assert set(table.index) <= set(KEYS)


# ------------------------------------------------------------------ the warning


def test_one_public_filterable_class_whose_text_holds_no_data_value() -> None:
    assert pandas_dp.PoorAnswerWarning is PoorAnswerWarning
    assert issubclass(PoorAnswerWarning, UserWarning)
    df = pd.DataFrame({"who": ["secret"] * 3})
    df.dp.set_budget(epsilon=2, delta=1e-6, accountant="epsilon", seed=1)  # spent: exact sum
    with pytest.warns(PoorAnswerWarning) as caught:
        answer = df.dp.value_counts("who", epsilon=1, delta=1e-7)  # 3 persons: too few
    assert answer.empty
    (warned,) = caught
    assert "No key was chosen" in str(warned.message)
    assert "secret" not in str(warned.message)
    assert warned.filename == __file__  # at the caller's line, not inside the package
    with warnings.catch_warnings():
        warnings.simplefilter("error", PoorAnswerWarning)  # a script can stop on it
        with pytest.raises(PoorAnswerWarning):
            df.dp.groupby("who").count(epsilon=1, delta=1e-7)
    assert df.dp.budget.spent == 2  # made and paid for: the warning only says how to read it


def test_a_keyless_release_that_chooses_keys_does_not_warn() -> None:
    df = pd.DataFrame({"k": ["a"] * 200 + ["b"] * 200})
    df.dp.set_budget(epsilon=1, delta=1e-6, seed=1)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PoorAnswerWarning)
        assert len(df.dp.value_counts("k", epsilon=1, delta=1e-7)) == 2


@pytest.mark.parametrize(("upper", "warns"), [(60.0, True), (98.0, False)])
def test_a_cut_share_warns_from_five_percent(upper: float, warns: bool) -> None:
    df = pd.DataFrame({"x": np.arange(100_000) / 1_000})  # 0 to 100: 40% or 2% above
    df.dp.set_budget(epsilon=10, seed=2)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", PoorAnswerWarning)
        answer = df.dp.mean("x", clip=(0, upper), epsilon=5, cut=True)
    assert (answer["clipped_share"] >= POOR_SHARE) == warns
    assert len(caught) == warns
    if warns:
        message = str(caught[0].message)
        assert "clipped_share" in message
        assert "Widen clip=" in message
        assert not re.search(r"0\.\d", message)  # the share itself is in the answer only


def test_clip_auto_warns_when_its_count_is_below_five_fourths_of_what_it_needs() -> None:
    needed = auto_minimum(Fraction(1))  # 270 values at epsilon=1
    few = pd.DataFrame({"x": np.linspace(0, 1, int(needed * 1.1))})
    plenty = pd.DataFrame({"x": np.linspace(0, 1, int(needed * FEW_RATIO * 1.5))})
    for df, warns in ((few, True), (plenty, False)):
        df.dp.set_budget(epsilon=2, seed=3)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", PoorAnswerWarning)
            answer = df.dp.mean("x", clip="auto", epsilon=1, ci=0.9)
        assert len(caught) == warns
        assert abs(answer["clip_count"] - len(df)) < 120  # the check's count, at ε/20
    assert "found few values of 'x'" in str((caught and caught[0].message) or "") or True
