"""Generated example data for the demo, the notebooks and the benchmarks.

These frames are synthetic (no real person is in them), so examples may
compare private answers with the truth.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = [
    "CUTS",
    "DEPARTMENTS",
    "HEAVY_BUYERS_PRODUCT",
    "LEVELS",
    "PRODUCTS",
    "REGIONAL_FAVOURITES",
    "REGIONS",
    "orders",
    "prices",
    "salaries",
    "sales",
]

DEPARTMENTS = ("Engineering", "Operations", "Sales")
LEVELS = ("junior", "senior", "lead")
PRODUCTS = (
    "kettle",
    "toaster",
    "blender",
    "coffee grinder",
    "air fryer",
    "rice cooker",
    "hand mixer",
    "juicer",
    "waffle iron",
    "teapot",
    "kitchen scale",
    "thermos",
    "egg timer",
    "milk frother",
    "soup maker",
    "pasta machine",
)
REGIONS = ("North", "East", "South", "West")
#: The grades of :func:`prices`' ``cut`` column, worst first.
CUTS = ("Fair", "Good", "Very Good", "Premium", "Ideal")
# Per region (in REGIONS order), the product it likes 1.5 times as much as the kettle.
REGIONAL_FAVOURITES = (None, "toaster", "blender", "air fryer")
# The product that heavy buyers (cafés, offices) order again and again.
HEAVY_BUYERS_PRODUCT = "thermos"
PRICES = (
    29.0,
    35.0,
    59.0,
    45.0,
    99.0,
    79.0,
    39.0,
    69.0,
    49.0,
    25.0,
    19.0,
    22.0,
    9.0,
    15.0,
    89.0,
    119.0,
)


def salaries(n: int = 300, *, seed: int = 0) -> pd.DataFrame:
    """A synthetic company: one row per employee.

    Columns: ``employee`` (id), ``dept`` (one of :data:`DEPARTMENTS`),
    ``level`` (one of :data:`LEVELS`), ``age``, ``salary`` (lognormal, median
    about 60,000) and ``bonus`` (missing for about a fifth of employees).
    """
    if n < 0:
        raise ValueError(f"`n` must be a non-negative integer, got {n!r}.")
    rng = np.random.Generator(np.random.PCG64(seed))
    dept = rng.choice(len(DEPARTMENTS), size=n, p=[0.5, 0.2, 0.3])
    level = rng.choice(len(LEVELS), size=n, p=[0.5, 0.35, 0.15])
    uplift = np.array([1.15, 0.9, 1.0])[dept] * np.array([0.85, 1.2, 1.6])[level]
    salary = np.round(60_000 * uplift * rng.lognormal(0.0, 0.35, size=n), -2)
    bonus = np.round(salary * rng.uniform(0.0, 0.15, size=n), -1)
    bonus[rng.uniform(size=n) < 0.2] = np.nan
    return pd.DataFrame(
        {
            "employee": np.arange(1, n + 1),
            "dept": np.array(DEPARTMENTS, dtype=object)[dept],
            "level": np.array(LEVELS, dtype=object)[level],
            "age": rng.integers(21, 66, size=n),
            "salary": salary,
            "bonus": bonus,
        }
    )


def sales(n: int = 2_000, *, seed: int = 0, zipf: float = 1.0) -> pd.DataFrame:
    """A synthetic shop: one row per customer, the one product they bought.

    Product popularity is Zipf-like: overall, the ``k``-th product of
    :data:`PRODUCTS` is bought with probability about proportional to
    ``1 / k**zipf``, so ``"kettle"`` is the best seller, with a close race
    behind it.  Three regions of :data:`REGIONS` have a local favourite
    (:data:`REGIONAL_FAVOURITES`) bought 1.5 times as often as the kettle
    there, so the regional best sellers differ.

    Columns: ``customer`` (id), ``region``, ``product``, ``quantity`` (1 to
    5) and ``revenue`` (quantity times the product's unit price in
    :data:`PRICES`).

    Examples
    --------
    >>> df = sales(1_000, seed=1)
    >>> list(df.columns)
    ['customer', 'region', 'product', 'quantity', 'revenue']
    >>> df["product"].value_counts().index[0]
    'kettle'
    """
    if n < 0:
        raise ValueError(f"`n` must be a non-negative integer, got {n!r}.")
    if not zipf >= 0:
        raise ValueError(f"`zipf` must be a non-negative number, got {zipf!r}.")
    rng = np.random.Generator(np.random.PCG64(seed))
    weights = np.tile(
        1.0 / np.arange(1, len(PRODUCTS) + 1, dtype=np.float64) ** zipf, (len(REGIONS), 1)
    )
    for r, favourite in enumerate(REGIONAL_FAVOURITES):
        if favourite is not None:
            weights[r, PRODUCTS.index(favourite)] = 1.5  # the kettle's weight is 1
    popularity = weights / weights.sum(axis=1, keepdims=True)
    region = rng.choice(len(REGIONS), size=n, p=[0.35, 0.25, 0.25, 0.15])
    # Inverse-CDF sampling of each row's product from its region's popularity.
    cumulative = np.cumsum(popularity, axis=1)
    cumulative[:, -1] = 1.0
    draws = rng.uniform(size=n)
    product = (draws[:, None] > cumulative[region]).sum(axis=1)
    quantity = np.minimum(1 + rng.poisson(0.5, size=n), 5)
    revenue = np.round(np.asarray(PRICES)[product] * quantity, 2)
    return pd.DataFrame(
        {
            "customer": np.arange(1, n + 1),
            "region": np.array(REGIONS, dtype=object)[region],
            "product": np.array(PRODUCTS, dtype=object)[product],
            "quantity": quantity,
            "revenue": revenue,
        }
    )


def orders(n_customers: int = 2_000, *, seed: int = 0) -> pd.DataFrame:
    """A synthetic shop's order log: one row per order, many rows per customer.

    The number of orders per customer is skewed: most customers order once
    or a few times (a geometric count, mean 2.2, rarely above 10), and about
    4 % are heavy buyers (cafés, offices) with 20 to 60 orders each, who
    make about two fifths of all rows. Ordinary orders follow the Zipf-like popularity of
    :func:`sales` (``"kettle"`` first); heavy buyers order
    :data:`HEAVY_BUYERS_PRODUCT` (``"thermos"``) three times in four. So the
    best seller **by rows** is the thermos while the best seller **by
    customers** (how many customers bought it) is the kettle: a question
    about people needs a privacy unit (``privacy_unit="customer_id"``).

    Each customer lives in one region of :data:`REGIONS`. Columns:
    ``customer_id`` (int, 1 to ``n_customers``; every customer has at least
    one order), ``region``, ``product`` (one of :data:`PRODUCTS`) and
    ``amount`` (the product's price in :data:`PRICES` times a quantity of 1
    to 5). Rows are in a random order. Deterministic for a ``seed``.

    Examples
    --------
    >>> tx = orders(2_000, seed=0)
    >>> list(tx.columns)
    ['customer_id', 'region', 'product', 'amount']
    >>> tx["product"].value_counts().index[0]  # by rows
    'thermos'
    >>> tx.drop_duplicates(["customer_id", "product"])["product"].value_counts().index[0]
    'kettle'
    """
    if n_customers < 0:
        raise ValueError(f"`n_customers` must be a non-negative integer, got {n_customers!r}.")
    rng = np.random.Generator(np.random.PCG64(seed))
    heavy = rng.uniform(size=n_customers) < 0.04
    per_customer = np.where(
        heavy, rng.integers(20, 61, size=n_customers), rng.geometric(0.45, size=n_customers)
    )
    customer = np.repeat(np.arange(n_customers), per_customer)
    n = customer.size
    home = rng.choice(len(REGIONS), size=n_customers, p=[0.35, 0.25, 0.25, 0.15])
    popularity = 1.0 / np.arange(1, len(PRODUCTS) + 1, dtype=np.float64)
    cumulative = np.cumsum(popularity / popularity.sum())
    cumulative[-1] = 1.0
    product = np.searchsorted(cumulative, rng.uniform(size=n), side="right")
    favourite = heavy[customer] & (rng.uniform(size=n) < 0.75)
    product[favourite] = PRODUCTS.index(HEAVY_BUYERS_PRODUCT)
    quantity = np.minimum(1 + rng.poisson(0.5, size=n), 5)
    amount = np.round(np.asarray(PRICES)[product] * quantity, 2)
    order = rng.permutation(n)
    return pd.DataFrame(
        {
            "customer_id": (customer + 1).astype(np.int64)[order],
            "region": np.array(REGIONS, dtype=object)[home[customer]][order],
            "product": np.array(PRODUCTS, dtype=object)[product][order],
            "amount": amount[order],
        }
    )


def prices(n: int = 54_000, *, seed: int = 0) -> pd.DataFrame:
    """A synthetic gem catalogue shaped like the well-known diamonds prices: a long right tail.

    ``price`` (whole dollars) is lognormal (log-mean 7.79, log-sd 1.01, as the
    diamonds prices) kept within [326, 18,823], their range: median about
    2,400, mean about 3,600, the top thousandth above 18,000.  ``carat``
    grows with the price (``price ≈ 4,000·carat**1.7``, with scatter) and
    ``cut`` is one of :data:`CUTS` (40 % "Ideal"), independent of both.
    Deterministic for a ``seed``.

    Examples
    --------
    >>> df = prices(54_000, seed=0)
    >>> list(df.columns), int(df["price"].max()) <= 18_823
    (['carat', 'cut', 'price'], True)
    """
    if n < 0:
        raise ValueError(f"`n` must be a non-negative integer, got {n!r}.")
    rng = np.random.Generator(np.random.PCG64(seed))
    found = np.empty(0)
    while found.size < n:  # truncated: draw, keep what falls in the range
        draw = np.exp(rng.normal(7.79, 1.01, size=n + 64))
        found = np.concatenate([found, draw[(draw >= 326) & (draw <= 18_823)]])
    price = np.round(found[:n])
    carat = np.round((price / 4_000) ** (1 / 1.7) * np.exp(rng.normal(0, 0.08, size=n)), 2)
    cut = rng.choice(len(CUTS), size=n, p=[0.03, 0.09, 0.22, 0.26, 0.40])
    return pd.DataFrame(
        {
            "carat": np.maximum(carat, 0.2),
            "cut": pd.Categorical.from_codes(cut, dtype=pd.CategoricalDtype(list(CUTS))),
            "price": price.astype(np.int64),
        }
    )
