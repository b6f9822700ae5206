"""What users call: ``df.dp``, its groupby with or without keys, row-wise derivations.

This room, top to bottom: each module imports only modules below it (here or in
a lower room); a leading ``_`` marks a module used only inside this room.

========================  ====================================================
``accessor``              ``df.dp``: set_budget, histogram, row-wise derivations, reserve
``relational``            ``df.dp.merge``, ``join``, ``concat``, ``explode``: joined frames, bounded
``_plans``                df.dp.plan: a whole analysis planned from target accuracies, then run
``tables``                value_counts and crosstab, with public keys or keys chosen privately
``groupby``               ``df.dp.groupby(by)``: one grouped surface, public or private keys
``rowwise``               the row-wise expression check of ``df.dp.query``, masks
``_releases``             every release of a surface, from its signature: calls go down as requests
``_docs``                 docstrings rendered per surface from the signatures
``_typed``                generated: the typed mixins joined, and every release's signature
``_typed_*``              generated: one mixin per kinds module, its overloads per form and scope
``_generate``             writes the ``_typed`` modules from the signatures beside the kinds
========================  ====================================================
"""
