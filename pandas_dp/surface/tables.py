"""Table releases: ``value_counts`` and ``crosstab``, with public keys or keys chosen privately.

Both are grouped counts shaped as pandas shapes them.  When nobody has the
list of keys (product names, URLs, search terms), the keys are chosen
privately from the data: a key is shown only if its noisy count of
*persons* passes a threshold set by ``delta`` (and ``max_groups``), so a key
held by few people appears with probability at most ``delta``.  The
mechanism, its plan and proofs are in
:mod:`pandas_dp.mechanisms.key_selection`; every release here runs the one
pipeline of :mod:`pandas_dp.pipeline.run` with a
:class:`~pandas_dp.mechanisms.key_selection.KeySelection` as its grouping.
:class:`TableReleases` holds ``value_counts`` and ``crosstab``, with or
without keys, on ``df.dp`` and ``ddf.dp``; :class:`OneAxisKeys` is a
crosstab's selection with public keys on one axis.

``keys=df[col].unique()`` is *not* a private list of keys: it is read from
the data, and a key of one person then shows that person is in it.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import Any, Literal, overload

import numpy as np
import pandas as pd

from ..core.noise import I64
from ..core.validation import loss
from ..kinds.base import Kind
from ..kinds.count import Count
from ..mechanisms.key_selection import KeySelection
from ..mechanisms.keys import CrossKeys, Grouping, level_codes
from ..pipeline.recipes import Request, answer
from ..pipeline.run import Frame
from ._docs import doc

__all__ = ["OneAxisKeys", "TableReleases"]

#: The paragraphs of the keyless releases (with those of pandas_dp.surface._docs).
_FIELDS = {
    "delta": """\
        delta : float
            Required: the probability, at most, that a key held by few people
            (one, say) appears; all of it is spent by the choice of keys and
            recorded in the ledger. The budget must hold a delta
            (``set_budget(..., delta=...)``).""",
    "selection": """\
        The keys are chosen from the data: each observed key's number of
        persons (a person counts once per key; with a privacy unit each keeps
        at most ``max_groups`` keys, at random) gets noise, and the key is
        shown iff it reaches a threshold set by ``delta`` and ``max_groups``
        (Laplace thresholding under ε; Gaussian under ρ, weighted when
        ``max_groups`` > 1). A key held by few people appears with probability
        at most ``delta``. The whole call costs exactly ``epsilon`` (or ``rho``)
        and ``delta``, one ledger entry, under add_remove only: a row count
        whose persons count once per key is the selection's own noisy count
        (all of ``epsilon``); any other statistic gets half of it, the choice
        of keys the other half. Public: ``epsilon``, ``delta``, the bounds;
        the keys shown are a private release, each in one form per value
        decided by the column's dtype (``0.0``, one NaN, a plain ``str``),
        never the form of the row it was read from. Never pass
        ``keys=df[col].unique()``: keys read from the data are not private.""",
}


_ONE_AXIS = (
    "`keys` of a crosstab must be a pair (row_keys, column_keys) of public key lists; give "
    "None for an axis whose keys are to be chosen privately (then pass delta=), e.g. "
    "keys=(['north', 'south'], None)"
)


@dataclass(frozen=True)
class OneAxisKeys(KeySelection):
    """A crosstab with public keys on one axis: the pairs are chosen among their rows.

    ``by`` is ``(index, columns)``; ``axis`` the position in it of the column
    whose public keys are ``public``.  Rows whose value there is missing or
    not in ``public`` are dropped before anything is observed (as with public
    keys): the pairs observed, counted and chosen are those of the other rows
    only, so no value outside ``public`` can appear.  :meth:`table` shapes the
    chosen pairs' release as the crosstab, every public key a row (column).
    """

    axis: int = 0
    public: pd.Index = field(default_factory=lambda: pd.Index([]), repr=False)

    @classmethod
    def of_axis(
        cls,
        df: pd.DataFrame,
        index: Hashable,
        columns: Hashable,
        keys: tuple[Any, Any],
        dropna: object,
    ) -> OneAxisKeys:
        """Check the two columns, the one axis' public keys (against its dtype), ``dropna``."""
        pairs = KeySelection.of_columns(df, [index, columns], dropna=dropna)
        axis = 0 if keys[1] is None else 1
        public = Grouping.of(df, pairs.by[axis], keys[axis]).check(df).keys
        return cls(pairs.by, pairs.keys, dropna=pairs.dropna, axis=axis, public=public)

    def counted(self, df: pd.DataFrame) -> None:
        """Never the shortcut of one column: the rows are filtered on the public keys first."""
        return None

    def observe(self, df: pd.DataFrame) -> tuple[I64, pd.Index]:
        """As :meth:`KeySelection.observe` over the rows whose public-axis value is a public key."""
        inside = level_codes(df[self.by[self.axis]], self.public) >= 0
        codes, keys = super().observe(df.loc[inside, list(self.by)])
        full = np.full(len(df), -1, dtype=np.int64)
        full[inside] = codes
        return full, keys

    def table(self, counts: pd.Series | pd.DataFrame) -> pd.DataFrame:
        """The chosen pairs' release as a crosstab: every public key in order, NaN elsewhere."""
        table = counts.unstack(self.by[1])
        assert isinstance(table, pd.DataFrame)  # two levels unstack to a frame
        if self.axis == 0:
            return table.reindex(self.public)
        if isinstance(counts, pd.Series):
            return table.reindex(columns=self.public)
        cells = pd.MultiIndex.from_product([counts.columns, self.public], names=[None, self.by[1]])
        return table.reindex(columns=cells)


class TableReleases:
    """``value_counts`` and ``crosstab`` of ``df.dp`` and ``ddf.dp`` (a base of DPReleases).

    Both are grouped counts; without public keys the keys are chosen
    privately (:class:`~pandas_dp.mechanisms.key_selection.KeySelection`).  A subclass gives
    :meth:`_frame` and :meth:`_schema` (those of
    :class:`pandas_dp.surface.accessor.DPReleases`).
    """

    def _frame(self) -> Frame:
        raise NotImplementedError

    def _schema(self) -> pd.DataFrame:
        raise NotImplementedError

    def _table(self, name: str, kind: Kind[Any, Any], group: Grouping, **args: Any) -> Any:
        """Release ``kind`` over ``group`` through the pipeline, as the call ``name`` with ``args``.

        ``args``: the call's arguments (its loss, ``ci``, bounds, ``delta``; the
        others only for the ledger's record of what was asked).
        """
        request = Request(lambda _, share: kind.at(*share), args, name=name)
        return answer(self._frame(), group, request)

    @overload
    def value_counts(
        self,
        subset: Hashable | list[Hashable],
        *,
        epsilon: float | None = None,
        rho: float | None = None,
        delta: float | None = None,
        normalize: bool = False,
        dropna: bool = True,
        cut: Literal[False] = False,
        max_rows: int | Literal["auto"] | None = None,
        max_groups: int | Literal["auto"] | None = None,
    ) -> pd.Series: ...

    @overload
    def value_counts(
        self,
        subset: Hashable | list[Hashable],
        *,
        epsilon: float | None = None,
        rho: float | None = None,
        delta: float | None = None,
        normalize: bool = False,
        dropna: bool = True,
        cut: Literal[True],
        max_rows: int | Literal["auto"] | None = None,
        max_groups: int | Literal["auto"] | None = None,
    ) -> pd.DataFrame: ...

    @doc(**_FIELDS)
    def value_counts(
        self,
        subset: Hashable | list[Hashable],
        *,
        epsilon: float | None = None,
        rho: float | None = None,
        delta: float | None = None,
        normalize: bool = False,
        dropna: bool = True,
        cut: bool = False,
        max_rows: int | Literal["auto"] | None = None,
        max_groups: int | Literal["auto"] | None = None,
    ) -> pd.Series | pd.DataFrame:
        """Noisy counts of the values of ``subset`` seen often enough, most frequent first.

        Like ``df[subset].value_counts()``, without a list of values: the
        values shown are chosen privately.

        Parameters
        ----------
        subset : label or list of labels
            The column, or columns (then the index is a MultiIndex).
        epsilon : float
            Privacy cost of the whole call.
        $rho
        $delta
        normalize : bool, default False
            Proportions instead of counts: each released count (negative
            ones as 0) over their sum, so over the values shown only.
        dropna : bool, default True
            Whether to leave out missing values (False: they may be a value).
        $cut_unit
        $max_rows
        $max_groups

        Returns
        -------
        pandas.Series, or pandas.DataFrame
            Named ``count`` (``proportion`` if ``normalize``), indexed by the
            chosen values, in descending noisy count (ties at random). With
            ``cut``: a DataFrame, the counts (proportions) in ``estimate``
            (``proportion``) beside the shares of persons the bounds cut. No
            value chosen warns (:class:`~pandas_dp.errors.PoorAnswerWarning`).

        Raises
        ------
        $raises

        Notes
        -----
        $selection
        """
        if not isinstance(normalize, bool):
            raise TypeError(f"`normalize` must be True or False, got {type(normalize).__name__}.")
        group = KeySelection.of_columns(self._schema(), subset, dropna=dropna, sort=False)
        group = group.at(delta)
        kind = Count(column=None, ci=None, **loss(epsilon, rho))
        if not isinstance(cut, bool):
            raise TypeError(f"`cut` must be True or False, got {type(cut).__name__}.")
        answer: pd.Series | pd.DataFrame = self._table(
            "value_counts",
            kind,
            group,
            subset=subset,
            epsilon=epsilon,
            rho=rho,
            delta=delta,
            normalize=normalize,
            dropna=dropna,
            cut=cut,
            max_rows=max_rows,
            max_groups=max_groups,
        )
        counts = answer["estimate"] if isinstance(answer, pd.DataFrame) else answer
        order = np.argsort(-counts.to_numpy(), kind="stable")
        answer, counts = answer.iloc[order], counts.iloc[order]
        if not normalize:
            return answer
        shown = counts.clip(lower=0)
        total = shown.sum()
        proportions = (shown / total if total > 0 else shown * 0.0).rename("proportion")
        if isinstance(answer, pd.DataFrame):
            return answer.rename(columns={"estimate": "proportion"}).assign(proportion=proportions)
        return proportions

    @doc(**_FIELDS)
    def crosstab(
        self,
        index: Hashable,
        columns: Hashable,
        *,
        keys: Any = None,
        epsilon: float | None = None,
        rho: float | None = None,
        delta: float | None = None,
        ci: float | None = None,
        dropna: bool = True,
        max_rows: int | Literal["auto"] | None = None,
        max_groups: int | Literal["auto"] | None = None,
    ) -> pd.DataFrame:
        """Noisy counts of every (``index``, ``columns``) pair, like ``pd.crosstab``.

        Parameters
        ----------
        index, columns : label
            The row and column key columns.
        keys : (row_keys, column_keys), optional
            The public keys of each, in the order of the result; never read
            from the data. Without them, the pairs are chosen privately
            (``delta=`` needed); ``(row_keys, None)`` or
            ``(None, column_keys)``: public keys on one axis, the other's
            chosen privately (``delta=`` needed).
        epsilon : float
            Privacy cost, keyword-only.
        $rho
        delta : float
            Unless both axes have keys, required: the probability, at most,
            that a pair held by few people appears (recorded in the ledger;
            the budget must hold a delta). With keys for both, not taken.
        ci : float, optional
            A confidence level in (0, 1): each cell's count with its interval.
            Costs nothing more.
        dropna : bool, default True
            Unless both axes have keys: whether to leave out missing values
            of the axis (or axes) without keys.
        $max_rows
        $max_groups

        Returns
        -------
        pandas.DataFrame
            Integer counts indexed by ``row_keys`` (named ``index``) with
            columns ``column_keys`` (named ``columns``); combinations absent
            from the data are answered too. With ``ci``: the columns are a
            MultiIndex ``(statistic, column key)`` with the statistic in
            ``estimate``, ``lower``, ``upper``, so ``result["lower"]`` is the
            crosstab of lower bounds; each cell's true count is inside its
            interval with probability at least ``ci`` (per cell). Without
            ``keys``: rows and columns are those of the chosen pairs, sorted,
            and a pair not chosen is missing (NaN), not zero. With keys on
            one axis: that axis holds every public key in their order (a key
            with no chosen pair, or absent from the data, as NaN), the other
            the values of the chosen pairs, sorted.

        Raises
        ------
        $raises

        Notes
        -----
        With ``keys``: one grouped count over the product of the keys: costs
        ``epsilon`` once (each row is in one cell), L1 sensitivity 1 under
        add_remove and 2 under substitute. Rows whose keys are missing or not
        listed are dropped. Public: both sets of keys, ``epsilon``. Without
        ``keys``, as ``df.dp.groupby([index, columns]).count(...)``:
        $selection

        With keys on one axis, rows whose value there is missing or not
        listed are dropped first (as with keys); the candidates are the
        observed *pairs* (public key, value), chosen as above with a person
        counting once per pair, so a cell is shown only if enough persons
        hold that very pair. Why pairs rather than the values alone (a value
        shown if enough persons hold it over all the public rows, then every
        cell of its column counted): both are (ε, δ)-DP, but the values
        alone take two passes (half of ``epsilon`` to choose them, half to
        count the cells, so twice the noise per cell) and then show, with
        noise, cells held by one person; the pairs take one pass wherever
        a count can (above: the selection's noisy counts are the cells, all
        of ``epsilon``), are the
        same mechanism as without keys, and a value held in one public row
        only shows in that row only. The cost: a value spread thinly over
        many rows may show nowhere. Public: the one axis' keys,
        ``epsilon``, ``delta``; the other axis' values shown are a private
        release.
        """
        kind = Count(ci=ci, **loss(epsilon, rho))
        args = {
            "epsilon": epsilon,
            "rho": rho,
            "delta": delta,
            "ci": ci,
            "dropna": dropna,
            "max_rows": max_rows,
            "max_groups": max_groups,
        }
        if isinstance(keys, tuple | list) and len(keys) == 2 and keys[0] is keys[1] is None:
            keys = None
        if keys is None:
            chosen = KeySelection.of_columns(self._schema(), [index, columns], dropna=dropna)
            counts = self._table("crosstab", kind, chosen.at(delta), **args)
            table: pd.DataFrame = counts.unstack(columns)
            return table
        if not isinstance(keys, tuple | list) or len(keys) != 2:
            raise TypeError(f"{_ONE_AXIS}; got {type(keys).__name__}.")
        if (keys[0] is None) != (keys[1] is None):
            half = OneAxisKeys.of_axis(self._schema(), index, columns, tuple(keys), dropna)
            return half.table(self._table("crosstab", kind, half.at(delta), **args))
        if delta is not None or dropna is not True:
            name = "delta" if delta is not None else "dropna"
            raise TypeError(
                f"`{name}` goes with a crosstab whose pairs are chosen from the data; with "
                "public keys= drop it."
            )
        group = CrossKeys.of_pair(self._schema(), index, columns, keys)
        del args["delta"], args["dropna"]  # checked above: neither goes with public keys
        return group.table(self._table("crosstab", kind, group, **args))
