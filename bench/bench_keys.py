"""Groupby without public keys: private key selection on real data, against OpenDP and PipelineDP.

    python bench/bench_keys.py                       # accuracy on the Reddit bigrams, then timing
    python bench/bench_keys.py --part accuracy --seeds 11 --groups 1 2 5 20 auto
    python bench/bench_keys.py --part timing --rows 1e7 --repeat 3
    python bench/bench_keys.py --ours-only           # without OpenDP and PipelineDP

Accuracy (``--part accuracy``): ``../shared/data/reddit_ngrams.csv`` beside the
repository (``--data``; skipped with a message when absent), privacy unit =
``author``, key = ``ngram``, (ε, δ) = (1, 1e-6) per release, for each
``max_groups`` g (``auto``: chosen privately).  The truth of a released key is
its number of distinct authors (``max_rows=1``: a person counts once per key).
Per mechanism and g: the keys released, the RMSE of their counts against the
truth and their bias (mean of count − truth), medians over ``--seeds`` runs.
Rows, by group:

* before: ``value_counts`` as it ran before issue 34, one pass (each author
  keeps g random keys, noisy person counts thresholded: the counts released
  are the selection's), under an ε budget (discrete Laplace, scale g/ε) and a
  ρ budget of (1, 1e-6) (ρ at δ/2, δ/2 to the threshold; discrete Gaussian);
  OpenDP ``make_laplace_threshold`` on the person counts bounded the same way
  (d_in = (g, g, 1), the smallest threshold whose δ is at most 1e-6);
  PipelineDP ``aggregate(PRIVACY_ID_COUNT)`` with
  ``post_aggregation_thresholding`` and ``LAPLACE_THRESHOLDING``;
* policy: ``value_counts(max_groups=g, max_rows=1)`` now: with g above 1 (or
  ``"auto"``), 3/4 of the loss and all of δ on the policy selection
  (mechanisms/policy.py), then the count of the chosen keys with the rest,
  each author keeping g of the chosen keys; under an ε budget and a ρ budget;
* two steps: a selection with ε/2 (``--select-method``), then the keyed count
  with ε/2; PipelineDP ``aggregate(COUNT)`` (its truncated geometric selection);
* keys only: our truncated geometric at ε = 1, weighted Gaussian at ρ, and the
  policy selection with the whole loss; PipelineDP's ``select_partitions`` and
  weighted Gaussian selector (fed the weights its engine computes:
  :func:`pipeline_weighted` says why not through its engine).

The last line states the best median of keys released with their counts by
the policy against the best of the one passes (any g, either budget, any
library).  OpenDP (0.16, core API) and PipelineDP (``pip install
pipeline-dp``) are imported here only; a missing one is reported and
skipped.  Our noise is seeded (``SeededSource(seed)``: not private, for the
bench); PipelineDP's key sampling reads numpy's global state (seeded here) and
its noise comes from PyDP's secure generator (unseeded); OpenDP's noise is
unseeded.

Timing (``--part timing``): a synthetic log of ``--rows`` rows (default
10,000,000): ``term`` (strings, 100,000 distinct, Zipf-like) and ``user``
(``rows / 10`` persons).  After one untimed warm-up, alternating, medians of
``--repeat``: our keyless ``value_counts`` and ``groupby.count`` on ``term``
(rows are persons) against ``df["term"].value_counts()`` [target at most 1.5];
then the unit case (``user`` as privacy unit, ``max_groups=5`` (the policy and
the count) and ``max_groups=1`` (one pass), ``max_rows=1``) against pandas'
person count ``df.drop_duplicates(["user", "term"])["term"].value_counts()``
[target at most 2.0], and ``groupby.count`` with the unit against
``value_counts``.  ``--direct`` runs the one pass through
:func:`pandas_dp.mechanisms.key_selection.key_statistics` and
:func:`~pandas_dp.mechanisms.key_selection.select_keys` instead.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import os
import random
import statistics
import time
import warnings
from collections.abc import Callable
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

import pandas_dp
from pandas_dp.core.noise import SeededSource, SystemSource
from pandas_dp.core.zcdp import rho_within
from pandas_dp.mechanisms.contributions import unit_codes
from pandas_dp.mechanisms.key_selection import (
    SelectionPlan,
    key_statistics,
    people_for_half,
    select_keys,
    selection_plan,
)
from pandas_dp.mechanisms.policy import policy_plan, policy_select


def _optional(name: str) -> tuple[Any, str]:
    """The module ``name``, or None and why not (the peers are never dependencies)."""
    try:
        return importlib.import_module(name), ""
    except Exception as error:  # an import can fail in many ways on a new Python
        return None, f"{type(error).__name__}: {error}"


dp, OPENDP_WHY = _optional("opendp.prelude")
pdp, PIPELINE_WHY = _optional("pipeline_dp")

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "reddit_ngrams.csv"
UNIT, KEY = "author", "ngram"
EPSILON, DELTA = Fraction(1), Fraction(1, 10**6)
Keys = tuple[pd.Index, np.ndarray | None]  # released keys, their counts (None: keys only)
#: max_groups: a bound, or "auto" (chosen privately; only the policy's count takes it).
Groups = int | str
#: run(df, g, seed): the keys and counts, or None where the mechanism has no such g.
Mechanism = Callable[[pd.DataFrame, Any, int], Keys | None]


# --------------------------------------------------------------------------- ours


def _budgeted(df: pd.DataFrame, seed: int, epsilon: Fraction) -> pd.DataFrame:
    frame = df.copy(deep=False)
    frame.dp.set_budget(epsilon=float(epsilon), delta=float(DELTA), privacy_unit=UNIT, seed=seed)
    return frame


def _select(df: pd.DataFrame, plan: SelectionPlan, seed: int) -> Keys:
    """``partition.key_statistics`` and ``select_keys``: what the keyless releases run."""
    source = SeededSource(seed)
    units = unit_codes(df[UNIT])
    stats = key_statistics(df, [KEY], units, plan, source)
    keys, noisy = select_keys(plan, stats, source)
    return keys, noisy


def ours_value_counts(df: pd.DataFrame, g: Groups, seed: int, public: bool) -> Keys | None:
    """``value_counts(max_groups=g, max_rows=1)``: a policy selection and a count when g > 1."""
    if public:
        frame = _budgeted(df, seed, EPSILON)
        out = frame.dp.value_counts(
            KEY, epsilon=float(EPSILON), delta=float(DELTA), max_groups=g, max_rows=1
        )
        return out.index, out.to_numpy()
    if g == "auto":
        return None
    return _select(df, selection_plan(epsilon=EPSILON, delta=DELTA, max_groups=g), seed)


def ours_value_counts_rho(df: pd.DataFrame, g: Groups, seed: int) -> Keys:
    """As :func:`ours_value_counts` under a ρ budget of (1, 1e-6): ρ at δ/2, δ/2 to the keys."""
    frame = df.copy(deep=False)
    rho, delta = float(weighted_rho()), float(DELTA / 2)
    frame.dp.set_budget(rho=rho, delta=delta, privacy_unit=UNIT, seed=seed)
    out = frame.dp.value_counts(KEY, rho=rho, delta=delta, max_groups=g, max_rows=1)
    return out.index, out.to_numpy()


def ours_before(df: pd.DataFrame, g: Groups, seed: int, accountant: str) -> Keys | None:
    """value_counts before issue 34: one pass, each author keeping g random keys (any g).

    Laplace thresholding at ε = 1 of the person counts (``"epsilon"``), or the
    Gaussian at ρ of (1, 1e-6) (``"rho"``): the selection's noisy counts are
    the release.  ``partition.key_statistics`` + ``select_keys``, as the call ran.
    """
    if g == "auto":
        return None
    if accountant == "epsilon":
        plan = selection_plan(epsilon=EPSILON, delta=DELTA, max_groups=g)
    else:
        plan = selection_plan(rho=weighted_rho(), delta=DELTA / 2, max_groups=g, method="gaussian")
    return _select(df, plan, seed)


def ours_policy_keys(df: pd.DataFrame, g: Groups, seed: int, accountant: str) -> Keys | None:
    """The policy selection alone, with all of the loss (keys only; g plays no part)."""
    if g != "auto":
        return None
    source = SeededSource(seed)
    codes, keys = pd.factorize(df[KEY])
    persons = unit_codes(df[UNIT])
    valid = persons >= 0
    pair = np.unique(persons[valid] * len(keys) + codes[valid])
    if accountant == "epsilon":
        plan = policy_plan(epsilon=EPSILON, delta=DELTA)
    else:
        plan = policy_plan(rho=weighted_rho(), delta=DELTA / 2)
    chosen = policy_select(plan, pair % len(keys), pair // len(keys), len(keys), source)
    return pd.Index(keys[chosen]), None


def ours_public_count(df: pd.DataFrame, g: int, seed: int) -> Keys:
    """``groupby(key).count(max_rows=1)`` without ``keys=``: the same one pass as value_counts."""
    frame = _budgeted(df, seed, EPSILON)
    out = frame.dp.groupby(KEY).count(
        epsilon=float(EPSILON), delta=float(DELTA), max_groups=g, max_rows=1
    )
    return out.index, out.to_numpy()


def ours_two_steps(df: pd.DataFrame, g: int, seed: int, method: str) -> Keys:
    """Half of ε to select (``method``), half to the keyed count of the selected keys.

    What ``groupby(key)`` without ``keys=`` does for a statistic other than the
    selection's own person count (sum, mean, ``count(max_rows=k > 1)``).
    """
    half = EPSILON / 2
    plan = selection_plan(epsilon=half, delta=DELTA, max_groups=g, method=method)
    keys, _ = _select(df, plan, seed)
    if len(keys) == 0:
        return keys, np.zeros(0)
    frame = _budgeted(df, seed + 1_000_003, half)
    out = frame.dp.groupby(KEY, keys=keys).count(epsilon=float(half), max_groups=g, max_rows=1)
    return out.index, out.to_numpy()


def ours_truncated_geometric(df: pd.DataFrame, g: int, seed: int) -> Keys:
    plan = selection_plan(epsilon=EPSILON, delta=DELTA, max_groups=g, method="truncated_geometric")
    return _select(df, plan, seed)[0], None


def weighted_rho() -> Fraction:
    """ρ whose (ε, δ/2) is ε = 1: the other half of δ goes to the threshold."""
    return rho_within(EPSILON, DELTA / 2)


def ours_weighted_gaussian(df: pd.DataFrame, g: int, seed: int) -> Keys:
    plan = selection_plan(
        rho=weighted_rho(), delta=DELTA / 2, max_groups=g, method="weighted_gaussian"
    )
    return _select(df, plan, seed)[0], None


# --------------------------------------------------------------------------- OpenDP


def bounded_person_counts(df: pd.DataFrame, g: int, seed: int) -> pd.Series:
    """Distinct authors per key after keeping at most g random keys per author."""
    pairs = df[[UNIT, KEY]].drop_duplicates()
    rng = np.random.Generator(np.random.PCG64(seed))
    pairs = pairs.iloc[rng.permutation(len(pairs))]
    return pairs.groupby(UNIT, sort=False).head(g)[KEY].value_counts()


_OPENDP_CACHE: dict[int, Any] = {}


def opendp_measurement(g: int) -> Any:
    """``make_laplace_threshold`` at scale g/ε with the smallest threshold of δ <= 1e-6."""
    if g not in _OPENDP_CACHE:
        dp.enable_features("contrib")
        domain = dp.map_domain(dp.atom_domain(T=str), dp.atom_domain(T=dp.i64))
        metric = dp.l01inf_distance(dp.absolute_distance(T=dp.i64))
        scale = float(g / EPSILON)

        def make(threshold: int) -> Any:
            return dp.m.make_laplace_threshold(domain, metric, scale=scale, threshold=threshold)

        lo, hi = 1, 2
        while make(hi).map((g, g, 1))[1] > DELTA:
            lo, hi = hi, 2 * hi
        while hi - lo > 1:
            mid = (lo + hi) // 2
            lo, hi = (lo, mid) if make(mid).map((g, g, 1))[1] <= DELTA else (mid, hi)
        measurement = make(hi)
        eps, delta = measurement.map((g, g, 1))
        if not (eps <= EPSILON and delta <= DELTA):
            raise RuntimeError(f"OpenDP's map gave ({eps}, {delta}), over the budget")
        _OPENDP_CACHE[g] = measurement
    return _OPENDP_CACHE[g]


def opendp_laplace_threshold(df: pd.DataFrame, g: int, seed: int) -> Keys:
    counts = bounded_person_counts(df, g, seed)
    released = opendp_measurement(g)(dict(zip(counts.index, counts.tolist(), strict=True)))
    return pd.Index(list(released)), np.array(list(released.values()), dtype=np.float64)


# --------------------------------------------------------------------------- PipelineDP


def _pipeline(seed: int) -> tuple[Any, Any, Any]:
    np.random.seed(seed)  # its key sampling draws from numpy's global state  # noqa: NPY002
    random.seed(seed)
    accountant = pdp.NaiveBudgetAccountant(total_epsilon=float(EPSILON), total_delta=float(DELTA))
    engine = pdp.DPEngine(accountant, pdp.LocalBackend())
    extractors = pdp.DataExtractors(
        privacy_id_extractor=lambda row: row[0],
        partition_extractor=lambda row: row[1],
        value_extractor=lambda row: 0,
    )
    return accountant, engine, extractors


def _rows(df: pd.DataFrame) -> list[tuple[Any, Any]]:
    return list(zip(df[UNIT].tolist(), df[KEY].tolist(), strict=True))


def pipeline_aggregate(df: pd.DataFrame, g: int, seed: int, one_pass: bool) -> Keys:
    accountant, engine, extractors = _pipeline(seed)
    if one_pass:
        params = pdp.AggregateParams(
            metrics=[pdp.Metrics.PRIVACY_ID_COUNT],
            noise_kind=pdp.NoiseKind.LAPLACE,
            max_partitions_contributed=g,
            max_contributions_per_partition=1,
            partition_selection_strategy=pdp.PartitionSelectionStrategy.LAPLACE_THRESHOLDING,
            post_aggregation_thresholding=True,
        )
        field = "privacy_id_count"
    else:
        params = pdp.AggregateParams(
            metrics=[pdp.Metrics.COUNT],
            noise_kind=pdp.NoiseKind.LAPLACE,
            max_partitions_contributed=g,
            max_contributions_per_partition=1,
            partition_selection_strategy=pdp.PartitionSelectionStrategy.TRUNCATED_GEOMETRIC,
        )
        field = "count"
    result = engine.aggregate(_rows(df), params, extractors)
    accountant.compute_budgets()
    out = list(result)
    keys = pd.Index([key for key, _ in out])
    return keys, np.array([getattr(m, field) for _, m in out], dtype=np.float64)


def pipeline_select(df: pd.DataFrame, g: int, seed: int) -> Keys:
    """``DPEngine.select_partitions`` with its truncated geometric strategy, ε = 1."""
    accountant, engine, extractors = _pipeline(seed)
    params = pdp.SelectPartitionsParams(
        max_partitions_contributed=g,
        partition_selection_strategy=pdp.PartitionSelectionStrategy.TRUNCATED_GEOMETRIC,
    )
    result = engine.select_partitions(_rows(df), params, extractors)
    accountant.compute_budgets()
    return pd.Index(list(result)), None


def pipeline_weighted(df: pd.DataFrame, g: int, seed: int) -> Keys:
    """PipelineDP's weighted Gaussian selector at (ε, δ) = (1, 1e-6), made once.

    ``DPEngine.select_partitions(WEIGHTED_GAUSSIAN_THRESHOLDING)`` makes a new
    selector (two numeric calibrations) for every key: about 2 minutes per run
    here.  The weights are computed as its engine does (distinct (author, key)
    pairs, at most g random keys per author, each weighing ``1/√t`` for an
    author keeping t keys, summed per key), then its selector decides each key.
    """
    rng = np.random.Generator(np.random.PCG64(seed))
    pairs = df[[UNIT, KEY]].drop_duplicates()
    pairs = pairs.iloc[rng.permutation(len(pairs))]
    kept = pairs.groupby(UNIT, sort=False).head(g)
    held = kept.groupby(UNIT)[KEY].transform("size").to_numpy(dtype=np.float64)
    weights = pd.Series(1.0 / np.sqrt(held), index=kept[KEY].to_numpy()).groupby(level=0).sum()
    selector = pdp.partition_selection.create_weighted_gaussian_thresholding(
        float(EPSILON), float(DELTA), g
    )
    keep = [selector.should_keep(w) for w in weights.tolist()]
    return weights.index[np.array(keep, dtype=bool)], None


# --------------------------------------------------------------------------- accuracy


def _bounded(run: Callable[[pd.DataFrame, int, int], Keys]) -> Mechanism:
    """A mechanism that takes a bound only (no ``max_groups="auto"``): None for "auto"."""
    return lambda df, g, seed: None if g == "auto" else run(df, g, seed)


def mechanisms(
    public: bool, method: str, ours_only: bool = False
) -> list[tuple[str, str, Mechanism | None, str]]:
    """(group, label, run(df, g, seed) or None, why it is missing)."""
    ours: list[tuple[str, str, Mechanism | None, str]] = [
        (
            "before",
            "pandas_dp value_counts before issue 34: one pass, Laplace (ε budget)",
            lambda df, g, s: ours_before(df, g, s, "epsilon"),
            "",
        ),
        (
            "before",
            "pandas_dp value_counts before issue 34: one pass, Gaussian (ρ budget)",
            lambda df, g, s: ours_before(df, g, s, "rho"),
            "",
        ),
        (
            "policy",
            "pandas_dp value_counts (ε budget): policy selection (3/4), then the count",
            lambda df, g, s: ours_value_counts(df, g, s, public),
            "",
        ),
        (
            "policy",
            "pandas_dp value_counts (ρ budget): policy selection (3/4), then the count",
            ours_value_counts_rho,
            "",
        ),
        (
            "two steps",
            f"pandas_dp select ({method}) + keyed count",
            _bounded(lambda df, g, s: ours_two_steps(df, g, s, method)),
            "",
        ),
        ("keys only", "pandas_dp truncated geometric", _bounded(ours_truncated_geometric), ""),
        ("keys only", "pandas_dp weighted Gaussian (ρ)", _bounded(ours_weighted_gaussian), ""),
        (
            "keys only",
            'pandas_dp policy selection, all of ε ("auto" column)',
            lambda df, g, s: ours_policy_keys(df, g, s, "epsilon"),
            "",
        ),
        (
            "keys only",
            'pandas_dp policy selection, all of ρ ("auto" column)',
            lambda df, g, s: ours_policy_keys(df, g, s, "rho"),
            "",
        ),
    ]
    peers: list[tuple[str, str, Mechanism | None, str]] = [
        (
            "before",
            "OpenDP make_laplace_threshold (one pass)",
            _bounded(opendp_laplace_threshold) if dp is not None else None,
            OPENDP_WHY,
        ),
    ]
    if pdp is not None:
        peers += [
            (
                "before",
                "PipelineDP PRIVACY_ID_COUNT, Laplace thresholding (one pass)",
                _bounded(lambda df, g, s: pipeline_aggregate(df, g, s, one_pass=True)),
                "",
            ),
            (
                "two steps",
                "PipelineDP COUNT (select: truncated geometric)",
                _bounded(lambda df, g, s: pipeline_aggregate(df, g, s, one_pass=False)),
                "",
            ),
            (
                "keys only",
                "PipelineDP select_partitions truncated geometric",
                _bounded(pipeline_select),
                "",
            ),
            (
                "keys only",
                "PipelineDP weighted Gaussian selector",
                _bounded(pipeline_weighted),
                "",
            ),
        ]
    else:
        peers.append(("all", "PipelineDP", None, PIPELINE_WHY))
    order = {"before": 0, "policy": 1, "two steps": 2, "keys only": 3, "all": 4}
    return sorted(ours + ([] if ours_only else peers), key=lambda m: order[m[0]])


def _error(errors: list[float], biases: list[float], counts: bool, seeds: int) -> str:
    """The median RMSE and bias over the seeds that released keys (how many, when not all)."""
    if not counts and not errors:
        return ""
    if not errors:
        return " / n/a"
    some = f" ({len(errors)}/{seeds})" if len(errors) < seeds else ""
    return f" / {statistics.median(errors):.1f} / {statistics.median(biases):+.1f}{some}"


def rmse(truth: pd.Series, keys: pd.Index, counts: np.ndarray) -> float:
    """Root mean squared error of the released counts against the keys' distinct authors."""
    true = truth.reindex(keys).fillna(0).to_numpy(dtype=np.float64)
    return float(np.sqrt(np.mean((np.asarray(counts, dtype=np.float64) - true) ** 2)))


def bias(truth: pd.Series, keys: pd.Index, counts: np.ndarray) -> float:
    """Mean of released count minus the key's distinct authors: the bounding's bias, and noise."""
    true = truth.reindex(keys).fillna(0).to_numpy(dtype=np.float64)
    return float(np.mean(np.asarray(counts, dtype=np.float64) - true))


def accuracy(args: argparse.Namespace) -> None:
    if not args.data.is_file():
        print(
            f"accuracy skipped: needs {args.data} (the shared data beside the repository; "
            "pass --data PATH to reddit_ngrams.csv)"
        )
        return
    df = pd.read_csv(args.data, usecols=[UNIT, KEY])
    truth = df.drop_duplicates([UNIT, KEY])[KEY].value_counts()
    per_author = df.drop_duplicates([UNIT, KEY]).groupby(UNIT).size()
    print(
        f"{args.data.name}: {len(df):,} rows, {df[UNIT].nunique():,} authors, {len(truth):,} "
        f"distinct bigrams; distinct bigrams per author: median {per_author.median():.0f}, "
        f"max {per_author.max():,}; bigrams held by >= 10 authors: {(truth >= 10).sum():,}"
    )
    side = "df.dp (public)" if not args.direct else "partition.select_keys"
    print(
        f"(ε, δ) = ({float(EPSILON):g}, {float(DELTA):g}); weighted Gaussian: "
        f"ρ = {float(weighted_rho()):.5f} with δ/2 on the threshold; "
        f"{args.seeds} seeds; our side: {side}"
    )
    print(
        f"OpenDP: {dp.__name__ if dp is not None else 'absent (' + OPENDP_WHY + ')'}; "
        f"PipelineDP: {pdp.__name__ if pdp is not None else 'absent (' + PIPELINE_WHY + ')'}"
    )
    head = " | ".join(f"g = {g}" for g in args.groups)
    print("\ncells: keys released / RMSE of their counts / bias (mean count − persons), medians")
    print(f"\n| group | mechanism | {head} | time per run |")
    print("|---|---|" + "---|" * len(args.groups) + "---|", flush=True)
    missing: list[str] = []
    best: dict[str, float] = {}
    for group, label, run, why in mechanisms(not args.direct, args.select_method, args.ours_only):
        if run is None:
            missing.append(f"{label} not run: {why}")
            continue

        cells, seconds = [], []
        for g in args.groups:
            released, errors, biases = [], [], []
            start = time.perf_counter()
            counted = True
            for seed in range(args.seeds):
                got = run(df, g, seed)
                if got is None:
                    break
                keys, counts = got
                released.append(len(keys))
                counted = counts is not None
                if counts is not None and len(keys):
                    errors.append(rmse(truth, keys, counts))
                    biases.append(bias(truth, keys, counts))
            if not released:
                cells.append("—")
                continue
            seconds.append((time.perf_counter() - start) / args.seeds)
            median = statistics.median(released)
            if counted:
                best[group] = max(best.get(group, 0.0), median)
            error = _error(errors, biases, counted, args.seeds)
            cells.append(f"{median:,.0f}{error}")
        time_cell = f"{statistics.median(seconds):.2f} s" if seconds else ""
        print(f"| {group} | {label} | " + " | ".join(cells) + f" | {time_cell} |", flush=True)
    if best.get("before") and "policy" in best:
        print(
            f"\nkeys with their counts, best median: {best['policy']:,.0f} (policy) against "
            f"{best['before']:,.0f} (one pass, any g, ε or ρ budget, any library): "
            f"{best['policy'] / best['before']:.1f}x"
        )
    for line in missing:
        print(f"\n{line}")
    print("\nPersons a key needs to be released half of the time (our plans):")
    bounds = [g for g in args.groups if g != "auto"]
    print("| plan | " + " | ".join(f"g = {g}" for g in bounds) + " |")
    print("|---|" + "---|" * len(bounds))
    plans: list[tuple[str, Callable[[int], SelectionPlan]]] = [
        ("Laplace, ε = 1", lambda g: selection_plan(epsilon=EPSILON, delta=DELTA, max_groups=g)),
        (
            "Laplace, ε = 1/2",
            lambda g: selection_plan(epsilon=EPSILON / 2, delta=DELTA, max_groups=g),
        ),
        (
            "truncated geometric, ε = 1",
            lambda g: selection_plan(
                epsilon=EPSILON, delta=DELTA, max_groups=g, method="truncated_geometric"
            ),
        ),
        (
            "weighted Gaussian, persons holding g keys",
            lambda g: selection_plan(
                rho=weighted_rho(), delta=DELTA / 2, max_groups=g, method="weighted_gaussian"
            ),
        ),
    ]
    for label, make in plans:
        print(f"| {label} | " + " | ".join(str(people_for_half(make(g))) for g in bounds) + " |")


# --------------------------------------------------------------------------- timing


def synthetic(rows: int, seed: int = 7) -> pd.DataFrame:
    """``rows`` rows: ``term`` (100,000 distinct strings, Zipf-like), ``user`` (rows/10 persons)."""
    rng = np.random.Generator(np.random.PCG64(seed))
    vocabulary = np.array([f"term{i:06d}" for i in range(100_000)], dtype=object)
    weight = 1.0 / np.arange(1, vocabulary.size + 1) ** 1.1
    term = vocabulary[rng.choice(vocabulary.size, size=rows, p=weight / weight.sum())]
    return pd.DataFrame({"user": rng.integers(0, max(rows // 10, 1), size=rows), "term": term})


def medians(
    dp_fn: Callable[[], object], plain: Callable[[], object], repeat: int
) -> tuple[float, float]:
    """Median wall times of ``dp_fn`` and ``plain``, run alternately ``repeat`` times each."""
    a: list[float] = []
    b: list[float] = []
    for _ in range(repeat):
        for fn, out in ((dp_fn, a), (plain, b)):
            gc.collect()
            start = time.perf_counter()
            fn()
            out.append(time.perf_counter() - start)
    return statistics.median(a), statistics.median(b)


def timing(args: argparse.Namespace) -> None:
    rows = int(args.rows)
    df = synthetic(rows)
    source = SystemSource()
    print(
        f"\ntiming: {rows:,} rows, {df['term'].nunique():,} distinct terms ({df['term'].dtype}), "
        f"{df['user'].nunique():,} users; medians of {args.repeat}, alternating; "
        f"load {_load()}"
    )
    plain_vc = lambda: df["term"].value_counts()  # noqa: E731
    plain_person = lambda: df.drop_duplicates(["user", "term"])["term"].value_counts()  # noqa: E731

    def direct(units: bool, g: int, by_key: bool = False) -> Callable[[], object]:
        """The one pass of value_counts (``by_key``: sorted by key, as groupby.count is)."""
        plan = selection_plan(epsilon=EPSILON, delta=DELTA, max_groups=g)

        def run() -> object:
            codes = unit_codes(df["user"]) if units else None
            stats = key_statistics(df, ["term"], codes, plan, source)
            keys, noisy = select_keys(plan, stats, source)
            out = pd.Series(noisy, index=keys)
            return out.sort_index() if by_key else out

        return run

    def direct_count(units: bool, g: int) -> Callable[[], object]:
        return direct(units, g, by_key=True)

    rows_frame = df.copy(deep=False)
    rows_frame.dp.set_budget(epsilon=1e12, delta=0.5)
    unit_frame = df.copy(deep=False)
    unit_frame.dp.set_budget(epsilon=1e12, delta=0.5, privacy_unit="user")

    def public_vc(units: bool, g: int) -> Callable[[], object]:
        frame = unit_frame if units else rows_frame
        extra = {"max_groups": g, "max_rows": 1} if units else {}
        return lambda: frame.dp.value_counts("term", epsilon=1.0, delta=1e-6, **extra)

    def public_count(units: bool, g: int) -> Callable[[], object]:
        frame = unit_frame if units else rows_frame
        extra = {"max_groups": g, "max_rows": 1} if units else {}
        return lambda: frame.dp.groupby("term").count(epsilon=1.0, delta=1e-6, **extra)

    vc, count = (public_vc, public_count) if not args.direct else (direct, direct_count)
    g = args.unit_groups
    Line = tuple[str, Callable[[], object], Callable[[], object], str, str]
    lines: list[Line] = [
        ("value_counts (no unit)", vc(False, 1), plain_vc, "value_counts", "<= 1.5"),
        ("groupby.count (no unit)", count(False, 1), plain_vc, "value_counts", "<= 1.5"),
        (f"value_counts (unit, max_groups={g})", vc(True, g), plain_vc, "value_counts", ""),
        (
            f"value_counts (unit, max_groups={g}: policy selection + count)",
            vc(True, g),
            plain_person,
            "drop_duplicates+value_counts",
            "<= 2.0",
        ),
        (
            "value_counts (unit, max_groups=1: one pass)",
            vc(True, 1),
            plain_person,
            "drop_duplicates+value_counts",
            "",
        ),
        (f"groupby.count (unit, max_groups={g})", count(True, g), plain_vc, "value_counts", ""),
    ]
    lines[0][1]()  # warm-up (first-call costs of the process), untimed
    lines[0][2]()
    print("| release | against pandas | ours (s) | pandas (s) | ratio | target |")
    print("|---|---|---|---|---|---|")
    for label, ours_fn, plain, plain_label, target in lines:
        t_ours, t_plain = medians(ours_fn, plain, args.repeat)
        print(
            f"| {label} | {plain_label} | {t_ours:.2f} | {t_plain:.2f} | "
            f"{t_ours / t_plain:.2f} | {target} |"
        )
    print(f"load at the end {_load()}")


def _load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"{one:.2f}, {five:.2f}, {fifteen:.2f} (1, 5, 15 min; {os.cpu_count()} cores)"


def main() -> None:
    warnings.simplefilter("ignore", pandas_dp.PoorAnswerWarning)  # empty answers are counted
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", choices=["accuracy", "timing", "both"], default="both")
    parser.add_argument("--data", type=Path, default=DATA, help="reddit_ngrams.csv")
    parser.add_argument("--seeds", type=int, default=11)
    parser.add_argument(
        "--groups",
        type=lambda text: text if text == "auto" else int(text),
        nargs="+",
        default=[1, 2, 5, 20, "auto"],
        help='max_groups values (ints, or "auto": the policy\'s count chooses its own)',
    )
    parser.add_argument(
        "--select-method",
        default="laplace",
        choices=["laplace", "truncated_geometric"],
        help="our two-step count's selection (direct mode)",
    )
    parser.add_argument("--rows", type=float, default=1e7)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--unit-groups", type=int, default=5, help="max_groups of the unit case")
    parser.add_argument(
        "--direct",
        action="store_true",
        help="our side through partition.key_statistics and select_keys, not df.dp",
    )
    parser.add_argument("--ours-only", action="store_true", help="skip OpenDP and PipelineDP")
    args = parser.parse_args()
    print(f"load {_load()}")
    if args.part in ("accuracy", "both"):
        accuracy(args)
    if args.part in ("timing", "both"):
        timing(args)


if __name__ == "__main__":
    main()
