"""``controller.emulated.waiting.until``: returns the first truthy look, plain or async predicates, and says
what did not happen by the deadline (or re-raises the last retried failure)."""

from __future__ import annotations

import asyncio

import pytest

from controller.emulated import waiting


async def test_returns_the_first_truthy_value_of_a_plain_or_an_async_predicate() -> None:
    looks = iter([None, 0, "found"])
    assert await waiting.until(lambda: next(looks), what="x", timeout=5, interval=0) == "found"

    async def ready() -> int:
        return 7

    assert await waiting.until(ready, what="x", timeout=5, interval=0) == 7


async def test_a_deadline_passed_raises_timed_out_naming_what_was_awaited() -> None:
    with pytest.raises(waiting.TimedOut, match=r"^the step 'parked' did not happen within 0 s$") as caught:
        await waiting.until(lambda: False, what="the step 'parked'", timeout=0)
    assert (caught.value.what, caught.value.timeout) == ("the step 'parked'", 0)


async def test_retried_failures_count_as_not_yet_and_the_last_one_is_raised_at_the_deadline() -> None:
    calls = 0

    def flaky() -> bool:
        nonlocal calls
        calls += 1
        if calls < 3:
            raise AssertionError(f"look {calls}")
        return True

    assert await waiting.until(flaky, what="x", timeout=5, interval=0, retry_on=(AssertionError,))
    assert calls == 3

    def failing() -> bool:
        raise AssertionError("still wrong")

    with pytest.raises(AssertionError, match="still wrong"):
        await waiting.until(failing, what="x", timeout=0, retry_on=(AssertionError,))


async def test_other_failures_end_the_wait_at_once() -> None:
    calls = 0

    def broken() -> bool:
        nonlocal calls
        calls += 1
        raise KeyError("gone")

    with pytest.raises(KeyError):
        await waiting.until(broken, what="x", timeout=5, interval=0, retry_on=(AssertionError,))
    assert calls == 1


async def test_a_look_that_never_answers_ends_at_the_deadline() -> None:
    never = asyncio.Event()

    async def hangs() -> bool:
        await never.wait()
        return True

    # The outer bound only keeps a regression from hanging the suite; the inner deadline must fire first.
    async with asyncio.timeout(30):
        with pytest.raises(waiting.TimedOut, match=r"^the answer did not happen within 0\.05 s$"):
            await waiting.until(hangs, what="the answer", timeout=0.05)
