"""The work queue: de-duplication, one reconcile at a time per key, delays, backoff, shutdown; plain adds
never wait on a rate limit, failed keys' requeues do (a bucket per kind), and the kinds take turns.

Where time matters the queue reads a clock the test moves: a key is due when the test says so, never after
a wall-clock wait."""

from __future__ import annotations

import asyncio

import pytest

from controller.loop.queueing import Backoff, WorkQueue
from controller.loop.settings import QueueSettings
from tests.helpers import eventually

FAST = QueueSettings(backoff_initial=0.01, backoff_max=0.08, rate=10_000, burst=10_000)


async def take(queue: WorkQueue[str], timeout: float = 1.0) -> str | None:
    async with asyncio.timeout(timeout):
        return await queue.get()


async def nothing_ready(queue: WorkQueue[str]) -> bool:
    """True when ``get`` hands out nothing within a short window (a bound, not a sleep to wait on)."""
    try:
        await take(queue, timeout=0.05)
    except TimeoutError:
        return True
    return False


async def test_a_key_added_twice_is_handed_out_once() -> None:
    queue: WorkQueue[str] = WorkQueue(FAST)
    queue.add("a")
    queue.add("b")
    queue.add("a")
    assert len(queue) == 2
    assert [await take(queue), await take(queue)] == ["a", "b"]
    assert await nothing_ready(queue)


async def test_a_key_added_while_reconciling_waits_for_done_and_comes_back_once() -> None:
    queue: WorkQueue[str] = WorkQueue(FAST)
    queue.add("a")
    assert await take(queue) == "a"
    queue.add("a")
    queue.add("a")
    assert queue.in_flight == {"a"}
    assert await nothing_ready(queue)  # never to a second worker while the first holds it
    queue.done("a")
    assert await take(queue) == "a"
    queue.done("a")
    assert await nothing_ready(queue)


async def test_workers_hold_distinct_keys_at_once() -> None:
    queue: WorkQueue[str] = WorkQueue(FAST)
    for key in "abc":
        queue.add(key)
    held = {await take(queue), await take(queue)}
    assert held == {"a", "b"} and queue.in_flight == held


async def test_add_after_holds_a_key_back_and_the_earliest_delay_wins() -> None:
    queue: WorkQueue[str] = WorkQueue(FAST)
    queue.add_after("a", 30.0)
    queue.add_after("a", 0.02)
    queue.add_after("a", 60.0)
    assert set(queue.waiting()) == {"a"} and queue.waiting()["a"] <= 0.02
    assert len(queue) == 0
    assert await take(queue) == "a"
    assert queue.waiting() == {}


async def test_backoff_doubles_per_failure_up_to_the_maximum_and_forget_resets_it() -> None:
    backoff: Backoff[str] = Backoff(initial=0.005, maximum=0.1)
    assert [backoff.next("a") for _ in range(7)] == [0.005, 0.01, 0.02, 0.04, 0.08, 0.1, 0.1]
    assert backoff.next("b") == 0.005  # per key
    backoff.forget("a")
    assert backoff.failures("a") == 0 and backoff.next("a") == 0.005


async def test_add_rate_limited_delays_by_the_keys_backoff() -> None:
    queue: WorkQueue[str] = WorkQueue(FAST)
    assert queue.add_rate_limited("a") == 0.01
    assert await take(queue) == "a"
    queue.done("a")
    assert queue.add_rate_limited("a") == 0.02
    assert queue.failures("a") == 2
    queue.forget("a")
    assert queue.failures("a") == 0


class Clock:
    """A clock that moves only when the test moves it."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class Delays:
    """An observer that counts the adds held back by a delay."""

    def __init__(self) -> None:
        self.held_back = 0

    def added(self, group: str, key: object) -> None:
        pass

    def taken(self, group: str, key: object) -> None:
        pass

    def done(self, group: str, key: object) -> None:
        pass

    def delayed(self, group: str) -> None:
        self.held_back += 1


def kind_of(key: str) -> str:
    return key.split("/")[0]


async def test_a_thousand_plain_adds_are_all_handed_out_without_waiting_on_a_rate_limit() -> None:
    # A bucket of one token refilled once in 1,000 s: any key that waited on it would time the take out.
    delays = Delays()
    queue: WorkQueue[str] = WorkQueue(QueueSettings(rate=0.001, burst=1), group=kind_of, observer=delays)
    keys = [f"EphemeralRunner/r-{i}" for i in range(1000)]
    for key in keys:
        queue.add(key)
    taken = [await take(queue) for _ in keys]
    assert sorted(k for k in taken if k is not None) == sorted(keys)
    assert delays.held_back == 0 and queue.waiting() == {}


async def test_timers_that_fire_are_handed_out_without_waiting_on_a_rate_limit() -> None:
    clock = Clock()
    queue: WorkQueue[str] = WorkQueue(QueueSettings(rate=0.001, burst=1), group=kind_of, clock=clock)
    keys = [f"EphemeralRunner/r-{i}" for i in range(1000)]
    for key in keys:
        queue.add_after(key, 30.0)
    assert not queue.can_hand_out()
    clock.now += 30.0
    taken = [await take(queue) for _ in keys]
    assert sorted(k for k in taken if k is not None) == sorted(keys)


async def test_requeues_after_failures_are_spaced_out_by_the_kinds_bucket() -> None:
    clock = Clock()
    settings = QueueSettings(backoff_initial=0.01, backoff_max=0.08, rate=10, burst=3)
    queue: WorkQueue[str] = WorkQueue(settings, group=kind_of, clock=clock)
    failed = [f"EphemeralRunner/r-{i}" for i in range(6)]
    # The burst of 3 goes at the keys' own backoff; then one token every 1/10 s.
    assert [queue.add_rate_limited(key) for key in failed] == pytest.approx([0.01, 0.01, 0.01, 0.1, 0.2, 0.3])
    # Another kind has its own bucket: its first failure waits its backoff only.
    assert queue.add_rate_limited("EphemeralRunnerSet/s") == 0.01
    clock.now += 0.01
    assert {await take(queue) for _ in range(4)} == {*failed[:3], "EphemeralRunnerSet/s"}
    assert not queue.can_hand_out()  # the other three wait for their tokens
    clock.now += 0.09
    assert await take(queue) == failed[3] and not queue.can_hand_out()
    clock.now += 0.2
    assert [await take(queue), await take(queue)] == failed[4:]
    # Idle, the bucket fills again to its burst, and a key's backoff is its own.
    clock.now += 10.0
    assert [queue.add_rate_limited(key) for key in failed[:3]] == [0.02, 0.02, 0.02]
    assert queue.add_rate_limited("EphemeralRunner/new") == pytest.approx(0.1)


async def test_a_burst_of_one_kind_does_not_hold_back_another_kinds_key() -> None:
    queue: WorkQueue[str] = WorkQueue(FAST, group=kind_of)
    burst = [f"EphemeralRunner/r-{i}" for i in range(1000)]
    for key in burst:
        queue.add(key)
    queue.add("EphemeralRunnerSet/s")  # the decision that scales up another set, queued last
    first = [await take(queue), await take(queue)]
    assert first == ["EphemeralRunner/r-0", "EphemeralRunnerSet/s"]
    assert len(queue) == 999  # handed out while the burst was still queued


async def test_the_kinds_take_turns_and_each_kind_keeps_its_order() -> None:
    queue: WorkQueue[str] = WorkQueue(FAST, group=kind_of)
    for key in ("a/1", "a/2", "a/3", "b/1", "c/1", "b/2"):
        queue.add(key)
    assert [await take(queue) for _ in range(6)] == ["a/1", "b/1", "c/1", "a/2", "b/2", "a/3"]


async def test_a_worker_whose_reconciles_never_wait_lets_other_tasks_run() -> None:
    queue: WorkQueue[str] = WorkQueue(FAST)
    for i in range(100):
        queue.add(f"k{i}")
    handed: list[str] = []
    seen_at: list[int] = []

    async def worker() -> None:
        while len(handed) < 100 and (key := await queue.get()) is not None:
            handed.append(key)
            queue.done(key)

    async def other() -> None:
        seen_at.append(len(handed))

    spinning = asyncio.create_task(worker())
    other_task = asyncio.create_task(other())
    await asyncio.gather(spinning, other_task)
    assert seen_at and seen_at[0] < 100


async def test_shut_down_answers_none_and_takes_no_more_keys() -> None:
    queue: WorkQueue[str] = WorkQueue(FAST)
    waiting = asyncio.create_task(queue.get())
    queue.shut_down()
    assert await waiting is None
    queue.add("a")
    assert len(queue) == 0 and await queue.get() is None


@pytest.mark.parametrize("delay", [0.0, -1.0])
async def test_add_after_without_a_delay_is_add(delay: float) -> None:
    queue: WorkQueue[str] = WorkQueue(FAST)
    queue.add_after("a", delay)
    assert len(queue) == 1


async def test_a_delayed_key_is_promoted_while_a_worker_waits() -> None:
    queue: WorkQueue[str] = WorkQueue(FAST)
    got: list[str | None] = []

    async def worker() -> None:
        got.append(await queue.get())

    task = asyncio.create_task(worker())
    queue.add_after("a", 0.01)
    await eventually(lambda: got == ["a"], what="the delayed key")
    await task
