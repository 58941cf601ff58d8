"""The journal as its users see it: small ports to type against, so a test can pass a fake.

Watchers need only ``JournalAppender``; the controller also reads the ``ObjectIndex`` (the projection)
and the ``JournalReader`` (a ``RecordReader`` that also follows the tail); the HTTP API only reads.
``journal.Journal`` implements all of them (checked by mypy at the bottom of ``journal.py``).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Collection, Mapping, Sequence
from datetime import datetime
from typing import Any, Protocol

from store.positions import Position
from store.records import Record, RecordType


class JournalAppender(Protocol):
    async def append(self, records: Sequence[Record]) -> list[Record]:
        """Append ``records`` as one atomic transaction with consecutive seqs; return them as journaled
        (seq, time, redacted) once durable. Raises ``InvalidRecord`` for a record that cannot be
        journaled and ``JournalError`` when nothing could be written."""
        ...


class RecordReader(Protocol):
    """Reading records by filter (``journal.Journal``, and ``readonly.ReadOnlyJournal`` beside a writer)."""

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
        """Durable records with seq > ``after`` matching every filter given, in seq order."""
        ...


class PositionReader(Protocol):
    """What the journal held about one object at a position (``positions``)."""

    async def at(self, *, kind: str, namespace: str, name: str, seq: int) -> Position:
        """Its last observation, children and decision in force at ``seq``; raises ``positions.Pruned``
        when retention pruned the records that would say, ``positions.Beyond`` for a seq after the last
        record."""
        ...

    async def seq_at(self, moment: datetime) -> int:
        """The seq of the last record appended at or before ``moment`` (0 if none is left that early)."""
        ...


class JournalReader(RecordReader, Protocol):
    def tail(self, *, after: int = 0) -> AsyncIterator[Record]:
        """Every record with seq > ``after``, then each new one as it commits."""
        ...


class ObjectIndex(Protocol):
    def get(self, kind: str, namespace: str, name: str) -> Mapping[str, Any] | None:
        """The latest observed object, or ``None`` (never seen, or deleted)."""
        ...

    def items(self, kind: str, namespace: str | None = None) -> list[Mapping[str, Any]]:
        """The current objects of ``kind`` (in ``namespace`` if given), by namespace and name."""
        ...

    def children(self, owner_uid: str) -> list[tuple[str, str, str]]:
        """(kind, namespace, name) of the current objects owned by ``owner_uid``."""
        ...
