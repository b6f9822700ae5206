"""The typed path, as mypy and pyright must type it (checked by tests/test_mypy.py, never run).

``pandas_dp.dp(df)`` and, under the mypy plugin, ``df.dp``: every line must
type-check with 0 errors, and ``assert_type`` fails on a type that is only
``Any`` or a union.
"""

from __future__ import annotations

from typing import assert_type

import pandas as pd

import pandas_dp
from pandas_dp import DPAccessor, DPFrame, DPGroupBy, Grouped, Keyless, dp, typed

df = pd.DataFrame({"x": [1.0], "k": ["a"], "p": [1]})
assert_type(df.dp, DPAccessor)  # mypy with the plugin; pyright types it as a column
frame = typed(df)  # one line, and pyright types df.dp too: the same frame
assert_type(frame, DPFrame)
assert_type(frame.dp, DPAccessor)
assert_type(frame.dp.query("x > 0").dp.mean("x", clip=(0, 1), epsilon=1), float)
a = dp(df)
assert_type(a, DPAccessor)
assert_type(a.query("x > 0"), DPFrame)
assert_type(a.filter(df["x"] > 0), DPFrame)
assert_type(a.assign(y=1), DPFrame)
assert_type(a.select(["x"]), DPFrame)
assert_type(a.per_unit(total=("x", "sum")), DPFrame)
assert_type(dp(a.query("x > 0")).mean("x", clip=(0, 1), epsilon=1), float)
assert_type(a.agg({"x": ["mean", "std"]}, epsilon=1, clip=(0, 1)), pd.Series | pd.DataFrame)
assert_type(a.argmax_exp("k", candidates=["a", "b"], epsilon=1), str)
assert_type(a.argmax_exp("k", candidates=["a", "b"], epsilon=1, k=2), list[str])
assert_type(a.argmax_exp("p", candidates=range(3), epsilon=1), int)
g = a.groupby("k", keys=["a"])
assert_type(g, DPGroupBy[Grouped])
chosen = a.groupby("k")  # no keys: chosen privately, each release takes delta=
assert_type(chosen, DPGroupBy[Keyless])
assert_type(chosen.count(epsilon=1, delta=1e-7), pd.Series)
assert_type(chosen.count(epsilon=1, delta=1e-7, ci=0.9), pd.DataFrame)
assert_type(chosen.mean("x", clip=(0, 1), epsilon=1, delta=1e-7), pd.Series)
assert_type(chosen.median("x", candidates=[0, 1], epsilon=1, delta=1e-7), pd.Series)
assert_type(chosen.argmax_exp("k", candidates=["a"], epsilon=1, delta=1e-7, k=2), pd.DataFrame)
assert_type(chosen.mean("x", clip="auto", epsilon=1, delta=1e-7, cut=True), pd.DataFrame)
assert_type(chosen.describe("x", clip={}, candidates={}, rho=1, delta=1e-7), pd.DataFrame)
assert_type(a.value_counts("k", epsilon=1, delta=1e-7), pd.Series)
assert_type(a.crosstab("k", "p", epsilon=1, delta=1e-7), pd.DataFrame)
assert_type(g.argmax_exp("k", candidates=["a", "b"], epsilon=1), pd.Series)
assert_type(g.argmax_exp("k", candidates=["a", "b"], epsilon=1, k=1), pd.DataFrame)
# Each release on both surfaces (pandas_dp.surface._releases: self-typed overloads).
assert_type(a.count(epsilon=1), int)
assert_type(a.count("x", epsilon=1, ci=0.9), pd.Series)
assert_type(a.sum("x", clip=(0, 1), epsilon=1), float)
assert_type(a.sum(clip={"x": (0, 1)}, epsilon=1), pd.Series)
assert_type(a.mean("x", clip=(0, 1), epsilon=1, ci=0.9), pd.Series)
assert_type(a.mean("x", clip=(0, 1), epsilon=1, max_rows=2), float)
assert_type(a.var("x", clip=(0, 1), epsilon=1), float)
assert_type(a.std("x", clip=(0, 1), epsilon=1, ci=0.5), pd.Series)
assert_type(a.mean("x", clip="auto", epsilon=1, cut=True), pd.Series)
assert_type(a.sum("x", clip=(0, 1), epsilon=1, ci=0.9, cut=True), pd.Series)
assert_type(a.quantile("x", 0.5, candidates=[0, 1], epsilon=1), float)
assert_type(a.median("x", candidates=[0, 1], epsilon=1), float)
assert_type(a.describe("x", clip={}, candidates={}, epsilon=1), pd.DataFrame)
assert_type(g.count(epsilon=1), pd.Series)
assert_type(g.count(epsilon=1, ci=0.9, max_groups=1), pd.DataFrame)
assert_type(g.sum("x", clip=(0, 1), epsilon=1), pd.Series)
assert_type(g.sum(clip={"x": (0, 1)}, epsilon=1), pd.DataFrame)
assert_type(g.mean("x", clip=(0, 1), epsilon=1, ci=0.9), pd.DataFrame)
assert_type(g.var("x", clip=(0, 1), epsilon=1), pd.Series)
assert_type(g.std("x", clip=(0, 1), epsilon=1, ci=0.9), pd.DataFrame)
assert_type(g.var("x", clip=(0, 1), epsilon=1, cut=True), pd.DataFrame)
assert_type(g.quantile("x", 0.5, candidates=[0, 1], epsilon=1), pd.Series)
assert_type(g.median("x", candidates=[0, 1], epsilon=1), pd.Series)
assert_type(g.argmax_exp("k", candidates=["a"], epsilon=1), pd.Series)
assert_type(g.describe("x", clip={}, candidates={}, epsilon=1), pd.DataFrame)
# Every release takes rho= too (a zCDP budget), typed like its epsilon= form.
assert_type(a.nunique("k", rho=1), int)
assert_type(g.nunique("k", rho=1), pd.Series)
assert_type(a.median("x", candidates=[0, 1], rho=1), float)
assert_type(g.quantile("x", 0.5, candidates=[0, 1], rho=1), pd.Series)
assert_type(a.bounds("x", rho=1), tuple[float, float])
assert_type(g.clipped_share("x", clip=(0, 1), rho=1), pd.Series)
assert_type(a.describe("x", clip={}, candidates={}, rho=1), pd.DataFrame)
assert_type(a.rows_per_unit(candidates=[1, 2], rho=1), int)
assert_type(pandas_dp.half_width("count", epsilon=1), float)
assert_type(pandas_dp.half_width("sum", clip=(0, 1), epsilon=1), float)
assert_type(pandas_dp.half_width("sum", clip={"x": (0, 1), "y": (0, 2)}, epsilon=1), pd.Series)
