"""How a budget reads: the one-line ``repr`` and the HTML view Jupyter shows."""

from __future__ import annotations

import re
from fractions import Fraction
from html.parser import HTMLParser

import numpy as np
import pandas as pd
import pytest

import pandas_dp  # noqa: F401  (registers df.dp)
from pandas_dp.budget import PrivacyBudget
from pandas_dp.ledger import LedgerEntry, MemoryStore
from pandas_dp.noise import make_source

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
    body = re.search(r"<tbody>(.*)</tbody>", page)
    assert body is not None
    return [re.findall(r"<td[^>]*>(.*?)</td>", row) for row in body[1].split("</tr>") if row]


def test_html_shows_total_spent_and_remaining_exactly() -> None:
    budget = _budget(1.0)
    _spend(budget, "0.1", "0.2")
    page = budget._repr_html_()
    assert "total ε <b>1</b>" in page
    assert "spent <b>0.3</b>" in page
    assert "remaining <b>0.7</b>" in page


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
