"""``df.dp``: the argument surface of every release, and the frame's budget. Holds no state.

pandas builds a new accessor object on every ``df.dp`` access, so all state
lives in the :class:`~pandas_dp.accounting.budget.PrivacyBudget` bound to the frame.
Each release declares its arguments and delegates to the pipeline of
:mod:`pandas_dp.pipeline.run` (the ungrouped release is its one-key case);
:meth:`DPAccessor.groupby` gives the grouped surface,
:class:`~pandas_dp.surface.groupby.DPGroupBy`.  The row-wise derivations (``filter``,
``query``, ``assign``, ``select``) and ``inherit`` bind derived frames.
"""

from __future__ import annotations

import os
from collections.abc import Hashable, Iterable
from typing import TYPE_CHECKING, Any, Literal, TypeVar, cast, overload

import numpy as np
import pandas as pd

from ..accounting.budget import (
    Hold,
    PrivacyBudget,
    attach,
    bind,
    binding_of,
    budget_lock,
    column_token,
    live_budget,
    marker_of,
    named_memory_store,
    refuse_rebinding,
    require_binding,
)
from ..accounting.ledger import BudgetStore, MemoryStore, check_name, choose_accountant
from ..accounting.sqlite import Ledger, open_ledger
from ..core.errors import MissingBudgetError, PandasDPError
from ..core.noise import make_source
from ..core.validation import (
    check_adjacency,
    check_column,
    check_delta,
    check_loss,
    check_per_person,
    check_per_unit,
    check_privacy_unit,
    check_seed,
    loss,
)
from ..kinds.count import Histogram
from ..kinds.signature import Grouped, Keyless, Ungrouped
from ..mechanisms.key_selection import KeySelection
from ..mechanisms.keys import Bins
from ..pipeline.recipes import rows_per_unit
from ..pipeline.run import PandasFrame
from ..pipeline.workload import entries_for
from ._docs import doc
from ._plans import PlanReleases
from ._releases import Releases
from .groupby import DPGroupBy
from .relational import DPRelational
from .rowwise import check_rowwise, evaluate, is_boolean_dtype, query_values, row_mask
from .tables import TableReleases

__all__ = ["DPAccessor", "DPFrame", "DPReleases", "typed"]

One = TypeVar("One")
Many = TypeVar("Many")

if TYPE_CHECKING:

    class DPFrame(pd.DataFrame):
        """A DataFrame whose ``.dp`` a type checker sees: what :func:`typed` returns.

        pandas-stubs type every attribute a DataFrame does not declare as a
        column (a Series), so pyright (which takes no plugin) reads ``df.dp``
        as one; this subclass, for type checkers only, declares it.
        """

        dp: DPAccessor

else:
    DPFrame = pd.DataFrame  # at run time, the frame itself


def typed(df: pd.DataFrame) -> DPFrame:
    """``df`` itself, typed as :class:`DPFrame` so that ``df.dp`` is typed without a plugin.

    ``df = pandas_dp.typed(pd.read_csv(...))``: one line, for pyright and
    other checkers without mypy's plugin; the frames ``df.dp`` derives
    (``query``, ``filter``, ``assign``, ``select``, ``per_unit``) are typed
    so too.  Returns the same object: nothing is copied, bound or checked.
    """
    return cast("DPFrame", df)


class DPReleases(PlanReleases, TableReleases, Releases[Ungrouped], scope="ungrouped"):
    """The releases of ``df.dp`` and ``ddf.dp``: each declares its arguments and runs its kind.

    Those of :class:`pandas_dp.surface._releases.Releases` (one answer each), and
    :meth:`histogram`, :meth:`rows_per_unit` and :meth:`set_budget`; ``value_counts``
    and ``crosstab`` from :class:`pandas_dp.surface.tables.TableReleases`. A subclass binds
    the surface to one backend through three hooks:
    :meth:`_frame` gives the backend every release runs over (and spends from the
    frame's budget), and :meth:`_schema` gives the
    empty or full frame whose columns and dtypes the bins of :meth:`histogram`
    and the keys of :meth:`crosstab` are checked against (never its data);
    :meth:`_people` gives the one-row-per-person surface of :meth:`rows_per_unit`.
    :class:`DPAccessor` runs on pandas, ``pandas_dp.dask.DaskDPAccessor`` on Dask.
    """

    # ------------------------------------------------------------------- hooks

    def _grouping(self) -> None:
        return None

    def _budget(self) -> PrivacyBudget:
        """The budget this surface's releases spend (MissingBudgetError if none)."""
        raise NotImplementedError

    def _schema(self) -> pd.DataFrame:
        """A pandas frame with the columns and dtypes of the data (its rows are never read)."""
        raise NotImplementedError

    def _refuse_rebinding(self) -> None:
        """Refuse ``set_budget`` on data that has, or came from, a budget of this process."""
        raise NotImplementedError

    def _check_unit(self, unit: Hashable | None) -> None:
        """Refuse unit ids that may not be of one type, beyond the schema's dtype.

        Dask checks the pandas frames a collection was made from; pandas has
        nothing more to check.
        """

    def _rows(self) -> int | None:
        """The number of rows, if known without computing anything (None on Dask)."""
        raise NotImplementedError

    def _attach(self, budget: PrivacyBudget, where: str | None, stored_root: bool) -> None:
        """Bind the data as the one ``budget`` was set on, atomically with the refusal.

        ``where`` names the store of a named budget (``"memory"`` or
        ``"ledger:<path>"``), None for an unnamed one; ``stored_root`` is what
        the store says of the root (:func:`pandas_dp.accounting.budget.claim_root`).
        """
        raise NotImplementedError

    # ------------------------------------------------------------------ budget

    def set_budget(
        self,
        *,
        epsilon: float | None = None,
        rho: float | None = None,
        delta: float | None = None,
        adjacency: str = "add_remove",
        seed: int | None = None,
        ledger: str | os.PathLike[str] | Ledger | None = None,
        name: str | None = None,
        privacy_unit: Hashable | None = None,
        max_rows: int | None = None,
        max_groups: int | None = None,
        accountant: str | None = None,
    ) -> PrivacyBudget:
        """Attach a privacy budget (total ``epsilon`` or ``rho``) to this frame or collection.

        Parameters
        ----------
        epsilon : float
            The total privacy loss all releases of this frame may spend: pure
            ε-DP, ε added up; with ``delta``, (ε, δ) (see ``accountant``). Give
            exactly one of ``epsilon`` and ``rho``.
        rho : float
            A zero-concentrated DP budget (ρ-zCDP, exact Fractions like ε):
            releases given ``rho=`` draw discrete Gaussian noise and compose by
            adding their ρ; a release given ``epsilon=`` (Laplace, a selection)
            is charged ``ε²/2``. ``budget.epsilon_at(delta)`` states the (ε, δ)
            guarantee of what was spent. Many releases cost far less noise
            than under an ε budget (see the README, "which budget should I
            use?"). A named budget keeps its accountant (in a ledger file
            too).
        delta : float, optional
            A δ in [0, 1): with ``epsilon``, the δ of the budget's (ε, δ)
            promise (composed by PLD by default, see ``accountant``); with
            ``rho``, the δ key selections may spend. Spent δ is exact and
            recorded per release.
        adjacency : {"add_remove", "substitute"}
            What a neighbouring dataset is: one person added or removed (the
            row count is private; default), or one person's row changed (the
            row count is public).
        seed : int, optional
            A reproducible noise stream for tests and teaching. **Not private**:
            anyone who knows the seed can subtract the noise. By default noise
            comes from the operating system's CSPRNG.
        ledger : str, path-like or Ledger, optional
            A ledger file (see :func:`pandas_dp.open_ledger`) that keeps the
            budget ``name`` beyond this process: later runs and other processes
            that attach the same name continue from what was spent. Needs
            ``name``.
        name : str, optional
            The budget's name, e.g. ``"hr.salaries"``. With ``ledger``, its
            name in the file. Without, an in-memory budget named for the life
            of this process: attaching the same name again (to the data read
            afresh, say) continues it instead of starting over. Only the first
            frame (or collection) attached to a name in a process is its root:
            under substitute, a later one's row count is not taken as public.
        privacy_unit : label, optional
            The column that identifies a person (``"customer_id"``) when one
            person may have many rows (orders, events). Neighbouring datasets
            then differ in all the rows of one person, and every release bounds
            each person's contribution first (``max_rows``, ``max_groups``).
            Rows whose unit id is missing are dropped. Default: one row is one
            person.
        max_rows, max_groups : int, optional
            Default bounds for the releases of a frame with ``privacy_unit``
            (a release may override them): at most ``max_rows`` rows of one
            person in each cell (the frame, one key, one candidate), at most
            ``max_groups`` keys of one person in a grouped release.
        accountant : {None, "pld", "epsilon"}
            How the releases compose. None (default): ``epsilon=`` with a
            ``delta`` by ``"pld"`` where ``dp_accounting`` is installed, else
            as ``"epsilon"`` with a note in the budget's views (no warning);
            ``epsilon=`` alone adds ε up, ``rho=`` ρ. ``"pld"``: (ε, δ) for all
            the releases together, composed by their privacy loss distributions
            (pessimistic, Google's ``dp_accounting``: ``pip install
            "pandas-dp[pld]"``), the tightest accounting known; releases take
            ``epsilon=`` or ``rho=``, ``spent`` is the ε at ``delta`` (asked for
            without the library: added up, and an ``AccountingWarning``).
            ``"epsilon"``: ε and δ added up on purpose (``rho=`` refused). A
            named budget keeps the accountant it was created with (a ``"pld"``
            one is refused where ``dp_accounting`` is missing).

        Returns
        -------
        PrivacyBudget
            It stays in this (client) process: it refuses to be pickled.

        Raises
        ------
        PandasDPError
            If the frame already has a budget, or was derived from a frame whose
            budget was created in this process (a new budget would reset the
            accounting, and the same named budget would make this frame its
            root): call ``df.dp.inherit()`` instead.
        pandas_dp.errors.BudgetMismatchError
            If the named budget exists with another total, adjacency or privacy
            unit (raise a
            ledger total with ``open_ledger(path).raise_total(name, new_total)``),
            or composes by PLD and this process lacks ``dp_accounting``.
        pandas_dp.errors.LedgerError
            If the ledger cannot be opened, is not a ledger, is damaged, or stays
            locked past its timeout; nothing is attached.

        Notes
        -----
        An in-memory budget (named or not) spends only in the process that
        created it; in a forked child it raises ``BudgetProcessError``. Share
        one budget between processes with ``ledger`` and ``name``. A Dask
        collection's budget is bound to the collection object it was set on
        and to the collections derived from it by ``ddf.dp``
        (see :mod:`pandas_dp.dask`).
        """
        loss, total = check_loss(epsilon, rho)
        held_delta = check_delta(delta)
        adopt = accountant is None  # an existing named budget keeps its own
        accountant, note = choose_accountant(loss, accountant, held_delta)
        adjacency = check_adjacency(adjacency)
        seed = check_seed(seed)
        if ledger is not None and name is None:
            raise TypeError(
                "`ledger` needs a `name`: the budget's name in the file, e.g. "
                f"ledger='privacy-ledger.sqlite', name='hr.salaries'; got ledger={ledger!r}."
            )
        if name is not None:
            name = check_name(name)
        unit, rows, groups = check_privacy_unit(self._schema(), privacy_unit, max_rows, max_groups)
        self._check_unit(unit)
        unit_text = None if unit is None else str(unit)
        self._refuse_rebinding()  # before a ledger file is created or touched
        store: BudgetStore
        where, stored_root = None if name is None else "memory", True
        if ledger is not None and name is not None:
            book = ledger if isinstance(ledger, Ledger) else open_ledger(ledger)
            # the row count is public only under substitute, one row per person (and
            # stored only where known without computing: not for a Dask collection)
            public = adjacency == "substitute" and unit is None
            store = book.attach(
                name,
                total=total,
                adjacency=adjacency,
                privacy_unit=unit_text,
                public_rows=self._rows() if public else None,
                accountant=accountant,
                delta=held_delta,
                adopt=adopt,
            )
            where, stored_root = f"ledger:{book.path.resolve()}", store.root
        elif name is not None:
            store = named_memory_store(
                name, total, adjacency, unit_text, accountant, held_delta, adopt
            )
        else:
            store = MemoryStore(total, accountant, held_delta)
        if store.accountant != accountant:  # an existing budget's own: the facts name it
            note = ""
        budget = PrivacyBudget(
            store,
            adjacency=adjacency,
            source=make_source(seed),
            seed=seed,
            name=name,
            privacy_unit=unit,
            max_rows=rows,
            max_groups=groups,
            delta=held_delta,
            note=note,
            fitter=entries_for,
        )
        self._attach(budget, where, stored_root)
        return budget

    # ---------------------------------------------------------------- releases

    @overload
    def histogram(
        self,
        column: Hashable,
        *,
        bins: Any,
        epsilon: float,
        ci: None = None,
        right: bool = True,
        include_lowest: bool = False,
        max_rows: int | Literal["auto"] | None = None,
        max_groups: int | Literal["auto"] | None = None,
    ) -> pd.Series: ...

    @overload
    def histogram(
        self,
        column: Hashable,
        *,
        bins: Any,
        epsilon: None = None,
        rho: float,
        ci: None = None,
        right: bool = True,
        include_lowest: bool = False,
        max_rows: int | Literal["auto"] | None = None,
        max_groups: int | Literal["auto"] | None = None,
    ) -> pd.Series: ...

    @overload
    def histogram(
        self,
        column: Hashable,
        *,
        bins: Any,
        epsilon: float,
        ci: float,
        right: bool = True,
        include_lowest: bool = False,
        max_rows: int | Literal["auto"] | None = None,
        max_groups: int | Literal["auto"] | None = None,
    ) -> pd.DataFrame: ...

    @overload
    def histogram(
        self,
        column: Hashable,
        *,
        bins: Any,
        epsilon: None = None,
        rho: float,
        ci: float,
        right: bool = True,
        include_lowest: bool = False,
        max_rows: int | Literal["auto"] | None = None,
        max_groups: int | Literal["auto"] | None = None,
    ) -> pd.DataFrame: ...

    @doc()
    def histogram(
        self,
        column: Hashable,
        *,
        bins: Any,
        epsilon: float | None = None,
        rho: float | None = None,
        ci: float | None = None,
        right: bool = True,
        include_lowest: bool = False,
        max_rows: int | Literal["auto"] | None = None,
        max_groups: int | Literal["auto"] | None = None,
    ) -> pd.Series | pd.DataFrame:
        """Noisy counts of ``column`` over public bin edges, like ``pd.cut(...).value_counts()``.

        Parameters
        ----------
        column : label
            A numeric column.
        bins : list, array or Index of numbers
            Public bin edges, increasing, at least two; never read from the
            data (an integer number of bins is refused: ``pd.cut`` would take
            the edges from the data's range).
        epsilon : float
            Privacy cost, keyword-only.
        $rho
        right, include_lowest : bool
            As in ``pd.cut``.
        ci : float, optional
            A confidence level in (0, 1): each bin's count with its interval,
            as :meth:`DPGroupBy.count`. Costs nothing more.
        $max_rows
        $max_groups

        Returns
        -------
        pandas.Series, or pandas.DataFrame
            Integer counts named ``count``, indexed by the same IntervalIndex
            as ``pd.cut(df[column], bins, right=right,
            include_lowest=include_lowest).value_counts(sort=False)``. Counts
            of small bins may be negative. With ``ci``: a DataFrame with
            columns ``estimate``, ``lower``, ``upper`` on that index; each
            bin's true count is inside its interval with probability at least
            ``ci``.

        Raises
        ------
        $raises

        Notes
        -----
        Costs ``epsilon`` once for all bins (parallel composition: each row is
        in one bin). L1 sensitivity 1 under add_remove, 2 under substitute (a
        changed row may leave one bin and join another); discrete Laplace
        noise of scale Δ/ε per bin. Missing values and values outside the
        bins are dropped. Public: the edges, ``right``, ``include_lowest``.
        """
        group = Bins.of_edges(
            self._schema(), column, bins, right=right, include_lowest=include_lowest
        )
        kind = Histogram(column=column, ci=ci, **loss(epsilon, rho))
        return self._table(  # type: ignore[no-any-return]
            "histogram",
            kind,
            group,
            column=column,
            bins=bins,
            epsilon=epsilon,
            rho=rho,
            ci=ci,
            right=right,
            include_lowest=include_lowest,
            max_rows=max_rows,
            max_groups=max_groups,
        )

    @doc()
    def rows_per_unit(
        self,
        q: float = 0.9,
        *,
        candidates: Any = None,
        epsilon: float | None = None,
        rho: float | None = None,
    ) -> int:
        """A private ``q``-quantile of the number of rows per person: a ``max_rows`` to use.

        Releases, and charges ``epsilon`` for, one grid point chosen by
        permute-and-flip from the public ``candidates`` (counts such as
        ``range(1, 101)``): bounding at it keeps all the rows of about a
        fraction ``q`` of the persons. It is a release like any other: it
        spends from the budget and is recorded in the ledger.

        Parameters
        ----------
        q : float, default 0.9
            The quantile level in ``[0, 1]``.
        candidates : list, array or range of positive integers
            The public grid of row counts, strictly increasing, keyword-only.
        epsilon : float
            Privacy cost, keyword-only.
        rho : float
            Instead of ``epsilon`` (zCDP budget): charged ρ, run at the largest ε
            with ``ε²/2 <= ρ`` (permute-and-flip is not known to be bounded-range).

        Returns
        -------
        int
            One of ``candidates``.

        Raises
        ------
        $raises
            TypeError if the frame has no privacy unit (its rows are persons).

        Notes
        -----
        Costs ``epsilon``: a quantile of :meth:`per_unit`'s row counts, sensitivity
        ``max(q, 1 − q)`` under add_remove, 1 under substitute. Public: all arguments.
        """
        counted: int = rows_per_unit(self._frame(), q, candidates, check_loss(epsilon, rho))
        return counted

    def reserve(self, *, epsilon: float | None = None, rho: float | None = None) -> Hold:
        """Hold ``epsilon`` of the budget for the releases of a ``with`` block.

        ``with df.dp.reserve(epsilon=0.3): ...`` sets the share aside at once;
        inside, this thread's releases of the budget draw on it first; on exit
        (also on an error) what is left is free again.  With a named ledger
        budget, other processes cannot spend it either.  Holding spends
        nothing by itself.

        Parameters
        ----------
        epsilon : float
            The share to hold: what the block's releases will cost.
        rho : float
            Instead of ``epsilon``, under a zCDP budget: the ρ to hold. Under a
            ρ budget, ``epsilon`` holds ``ε²/2`` (what releases of ε in total,
            each charged ``εᵢ²/2``, cost at most).

        Returns
        -------
        Hold
            The context manager (:class:`pandas_dp.accounting.budget.Hold`); after the
            block, its ``returned`` is what was left of the share.

        Raises
        ------
        BudgetExceededError
            On entering the block, if ``epsilon`` exceeds what remains
            (nothing is held; the block does not run).
        ValueError
            If this thread already holds a share of this budget (holds do not
            nest), or ``epsilon`` is not a positive number.
        """
        accountant, amount = check_loss(epsilon, rho)
        return self._budget().hold(amount, accountant)


@pd.api.extensions.register_dataframe_accessor("dp")
class DPAccessor(DPReleases, DPRelational):
    """Differentially private releases of a DataFrame: ``df.dp``.

    Attach a budget once with :meth:`set_budget`; every release then spends
    from it.  One row must be one person (the privacy unit).  The row-wise
    derivations are below; joins and reshaping (``merge``, ``join``,
    ``concat``, ``explode``) come from
    :class:`~pandas_dp.surface.relational.DPRelational`.
    """

    def __init__(self, pandas_obj: pd.DataFrame) -> None:
        self._df = pandas_obj

    @property
    def budget(self) -> PrivacyBudget:
        """The frame's :class:`PrivacyBudget` (MissingBudgetError if it has none)."""
        binding = binding_of(self._df)
        return require_binding(self._df).budget if binding is None else binding.budget

    def _budget(self) -> PrivacyBudget:
        return self.budget

    @overload
    def groupby(
        self, by: Hashable | list[Hashable], *, keys: None = None, dropna: bool = True
    ) -> DPGroupBy[Keyless]: ...

    @overload
    def groupby(
        self, by: Hashable | list[Hashable], *, keys: Any, dropna: bool = True
    ) -> DPGroupBy[Grouped]: ...

    def groupby(
        self, by: Hashable | list[Hashable], *, keys: Any = None, dropna: bool = True
    ) -> DPGroupBy[Grouped] | DPGroupBy[Keyless]:
        """Group by ``by`` for grouped releases, over public ``keys`` or keys chosen privately.

        Parameters
        ----------
        by : label or list of labels
            The key column(s).
        keys : list, array, Index, MultiIndex, DataFrame or CategoricalDtype, optional
            The public keys, in the order the result is indexed by. Never read
            them from the data (``df[col].unique()`` is not private): the set
            of keys present can reveal who is in it. Without them, the keys
            are chosen privately by each release, which then takes ``delta=``
            (and the budget must hold one).
        dropna : bool, default True
            Without ``keys``: whether to leave out missing keys (as pandas).

        Returns
        -------
        DPGroupBy
            The releases of ``df.dp``, one value per key: ``DPGroupBy[Grouped]``
            with public keys, ``DPGroupBy[Keyless]`` without.

        Raises
        ------
        KeyError
            If a ``by`` column is missing.
        ValueError
            If ``keys`` is empty, has duplicates or missing values, or does not
            have one level per ``by`` column.

        Notes
        -----
        With ``keys``: rows whose key is missing or not among ``keys`` are
        dropped; keys with no rows are answered with noise too. Each release
        is charged once for all keys (parallel composition). ``groupby``
        reads no column: keys of a type the column cannot hold (``["30"]``
        on numbers) are refused by the first release, before it spends.
        """
        if keys is None:
            selection = KeySelection.of_columns(self._df, by, dropna=dropna)
            return DPGroupBy[Keyless](self._df, selection.by, selection)
        if dropna is not True:
            raise TypeError("`dropna` goes with a groupby without keys=; with public keys drop it.")
        return DPGroupBy[Grouped](self._df, by, keys)

    # ------------------------------------------------ row-wise derived frames

    def _derive(self, result: pd.DataFrame, *, same_rows: bool) -> DPFrame:
        binding = require_binding(self._df)
        if result is self._df:
            result = result.copy(deep=False)
        root = binding.is_root(self._df) and same_rows
        bind(
            result,
            binding.budget,
            root=root,
            unit=binding.unit,
            defaults=binding.defaults,
            lineage=binding.lineage,
        )
        return typed(result)

    def _unit(self) -> Hashable | None:
        binding = binding_of(self._df)
        return None if binding is None else binding.unit

    def filter(self, mask: Any) -> DPFrame:
        """The rows where ``mask`` is True, spending from this frame's budget.

        Parameters
        ----------
        mask : Series, numpy array, BooleanArray, or callable
            One boolean per row: a Series indexed like the frame (same index,
            same order), a numpy ``bool`` array, a pandas ``boolean`` or
            ``bool[pyarrow]`` array, or a callable that takes the frame and
            returns one of these. A missing value counts as False, as in SQL.
            Each row's entry may depend only on that row and on public
            constants: never ``df.x > df.x.mean()``, where one person's value
            moves everyone else in or out.

        Returns
        -------
        pandas.DataFrame
            The selected rows, bound to this frame's budget (never its root
            frame: the row count of a filtered frame is private).

        Raises
        ------
        TypeError
            If ``mask`` is not of a boolean dtype (object, integer and float
            masks are refused whatever their values).
        ValueError
            If ``mask`` is a Series with another index, or does not have one
            entry per row.
        MissingBudgetError
            If this frame has no budget it may spend.

        Notes
        -----
        Costs nothing. Only rows are removed, so each person is still in at most
        one row and every later release keeps its sensitivity, provided the mask
        is row-wise: the library cannot inspect how ``mask`` was computed, so a
        mask computed across rows (``df.x > df.x.mean()``, ``df.x.rank() < 10``)
        silently breaks the guarantee. Compute such a threshold privately
        (e.g. with :meth:`quantile`) and compare with it. Row position is not
        a property of a row either: a mask made from the index or a row number
        (``df.index % 2 == 0``, the common ``index % k`` split, ``np.arange``,
        ``cumcount``) depends on every earlier row, since one person added near
        the top of a file shifts everyone after them; split on a column of the
        row itself (a person id) instead. Acceptance depends on the mask's dtype
        alone, never on whether it holds a missing value. Overwriting a row's
        values in place (``df.iloc[1] = df.iloc[0]``) cannot be detected either.
        """
        if callable(mask):
            mask = mask(self._df)
        array = row_mask(mask, self._df.index)
        return self._derive(self._df[array], same_rows=False)

    def query(self, expr: str, **kwargs: Any) -> DPFrame:
        """The rows where the row-wise boolean expression ``expr`` holds.

        Parameters
        ----------
        expr : str
            A ``DataFrame.eval`` expression that gives one boolean per row, e.g.
            ``"age >= 18 and dept in ['Eng', 'Ops']"``. Only row-wise operations
            are allowed: comparisons (also chained), arithmetic, ``and``/``or``/
            ``not`` and ``&``/``|``/``~``, ``in``/``not in`` a list of constants,
            constants, column names (backticks for other names; never the
            index), ``@name`` for a public value of the caller (see Notes), the
            methods ``isin``, ``between``,
            ``isna``, ``notna``, ``isnull``, ``notnull``, ``abs``, elementwise
            ``.str`` methods on string columns (``contains``, ``startswith``,
            ``len``, ``lower``, ...), ``.dt`` fields (``year``, ``month``,
            ``dayofweek``, ...) and the elementwise math functions of
            ``DataFrame.eval`` (``abs``, ``sqrt``, ``log``, ``exp``, ...).
        **kwargs
            Passed to ``DataFrame.eval`` (``parser``, ``engine``,
            ``local_dict``, ``level``, ...); ``inplace`` is not supported.

        Returns
        -------
        pandas.DataFrame
            The selected rows, bound to this frame's budget, as with
            :meth:`filter`.

        Raises
        ------
        ValueError
            If ``expr`` uses anything that is not row-wise: a reduction or a
            look across rows (``x.mean()``, ``x.max()``, ``x.quantile(0.9)``,
            ``x.rank()``, ``x.shift()``, ``x.cumsum()``, ``x[0]``,
            ``y in x``, ...) or anything else off the list above; a name that
            resolves to the index (``index``, ``ilevel_0``, an index level's
            name, also in backticks); an ``@name`` that is not a public scalar
            where one is needed. The message names it. Nothing is evaluated,
            nothing is spent.
        TypeError
            If ``expr`` is not a string, is an assignment, reads a column of
            dtype ``object``, uses ``.str`` on a column that is not of a string
            dtype, cannot be evaluated (one fixed message, whatever pandas
            raised), or does not evaluate to one boolean per row; or if
            ``inplace`` is given.
        KeyError
            If ``expr`` names something that is neither a column nor a constant.
        SyntaxError
            If ``expr`` does not parse.
        MissingBudgetError
            If this frame has no budget it may spend.

        Notes
        -----
        Costs nothing. A row's membership may depend only on that row and on
        public constants: ``"x > x.mean()"`` is refused, because one person's
        value would move every other row in or out and a count of the result
        could change by many where the release assumes one. To compare with a
        statistic, compute it privately and pass it in:
        ``cut = df.dp.quantile("x", 0.9, candidates=grid, epsilon=0.1)``, then
        ``df.dp.query("x > @cut")``. An ``@name`` must be a scalar (a number,
        string, bool, None, date or time, numpy scalar); a list, tuple or set
        of scalars only after ``in`` / ``not in`` or in ``isin(...)``, and a
        list after ``==`` / ``!=`` (which pandas reads as ``in``). Anything else
        is refused: it could hold one value per row. The library cannot check
        how a scalar was computed: it is taken to be public.

        Names are resolved as ``DataFrame.eval`` resolves them, columns first:
        a name that then resolves to the index is refused, because a row's
        position (a ``RangeIndex``, what ``read_csv`` gives) depends on every
        earlier row, and ``"index % 2 == 0"`` would let one person move many
        rows. A column of type ``object`` is refused, since whether an
        operation on it works would depend on the values it holds; convert it
        first. A missing value in the result counts as False (as in SQL), and
        acceptance depends on the dtypes alone, never on the data.
        """
        if not isinstance(expr, str):
            raise TypeError(f"`expr` must be a string, got {type(expr).__name__}.")
        if "inplace" in kwargs:
            raise TypeError("`inplace` is not supported: df.dp.query returns a new frame.")
        parser = kwargs.get("parser", "pandas")
        check_rowwise(expr, parser=parser, frame=self._df)
        # ``@name`` from the caller's scope (as DataFrame.query does) or local_dict; checked.
        level = kwargs.pop("level", 0)
        kwargs["local_dict"] = query_values(expr, parser, kwargs, 1 + level)
        mask = evaluate(self._df, expr, kwargs)
        if not isinstance(mask, pd.Series | np.ndarray) or not is_boolean_dtype(mask.dtype):
            raise TypeError(f"`expr` must evaluate to a boolean per row, got {expr!r}.")
        return self.filter(mask)

    def assign(self, **columns: Any) -> DPFrame:
        """A frame with new or replaced columns; same rows, same budget.

        Parameters
        ----------
        **columns
            As in ``DataFrame.assign``: a column name and its values (a Series
            indexed like the frame, an array, a scalar), or a callable that
            takes the frame and returns them. Each row's value may depend only
            on that row and on public constants: never
            ``above=df.x > df.x.mean()``, where one person's value changes
            everyone else's.

        Returns
        -------
        pandas.DataFrame
            The frame with the columns added or replaced, bound to this frame's
            budget (still its root frame if this one is: no row is removed).

        Raises
        ------
        ValueError
            If the assignment changes the frame's rows (index), assigns the privacy
            unit column, or a callable replaced or renamed the unit column of the
            frame it was given (checked by identity, never by value).
        MissingBudgetError
            If this frame has no budget it may spend.

        Notes
        -----
        Costs nothing. The library cannot inspect how the values were computed:
        a column computed across rows (``df.x - df.x.mean()``, ``df.x.rank()``,
        ``df.x.shift()``) silently breaks the guarantee of every later release
        that reads it. Compute such a statistic privately (e.g. with
        :meth:`mean` or :meth:`quantile`) and use it as a constant. A row's
        position is not a property of the row: a column made from the index or
        a row number (``df.index % 2``, the common ``index % k`` split,
        ``np.arange(len(df))``) depends on every earlier row (one person added
        near the top of a file shifts everyone after them), and breaks the
        guarantee in the same way. Overwriting a row's values in place
        (``df.iloc[1] = df.iloc[0]``) cannot be detected either.
        """
        unit = self._unit()
        if unit is not None and unit in columns:
            raise ValueError(
                f"{unit!r} is the privacy unit: it identifies each row's person, and "
                "overwriting it would change who is who. Assign another column."
            )
        # As DataFrame.assign, on a copy whose unit column a callable must leave alone: one
        # that replaced or renamed it there would bound by other ids (checked by identity).
        result = self._df.copy(deep=False)
        ids = None if unit is None else column_token(result, unit)
        for label, value in columns.items():
            result[label] = value(result) if callable(value) else value
        now = None if unit is None else column_token(result, unit)
        if ids is not None and (now is None or not ids.same(now)):
            raise ValueError(
                f"A function passed to assign replaced or renamed the privacy unit column {unit!r} "
                "of the frame it was given: that would change who is who. Leave the unit column "
                "alone; return the new column's values."
            )
        if not result.index.equals(self._df.index):
            raise ValueError("assigned columns must keep the frame's rows (same index).")
        return self._derive(result, same_rows=True)

    def select(self, columns: Iterable[Hashable]) -> DPFrame:
        """A frame with only ``columns``; same rows, same budget."""
        if isinstance(columns, str) or not isinstance(columns, Iterable):
            raise TypeError(f"`columns` must be a list of column labels, got {columns!r}.")
        labels = list(columns)
        if len(set(labels)) != len(labels):
            raise ValueError("`columns` names a column twice.")
        for label in labels:
            check_column(self._df, label)
        unit = self._unit()
        if unit is not None and unit not in labels:
            raise ValueError(
                f"{unit!r} is the privacy unit; keep it in `columns`, since every release "
                "bounds each person's rows by it."
            )
        return self._derive(self._df[labels], same_rows=True)

    def per_unit(self, **aggregations: Any) -> DPFrame:
        """One row per person: pandas named aggregation over the privacy unit.

        ``tx.dp.per_unit(spend=("amount", "sum"), orders=("amount", "size"))``
        is ``tx.groupby(unit).agg(spend=..., orders=...)``: the textbook advice
        "make one person one row" as one call. The result is indexed by the
        unit (rows whose unit id is missing are dropped), bound to the same
        budget, and its rows are persons, so its releases need no bounds.

        Parameters
        ----------
        **aggregations
            ``name=(column, function)`` pairs as in ``DataFrame.groupby.agg``,
            with a function that reduces a person's rows to one value: a
            reduction's name (``"sum"``, ``"mean"``, ``"count"``, ``"size"``,
            ``"min"``, ``"max"``, ``"median"``, ``"std"``, ``"var"``,
            ``"nunique"``, ``"first"``, ``"last"``, ...; see
            :data:`pandas_dp.core.validation.PER_UNIT_AGGREGATIONS`) or a callable
            that returns a scalar. Each function sees the values of one person
            only, indexed 0, 1, ...: never their row labels, which are row
            positions when the index is a ``RangeIndex``.

        Returns
        -------
        pandas.DataFrame
            One row per person, spending from this frame's budget.

        Raises
        ------
        MissingBudgetError
            If this frame has no budget it may spend.
        TypeError
            If the frame has no privacy unit, its unit column is not of an
            integer, string or categorical dtype, no aggregation is given, or
            a callable returns a non-scalar for a person.
        ValueError
            If an aggregation does not reduce (a transform such as
            ``"cumsum"``, ``"rank"``, ``"shift"``, ``"diff"``, ``"cumcount"``,
            a filter such as ``"head"``, or ``"idxmax"``, a row label), or the
            result is not one row per person.

        Notes
        -----
        Releases nothing and costs nothing. Each person is one row of the
        result, so a release on it has the one-row sensitivities; under
        substitute its row count is the public number of persons. That is
        why only reducing aggregations are accepted, and the result's index
        is checked to be the persons before it is bound: a transform keeps
        one row per input row, and bound as persons a 30-row person would
        move a count by 30 at a sensitivity of 1.
        """
        binding = require_binding(self._df)
        checked = check_per_unit(binding.unit, aggregations, self._df, "pandas")
        persons = self._df.groupby(self._df[binding.unit], dropna=True, sort=False)
        result: pd.DataFrame = persons.agg(**checked)
        check_per_person(result.index.equals(persons.size().index))
        bind(result, binding.budget, root=binding.is_root(self._df), unit=None)
        return typed(result)

    def inherit(self, source: pd.DataFrame | None = None) -> DPFrame:
        """Bind this frame to ``source``'s budget; returns this frame.

        Call it only when this frame still has at most one row per person of
        ``source`` and was made from it by row-wise changes: that is your
        assertion, which the library cannot check. Without ``source``, the
        frame is bound to the budget its marker names (the budget of the frame
        it was derived from, created in this process), e.g. after
        ``df = df.reset_index()``. With a privacy unit, "one row per person"
        reads "the same persons, identified by the same unit column": the
        frame keeps ``source``'s unit (the budget's, without ``source``), and
        must hold that column.

        That is also how a second table about the same persons joins their
        budget: ``returns.dp.inherit(tx)`` binds the returns of ``tx``'s
        customers (the same ``customer_id``) to ``tx``'s budget and unit,
        and ``tx.dp.merge(returns, on="customer_id")`` joins them (attaching
        both to one named budget does the same). Neighbouring datasets then
        differ in all the rows of one person in every such table, and each
        release bounds each person's rows as before.
        """
        if source is None:
            marker = marker_of(self._df)
            found = None if marker is None else live_budget(str(marker["budget"]))
            if found is None:
                raise MissingBudgetError(
                    "This frame does not come from a budget of this process; pass the frame "
                    "it was derived from: result.dp.inherit(df)."
                )
            budget, unit, defaults = found, found.privacy_unit, None
        elif not isinstance(source, pd.DataFrame):
            raise TypeError(f"`source` must be a DataFrame, got {type(source).__name__}.")
        else:
            binding = require_binding(source)
            budget, unit, defaults = binding.budget, binding.unit, binding.defaults
        with budget_lock():
            own = binding_of(self._df)
            if own is not None:
                if own.budget is not budget:
                    raise PandasDPError("This frame already spends another privacy budget.")
                if own.index is self._df.index and own.unit_unchanged(self._df):
                    return typed(self._df)  # nothing changed in place: keep what it was
                unit, defaults = own.unit, own.defaults
            if unit is not None:
                check_column(self._df, unit)
            marker = marker_of(self._df)
            other = None if marker is None else marker["budget"]
            if other not in (None, budget.id) and live_budget(str(other)) is not None:
                raise PandasDPError(
                    "This frame was derived from a frame with another live privacy budget."
                )
            bind(self._df, budget, root=False, unit=unit, defaults=defaults)
        return typed(self._df)

    # ------------------------------------------------------------------- hooks

    def _frame(self) -> PandasFrame:
        return PandasFrame(self._df)

    def _schema(self) -> pd.DataFrame:
        return self._df

    def _refuse_rebinding(self) -> None:
        refuse_rebinding(self._df)

    def _rows(self) -> int | None:
        return len(self._df)

    def _attach(self, budget: PrivacyBudget, where: str | None, stored_root: bool) -> None:
        attach(self._df, budget, where=where, stored_root=stored_root)
