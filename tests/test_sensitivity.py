"""The sensitivity oracle: no neighbour moves a release further than its plan declares.

For every kind of the registry (:data:`pandas_dp.pipeline.run.KINDS`), each of its
examples (:meth:`~pandas_dp.kinds.base.Kind.examples`), each adjacency, with and
without a privacy unit (``max_rows``, ``max_groups``), grouped or not: tiny
random frames (a few rows, three public keys and one outside them, values on
and off the grid, outside the clips, missing), every one-row change of them
(or every change of one person, whose rows are bounded in every way the
bounding may choose), the exact statistics the pipeline computes (the kind's
``tally``, or ``from_counts`` of the rows kept, joined by its ``combine``),
mapped by its ``noise_free`` to what the noise is added to (or the selection
selects on), and the change of each block compared with what the plan
``declared``: grid steps for clipped sums, score units for selections.

A kind that gives no examples, declares nothing or does not show its
noise-free statistics fails here: a new kind is checked without being listed.
``python tests/test_sensitivity.py [frames]`` prints, from a wider search, each
case where the declared bound is not reached (a loose bound costs accuracy).
"""

from __future__ import annotations

import itertools
import math
import zlib
from collections.abc import Callable, Hashable, Iterator, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, NamedTuple

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from pandas_dp.accounting.budget import binding_of
from pandas_dp.core.noise import Gauss, SeededSource
from pandas_dp.kinds.base import Declared, ExampleColumns, Kind, Neighbours, Stats
from pandas_dp.kinds.sums import Sum
from pandas_dp.kinds.variance import Var, VarPlan
from pandas_dp.mechanisms.key_selection import METHODS, person_statistics, selection_plan
from pandas_dp.mechanisms.keys import Grouping
from pandas_dp.pipeline.run import KINDS, Planned, plan_caches, plan_release

#: Clips straddling zero (symmetric, not), wholly positive, wholly negative.
CLIPS = ((-1.0, 1.0), (-0.5, 2.0), (0.5, 2.0), (-2.0, -0.5))
#: Values beyond every clip, the clips' ends and midpoints (on the grid), off the grid, missing.
VALUES = (-5.0, -1.25, -1.0, -0.3, 0.0, 0.7, 0.75, 1.25, 5.0, math.nan)
#: Labels: two candidates and one that is not.
LABELS = (0, 1, 7)
COLUMNS = ExampleColumns("x", CLIPS, (-1.0, 0.0, 0.75, 1.25), "c", LABELS[:2])
DOMAINS: dict[Any, tuple[Any, ...]] = {"x": VALUES, "c": LABELS}
#: The public keys, and a key outside them (its rows are dropped).
GROUPING = Grouping(("k",), pd.Index([0, 1, 2], name="k"))
OUTSIDE = 9


class Relation(NamedTuple):
    """The neighbour relation of a case: adjacency, grouped, privacy unit bounds (None: none)."""

    adjacency: str
    grouped: bool
    max_rows: int | None = None
    max_groups: int | None = None

    def __str__(self) -> str:
        unit = "" if self.max_rows is None else f"-k{self.max_rows}"
        unit += "" if self.max_groups is None else f"g{self.max_groups}"
        return f"{self.adjacency}-{'grouped' if self.grouped else 'one'}{unit}"


RELATIONS = [
    Relation(adjacency, *shape)
    for adjacency in ("add_remove", "substitute")
    for shape in ((False,), (True,), (False, 2), (True, 2, 1), (True, 1, 2))
]
#: Random frames per (example, relation).
FRAMES = 2
#: Rows of a frame without a unit; with a unit, the persons beside the one that changes.
ROWS, OTHERS = 4, 2
#: The changing person's rows hold PERSON_VALUES of VALUES (drawn per frame), in any public
#: key: every person of one or two such rows is tried, and SAMPLED ones of PERSON_ROWS rows.
PERSON_VALUES, PERSON_ROWS, SAMPLED_PERSONS = 4, 3, 40


@dataclass
class Universe:
    """Every row a frame of a case may hold, its key code and cell, and its statistics alone."""

    kind: Kind[Any, Any]
    planned: Planned
    frame: pd.DataFrame
    codes: np.ndarray | None
    cells: np.ndarray | None
    n_keys: int
    single: list[Stats]
    empty: Stats
    #: Each row's value, as its position in VALUES (-1: the kind reads none).
    values: np.ndarray

    @classmethod
    def of(cls, kind: Kind[Any, Any], relation: Relation, root: bool) -> Universe:
        group = GROUPING if relation.grouped else None
        planned = plan_release(
            kind,
            group,
            relation.adjacency,
            root=root,
            unit=None if relation.max_rows is None else "u",
            max_rows=relation.max_rows,
            max_groups=relation.max_groups,
        )
        frame, codes, cells, n_keys, single, empty = _tallies(kind, relation.grouped, planned.plan)
        values = (
            np.array([_position(v) for v in frame["x"]])
            if "x" in frame
            else np.full(len(frame), -1)
        )
        return cls(kind, planned, frame, codes, cells, n_keys, single, empty, values)

    def valid(self, row: int) -> bool:
        """Whether contribution bounding may keep the row (a public key, a candidate)."""
        return (self.codes is None or self.codes[row] >= 0) and (
            self.cells is None or self.cells[row] >= 0
        )

    def cell(self, row: int) -> tuple[int, int]:
        """The row's key and its cell in it (what ``max_rows`` bounds)."""
        key = 0 if self.codes is None else int(self.codes[row])
        return key, 0 if self.cells is None else int(self.cells[row])


_TALLIES: dict[tuple[int, bool, Any], Any] = {}


@pytest.fixture(autouse=True)
def _fresh_tallies() -> Iterator[None]:
    """The universes' tallies are cached per kind and plan within a test, never across."""
    _TALLIES.clear()
    yield
    _TALLIES.clear()


def _tallies(kind: Kind[Any, Any], grouped: bool, plan: Any) -> Any:
    """The universe's rows, their codes and cells, and each row's statistics (cached per plan)."""
    found = _TALLIES.get((id(kind), grouped, plan))
    if found is not None and found[0] is kind:
        return found[1]
    columns = list(dict.fromkeys(kind.columns()))
    domains = [DOMAINS[c] for c in columns]
    if grouped:
        columns, domains = ["k", *columns], [(*GROUPING.keys, OUTSIDE), *domains]
    frame = pd.DataFrame(list(itertools.product(*domains)), columns=columns)
    if not columns:  # a row count, ungrouped: one kind of row
        frame = pd.DataFrame(index=range(1))
    n_keys = len(GROUPING.keys) if grouped else 1
    rows = kind.read(frame, n_keys)
    codes = GROUPING.codes(frame) if grouped else None
    cells, _ = kind.cells(rows)

    def tally(start: int, stop: int) -> Stats:
        part = None if codes is None else codes[start:stop].copy()
        return kind.tally(plan, rows.slice(start, stop), part, n_keys)  # type: ignore[no-any-return]

    single = [tally(i, i + 1) for i in range(len(frame))]
    result = (frame, codes, cells, n_keys, single, tally(0, 0))
    _TALLIES[(id(kind), grouped, plan)] = (kind, result)
    return result


class Statistics:
    """The noise-free blocks of a multiset of universe rows, as the pipeline computes them."""

    def __init__(self, universe: Universe, bounded: bool) -> None:
        self.u = universe
        kind = universe.kind
        self.from_counts = bounded and kind.counts_kept()
        summed = type(kind).combine is Kind.combine  # the default: an exact elementwise sum
        self.join: Callable[[Stats, Stats], Stats] = (
            (lambda a, b: tuple([x + y for x, y in zip(a, b, strict=True)]))
            if summed
            else kind.combine
        )
        self.cache: dict[tuple[int, ...], tuple[np.ndarray, ...]] = {}

    def stats(self, rows: tuple[int, ...]) -> Stats:
        u = self.u
        if self.from_counts:  # a row count with a unit: the rows kept per key
            keys = np.zeros(len(rows), dtype=np.int64) if u.codes is None else u.codes[list(rows)]
            counts = np.bincount(keys, minlength=u.n_keys).astype(np.int64)
            return u.kind.from_counts(counts)  # type: ignore[no-any-return]
        total = u.empty
        for row in rows:
            total = self.join(total, u.single[row])
        return total

    def blocks(self, rows: Sequence[int]) -> tuple[np.ndarray, ...]:
        key = tuple(sorted(rows))
        if key not in self.cache:
            u = self.u
            found = u.kind.noise_free(u.planned.plan, self.stats(key), u.n_keys)
            self.cache[key] = tuple([np.asarray(b, dtype=np.int64) for b in found])
        return self.cache[key]


def outcomes(
    universe: Universe, person: tuple[int, ...], relation: Relation
) -> set[tuple[int, ...]]:
    """Every multiset of the person's rows the bounding may keep.

    Rows outside the keys or candidates are dropped; ``max_groups`` of the
    person's keys are kept (all if fewer), then ``max_rows`` rows of each
    cell (all if fewer).
    """
    assert relation.max_rows is not None
    valid = [r for r in person if universe.valid(r)]
    by_key: dict[int, list[int]] = {}
    for r in valid:
        by_key.setdefault(universe.cell(r)[0], []).append(r)
    g = len(by_key) if relation.max_groups is None else min(relation.max_groups, len(by_key))
    found: set[tuple[int, ...]] = set()
    for keys in itertools.combinations(sorted(by_key), g):
        by_cell: dict[tuple[int, int], list[int]] = {}
        for key in keys:
            for r in by_key[key]:
                by_cell.setdefault(universe.cell(r), []).append(r)
        choices = [
            {
                tuple(sorted(c))
                for c in itertools.combinations(rows, min(relation.max_rows, len(rows)))
            }
            for rows in by_cell.values()
        ]
        for pick in itertools.product(*choices):
            found.add(tuple(sorted(itertools.chain.from_iterable(pick))))
    return found


class Worst(NamedTuple):
    """The largest change found of one block, and the declared bound, in the block's units."""

    measured: Fraction
    declared: Fraction
    norm: str


#: Rows of base values compared with all others at once (memory: CHUNK × values × block).
CHUNK = 16


def norms(declared: Declared) -> list[tuple[str, Fraction]]:
    """The norms ``declared`` bounds, and the bounds."""
    if declared.weights is not None:
        assert declared.l1 is not None
        return [("weighted l1", Fraction(declared.l1))]
    found = [("l1", declared.l1), ("l2²", declared.sq)]
    if declared.coordinates is not None:  # the entries moved, and how far each
        found += [("l0", declared.coordinates[0]), ("l∞", declared.coordinates[1])]
    return [(name, Fraction(bound)) for name, bound in found if bound is not None]


def measure(diff: np.ndarray, declared: Declared) -> list[Fraction]:
    """The largest of each norm ``declared`` bounds over the changes ``diff`` (one per row)."""
    if not len(diff):
        return [Fraction(0) for _ in norms(declared)]
    if declared.weights is not None:  # per key: the largest move, weighted by its direction
        moves = diff.reshape(len(diff), diff.shape[1], -1)
        largest = np.abs(moves).max(axis=2)
        one_way = (moves >= 0).all(axis=2) | (moves <= 0).all(axis=2)
        w0, w1 = declared.weights
        scale = math.lcm(w0.denominator, w1.denominator)
        cost = (largest * one_way).sum(axis=1) * int(w0 * scale) + (largest * ~one_way).sum(
            axis=1
        ) * int(w1 * scale)
        return [Fraction(int(cost.max()), scale)]
    flat = diff.reshape(len(diff), -1)
    out = []
    if declared.l1 is not None:
        out.append(Fraction(int(np.abs(flat).sum(axis=1).max())))
    if declared.sq is not None:  # screened in floats, exact in Python integers
        approx = np.einsum("ij,ij->i", flat.astype(np.float64), flat.astype(np.float64))
        top = np.flatnonzero(approx >= approx.max() * (1 - 1e-9))
        out.append(Fraction(max(sum(int(v) * int(v) for v in flat[i]) for i in top)))
    if declared.coordinates is not None:
        out.append(Fraction(int(np.count_nonzero(flat, axis=1).max())))
        out.append(Fraction(int(np.abs(flat).max())))
    return out


def block_worst(stack: np.ndarray, declared: Declared, star: bool) -> list[Worst]:
    """The largest change of a block from ``stack[0]`` to the others (``star``), or of any two."""
    if star:
        diffs = [stack[1:] - stack[0]]
    else:
        flat = np.unique(stack.reshape(len(stack), -1), axis=0)
        unique = flat.reshape(-1, *stack.shape[1:])
        diffs = [
            (unique[None, :] - unique[i : i + CHUNK, None]).reshape(-1, *stack.shape[1:])
            for i in range(0, len(unique), CHUNK)
        ]
    found = [measure(d, declared) for d in diffs]
    return [
        Worst(max(values), bound, name)
        for (name, bound), values in zip(norms(declared), zip(*found, strict=True), strict=True)
    ]


def worst_over(
    values: list[tuple[np.ndarray, ...]], declared: tuple[Declared, ...], star: bool
) -> list[Worst]:
    """Per block and norm, the largest change from ``values[0]`` to the others (``star``),
    or between any two of ``values``."""
    assert len(declared) == len(values[0]), "declared() and noise_free() differ in blocks"
    out: list[Worst] = []
    for b, d in enumerate(declared):
        out += block_worst(np.stack([v[b] for v in values]), d, star)
    return out


def merge(a: list[Worst] | None, b: list[Worst]) -> list[Worst]:
    """The larger change of each block and norm."""
    if a is None:
        return b
    return [max(x, y, key=lambda w: w.measured) for x, y in zip(a, b, strict=True)]


def seed_of(*parts: object) -> int:
    """A seed from public descriptions (the same in every process, unlike ``hash``)."""
    return zlib.crc32(repr(parts).encode())


def row_cases(
    universe: Universe, rng: np.random.Generator, substitute: bool, star: bool
) -> list[Worst]:
    """Every one-row change of a random frame: the worst per block and norm.

    ``star``: any row added to the frame, or one of its rows removed;
    ``substitute``: one row of the frame replaced by any row (compared with
    the frame and with each other: all are neighbours).
    """
    stats = Statistics(universe, bounded=False)
    declared = universe.kind.declared(universe.planned.plan)
    frame = [int(r) for r in rng.integers(len(universe.frame), size=ROWS)]
    smaller = [frame[:i] + frame[i + 1 :] for i in range(ROWS)]
    every = range(len(universe.frame))
    result: list[Worst] | None = None
    if star:
        values = [stats.blocks(frame), *[stats.blocks([*frame, r]) for r in every]]
        values += [stats.blocks(base) for base in smaller]
        result = merge(result, worst_over(values, declared, star=True))
    if substitute:
        for base in smaller:
            values = [stats.blocks([*base, r]) for r in every]
            result = merge(result, worst_over(values, declared, star=False))
    assert result is not None
    return result


def person_cases(universe: Universe, relation: Relation, rng: np.random.Generator) -> list[Worst]:
    """Every change of one person (bounded in every possible way) beside random other persons."""
    stats = Statistics(universe, bounded=True)
    declared = universe.kind.declared(universe.planned.plan)
    everyone = np.arange(len(universe.frame))
    others: list[int] = []
    for _ in range(OTHERS):
        person = tuple(int(r) for r in rng.choice(everyone, size=int(rng.integers(1, 4))))
        kept = sorted(outcomes(universe, person, relation))
        if kept:
            others += kept[int(rng.integers(len(kept)))]
    # the changed person's rows: any public key, PERSON_VALUES values (and the candidates)
    values = set(rng.permutation(len(VALUES))[:PERSON_VALUES].tolist())
    pool = [
        int(r)
        for r in everyone
        if universe.valid(int(r)) and (universe.values[r] < 0 or universe.values[r] in values)
    ]
    persons = [p for size in (1, 2) for p in itertools.combinations_with_replacement(pool, size)]
    if pool:
        persons += [
            tuple(int(r) for r in rng.choice(pool, size=PERSON_ROWS))
            for _ in range(SAMPLED_PERSONS)
        ]
    kept = set().union(*[outcomes(universe, tuple(map(int, p)), relation) for p in persons])
    values_ = [stats.blocks(others), *[stats.blocks([*others, *s]) for s in sorted(kept)]]
    return worst_over(values_, declared, star=relation.adjacency == "add_remove")


def _position(value: float) -> int:
    """The position of ``value`` in VALUES."""
    return len(VALUES) - 1 if math.isnan(value) else VALUES.index(value)


def worst_cases(
    kind: Kind[Any, Any], relation: Relation, frames: int
) -> Iterator[tuple[Planned, list[Worst]]]:
    """The worst change found per block for each plan of ``kind`` under ``relation``."""
    seed = seed_of(kind, str(relation))
    if relation.max_rows is not None:
        universe = Universe.of(kind, relation, root=False)
        for f in range(frames):
            yield (
                universe.planned,
                person_cases(universe, relation, np.random.default_rng([seed, f])),
            )
        return
    filtered = Universe.of(kind, relation, root=False)
    root = Universe.of(kind, relation, root=True)
    for f in range(frames):
        rng = np.random.default_rng([seed, f])
        if relation.adjacency == "add_remove":
            yield filtered.planned, row_cases(filtered, rng, substitute=False, star=True)
            continue
        # the frame a budget was set on: a row changes, never leaves (its row count may be public)
        if root.planned.neighbours != filtered.planned.neighbours:
            yield root.planned, row_cases(root, np.random.default_rng([seed, f]), True, False)
        # any other frame: a changed row may also leave it, or join it
        yield filtered.planned, row_cases(filtered, rng, substitute=True, star=True)


@pytest.mark.parametrize("relation", RELATIONS, ids=str)
@pytest.mark.parametrize("name", sorted(KINDS))
def test_no_neighbour_moves_a_release_further_than_its_plan_declares(
    name: str, relation: Relation
) -> None:
    examples = KINDS[name].examples(COLUMNS)
    assert examples, f"{name} gives no example to check"
    for example in examples:
        for planned, worst in worst_cases(example, relation, FRAMES):
            for block, w in enumerate(worst):
                assert w.measured <= w.declared, (
                    f"{example!r} under {planned.neighbours}: block {block} moved by "
                    f"{w.measured} ({w.norm}), the plan declares {w.declared}"
                )


# ------------------------------------------------- the grouped clipped sum under ρ, and var


SUM_SQ = Neighbours.sum_sq_sensitivity


def _old_sum_sq(self: Neighbours, lower: Any, upper: Any) -> Any:
    """The bound before issue 28: ``2·reach²`` for a grouped sum under substitute (too small)."""
    if self.grouped and not self.unit and self.adjacency == "substitute":
        reach = max(abs(lower), abs(upper))
        return 2 * reach * reach
    return SUM_SQ(self, lower, upper)


def _noises(plan: Any) -> list[Gauss]:
    """The Gaussian noise of each block of a grouped sum's or var's plan, in block order."""
    if isinstance(plan, VarPlan):
        return [plan.grid.scale, plan.scale3]  # type: ignore[list-item]
    return (
        [noise for part in plan for noise in _noises(part)]
        if isinstance(plan, tuple)
        else [plan.scale]
    )


def realised_rho(kind: Kind[Any, Any]) -> Fraction:
    """The zCDP ρ of ``kind``, grouped under substitute, on its worst pair of one-row frames.

    A discrete Gaussian of variance σ² shifted by d is ``d²/(2σ²)``-zCDP (Canonne,
    Kamath & Steinke 2020), a bound attained as σ grows (the plans put σ above
    2**28 grid steps); independent blocks add.  The rows are additive, so the
    change of one row in a frame of one row is that in any frame: every value
    of VALUES (and missing) in key 0, changed to every value in key 0 or key 1.
    """
    universe = Universe.of(kind, Relation("substitute", True), root=True)
    stats = Statistics(universe, bounded=False)
    noises = _noises(universe.planned.plan)
    rows = [r for r in range(len(universe.frame)) if universe.frame["k"].iloc[r] in (0, 1)]
    worst = Fraction(0)
    for a, b in itertools.product(rows, rows):
        pair = zip(stats.blocks([a]), stats.blocks([b]), noises, strict=True)
        rho = sum(
            (Fraction(int(((x - y).astype(object) ** 2).sum()), 2) / n.sigma2 for x, y, n in pair),
            Fraction(0),
        )
        worst = max(worst, rho)
    return worst


@pytest.mark.parametrize(
    ("kind", "after", "before"),
    [
        # a row from −1 to 1 in its key: (U − L)² = 4 grid units², where 2·reach² = 2 was declared
        (Sum(None, "x", (-1.0, 1.0), rho=Fraction(1, 2)), 1.0, 2.0),
        # C moves by R (q from 0 to Q/2) where 2·(R/2)² was declared; the pair's worst is elsewhere
        (Var(None, "x", (-1.0, 1.0), rho=Fraction(1, 2)), 0.75, 1.125),
    ],
    ids=["sum", "var"],
)
def test_a_grouped_release_under_substitute_realises_at_most_its_rho(
    kind: Kind[Any, Any], after: float, before: float, monkeypatch: pytest.MonkeyPatch
) -> None:
    rho = kind.loss()[1]
    realised = realised_rho(kind)
    assert realised <= rho
    assert float(realised / rho) == pytest.approx(after, rel=1e-6)
    monkeypatch.setattr(Neighbours, "sum_sq_sensitivity", _old_sum_sq)  # the positive control
    for plan in plan_caches():
        plan.cache_clear()
    _TALLIES.clear()
    assert float(realised_rho(kind) / rho) == pytest.approx(before, rel=1e-6)


def audited_rho(seed: int, keys: int = 20_000) -> tuple[float, float]:
    """A 99.9999 % confidence interval for the ρ a grouped sum realises on its worst pair.

    Every key holds one row at the clip's lower end (x = −1) in one frame and at
    its upper end (x = 1) in the other: each key's release is one draw of the
    release of that key on the pair (a row whose value changes inside its key,
    the noise independent across keys).  The Gaussian shift's ρ is
    ``(μ′ − μ)²/(2σ²)``, from the two samples' means and pooled variance.
    """
    draws = []
    for x in (-1.0, 1.0):
        df = pd.DataFrame({"k": np.arange(keys), "x": np.full(keys, x)})
        df.dp.set_budget(rho=1, adjacency="substitute", seed=seed)
        grouped = df.dp.groupby("k", keys=pd.Index(np.arange(keys), name="k"))
        draws.append(grouped.sum("x", clip=(-1, 1), rho=0.5).to_numpy())
    low, high = draws
    z = 5.0  # two-sided, about 1 - 6e-7
    shift = float(high.mean() - low.mean())
    spread = math.sqrt((high.var(ddof=1) + low.var(ddof=1)) / keys)
    variance = (high.var(ddof=1) + low.var(ddof=1)) / 2
    wobble = z * math.sqrt(2 / (2 * keys - 2))  # of the pooled variance, relatively
    lower = (shift - z * spread) ** 2 / (2 * variance * (1 + wobble))
    upper = (shift + z * spread) ** 2 / (2 * variance * (1 - wobble))
    return lower, upper


def test_an_audit_of_the_grouped_sum_under_substitute_finds_its_rho(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    lower, upper = audited_rho(seed=5)
    assert lower <= 0.5 <= upper  # ρ = 0.5 charged, and realised
    monkeypatch.setattr(Neighbours, "sum_sq_sensitivity", _old_sum_sq)
    for plan in plan_caches():
        plan.cache_clear()
    lower, upper = audited_rho(seed=5)
    assert lower > 0.5  # the bound before the fix: about 1.0 realised where 0.5 was charged
    assert lower <= 1.0 <= upper


# ------------------------------------------------------- the key selection's person counts


@pytest.mark.parametrize("max_groups", [1, 2, 3])
@pytest.mark.parametrize("method", METHODS)
def test_one_person_moves_the_key_selection_no_further_than_its_noise_covers(
    method: str, max_groups: int
) -> None:
    """Every person of up to four keys (two rows in one), added to random frames of persons.

    Laplace covers an L1 change of ``scale·ε`` (weighted: a person's weights),
    the Gaussians an L2² change of ``2ρσ²``, the truncated geometric a change of
    at most 1 in each of at most ``max_groups`` keys; the bounding's choice of
    keys: the worst of four seeds.
    """
    pure = method in ("laplace", "truncated_geometric", "weighted_laplace")
    loss = {"epsilon": Fraction(1)} if pure else {"rho": Fraction(1, 2)}
    plan = selection_plan(**loss, delta=Fraction(1, 10**6), max_groups=max_groups, method=method)
    rng = np.random.default_rng(seed_of(method, max_groups))
    n_keys = 5
    for _ in range(3):
        sizes = rng.integers(1, max_groups + 1, size=3)  # others: never more than g keys
        other_keys = [rng.choice(n_keys, size=s, replace=False) for s in sizes]
        codes = np.concatenate(other_keys).astype(np.int64)
        units = np.repeat(np.arange(3), sizes).astype(np.int64)
        without = person_statistics(codes, n_keys, units, plan, SeededSource(0))
        for held in itertools.chain.from_iterable(
            itertools.combinations(range(n_keys), t) for t in range(1, 5)
        ):
            mine = np.array([*held, held[0]], dtype=np.int64)  # two rows in its first key
            for seed in range(4):
                stats = person_statistics(
                    np.concatenate([codes, mine]),
                    n_keys,
                    np.concatenate([units, np.full(mine.size, 3)]),
                    plan,
                    SeededSource(seed),
                )
                change = (stats - without).astype(object)
                if method in ("laplace", "weighted_laplace"):
                    assert sum(abs(change)) <= plan.scale * plan.epsilon
                elif method == "truncated_geometric":
                    assert max(abs(change)) <= 1
                    assert sum(abs(change)) <= max_groups
                else:
                    assert sum(change * change) <= 2 * plan.rho * plan.sigma2


# ---------------------------------------------------------------- where a bound is loose


def reached(frames: int = 6) -> Iterator[tuple[str, str, int, str, Fraction]]:
    """``(example, relation, block, norm, largest change / declared)`` of every case.

    A wider search than the test's: every value and four public keys for the
    changing person (two keys in, two others out), persons of up to four rows.
    Where the ratio stays below 1 the declared bound is loose (it costs
    accuracy), or the search missed the worst frame.
    """
    global GROUPING, PERSON_VALUES, PERSON_ROWS, SAMPLED_PERSONS
    GROUPING = Grouping(("k",), pd.Index([0, 1, 2, 3], name="k"))
    PERSON_VALUES, PERSON_ROWS, SAMPLED_PERSONS = len(VALUES), 4, 300
    for name in sorted(KINDS):
        for example in KINDS[name].examples(COLUMNS):
            for relation in RELATIONS:
                worst: dict[tuple[int, str], Fraction] = {}
                for _, found in worst_cases(example, relation, frames):
                    for block, w in enumerate(found):
                        ratio = w.measured / w.declared if w.declared else Fraction(w.measured == 0)
                        worst[block, w.norm] = max(worst.get((block, w.norm), ratio), ratio)
                for (block, norm), ratio in worst.items():
                    yield repr(example), str(relation), block, norm, ratio
        _TALLIES.clear()


if __name__ == "__main__":  # python tests/test_sensitivity.py: the loose bounds, and any breach
    import sys

    for example, relation, block, norm, ratio in reached(int(sys.argv[1]) if sys.argv[1:] else 6):
        if ratio != 1:
            print(f"{float(ratio):.4f}\t{relation}\tblock {block} {norm}\t{example}")


# ------------------------------------------- joins, concat and explode (issue 30)
#
# A merge, a concat or an explode makes several rows of one original row (or
# of one person): the derived frame's unit and default bounds must make every
# release bound them.  For each operation, tiny random original frames and
# each of their one-row changes (with a privacy unit: one person's), derived
# through df.dp itself: the two derived frames may differ only in the rows of
# one unit of the derived frame, and every way the bounding may keep that
# unit's rows moves each kind's noise-free statistics no further than the plan
# of the derived frame (its unit, its default bounds) declares.

#: The public table of the merge: store 1 reaches three keys (one outside), store 2 one.
PARTS = pd.DataFrame({"store": [1, 1, 1, 2], "k": [0, 1, OUTSIDE, 2]})
LIST_INTS = pd.ArrowDtype(pa.list_(pa.int64()))


def _merge(df: pd.DataFrame) -> pd.DataFrame:
    return df.dp.merge(PARTS, on="store")


def _explode(df: pd.DataFrame) -> pd.DataFrame:
    rows = df.dp.explode("k", max_rows=2)  # lists of up to three keys: the bound cuts
    return rows.dp.assign(k=rows["k"].astype("Int64"))


def _concat(df: pd.DataFrame) -> pd.DataFrame:
    return df.dp.concat([df.dp.filter(df.c != 7), df.dp.filter(df.c != 1)])


def _private(df: pd.DataFrame) -> pd.DataFrame:
    orders = df.dp.filter(df.side == 0).dp.select(["u", "x", "c", "k"])
    returns = df.dp.filter(df.side == 1).dp.select(["u"])
    return orders.dp.merge(returns, on="u")


#: An operation: whether its budget has a unit ``u``, and the derivation.
JOINS: dict[str, tuple[bool, Callable[[pd.DataFrame], pd.DataFrame]]] = {
    "merge": (False, _merge),
    "explode": (False, _explode),
    "concat": (False, _concat),
    "private-merge": (True, _private),
}


def _original_row(rng: np.random.Generator, op: str, person: int) -> dict[str, Any]:
    row: dict[str, Any] = {
        "x": VALUES[int(rng.integers(len(VALUES)))],
        "c": LABELS[int(rng.integers(len(LABELS)))],
        "k": int(rng.choice([*GROUPING.keys, OUTSIDE])),
    }
    if op == "merge":
        row = {"x": row["x"], "c": row["c"], "store": int(rng.integers(1, 4))}
    elif op == "explode":
        row["k"] = [int(k) for k in rng.choice([0, 1, 2, OUTSIDE], size=int(rng.integers(4)))]
    elif op == "private-merge":
        row |= {"u": person, "side": int(rng.integers(2))}
    return row


def _frame(rows: list[dict[str, Any]], op: str, unit: bool) -> pd.DataFrame:
    df = pd.DataFrame(rows)
    if op == "explode":
        df["k"] = pd.Series(list(df["k"]), dtype=LIST_INTS)
    bounds = {"privacy_unit": "u", "max_rows": 2, "max_groups": 2} if unit else {}
    df.dp.set_budget(epsilon=1e9, seed=0, **bounds)  # type: ignore[arg-type]
    return df


def _kept(kind: Kind[Any, Any], frame: pd.DataFrame, grouped: bool) -> tuple[Any, ...]:
    """The rows a kind reads of ``frame``, each row's key code and cell."""
    n_keys = len(GROUPING.keys) if grouped else 1
    rows = kind.read(frame, n_keys)
    codes = GROUPING.codes(frame) if grouped else np.zeros(len(frame), dtype=np.int64)
    cells, _ = kind.cells(rows)
    cells = np.zeros(len(frame), dtype=np.int64) if cells is None else cells
    return rows, codes, cells, n_keys


def _choices(rows: list[int], codes: np.ndarray, cells: np.ndarray, k: int, g: int | None) -> set:
    """Every set of ``rows`` (one unit's) the bounding may keep: ``g`` keys, ``k`` rows a cell."""
    valid = [r for r in rows if codes[r] >= 0 and cells[r] >= 0]
    by_key: dict[int, list[int]] = {}
    for r in valid:
        by_key.setdefault(int(codes[r]), []).append(r)
    n = len(by_key) if g is None else min(g, len(by_key))
    found: set[tuple[int, ...]] = set()
    for keys in itertools.combinations(sorted(by_key), n):
        by_cell: dict[tuple[int, int], list[int]] = {}
        for key in keys:
            for r in by_key[key]:
                by_cell.setdefault((key, int(cells[r])), []).append(r)
        options = [
            list(itertools.combinations(members, min(k, len(members))))
            for members in by_cell.values()
        ]
        for pick in itertools.product(*options):
            found.add(tuple(sorted(itertools.chain.from_iterable(pick))))
    return found


def _blocks(kind: Kind[Any, Any], plan: Any, read: tuple[Any, ...], kept: list[int]) -> Any:
    rows, codes, _, n_keys = read
    mask = np.zeros(rows.n, dtype=np.bool_)
    mask[kept] = True
    if kind.counts_kept():
        stats = kind.from_counts(np.bincount(codes[mask], minlength=n_keys).astype(np.int64))
    else:
        stats = kind.tally(plan, rows.take(mask), codes[mask], n_keys)
    return tuple([np.asarray(b, dtype=np.int64) for b in kind.noise_free(plan, stats, n_keys)])


def _rows_of_units(frame: pd.DataFrame, unit: Hashable) -> dict[Any, list[int]]:
    ids = frame[unit].to_numpy()
    out: dict[Any, list[int]] = {}
    for position, value in enumerate(ids):
        out.setdefault(value, []).append(position)
    return out


def _signature(frame: pd.DataFrame, rows: list[int]) -> list[tuple[Any, ...]]:
    """The values of ``rows``, as a sorted multiset (what a release can tell of them)."""
    return sorted(tuple(map(repr, row)) for row in frame.iloc[rows].itertuples(index=False))


def _check_pair(op: str, before: pd.DataFrame, after: pd.DataFrame, adjacency: str) -> None:
    """``before`` and ``after`` (derived from neighbours) differ in one unit's rows, bounded."""
    binding = binding_of(after)
    assert binding is not None, op
    assert binding.unit is not None, f"{op}: no unit"
    unit, (k, g) = binding.unit, binding.defaults or (binding.budget.max_rows, None)
    assert k is not None
    units_b, units_a = _rows_of_units(before, unit), _rows_of_units(after, unit)
    changed = [
        u
        for u in set(units_b) | set(units_a)
        if _signature(before, units_b.get(u, [])) != _signature(after, units_a.get(u, []))
    ]
    assert len(changed) <= 1, f"{op}: {len(changed)} units changed"
    if not changed:
        return
    (who,) = changed
    for kind in [KINDS[name].examples(COLUMNS)[0] for name in sorted(KINDS)]:
        if not set(kind.columns()) <= set(after.columns):
            continue
        for grouped in (False, True):
            planned = plan_release(
                kind,
                GROUPING if grouped else None,
                adjacency,
                root=False,
                unit=str(unit),
                max_rows=k,
                max_groups=(g or k) if grouped else None,
            )
            found: list[list[tuple[np.ndarray, ...]]] = []
            for frame, units in ((before, units_b), (after, units_a)):
                read = _kept(kind, frame, grouped)
                _, codes, cells, _ = read
                others = [
                    r
                    for u, members in units.items()
                    if u != who
                    for r in min(_choices(members, codes, cells, k, planned.neighbours.max_groups))
                ]
                options = _choices(
                    units.get(who, []), codes, cells, k, planned.neighbours.max_groups
                )
                found.append([_blocks(kind, planned.plan, read, [*others, *o]) for o in options])
            declared = kind.declared(planned.plan)
            for one, other in itertools.product(*found):
                worst = worst_over([one, other], declared, star=True)
                for w in worst:
                    assert w.measured <= w.declared, (
                        f"{op} then {kind!r} under {planned.neighbours}: moved by {w.measured} "
                        f"({w.norm}), the plan declares {w.declared}"
                    )


@pytest.mark.parametrize("op", JOINS)
def test_no_change_of_one_row_or_person_moves_a_release_after_a_join_beyond_its_plan(
    op: str,
) -> None:
    unit, derive = JOINS[op]
    rng = np.random.default_rng(seed_of("joins", op))
    for _ in range(FRAMES):
        rows = [_original_row(rng, op, person=i // 2) for i in range(ROWS)]
        base = derive(_frame(rows, op, unit))
        for _ in range(6):  # one row (one person's rows) added, or one row's values changed
            if unit:
                person = int(rng.integers(0, ROWS // 2 + 1))  # one of them, or a new one
                without = [r for r in rows if r["u"] != person]
                mine = [_original_row(rng, op, person) for _ in range(int(rng.integers(2, 6)))]
                pairs = [("add_remove", without), ("substitute", [*without, *mine])]
                if person == ROWS // 2:
                    pairs.append(("add_remove", [*rows, *mine]))
            else:
                changed = list(rows)
                changed[int(rng.integers(ROWS))] = _original_row(rng, op, 0)
                pairs = [
                    ("add_remove", [*rows, _original_row(rng, op, 0)]),
                    ("substitute", changed),
                ]
            for adjacency, new in pairs:
                _check_pair(op, base, derive(_frame(new, op, unit)), adjacency)
