"""Pictures of private answers: estimates with their intervals, and a budget's spending.

``import pandas_dp.plotting`` imports matplotlib (``pip install "pandas-dp[plot]"``,
or any matplotlib 3.8 or later); ``import pandas_dp`` never does, so the library
needs pandas and numpy only.  Each function draws one picture in one call and
returns its ``matplotlib.axes.Axes``:

- :func:`errorbars`: an answer released with ``ci=`` (ungrouped, grouped, over
  several columns) as its estimates with their noise intervals;
- :func:`spending`: a budget's releases, what each spent (ε, or ρ under a zCDP
  budget) and the total spent after each, against the budget's total.

Both draw released numbers and public parameters only (what the answer and
the ledger hold): a picture costs nothing and reveals nothing more.
"""

from __future__ import annotations

from itertools import accumulate
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.axes import Axes

from .accounting.budget import PrivacyBudget

__all__ = ["errorbars", "spending"]

_FIELDS = ("estimate", "lower", "upper")
_BLUE, _RED, _GREY = "#4c72b0", "#c0392b", "#999999"


def _intervals(answer: Any) -> dict[str, pd.DataFrame]:
    """Each plotted series (by column name) as a frame of ``estimate``, ``lower``, ``upper``."""
    if isinstance(answer, pd.Series) and isinstance(answer.index, pd.MultiIndex):
        columns = list(dict.fromkeys(answer.index.get_level_values(0)))
        rows = {c: answer[c] for c in columns}  # several columns: (column, field)
        return {"": pd.DataFrame({c: rows[c].reindex(_FIELDS) for c in columns}).T}
    if isinstance(answer, pd.Series) and set(_FIELDS) <= set(answer.index):
        name = "estimate" if answer.name is None else str(answer.name)
        return {"": answer.reindex(_FIELDS).to_frame(name).T}
    if isinstance(answer, pd.DataFrame) and set(_FIELDS) <= set(answer.columns):
        return {"": answer[list(_FIELDS)]}
    if isinstance(answer, pd.DataFrame) and isinstance(answer.columns, pd.MultiIndex):
        outer = list(dict.fromkeys(answer.columns.get_level_values(0)))
        if all(set(_FIELDS) <= set(answer[c].columns) for c in outer):  # grouped, several columns
            return {str(c): answer[c][list(_FIELDS)] for c in outer}
    raise TypeError(
        "errorbars draws an answer released with ci=..., e.g. "
        "pandas_dp.plotting.errorbars(df.dp.mean('x', clip=(0, 1), epsilon=1, ci=0.95)); "
        f"got {type(answer).__name__} without 'estimate', 'lower', 'upper'. A crosstab: "
        "draw one column key at a time."
    )


def _label(key: Any) -> str:
    return ", ".join(str(k) for k in key) if isinstance(key, tuple) else str(key)


def errorbars(
    answer: pd.Series | pd.DataFrame,
    *,
    ax: Axes | None = None,
    label: str = "private estimate, interval",
    color: str = _BLUE,
) -> Axes:
    """Draw an answer released with ``ci=`` as estimates with error bars; its Axes.

    Parameters
    ----------
    answer : pandas.Series or pandas.DataFrame
        What a release with ``ci=`` returned: one estimate (a Series
        ``estimate``, ``lower``, ``upper``, maybe with more fields, as
        ``cut=True`` adds), one per column (several columns), or one per key
        (grouped; several columns: one series per column, side by side).
    ax : matplotlib Axes, optional
        Where to draw (a new figure by default).
    label, color : str
        The legend's label of the estimates and their colour.

    Returns
    -------
    matplotlib.axes.Axes
    """
    series = _intervals(answer)
    if ax is None:
        ax = plt.subplots(figsize=(6, 3.4))[1]
    width = len(series)
    for number, (name, frame) in enumerate(series.items()):
        where = np.arange(len(frame)) + (number - (width - 1) / 2) * 0.8 / max(width, 1)
        estimate = frame["estimate"].to_numpy(dtype=np.float64)
        lower = frame["lower"].to_numpy(dtype=np.float64)
        upper = frame["upper"].to_numpy(dtype=np.float64)
        ax.errorbar(
            where,
            estimate,
            yerr=[estimate - lower, upper - estimate],
            fmt="o",
            capsize=5,
            color=color if width == 1 else None,
            label=f"{label} ({name})" if name else label,
        )
    first = next(iter(series.values()))
    ax.set_xticks(np.arange(len(first)), [_label(k) for k in first.index])
    if first.index.name is not None and width == 1:
        ax.set_xlabel(str(first.index.name))
    ax.legend(frameon=False)
    return ax


def spending(budget: PrivacyBudget, *, ax: Axes | None = None) -> Axes:
    """Draw what each release of ``budget`` spent, and the total spent after it; its Axes.

    One bar per release, oldest first, labelled as ``print(budget)`` names it
    (``value_counts: groupby.count``, ``mean: bounds``); a line of the amount
    spent after each; the budget's total as a dashed line.  In the budget's
    accountant's unit: ε, or ρ under a zCDP budget.

    Returns
    -------
    matplotlib.axes.Axes
    """
    entries = budget.entries
    unit = "ε" if budget.accountant == "epsilon" else "ρ"
    charges = [float(entry.charge(budget.accountant)) for entry in entries]
    if ax is None:
        ax = plt.subplots(figsize=(max(4.0, 0.55 * len(entries) + 2), 3.4))[1]
    where = np.arange(1, len(entries) + 1)
    ax.bar(where, charges, color=_BLUE, label=f"{unit} of the release")
    ax.step(
        where, list(accumulate(charges)), where="mid", color=_RED, label=f"{unit} spent after it"
    )
    ax.axhline(float(budget.total), color=_GREY, ls="--", label=f"total {unit}")
    ax.set_xticks(where, [f"{n}. {entry.label}" for n, entry in zip(where, entries, strict=True)])
    ax.tick_params(axis="x", labelrotation=60)
    for text in ax.get_xticklabels():
        text.set_horizontalalignment("right")
    ax.set_ylabel(unit)
    ax.set_title(f"Privacy budget: {len(entries)} releases", fontsize=11)
    ax.legend(frameon=False)
    return ax
