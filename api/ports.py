"""What the HTTP API reads, as small Protocols: a test passes a fake, the controller passes itself.

* ``JournalView`` — the journal: ``store.ports.JournalReader`` (``read`` filtered in seq order, ``tail``
  to follow new records), ``store.ports.PositionReader`` (an object at a journal position), plus
  ``last_seq``, ``submit`` (used only with no records, as a probe that the
  writer still accepts appends), ``write_failure`` (why its writes fail, while they do) and its
  ``projection``. ``store.journal.Journal`` is one.
* ``RecordReader`` — ``store.ports.RecordReader``, re-exported: what a history page reads (a journal, or
  ``store.readonly.ReadOnlyJournal`` beside the controller that holds it).
* ``Objects`` — the projection: the latest object per key, the owner index, which kinds are listed.
* ``Readiness`` — what ``/readyz`` reports; the controller knows whether its watches are synced and
  whether it leads.
* ``ControllerStats`` — the counters only the running controller has (reconciles, queue depth, how far
  its fold has read, whether it leads) and its controller-runtime metric families, which it owns and
  feeds; ``/metrics`` derives everything else from the journal.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from prometheus_client.registry import Collector

from store.ports import JournalReader, PositionReader, RecordReader
from store.records import Record

__all__ = [
    "ControllerStats",
    "JournalView",
    "Objects",
    "Readiness",
    "ReadinessReport",
    "RecordReader",
]


class Objects(Protocol):
    def get(self, kind: str, namespace: str, name: str) -> Mapping[str, Any] | None: ...

    def items(self, kind: str, namespace: str | None = None) -> list[Mapping[str, Any]]: ...

    def children(self, owner_uid: str) -> list[tuple[str, str, str]]: ...

    def is_synced(self, kind: str) -> bool: ...


class JournalView(JournalReader, PositionReader, Protocol):
    @property
    def last_seq(self) -> int: ...

    @property
    def projection(self) -> Objects: ...

    def submit(self, records: Sequence[Record]) -> asyncio.Future[list[Record]]:
        """Queue an append; raises ``JournalError`` at once when the journal takes no more appends."""
        ...

    @property
    def write_failure(self) -> str | None:
        """Why the last write failed (a full disk) while no write has committed since; else ``None``."""
        ...


@dataclass(frozen=True)
class ReadinessReport:
    """``journal_writable``: the journal takes appends (``journal_error`` says why not); ``synced``:
    every watch has listed its kind once; ``role``: ``leader`` (deciding) or ``standby`` (waiting to
    lead; still ready), or ``none`` when no controller runs beside the API."""

    journal_writable: bool
    synced: bool
    role: str
    journal_error: str | None = None

    @property
    def ready(self) -> bool:
        return self.journal_writable and self.synced


class Readiness(Protocol):
    def report(self) -> ReadinessReport: ...


class ControllerStats(Protocol):
    @property
    def reconciles(self) -> int:
        """Reconciles run since the controller started."""
        ...

    @property
    def decisions(self) -> int:
        """Reconciles that recorded a decision."""
        ...

    @property
    def queue_depth(self) -> int:
        """Keys queued to be reconciled: those a worker may take now and those held back by their kind's
        concurrency bound (neither the keys in flight nor those delayed by a backoff)."""
        ...

    @property
    def applied_seq(self) -> int:
        """The seq of the last journal record the controller has read."""
        ...

    @property
    def leading(self) -> bool:
        """Whether this replica decides now (a standby leaves upstream's ``gha_controller_*`` gauges to the
        leader, so that a sum over replicas counts each object once)."""
        ...

    @property
    def runtime_metrics(self) -> Collector:
        """The controller's own metric families (controller-runtime's reconcile, work queue, REST client
        and leader election families), collected when ``/metrics`` is scraped."""
        ...
