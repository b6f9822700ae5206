"""Generated example data for the demo, the notebooks and the benchmarks.

These frames are synthetic (no real person is in them), so examples may
compare private answers with the truth.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["DEPARTMENTS", "LEVELS", "salaries"]

DEPARTMENTS = ("Engineering", "Operations", "Sales")
LEVELS = ("junior", "senior", "lead")


def salaries(n: int = 300, *, seed: int = 0) -> pd.DataFrame:
    """A synthetic company: one row per employee.

    Columns: ``employee`` (id), ``dept`` (one of :data:`DEPARTMENTS`),
    ``level`` (one of :data:`LEVELS`), ``age``, ``salary`` (lognormal, median
    about 60,000) and ``bonus`` (missing for about a fifth of employees).
    """
    if n < 0:
        raise ValueError(f"`n` must be a non-negative integer, got {n!r}.")
    rng = np.random.Generator(np.random.PCG64(seed))
    dept = rng.choice(len(DEPARTMENTS), size=n, p=[0.5, 0.2, 0.3])
    level = rng.choice(len(LEVELS), size=n, p=[0.5, 0.35, 0.15])
    uplift = np.array([1.15, 0.9, 1.0])[dept] * np.array([0.85, 1.2, 1.6])[level]
    salary = np.round(60_000 * uplift * rng.lognormal(0.0, 0.35, size=n), -2)
    bonus = np.round(salary * rng.uniform(0.0, 0.15, size=n), -1)
    bonus[rng.uniform(size=n) < 0.2] = np.nan
    return pd.DataFrame(
        {
            "employee": np.arange(1, n + 1),
            "dept": np.array(DEPARTMENTS, dtype=object)[dept],
            "level": np.array(LEVELS, dtype=object)[level],
            "age": rng.integers(21, 66, size=n),
            "salary": salary,
            "bonus": bonus,
        }
    )
