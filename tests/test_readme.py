"""The README's section "How accurate is this?" shows output that the current code gives.

Its code blocks are doctests (``pycon``): each runs here, in order and in one
namespace, and its printed output must match (NORMALIZE_WHITESPACE, as the
package's doctests).  No block of that section may show unchecked output.
"""

from __future__ import annotations

import doctest
import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
SECTION = "## How accurate is this?"


def _section() -> str:
    text = README.read_text(encoding="utf-8")
    start = text.index(SECTION)
    end = text.find("\n## ", start + len(SECTION))
    return text[start : end if end >= 0 else len(text)]


def _blocks() -> list[tuple[str, str]]:
    """(language, body) of every fenced code block of the section."""
    return re.findall(r"```(\w*)\n(.*?)```", _section(), flags=re.DOTALL)


def test_the_section_shows_only_checked_code() -> None:
    blocks = _blocks()
    assert len(blocks) >= 2
    for language, body in blocks:
        assert language == "pycon", body[:60]
        assert body.lstrip().startswith(">>> "), body[:60]


def test_the_section_runs_and_prints_what_it_shows() -> None:
    parser = doctest.DocTestParser()
    runner = doctest.DocTestRunner(
        optionflags=doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS, verbose=False
    )
    namespace: dict[str, object] = {}
    report: list[str] = []
    for number, (_, body) in enumerate(_blocks(), start=1):
        test = parser.get_doctest(body, namespace, f"README block {number}", str(README), 0)
        runner.run(test, out=report.append, clear_globs=False)
    if runner.failures:
        pytest.fail("".join(report))
    assert runner.tries >= 8
