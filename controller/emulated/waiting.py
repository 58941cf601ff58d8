"""Waiting on a condition with a deadline, never on time passing.

``until`` looks at the state through a predicate, and again after a short pause, until the predicate
returns something truthy (which it returns) or the deadline passes (``TimedOut``). The pause is only the
polling interval between two looks; nothing waits for a fixed time to fake progress. ``arcsm demo`` waits
on its story's steps with it, and the tests wait on conditions with it (``tests.helpers.eventually``).
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable
from typing import TypeVar

T = TypeVar("T")


class TimedOut(Exception):
    """What was awaited did not happen before the deadline."""

    def __init__(self, what: str, timeout: float) -> None:
        super().__init__(f"{what} did not happen within {timeout:g} s")
        self.what = what
        self.timeout = timeout


async def until(
    predicate: Callable[[], Awaitable[T | None] | T | None],
    *,
    what: str,
    timeout: float,
    interval: float = 0.05,
    retry_on: tuple[type[BaseException], ...] = (),
) -> T:
    """Call ``predicate`` (a plain or an async function) until it returns something truthy; return that.

    An exception of a type in ``retry_on`` counts as "not yet"; if the last look before the deadline
    raised one, it is raised again instead of ``TimedOut``, so the caller sees why the condition failed.
    """
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        failure: BaseException | None = None
        try:
            value = predicate()
            if inspect.isawaitable(value):
                # A look that hangs (a request to a server that stopped answering) ends at the deadline.
                bounded = asyncio.timeout_at(deadline)
                try:
                    async with bounded:
                        value = await value
                except TimeoutError:
                    if not bounded.expired():
                        raise
                    raise TimedOut(what, timeout) from None
            if value:
                return value
        except retry_on as exc:
            failure = exc
        if loop.time() >= deadline:
            if failure is not None:
                raise failure
            raise TimedOut(what, timeout)
        await asyncio.sleep(interval)
