"""Child processes for tests/test_ledger.py.

``multiprocessing`` (forkserver context) imports its targets by module name, so
they live in this plain module rather than in the test file; the tests put
this folder on ``sys.path`` for the children.

Every target reports to the parent through the write end of a pipe
(``outbox``): ``(kind, payload)`` messages, and ``("error", traceback)`` if it
raised, so that a child that dies on an exception (a lock timeout on a loaded
machine, say) fails the test with its traceback instead of leaving the parent
waiting for a signal that never comes.
"""

from __future__ import annotations

import functools
import os
import signal
import traceback
from collections.abc import Callable
from fractions import Fraction
from multiprocessing.connection import Connection
from typing import Any, ParamSpec

import pandas as pd

import pandas_dp  # noqa: F401  (registers df.dp)
from pandas_dp.accounting.ledger import LedgerEntry
from pandas_dp.accounting.sqlite import open_ledger
from pandas_dp.errors import BudgetExceededError

#: A charge that is exact in binary and in decimal: 0.125 = 1/8.
CHARGE = 0.125
#: Seconds a child waits for the ledger's lock: an upper bound that a loaded machine never
#: reaches (the ledger's default, 60 s, was once reached by eight children on two busy cores).
LOCK_WAIT = 600.0

P = ParamSpec("P")


def reports(target: Callable[P, None]) -> Callable[P, None]:
    """Send ``("error", formatted traceback)`` on the outbox (the first argument) if it raises."""

    @functools.wraps(target)
    def run(*args: P.args, **kwargs: P.kwargs) -> None:
        outbox = args[0]
        assert isinstance(outbox, Connection)
        try:
            target(*args, **kwargs)
        except BaseException:
            outbox.send(("error", traceback.format_exc()))
            raise
        finally:
            outbox.close()

    return run


def _frame() -> pd.DataFrame:
    return pd.DataFrame({"x": [1.0, 2.0, 3.0, 4.0]})


@reports
def spend_many(
    outbox: Connection, path: str, name: str, total: float, attempts: int, barrier: Any
) -> None:
    """Re-attach ``name`` in this new process, wait for all, then try ``attempts`` charges."""
    df = _frame()
    ledger = open_ledger(path, timeout=LOCK_WAIT)
    df.dp.set_budget(epsilon=total, ledger=ledger, name=name, seed=os.getpid())
    barrier.wait(timeout=LOCK_WAIT)
    succeeded = refused = 0
    for _ in range(attempts):
        try:
            df.dp.count(epsilon=CHARGE)
        except BudgetExceededError:
            refused += 1
        else:
            succeeded += 1
    outbox.send(("result", (succeeded, refused)))


@reports
def spend_until_killed(
    outbox: Connection, path: str, name: str, released: Any, threshold: int
) -> None:
    """Release counts forever; count each one *after* it is released; report at ``threshold``."""
    df = _frame()
    df.dp.set_budget(epsilon=1000, ledger=open_ledger(path, timeout=LOCK_WAIT), name=name)
    while True:
        df.dp.count(epsilon=CHARGE)
        released.value += 1
        if released.value == threshold:
            outbox.send(("ready", None))


@reports
def spend_across_fork(outbox: Connection, path: str, name: str) -> None:
    """Spend, fork, spend in the child and then in the parent; report what happened."""
    from pandas_dp.accounting import sqlite as sqlite_ledger

    df = _frame()
    df.dp.set_budget(epsilon=10, ledger=open_ledger(path, timeout=LOCK_WAIT), name=name)
    df.dp.count(epsilon=CHARGE)
    child = os.fork()
    if child == 0:  # pragma: no cover - runs in the forked child
        try:
            df.dp.count(epsilon=CHARGE)
        finally:  # exit code: how many parent connections the child set aside (unused)
            os._exit(len(sqlite_ledger._INHERITED))
    _, status = os.waitpid(child, 0)
    df.dp.count(epsilon=CHARGE)
    outbox.send(("result", (os.waitstatus_to_exitcode(status), df.dp.budget.spent)))


@reports
def reserve_and_die(outbox: Connection, path: str, name: str, epsilon: Fraction) -> None:
    """Reserve ``epsilon`` of ``name``, report the token, and die by SIGKILL before committing."""
    with open_ledger(path, timeout=LOCK_WAIT) as ledger:
        token = ledger.store(name).reserve(LedgerEntry("sum", epsilon, columns=("x",)))
        outbox.send(("reserved", token))
        os.kill(os.getpid(), signal.SIGKILL)


@reports
def show_ledger_as(outbox: Connection, uid: int, gid: int, path: str, warm_up: str) -> None:
    """Run ``python -m pandas_dp ledger PATH`` as the user ``uid`` (who cannot write the folder).

    The CLI first reads ``warm_up``, another ledger, as this process's own user: so every
    module the CLI imports (pandas loads some only when printing) is imported while the
    interpreter and the package can be read, even from a folder private to that user.
    """
    import contextlib
    import io

    from pandas_dp.__main__ import main

    with contextlib.redirect_stdout(io.StringIO()):
        assert main(["ledger", warm_up]) == 0
    os.setgroups([])
    os.setgid(gid)
    os.setuid(uid)
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["ledger", path])
    outbox.send(("result", (code, out.getvalue(), err.getvalue())))


@reports
def count_rows(outbox: Connection, path: str, name: str, rows: int) -> None:
    """Attach ``name`` (substitute) to a frame of ``rows`` rows, the first in this process; count.

    Reports the count's ledger entry: its mechanism and epsilon.
    """
    df = pd.DataFrame({"x": [1.0] * rows})
    budget = df.dp.set_budget(
        epsilon=10, adjacency="substitute", ledger=open_ledger(path, timeout=LOCK_WAIT), name=name
    )
    df.dp.count(epsilon=CHARGE)
    last = budget.entries[-1]
    outbox.send(("result", (last.mechanism, last.epsilon)))


@reports
def hold_then_spend(outbox: Connection, path: str, name: str, go: Any) -> None:
    """Hold 3/4 of ``name`` (total 1), report, wait for ``go``, then release 1/8 twice inside.

    Reports ``("held", remaining)`` inside the block and ``("result", (returned, spent))``
    after it.
    """
    df = _frame()
    budget = df.dp.set_budget(epsilon=1, ledger=open_ledger(path, timeout=LOCK_WAIT), name=name)
    with df.dp.reserve(epsilon=0.75) as hold:
        outbox.send(("held", budget.remaining))
        assert go.wait(timeout=LOCK_WAIT)
        df.dp.count(epsilon=CHARGE)
        df.dp.count(epsilon=CHARGE)
    outbox.send(("result", (hold.returned, budget.spent)))


@reports
def hold_and_die(outbox: Connection, path: str, name: str) -> None:
    """Hold 1/2 of ``name``, report, and die by SIGKILL inside the block."""
    df = _frame()
    df.dp.set_budget(epsilon=1, ledger=open_ledger(path, timeout=LOCK_WAIT), name=name)
    with df.dp.reserve(epsilon=0.5):
        df.dp.count(epsilon=CHARGE)
        outbox.send(("held", os.getpid()))
        os.kill(os.getpid(), signal.SIGKILL)


#: The δ a release of :func:`spend_delta_many` spends: exact, and 1e-7 in decimal.
DELTA_CHARGE = Fraction(1, 10**7)


@reports
def spend_delta_many(
    outbox: Connection, path: str, name: str, delta: float, attempts: int, barrier: Any
) -> None:
    """Re-attach ``name`` (ε plenty, δ scarce), wait for all, then try ``attempts`` δ charges."""
    df = _frame()
    ledger = open_ledger(path, timeout=LOCK_WAIT)
    budget = df.dp.set_budget(epsilon=100, delta=delta, ledger=ledger, name=name)
    barrier.wait(timeout=LOCK_WAIT)
    succeeded = refused = 0
    for _ in range(attempts):
        try:  # what a key selection spends (pandas_dp.mechanisms.key_selection): a little ε and a δ
            budget.spend(LedgerEntry("keyless", Fraction(1, 1000), delta=DELTA_CHARGE))
        except BudgetExceededError:
            refused += 1
        else:
            succeeded += 1
    outbox.send(("result", (succeeded, refused)))
