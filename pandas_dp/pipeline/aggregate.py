"""``agg``: several statistics of several columns in one call, shaped as pandas shapes them.

``df.dp.agg({"salary": ["mean", "std"], "age": "median"}, epsilon=1, clip=...,
candidates=...)`` is a recipe of steps: one release per (column, statistic),
each with an equal share of the call's ε (or ρ), all held at once, one
ledger entry each (release ``agg``).  Every part is built and checked
against the schema (arguments, columns, dtypes) before the first spends.
Grouped over public keys, every part answers the same keys; without
``keys=``, the first part chooses them (spending ``delta``) and the others
answer the keys it released, public once released.

Shapes (as pandas' ``DataFrame.agg`` and ``DataFrameGroupBy.agg``): a
mapping of single names gives a Series indexed by column (grouped: a
DataFrame, one column each); any list gives a DataFrame indexed by the
statistics with a column each (NaN where a statistic was not asked of a
column; grouped: columns ``(column, statistic)``).
"""

from __future__ import annotations

import ast
import contextlib
import dataclasses
from collections.abc import Hashable, Mapping
from fractions import Fraction
from typing import Any

import pandas as pd

from ..core.validation import check_loss, check_readable
from ..kinds.count import COUNT
from ..kinds.nunique import NUNIQUE
from ..kinds.quantile import MEDIAN
from ..kinds.signature import MAX_GROUPS, Signature
from ..kinds.sums import MEAN, SUM
from ..kinds.variance import STD, VAR
from ..mechanisms.key_selection import KeySelection
from ..mechanisms.keys import Grouping
from .recipes import Request, answer, recipe
from .run import Frame

__all__ = ["AGGREGATIONS", "aggregate", "parts_of"]

#: The statistics ``agg`` takes by name, and the release each one is.
AGGREGATIONS: dict[str, Signature] = {
    "count": COUNT,
    "sum": SUM,
    "mean": MEAN,
    "var": VAR,
    "std": STD,
    "median": MEDIAN,
    "nunique": NUNIQUE,
}


def parts_of(func: object) -> tuple[list[tuple[Hashable, str]], bool]:
    """The (column, statistic) parts of ``func``, in order, and whether any was a list.

    ``func`` maps each column to a statistic's name or a list of them (as
    pandas' ``agg``); refused (TypeError or ValueError naming what is wrong):
    anything else, an unknown name, a statistic asked twice of a column.
    """
    names = ", ".join(repr(n) for n in AGGREGATIONS)
    if not isinstance(func, Mapping) or not func:
        raise TypeError(
            "`func` must be a mapping from columns to statistics, e.g. "
            f"{{'salary': ['mean', 'std'], 'age': 'median'}}, of {names}; got {func!r}."
        )
    parts: list[tuple[Hashable, str]] = []
    listed = False
    for column, asked in func.items():
        listed |= isinstance(asked, list | tuple)
        statistics = list(asked) if isinstance(asked, list | tuple) else [asked]
        for name in statistics:
            if not isinstance(name, str) or name not in AGGREGATIONS:
                raise ValueError(
                    f"`func` names a statistic agg does not take: {name!r}; take {names}."
                )
            if (column, name) in parts:
                raise ValueError(f"`func` asks {name!r} of {column!r} twice.")
            parts.append((column, name))
    if not parts:
        raise ValueError("`func` asks for no statistic.")
    return parts, listed


def _per_column(value: object, column: Hashable) -> object:
    """``clip``/``candidates`` for one column: its entry of a mapping, else the value itself."""
    if isinstance(value, Mapping):
        return value.get(column)
    return value


def _defaults(signature: Signature) -> dict[str, Any]:
    """Every parameter of ``signature`` (grouped and keyless too) at its declared default."""
    params = (*signature.scoped("keyless"), MAX_GROUPS)
    return {
        p.name: None if p.default == "<required>" else ast.literal_eval(p.default) for p in params
    }


def _request(
    column: Hashable, name: str, share: tuple[str, Fraction], given: Mapping[str, Any]
) -> Request:
    signature = AGGREGATIONS[name]
    args = _defaults(signature)
    accountant, amount = share
    args.update(
        {k: v for k, v in given.items() if k in args},
        epsilon=None,
        rho=None,
        column=column,
    )
    args[accountant] = amount
    if "clip" in args:
        args["clip"] = _per_column(given.get("clip"), column)
    if "candidates" in args:
        args["candidates"] = _per_column(given.get("candidates"), column)
    return Request(
        signature.build,
        args,
        signature.columns(args),
        table=signature.table,
        clipped=signature.clipped,
        name="agg",
    )


def aggregate(frame: Frame, group: Grouping | None, func: object, given: Mapping[str, Any]) -> Any:
    """Release every part of ``func`` on ``frame`` (grouped by ``group``), ε split equally.

    ``given``: the call's other arguments (``epsilon`` or ``rho``, ``clip``,
    ``candidates``, ``max_rows``, ``max_groups``, ``delta``).  Everything a
    part would refuse from its arguments and the dtypes is refused before
    the first part spends; the whole loss is held first.
    """
    accountant, total = check_loss(given.get("epsilon"), given.get("rho"))
    parts, listed = parts_of(func)
    share = (accountant, total / len(parts))
    requests = [_request(column, name, share, given) for column, name in parts]
    binding = frame.binding()

    def defaults() -> tuple[int | None, int | None] | None:
        if binding.unit is None:
            return None
        return binding.budget.max_rows, binding.budget.max_groups

    schema = frame.schema().iloc[:0]
    for request in requests:  # each part's arguments and columns, before anything is spent
        cooked = recipe(request, group, defaults)
        statistic = cooked.statistic or cooked.steps[0].kind({})
        check_readable(schema, [*(() if group is None else group.by), *statistic.columns()])
        statistic.read(schema, 0)
        if type(group) is Grouping:
            group.check(schema)
    budget = binding.budget
    hold = contextlib.nullcontext() if budget.holding else budget.hold(total, accountant)
    answers: dict[tuple[Hashable, str], Any] = {}
    with hold:
        over = group
        for (column, name), request in zip(parts, requests, strict=True):
            if isinstance(group, KeySelection) and answers:  # the keys the first part chose
                released = next(iter(answers.values())).index
                over = Grouping(group.by, released.view())
                request = dataclasses.replace(request, args={**request.args, "delta": None})
            answers[column, name] = answer(frame, over, request)
    return _shaped(parts, listed, answers, grouped=group is not None)


def _shaped(
    parts: list[tuple[Hashable, str]],
    listed: bool,
    answers: Mapping[tuple[Hashable, str], Any],
    grouped: bool,
) -> Any:
    """The answers as pandas' ``agg`` shapes them (see the module docstring)."""
    if grouped:
        table = pd.DataFrame({part: answers[part] for part in parts})
        if not listed:
            table.columns = pd.Index([column for column, _ in parts])
        return table
    if not listed:
        return pd.Series([answers[part] for part in parts], index=[c for c, _ in parts])
    names = list(dict.fromkeys(name for _, name in parts))
    columns = list(dict.fromkeys(column for column, _ in parts))
    table = pd.DataFrame(index=pd.Index(names), columns=pd.Index(columns), dtype="float64")
    for (column, name), value in answers.items():
        table.loc[name, column] = float(value)
    return table
