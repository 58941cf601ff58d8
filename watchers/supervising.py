"""``Watchers``: one supervised task per watched (kind, namespace), started and stopped together, each
with its own slot of the resync period (``watchers.resyncs``), so their periodic re-lists are spread out.

``synced()`` says whether every watcher has journaled its first list, i.e. the projection of every
watched kind is complete; the HTTP readiness probe depends on it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from types import TracebackType

from kubernetes_asyncio import client

from store.ports import JournalWriter
from watchers import resyncs
from watchers.ports import Known
from watchers.settings import WatchSettings
from watchers.watching import Watcher

log = logging.getLogger("arcsm.watchers")


class Watchers:
    def __init__(
        self,
        *,
        api: client.ApiClient,
        journal: JournalWriter,
        known: Known,
        settings: WatchSettings | None = None,
    ) -> None:
        self.settings = settings or WatchSettings()
        watched = self.settings.watched()
        period = self.settings.resync
        slots = (
            [None] * len(watched)
            if period is None
            else resyncs.slots(len(watched), period, seed=self.settings.resync_seed)
        )
        self.watchers = [
            Watcher(
                kind=kind,
                namespace=ns,
                api=api,
                journal=journal,
                known=known,
                settings=self.settings,
                slot=slot,
            )
            for (kind, ns), slot in zip(watched, slots, strict=True)
        ]
        self._tasks: list[asyncio.Task[None]] = []

    def start(self) -> None:
        if self._tasks:
            raise RuntimeError("the watchers are already running")
        for watcher in self.watchers:
            task = asyncio.create_task(watcher.run(), name=watcher.name)
            task.add_done_callback(_report)
            self._tasks.append(task)

    async def stop(self) -> None:
        """Cancel every watcher and wait for them to end."""
        tasks, self._tasks = self._tasks, []
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task

    def synced(self) -> bool:
        return all(w.synced.is_set() for w in self.watchers)

    async def wait_synced(self) -> None:
        """Return once every watcher has journaled its first list."""
        for watcher in self.watchers:
            await watcher.synced.wait()

    async def __aenter__(self) -> Watchers:
        self.start()
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.stop()


def _report(task: asyncio.Task[None]) -> None:
    # A watcher retries everything it can; ending other than by cancellation is a bug worth a loud log.
    if not task.cancelled() and task.exception() is not None:
        log.error("%s ended", task.get_name(), exc_info=task.exception())
