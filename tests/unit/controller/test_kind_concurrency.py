"""Concurrent reconciles per kind (``QueueSettings.per_kind``): a kind never has more keys reconciling at
once than its bound, a kind at its bound holds no worker, and the other kinds keep going; with the
default settings, a burst of one kind neither waits on a rate limit nor stands in front of another kind.

The reconciler test runs the real worker pool of ``Reconciler`` over a real journal and fold; only the
reconcile of one key is replaced by one that holds its key until the test opens a gate, and counts how
many keys of each kind are inside it at once.
"""

from __future__ import annotations

import asyncio
import collections

import pytest

from controller.loop.queueing import WorkQueue
from controller.loop.reconciling import Outcome
from controller.loop.settings import QueueSettings
from statemachines.effects import ObjectRef
from store.journal import Journal
from tests.helpers import eventually
from tests.unit.controller.objects import reconciler_on, reconciling

FAST = dict(backoff_initial=0.01, backoff_max=0.08, rate=10_000, burst=10_000)


def kind_of(key: str) -> str:
    return key.split("/")[0]


async def take(queue: WorkQueue[str]) -> str | None:
    async with asyncio.timeout(1.0):
        return await queue.get()


async def test_a_kind_at_its_bound_is_skipped_and_a_done_key_frees_its_place() -> None:
    queue: WorkQueue[str] = WorkQueue(QueueSettings(per_kind={"a": 1}, **FAST), group=kind_of)
    for key in ("a/1", "a/2", "b/1", "a/3", "b/2"):
        queue.add(key)
    assert await take(queue) == "a/1"
    # a/2 is older than b/1, but kind a is at its bound of one.
    assert [await take(queue), await take(queue)] == ["b/1", "b/2"]
    assert not queue.can_hand_out()
    assert len(queue) == 2 and queue.in_flight_of("a") == 1
    queue.done("a/1")
    assert await take(queue) == "a/2"  # FIFO within the kind
    assert queue.in_flight_of("a") == 1 and queue.in_flight_of("b") == 2


async def test_done_for_a_key_never_handed_out_does_not_free_a_place() -> None:
    queue: WorkQueue[str] = WorkQueue(QueueSettings(per_kind={"a": 1}, **FAST), group=kind_of)
    queue.add("a/1")
    queue.add("a/2")
    assert await take(queue) == "a/1"
    queue.done("a/2")  # not handed out: the bound still counts a/1
    assert not queue.can_hand_out()


def test_a_bound_below_one_is_refused() -> None:
    with pytest.raises(ValueError, match="EphemeralRunner must be at least 1"):
        QueueSettings(per_kind={"EphemeralRunner": 0})


async def test_the_reconciler_never_runs_more_keys_of_a_kind_than_its_bound(
    journal: Journal, monkeypatch: pytest.MonkeyPatch
) -> None:
    runners = [ObjectRef("EphemeralRunner", "runners", f"r-{i}") for i in range(12)]
    sets = [ObjectRef("EphemeralRunnerSet", "runners", f"s-{i}") for i in range(6)]
    reconciler = await reconciler_on(
        journal, QueueSettings(workers=6, per_kind={"EphemeralRunner": 2}, **FAST)
    )
    gate = asyncio.Event()
    inside: collections.Counter[str] = collections.Counter()
    most: collections.Counter[str] = collections.Counter()
    finished: list[ObjectRef] = []

    async def held(key: ObjectRef) -> Outcome:
        inside[key.kind] += 1
        most[key.kind] = max(most[key.kind], inside[key.kind])
        try:
            await gate.wait()
        finally:
            inside[key.kind] -= 1
        finished.append(key)
        return Outcome.SETTLED

    async with reconciling(reconciler, held, monkeypatch):
        for key in [*runners, *sets]:  # every runner is queued before any runner set
            reconciler.queue.add(key)
        # Two runners hold their places; the four other workers take runner sets, queued later.
        await eventually(
            lambda: inside == {"EphemeralRunner": 2, "EphemeralRunnerSet": 4},
            what="two runners and four runner sets reconciling",
        )
        assert most["EphemeralRunner"] == 2
        gate.set()
        await eventually(lambda: len(finished) == len(runners) + len(sets), what="every key reconciled")
    assert most["EphemeralRunner"] == 2
    assert sorted(finished, key=str) == sorted([*runners, *sets], key=str)


async def test_a_runner_set_queued_behind_a_burst_of_runners_is_reconciled_before_the_burst_drains(
    journal: Journal, monkeypatch: pytest.MonkeyPatch
) -> None:
    runners = [ObjectRef("EphemeralRunner", "runners", f"r-{i}") for i in range(300)]
    scale_up = ObjectRef("EphemeralRunnerSet", "runners", "s")
    # The queue's defaults but for its workers: their rate limit included.
    reconciler = await reconciler_on(journal, QueueSettings(workers=2))
    order: list[ObjectRef] = []

    async def noted(key: ObjectRef) -> Outcome:
        order.append(key)
        await asyncio.sleep(0)
        return Outcome.SETTLED

    async with reconciling(reconciler, noted, monkeypatch):
        for key in [*runners, scale_up]:  # a job wave's runners, then the decision that scales another set
            reconciler.queue.add(key)
        await eventually(lambda: len(order) == len(runners) + 1, what="every key reconciled")
    assert order.index(scale_up) <= 2  # after at most one runner per worker, not after the 300
