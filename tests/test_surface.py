"""The releases written once for both surfaces: typed, signed and run as before."""

from __future__ import annotations

import importlib.util
import inspect
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

import pandas_dp
from pandas_dp.docstrings import RELEASES

ROOT = Path(__file__).resolve().parents[1]

# Each release on pandas_dp.dp(df) and on its groupby, as mypy must type it; the
# lines marked `type: ignore` must stay errors (strict mode flags an unused ignore).
TYPED = """\
from typing import Any, assert_type

import pandas as pd

import pandas_dp

df = pd.DataFrame({"x": [1.0], "k": ["a"]})
a = pandas_dp.dp(df)
assert_type(a.count(epsilon=1), int)
assert_type(a.count("x", epsilon=1, ci=0.9), pd.Series)
assert_type(a.sum("x", clip=(0, 1), epsilon=1), float)
assert_type(a.sum(clip={"x": (0, 1)}, epsilon=1), pd.Series)
assert_type(a.mean("x", clip=(0, 1), epsilon=1, ci=0.9), pd.Series)
assert_type(a.mean("x", clip=(0, 1), epsilon=1, max_rows=2), float)
assert_type(a.var("x", clip=(0, 1), epsilon=1), float)
assert_type(a.std("x", clip=(0, 1), epsilon=1, ci=0.5), pd.Series)
assert_type(a.quantile("x", 0.5, candidates=[0, 1], epsilon=1), float)
assert_type(a.median("x", candidates=[0, 1], epsilon=1), float)
assert_type(a.argmax_exp("k", candidates=["a"], epsilon=1), Any)
assert_type(a.describe("x", clip={}, candidates={}, epsilon=1), pd.DataFrame)
g = a.groupby("k", keys=["a"])
assert_type(g.count(epsilon=1), pd.Series)
assert_type(g.count(epsilon=1, ci=0.9, max_groups=1), pd.DataFrame)
assert_type(g.sum("x", clip=(0, 1), epsilon=1), pd.Series)
assert_type(g.sum(clip={"x": (0, 1)}, epsilon=1), pd.DataFrame)
assert_type(g.mean("x", clip=(0, 1), epsilon=1, ci=0.9), pd.DataFrame)
assert_type(g.var("x", clip=(0, 1), epsilon=1), pd.Series)
assert_type(g.std("x", clip=(0, 1), epsilon=1, ci=0.9), pd.DataFrame)
assert_type(g.quantile("x", 0.5, candidates=[0, 1], epsilon=1), pd.Series)
assert_type(g.median("x", candidates=[0, 1], epsilon=1), pd.Series)
assert_type(g.argmax_exp("k", candidates=["a"], epsilon=1), pd.Series | pd.DataFrame)
assert_type(g.describe("x", clip={}, candidates={}, epsilon=1), pd.DataFrame)
a.count(epsilon=1, max_groups=2)  # type: ignore[call-overload]
a.mean("x", clip=(0, 1), epsilon=1, max_groups=2)  # type: ignore[call-overload]
"""


@pytest.mark.skipif(importlib.util.find_spec("mypy") is None, reason="needs mypy")
def test_the_typed_path_types_each_release_precisely(tmp_path: Path) -> None:
    (tmp_path / "typed.py").write_text(TYPED, encoding="utf-8")
    env = {**os.environ, "MYPYPATH": str(ROOT)}
    command = [sys.executable, "-m", "mypy", "--strict", "--cache-dir", str(tmp_path / "cache")]
    out = subprocess.run(
        [*command, str(tmp_path / "typed.py")], capture_output=True, text=True, env=env
    )
    assert out.returncode == 0, out.stdout + out.stderr


@pytest.mark.parametrize("name", sorted(RELEASES))
def test_each_surface_signs_a_release_as_its_overloads_type_it(name: str) -> None:
    ungrouped = inspect.signature(getattr(pandas_dp.DPAccessor, name))
    grouped = inspect.signature(getattr(pandas_dp.DPGroupBy, name))
    assert "max_groups" not in ungrouped.parameters
    assert set(grouped.parameters) == {*ungrouped.parameters, "max_groups"}
    assert "pd.DataFrame" not in ungrouped.return_annotation or name == "describe"


def test_a_release_signature_reads_as_before() -> None:
    got = inspect.signature(pandas_dp.DPAccessor.count)
    assert str(got) == (
        "(self, column: 'Hashable | None' = None, *, epsilon: 'float | None' = None, "
        "rho: 'float | None' = None, ci: 'float | None' = None, max_rows: 'int | None' = None)"
        " -> 'int | pd.Series'"
    )


@pytest.mark.parametrize(
    ("release", "args"),
    [
        ("count", {}),
        ("mean", {"column": "x", "clip": (0, 1)}),
        ("median", {"column": "x", "candidates": [0, 1]}),
    ],
)
def test_an_ungrouped_release_refuses_max_groups_before_spending(
    release: str, args: dict[str, Any]
) -> None:
    df = pd.DataFrame({"x": np.arange(10.0), "p": np.arange(10) % 3})
    df.dp.set_budget(epsilon=1, privacy_unit="p", max_rows=2)
    with pytest.raises(TypeError, match=r"`max_groups`.*groupby"):
        getattr(df.dp, release)(**args, epsilon=0.5, max_groups=1)
    assert df.dp.budget.spent == 0


def test_pandas_and_dask_run_the_same_code_for_each_release() -> None:
    pdd = pytest.importorskip("pandas_dp.dask")
    for name in RELEASES:
        assert getattr(pdd.DaskDPAccessor, name) is getattr(pandas_dp.DPAccessor, name)
        assert getattr(pdd.DaskDPGroupBy, name) is getattr(pandas_dp.DPGroupBy, name)
