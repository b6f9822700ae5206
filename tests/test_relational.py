"""Joining and reshaping tables (surface/relational.py): merge, join, concat, explode.

What each derivation binds (unit, default bounds, lineage), what it refuses
from the schemas alone before anything is spent, exact answers at a huge ε,
the same release on Dask, how ``max_rows="auto"`` picks the cap of a total,
and empirical audits (person- and row-level) of count, sum and mean after a
public merge of key multiplicity 3, an explode of lists of up to 10, a merge
of two private tables on the unit and a concat of two filters of one frame,
each with a positive control: without the unit of original rows (a missing
stability factor) or without the bounding, the same audit finds ε̂ > ε.
"""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from pandas_dp.accounting.budget import binding_of
from pandas_dp.errors import MissingBudgetError
from pandas_dp.kinds.truncation import CAPS, RowsCap
from pandas_dp.pipeline import run as pipeline
from pandas_dp.pipeline.run import PandasFrame
from pandas_dp.surface import relational
from pandas_dp.surface.relational import ROW_UNIT, Derived

LISTS = pd.ArrowDtype(pa.list_(pa.string()))


@pytest.fixture
def shop() -> pd.DataFrame:
    """Orders of five stores, one row per order (no privacy unit), a seeded budget."""
    df = pd.DataFrame({"store": [1, 2, 3, 1, 2, 5], "amount": [10.0, 20, 30, 40, 50, 60]})
    df.dp.set_budget(epsilon=1e12, seed=3)
    return df


STORES = pd.DataFrame({"store": [1, 2, 3], "region": ["N", "S", "N"]})
#: Store 1 has three rows: a private row of store 1 becomes three rows.
BUNDLES = pd.DataFrame({"store": [1, 1, 1, 2], "part": ["a", "b", "c", "a"]})


def test_a_public_table_with_one_row_per_key_keeps_rows_persons(shop: pd.DataFrame) -> None:
    merged = shop.dp.merge(STORES, on="store", how="left")
    binding = binding_of(merged)
    assert binding is not None
    assert binding.unit is None
    assert not binding.root
    assert binding.lineage is binding_of(shop).lineage  # type: ignore[union-attr]
    assert merged.index.equals(shop.index)  # each row keeps its label
    assert merged["region"].isna().tolist() == [False] * 5 + [True]
    counts = merged.dp.groupby("region", keys=["N", "S"]).count(epsilon=1e6)
    assert counts.tolist() == [3, 2]


def test_a_public_table_with_several_rows_per_key_makes_original_rows_the_unit(
    shop: pd.DataFrame,
) -> None:
    merged = shop.dp.merge(BUNDLES, on="store")
    binding = binding_of(merged)
    assert binding is not None
    assert binding.unit == ROW_UNIT
    assert binding.defaults == (3, 3)  # the public table's largest key multiplicity
    assert merged[ROW_UNIT].tolist() == [0, 0, 0, 1, 3, 3, 3, 4]  # the source rows' labels
    assert merged.dp.count(epsilon=1e6) == 8
    entry = shop.dp.budget.entries[-1]
    assert (entry.privacy_unit, entry.max_rows) == (ROW_UNIT, 3)
    # a bound below the fan-out keeps at most that many rows of each original row
    assert merged.dp.count(epsilon=1e6, max_rows=1) == 4


def test_a_person_keeps_the_unit_and_its_bound_grows_with_the_fan_out() -> None:
    tx = pd.DataFrame({"c": [1, 1, 2], "store": [1, 2, 1], "amount": [1.0, 2.0, 3.0]})
    tx.dp.set_budget(epsilon=1e12, privacy_unit="c", max_rows=2, max_groups=1, seed=1)
    merged = tx.dp.merge(BUNDLES, on="store")
    binding = binding_of(merged)
    assert binding is not None
    assert binding.unit == "c"
    assert binding.defaults == (6, 1)
    assert merged.dp.count(epsilon=1e6) == 7
    assert merged.dp.count(epsilon=1e6, max_rows=2) == 4
    unchanged = tx.dp.merge(STORES, on="store")
    assert binding_of(unchanged).defaults is None  # type: ignore[union-attr]


def test_join_matches_a_public_index(shop: pd.DataFrame) -> None:
    joined = shop.dp.join(BUNDLES.set_index("store"), on="store", how="inner")
    assert binding_of(joined).unit == ROW_UNIT  # type: ignore[union-attr]
    assert joined.dp.count(epsilon=1e6) == 8
    with pytest.raises(ValueError, match="suffix"):
        shop.dp.join(pd.DataFrame({"amount": [1.0]}, index=pd.Index([1], name="s")), on="store")


@pytest.mark.parametrize("how", ["right", "outer"])
def test_right_and_outer_joins_of_a_public_table_are_refused(shop: pd.DataFrame, how: str) -> None:
    with pytest.raises(ValueError, match="belong to no person"):
        shop.dp.merge(STORES, on="store", how=how)


@pytest.mark.parametrize(
    ("other", "error", "match"),
    [
        (STORES.astype({"store": "int32"}), TypeError, "of one dtype"),
        (STORES.astype({"store": "str"}), TypeError, "of one dtype"),
        (STORES.rename(columns={"store": "shop"}), KeyError, "no column 'store'"),
        (STORES.assign(_dp_row=1), ValueError, "_dp_row"),
    ],
    ids=["int32", "str", "missing", "row-column"],
)
def test_public_joins_are_refused_from_the_schema(
    shop: pd.DataFrame, other: pd.DataFrame, error: type[Exception], match: str
) -> None:
    with pytest.raises(error, match=match):
        shop.dp.merge(other, on="store")
    assert shop.dp.budget.spent == 0


def test_a_table_derived_from_private_rows_is_not_public(shop: pd.DataFrame) -> None:
    derived = shop.groupby("store", as_index=False)["amount"].sum()
    with pytest.raises(ValueError, match="not a public table"):
        shop.dp.merge(derived, on="store")


def test_plain_pandas_joins_point_at_the_dp_versions(shop: pd.DataFrame) -> None:
    with pytest.raises(MissingBudgetError, match=r"df\.dp\.merge.*df\.dp\.concat"):
        pd.concat([shop, shop]).dp.count(epsilon=1)
    with pytest.raises(MissingBudgetError, match=r"df\.dp\.merge"):
        shop.merge(STORES, on="store").dp.count(epsilon=1)


# ------------------------------------------------------------------ tables of the same people


@pytest.fixture
def customers() -> tuple[pd.DataFrame, pd.DataFrame]:
    """Orders and returns of the same customers, one budget, unit ``c``."""
    tx = pd.DataFrame({"c": [1, 1, 2, 3, 3, 3], "amount": [1.0, 2, 3, 4, 5, 6]})
    tx.dp.set_budget(epsilon=1e12, privacy_unit="c", max_rows=3, seed=2)
    returns = pd.DataFrame({"c": [1, 3, 3, 4], "reason": ["a", "b", "c", "d"]})
    returns.dp.inherit(tx)
    return tx, returns


def test_two_tables_of_the_same_people_join_on_the_unit(
    customers: tuple[pd.DataFrame, pd.DataFrame],
) -> None:
    tx, returns = customers
    both = tx.dp.merge(returns, on="c")
    binding = binding_of(both)
    assert binding is not None
    assert binding.unit == "c"
    assert binding.defaults == (9, None)
    assert len(both) == 2 + 6
    assert both.dp.count(epsilon=1e6) == 8
    assert both.dp.count(epsilon=1e6, max_rows=2) == 4
    left = tx.dp.merge(returns, on="c", how="outer")
    assert left.dp.count(epsilon=1e6) == 10  # customer 2 without returns, 4 without orders


def test_two_frames_of_one_named_budget_are_tables_of_the_same_people() -> None:
    tx = pd.DataFrame({"c": [1, 2], "x": [1.0, 2.0]})
    tx.dp.set_budget(epsilon=5, privacy_unit="c", name="i30.shop", seed=1)
    returns = pd.DataFrame({"c": [2, 2], "y": [1.0, 2.0]})
    returns.dp.set_budget(epsilon=5, privacy_unit="c", name="i30.shop", seed=1)
    both = tx.dp.merge(returns, on="c")
    both.dp.count(epsilon=1, max_rows=2)
    assert tx.dp.budget.spent == returns.dp.budget.spent == 1


def test_private_joins_are_refused_off_the_unit_or_across_budgets(
    customers: tuple[pd.DataFrame, pd.DataFrame],
) -> None:
    tx, returns = customers
    with pytest.raises(ValueError, match="include the privacy unit"):
        tx.dp.merge(returns.dp.assign(amount=1.0), on="amount")
    other = pd.DataFrame({"c": [1], "z": [1]})
    other.dp.set_budget(epsilon=1, privacy_unit="c")
    with pytest.raises(ValueError, match="not the same one"):
        tx.dp.merge(other, on="c")
    rows = pd.DataFrame({"k": [1, 2]})
    rows.dp.set_budget(epsilon=1)
    with pytest.raises(TypeError, match="privacy unit in its keys"):
        rows.dp.merge(rows.dp.filter(rows.k > 1), on="k")


# ----------------------------------------------------------------------- concat, explode


def test_a_concat_of_two_filters_bounds_each_original_row(shop: pd.DataFrame) -> None:
    cheap = shop.dp.filter(shop.amount < 45)
    north = shop.dp.filter(shop.store == 1)
    both = shop.dp.concat([cheap, north])
    binding = binding_of(both)
    assert binding is not None
    assert binding.unit == ROW_UNIT
    assert binding.defaults == (2, 2)
    assert both[ROW_UNIT].tolist() == [0, 1, 2, 3, 0, 3]
    assert both.dp.count(epsilon=1e6) == 6
    assert both.dp.count(epsilon=1e6, max_rows=1) == 4  # the original rows
    merged = shop.dp.merge(BUNDLES, on="store").dp.select(["store", "amount", ROW_UNIT])
    stacked = shop.dp.concat([merged, north])  # a merge of the same lineage stacks too
    assert binding_of(stacked).defaults == (4, 4)  # type: ignore[union-attr]
    assert stacked[ROW_UNIT].tolist() == [0, 0, 0, 1, 3, 3, 3, 4, 0, 3]


def test_a_concat_is_refused_without_a_known_origin(shop: pd.DataFrame) -> None:
    inherited = shop.reset_index(drop=True).dp.inherit()
    with pytest.raises(ValueError, match="RangeIndex"):
        shop.dp.concat([shop, inherited])
    with pytest.raises(ValueError, match="bound to this frame's budget"):
        shop.dp.concat([shop, STORES])
    with pytest.raises(ValueError, match="same columns"):
        shop.dp.concat([shop, shop.dp.select(["amount"])])


def test_a_concat_of_persons_sums_their_bounds(
    customers: tuple[pd.DataFrame, pd.DataFrame],
) -> None:
    tx, _ = customers
    months = tx.dp.concat([tx.dp.filter(tx.amount < 3), tx.dp.filter(tx.amount > 1)])
    assert binding_of(months).defaults == (6, None)  # type: ignore[union-attr]
    assert months.dp.count(epsilon=1e6) == 2 + 5
    with pytest.raises(ValueError, match="per_unit"):
        tx.dp.concat([tx, tx.dp.per_unit(n=("amount", "size"))])


def test_explode_a_list_column(shop: pd.DataFrame) -> None:
    tags = pd.Series([["x", "y", "z"], ["x"], [], None, ["y", "y"], ["z"]], dtype=LISTS)
    posts = shop.dp.assign(tags=tags)
    rows = posts.dp.explode("tags", max_rows=2)
    binding = binding_of(rows)
    assert binding is not None
    assert binding.unit == ROW_UNIT
    assert binding.defaults == (2, 2)
    assert rows[ROW_UNIT].tolist() == [0, 0, 0, 1, 2, 3, 4, 4, 5]
    assert rows.dp.count(epsilon=1e6) == 8  # at most two rows of post 0
    by_tag = rows.dp.groupby("tags", keys=["x", "y", "z"])
    counted = by_tag.count(epsilon=1e6, max_rows=1, max_groups=3)
    assert counted.tolist() == [2, 2, 2]  # posts per tag


@pytest.mark.parametrize("dtype", ["object", "str", "float64"])
def test_explode_is_refused_from_the_dtype(shop: pd.DataFrame, dtype: str) -> None:
    values = pd.Series([["x"]] * 6, dtype=object) if dtype == "object" else shop.amount
    frame = shop.dp.assign(tags=values.astype(dtype))
    with pytest.raises(TypeError, match="not a list dtype"):
        frame.dp.explode("tags", max_rows=2)


# --------------------------------------------------------------------------- Dask


def test_dask_merges_give_the_pandas_release() -> None:
    dd = pytest.importorskip("dask.dataframe")
    pytest.importorskip("pandas_dp.dask")
    rng = np.random.default_rng(0)
    tx = pd.DataFrame(
        {"c": rng.integers(0, 300, 2000), "store": rng.integers(1, 4, 2000), "x": rng.random(2000)}
    )
    ret = pd.DataFrame({"c": rng.integers(0, 300, 500), "why": rng.integers(0, 3, 500)})

    def answers(make: Callable[[pd.DataFrame], Any]) -> list[Any]:
        t, r = make(tx), make(ret)
        t.dp.set_budget(epsilon=10, privacy_unit="c", max_rows=5, seed=4)
        r.dp.inherit(t)
        joined = t.dp.merge(BUNDLES, on="store")
        unitless = make(tx.drop(columns="c"))
        unitless.dp.set_budget(epsilon=10, seed=5)
        plain = unitless.dp.merge(STORES, on="store")
        return [
            joined.dp.count(epsilon=1),
            t.dp.merge(r, on="c").dp.count(epsilon=1, max_rows=20),
            plain.dp.groupby("region", keys=["N", "S"]).sum("x", clip=(0, 1), epsilon=1).tolist(),
        ]

    assert answers(lambda f: f.copy()) == answers(lambda f: dd.from_pandas(f, npartitions=3))
    unitless = dd.from_pandas(tx.drop(columns="c"), npartitions=2)
    unitless.dp.set_budget(epsilon=1)
    with pytest.raises(ValueError, match="one row per key"):
        unitless.dp.merge(BUNDLES, on="store")


# ------------------------------------------------------------------ max_rows="auto"


def test_the_cap_of_a_total_leaves_about_its_noise_in_persons_above() -> None:
    """At ε = 3/4 for the count (t = 2): caps leaving more than ~16 persons above are rare."""
    rng = np.random.default_rng(7)
    rows = np.minimum(np.floor(rng.random(20_000) ** (-1 / 1.5)), 1000).astype(np.int64)
    people = pd.DataFrame({"rows": rows})
    people.dp.set_budget(epsilon=100, seed=1)
    kind = RowsCap(Fraction(1, 4), "rows", ("epsilon", Fraction(3, 4)))
    chosen = [pipeline.run(PandasFrame(people), kind, None) for _ in range(200)]
    above = np.array([(rows > c).sum() for c in chosen])
    assert np.median(above) <= 10
    assert np.mean(above <= 16) >= 0.9
    assert max(chosen) <= 4 * rows.max()  # no run-off to the public grid's top
    assert set(chosen) <= set(CAPS)


def test_max_rows_auto_on_a_join_keeps_the_heavy_persons_a_quantile_would_cut() -> None:
    """Orders (Pareto rows per customer) × returns of the same customers, 20,000 customers.

    The 0.9 quantile of joined rows per customer cuts nearly nine tenths of the
    count; the cap of a total keeps the heavy customers (bench/bench_relational.py
    measures it against the best fixed cap, on 10**5 customers).
    """
    rng = np.random.default_rng(3)
    orders = np.minimum(np.floor(rng.random(20_000) ** (-1 / 1.5)), 200).astype(np.int64)
    tx = pd.DataFrame({"c": np.repeat(np.arange(20_000), orders)})
    tx.dp.set_budget(epsilon=100, privacy_unit="c", seed=9)
    returns = tx.dp.filter(rng.random(len(tx)) < 0.3).dp.select(["c"])
    both = tx.dp.merge(returns, on="c")
    truth = len(both)
    auto, quantile = [], []
    for _ in range(10):
        auto.append(abs(both.dp.count(epsilon=1, max_rows="auto") - truth) / truth)
        cut = both.dp.rows_per_unit(0.9, candidates=range(1, 5_000), epsilon=0.25)  # the old rule
        quantile.append(abs(both.dp.count(epsilon=0.75, max_rows=cut) - truth) / truth)
    assert np.median(auto) < np.median(quantile) / 3
    assert min(quantile) > 0.8


# ---------------------------------------------------------------------------- audits

N_AUDIT = 20_000
EPSILON = 1.0
CLIP = (0.0, 10.0)


def _replicated(rows: list[dict[str, Any]], n: int) -> pd.DataFrame:
    """``rows`` repeated for ``n`` replicate keys ``k``; a column ``c`` unique per replicate."""
    frame = pd.DataFrame(rows)
    out = frame.loc[np.tile(frame.index, n)].reset_index(drop=True)
    out["k"] = np.repeat(np.arange(n), len(frame))
    if "c" in out:
        out["c"] = out["k"] * 100 + out["c"]
    return out


def _tags(frame: pd.DataFrame) -> pd.DataFrame:
    frame["tags"] = pd.Series([["t"] * int(n) for n in frame["tags"]], dtype=LISTS)
    return frame


# Each operation: (budget's unit, rows of D per replicate, the row(s) D′ adds, the derivation).
Derive = Callable[[pd.DataFrame], pd.DataFrame]
OPERATIONS: dict[str, tuple[str | None, list[dict[str, Any]], list[dict[str, Any]], Derive]] = {
    # a public table of key multiplicity 3: the row added becomes three rows
    "public-merge": (
        None,
        [{"store": 2, "x": 0.0}, {"store": 3, "x": 0.0}],
        [{"store": 1, "x": 10.0}],
        lambda df: df.dp.merge(BUNDLES, on="store"),
    ),
    # a list of 10 exploded, max_rows=5: the bound cuts the added row's rows to five
    "explode": (
        None,
        [{"tags": 1, "x": 0.0}, {"tags": 3, "x": 0.0}],
        [{"tags": 10, "x": 10.0}],
        lambda df: df.dp.explode("tags", max_rows=5),
    ),
    # two filters of one frame: the added row is in both
    "concat": (
        None,
        [{"x": 0.0}, {"x": 0.0}],
        [{"x": 10.0}],
        lambda df: df.dp.concat([df.dp.filter(df.x >= 0), df.dp.filter(df.x <= 10)]),
    ),
    # orders and returns of the same customers on the unit: 3 orders × 3 returns, max_rows=4
    "private-merge": (
        "c",
        [{"c": 0, "x": 0.0, "kind": "o"}, {"c": 0, "x": 0.0, "kind": "r"}],
        [{"c": 1, "x": 10.0, "kind": k} for k in ("o", "o", "o", "r", "r", "r")],
        lambda df: df.dp.filter(df.kind == "o").dp.merge(
            df.dp.filter(df.kind == "r").dp.select(["c", "k"]), on=["c", "k"]
        ),
    ),
}


def releases(op: str, stat: str, added: bool, seed: int) -> np.ndarray:
    """N_AUDIT releases of ``stat`` after ``op``: one per replicate key, D or D′ in each."""
    unit, rows, extra, derive = OPERATIONS[op]
    frame = _replicated(rows + (extra if added else []), N_AUDIT)
    if op == "explode":
        frame = _tags(frame)
    frame.dp.set_budget(epsilon=1e9, privacy_unit=unit, seed=seed)
    derived = derive(frame)
    unit_of = binding_of(derived).unit  # type: ignore[union-attr]
    bounds: dict[str, Any] = {} if unit_of is None else {"max_groups": 1}  # one replicate each
    if op == "private-merge":
        bounds["max_rows"] = 4
    grouped = derived.dp.groupby("k", keys=pd.RangeIndex(N_AUDIT))
    if stat == "count":
        out = grouped.count(epsilon=EPSILON, **bounds)
    else:
        out = getattr(grouped, stat)("x", clip=CLIP, epsilon=EPSILON, **bounds)
    return out.to_numpy(dtype=float)


def audit(op: str, stat: str, bound: Callable[[np.ndarray, np.ndarray], float]) -> float:
    return bound(releases(op, stat, False, 1), releases(op, stat, True, 2))


@pytest.mark.parametrize("stat", ["count", "sum", "mean"])
@pytest.mark.parametrize("op", OPERATIONS)
def test_a_release_after_a_join_keeps_its_epsilon(
    op: str, stat: str, epsilon_lower_bound: Callable[[np.ndarray, np.ndarray], float]
) -> None:
    measured = audit(op, stat, epsilon_lower_bound)
    assert 0.7 * EPSILON <= measured <= EPSILON  # 0.81 to 0.90 measured


def _no_row_unit(binding: Any, rows: int) -> Derived:
    """A merge, concat or explode that keeps the source's unit and bounds: no stability."""
    return Derived(binding.unit, binding.defaults, binding.lineage)


def _keep_everything(source: Any, units: Any, keys: Any, cells: Any, **kwargs: Any) -> Any:
    return units >= -1


def _naive_concat(self: Any, parts: list[pd.DataFrame], bindings: list[Any]) -> pd.DataFrame:
    """A concat that binds its rows as persons: no unit of original rows."""
    result = pd.concat(parts)
    relational.bind(result, bindings[0].budget, root=False, unit=None)
    return result


@pytest.mark.parametrize(
    ("op", "stat", "mutation"),
    [
        ("public-merge", "count", "stability"),
        ("concat", "count", "stability"),
        ("explode", "sum", "bound"),
        ("private-merge", "mean", "bound"),
    ],
)
def test_the_audit_catches_a_missing_stability_factor_or_bound(
    op: str,
    stat: str,
    mutation: str,
    epsilon_lower_bound: Callable[[np.ndarray, np.ndarray], float],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    if mutation == "stability":
        monkeypatch.setattr(relational, "derived", _no_row_unit)
        monkeypatch.setattr(relational.DPRelational, "_concat_rows", _naive_concat)
    else:
        monkeypatch.setattr(pipeline, "bound_contributions", _keep_everything)
    assert audit(op, stat, epsilon_lower_bound) > EPSILON
