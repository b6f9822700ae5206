"""Exception types raised by pandas_dp, and the one warning it gives.

Every exception subclasses the built-in a user would already catch, so that
``except LookupError`` or ``except ValueError`` keeps working in ETL scripts.
No message ever contains a data value, a true statistic or a key observed in
the data.  :class:`PoorAnswerWarning` says that an answer is poor for a reason
the library knows; :func:`warn_poor` gives it at the caller's line.
"""

from __future__ import annotations

import sys
import warnings
from fractions import Fraction

from .text import epsilon_text

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
    "warn_poor",
]


class PandasDPError(Exception):
    """Base class of every pandas_dp error."""


class BudgetExceededError(PandasDPError):
    """A release (or a hold) would spend more than the budget has left of one quantity.

    Nothing was spent and no noise was drawn; later queries that fit still run.
    A budget counts its total (ε, or ρ for a zCDP budget) and, when it holds
    one, its δ; each charge must fit in both.  The error names the quantity
    that ran out and gives the amounts of that quantity (the total's when
    both ran out).

    Attributes
    ----------
    requested : Fraction
        What the refused release (or hold) asked for, of :attr:`quantity`.
    remaining : Fraction
        What the budget has left of :attr:`quantity` (unchanged by the refusal).
    quantity : str
        The quantity that ran out: ``"epsilon"`` (an ε budget's total; under
        PLD, an (ε, δ) budget's default, the ε at its δ of everything composed,
        a note saying so),
        ``"rho"`` (a zCDP budget's total; a release given ``epsilon=`` asks
        for ``epsilon**2 / 2`` of it) or ``"delta"`` (the budget's δ, spent
        by key selections).
    """

    def __init__(self, requested: Fraction, remaining: Fraction, quantity: str = "epsilon") -> None:
        if quantity not in _FIXES:
            raise ValueError(f"`quantity` must be one of {', '.join(_FIXES)}; got {quantity!r}.")
        self.requested = requested
        self.remaining = remaining
        self.quantity = quantity
        super().__init__(
            f"This release needs {quantity}={epsilon_text(requested)} but the budget has only "
            f"{quantity}={epsilon_text(remaining)} left; nothing was spent. {_FIXES[quantity]}"
        )

    def __reduce__(self) -> tuple[type[BudgetExceededError], tuple[Fraction, Fraction, str]]:
        return (type(self), (self.requested, self.remaining, self.quantity))


#: What to do when each quantity runs out (the end of BudgetExceededError's message).
_FIXES = {
    "epsilon": "Ask for a smaller epsilon, or stop: every release spends from the same "
    "people's budget.",
    "rho": "Ask for a smaller rho (under this zCDP budget a release given epsilon= costs "
    "rho=epsilon**2/2), or stop: every release spends from the same people's budget.",
    "delta": "Ask for a smaller delta (choosing keys from the data spends it), or pass the "
    "public keys with keys=[...], which need none; or stop: every release spends from the "
    "same people's budget.",
}


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


# --------------------------------------------------------------------- warnings


class AccountingWarning(UserWarning):
    """A budget composes otherwise than asked: ``accountant="pld"`` without ``dp_accounting``.

    Issued once per process; the budget then adds its releases' ε and δ up
    (the promise is the same (ε, δ), only less of it is usable), and says so
    in its views.  ``pip install "pandas-dp[pld]"`` to compose by PLD.  An
    (ε, δ) budget without ``accountant=`` (PLD by default where the library is
    installed) falls back the same way with the note in its views only: it
    was not asked for PLD.
    """


class PoorAnswerWarning(UserWarning):
    """An answer is poor for a reason the library knows; the facts are in its output.

    Given when a release without ``keys=`` chose no key, when a share that
    ``cut=True`` measured (values outside the clip, persons over ``max_rows``
    or ``max_groups``) is large, or when ``clip="auto"`` found few values.  The
    release is made and paid for; the warning only says how to read it.  Its
    text names the reason and what to change, never a data value or a
    released one.  One class, so that it is filtered in one line::

        warnings.simplefilter("error", pandas_dp.PoorAnswerWarning)   # stop on it
        warnings.simplefilter("ignore", pandas_dp.PoorAnswerWarning)  # or never show it
    """


#: The package whose frames :func:`warn_poor` skips to reach the caller's line.
_PACKAGE = __name__.partition(".")[0]


def warn_poor(message: str) -> None:
    """Give :class:`PoorAnswerWarning` with ``message`` at the first line outside this package."""
    level, frame = 2, sys._getframe(1)  # stacklevel 2: warn_poor's caller
    while frame is not None and frame.f_globals.get("__name__", "").partition(".")[0] == _PACKAGE:
        level, frame = level + 1, frame.f_back  # type: ignore[assignment]
    warnings.warn(message, PoorAnswerWarning, stacklevel=level)
