"""Shared fixtures: small frames with a seeded budget, and the shared data folder."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import pandas_dp  # noqa: F401  (registers df.dp)

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


@pytest.fixture
def salaries() -> pd.DataFrame:
    """A small frame of 200 people, no budget yet."""
    rng = np.random.Generator(np.random.PCG64(12345))
    n = 200
    return pd.DataFrame(
        {
            "dept": rng.choice(["Eng", "Ops", "Sales"], size=n),
            "age": rng.integers(18, 70, size=n),
            "salary": np.round(rng.lognormal(np.log(60_000), 0.5, size=n), 2),
            "bonus": np.where(rng.uniform(size=n) < 0.2, np.nan, rng.uniform(0, 5000, size=n)),
        }
    )


@pytest.fixture
def protected(salaries: pd.DataFrame) -> pd.DataFrame:
    """``salaries`` with a seeded budget of 10."""
    salaries.dp.set_budget(epsilon=10, seed=7)
    return salaries
