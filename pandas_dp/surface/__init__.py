"""What users call: ``df.dp``, its groupby with or without keys, row-wise derivations.

This room, top to bottom: each module imports only modules below it (here or in
a lower room); a leading ``_`` marks a module used only inside this room.

========================  ====================================================
``accessor``              ``df.dp``: set_budget, histogram, row-wise derivations
``keyless``               groupby(by) without keys, value_counts, crosstab: keys chosen privately
``groupby``               ``df.dp.groupby(by, keys=...)``: the grouped surface
``rowwise``               the row-wise expression check of ``df.dp.query``, masks
``_releases``             each release written once for both surfaces (self-typed overloads)
``_selections``           argmax_exp/quantile/median/bounds/clipped_share; ε from rho=
``_docs``                 release docstrings: shared paragraphs, templates rendered per surface
========================  ====================================================
"""
