"""The package's structure: imports go one way (no cycles) and only at module level.

Parses the package's own source (nothing is imported or run).  Imports under
``if TYPE_CHECKING:`` do not count: they never run.  Also: no module registers
itself into a module below it at import time (a dependency no import graph
shows), no module is longer than :data:`MAX_LINES`, and the kinds reach only
the accounting core, never the SQLite ledger.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "pandas_dp"
NAME = "pandas_dp"
MAX_LINES = 1000


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


def module_of(name: str) -> str:
    return NAME if name == "__init__" else f"{NAME}.{name}"


def long_modules(sources: dict[str, str], limit: int = MAX_LINES) -> set[str]:
    """The modules of more than ``limit`` lines."""
    return {module for module, source in sources.items() if len(source.splitlines()) > limit}


def package_names(tree: ast.Module, module: str) -> dict[str, str]:
    """Names bound by ``module``'s module-level package imports -> the dotted thing they name."""
    names: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == NAME or alias.name.startswith(NAME + "."):
                    if alias.asname:  # import pandas_dp.ledger as lg
                        names[alias.asname] = alias.name
                    else:  # import pandas_dp.ledger binds pandas_dp
                        names[NAME] = NAME
        elif isinstance(node, ast.ImportFrom):
            targets = list(_package_modules(node, module))
            if not targets:
                continue
            for alias in node.names:
                # from . import ledger names the module; from .ledger import x names ledger.x
                whole = f"{NAME}.{alias.name}"
                target = whole if whole in targets else f"{targets[0]}.{alias.name}"
                names[alias.asname or alias.name] = target
    return names


def _root(node: ast.expr) -> ast.Name | None:
    """The name an expression such as ``a.b[c].d`` starts from."""
    while isinstance(node, ast.Attribute | ast.Subscript | ast.Call):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node if isinstance(node, ast.Name) else None


def _dotted(node: ast.expr, names: dict[str, str]) -> str:
    root = _root(node)
    assert root is not None
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    return ".".join([names[root.id], *reversed(parts)])


def registrations_of(source: str, module: str) -> list[str]:
    """What ``module`` does at import time to objects of other package modules.

    A module-level statement whose effect can only be on another module: a
    call whose result is dropped (``register(f)``, ``lower.TABLE.append(x)``),
    an assignment into an imported object (``lower.TABLE[k] = v``,
    ``lower.HOOK = f``), or a decorator taken from another package module.
    """
    tree = ast.parse(source)
    names = package_names(tree, module)
    found: list[str] = []

    def imported(node: ast.expr) -> bool:
        root = _root(node)
        return root is not None and root.id in names

    def visit(statements: list[ast.stmt]) -> None:
        for node in statements:
            if isinstance(node, ast.If) and not _is_type_checking(node):
                visit(node.body)
                visit(node.orelse)
                continue
            if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
                if imported(node.value.func):
                    found.append(f"{module}:{node.lineno} calls {_dotted(node.value.func, names)}")
            elif isinstance(node, ast.Assign | ast.AugAssign | ast.AnnAssign):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for target in targets:
                    if isinstance(target, ast.Attribute | ast.Subscript) and imported(target):
                        found.append(
                            f"{module}:{node.lineno} assigns into {_dotted(target, names)}"
                        )
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                for decorator in node.decorator_list:
                    if imported(decorator):
                        found.append(
                            f"{module}:{node.lineno} decorates {node.name} with "
                            f"{_dotted(decorator, names)}"
                        )

    visit(tree.body)
    return found


def kind_modules(sources: dict[str, str]) -> set[str]:
    """The modules that define a subclass of ``Kind``."""
    found = set()
    for module, source in sources.items():
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.ClassDef) and any(
                isinstance(base, ast.Name | ast.Subscript | ast.Attribute)
                and (_root(base) or ast.Name("")).id == "Kind"
                for base in node.bases
            ):
                found.add(module)
    return found


def reachable(graph: dict[str, set[str]], start: str) -> set[str]:
    """Every package module ``start`` imports, directly or not."""
    seen: set[str] = set()
    todo = [start]
    while todo:
        for target in graph[todo.pop()]:
            if target not in seen:
                seen.add(target)
                todo.append(target)
    return seen


def test_no_module_registers_itself_into_a_lower_one() -> None:
    found = [
        line
        for module, source in package_sources().items()
        for line in registrations_of(source, module)
    ]
    assert found == [], (
        "a module changes another module's state at import time (a dependency no import "
        f"shows): pass the value where it is needed instead. Found: {found}"
    )


def test_no_module_is_longer_than_the_limit() -> None:
    found = long_modules(package_sources())
    assert found == set(), f"modules over {MAX_LINES} lines: {sorted(found)}; split them"


def test_the_kinds_reach_only_the_accounting_core() -> None:
    sources = package_sources()
    graph, _ = graph_of(sources)
    kinds = kind_modules(sources)
    assert {f"{NAME}.aggregate", f"{NAME}.select", f"{NAME}.describe"} <= kinds
    sqlite = {f"{NAME}.sqlite_ledger", f"{NAME}.ledger_format"}
    for module in sorted(kinds | {f"{NAME}.kind", f"{NAME}.ledger", f"{NAME}.budget"}):
        assert not reachable(graph, module) & sqlite, f"{module} reaches the SQLite ledger"
    assert "import sqlite3" not in sources[f"{NAME}.ledger"]


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


@pytest.mark.parametrize(
    ("source", "found"),
    [
        (
            "from .ledger import register_half_width\n\n\ndef f(): ...\n\n\n"
            "register_half_width(f)\n",
            ["pandas_dp.planning:7 calls pandas_dp.ledger.register_half_width"],
        ),
        (
            "from . import release\nrelease.KINDS.append(1)\n",
            ["pandas_dp.planning:2 calls pandas_dp.release.KINDS.append"],
        ),
        (
            "from .release import KINDS\nKINDS['x'] = 1\n",
            ["pandas_dp.planning:2 assigns into pandas_dp.release.KINDS"],
        ),
        (
            "import pandas_dp.ledger as lg\nlg.HOOK = print\n",
            ["pandas_dp.planning:2 assigns into pandas_dp.ledger.HOOK"],
        ),
        (
            "from .kind import register\n\n\n@register\nclass Count: ...\n",
            ["pandas_dp.planning:5 decorates Count with pandas_dp.kind.register"],
        ),
        (
            "import pandas as pd\nfrom .ledger import LedgerEntry\n"
            "E = LedgerEntry('x')\nTABLE = {}\nTABLE['a'] = 1\nprint(E)\n"
            "pd.set_option('x', 1)\n",
            [],
        ),
    ],
    ids=["register-call", "list-append", "dict-item", "module-attribute", "decorator", "own"],
)
def test_the_registration_check_catches_what_it_looks_for(source: str, found: list[str]) -> None:
    assert registrations_of(source, "pandas_dp.planning") == found


def test_the_length_check_catches_a_long_module() -> None:
    sources = {"pandas_dp.a": "x = 1\n" * 1001, "pandas_dp.b": "x = 1\n" * 1000}
    assert long_modules(sources) == {"pandas_dp.a"}
