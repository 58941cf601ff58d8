"""A per-scale-set "the fake's state changed", for the long polls and runners that wait on it.

``State`` calls ``Changes.notify(scale_set_id)`` after every mutation, naming the scale set it changed
(None for a change that may concern any). A waiter takes ``current(scale_set_id)`` *before* it looks at
the state, then waits on that event, so a change between the look and the wait is never missed. Only
the waiters of the changed set wake: with many scale sets, a job of one does not make every long poll
and idle runner of the others look again.
"""

from __future__ import annotations

import asyncio
import contextlib


class Changes:
    def __init__(self) -> None:
        self._events: dict[int, asyncio.Event] = {}

    def current(self, scale_set_id: int) -> asyncio.Event:
        """The event the next change of ``scale_set_id`` (or of everything) sets."""
        event = self._events.get(scale_set_id)
        if event is None:
            event = self._events[scale_set_id] = asyncio.Event()
        return event

    def notify(self, scale_set_id: int | None = None) -> None:
        """Wake the waiters of ``scale_set_id``; None wakes every waiter."""
        if scale_set_id is None:
            woken, self._events = list(self._events.values()), {}
        else:
            event = self._events.pop(scale_set_id, None)
            woken = [] if event is None else [event]
        for event in woken:
            event.set()


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
