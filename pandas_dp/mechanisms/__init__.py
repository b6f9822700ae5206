"""What the kinds are built from, below them: intervals, bounding, keys, key selection.

This room, top to bottom: each module imports only modules below it (here or in
a lower room); a leading ``_`` marks a module used only inside this room.

========================  ====================================================
``policy``                keys chosen privately, many per person: rounds that steer weight
``key_selection``         keys chosen privately (no public keys): plans from δ, the kernel
``keys``                  public keys and candidates: normalise, check, encode to codes
``contributions``         privacy unit: at most max_rows rows / max_groups keys per person
``accuracy``              noise intervals: exact discrete Laplace/Gaussian quantiles
========================  ====================================================
"""
