"""A wake-up signal for loops that sleep until a deadline or until something changes."""

from __future__ import annotations

import asyncio
import contextlib


class Wakeup:
    """``await wait(timeout)`` returns at the timeout or at the next ``notify()``, whichever is first.

    Every ``notify`` wakes the waiters of that moment only (a fresh event replaces the set one), so a
    loop that re-checks its state after waking never misses a change nor spins on an old one.
    """

    def __init__(self) -> None:
        self._changed = asyncio.Event()

    async def wait(self, timeout: float | None) -> None:
        changed = self._changed
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(timeout):
                await changed.wait()

    def notify(self) -> None:
        changed, self._changed = self._changed, asyncio.Event()
        changed.set()
