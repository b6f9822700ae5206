"""The generated example frames: deterministic, and shaped as their docstrings say."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from pandas_dp import datasets


def test_sales_is_reproducible_from_its_seed() -> None:
    pd.testing.assert_frame_equal(datasets.sales(500, seed=4), datasets.sales(500, seed=4))
    assert not datasets.sales(500, seed=4).equals(datasets.sales(500, seed=5))


def test_sales_has_one_row_per_customer_with_declared_values() -> None:
    df = datasets.sales(3_000, seed=2)
    assert list(df.columns) == ["customer", "region", "product", "quantity", "revenue"]
    assert df["customer"].is_unique
    assert set(df["region"]) <= set(datasets.REGIONS)
    assert set(df["product"]) <= set(datasets.PRODUCTS)
    assert df["quantity"].between(1, 5).all()
    price = df["product"].map(dict(zip(datasets.PRODUCTS, datasets.PRICES, strict=True)))
    np.testing.assert_allclose(df["revenue"], price * df["quantity"])


def test_sales_best_sellers_are_the_kettle_and_the_regional_favourites() -> None:
    df = datasets.sales(40_000, seed=0)
    assert df["product"].value_counts().index[0] == "kettle"
    winners = df.groupby("region")["product"].agg(lambda s: s.value_counts().index[0])
    expected = [fav or "kettle" for fav in datasets.REGIONAL_FAVOURITES]
    assert winners.reindex(datasets.REGIONS).tolist() == expected


def test_sales_popularity_is_zipf_like_outside_the_favourites() -> None:
    df = datasets.sales(200_000, seed=1)
    north = df.loc[df["region"] == "North", "product"].value_counts(normalize=True)
    ratio = north["kettle"] / north[datasets.PRODUCTS[3]]
    assert ratio == pytest.approx(4.0, rel=0.1)  # 1/1 against 1/4


@pytest.mark.parametrize("generator", [datasets.sales, datasets.salaries])
def test_generators_refuse_a_negative_size(generator: object) -> None:
    with pytest.raises(ValueError, match="`n` must be a non-negative integer"):
        generator(-1)  # type: ignore[operator]


def test_sales_of_nobody_is_an_empty_frame_with_the_columns() -> None:
    df = datasets.sales(0)
    assert df.empty
    assert list(df.columns) == ["customer", "region", "product", "quantity", "revenue"]


def test_orders_is_reproducible_from_its_seed() -> None:
    pd.testing.assert_frame_equal(datasets.orders(400, seed=4), datasets.orders(400, seed=4))
    assert not datasets.orders(400, seed=4).equals(datasets.orders(400, seed=5))


def test_orders_has_the_declared_columns_dtypes_and_values() -> None:
    tx = datasets.orders(3_000, seed=2)
    assert list(tx.columns) == ["customer_id", "region", "product", "amount"]
    assert tx["customer_id"].dtype == np.int64
    assert tx["amount"].dtype == np.float64
    assert tx["region"].dtype == datasets.sales(1)["region"].dtype  # the library's string dtype
    assert set(tx["customer_id"]) == set(range(1, 3_001))  # everyone has at least one order
    assert set(tx["region"]) <= set(datasets.REGIONS)
    assert set(tx["product"]) <= set(datasets.PRODUCTS)
    assert (tx.groupby("customer_id")["region"].nunique() == 1).all()  # one home region each
    price = tx["product"].map(dict(zip(datasets.PRODUCTS, datasets.PRICES, strict=True)))
    quantity = tx["amount"] / price
    np.testing.assert_allclose(quantity, quantity.round())
    assert quantity.between(1, 5).all()


def test_orders_per_customer_are_skewed_with_a_few_heavy_buyers() -> None:
    tx = datasets.orders(20_000, seed=0)
    per_customer = tx.groupby("customer_id").size()
    assert per_customer.median() <= 2
    assert per_customer.quantile(0.9) <= 6
    heavy = per_customer[per_customer >= 20]
    assert 0.02 < len(heavy) / len(per_customer) < 0.06  # a few customers ...
    assert 0.3 < heavy.sum() / len(tx) < 0.55  # ... with a large share of the rows
    assert per_customer.max() >= 50


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_orders_best_seller_by_rows_differs_from_best_seller_by_customers(seed: int) -> None:
    tx = datasets.orders(2_000, seed=seed)
    by_rows = tx["product"].value_counts()
    by_customers = tx.drop_duplicates(["customer_id", "product"])["product"].value_counts()
    assert by_rows.index[0] == datasets.HEAVY_BUYERS_PRODUCT
    assert by_customers.index[0] == "kettle"
    assert by_customers["kettle"] > 3 * by_customers[datasets.HEAVY_BUYERS_PRODUCT]


def test_orders_of_nobody_is_an_empty_frame_with_the_columns() -> None:
    tx = datasets.orders(0)
    assert tx.empty
    assert list(tx.columns) == ["customer_id", "region", "product", "amount"]


def test_orders_refuses_a_negative_size() -> None:
    with pytest.raises(ValueError, match="`n_customers` must be a non-negative integer"):
        datasets.orders(-1)
