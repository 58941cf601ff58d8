"""Shared test helpers: waiting on conditions with a deadline (never on sleeps)."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable
from typing import Any


async def eventually(
    predicate: Callable[[], Any],
    *,
    timeout: float = 5.0,
    interval: float = 0.01,
    what: str = "condition",
) -> Any:
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
                return value
            last_exc = None
        except AssertionError as exc:
            last_exc = exc
        if loop.time() >= deadline:
            if last_exc is not None:
                raise last_exc
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        await asyncio.sleep(interval)
