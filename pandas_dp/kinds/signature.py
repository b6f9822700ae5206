"""What a release looks like to its caller, declared once, beside its kind.

A :class:`Signature` holds a release's parameters (:class:`Param`: name,
annotation, default, the paragraph that documents it), its typed forms
(:class:`Form`: which arguments give which return type), how it builds its
kind from a call's arguments, and its documentation, written once for every
surface.  Nothing else lists a release:

- the methods of ``df.dp``, ``df.dp.groupby(...)`` (public or private keys)
  and ``ddf.dp``, with their overloads, are generated from the signatures of
  each module of this room (``python -m pandas_dp.surface._generate`` writes
  ``pandas_dp/surface/_typed_<module>.py``; a test fails when what is checked
  in differs from what the declarations give);
- their docstrings are rendered from the signature for each surface
  (:func:`document`): the grouped wording is the ungrouped one with the
  scope's fields (``$per_key``, ...) and the grouped paragraph appended.

A surface has one of three scopes (:data:`SCOPES`), whose marker types type
``self`` in the overloads: :class:`Ungrouped` (one answer, no ``max_groups``),
:class:`Grouped` (one answer per public key, ``max_groups``) and
:class:`Keyless` (keys chosen privately: ``delta`` required too).
"""

from __future__ import annotations

import functools
import re
import textwrap
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from textwrap import dedent
from typing import Any, Literal

from .base import Kind

__all__ = [
    "CI",
    "CUT",
    "CUT_UNIT",
    "DELTA",
    "EPSILON",
    "MAX_GROUPS",
    "MAX_ROWS",
    "NUMERIC",
    "OMIT",
    "REQUIRED",
    "RHO",
    "SCOPES",
    "Form",
    "Grouped",
    "Keyless",
    "Param",
    "Scope",
    "Signature",
    "Ungrouped",
    "document",
    "render",
]

#: A privacy loss: ``("epsilon", ε)`` or ``("rho", ρ)``, exact.
Loss = tuple[str, Fraction]
Scope = Literal["ungrouped", "grouped", "keyless"]
#: The scopes of a surface, in the order their overloads are written.
SCOPES: tuple[Scope, ...] = ("ungrouped", "grouped", "keyless")


class Ungrouped:
    """Marker type of a surface whose releases give one answer (``df.dp``)."""


class Grouped:
    """Marker type of a surface whose releases give one answer per public key."""


class Keyless:
    """Marker type of a grouped surface whose keys are chosen privately (``delta=``)."""


#: A parameter's default that means "required" (no default).
REQUIRED = "<required>"
#: In a :class:`Form`, a parameter the form leaves out.
OMIT = "<omit>"


@dataclass(frozen=True)
class Param:
    """One parameter of a release: as the implementation takes it, and its documentation.

    ``annotation`` and ``default`` are source text (``"Hashable | None"``,
    ``"None"``); ``doc`` is its numpydoc entry, with ``$fields`` of the scope
    (:data:`SCOPE_FIELDS`); ``positional``: before the ``*``.
    """

    name: str
    annotation: str
    default: str = REQUIRED
    doc: str = ""
    positional: bool = False


@dataclass(frozen=True)
class Form:
    """One typed form of a release: what it returns when called with these argument types.

    ``returns``: ``(ungrouped, grouped)`` return annotations (keyless is
    grouped); ``given``: parameters whose annotation (and default) differ in
    this form from the implementation's, as ``(annotation, default)``, or
    :data:`OMIT` to leave one out.  The generator writes each form twice per
    scope: given ``epsilon: float``, and given ``rho: float`` (``epsilon``
    then ``None``).
    """

    returns: tuple[str, str]
    given: Mapping[str, tuple[str, str] | str] = field(default_factory=dict)


@dataclass(frozen=True)
class Signature:
    """A release, as its callers see it: parameters, forms, what it builds, its docs.

    ``build(args, loss)`` is the kind a call releases from its arguments by
    name (``clip`` already a pair, or a mapping of pairs) and its loss.
    ``columns(args)``: the columns a ``clip`` applies to (``clip="auto"`` and
    ``cut=True`` find or measure each); ``table``: the answer is a table of
    columns (``describe``: ``cut=True`` takes several).  ``clipped``: the
    release takes a statistic's ``clip`` (``"auto"``, ``cut=True`` apply);
    ``gridded``: it picks from a grid ``candidates`` that may be left out (its
    bounds, found privately, then make it).
    ``summary``, ``returns``, ``notes`` and ``raises`` are written once, with
    the fields of :data:`SCOPE_FIELDS` and this release's own ``words``
    (``{field: (ungrouped, grouped)}``); ``grouped``: what a grouped release
    adds (its sensitivity over the keys), appended to the notes of a grouped
    surface after the paragraph every grouped release shares.
    """

    name: str
    params: tuple[Param, ...]
    forms: tuple[Form, ...]
    build: Callable[[Mapping[str, Any], Loss], Kind[Any, Any]]
    summary: str
    returns: str
    notes: str
    grouped: str = ""
    raises: str = ""
    columns: Callable[[Mapping[str, Any]], tuple[Hashable, ...]] = lambda args: ()
    table: bool = False
    clipped: bool = False
    gridded: bool = False
    words: Mapping[str, tuple[str, str]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        names = [p.name for p in self.params]
        if len(set(names)) != len(names):
            raise TypeError(f"the release {self.name} declares a parameter twice: {names}.")
        for form in self.forms:
            unknown = set(form.given) - set(names)
            if unknown:
                raise TypeError(f"a form of {self.name} names unknown parameters {unknown}.")

    def scoped(self, scope: Scope) -> tuple[Param, ...]:
        """The parameters on a surface of ``scope``: ``max_groups`` and ``delta`` where they go."""
        extra = {"ungrouped": (), "grouped": (MAX_GROUPS,), "keyless": (MAX_GROUPS, DELTA)}
        return (*self.params, *extra[scope])


# ---------------------------------------------------------------- docs

_FIELD = re.compile(r"\$(\w+)")


def _fill(match: re.Match[str], fields: Mapping[str, str], indent: str) -> str:
    text = fields[match.group(1)]
    if "\n" not in text:  # words inside a line, spaces and all
        return text
    return dedent(text).replace("\n", "\n" + indent)


def render(template: str, fields: Mapping[str, str]) -> str:
    """``template`` with each ``$name`` replaced by ``fields[name]``, indented where it stands.

    A field of several lines is dedented, and its later lines take the
    indentation of the line it stands on (a field of one line is put in as
    it is); a line that held only empty fields is dropped.  An unknown
    name raises KeyError (a template cannot ship with a hole).
    """
    lines: list[str] = []
    for line in template.splitlines():
        indent = line[: len(line) - len(line.lstrip())]
        text = _FIELD.sub(functools.partial(_fill, fields=fields, indent=indent), line)
        if text.strip() or not line.strip():
            lines += [part.rstrip() for part in text.split("\n")]
    return "\n".join(lines)


#: The words a docstring takes on each surface.  A grouped surface's docs cover its
#: public keys and its keys chosen privately alike (one class serves both).
SCOPE_FIELDS: dict[str, dict[str, str]] = {
    "ungrouped": {
        "per_key": "",
        "cost": "Privacy cost of the whole call, keyword-only.",
        "each": "the answer",
        "public": "",
        "indexed": "",
        "interval": 'a Series indexed ``["estimate", "lower", "upper"]``',
        "keys_cut": "",
    },
    "grouped": {
        "per_key": " per key",
        "cost": "Privacy cost of the whole release, charged once for all keys, keyword-only.",
        "each": "each key's answer",
        "public": "the keys, ",
        "indexed": "Indexed by ``keys``, in their order (without ``keys=``: by the keys "
        "chosen, sorted).",
        "interval": "a DataFrame with columns ``estimate``, ``lower``, ``upper``",
        "keys_cut": ", and the share of persons with more keys than ``max_groups`` "
        "(``truncated_keys_share``) for another",
    },
}

#: What every grouped release adds to its notes, before its own ``grouped`` sentence.
GROUPED = """\
    Grouped: one answer per key, charged ``epsilon`` (or ``rho``) once for all
    keys (parallel composition: a row is in one key; with a privacy unit each
    person keeps at most ``max_groups`` keys, so the vector's sensitivity is the
    one-key figure times ``max_groups·max_rows``). Under substitute a changed row
    may leave one key and join another, which the vector's sensitivity counts.
    With public ``keys=``, rows whose key is missing or not listed are dropped
    and every key is answered (a key with no rows gets noise alone); public: the
    keys. Without ``keys=``, ``delta`` is required and the keys are chosen
    privately (see ``delta``): the answer is indexed by the chosen keys, sorted."""

#: How a return type reads in a docstring.
_TYPE_WORDS = {"pd.": "pandas.", "C": "object", "list[C]": "list", "Any": "object"}


def _type_words(annotations: list[str]) -> str:
    words: list[str] = []
    for annotation in annotations:
        for part in annotation.split(" | "):
            text = _TYPE_WORDS.get(part, part).replace("pd.", "pandas.")
            if text not in words:
                words.append(text)
    return " or ".join(words)


_TEMPLATE = """\
$summary

Parameters
----------
$parameters

Returns
-------
$return_type
    $returns

Raises
------
MissingBudgetError, BudgetExceededError, KeyError, ValueError, TypeError
    $raises

Notes
-----
$notes"""


def document(signature: Signature, scope: Literal["ungrouped", "grouped"]) -> str:
    """The docstring of ``signature`` on a surface of ``scope`` (grouped covers keyless)."""
    pick = 0 if scope == "ungrouped" else 1
    fields = {**PARAGRAPHS, **SCOPE_FIELDS[scope]}
    fields |= {name: pair[pick] for name, pair in signature.words.items()}

    def text(template: str) -> str:
        return render(dedent(template), fields)

    params = signature.scoped("ungrouped" if scope == "ungrouped" else "keyless")
    notes = text(signature.notes)
    if scope == "grouped":
        notes += "\n\n" + dedent(GROUPED)
        if signature.grouped:
            notes += "\n\n" + text(signature.grouped)
    whole = {
        "summary": text(signature.summary),
        "parameters": "\n".join(text(p.doc) for p in params if p.doc),
        "return_type": _type_words([form.returns[pick] for form in signature.forms]),
        "returns": text(signature.returns),
        "raises": text(signature.raises) or "Refused before anything is spent.",
        "notes": notes,
    }
    return "\n".join(_wrapped(line) for line in render(_TEMPLATE, whole).splitlines())


#: Rendered docstring lines longer than this are wrapped (a field put in a line may make one).
WIDTH = 88


def _wrapped(line: str) -> str:
    """``line`` wrapped at :data:`WIDTH`, each piece at its indentation."""
    if len(line) <= WIDTH:
        return line
    indent = line[: len(line) - len(line.lstrip())]
    return textwrap.fill(line.strip(), WIDTH, initial_indent=indent, subsequent_indent=indent)


# ----------------------------------------------------- shared parameters

#: Paragraphs shared by several parameters' docs (``$name`` in a doc).
PARAGRAPHS: dict[str, str] = {
    "grid_doc": """\
        The public grid to choose from, finite and strictly increasing,
        keyword-only; e.g. ``np.linspace(0, 500_000, 1001)``. Never read it
        from the data. The answer is always one of these points. Without
        it, the grid is found privately: a twentieth of ``epsilon`` counts
        the values, a quarter finds bounds (as ``clip="auto"``: see
        :meth:`bounds`), and the grid is 2,001 points evenly between them
        (the call still costs ``epsilon``; the ledger records each part).""",
}

#: The one numeric column of a release (mean, var, std, quantile, bounds, min, max, ...).
NUMERIC = Param(
    "column",
    "Hashable",
    doc="""\
    column : label
        A numeric column; missing values are skipped.""",
    positional=True,
)
EPSILON = Param(
    "epsilon",
    "float | None",
    "None",
    """\
    epsilon : float
        $cost""",
)
RHO = Param(
    "rho",
    "float | None",
    "None",
    """\
    rho : float
        Instead of ``epsilon`` (give exactly one), under a zCDP budget
        (``set_budget(rho=...)``): discrete Gaussian noise of ``σ² =
        Δ₂²/(2ρ)`` (Δ₂ the L2 sensitivity: ``k·√g`` rows for a grouped count
        of persons with at most k rows in g keys), composed exactly in ρ. An
        epsilon budget refuses it: Gaussian noise is not pure ε-DP.""",
)
#: ``rho=`` of a release whose mechanism is ε-DP only (a selection, AboveThreshold).
RHO_SELECT = Param(
    "rho",
    "float | None",
    "None",
    """\
    rho : float
        Instead of ``epsilon`` (give exactly one), under a zCDP budget
        (``set_budget(rho=...)``): charged exactly ρ, and run at the largest
        ε with ``ε²/2 <= ρ`` (rounded down: ``sqrt(2ρ)``). Its mechanism
        (permute-and-flip, AboveThreshold or discrete Laplace noise) is
        ε-DP, hence ``ε²/2``-zCDP; none is known to be ε-bounded-range,
        which would allow ``ε²/8``. An epsilon budget refuses it.""",
)
CI = Param(
    "ci",
    "float | None",
    "None",
    """\
    ci : float, optional
        A confidence level in (0, 1), e.g. ``0.95``: $each with its noise
        interval (see Notes). Costs nothing more.""",
)
CUT = Param(
    "cut",
    "bool",
    "False",
    """\
    cut : bool, default False
        Also release, privately, how much the bounds cut: the share of the
        column's values outside ``clip`` (``clipped_share``$per_key) for a
        tenth of ``epsilon`` and, with a privacy unit, the share of persons
        with more rows than ``max_rows`` (whose extra rows are dropped:
        ``truncated_share``, over all the frame's persons) for another
        tenth$keys_cut; the statistic gets the rest
        (the call still costs ``epsilon``, held at once; one ledger entry per
        part). Returned as fields of the ``ci`` interval, or without ``ci`` as
        a Series (grouped: a DataFrame) with ``estimate`` and the shares.
        ``ci`` covers the noise only; the cut is the bias it does not cover.
        One column only. Each share's two counts get discrete Laplace noise of
        scale Δ/(ε/10): Δ 1 (2 under substitute), times ``max_rows`` (×
        ``max_groups``) for the clipped share with a privacy unit. With
        ``rho``: a tenth of ρ each, run at ε = sqrt(2ρ/10). Without ``keys=``,
        the clipped share is measured in the keys the statistic chose. A share
        of 5% or more warns (:class:`~pandas_dp.errors.PoorAnswerWarning`).""",
)
#: ``cut=`` of a release without a clip: the shares of persons a privacy unit's bounds cut.
CUT_UNIT = Param(
    "cut",
    "bool",
    "False",
    """\
    cut : bool, default False
        With a privacy unit: also release, privately, the share of persons
        with more rows than ``max_rows`` (``truncated_share``) for a tenth of
        ``epsilon``$keys_cut (the call still costs ``epsilon``, held at
        once; one ledger entry per part). Returned as fields of the ``ci``
        interval, or without ``ci`` as a Series (grouped: a DataFrame) with
        ``estimate`` and the shares: the persons whose rows or keys the
        bounds dropped, the bias ``ci`` does not cover. A share of 5% or more
        warns (:class:`~pandas_dp.errors.PoorAnswerWarning`). Refused on a
        frame whose rows are persons (nothing is cut).""",
)
MAX_ROWS = Param(
    "max_rows",
    'int | Literal["auto"] | None',
    "None",
    """\
    max_rows : int or "auto", optional
        With a privacy unit: at most this many rows of one person are used
        (in each key, and for a selection in each candidate; the rest are
        dropped at random). Defaults to ``set_budget(max_rows=...)``; refused
        on a frame whose rows are persons. ``"auto"``: chosen privately by
        ``rows_per_unit(0.9)`` on the grid 1..32, 64, ..., 2**20 with a
        quarter of ``epsilon`` (or of ``rho``; the call still costs
        ``epsilon``, held at once); the ledger records it, and an interval
        carries it as ``max_rows``.""",
)
MAX_GROUPS = Param(
    "max_groups",
    'int | Literal["auto"] | None',
    "None",
    """\
    max_groups : int or "auto", optional
        With a privacy unit: at most this many keys of one person are used
        (chosen at random). Defaults to ``set_budget(max_groups=...)``.
        ``"auto"``: chosen privately, a 0.9-quantile of the keys per person
        (``rows_per_unit``'s mechanism over each person's number of keys) on
        the grid 1..32, 64, ..., 2**20 with a quarter of ``epsilon`` (or of
        ``rho``; the call still costs ``epsilon``, held at once); the ledger
        records it, and an interval carries it as ``max_groups``.""",
)
DELTA = Param(
    "delta",
    "float | None",
    "None",
    """\
    delta : float, optional
        Without ``keys=`` (and only then), required: the keys are chosen from
        the data, and ``delta`` is the probability, at most, that a key held
        by few people (one, say) appears. Each observed key's number of
        persons (a person counts once per key; with a privacy unit each keeps
        at most ``max_groups`` keys, at random) gets noise, and the key is
        shown iff it reaches a threshold set by ``delta`` and ``max_groups``
        (Laplace thresholding under ε; Gaussian under ρ, weighted when
        ``max_groups`` > 1). The whole call costs exactly ``epsilon`` (or
        ``rho``) and ``delta``, one ledger entry, under add_remove only: a row
        count whose persons count once per key is the selection's own noisy
        count (all of ``epsilon``); any other statistic gets half of it, the
        choice of keys the other half. A release with a table per key (a
        quantile's, a selection's) tallies it after the choice, for the chosen
        keys only. The budget must hold a delta (``set_budget(...,
        delta=...)``). Never pass ``keys=df[col].unique()``: keys read from
        the data are not private.""",
)
