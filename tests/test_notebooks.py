"""The tutorial notebooks run, top to bottom, and store the outputs the current code gives.

Each notebook under ``notebooks/`` is executed once with a fresh kernel by
``notebooks/execute.py``'s :func:`execute`, the function that writes the stored
outputs (``kernel_name="python3"``, which jupyter_client resolves to the
interpreter running the tests, as long as no other ``python3`` kernel spec
shadows it; ``test_kernel_is_this_environment`` checks that). A cell that raises
fails the test. The notebooks use seeded budgets, so the run is deterministic,
and everything a reader sees must equal what is stored in the file
(``execute.seen``): printed text, the ``text/plain`` and ``text/html`` of every
result and display (DataFrames, the budget's HTML view) and every figure.

Figures are compared by what they plot, not by their PNG bytes. The PNG that
matplotlib's inline backend writes depends on the machine's fonts, FreeType and
Agg versions: comparing bytes would fail on a clean CI machine with nothing
stale, and a pixel tolerance loose enough for that would miss a changed seed
(1,000 noisy releases redrawn with other noise look alike at a glance). So the
kernel stores, beside each PNG, the figure's data (``execute.describe_figure``):
its size, every axes' title, labels, scales, limits and drawn ticks with their
labels, and a digest of every line, patch, collection, legend and text in data
coordinates, rounded to 4 significant digits, with colours and labels. That
changes whenever the code, a seed or the library changes what is drawn, and not
with the renderer.

Refresh the stored outputs with ``python notebooks/execute.py``.
"""

from __future__ import annotations

import importlib.util
import os
import re
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import nbformat
import pytest

NOTEBOOK_DIR = Path(__file__).resolve().parents[1] / "notebooks"
NOTEBOOKS = sorted(NOTEBOOK_DIR.glob("*.ipynb"))
EXPECTED = [
    "01_quickstart.ipynb",
    "02_choosing_clip_bounds.ipynb",
    "03_best_sellers.ipynb",
    "04_many_rows_per_person.ipynb",
]


def _load_execute() -> ModuleType:
    """``notebooks/execute.py``: a script beside the notebooks, not part of the package."""
    spec = importlib.util.spec_from_file_location("notebook_execute", NOTEBOOK_DIR / "execute.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


execute = _load_execute()


@pytest.fixture(scope="module", params=NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def executed(request: pytest.FixtureRequest) -> tuple[Any, Any]:
    path: Path = request.param
    stored = nbformat.read(path, as_version=4)
    fresh = execute.execute(nbformat.read(path, as_version=4), path.parent)
    return stored, fresh


@pytest.mark.parametrize("name", EXPECTED)
def test_notebook_exists(name: str) -> None:
    assert (NOTEBOOK_DIR / name).is_file()


def test_notebook_runs_without_error(executed: tuple[Any, Any]) -> None:
    _, fresh = executed
    cells = [c for c in fresh.cells if c["cell_type"] == "code"]
    assert cells
    errors = [o for c in cells for o in c["outputs"] if o["output_type"] == "error"]
    assert errors == []


def test_notebook_shows_no_warning(executed: tuple[Any, Any]) -> None:
    """Nothing on stderr: a deprecation or runtime warning would be shown to every reader."""
    _, fresh = executed
    stderr = [
        out["text"]
        for cell in fresh.cells
        if cell["cell_type"] == "code"
        for out in cell["outputs"]
        if out["output_type"] == "stream" and out["name"] == "stderr"
    ]
    assert stderr == []


def test_notebook_is_stored_executed(executed: tuple[Any, Any]) -> None:
    stored, _ = executed
    cells = [c for c in stored.cells if c["cell_type"] == "code"]
    counts = [c["execution_count"] for c in cells]
    assert counts == list(range(1, len(cells) + 1)), (
        "store the notebook executed top to bottom: python notebooks/execute.py"
    )


def test_stored_outputs_are_current(executed: tuple[Any, Any]) -> None:
    stored, fresh = executed
    for index, (was, now) in enumerate(
        zip(execute.seen(stored), execute.seen(fresh), strict=True), start=1
    ):
        assert was == now, (
            f"code cell {index}: the stored outputs (text, HTML or figure) differ from "
            "what the code gives now; refresh them with: python notebooks/execute.py"
        )


def test_readme_links_every_notebook_and_figure() -> None:
    readme = (NOTEBOOK_DIR.parent / "README.md").read_text(encoding="utf-8")
    linked = set(re.findall(r"\]\((notebooks/[^)]+\.ipynb)\)", readme))
    assert linked == {f"notebooks/{p.name}" for p in NOTEBOOKS}
    for figure in re.findall(r"!\[[^\]]*\]\((docs/[^)]+\.png)\)", readme):
        path = NOTEBOOK_DIR.parent / figure
        assert path.is_file()
        assert path.stat().st_size < 150_000


def test_kernel_is_this_environment(tmp_path: Path) -> None:
    """``python3`` resolves to this interpreter's environment (no kernelspec install needed)."""
    nb = nbformat.v4.new_notebook(
        cells=[nbformat.v4.new_code_cell("import sys; print(sys.prefix)")]
    )
    execute.execute(nb, tmp_path)
    printed = nb.cells[0]["outputs"][0]["text"].strip()
    assert os.path.samefile(printed, sys.prefix)
