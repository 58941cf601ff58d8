"""What the HTTP API reads, as small Protocols: a test passes a fake, the controller passes itself.

* ``JournalView`` — the journal: ``read`` (filtered, in seq order), ``tail`` (follow new records),
  ``last_seq``, ``submit`` (used only with no records, as a probe that the writer still accepts appends)
  and its ``projection``. ``store.journal.Journal`` is one.
* ``Objects`` — the projection: the latest object per key, the owner index, which kinds are listed.
* ``Readiness`` — what ``/readyz`` reports; the controller knows whether its watches are synced and
  whether it leads.
* ``ControllerStats`` — the counters only the running controller has (reconciles, queue depth, how far
  its fold has read); ``/metrics`` derives everything else from the journal.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from store.records import Record, RecordType


class Objects(Protocol):
    def get(self, kind: str, namespace: str, name: str) -> Mapping[str, Any] | None: ...

    def items(self, kind: str, namespace: str | None = None) -> list[Mapping[str, Any]]: ...

    def children(self, owner_uid: str) -> list[tuple[str, str, str]]: ...

    def is_synced(self, kind: str) -> bool: ...


class RecordReader(Protocol):
    async def read(
        self,
        *,
        after: int = 0,
        limit: int | None = None,
        kind: str | None = None,
        namespace: str | None = None,
        name: str | None = None,
        types: Collection[RecordType] | None = None,
    ) -> list[Record]:
        """Records with seq > ``after`` matching every filter given, in seq order."""
        ...


class JournalView(RecordReader, Protocol):
    @property
    def last_seq(self) -> int: ...

    @property
    def projection(self) -> Objects: ...

    def tail(self, *, after: int = 0) -> AsyncIterator[Record]:
        """Every record with seq > ``after``, then each new one as it commits, until the journal closes."""
        ...

    def submit(self, records: Sequence[Record]) -> asyncio.Future[list[Record]]:
        """Queue an append; raises ``JournalError`` at once when the journal takes no more appends."""
        ...


@dataclass(frozen=True)
class ReadinessReport:
    """``journal_writable``: the journal takes appends; ``synced``: every watch has listed its kind once;
    ``role``: ``leader`` (deciding) or ``standby`` (waiting to lead; still ready), or ``none`` when no
    controller runs beside the API."""

    journal_writable: bool
    synced: bool
    role: str

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
        """Keys ready to be reconciled now."""
        ...

    @property
    def applied_seq(self) -> int:
        """The seq of the last journal record the controller has read."""
        ...
