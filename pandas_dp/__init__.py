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

Map of the package: rooms (subpackages) in floors, top to bottom.  A module
imports only from its own room (modules below it there) or from lower rooms,
never from a room above; a module whose name starts with ``_`` is used only
inside its room.  Each room's ``__init__`` holds the map of its modules.

========================  ====================================================
``__main__``              ``python -m pandas_dp demo`` and ``... ledger FILE``
``mypy``                  mypy plugin: ``df.dp`` typed (mypy loads it; never imported here)
``errors``                every exception type, at its public path
``datasets``              synthetic example frames (demo, notebooks, benchmarks)
``plotting``              an answer's error bars, a budget's spending (imports matplotlib)
``dask/``                 ``ddf.dp`` on Dask (``import pandas_dp.dask``; never imported here)
``surface/``              ``df.dp``, its groupby (public or private keys), row-wise derivations
``pipeline/``             every release over a backend, composite releases, planning
``kinds/``                one class per statistic: plan, exact tally, noise, shape
``mechanisms/``           noise intervals, contribution bounding, keys, key selection
``accounting/``           budgets and ledgers (in memory, SQLite), holds, views
``core/``                 errors, numbers as text, exact noise, zCDP, argument checks
========================  ====================================================

:func:`dp` is the accessor as a typed function, and :func:`typed` a frame whose ``.dp``
pyright (no plugins) types: ``df = pandas_dp.typed(df)``.
"""

from __future__ import annotations

import pandas as pd

if int(pd.__version__.split(".", 1)[0]) < 3:
    raise ImportError(
        f"pandas_dp needs pandas 3.0 or later; this is pandas {pd.__version__}. A budget's frame "
        "stops spending when its rows or its privacy unit are changed in place, and that relies on "
        "pandas' copy-on-write, always on from pandas 3.0. Upgrade: pip install -U 'pandas>=3'."
    )

from .accounting.budget import PrivacyBudget
from .accounting.ledger import LedgerEntry
from .accounting.sqlite import Ledger, open_ledger
from .core.errors import BudgetExceededError, MissingBudgetError, PandasDPError, PoorAnswerWarning
from .kinds.signature import Grouped, Keyless
from .pipeline.planning import epsilon_for, half_width, rho_for
from .surface.accessor import DPAccessor, DPFrame, typed
from .surface.groupby import DPGroupBy, DPSelectedGroupBy

__all__ = [
    "BudgetExceededError",
    "DPAccessor",
    "DPFrame",
    "DPGroupBy",
    "DPSelectedGroupBy",
    "Grouped",
    "Keyless",
    "Ledger",
    "LedgerEntry",
    "MissingBudgetError",
    "PandasDPError",
    "PoorAnswerWarning",
    "PrivacyBudget",
    "dp",
    "epsilon_for",
    "half_width",
    "open_ledger",
    "rho_for",
    "typed",
]

__version__ = "0.1.0"


def dp(df: pd.DataFrame) -> DPAccessor:
    """``df.dp``, typed: ``pandas_dp.dp(df).mean("salary", clip=(0, 1e5), epsilon=0.5)``."""
    if not isinstance(df, pd.DataFrame):
        raise TypeError(f"`df` must be a pandas DataFrame, got {type(df).__name__}.")
    return DPAccessor(df)
