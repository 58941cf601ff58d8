"""Hand-made objects and a hand-made journal prefix for the controller's unit tests.

``Prefix`` folds records into a ``controller.loop.folding.Fold`` exactly as the tail would (seq and time
increase by one per record), so the projection, the results and the clock are the loop's own.
``reconciler_on`` and ``reconciling`` run the real worker pool over a journal with a stand-in
``reconcile``, for the tests of how keys are handed out.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from controller.loop import folding
from controller.loop.folding import Fold
from controller.loop.reconciling import Outcome, Reconciler
from controller.loop.runtimemetrics import RuntimeMetrics
from controller.loop.settings import QueueSettings, ReconcileSettings
from controller.loop.timing import Timers
from statemachines import kinds
from statemachines.effectresults import EffectResult
from statemachines.effects import Effect, ObjectRef
from statemachines.snapshots import Settings as MachineSettings
from store import clocks
from store.journal import Journal
from store.projection import Projection
from store.records import Record, RecordType, Seq, observed
from tests.helpers import eventually

NS = "runners"
CONTROLLER_NS = "arc-systems"
START = datetime(2026, 1, 1, tzinfo=UTC)


def obj(
    kind: str,
    name: str,
    namespace: str = NS,
    *,
    uid: str | None = None,
    owner: tuple[str, str, str] | None = None,
    labels: dict[str, str] | None = None,
    spec: dict[str, Any] | None = None,
    status: dict[str, Any] | None = None,
    **meta: Any,
) -> dict[str, Any]:
    """An object of ``kind``; ``owner`` is (kind, name, uid) of its controller owner."""
    metadata: dict[str, Any] = {
        "name": name,
        "namespace": namespace,
        "uid": uid or f"{kind}-{name}-uid",
        **meta,
    }
    if owner is not None:
        metadata["ownerReferences"] = [
            {
                "apiVersion": kinds.API_VERSION,
                "kind": owner[0],
                "name": owner[1],
                "uid": owner[2],
                "controller": True,
            }
        ]
    if labels:
        metadata["labels"] = labels
    body: dict[str, Any] = {"kind": kind, "metadata": metadata}
    if spec is not None:
        body["spec"] = spec
    if status is not None:
        body["status"] = status
    return body


def ref(kind: str, name: str, namespace: str = NS) -> ObjectRef:
    return ObjectRef(kind, namespace, name)


@dataclass
class Prefix:
    fold: Fold = field(default_factory=lambda: Fold(Projection()))
    seq: int = 0

    def at(self, seq: int) -> str:
        return clocks.format_time(START + timedelta(seconds=seq))

    def append(self, record: Record) -> list[ObjectRef]:
        self.seq += 1
        return self.fold.apply(record.with_seq(Seq(self.seq), self.at(self.seq)))

    def put(self, body: dict[str, Any], event: str = "ADDED") -> list[ObjectRef]:
        return self.append(observed(event, body["kind"], body))

    def modify(self, body: dict[str, Any]) -> list[ObjectRef]:
        return self.put(body, "MODIFIED")

    def delete(self, body: dict[str, Any]) -> list[ObjectRef]:
        return self.put(body, "DELETED")

    def result(self, subject: ObjectRef, uid: str, key: str, **body: Any) -> list[ObjectRef]:
        record = Record(
            type=RecordType.EFFECT_RESULT,
            kind=subject.kind,
            namespace=subject.namespace,
            name=subject.name,
            uid=uid,
            body={"key": key, **body},
        )
        return self.append(record)


class NoExecutor:
    """An executor for tests in which nothing may be executed."""

    async def execute(self, effect: Effect) -> EffectResult:
        raise AssertionError(f"nothing is executed here, got {effect}")


async def reconciler_on(
    journal: Journal, queue: QueueSettings, metrics: RuntimeMetrics | None = None
) -> Reconciler:
    """A reconciler over ``journal`` with the default machines and no executor."""
    return Reconciler(
        journal=journal,
        executor=NoExecutor(),
        fold=await folding.resume(journal),
        timers=Timers(journal=journal, clock=clocks.SystemClock()),
        machines=MachineSettings(),
        queue=queue,
        reconcile=ReconcileSettings(),
        metrics=metrics,
    )


@contextlib.asynccontextmanager
async def reconciling(
    reconciler: Reconciler,
    reconcile: Callable[[ObjectRef], Awaitable[Outcome]],
    monkeypatch: pytest.MonkeyPatch,
) -> AsyncIterator[None]:
    """``reconciler``'s workers running, each pass being ``reconcile``; stopped on leaving."""

    async def synced() -> None:
        return None

    monkeypatch.setattr(reconciler, "reconcile", reconcile)
    running = asyncio.create_task(reconciler.run(synced=synced))
    try:
        await eventually(reconciler.started.is_set, what="the workers started")
        yield
    finally:
        reconciler.stop()
        await asyncio.wait_for(running, timeout=10)
