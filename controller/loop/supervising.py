"""Supervised tasks: every background task of the controller is started here, named, and watched.

A task that ends by an exception is logged and reported to ``on_failure`` (the controller stops: a loop
that died would leave keys undecided forever); ``stop`` cancels what is left and waits for it. Nothing is
fire-and-forget.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Coroutine
from typing import Any

log = logging.getLogger("arcsm.controller")


class Supervisor:
    def __init__(self, *, on_failure: Callable[[BaseException], None]) -> None:
        self._on_failure = on_failure
        self._tasks: set[asyncio.Task[Any]] = set()
        self.failures: list[tuple[str, BaseException]] = []

    def spawn(self, name: str, work: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]:
        task = asyncio.create_task(work, name=name)
        self._tasks.add(task)
        task.add_done_callback(self._ended)
        return task

    def _ended(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if task.cancelled():
            return
        exc = task.exception()
        if exc is not None:
            log.error("%s failed: %s", task.get_name(), exc, exc_info=exc)
            self.failures.append((task.get_name(), exc))
            self._on_failure(exc)

    async def stop(self) -> None:
        """Cancel every task still running and wait for each to end."""
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
