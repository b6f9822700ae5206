"""``python -m pandas_dp``: the demo runs, spends its budget and is reproducible; the ledger
views fit 100 columns; the help is plain text."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import pandas_dp  # noqa: F401  (registers df.dp)
from pandas_dp import datasets
from pandas_dp.__main__ import main


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    assert main(["demo", *argv]) == 0
    return capsys.readouterr().out


def test_demo_tells_the_whole_story(capsys: pytest.CaptureFixture[str]) -> None:
    out = run(capsys, "--seed", "1")
    for part in (
        "set_budget(epsilon=5.0)",
        "ledger",
        "BudgetExceededError",
        "spent 4.3 of 5",
        "Still spent: 4.3",
    ):
        assert part in out


def test_demo_with_a_seed_is_reproducible(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "--seed", "3") == run(capsys, "--seed", "3")


def test_demo_without_a_seed_uses_fresh_noise(capsys: pytest.CaptureFixture[str]) -> None:
    first, second = run(capsys), run(capsys)
    assert "NOT PRIVATE" not in first
    assert first != second


def test_a_command_is_required() -> None:
    with pytest.raises(SystemExit):
        main([])


# ------------------------------------------------------------ python -m pandas_dp ledger


@pytest.fixture
def busy_ledger(tmp_path: Path) -> Path:
    """A ledger with the widest entries a person meets: sums over columns, grouped, units."""
    path = tmp_path / "privacy-ledger.sqlite"
    df = datasets.salaries(300, seed=1)
    df.dp.set_budget(epsilon=5, ledger=path, name="hr.salaries.nightly-report", seed=3)
    df.dp.count(epsilon=0.1)
    df.dp.sum(clip={"salary": (0, 2e5), "bonus": (0, 5e4)}, epsilon=0.2)
    keys = list(datasets.DEPARTMENTS)
    df.dp.groupby("dept", keys=keys).mean("salary", clip=(0, 250_000), epsilon=0.2)
    df.dp.quantile("salary", 0.9, candidates=list(range(0, 300_000, 1_000)), epsilon=0.3)
    tx = datasets.orders(200)
    tx.dp.set_budget(epsilon=2, privacy_unit="customer_id", ledger=path, name="orders")
    tx.dp.groupby("product", keys=sorted(tx["product"].unique())).count(
        epsilon=0.5, max_groups=3, max_rows=2
    )
    with tx.dp.reserve(epsilon=0.5):  # a hold shows while its block runs
        pass
    return path


@pytest.mark.parametrize("name", [None, "hr.salaries.nightly-report", "orders"])
def test_the_ledger_views_fit_100_columns(
    busy_ledger: Path, name: str | None, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["ledger", str(busy_ledger)] + ([] if name is None else ["--name", name])
    assert main(args) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) > 3
    assert max(len(line) for line in lines[1:]) <= 100  # the first line names the file


def test_the_history_shows_each_field_labelled_with_readable_figures(
    busy_ledger: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["ledger", str(busy_ledger), "--name", "hr.salaries.nightly-report"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"± at 95% salary ±[0-9,]+; bonus ±[0-9,]+", out)
    assert "clip [0, 200000]; [0, 50000]" in out
    assert "2396585" not in out  # no raw float


def test_a_pld_budget_shows_its_accountant_spent_and_plan(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("dp_accounting")
    path = tmp_path / "ledger.sqlite"
    df = datasets.salaries(300, seed=1)
    budget = df.dp.set_budget(
        epsilon=1, delta=1e-6, accountant="pld", ledger=path, name="hr", seed=3
    )
    df.dp.plan([("count",), ("median", "salary", {"candidates": list(range(0, 300_000, 1_000))})],
               half_width=[30, 20], level=0.9).run()  # fmt: skip
    df.dp.count(rho=0.001)
    assert main(["ledger", str(path)]) == 0
    out = capsys.readouterr().out
    assert re.search(r"hr\s+1\s+" + f"{float(budget.spent):.6g}".replace(".", r"\."), out)
    assert "accountant pld" in out
    assert "privacy loss distributions" in out
    assert main(["ledger", str(path), "--name", "hr"]) == 0
    out = capsys.readouterr().out
    assert "planned ± ±30 at 90%" in out
    assert "realised ± ±" in out
    assert "events discrete_laplace(scale=" in out
    assert "events discrete_gaussian(sigma2=500, sensitivity=1)" in out
    assert max(len(line) for line in out.splitlines()[1:]) <= 100


@pytest.mark.parametrize("argv", [["--help"], ["ledger", "--help"], ["demo", "--help"]])
def test_help_is_plain_text(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        main(argv)
    assert done.value.code == 0
    out = capsys.readouterr().out
    assert "usage: python -m pandas_dp" in out
    assert not re.search(r"``|:func:|:class:|:meth:|:mod:", out)
    assert max(len(line) for line in out.splitlines()) <= 100
