"""Child processes for tests/test_ledger.py.

``multiprocessing`` (spawn context) imports its targets by module name, so they
live in this plain module rather than in the test file; the tests put this
folder on ``sys.path`` for the children.
"""

from __future__ import annotations

import os
from typing import Any

import pandas as pd

import pandas_dp  # noqa: F401  (registers df.dp)
from pandas_dp.errors import BudgetExceededError

#: A charge that is exact in binary and in decimal: 0.125 = 1/8.
CHARGE = 0.125


def _frame() -> pd.DataFrame:
    return pd.DataFrame({"x": [1.0, 2.0, 3.0, 4.0]})


def spend_many(
    path: str, name: str, total: float, attempts: int, barrier: Any, results: Any
) -> None:
    """Re-attach ``name`` in this new process, wait for all, then try ``attempts`` charges."""
    df = _frame()
    df.dp.set_budget(epsilon=total, ledger=path, name=name, seed=os.getpid())
    barrier.wait(timeout=120)
    succeeded = refused = 0
    for _ in range(attempts):
        try:
            df.dp.count(epsilon=CHARGE)
        except BudgetExceededError:
            refused += 1
        else:
            succeeded += 1
    results.put((succeeded, refused))


def spend_until_killed(path: str, name: str, released: Any, ready: Any, threshold: int) -> None:
    """Release counts forever; count each one *after* it is released; signal at ``threshold``."""
    df = _frame()
    df.dp.set_budget(epsilon=1000, ledger=path, name=name)
    while True:
        df.dp.count(epsilon=CHARGE)
        released.value += 1
        if released.value == threshold:
            ready.set()


def spend_across_fork(path: str, name: str, results: Any) -> None:
    """Spend, fork, spend in the child and then in the parent; report what happened."""
    from pandas_dp import ledger

    df = _frame()
    df.dp.set_budget(epsilon=10, ledger=path, name=name)
    df.dp.count(epsilon=CHARGE)
    child = os.fork()
    if child == 0:  # pragma: no cover - runs in the forked child
        try:
            df.dp.count(epsilon=CHARGE)
        finally:  # exit code: how many parent connections the child set aside (unused)
            os._exit(len(ledger._INHERITED))
    _, status = os.waitpid(child, 0)
    df.dp.count(epsilon=CHARGE)
    results.put((os.waitstatus_to_exitcode(status), df.dp.budget.spent))
