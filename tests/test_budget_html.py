"""How a budget reads: the one-line ``repr`` and the HTML view Jupyter shows."""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import subprocess
from fractions import Fraction
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

import pandas_dp  # noqa: F401  (registers df.dp)
from pandas_dp.accounting.budget import PrivacyBudget
from pandas_dp.accounting.ledger import LedgerEntry, MemoryStore
from pandas_dp.core.noise import make_source

VOID = {"br", "hr", "img", "meta", "input", "wbr"}


class _TagChecker(HTMLParser):
    """Records every tag; fails on a closing tag that does not match the open one."""

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[str] = []
        self.errors: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag not in VOID:
            self.stack.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if not self.stack or self.stack.pop() != tag:
            self.errors.append(tag)


def _budget(total: float = 1.0, *, seed: int | None = 1, name: str | None = None) -> PrivacyBudget:
    return PrivacyBudget(
        MemoryStore(Fraction(repr(total))),
        adjacency="add_remove",
        source=make_source(seed),
        seed=seed,
        name=name,
    )


def _spend(budget: PrivacyBudget, *epsilons: str, column: str = "salary") -> None:
    for eps in epsilons:
        # as a mean's release records it: its half-width depends on the number of rows
        entry = LedgerEntry("mean", Fraction(eps), columns=(column,), half_width_95="depends on n")
        budget.spend(entry)


def _rows(page: str) -> list[list[str]]:
    """The cells of the releases table (the one with a header row)."""
    body = re.search(r"</thead><tbody>(.*?)</tbody>", page)
    assert body is not None
    return [re.findall(r"<td[^>]*>(.*?)</td>", row) for row in body[1].split("</tr>") if row]


def _facts(page: str) -> dict[str, str]:
    """The facts table: label -> value."""
    return dict(re.findall(r"<tr><th[^>]*>(.*?)</th><td[^>]*>(.*?)</td></tr>", page))


def test_html_shows_total_spent_and_remaining_exactly() -> None:
    budget = _budget(1.0)
    _spend(budget, "0.1", "0.2")
    facts = _facts(budget._repr_html_())
    assert (facts["total ε"], facts["spent"], facts["remaining"]) == ("1", "0.3", "0.7")


@pytest.mark.parametrize(
    ("unit", "bounds", "expected"),
    [
        (None, {}, {"privacy unit": "one row", "accountant": "ε (pure)"}),
        (
            "customer",
            {"max_rows": 2_000, "max_groups": 3},
            {"privacy unit": "column customer", "bounds": "max_rows=2,000, max_groups=3"},
        ),
    ],
)
def test_views_state_the_unit_bounds_and_accountant(
    unit: str | None, bounds: dict[str, int], expected: dict[str, str]
) -> None:
    budget = PrivacyBudget(
        MemoryStore(Fraction(1)),
        adjacency="add_remove",
        source=make_source(1),
        privacy_unit=unit,
        **bounds,
    )
    facts = _facts(budget._repr_html_())
    text = str(budget)
    for label, value in expected.items():
        assert facts[label] == value
        assert re.search(rf"^  {re.escape(label)} +{re.escape(value)}$", text, re.MULTILINE)
    assert ("bounds" in facts) is bool(bounds)


def test_half_width_of_a_sum_over_columns_is_labelled_per_column() -> None:
    df = pd.DataFrame({"salary": np.linspace(0, 2e5, 50), "bonus": np.linspace(0, 5e4, 50)})
    df.dp.set_budget(epsilon=1, seed=2)
    df.dp.sum(clip={"salary": (0, 2e5), "bonus": (0, 5e4)}, epsilon=0.5)
    cell = _rows(df.dp.budget._repr_html_())[0][4]
    assert re.fullmatch(r"salary ±[0-9,]+; bonus ±[0-9,]+", cell), cell
    figures = [int(v.replace(",", "")) for v in re.findall(r"±([0-9,]+)", cell)]
    assert all(len(str(v).rstrip("0")) <= 3 for v in figures)  # three significant figures


def test_every_cell_is_padded_inline() -> None:
    budget = _budget(10.0, name="payroll")
    _spend(budget, "1", "2")
    cells = re.findall(r"<(td|th)( [^>]*)?>", budget._repr_html_())
    assert len(cells) > 10
    assert all("padding:" in (attrs or "") for _, attrs in cells)


def test_str_is_the_text_view_and_repr_one_line() -> None:
    budget = _budget(3.0, seed=None)
    _spend(budget, "0.33", "1")
    text = str(budget)
    assert text.splitlines()[0] == "PrivacyBudget"
    assert "  remaining     1.67" in text
    assert "releases, newest first (2):" in text


@pytest.mark.parametrize(
    ("spends", "width", "label"),
    [
        ((), "0.0%", "0% spent"),
        (("0.25",), "25.0%", "25% spent"),
        (("0.5", "0.5"), "100.0%", "100% spent"),
    ],
)
def test_html_bar_is_the_share_spent(spends: tuple[str, ...], width: str, label: str) -> None:
    budget = _budget(1.0)
    _spend(budget, *spends)
    page = budget._repr_html_()
    assert f"width:{width};" in page
    assert label in page


def test_html_lists_the_last_five_releases_newest_first() -> None:
    budget = _budget(10.0)
    for i in range(7):
        _spend(budget, "0.5", column=f"c{i}")
    page = budget._repr_html_()
    rows = _rows(page)
    assert [row[0] for row in rows] == ["7", "6", "5", "4", "3"]
    assert [row[2] for row in rows] == ["c6", "c5", "c4", "c3", "c2"]
    assert [row[5] for row in rows] == ["3.5", "3", "2.5", "2", "1.5"]
    assert [row[3] for row in rows] == ["0.5"] * 5
    assert [row[4] for row in rows] == ["depends on n"] * 5  # as recorded with each entry
    assert "last 5 of 7 releases" in page


def test_html_says_when_nothing_was_released() -> None:
    assert "no releases yet" in _budget()._repr_html_()


@pytest.mark.parametrize(("seed", "warned"), [(None, False), (7, True)])
def test_html_warns_only_when_seeded(seed: int | None, warned: bool) -> None:
    assert ("NOT private" in _budget(seed=seed)._repr_html_()) is warned


def test_html_escapes_names_and_columns() -> None:
    budget = _budget(name="<i>team</i>")
    _spend(budget, "0.5", column="<script>x</script>")
    page = budget._repr_html_()
    assert "<script>" not in page
    assert "<i>" not in page
    assert "&lt;script&gt;x&lt;/script&gt;" in page
    assert "&lt;i&gt;team&lt;/i&gt;" in page


@pytest.mark.parametrize("n_releases", [0, 1, 5, 9])
def test_html_is_well_formed(n_releases: int) -> None:
    budget = _budget(10.0, name="payroll")
    _spend(budget, *["1"] * n_releases)
    checker = _TagChecker()
    checker.feed(budget._repr_html_())
    checker.close()
    assert checker.errors == []
    assert checker.stack == []


def test_html_shows_no_data_value_or_released_value() -> None:
    df = pd.DataFrame({"salary": np.full(1234, 54_321.0), "dept": ["Legal-7"] * 1234})
    budget = df.dp.set_budget(epsilon=3, seed=3)
    count = df.dp.count(epsilon=1)
    total = df.dp.sum("salary", clip=(0, 100_000), epsilon=1)
    per_dept = df.dp.groupby("dept", keys=["Legal-7", "Ops"]).count(epsilon=1)
    page = budget._repr_html_()
    for secret in ["1234", "54321", "54,321", "Legal-7", str(count), f"{total:g}"]:
        assert secret not in page
    assert str(per_dept.iloc[0]) not in re.sub(r"<[^>]*>", " ", page).split()


@pytest.mark.parametrize("seed", [None, 5])
def test_repr_is_one_short_line(seed: int | None) -> None:
    budget = _budget(3.0, seed=seed)
    _spend(budget, *["0.1"] * 20)
    text = repr(budget)
    assert "\n" not in text
    assert len(text) <= 120
    assert text.startswith("PrivacyBudget(total=3, spent=2, remaining=1,")
    assert ("NOT PRIVATE" in text) is (seed is not None)


# ------------------------------------------------------ the view in a real browser

#: Browsers that render the view headless, first found wins (PANDAS_DP_BROWSER overrides).
BROWSERS = ("chromium", "chromium-browser", "google-chrome", "chrome")
#: Flags for a headless run as any user, root included, that touches no network or profile.
BROWSER_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)
# Writes what the browser computed for every cell of the view into <pre id="out">, as JSON.
_MEASURE = """
<pre id="out"></pre>
<script>
const cells = [...document.querySelectorAll(".pandas-dp-budget td, .pandas-dp-budget th")];
document.getElementById("out").textContent = JSON.stringify(cells.map(cell => {
  const style = getComputedStyle(cell);
  return {text: cell.textContent, left: parseFloat(style.paddingLeft),
          right: parseFloat(style.paddingRight), align: style.textAlign,
          width: cell.getBoundingClientRect().width};
}));
</script>
"""


def _browser() -> str:
    found = os.environ.get("PANDAS_DP_BROWSER") or next(
        (path for name in BROWSERS if (path := shutil.which(name))), None
    )
    if found is None:
        pytest.skip(
            "no headless browser (chromium) is installed: the HTML view is checked in one only "
            "where one exists (CI does not install it; apt-get install chromium to run this)"
        )
    return found


def _rendered_cells(page: str, folder: Path) -> list[dict[str, Any]]:
    """Every cell of ``page`` as a real browser lays it out, with no stylesheet but the view's."""
    document = folder / "budget.html"
    document.write_text(
        f"<!doctype html><html><head><meta charset='utf-8'></head><body>{page}{_MEASURE}"
        "</body></html>",
        encoding="utf-8",
    )
    result = subprocess.run(
        [
            _browser(),
            *BROWSER_FLAGS,
            f"--user-data-dir={folder / 'profile'}",
            "--dump-dom",
            document.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=180,
        check=True,
    )
    out = re.search(r'<pre id="out">(.*?)</pre>', result.stdout, re.DOTALL)
    assert out is not None, result.stdout[-2000:]
    cells: list[dict[str, Any]] = json.loads(html.unescape(out[1]))
    return cells


def test_a_browser_shows_every_cell_padded_labelled_and_aligned(tmp_path: Path) -> None:
    df = pd.DataFrame({"salary": np.linspace(0, 2e5, 50), "bonus": np.linspace(0, 5e4, 50)})
    df.dp.set_budget(epsilon=3, privacy_unit=None)
    df.dp.count(epsilon=0.5)
    df.dp.sum(clip={"salary": (0, 2e5), "bonus": (0, 5e4)}, epsilon=0.33)
    cells = _rendered_cells(df.dp.budget._repr_html_(), tmp_path)
    texts = [cell["text"] for cell in cells]
    assert texts[:2] == ["total ε", "3"]
    assert texts[texts.index("remaining") + 1] == "2.17"
    assert texts[texts.index("accountant") + 1] == "ε (pure)"
    assert texts[texts.index("privacy unit") + 1] == "one row"
    [half_width] = [t for t in texts if t.startswith("salary ±")]
    assert re.fullmatch(r"salary ±[0-9,]+; bonus ±[0-9,]+", half_width)
    assert "±6" in texts  # the count's
    for cell in cells:  # padded by the view itself: "0.5" and "depends on n" never touch
        assert cell["left"] >= 6, cell
        assert cell["right"] >= 6, cell
    releases = cells[texts.index("#") :]  # the releases table: its figures right-aligned
    figures = [c for c in releases if re.fullmatch(r"±[0-9,]+|[0-9.]+", c["text"])]
    assert len(figures) >= 6
    assert all(c["align"] == "right" for c in figures)
