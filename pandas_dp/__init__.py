"""pandas_dp: differential privacy as a one-line habit for pandas users.

``import pandas_dp`` registers the ``df.dp`` accessor::

    df.dp.set_budget(epsilon=3.0)                       # one budget per frame
    # or a named budget that outlives the process:
    # df.dp.set_budget(epsilon=5.0, ledger="ledger.sqlite", name="hr.salaries")
    df.dp.mean("salary", clip=(0, 200_000), epsilon=0.5)
    df.dp.mean("salary", clip="auto", epsilon=0.5)      # bounds found privately (ε/4)
    df.dp.groupby("dept", keys=DEPTS).count(epsilon=0.5)
    df.dp.groupby("product").count(epsilon=0.5, delta=1e-7)   # keys chosen privately
    df.dp.argmax_exp("product", candidates=PRODUCTS, epsilon=0.5)
    df.dp.median("salary", candidates=GRID, epsilon=0.2)
    df.dp.count(epsilon=0.5, ci=0.95)                   # estimate, lower, upper
    pandas_dp.epsilon_for("count", half_width=10, level=0.95)   # plan before spending
    # or a zCDP budget, df.dp.set_budget(rho=0.5): every release then takes rho= too

Map of the package, top to bottom: each module imports only modules below it.

========================  ====================================================
``__main__``              ``python -m pandas_dp demo`` and ``... ledger FILE``
``mypy``                  mypy plugin: ``df.dp`` typed (mypy loads it; never imported here)
``dask``                  ``ddf.dp`` on Dask (``import pandas_dp.dask``; never imported here)
``dask_units``            Dask with a privacy unit: rows split into buckets by unit, then bounded
``dask_graph``            what a Dask collection is made of: markers, row alignment, schedulers
``accessor``              ``df.dp``: set_budget, histogram, row-wise derivations
``keyless``               groupby(by) without keys, value_counts, crosstab: keys chosen privately
``groupby``               ``df.dp.groupby(by, keys=...)``: the grouped surface
``surface``               each release written once for both surfaces (self-typed overloads)
``selections``            argmax_exp/quantile/median/bounds/clipped_share; ε from rho=
``auto``                  clip="auto" / max_rows="auto" / cut=True: their ε (ρ) shares, shown
``docstrings``            release docstrings: shared paragraphs, templates rendered per surface
``planning``              half_width / epsilon_for / rho_for: accuracy planned before spending
``release``               run: every release over a backend (Frame); the registry of kinds
``describe``              describe: count/mean/std and quartiles of columns, one kind
``select``                argmax_exp, top-k, quantiles: plans, score tables, kinds
``variance``              var / std: the variance's plan, statistics and kind
``clipbounds``            bounds / clip="auto": private clip bounds (AboveThreshold), a kind
``aggregate``             counts and clipped sums: plans, statistics, kinds
``partition``             keys chosen privately (no public keys): plans from δ, the kernel
``accuracy``              noise intervals: exact discrete Laplace/Gaussian quantiles
``kind``                  Neighbours (the neighbour relation), Rows, the Kind contract
``bounding``              privacy unit: at most max_rows rows / max_groups keys per person
``budget``                PrivacyBudget (reserve, commit, hold), frame binding, marker
``budget_view``           the budget's HTML and text views: its facts, latest releases
``keys``                  public keys and candidates: normalise, check, encode
``sqlite_ledger``         named budgets in a SQLite file: Ledger, SqliteStore, open_ledger
``ledger_holds``          holds in a ledger file (df.dp.reserve), dead processes' released
``ledger_format``         the ledger file's schema, migrations, stored values, views
``ledger``                accounting core: LedgerEntry, check_fits, BudgetStore, MemoryStore
``validation``            argument checks that return normalised values
``errors``                every exception type
``rowwise``               the row-wise expression check of ``df.dp.query``, masks
``noise``                 CSPRNG / seeded words, exact samplers, grid; array types
``zcdp``                  zCDP arithmetic: ρ charges, the (ε, δ) a ρ means (data-free)
``text``                  public numbers as text: number_text, the one number format
``datasets``              synthetic example frames (demo, notebooks, benchmarks)
========================  ====================================================

:func:`dp` is the accessor as a typed function, for mypy and pyright users.
"""

from __future__ import annotations

import pandas as pd

if int(pd.__version__.split(".", 1)[0]) < 3:
    raise ImportError(
        f"pandas_dp needs pandas 3.0 or later; this is pandas {pd.__version__}. A budget's frame "
        "stops spending when its rows or its privacy unit are changed in place, and that relies on "
        "pandas' copy-on-write, always on from pandas 3.0. Upgrade: pip install -U 'pandas>=3'."
    )

from .accessor import DPAccessor
from .budget import PrivacyBudget
from .errors import BudgetExceededError, MissingBudgetError, PandasDPError
from .groupby import DPGroupBy
from .keyless import DPSelectedGroupBy
from .ledger import LedgerEntry
from .planning import epsilon_for, half_width, rho_for
from .sqlite_ledger import Ledger, open_ledger

__all__ = [
    "BudgetExceededError",
    "DPAccessor",
    "DPGroupBy",
    "DPSelectedGroupBy",
    "Ledger",
    "LedgerEntry",
    "MissingBudgetError",
    "PandasDPError",
    "PrivacyBudget",
    "dp",
    "epsilon_for",
    "half_width",
    "open_ledger",
    "rho_for",
]

__version__ = "0.1.0"


def dp(df: pd.DataFrame) -> DPAccessor:
    """``df.dp``, typed: ``pandas_dp.dp(df).mean("salary", clip=(0, 1e5), epsilon=0.5)``."""
    if not isinstance(df, pd.DataFrame):
        raise TypeError(f"`df` must be a pandas DataFrame, got {type(df).__name__}.")
    return DPAccessor(df)
