"""A mypy plugin that types ``df.dp`` as :class:`~pandas_dp.surface.accessor.DPAccessor`.

pandas-stubs type any attribute a DataFrame does not declare through
``DataFrame.__getattr__``, as a column: ``df.dp`` is a ``Series`` there, and
every ``df.dp.mean(...)`` an error. Name this module in the mypy configuration::

    [tool.mypy]
    plugins = ["pandas_dp.mypy"]

and ``df.dp`` has the accessor's type (what ``pandas_dp.dp(df)`` returns), so
its calls are checked: a missing ``epsilon`` or an argument of the wrong type is
still an error. Only mypy loads this module; ``import pandas_dp`` never imports
it (mypy is a development dependency, not a runtime one).

Pyright has no plugins: there, use the typed path ``pandas_dp.dp(df)``.
"""

from __future__ import annotations

from collections.abc import Callable

from mypy.nodes import Import, ImportAll, ImportFrom, MypyFile, TypeInfo
from mypy.plugin import AttributeContext, Plugin
from mypy.types import Instance, Type

ACCESSOR = "pandas_dp.surface.accessor.DPAccessor"
# mypy names an attribute found through __getattr__ after the class that defines it.
DATAFRAME_DP = "pandas.core.frame.DataFrame.dp"
# Modules that never need the accessor (adding it to them would make an import cycle).
OWN = ("pandas", "pandas_dp", "numpy")


def _imports_pandas(file: MypyFile) -> bool:
    """Whether ``file`` imports pandas or pandas_dp (and so may touch ``df.dp``)."""
    for node in file.imports:
        if isinstance(node, Import):
            names = [name for name, _ in node.ids]
        elif isinstance(node, ImportFrom | ImportAll):
            names = [node.id]
        else:  # pragma: no cover - mypy has no other import node
            continue
        if any(name.split(".")[0] in {"pandas", "pandas_dp"} for name in names):
            return True
    return False


class PandasDPPlugin(Plugin):
    """``df.dp`` is a :class:`~pandas_dp.surface.accessor.DPAccessor`."""

    def get_additional_deps(self, file: MypyFile) -> list[tuple[int, str, int]]:
        # A module may call df.dp on a frame it was handed without importing
        # pandas_dp itself: load the accessor before it is checked.
        if file.fullname.split(".")[0] in OWN or not _imports_pandas(file):
            return []
        return [(10, "pandas_dp.surface.accessor", -1)]

    def get_attribute_hook(self, fullname: str) -> Callable[[AttributeContext], Type] | None:
        return self._accessor if fullname == DATAFRAME_DP else None

    def _accessor(self, ctx: AttributeContext) -> Type:
        node = self.lookup_fully_qualified(ACCESSOR)
        if node is None or not isinstance(node.node, TypeInfo):
            return ctx.default_attr_type  # pandas_dp is not part of this check
        return Instance(node.node, [])


def plugin(version: str) -> type[Plugin]:
    """mypy's entry point: the plugin class (any mypy version that has the hooks)."""
    return PandasDPPlugin
