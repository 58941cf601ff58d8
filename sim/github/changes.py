"""A broadcast "the fake's state changed", for the long polls and runners that wait on it.

``State`` calls ``Changes.notify`` after every mutation. A waiter takes ``current()`` *before* it looks
at the state, then waits on that event, so a change between the look and the wait is never missed.
"""

from __future__ import annotations

import asyncio
import contextlib


class Changes:
    def __init__(self) -> None:
        self._event = asyncio.Event()

    def current(self) -> asyncio.Event:
        return self._event

    def notify(self) -> None:
        self._event.set()
        self._event = asyncio.Event()


async def wait_any(events: list[asyncio.Event], timeout: float | None) -> bool:
    """Wait until one of ``events`` is set or ``timeout`` seconds pass; True if one was set."""
    if any(e.is_set() for e in events):
        return True
    if timeout is not None and timeout <= 0:
        return False
    waiters = [asyncio.ensure_future(e.wait()) for e in events]
    try:
        done, _ = await asyncio.wait(waiters, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for waiter in waiters:
            waiter.cancel()
        for waiter in waiters:
            with contextlib.suppress(asyncio.CancelledError):
                await waiter
    return bool(done)
