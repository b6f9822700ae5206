"""Exception types raised by pandas_dp.

Every exception subclasses the built-in a user would already catch, so that
``except LookupError`` or ``except ValueError`` keeps working in ETL scripts.
No message ever contains a data value, a true statistic or a key observed in
the data.
"""

from __future__ import annotations

from fractions import Fraction

from .text import epsilon_text

__all__ = [
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
    "ReservationError",
    "UnknownBudgetError",
]


class PandasDPError(Exception):
    """Base class of every pandas_dp error."""


class BudgetExceededError(PandasDPError):
    """A release would spend more epsilon than the budget has left.

    Nothing was spent and no noise was drawn; later queries that fit still run.

    Attributes
    ----------
    requested : Fraction
        The epsilon the refused release asked for.
    remaining : Fraction
        The epsilon left in the budget (unchanged by the refusal).
    """

    def __init__(self, requested: Fraction, remaining: Fraction) -> None:
        self.requested = requested
        self.remaining = remaining
        super().__init__(
            f"This release needs epsilon={epsilon_text(requested)} but the budget has only "
            f"epsilon={epsilon_text(remaining)} left; nothing was spent. Ask for a smaller "
            "epsilon, or stop: every release spends from the same people's budget."
        )

    def __reduce__(self) -> tuple[type[BudgetExceededError], tuple[Fraction, Fraction]]:
        return (type(self), (self.requested, self.remaining))


class MissingBudgetError(PandasDPError, LookupError):
    """The frame has no privacy budget it may spend (or must assert again that it may)."""


class MissingColumnError(PandasDPError, KeyError):
    """A column named by a release is not in the frame (a KeyError, as in pandas).

    The message names the column and lists the frame's columns: column names
    are schema, not data.
    """

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


class BudgetProcessError(PandasDPError, RuntimeError):
    """An in-memory budget was asked to spend in a process other than the one that created it.

    A forked child holds a copy of the parent's in-memory accounting; spending
    there would not count in the parent.  Share one budget between processes
    with a named ledger budget: ``set_budget(..., ledger="file.sqlite", name=...)``.
    """


# ------------------------------------------------------------------ ledger files


class LedgerError(PandasDPError):
    """Base class of the errors of a ledger file. Nothing was spent."""


class LedgerAccessError(LedgerError, OSError):
    """The ledger file cannot be opened or written (missing folder, a directory, read-only)."""


class LedgerFormatError(LedgerError, ValueError):
    """The file is not a ledger this version of pandas_dp can use; it was left untouched."""


class NotALedgerError(LedgerFormatError):
    """The file is not a pandas_dp ledger (not SQLite, or another application's database)."""


class CorruptLedgerError(LedgerFormatError):
    """The ledger file is damaged: SQLite reports corruption, or a stored value is invalid."""


class LedgerLockedError(LedgerError, TimeoutError):
    """Another connection held the ledger locked for longer than the timeout."""


class BudgetMismatchError(LedgerError, ValueError):
    """``set_budget`` named an existing budget with another total or adjacency.

    Raised for named budgets in a ledger file and for named in-memory budgets
    (``set_budget(epsilon, name=...)`` without a ledger); nothing was attached.
    """


class ReservationError(LedgerError, LookupError):
    """A reservation token that the budget does not hold pending (unknown, cancelled, committed)."""


class UnknownBudgetError(LedgerError, KeyError):
    """The ledger has no budget of that name."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""
