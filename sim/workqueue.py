"""Plumbing shared by the simulated controllers: a de-duplicating work queue and kind lookups.

``WorkQueue`` is a small version of client-go's workqueue: an item that is already waiting is not
queued twice, and ``idle()`` returns once nothing is waiting or being worked on, which is what makes
``World.gc_idle()`` and friends deterministic. Store listeners only ever call ``add`` (never block);
the controller's own tasks drain the queue and write through the ``ApiServer`` verbs.

Known limits: no rate limiting or retry back-off; a controller that wants a retry re-adds the item.
"""

from __future__ import annotations

import asyncio
from collections.abc import Hashable, Iterator
from typing import Any, Generic, TypeVar

from sim.kinds import Kind, Registry
from sim.store import Obj, TypeKey

T = TypeVar("T", bound=Hashable)


class WorkQueue(Generic[T]):
    def __init__(self) -> None:
        self._queue: asyncio.Queue[T] = asyncio.Queue()
        self._waiting: set[T] = set()
        self._outstanding = 0
        self._idle = asyncio.Event()
        self._idle.set()

    def add(self, item: T) -> None:
        """Queue ``item`` unless it is already waiting (safe to call from a store listener)."""
        if item in self._waiting:
            return
        self._waiting.add(item)
        self._outstanding += 1
        self._idle.clear()
        self._queue.put_nowait(item)

    async def get(self) -> T:
        """The next item; it stays "waiting" (so re-adds are merged) until ``begin`` is called."""
        return await self._queue.get()

    def begin(self, item: T) -> None:
        """The worker starts on ``item``: later ``add`` calls queue it again."""
        self._waiting.discard(item)

    def done(self) -> None:
        """The worker finished one item taken with ``get``."""
        self._outstanding -= 1
        if self._outstanding <= 0:
            self._outstanding = 0
            self._idle.set()

    def __len__(self) -> int:
        return self._outstanding

    async def idle(self) -> None:
        """Return once no item is waiting or being worked on."""
        while self._outstanding:
            await self._idle.wait()


def storage_kinds(registry: Registry) -> Iterator[Kind]:
    """One served kind per storage type (views like events.k8s.io Events are skipped)."""
    seen: set[TypeKey] = set()
    for kind in registry.all():
        if kind.storage is not None or kind.key in seen:
            continue
        seen.add(kind.key)
        yield kind


def kind_for(registry: Registry, type_key: TypeKey) -> Kind | None:
    """A served kind whose storage is ``type_key`` (any served version of a custom resource)."""
    for kind in registry.all():
        if kind.storage is None and kind.key == type_key:
            return kind
    return None


def meta(obj: Obj | None) -> dict[str, Any]:
    """``obj.metadata`` (an empty dict when missing)."""
    if obj is None:
        return {}
    m = obj.get("metadata")
    return m if isinstance(m, dict) else {}
