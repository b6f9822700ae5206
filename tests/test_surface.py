"""The releases written once for both surfaces: signed and run as before.

How mypy and pyright type them: tests/typing/typed_path.py (tests/test_mypy.py).
"""

from __future__ import annotations

import inspect
from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd
import pytest

import pandas_dp
from pandas_dp.kinds.count import COUNT
from pandas_dp.surface._generate import _methods, sources
from pandas_dp.surface._typed import SIGNATURES

RELEASES = [signature.name for signature in SIGNATURES]


@pytest.mark.parametrize("name", sorted(RELEASES))
def test_each_surface_signs_a_release_as_its_overloads_type_it(name: str) -> None:
    ungrouped = inspect.signature(getattr(pandas_dp.DPAccessor, name))
    grouped = inspect.signature(getattr(pandas_dp.DPGroupBy, name))
    assert "max_groups" not in ungrouped.parameters
    assert set(grouped.parameters) == {*ungrouped.parameters, "max_groups", "delta"}
    assert "pd.DataFrame" not in ungrouped.return_annotation or name == "describe"


def test_a_release_signature_reads_as_before() -> None:
    got = inspect.signature(pandas_dp.DPAccessor.count)
    assert str(got) == (
        "(self, column: 'Hashable | None' = None, *, epsilon: 'float | None' = None, "
        "rho: 'float | None' = None, ci: 'float | None' = None, cut: 'bool' = False, "
        "max_rows: \"int | Literal['auto'] | None\" = None) -> 'int | pd.Series'"
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


def test_the_typed_methods_are_what_the_signatures_give() -> None:
    """The checked-in ``_typed_*`` modules are the generator's output, to the byte."""
    for path, text in sources().items():
        assert path.exists(), f"{path.name} is missing: run python -m pandas_dp.surface._generate"
        assert path.read_text(encoding="utf-8") == text, (
            f"{path.name} differs from what the signatures give: "
            "run python -m pandas_dp.surface._generate"
        )


def test_a_changed_signature_changes_the_typed_methods() -> None:
    """The check above can fail: another return type gives other overloads."""
    before = "\n".join(_methods("AggregateReleases", "COUNT", COUNT))
    changed = replace(COUNT, forms=(replace(COUNT.forms[0], returns=("float", "pd.Series")),))
    after = "\n".join(_methods("AggregateReleases", "COUNT", changed))
    assert before != after
    assert ") -> float: ..." in after
    assert ") -> float: ..." not in before
