"""One class per statistic: its plan, exact tally, noise and shape (a kind registers by existing).

This room, top to bottom: each module imports only modules below it (here or in
a lower room); a leading ``_`` marks a module used only inside this room.

========================  ====================================================
``describe``              describe: count/mean/std and quartiles of columns, one kind
``clip_bounds``           bounds / clip="auto": private clip bounds (AboveThreshold), a kind
``select``                argmax_exp, top-k, quantiles: plans, score tables, kinds
``variance``              var / std: the variance's plan, statistics and kind
``aggregate``             counts and clipped sums: plans, statistics, kinds
``signature``             what a release looks like to its caller: parameters, forms, docs
``base``                  Neighbours (the neighbour relation), Rows, the Kind contract
========================  ====================================================
"""
