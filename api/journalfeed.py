"""Raw journal records as the API serves them (``/api/v1/journal``), and the stream that follows new ones.

The journal keeps nothing secret (``store.redacting`` runs inside every append); a served body passes
through the same redaction once more, so a record journaled by an older arcsm cannot leak either.

The stream is server-sent events: one ``record`` event per record (``id`` is its seq, so a client that
reconnects with ``Last-Event-ID`` resumes where it stopped), and a comment line every ``KEEPALIVE``
seconds while nothing happens, so proxies keep the connection and a gone client is noticed. It ends when
the server stops (``Streams.close``) or the journal closes. At most ``Streams.limit`` are open at once:
``Streams.admit`` refuses one more (the route answers 503), so readers cannot pile up on the server.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import AsyncIterator, Collection

from api.models import JournalPage, JournalRecord
from store import redacting
from store.ports import JournalReader, JournalTail
from store.records import Record, RecordType

log = logging.getLogger("arcsm.api")

KEEPALIVE = 15.0
BUFFER = 1_000  # records read ahead of a slow client


def served(record: Record) -> JournalRecord:
    body, _ = redacting.for_journal(record)
    return JournalRecord(
        seq=record.seq or 0,
        at=record.at,
        type=str(record.type),
        kind=record.kind,
        namespace=record.namespace,
        name=record.name,
        uid=record.uid,
        resource_version=record.resource_version,
        body=dict(body),
    )


async def page(
    reader: JournalReader,
    *,
    after: int,
    limit: int,
    kind: str | None,
    namespace: str | None,
    name: str | None,
    types: Collection[RecordType] | None,
) -> JournalPage:
    found = await reader.read(
        after=after, limit=limit, kind=kind, namespace=namespace, name=name, types=types
    )
    full = len(found) == limit and bool(found)
    return JournalPage(items=[served(r) for r in found], next=found[-1].seq if full else None)


class Streams:
    """The open event streams of one app, at most ``limit`` (None: no bound): ``admit`` counts one in,
    ``release`` out; ``close`` ends them all (the server is stopping)."""

    def __init__(self, limit: int | None = None) -> None:
        self.closing = asyncio.Event()
        self.limit = limit
        self.open = 0

    def admit(self) -> bool:
        """Count one more stream in, unless ``limit`` are open: then False, and nothing is counted."""
        if self.limit is not None and self.open >= self.limit:
            return False
        self.open += 1
        return True

    def release(self) -> None:
        self.open -= 1

    def close(self) -> None:
        self.closing.set()


def matches(
    record: Record,
    *,
    kinds: Collection[str] | None,
    namespace: str | None,
    name: str | None,
    types: Collection[RecordType] | None,
) -> bool:
    return (
        (not kinds or record.kind in kinds)
        and (namespace is None or record.namespace == namespace)
        and (name is None or record.name == name)
        and (types is None or record.type in types)
    )


def event(record: Record) -> bytes:
    data = json.dumps(served(record).model_dump(mode="json", by_alias=True), separators=(",", ":"))
    return f"id: {record.seq}\nevent: record\ndata: {data}\n\n".encode()


async def stream(
    journal: JournalTail,
    streams: Streams,
    *,
    after: int,
    kinds: Collection[str] | None,
    namespace: str | None,
    name: str | None,
    types: Collection[RecordType] | None,
) -> AsyncIterator[bytes]:
    """The server-sent events of every matching record after ``after``, then of each new one.

    ``kinds`` and ``types`` take several values (any of them matches), so a client that only needs to
    know when phases may have changed (the timeline page) asks for the decision and observed records of
    the four ARC kinds and is not woken by every Pod, Secret or effect result."""
    queue: asyncio.Queue[Record | None] = asyncio.Queue(maxsize=BUFFER)

    async def follow() -> None:
        try:
            async for record in journal.tail(after=after):
                if matches(record, kinds=kinds, namespace=namespace, name=name, types=types):
                    await queue.put(record)
        except Exception as exc:  # a damaged record, a failing read: end the stream, say why in the log
            log.warning("journal stream ended: %s", exc)
        await queue.put(None)  # the journal closed: the stream ends (not reached when cancelled)

    follower = asyncio.create_task(follow(), name="journal stream")
    closing = asyncio.create_task(streams.closing.wait(), name="journal stream closing")
    getting: asyncio.Future[Record | None] | None = None
    try:
        yield b": following the journal\n\n"
        while True:
            getting = asyncio.ensure_future(queue.get())
            done, _ = await asyncio.wait({getting, closing}, timeout=KEEPALIVE, return_when="FIRST_COMPLETED")
            if getting not in done:
                getting.cancel()
                if closing in done:
                    return
                yield b": keepalive\n\n"
                continue
            record = getting.result()
            if record is None:
                return
            yield event(record)
    finally:
        # A client that went away closes this generator mid-wait: the pending get goes with it.
        pending = [task for task in (follower, closing, getting) if task is not None]
        for task in pending:
            task.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await asyncio.gather(*pending, return_exceptions=True)
