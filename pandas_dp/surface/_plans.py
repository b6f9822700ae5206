"""``df.dp.plan(...)``: plan a whole analysis from target accuracies, then run it.

:class:`PlanReleases` adds :meth:`~PlanReleases.plan` to ``df.dp`` and ``ddf.dp``:
the planning is :func:`pandas_dp.pipeline.workload.plan_workload` (data-free);
running a plan calls this surface's own releases, each at its planned loss,
inside :meth:`~pandas_dp.accounting.budget.PrivacyBudget.planned` so that
the ledger records its planned and realised half-widths.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import Any

from ..accounting.budget import PrivacyBudget
from ..core.text import number_text
from ..pipeline.planning import SIGNATURES, TABLES
from ..pipeline.run import Frame
from ..pipeline.workload import Option, Wanted, WorkloadPlan, plan_workload

__all__ = ["PlanReleases", "interval_text"]


def interval_text(widths: object, columns: Sequence[Hashable], level: float, unit: str) -> str:
    """Half-widths as the ledger records a plan's: ``"±50 at 95%"``, ``"salary ±1,000; ..."``."""
    if isinstance(widths, Mapping):
        values = [widths[c] for c in columns]
    elif isinstance(widths, list | tuple):
        values = list(widths)
    else:
        values = [widths] * max(len(columns), 1)
    shown = [f"±{number_text(float(v))}" + (f" {unit}" if unit else "") for v in values]
    if len(shown) > 1:
        shown = [f"{c} {s}" for c, s in zip(columns, shown, strict=True)]
    return f"{'; '.join(shown)} at {level * 100:g}%"


def _run_one(surface: Any, budget: PrivacyBudget, wanted: Wanted, option: Option) -> Any:
    """Release ``wanted`` on ``surface`` (``df.dp``) at ``option``'s loss, noting its plan."""
    family, amount = option.loss
    kwargs: dict[str, Any] = {**wanted.args, family: float(amount)}
    signature = SIGNATURES[TABLES.get(wanted.name, wanted.name)]
    if any(p.name == "ci" for p in signature.params):
        kwargs["ci"] = wanted.level
    columns = option.kind.columns() if isinstance(wanted.half_width, Mapping) else ()
    unit = option.kind.interval_unit
    planned = interval_text(wanted.half_width, columns, wanted.level, unit)
    realised = interval_text(option.widths, columns, wanted.level, unit)
    by = wanted.by or ()
    with budget.planned(planned, realised):
        if wanted.name == "histogram":
            return surface.histogram(by[0], bins=wanted.keys, **kwargs)
        if wanted.name == "crosstab":
            return surface.crosstab(*by, keys=wanted.keys, **kwargs)
        if by:
            surface = surface.groupby(by[0] if len(by) == 1 else list(by), keys=wanted.keys)
        return getattr(surface, wanted.name)(**kwargs)


class PlanReleases:
    """``plan``: the losses a whole analysis needs for its target accuracies (a base of df.dp)."""

    def _frame(self) -> Frame:
        raise NotImplementedError

    def _budget(self) -> PrivacyBudget:
        raise NotImplementedError

    def plan(
        self,
        releases: Sequence[object],
        *,
        half_width: object,
        level: float | Sequence[float] = 0.95,
        n: int | None = None,
    ) -> WorkloadPlan:
        """Plan a whole analysis: each release's loss that reaches its half-width, and the total.

        Spends nothing and reads no data (the frame's columns and dtypes only;
        under substitute, the public row count of the frame the budget was set
        on). Each release gets the smallest loss whose interval at ``level``
        is at most its ``half_width`` (its very plan, as ``pandas_dp.half_width``
        computes it); the whole is composed with what the budget has spent and
        holds under its own accountant: ε added up, ρ added up (each release
        the cheaper of Laplace, charged ε²/2, and Gaussian noise), or, under
        PLD (an (ε, δ) budget's default with ``dp_accounting``), by privacy
        loss distributions, each release's noise chosen to lower the whole.

        Parameters
        ----------
        releases : list
            Each a name (``"count"``) or a tuple ``(name, *positional,
            {keywords})``, as the release is called without its loss:
            ``("mean", "salary", {"clip": (0, 2e5), "n": 1000})``,
            ``("groupby.count", "dept", {"keys": DEPTS})`` (the ``by`` columns
            first), ``("histogram", "age", {"bins": EDGES})``, ``("crosstab",
            "dept", "level", {"keys": (DEPTS, LEVELS)})``,
            ``("median", "age", {"candidates": GRID})``. A release with an
            interval: count, sum, mean, var, std, nunique, quantile and median
            (by rank), histogram and crosstab, and their grouped forms with
            public keys. ``n``: the assumed rows per key of a mean, var or std.
        half_width : float, list or dict
            The target: one for every release, or one each (a several-column
            sum or mean: a dict by column), in the release's units (rows,
            data units, ranks for a quantile).
        level : float or list of float, default 0.95
            The confidence level of the intervals (one each, or one for all).
        n : int, optional
            The assumed rows per key of every mean, var or std that names none.

        Returns
        -------
        WorkloadPlan
            ``releases`` (a DataFrame: each release's loss, noise, targeted and
            realised half-width, level), ``total`` (what the budget would have
            spent and held: under PLD the ε at its δ) and ``remaining``;
            ``plan.run()`` releases them in order, each at its planned loss
            with ``ci=level`` where it has one, and the ledger records its
            planned and realised half-widths.

        Raises
        ------
        BudgetExceededError
            If the targets do not fit in what is left (nothing is spent): its
            notes say how much more they need, and by what factor every
            half-width would have to widen to fit.
        ValueError, TypeError
            A release without an interval, keys chosen privately, a missing
            ``n``, a half-width no loss reaches.
        """
        budget = self._budget()
        plan = plan_workload(self._frame(), budget, releases, half_width, level, n)
        plan.runner = lambda wanted, option: _run_one(self, budget, wanted, option)
        return plan
