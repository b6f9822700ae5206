"""Calls that must stay type errors, one per line marked ``# error`` (tests/test_mypy.py).

mypy must flag exactly the marked lines (with the plugin, on ``df.dp`` as on
``dp(df)``); pyright, which has no plugin, exactly the marked lines too (on the
``df.dp`` lines because it types ``df.dp`` as a column). Never run.
"""

from __future__ import annotations

import pandas as pd

from pandas_dp import dp

df = pd.DataFrame({"x": [1.0], "k": ["a"]})
df.dp.mean("x", clip=(0, 1))  # error: no epsilon
df.dp.mean("x", clip=(0, 1), epsilon="0.5")  # error: epsilon is not a number
df.dp.count(0.1)  # error: epsilon is keyword-only
df.dp.groupby("k", keys=["a"]).count()  # error: no epsilon
label: str = df.dp.count(epsilon=0.1)  # error: a count is an int
dp(df).mean("x", clip=(0, 1))  # error: no epsilon
dp(df).sum("x", clip="0, 1", epsilon=0.5)  # error: clip is not a pair of numbers
one: list[str] = dp(df).argmax_exp("k", candidates=["a"], epsilon=0.5)  # error: one candidate
width: float = dp(df).std("x", clip=(0, 1), epsilon=0.5, ci=0.9)  # error: with ci, a Series
dp(df).count(epsilon=1, max_groups=2)  # error: max_groups is for a groupby
dp(df).mean("x", clip=(0, 1), epsilon=1, max_groups=2)  # error: max_groups is for a groupby
dp(df).median("x", candidates=[1.0], epsilon=0.1, rho=0.1)  # error: one of epsilon and rho
dp(df).count(epsilon=0.1, rho=0.1)  # error: one of epsilon and rho
shown: float = dp(df).mean("x", clip="auto", epsilon=1, cut=True)  # error: with cut, a Series
df.dp.groupby("k").count(epsilon=0.5)  # error: keys chosen privately need delta
dp(df).groupby("k").mean("x", clip=(0, 1), epsilon=0.5)  # error: no delta
dp(df).groupby("k", keys=["a"]).count(epsilon=0.5, delta=1e-7)  # error: public keys, no delta
dp(df).count(epsilon=0.5, delta=1e-7)  # error: delta is for a groupby without keys
