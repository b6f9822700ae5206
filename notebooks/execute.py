"""Re-run the tutorial notebooks in place, so the outputs stored in them match the code.

Usage, from the repository root, in the environment of ``pip install -e ".[test]"``::

    python notebooks/execute.py                          # every notebook
    python notebooks/execute.py notebooks/01_quickstart.ipynb

Then refresh the README figures: ``python docs/extract_figures.py``.

This module is also what ``tests/test_notebooks.py`` runs and compares, so that
the test checks exactly what is stored here:

* :func:`execute` runs a notebook in a fresh ``python3`` kernel (this
  interpreter), figures through matplotlib's inline backend (PNGs, what a reader
  sees), and, beside each figure's PNG, its *plotted data*
  (:data:`FIGURE_MIME`, from :func:`describe_figure`). No timing metadata is
  stored, so re-running unchanged code leaves the files unchanged.
* :func:`seen` is what a reader sees of the outputs, in the form the test
  compares: printed text, ``text/plain`` and ``text/html`` of results and
  displays, and each figure by its plotted data, not by its PNG bytes.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import sys
import time
from pathlib import Path
from typing import Any

import matplotlib.colors
import nbclient
import nbformat
import numpy as np
from matplotlib.artist import Artist
from matplotlib.axes import Axes
from matplotlib.axis import Axis
from matplotlib.collections import Collection, LineCollection
from matplotlib.figure import Figure
from matplotlib.legend import Legend
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.spines import Spine
from matplotlib.text import Text

HERE = Path(__file__).resolve().parent
TIMEOUT = 120  # seconds per cell; each notebook runs in well under a minute
FIGURE_MIME = "application/vnd.pandas-dp.figure+json"
DIGITS = 4  # significant digits of plotted numbers: finer than any figure shows
# The outputs a reader sees besides figures; a figure's PNG is compared through FIGURE_MIME.
SEEN_MIME = ("text/plain", "text/html", FIGURE_MIME)

# Run in the kernel before the notebook's first cell (not stored, no execution count):
# every figure the kernel displays then carries its plotted data beside the PNG.
_KERNEL_SETUP = """\
def _pandas_dp_notebook_setup(path):
    import importlib.util
    spec = importlib.util.spec_from_file_location("_pandas_dp_notebooks", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.install(get_ipython())
_pandas_dp_notebook_setup({path!r})
del _pandas_dp_notebook_setup
"""


def install(shell: Any) -> None:
    """Make ``shell`` (the kernel's IPython) display every Figure with its plotted data."""
    shell.display_formatter.mimebundle_formatter.for_type(Figure, _figure_bundle)


def _figure_bundle(fig: Figure, include: Any = None, exclude: Any = None) -> dict[str, Any]:
    """The figure's part of its display: the other formatters add its PNG and text."""
    return {FIGURE_MIME: describe_figure(fig)}


def _numbers(values: Any) -> list[Any]:
    """``values`` as nested lists of numbers rounded to :data:`DIGITS` significant digits."""
    array = np.ma.filled(np.ma.asarray(values, dtype=float), np.nan)
    return [
        _numbers(row) if np.ndim(row) else _number(float(row))
        for row in (array if array.ndim else [array])
    ]


def _number(x: float) -> float | str:
    return float(f"{x:.{DIGITS}g}") if math.isfinite(x) else str(x)


def _text(text: Text) -> list[Any] | None:
    if not text.get_visible() or not text.get_text():
        return None
    return [text.get_text(), _numbers(text.get_position())]


def _ticks(axis: Axis) -> list[list[Any]]:
    """The ticks drawn inside the view with their labels; minor ticks only if labelled."""
    low, high = sorted(axis.get_view_interval())
    major = axis.get_major_ticks()
    minor = [tick for tick in axis.get_minor_ticks() if _label(tick.label1)]
    return [
        [_number(float(tick.get_loc())), _label(tick.label1)]
        for tick in [*major, *minor]
        if tick.get_visible() and tick.get_loc() is not None and low <= tick.get_loc() <= high
    ]


def _label(text: Text) -> str:
    return text.get_text() if text.get_visible() else ""


def _artist(artist: Artist) -> dict[str, Any] | None:
    """One drawn artist as data: what it is, where, its colour and label."""
    if not artist.get_visible():
        return None
    if isinstance(artist, Line2D):
        return {
            "line": _numbers(artist.get_xydata()),
            "style": [artist.get_linestyle(), artist.get_marker(), _colour(artist.get_color())],
            "label": artist.get_label(),
        }
    if isinstance(artist, Patch):
        path = artist.get_path().transformed(artist.get_patch_transform())
        return {"patch": _numbers(path.vertices), "colour": _colour(artist.get_facecolor())}
    if isinstance(artist, LineCollection):
        return {"segments": [_numbers(s) for s in artist.get_segments()]}
    if isinstance(artist, Collection):
        return {"points": _numbers(artist.get_offsets()), "label": artist.get_label()}
    if isinstance(artist, Legend):
        return {"legend": [t.get_text() for t in artist.get_texts()]}
    if isinstance(artist, Text):
        return {"text": _text(artist)} if _text(artist) else None
    return None


def _colour(colour: Any) -> str:
    return str(matplotlib.colors.to_hex(colour, keep_alpha=True))


def _axes(ax: Axes) -> dict[str, Any]:
    drawn = [
        artist
        for child in ax.get_children()
        if child is not ax.patch
        and not isinstance(child, Spine)
        and (artist := _artist(child)) is not None
    ]
    canonical = json.dumps(drawn, sort_keys=True, ensure_ascii=True).encode()
    return {
        "title": ax.get_title(),
        "x": [ax.get_xlabel(), ax.get_xscale(), _numbers(ax.get_xlim()), _ticks(ax.xaxis)],
        "y": [ax.get_ylabel(), ax.get_yscale(), _numbers(ax.get_ylim()), _ticks(ax.yaxis)],
        # Hundreds of bars would bloat the notebook: their data is stored as a digest.
        "artists": [len(drawn), hashlib.sha256(canonical).hexdigest()],
    }


def describe_figure(fig: Figure) -> dict[str, Any]:
    """What ``fig`` shows, as data: the test compares this instead of the PNG.

    Every axes' titles, labels, scales, limits, the ticks drawn with their labels,
    and each visible line, patch, collection, legend and text with its data
    rounded to :data:`DIGITS` significant digits, colours and labels. Pixel
    positions and fonts are left out: they depend on the machine's fonts and the
    renderer's version, not on the notebook's code.
    """
    fig.draw_without_rendering()  # tick labels are chosen at draw time
    return {
        "size": _numbers(fig.get_size_inches()),
        "title": fig.get_suptitle(),
        "axes": [_axes(ax) for ax in fig.axes],
    }


def seen(nb: Any) -> list[list[Any]]:
    """Per code cell, what a reader sees of its outputs, in the form the test compares.

    Printed text by stream (consecutive pieces of one stream joined); for each
    result or display, its ``text/plain``, ``text/html`` and figure data
    (:data:`FIGURE_MIME`), and whether it has a PNG.
    """
    cells = []
    for cell in nb.cells:
        if cell["cell_type"] != "code":
            continue
        outputs: list[Any] = []
        for out in cell["outputs"]:
            if out["output_type"] == "stream":
                # The kernel may flush one cell's printing in several pieces
                # (timing decides where): join consecutive pieces of one stream.
                text = "".join(out["text"]) if isinstance(out["text"], list) else out["text"]
                if outputs and outputs[-1][0] == out["name"]:
                    outputs[-1][1] += text
                else:
                    outputs.append([out["name"], text])
            elif out["output_type"] == "error":
                outputs.append(["error", out["ename"], out["evalue"]])
            else:
                data = out["data"]
                shown = {mime: _json(data[mime]) for mime in SEEN_MIME if mime in data}
                outputs.append([out["output_type"], shown, "image/png" in data])
        cells.append(outputs)
    return cells


def _json(value: Any) -> Any:
    """Stored and fresh outputs alike: JSON round trip (tuples become lists)."""
    return json.loads(json.dumps(value))


def execute(nb: Any, cwd: Path) -> Any:
    """Run every cell of ``nb`` in place; raises CellExecutionError on the first error."""
    env = {key: value for key, value in os.environ.items() if key != "MPLBACKEND"}
    env["PYDEVD_DISABLE_FILE_VALIDATION"] = "1"  # quiet the debugger's stderr
    client = nbclient.NotebookClient(
        nb,
        kernel_name="python3",
        timeout=TIMEOUT,
        allow_errors=False,
        record_timing=False,
        resources={"metadata": {"path": str(cwd)}},
    )
    setup = _KERNEL_SETUP.format(path=str(Path(__file__).resolve()))
    # Without MPLBACKEND, ipykernel selects matplotlib's inline backend: PNGs.
    with client.setup_kernel(env=env):
        reply = client.wait_for_reply(client.kc.execute(setup, store_history=False))
        if reply is None or reply["content"]["status"] != "ok":
            raise RuntimeError(f"the kernel setup failed: {reply and reply['content']}")
        for index, cell in enumerate(nb.cells):
            client.execute_cell(cell, index, execution_count=client.code_cells_executed + 1)
    nb.metadata["language_info"] = {"name": "python"}  # no interpreter version churn
    return nb


def main(argv: list[str]) -> int:
    paths = [Path(a) for a in argv] or sorted(HERE.glob("*.ipynb"))
    for path in paths:
        start = time.perf_counter()
        nb = execute(nbformat.read(path, as_version=4), path.parent)
        nbformat.write(nb, path)
        print(f"{path.name}: executed in {time.perf_counter() - start:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
