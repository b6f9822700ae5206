"""One class per statistic: its plan, exact tally, noise and shape (a kind registers by existing).

Importing this room imports each of its modules (found on disk, listed nowhere),
so every kind defined in one is in the registry
(:data:`pandas_dp.pipeline.run.KINDS`) and every release it declares
(:class:`~pandas_dp.kinds.signature.Signature`) is on the surfaces.

This room, top to bottom: each module imports only modules below it (here or in
a lower room); a leading ``_`` marks a module used only inside this room.

========================  ====================================================
``describe``              describe: count/mean/std, min/max and quartiles of columns, one kind
``extremes``              min / max: unbounded private extremes (AboveThreshold), a kind
``truncation``            max_rows="auto" of a total: the cap that balances cut and noise, a kind
``clip_bounds``           bounds / clip="auto": private clip bounds (AboveThreshold), a kind
``quantile``              quantile / median / several levels (jointly), kinds
``_joint``                joint quantiles: JointExp sampled exactly
``argmax``                argmax_exp, top-k, a kind; permute-and-flip, the selections' plans
``variance``              var / std, and cov / corr from variances: plans, statistics, kinds
``nunique``               nunique: distinct values (a union of hashes), a kind
``sums``                  clipped sums and means on a grid: plans, exact sums, kinds
``count``                 counts and histograms: plans, integer tallies, kinds
``composite``             a release made of parts, in one pass (describe, cov): plan, tally, entry
``signature``             what a release looks like to its caller: parameters, forms, docs
``base``                  Neighbours (the neighbour relation), Rows, the Kind contract
========================  ====================================================
"""

import importlib
import pkgutil

for _module in pkgutil.iter_modules(__path__):
    importlib.import_module(f"{__name__}.{_module.name}")
