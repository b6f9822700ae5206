"""Release docstrings: the template renderer, and every rendered docstring complete."""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from typing import Any

import pytest

import pandas_dp
from pandas_dp.surface._docs import render

SURFACES: list[type] = [pandas_dp.DPAccessor, pandas_dp.DPGroupBy]
try:
    import pandas_dp.dask as pdd
except ImportError:  # dask is optional: its surfaces are the same methods
    pass
else:
    SURFACES += [pdd.DaskDPAccessor, pdd.DaskDPGroupBy]

SECTIONS = ("Parameters", "Returns", "Raises", "Notes")


def releases() -> list[tuple[type, str]]:
    """Every public method of a surface that spends: it takes ``epsilon``."""
    found = []
    for surface in SURFACES:
        for name, member in inspect.getmembers(surface, inspect.isfunction):
            if name.startswith("_") or name in ("set_budget", "reserve"):  # they spend nothing
                continue
            if "epsilon" in inspect.signature(member).parameters:
                found.append((surface, name))
    return found


def section(doc: str, title: str) -> str:
    """The text of a numpydoc section (up to the next underlined title)."""
    match = re.search(rf"^{title}\n-+\n(.*?)(?=^\w[^\n]*\n-+\n|\Z)", doc, re.S | re.M)
    assert match is not None, f"no {title} section"
    return match.group(1)


def documented(parameters: str) -> set[str]:
    """The names the entries of a Parameters section give (``a, b : type`` gives two)."""
    names: set[str] = set()
    for line in parameters.splitlines():
        if line and not line[0].isspace():
            names.update(n.strip().lstrip("*") for n in line.split(" : ")[0].split(","))
    return names


def test_render_indents_a_field_where_it_stands() -> None:
    template = "Summary.\n\n    Parameters\n    ----------\n    $x\n    y : int\n"
    got = render(template, {"x": "x : float\n    The x."})
    assert (
        got
        == "Summary.\n\n    Parameters\n    ----------\n    x : float\n        The x.\n    y : int"
    )


def test_render_drops_a_line_that_held_only_empty_fields() -> None:
    assert render("a\n    $gone\n    b", {"gone": ""}) == "a\n    b"


def test_render_dedents_a_field_written_indented() -> None:
    assert (
        render(
            "    $x",
            {
                "x": """\
        one
            two"""
            },
        )
        == "    one\n        two"
    )


def test_render_refuses_a_field_it_does_not_know() -> None:
    with pytest.raises(KeyError, match="typo"):
        render("$typo", {})


@pytest.mark.parametrize(("surface", "name"), releases(), ids=lambda x: getattr(x, "__name__", x))
def test_every_release_docstring_is_complete(surface: type, name: str) -> None:
    """numpydoc sections, each parameter named, no field left, Notes on cost/adjacency/public."""
    method: Callable[..., Any] = getattr(surface, name)
    doc = inspect.cleandoc(method.__doc__ or "")
    assert "$" not in doc
    for title in SECTIONS:
        section(doc, title)
    wanted = set(inspect.signature(method).parameters) - {"self"}
    assert wanted <= documented(section(doc, "Parameters"))
    notes = section(doc, "Notes")
    assert "epsilon" in notes or "ε" in notes  # the privacy cost
    assert "add_remove" in notes or "substitute" in notes  # the adjacency (and sensitivity)
    assert "public" in notes.lower()  # what must be public


@pytest.mark.parametrize(
    ("method", "shown", "absent"),
    [
        (pandas_dp.DPAccessor.count, "max_rows", "max_groups"),
        (pandas_dp.DPGroupBy.count, "max_groups", "Privacy cost of the whole call"),
        (pandas_dp.DPAccessor.describe, "one column per column", "max_groups"),
        (pandas_dp.DPGroupBy.describe, "Indexed by ``keys``", "one column per column"),
    ],
)
def test_each_surface_shows_its_own_rendering(method: Any, shown: str, absent: str) -> None:
    assert shown in method.__doc__
    assert absent not in method.__doc__
