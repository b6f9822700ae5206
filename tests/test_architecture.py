"""The package's structure: imports go one way (no cycles) and only at module level.

Parses the package's own source (nothing is imported or run).  Imports under
``if TYPE_CHECKING:`` do not count: they never run.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "pandas_dp"
NAME = "pandas_dp"


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _package_modules(node: ast.Import | ast.ImportFrom, module: str) -> Iterator[str]:
    """The package modules an import statement of ``module`` names."""
    if isinstance(node, ast.Import):
        for alias in node.names:
            if alias.name == NAME or alias.name.startswith(NAME + "."):
                yield alias.name
        return
    if node.level:
        base = module.split(".")[: -node.level]
        target = ".".join([*base, node.module] if node.module else base)
    else:
        target = node.module or ""
    if target != NAME and not target.startswith(NAME + "."):
        return
    if target == NAME:  # from . import aggregate: each name may be a module
        for alias in node.names:
            yield f"{NAME}.{alias.name}"
    else:
        yield target


def imports_of(source: str, module: str) -> tuple[set[str], list[tuple[int, str]]]:
    """Module-level package imports of ``source``, and the imports found inside functions."""
    top: set[str] = set()
    nested: list[tuple[int, str]] = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _is_type_checking(child):
                for other in child.orelse:
                    visit(ast.Module(body=[other], type_ignores=[]), in_function)
                continue
            if isinstance(child, ast.Import | ast.ImportFrom):
                for target in _package_modules(child, module):
                    if in_function:
                        nested.append((child.lineno, target))
                    else:
                        top.add(target)
                continue
            inside = in_function or isinstance(
                child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda
            )
            visit(child, inside)

    visit(ast.parse(source), False)
    return top, nested


def graph_of(sources: dict[str, str]) -> tuple[dict[str, set[str]], list[str]]:
    """Module -> the package modules it imports; and every import inside a function."""
    graph: dict[str, set[str]] = {}
    nested: list[str] = []
    for module, source in sources.items():
        top, inner = imports_of(source, module)
        graph[module] = {m for m in top if m in sources and m != module}
        nested += [f"{module}:{line} imports {target}" for line, target in inner]
    return graph, nested


def cycles_of(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every strongly connected set of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def connect(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            connect(v)
    return found


def package_sources() -> dict[str, str]:
    sources = {}
    for path in sorted(PACKAGE.glob("*.py")):
        stem = path.stem
        module = NAME if stem == "__init__" else f"{NAME}.{stem}"
        sources[module] = path.read_text(encoding="utf-8")
    return sources


def test_the_package_has_no_import_cycle() -> None:
    graph, _ = graph_of(package_sources())
    assert cycles_of(graph) == []


def test_no_package_module_is_imported_inside_a_function() -> None:
    _, nested = graph_of(package_sources())
    assert nested == []


def test_the_init_map_names_every_module() -> None:
    init = (PACKAGE / "__init__.py").read_text(encoding="utf-8")
    doc = ast.get_docstring(ast.parse(init)) or ""
    for path in PACKAGE.glob("*.py"):
        if path.stem not in {"__init__", "py"}:
            assert f"``{path.stem}``" in doc, f"the map in __init__.py lacks {path.stem}"


# ------------------------------------------------- the checks can fail


@pytest.mark.parametrize(
    ("sources", "cycles", "nested"),
    [
        (
            {
                "pandas_dp.a": "from .b import x\n",
                "pandas_dp.b": "from pandas_dp import c\n",
                "pandas_dp.c": "import pandas_dp.a\n",
            },
            [["pandas_dp.a", "pandas_dp.b", "pandas_dp.c"]],
            [],
        ),
        (
            {
                "pandas_dp.a": "def f():\n    from .b import x\n    return x\n",
                "pandas_dp.b": "from . import a\n",
            },
            [],
            ["pandas_dp.a:2 imports pandas_dp.b"],
        ),
        (
            {
                "pandas_dp.a": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                "    from .b import x\n",
                "pandas_dp.b": "from .a import y\nimport numpy\n",
            },
            [],
            [],
        ),
    ],
    ids=["cycle", "import-in-function", "type-checking-only"],
)
def test_the_checks_catch_what_they_look_for(
    sources: dict[str, str], cycles: list[list[str]], nested: list[str]
) -> None:
    graph, found = graph_of(sources)
    assert cycles_of(graph) == cycles
    assert found == nested
