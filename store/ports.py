"""The journal as its users see it: the one declaration of its ports, so a test can pass a fake.

Three small journal ports, each with exactly what some user calls, composed by the users that need more
than one (as a client embeds a reader and a writer):

* ``JournalWriter`` — ``append``: the watchers, the timers, the reconcile loop, the settings record.
* ``JournalReader`` — ``read`` by filter: the outbox, the fold's resume, the settings record, the HTTP
  API's history pages (``journal.Journal``, and ``readonly.ReadOnlyJournal`` beside the process that
  writes).
* ``JournalTail`` — ``last_seq`` and ``tail``: the reconcile loop, the HTTP API's index and event stream.

Beside them, ``PositionReader`` (an object at a journal position: the HTTP API, ``arcsm history``),
``DeletionReader`` (the deleted objects an owner had: the HTTP API's deleted runners of a scale set) and
``ObjectIndex`` (the projection: the latest object per key and the owner index). ``journal.Journal``
implements all of them, ``readonly.ReadOnlyJournal`` ``JournalReader`` and ``PositionReader`` (it may
read a format-2 file, which has no owners index; checked by mypy at the bottom of ``journal.py`` and
``readonly.py``). Nothing that only reads is typed with ``JournalWriter``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Collection, Mapping, Sequence
from datetime import datetime
from typing import Any, Protocol

from store.positions import Position
from store.reading import Deleted
from store.records import Record, RecordType


class JournalWriter(Protocol):
    async def append(self, records: Sequence[Record]) -> Sequence[Record]:
        """Append ``records`` as one atomic transaction with consecutive seqs; return them as journaled
        (seq, time, redacted) once durable. Raises ``InvalidRecord`` for a record that cannot be
        journaled and ``JournalError`` when nothing could be written (the caller may append the same
        facts again later)."""
        ...


class JournalReader(Protocol):
    async def read(
        self,
        *,
        after: int = 0,
        limit: int | None = None,
        kind: str | None = None,
        namespace: str | None = None,
        name: str | None = None,
        types: Collection[RecordType] | None = None,
        through: int | None = None,
    ) -> list[Record]:
        """Durable records with seq > ``after`` (and <= ``through``) matching every filter given, in seq
        order, at most ``limit`` of them."""
        ...


class JournalTail(Protocol):
    @property
    def last_seq(self) -> int:
        """The seq of the last durable record (0 when there is none)."""
        ...

    def tail(self, *, after: int = 0) -> AsyncIterator[Record]:
        """Every record with seq > ``after``, then each new one as it commits; ends when the journal
        closes."""
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


class DeletionReader(Protocol):
    async def deleted_children(
        self, owner_uid: str, *, kind: str, offset: int = 0, limit: int = 100
    ) -> Deleted:
        """How many objects of ``kind`` that named ``owner_uid`` in their ``ownerReferences`` were
        deleted, and the DELETED records of ``limit`` of them from ``offset``, newest first."""
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
