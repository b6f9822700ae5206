"""``python -m pandas_dp demo``: the salary story runs, spends its budget and is reproducible."""

from __future__ import annotations

import pytest

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
