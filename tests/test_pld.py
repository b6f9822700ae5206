"""Budgets composed by privacy loss distributions (``set_budget(..., accountant="pld")``).

The reported (ε, δ) is checked against an independent computation: the
exact composition, in 40-digit decimals, of the finite privacy loss
distributions of the releases a workload made, derived from its calls (a
count of ε is discrete Laplace of scale 1/ε, whose loss under a shift of one
is ±ε: randomized response; a selection of ε and a clipped mean are ε-DP,
randomized response at most; a key selection (ε, δ)-DP), never from the
ledger's events.  The library's pessimistic discretization must put the
reported figures at or above the exact ones, and close.
"""

from __future__ import annotations

import itertools
import math
import textwrap
import warnings
from collections.abc import Callable, Iterator
from decimal import Decimal, getcontext
from fractions import Fraction
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import pandas_dp
from pandas_dp import open_ledger
from pandas_dp.accounting import _pld
from pandas_dp.accounting.events import Event, events_text, parse_events
from pandas_dp.errors import AccountingWarning, BudgetExceededError, BudgetMismatchError
from pandas_dp.kinds.base import Neighbours
from pandas_dp.kinds.sums import plan_mean

pytest.importorskip("dp_accounting")

getcontext().prec = 40
ROOT = Path(__file__).resolve().parents[1]
DELTA = Fraction(1, 10**6)

# ---------------------------------------------------- the exact, independent computation

#: A privacy loss distribution: (loss, probability) pairs and the mass at infinite loss.
Pld = tuple[list[tuple[Decimal, Decimal]], Decimal]


def randomized_response(epsilon: Fraction, delta: Fraction = Fraction(0)) -> Pld:
    """The PLD of (ε, δ)-randomized response, the worst pair of every (ε, δ)-DP mechanism."""
    e = Decimal(epsilon.numerator) / Decimal(epsilon.denominator)
    d = Decimal(delta.numerator) / Decimal(delta.denominator)
    up = (1 - d) / (1 + (-e).exp())
    return [(e, up), (-e, 1 - d - up)], d


def discrete_laplace_shift(epsilon: Fraction, shift: int) -> Pld:
    """The PLD of discrete Laplace of scale ``1/ε`` shifted by ``shift``: losses ε·(s − 2x)."""
    a = Decimal(epsilon.numerator) / Decimal(epsilon.denominator)
    p = (-a).exp()
    points = [(a * shift, 1 / (1 + p)), (-a * shift, p**shift / (1 + p))]
    points += [(a * (shift - 2 * x), (1 - p) / (1 + p) * p**x) for x in range(1, shift)]
    return points, Decimal(0)


def compose(plds: list[Pld]) -> Pld:
    points: dict[Decimal, Decimal] = {Decimal(0): Decimal(1)}
    finite = Decimal(1)
    for loss_points, infinite in plds:
        merged: dict[Decimal, Decimal] = {}
        for (l1, p1), (l2, p2) in itertools.product(points.items(), loss_points):
            key = (l1 + l2).quantize(Decimal("1e-30"))
            merged[key] = merged.get(key, Decimal(0)) + p1 * p2
        points = merged
        finite *= 1 - infinite
    return list(points.items()), 1 - finite


def exact_delta(pld: Pld, epsilon: float | Decimal) -> Decimal:
    """The hockey-stick divergence at ε: δ(ε) = P(∞) + Σ p·max(0, 1 − e^(ε − loss))."""
    e = Decimal(epsilon)
    points, infinite = pld
    return infinite + sum(
        (p * (1 - (e - loss).exp()) for loss, p in points if loss > e), Decimal(0)
    )


def exact_epsilon(pld: Pld, delta: Fraction) -> Decimal:
    """The smallest ε with δ(ε) <= delta (bisection: δ(ε) falls with ε)."""
    target = Decimal(delta.numerator) / Decimal(delta.denominator)
    lo, hi = Decimal(0), Decimal(50)
    if exact_delta(pld, lo) <= target:
        return lo
    for _ in range(100):
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if exact_delta(pld, mid) <= target else (mid, hi)
    return hi


def test_the_independent_computation_knows_randomized_response() -> None:
    # one release of (1, 0)-randomized response: δ(0.5) = (e^1 − e^0.5)/(1 + e^1)
    pld = compose([randomized_response(Fraction(1))])
    e1, e5 = Decimal(1).exp(), Decimal("0.5").exp()
    assert abs(exact_delta(pld, Decimal("0.5")) - (e1 - e5) / (1 + e1)) < Decimal("1e-30")
    # and at δ = 1e-9, the ε with up·(1 − e^(ε − 1)) = δ
    up = e1 / (1 + e1)
    want = 1 + (1 - Decimal("1e-9") / up).ln()
    assert abs(exact_epsilon(pld, Fraction(1, 10**9)) - want) < Decimal("1e-25")
    # a count's discrete Laplace, shifted by one, is randomized response at its ε
    for (loss, p), (other, q) in zip(
        discrete_laplace_shift(Fraction(1, 3), 1)[0],
        randomized_response(Fraction(1, 3))[0],
        strict=True,
    ):
        assert loss == other
        assert abs(p - q) < Decimal("1e-35")


# ------------------------------------------------------------------------- workloads


@pytest.fixture
def people() -> pd.DataFrame:
    rng = np.random.default_rng(32)
    n = 500
    return pd.DataFrame(
        {
            "salary": rng.uniform(0, 100_000, n),
            "dept": rng.choice(["a", "b", "c"], n),
        }
    )


GRID = np.linspace(0, 100_000, 101)


def run_workload(df: pd.DataFrame, seed: int) -> list[Pld]:
    """Random releases on ``df`` (a PLD budget of (1, 1e-6)); each one's exact PLD, by its call."""
    rng = np.random.default_rng(seed)
    plds: list[Pld] = []
    for _ in range(int(rng.integers(4, 9))):
        epsilon = Fraction(int(rng.integers(1, 12)), 200)
        what = int(rng.integers(0, 5))
        try:
            if what == 0:
                df.dp.count(epsilon=float(epsilon))
                plds.append(discrete_laplace_shift(epsilon, 1))
            elif what == 1:  # one row is in one key: a shift of one in one count
                df.dp.groupby("dept", keys=["a", "b", "c", "d"]).count(epsilon=float(epsilon))
                plds.append(discrete_laplace_shift(epsilon, 1))
            elif what == 2:  # ε-DP at the ε its grid realises
                df.dp.mean("salary", clip=(0, 100_000), epsilon=float(epsilon))
                realised = plan_mean((0, 100_000), epsilon, Neighbours("add_remove")).grid
                plds.append(randomized_response(realised.realised_epsilon))
            elif what == 3:  # the key selection: (ε, δ)-DP
                df.dp.groupby("dept").count(epsilon=float(epsilon), delta=1e-8)
                plds.append(randomized_response(epsilon, Fraction(1, 10**8)))
            else:
                df.dp.median("salary", candidates=GRID, epsilon=float(epsilon))
                plds.append(randomized_response(epsilon))
        except BudgetExceededError:
            continue
    return plds


@pytest.mark.filterwarnings("ignore::pandas_dp.errors.PoorAnswerWarning")  # tiny ε: no key
@pytest.mark.parametrize("seed", range(20))
def test_the_reported_epsilon_and_delta_are_never_below_the_exact_ones(
    people: pd.DataFrame, seed: int
) -> None:
    budget = people.dp.set_budget(epsilon=1.0, delta=1e-6, accountant="pld", seed=seed)
    exact = compose(run_workload(people, seed))
    epsilon = exact_epsilon(exact, DELTA)
    reported = Decimal(Fraction(budget.spent).numerator) / Decimal(
        Fraction(budget.spent).denominator
    )
    assert epsilon <= reported <= epsilon + Decimal("0.002"), (epsilon, reported)
    assert reported <= 1  # everything that ran fit
    for delta in (Fraction(1, 10**4), Fraction(1, 10**7)):  # above the key selections' δ
        at = Decimal(budget.epsilon_at(delta))
        want = exact_epsilon(exact, delta)
        assert want <= at <= want + Decimal("0.002"), (delta, want, at)
    # the δ the accountant checks against the budget's, at its ε
    events = [e for entry in budget.entries for e in entry.privacy_events]
    at_one = _pld.delta_at(events, Fraction(1), budget.delta)
    delta_at_one = Decimal(at_one.numerator) / Decimal(at_one.denominator)
    assert exact_delta(exact, 1) <= delta_at_one


def discrete_gaussian_pld(sigma2: Fraction, shift: int, times: int) -> tuple[np.ndarray, float]:
    """The losses' pmf of ``times`` discrete Gaussians shifted by ``shift``, on a lattice.

    Under the unshifted one, the loss of ``K`` is ``(s² − 2sK)/(2σ²)``: summed over
    independent coordinates, ``(times·s² − 2s·ΣK)/(2σ²)``; the pmf of ΣK is the
    coordinates' pmf convolved (numpy, exact to float rounding).  Returns the pmf of ΣK
    from its lowest value, and that value.
    """
    sigma = math.sqrt(float(sigma2))
    top = math.ceil(14 * sigma)
    k = np.arange(-top, top + 1)
    one = np.exp(-(k**2) / (2 * float(sigma2)))
    one /= one.sum()
    pmf = one
    for _ in range(times - 1):
        pmf = np.convolve(pmf, one)
    return pmf, -top * times


def gaussian_delta(sigma2: Fraction, shift: int, times: int, epsilon: float) -> float:
    pmf, low = discrete_gaussian_pld(sigma2, shift, times)
    total = low + np.arange(pmf.size)
    loss = (times * shift**2 - 2 * shift * total) / (2 * float(sigma2))
    return float(np.sum(pmf * np.maximum(0.0, 1 - np.exp(epsilon - loss))))


@pytest.mark.parametrize(("adjacency", "moved"), [("add_remove", 1), ("substitute", 2)])
def test_gaussian_counts_are_composed_over_the_keys_a_person_moves(
    people: pd.DataFrame, adjacency: str, moved: int
) -> None:
    """A grouped Gaussian count: the δ reported at ε is at least an independent computation's."""
    budget = people.dp.set_budget(epsilon=2, delta=1e-6, accountant="pld", adjacency=adjacency)
    for _ in range(3):
        people.dp.groupby("dept", keys=["a", "b", "c"]).count(rho=0.01)
    (event,) = budget.entries[0].privacy_events
    assert (event.count, event.sensitivity, event.sigma2) == (moved, 1, 50 * moved)  # σ² = Δ₂²/2ρ
    events = [e for entry in budget.entries for e in entry.privacy_events]
    for epsilon in (0.5, 1.0, 1.5):
        exact = gaussian_delta(event.sigma2, 1, 3 * moved, epsilon)
        reported = float(_pld.delta_at(events, Fraction(repr(epsilon)), budget.delta))
        assert exact <= reported <= exact * 1.05 + 1e-12, (epsilon, exact, reported)


def test_a_release_that_would_not_fit_is_refused_naming_the_quantity(people: pd.DataFrame) -> None:
    budget = people.dp.set_budget(epsilon=0.5, delta=1e-6, accountant="pld", seed=1)
    people.dp.count(epsilon=0.3)
    before = (budget.spent, len(budget.entries))
    with pytest.raises(BudgetExceededError) as refused:
        people.dp.count(epsilon=0.3)
    error = refused.value
    assert error.quantity == "epsilon"
    assert error.remaining == Fraction(1, 2) - budget.spent
    assert error.requested > error.remaining  # what the composition would add
    assert "privacy loss distribution" in " ".join(getattr(error, "__notes__", []))
    assert (budget.spent, len(budget.entries)) == before  # nothing spent
    people.dp.count(epsilon=0.1)  # what fits still runs
    # a key selection's δ beyond the budget's is refused for delta
    with pytest.raises(BudgetExceededError) as too_much:
        people.dp.groupby("dept").count(epsilon=0.01, delta=2e-6)
    assert too_much.value.quantity == "delta"


def test_what_adds_up_within_the_budget_fits_under_pld_too() -> None:
    """A release of the budget's whole (ε, δ) fits, as when ε and δ add up.

    The library's rounding and the δ margin alone would put it a hair above
    the budget; every figure is at most basic composition's, which is valid.
    """
    whole = Event("approx", epsilon=Fraction(1), delta=DELTA)
    assert _pld.delta_at([whole], Fraction(1), DELTA) == DELTA
    assert _pld.epsilon_at([whole], DELTA, DELTA) == 1.0
    # ε = 1/3 + 1/7 off the library's grid: its pessimistic ε is above the sum, reported at it
    two = [Event("pure", epsilon=Fraction(1, 3)), Event("pure", epsilon=Fraction(1, 7))]
    assert _pld.epsilon_at(two, DELTA, DELTA) == _pld.float_up(Fraction(10, 21))
    df = pd.DataFrame({"k": ["a"] * 300 + ["b"] * 200})
    budget = df.dp.set_budget(epsilon=1, delta=1e-6, accountant="pld", seed=3)
    assert len(df.dp.value_counts("k", epsilon=1, delta=1e-6)) == 2
    assert (budget.spent, budget.delta_spent) == (1, DELTA)
    with pytest.raises(BudgetExceededError):
        df.dp.count(epsilon=0.01)


def test_small_and_large_events_split_agree_with_the_library_composing_them_all() -> None:
    """Three pure 0.5, a zCDP 0.1 and a pure 65: the split (PLD + basic) against the library.

    Both are upper bounds of the true ε (the split: each event dominated by its
    own pair, the large one's by its (ε, δ)); they agree to a millionth here
    (the library's grid still holds ε = 65; the split does not discretize it,
    and comes out 6e-5 lower).  Twelve runs of 60 (720 in all, beyond the
    library's grid) are split off too.
    """
    events = [
        Event("pure", epsilon=Fraction(1, 2), count=3),
        Event("zcdp", rho=Fraction(1, 10)),
        Event("pure", epsilon=Fraction(65)),
    ]
    split = _pld.epsilon_at(events, DELTA, DELTA)
    whole = _pld._composed(_pld._key(events), DELTA).get_epsilon_for_delta(
        float(DELTA) * (1 - _pld.MARGIN)
    )
    assert abs(split / whole - 1) < 1e-6
    many = Event("pure", epsilon=Fraction(60), count=12)
    assert _pld._split([many], DELTA) == ([], Fraction(720), Fraction(0))
    assert _pld.epsilon_at([many], DELTA, DELTA) == 720


def test_a_release_at_a_huge_epsilon_is_added_by_basic_composition() -> None:
    """Above _pld.LARGE an event never reaches the library (whose PLD of ε = 1e6 overflows)."""
    huge = Event("pure", epsilon=Fraction(10**6))
    counts = Event("discrete_laplace", scale=Fraction(20), sensitivity=1, count=50)
    small = _pld.epsilon_at([counts], DELTA, DELTA)
    assert 0 < small < 50 / 20  # PLD: below the 2.5 the counts add up to
    both = _pld.epsilon_at([counts, huge], DELTA, DELTA)
    assert both == math.nextafter(small + 10**6, math.inf)
    assert _pld.delta_at([counts, huge], Fraction(10**6 - 1), DELTA) == 1  # below its ε alone
    at_zero = _pld.delta_at([counts], Fraction(0), DELTA)  # what is left for the counts: ε = 0
    assert 0 < _pld.delta_at([counts, huge], Fraction(10**6), DELTA) == at_zero < 1
    # a huge (ε, δ) one takes its δ from what the counts may use
    selection = Event("approx", epsilon=Fraction(1000), delta=Fraction(5, 10**7))
    half = _pld.epsilon_at([counts], Fraction(5, 10**7), DELTA)
    assert half > small
    assert _pld.epsilon_at([counts, selection], DELTA, DELTA) == math.nextafter(
        half + 1000, math.inf
    )
    at = Fraction(1000) + Fraction(small)
    want = _pld.delta_at([counts], Fraction(small), DELTA) + selection.delta
    assert _pld.delta_at([counts, selection], at, DELTA) == want
    budget_total = Fraction(10**6 + 2)
    assert _pld.delta_at([counts, huge], budget_total, DELTA) <= DELTA
    df = pd.DataFrame({"x": np.arange(100.0)})
    budget = df.dp.set_budget(epsilon=2e6, delta=1e-6, accountant="pld", seed=3)
    assert df.dp.mean("x", clip=(0, 100), epsilon=1e6) == pytest.approx(49.5, abs=1e-3)
    assert 0.99e6 < budget.spent <= 10**6  # its realised ε, added up


def test_pld_composes_more_releases_than_adding_epsilons_does(people: pd.DataFrame) -> None:
    pld = people.dp.set_budget(epsilon=1.0, delta=1e-6, accountant="pld", seed=1)
    fits = 0
    while fits < 100:
        try:
            people.dp.count(epsilon=0.05)
        except BudgetExceededError:
            break
        fits += 1
    assert fits == 26  # adding them up: 20
    assert pld.spent <= 1 < pld.spent + Fraction(1, 20)


# ------------------------------------------------------- the measured gain (issue 32)


def per_answer_sigma(events: list[Event], fit: int) -> None:
    composed = _pld.epsilon_at(events * fit, DELTA, DELTA)
    assert composed <= 1, composed


def test_100_counts_under_1_and_1e_minus_6() -> None:
    """Per-answer σ of 100 sensitivity-1 counts at a total (1, 1e-6): the bench's figures.

    Discrete Laplace of scale b has σ = sqrt(2p)/(1 − p), p = e^(−1/b); the
    discrete Gaussian's σ is at most its σ parameter.  Adding ε's gives each
    ε = 0.01 (σ = 141); zCDP with the CKS conversion each ρ = 0.0244/100
    (σ = 45.3).
    """
    scale = Fraction(42)  # ε = 1/42 each
    laplace = Event("discrete_laplace", scale=scale, sensitivity=1)
    assert _pld.epsilon_at([laplace] * 100, DELTA, DELTA) <= 1
    p = np.exp(-1 / 42)
    assert np.sqrt(2 * p) / (1 - p) <= 61.6
    gauss = Event("discrete_gaussian", sigma2=Fraction(44**2), sensitivity=1)
    assert _pld.epsilon_at([gauss] * 100, DELTA, DELTA) <= 1
    # and through the API: 100 counts of ε = 1/42 fit
    df = pd.DataFrame({"x": range(10)})
    budget = df.dp.set_budget(epsilon=1, delta=1e-6, accountant="pld", seed=2)
    for _ in range(100):
        df.dp.count(epsilon=1 / 42)
    assert budget.spent <= 1


# --------------------------------------------------------------------- the ledger


@pytest.mark.filterwarnings("ignore::pandas_dp.errors.PoorAnswerWarning")  # tiny ε: no key
def test_events_are_recorded_exactly_and_parse_back(people: pd.DataFrame) -> None:
    budget = people.dp.set_budget(epsilon=2, delta=1e-6, accountant="pld", seed=3)
    people.dp.count(epsilon=0.1)
    people.dp.count(rho=0.0002)
    people.dp.groupby("dept", keys=["a", "b"]).count(rho=0.001)
    people.dp.median("salary", candidates=GRID, epsilon=0.1)
    people.dp.groupby("dept").count(epsilon=0.1, delta=1e-8)
    texts = list(budget.ledger.events)
    assert texts == [
        "discrete_laplace(scale=10, sensitivity=1)",
        "discrete_gaussian(sigma2=2500, sensitivity=1)",
        "discrete_gaussian(sigma2=500, sensitivity=1)",
        "pure(epsilon=1/10)",
        "approx(epsilon=1/10, delta=1/100000000)",
    ]
    for entry, text in zip(budget.entries, texts, strict=True):
        assert events_text(parse_events(text)) == text
        assert parse_events(text) == entry.privacy_events


def test_a_ledger_budget_is_recomputed_by_another_process(
    tmp_path: Path, run_python: Callable[[str], str]
) -> None:
    path = tmp_path / "ledger.sqlite"
    df = pd.DataFrame({"x": range(10)})
    budget = df.dp.set_budget(
        epsilon=1, delta=1e-6, accountant="pld", ledger=path, name="hr", seed=4
    )
    for _ in range(20):
        df.dp.count(epsilon=0.05)
    before = float(budget.spent)
    script = textwrap.dedent(
        f"""
        import pandas as pd, pandas_dp
        from pandas_dp.errors import BudgetExceededError
        df = pd.DataFrame({{"x": range(10)}})
        b = df.dp.set_budget(epsilon=1, delta=1e-6, accountant="pld", ledger={str(path)!r},
                             name="hr")
        print(repr(float(b.spent)))
        fits = 0
        try:
            while True:
                df.dp.count(epsilon=0.05)
                fits += 1
        except BudgetExceededError:
            print(fits)
        """
    )
    stdout = run_python(script)
    spent, more = stdout.split()
    assert float(spent) == before  # the same events, the same composition
    assert int(more) == 6  # 26 in all, as in one process
    ledger = open_ledger(path)
    row = ledger.budgets().iloc[0]
    assert row.accountant == "pld"
    assert row.spent == float(budget.spent)
    assert row.spent <= 1
    history = ledger.history("hr")
    assert (history.events.iloc[1:] == "discrete_laplace(scale=20, sensitivity=1)").all()
    assert history.spent.iloc[-1] == row.spent
    # attached without accountant=, it continues by PLD (its recorded accountant)
    again = pd.DataFrame({"x": [1]}).dp.set_budget(epsilon=1, delta=1e-6, ledger=path, name="hr")
    assert again.accountant == "pld"
    # attached asking to add ε up, it is refused, saying what to pass
    with pytest.raises(BudgetMismatchError, match="without accountant="):
        pd.DataFrame({"x": [1]}).dp.set_budget(
            epsilon=1, delta=1e-6, accountant="epsilon", ledger=path, name="hr"
        )


def test_a_hold_under_pld_keeps_its_share_for_its_holder(people: pd.DataFrame) -> None:
    budget = people.dp.set_budget(epsilon=1, delta=1e-6, accountant="pld", seed=5)
    other = people.dp.select(["salary"])  # same budget, another frame: another holder
    with people.dp.reserve(epsilon=0.6):
        assert 0.5 < budget.held < 0.7
        for _ in range(6):  # ε 0.6 added up: fits in the hold whatever the rest
            people.dp.count(epsilon=0.1)
        with pytest.raises(BudgetExceededError):
            other.dp.mean("salary", clip=(0, 1e5), epsilon=0.5)
    assert budget.held == 0
    other.dp.mean("salary", clip=(0, 1e5), epsilon=0.3)  # free again


def test_the_views_show_the_accountant_and_what_it_spent(people: pd.DataFrame) -> None:
    budget = people.dp.set_budget(epsilon=1, delta=1e-6, accountant="pld", seed=6)
    people.dp.count(epsilon=0.1)
    text = str(budget)
    assert "total (ε, δ)          (1, 1e-06)" in text
    assert "spent (ε at δ=1e-06)" in text
    assert "PLD" in text
    assert "accountant='pld'" in repr(budget)
    assert "PLD" in budget._repr_html_()


def test_dask_releases_are_composed_alike(people: pd.DataFrame) -> None:
    dd = pytest.importorskip("dask.dataframe")
    pytest.importorskip("pandas_dp.dask")
    spent = []
    for frame in (people, dd.from_pandas(people, npartitions=3)):
        budget = frame.dp.set_budget(epsilon=1, delta=1e-6, accountant="pld", seed=9)
        frame.dp.count(epsilon=0.1)
        frame.dp.groupby("dept", keys=["a", "b", "c"]).count(rho=0.001)
        frame.dp.plan([("mean", "salary", {"clip": (0, 1e5), "n": 500})], half_width=5_000).run()
        spent.append((budget.spent, [e.privacy_events for e in budget.entries]))
    assert spent[0] == spent[1]


# ------------------------------------------------------------- without the extra


def test_without_dp_accounting_the_budget_adds_up_and_says_so(
    run_python: Callable[[str], str],
) -> None:
    script = textwrap.dedent(
        """
        import sys, warnings
        sys.modules["dp_accounting"] = None  # importing it raises ImportError
        import pandas as pd
        import pandas_dp
        from pandas_dp.errors import AccountingWarning
        df = pd.DataFrame({"x": range(10)})
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            b = df.dp.set_budget(epsilon=1, delta=1e-6, accountant="pld", seed=1)
            pd.DataFrame({"x": [1]}).dp.set_budget(epsilon=1, delta=1e-6, accountant="pld")
        print(len(seen), seen[0].category is AccountingWarning)
        print(b.accountant, "dp_accounting is not installed" in str(b))
        for _ in range(20):
            df.dp.count(epsilon=0.05)
        print(b.spent, b.remaining)
        try:
            df.dp.count(rho=0.001)
        except ValueError as err:
            print("refused rho")
        """
    )
    stdout = run_python(script)
    assert stdout.split("\n")[:4] == ["1 True", "epsilon True", "1 0", "refused rho"]


def test_a_pld_ledger_without_dp_accounting_is_read_and_never_spent(
    tmp_path: Path, run_python: Callable[[str], str]
) -> None:
    path = tmp_path / "ledger.sqlite"
    df = pd.DataFrame({"x": range(10)})
    df.dp.set_budget(epsilon=1, delta=1e-6, accountant="pld", ledger=path, name="hr", seed=1)
    df.dp.count(epsilon=0.1)
    script = textwrap.dedent(
        f"""
        import sys, warnings
        sys.modules["dp_accounting"] = None
        import pandas as pd
        from pandas_dp import open_ledger
        from pandas_dp.__main__ import main
        from pandas_dp.errors import BudgetMismatchError
        print(main(["ledger", {str(path)!r}]))
        warnings.simplefilter("ignore")
        for asked in ({{"accountant": "pld"}}, {{}}):  # asked for, or the recorded one
            try:
                pd.DataFrame({{"x": [1]}}).dp.set_budget(
                    epsilon=1, delta=1e-6, ledger={str(path)!r}, name="hr", **asked
                )
            except BudgetMismatchError as err:
                print("refused:", 'pip install "pandas-dp[pld]"' in str(err))
        """
    )
    stdout = run_python(script)
    assert "cannot be computed here" in stdout
    assert stdout.splitlines()[-3:] == ["0", "refused: True", "refused: True"]


def test_import_pandas_dp_does_not_import_dp_accounting(run_python: Callable[[str], str]) -> None:
    # nor does an (ε, δ) budget that adds up (the default's laziness:
    # tests/test_default_accountant.py)
    script = (
        "import sys, pandas as pd, pandas_dp\n"
        "df = pd.DataFrame({'x': range(5)})\n"
        "df.dp.set_budget(epsilon=1, delta=1e-6, accountant='epsilon', seed=1)\n"
        "df.dp.count(epsilon=0.1)\n"
        "print('dp_accounting' in sys.modules)\n"
    )
    stdout = run_python(script)
    assert stdout.strip() == "False"


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"epsilon": 1}, "epsilon= and delta="),
        ({"rho": 0.1, "delta": 1e-6}, "epsilon= and delta="),
        ({"epsilon": 1, "delta": 1e-6, "accountant": "rdp"}, '"pld"'),
    ],
)
def test_pld_needs_an_epsilon_and_delta_budget(kwargs: dict[str, object], match: str) -> None:
    kwargs.setdefault("accountant", "pld")
    with pytest.raises(ValueError, match=match):
        pd.DataFrame({"x": [1]}).dp.set_budget(**kwargs)  # type: ignore[arg-type]


# --------------------------------------------------- what the discrete Gaussian assumes


@pytest.mark.parametrize("sigma", [0.7, 3.0, 20.0])
def test_a_wider_shift_of_the_discrete_gaussian_loses_more(sigma: float) -> None:
    """Composing a vector's coordinates each at the largest shift is a worst case.

    The events compose ``count`` coordinates each moved by its bound: that
    bounds every smaller move only if δ(ε) grows with the shift, checked here
    on the library's own PLDs (exact, not composed).
    """
    lib = _pld.library()
    assert lib is not None
    grid = np.linspace(0, 3, 31)
    curves = [
        lib.from_discrete_gaussian_mechanism(sigma, sensitivity=s).get_delta_for_epsilon(grid)
        for s in (1, 2, 3)
    ]
    for smaller, larger in itertools.pairwise(curves):
        assert np.all(np.asarray(smaller) <= np.asarray(larger) + 1e-12)


def events_of(df: pd.DataFrame) -> Iterator[tuple[Event, ...]]:
    return (entry.privacy_events for entry in df.dp.budget.entries)


def test_the_default_events_are_what_the_loss_guarantees() -> None:
    df = pd.DataFrame({"x": np.arange(20.0)})
    df.dp.set_budget(epsilon=1, delta=1e-6, accountant="pld", seed=7)
    df.dp.var("x", clip=(0, 20), epsilon=0.1)  # no events of its own: pure(ε)
    df.dp.sum("x", clip=(0, 20), rho=0.001)  # a grid too fine: its realised ρ
    first, second = events_of(df)
    assert first == (Event("pure", epsilon=Fraction(1, 10)),)
    assert second[0].kind == "zcdp"
    assert 0 < second[0].rho <= Fraction(1, 1000)


def test_pld_warning_is_filterable() -> None:
    assert issubclass(AccountingWarning, UserWarning)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert pandas_dp.errors.AccountingWarning is AccountingWarning
