"""The floor everything stands on: nothing of the package below it.

This room, top to bottom: each module imports only modules below it (here or in
a lower room); a leading ``_`` marks a module used only inside this room.

========================  ====================================================
``validation``            argument checks that return normalised values; ε and ρ read exactly
``noise``                 CSPRNG / seeded words, exact samplers, grid; array types
``zcdp``                  zCDP arithmetic: ρ charges, the (ε, δ) a ρ means (data-free)
``errors``                every exception type (users import them from :mod:`pandas_dp.errors`)
``text``                  public numbers as text: number_text, the one number format
========================  ====================================================
"""
