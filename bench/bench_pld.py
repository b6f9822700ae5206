"""What composing by privacy loss distributions buys (issue 32): per-answer noise at one total.

For k sensitivity-1 counts under one total (ε, δ) = (1, 1e-6), the largest noise each may have
so that all k fit, as a standard deviation per answer:

- Laplace, ε added up (an ε budget): discrete Laplace of scale k (ε = 1/k each);
- Gaussian in zCDP with the Canonne–Kamath–Steinke conversion (a ρ budget of
  ``rho_within(1, 1e-6)``): the discrete Gaussian of σ² = k/(2ρ);
- discrete Laplace composed by PLD (``accountant="pld"``);
- the discrete Gaussian composed by PLD;

each found by bisection on the noise with the accountant the budget uses (the PLD ones through
``pandas_dp.accounting._pld``, the code every reservation runs), then confirmed through the API:
k counts at that noise fit in a fresh budget. Then a mixed workload (counts, means, a key
selection, a median) under PLD against the ε its releases add up to, and what a PLD check costs
per release.

    python bench/bench_pld.py            # k = 100 and 1,000
"""

from __future__ import annotations

import argparse
import math
import time
import warnings
from fractions import Fraction

import numpy as np
import pandas as pd

import pandas_dp  # noqa: F401  (registers df.dp)
from pandas_dp.accounting import _pld
from pandas_dp.accounting.events import Event
from pandas_dp.core.zcdp import rho_within
from pandas_dp.errors import BudgetExceededError, PoorAnswerWarning

DELTA = Fraction(1, 10**6)


def laplace_sd(scale: float) -> float:
    """The standard deviation of the discrete Laplace of ``scale``: sqrt(2p)/(1 − p)."""
    p = math.exp(-1 / scale)
    return math.sqrt(2 * p) / (1 - p)


def gauss_sd(sigma2: float) -> float:
    """The standard deviation of the discrete Gaussian of ``σ²`` (summed term by term)."""
    top = int(12 * math.sqrt(sigma2)) + 2
    z = np.arange(-top, top + 1, dtype=np.float64)
    w = np.exp(-(z**2) / (2 * sigma2))
    return float(math.sqrt((w * z**2).sum() / w.sum()))


def least_noise(make: object, k: int, lo: float, hi: float) -> Fraction:
    """The least noise parameter (to 1e-4 relative) whose k events compose within (1, δ)."""
    assert callable(make)

    def fits(value: float) -> bool:
        return _pld.epsilon_at([make(Fraction(repr(value)))] * k, DELTA, DELTA) <= 1

    while not fits(hi):
        hi *= 2
    while hi / lo > 1 + 1e-4:
        mid = math.sqrt(lo * hi)
        lo, hi = (lo, mid) if fits(mid) else (mid, hi)
    return Fraction(repr(hi))


def per_answer(k: int) -> None:
    basic = laplace_sd(k)
    rho = rho_within(1, DELTA) / k
    zcdp = gauss_sd(float(1 / (2 * rho)))
    scale = least_noise(lambda b: Event("discrete_laplace", scale=b, sensitivity=1), k, 1, 10)
    sigma2 = least_noise(lambda s: Event("discrete_gaussian", sigma2=s, sensitivity=1), k, 1, 10)
    pld_laplace, pld_gauss = laplace_sd(float(scale)), gauss_sd(float(sigma2))
    print(f"\n{k} sensitivity-1 counts at a total (1, 1e-6): per-answer standard deviation")
    print(f"  Laplace, ε added up (ε = 1/{k} each)        {basic:8.1f}")
    print(f"  Gaussian, zCDP + CKS (ρ = {float(rho):.3g} each)   {zcdp:8.1f}")
    print(f"  discrete Laplace composed by PLD           {pld_laplace:8.1f}", end="")
    print(f"  (scale {float(scale):.2f})")
    print(f"  discrete Gaussian composed by PLD          {pld_gauss:8.1f}", end="")
    print(f"  (σ² {float(sigma2):.1f})")
    print(f"  gain: {basic / pld_laplace:.2f}x over adding ε, {zcdp / pld_gauss:.3f}x over zCDP")
    # confirmed through the API: k counts at that noise fit in a fresh PLD budget
    for loss in ({"epsilon": float(1 / scale)}, {"rho": float(1 / (2 * sigma2))}):
        df = pd.DataFrame({"x": range(10)})
        budget = df.dp.set_budget(epsilon=1, delta=1e-6, accountant="pld", seed=1)
        start = time.perf_counter()
        for _ in range(k):
            df.dp.count(**loss)  # type: ignore[call-overload]
        took = time.perf_counter() - start
        print(
            f"  through df.dp ({next(iter(loss))}): {k} counts fit, spent ε = "
            f"{float(budget.spent):.4f} at δ = 1e-6; {1000 * took / k:.2f} ms per release"
        )


def mixed(seeds: int) -> None:
    """Random workloads of counts, means, a key selection and a median: PLD against Σε."""
    rng = np.random.default_rng(0)
    people = pd.DataFrame(
        {"salary": rng.uniform(0, 1e5, 2000), "dept": rng.choice(list("abcdefgh"), 2000)}
    )
    grid = np.linspace(0, 1e5, 101)
    print("\nMixed workloads (counts, means, a key selection, a median) on a PLD budget (1, 1e-6)")
    print("  seed  releases  Σε of them  ε at 1e-6 by PLD")
    for seed in range(seeds):
        df = people.copy()
        budget = df.dp.set_budget(epsilon=1, delta=1e-6, accountant="pld", seed=seed)
        r = np.random.default_rng(seed)
        total = Fraction(0)
        for _ in range(int(r.integers(20, 40))):
            eps = Fraction(int(r.integers(1, 8)), 400)
            choice = int(r.integers(0, 4))
            try:
                if choice == 0:
                    df.dp.count(epsilon=float(eps))
                elif choice == 1:
                    df.dp.mean("salary", clip=(0, 1e5), epsilon=float(eps))
                elif choice == 2:
                    with warnings.catch_warnings():  # often no key at these ε: not the point
                        warnings.simplefilter("ignore", PoorAnswerWarning)
                        df.dp.groupby("dept").count(epsilon=float(eps), delta=1e-8)
                else:
                    df.dp.median("salary", candidates=grid, epsilon=float(eps))
            except BudgetExceededError:
                continue
            total += eps
        releases = len(budget.entries)
        print(f"  {seed:4d}  {releases:8d}  {float(total):10.3f}  {float(budget.spent):16.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--k", type=int, nargs="*", default=[100, 1000])
    parser.add_argument("--workloads", type=int, default=5)
    args = parser.parse_args()
    for k in args.k:
        per_answer(k)
    mixed(args.workloads)


if __name__ == "__main__":
    main()
