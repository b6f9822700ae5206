"""An (ε, δ) budget composes by PLD by default where ``dp_accounting`` is installed.

``set_budget(epsilon=..., delta=...)`` without ``accountant=`` chooses
``"pld"`` when the library is found (looked for, never imported until the
first composition), else adds ε and δ up with a note in its views;
``accountant="epsilon"`` asks for the addition on purpose.  Pure-ε and ρ
budgets keep their meaning.  A named budget keeps the accountant recorded when
it was created, whatever a later process has installed; a PLD one is refused
where the library is missing.  Unavailability is simulated by monkeypatching
:func:`pandas_dp.accounting._pld.available` (and in a subprocess, by hiding
the module).
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from fractions import Fraction
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from pandas_dp.__main__ import main
from pandas_dp.accounting import _pld
from pandas_dp.accounting.ledger import NO_PLD
from pandas_dp.errors import BudgetExceededError, BudgetMismatchError

pytest.importorskip("dp_accounting")

ROOT = Path(__file__).resolve().parents[1]
DELTA = Fraction(1, 10**6)


@pytest.fixture
def df() -> pd.DataFrame:
    return pd.DataFrame({"x": np.arange(200)})


@pytest.fixture
def without_pld(monkeypatch: pytest.MonkeyPatch) -> None:
    """This process as if ``dp_accounting`` were not installed."""
    monkeypatch.setattr(_pld, "available", lambda: False)


def test_the_default_of_an_epsilon_delta_budget_is_pld(df: pd.DataFrame) -> None:
    budget = df.dp.set_budget(epsilon=1.0, delta=1e-6, seed=1)
    assert budget.accountant == "pld"
    assert budget.note == ""
    for _ in range(100):  # 100 counts of ε = 0.02: added up, 2 (only 50 would fit)
        df.dp.count(epsilon=0.02)
    events = [event for entry in budget.entries for event in entry.privacy_events]
    assert len(events) == 100
    # spent is the PLD ε at the budget's δ of the 100 releases, recomputed from their events
    assert budget.spent == Fraction(_pld.epsilon_at(events, DELTA, DELTA))
    assert 0.8 < budget.spent < 0.85  # below the total, 1, where the sum is 2
    assert "spent (ε at δ=1e-06)" in str(budget)


def test_accountant_epsilon_adds_epsilon_and_delta_up_on_purpose(df: pd.DataFrame) -> None:
    budget = df.dp.set_budget(epsilon=1.0, delta=1e-6, accountant="epsilon", seed=1)
    assert (budget.accountant, budget.note) == ("epsilon", "")
    for _ in range(50):
        df.dp.count(epsilon=0.02)
    assert budget.spent == 1  # exactly: 50 × 1/50
    with pytest.raises(BudgetExceededError):
        df.dp.count(epsilon=0.02)
    with pytest.raises(ValueError, match="rho"):
        df.dp.count(rho=0.001)


def test_without_dp_accounting_the_default_adds_up_and_says_so(
    df: pd.DataFrame, without_pld: None
) -> None:
    # no warning (the suite turns warnings into errors): it was not asked for PLD
    budget = df.dp.set_budget(epsilon=1.0, delta=1e-6, seed=1)
    assert budget.accountant == "epsilon"
    assert budget.note == NO_PLD
    assert "dp_accounting is not installed" in str(budget)
    assert "dp_accounting is not installed" in budget._repr_html_()
    for _ in range(50):
        df.dp.count(epsilon=0.02)
    assert budget.spent == 1
    with pytest.raises(BudgetExceededError):
        df.dp.count(epsilon=0.02)


@pytest.mark.parametrize("installed", [True, False])
@pytest.mark.parametrize(
    ("kwargs", "accountant"),
    [
        ({"epsilon": 1.0}, "epsilon"),
        ({"rho": 0.1}, "rho"),
        ({"rho": 0.1, "delta": 1e-6}, "rho"),
        ({"epsilon": 1.0, "accountant": "epsilon"}, "epsilon"),
    ],
)
def test_pure_epsilon_and_rho_budgets_keep_their_meaning(
    df: pd.DataFrame,
    monkeypatch: pytest.MonkeyPatch,
    installed: bool,
    kwargs: dict[str, object],
    accountant: str,
) -> None:
    monkeypatch.setattr(_pld, "available", lambda: installed)
    budget = df.dp.set_budget(**kwargs, seed=1)  # type: ignore[arg-type]
    assert (budget.accountant, budget.note) == (accountant, "")
    df.dp.count(epsilon=0.25)
    assert budget.spent == (Fraction(1, 4) if accountant == "epsilon" else Fraction(1, 32))


def test_a_named_ledger_budget_keeps_the_accountant_it_was_created_with(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "ledger.sqlite"
    with monkeypatch.context() as patch:  # created without dp_accounting: added up
        patch.setattr(_pld, "available", lambda: False)
        first = pd.DataFrame({"x": [1, 2]})
        created = first.dp.set_budget(epsilon=1, delta=1e-6, ledger=path, name="adds", seed=1)
        assert created.accountant == "epsilon"
        first.dp.count(epsilon=0.5)
    again = pd.DataFrame({"x": [1, 2]})  # dp_accounting is installed now
    budget = again.dp.set_budget(epsilon=1, delta=1e-6, ledger=path, name="adds", seed=1)
    assert budget.accountant == "epsilon"
    assert budget.note == ""  # the facts name its accountant; it is not for want of the library
    again.dp.count(epsilon=0.5)
    assert budget.spent == 1  # the two counts added up, across attaches
    with pytest.raises(BudgetMismatchError, match="its accountant stays"):
        pd.DataFrame({"x": [1]}).dp.set_budget(
            epsilon=1, delta=1e-6, accountant="pld", ledger=path, name="adds"
        )
    # and the other way: created by PLD, continued by PLD
    pld = pd.DataFrame({"x": [1, 2]})
    pld.dp.set_budget(epsilon=1, delta=1e-6, ledger=path, name="composes", seed=1)
    for _ in range(60):
        pld.dp.count(epsilon=0.02)
    later = pd.DataFrame({"x": [1, 2]})
    reopened = later.dp.set_budget(epsilon=1, delta=1e-6, ledger=path, name="composes", seed=1)
    assert reopened.accountant == "pld"
    assert reopened.spent < Fraction(7, 10)  # 60 × 0.02 = 1.2 added up
    with pytest.raises(BudgetMismatchError, match="privacy loss distributions"):
        pd.DataFrame({"x": [1]}).dp.set_budget(
            epsilon=1, delta=1e-6, accountant="epsilon", ledger=path, name="composes"
        )


def test_a_pld_ledger_budget_is_refused_where_dp_accounting_is_missing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "ledger.sqlite"
    df = pd.DataFrame({"x": [1, 2]})
    df.dp.set_budget(epsilon=1, delta=1e-6, ledger=path, name="hr", seed=1)
    df.dp.count(epsilon=0.1)
    monkeypatch.setattr(_pld, "available", lambda: False)
    with pytest.raises(BudgetMismatchError, match=r'pip install "pandas-dp\[pld\]"') as refused:
        pd.DataFrame({"x": [1]}).dp.set_budget(epsilon=1, delta=1e-6, ledger=path, name="hr")
    assert "dp_accounting in this process" in str(refused.value)
    assert main(["ledger", str(path)]) == 0  # reading it still works
    assert "hr" in capsys.readouterr().out


def test_a_named_memory_budget_keeps_its_accountant(
    df: pd.DataFrame, monkeypatch: pytest.MonkeyPatch
) -> None:
    with monkeypatch.context() as patch:
        patch.setattr(_pld, "available", lambda: False)
        first = df.dp.set_budget(epsilon=1, delta=1e-6, name="default-accountant.memory")
    assert first.accountant == "epsilon"
    again = pd.DataFrame({"x": [1]})
    budget = again.dp.set_budget(epsilon=1, delta=1e-6, name="default-accountant.memory")
    assert budget.accountant == "epsilon"
    with pytest.raises(BudgetMismatchError, match="its accountant stays"):
        pd.DataFrame({"x": [1]}).dp.set_budget(
            epsilon=1, delta=1e-6, accountant="pld", name="default-accountant.memory"
        )


def test_a_named_memory_pld_budget_says_how_to_continue_it() -> None:
    """Its total is an ε: "pld=1" is no argument; epsilon=1 without accountant= continues it."""
    name = "default-accountant.memory-pld"
    pd.DataFrame({"x": [1]}).dp.set_budget(epsilon=1, delta=1e-6, name=name)
    with pytest.raises(BudgetMismatchError, match="Pass epsilon=1 and no accountant= to continue"):
        pd.DataFrame({"x": [1]}).dp.set_budget(
            epsilon=1, delta=1e-6, accountant="epsilon", name=name
        )
    budget = pd.DataFrame({"x": [1]}).dp.set_budget(epsilon=1, delta=1e-6, name=name)
    assert budget.accountant == "pld"


def test_the_cli_says_which_budgets_add_epsilon_and_delta_up(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "ledger.sqlite"
    pd.DataFrame({"x": [1]}).dp.set_budget(epsilon=1, delta=1e-6, ledger=path, name="composes")
    assert main(["ledger", str(path)]) == 0
    assert "adds its releases' ε" not in capsys.readouterr().out
    pd.DataFrame({"x": [1]}).dp.set_budget(
        epsilon=1, delta=1e-6, accountant="epsilon", ledger=path, name="adds"
    )
    for argv in (["ledger", str(path)], ["ledger", str(path), "--name", "adds"]):
        assert main(argv) == 0
        out = " ".join(capsys.readouterr().out.split())
        assert "A budget whose accountant is epsilon and that holds a delta adds its" in out
        assert 'pip install "pandas-dp[pld]"' in out


def test_dp_accounting_is_imported_at_the_first_composition_only(
    run_python: Callable[[str], str],
) -> None:
    script = textwrap.dedent(
        """
        import sys, pandas as pd, pandas_dp
        print("dp_accounting" in sys.modules)
        df = pd.DataFrame({"x": range(5)})
        b = df.dp.set_budget(epsilon=1, seed=1); df.dp.count(epsilon=0.1)  # pure: never
        print("dp_accounting" in sys.modules)
        df = pd.DataFrame({"x": range(5)})
        b = df.dp.set_budget(epsilon=1, delta=1e-6, seed=1)
        print(b.accountant, "dp_accounting" in sys.modules)
        df.dp.count(epsilon=0.1)  # the first composition
        print("dp_accounting" in sys.modules)
        """
    )
    stdout = run_python(script)
    assert stdout.split() == ["False", "False", "pld", "False", "True"]


def test_without_the_module_the_default_adds_up_silently(run_python: Callable[[str], str]) -> None:
    script = textwrap.dedent(
        """
        import sys, warnings
        sys.modules["dp_accounting"] = None  # importing it raises ImportError
        warnings.simplefilter("error")
        import pandas as pd
        import pandas_dp
        df = pd.DataFrame({"x": range(10)})
        b = df.dp.set_budget(epsilon=1, delta=1e-6, seed=1)
        for _ in range(20):
            df.dp.count(epsilon=0.05)
        print(b.accountant, b.spent, "dp_accounting is not installed" in str(b))
        """
    )
    stdout = run_python(script)
    assert stdout.split() == ["epsilon", "1", "True"]
