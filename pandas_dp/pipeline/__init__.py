"""Every release over a backend, in one order; composite releases; planning before spending.

This room, top to bottom: each module imports only modules below it (here or in
a lower room); a leading ``_`` marks a module used only inside this room.

========================  ====================================================
``aggregate``             agg: several statistics of several columns in one call (a recipe)
``workload``              df.dp.plan: a whole analysis's losses from target accuracies, composed
``planning``              half_width / epsilon_for / rho_for: accuracy planned before spending
``recipes``               composite releases: several releases under one hold (clip="auto", ...)
``policy``                keys chosen privately, many per person: the selection step of a call
``run``                   run: every release over a backend (Frame); the registry of kinds
========================  ====================================================
"""
