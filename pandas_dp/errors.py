"""Exception types raised by pandas_dp.

Every exception subclasses the built-in a user would already catch, so that
``except LookupError`` or ``except ValueError`` keeps working in ETL scripts.
No message ever contains a data value, a true statistic or a key observed in
the data.
"""

from __future__ import annotations

from fractions import Fraction

__all__ = ["BudgetExceededError", "MissingBudgetError", "PandasDPError"]


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
            f"This release needs epsilon={_show(requested)} but the budget has only "
            f"epsilon={_show(remaining)} left; nothing was spent. Ask for a smaller "
            "epsilon, or stop: every release spends from the same people's budget."
        )

    def __reduce__(self) -> tuple[type[BudgetExceededError], tuple[Fraction, Fraction]]:
        return (type(self), (self.requested, self.remaining))


class MissingBudgetError(PandasDPError, LookupError):
    """The frame has no privacy budget it may spend."""


def _show(x: Fraction) -> str:
    """A Fraction as a short decimal string for messages (public amounts only)."""
    if x.denominator == 1:
        return str(x.numerator)
    return f"{float(x):.10g}"
