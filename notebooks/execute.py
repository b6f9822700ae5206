"""Re-run the tutorial notebooks in place, so the outputs stored in them match the code.

Usage, from the repository root, in the environment of ``pip install -e ".[test]"``::

    python notebooks/execute.py                          # every notebook
    python notebooks/execute.py notebooks/01_quickstart.ipynb

Like ``tests/test_notebooks.py``, a fresh ``python3`` kernel (this interpreter),
except that figures go to the notebook (matplotlib's inline backend; the test
uses Agg, and compares only the printed text). No timing metadata is stored,
so re-running unchanged code leaves the files unchanged. Then refresh the
README figure: ``python docs/extract_figures.py``.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import nbclient
import nbformat

HERE = Path(__file__).resolve().parent


def execute(path: Path) -> None:
    nb = nbformat.read(path, as_version=4)
    os.environ.pop("MPLBACKEND", None)  # ipykernel then selects the inline backend: PNGs
    os.environ["PYDEVD_DISABLE_FILE_VALIDATION"] = "1"
    client = nbclient.NotebookClient(
        nb,
        kernel_name="python3",
        timeout=120,
        allow_errors=False,
        record_timing=False,
        resources={"metadata": {"path": str(path.parent)}},
    )
    client.execute()
    nb.metadata["language_info"] = {"name": "python"}  # no interpreter version churn
    nbformat.write(nb, path)


def main(argv: list[str]) -> int:
    paths = [Path(a) for a in argv] or sorted(HERE.glob("*.ipynb"))
    for path in paths:
        start = time.perf_counter()
        execute(path)
        print(f"{path.name}: executed in {time.perf_counter() - start:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
