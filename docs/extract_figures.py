"""Copy the figures the README shows out of the executed notebooks.

A notebook cell tagged ``docs:NAME.png`` has its (first) PNG output written to
``docs/NAME.png``, so the README shows exactly what the notebook shows. Run it
from anywhere, after ``python notebooks/execute.py``::

    python docs/extract_figures.py
"""

from __future__ import annotations

import base64
import json
import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
NOTEBOOKS = DOCS.parent / "notebooks"
TAG = "docs:"


def extract(notebook: Path) -> list[Path]:
    """Write the PNG of every ``docs:``-tagged cell of ``notebook``; return the paths."""
    written = []
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    for cell in cells:
        for tag in cell.get("metadata", {}).get("tags", []):
            if not tag.startswith(TAG):
                continue
            images = [
                o["data"]["image/png"]
                for o in cell.get("outputs", [])
                if "image/png" in o.get("data", {})
            ]
            if not images:
                raise SystemExit(
                    f"{notebook.name}: cell tagged {tag!r} has no PNG output; execute it first."
                )
            target = DOCS / tag.removeprefix(TAG)
            target.write_bytes(base64.b64decode(images[0]))
            written.append(target)
    return written


def main() -> int:
    for notebook in sorted(NOTEBOOKS.glob("*.ipynb")):
        for path in extract(notebook):
            print(f"{notebook.name} -> docs/{path.name} ({path.stat().st_size / 1024:.0f} KB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
