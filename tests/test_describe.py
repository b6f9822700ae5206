"""describe: the share of ε (or ρ) each part runs at, measured from what it releases.

One grouped describe over many keys whose rows are all 0 gives that many
independent releases of each part per column.  Its quartiles are one joint
release on a grid of two points (0 and 10), whose law over the outputs is
computed exactly by enumeration from the plan's kernel; its count row carries
the noise of the moments' complementary pair.  Both are checked against the
documented split of each column's share (3/10 to count/mean/std, 1/2 to the
quartiles jointly, 1/10 each to min and max; under ρ the selections at the
ε with ε²/2 their share).  Then the surface: pandas' rows and order, every
numeric column by default, grids and bounds found when not given.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
import scipy.stats

import pandas_dp  # noqa: F401  (registers df.dp)
from pandas_dp.core.zcdp import pure_epsilon
from pandas_dp.kinds._joint import SUB, kernel
from pandas_dp.kinds.base import Neighbours
from pandas_dp.kinds.describe import QUANTILES, SHARES, Describe
from pandas_dp.kinds.extremes import Extreme
from pandas_dp.kinds.quantile import Quantiles, plan_joint
from pandas_dp.kinds.variance import Var

#: A statistical test here must give p above this at the true rate, below it at a wrong one.
P_MIN = 1e-6
#: Keys, each one independent release of every part.
KEYS = 2_000
#: The grid: the data's value (every row is 0) and one candidate above it; also the clip.
LOW, HIGH = 0.0, 10.0
#: Each column's share of the call (10 columns' worth of budget is set).
SHARE = {"epsilon": 1.2, "rho": 0.12}


def _describe(accountant: str, n_columns: int, rows: int, keys: int = KEYS) -> pd.DataFrame:
    """A grouped describe at ``SHARE`` per column of ``keys`` keys of ``rows`` zeros each."""
    columns = ["x", "y"][:n_columns]
    df = pd.DataFrame({"g": np.repeat(np.arange(keys), rows), **dict.fromkeys(columns, LOW)})
    df.dp.set_budget(**{accountant: 10}, seed=28)
    return df.dp.groupby("g", keys=list(range(keys))).describe(
        columns,
        clip=dict.fromkeys(columns, (LOW, HIGH)),
        candidates={c: [LOW, HIGH] for c in columns},
        **{accountant: SHARE[accountant] * n_columns},
    )


def _high_picks(epsilon: Fraction, rows: int) -> np.ndarray:
    """P(j of the three quartiles are HIGH), j = 0..3: the joint release's law, by enumeration.

    Every row of a key is 0: LOW's virtual points sit at the ranks ``t/SUB·rows``
    (its tie spread), HIGH's all at ``rows``; each non-decreasing triple of
    them weighs ``Π κ(|gap − target|)`` with the kernel of the plan's rate.
    """
    plan = plan_joint(QUANTILES, epsilon, Neighbours.of("add_remove", grouped=True))
    kern = kernel(plan.rate)
    unit = plan.sub * plan.scale
    position = np.array([plan.scale * t * rows for t in range(SUB + 1)] + [unit * rows] * (SUB + 1))
    high = np.arange(position.size) > SUB
    triples = np.array(list(itertools.combinations_with_replacement(range(position.size), 3)))
    ends = np.full((len(triples), 1), unit * rows)
    pos = np.hstack([np.zeros_like(ends), position[triples], ends])
    logs = kern.log(np.diff(pos, axis=1) - plan.targets(rows)).sum(axis=1)
    weight = np.exp(logs - logs.max())  # kernel values span any range: their products, in logs
    law = np.bincount(high[triples].sum(axis=1), weights=weight, minlength=4)
    return law / law.sum()


@pytest.mark.parametrize("accountant", ["epsilon", "rho"])
@pytest.mark.parametrize("n_columns", [1, 2])
def test_the_quartiles_run_jointly_at_half_of_the_columns_share(
    accountant: str, n_columns: int
) -> None:
    """describe at ε over k columns: the quartiles, one release at ε/(2k) (ρ: ε²/2 = ρ/(2k)).

    Chi-square of the number of HIGH picks per key (0 to 3) against the law
    at that ε, per column; it fails at 0.7× and 1.3× that ε.
    """
    rows = 40
    table = _describe(accountant, n_columns, rows)
    share = Fraction(repr(SHARE[accountant])) / 2
    epsilon = pure_epsilon(share) if accountant == "rho" else share
    observed = []
    for column in table.columns.levels[0]:
        picks = table[[(column, label) for label in ("25%", "50%", "75%")]].to_numpy()
        assert set(np.unique(picks)) <= {LOW, HIGH}
        assert (np.diff(picks, axis=1) >= 0).all()  # one joint release: always in order
        observed.append(np.bincount((picks == HIGH).sum(axis=1), minlength=4))
    for factor, must_pass in ((1, True), (Fraction(7, 10), False), (Fraction(13, 10), False)):
        expected = _high_picks(epsilon * factor, rows) * KEYS
        keep = expected >= 5
        stat = sum(float((((o - expected) ** 2)[keep] / expected[keep]).sum()) for o in observed)
        pvalue = float(scipy.stats.chi2.sf(stat, df=n_columns * (int(keep.sum()) - 1)))
        assert (pvalue > P_MIN) == must_pass, f"{accountant} x{float(factor)}: p = {pvalue:.3g}"


@pytest.mark.parametrize("accountant", ["epsilon", "rho"])
def test_each_column_splits_its_share_three_tenths_half_and_a_tenth_each(accountant: str) -> None:
    loss = Fraction(6, 5)
    kind = (
        Describe.of(None, ["x", "y"], {"x": (0, 1), "y": (0, 2)}, rho=loss)
        if accountant == "rho"
        else Describe.of(loss, ["x", "y"], {"x": (0, 1), "y": (0, 2)})
    )
    parts = kind.parts()
    assert [type(p) for p in parts] == [Var, Extreme, Quantiles, Extreme] * 2
    assert [p.side for p in parts if isinstance(p, Extreme)] == ["min", "max"] * 2
    shares = [p.loss()[1] for p in parts]
    assert shares == [loss / 2 * s for s in SHARES] * 2
    assert sum(shares) == loss
    if accountant == "rho":  # the selections run at the ε whose ε²/2 is their ρ
        for part in parts[1:4]:
            assert part.epsilon == pure_epsilon(part.rho)
    starts = [(p.side, p.start) for p in parts[:4] if isinstance(p, Extreme)]
    assert starts == [("min", 1.0), ("max", 0.0)]  # from the other end of the clip


def _count_noise_variance(accountant: str, loss: float) -> float:
    """The variance of ``count − n`` when count/mean/std run at ``loss`` (ε or ρ), every row 0.

    The count is ``(a⁺ + b⁺)/Q`` from the complementary pair ``A = Σq = 0``,
    ``B = n·Q``, each noised at half the moments' share (the centred moment
    has the other half): ``(Z₁⁺ + Z₂)/Q`` (B stays far above 0).  On the
    fine grid Z/Q is continuous: Laplace of scale ``b = 1/(ε/2)`` (the pair's
    L1 sensitivity is Q), or Gaussian of ``σ² = 1/(2·ρ/2)`` (L2: Q).
    ``Var(Z⁺) = Var(Z) − E[Z⁺]²`` with ``E[Z⁺²] = Var(Z)/2``; rounding to a
    whole count adds 1/12.
    """
    if accountant == "epsilon":
        b = 1 / (loss / 2)
        var, mean_plus = 2 * b * b, b / 2
    else:
        var = 1 / (2 * loss / 2)
        mean_plus = math.sqrt(var / (2 * math.pi))
    return var + (var / 2 - mean_plus**2) + 1 / 12


@pytest.mark.parametrize("accountant", ["epsilon", "rho"])
@pytest.mark.parametrize("n_columns", [1, 2])
def test_count_mean_and_std_run_at_three_tenths_of_the_columns_share(
    accountant: str, n_columns: int
) -> None:
    """The count row's noise is the moments' at 3ε/(10k) (3ρ/(10k)): measured by its variance.

    A z-test per column on the sample variance (its standard error from the
    sample's fourth moment), chi-square over the columns; it fails at 0.7×
    and 1.3× the moments' ε (ρ).  (50 rows a key: the count, floored at 0,
    is never near the floor.)
    """
    rows = 50
    table = _describe(accountant, n_columns, rows)
    moments = SHARE[accountant] * float(SHARES[0])
    stats = []
    for column in table.columns.levels[0]:
        noise = table[(column, "count")].to_numpy() - rows
        variance = noise.var()
        fourth = float(np.mean((noise - noise.mean()) ** 4))
        stats.append((variance, math.sqrt((fourth - variance**2) / KEYS)))
    for factor, must_pass in ((1.0, True), (0.7, False), (1.3, False)):
        expected = _count_noise_variance(accountant, moments * factor)
        stat = sum(((v - expected) / se) ** 2 for v, se in stats)
        pvalue = float(scipy.stats.chi2.sf(stat, df=len(stats)))
        assert (pvalue > P_MIN) == must_pass, f"{accountant} x{factor}: p = {pvalue:.3g}"
