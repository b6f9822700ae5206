"""The tutorial notebooks run, top to bottom, in this environment's Python.

Each notebook under ``notebooks/`` is executed once with a fresh kernel
(``kernel_name="python3"``, which jupyter_client resolves to the interpreter
running the tests, as long as no other ``python3`` kernel spec shadows it;
``test_kernel_is_this_environment`` checks that). A cell that raises fails
the test. The notebooks use seeded budgets, so the run is deterministic: the
text they print must equal the text stored in the file, so that the outputs a
reader sees on GitHub are the ones the current code gives.

Refresh the stored outputs with ``python notebooks/execute.py``.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path
from typing import Any

import nbclient
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
TIMEOUT = 120  # seconds per cell; the whole set runs in well under a minute


def _execute(nb: Any, cwd: Path) -> Any:
    """Run every cell of ``nb`` in place; raises CellExecutionError on the first error."""
    with pytest.MonkeyPatch.context() as env:
        env.setenv("MPLBACKEND", "Agg")  # no display; the kernel inherits this
        env.setenv("PYDEVD_DISABLE_FILE_VALIDATION", "1")  # quiet the debugger's stderr
        client = nbclient.NotebookClient(
            nb,
            kernel_name="python3",
            timeout=TIMEOUT,
            allow_errors=False,
            resources={"metadata": {"path": str(cwd)}},
        )
        client.execute()
    return nb


def _printed(nb: Any) -> list[list[str]]:
    """Per code cell, the text it printed (stdout), the outputs a reader compares."""
    return [
        [out["text"] for out in cell["outputs"] if out["output_type"] == "stream"]
        for cell in nb.cells
        if cell["cell_type"] == "code"
    ]


@pytest.fixture(scope="module", params=NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def executed(request: pytest.FixtureRequest) -> tuple[Any, Any]:
    path: Path = request.param
    stored = nbformat.read(path, as_version=4)
    fresh = _execute(nbformat.read(path, as_version=4), path.parent)
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
    assert _printed(stored) == _printed(fresh), (
        "the notebook's stored output differs from what the code prints now; "
        "refresh it with: python notebooks/execute.py"
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
    _execute(nb, tmp_path)
    printed = nb.cells[0]["outputs"][0]["text"].strip()
    assert os.path.samefile(printed, sys.prefix)
