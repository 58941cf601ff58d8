"""Shared test helpers: waiting on conditions with a deadline (never on sleeps)."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable
from typing import TypeVar

T = TypeVar("T")


async def eventually(
    predicate: Callable[[], T | Awaitable[T]],
    *,
    timeout: float = 5.0,
    interval: float = 0.01,
    what: str = "condition",
) -> T:
    """Poll ``predicate`` until it returns something truthy; fail with ``what`` after ``timeout`` seconds.

    Exceptions raised by the predicate count as "not yet" until the deadline, then are re-raised.
    """
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    last_exc: BaseException | None = None
    while True:
        try:
            value = predicate()
            if inspect.isawaitable(value):
                value = await value
            if value:
                return value  # type: ignore[return-value]
            last_exc = None
        except AssertionError as exc:
            last_exc = exc
        if loop.time() >= deadline:
            if last_exc is not None:
                raise last_exc
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        await asyncio.sleep(interval)
