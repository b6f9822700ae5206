"""The SQLite ledger: durable, shared, crash-safe named budgets."""

from __future__ import annotations

import hashlib
import importlib
import io
import itertools
import multiprocessing
import multiprocessing.connection
import os
import shutil
import signal
import sqlite3
import tempfile
import threading
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import closing, contextmanager, redirect_stdout
from fractions import Fraction
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pandas_dp
from pandas_dp.__main__ import main
from pandas_dp.accounting._sqlite_format import APPLICATION_ID, MIGRATIONS, SCHEMA_VERSION
from pandas_dp.accounting.ledger import (
    SEEDED,
    BudgetMismatchError,
    BudgetStore,
    CorruptLedgerError,
    LedgerAccessError,
    LedgerEntry,
    LedgerError,
    LedgerFormatError,
    LedgerLockedError,
    MemoryStore,
    NotALedgerError,
    ReservationError,
    UnknownBudgetError,
)
from pandas_dp.accounting.sqlite import Ledger, open_ledger
from pandas_dp.errors import BudgetExceededError, MissingBudgetError, PandasDPError

TIMEOUT = 600  # an upper bound, never a wait: tests wait on what the children report
posix_only = pytest.mark.skipif(os.name != "posix", reason="fork, forkserver and SIGKILL are POSIX")


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / "privacy-ledger.sqlite"


@pytest.fixture
def frame() -> pd.DataFrame:
    return pd.DataFrame({"x": np.arange(50, dtype=np.float64)})


@pytest.fixture
def workers(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    """The child-process module, importable by name in the children."""
    monkeypatch.syspath_prepend(str(Path(__file__).parent))
    return importlib.import_module("ledger_workers")


@pytest.fixture
def processes(workers: ModuleType) -> multiprocessing.context.BaseContext:
    """A forkserver context: one clean server imports pandas_dp once, children fork from it.

    Nothing is inherited from the test process (no connection, no lock), and
    eight children do not import pandas eight times on a two-core machine.
    """
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(["ledger_workers"])
    return ctx


Child = tuple[multiprocessing.connection.Connection, Any]  # (the read end of its pipe, process)


@pytest.fixture
def spawn(
    processes: multiprocessing.context.BaseContext,
) -> Iterator[Callable[..., Child]]:
    """Start ``target(outbox, *args)`` in a child; every child still alive is killed at teardown."""
    started: list[Any] = []

    def start(target: Callable[..., None], *args: object) -> Child:
        inbox, outbox = processes.Pipe(duplex=False)
        proc = processes.Process(target=target, args=(outbox, *args), daemon=True)
        proc.start()
        outbox.close()  # the child holds the write end: its death is an end of file here
        started.append(proc)
        return inbox, proc

    yield start
    for proc in started:
        if proc.is_alive():
            proc.kill()
        proc.join(timeout=TIMEOUT)


def receive(children: Sequence[Child], kind: str) -> list[object]:
    """The next message of each child, which must be ``kind``: waits on the children, not a clock.

    A child that reports an exception fails the test with the child's
    traceback; one that dies without a word fails it with its exit code.
    """
    payloads: dict[int, object] = {}
    waiting = dict(enumerate(children))
    while waiting:
        ready = multiprocessing.connection.wait(
            [end for inbox, proc in waiting.values() for end in (inbox, proc.sentinel)],
            timeout=TIMEOUT,
        )
        if not ready:
            pytest.fail(f"{len(waiting)} child process(es) said nothing for {TIMEOUT} s")
        for number, (inbox, proc) in list(waiting.items()):
            if inbox.poll():
                try:
                    got, payload = inbox.recv()
                except EOFError:
                    proc.join(timeout=TIMEOUT)
                    pytest.fail(f"child {number} exited ({proc.exitcode}) without a report")
                if got == "error":
                    pytest.fail(f"child {number} raised:\n{payload}", pytrace=False)
                assert got == kind, (got, kind)
                payloads[number] = payload
                del waiting[number]
            elif proc.sentinel in ready:
                proc.join(timeout=TIMEOUT)
                pytest.fail(f"child {number} exited ({proc.exitcode}) without a report")
    return [payloads[number] for number in range(len(children))]


def fingerprint(path: Path) -> dict[str, str]:
    """Hashes of a file and its WAL file, if any: "not a byte written"."""
    files = [path, Path(f"{path}-wal")]
    return {f.name: hashlib.sha256(f.read_bytes()).hexdigest() for f in files if f.exists()}


@contextmanager
def raw(path: Path) -> Iterator[sqlite3.Connection]:
    """A plain SQLite connection, as another tool would use the file; committed and closed."""
    conn = sqlite3.connect(path)
    try:
        with conn:
            yield conn
    finally:
        conn.close()


def contents(path: Path) -> list[str]:
    """Everything a ledger holds, read-only: "nothing recorded".

    (Not its bytes: SQLite may move committed pages from the WAL file into
    the database whenever a connection closes, without changing the contents.)
    """
    with closing(sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True)) as conn:
        pragmas = [conn.execute(f"PRAGMA {p}").fetchone()[0] for p in ("application_id",
                   "user_version")]  # fmt: skip
        return [*map(str, pragmas), *conn.iterdump()]


def releases(history: pd.DataFrame) -> pd.DataFrame:
    return history[~history.operation.isin(["create", "raise_total"])]


def entry(epsilon: Fraction) -> LedgerEntry:
    return LedgerEntry("count", epsilon)


# ------------------------------------------------------------------- spending


def test_ten_charges_of_a_tenth_spend_exactly_one_and_are_stored_as_fractions(
    frame: pd.DataFrame, path: Path
) -> None:
    budget = frame.dp.set_budget(epsilon=1.0, ledger=path, name="hr", seed=1)
    for _ in range(10):
        frame.dp.count(epsilon=0.1)
    assert budget.spent == 1
    with pytest.raises(BudgetExceededError):
        frame.dp.count(epsilon=0.1)
    with raw(path) as conn:
        assert conn.execute("SELECT total, spent FROM budgets").fetchall() == [("1/1", "1/1")]
        stored = {row[0] for row in conn.execute("SELECT epsilon FROM entries")}
    assert stored == {"0/1", "1/10"}


def test_the_charge_is_committed_before_any_noise_is_drawn(frame: pd.DataFrame, path: Path) -> None:
    budget = frame.dp.set_budget(epsilon=2, ledger=path, name="hr", seed=1)
    inner = budget.source
    seen: list[Fraction] = []

    class Spy:
        def words(self, n: int) -> np.ndarray:
            with open_ledger(path) as other:  # another connection sees only what was committed
                seen.append(other.store("hr").spent())
            return inner.words(n)

    budget.source = Spy()
    frame.dp.sum("x", clip=(0, 100), epsilon=0.5)
    assert seen
    assert set(seen) == {Fraction(1, 2)}


def test_a_refused_release_writes_nothing(frame: pd.DataFrame, path: Path) -> None:
    frame.dp.set_budget(epsilon=1, ledger=path, name="hr", seed=1)
    frame.dp.count(epsilon=0.75)
    before = contents(path)
    with pytest.raises(BudgetExceededError) as refused:
        frame.dp.mean("x", clip=(0, 100), epsilon=0.5)
    assert (refused.value.requested, refused.value.remaining) == (Fraction(1, 2), Fraction(1, 4))
    assert contents(path) == before
    frame.dp.count(epsilon=0.25)  # what fits still runs
    assert open_ledger(path).store("hr").spent() == 1


def test_the_budget_ledger_view_reads_the_file(frame: pd.DataFrame, path: Path) -> None:
    budget = frame.dp.set_budget(epsilon=3, ledger=path, name="hr", seed=1)
    frame.dp.mean("x", clip=(0, 100), epsilon=0.5)
    pd.DataFrame({"x": [1]}).dp.set_budget(epsilon=3, ledger=path, name="hr").spend(
        LedgerEntry("sum", Fraction(1, 4))
    )  # another run, same budget
    open_ledger(path).raise_total("hr", 4)
    assert list(budget.ledger.operation) == ["mean", "sum"]  # releases only, from every run
    assert list(budget.ledger.spent) == [0.5, 0.75]
    assert (budget.total, budget.spent, budget.remaining) == (4, Fraction(3, 4), Fraction(13, 4))


def test_the_file_records_what_was_asked_and_no_key(path: Path) -> None:
    # value_counts and crosstab are both grouped counts: the file tells them apart by the
    # release's own name, its grouping columns and its parameters, and holds no key.
    df = pd.DataFrame({"who": ["secret-a"] * 30 + ["secret-b"] * 30, "x": np.arange(60.0)})
    df.dp.set_budget(epsilon=3, delta=1e-6, ledger=path, name="hr", seed=1)
    df.dp.value_counts("who", epsilon=2, delta=1e-7, normalize=True)
    df.dp.crosstab("who", "x", keys=(["secret-a", "secret-b"], [0.0, 1.0]), epsilon=0.5)
    df.dp.groupby("who", keys=["secret-a"]).mean("x", clip=(0, 60), epsilon=0.25, ci=0.9)
    history = releases(open_ledger(path, read_only=True).history("hr"))
    assert list(history.operation) == ["groupby.count", "groupby.count", "groupby.mean"]
    assert list(history.release) == ["value_counts", "crosstab", "mean"]
    assert list(history.grouping) == ["who", "who, x", "who"]
    assert list(history.parameters) == ["normalize=True, dropna=True", "", "ci=0.9"]
    with raw(path) as conn:
        dumped = "\n".join(conn.iterdump())
    assert "secret" not in dumped  # neither a key chosen privately nor a public one


# ------------------------------------------------------------- re-attaching


def test_a_later_run_continues_the_named_budget(path: Path) -> None:
    first = pd.DataFrame({"x": [1.0, 2.0]})
    first.dp.set_budget(epsilon=1, ledger=path, name="hr", seed=1)
    first.dp.count(epsilon=0.75)
    later = pd.DataFrame({"x": [1.0, 2.0]})  # tomorrow's run, a fresh frame
    budget = later.dp.set_budget(epsilon=1, ledger=str(path), name="hr", seed=2)
    assert budget.spent == Fraction(3, 4)
    with pytest.raises(BudgetExceededError):
        later.dp.count(epsilon=0.5)
    later.dp.count(epsilon=0.25)
    assert open_ledger(path).store("hr").spent() == 1


@pytest.mark.parametrize(
    ("epsilon", "adjacency"), [(2.0, "add_remove"), (0.5, "add_remove"), (1.0, "substitute")]
)
def test_re_attaching_with_another_total_or_adjacency_is_refused(
    path: Path, epsilon: float, adjacency: str
) -> None:
    pd.DataFrame({"x": [1]}).dp.set_budget(epsilon=1, ledger=path, name="hr")
    before = contents(path)
    df = pd.DataFrame({"x": [1]})
    with pytest.raises(BudgetMismatchError) as err:
        df.dp.set_budget(epsilon=epsilon, adjacency=adjacency, ledger=path, name="hr")
    assert isinstance(err.value, PandasDPError)
    assert isinstance(err.value, ValueError)
    assert contents(path) == before
    with pytest.raises(MissingBudgetError):
        df.dp.budget  # noqa: B018


def test_raise_total_is_recorded_and_is_the_only_way_up(path: Path) -> None:
    df = pd.DataFrame({"x": [1]})
    df.dp.set_budget(epsilon=1, ledger=path, name="hr", seed=1)
    df.dp.count(epsilon=1)
    ledger = open_ledger(path)
    ledger.raise_total("hr", 1.5)
    history = ledger.history("hr")
    assert list(history.operation) == ["create", "count", "raise_total"]
    assert list(history.total) == [1.0, 1.0, 1.5]
    assert history.epsilon_exact.sum() == 1
    df.dp.count(epsilon=0.5)  # the running budget sees the new total at once
    with pytest.raises(BudgetMismatchError):  # the old total no longer matches
        pd.DataFrame({"x": [1]}).dp.set_budget(epsilon=1, ledger=path, name="hr")
    assert pd.DataFrame({"x": [1]}).dp.set_budget(epsilon=1.5, ledger=path, name="hr").spent == 1.5


@pytest.mark.parametrize("new_total", [1, 0.5])
def test_raise_total_refuses_to_lower_or_keep(path: Path, new_total: float) -> None:
    ledger = open_ledger(path)
    ledger.attach("hr", total=1)
    before = contents(path)
    with pytest.raises(ValueError, match="new_total"):
        ledger.raise_total("hr", new_total)
    assert contents(path) == before


def test_an_unknown_budget_name_is_a_key_error(path: Path) -> None:
    ledger = open_ledger(path)
    for call in (ledger.history, ledger.store, lambda n: ledger.raise_total(n, 2)):
        with pytest.raises(UnknownBudgetError, match="no budget named 'hr'") as err:
            call("hr")
        assert isinstance(err.value, KeyError)


def test_a_frame_derived_from_a_live_named_budget_continues_it_only_through_inherit(
    path: Path,
) -> None:
    df = pd.DataFrame({"x": [1.0, 2.0]})
    budget = df.dp.set_budget(epsilon=1, adjacency="substitute", ledger=path, name="hr", seed=1)
    df.dp.count("x", epsilon=0.5)
    copy = df.copy()  # the marker travels, the budget does not
    with pytest.raises(MissingBudgetError):
        copy.dp.count(epsilon=0.1)
    # Attaching the same name again would make the copy the budget's own frame (its row
    # count public under substitute): refused, pointing to the analyst's assertion.
    with pytest.raises(PandasDPError, match=r"budget 'hr' was created in this process.*inherit"):
        copy.dp.set_budget(epsilon=1, adjacency="substitute", ledger=path, name="hr")
    copy.dp.inherit()
    copy.dp.count(epsilon=0.25)  # never the root frame: charged, with noise
    assert budget.spent == Fraction(3, 4)
    assert budget.entries[-1].sensitivity == "1"
    with pytest.raises(PandasDPError, match="already has a privacy budget"):
        df.dp.set_budget(epsilon=1, ledger=path, name="hr")
    # The data read afresh (no marker) continues the named budget, but in the process that
    # attached it already it is never the root frame: its row count is charged, with noise
    # (pd.DataFrame(pd.concat([df, df]).to_numpy()) has no marker either).
    fresh = pd.DataFrame({"x": [1.0, 2.0]})
    again = fresh.dp.set_budget(epsilon=1, adjacency="substitute", ledger=path, name="hr")
    assert again.spent == Fraction(3, 4)
    fresh.dp.count(epsilon=0.25)
    assert again.spent == 1
    assert again.entries[-1].sensitivity == "1"


@pytest.mark.parametrize(
    ("ledger", "name"), [(None, None), ("other.sqlite", "hr"), ("privacy-ledger.sqlite", "other")]
)
def test_a_frame_derived_from_a_named_budget_may_not_start_another(
    path: Path, ledger: str | None, name: str | None
) -> None:
    df = pd.DataFrame({"x": [1.0, 2.0]})
    df.dp.set_budget(epsilon=1, ledger=path, name="hr")
    copy = df.copy()
    other = None if ledger is None else path.parent / ledger  # same name, other file: a reset
    with pytest.raises(PandasDPError, match=r"reset the accounting.*inherit\(\)"):
        copy.dp.set_budget(epsilon=1, ledger=other, name=name)
    assert not (path.parent / "other.sqlite").exists()


def test_a_ledger_object_can_be_passed_with_its_own_timeout(
    frame: pd.DataFrame, path: Path
) -> None:
    with open_ledger(path, timeout=0.5) as ledger:
        budget = frame.dp.set_budget(epsilon=1, ledger=ledger, name="hr", seed=1)
        frame.dp.count(epsilon=0.5)
        assert budget.spent == Fraction(1, 2)
    with pytest.raises(LedgerAccessError, match="closed"):
        frame.dp.count(epsilon=0.1)


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({"ledger": "x.sqlite"}, TypeError),
        ({"name": ""}, ValueError),  # a name alone: an in-memory named budget, still checked
        ({"ledger": "x.sqlite", "name": ""}, ValueError),
        ({"ledger": "x.sqlite", "name": "   "}, ValueError),
        ({"ledger": "x.sqlite", "name": 3}, TypeError),
        ({"ledger": 3, "name": "hr"}, TypeError),
    ],
)
def test_set_budget_validates_ledger_and_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kwargs: dict[str, object], error: type
) -> None:
    monkeypatch.chdir(tmp_path)
    df = pd.DataFrame({"x": [1]})
    with pytest.raises(error, match=r"`ledger`|`name`"):
        df.dp.set_budget(epsilon=1, **kwargs)  # type: ignore[arg-type]
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(MissingBudgetError):
        df.dp.budget  # noqa: B018


# ------------------------------------------------------------ what is stored


def test_the_file_holds_no_data_value_released_value_or_key(
    salaries: pd.DataFrame, path: Path
) -> None:
    depts = {"Eng": "Dept-Kappa", "Ops": "Dept-Lambda", "Sales": "Dept-Sigma"}
    df = salaries.assign(dept=salaries.dept.map(depts))
    df.dp.set_budget(epsilon=10, ledger=path, name="hr", seed=3)
    released = [
        df.dp.sum("salary", clip=(0, 2e5), epsilon=1),
        df.dp.mean("salary", clip=(0, 2e5), epsilon=1),
        *df.dp.groupby("dept", keys=list(depts.values())).mean("salary", clip=(0, 2e5), epsilon=1),
        *df.dp.groupby("dept", keys=list(depts.values())).sum("bonus", clip=(0, 5e3), epsilon=1),
    ]
    with raw(path) as conn:
        dump = "\n".join(conn.iterdump())
    assert "salary" in dump  # column names and clip bounds are public parameters
    secrets = [*depts.values(), *map(repr, df.salary), *map(repr, df.bonus.dropna())]
    secrets += [repr(float(v)) for v in released]
    assert [s for s in secrets if s in dump] == []
    history = open_ledger(path).history("hr")
    assert list(history["keys"].dropna()) == [3, 3]


def test_history_records_what_a_privacy_officer_needs(frame: pd.DataFrame, path: Path) -> None:
    frame.dp.set_budget(epsilon=3, adjacency="substitute", ledger=path, name="hr", seed=1)
    frame.dp.groupby("x", keys=[1.0, 2.0]).sum("x", clip=(-1, 4), epsilon=0.5)
    row = open_ledger(path).history("hr").iloc[-1]
    assert row.operation == "groupby.sum"
    assert row["columns"] == "x"
    assert row["clip"] == "[-1, 4]"
    assert row["keys"] == 2
    assert row.epsilon_exact == Fraction(1, 2)
    assert row.adjacency == "substitute"
    assert row.mechanism.startswith("discrete_laplace")
    assert float(row.sensitivity) == 8  # 2·max(|L|, |U|) per key under substitute
    assert float(row.noise_scale) >= 16  # sensitivity / epsilon, rounded up on the grid
    assert row.process == os.getpid()
    assert row.time.tzname() == "UTC"


@pytest.mark.parametrize(("seed", "seeded"), [(None, False), (5, True)])
def test_releases_with_reproducible_noise_are_marked_not_private(
    frame: pd.DataFrame, path: Path, seed: int | None, seeded: bool
) -> None:
    frame.dp.set_budget(epsilon=1, ledger=path, name="hr", seed=seed)
    frame.dp.count(epsilon=0.5)
    mechanism = open_ledger(path).history("hr").mechanism.iloc[-1]
    assert mechanism.startswith("discrete_laplace")
    assert mechanism.endswith("(seeded: NOT private)") == seeded


def test_history_shows_clip_bounds_exactly(frame: pd.DataFrame, path: Path) -> None:
    frame.dp.set_budget(epsilon=1, ledger=path, name="hr")
    frame.dp.sum("x", clip=(-0.1, 123456.789), epsilon=0.5)
    assert open_ledger(path).history("hr")["clip"].iloc[-1] == "[-0.1, 123456.789]"


def test_budgets_lists_every_budget(path: Path) -> None:
    for name, total, spend in [("b", 2, 0.5), ("a", 1, 0.125)]:
        df = pd.DataFrame({"x": [1]})
        df.dp.set_budget(epsilon=total, ledger=path, name=name, seed=1)
        df.dp.count(epsilon=spend)
    table = open_ledger(path).budgets()
    assert list(table.columns[:4]) == ["name", "total", "spent", "remaining"]
    assert table[["name", "total", "spent", "remaining", "releases"]].to_dict("list") == {
        "name": ["a", "b"],
        "total": [1.0, 2.0],
        "spent": [0.125, 0.5],
        "remaining": [0.875, 1.5],
        "releases": [1, 1],
    }


def test_the_file_is_a_versioned_wal_ledger(path: Path) -> None:
    open_ledger(path).attach("hr", total=1)
    with raw(path) as conn:
        pragmas = [conn.execute(f"PRAGMA {p}").fetchone()[0] for p in ("application_id",
                   "user_version", "journal_mode")]  # fmt: skip
    assert pragmas == [APPLICATION_ID, SCHEMA_VERSION, "wal"]


def write_old_ledger(path: Path, version: int) -> None:
    """A ledger as schema ``version`` (1 to 8) wrote it, with one budget and one release."""
    conn = sqlite3.connect(path)
    for step in MIGRATIONS[:version]:
        for statement in step:
            conn.execute(statement)
    conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
    conn.execute(f"PRAGMA user_version = {version}")
    conn.execute(
        "INSERT INTO budgets (name, total, spent, adjacency, created) "
        "VALUES ('hr', '2/1', '3/10', 'add_remove', '2025-01-01')"
    )
    rows = [
        ("2025-01-01T00:00:00+00:00", "create", "[]", "[]", None, "0/1", ""),
        ("2025-01-02T00:00:00+00:00", "mean", '["salary"]', "[[0.0, 1.5]]", 4, "3/10", "dl"),
    ]
    for time, op, cols, clip, keys, eps, mech in rows:
        conn.execute(
            "INSERT INTO entries (budget, time, operation, columns, clip, keys, epsilon, "
            "mechanism, adjacency, sensitivity, noise_scale, total) "
            "VALUES ('hr', ?, ?, ?, ?, ?, ?, ?, 'add_remove', '1.5', '5', '2/1')",
            (time, op, cols, clip, keys, eps, mech),
        )
    conn.commit()
    conn.close()


@pytest.mark.parametrize("version", [1, 2, 3, 4, 5, 6, 7, 8])
def test_an_old_ledger_is_migrated_without_loss(path: Path, version: int) -> None:
    write_old_ledger(path, version)
    ledger = open_ledger(path)
    history = ledger.history("hr")
    assert list(history.operation) == ["create", "mean"]
    assert list(history.state) == ["", "released"]  # the column version 3 added
    assert list(history.epsilon_exact) == [0, Fraction(3, 10)]
    assert history.iloc[1][["columns", "clip", "keys"]].tolist() == ["salary", "[0, 1.5]", 4]
    assert history.process.isna().all()  # the column version 2 added (empty in version 2 too)
    # the columns version 4 added: no privacy unit, one row per person
    assert history[["privacy_unit", "max_rows", "max_groups"]].isna().all().all()
    assert ledger.budgets().privacy_unit.isna().all()
    assert ledger.budgets().public_rows.isna().all()  # version 5: unknown row count
    assert list(history.half_width_95) == ["", ""]  # the column version 7 added: blank
    assert history.rho.isna().all()  # version 8: an epsilon budget's entries have no rho
    assert list(history.delta) == [0, 0]
    # the columns version 9 added: what was asked, blank for older entries
    assert history[["release", "grouping", "parameters"]].eq("").all().all()
    assert ledger.budgets().accountant.tolist() == ["epsilon"]
    assert ledger.store("hr").spent() == Fraction(3, 10)
    # version 9: an entry written before events has those its epsilon guarantees
    assert list(history.events) == ["", "pure(epsilon=3/10)"]
    assert list(history.planned) == list(history.realised) == ["", ""]
    with raw(path) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 9
    ledger.store("hr").charge(entry(Fraction(1, 10)))
    assert ledger.history("hr").process.iloc[-1] == os.getpid()
    token = ledger.store("hr").reserve(entry(Fraction(1, 10)))
    ledger.store("hr").cancel(token)
    assert ledger.store("hr").spent() == Fraction(4, 10)


def test_a_newer_ledger_is_refused_untouched(path: Path) -> None:
    open_ledger(path).attach("hr", total=1)
    with raw(path) as conn:
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    before = contents(path)
    with pytest.raises(LedgerFormatError, match="newer pandas_dp"):
        open_ledger(path)
    assert contents(path) == before


# ------------------------------------------------------------------ bad input


@pytest.mark.parametrize(
    "where",
    [
        lambda tmp: tmp / "missing-folder" / "ledger.sqlite",
        lambda tmp: tmp,  # a directory
        lambda tmp: (tmp / "file.txt").write_text("x") and tmp / "file.txt" / "ledger.sqlite",
    ],
    ids=["missing-folder", "directory", "inside-a-file"],
)
def test_a_path_that_cannot_be_written_is_an_os_error(
    tmp_path: Path, where: Callable[[Path], Path]
) -> None:
    target = where(tmp_path)
    before = sorted(p.name for p in tmp_path.iterdir())
    df = pd.DataFrame({"x": [1]})
    with pytest.raises(LedgerAccessError) as err:
        df.dp.set_budget(epsilon=1, ledger=target, name="hr")
    assert isinstance(err.value, OSError)
    assert isinstance(err.value, PandasDPError)
    assert sorted(p.name for p in tmp_path.iterdir()) == before
    with pytest.raises(MissingBudgetError):
        df.dp.budget  # noqa: B018


def test_a_missing_file_is_not_created_when_reading(path: Path) -> None:
    with pytest.raises(LedgerAccessError, match="no ledger"):
        open_ledger(path, create=False)
    assert not path.exists()


def make_text_file(path: Path) -> None:
    path.write_text("name,salary\nAda,100\n")


def make_foreign_database(path: Path) -> None:
    with raw(path) as conn:
        conn.execute("CREATE TABLE people (name TEXT, salary REAL)")
        conn.execute("INSERT INTO people VALUES ('Ada', 100)")


@pytest.mark.parametrize("make", [make_text_file, make_foreign_database])
def test_a_file_that_is_not_a_ledger_is_refused_untouched(
    path: Path, make: Callable[[Path], None]
) -> None:
    make(path)
    before = fingerprint(path)
    with pytest.raises(NotALedgerError, match=r"not a pandas_dp ledger|not a SQLite") as err:
        pd.DataFrame({"x": [1]}).dp.set_budget(epsilon=1, ledger=path, name="hr")
    assert isinstance(err.value, ValueError)
    assert fingerprint(path) == before
    assert sorted(p.name for p in path.parent.iterdir()) == [path.name]


def test_a_corrupt_database_is_refused(path: Path) -> None:
    with open_ledger(path) as ledger:
        store = ledger.attach("hr", total=1000)
        for _ in range(200):
            store.charge(LedgerEntry("sum", Fraction(1, 8), columns=("salary",), clip=((0, 1),)))
    assert not Path(f"{path}-wal").exists()  # checkpointed into the file on close
    data = bytearray(path.read_bytes())
    page = 4096
    assert len(data) > 4 * page
    data[page : 3 * page] = bytes(range(256)) * (2 * page // 256)
    path.write_bytes(bytes(data))
    before = fingerprint(path)
    with pytest.raises(CorruptLedgerError) as err:
        pd.DataFrame({"x": [1]}).dp.set_budget(epsilon=1000, ledger=path, name="hr")
    assert isinstance(err.value, ValueError)
    assert fingerprint(path) == before


@pytest.mark.parametrize(
    ("column", "value"), [("spent", "0.125"), ("total", "-1/1"), ("spent", "1/0")]
)
def test_a_damaged_value_is_refused_and_nothing_is_spent(
    path: Path, column: str, value: str
) -> None:
    df = pd.DataFrame({"x": [1]})
    df.dp.set_budget(epsilon=1, ledger=path, name="hr", seed=1)
    with raw(path) as conn:
        conn.execute(f"UPDATE budgets SET {column} = ?", (value,))
    before = contents(path)
    with pytest.raises(CorruptLedgerError, match="damaged"):
        df.dp.count(epsilon=0.5)
    assert contents(path) == before


def test_a_ledger_locked_past_the_timeout_is_a_timeout_error(
    frame: pd.DataFrame, path: Path
) -> None:
    ledger = open_ledger(path, timeout=0.2)
    frame.dp.set_budget(epsilon=1, ledger=ledger, name="hr", seed=1)
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")  # another job holds the write lock
    try:
        with pytest.raises(LedgerLockedError, match="locked") as err:
            frame.dp.count(epsilon=0.5)
        assert isinstance(err.value, TimeoutError)
        late = pd.DataFrame({"x": [1]})
        with pytest.raises(LedgerLockedError):
            late.dp.set_budget(epsilon=1, ledger=open_ledger(path, timeout=0.2), name="new")
        with pytest.raises(MissingBudgetError):
            late.dp.budget  # noqa: B018
    finally:
        other.execute("ROLLBACK")
        other.close()
    assert ledger.store("hr").spent() == 0
    assert list(ledger.budgets().name) == ["hr"]
    frame.dp.count(epsilon=0.5)  # the lock is gone: spending works again
    assert ledger.store("hr").spent() == Fraction(1, 2)


@pytest.mark.parametrize("timeout", [0, -1, float("nan"), "1", True])
def test_timeout_must_be_a_positive_number(path: Path, timeout: object) -> None:
    with pytest.raises(ValueError, match="`timeout`"):
        open_ledger(path, timeout=timeout)  # type: ignore[arg-type]
    assert not path.exists()


# --------------------------------------------------------------- reservations


def test_a_reservation_counts_as_spent_for_another_connection(path: Path) -> None:
    store = open_ledger(path).attach("hr", total=1)
    token = store.reserve(entry(Fraction(3, 4)))
    with open_ledger(path) as other:  # another connection, as another process would see it
        assert other.store("hr").spent() == Fraction(3, 4)
        assert other.budgets().pending.tolist() == [1]
        with pytest.raises(BudgetExceededError) as refused:
            other.store("hr").reserve(entry(Fraction(1, 2)))
        assert refused.value.remaining == Fraction(1, 4)
        assert other.history("hr").state.tolist() == ["", "pending"]
    store.commit(token)
    assert open_ledger(path).history("hr").state.tolist() == ["", "released"]
    assert store.spent() == Fraction(3, 4)


def test_cancel_returns_a_reservation_exactly(path: Path) -> None:
    store = open_ledger(path).attach("hr", total=1)
    store.charge(entry(Fraction(1, 3)))
    kept = store.reserve(entry(Fraction(1, 7)))
    returned = store.reserve(entry(Fraction(2, 9)))
    assert store.spent() == Fraction(1, 3) + Fraction(1, 7) + Fraction(2, 9)
    store.cancel(returned)
    assert store.spent() == Fraction(1, 3) + Fraction(1, 7)  # exactly: no float on the way
    with raw(path) as conn:
        assert conn.execute("SELECT spent FROM budgets").fetchone()[0] == "10/21"
    assert [e.epsilon for e in store.entries()] == [Fraction(1, 3), Fraction(1, 7)]
    store.commit(kept)
    store.commit(kept)  # committing twice changes nothing
    history = open_ledger(path).history("hr")
    assert history.state.tolist() == ["", "released", "released"]
    assert history.epsilon_exact.sum() == store.spent()
    store.reserve(entry(Fraction(11, 21)))  # what was returned fits again, to the last bit


def test_an_unknown_token_is_a_clear_error_and_writes_nothing(path: Path) -> None:
    ledger = open_ledger(path)
    store, other = ledger.attach("hr", total=1), ledger.attach("other", total=1)
    committed = store.reserve(entry(Fraction(1, 4)))
    store.commit(committed)
    cancelled = store.reserve(entry(Fraction(1, 4)))
    store.cancel(cancelled)
    foreign = other.reserve(entry(Fraction(1, 4)))
    before = contents(path)
    calls = [
        (store.commit, 10_000, "no reservation 10000"),
        (store.cancel, 10_000, "no reservation 10000"),
        (store.commit, cancelled, f"no reservation {cancelled}"),
        (store.cancel, cancelled, f"no reservation {cancelled}"),
        (store.commit, foreign, f"no reservation {foreign}"),
        (store.cancel, 1, "no reservation 1"),  # the create entry is not a reservation
        (store.cancel, committed, "already committed"),
        (store.commit, "1", "int that reserve"),
    ]
    for call, token, message in calls:
        with pytest.raises(ReservationError, match=message) as err:
            call(token)
        assert isinstance(err.value, LedgerError)
    assert contents(path) == before
    assert (store.spent(), other.spent()) == (Fraction(1, 4), Fraction(1, 4))


@posix_only
def test_a_reservation_of_a_killed_process_stays_spent(
    path: Path, workers: ModuleType, spawn: Callable[..., Child]
) -> None:
    open_ledger(path).attach("hr", total=1).charge(entry(Fraction(1, 4)))
    child = spawn(workers.reserve_and_die, str(path), "hr", Fraction(1, 2))
    [token] = receive([child], "reserved")
    child[1].join(timeout=TIMEOUT)
    assert child[1].exitcode == -signal.SIGKILL  # between reserve and commit
    with open_ledger(path) as reopened:
        assert reopened.store("hr").spent() == Fraction(3, 4)
        history = reopened.history("hr")
        assert history.state.tolist() == ["", "released", "pending"]
        assert history.spent.iloc[-1] == 0.75
        assert reopened.budgets().pending.tolist() == [1]
        with pytest.raises(BudgetExceededError):
            reopened.store("hr").charge(entry(Fraction(1, 2)))
        assert isinstance(token, int)


# ---------------------------------------------------------------- concurrency


def test_threads_never_jointly_exceed_a_named_budget(path: Path) -> None:
    frames = [pd.DataFrame({"x": [1.0, 2.0]}) for _ in range(2)]
    for df in frames:  # two budgets of one name: two connections racing in one process
        df.dp.set_budget(epsilon=10, ledger=path, name="hr", seed=1)
    threads, attempts = 8, 25
    barrier = threading.Barrier(threads)
    outcomes: list[bool] = []
    lock = threading.Lock()

    def spend(df: pd.DataFrame) -> None:
        barrier.wait(timeout=TIMEOUT)
        for _ in range(attempts):
            try:
                df.dp.count(epsilon=0.125)
            except BudgetExceededError:
                ok = False
            else:
                ok = True
            with lock:
                outcomes.append(ok)

    pool = [threading.Thread(target=spend, args=(frames[i % 2],)) for i in range(threads)]
    for thread in pool:
        thread.start()
    for thread in pool:
        thread.join(timeout=TIMEOUT)
    assert len(outcomes) == threads * attempts
    assert sum(outcomes) == 80  # 10 / 0.125
    history = open_ledger(path).history("hr")
    assert len(releases(history)) == 80
    assert history.epsilon_exact.sum() == open_ledger(path).store("hr").spent() == 10


@posix_only
def test_processes_never_jointly_exceed_a_named_budget(
    path: Path,
    workers: ModuleType,
    processes: multiprocessing.context.BaseContext,
    spawn: Callable[..., Child],
) -> None:
    n_procs, attempts, total = 8, 20, 5.0  # the children race to create the file and budget too
    barrier = processes.Barrier(n_procs)
    children = [
        spawn(workers.spend_many, str(path), "hr.salaries", total, attempts, barrier)
        for _ in range(n_procs)
    ]
    outcomes = receive(children, "result")
    for _, proc in children:
        proc.join(timeout=TIMEOUT)
        assert proc.exitcode == 0
    affordable = int(total / workers.CHARGE)  # 40 of the 160 attempts
    assert sum(ok for ok, _ in outcomes) == affordable  # type: ignore[misc]
    assert sum(refused for _, refused in outcomes) == n_procs * attempts - affordable  # type: ignore[misc]
    ledger = open_ledger(path)
    history = ledger.history("hr.salaries")
    assert len(releases(history)) == affordable
    assert history.process.nunique() > 1  # the charges came from the children
    assert ledger.store("hr.salaries").spent() == history.epsilon_exact.sum() == 5


def test_a_rho_selection_is_stored_with_its_epsilon_and_the_rho_it_was_charged(
    frame: pd.DataFrame, path: Path
) -> None:
    frame.dp.set_budget(rho=1, ledger=path, name="z", seed=1)
    frame.dp.median("x", candidates=[0.0, 25.0, 50.0], rho=0.125)
    frame.dp.count(rho=0.25)
    ledger = open_ledger(path)  # checks that the stored spent is the sum of the entries' ρ
    history = releases(ledger.history("z"))
    assert list(history.rho_exact) == [Fraction(1, 8), Fraction(1, 4)]
    assert list(history.epsilon_exact) == [Fraction(1, 2), None]  # ε = sqrt(2ρ)
    assert ledger.store("z").spent() == Fraction(3, 8)


@posix_only
@pytest.mark.parametrize("accountant", ["epsilon", "pld"])
def test_processes_never_jointly_exceed_a_named_budgets_delta(
    path: Path,
    workers: ModuleType,
    processes: multiprocessing.context.BaseContext,
    spawn: Callable[..., Child],
    accountant: str,
) -> None:
    """The workers attach without ``accountant=``: they continue the budget's own."""
    if accountant == "pld":
        pytest.importorskip("dp_accounting")
    n_procs, attempts = 8, 6
    budget = pd.DataFrame({"x": [1.0]}).dp.set_budget(
        epsilon=100, delta=1e-6, ledger=path, name="keys", accountant=accountant
    )
    barrier = processes.Barrier(n_procs)
    children = [
        spawn(workers.spend_delta_many, str(path), "keys", 1e-6, attempts, barrier)
        for _ in range(n_procs)
    ]
    outcomes = receive(children, "result")
    for _, proc in children:
        proc.join(timeout=TIMEOUT)
        assert proc.exitcode == 0
    affordable = 10  # 1e-6 / 1e-7, exactly (by PLD too: what adds up within it fits)
    assert sum(ok for ok, _ in outcomes) == affordable  # type: ignore[misc]
    history = releases(open_ledger(path).history("keys"))
    assert len(history) == affordable
    spent = Fraction(affordable, 10**7)
    assert history.delta_exact.sum() == budget.delta_spent == spent
    assert open_ledger(path).budgets().delta_spent.tolist() == [float(spent)]
    assert budget.accountant == open_ledger(path).budgets().accountant.iloc[0] == accountant


def test_a_share_held_by_one_process_cannot_be_spent_by_another(
    path: Path,
    frame: pd.DataFrame,
    workers: ModuleType,
    processes: multiprocessing.context.BaseContext,
    spawn: Callable[..., Child],
) -> None:
    go = processes.Event()
    child = spawn(workers.hold_then_spend, str(path), "hr", go)
    [remaining] = receive([child], "held")
    assert remaining == Fraction(1, 4)
    budget = frame.dp.set_budget(epsilon=1, ledger=path, name="hr")
    assert (budget.held, budget.remaining) == (Fraction(3, 4), Fraction(1, 4))
    with pytest.raises(BudgetExceededError):
        frame.dp.count(epsilon=0.5)  # fits the total, not what the child left free
    assert budget.spent == 0
    frame.dp.count(epsilon=0.25)  # what is free
    go.set()
    [(returned, spent)] = receive([child], "result")
    child[1].join(timeout=TIMEOUT)
    assert child[1].exitcode == 0
    assert returned == Fraction(1, 2)  # 3/4 held, 2 x 1/8 drawn
    assert spent == budget.spent == Fraction(1, 2)
    assert (budget.held, budget.remaining) == (0, Fraction(1, 2))
    assert open_ledger(path).budgets().held.tolist() == [0.0]


def test_the_hold_of_a_dead_process_is_freed_when_the_ledger_is_next_opened(
    path: Path, workers: ModuleType, spawn: Callable[..., Child]
) -> None:
    child = spawn(workers.hold_and_die, str(path), "hr")
    [pid] = receive([child], "held")
    child[1].join(timeout=TIMEOUT)
    assert child[1].exitcode == -signal.SIGKILL  # inside the block
    with raw(path) as conn:  # the row is still there: nobody opened the ledger since
        assert conn.execute("SELECT process FROM holds").fetchall() == [(pid,)]
    with open_ledger(path) as reopened:
        store = reopened.store("hr")
        assert store.held() == 0
        assert store.spent() == Fraction(1, 8)  # its release stays spent
    with raw(path) as conn:
        assert conn.execute("SELECT count(*) FROM holds").fetchone() == (0,)


def test_a_live_process_keeps_its_hold_when_the_ledger_is_opened(
    path: Path, frame: pd.DataFrame
) -> None:
    frame.dp.set_budget(epsilon=1, ledger=path, name="hr")
    with frame.dp.reserve(epsilon=0.5), open_ledger(path) as other:
        assert other.store("hr").held() == Fraction(1, 2)
        assert other.budgets().remaining.tolist() == [0.5]


@pytest.mark.parametrize(
    ("rows", "mechanism", "epsilon"),
    [(50, "exact (n public)", 0), (30, "discrete_laplace", Fraction(1, 8))],
    ids=["the-root-read-again", "a-subset"],
)
def test_the_first_attach_in_a_new_process_is_root_only_with_the_stored_row_count(
    path: Path,
    frame: pd.DataFrame,
    workers: ModuleType,
    spawn: Callable[..., Child],
    rows: int,
    mechanism: str,
    epsilon: Fraction,
) -> None:
    frame.dp.set_budget(epsilon=10, adjacency="substitute", ledger=path, name="hr")  # 50 rows
    [(got_mechanism, got_epsilon)] = receive(
        [spawn(workers.count_rows, str(path), "hr", rows)], "result"
    )
    assert (got_mechanism, got_epsilon) == (mechanism, epsilon)


@pytest.mark.parametrize(
    ("adjacency", "unit", "stored"),
    [("substitute", None, 50), ("add_remove", None, None), ("substitute", "pid", None)],
    ids=["substitute", "add_remove", "substitute-with-a-unit"],
)
def test_the_row_count_is_stored_only_where_it_is_public(
    path: Path, frame: pd.DataFrame, adjacency: str, unit: str | None, stored: int | None
) -> None:
    frame["pid"] = np.arange(len(frame))
    frame.dp.set_budget(epsilon=1, adjacency=adjacency, privacy_unit=unit, ledger=path, name="hr")
    with raw(path) as conn:
        assert conn.execute("SELECT public_rows FROM budgets").fetchall() == [(stored,)]
    shown = open_ledger(path).budgets().public_rows.iloc[0]
    assert shown == stored if stored is not None else pd.isna(shown)


@pytest.mark.parametrize(
    ("adjacency", "unit"), [("add_remove", None), ("substitute", "pid")], ids=["add_remove", "unit"]
)
def test_a_row_count_where_it_is_not_public_is_refused(
    path: Path, adjacency: str, unit: str | None
) -> None:
    with pytest.raises(ValueError, match="public_rows"):
        open_ledger(path).attach(
            "hr", total=1, adjacency=adjacency, privacy_unit=unit, public_rows=50
        )
    assert open_ledger(path).budgets().empty


@posix_only
def test_a_process_killed_mid_run_never_leaves_an_undercount(
    path: Path,
    workers: ModuleType,
    processes: multiprocessing.context.BaseContext,
    spawn: Callable[..., Child],
) -> None:
    open_ledger(path).attach("jobs", total=1000)
    children, counters = [], []
    for threshold in (3, 10, 30):  # killed at different moments, while the others run
        released = processes.Value("q", 0, lock=False)
        children.append(spawn(workers.spend_until_killed, str(path), "jobs", released, threshold))
        counters.append(released)
    for child in children:
        receive([child], "ready")  # or the child's traceback, if it failed
        _, proc = child
        os.kill(proc.pid, signal.SIGKILL)
        proc.join(timeout=TIMEOUT)
        assert proc.exitcode == -signal.SIGKILL
    reported = sum(released.value for released in counters)
    with raw(path) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    ledger = open_ledger(path)
    history = ledger.history("jobs")
    recorded = len(releases(history))
    # each child may have been killed after a charge and before counting its release
    assert reported <= recorded <= reported + len(children)
    assert ledger.store("jobs").spent() == history.epsilon_exact.sum() == Fraction(recorded, 8)
    ledger.store("jobs").charge(entry(Fraction(1, 8)))  # no lock was left behind


@posix_only
def test_a_forked_child_spends_through_its_own_connection(
    path: Path, workers: ModuleType, spawn: Callable[..., Child]
) -> None:
    child = spawn(workers.spend_across_fork, str(path), "hr")
    [(child_exit, spent)] = receive([child], "result")  # type: ignore[misc]
    child[1].join(timeout=TIMEOUT)
    assert child_exit == 1  # the child set the parent's connection aside and opened its own
    assert spent == Fraction(3, 8)
    history = open_ledger(path).history("hr")
    assert len(releases(history)) == 3
    assert releases(history).process.nunique() == 2


@posix_only
def test_a_failing_child_fails_the_test_with_its_traceback(
    path: Path, workers: ModuleType, spawn: Callable[..., Child]
) -> None:
    child = spawn(workers.spend_until_killed, str(path / "no-such-folder" / "x"), "jobs", None, 1)
    with pytest.raises(pytest.fail.Exception, match=r"(?s)raised:.*LedgerAccessError"):
        receive([child], "ready")


# ------------------------------------------------------- accounting properties


@pytest.fixture(scope="module")
def shared_ledger(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Ledger]:
    with open_ledger(tmp_path_factory.mktemp("ledger") / "property.sqlite") as ledger:
        yield ledger


def memory_store(total: Fraction, _: Ledger) -> BudgetStore:
    return MemoryStore(total)


def sqlite_store(total: Fraction, ledger: Ledger) -> BudgetStore:
    return ledger.attach(uuid.uuid4().hex, total=total)


amounts = st.fractions(min_value=0, max_value=2, max_denominator=12)


@pytest.mark.parametrize("make_store", [memory_store, sqlite_store], ids=["memory", "sqlite"])
@settings(max_examples=60, deadline=None)
@given(
    total=st.fractions(min_value=Fraction(1, 12), max_value=3, max_denominator=12),
    requests=st.lists(amounts, max_size=20),
)
def test_accounting_never_overspends_and_the_history_sums_to_spent(
    make_store: Callable[[Fraction, Ledger], BudgetStore],
    shared_ledger: Ledger,
    total: Fraction,
    requests: list[Fraction],
) -> None:
    store = make_store(total, shared_ledger)
    accepted = 0
    for request in requests:
        spent, count = store.spent(), len(store.entries())
        refused: BudgetExceededError | None = None
        try:
            store.charge(entry(request))
        except BudgetExceededError as err:
            refused = err
        if refused is None:
            accepted += 1
            assert spent + request <= total
            assert store.spent() == spent + request
        else:
            assert spent + request > total
            assert (refused.requested, refused.remaining) == (request, total - spent)
            assert (store.spent(), len(store.entries())) == (spent, count)  # nothing changed
        assert store.spent() <= store.total == total
    charged = [e.epsilon for e in store.entries()]
    assert len(charged) == accepted
    assert sum(charged, Fraction(0)) == store.spent()


# One step on a store with at most one open hold: ("hold", ε), ("unhold", _), or a release
# ("spend", ε) made inside the hold when one is open.
steps = st.lists(st.tuples(st.sampled_from(["hold", "unhold", "spend"]), amounts), max_size=20)


@pytest.mark.parametrize("make_store", [memory_store, sqlite_store], ids=["memory", "sqlite"])
@settings(max_examples=40, deadline=None)
@given(total=st.fractions(min_value=Fraction(1, 12), max_value=3, max_denominator=12), plan=steps)
def test_held_and_spent_never_exceed_the_total_and_a_hold_is_drawn_first(
    make_store: Callable[[Fraction, Ledger], BudgetStore],
    shared_ledger: Ledger,
    total: Fraction,
    plan: list[tuple[str, Fraction]],
) -> None:
    store = make_store(total, shared_ledger)
    hold: int | None = None
    share = Fraction(0)  # what is left of the open hold, as the model says
    for step, amount in plan:
        spent, held = store.spent(), store.held()
        try:
            if step == "hold" and hold is None:
                hold, share = store.hold(amount), amount
                assert spent + held + amount <= total
            elif step == "unhold" and hold is not None:
                assert store.unhold(hold) == share
                hold, share = None, Fraction(0)
            elif step == "spend":
                store.commit(store.reserve(entry(amount), hold))
                drawn = min(share, amount)
                assert spent + held - drawn + amount <= total
                share -= drawn
        except BudgetExceededError:
            assert (store.spent(), store.held()) == (spent, held)  # a refusal changes nothing
            assert spent + held + amount - (share if step == "spend" else 0) > total
        assert store.held() == share
        assert store.spent() + store.held() <= total
    assert sum((e.epsilon for e in store.entries()), Fraction(0)) == store.spent()
    if hold is not None:
        store.unhold(hold)


@settings(max_examples=25, deadline=None)
@given(requests=st.lists(amounts, min_size=1, max_size=10))
def test_a_reopened_ledger_shows_exactly_what_was_spent(
    shared_ledger: Ledger, requests: list[Fraction]
) -> None:
    name = uuid.uuid4().hex
    store = shared_ledger.attach(name, total=sum(requests, Fraction(1)))
    for request in requests:
        store.charge(entry(request))
    with open_ledger(shared_ledger.path) as reopened:
        assert reopened.store(name).spent() == sum(requests, Fraction(0))
        history = reopened.history(name)
    assert list(history.epsilon_exact) == [Fraction(0), *requests]
    assert list(history.spent) == [float(s) for s in itertools.accumulate([0, *requests])]


# ------------------------------------------------------------------------ CLI


def test_cli_lists_budgets_and_one_history(
    path: Path, frame: pd.DataFrame, capsys: pytest.CaptureFixture[str]
) -> None:
    frame.dp.set_budget(epsilon=5, ledger=path, name="hr.salaries", seed=1)
    frame.dp.mean("x", clip=(0, 100), epsilon=0.5)
    assert main(["ledger", str(path)]) == 0
    out = capsys.readouterr().out
    assert "hr.salaries" in out
    assert "4.5" in out  # remaining
    assert main(["ledger", str(path), "--name", "hr.salaries"]) == 0
    out = capsys.readouterr().out
    assert "create" in out
    assert "mean" in out
    assert "[0, 100]" in out


@pytest.mark.parametrize(
    ("args", "message"),
    [([], "no ledger"), (["--name", "nope"], "no budget named 'nope'")],
)
def test_cli_reports_errors_without_creating_files(
    path: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    if args:
        open_ledger(path).close()
    assert main(["ledger", str(path), *args]) == 1
    assert message in capsys.readouterr().err
    assert path.exists() == bool(args)


def test_open_ledger_is_exported() -> None:
    assert pandas_dp.open_ledger is open_ledger


# ------------------------------------------------ consistency, reading only, backups


def test_budgets_counts_seeded_releases_as_not_private(
    path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ledger = open_ledger(path)
    seeded, private = ledger.attach("seeded", total=1), ledger.attach("private", total=1)
    seeded.charge(LedgerEntry("count", Fraction(1, 4), mechanism=f"discrete_laplace {SEEDED}"))
    seeded.charge(LedgerEntry("count", Fraction(1, 4)))
    private.charge(LedgerEntry("count", Fraction(1, 4)))
    table = ledger.budgets().set_index("name")
    assert table.seeded_releases.to_dict() == {"private": 0, "seeded": 1}
    assert table.releases.to_dict() == {"private": 1, "seeded": 2}
    assert main(["ledger", str(path)]) == 0
    assert "NOT private" in capsys.readouterr().out


@pytest.mark.parametrize("edit", ["UPDATE budgets SET spent = '1/3'", "DELETE FROM entries"])
def test_a_spent_that_is_not_the_sum_of_its_entries_is_refused(path: Path, edit: str) -> None:
    with open_ledger(path) as ledger:
        ledger.attach("fine", total=1).charge(entry(Fraction(1, 4)))
        ledger.attach("hr.salaries", total=1).charge(entry(Fraction(1, 4)))
    with raw(path) as conn:
        conn.execute(f"{edit} WHERE {'name' if 'budgets' in edit else 'budget'} = 'hr.salaries'")
    before = contents(path)
    for opening in (lambda: open_ledger(path), lambda: open_ledger(path, read_only=True)):
        with pytest.raises(CorruptLedgerError, match=r"damaged.*'hr\.salaries'"):
            opening()
    assert main(["ledger", str(path)]) == 1
    assert contents(path) == before


def test_budgets_checks_spent_of_an_open_ledger(path: Path) -> None:
    ledger = open_ledger(path)
    ledger.attach("hr", total=1).charge(entry(Fraction(1, 4)))
    with raw(path) as conn:
        conn.execute("UPDATE budgets SET spent = '1/8'")
    with pytest.raises(CorruptLedgerError, match="'hr'"):
        ledger.budgets()
    ledger.close()


def folder_state(folder: Path) -> dict[str, str]:
    """Every file of a folder and its bytes' hash: "nothing created, nothing written"."""
    return {f.name: hashlib.sha256(f.read_bytes()).hexdigest() for f in sorted(folder.iterdir())}


@pytest.mark.parametrize("held_open", [False, True], ids=["closed", "held-open-by-a-writer"])
def test_reading_only_creates_and_writes_nothing(
    path: Path, held_open: bool, capsys: pytest.CaptureFixture[str]
) -> None:
    writer = open_ledger(path)
    writer.attach("hr", total=1).charge(entry(Fraction(1, 4)))
    if not held_open:
        writer.close()
    before = folder_state(path.parent)
    assert (f"{path.name}-wal" in before) == held_open
    assert main(["ledger", str(path)]) == 0
    assert "0.75" in capsys.readouterr().out
    with open_ledger(path, read_only=True) as reader:
        assert reader.store("hr").spent() == Fraction(1, 4)
        if held_open:  # the reader sees the writer's latest release, through its WAL
            writer.store("hr").charge(entry(Fraction(1, 8)))
            assert reader.store("hr").spent() == Fraction(3, 8)
            before = folder_state(path.parent)
        for change in (
            lambda: reader.attach("hr", total=1),
            lambda: reader.store("hr").charge(entry(Fraction(1, 8))),
            lambda: reader.store("hr").reserve(entry(Fraction(1, 8))),
            lambda: reader.raise_total("hr", 2),
        ):
            with pytest.raises(LedgerAccessError, match="read-only"):
                change()
    assert folder_state(path.parent) == before
    writer.close()


def test_reading_only_sees_a_change_made_after_it_opened(path: Path) -> None:
    open_ledger(path).attach("hr", total=1).ledger.close()
    with open_ledger(path, read_only=True) as reader:
        assert reader.store("hr").spent() == 0
        with open_ledger(path) as writer:
            writer.store("hr").charge(entry(Fraction(1, 4)))
        assert reader.store("hr").spent() == Fraction(1, 4)  # the file changed: read afresh


@pytest.mark.parametrize("version", [1, 2, 8])
def test_reading_only_reads_an_old_ledger_without_upgrading_it(
    path: Path, version: int, capsys: pytest.CaptureFixture[str]
) -> None:
    write_old_ledger(path, version)
    before = folder_state(path.parent)
    with open_ledger(path, read_only=True) as reader:
        assert reader.history("hr").state.tolist() == ["", "released"]
        assert reader.budgets().releases.tolist() == [1]
    assert main(["ledger", str(path), "--name", "hr"]) == 0
    assert "mean" in capsys.readouterr().out
    assert folder_state(path.parent) == before  # still version `version`


@posix_only
def test_the_cli_reads_a_ledger_in_a_folder_it_cannot_write(
    workers: ModuleType, spawn: Callable[..., Child], path: Path
) -> None:
    # As root, chmod stops no write: run the CLI as an unprivileged user instead, on a
    # folder in the system's temporary folder (pytest's own are private to root).
    folder = Path(tempfile.mkdtemp(prefix="pandas-dp-read-only-"))
    try:
        check_cli_reads_only(folder, workers, spawn, warm_up=path)
    finally:
        folder.chmod(0o755)
        shutil.rmtree(folder)


def others_may_enter(folder: Path) -> bool:
    """Whether a user other than the owner may enter ``folder`` (every folder above it too)."""
    return all(part.stat().st_mode & 0o001 for part in [folder, *folder.parents])


def check_cli_reads_only(
    folder: Path, workers: ModuleType, spawn: Callable[..., Child], warm_up: Path
) -> None:
    path = folder / "privacy-ledger.sqlite"
    for where in (path, warm_up):
        with open_ledger(where) as ledger:
            ledger.attach("hr", total=1).charge(entry(Fraction(1, 4)))
    before = folder_state(folder)
    if os.geteuid() == 0:
        try:
            import pwd

            nobody = pwd.getpwnam("nobody")
        except (ImportError, KeyError):
            pytest.skip("running as root and there is no unprivileged user 'nobody' to read as")
        folder.chmod(0o755)  # nobody may enter the folder, and write nothing in it
        path.chmod(0o644)
        if not others_may_enter(folder.parent):
            pytest.skip(
                f"the temporary folder {str(folder.parent)!r} is private: the user nobody "
                "cannot reach a ledger there"
            )
        # the child imports what the CLI needs before it drops to nobody, who may not be able to
        # read the interpreter or this clone (a private folder): only the ledger is read as nobody
        child = spawn(workers.show_ledger_as, nobody.pw_uid, nobody.pw_gid, str(path), str(warm_up))
        [(code, out, err)] = receive([child], "result")  # type: ignore[misc]
    else:
        folder.chmod(0o555)
        buffer = io.StringIO()
        with redirect_stdout(buffer):
            code, out, err = main(["ledger", str(path)]), buffer.getvalue(), ""
    assert (code, err) == (0, "")
    assert "hr" in out
    assert "0.75" in out
    assert folder_state(folder) == before


def test_backup_copies_a_ledger_in_use_into_one_file(tmp_path: Path, path: Path) -> None:
    ledger = open_ledger(path)
    store = ledger.attach("hr", total=1)
    store.charge(entry(Fraction(1, 4)))
    store.reserve(entry(Fraction(1, 8)))
    assert Path(f"{path}-wal").exists()  # in use: the file and its companions
    copy = tmp_path / "backup" / "copy.sqlite"
    copy.parent.mkdir()
    with open_ledger(path) as other:  # another connection holds it open meanwhile
        other.store("hr").charge(entry(Fraction(1, 16)))
        assert ledger.backup(copy) == copy
    assert sorted(p.name for p in copy.parent.iterdir()) == ["copy.sqlite"]
    with open_ledger(copy, read_only=True) as restored:
        pd.testing.assert_frame_equal(restored.budgets(), ledger.budgets())
        pd.testing.assert_frame_equal(restored.history("hr"), ledger.history("hr"))
    with open_ledger(copy) as restored:  # and it is a ledger that can be spent from
        restored.store("hr").charge(entry(Fraction(1, 16)))
    with pytest.raises(LedgerAccessError, match="never overwrites"):
        ledger.backup(copy)
    ledger.close()


@pytest.mark.parametrize(
    ("fields", "accepted"),
    [
        ({"epsilon": Fraction(0)}, True),
        ({"epsilon": Fraction(-1, 3)}, False),
        ({"epsilon": None, "rho": Fraction(1, 8)}, True),
        ({"epsilon": None, "rho": Fraction(-1, 8)}, False),
        ({"epsilon": None}, False),
        ({"epsilon": Fraction(1), "delta": Fraction(999_999, 1_000_000)}, True),
        ({"epsilon": Fraction(1), "delta": Fraction(1)}, False),
        ({"epsilon": Fraction(1), "delta": Fraction(-1, 10**9)}, False),
    ],
)
def test_an_entry_holds_only_a_non_negative_charge_and_a_delta_below_one(
    fields: dict[str, Any], accepted: bool
) -> None:
    if accepted:
        LedgerEntry("count", **fields)
    else:
        with pytest.raises(ValueError, match=r"must be|needs an"):
            LedgerEntry("count", **fields)
