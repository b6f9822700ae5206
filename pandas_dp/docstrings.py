"""Release docstrings: paragraphs written once, templates rendered for each surface.

pandas shares docstrings between Series and DataFrame (``pandas.util._decorators.doc``
and ``core/shared_docs.py``); so does this module, with a small renderer of its
own.  A template holds ``$name`` fields: a paragraph written once
(:data:`PARAGRAPHS`; :data:`SCOPE_FIELDS` where it reads differently on an
ungrouped and a grouped surface), or a release's own text, given as one string
or as an ``(ungrouped, grouped)`` pair.  :data:`RELEASES` holds the template of
each release of :class:`pandas_dp.surface.Releases`, written once for
``df.dp`` and ``df.dp.groupby(...)``; :func:`for_scope` gives a method its
rendered docstring and the signature of its overloads for one surface;
:func:`doc` renders a method of one surface in place.
"""

from __future__ import annotations

import functools
import inspect
import re
import types
import typing
from collections.abc import Callable, Mapping
from textwrap import dedent
from typing import Any, Literal, TypeVar

__all__ = ["PARAGRAPHS", "RELEASES", "SCOPE_FIELDS", "doc", "for_scope", "render"]

F = TypeVar("F", bound=Callable[..., Any])
Scope = Literal["ungrouped", "grouped"]
Field = str | tuple[str, str]

_FIELD = re.compile(r"\$(\w+)")

#: Paragraphs written once, the same on every surface.
PARAGRAPHS: dict[str, str] = {
    "max_rows": """\
        max_rows : int or "auto", optional
            With a privacy unit: at most this many rows of one person are used
            (in each key, and for a selection in each candidate; the rest are
            dropped at random). Defaults to ``set_budget(max_rows=...)``; refused
            on a frame whose rows are persons. ``"auto"``: chosen privately by
            ``rows_per_unit(0.9)`` on the grid 1..32, 64, ..., 2**20 with a
            quarter of ``epsilon`` (or of ``rho``; the call still costs
            ``epsilon``, held at once); the ledger records it, and an interval carries it as
            ``max_rows``.""",
    "max_groups": """\
        max_groups : int, optional
            With a privacy unit: at most this many keys of one person are used
            (chosen at random). Defaults to ``set_budget(max_groups=...)``.""",
    "rho": """\
        rho : float
            Instead of ``epsilon`` (give exactly one), under a zCDP budget
            (``set_budget(rho=...)``): discrete Gaussian noise of ``σ² =
            Δ₂²/(2ρ)`` (Δ₂ the L2 sensitivity: ``k·√g`` rows for a grouped count
            of persons with at most k rows in g keys), composed exactly in ρ. An
            epsilon budget refuses it: Gaussian noise is not pure ε-DP.""",
    "rho_select": """\
        rho : float
            Instead of ``epsilon`` (give exactly one), under a zCDP budget
            (``set_budget(rho=...)``): charged exactly ρ, and run at the largest
            ε with ``ε²/2 <= ρ`` (rounded down: ``sqrt(2ρ)``). Its mechanism
            (permute-and-flip, AboveThreshold or discrete Laplace noise) is
            ε-DP, hence ``ε²/2``-zCDP; none is known to be ε-bounded-range,
            which would allow ``ε²/8``. An epsilon budget refuses it.""",
    "raises": "MissingBudgetError, BudgetExceededError, KeyError, ValueError, TypeError",
    "grid": """\
        candidates : list, array or Index of numbers
            The public grid to choose from, finite and strictly increasing,
            keyword-only; e.g. ``np.linspace(0, 500_000, 1001)``. Never read it
            from the data. The answer is always one of these points.""",
    "numeric": """\
        column : label
            A numeric column; missing values are skipped.""",
    "clip_one": """\
        clip : (float, float) or "auto"
            Public clip bounds, never read from the data; values are clipped to
            them first (±inf to the bounds). ``"auto"``: chosen privately by
            :meth:`bounds` with a quarter of ``epsilon`` (or of ``rho``), after a
            private count of the column's values with a twentieth (too few for this
            ``epsilon``, a ValueError says what to do, only the count spent); the
            call costs ``epsilon`` in total, held at once (one ledger entry per
            part); the bounds are returned with an interval (or ``cut``) as
            ``clip_lower``/``clip_upper``.""",
    "clip_many": """\
        clip : (float, float), dict or "auto"
            Public clip bounds, never read from the data; values are clipped to
            them first (±inf to the bounds). A mapping ``{column: (lower,
            upper)}`` (with ``column`` omitted) releases several columns at once.
            ``"auto"``: chosen privately by :meth:`bounds` with a quarter of
            ``epsilon`` (or ``rho``), after a private count of the column's values
            with a twentieth (too few for this ``epsilon``: a ValueError says
            what to do, only the count spent); the call costs ``epsilon`` in
            total, held at once (one ledger entry per part; a grouped call finds
            one pair from every key's rows); the bounds are returned with an
            interval (or ``cut``) as ``clip_lower``/``clip_upper``.""",
    "cut": """\
        cut : bool, default False
            Also release, privately, how much the bounds cut: the share of the
            column's values outside ``clip`` (``clipped_share``; per key when
            grouped) for a tenth of ``epsilon`` and, with a privacy unit, the
            share of persons with more rows than ``max_rows`` (whose extra rows
            are dropped: ``truncated_share``, over all the frame's persons) for
            another tenth; the statistic gets the rest (the call still costs
            ``epsilon``, held at once; one ledger entry per part). Returned as
            fields of the ``ci`` interval, or without ``ci`` as a Series (grouped:
            a DataFrame) with ``estimate`` and the shares. ``ci`` covers the noise
            only; the cut is the bias it does not cover. One column only. Each
            share's two counts get discrete Laplace noise of scale Δ/(ε/10): Δ 1
            (2 under substitute), times ``max_rows`` (× ``max_groups``) for the
            clipped share with a privacy unit. With ``rho``: a tenth of ρ each,
            run at ε = sqrt(2ρ/10).""",
    "cut_table": """\
        cut : bool, default False
            Also release, privately, how much the bounds cut: per column, the
            share of values outside its clip (a tenth of ``epsilon``, split
            across the columns) and, with a privacy unit, the share of persons
            with more rows than ``max_rows`` (another tenth), as the rows
            (grouped: columns under each column name) ``clipped_share`` and
            ``truncated_share``; the rest of ``epsilon`` goes to ``describe``.""",
    "column_many": """\
        column : label, optional
            The numeric column; missing values are skipped. Omit it and pass
            ``clip`` as a mapping for several columns.""",
}

#: Paragraphs that read differently on an ungrouped and on a grouped surface.
SCOPE_FIELDS: dict[Scope, dict[str, str]] = {
    "ungrouped": {
        "epsilon": "epsilon : float\n    Privacy cost of the whole call, keyword-only.",
        "epsilon_split": """\
            epsilon : float
                Privacy cost of the whole call, keyword-only (split equally
                across columns).""",
        "ci": """\
            ci : float, optional
                A confidence level in (0, 1), e.g. ``0.95``: return the answer with
                its noise interval (see Notes). Costs nothing more.""",
        "max_groups": "",
    },
    "grouped": {
        "epsilon": """\
            epsilon : float
                Privacy cost of the whole release, charged once for all keys,
                keyword-only.""",
        "epsilon_split": """\
            epsilon : float
                Privacy cost of the whole release, charged once for all keys,
                keyword-only (split equally across columns).""",
        "ci": """\
            ci : float, optional
                A confidence level in (0, 1), e.g. ``0.95``: each key's answer with
                its noise interval (see Notes). Costs nothing more.""",
        "max_groups": PARAGRAPHS["max_groups"],
    },
}

_SECTIONS = """\
Raises
------
$raises

Notes
-----
$notes"""


def _fill(match: re.Match[str], fields: Mapping[str, str], indent: str) -> str:
    return dedent(fields[match.group(1)]).replace("\n", "\n" + indent)


def render(template: str, fields: Mapping[str, str]) -> str:
    """``template`` with each ``$name`` replaced by ``fields[name]``, indented where it stands.

    A field is dedented, and its later lines take the indentation of the line
    it stands on; a line that held only empty fields is dropped.  An unknown
    name raises KeyError (at import: a template cannot ship with a hole).
    """

    lines: list[str] = []
    for line in template.splitlines():
        indent = line[: len(line) - len(line.lstrip())]
        text = _FIELD.sub(functools.partial(_fill, fields=fields, indent=indent), line)
        if text.strip() or not line.strip():
            lines += [part.rstrip() for part in text.split("\n")]
    return "\n".join(lines)


def doc(**fields: str) -> Callable[[F], F]:
    """Render a one-surface method's docstring template with :data:`PARAGRAPHS` and ``fields``."""

    def mark(method: F) -> F:
        method.__doc__ = render(method.__doc__ or "", {**PARAGRAPHS, **fields})
        return method

    return mark


#: What an ungrouped sum or mean returns.
_PER_COLUMN = """\
    float, or pandas.Series indexed by column for a mapping
        With ``ci``: a Series indexed ``["estimate", "lower", "upper"]``
        (for a mapping, with the column name as the outer level)."""

#: Each release of :class:`pandas_dp.surface.Releases`: its template and its own fields.
RELEASES: dict[str, tuple[str, dict[str, Field]]] = {}


def _release(name: str, template: str, **fields: Field) -> None:
    RELEASES[name] = (template, fields)


def _signature(method: Callable[..., Any], self_type: str) -> inspect.Signature:
    """The signature the overloads of ``method`` on ``self_type`` give: parameters, returns."""
    forms = [inspect.signature(o) for o in typing.get_overloads(method)]
    forms = [f for f in forms if f.parameters["self"].annotation == self_type]
    names = {name for form in forms for name in form.parameters}
    full = inspect.signature(method)
    return full.replace(
        parameters=[p for p in full.parameters.values() if p.name in names],
        return_annotation=" | ".join(
            dict.fromkeys(part for f in forms for part in str(f.return_annotation).split(" | "))
        ),
    )


def for_scope(owner: type, method: Callable[..., Any], scope: Scope) -> Callable[..., Any]:
    """``method`` as ``owner``'s: the same code, with ``scope``'s docstring and signature.

    The signature is the one the method's overloads typed on
    ``Releases[Ungrouped]`` (or ``[Grouped]``; ``Selections[...]`` for the
    selections) give, so ``help()`` and
    ``inspect.signature`` show what mypy checks.
    """
    if not isinstance(method, types.FunctionType):
        raise TypeError(f"`method` must be a function, got {type(method).__name__}.")
    template, own = RELEASES[method.__name__]
    pick = 0 if scope == "ungrouped" else 1
    fields = {**PARAGRAPHS, **SCOPE_FIELDS[scope]}
    fields.update({k: v if isinstance(v, str) else v[pick] for k, v in own.items()})
    fields["sections"] = render(_SECTIONS, fields)
    copy = types.FunctionType(
        method.__code__,
        method.__globals__,
        method.__name__,
        method.__defaults__,
        method.__closure__,
    )
    copy.__kwdefaults__ = dict(method.__kwdefaults__ or {})
    copy.__qualname__ = f"{owner.__qualname__}.{method.__name__}"
    copy.__annotations__ = dict(method.__annotations__)
    copy.__doc__ = render(template, fields)
    defined = method.__qualname__.split(".")[0]  # Releases, or Selections (its base)
    copy.__dict__["__signature__"] = _signature(method, f"{defined}[{scope.capitalize()}]")
    return copy


# ------------------------------------------------------------------ releases

_release(
    "count",
    """$summary

    Parameters
    ----------
    column : label, optional
        Count the non-missing values of this column (like
        ``df[column].count()``) instead of rows.
    $epsilon
    $rho
    $ci
    $max_rows
    $max_groups

    Returns
    -------
    $returns

    $sections
    """,
    summary=(
        "Noisy number of rows, or of non-missing values of ``column``.",
        "Noisy count of rows (or of non-missing values of ``column``) per key.",
    ),
    returns=(
        """\
            int, or pandas.Series
                Exact count plus discrete Laplace noise; may be negative when tiny.
                With ``ci``: a Series indexed ``["estimate", "lower", "upper"]``.""",
        """\
            pandas.Series or pandas.DataFrame
                Integer counts indexed by ``keys``; may be negative for tiny groups.
                With ``ci``: a DataFrame with columns ``estimate``, ``lower``, ``upper``.""",
    ),
    notes=(
        """\
            Costs ``epsilon``. Sensitivity 1 under add_remove. Under substitute the
            row count of the frame the budget was set on is public: ``count()`` is
            returned exactly and costs nothing. The count of a column's non-missing
            values, and any count of a filtered frame, has sensitivity 1 (a changed
            row may gain or lose a value, or enter or leave the filter). Public:
            ``epsilon``.

            With ``ci``, ``[lower, upper] = estimate ± t`` where ``t`` is the exact
            discrete Laplace quantile: the true count lies inside with probability
            at least ``ci``. Computed from the released count and public
            parameters only (post-processing); ``pandas_dp.half_width("count",
            ...)`` gives ``t`` before anything is spent.""",
        """\
            Costs ``epsilon`` once for all keys (parallel composition: each row is
            in one key). L1 sensitivity 1 under add_remove, 2 under substitute (a
            changed row may leave one key and join another); discrete Laplace
            noise of scale Δ/ε per key. Public: the keys, ``epsilon``. With
            ``ci``, each key's true count lies in its interval with probability
            at least ``ci`` (post-processing, no extra cost).""",
    ),
)

_release(
    "nunique",
    """$summary

    Parameters
    ----------
    column : label
        The column whose distinct non-missing values are counted (like
        ``df[column].nunique()``).
    $epsilon
    $rho
    $max_rows
    $max_groups

    Returns
    -------
    $returns

    $sections
    """,
    summary=(
        "Noisy number of distinct non-missing values of ``column``.",
        "Noisy number of distinct non-missing values of ``column`` per key.",
    ),
    returns=(
        """\
            int
                Exact distinct count plus discrete Laplace noise; may be negative
                when tiny.""",
        """\
            pandas.Series
                Integer distinct counts indexed by ``keys`` (noise alone for a key
                without rows); may be negative for tiny groups.""",
    ),
    notes=(
        """\
            Costs ``epsilon``. Sensitivity 1 under add_remove and under
            substitute alike: adding or removing a row, or changing its value,
            moves the distinct count by at most one; with a privacy unit
            ``max_rows`` (a person's ``k`` rows changed: at most ``k`` values
            leave and ``k`` arrive). Discrete
            Laplace noise of scale Δ/ε. Values are compared by a 64-bit hash
            (:class:`pandas_dp.aggregate.Nunique`). Public: ``epsilon``.""",
        """\
            Costs ``epsilon`` once for all keys. As a count per key: L1
            sensitivity 1 under add_remove, 2 under substitute (a changed row may
            leave one key's values and reach another's); with a privacy unit
            ``max_groups·max_rows``, twice that under substitute. Discrete Laplace
            noise of scale Δ/ε per key. Public: the keys, ``epsilon``.""",
    ),
)

_release(
    "sum",
    """$summary

    Parameters
    ----------
    $column_many
    $clip_many
    $epsilon_split
    $rho
    $ci
    $cut
    $max_rows
    $max_groups

    Returns
    -------
    $returns

    $sections
    """,
    summary=(
        "Noisy sum of ``column`` after clipping to the public bounds ``clip``.",
        "Noisy sum of ``column`` per key after clipping to the public bounds ``clip``.",
    ),
    returns=(
        _PER_COLUMN,
        """\
            pandas.Series or pandas.DataFrame
                Indexed by ``keys``; a DataFrame (one column per column) for a
                mapping. With ``ci``: a DataFrame with columns ``estimate``,
                ``lower``, ``upper`` (under each column name, for a mapping).""",
    ),
    notes=(
        """\
            Costs ``epsilon``. L1 sensitivity ``max(|L|, |U|)`` under add_remove;
            under substitute ``max(U − L, |L|, |U|)`` (a changed row's value may
            move by ``U − L``, or appear or disappear: a missing value, a filtered
            frame). Each clipped row is rounded to a power-of-two grid chosen from
            (sensitivity, epsilon) only, summed exactly in integers and given exact
            discrete Laplace noise, so the result lies on the grid. Public:
            ``clip``, ``epsilon``.

            With ``ci``, ``estimate ± t·step`` (``t`` the exact discrete Laplace
            quantile on the grid) holds the clipped sum with probability at least
            ``ci``, per column. It covers the noise, not the bias of clipping:
            values beyond ``clip`` are counted at the bound. Strictly it covers the
            sum of the rows as rounded to the grid, which is within ``n·step/2`` of
            the exact clipped sum (``step`` is about 2**-30 of the noise scale:
            negligible below a billion rows). See ``pandas_dp.half_width``.""",
        """\
            Costs ``epsilon`` once for all keys. L1 sensitivity per column
            ``max(|L|, |U|)`` under add_remove and ``2·max(|L|, |U|)`` under
            substitute (a changed row may leave one key and join another), on a
            data-independent power-of-two grid with exact discrete Laplace noise.
            With ``rho``, L2 sensitivity ``max(|L|, |U|)`` under add_remove and
            ``max(√2·max(|L|, |U|), U − L)`` under substitute (a row whose value
            changes inside its key moves it by up to ``U − L``).
            Public: the keys, ``clip``, ``epsilon``. With ``ci``: the interval of
            the ungrouped ``sum`` for each key (the noise on the clipped sum, not
            the bias of clipping), at no extra cost.""",
    ),
)

_release(
    "mean",
    """$summary

    Parameters
    ----------
    $column_many
    $clip_many
    $epsilon_split
    $rho
    $ci
    $cut
    $max_rows
    $max_groups

    Returns
    -------
    $returns

    $sections
    """,
    summary=(
        "Noisy mean of ``column`` after clipping to ``clip``; always inside the clip.",
        "Noisy mean of ``column`` per key after clipping to ``clip``; always inside it.",
    ),
    returns=(
        _PER_COLUMN,
        """\
            pandas.Series or pandas.DataFrame
                Indexed by ``keys``; a DataFrame (one column per column) for a
                mapping. A key with no rows gets the clip midpoint plus noise.
                With ``ci``: a DataFrame with columns ``estimate``, ``lower``,
                ``upper`` (under each column name, for a mapping).""",
    ),
    notes=(
        """\
            Costs ``epsilon`` in total. Releases ``A = Σ(x − L)`` and
            ``B = Σ(U − x)`` with independent discrete Laplace noise of scale
            ``(U − L)/ε``: one person moves the pair by an L1 distance of exactly
            ``U − L``. The mean is ``L + (U − L)·a/(a + b)`` with ``a, b`` the
            noisy sums floored at 0 (the midpoint if both are 0): half the mean
            squared error of noisy-sum over noisy-count. Under substitute the pair
            has sensitivity ``2(U − L)``. Public: ``clip``, ``epsilon``.

            With ``ci``: both noises lie within their exact discrete Laplace
            quantile ``t`` with probability ``ci`` (each at ``sqrt(ci)``); the
            mean is monotone in each sum, so the extreme sums give ``lower`` and
            ``upper``, widened by one grid step for rounding. The interval always
            lies inside ``clip`` and holds the exact clipped mean of a non-empty
            column with probability at least ``ci``: the noise, not the bias of
            clipping. Its half-width is about ``(U − L)·t/(n·Q)``, i.e. shrinks as
            ``1/n``; ``pandas_dp.half_width("mean", n=...)`` plans it.""",
        """\
            Costs ``epsilon`` once for all keys: the complementary sums
            ``Σ(x − L)`` and ``Σ(U − x)`` per key, jointly of L1 sensitivity
            ``U − L`` under add_remove and ``2(U − L)`` under substitute (a
            changed row may leave one key and join another). Public: the keys,
            ``clip``, ``epsilon``. With ``ci``: the interval of the ungrouped
            ``mean`` for each key, always inside the clip; a key with no rows has
            no true mean, and its interval is wide.""",
    ),
)

_release(
    "var",
    """$summary

    Parameters
    ----------
    $numeric
    $clip_one
    $epsilon
    $rho
    $ci
    $cut
    $max_rows
    $max_groups

    Returns
    -------
    $returns

    $sections
    """,
    summary=(
        "Noisy sample variance of ``column`` (``ddof=1``, like pandas) after clipping.",
        "Noisy clipped sample variance (``ddof=1``) of ``column`` per key; never negative.",
    ),
    returns=(
        """\
            float, or pandas.Series
                Never negative, at most ``(U − L)²/2``; 0 when the noisy count is 0.
                With ``ci``: a Series indexed ``["estimate", "lower", "upper"]``.""",
        """\
            pandas.Series, or pandas.DataFrame
                Indexed by ``keys``; inside ``[0, (U − L)²/2]``, 0 for a key whose
                noisy count is 0. With ``ci``: a DataFrame with columns
                ``estimate``, ``lower``, ``upper``.""",
    ),
    notes=(
        """\
            Costs ``epsilon``: one joint release, with no separate count. Each
            clipped row on the grid ``q ∈ [0, Q]`` adds ``(q, Q − q)`` to the
            mean's complementary sums (ε/2; L1 sensitivity ``U − L`` under
            add_remove, ``2(U − L)`` under substitute) and the centred second
            moment ``round(q(Q − q)/Q) − o`` to a third sum (ε/2; range
            ``≈ (U − L)/8``). Count, mean and variance all come from these three
            (see :func:`pandas_dp.variance.plan_variance` for the proof of the
            sensitivity). Public: ``clip``, ``epsilon``.

            With ``ci``: each of the three noises lies within its exact discrete
            Laplace quantile with probability ``ci**(1/3)`` (independent, so all
            three with probability ``ci``); bounding the variance over that box
            of noiseless sums, widened by the grid rounding, gives an interval
            inside ``[0, (U − L)²/2]`` that holds the sample variance of the
            clipped values (at least two rows) with probability at least ``ci``
            (:func:`pandas_dp.accuracy.variance_interval` proves it). It is
            conservative (coverage well above ``ci`` in practice) and covers the
            noise, not the bias of clipping. Post-processing: same cost, same
            estimate.

            With ``rho``: the same three sums with discrete Gaussian noise, ρ/2
            on the pair (L2 sensitivity ``U − L``: ``q² + (Q − q)² <= Q²``;
            ``sqrt(2)·(U − L)`` under substitute) and ρ/2 on the third (L2: its
            range); the interval uses the Gaussian's quantiles
            (:func:`pandas_dp.variance.plan_variance_rho`).""",
        """\
            Costs ``epsilon`` once for all keys: per key, one joint release of
            the complementary sums ``(Σ(x − L), Σ(U − x))`` (ε/2; L1 sensitivity
            ``U − L`` under add_remove, ``2(U − L)`` under substitute, where a row
            may move between keys) and of a centred second moment (ε/2; about
            ``(U − L)/8``, doubled under substitute). See
            :func:`pandas_dp.variance.plan_variance` for the proof. Public: the
            keys, ``clip``, ``epsilon``. With ``ci``: the interval of the
            ungrouped ``var`` for each key: its clipped sample variance (at least
            two rows) is inside with probability at least ``ci``.""",
    ),
)

_release(
    "std",
    """$summary

    Parameters
    ----------
    $numeric
    $clip_one
    $epsilon
    $rho
    $ci
    $cut
    $max_rows
    $max_groups

    Returns
    -------
    $returns

    $sections
    """,
    summary=(
        "Noisy standard deviation of ``column`` (``ddof=1``): the square root of :meth:`var`.",
        "Noisy clipped standard deviation (``ddof=1``) per key: the square root of :meth:`var`.",
    ),
    returns=(
        """\
            float, or pandas.Series
                Never negative. With ``ci``: a Series indexed ``["estimate",
                "lower", "upper"]``.""",
        """\
            pandas.Series, or pandas.DataFrame
                Indexed by ``keys``; never negative. With ``ci``: a DataFrame with
                columns ``estimate``, ``lower``, ``upper``.""",
    ),
    notes="""\
        Costs ``epsilon``: the same release, sensitivity (under add_remove and
        substitute) and public parameters as :meth:`var` (post-processing is
        free). With ``ci``: the square roots of
        :meth:`var`'s interval, so it holds the clipped sample standard deviation
        with probability at least ``ci``; always inside
        ``[0, (U − L)/sqrt(2)]``.""",
)

_release(
    "argmax_exp",
    """$summary

    Parameters
    ----------
    column : label
        The column whose values are the candidates (e.g. ``"product"``).
    candidates : list, array, Index or CategoricalDtype
        The public candidates, keyword-only. Never read them from the data
        (``df[column].unique()``): which values occur can reveal who is in
        it. Rows whose value is missing or not a candidate are dropped; a
        candidate with no rows can still win.
    $epsilon
    $rho_select
    k : int, optional
        How many candidates to return, best first (top-k by peeling): with
        ``k``, always a list (per key, a DataFrame), also for ``k=1``.
    value : label, optional
        Score each candidate by the sum of this numeric column over its
        rows (after clipping to ``clip``) instead of by its row count.
        Missing values are skipped.
    clip : (float, float), optional
        Public clip bounds for ``value``; required with it.
    $max_rows
    $max_groups

    Returns
    -------
    $returns

    Raises
    ------
    $raises
        All argument errors (missing candidates, duplicates, ``k`` larger
        than the number of candidates, ...) are raised before any spend.

    Notes
    -----
    $notes
    """,
    summary=(
        "The candidate with the most rows (or the largest clipped sum of ``value``), privately.",
        "The candidate with the most rows (or the largest clipped sum of ``value``) in every key.",
    ),
    returns=(
        """\
            object or list
                One candidate (no ``k``; typed as the candidates' element type),
                or a list of ``k`` distinct candidates, best first.""",
        """\
            pandas.Series or pandas.DataFrame
                The winner per key, indexed by ``keys`` (named after ``column``);
                with ``k``, a DataFrame with columns ``1..k``, best first.""",
    ),
    notes=(
        """\
            Permute-and-flip (report-noisy-max with exponential noise), sampled
            exactly: each candidate is accepted independently with probability
            ``exp(-c·(best − score))`` and the answer is a uniform pick among the
            accepted ones. Nothing is exponentiated in floating point, so huge
            counts cannot overflow. Costs ``epsilon`` (``epsilon/k`` per peel).
            Under add_remove one person moves one candidate's score one way
            (sensitivity 1 for counts, ``max(|L|, |U|)`` for sums), so
            ``c = ε/Δ``; under substitute ``Δ = 1`` or ``max(U − L, |L|, |U|)`` and
            ``c = ε/(2Δ)``. Clipped sums are scored exactly in integers on a
            power-of-two grid chosen from (clip, ε) only; c is rounded down, so the
            realised ε never exceeds ``epsilon``. Public: the candidates, ``k``,
            ``clip``, ``epsilon``.""",
        """\
            Costs ``epsilon`` once for all keys (parallel composition: each person
            is in one key). One exact permute-and-flip per key, all keys in one
            vectorized pass; ``c = ε/Δ`` under add_remove and ``ε/(2Δ)`` under
            substitute (a row moving between keys is a removal in one and an
            addition in the other, each costing at most ε/2), with Δ as for the
            ungrouped ``argmax_exp``. Keys with no rows get a uniformly random
            candidate. Public: the keys, the candidates, ``k``, ``clip``,
            ``epsilon``.""",
    ),
)

_release(
    "quantile",
    """$summary

    Parameters
    ----------
    $numeric
    q : float
        The quantile level in ``[0, 1]``, read as the shortest decimal
        (``0.9`` is ``9/10``).
    $grid
    $epsilon
    $rho_select
    $max_rows
    $max_groups

    Returns
    -------
    $returns

    Raises
    ------
    $raises
        A bad ``q`` or grid (unsorted, duplicated, non-finite) raises before
        any spend.

    Notes
    -----
    $notes
    """,
    summary=(
        "The ``q``-quantile of ``column``, privately chosen from a public grid.",
        "The ``q``-quantile of ``column`` in every key, chosen from a public grid.",
    ),
    returns=(
        "float\n    One grid point.",
        "pandas.Series\n    One grid point per key, indexed by ``keys``.",
    ),
    notes=(
        """\
            Permute-and-flip, sampled exactly, on the score of each grid point c:
            the distance from ``q·n`` to ``[#(x < c), #(x ≤ c)]`` (lower is
            better; zero exactly when c is a q-quantile, so ties count). The score
            is not monotone, so ``c = ε/(2Δ)`` with sensitivity
            ``Δ = max(q, 1 − q)`` under add_remove and ``Δ = 1`` under substitute
            (a changed row leaves one side and joins another). Costs ``epsilon``.
            Public: the grid, ``q``, ``epsilon``.

            This is the honest way to choose clip bounds: spend a little ε on,
            e.g., the 0.05 and 0.95 quantiles and pass them as ``clip=`` to
            ``sum``/``mean``, instead of reading ``df[column].max()``.""",
        """\
            Costs ``epsilon`` once for all keys. Score: the distance from ``q·n``
            to ``[#(x < c), #(x ≤ c)]`` per key and grid point (one
            searchsorted and one 2-D bincount), permute-and-flip with
            ``c = ε/(2Δ)``: ``Δ = max(q, 1 − q)`` under add_remove and
            ``2·max(q, 1 − q)`` under substitute (a row that moves between keys
            changes two keys' scores; 1 for the median). A key with no rows gets
            a grid point close to uniform at random. Public: the keys, the grid,
            ``q``, ``epsilon``.""",
    ),
)

_release(
    "median",
    """$summary

    Parameters
    ----------
    $numeric
    $grid
    $epsilon
    $rho_select
    $max_rows
    $max_groups

    Returns
    -------
    $returns

    $sections
    """,
    summary=(
        "The median of ``column``, privately chosen from a public grid: ``quantile(column, 0.5)``.",
        "The median of ``column`` in every key, chosen from a public grid.",
    ),
    returns=(
        "float\n    One grid point.",
        "pandas.Series\n    One grid point per key, indexed by ``keys``.",
    ),
    notes=(
        """\
            See :meth:`quantile`. Sensitivity of the score 1/2 under add_remove
            (``c = ε``) and 1 under substitute (``c = ε/2``). Costs ``epsilon``.
            Public: the grid, ``epsilon``.""",
        """\
            ``quantile(column, 0.5, ...)``: sensitivity 1/2 under add_remove
            (``c = ε``) and 1 under substitute (``c = ε/2``). Costs ``epsilon``
            once for all keys. Public: the keys, the grid, ``epsilon``.""",
    ),
)

_release(
    "bounds",
    """$summary

    Parameters
    ----------
    $numeric
    $epsilon
    $rho_select
    $max_rows
    $max_groups

    Returns
    -------
    $returns

    $sections
    """,
    summary=(
        "Clip bounds ``(lower, upper)`` for ``column``, chosen privately with no bound given.",
        "Clip bounds for ``column`` in every key, chosen privately with no bound given.",
    ),
    returns=(
        """\
            (float, float)
                ``lower <= 0 < upper`` or ``lower < 0 = upper``: each ``0`` or a
                power of two times ±2 (``(0, 2**-20)`` for a column with no
                values). Use them as ``clip=``; ``clip="auto"`` does both steps.""",
        """\
            pandas.DataFrame
                Columns ``lower`` and ``upper``, indexed by ``keys``.""",
    ),
    notes=(
        """\
            Costs ``epsilon``: half for the upper side, half for the lower. Each
            side runs AboveThreshold (the sparse vector technique) over the public
            candidates ``0, 2**-20, ..., 2**100``: the first candidate whose count
            of values beyond it, plus discrete Laplace noise, is at most a public
            threshold plus noise; the bound is twice that candidate. The
            threshold is 5/4 noise scales (54 rows at ``epsilon=0.25``), so about
            that many rows lie beyond the stop, and 2x leaves them room: on the
            PUMS income data the bound lands near 2**18 or 2**19 (the maximum is
            420,500). Count sensitivity 1 under add_remove and under substitute
            (``max_rows``, twice under substitute, with a privacy unit).
            Public: the candidates, the threshold, ``epsilon``. See
            :mod:`pandas_dp.clipbounds` for the privacy argument.""",
        """\
            Each key runs its own search (parallel composition): costs
            ``epsilon`` once for all keys, with count sensitivity 1 under
            add_remove and 2 under substitute (a changed row may leave one key
            and join another). A key with few rows stops early, at small bounds.
            Public: the keys, the candidates, ``epsilon``.""",
    ),
)

_release(
    "clipped_share",
    """$summary

    Parameters
    ----------
    $numeric
    clip : (float, float)
        The clip bounds to check (e.g. those a ``sum`` or ``mean`` used).
    $epsilon
    $rho_select
    $max_rows
    $max_groups

    Returns
    -------
    $returns

    $sections
    """,
    summary=(
        "The noisy share of ``column``'s values outside ``clip``: the bias a clip may cause.",
        "The noisy share of ``column``'s values outside ``clip`` in every key.",
    ),
    returns=(
        "float\n    In [0, 1].",
        "pandas.Series\n    In [0, 1], indexed by ``keys``.",
    ),
    notes=(
        """\
            ``ci=`` intervals cover the noise only; this shows what the clip cut.
            Costs ``epsilon``: the counts of values outside and inside the clip,
            each with discrete Laplace noise of scale ``Δ/ε``; a row is in one of
            them, so ``Δ = 1`` under add_remove and 2 under substitute. The
            share is ``a/(a + b)`` of the noisy counts floored at 0. Public:
            ``clip``, ``epsilon``.""",
        """\
            Costs ``epsilon`` once for all keys: per key the counts outside and
            inside the clip, of joint L1 sensitivity 1 under add_remove and 2
            under substitute. Public: the keys, ``clip``, ``epsilon``.""",
    ),
)

_release(
    "describe",
    """$summary

    Parameters
    ----------
    columns : label or list of labels
        Numeric columns; missing values are skipped.
    clip : dict or "auto"
        ``{column: (lower, upper)}``: public clip bounds of every column.
        ``"auto"``: each column's chosen privately by :meth:`bounds` (a quarter
        of ``epsilon``, after a count of its values with a twentieth, each
        split across the columns; the call still costs ``epsilon``), returned
        as the rows (grouped: columns) ``clip_lower`` and ``clip_upper``.
    candidates : dict
        ``{column: grid}``: the public grid each column's quartiles are
        chosen from (finite, strictly increasing).
    $epsilon_split
    $rho
    $max_rows
    $max_groups
    ci : None
        Not available (a level raises TypeError saying why): see Notes.
    $cut_table

    Returns
    -------
    $returns

    $sections
    """,
    summary=(
        "pandas' ``describe`` rows of numeric columns, privately: count, mean, std, quartiles.",
        "pandas' ``describe`` per key, privately: count, mean, std and quartiles.",
    ),
    returns=(
        """\
            pandas.DataFrame
                Indexed ``count, mean, std, 25%, 50%, 75%``, one column per column,
                like ``df[columns].describe()`` without ``min`` and ``max``.""",
        """\
            pandas.DataFrame
                Indexed by ``keys``; columns ``(column, stat)`` with stat in
                ``count, mean, std, 25%, 50%, 75%``, like
                ``df.groupby(by)[columns].describe()`` without ``min`` and ``max``
                (and with every public key, absent ones too).""",
    ),
    notes=(
        """\
            Costs ``epsilon``, split equally across the columns; each column's
            share ε_c is spent as ε_c/2 on one joint release that gives count,
            mean and std (see :meth:`var`: the count and the mean come from the
            complementary sums, so they cost nothing extra; its sensitivities
            under add_remove and substitute) and ε_c/6 on each of the 25 %, 50 % and 75 %
            points (permute-and-flip on one score table, as :meth:`quantile`).
            The ledger records one entry stating this split. With ``rho``: ρ is
            split the same way; the moments get discrete Gaussian noise (as
            :meth:`var` with ``rho``) and each quartile runs at the largest ε
            with ``ε²/2 <= ρ_c/6`` (permute-and-flip is ε-DP, hence
            ``ε²/2``-zCDP; it is not known to be bounded-range). Public: ``clip``,
            the grids, ``epsilon``. min and max are left out: on a public grid
            the private 0- and 1-quantiles cannot tell the points beyond the data
            apart, so they would be close to a uniform pick, not an estimate; the
            quantile grid and the clip bounds are the honest public range.

            There is no ``ci=`` on ``describe``: its quartiles are picked by a
            selection mechanism (permute-and-flip), which adds no noise to a
            statistic and so has no noise interval. For intervals, release per
            column: :meth:`count`, :meth:`mean` or :meth:`std` with ``ci=``.""",
        """\
            Costs ``epsilon`` once for all keys (each row is in one key), split as
            the ungrouped ``describe`` splits it: equally across the columns, and
            within a column's share ε_c, ε_c/2 on the joint count/mean/std release
            (see :meth:`var`: its sensitivities under add_remove and substitute) and
            ε_c/6 on each quartile (permute-and-flip on one score table per key,
            as :meth:`quantile`). The ledger records one entry stating this
            split. Public: the keys, ``clip``, the grids, ``epsilon``. A key with
            no rows is answered too, but only with noise: a count near 0, a mean
            somewhere inside the clip, a std of 0 when the noisy count is 0, and
            quartiles picked almost uniformly from the grid (not even in order).
            min and max are left out. No ``ci=``, as in the ungrouped
            ``describe`` (its quartiles come from a selection mechanism, which
            has no noise interval): use :meth:`count`, :meth:`mean` or
            :meth:`std` with ``ci=``.""",
    ),
)
