"""describe: the share of ε (or ρ) each part runs at, measured from what it releases.

One grouped describe over 20,000 keys whose rows are all 0 gives 20,000
independent releases of each part per column.  Its quartiles are picked from
a grid of two points (0 and 10) by permute-and-flip, whose chance of the worse
point is a function of its ε; its count row carries the noise of the moments'
complementary pair.  Both are checked against the documented split of each
column's share: a half to count/mean/std, a sixth to each quartile (under ρ:
ρ/2 to the moments, each quartile at the ε with ε²/2 = ρ/6).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
import scipy.stats

import pandas_dp  # noqa: F401  (registers df.dp)

#: A statistical test here must give p above this at the true rate, below it at a wrong one.
P_MIN = 1e-6
QUARTILES = {"25%": 0.25, "50%": 0.5, "75%": 0.75}
#: Keys, each one independent release of every part.
KEYS = 20_000
#: The grid: the data's value (every row is 0) and one candidate above it; also the clip.
LOW, HIGH = 0.0, 10.0
#: Each column's share of the call (10 columns' worth of budget is set).
SHARE = {"epsilon": 1.2, "rho": 0.12}


def _describe(accountant: str, n_columns: int, rows: int) -> pd.DataFrame:
    """A grouped describe at ``SHARE`` per column of ``KEYS`` keys of ``rows`` zeros each."""
    columns = ["x", "y"][:n_columns]
    df = pd.DataFrame({"g": np.repeat(np.arange(KEYS), rows), **dict.fromkeys(columns, LOW)})
    df.dp.set_budget(**{accountant: 10}, seed=28)
    return df.dp.groupby("g", keys=list(range(KEYS))).describe(
        columns,
        clip=dict.fromkeys(columns, (LOW, HIGH)),
        candidates={c: [LOW, HIGH] for c in columns},
        **{accountant: SHARE[accountant] * n_columns},
    )


def _worse_pick_probability(q: float, epsilon: float, rows: int) -> float:
    """P(the q-quantile picks HIGH) when permute-and-flip runs at ``epsilon``.

    Every row of a key is 0: LOW scores 0 and HIGH is ``(1 − q)·n`` away from
    the q-quantile.  Permute-and-flip's rate is ``ε/(2Δ)`` with ``Δ = max(q,
    1 − q)`` (add_remove; the scores are not monotone), and with two
    candidates it takes the worse one only when it comes first (1/2) and its
    coin succeeds: ``exp(−rate·gap)/2``.  (If describe's quartiles become one
    joint release, this is the formula to replace, not the shares checked.)
    """
    return math.exp(-epsilon / (2 * max(q, 1 - q)) * (1 - q) * rows) / 2


@pytest.mark.parametrize("accountant", ["epsilon", "rho"])
@pytest.mark.parametrize("n_columns", [1, 2])
def test_each_quartile_runs_at_a_sixth_of_its_columns_share(
    accountant: str, n_columns: int
) -> None:
    """describe at ε over k columns: each quartile at ε/(6k); at ρ: at the ε with ε²/2 = ρ/(6k).

    Chi-square over every (column, quartile) of the HIGH picks against the
    binomial; it fails at 0.7× and 1.3× that ε.  Each quartile at ρ/3 (√2×
    the ε) would release 1.5ρ while charging ρ.
    """
    rows = 10
    table = _describe(accountant, n_columns, rows)
    share = SHARE[accountant] / 6
    epsilon = math.sqrt(2 * share) if accountant == "rho" else share  # 0.2 either way
    picks = {}
    for column in table.columns.levels[0]:
        for label, q in QUARTILES.items():
            picked = table[(column, label)]
            assert set(picked.unique()) <= {LOW, HIGH}
            picks[q, column] = int((picked == HIGH).sum())
    for factor, must_pass in ((1.0, True), (0.7, False), (1.3, False)):
        stat = 0.0
        for (q, _), high in picks.items():
            p = _worse_pick_probability(q, epsilon * factor, rows)
            stat += (high - KEYS * p) ** 2 / (KEYS * p * (1 - p))
        pvalue = float(scipy.stats.chi2.sf(stat, df=len(picks)))
        assert (pvalue > P_MIN) == must_pass, f"epsilon x{factor}: p = {pvalue:.3g}"


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
def test_count_mean_and_std_run_at_half_of_the_columns_share(
    accountant: str, n_columns: int
) -> None:
    """The count row's noise is the moments' at ε/(2k) (ρ/(2k)): measured by its variance.

    A z-test per column on the sample variance (its standard error from the
    sample's fourth moment), chi-square over the columns; it fails at 0.7×
    and 1.3× the moments' ε (ρ).  (50 rows a key: the count, floored at 0,
    is never near the floor.)
    """
    rows = 50
    table = _describe(accountant, n_columns, rows)
    moments = SHARE[accountant] / 2
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
