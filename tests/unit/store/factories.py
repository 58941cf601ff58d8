"""Records and clocks for the journal's tests: observed Pods, decisions, a clock moved by hand."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from typing import Any

from store import records
from store.journal import Journal
from store.records import Record, RecordType
from store.settings import JournalSettings

QUIET = JournalSettings(snapshot_every=None)  # no background snapshots: a test takes its own

OpenJournal = Callable[..., Awaitable[Journal]]  # the ``open_journal`` fixture: (settings=QUIET, *, at=path)


class ManualClock:
    def __init__(self, start: datetime = datetime(2026, 1, 1, tzinfo=UTC)) -> None:
        self.moment = start

    def now(self) -> datetime:
        return self.moment

    def advance(self, delta: timedelta) -> None:
        self.moment += delta


def pod(
    name: str, *, namespace: str = "default", uid: str = "", owners: tuple[str, ...] = (), **extra: Any
) -> dict[str, Any]:
    meta: dict[str, Any] = {
        "name": name,
        "namespace": namespace,
        "uid": uid or f"uid-{name}",
        "resourceVersion": "1",
    }
    if owners:
        meta["ownerReferences"] = [
            {"kind": "EphemeralRunnerSet", "name": "ers", "uid": owner} for owner in owners
        ]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, **extra}


def seen(name: str, event: str = "ADDED", *, kind: str = "Pod", **fields: Any) -> Record:
    obj = pod(name, **fields)
    obj["kind"] = kind
    return records.observed(event, kind, obj)


def decision(name: str, **body: Any) -> Record:
    return Record(
        type=RecordType.DECISION, kind="AutoscalingRunnerSet", namespace="default", name=name, body=body
    )
