"""What the HTTP API reads, as small Protocols: a test passes a fake, the controller passes itself.

The API only reads: none of these can append to the journal.

* ``JournalView`` — the journal: the readers of ``store.ports`` (``JournalReader``: ``read`` filtered in
  seq order; ``JournalTail``: ``last_seq`` and ``tail`` to follow new records; ``PositionReader``: an
  object at a journal position; ``DeletionReader``: the deleted objects an owner had), plus
  ``append_refusal`` (why the journal takes no appends now, asked without appending), ``writer_failure``
  (why its writer stopped for good) and its ``projection``.
  ``store.journal.Journal`` is one.
* ``Objects`` — the projection (``store.ports.ObjectIndex``: the latest object per key, the owner index)
  and which kinds are listed.
* ``Readiness`` — what ``/readyz`` reports; the controller knows whether its watches are synced and
  whether it leads.
* ``ControllerStats`` — the counters only the running controller has (reconciles, queue depth, how far
  its fold has read, whether it leads) and its controller-runtime metric families, which it owns and
  feeds; ``/metrics`` derives everything else from the journal.

A history page reads through ``store.ports.JournalReader`` alone (a journal, or
``store.readonly.ReadOnlyJournal`` beside the controller that holds it).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from prometheus_client.registry import Collector

from store.ports import DeletionReader, JournalReader, JournalTail, ObjectIndex, PositionReader

__all__ = [
    "ControllerStats",
    "JournalView",
    "Objects",
    "Readiness",
    "ReadinessReport",
]


class Objects(ObjectIndex, Protocol):
    def is_synced(self, kind: str) -> bool:
        """Whether a ``sync`` record says the watch of ``kind`` has listed it once."""
        ...


class JournalView(JournalReader, JournalTail, PositionReader, DeletionReader, Protocol):
    @property
    def projection(self) -> Objects: ...

    @property
    def append_refusal(self) -> str | None:
        """Why the journal takes no appends now (closed, or its writes fail: a full disk); ``None`` when it
        does. Asking appends nothing."""
        ...

    @property
    def writer_failure(self) -> str | None:
        """Why the journal's writer stopped for good (only reopening the journal recovers it); ``None``
        while it writes or may again."""
        ...


@dataclass(frozen=True)
class ReadinessReport:
    """``journal_writable``: the journal takes appends (``journal_error`` says why not); ``synced``:
    every watch has listed its kind once; ``role``: ``leader`` (deciding) or ``standby`` (waiting to
    lead; still ready), or ``none`` when no controller runs beside the API. ``writer_failure``: why the
    journal's writer stopped for good; the process is then not alive (``/healthz``), as only a restart
    recovers it. ``identity`` and ``leader``: this replica's identity and the Lease holder it last saw,
    when a controller runs beside the API."""

    journal_writable: bool
    synced: bool
    role: str
    journal_error: str | None = None
    writer_failure: str | None = None
    identity: str | None = None  # this replica's identity, when a controller runs beside the API
    leader: str | None = None  # the Lease holder it last saw ("" or None: none known)

    @property
    def ready(self) -> bool:
        return self.journal_writable and self.synced

    @property
    def alive(self) -> bool:
        return self.writer_failure is None


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
