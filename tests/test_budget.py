"""The privacy budget: exact Fraction accounting, refusals, thread safety, ledger, display."""

from __future__ import annotations

import contextlib
import copy
import inspect
import os
import pickle
import sqlite3
import subprocess
import sys
import threading
import time
import uuid
import warnings
from collections.abc import Callable
from decimal import Decimal
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from pandas_dp import (
    BudgetExceededError,
    MissingBudgetError,
    PandasDPError,
    PrivacyBudget,
    open_ledger,
)
from pandas_dp.accounting import budget as budget_module
from pandas_dp.accounting import ledger as ledger_module
from pandas_dp.accounting.budget import Hold
from pandas_dp.accounting.ledger import LedgerEntry
from pandas_dp.core import zcdp
from pandas_dp.errors import BudgetMismatchError, ReservationError
from pandas_dp.surface._typed import SIGNATURES

CLIP = (0, 200_000)
KEYS = ["Eng", "Ops", "Sales"]

Release = Callable[[pd.DataFrame, float], object]

#: Every kind of release, each spending exactly the epsilon it is given.
RELEASES: dict[str, Release] = {
    "count": lambda df, eps: df.dp.count(epsilon=eps),
    "count_column": lambda df, eps: df.dp.count("bonus", epsilon=eps),
    "sum": lambda df, eps: df.dp.sum("salary", clip=CLIP, epsilon=eps),
    "mean": lambda df, eps: df.dp.mean("salary", clip=CLIP, epsilon=eps),
    "sum_many": lambda df, eps: df.dp.sum(clip={"salary": CLIP, "bonus": (0, 5e3)}, epsilon=eps),
    "groupby_count": lambda df, eps: df.dp.groupby("dept", keys=KEYS).count(epsilon=eps),
    "groupby_sum": lambda df, eps: df.dp.groupby("dept", keys=KEYS).sum(
        "salary", clip=CLIP, epsilon=eps
    ),
    "groupby_mean": lambda df, eps: df.dp.groupby("dept", keys=KEYS).mean(
        "salary", clip=CLIP, epsilon=eps
    ),
}

#: Seconds a thread of a test may wait for another: a bound never reached.
TIMEOUT = 120.0


# --------------------------------------------------------------------- exact arithmetic


def test_ten_queries_of_a_tenth_spend_exactly_one(salaries: pd.DataFrame) -> None:
    budget = salaries.dp.set_budget(epsilon=1.0, seed=1)
    for _ in range(10):
        salaries.dp.count(epsilon=0.1)
    assert budget.spent == Fraction(1)
    assert budget.remaining == 0
    with pytest.raises(BudgetExceededError):
        salaries.dp.count(epsilon=0.1)


def test_charges_that_float_addition_would_overshoot_fit_exactly(salaries: pd.DataFrame) -> None:
    # 0.1 + 0.2 == 0.30000000000000004 > 0.3 in floats: a float ledger would refuse the second.
    budget = salaries.dp.set_budget(epsilon=0.3, seed=1)
    salaries.dp.count(epsilon=0.1)
    salaries.dp.count(epsilon=0.2)
    assert budget.spent == budget.total == Fraction(3, 10)


@pytest.mark.parametrize(
    ("epsilon", "exact"),
    [
        (0.1, Fraction(1, 10)),
        (0.3, Fraction(3, 10)),
        (np.float64(0.3), Fraction(3, 10)),
        (np.float32(0.1), Fraction(1, 10)),
        (1e-5, Fraction(1, 100_000)),
        (2.5, Fraction(5, 2)),
        (2, Fraction(2)),
        (np.int64(3), Fraction(3)),
        (Decimal("0.7"), Fraction(7, 10)),
        (Fraction(1, 3), Fraction(1, 3)),
    ],
    ids=repr,
)
def test_epsilon_is_read_as_the_shortest_round_tripping_decimal(
    salaries: pd.DataFrame, epsilon: object, exact: Fraction
) -> None:
    budget = salaries.dp.set_budget(epsilon=epsilon, seed=1)  # type: ignore[arg-type]
    assert budget.total == exact
    salaries.dp.count(epsilon=epsilon)  # type: ignore[arg-type]
    assert budget.spent == exact
    assert budget.entries[0].epsilon == exact


def test_grouped_release_is_charged_once_for_all_keys(protected: pd.DataFrame) -> None:
    budget = protected.dp.budget
    protected.dp.groupby("dept", keys=KEYS).mean("salary", clip=CLIP, epsilon=0.25)
    assert budget.spent == Fraction(1, 4)
    assert len(budget.entries) == 1


# ----------------------------------------------------------------------------- refusals


def test_budget_exceeded_error_carries_requested_and_remaining(protected: pd.DataFrame) -> None:
    protected.dp.count(epsilon=9.7)
    with pytest.raises(BudgetExceededError) as info:
        protected.dp.count(epsilon=0.5)
    assert info.value.requested == Fraction(1, 2)
    assert info.value.remaining == Fraction(3, 10)
    assert isinstance(info.value, PandasDPError)
    assert "nothing was spent" in str(info.value)


@pytest.mark.parametrize("release", RELEASES.values(), ids=RELEASES.keys())
@pytest.mark.parametrize("epsilon", [0.5, 11.0], ids=["over_remaining", "over_total"])
def test_refused_release_spends_nothing_and_draws_no_noise(
    protected: pd.DataFrame, spy: Any, release: Release, epsilon: float
) -> None:
    budget = protected.dp.budget
    protected.dp.count(epsilon=9.6)
    calls, entries = spy.calls, budget.entries
    with pytest.raises(BudgetExceededError):
        release(protected, epsilon)
    assert spy.calls == calls
    assert budget.spent == Fraction(96, 10)
    assert budget.entries == entries


@pytest.mark.parametrize("release", RELEASES.values(), ids=RELEASES.keys())
def test_release_that_fits_still_runs_after_a_refusal(
    protected: pd.DataFrame, spy: Any, release: Release
) -> None:
    budget = protected.dp.budget
    with pytest.raises(BudgetExceededError):
        release(protected, 10.5)
    release(protected, 0.4)
    assert spy.calls > 0
    assert budget.spent == Fraction(2, 5)
    assert len(budget.entries) == 1


def test_concurrent_releases_never_jointly_exceed_the_total(
    salaries: pd.DataFrame, monkeypatch: pytest.MonkeyPatch
) -> None:
    budget = salaries.dp.set_budget(epsilon=3, seed=3)
    check = ledger_module.check_fits

    def slow_check(total: Fraction, spent: Fraction, requested: Fraction, *quantity: str) -> None:
        check(total, spent, requested, *quantity)
        time.sleep(2e-4)  # widen the window between the check and the record

    monkeypatch.setattr(ledger_module, "check_fits", slow_check)
    threads, attempts = 8, 25
    start = threading.Barrier(threads)
    outcomes: list[bool] = []
    lock = threading.Lock()

    def worker() -> None:
        start.wait()
        for _ in range(attempts):
            try:
                salaries.dp.count(epsilon=0.1)
                ok = True
            except BudgetExceededError:
                ok = False
            with lock:
                outcomes.append(ok)

    pool = [threading.Thread(target=worker) for _ in range(threads)]
    for thread in pool:
        thread.start()
    for thread in pool:
        thread.join()
    assert len(outcomes) == threads * attempts
    assert sum(outcomes) == 30
    assert budget.spent == Fraction(3)
    assert len(budget.entries) == 30


def test_set_budget_twice_is_refused(protected: pd.DataFrame) -> None:
    budget = protected.dp.budget
    protected.dp.count(epsilon=1)
    with pytest.raises(PandasDPError, match="already has a privacy budget"):
        protected.dp.set_budget(epsilon=100)
    assert protected.dp.budget is budget
    assert budget.total == 10
    assert budget.spent == 1


# ------------------------------------------------------------------------------ ledger

LEDGER_COLUMNS = [
    "time",
    "operation",
    "release",
    "grouping",
    "parameters",
    "columns",
    "epsilon",
    "rho",
    "delta",
    "mechanism",
    "adjacency",
    "sensitivity",
    "noise_scale",
    "half_width_95",
    "clip",
    "keys",
    "privacy_unit",
    "max_rows",
    "max_groups",
    "events",
    "planned",
    "realised",
    "spent",
    "epsilon_at",
    "at_delta",
]


def test_empty_ledger_has_the_columns(protected: pd.DataFrame) -> None:
    ledger = protected.dp.budget.ledger
    assert list(ledger.columns) == LEDGER_COLUMNS
    assert len(ledger) == 0


def test_ledger_records_each_release_with_cumulative_spent(protected: pd.DataFrame) -> None:
    protected.dp.count(epsilon=0.1)
    protected.dp.sum("salary", clip=CLIP, epsilon=0.25)
    protected.dp.groupby("dept", keys=KEYS).mean("salary", clip=CLIP, epsilon=0.5)
    ledger = protected.dp.budget.ledger
    assert list(ledger.columns) == LEDGER_COLUMNS
    assert list(ledger.operation) == ["count", "sum", "groupby.mean"]
    assert list(ledger["columns"]) == ["", "salary", "salary"]
    assert list(ledger.epsilon) == [0.1, 0.25, 0.5]
    assert list(ledger.spent) == [0.1, 0.35, 0.85]
    assert list(ledger["clip"]) == ["", "[0, 200000]", "[0, 200000]"]
    assert list(ledger.sensitivity) == ["1", "200000", "200000"]
    assert ledger["keys"].iloc[2] == len(KEYS)
    assert (ledger.adjacency == "add_remove").all()
    assert ledger.time.is_monotonic_increasing


def test_the_ledger_and_its_views_say_what_was_asked() -> None:
    # Three grouped counts and a composite mean: each entry names the call, its grouping
    # columns and its parameters, and print(budget) tells the counts apart.
    df = pd.DataFrame({"dept": ["Eng", "Ops"] * 200, "level": ["a", "b", "b", "a"] * 100})
    df["salary"] = np.arange(400.0) * 100
    budget = df.dp.set_budget(epsilon=9, delta=1e-6, seed=3)
    df.dp.value_counts("dept", epsilon=1, delta=1e-7)
    df.dp.crosstab("dept", "level", epsilon=1, delta=1e-7)
    df.dp.groupby("dept", keys=KEYS).count(epsilon=1)
    counts = str(budget)
    df.dp.histogram("salary", bins=[0, 10_000, 40_000], epsilon=1)
    df.dp.mean("salary", clip="auto", epsilon=2, ci=0.9)
    ledger = budget.ledger
    assert list(ledger.release) == [
        "value_counts",
        "crosstab",
        "count",
        "histogram",
        "mean",
        "mean",
        "mean",
    ]
    assert list(ledger.grouping) == ["dept", "dept, level", "dept", "salary", "", "", ""]
    assert ledger.parameters.tolist()[:4] == [
        "dropna=True",
        "dropna=True",
        "",
        "bins=3, right=True",
    ]
    assert set(ledger.parameters[4:]) == {"clip=auto, ci=0.9"}
    assert "value_counts: groupby.count  by dept " in counts
    assert "crosstab: groupby.count      by dept, level" in counts
    assert "  groupby.count                by dept " in counts
    assert "mean: bounds" in str(budget)
    assert "Eng" not in counts + ledger.to_string()  # a key is never recorded


# ----------------------------------------------------------------------------- display


def test_repr_is_one_short_line_with_the_amounts(protected: pd.DataFrame) -> None:
    protected.dp.count(epsilon=0.25)
    text = repr(protected.dp.budget)
    assert "\n" not in text
    assert len(text) < 120
    for part in ("total=10", "spent=0.25", "remaining=9.75", "NOT PRIVATE"):
        assert part in text


def test_html_repr_shows_total_spent_and_remaining(protected: pd.DataFrame) -> None:
    protected.dp.count(epsilon=0.25)
    html = protected.dp.budget._repr_html_()
    for part in ("total", "10", "spent", "0.25", "remaining", "9.75", "count"):
        assert part in html


def test_unseeded_budget_does_not_claim_to_be_seeded(salaries: pd.DataFrame) -> None:
    budget = salaries.dp.set_budget(epsilon=1)
    assert isinstance(budget, PrivacyBudget)
    assert "NOT PRIVATE" not in repr(budget)
    assert "NOT private" not in budget._repr_html_()


# ------------------------------------------------------------------ substitute: n public


def test_substitute_row_count_is_exact_and_free(substituted: pd.DataFrame) -> None:
    budget = substituted.dp.budget
    answers = {substituted.dp.count(epsilon=0.5) for _ in range(5)}
    assert answers == {len(substituted)}
    assert budget.spent == 0
    entry = budget.entries[-1]
    assert entry.epsilon == 0
    assert entry.sensitivity == "0"
    assert "exact" in entry.mechanism


def test_add_remove_row_count_is_charged_and_noisy(protected: pd.DataFrame) -> None:
    answers = {protected.dp.count(epsilon=0.5) for _ in range(20)}
    assert len(answers) > 1
    assert protected.dp.budget.spent == 10


@pytest.fixture
def new_process(monkeypatch: pytest.MonkeyPatch) -> Callable[[], None]:
    """Forget which named budgets this process attached, as a new process would."""
    return lambda: monkeypatch.setattr(budget_module, "_ATTACHED", set())


def _count_is_exact(df: pd.DataFrame) -> bool:
    """Whether a count of ``df`` is released exactly and free (the root's public n)."""
    df.dp.count(epsilon=0.5)
    entry = df.dp.budget.entries[-1]
    assert (entry.epsilon == 0) == (entry.mechanism == "exact (n public)")
    return entry.epsilon == 0


@pytest.mark.parametrize(("rows", "root"), [(50, True), (49, False), (51, False)])
def test_a_frame_attached_first_in_a_new_process_is_root_only_with_the_stored_count(
    tmp_path: Path, new_process: Callable[[], None], rows: int, root: bool
) -> None:
    ledger = tmp_path / "ledger.sqlite"
    full = pd.DataFrame({"x": np.arange(50.0)})
    full.dp.set_budget(epsilon=10, adjacency="substitute", ledger=ledger, name="hr")
    assert _count_is_exact(full)
    new_process()
    again = pd.DataFrame({"x": np.arange(float(rows))})  # read afresh: no marker
    again.dp.set_budget(epsilon=10, adjacency="substitute", ledger=ledger, name="hr")
    assert _count_is_exact(again) == root


def test_a_budget_whose_row_count_is_unknown_has_no_root_in_a_new_process(
    tmp_path: Path, new_process: Callable[[], None]
) -> None:
    ledger = tmp_path / "ledger.sqlite"
    full = pd.DataFrame({"x": np.arange(50.0)})
    full.dp.set_budget(epsilon=10, adjacency="substitute", ledger=ledger, name="hr")
    with sqlite3.connect(ledger) as conn:  # as a ledger before schema version 5 reads
        conn.execute("UPDATE budgets SET public_rows = NULL")
    conn.close()
    new_process()
    again = pd.DataFrame({"x": np.arange(50.0)})
    again.dp.set_budget(epsilon=10, adjacency="substitute", ledger=ledger, name="hr")
    assert not _count_is_exact(again)


# ------------------------------------------------ reservations (fail closed on errors)

#: Every release kind, selections included, with the statistics function it computes.
STATISTICS: dict[str, tuple[Release, tuple[str, str]]] = {
    **{name: (release, ("count", "count_rows")) for name, release in RELEASES.items()},
    **{
        name: (RELEASES[name], ("sums", "grid_sums"))
        for name in ("sum", "mean", "sum_many", "groupby_sum", "groupby_mean")
    },
    "argmax": (
        lambda df, eps: df.dp.argmax_exp("dept", candidates=KEYS, epsilon=eps),
        ("argmax", "candidate_counts"),
    ),
    "argmax_value": (
        lambda df, eps: df.dp.argmax_exp(
            "dept", candidates=KEYS, value="salary", clip=CLIP, epsilon=eps
        ),
        ("argmax", "sum_utilities"),
    ),
    "groupby_argmax": (
        lambda df, eps: df.dp.groupby("dept", keys=KEYS).argmax_exp(
            "age", candidates=[30, 40], epsilon=eps
        ),
        ("argmax", "count_utilities"),
    ),
    "median": (
        lambda df, eps: df.dp.median("age", candidates=[20, 40, 60], epsilon=eps),
        ("quantile", "quantile_table"),
    ),
    "groupby_median": (
        lambda df, eps: df.dp.groupby("dept", keys=KEYS).median(
            "age", candidates=[20, 40, 60], epsilon=eps
        ),
        ("quantile", "quantile_table"),
    ),
}
for _kind in ("count", "count_column", "groupby_count"):
    STATISTICS[_kind] = (RELEASES[_kind], ("count", "count_rows"))


def _patch_statistics(monkeypatch: pytest.MonkeyPatch, where: tuple[str, str], fn: Any) -> None:
    from pandas_dp.kinds import argmax, count, quantile, sums

    modules = {"sums": sums, "count": count, "argmax": argmax, "quantile": quantile}
    module = modules[where[0]]
    monkeypatch.setattr(module, where[1], fn)


@pytest.mark.parametrize(("release", "where"), STATISTICS.values(), ids=STATISTICS.keys())
def test_a_release_whose_statistics_raise_returns_its_reservation(
    protected: pd.DataFrame,
    nothing_spent: Callable[[], None],
    monkeypatch: pytest.MonkeyPatch,
    release: Release,
    where: tuple[str, str],
) -> None:
    budget = protected.dp.budget
    seen: list[Fraction] = []

    def out_of_memory(*args: object, **kwargs: object) -> None:
        seen.append(budget.spent)  # the reservation is held while the statistics run
        raise MemoryError

    _patch_statistics(monkeypatch, where, out_of_memory)
    with pytest.raises(MemoryError):
        release(protected, 0.5)
    assert seen == [Fraction(1, 2)]
    nothing_spent()  # returned: nothing spent, no entry, no noise drawn
    monkeypatch.undo()
    release(protected, 10)  # the whole budget is still there
    assert budget.spent == 10


def test_a_reservation_counts_against_every_other_query_while_it_computes(
    protected: pd.DataFrame, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pandas_dp.kinds import sums

    inner: list[BaseException] = []
    real = sums.grid_sums

    def grid_sums(*args: Any, **kwargs: Any) -> Any:
        try:  # 6 of 10 are reserved by the mean being computed: 5 more do not fit
            protected.dp.count(epsilon=5)
        except BudgetExceededError as err:
            inner.append(err)
        return real(*args, **kwargs)

    monkeypatch.setattr(sums, "grid_sums", grid_sums)
    protected.dp.mean("salary", clip=CLIP, epsilon=6)
    assert len(inner) == 1
    assert inner[0].remaining == 4
    assert protected.dp.budget.spent == 6
    assert [e.operation for e in protected.dp.budget.entries] == ["mean"]


def test_a_memory_store_settles_each_reservation_once() -> None:
    store = ledger_module.MemoryStore(Fraction(1))
    token = store.reserve(ledger_module.LedgerEntry("count", Fraction(1, 4)))
    assert store.spent() == Fraction(1, 4)
    store.cancel(token)
    assert store.spent() == 0
    assert store.entries() == []
    for settle in (store.commit, store.cancel):
        with pytest.raises(ReservationError, match="No pending reservation"):
            settle(token)


# ------------------------------------------------------------ forked processes

posix_only = pytest.mark.skipif(not hasattr(os, "fork"), reason="os.fork is POSIX only")


def _in_forked_child(action: Callable[[], object]) -> str:
    """Run ``action`` in a forked child; what it reports: 'ok' or 'ErrorType: message'."""
    read, write = os.pipe()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # fork() with threads (3.12+)
        pid = os.fork()
    if pid == 0:  # pragma: no cover - runs in the child
        try:
            os.close(read)
            try:
                action()
                report = "ok"
            except BaseException as err:
                report = f"{type(err).__name__}: {err}"
            os.write(write, report.encode())
        finally:
            os._exit(0)
    os.close(write)
    chunks = []
    while chunk := os.read(read, 1 << 16):  # until the child exits and the pipe closes
        chunks.append(chunk)
    os.close(read)
    os.waitpid(pid, 0)
    return b"".join(chunks).decode()


@posix_only
@pytest.mark.parametrize("name", [None, "fork-test"])
def test_an_in_memory_budget_refuses_to_spend_in_a_forked_child(
    salaries: pd.DataFrame, name: str | None
) -> None:
    name = None if name is None else f"{name}-{uuid.uuid4().hex}"
    budget = salaries.dp.set_budget(epsilon=1, seed=1, name=name)
    salaries.dp.count(epsilon=0.25)
    report = _in_forked_child(lambda: salaries.dp.count(epsilon=0.5))
    assert report.startswith("BudgetProcessError: ")
    assert "ledger=" in report  # names the way to share a budget between processes
    assert budget.spent == Fraction(1, 4)
    salaries.dp.count(epsilon=0.75)  # the parent still spends all of it
    assert budget.remaining == 0


# ------------------------------------------------------ named in-memory budgets


def _frame() -> pd.DataFrame:
    return pd.DataFrame({"x": [1.0, 2.0, 3.0]})


def test_a_named_in_memory_budget_continues_when_the_data_is_read_again() -> None:
    name = f"salaries-{uuid.uuid4().hex}"
    first = _frame()
    first.dp.set_budget(epsilon=1, name=name, seed=1)
    first.dp.count(epsilon=0.25)
    again = _frame()  # re-read in a notebook: a new frame, no marker
    budget = again.dp.set_budget(epsilon=1, name=name, seed=2)
    assert budget.spent == Fraction(1, 4)
    assert budget.name == name
    again.dp.count(epsilon=0.75)
    with pytest.raises(BudgetExceededError):  # one accounting for both frames
        first.dp.count(epsilon=0.01)
    assert len(budget.entries) == 2
    other = _frame().dp.set_budget(epsilon=1, name=f"other-{name}")
    assert other.spent == 0  # another name is another budget


@pytest.mark.parametrize(
    ("changes", "message"),
    [({"epsilon": 2}, "total epsilon=1, not 2"), ({"adjacency": "substitute"}, "adjacency")],
)
def test_a_named_in_memory_budget_keeps_its_total_and_adjacency(
    changes: dict[str, Any], message: str
) -> None:
    name = f"hr-{uuid.uuid4().hex}"
    _frame().dp.set_budget(epsilon=1, name=name)
    frame = _frame()
    with pytest.raises(BudgetMismatchError, match=message):
        frame.dp.set_budget(**{"epsilon": 1, "name": name, **changes})
    with pytest.raises(MissingBudgetError):  # nothing was attached
        frame.dp.count(epsilon=0.1)


# --------------------------------------------------------------- set_budget races


def _race_to_attach(frame: pd.DataFrame) -> list[str]:
    start = threading.Barrier(2)
    outcomes: list[str] = []

    def attach() -> None:
        start.wait(timeout=60)
        try:
            frame.dp.set_budget(epsilon=1)
        except PandasDPError:
            outcomes.append("refused")
        else:
            outcomes.append("attached")

    pool = [threading.Thread(target=attach) for _ in range(2)]
    for thread in pool:
        thread.start()
    for thread in pool:
        thread.join(timeout=60)
    return sorted(outcomes)


def test_two_threads_setting_a_budget_on_one_frame_never_both_succeed() -> None:
    for _ in range(30):
        assert _race_to_attach(_frame()) == ["attached", "refused"]


@pytest.mark.parametrize("spec", [".2f", "g", ".3e", ".1%", "8.3f", ""])
def test_budget_figures_format_like_numbers(protected: pd.DataFrame, spec: str) -> None:
    budget = protected.dp.budget
    protected.dp.count(epsilon=1 / 3)
    for figure in (budget.total, budget.spent, budget.remaining):
        assert isinstance(figure, Fraction)
        expected = str(figure) if not spec else format(float(figure), spec)
        assert format(figure, spec) == expected
    assert f"{budget.remaining:.2f}" == "9.67"


def test_a_budget_refuses_to_be_pickled_or_copied(protected: pd.DataFrame) -> None:
    """A copy would be a second budget for the same people; it can never reach a worker."""
    budget = protected.dp.budget
    with pytest.raises(TypeError, match="never leaves the process"):
        pickle.dumps(budget)
    with pytest.raises(TypeError, match="never leaves the process"):
        copy.deepcopy(budget)
    with pytest.raises(TypeError, match="never leaves the process"):
        copy.copy(budget)
    # The frame itself still pickles: the budget is bound to the object, not carried.
    clone = pickle.loads(pickle.dumps(protected))
    assert clone.equals(protected)
    assert budget.spent == 0


# ------------------------------------------------------------- reserve: a held share


@pytest.fixture(params=["memory", "ledger"])
def held_frame(request: pytest.FixtureRequest, tmp_path: Path) -> pd.DataFrame:
    """A frame with a budget of total 1, in memory or in a ledger file."""
    df = pd.DataFrame({"x": np.arange(20, dtype=np.float64)})
    if request.param == "memory":
        df.dp.set_budget(epsilon=1, seed=1)
    else:
        df.dp.set_budget(epsilon=1, seed=1, ledger=tmp_path / "l.sqlite", name="hr")
    return df


def _amounts(df: pd.DataFrame) -> tuple[Fraction, Fraction, Fraction]:
    budget = df.dp.budget
    return budget.spent, budget.held, budget.remaining


def test_releases_inside_a_hold_draw_on_it_first_exactly(held_frame: pd.DataFrame) -> None:
    budget = held_frame.dp.budget
    with held_frame.dp.reserve(epsilon=0.5) as hold:
        assert _amounts(held_frame) == (0, Fraction(1, 2), Fraction(1, 2))
        for _ in range(3):
            held_frame.dp.count(epsilon=0.1)
            assert budget.spent + budget.held <= budget.total
        assert _amounts(held_frame) == (Fraction(3, 10), Fraction(1, 5), Fraction(1, 2))
        held_frame.dp.query("x > 3").dp.count(epsilon=0.3)  # 0.2 from the hold, 0.1 free
        assert _amounts(held_frame) == (Fraction(3, 5), 0, Fraction(2, 5))
    assert hold.returned == 0
    assert _amounts(held_frame) == (Fraction(3, 5), 0, Fraction(2, 5))


def test_what_is_left_of_a_hold_returns_also_when_the_block_raises(
    held_frame: pd.DataFrame,
) -> None:
    def report() -> None:
        with held_frame.dp.reserve(epsilon=0.5) as hold:
            holds.append(hold)
            held_frame.dp.count(epsilon=0.125)
            raise KeyError("the report failed")

    holds: list[Hold] = []
    with pytest.raises(KeyError):
        report()
    [hold] = holds
    assert hold.returned == Fraction(3, 8)
    assert _amounts(held_frame) == (Fraction(1, 8), 0, Fraction(7, 8))


def test_a_hold_larger_than_what_remains_is_refused_and_holds_nothing(
    held_frame: pd.DataFrame,
) -> None:
    held_frame.dp.count(epsilon=0.75)
    before = (_amounts(held_frame), len(held_frame.dp.budget.entries))
    with pytest.raises(BudgetExceededError) as refused, held_frame.dp.reserve(epsilon=0.5):
        pytest.fail("the block ran")
    assert refused.value.remaining == Fraction(1, 4)
    assert (_amounts(held_frame), len(held_frame.dp.budget.entries)) == before
    with held_frame.dp.reserve(epsilon=0.25):  # what fits is held
        assert held_frame.dp.budget.remaining == 0


def test_holds_of_one_budget_do_not_nest_in_a_thread(held_frame: pd.DataFrame) -> None:
    with held_frame.dp.reserve(epsilon=0.5):
        inner = held_frame.dp.reserve(epsilon=0.1)
        with pytest.raises(ValueError, match="do not nest"):
            inner.__enter__()
        assert held_frame.dp.budget.held == Fraction(1, 2)  # the outer hold is intact
    assert held_frame.dp.budget.held == 0


def test_another_thread_cannot_spend_a_held_share(held_frame: pd.DataFrame) -> None:
    """Only the holding thread draws on the hold; another thread sees only what is free."""
    held, go, done = threading.Event(), threading.Event(), threading.Event()
    outcomes: list[object] = []

    def report() -> None:
        with held_frame.dp.reserve(epsilon=0.75):
            held.set()
            assert go.wait(TIMEOUT)
            for _ in range(6):
                held_frame.dp.count(epsilon=0.125)

    def other() -> None:
        assert held.wait(TIMEOUT)
        for _ in range(4):
            try:
                held_frame.dp.count(epsilon=0.125)
            except BudgetExceededError as err:
                outcomes.append(err)
            else:
                outcomes.append(held_frame.dp.budget.held)  # never drawn on
        go.set()
        done.set()

    threads = [threading.Thread(target=report), threading.Thread(target=other)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(TIMEOUT)
    assert done.is_set()
    assert not any(t.is_alive() for t in threads)
    assert outcomes[:2] == [Fraction(3, 4)] * 2  # the free quarter, one eighth at a time
    assert all(isinstance(o, BudgetExceededError) for o in outcomes[2:])
    assert _amounts(held_frame) == (1, 0, 0)


@pytest.mark.parametrize("epsilon", [0, -0.5, float("nan"), "0.5", True])
def test_reserve_checks_epsilon(salaries: pd.DataFrame, epsilon: object) -> None:
    salaries.dp.set_budget(epsilon=1)
    with pytest.raises((TypeError, ValueError), match="epsilon"):
        salaries.dp.reserve(epsilon=epsilon)  # type: ignore[arg-type]


def test_epsilon_prints_as_a_decimal_and_stays_exact(salaries: pd.DataFrame) -> None:
    budget = salaries.dp.set_budget(epsilon=3)
    salaries.dp.count(epsilon=0.33)
    remaining = budget.remaining
    assert (str(remaining), f"{remaining}", f"{remaining:.1f}") == ("2.67", "2.67", "2.7")
    assert repr(remaining) == "Epsilon(267, 100)"
    assert remaining == Fraction(267, 100)
    assert type(remaining - Fraction(1, 100)) is Fraction
    assert remaining - Fraction(1, 100) == Fraction(133, 50)


# --------------------------------------------------------------------- zCDP (rho) budgets


#: Releases with a Gaussian form, each spending exactly the rho it is given.
RHO_RELEASES: dict[str, Release] = {
    "count": lambda df, rho: df.dp.count(rho=rho),
    "count_column": lambda df, rho: df.dp.count("bonus", rho=rho),
    "sum": lambda df, rho: df.dp.sum("salary", clip=CLIP, rho=rho),
    "mean": lambda df, rho: df.dp.mean("salary", clip=CLIP, rho=rho),
    "groupby_count": lambda df, rho: df.dp.groupby("dept", keys=KEYS).count(rho=rho),
    "histogram": lambda df, rho: df.dp.histogram("age", bins=[18, 40, 70], rho=rho),
    "crosstab": lambda df, rho: df.dp.crosstab("dept", "age", keys=(KEYS, [30, 40]), rho=rho),
}


@pytest.fixture
def rho_budget(salaries: pd.DataFrame) -> pd.DataFrame:
    """``salaries`` with a seeded zCDP budget of rho = 1/2."""
    salaries.dp.set_budget(rho=0.5, seed=7)
    return salaries


@pytest.mark.parametrize("name", sorted(RELEASES))
def test_a_rho_budget_charges_a_pure_release_epsilon_squared_over_two(
    rho_budget: pd.DataFrame, name: str
) -> None:
    RELEASES[name](rho_budget, 0.3)
    assert rho_budget.dp.budget.spent == Fraction(9, 200)
    entry = rho_budget.dp.budget.entries[-1]
    assert (entry.epsilon, entry.rho) == (Fraction(3, 10), Fraction(9, 200))


@pytest.mark.parametrize("name", sorted(RHO_RELEASES))
def test_rho_releases_compose_exactly_and_the_next_is_refused_before_noise(
    rho_budget: pd.DataFrame, name: str
) -> None:
    release = RHO_RELEASES[name]
    for _ in range(5):
        release(rho_budget, 0.1)
    assert rho_budget.dp.budget.spent == Fraction(1, 2)
    with pytest.raises(BudgetExceededError):
        release(rho_budget, 0.1)
    assert rho_budget.dp.budget.spent == Fraction(1, 2)
    assert len(rho_budget.dp.budget.entries) == 5
    assert rho_budget.dp.budget.entries[0].mechanism.startswith("discrete_gaussian")


def test_an_epsilon_budget_refuses_rho_and_says_why(protected: pd.DataFrame) -> None:
    with pytest.raises(ValueError, match="not pure epsilon-DP"):
        protected.dp.count(rho=0.1)
    assert protected.dp.budget.spent == 0
    assert protected.dp.budget.entries == []


@pytest.mark.parametrize("kwargs", [{}, {"epsilon": 0.1, "rho": 0.1}], ids=["neither", "both"])
def test_a_release_takes_exactly_one_of_epsilon_and_rho(
    rho_budget: pd.DataFrame, kwargs: dict[str, float]
) -> None:
    with pytest.raises(TypeError, match="exactly one of `epsilon=`"):
        rho_budget.dp.count(**kwargs)
    assert rho_budget.dp.budget.spent == 0


@pytest.mark.parametrize("kwargs", [{}, {"epsilon": 1, "rho": 1}], ids=["neither", "both"])
def test_set_budget_takes_exactly_one_of_epsilon_and_rho(
    salaries: pd.DataFrame, kwargs: dict[str, float]
) -> None:
    with pytest.raises(TypeError, match="exactly one of `epsilon=`"):
        salaries.dp.set_budget(**kwargs)


#: One call of every release of df.dp and its groupby with ``rho=`` (each charged exactly ρ).
GRID = [0.0, 50_000.0, 100_000.0, 150_000.0]
EVERY_RHO: dict[str, Release] = {
    **RHO_RELEASES,
    "nunique": lambda df, rho: df.dp.nunique("dept", rho=rho),
    "var": lambda df, rho: df.dp.var("salary", clip=CLIP, rho=rho),
    "std_ci": lambda df, rho: df.dp.std("salary", clip=CLIP, rho=rho, ci=0.9),
    "describe": lambda df, rho: df.dp.describe(
        ["salary", "age"],
        clip={"salary": CLIP, "age": (0, 100)},
        candidates={"salary": GRID, "age": [20, 40, 60]},
        rho=rho,
    ),
    "argmax_exp": lambda df, rho: df.dp.argmax_exp("dept", candidates=KEYS, rho=rho),
    "argmax_exp_k": lambda df, rho: df.dp.argmax_exp("dept", candidates=KEYS, k=2, rho=rho),
    "quantile": lambda df, rho: df.dp.quantile("salary", 0.25, candidates=GRID, rho=rho),
    "median": lambda df, rho: df.dp.median("salary", candidates=GRID, rho=rho),
    "bounds": lambda df, rho: df.dp.bounds("salary", rho=rho),
    "clipped_share": lambda df, rho: df.dp.clipped_share("salary", clip=CLIP, rho=rho),
    "sum_auto": lambda df, rho: df.dp.sum("salary", clip="auto", rho=rho),
    "mean_auto": lambda df, rho: df.dp.mean("salary", clip="auto", rho=rho),
    "var_auto": lambda df, rho: df.dp.var("salary", clip="auto", rho=rho),
    "std_auto": lambda df, rho: df.dp.std("salary", clip="auto", rho=rho),
    "describe_auto": lambda df, rho: df.dp.describe(
        ["salary"], clip="auto", candidates={"salary": GRID}, rho=rho
    ),
    "groupby_nunique": lambda df, rho: df.dp.groupby("dept", keys=KEYS).nunique("age", rho=rho),
    "groupby_var": lambda df, rho: df.dp.groupby("dept", keys=KEYS).var(
        "salary", clip=CLIP, rho=rho
    ),
    "groupby_median": lambda df, rho: df.dp.groupby("dept", keys=KEYS).median(
        "salary", candidates=GRID, rho=rho
    ),
    "groupby_mean_auto": lambda df, rho: df.dp.groupby("dept", keys=KEYS).mean(
        "salary", clip="auto", rho=rho
    ),
}
#: Releases of an ε-DP mechanism: given rho=, run at the largest ε with ε²/2 <= ρ.
SELECTIONS = ("argmax_exp", "argmax_exp_k", "quantile", "median", "bounds", "clipped_share")


@pytest.mark.parametrize("name", sorted(EVERY_RHO))
@pytest.mark.filterwarnings("ignore::pandas_dp.errors.PoorAnswerWarning")  # 200 values: few
def test_every_release_takes_rho_and_is_charged_exactly_rho(
    rho_budget: pd.DataFrame, name: str
) -> None:
    EVERY_RHO[name](rho_budget, 0.5)  # clip="auto" needs that much for 200 values
    entries = rho_budget.dp.budget.entries
    assert rho_budget.dp.budget.spent == sum(e.rho for e in entries) == Fraction(1, 2)  # type: ignore[misc]


@pytest.mark.parametrize("name", sorted(EVERY_RHO))
def test_an_epsilon_budget_refuses_every_rho_release_and_says_why(
    protected: pd.DataFrame, name: str
) -> None:
    with pytest.raises(ValueError, match="not pure epsilon-DP"):
        EVERY_RHO[name](protected, 0.03)
    assert protected.dp.budget.spent == 0
    assert protected.dp.budget.entries == []


def test_every_release_method_takes_keyword_only_epsilon_and_rho(
    salaries: pd.DataFrame,
) -> None:
    surfaces = [salaries.dp, salaries.dp.groupby("dept", keys=KEYS)]
    methods = [getattr(s, signature.name) for s in surfaces for signature in SIGNATURES]
    methods += [salaries.dp.histogram, salaries.dp.crosstab, salaries.dp.rows_per_unit]
    for method in methods:
        params = inspect.signature(method).parameters
        kinds = {params[p].kind for p in ("epsilon", "rho")}
        assert kinds == {inspect.Parameter.KEYWORD_ONLY}, method


#: The same selections given epsilon=.
SELECTIONS_EPS: dict[str, Release] = {
    "argmax_exp": lambda df, eps: df.dp.argmax_exp("dept", candidates=KEYS, epsilon=eps),
    "argmax_exp_k": lambda df, eps: df.dp.argmax_exp("dept", candidates=KEYS, k=2, epsilon=eps),
    "quantile": lambda df, eps: df.dp.quantile("salary", 0.25, candidates=GRID, epsilon=eps),
    "median": lambda df, eps: df.dp.median("salary", candidates=GRID, epsilon=eps),
    "bounds": lambda df, eps: df.dp.bounds("salary", epsilon=eps),
    "clipped_share": lambda df, eps: df.dp.clipped_share("salary", clip=CLIP, epsilon=eps),
}


@pytest.mark.parametrize("name", sorted(SELECTIONS_EPS))
@pytest.mark.parametrize(
    ("rho", "epsilon"), [(Fraction(1, 8), Fraction(1, 2)), (Fraction(1, 32), Fraction(1, 4))]
)
def test_a_selection_given_rho_runs_at_epsilon_sqrt_2rho_and_is_charged_rho(
    rho_budget: pd.DataFrame, name: str, rho: Fraction, epsilon: Fraction
) -> None:
    EVERY_RHO[name](rho_budget, float(rho))
    given = rho_budget.dp.budget.entries[-1]
    assert (given.epsilon, given.rho) == (epsilon, rho)  # ε²/2 = ρ (not ε²/8: no exp. mech.)
    SELECTIONS_EPS[name](rho_budget, float(epsilon))  # the same release at that epsilon
    same = rho_budget.dp.budget.entries[-1]
    assert same.rho == epsilon**2 / 2
    assert (same.sensitivity, same.noise_scale) == (given.sensitivity, given.noise_scale)


@pytest.mark.parametrize("rho", ["0.01", "0.3", "0.07"])
def test_a_selection_given_rho_runs_at_the_largest_epsilon_within_it(
    rho_budget: pd.DataFrame, rho: str
) -> None:
    rho_budget.dp.median("salary", candidates=GRID, rho=float(rho))
    entry = rho_budget.dp.budget.entries[-1]
    assert entry.epsilon is not None
    assert entry.rho == Fraction(rho)
    assert entry.epsilon**2 / 2 <= entry.rho < (entry.epsilon + Fraction(1, 2**64)) ** 2 / 2


@pytest.mark.parametrize("name", ["sum_auto", "var_auto", "describe_auto", "groupby_mean_auto"])
@pytest.mark.filterwarnings("ignore::pandas_dp.errors.PoorAnswerWarning")  # 200 values: few
def test_clip_auto_under_rho_splits_rho_by_the_documented_share(
    rho_budget: pd.DataFrame, name: str
) -> None:
    EVERY_RHO[name](rho_budget, 0.4)
    check, finder, statistic = rho_budget.dp.budget.entries
    assert check.operation.endswith("count")
    assert (check.rho, check.epsilon) == (Fraction(1, 50), None)  # AUTO_CHECK_SHARE: Gaussian
    assert finder.operation.endswith("bounds")
    assert (finder.rho, statistic.rho) == (Fraction(1, 10), Fraction(7, 25))  # AUTO_SHARE = 1/4
    assert finder.epsilon == zcdp.pure_epsilon(Fraction(1, 10))  # AboveThreshold: ε²/2
    assert statistic.epsilon is None  # Gaussian
    assert statistic.mechanism.startswith(("discrete_gaussian", "count/mean/std: discrete_gauss"))


@pytest.mark.parametrize("grouped", [False, True])
def test_max_rows_auto_under_rho_spends_a_quarter_of_rho_on_rows_per_unit(
    grouped: bool,
) -> None:
    orders = pd.DataFrame({"customer": [1, 1, 1, 2, 2, 3] * 20, "region": ["N", "S"] * 60})
    orders.dp.set_budget(rho=1, privacy_unit="customer", seed=3)
    surface = orders.dp.groupby("region", keys=["N", "S"]) if grouped else orders.dp
    extra = {"max_groups": 1} if grouped else {}
    surface.count(rho=0.5, max_rows="auto", **extra)
    chooser, statistic = orders.dp.budget.entries
    assert chooser.operation == "max_rows(t=2)"  # ⌈1/√(2·3/8)⌉: a count's noise per row
    assert (chooser.rho, chooser.epsilon) == (Fraction(1, 8), Fraction(1, 2))
    assert (statistic.rho, statistic.epsilon) == (Fraction(3, 8), None)
    assert orders.dp.budget.spent == Fraction(1, 2)


def test_rows_per_unit_takes_rho_at_epsilon_sqrt_2rho() -> None:
    orders = pd.DataFrame({"customer": [1, 1, *range(2, 400)], "region": ["N", "S"] * 200})
    orders.dp.set_budget(rho=1, privacy_unit="customer", seed=3)
    orders.dp.rows_per_unit(candidates=[1, 2, 4], rho=0.125)  # 155 persons needed: 399
    check, entry = orders.dp.budget.entries  # the count of persons (1/20), then the quantile
    assert (check.rho, entry.rho) == (Fraction(1, 160), Fraction(19, 160))
    assert entry.epsilon == zcdp.pure_epsilon(Fraction(19, 160))


def test_epsilon_at_converts_the_rho_spent_and_the_total(rho_budget: pd.DataFrame) -> None:
    rho_budget.dp.count(rho=0.125)
    budget = rho_budget.dp.budget
    assert budget.epsilon_at(1e-6) == zcdp.epsilon_at(Fraction(1, 8), Fraction(1, 10**6))
    assert budget.epsilon_at(1e-6, of="total") == zcdp.epsilon_at(Fraction(1, 2), 1e-6)
    assert budget.epsilon_at(1e-6) < budget.epsilon_at(1e-6, of="total")


def test_the_ledger_states_rho_and_the_epsilon_it_means_after_each_release(
    rho_budget: pd.DataFrame,
) -> None:
    rho_budget.dp.count(rho=0.125)
    rho_budget.dp.median("salary", candidates=GRID, rho=0.125)
    ledger = rho_budget.dp.budget.ledger
    assert list(ledger.rho) == [0.125, 0.125]
    assert list(ledger.spent) == [0.125, 0.25]
    assert list(ledger.epsilon_at) == [
        zcdp.epsilon_at(Fraction(1, 8), Fraction(1, 10**6)),
        zcdp.epsilon_at(Fraction(1, 4), Fraction(1, 10**6)),
    ]
    assert list(ledger.at_delta) == [1e-6, 1e-6]


def test_an_epsilon_budget_is_its_own_epsilon_at_every_delta(protected: pd.DataFrame) -> None:
    protected.dp.count(epsilon=0.25)
    assert protected.dp.budget.epsilon_at(1e-9) == 0.25


def _after_a_selection(**budget: Any) -> PrivacyBudget:
    """A budget after one keyless count that spent delta = 1e-7 (and rho 1/8 or epsilon 1/4)."""
    df = pd.DataFrame({"k": ["a"] * 3000})
    held = df.dp.set_budget(**budget, delta=1e-6, seed=0)
    loss = {"epsilon": 0.25} if "epsilon" in budget else {"rho": 0.125}
    df.dp.groupby("k").count(**loss, delta=1e-7)
    assert held.delta_spent == Fraction(1, 10**7)
    return held


def test_epsilon_at_counts_the_delta_selections_spent_in_the_guarantees_delta() -> None:
    budget = _after_a_selection(rho=0.5)
    at = Fraction(1, 10**6) - Fraction(1, 10**7)  # the conversion's share of delta = 1e-6
    assert budget.epsilon_at(1e-6) == zcdp.epsilon_at(Fraction(1, 8), at)
    with pytest.raises(ValueError, match="`delta` must be above the delta the releases spent"):
        budget.epsilon_at(1e-7)
    ledger = budget.ledger
    assert list(ledger.epsilon_at) == [zcdp.epsilon_at(Fraction(1, 8), Fraction(1, 10**6))]
    assert list(ledger.at_delta) == [float(Fraction(11, 10**7))]
    facts = dict(budget.facts())
    assert float(facts["spent as (ε, δ=1.1e-06)"]) == pytest.approx(
        zcdp.epsilon_at(Fraction(1, 8), Fraction(1, 10**6)), rel=1e-5
    )


def test_an_epsilon_budget_after_a_selection_is_its_epsilon_at_the_delta_spent() -> None:
    # ε and δ added up (an (ε, δ) budget's default is PLD: tests/test_pld.py)
    budget = _after_a_selection(epsilon=1.0, accountant="epsilon")
    assert budget.epsilon_at(1e-7) == 0.25
    assert budget.epsilon_at(1e-6) == 0.25
    with pytest.raises(ValueError, match="`delta` must be at least the delta the releases spent"):
        budget.epsilon_at(1e-9)
    assert list(budget.ledger.at_delta) == [1e-7]


def test_the_views_state_rho_and_the_epsilon_it_means(rho_budget: pd.DataFrame) -> None:
    rho_budget.dp.count(rho=0.125)
    facts = dict(rho_budget.dp.budget.facts())
    assert facts["total ρ"] == "0.5"
    assert facts["accountant"] == "ρ (zCDP)"
    expected = zcdp.epsilon_at(Fraction(1, 8), Fraction(1, 10**6))
    assert float(facts["spent as (ε, δ=1e-06)"]) == pytest.approx(expected, rel=1e-5)
    assert str(rho_budget.dp.budget).splitlines()[-2].split()[3] == "ρ"  # the cost column


def test_a_named_in_memory_budget_keeps_its_accountant() -> None:
    name = f"z-{uuid.uuid4().hex}"
    _frame().dp.set_budget(rho=0.5, name=name)
    again = _frame()
    with pytest.raises(BudgetMismatchError, match="its accountant stays"):
        again.dp.set_budget(epsilon=0.5, name=name)
    assert again.dp.set_budget(rho=0.5, name=name).accountant == "rho"


def test_a_rho_budget_in_a_ledger_keeps_its_accountant_across_processes(tmp_path: Path) -> None:
    path = tmp_path / "l.sqlite"
    first = _frame()
    first.dp.set_budget(rho=0.5, delta=1e-6, ledger=path, name="z")
    first.dp.count(rho=0.1)
    first.dp.count(epsilon=0.2)  # charged 0.2**2/2 = 0.02
    child = (
        "import pandas as pd, pandas_dp\n"
        "df = pd.DataFrame({'x': range(10)})\n"
        f"b = df.dp.set_budget(rho=0.5, delta=1e-6, ledger={str(path)!r}, name='z')\n"
        "df.dp.count(rho=0.05)\n"
        "print(b.accountant, b.spent)\n"
    )
    root = Path(__file__).resolve().parents[1]
    done = subprocess.run(
        [sys.executable, "-c", child],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONPATH": str(root)},
        timeout=TIMEOUT,
    )
    assert done.stdout.split() == ["rho", "0.17"]
    history = open_ledger(path).history("z")
    assert list(history.rho_exact.iloc[1:]) == [Fraction(1, 10), Fraction(1, 50), Fraction(1, 20)]
    assert history.epsilon.iloc[1:].isna().tolist() == [True, False, True]
    budgets = open_ledger(path).budgets()
    assert budgets.accountant.tolist() == ["rho"]
    assert budgets.epsilon_at.iloc[0] == zcdp.epsilon_at(Fraction(17, 100), Fraction(1, 10**6))
    with pytest.raises(BudgetMismatchError, match="its accountant stays"):
        _frame().dp.set_budget(epsilon=0.5, ledger=path, name="z")


@pytest.mark.parametrize("loss", [{"epsilon": 2, "accountant": "epsilon"}, {"rho": 0.5}])
def test_a_budget_holds_a_delta_that_nothing_spends_yet(
    salaries: pd.DataFrame, loss: dict[str, Any]
) -> None:
    budget = salaries.dp.set_budget(**loss, delta=1e-6, seed=1)
    salaries.dp.count(epsilon=0.1)
    assert budget.delta == Fraction(1, 10**6)
    assert budget.delta_spent == 0
    assert dict(budget.facts())["δ spent / total"] == "0 / 1e-06"


def test_a_release_spending_delta_is_refused_beyond_the_budgets_delta(
    salaries: pd.DataFrame,
) -> None:
    budget = salaries.dp.set_budget(rho=0.5, delta=1e-6)
    spending = LedgerEntry("keyless", Fraction(1, 10), delta=Fraction(1, 10**6))
    budget.spend(spending)
    assert budget.delta_spent == Fraction(1, 10**6)
    with pytest.raises(BudgetExceededError):
        budget.spend(spending)
    assert budget.delta_spent == Fraction(1, 10**6)


def test_delta_spent_is_exact_and_a_returned_reservation_gives_its_delta_back(
    salaries: pd.DataFrame,
) -> None:
    budget = salaries.dp.set_budget(epsilon=1, delta=3e-7, accountant="epsilon")  # δ added up
    spending = LedgerEntry("keyless", Fraction(1, 10), delta=Fraction(1, 10**7))
    with pytest.raises(RuntimeError), budget.reserve(spending):
        raise RuntimeError("computing the statistics failed: nothing released")
    assert budget.delta_spent == 0
    for _ in range(3):  # 3 · 1e-7 = 3e-7: in floats 3.0000000000000004e-07 > 3e-7
        budget.spend(spending)
    assert budget.delta_spent == budget.delta == Fraction(3, 10**7)
    assert [e.delta for e in budget.entries] == [Fraction(1, 10**7)] * 3
    assert budget.ledger.delta.tolist() == [1e-7] * 3
    with pytest.raises(BudgetExceededError):
        budget.spend(spending)
    assert len(budget.entries) == 3


def test_a_named_in_memory_budget_keeps_its_delta() -> None:
    name = f"d-{uuid.uuid4().hex}"
    _frame().dp.set_budget(epsilon=1, delta=1e-6, name=name)
    with pytest.raises(BudgetMismatchError, match="holds delta=1e-06"):
        _frame().dp.set_budget(epsilon=1, delta=1e-5, name=name)


@pytest.mark.parametrize("delta", [1, 1.5, -1e-6])
def test_a_delta_outside_zero_one_is_refused(salaries: pd.DataFrame, delta: float) -> None:
    with pytest.raises(ValueError, match="`delta` must be"):
        salaries.dp.set_budget(rho=0.5, delta=delta)


def test_an_epsilon_held_on_a_rho_budget_holds_epsilon_squared_over_two(
    rho_budget: pd.DataFrame,
) -> None:
    with rho_budget.dp.reserve(epsilon=0.2) as hold:
        assert rho_budget.dp.budget.held == Fraction(1, 50)
        rho_budget.dp.count(epsilon=0.1)  # 1/200 of the held 1/50
        rho_budget.dp.count(epsilon=0.1)
    assert hold.returned == Fraction(1, 100)
    assert rho_budget.dp.budget.spent == Fraction(1, 100)


def test_an_epsilon_budget_refuses_to_hold_rho(protected: pd.DataFrame) -> None:
    with pytest.raises(ValueError, match="`rho` needs a zCDP budget"):
        protected.dp.reserve(rho=0.1)
    assert protected.dp.budget.held == 0


# ------------------------------------------------- refusals name the quantity that ran out

#: The keys of the refusal tests' frame: a message must never show them.
SECRET_KEYS = ("north-7731", "south-4419")
QUANTITIES = ("epsilon", "rho", "delta")


def _refusal_frame(accountant: str, store: str, tmp_path: Path) -> pd.DataFrame:
    """A frame of two crowded keys with a budget of total 1 (ε or ρ) and δ = 1e-6.

    Its accountant adds up (ε, or ρ) and δ: the amounts a refusal names are exact.
    """
    df = pd.DataFrame({"k": [SECRET_KEYS[0]] * 600 + [SECRET_KEYS[1]] * 400})
    where: dict[str, Any] = {}
    if store == "ledger":
        where = {"ledger": tmp_path / "l.sqlite", "name": "refusals"}
    df.dp.set_budget(**{accountant: 1}, delta=1e-6, seed=1, accountant=accountant, **where)
    return df


def _state(df: pd.DataFrame) -> tuple[Fraction, Fraction, Fraction, int]:
    budget = df.dp.budget
    return budget.spent, budget.held, budget.delta_spent, len(budget.entries)


def _check_names(
    err: BudgetExceededError, quantity: str, requested: Fraction, remaining: Fraction
) -> None:
    """``err`` names ``quantity`` with these amounts of it, and no other quantity or data."""
    assert (err.quantity, err.requested, err.remaining) == (quantity, requested, remaining)
    message = str(err)
    asked = message.split(f"needs {quantity}=", 1)[1].split()[0]
    left = message.split(f"only {quantity}=", 1)[1].split()[0]
    assert (Fraction(asked), Fraction(left)) == (requested, remaining)  # exact: 10 digits
    for other in set(QUANTITIES) - {quantity}:
        assert f"{other}=" not in message.split(";")[0], message
    assert not any(key in message for key in SECRET_KEYS)
    clone = pickle.loads(pickle.dumps(err))
    assert (clone.quantity, clone.requested, clone.remaining, str(clone)) == (
        quantity,
        requested,
        remaining,
        message,
    )


@pytest.mark.parametrize("store", ["memory", "ledger"])
@pytest.mark.parametrize("accountant", ["epsilon", "rho"])
@pytest.mark.parametrize("ran_out", ["total", "delta", "both"])
@pytest.mark.parametrize("held", [False, True], ids=["free", "in_a_hold"])
def test_a_refusal_names_the_quantity_that_ran_out_with_its_amounts(
    tmp_path: Path, store: str, accountant: str, ran_out: str, held: bool
) -> None:
    """ε budget out of ε or δ, ρ budget out of ρ or δ; in memory and in a ledger; in a hold.

    Where both ran out, the total's quantity is named (it is checked first).
    """
    df = _refusal_frame(accountant, store, tmp_path)
    df.dp.value_counts("k", **{accountant: 0.25}, delta=4e-7)  # spends 1/4 and δ 4e-7
    asked = {
        "total": ({accountant: 1}, 1e-7),  # 3/4 left: what this holder may use, held or free
        "delta": ({accountant: 0.125}, 7e-7),  # 6e-7 of δ left
        "both": ({accountant: 1}, 7e-7),
    }[ran_out]
    quantity, requested, remaining = (
        ("delta", Fraction(7, 10**7), Fraction(6, 10**7))
        if ran_out == "delta"
        else (accountant, Fraction(1), Fraction(3, 4))
    )
    with df.dp.reserve(**{accountant: 0.5}) if held else contextlib.nullcontext() as hold:
        before = _state(df)
        with pytest.raises(BudgetExceededError) as refused:
            df.dp.value_counts("k", **asked[0], delta=asked[1])
        _check_names(refused.value, quantity, requested, remaining)
        assert _state(df) == before  # nothing spent; a hold keeps its whole share
        if held:  # and the holder can still draw all of it
            df.dp.value_counts("k", **{accountant: 0.5}, delta=1e-7)
    if held:
        assert hold is not None
        assert hold.returned == 0
        assert df.dp.budget.spent == Fraction(3, 4)


@pytest.mark.parametrize("store", ["memory", "ledger"])
@pytest.mark.parametrize("accountant", ["epsilon", "rho"])
def test_a_hold_that_does_not_fit_names_the_budgets_quantity(
    tmp_path: Path, store: str, accountant: str
) -> None:
    df = _refusal_frame(accountant, store, tmp_path)
    df.dp.count(**{accountant: 0.25})
    with pytest.raises(BudgetExceededError) as refused, df.dp.reserve(**{accountant: 0.875}):
        pytest.fail("the block ran")
    _check_names(refused.value, accountant, Fraction(7, 8), Fraction(3, 4))
    assert _state(df) == (Fraction(1, 4), 0, 0, 1)


@pytest.mark.parametrize("store", ["memory", "ledger"])
def test_a_rho_budget_refuses_an_epsilon_release_in_rho_at_epsilon_squared_over_two(
    tmp_path: Path, store: str
) -> None:
    df = _refusal_frame("rho", store, tmp_path)
    df.dp.count(rho=0.5)
    with pytest.raises(BudgetExceededError) as refused:
        df.dp.count(epsilon=1.5)  # costs 9/8 of rho
    _check_names(refused.value, "rho", Fraction(9, 8), Fraction(1, 2))
    assert "epsilon**2/2" in str(refused.value)
    with pytest.raises(BudgetExceededError) as refused, df.dp.reserve(epsilon=1.5):
        pytest.fail("the block ran")
    _check_names(refused.value, "rho", Fraction(9, 8), Fraction(1, 2))


def test_budget_exceeded_error_refuses_an_unknown_quantity() -> None:
    with pytest.raises(ValueError, match="`quantity` must be one of epsilon, rho, delta"):
        BudgetExceededError(Fraction(1), Fraction(0), "sigma")
    assert BudgetExceededError(Fraction(1), Fraction(0)).quantity == "epsilon"
