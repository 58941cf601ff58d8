"""The journal's outages told to the cluster: Kubernetes Events on the controller's own object.

When the journal's writes start failing (a full disk: ``store.journal.Journal.on_outage``), a Warning
Event ``JournalWriteFailed`` says why; when a write commits again, a Normal ``JournalWritable`` says how
many appends failed meanwhile. Each is one Event counted up by every outage (``kubeeffects.emit_event``).
The object is this replica's Pod when the downward API names it (``--pod-name``, ``POD_NAME``), else its
Lease when it elects a leader, else none: the error log line and ``/readyz`` still say it. The Events go
straight to the API server through the executor, never through the journal, which is what fails; a
standby emits them too, as its journal is its own.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Protocol

from statemachines.effectresults import EffectResult
from statemachines.effects import Effect, EmitEvent, ObjectRef
from store.appending import Outage

log = logging.getLogger("arcsm.controller")

FAILED = "JournalWriteFailed"
WRITABLE = "JournalWritable"


class Executor(Protocol):
    async def execute(self, effect: Effect) -> EffectResult: ...


def subject(*, namespace: str, pod_name: str, lease_name: str | None) -> ObjectRef | None:
    """The object the Events are on: the Pod, else the Lease, else none."""
    if pod_name:
        return ObjectRef("Pod", namespace, pod_name)
    if lease_name:
        return ObjectRef("Lease", namespace, lease_name)
    return None


def events(target: ObjectRef, outage: Outage, *, ended: bool, uid: str = "") -> EmitEvent:
    if ended:
        message = f"journal writes succeed again; {outage.failed} appends had failed ({outage.reason})"
        return EmitEvent(target=target, uid=uid, type="Normal", reason=WRITABLE, message=message)
    message = f"journal writes fail: {outage.reason}; nothing is decided on what could not be journaled"
    return EmitEvent(target=target, uid=uid, type="Warning", reason=FAILED, message=message)


class OutageEvents:
    """``journal.on_outage`` callback: emit the Event of each start and end of an outage, in order."""

    def __init__(self, executor: Executor, target: ObjectRef) -> None:
        self._executor = executor
        self._target = target
        self._queue: asyncio.Queue[EmitEvent] = asyncio.Queue()
        self._task: asyncio.Task[None] | None = None

    def __call__(self, outage: Outage, ended: bool) -> None:
        self._queue.put_nowait(events(self._target, outage, ended=ended))
        if self._task is None or self._task.done():
            self._task = asyncio.create_task(self._emit(), name="journal-outage-events")

    async def _emit(self) -> None:
        while not self._queue.empty():
            effect = self._queue.get_nowait()
            result = await self._executor.execute(effect)
            if result.failed:
                log.warning(
                    "the %s Event on %s could not be written: %s",
                    effect.reason,
                    self._target,
                    result.message or result.error,
                )

    async def aclose(self) -> None:
        """Wait for the Events already asked for."""
        if self._task is not None:
            await asyncio.gather(self._task, return_exceptions=True)
