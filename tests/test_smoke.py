"""End to end: the API tour of the README runs and returns pandas values."""

from __future__ import annotations

import pandas as pd

import pandas_dp
from pandas_dp.__main__ import main


def test_tour_returns_plain_values(protected: pd.DataFrame) -> None:
    assert isinstance(protected.dp.count(epsilon=0.1), int)
    assert isinstance(protected.dp.sum("salary", clip=(0, 2e5), epsilon=0.5), float)
    mean = pandas_dp.dp(protected).mean("salary", clip=(0, 2e5), epsilon=0.5)
    assert 0 <= mean <= 2e5
    both = protected.dp.sum(clip={"salary": (0, 2e5), "bonus": (0, 5e4)}, epsilon=0.5)
    assert list(both.index) == ["salary", "bonus"]


def test_demo_runs(capsys: object) -> None:
    assert main(["demo", "--seed", "1"]) == 0
