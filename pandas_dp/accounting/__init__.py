"""Budgets and ledgers: what was spent, checked and recorded before any noise.

This room, top to bottom: each module imports only modules below it (here or in
a lower room); a leading ``_`` marks a module used only inside this room.

========================  ====================================================
``sqlite``                named budgets in a SQLite file: Ledger, open_ledger
``_sqlite_store``         SqliteStore: one named budget of a ledger file, read and spent
``_sqlite_reads``         what a ledger file's budgets have taken, read in one snapshot
``_holds``                holds in a ledger file (df.dp.reserve), dead processes' released
``_sqlite_format``        the ledger file's schema, migrations, stored values, views
``budget``                PrivacyBudget (reserve, commit, hold), frame binding, marker
``_view``                 the budget's HTML and text views: its facts, latest releases
``ledger``                the accounting core: LedgerEntry, the accountants (check_fits; PLD),
                          BudgetStore, MemoryStore
``_pld``                  events' privacy loss distributions, by dp_accounting (imported lazily)
``events``                what each release ran, with exact parameters (for any accountant)
========================  ====================================================
"""
