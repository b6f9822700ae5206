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
