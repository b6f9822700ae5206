"""Private key selection: which keys of the data a grouped release may show, without public keys.

A groupby without ``keys=`` must not reveal a key held by few people.  Each
observed key gets a statistic of the *distinct persons* holding it (each
person bounded to at most ``max_groups`` = g keys, chosen uniformly at random
among theirs); noise is added and the key is released only when the noisy
statistic reaches a threshold τ derived from δ.  The arithmetic is data-free
(a :class:`SelectionPlan` from ε or ρ, δ and g); the data kernel is
vectorized (no Python loop over persons or keys) and draws from the budget's
randomness with the exact samplers of :mod:`pandas_dp.core.noise`.

``max_rows`` plays no part: a person counts once per key however many rows
they hold in it (1,000 rows of one person make a count of 1).

A chosen key leaves in the one form of its value (:func:`public_keys`):
pandas keeps, of equal values, the object of the first row that holds one
(``-0.0`` or ``0.0``, a NaN's sign and payload, ``np.str_`` or ``str``), so
a key shown in its first row's form would tell who comes first.  The form is
decided by the column's dtype alone (:func:`key_forms`: ``+0.0``, one NaN, a
plain ``str``, the dtype's time zone, an index dtype that holds a missing key
whether or not one is observed); ``object`` columns, whose values have no
dtype, are refused before (:func:`pandas_dp.validation.check_values`).

Methods (``SelectionPlan.method``)
---------------------------------
``"laplace"`` (pure ε; Korolova, Kenthapadi, Mishra & Ntoulas, WWW 2009,
"Releasing Search Queries and Clicks Privately"; Wilson, Zhang, Lam,
Desfontaines, Simmons-Marengo & Gipson, PoPETs 2020, "Differentially Private
SQL with Bounded User Contribution"): count ``c`` plus discrete Laplace noise
of scale ``b = g/ε``, released iff ``c + Z ≥ τ``.  The noisy counts of the
released keys may be released too (``value_counts`` in one pass).

``"truncated_geometric"`` (pure ε; Desfontaines, Voss, Gipson & Mandayam,
PoPETs 2022, "Differentially Private Partition Selection"): the optimal
mechanism, releasing a key of count ``n`` with probability ``π(n)``,
``π(0) = 0`` and ``π(n) = min(e^ε'·π(n−1) + δ', 1 − e^−ε'·(1 − π(n−1) − δ'), 1)``
at ``(ε', δ') = (ε/g, δ/g)``.  Releases no count.

``"gaussian"`` (ρ-zCDP plus δ): discrete Gaussian noise of ``σ² = g/(2ρ)``
(the count vector's L2 sensitivity is √g), released iff ``c + Z ≥ τ``; the
noisy counts may be released.

``"weighted_gaussian"`` (ρ-zCDP plus δ; Gopi, Gulhane, Kulkarni, Shen,
Shokouhi & Yekhanin, ICML 2020, "Differentially Private Set Union", the
policy of PipelineDP's ``WEIGHTED_GAUSSIAN_THRESHOLDING``): a person keeping
``t`` keys adds ``W(t) = ⌊S/√t⌋`` (S = :data:`WEIGHT_UNIT`) to each, so their
vector has L2 norm at most S whatever t: ``σ² = S²/(2ρ)``.  A person with
few keys weighs more.  The statistic is not a count: no count is released.

``"weighted_laplace"`` (pure ε; its L1 analogue, the Laplace policy's weights
of Gopi et al. 2020): a person keeping ``t`` keys adds ``⌊S/t⌋`` to each, so
their vector has L1 norm at most S: discrete Laplace of scale ``S/ε``.  A
round of the policy selection (:mod:`pandas_dp.mechanisms.policy`).

The proofs (ALGORITHMS-style)
-----------------------------
Neighbours differ by all the rows of one person p (add/remove).  After
bounding, p holds at most g keys.  Split the keys into the *common* ones
(observed without p) and the *new* ones (held by p alone: at most g).

1. The common keys' noisy statistics are ε-DP (Laplace: L1 sensitivity g,
   scale g/ε) or ρ-zCDP (Gaussian: L2 sensitivity √g, resp. S), thresholding
   being post-processing.
2. A new key has statistic 1 (resp. W(t), t ≤ g new keys); it is released with
   probability ``q = P(Z ≥ τ − 1)`` (resp. ``P(Z ≥ τ − W(t))``).  The plan
   takes the smallest τ with ``g·q ≤ δ`` (resp. ``t·q_t ≤ δ`` for every t in
   1..g): by the union bound, P(some new key released) = P_new ≤ δ.
3. With C the common part and N the new part (independent), and S any set of
   outputs, S₀ its outputs without new keys: P[M(D')∈S] ≤ P[C(D')∈S₀] + P_new
   ≤ e^ε·P[M(D)∈S] + δ.  Conversely P[M(D)∈S] = P[C(D)∈S₀] ≤ min(1,
   e^ε·y) with y = P[C(D')∈S₀], and P[M(D')∈S] ≥ y·(1 − P_new); the
   difference ``min(1, e^ε y) − e^ε y (1 − P_new)`` is at most P_new ≤ δ
   (its maximum is at ``e^ε y = 1``).  So M is (ε, δ)-DP (resp. δ-approximately
   ρ-zCDP: ρ for the noise, δ for the threshold).
4. Truncated geometric: each key's Bernoulli(π(n)) is (ε/g, δ/g)-DP between
   counts n and n+1 (the recursion's two constraints; π is non-decreasing, so
   the other two hold) and ``π(1) = δ/g``; the keys are independent and p
   changes at most g of them: basic composition gives (ε, δ).
   Exactness: e^ε' is replaced by a rational ``E ≤ e^ε'`` and e^−ε' by ``1/E``,
   δ' by a dyadic below it, and each π(n) is rounded *down* to a multiple of
   2**-62: every constraint still holds (rounding π(n) down keeps
   ``π(n) ≤ E·π(n−1) + δ'`` and enlarges ``1 − π(n)``), so the sampled
   probabilities are exactly those of a valid mechanism at (ln E ≤ ε', δ').

Tails used by the plans (upper bounds, so τ can only be larger):
discrete Laplace ``P(Z ≥ m) = a^m/(1 + a)`` (m ≥ 1, ``a = e^(−1/b)``,
increasing in a); discrete Gaussian ``P(Z ≥ m) ≤ e^(−m²/2σ²)·(1 + σ²/m) /
max(1, σ√(2π))`` (m ≥ 1: the sum is at most its first term plus the integral
from m, bounded by Mills' ratio; the normaliser is at least 1 and, by Poisson
summation, at least σ√(2π)).  Both are evaluated in 40-digit decimals with a
relative margin far above the rounding error.

For the integrator (issue 21)
-----------------------------
- groupby without ``keys=``: validate → resolve the budget (δ > 0 required,
  else refuse naming ``delta=`` and ``keys=``) → reserve the whole
  ``epsilon``/``rho`` and ``delta`` → :func:`selection_plan` with a share of
  it (say half of ε or ρ, all of δ) → :func:`key_statistics` and
  :func:`select_keys` → run the release on the selected keys as public keys
  with the rest of ε/ρ (their δ is 0) → commit.  Totals: exactly ``epsilon``
  (or ``rho``) and ``delta``, recorded per entry.
- ``value_counts``: one pass: a ``"laplace"`` or ``"gaussian"`` plan with the
  whole ε/ρ; the noisy counts of the selected keys are the release, in
  descending noisy count (ties in random order).
- Without a privacy unit each row is one person holding one key: pass
  ``units=None`` and ``max_groups=1``.
- Dask: the data are shuffled on the unit (each person in one partition), so
  :func:`key_statistics` per partition, :func:`combine_statistics` to sum them
  (keys unioned by value), then :func:`select_keys` once on the client.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from decimal import Decimal, localcontext
from fractions import Fraction
from typing import Any, Self, cast

import numpy as np
import pandas as pd

from ..core.noise import I64, RandomSource, discrete_gaussian, discrete_laplace, gaussian_scale
from .accuracy import gaussian_tail
from .contributions import bound_contributions
from .keys import Grouping, normalize_by, row_codes

__all__ = [
    "LAPLACE",
    "METHODS",
    "WEIGHTED",
    "WEIGHT_UNIT",
    "ChosenKeys",
    "KeySelection",
    "SelectionPlan",
    "combine_statistics",
    "key_forms",
    "key_statistics",
    "new_person_bound",
    "observed_codes",
    "one_form",
    "people_for_half",
    "person_statistics",
    "public_keys",
    "rebuilt",
    "release_probability",
    "select_codes",
    "select_keys",
    "selection_plan",
]

METHODS = ("laplace", "truncated_geometric", "gaussian", "weighted_gaussian", "weighted_laplace")
#: The methods whose statistic is a sum of per-person weights (S split over a person's keys).
WEIGHTED = ("weighted_gaussian", "weighted_laplace")
#: The methods whose noise is discrete Laplace (the others': the discrete Gaussian, or none).
LAPLACE = ("laplace", "weighted_laplace")
#: S: the weight of a person holding one key under ``"weighted_gaussian"`` (``"weighted_laplace"``).
WEIGHT_UNIT = 1 << 16
#: Release probabilities of the truncated geometric are multiples of 2**-PROB_BITS.
PROB_BITS = 62
_ONE = 1 << PROB_BITS
#: Bits of the rational lower bound E of e^ε'.
_E_BITS = 40
#: Most counts the truncated geometric's table may span (ε/g far too small otherwise).
_MAX_STEPS = 2_000_000
_DIGITS = 40
_MARGIN = Decimal("1e-30")
_PI = Decimal("3.14159265358979323846264338327950288419716939937511")


@dataclass(frozen=True)
class SelectionPlan:
    """The public parameters of one key selection (data-free, exact).

    ``threshold`` τ: a key is released iff its noisy statistic is at least τ
    (0 for ``"truncated_geometric"``).  ``scale``: the discrete Laplace scale;
    ``sigma2``: the discrete Gaussian σ²; ``unit``: the statistic of a person
    holding one key (S for ``"weighted_gaussian"``, else 1);
    ``probabilities``: ``π(n)·2**62`` for n = 0, 1, ... until 2**62 (π = 1 beyond).
    """

    method: str
    max_groups: int
    delta: Fraction
    epsilon: Fraction | None = None
    rho: Fraction | None = None
    threshold: int = 0
    scale: Fraction = Fraction(0)
    sigma2: Fraction = Fraction(0)
    unit: int = 1
    probabilities: tuple[int, ...] = ()

    @property
    def releases_counts(self) -> bool:
        """Whether the noisy statistics of the selected keys are counts one may release."""
        return self.method in ("laplace", "gaussian")

    def weight(self, t: int) -> int:
        """What a person keeping ``t`` keys adds to each: ``⌊S/√t⌋`` (``⌊S/t⌋`` under L1), or 1."""
        if self.method == "weighted_laplace":
            return self.unit // t
        if self.method != "weighted_gaussian":
            return 1
        return math.isqrt(self.unit * self.unit // t)


_DELTA_HINT = (
    "A groupby without `keys=` chooses its keys from the data, which needs `delta=`: the "
    "chance, at most, that a key held by few people appears (e.g. delta=1e-7, within the "
    "budget's delta: set_budget(..., delta=1e-6)). Or pass the public keys with keys=[...]; "
    "never df[col].unique(), which is not private."
)


@dataclass(frozen=True)
class KeySelection(Grouping):
    """``groupby(by)`` without ``keys=``: the keys are chosen privately from the data.

    ``keys`` stays empty: the chosen keys exist only after the noise (the
    pipeline of :mod:`pandas_dp.pipeline.run` selects them).  ``delta``: the call's
    δ, all of it spent by the selection.  ``dropna``: a missing value is a key
    only if False (as pandas).  ``sort``: the result in the sorted order of
    the chosen keys (as pandas' ``groupby``), else in the selection's order
    (descending noisy statistic, ties at random).  ``forms``: the dtype each
    ``by`` column's keys are released in, from the schema the release runs on
    (:meth:`typed`, :func:`key_forms`).
    """

    delta: Fraction = Fraction(0)
    dropna: bool = True
    sort: bool = True
    forms: tuple[Any, ...] = ()

    @classmethod
    def of_columns(
        cls, df: pd.DataFrame, by: object, *, dropna: object = True, sort: bool = True
    ) -> KeySelection:
        """Check the ``by`` columns against ``df``'s columns (never its data) and ``dropna``."""
        labels = normalize_by(df, by)
        if not isinstance(dropna, bool | np.bool_):
            raise TypeError(f"`dropna` must be True or False, got {type(dropna).__name__}.")
        return cls(tuple(labels), pd.Index([]), Fraction(0), bool(dropna), sort)

    def at(self, delta: object) -> KeySelection:
        """This selection spending ``delta``: required (the error names ``delta=``, ``keys=``)."""
        if delta is None:
            raise TypeError(f"`delta` is missing. {_DELTA_HINT}")
        if isinstance(delta, bool) or not isinstance(delta, Fraction | int | float):
            raise TypeError(f"`delta` must be a number, got {type(delta).__name__}. {_DELTA_HINT}")
        if not 0 < delta < 1:  # NaN fails too
            raise ValueError(
                f"`delta` must be strictly between 0 and 1, got {delta}. {_DELTA_HINT}"
            )
        return dataclasses.replace(
            self, delta=Fraction(repr(delta)) if isinstance(delta, float) else Fraction(delta)
        )

    def codes(self, df: pd.DataFrame, *, check: bool = False) -> I64:
        raise TypeError("the keys of a selection are known only after it: use observe().")

    def typed(self, schema: pd.DataFrame) -> Self:
        """This selection with the dtypes its keys are released in: :func:`key_forms` of ``schema``.

        Refuses (TypeError, before anything is spent) a key column whose equal
        values may look different in ways :func:`one_form` does not undo.
        """
        return dataclasses.replace(self, forms=key_forms(schema, self.by, self.dropna))

    def released(self, keys: pd.Index) -> pd.Index:
        """Observed keys, each in the one form of its value (:func:`public_keys`); typed first.

        A chosen key leaves in this form only: a function of its value and the
        schema, never of the row pandas kept it from.
        """
        assert len(self.forms) == len(self.by), "a selection is typed by the release's schema"
        return public_keys(keys, self.forms)

    def counted(self, df: pd.DataFrame) -> tuple[pd.Index, I64] | None:
        """The observed keys of one column and their rows (``value_counts``), without codes.

        What a row count without a privacy unit needs, at the cost of
        pandas' own ``value_counts``; None for several columns, a
        categorical one, or Arrow floats (Arrow counts ``-0.0`` apart from
        ``0.0``): their keys come from :meth:`observe`.
        """
        dtype = df[self.by[0]].dtype
        if len(self.by) > 1 or isinstance(dtype, pd.CategoricalDtype):
            return None
        if isinstance(dtype, pd.ArrowDtype) and dtype.kind == "f":
            return None
        counts = df[self.by[0]].value_counts(dropna=self.dropna, sort=False)
        rows: I64 = np.asarray(counts, dtype=np.int64)
        return counts.index.rename(self.by[0]), rows

    def observe(self, df: pd.DataFrame) -> tuple[I64, pd.Index]:
        """Each row's code into the keys observed in ``df`` (-1: dropped), and those keys.

        The keys are named after the ``by`` columns, as pandas names a groupby's index.
        """
        codes, keys = observed_codes(df, list(self.by), self.dropna)
        return codes, keys.set_names(list(self.by))


@dataclass(frozen=True)
class ChosenKeys(Grouping):
    """The keys a :class:`KeySelection` chose, as public keys (released: public once chosen).

    ``keys``: the chosen keys (:func:`rebuilt`); each row's code is its key's
    position among them, matched by value as the selection observed it (-1:
    a key not chosen, or a row the selection drops).  A release tallied over
    it bounds each person's contribution as with public keys.
    """

    selection: KeySelection

    def codes(self, df: pd.DataFrame, *, check: bool = False) -> I64:
        return self.codes_of(*self.selection.observe(df))

    def codes_of(self, codes: I64, observed: pd.Index) -> I64:
        """:meth:`codes` from the selection's observation of the rows (codes, observed keys)."""
        observed = self.selection.released(observed)  # compared in the form the keys were chosen in
        out = np.full(codes.shape, -1, dtype=np.int64)
        if not len(self.keys) or not len(observed):
            return out
        n = len(self.keys)
        both = self.keys.append(observed).factorize(use_na_sentinel=False)[0]
        found = np.asarray(both[n:], dtype=np.int64)  # a chosen key's position, or >= n
        mapping = np.where(found < n, found, -1)
        kept = codes >= 0
        out[kept] = mapping[codes[kept]]
        return out


def _fraction(value: object, name: str) -> Fraction:
    if isinstance(value, bool) or not isinstance(value, Fraction | int | float):
        raise TypeError(f"`{name}` must be a number, got {type(value).__name__}.")
    if not math.isfinite(value):
        raise ValueError(f"`{name}` must be finite, got {value}.")
    return Fraction(value)


def _check(epsilon: object, rho: object, delta: object, max_groups: object) -> None:
    if (epsilon is None) == (rho is None):
        raise ValueError("Give exactly one of `epsilon` and `rho`, e.g. epsilon=0.5.")
    spent = epsilon if epsilon is not None else rho
    name = "epsilon" if epsilon is not None else "rho"
    if not _fraction(spent, name) > 0:
        raise ValueError(f"`{name}` must be a positive finite number, got {spent}.")
    if not 0 < _fraction(delta, "delta") < 1:
        raise ValueError(
            "`delta` must be strictly between 0 and 1 for a selection of keys, e.g. "
            f"delta=1e-6; got {delta}. Without delta, pass public keys with keys=."
        )
    if isinstance(max_groups, bool) or not isinstance(max_groups, int) or max_groups < 1:
        raise ValueError(f"`max_groups` must be a positive integer, got {max_groups!r}.")


def selection_plan(
    *,
    epsilon: Fraction | float | None = None,
    rho: Fraction | float | None = None,
    delta: Fraction | float,
    max_groups: int = 1,
    method: str | None = None,
) -> SelectionPlan:
    """The plan of a key selection from its public parameters.

    Parameters
    ----------
    epsilon, rho : Fraction or float, exactly one
        The pure-ε budget (``"laplace"``, ``"truncated_geometric"``,
        ``"weighted_laplace"``) or the ρ of zCDP (``"gaussian"``,
        ``"weighted_gaussian"``) of the selection.
    delta : Fraction or float
        The probability, at most, that a person makes one of their own keys
        appear.
    max_groups : int
        g: keys kept per person (``max_rows`` does not matter: a person counts
        once per key).
    method : str, optional
        One of :data:`METHODS`; by default ``"laplace"`` under ε, and under ρ
        ``"gaussian"`` when g = 1, else ``"weighted_gaussian"``.

    Returns
    -------
    SelectionPlan

    Examples
    --------
    One key per person at (ε, δ) = (1, 1e-5): a key needs 13 persons under
    Laplace thresholding, 12 under the optimal mechanism, for even odds.

    >>> plan = selection_plan(epsilon=1, delta=Fraction(1, 10**5))
    >>> plan.threshold, people_for_half(plan)
    (13, 13)
    >>> people_for_half(selection_plan(epsilon=1, delta=1e-5, method="truncated_geometric"))
    12
    """
    _check(epsilon, rho, delta, max_groups)
    if method is None:
        method = "laplace" if epsilon is not None else "gaussian"
        if rho is not None and max_groups > 1:
            method = "weighted_gaussian"
    if method not in METHODS:
        raise ValueError(f"`method` must be one of {', '.join(METHODS)}; got {method!r}.")
    pure = method in ("laplace", "truncated_geometric", "weighted_laplace")
    if pure != (epsilon is not None):
        need = "epsilon" if pure else "rho"
        raise ValueError(f"`method={method!r}` needs `{need}`=..., not the other budget.")
    d, g = Fraction(delta), max_groups
    if method == "laplace":
        assert epsilon is not None
        eps = Fraction(epsilon)
        scale = g / eps
        m = _smallest(lambda m: g * _laplace_tail(m, scale) <= _dec(d))
        return SelectionPlan(method, g, d, epsilon=eps, threshold=1 + m, scale=scale)
    if method == "weighted_laplace":
        assert epsilon is not None
        eps = Fraction(epsilon)
        scale = WEIGHT_UNIT / eps
        plan = SelectionPlan(method, g, d, epsilon=eps, scale=scale, unit=WEIGHT_UNIT)
        weights = [(t, plan.weight(t)) for t in range(1, g + 1)]

        def laplace_covered(tau: int) -> bool:
            return all(tau > w and t * _laplace_tail(tau - w, scale) <= _dec(d) for t, w in weights)

        tau = _smallest(laplace_covered)
        unit = WEIGHT_UNIT
        return SelectionPlan(method, g, d, epsilon=eps, threshold=tau, scale=scale, unit=unit)
    if method == "truncated_geometric":
        assert epsilon is not None
        eps = Fraction(epsilon)
        probs = _optimal_probabilities(eps / g, d / g)
        return SelectionPlan(method, g, d, epsilon=eps, probabilities=probs)
    assert rho is not None
    r = Fraction(rho)
    unit = WEIGHT_UNIT if method == "weighted_gaussian" else 1
    sigma2 = gaussian_scale(unit * unit if unit > 1 else g, r)
    plan = SelectionPlan(method, g, d, rho=r, sigma2=sigma2, unit=unit)
    shifts = [(t, plan.weight(t)) for t in (range(1, g + 1) if unit > 1 else [g])]

    def covered(tau: int) -> bool:
        return all(tau > w and t * _gauss_tail(tau - w, sigma2) <= _dec(d) for t, w in shifts)

    tau = _smallest(covered)
    return SelectionPlan(method, g, d, rho=r, threshold=tau, sigma2=sigma2, unit=unit)


def _smallest(ok: Callable[[int], bool]) -> int:
    """The smallest integer m >= 1 with ``ok(m)`` (``ok`` monotone)."""
    hi = 1
    while not ok(hi):
        hi *= 2
    lo = hi // 2  # 0, or a value that failed
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if ok(mid):
            hi = mid
        else:
            lo = mid
    return hi


def _dec(q: Fraction) -> Decimal:
    with localcontext() as ctx:
        ctx.prec = _DIGITS
        return Decimal(q.numerator) / Decimal(q.denominator)


def _laplace_tail(m: int, scale: Fraction) -> Decimal:
    """An upper bound on ``P(Z ≥ m)``, m ≥ 1, Z discrete Laplace of ``scale``: ``a^m/(1 + a)``."""
    with localcontext() as ctx:
        ctx.prec = _DIGITS
        a = (-_dec(1 / scale)).exp() * (1 + _MARGIN)  # a larger a bounds the tail above
        return a**m / (1 + a) * (1 + _MARGIN)


def _gauss_tail(m: int, sigma2: Fraction) -> Decimal:
    """An upper bound on ``P(Z ≥ m)``, m ≥ 1, Z discrete Gaussian of ``sigma2`` (Mills' ratio)."""
    with localcontext() as ctx:
        ctx.prec = _DIGITS
        s2 = _dec(sigma2)
        norm = max(Decimal(1), (2 * _PI * s2).sqrt() * (1 - _MARGIN))
        top = (-_dec(Fraction(m * m) / (2 * sigma2))).exp() * (1 + s2 / m)
        return top / norm * (1 + _MARGIN)


def _optimal_probabilities(eps: Fraction, delta: Fraction) -> tuple[int, ...]:
    """``π(n)·2**62`` of the truncated geometric at (ε', δ'), rounded down (module docstring, 4)."""
    with localcontext() as ctx:
        ctx.prec = _DIGITS
        e = _dec(eps).exp() * (1 - _MARGIN)
    e_num = int(e * (1 << _E_BITS))  # E = e_num / 2**40 <= e^ε'
    if e_num <= 1 << _E_BITS:
        raise ValueError(f"`epsilon` per key (epsilon / max_groups = {float(eps)}) is too small.")
    d = delta.numerator * _ONE // delta.denominator
    probs, p = [0], 0
    while p < _ONE:
        up = (e_num * p >> _E_BITS) + d
        rest = _ONE - p - d  # 1 − π − δ' in units; 1 − F·rest with F = 2**40/e_num, rounded down
        down = _ONE - (-((-rest << _E_BITS) // e_num)) if rest > 0 else _ONE
        p = min(up, down, _ONE)
        probs.append(p)
        if len(probs) > _MAX_STEPS:
            raise ValueError(
                f"`epsilon` per key (epsilon / max_groups = {float(eps)}) is too small for "
                "the truncated geometric; use method='laplace'."
            )
    return tuple(probs)


def new_person_bound(plan: SelectionPlan) -> Fraction:
    """An upper bound on the probability that one added person makes any of their new keys appear.

    Exact for ``"truncated_geometric"`` (``g·π(1)``), else the union bound of
    the module docstring's step 2 evaluated in 40-digit decimals, rounded up.
    The plan's guarantee is that this is at most ``plan.delta``.
    """
    g = plan.max_groups
    if plan.method == "truncated_geometric":
        return Fraction(g * plan.probabilities[1], _ONE)
    if plan.method in LAPLACE:
        ts = range(1, g + 1) if plan.method == "weighted_laplace" else [g]
        shifts = [(t, plan.weight(t)) for t in ts]
        bound = max(t * _laplace_tail(plan.threshold - w, plan.scale) for t, w in shifts)
    else:
        ts = range(1, g + 1) if plan.method == "weighted_gaussian" else [g]
        bound = max(t * _gauss_tail(plan.threshold - plan.weight(t), plan.sigma2) for t in ts)
    return Fraction(bound.next_plus()) if bound > 0 else Fraction(0)


def _tail_float(plan: SelectionPlan, m: int) -> float:
    """``P(Z ≥ m)`` for the plan's noise, in floats (pictures, not proofs)."""
    if m <= 0:
        return 1.0 - _tail_float(plan, 1 - m)
    if plan.method in LAPLACE:
        a = math.exp(-1 / float(plan.scale))
        return a**m / (1 + a)
    return gaussian_tail(m - 1, plan.sigma2) / 2


def release_probability(plan: SelectionPlan, n: int, keys_per_person: int | None = None) -> float:
    """The probability that a key held by ``n`` persons is released.

    ``keys_per_person`` (≤ ``max_groups``; default ``max_groups``) matters only
    for the weighted methods: the key's statistic is ``n·W(t)``.
    """
    if n <= 0:
        return 0.0
    if plan.method == "truncated_geometric":
        probs = plan.probabilities
        return probs[n] / _ONE if n < len(probs) else 1.0
    t = plan.max_groups if keys_per_person is None else keys_per_person
    return _tail_float(plan, plan.threshold - n * plan.weight(t))


def people_for_half(plan: SelectionPlan, keys_per_person: int | None = None) -> int:
    """The smallest number of persons whose key is released with probability at least 1/2."""
    return _smallest(lambda n: release_probability(plan, n, keys_per_person) >= 0.5)


def person_statistics(
    codes: I64,
    n_keys: int,
    units: I64 | None,
    plan: SelectionPlan,
    source: RandomSource,
) -> I64:
    """Per key code, the statistic of the selection: distinct persons after bounding (or weights).

    Parameters
    ----------
    codes : int64 array
        Each row's key code in ``[0, n_keys)``; -1 drops the row (a missing key).
    n_keys : int
        How many key codes.
    units : int64 array or None
        Each row's person (-1: missing unit id, dropped); None when each row is
        one person (then each person holds one key).
    plan : SelectionPlan
        Its ``max_groups`` bounds the keys per person; its method the weights.
    source : RandomSource
        The budget's randomness (the random choice of a person's keys).

    Returns
    -------
    int64 array of length ``n_keys``
    """
    if units is None:
        return plan.weight(1) * np.bincount(codes[codes >= 0], minlength=n_keys).astype(np.int64)
    keep = bound_contributions(
        source,
        units,
        codes,
        None,
        n_keys=n_keys,
        n_cells=1,
        max_rows=1,
        max_groups=plan.max_groups,
    )  # one row per kept (person, key) pair
    kept_keys, kept_units = codes[keep], units[keep]
    if plan.method not in WEIGHTED:
        return np.bincount(kept_keys, minlength=n_keys).astype(np.int64)
    held = np.bincount(kept_units)[kept_units]  # t: keys each person keeps
    table = np.array([0, *(plan.weight(t) for t in range(1, plan.max_groups + 1))])
    sums = np.bincount(kept_keys, weights=table[held].astype(np.float64), minlength=n_keys)
    return np.rint(sums).astype(np.int64)  # exact: sums below 2**53


def select_codes(plan: SelectionPlan, stats: I64, source: RandomSource) -> tuple[I64, I64 | None]:
    """The selected key codes and their noisy statistics (None when they are not counts).

    Only keys with a positive statistic are candidates.  Order: descending
    noisy statistic, ties in random order; a random order for
    ``"truncated_geometric"`` (no statistic).  Never the codes' order: that is
    the order of first appearance in the data (the caller may sort the keys
    by value, as pandas' ``groupby(sort=True)`` does).
    """
    present = np.flatnonzero(stats > 0)
    n = stats[present]
    if plan.method == "truncated_geometric":
        probs = np.array(plan.probabilities, dtype=np.int64)
        chance = np.where(n < probs.size, probs[np.minimum(n, probs.size - 1)], _ONE)
        words = (source.words(n.size) >> np.uint64(64 - PROB_BITS)).astype(np.int64)
        released = present[words < chance]
        return released[np.argsort(source.words(released.size))], None
    if plan.method in LAPLACE:
        noisy = n + discrete_laplace(source, plan.scale, n.size)
    else:
        noisy = n + discrete_gaussian(source, plan.sigma2, n.size)
    chosen = noisy >= plan.threshold
    codes, values = present[chosen], noisy[chosen]
    order = np.lexsort((source.words(codes.size), -values))
    return codes[order], (values[order] if plan.releases_counts else None)


def observed_codes(frame: pd.DataFrame, by: list[Hashable], dropna: bool) -> tuple[I64, pd.Index]:
    """Each row's code into the keys observed in ``frame[by]`` (-1: dropped), and those keys.

    Keys of any hashable dtype; several columns give a MultiIndex.  Missing
    values are a key only when ``dropna`` is False.
    """
    per_column = [row_codes(frame[label]) for label in by]
    if len(by) == 1:
        codes, uniques = per_column[0]
        if dropna or not bool((codes < 0).any()):
            return codes, uniques
        codes = np.where(codes < 0, len(uniques), codes)
        return codes, uniques.append(pd.Index([None]))
    # The columns are combined one at a time and re-densified after each (the partial key's
    # code times the next column's distinct count + 1 stays below rows * (rows + 1), far from
    # 2**63); each key's values are then read from its first row, never unpacked arithmetically.
    dropped = np.zeros(len(frame), dtype=np.bool_)
    combined = np.zeros(len(frame), dtype=np.int64)
    for codes, uniques in per_column:
        dropped |= codes < 0
        combined = combined * (len(uniques) + 1) + np.where(codes < 0, len(uniques), codes)
        combined = np.asarray(pd.factorize(combined)[0], dtype=np.int64)
    kept = np.flatnonzero(~dropped) if dropna else np.arange(len(frame))
    found = np.asarray(pd.factorize(combined[kept])[0], dtype=np.int64)
    dense = np.full(len(frame), -1, dtype=np.int64)
    dense[kept] = found
    # factorize numbers the keys in order of first appearance: key c first appears where
    # the code exceeds every code before it.
    seen = np.maximum.accumulate(np.concatenate(([-1], found)))[:-1]
    first = kept[found > seen]
    levels: Any = [u for _, u in per_column]  # pandas-stubs want lists; arrays are fine
    level_codes = [codes[first] for codes, _ in per_column]
    keys = pd.MultiIndex(levels=levels, codes=cast(Any, level_codes), names=by)
    return dense, keys


def key_statistics(
    frame: pd.DataFrame,
    by: list[Hashable],
    units: I64 | None,
    plan: SelectionPlan,
    source: RandomSource,
    *,
    dropna: bool = True,
) -> pd.Series:
    """The selection's statistic per observed key VALUE (a partition's part, summable).

    Parts of frames holding disjoint persons (Dask partitions after the
    shuffle on the unit) add up with :func:`combine_statistics`.  Keys whose
    statistic is 0 (all their persons kept other keys) are left out.
    """
    codes, keys = observed_codes(frame, by, dropna)
    stats = person_statistics(codes, len(keys), units, plan, source)
    out = pd.Series(stats, index=keys, dtype=np.int64)
    return out[stats > 0]


def combine_statistics(a: pd.Series, b: pd.Series) -> pd.Series:
    """Two parts of :func:`key_statistics` together: keys unioned by value, statistics added."""
    return a.add(b, fill_value=0).astype(np.int64)


def select_keys(
    plan: SelectionPlan, stats: pd.Series, source: RandomSource
) -> tuple[pd.Index, I64 | None]:
    """The selected keys (values) and their noisy statistics, in :func:`select_codes`' order."""
    codes, noisy = select_codes(plan, stats.to_numpy(dtype=np.int64), source)
    keys = stats.index  # in the forms of its own dtypes
    levels = keys.levels if isinstance(keys, pd.MultiIndex) else [keys]
    return rebuilt(public_keys(keys, tuple(level.dtype for level in levels))[codes]), noisy


def key_forms(schema: pd.DataFrame, by: tuple[Hashable, ...], dropna: bool) -> tuple[Any, ...]:
    """The dtype each ``by`` column's chosen keys are released in, from ``schema``'s dtypes alone.

    The dtype of the Index pandas makes of the column's distinct values (of
    its categories, for a categorical), able to hold a missing key when
    ``dropna`` is False and a categorical of integers or booleans may have one
    (``Int64``, ``boolean``): the released index's dtype never tells whether
    some row's key is missing.  Refused (TypeError, before anything is
    spent): a dtype :func:`one_form` knows no one form of (``float16``, which
    no Index holds; Arrow decimals, times, binaries, dictionaries); ``object``
    columns are refused before (:func:`~pandas_dp.validation.check_values`).
    """
    forms = []
    for label in by:
        column = schema[label]
        try:
            form = row_codes(column.iloc[:0])[1].dtype
        except NotImplementedError:  # float16: pandas holds no Index of it
            form = None
        categorical = isinstance(column.dtype, pd.CategoricalDtype)
        if not dropna and categorical and isinstance(form, np.dtype) and form.kind in "biu":
            form = pd.array(np.empty(0, dtype=form)).dtype  # a missing key fits: Int64, boolean
        if form is None or not _one_form_known(form):
            raise TypeError(
                f"column {label!r} has dtype {column.dtype}: a key chosen from the data leaves "
                "in one form per value, decided from its dtype, and this library knows that form "
                "for numbers, strings, booleans, datetimes, timedeltas, periods, intervals and "
                "categoricals of these only. Convert the column first (e.g. "
                f"df.dp.assign(**{{{label!r}: df[{label!r}].astype('string')}})), or pass the "
                "public keys with keys=[...]."
            )
        forms.append(form)
    return tuple(forms)


def _one_form_known(form: Any) -> bool:
    """Whether :func:`one_form` gives each value of an Index of dtype ``form`` one form."""
    if isinstance(form, pd.IntervalDtype):
        return form.subtype is not None and _one_form_known(form.subtype)
    if isinstance(form, pd.StringDtype | pd.DatetimeTZDtype | pd.PeriodDtype):
        return True
    if isinstance(form, pd.ArrowDtype) and pd.api.types.is_string_dtype(form):
        return True
    kind = getattr(form, "kind", "")
    if isinstance(form, np.dtype | pd.ArrowDtype):
        return kind != "" and kind in "biufcmM"
    return kind != "" and kind in "biuf" and pd.api.types.is_numeric_dtype(form)  # masked


def one_form(keys: pd.Index, form: Any) -> pd.Index:
    """Distinct keys of one column, each in the one form of its value, as an Index of ``form``.

    pandas keeps, of equal values, the one of the first row that holds it:
    ``-0.0`` or ``0.0``, a NaN of any sign and payload, ``np.str_`` or ``str``,
    one instant in any time zone.  Here a value's form depends on the value
    and ``form`` only (a dtype of :func:`key_forms`): the dtype ``form`` (its
    time zone, its missing value), ``+0.0`` for a zero, ``np.nan`` for every
    NaN (in each part of a complex number; masked and Arrow floats hold none:
    their NaN is missing), a plain ``str`` for every string, and an interval's
    ends likewise.  Values keep their order; no two distinct keys become one.
    """
    if keys.dtype != form:
        keys = keys.astype(form)
    if isinstance(form, pd.IntervalDtype):
        assert isinstance(keys, pd.IntervalIndex)
        left, right = (one_form(pd.Index(end), end.dtype) for end in (keys.left, keys.right))
        ends: pd.Index = pd.IntervalIndex.from_arrays(left, right, keys.closed, name=keys.name)
        return ends
    if isinstance(form, np.dtype) and form.kind in "fc":
        numbers: pd.Index = pd.Index(_numbers(keys.to_numpy()), name=keys.name)
        return numbers
    if pd.api.types.is_float_dtype(form):  # masked or Arrow: NaN is missing
        floats = keys.to_numpy(dtype=np.float64, na_value=np.nan) + 0.0
        masked: pd.Index = pd.Index(pd.array(floats, dtype=form), name=keys.name)
        return masked
    if isinstance(form, pd.StringDtype) and form.storage == "python":  # may hold np.str_
        values = keys.to_numpy(dtype=object, copy=True)
        present = ~np.asarray(keys.isna(), dtype=np.bool_)
        values[present] = _plain_str(values[present])
        return pd.Index(pd.array(values, dtype=form), name=keys.name)
    return keys


#: ``str.__str__`` over an object array: each string as a plain ``str`` (a subclass's
#: own ``__str__`` is never called).
_plain_str = np.frompyfunc(str.__str__, 1, 1)


def _numbers(values: np.ndarray) -> np.ndarray:
    """Floats (or complex numbers, part by part) with ``+0.0`` for zero and ``np.nan`` for NaN."""
    if values.dtype.kind == "c":
        out = np.empty_like(values)
        out.real, out.imag = _numbers(values.real), _numbers(values.imag)
        return out
    nan, zero = values.dtype.type(np.nan), values.dtype.type(0)
    same: np.ndarray = np.where(np.isnan(values), nan, values + zero)
    return same


def public_keys(keys: pd.Index, forms: tuple[Any, ...]) -> pd.Index:
    """Observed keys in the one form of each value (:func:`one_form`), level by level.

    The one place a key chosen from the data takes the form it leaves in
    (:func:`pandas_dp.release.release_selected`, on every engine): ``forms``
    from :func:`key_forms`, one per ``by`` column.
    """
    if not isinstance(keys, pd.MultiIndex):
        return one_form(keys, forms[0])
    levels: Any = [one_form(level, form) for level, form in zip(keys.levels, forms, strict=True)]
    codes: Any = keys.codes  # pandas-stubs want lists; these are fine
    return pd.MultiIndex(levels=levels, codes=codes, names=keys.names, verify_integrity=False)


def rebuilt(keys: pd.Index) -> pd.Index:
    """Some of the observed keys alone: a MultiIndex rebuilt from its values.

    ``keys[chosen]`` of a MultiIndex keeps the levels of every observed key;
    rebuilt, its levels hold these keys' values only (sorted when they
    compare), so nothing read from it (levels, a sort) depends on another key.
    """
    if not isinstance(keys, pd.MultiIndex):
        return keys
    arrays = [keys.get_level_values(i) for i in range(keys.nlevels)]
    return pd.MultiIndex.from_arrays(arrays, names=keys.names)
