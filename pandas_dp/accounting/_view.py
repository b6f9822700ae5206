"""How a budget reads: its facts, as an HTML view (Jupyter) and as text (``print``).

:meth:`pandas_dp.accounting.budget.PrivacyBudget.facts` lists what a budget states, one
``(label, value)`` pair per line (total, spent, remaining, accountant, the
privacy unit and bounds, ...): a new fact (a δ, a ρ) is one more pair there,
and both views show it.  Every figure is written by
:func:`pandas_dp.core.text.number_text`; every cell is padded by an inline style,
so the HTML reads the same without a notebook's CSS.  Public parameters only:
never a data value, a released value or a key.
"""

from __future__ import annotations

import html
import itertools
from collections.abc import Sequence
from fractions import Fraction

from ..core.text import labelled_figures, number_text
from .ledger import LedgerEntry

__all__ = [
    "LAST",
    "columns_label",
    "epsilon_figure",
    "half_width_figure",
    "html_view",
    "planned_figure",
    "release_headers",
    "text_view",
]

#: How many of the latest releases the views list (all of them: ``budget.ledger``).
LAST = 5
_CELL = "padding:3px 10px;border-bottom:1px solid #e5e5e5;text-align:left"
_NUMBER = "padding:3px 10px;border-bottom:1px solid #e5e5e5;text-align:right"
_HALF_WIDTH_TITLE = (
    "half-width of the 95% noise interval, from public parameters (count, sum; a mean's "
    "depends on the number of rows: pandas_dp.half_width)"
)
RELEASE_HEADERS = ("#", "release", "columns", "ε", "± at 95%", "spent after")
#: The cost column's header under each accountant (a ρ budget lists each release's ρ; a
#: budget composed by PLD each release's ε, or ρ for a Gaussian one).
COST_HEADER = {"epsilon": "ε", "rho": "ρ", "pld": "ε or ρ"}
#: The column of a release of a plan: its planned and realised half-widths.
PLANNED_HEADER = "planned → realised"


def release_headers(accountant: str, planned: bool = False) -> tuple[str, ...]:
    """:data:`RELEASE_HEADERS`, the cost column named for the budget's ``accountant``.

    ``planned``: with :data:`PLANNED_HEADER` before the spend (some release was planned).
    """
    extra = (PLANNED_HEADER,) if planned else ()
    return (
        *RELEASE_HEADERS[:3],
        COST_HEADER[accountant],
        *RELEASE_HEADERS[4:5],
        *extra,
        "spent after",
    )


def epsilon_figure(x: Fraction) -> str:
    """An epsilon as the views write it: six significant figures (``2.67``)."""
    return number_text(x, 6)


def half_width_figure(entry: LedgerEntry) -> str:
    """An entry's 95% half-width, each figure labelled by its column (``salary ±2,400,000``)."""
    return labelled_figures(entry.columns, entry.half_width_95)


def columns_label(entry: LedgerEntry) -> str:
    """The columns a release read, and those it was grouped by (``salary by dept``)."""
    read = ", ".join(entry.columns)
    by = [column for column in entry.grouping if column not in entry.columns]
    if not by:
        return read or "—"
    return f"{read} by {', '.join(by)}".lstrip()


def _cost(entry: LedgerEntry, accountant: str) -> str:
    """The cost cell: the entry's charge; under PLD its own ε, or its ρ (``ρ 0.01``)."""
    if accountant != "pld":
        return epsilon_figure(entry.charge(accountant))
    if entry.epsilon is not None:
        return epsilon_figure(entry.epsilon)
    return f"ρ {epsilon_figure(entry.rho or Fraction(0))}"


def planned_figure(entry: LedgerEntry) -> str:
    """A planned release's ``"±50 → ±49 at 95%"`` (its target, then what its noise gives)."""
    if not entry.planned:
        return ""
    planned, _, level = entry.planned.partition(" at ")
    realised = entry.realised.partition(" at ")[0]
    return f"{planned} → {realised} at {level}"


def _release_rows(
    entries: Sequence[LedgerEntry], accountant: str, spent: Sequence[Fraction] | None = None
) -> tuple[bool, list[tuple[str, ...]]]:
    """The latest :data:`LAST` releases, newest first, as the cells of :func:`release_headers`.

    ``spent``: what was spent after each entry (by default the running sum of the
    charges); the first value says whether a shown release was planned.
    """
    after = (
        spent if spent is not None else itertools.accumulate(e.charge(accountant) for e in entries)
    )
    numbered = list(enumerate(zip(entries, after, strict=True), start=1))[-LAST:]
    planned = any(entry.planned for _, (entry, _) in numbered)
    return planned, [
        (
            str(number),
            entry.label,
            columns_label(entry),
            _cost(entry, accountant),
            half_width_figure(entry),
            *((planned_figure(entry) or "—",) if planned else ()),
            epsilon_figure(spent_after),
        )
        for number, (entry, spent_after) in reversed(numbered)
    ]


def _caption(shown: int, count: int) -> str:
    if count > shown:
        return f"last {shown} of {count} releases, newest first (all of them: .ledger)"
    return f"releases, newest first ({count})"


def html_view(
    title: str,
    facts: Sequence[tuple[str, str]],
    entries: Sequence[LedgerEntry],
    share: float,
    accountant: str = "epsilon",
    spent: Sequence[Fraction] | None = None,
) -> str:
    """The HTML view: a title, a bar of the share spent, the facts and the latest releases.

    ``share`` is the part of the total spent or held (0 to 1); ``spent`` what
    was spent after each entry (see :func:`_release_rows`).  Every cell
    carries its padding and alignment inline.
    """
    colour = "#3a8f5c" if share < 0.8 else "#d98a00" if share < 1 else "#c0392b"
    fact_rows = "".join(
        f"<tr><th style='{_CELL};font-weight:normal;color:#555'>{html.escape(label)}</th>"
        f"<td style='{_CELL}'>{html.escape(value)}</td></tr>"
        for label, value in facts
    )
    planned, rows = _release_rows(entries, accountant, spent)
    if rows:
        head = "".join(
            f"<th style='{_NUMBER if i != 1 and i != 2 else _CELL}'"
            + (f" title='{_HALF_WIDTH_TITLE}'" if i == 4 else "")
            + f">{html.escape(name)}</th>"
            for i, name in enumerate(release_headers(accountant, planned))
        )
        body = "".join(
            "<tr>"
            + "".join(
                f"<td style='{_NUMBER if i != 1 and i != 2 else _CELL}'>{html.escape(cell)}</td>"
                for i, cell in enumerate(row)
            )
            + "</tr>"
            for row in rows
        )
        releases = (
            "<table style='margin-top:8px;border-collapse:collapse'>"
            f"<caption style='text-align:left;color:#666;padding:2px 0'>"
            f"{html.escape(_caption(len(rows), len(entries)))}</caption>"
            f"<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
        )
    else:
        releases = "<div style='color:#666;margin-top:8px'>no releases yet</div>"
    return (
        "<div class='pandas-dp-budget' style='font-family:sans-serif;font-size:13px;"
        "line-height:1.5'>"
        f"<div style='font-weight:bold;padding:2px 0'>{html.escape(title)}</div>"
        "<div style='display:flex;align-items:center;gap:8px;padding:2px 0'>"
        "<div style='width:240px;height:10px;background:#e5e5e5;border-radius:3px'>"
        f"<div style='width:{share * 100:.1f}%;height:10px;background:{colour};"
        "border-radius:3px'></div></div>"
        f"<span style='color:#666'>{share:.0%} spent</span></div>"
        f"<table style='border-collapse:collapse'><tbody>{fact_rows}</tbody></table>"
        f"{releases}</div>"
    )


def text_view(
    title: str,
    facts: Sequence[tuple[str, str]],
    entries: Sequence[LedgerEntry],
    accountant: str = "epsilon",
    spent: Sequence[Fraction] | None = None,
) -> str:
    """The text view (``print(budget)``): the facts, aligned, then the latest releases."""
    width = max((len(label) for label, _ in facts), default=0)
    lines = [title, *(f"  {label:<{width}}  {value}" for label, value in facts)]
    planned, rows = _release_rows(entries, accountant, spent)
    if not rows:
        return "\n".join([*lines, "  no releases yet"])
    table = [release_headers(accountant, planned), *rows]
    widths = [max(len(row[i]) for row in table) for i in range(len(table[0]))]
    lines.append(f"  {_caption(len(rows), len(entries))}:")
    for row in table:
        cells = [
            cell.rjust(w) if i not in (1, 2) else cell.ljust(w)
            for i, (cell, w) in enumerate(zip(row, widths, strict=True))
        ]
        lines.append("    " + "  ".join(cells).rstrip())
    return "\n".join(lines)
