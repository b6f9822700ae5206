"""The mean's accuracy claim (DESIGN.md, Statistics), a fast version of bench/bench_accuracy.py.

2,000 seeded releases at n = 1,000, clip (0, 200,000), ε = 1: the
complementary-sums mean must beat the usual 50/50 noisy-sum / noisy-count
mean (RMSE about 210 against about 297 over 1e5 releases).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

BENCH = Path(__file__).resolve().parents[1] / "bench" / "bench_accuracy.py"


def _bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_accuracy", BENCH)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_mean_beats_the_usual_estimator() -> None:
    ours, usual = _bench().compare(releases=2_000, seed=0)
    assert ours <= 240
    assert ours < usual
