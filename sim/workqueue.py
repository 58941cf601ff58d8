"""Plumbing shared by the simulated controllers: a de-duplicating work queue, a controller loop
around it, and kind lookups.

``WorkQueue`` is a small version of client-go's workqueue: an item that is already waiting is not
queued twice, and ``idle()`` returns once nothing is waiting or being worked on, which is what makes
``World.gc_idle()`` and friends deterministic. Store listeners only ever call ``add`` (never block);
the controller's own tasks drain the queue and write through the ``ApiServer`` verbs.
``QueueController`` is that loop: subclasses say what to queue (``seed``, ``on_event``) and how to
handle one item (``handle``).

``QueueController.add_after`` queues an item again after a delay (client-go's ``AddAfter``), for the
controllers that wait on the clock (``minReadySeconds``, progress deadlines); ``retry`` does it with a
per-item exponential back-off (5 ms doubling up to ``RETRY_MAX``, as client-go's item failure rate
limiter, but capped lower) and ``forget`` resets it. Pending timers are cancelled when the controller
stops.

Known limits: a failed ``handle`` is not retried on its own; a controller that wants a retry asks for one.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Hashable, Iterator
from typing import TYPE_CHECKING, ClassVar, Generic, TypeVar

from sim import errors
from sim.kinds import Kind, Registry
from sim.store import Event, TypeKey
from sim.store import meta as meta  # the controllers import it from here

if TYPE_CHECKING:
    from sim.apiserver import ApiServer

T = TypeVar("T", bound=Hashable)

RETRY_BASE = 0.005
RETRY_MAX = 10.0


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


class QueueController(Generic[T]):
    """A world controller (``await controller(api)``) that works a ``WorkQueue`` of items.

    ``run`` listens to the store (``on_event``, only while running), queues the work that already
    exists (``seed``), then ``workers`` tasks take items one at a time: ``pause``, then ``handle``.
    A failed item is logged, not retried: an ``ApiError`` whose code is in ``ignored_codes`` not at
    all, any other at ``api_error_level`` (``None``: with a traceback, like any other exception).
    """

    logger: ClassVar[logging.Logger] = logging.getLogger("arcsm.sim")
    what: ClassVar[str] = "controller: item"  # log prefix, e.g. "scheduler: binding"
    ignored_codes: ClassVar[frozenset[int]] = frozenset()
    api_error_level: ClassVar[int | None] = logging.INFO
    workers: int = 1

    def __init__(self) -> None:
        self._queue: WorkQueue[T] = WorkQueue()
        self._api: ApiServer | None = None  # the API server while running, for work a timer or hook starts
        self._started = asyncio.Event()
        self._active = False
        self._timers: dict[T, asyncio.TimerHandle] = {}
        self._failures: dict[T, int] = {}

    async def __call__(self, api: ApiServer) -> None:
        await self.run(api)

    async def idle(self) -> None:
        """Return when the controller has started and nothing is queued or in flight."""
        await self._started.wait()
        await self._queue.idle()

    @property
    def busy(self) -> bool:
        """Whether an item is queued or in flight (timers of ``add_after`` do not count)."""
        return len(self._queue) > 0

    def seed(self, api: ApiServer) -> None:
        """Queue the work that exists at start (the store listener is already on)."""

    def on_event(self, event: Event) -> None:
        """A store change while running: queue what it affects (never block)."""

    async def pause(self, item: T) -> None:
        """Wait before working on ``item`` (re-adds meanwhile are merged); none by default."""

    def handle(self, api: ApiServer, item: T) -> None:
        raise NotImplementedError

    def add_after(self, item: T, delay: float) -> None:
        """Queue ``item`` once ``delay`` seconds have passed (an earlier pending timer for it wins)."""
        if not self._active:
            return
        loop = asyncio.get_running_loop()
        pending = self._timers.get(item)
        when = loop.time() + max(delay, 0.0)
        if pending is not None and not pending.cancelled() and pending.when() <= when:
            return
        if pending is not None:
            pending.cancel()
        self._timers[item] = loop.call_at(when, self._fire, item)

    def retry(self, item: T) -> None:
        """Queue ``item`` again after its next back-off (it failed in a way a retry may fix)."""
        failures = self._failures.get(item, 0)
        self._failures[item] = failures + 1
        self.add_after(item, min(RETRY_BASE * 2**failures, RETRY_MAX))

    def forget(self, item: T) -> None:
        """``item`` succeeded: its next failure starts the back-off again."""
        self._failures.pop(item, None)

    def _fire(self, item: T) -> None:
        self._timers.pop(item, None)
        if self._active:
            self._queue.add(item)

    def _listen(self, event: Event) -> None:
        if self._active:
            self.on_event(event)

    async def run(self, api: ApiServer) -> None:
        self._api = api
        self._active = True
        api.store.add_listener(self._listen)
        try:
            self.seed(api)
            self._started.set()
            if self.workers == 1:
                await self._work(api)
                return
            name = self.logger.name.rsplit(".", 1)[-1]
            tasks = [
                asyncio.create_task(self._work(api), name=f"sim-{name}-worker-{i}")
                for i in range(self.workers)
            ]
            try:
                await asyncio.gather(*tasks)
            finally:
                for task in tasks:
                    task.cancel()
                for task in tasks:
                    with contextlib.suppress(asyncio.CancelledError):
                        await task
        finally:
            self._active = False
            for timer in self._timers.values():
                timer.cancel()
            self._timers.clear()

    async def _work(self, api: ApiServer) -> None:
        while True:
            item = await self._queue.get()
            try:
                await self.pause(item)
                self._queue.begin(item)
                self.handle(api, item)
            except errors.ApiError as err:
                if err.code in self.ignored_codes:
                    pass
                elif self.api_error_level is None:
                    self.logger.exception("%s %s failed", self.what, item)
                else:
                    msg = "%s %s: %s %s %s"
                    self.logger.log(
                        self.api_error_level, msg, self.what, item, err.code, err.reason, err.message
                    )
            except Exception:
                self.logger.exception("%s %s failed", self.what, item)
            finally:
                self._queue.done()


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


def served_kind(api: ApiServer, group: str, plural: str) -> Kind:
    """The served kind of ``plural`` in ``group``: one every world serves (an assertion, not a lookup)."""
    kind = kind_for(api.registry, (group, plural))
    assert kind is not None, f"{plural}.{group} is not served"
    return kind
