"""Pictures: an answer with ``ci=`` as error bars, a budget's spending (pandas_dp.plotting)."""

from __future__ import annotations

import subprocess
import sys

import matplotlib
import numpy as np
import pandas as pd
import pytest

matplotlib.use("Agg")

import pandas_dp
from pandas_dp import plotting
from pandas_dp.datasets import DEPARTMENTS, salaries


@pytest.fixture
def df() -> pd.DataFrame:
    frame = salaries(1_000, seed=0)
    frame.dp.set_budget(epsilon=5, seed=2)
    return frame


def _bars(ax: matplotlib.axes.Axes) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(x, y) of the estimates drawn, and the (lower, upper) ends of their error bars."""
    (points,) = [line for line in ax.get_lines() if line.get_marker() == "o"]
    (bars,) = ax.collections
    ends = np.array([segment[:, 1] for segment in bars.get_segments()])
    return points.get_xdata(), points.get_ydata(), ends


def test_a_grouped_answer_is_one_error_bar_per_key(df: pd.DataFrame) -> None:
    g = df.dp.groupby("dept", keys=DEPARTMENTS)
    answer = g.mean("salary", clip=(0, 2e5), epsilon=1, ci=0.95)
    ax = plotting.errorbars(answer)
    _, y, ends = _bars(ax)
    np.testing.assert_array_equal(y, answer["estimate"].to_numpy())
    np.testing.assert_array_equal(ends, answer[["lower", "upper"]].to_numpy())
    assert [t.get_text() for t in ax.get_xticklabels()] == list(DEPARTMENTS)
    assert ax.get_xlabel() == "dept"


def test_an_ungrouped_answer_and_several_columns_are_drawn_too(df: pd.DataFrame) -> None:
    one = df.dp.mean("salary", clip=(0, 3e5), epsilon=0.5, ci=0.9, cut=True)  # extra fields
    _, y, ends = _bars(plotting.errorbars(one))
    assert y.tolist() == [one["estimate"]]
    assert ends.tolist() == [[one["lower"], one["upper"]]]
    both = df.dp.sum(clip={"salary": (0, 2e5), "bonus": (0, 5e4)}, epsilon=0.5, ci=0.9)
    ax = plotting.errorbars(both)
    _, y, _ = _bars(ax)
    assert y.tolist() == [both["salary", "estimate"], both["bonus", "estimate"]]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["salary", "bonus"]
    grouped = df.dp.groupby("dept", keys=DEPARTMENTS).mean(
        clip={"salary": (0, 2e5), "bonus": (0, 5e4)}, epsilon=0.5, ci=0.9
    )
    assert len(plotting.errorbars(grouped).collections) == 2  # one series per column


def test_an_answer_without_an_interval_is_refused(df: pd.DataFrame) -> None:
    with pytest.raises(TypeError, match="ci="):
        plotting.errorbars(df.dp.groupby("dept", keys=DEPARTMENTS).count(epsilon=0.1))


def test_the_budget_plots_what_each_release_spent(df: pd.DataFrame) -> None:
    df.dp.count(epsilon=0.5)
    df.dp.mean("salary", clip="auto", epsilon=1)
    ax = plotting.spending(df.dp.budget)
    heights = [patch.get_height() for patch in ax.patches]
    assert heights == pytest.approx([0.5, 0.05, 0.25, 0.7])
    labels = [t.get_text() for t in ax.get_xticklabels()]
    assert labels == ["1. count", "2. mean: count", "3. mean: bounds", "4. mean"]
    spent = next(line for line in ax.get_lines() if line.get_linestyle() == "-")
    assert spent.get_ydata().tolist() == pytest.approx([0.5, 0.55, 0.8, 1.5])
    assert ax.get_ylabel() == "ε"


def test_import_pandas_dp_never_imports_matplotlib() -> None:
    code = "import sys, pandas_dp; print('matplotlib' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
    assert pandas_dp.__name__ == "pandas_dp"
