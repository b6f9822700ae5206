"""Shared fixtures: small frames with a seeded budget, a spy noise source, the data folder."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import pandas_dp  # noqa: F401  (registers df.dp)
from pandas_dp.noise import SeededSource

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


class SpySource:
    """A seeded word source that counts how often noise is drawn (``calls``)."""

    def __init__(self, seed: int = 0) -> None:
        self._inner = SeededSource(seed)
        self.calls = 0

    def words(self, n: int) -> np.ndarray:
        self.calls += 1
        return self._inner.words(n)


@pytest.fixture
def spy(protected: pd.DataFrame) -> SpySource:
    """The source of ``protected``'s budget, replaced by a counting spy."""
    source = SpySource(7)
    protected.dp.budget.source = source
    return source


@pytest.fixture
def substituted(salaries: pd.DataFrame) -> pd.DataFrame:
    """``salaries`` with a seeded budget of 10 under the substitute adjacency (n public)."""
    salaries.dp.set_budget(epsilon=10, adjacency="substitute", seed=7)
    return salaries


@pytest.fixture
def huge_eps() -> float:
    """An epsilon so large that answers are the exact clipped statistic up to the grid."""
    return 1e9


@pytest.fixture
def exact(salaries: pd.DataFrame) -> pd.DataFrame:
    """``salaries`` with a budget of 1e12 (a thousand releases at ``huge_eps``), seeded."""
    salaries.dp.set_budget(epsilon=1e12, seed=11)
    return salaries


@pytest.fixture
def nothing_spent(protected: pd.DataFrame, spy: SpySource) -> Callable[[], None]:
    """A check that ``protected``'s budget is untouched: no charge, no entry, no noise drawn."""

    def check() -> None:
        budget = protected.dp.budget
        assert budget.spent == 0
        assert budget.entries == []
        assert spy.calls == 0

    return check
