"""``df.dp.groupby(by, keys=...)``: the grouped surface. Declares arguments, delegates.

Keys are public: passed by the caller, never read from the data (see
:mod:`pandas_dp.keys`).  Rows whose key is not among ``keys`` (or is missing)
are dropped; keys with no rows are answered too (a noisy zero count, a mean
inside the clip).  A grouped release is charged once for all its keys
(parallel composition: with one row per person, each person is in one group).
Every release runs the pipeline of :mod:`pandas_dp.release`.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from typing import Any, TypeVar, overload

import pandas as pd

from .aggregate import Count, Mean, Sum, Var
from .describe import Describe
from .keys import Grouping
from .kind import Kind
from .release import ContributionBounds, run
from .select import Argmax, Quantile
from .validation import Bounds, check_epsilon

__all__ = ["DPGroupBy", "DPGroupedReleases"]

Many = TypeVar("Many")


class DPGroupedReleases:
    """Grouped private releases over public keys: ``df.dp.groupby`` and ``ddf.dp.groupby``.

    A subclass holds the grouping (``_group``) and runs each built kind with
    :meth:`_release`: :class:`DPGroupBy` on pandas,
    ``pandas_dp.dask.DaskDPGroupBy`` on Dask.

    Holds only the frame, the ``by`` columns and the keys; the budget is read
    from the frame at each release.  Every release returns a Series (or a
    DataFrame for several columns) indexed by exactly ``keys``, in the order
    given, and costs its epsilon once for all keys.

    Notes
    -----
    Keys are public. Rows whose key is not in ``keys``, or is missing, are
    dropped; keys with no rows still get an answer (a noisy zero count; a mean
    inside the clip). Answers for small groups are noisy by design: a count
    may be negative, which is the honest, unbiased answer.
    """

    _group: Grouping

    def _release(self, kind: Kind[Any, Many], bounds: ContributionBounds) -> Many:
        """Release ``kind`` per key, spending from the frame's budget."""
        raise NotImplementedError

    @property
    def by(self) -> list[Hashable]:
        """The key columns."""
        return list(self._group.by)

    @property
    def keys(self) -> pd.Index:
        """The public keys, in the order results are indexed by."""
        return self._group.keys

    def __repr__(self) -> str:
        return f"{type(self).__name__}(by={self.by!r}, keys={len(self.keys)})"

    @overload
    def count(
        self,
        column: Hashable | None = None,
        *,
        epsilon: float,
        ci: None = None,
        max_rows: int | None = None,
        max_groups: int | None = None,
    ) -> pd.Series: ...

    @overload
    def count(
        self,
        column: Hashable | None = None,
        *,
        epsilon: float,
        ci: float,
        max_rows: int | None = None,
        max_groups: int | None = None,
    ) -> pd.DataFrame: ...

    def count(
        self,
        column: Hashable | None = None,
        *,
        epsilon: float,
        ci: float | None = None,
        max_rows: int | None = None,
        max_groups: int | None = None,
    ) -> pd.Series | pd.DataFrame:
        """Noisy count of rows (or non-missing values of ``column``) per key.

        Parameters
        ----------
        column : label, optional
            Count the non-missing values of this column instead of rows.
        epsilon : float
            Privacy cost of the whole release (all keys), keyword-only.
        ci : float, optional
            A confidence level in (0, 1): each key's count with its interval.
        max_rows : int, optional
            With a privacy unit: at most this many rows of one person are used
            (in each key, and for a selection in each candidate; the rest are
            dropped at random). Defaults to ``set_budget(max_rows=...)``; refused
            on a frame whose rows are persons.
        max_groups : int, optional
            With a privacy unit: at most this many keys of one person are used
            (chosen at random). Defaults to ``set_budget(max_groups=...)``.

        Returns
        -------
        pandas.Series or pandas.DataFrame
            Integer counts indexed by ``keys``; may be negative for tiny groups.
            With ``ci``: a DataFrame with columns ``estimate``, ``lower``, ``upper``.

        Raises
        ------
        MissingBudgetError, BudgetExceededError, KeyError, ValueError, TypeError

        Notes
        -----
        Costs ``epsilon`` once. L1 sensitivity 1 (add_remove) or 2 (substitute:
        a row may move between keys). Discrete Laplace noise, scale Δ/ε.
        With ``ci``, each key's true count lies in its interval with
        probability at least ``ci`` (post-processing, no extra cost).
        """
        return self._release(
            Count(check_epsilon(epsilon), column, ci),
            ContributionBounds(max_rows, max_groups),
        )

    @overload
    def sum(
        self,
        column: None = None,
        *,
        clip: Mapping[Hashable, Bounds],
        epsilon: float,
        ci: float | None = None,
        max_rows: int | None = None,
        max_groups: int | None = None,
    ) -> pd.DataFrame: ...

    @overload
    def sum(
        self,
        column: Hashable,
        *,
        clip: Bounds,
        epsilon: float,
        ci: None = None,
        max_rows: int | None = None,
        max_groups: int | None = None,
    ) -> pd.Series: ...

    @overload
    def sum(
        self,
        column: Hashable,
        *,
        clip: Bounds,
        epsilon: float,
        ci: float,
        max_rows: int | None = None,
        max_groups: int | None = None,
    ) -> pd.DataFrame: ...

    def sum(
        self,
        column: Hashable | None = None,
        *,
        clip: Any,
        epsilon: float,
        ci: float | None = None,
        max_rows: int | None = None,
        max_groups: int | None = None,
    ) -> pd.Series | pd.DataFrame:
        """Noisy clipped sum per key.

        Parameters
        ----------
        column : label, optional
            The numeric column; omit it and pass ``clip`` as a mapping
            ``{column: (lower, upper)}`` for several columns at once.
        clip : (float, float) or dict
            Public clip bounds; values are clipped to them before summing.
        epsilon : float
            Privacy cost of the whole release, split equally across columns.
        ci : float, optional
            A confidence level in (0, 1): each answer with its interval; a
            DataFrame with columns ``estimate``, ``lower``, ``upper`` (under
            each column name, for a mapping).
        max_rows : int, optional
            With a privacy unit: at most this many rows of one person are used
            (in each key, and for a selection in each candidate; the rest are
            dropped at random). Defaults to ``set_budget(max_rows=...)``; refused
            on a frame whose rows are persons.
        max_groups : int, optional
            With a privacy unit: at most this many keys of one person are used
            (chosen at random). Defaults to ``set_budget(max_groups=...)``.

        Returns
        -------
        pandas.Series or pandas.DataFrame
            Indexed by ``keys``; a DataFrame (one column per value) for a mapping.

        Raises
        ------
        MissingBudgetError, BudgetExceededError, KeyError, ValueError, TypeError

        Notes
        -----
        Costs ``epsilon`` once. L1 sensitivity per column ``max(|L|, |U|)``
        (add_remove) or ``2·max(|L|, |U|)`` (substitute), on a data-independent
        power-of-two grid with exact discrete Laplace noise. With ``ci``: the
        interval of :meth:`DPAccessor.sum` for each key (the noise on the
        clipped sum, not the clipping bias), at no extra cost.
        """
        return self._release(
            Sum(check_epsilon(epsilon), column, clip, ci),
            ContributionBounds(max_rows, max_groups),
        )

    @overload
    def mean(
        self,
        column: None = None,
        *,
        clip: Mapping[Hashable, Bounds],
        epsilon: float,
        ci: float | None = None,
        max_rows: int | None = None,
        max_groups: int | None = None,
    ) -> pd.DataFrame: ...

    @overload
    def mean(
        self,
        column: Hashable,
        *,
        clip: Bounds,
        epsilon: float,
        ci: None = None,
        max_rows: int | None = None,
        max_groups: int | None = None,
    ) -> pd.Series: ...

    @overload
    def mean(
        self,
        column: Hashable,
        *,
        clip: Bounds,
        epsilon: float,
        ci: float,
        max_rows: int | None = None,
        max_groups: int | None = None,
    ) -> pd.DataFrame: ...

    def mean(
        self,
        column: Hashable | None = None,
        *,
        clip: Any,
        epsilon: float,
        ci: float | None = None,
        max_rows: int | None = None,
        max_groups: int | None = None,
    ) -> pd.Series | pd.DataFrame:
        """Noisy clipped mean per key, always inside the clip bounds.

        Parameters
        ----------
        column : label, optional
            The numeric column; omit it and pass ``clip`` as a mapping for
            several columns (a DataFrame is returned).
        clip : (float, float) or dict
            Public clip bounds.
        epsilon : float
            Privacy cost of the whole release, split equally across columns.
        ci : float, optional
            A confidence level in (0, 1): each answer with its interval; a
            DataFrame with columns ``estimate``, ``lower``, ``upper`` (under
            each column name, for a mapping).
        max_rows : int, optional
            With a privacy unit: at most this many rows of one person are used
            (in each key, and for a selection in each candidate; the rest are
            dropped at random). Defaults to ``set_budget(max_rows=...)``; refused
            on a frame whose rows are persons.
        max_groups : int, optional
            With a privacy unit: at most this many keys of one person are used
            (chosen at random). Defaults to ``set_budget(max_groups=...)``.

        Returns
        -------
        pandas.Series or pandas.DataFrame
            Indexed by ``keys``; an empty group's mean is the clip midpoint plus noise.

        Raises
        ------
        MissingBudgetError, BudgetExceededError, KeyError, ValueError, TypeError

        Notes
        -----
        Costs ``epsilon`` once: the complementary sums ``Σ(x − L)`` and
        ``Σ(U − x)`` per key, jointly of L1 sensitivity ``U − L`` (add_remove)
        or ``2(U − L)`` (substitute). With ``ci``: the interval of
        :meth:`DPAccessor.mean` for each key, always inside the clip; a key
        with no rows has no true mean, and its interval is wide.
        """
        return self._release(
            Mean(check_epsilon(epsilon), column, clip, ci),
            ContributionBounds(max_rows, max_groups),
        )

    @overload
    def argmax_exp(
        self,
        column: Hashable,
        *,
        candidates: Any = ...,
        epsilon: float,
        k: None = ...,
        value: Hashable | None = ...,
        clip: Any = ...,
        max_rows: int | None = ...,
        max_groups: int | None = ...,
    ) -> pd.Series: ...

    @overload
    def argmax_exp(
        self,
        column: Hashable,
        *,
        candidates: Any = ...,
        epsilon: float,
        k: int,
        value: Hashable | None = ...,
        clip: Any = ...,
        max_rows: int | None = ...,
        max_groups: int | None = ...,
    ) -> pd.DataFrame: ...

    def argmax_exp(
        self,
        column: Hashable,
        *,
        candidates: Any = None,
        epsilon: float,
        k: int | None = None,
        value: Hashable | None = None,
        clip: Any = None,
        max_rows: int | None = None,
        max_groups: int | None = None,
    ) -> pd.Series | pd.DataFrame:
        """The candidate with the most rows (or largest clipped sum) in every key, privately.

        Parameters
        ----------
        column : label
            The column whose values are the candidates.
        candidates : list, array, Index or CategoricalDtype
            The public candidates, keyword-only; never read from the data. Rows
            whose value is not a candidate are dropped; a candidate with no
            rows can still win.
        epsilon : float
            Privacy cost of the whole release (all keys), keyword-only.
        k : int, optional
            How many candidates per key, best first (top-k by peeling): a
            DataFrame, also for ``k=1``. Without ``k``, a Series.
        value : label, optional
            Score candidates by the clipped sum of this numeric column.
        clip : (float, float), optional
            Public clip bounds for ``value``; required with it.
        max_rows : int, optional
            With a privacy unit: at most this many rows of one person are used
            (in each key, and for a selection in each candidate; the rest are
            dropped at random). Defaults to ``set_budget(max_rows=...)``; refused
            on a frame whose rows are persons.
        max_groups : int, optional
            With a privacy unit: at most this many keys of one person are used
            (chosen at random). Defaults to ``set_budget(max_groups=...)``.

        Returns
        -------
        pandas.Series or pandas.DataFrame
            The winner per key, indexed by ``keys`` (named after ``column``);
            with ``k``, a DataFrame with columns ``1..k``, best first.

        Raises
        ------
        MissingBudgetError, BudgetExceededError, KeyError, ValueError, TypeError

        Notes
        -----
        Costs ``epsilon`` once for all keys (parallel composition: each person
        is in one key). One exact permute-and-flip per key, all keys in one
        vectorized pass; ``c = ε/Δ`` under add_remove and ``ε/(2Δ)`` under
        substitute (a row moving between keys is a removal in one and an
        addition in the other, each costing at most ε/2). Keys with no rows
        get a uniformly random candidate. Public: keys, candidates, ``k``,
        ``clip``.
        """
        kind = Argmax.of(check_epsilon(epsilon), column, candidates, k=k, value=value, clip=clip)
        return self._release(kind, ContributionBounds(max_rows, max_groups))

    def quantile(
        self,
        column: Hashable,
        q: float,
        *,
        candidates: Any = None,
        epsilon: float,
        max_rows: int | None = None,
        max_groups: int | None = None,
    ) -> pd.Series:
        """The ``q``-quantile of ``column`` in every key, chosen from a public grid.

        Parameters
        ----------
        column : label
            A numeric column; missing values are skipped.
        q : float
            The quantile level in ``[0, 1]``.
        candidates : list, array or Index of numbers
            The public grid, finite and strictly increasing, keyword-only.
        epsilon : float
            Privacy cost of the whole release (all keys), keyword-only.
        max_rows : int, optional
            With a privacy unit: at most this many rows of one person are used
            (in each key, and for a selection in each candidate; the rest are
            dropped at random). Defaults to ``set_budget(max_rows=...)``; refused
            on a frame whose rows are persons.
        max_groups : int, optional
            With a privacy unit: at most this many keys of one person are used
            (chosen at random). Defaults to ``set_budget(max_groups=...)``.

        Returns
        -------
        pandas.Series
            One grid point per key, indexed by ``keys``.

        Raises
        ------
        MissingBudgetError, BudgetExceededError, KeyError, ValueError, TypeError

        Notes
        -----
        Costs ``epsilon`` once for all keys. Score: the distance from ``q·n``
        to ``[#(x < c), #(x ≤ c)]`` per key and grid point (one
        searchsorted and one 2-D bincount), permute-and-flip with
        ``c = ε/(2Δ)``: ``Δ = max(q, 1 − q)`` under add_remove and
        ``2·max(q, 1 − q)`` under substitute (a row that moves between keys
        changes two keys' scores; 1 for the median). A key with no rows gets
        a grid point close to uniform at random.
        """
        kind = Quantile.of(check_epsilon(epsilon), column, q, candidates, "quantile")
        return self._release(kind, ContributionBounds(max_rows, max_groups))

    def median(
        self,
        column: Hashable,
        *,
        candidates: Any = None,
        epsilon: float,
        max_rows: int | None = None,
        max_groups: int | None = None,
    ) -> pd.Series:
        """The median of ``column`` in every key, chosen from a public grid.

        Parameters
        ----------
        column : label
            A numeric column; missing values are skipped.
        candidates : list, array or Index of numbers
            The public grid, finite and strictly increasing, keyword-only.
        epsilon : float
            Privacy cost of the whole release (all keys), keyword-only.
        max_rows : int, optional
            With a privacy unit: at most this many rows of one person are used
            (in each key, and for a selection in each candidate; the rest are
            dropped at random). Defaults to ``set_budget(max_rows=...)``; refused
            on a frame whose rows are persons.
        max_groups : int, optional
            With a privacy unit: at most this many keys of one person are used
            (chosen at random). Defaults to ``set_budget(max_groups=...)``.

        Returns
        -------
        pandas.Series
            One grid point per key, indexed by ``keys``.

        Raises
        ------
        MissingBudgetError, BudgetExceededError, KeyError, ValueError, TypeError

        Notes
        -----
        ``quantile(column, 0.5, ...)``: sensitivity 1/2 under add_remove
        (``c = ε``) and 1 under substitute (``c = ε/2``). Costs ``epsilon``
        once for all keys.
        """
        kind = Quantile.of(check_epsilon(epsilon), column, 0.5, candidates, "median")
        return self._release(kind, ContributionBounds(max_rows, max_groups))

    @overload
    def var(
        self,
        column: Hashable,
        *,
        clip: Any,
        epsilon: float,
        ci: None = None,
        max_rows: int | None = None,
        max_groups: int | None = None,
    ) -> pd.Series: ...

    @overload
    def var(
        self,
        column: Hashable,
        *,
        clip: Any,
        epsilon: float,
        ci: float,
        max_rows: int | None = None,
        max_groups: int | None = None,
    ) -> pd.DataFrame: ...

    def var(
        self,
        column: Hashable,
        *,
        clip: Any,
        epsilon: float,
        ci: float | None = None,
        max_rows: int | None = None,
        max_groups: int | None = None,
    ) -> pd.Series | pd.DataFrame:
        """Noisy clipped sample variance (``ddof=1``) per key; never negative.

        Parameters
        ----------
        column : label
            The numeric column; missing values are skipped.
        clip : (float, float)
            Public clip bounds; values are clipped to them first.
        epsilon : float
            Privacy cost of the whole release (all keys), keyword-only.
        ci : float, optional
            A confidence level in (0, 1): each key's variance with its
            interval (see :meth:`pandas_dp.DPAccessor.var`). Costs nothing more.
        max_rows : int, optional
            With a privacy unit: at most this many rows of one person are used
            (in each key, and for a selection in each candidate; the rest are
            dropped at random). Defaults to ``set_budget(max_rows=...)``; refused
            on a frame whose rows are persons.
        max_groups : int, optional
            With a privacy unit: at most this many keys of one person are used
            (chosen at random). Defaults to ``set_budget(max_groups=...)``.

        Returns
        -------
        pandas.Series, or pandas.DataFrame
            Indexed by ``keys``; inside ``[0, (U − L)²/2]``, 0 for a key whose
            noisy count is 0. With ``ci``: a DataFrame with columns
            ``estimate``, ``lower``, ``upper``; each key's clipped sample
            variance (at least two rows) is inside its interval with
            probability at least ``ci``.

        Raises
        ------
        MissingBudgetError, BudgetExceededError, KeyError, ValueError, TypeError

        Notes
        -----
        Costs ``epsilon`` once for all keys: per key, one joint release of
        the complementary sums ``(Σ(x − L), Σ(U − x))`` (ε/2; L1 sensitivity
        ``U − L`` under add_remove, ``2(U − L)`` under substitute, where a row
        may move between keys) and of a centred second moment (ε/2; about
        ``(U − L)/8``, doubled under substitute). See
        :func:`pandas_dp.aggregate.plan_variance` for the proof.
        """
        kind = Var.of(check_epsilon(epsilon), column, clip, std=False, ci=ci)
        return self._release(kind, ContributionBounds(max_rows, max_groups))

    @overload
    def std(
        self,
        column: Hashable,
        *,
        clip: Any,
        epsilon: float,
        ci: None = None,
        max_rows: int | None = None,
        max_groups: int | None = None,
    ) -> pd.Series: ...

    @overload
    def std(
        self,
        column: Hashable,
        *,
        clip: Any,
        epsilon: float,
        ci: float,
        max_rows: int | None = None,
        max_groups: int | None = None,
    ) -> pd.DataFrame: ...

    def std(
        self,
        column: Hashable,
        *,
        clip: Any,
        epsilon: float,
        ci: float | None = None,
        max_rows: int | None = None,
        max_groups: int | None = None,
    ) -> pd.Series | pd.DataFrame:
        """Noisy clipped standard deviation (``ddof=1``) per key: the square root of :meth:`var`.

        Parameters
        ----------
        column : label
            The numeric column; missing values are skipped.
        clip : (float, float)
            Public clip bounds.
        epsilon : float
            Privacy cost of the whole release (all keys), keyword-only.
        ci : float, optional
            A confidence level in (0, 1): each key's std with its interval,
            the square roots of :meth:`var`'s. Costs nothing more.
        max_rows : int, optional
            With a privacy unit: at most this many rows of one person are used
            (in each key, and for a selection in each candidate; the rest are
            dropped at random). Defaults to ``set_budget(max_rows=...)``; refused
            on a frame whose rows are persons.
        max_groups : int, optional
            With a privacy unit: at most this many keys of one person are used
            (chosen at random). Defaults to ``set_budget(max_groups=...)``.

        Returns
        -------
        pandas.Series, or pandas.DataFrame
            Indexed by ``keys``; never negative. With ``ci``: a DataFrame with
            columns ``estimate``, ``lower``, ``upper``.

        Raises
        ------
        MissingBudgetError, BudgetExceededError, KeyError, ValueError, TypeError

        Notes
        -----
        The same release and cost as :meth:`var` (post-processing is free).
        """
        kind = Var.of(check_epsilon(epsilon), column, clip, std=True, ci=ci)
        return self._release(kind, ContributionBounds(max_rows, max_groups))

    def describe(
        self,
        columns: Any,
        *,
        clip: Any,
        candidates: Any,
        epsilon: float,
        max_rows: int | None = None,
        max_groups: int | None = None,
        ci: None = None,
    ) -> pd.DataFrame:
        """pandas' ``describe`` per key, privately: count, mean, std and quartiles.

        Parameters
        ----------
        columns : label or list of labels
            Numeric columns; missing values are skipped.
        clip : dict
            ``{column: (lower, upper)}``: public clip bounds of every column.
        candidates : dict
            ``{column: grid}``: the public grid each column's quartiles are
            chosen from (finite, strictly increasing).
        epsilon : float
            Privacy cost of the whole release (all keys), keyword-only.
        max_rows : int, optional
            With a privacy unit: at most this many rows of one person are used
            (in each key, and for a selection in each candidate; the rest are
            dropped at random). Defaults to ``set_budget(max_rows=...)``; refused
            on a frame whose rows are persons.
        max_groups : int, optional
            With a privacy unit: at most this many keys of one person are used
            (chosen at random). Defaults to ``set_budget(max_groups=...)``.
        ci : None
            Not available (a level raises TypeError saying why): see Notes.

        Returns
        -------
        pandas.DataFrame
            Indexed by ``keys``; columns ``(column, stat)`` with stat in
            ``count, mean, std, 25%, 50%, 75%``, like
            ``df.groupby(by)[columns].describe()`` without ``min`` and ``max``
            (and with every public key, absent ones too).

        Raises
        ------
        MissingBudgetError, BudgetExceededError, KeyError, ValueError, TypeError

        Notes
        -----
        Costs ``epsilon`` once for all keys (each row is in one key), split as
        ``df.dp.describe`` splits it: equally across the columns, and within a
        column's share ε_c, ε_c/2 on the joint count/mean/std release (see
        :meth:`var`) and ε_c/6 on each quartile (permute-and-flip on one score
        table per key, as :meth:`quantile`). The ledger records one entry
        stating this split. A key with no rows is answered too, but only
        with noise: a count near 0, a mean somewhere inside the clip, a std of
        0 when the noisy count is 0, and quartiles picked almost uniformly
        from the grid (not even in order). min and max are left out, as in
        ``df.dp.describe``. No ``ci=``, as in ``df.dp.describe`` (its
        quartiles come from a selection mechanism, which has no noise
        interval): use :meth:`count`, :meth:`mean` or :meth:`std` with ``ci=``.
        """
        kind = Describe.of(check_epsilon(epsilon), columns, clip, candidates, ci)
        return self._release(kind, ContributionBounds(max_rows, max_groups))


class DPGroupBy(DPGroupedReleases):
    """Grouped private releases of a pandas DataFrame; created by ``df.dp.groupby``."""

    def __init__(self, df: pd.DataFrame, by: object, keys: object) -> None:
        self._df = df
        self._group = Grouping.of(df, by, keys)

    def _release(self, kind: Kind[Any, Many], bounds: ContributionBounds) -> Many:
        return run(self._df, kind, self._group, bounds)
