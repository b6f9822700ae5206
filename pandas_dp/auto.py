"""What ``clip="auto"`` and ``max_rows="auto"`` spend, and how their choice is shown.

The releases of :mod:`pandas_dp.surface` find bounds privately with a share of
a call's ε (:data:`AUTO_SHARE`, :data:`AUTO_ROWS_SHARE`) and return the chosen
bounds with the answer where it has room (:func:`with_bounds`,
:func:`with_rows`); the ledger entry records them in every case.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from fractions import Fraction
from typing import Any

import pandas as pd

__all__ = ["AUTO_ROWS", "AUTO_ROWS_SHARE", "AUTO_SHARE", "is_auto", "with_bounds", "with_rows"]

#: The share of a ``clip="auto"`` call's epsilon (or rho) that finds the bounds (the
#: rest releases the statistic with them).
AUTO_SHARE = Fraction(1, 4)
#: The share of a ``max_rows="auto"`` call's epsilon (or rho) that chooses ``max_rows``
#: (``rows_per_unit`` at q = 0.9 on :data:`AUTO_ROWS`).
AUTO_ROWS_SHARE = Fraction(1, 4)
#: The public grid ``max_rows="auto"`` chooses from: 1 to 32, then powers of two to 2**20.
AUTO_ROWS = tuple(range(1, 33)) + tuple(2**k for k in range(6, 21))


def is_auto(clip: object) -> bool:
    """Whether ``clip`` (or ``max_rows``) is the string ``"auto"``."""
    return isinstance(clip, str) and clip == "auto"


def with_bounds(answer: Any, clips: Mapping[Hashable, tuple[float, float]]) -> Any:
    """``answer`` with the bounds ``clip="auto"`` chose, where it has room for them.

    An interval (a Series or DataFrame with ``estimate``, ``lower``, ``upper``)
    gets ``clip_lower`` and ``clip_upper``; a ``describe`` table gets them as
    rows (ungrouped) or as columns under each column name (grouped).  A plain
    number is returned as it is: the bounds are in the ledger entry.
    """
    if isinstance(answer, pd.Series) and "estimate" in answer.index:
        ((lower, upper),) = clips.values()
        chosen = pd.Series([lower, upper], index=["clip_lower", "clip_upper"], name=answer.name)
        return pd.concat([answer.astype("float64"), chosen])
    if isinstance(answer, pd.DataFrame) and "estimate" in answer.columns:
        ((lower, upper),) = clips.values()
        return answer.assign(clip_lower=lower, clip_upper=upper)
    if isinstance(answer, pd.DataFrame) and isinstance(answer.columns, pd.MultiIndex):
        out = answer.copy()
        for column, (lower, upper) in clips.items():
            out[(column, "clip_lower")] = lower
            out[(column, "clip_upper")] = upper
        return out[list(clips)]
    if isinstance(answer, pd.DataFrame) and set(clips) <= set(answer.columns):
        extra = pd.DataFrame(
            {c: [lower, upper] for c, (lower, upper) in clips.items()},
            index=["clip_lower", "clip_upper"],
        )
        return pd.concat([answer, extra])
    return answer


def with_rows(answer: Any, max_rows: int) -> Any:
    """``answer`` with the ``max_rows`` that ``max_rows="auto"`` chose, where it has room.

    An interval (a Series or DataFrame with ``estimate``) gets ``max_rows``; a
    plain answer is returned as it is: the bound is in the ledger entry.
    """
    if isinstance(answer, pd.Series) and "estimate" in answer.index:
        chosen = pd.Series([float(max_rows)], index=["max_rows"], name=answer.name)
        return pd.concat([answer.astype("float64"), chosen])
    if isinstance(answer, pd.DataFrame) and "estimate" in answer.columns:
        return answer.assign(max_rows=max_rows)
    return answer
