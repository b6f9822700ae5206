"""Every exception and warning of pandas_dp, at its public path: ``from pandas_dp.errors ...``.

Defined in :mod:`pandas_dp.core.errors`; this module is where users import them from.
"""

from .core.errors import (
    AccountingWarning,
    BudgetExceededError,
    BudgetMismatchError,
    BudgetProcessError,
    CorruptLedgerError,
    LedgerAccessError,
    LedgerError,
    LedgerFormatError,
    LedgerLockedError,
    MissingBudgetError,
    MissingColumnError,
    NotALedgerError,
    PandasDPError,
    PoorAnswerWarning,
    ReservationError,
    UnknownBudgetError,
)

__all__ = [
    "AccountingWarning",
    "BudgetExceededError",
    "BudgetMismatchError",
    "BudgetProcessError",
    "CorruptLedgerError",
    "LedgerAccessError",
    "LedgerError",
    "LedgerFormatError",
    "LedgerLockedError",
    "MissingBudgetError",
    "MissingColumnError",
    "NotALedgerError",
    "PandasDPError",
    "PoorAnswerWarning",
    "ReservationError",
    "UnknownBudgetError",
]
