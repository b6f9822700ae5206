"""The package's structure: rooms in floors, imports one way (no cycles), only at module level.

Parses the package's own source (nothing is imported or run).  Imports under
``if TYPE_CHECKING:`` do not count: they never run.  The package is a few
modules at the top and the rooms of :data:`ROOMS` (subpackages), lowest
first: a module imports only from its own room or lower rooms, never from a
room above or from a top module; a module whose name starts with ``_`` is
imported only from its own room.  Also: no module registers itself into a
module below it at import time (a dependency no import graph shows), no
module is longer than :data:`MAX_LINES`, each ``__init__`` maps its room, and
the kinds reach only the accounting core, never the SQLite ledger.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "pandas_dp"
NAME = "pandas_dp"
MAX_LINES = 1000
#: The rooms (subpackages), lowest floor first.
ROOMS = ("core", "accounting", "mechanisms", "kinds", "pipeline", "surface", "dask")
#: The most modules the top of the package may hold besides the rooms.
TOP_MODULES = 6


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _resolve(node: ast.ImportFrom, module: str, packages: frozenset[str]) -> str:
    """The absolute module a ``from ... import`` names (before its names)."""
    if not node.level:
        return node.module or ""
    here = module.split(".") if module in packages else module.split(".")[:-1]
    base = here[: len(here) - (node.level - 1)]
    return ".".join([*base, node.module] if node.module else base)


def _package_modules(
    node: ast.Import | ast.ImportFrom, module: str, packages: frozenset[str] = frozenset()
) -> Iterator[str]:
    """The package modules an import statement of ``module`` names."""
    if isinstance(node, ast.Import):
        for alias in node.names:
            if alias.name == NAME or alias.name.startswith(NAME + "."):
                yield alias.name
        return
    target = _resolve(node, module, packages)
    if target != NAME and not target.startswith(NAME + "."):
        return
    if target == NAME or target in packages:  # from ..core import zcdp: a name may be a module
        for alias in node.names:
            yield f"{target}.{alias.name}"
    else:
        yield target


def imports_of(
    source: str, module: str, packages: frozenset[str] = frozenset()
) -> tuple[set[str], list[tuple[int, str]]]:
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
                for target in _package_modules(child, module, packages):
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
    packages = frozenset(m for m in sources if is_package(m))
    for module, source in sources.items():
        top, inner = imports_of(source, module, packages)
        graph[module] = {
            m if m in sources else m.rpartition(".")[0]
            for m in top
            if (m in sources or m.rpartition(".")[0] in sources) and m != module
        }
        graph[module].discard(module)
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
    """Every module of the package by dotted name (a package by its own name)."""
    sources = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        sources[".".join([NAME, *parts])] = path.read_text(encoding="utf-8")
    return sources


def is_package(module: str) -> bool:
    """Whether ``module`` is a package (the package itself or a room), not a file module."""
    parts = module.split(".")
    return module == NAME or (len(parts) == 2 and parts[1] in ROOMS)


def room_of(module: str) -> str | None:
    """The room ``module`` lives in, or None for the package's top modules."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in ROOMS else None


def floor_of(module: str) -> int:
    """``module``'s floor: its room's place in :data:`ROOMS`; the top is above every room."""
    room = room_of(module)
    return len(ROOMS) if room is None else ROOMS.index(room)


def upward_imports(graph: dict[str, set[str]]) -> list[str]:
    """Imports from a room into a higher room, or from a room into a top module."""
    found = []
    for module, targets in sorted(graph.items()):
        for target in sorted(targets):
            if room_of(module) is not None and floor_of(target) > floor_of(module):
                found.append(f"{module} imports {target}")
    return found


def private_imports(graph: dict[str, set[str]]) -> list[str]:
    """Imports of a room's private module (``_name``) from outside that room."""
    found = []
    for module, targets in sorted(graph.items()):
        for target in sorted(targets):
            leaf = target.rpartition(".")[2]
            private = leaf.startswith("_") and not leaf.startswith("__")
            if private and room_of(target) != room_of(module):
                found.append(f"{module} imports {target}")
    return found


def test_the_package_has_no_import_cycle() -> None:
    graph, _ = graph_of(package_sources())
    assert cycles_of(graph) == []


def test_no_package_module_is_imported_inside_a_function() -> None:
    _, nested = graph_of(package_sources())
    assert nested == []


def test_the_package_is_rooms_in_floor_order() -> None:
    sources = package_sources()
    graph, _ = graph_of(sources)
    assert {m.split(".")[1] for m in sources if m.count(".") >= 1 and room_of(m)} == set(ROOMS)
    assert upward_imports(graph) == [], "a module imports from a room above its own"
    assert private_imports(graph) == [], "a private module is imported from outside its room"


def test_the_top_holds_a_handful_of_modules() -> None:
    top = [m for m in package_sources() if room_of(m) is None and m != NAME]
    assert len(top) <= TOP_MODULES, f"{len(top)} modules at the top: {top}; move them into rooms"


def _map_of(module: str) -> str:
    """The docstring of ``module`` (a package's ``__init__``)."""
    return ast.get_docstring(ast.parse(package_sources()[module])) or ""


def test_the_init_map_names_every_room_and_top_module() -> None:
    doc = _map_of(NAME)
    for module in package_sources():
        if module == NAME:
            continue
        room = room_of(module)
        name = module.split(".")[1]
        shown = f"``{name}/``" if room is not None else f"``{name}``"
        assert shown in doc, f"the map in pandas_dp/__init__.py lacks {shown}"


@pytest.mark.parametrize("room", ROOMS)
def test_each_room_maps_its_modules(room: str) -> None:
    doc = _map_of(f"{NAME}.{room}")
    for module in package_sources():
        if room_of(module) == room and module != f"{NAME}.{room}":
            leaf = module.rpartition(".")[2]
            # generated modules, one per module of another room, share one row: ``_typed_*``
            stars = re.findall(r"``(\w+)\*``", doc)
            shown = f"``{leaf}``" in doc or any(leaf.startswith(star) for star in stars)
            assert shown, f"the map in pandas_dp/{room}/__init__.py lacks {leaf}"


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
                    if alias.asname:  # import pandas_dp.accounting.ledger as lg
                        names[alias.asname] = alias.name
                    else:  # import pandas_dp.accounting.ledger binds pandas_dp
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
    assert kinds, "no module defines a Kind"
    assert all(room_of(module) == "kinds" for module in kinds), sorted(kinds)
    sqlite = {f"{NAME}.accounting.sqlite", f"{NAME}.accounting._sqlite_format"}
    core = {f"{NAME}.kinds.base", f"{NAME}.accounting.ledger", f"{NAME}.accounting.budget"}
    for module in sorted(kinds | core):
        assert not reachable(graph, module) & sqlite, f"{module} reaches the SQLite ledger"
    assert "import sqlite3" not in sources[f"{NAME}.accounting.ledger"]


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
            "from ..accounting.ledger import register_half_width\n\n\ndef f(): ...\n\n\n"
            "register_half_width(f)\n",
            ["pandas_dp.pipeline.planning:7 calls pandas_dp.accounting.ledger.register_half_width"],
        ),
        (
            "from . import run\nrun.KINDS.append(1)\n",
            ["pandas_dp.pipeline.planning:2 calls pandas_dp.pipeline.run.KINDS.append"],
        ),
        (
            "from .run import KINDS\nKINDS['x'] = 1\n",
            ["pandas_dp.pipeline.planning:2 assigns into pandas_dp.pipeline.run.KINDS"],
        ),
        (
            "import pandas_dp.accounting.ledger as lg\nlg.HOOK = print\n",
            ["pandas_dp.pipeline.planning:2 assigns into pandas_dp.accounting.ledger.HOOK"],
        ),
        (
            "from ..kinds.base import register\n\n\n@register\nclass Count: ...\n",
            ["pandas_dp.pipeline.planning:5 decorates Count with pandas_dp.kinds.base.register"],
        ),
        (
            "import pandas as pd\nfrom ..accounting.ledger import LedgerEntry\n"
            "E = LedgerEntry('x')\nTABLE = {}\nTABLE['a'] = 1\nprint(E)\n"
            "pd.set_option('x', 1)\n",
            [],
        ),
    ],
    ids=["register-call", "list-append", "dict-item", "module-attribute", "decorator", "own"],
)
def test_the_registration_check_catches_what_it_looks_for(source: str, found: list[str]) -> None:
    assert registrations_of(source, "pandas_dp.pipeline.planning") == found


def test_the_length_check_catches_a_long_module() -> None:
    sources = {"pandas_dp.a": "x = 1\n" * 1001, "pandas_dp.b": "x = 1\n" * 1000}
    assert long_modules(sources) == {"pandas_dp.a"}


def test_the_floor_checks_catch_an_upward_or_private_import() -> None:
    graph = {
        "pandas_dp.core.noise": {"pandas_dp.kinds.base"},  # up
        "pandas_dp.kinds.base": {
            "pandas_dp.datasets",
            "pandas_dp.accounting._view",
        },  # a top module, a private module of another room
        "pandas_dp.accounting.budget": {"pandas_dp.accounting._view", "pandas_dp.core.noise"},
        "pandas_dp.datasets": set(),
        "pandas_dp.accounting._view": set(),
        "pandas_dp": {"pandas_dp.kinds.base"},
    }
    assert upward_imports(graph) == [
        "pandas_dp.core.noise imports pandas_dp.kinds.base",
        "pandas_dp.kinds.base imports pandas_dp.datasets",
    ]
    assert private_imports(graph) == ["pandas_dp.kinds.base imports pandas_dp.accounting._view"]


def test_relative_imports_resolve_from_a_room() -> None:
    sources = {
        "pandas_dp.kinds": "from . import base\n",
        "pandas_dp.kinds.base": "from ..core import noise\nfrom ..core.zcdp import x\n",
        "pandas_dp.core": "",
        "pandas_dp.core.noise": "",
        "pandas_dp.core.zcdp": "",
    }
    graph, _ = graph_of(sources)
    assert graph["pandas_dp.kinds"] == {"pandas_dp.kinds.base"}
    assert graph["pandas_dp.kinds.base"] == {"pandas_dp.core.noise", "pandas_dp.core.zcdp"}
