"""``ddf.dp`` on a ``distributed.LocalCluster`` with process workers, started here (no service).

One cluster for the module (two worker processes, one thread each): the
budget, the ledger and the random source stay in this process; a release
asked for inside a worker is refused; a worker killed in the middle of a
release costs its ε once and changes no number, and a task run again
(its worker died, or it failed and had ``retries``) draws nothing from the
budget's source; rounds of buckets
(:func:`pandas_dp.dask._units.bucket_rounds`) give the release of one round,
and the cluster the release of the threaded scheduler.  Skipped when dask or
distributed is not installed.  Timings are benchmarks (``bench/bench_cluster.py``),
never tests.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

dd = pytest.importorskip("dask.dataframe")
dask = pytest.importorskip("dask")
distributed = pytest.importorskip("distributed")

import pandas_dp.dask  # noqa: E402  (after the skip: it imports dask)
import pandas_dp.dask._units as units  # noqa: E402
from pandas_dp import MissingBudgetError  # noqa: E402

KEYS = ["N", "S", "E", "W"]


#: Generous on a loaded machine: every wait of these tests is on an outcome, none on a clock.
TIMEOUT = 180


@pytest.fixture(scope="module")
def client() -> Iterator[Any]:
    timeouts = {"connect": f"{TIMEOUT}s", "tcp": f"{TIMEOUT}s"}
    with (
        dask.config.set({"distributed.comm.timeouts": timeouts}),
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0"
        ) as cluster,
        distributed.Client(cluster, timeout=TIMEOUT) as c,
    ):
        c.wait_for_workers(2, timeout=TIMEOUT)
        yield c


@pytest.fixture(scope="module")
def orders() -> pd.DataFrame:
    """3,000 rows of 400 persons in 5 regions (one not public), some ids missing."""
    rng = np.random.Generator(np.random.PCG64(33))
    n = 3_000
    df = pd.DataFrame(
        {
            "customer": pd.array(rng.integers(0, 400, n), dtype="Int64"),
            "amount": rng.uniform(0, 600, n),
            "region": rng.choice([*KEYS, "X"], n),
        }
    )
    df.loc[::50, "customer"] = pd.NA
    return df


_OFFSET = iter(range(10**8, 10**9, 10**5))


def collection(df: pd.DataFrame, *, unit: bool, seed: int = 1, npartitions: int = 5) -> Any:
    """A new collection of ``df`` (a distinct expression name) with a seeded budget.

    Its ε and δ add up (``accountant="epsilon"``), so that one release's spend is its ε
    exactly: a release spent once spends 1.
    """
    rows = df.set_axis(pd.RangeIndex(next(_OFFSET), next(_OFFSET))[: len(df)])
    ddf = dd.from_pandas(rows, npartitions=npartitions, sort=True)
    unit_column = {"privacy_unit": "customer"} if unit else {}
    ddf.dp.set_budget(epsilon=100, delta=1e-3, seed=seed, accountant="epsilon", **unit_column)
    return ddf


#: Releases that read the rows the bounding chooses at random (keyed words from the
#: budget's source), or that choose their keys: name -> (privacy unit, release).
RELEASES: dict[str, tuple[bool, Callable[[Any], Any]]] = {
    "grouped mean": (
        False,
        lambda d: d.dp.groupby("region", keys=KEYS).mean("amount", clip=(0, 600), epsilon=1),
    ),
    "value_counts": (False, lambda d: d.dp.value_counts("region", epsilon=1, delta=1e-4)),
    "person count": (True, lambda d: d.dp.count(epsilon=1, max_rows=3)),
    "bounded sum": (True, lambda d: d.dp.sum("amount", clip=(0, 600), epsilon=1, max_rows=2)),
    "grouped count": (
        True,
        lambda d: d.dp.groupby("region", keys=KEYS).count(epsilon=1, max_rows=1, max_groups=2),
    ),
    "person value_counts": (
        True,
        lambda d: d.dp.value_counts("region", epsilon=1, delta=1e-4, max_rows=1, max_groups=2),
    ),
}


def _entries(budget: Any) -> list[Any]:
    """The budget's ledger entries without their times."""
    return [dataclasses.replace(e, time=None) for e in budget.entries]


def _threaded(df: pd.DataFrame, name: str) -> Any:
    return _threaded_with_budget(df, name)[0]


def _threaded_with_budget(df: pd.DataFrame, name: str) -> tuple[Any, Any]:
    unit, release = RELEASES[name]
    ddf = collection(df, unit=unit)
    with dask.config.set(scheduler="threads"):
        return release(ddf), ddf.dp.budget


@pytest.mark.parametrize("name", list(RELEASES))
def test_the_cluster_gives_the_threaded_release_and_keeps_the_budget_here(
    client: Any, orders: pd.DataFrame, name: str
) -> None:
    """Same seed, same partitioning: the release of the threaded scheduler, bit for bit."""
    unit, release = RELEASES[name]
    ddf = collection(orders, unit=unit)
    got = release(ddf)
    want, threaded = _threaded_with_budget(orders, name)
    assert type(got) is type(want)
    assert got.equals(want) if isinstance(got, pd.Series) else got == want
    assert _entries(ddf.dp.budget) == _entries(threaded)  # one release's entries, spent once
    assert ddf.dp.budget.spent == 1
    assert os.getpid() not in set(client.run(os.getpid).values())


@pytest.mark.parametrize("name", ["bounded sum", "person value_counts"])
def test_rounds_of_buckets_give_the_release_of_one_round(
    client: Any, orders: pd.DataFrame, name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Buckets taken in several rounds (each reading the data again), and the pairs of a
    policy selection (the keyed value_counts, ``max_groups=2``): the same release."""
    planned: dict[str, list[int]] = {"bucket_rounds": [], "pair_rounds": []}

    def spy(plan: Callable[..., Any]) -> Callable[..., Any]:
        def planning(*args: Any) -> Any:
            rounds = plan(*args)
            planned[plan.__name__].append(len(rounds))
            return rounds

        return planning

    limits = [w["memory_limit"] for w in client.scheduler_info()["workers"].values()]
    share = len(orders) * 8 / sum(limits) / 4  # the ids alone (8 bytes a row) fill four rounds
    monkeypatch.setattr(units, "ROUND_SHARE", share)
    for plan in (units.bucket_rounds, units.pair_rounds):
        monkeypatch.setattr(pandas_dp.dask, plan.__name__, spy(plan))
    unit, release = RELEASES[name]
    got = release(collection(orders, unit=unit))
    assert planned["bucket_rounds"]
    assert min(planned["bucket_rounds"]) > 1
    assert planned["pair_rounds"] == ([5] if name == "person value_counts" else [])  # 5 parts
    want = _threaded(orders, name)
    assert got.equals(want) if isinstance(got, pd.Series) else got == want


def test_bucket_rounds_cover_every_bucket_once_in_order(client: Any, orders: pd.DataFrame) -> None:
    """On the cluster: one round here (3,000 rows fit), TASKS_PER_THREAD tasks per worker
    thread (at most one per bucket); on the threaded scheduler one task per bucket."""
    captured: list[tuple[int, list[Any], list[Any]]] = []
    plan = units.bucket_rounds

    def spy(projected: Any, task: Any, buckets: int) -> Any:
        rounds = plan(projected, task, buckets)
        with dask.config.set(scheduler="threads"):
            captured.append((buckets, rounds, plan(projected, task, buckets)))
        return rounds

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(pandas_dp.dask, "bucket_rounds", spy)
        collection(orders, unit=True).dp.sum("amount", clip=(0, 600), epsilon=1, max_rows=2)
    ((buckets, cluster, threads),) = captured
    ranges = [span for tasks in cluster for span in tasks]
    assert [a for a, _ in ranges] == [0] + [b for _, b in ranges[:-1]]  # contiguous
    assert ranges[-1][1] == buckets
    assert all(a < b for a, b in ranges)
    assert len(cluster) == 1
    assert len(cluster[0]) == min(2 * units.TASKS_PER_THREAD, buckets)
    assert threads == [[(b, b + 1) for b in range(buckets)]]


def _die_once(flag: str, value: Any) -> Any:
    """Kill this worker process the first time any worker calls it (a flag file says so)."""
    if not os.path.exists(flag):
        Path(flag).touch()
        os._exit(1)
    return value


@pytest.mark.parametrize("name", ["grouped mean", "bounded sum", "person value_counts"])
def test_a_worker_killed_mid_release_spends_once_and_changes_no_number(
    client: Any, orders: pd.DataFrame, name: str, tmp_path: Path
) -> None:
    """The scheduler reruns the lost tasks inside the same compute(): one spend, the same release.

    The noise and the bounding's keys come from this process, drawn once, so
    the retried tasks (the killed one and those whose results died with the
    worker) compute the same exact statistics and the release is the one of
    a run where no worker died.
    """
    unit, release = RELEASES[name]
    flag = str(tmp_path / "died")
    before = set(client.run(os.getpid).values())
    ddf = collection(orders, unit=unit, seed=7)
    read = "region" if name == "person value_counts" else "amount"  # a column the release reads
    die = functools.partial(_die_once, flag)
    meta = (read, orders[read].dtype)  # so that Dask never calls it here to find its dtype
    dying = ddf.dp.assign(**{read: ddf[read].map(die, meta=meta)})
    got, budget = _release_counting_draws(dying, release)
    assert os.path.exists(flag)  # a worker did die
    client.wait_for_workers(2, timeout=TIMEOUT)
    assert set(client.run(os.getpid).values()) != before  # and was restarted
    assert budget.spent == 1
    want, reference = _release_counting_draws(collection(orders, unit=unit, seed=7), release)
    assert got.equals(want) if isinstance(got, pd.Series) else got == want
    assert _entries(budget) == _entries(reference)
    assert budget.source.draws == reference.source.draws  # the reruns drew nothing


class CountingSource:
    """The budget's source, counting its draws (how many words, in which process)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.draws: list[tuple[int, int]] = []

    def words(self, n: int) -> Any:
        self.draws.append((n, os.getpid()))
        return self.inner.words(n)


def _release_counting_draws(ddf: Any, release: Callable[[Any], Any]) -> tuple[Any, Any]:
    """``release(ddf)`` with its budget's draws counted: (the release, the budget)."""
    budget = ddf.dp.budget
    budget.source = CountingSource(budget.source)
    return release(ddf), budget


def _fail_once(flag: str, value: Any) -> Any:
    """Raise the first time any worker calls it (a flag file says so): a flaky read."""
    if not os.path.exists(flag):
        Path(flag).touch()
        raise OSError("a flaky read")
    return value


@pytest.mark.parametrize("name", ["grouped mean", "bounded sum"])
def test_a_retried_task_never_draws_noise(
    client: Any, orders: pd.DataFrame, name: str, tmp_path: Path
) -> None:
    """A task that failed once and that the scheduler ran again (``retries=``): one spend,
    the release of a run where nothing failed, and the budget's source drew the same words,
    all in this process (the noise after the statistics came back, the keys before)."""
    unit, release = RELEASES[name]
    flag = str(tmp_path / "failed")
    ddf = collection(orders, unit=unit, seed=11)
    read = "amount"
    flaky = functools.partial(_fail_once, flag)
    failing = ddf.dp.assign(**{read: ddf[read].map(flaky, meta=(read, orders[read].dtype))})
    with warnings.catch_warnings(), dask.annotate(retries=2):
        # Dask says the collection layers ignore annotations: the release's own tasks keep them
        warnings.filterwarnings("ignore", "Dask annotations", UserWarning)
        got, budget = _release_counting_draws(failing, release)
    assert os.path.exists(flag)  # a task did fail, and was run again
    want, reference = _release_counting_draws(collection(orders, unit=unit, seed=11), release)
    assert got.equals(want) if isinstance(got, pd.Series) else got == want
    assert budget.spent == 1
    assert _entries(budget) == _entries(reference)
    draws = budget.source.draws
    assert draws == reference.source.draws
    assert draws
    assert {pid for _, pid in draws} == {os.getpid()}


def _release_in_a_worker(ddf: Any) -> Any:
    assert pandas_dp.dask  # imported there too when this function arrives: ddf.dp exists
    return ddf.dp.count(epsilon=1)


def _partition_release(part: pd.DataFrame) -> pd.DataFrame:
    assert pandas_dp.dask
    part.dp.count(epsilon=1)
    return part


def test_a_release_asked_for_inside_a_worker_is_refused(client: Any, orders: pd.DataFrame) -> None:
    """A collection or a partition that reaches a worker carries no budget: refused there."""
    ddf = collection(orders, unit=False)
    with pytest.raises(MissingBudgetError, match="no privacy budget"):
        client.submit(_release_in_a_worker, ddf).result()
    with pytest.raises(MissingBudgetError, match="no privacy budget"):
        ddf.map_partitions(_partition_release, meta=ddf._meta).compute()
    assert ddf.dp.budget.spent == 0
    assert ddf.dp.budget.entries == []


def _moved(client: Any) -> int:
    return sum(client.run(lambda dask_worker: dask_worker.transfer_outgoing_bytes_total).values())


def test_a_row_level_release_moves_statistics_not_rows(client: Any, orders: pd.DataFrame) -> None:
    """Between workers (and to this process) move the per-partition statistics only."""
    big = pd.concat([orders] * 20, ignore_index=True)  # 60,000 rows, 1.4 MB
    ddf = collection(big, unit=False, npartitions=8)
    before = _moved(client)
    ddf.dp.groupby("region", keys=KEYS).mean("amount", clip=(0, 600), epsilon=1)
    moved = _moved(client) - before
    assert moved < big.memory_usage(deep=True).sum() / 20
