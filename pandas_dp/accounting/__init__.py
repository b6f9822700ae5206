"""Budgets and ledgers: what was spent, checked and recorded before any noise.

This room, top to bottom: each module imports only modules below it (here or in
a lower room); a leading ``_`` marks a module used only inside this room.

========================  ====================================================
``sqlite``                named budgets in a SQLite file: Ledger, SqliteStore, open_ledger
``_holds``                holds in a ledger file (df.dp.reserve), dead processes' released
``_sqlite_format``        the ledger file's schema, migrations, stored values, views
``budget``                PrivacyBudget (reserve, commit, hold), frame binding, marker
``_view``                 the budget's HTML and text views: its facts, latest releases
``ledger``                the accounting core: LedgerEntry, check_fits, BudgetStore, MemoryStore
========================  ====================================================
"""
