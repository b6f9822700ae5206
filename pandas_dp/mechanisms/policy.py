"""Policy-based key selection: each person's contribution steered to the keys likely to pass.

With many keys per person (bigrams, URLs, products of a shopper), a selection
that keeps ``max_groups`` random keys of each person wastes most of each
person's contribution: the one key of 600 persons soaks up the weight of all
of them while keys of 40 persons get a few random ones.  Gopi, Gulhane,
Kulkarni, Shen, Shokouhi & Yekhanin ("Differentially Private Set Union", ICML
2020) steer each person's weight to the keys most likely to pass; Swanberg,
Desfontaines & Haney ("DP-SIPS", 2023) do it in rounds that spend a growing
share of the budget, each over the keys not released before.  Here, the
rounds of DP-SIPS, each a weighted thresholding of
:mod:`pandas_dp.mechanisms.key_selection`, with each person's keys in a
round ranked by what the earlier rounds measured:

- round r (r = 1..R) spends ``ROUND_SHARES[r]`` of the selection's ε (or ρ)
  and ``δ/R``; each person keeps ``m_r`` of their keys not released yet
  (:data:`ROUND_KEYS` under ρ, :data:`ROUND_KEYS_EPSILON` under ε): in
  round 1 at random, later those with the highest noisy statistic of the
  latest earlier round that measured them (ties at random);
- a person keeping ``t`` keys adds ``W(t)`` to each: ``⌊S/t⌋`` under ε (L1
  norm at most S, discrete Laplace of scale ``S/ε_r``; ``"weighted_laplace"``)
  or ``⌊S/√t⌋`` under ρ (L2 norm at most S, discrete Gaussian of ``σ² =
  S²/(2ρ_r)``; ``"weighted_gaussian"``), S the
  :data:`~pandas_dp.mechanisms.key_selection.WEIGHT_UNIT`;
- a key is released in the first round whose noisy statistic reaches the
  round's threshold τ_r: the smallest with ``t·P(Z ≥ τ_r − W(t)) ≤ δ/R`` for
  every t in 1..m_r.

Proof (neighbours differ by all the rows of one person p; add/remove).  The
*common* keys are those observed without p, the *new* ones p's alone.  Treat
each round as also releasing its noisy statistics of the common keys (what
the next rounds rank by; they are never shown).  Given the earlier rounds'
outputs, every other person's choice in round r depends on their own keys
and on the earlier noisy statistics of those keys, all common: it is the
same with or without p.  So round r's statistics of the common keys move by
p's weights only, of L1 (L2) norm at most S: ε_r-DP (ρ_r-zCDP) by the noise,
and adaptive composition gives Σε_r = ε (Σρ_r = ρ).  A new key's statistic
is p's weight ``W(t)``, t ≤ m_r the keys p keeps in that round, so by the
union bound over p's at most t new keys, some new key is released in round r
with probability at most ``δ/R`` (the threshold's definition), in some round
at most δ; step 3 of :mod:`pandas_dp.mechanisms.key_selection` then gives
(ε, δ)-DP (δ-approximate ρ-zCDP) for the keys released.  The ranking and the
random choices are post-processing of the earlier rounds and the person's own
data; the integer weights and exact samplers keep every bound exact.

:func:`policy_plan` is data-free; :func:`policy_select` runs the rounds over
the distinct (person, key) pairs, vectorized (one sort of the pairs of the
persons with more keys than a round keeps, bincounts): no Python loop over
persons or keys.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from ..core.noise import I64, RandomSource, discrete_gaussian, discrete_laplace
from .key_selection import LAPLACE, SelectionPlan, people_for_half, selection_plan

__all__ = [
    "ROUND_KEYS",
    "ROUND_KEYS_EPSILON",
    "ROUND_SHARES",
    "PolicyPlan",
    "policy_plan",
    "policy_select",
]

#: Each round's share of the selection's ε (or ρ): doubling each round (1, 2, 4, 8
#: fifteenths), so the first rounds release the keys many persons hold cheaply and the last,
#: the largest, those the ranking then steers persons to.
ROUND_SHARES = (Fraction(1, 15), Fraction(2, 15), Fraction(4, 15), Fraction(8, 15))
#: The keys each person keeps in each round under ρ: many at random first (a Gaussian's L2
#: weights favour spreading: t keys get S/√t each), then the few ranked highest.
ROUND_KEYS = (64, 6, 4, 2)
#: The same under ε: L1 weights (S/t each) favour concentrating, so few keys in every round.
ROUND_KEYS_EPSILON = (2, 1, 1, 1)


@dataclass(frozen=True)
class PolicyPlan:
    """The public parameters of a policy selection: one weighted thresholding per round.

    ``rounds``: the plans of the rounds (their ε or ρ and δ add up to those
    of the selection); ``epsilon`` or ``rho`` (one is None) and ``delta``: the
    selection's whole loss.
    """

    rounds: tuple[SelectionPlan, ...]
    delta: Fraction
    epsilon: Fraction | None = None
    rho: Fraction | None = None

    def describe(self) -> str:
        """The mechanism as the ledger names it: rounds, their shares and thresholds."""
        noise = "Laplace" if self.rounds[0].method in LAPLACE else "Gaussian"
        keys = "/".join(str(plan.max_groups) for plan in self.rounds)
        even = "/".join(str(people_for_half(plan, 1)) for plan in self.rounds)
        return (
            f"policy key selection: {len(self.rounds)} rounds of weighted {noise} thresholding "
            f"(shares 1/2/4/8 of 15, keys per person {keys}, even odds at {even} persons "
            "of one key each)"
        )


def policy_plan(
    *,
    epsilon: Fraction | None = None,
    rho: Fraction | None = None,
    delta: Fraction,
    shares: tuple[Fraction, ...] = ROUND_SHARES,
    keys: tuple[int, ...] | None = None,
) -> PolicyPlan:
    """The plan of a policy selection at ``epsilon`` (or ``rho``) and ``delta`` (data-free).

    Each round gets ``shares[r]`` of the loss and ``delta / R``; the shares
    must add up to 1, so the rounds spend exactly the selection's loss.
    ``keys``: the keys a person keeps in each round (by default
    :data:`ROUND_KEYS_EPSILON` under ε, :data:`ROUND_KEYS` under ρ).
    """
    if keys is None:
        keys = ROUND_KEYS_EPSILON if epsilon is not None else ROUND_KEYS
    if sum(shares, Fraction(0)) != 1 or len(shares) != len(keys):
        raise ValueError("the rounds' shares must add up to 1, one per round.")
    if (epsilon is None) == (rho is None):
        raise ValueError("Give exactly one of `epsilon` and `rho`.")
    total = Fraction(epsilon if epsilon is not None else rho)  # type: ignore[arg-type]
    each = Fraction(delta) / len(shares)
    method = "weighted_laplace" if epsilon is not None else "weighted_gaussian"
    rounds = tuple(
        selection_plan(
            epsilon=total * share if epsilon is not None else None,
            rho=total * share if rho is not None else None,
            delta=each,
            max_groups=m,
            method=method,
        )
        for share, m in zip(shares, keys, strict=True)
    )
    return PolicyPlan(rounds, Fraction(delta), epsilon and total, rho and total)


def policy_select(
    plan: PolicyPlan, keys: I64, persons: I64, n_keys: int, source: RandomSource
) -> I64:
    """The released key codes, in the order of release (round, then descending noisy statistic).

    ``keys`` and ``persons``: the distinct (person, key) pairs of the data
    (codes; persons as non-negative integers, not necessarily dense).  The
    noise goes to the keys in the order of their codes: a caller that wants
    the same release on every engine numbers them in a canonical order.
    """
    released = np.zeros(n_keys, dtype=np.bool_)
    score = np.full(n_keys, -np.inf)  # a key's latest noisy statistic, in noise units
    out: list[I64] = []
    for number, round_plan in enumerate(plan.rounds):
        live = ~released[keys]
        ranking = None if number == 0 else score  # round 1: at random
        person, key = _top(persons[live], keys[live], ranking, round_plan.max_groups, source)
        held = np.bincount(person)[person]  # t: the keys each person keeps this round
        weights = np.array(
            [0, *(round_plan.weight(t) for t in range(1, round_plan.max_groups + 1))]
        )
        sums = np.bincount(key, weights=weights[held].astype(np.float64), minlength=n_keys)
        stats = np.rint(sums).astype(np.int64)  # exact: sums below 2**53
        present = np.flatnonzero(stats > 0)
        if round_plan.method in LAPLACE:
            noise = discrete_laplace(source, round_plan.scale, present.size)
            spread = float(round_plan.scale) * np.sqrt(2.0)
        else:
            noise = discrete_gaussian(source, round_plan.sigma2, present.size)
            spread = float(round_plan.sigma2) ** 0.5
        noisy = stats[present] + noise
        score[present] = noisy / spread
        shown = noisy >= round_plan.threshold
        new, values = present[shown], noisy[shown]
        order = np.lexsort((source.words(new.size), -values))
        released[new] = True
        out.append(new[order])
    chosen: I64 = np.concatenate(out) if out else np.zeros(0, dtype=np.int64)
    return chosen


def _top(
    person: I64, key: I64, score: np.ndarray | None, m: int, source: RandomSource
) -> tuple[I64, I64]:
    """The pairs each person keeps, as (persons, keys): their ``m`` keys of the highest ``score``.

    ``score``: per key code, or None for ``m`` keys of each person uniformly
    at random (round 1).  Persons with at most ``m`` pairs keep them all.
    The pairs of the others are packed as ``person · 2**32 + rank`` (rank: of
    the key by descending score, ties in a random order of the keys; or a
    random 32-bit value per pair) and ordered by one sort of integers, and a
    pair is kept when fewer than ``m`` of its person's come before it.
    """
    crowded = np.bincount(person)[person] > m if person.size else np.zeros(0, dtype=np.bool_)
    if not crowded.any():
        return person, key
    who, which = person[crowded], key[crowded]
    packed = who.astype(np.uint64) << np.uint64(32)
    if score is None:  # each person's own uniform choice: a random value per pair
        packed |= source.words(which.size) >> np.uint64(32)
    else:
        shuffled = np.argsort(source.words(score.size), kind="stable")  # keys in random order
        ranked = shuffled[np.argsort(-score[shuffled], kind="stable")]  # by score, ties at random
        rank = np.empty(score.size, dtype=np.uint64)
        rank[ranked] = np.arange(score.size, dtype=np.uint64)
        packed |= rank[which]
    order = np.argsort(packed)
    ordered = who[order]
    start = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])
    within = np.arange(ordered.size) - np.repeat(start, np.diff(np.r_[start, ordered.size]))
    top = order[within < m]
    calm = ~crowded
    return np.concatenate([person[calm], who[top]]), np.concatenate([key[calm], which[top]])
