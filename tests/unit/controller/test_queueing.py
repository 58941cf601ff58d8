"""The work queue: de-duplication, one reconcile at a time per key, delays, backoff, rate and shutdown."""

from __future__ import annotations

import asyncio

import pytest

from controller.queueing import Backoff, WorkQueue
from controller.settings import QueueSettings
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


async def test_the_rate_limit_spaces_out_reconciles_beyond_the_burst() -> None:
    queue: WorkQueue[str] = WorkQueue(QueueSettings(rate=20, burst=2))
    for key in "abc":
        queue.add(key)
    assert await take(queue) == "a"
    assert await take(queue) == "b"
    assert await nothing_ready(queue)  # the burst of 2 is spent; the next token comes after ~50 ms
    assert await take(queue) == "c"


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
