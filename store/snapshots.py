"""Projection snapshots: the projection as of a seq, so a start replays only the records after it.

A snapshot is written in the same transaction as a ``snapshot`` record at the same seq (the marker shows
in the journal where snapshots were taken). Its body is the projection's JSON, zlib-compressed, with a
CRC-32 of its own. On start the newest snapshot that reads back cleanly and is not older than the raw
retention horizon is loaded; a damaged one is skipped for an older one (the records after it are still
there), and with none usable the projection is folded from the first record.
"""

from __future__ import annotations

import json
import logging
import zlib
from collections.abc import Iterator, Mapping
from typing import Any

import aiosqlite

from store import redacting
from store.errors import JournalCorrupt
from store.projection import Projection

log = logging.getLogger(__name__)


def pack(state: Mapping[str, Any]) -> tuple[bytes, int]:
    """The stored form of a projection state, and its checksum (run it off the event loop).

    The JSON text is ``redacting.encode(state)``'s, but compressed a piece at a time (``pieces``): a
    fleet's projection is tens of MB as text, which would otherwise be held twice (as text and as bytes)
    beside the projection itself for as long as the compression takes."""
    compressor = zlib.compressobj(1)
    parts = [compressor.compress(piece.encode()) for piece in pieces(state)]
    parts.append(compressor.flush())
    blob = b"".join(parts)
    return blob, zlib.crc32(blob)


def pieces(state: Mapping[str, Any]) -> Iterator[str]:
    """``redacting.encode(state)`` in pieces whose concatenation is that text: a top-level list value
    (the objects) an element at a time, every other value whole. Its keys must be strings."""
    encode = redacting.encode
    yield "{"
    for position, (key, value) in enumerate(state.items()):
        if not isinstance(key, str):
            raise TypeError(f"a snapshot's keys are strings, not {key!r}")
        yield ("," if position else "") + encode(key) + ":"
        if isinstance(value, list):
            yield "["
            for index, item in enumerate(value):
                yield ("," if index else "") + encode(item)
            yield "]"
        else:
            yield encode(value)
    yield "}"


def unpack(blob: bytes, checksum: int, *, seq: int) -> Projection:
    if zlib.crc32(blob) != checksum:
        raise JournalCorrupt("snapshot checksum mismatch", seq=seq)
    try:
        state = json.loads(zlib.decompress(blob))
        projection = Projection.from_snapshot(state)
    except (ValueError, TypeError, KeyError, zlib.error) as exc:
        raise JournalCorrupt(f"unreadable snapshot: {exc}", seq=seq) from exc
    if projection.seq != seq:
        raise JournalCorrupt(f"snapshot holds the projection at seq {projection.seq}", seq=seq)
    return projection


async def write(
    db: aiosqlite.Connection, *, seq: int, at: str, objects: int, blob: bytes, checksum: int
) -> None:
    """Insert a snapshot (inside the caller's transaction)."""
    await db.execute(
        "INSERT INTO snapshots (seq, at, objects, body, checksum) VALUES (?, ?, ?, ?, ?)",
        (seq, at, objects, blob, checksum),
    )


async def seqs(db: aiosqlite.Connection) -> list[int]:
    """The seqs of the stored snapshots, newest first."""
    async with db.execute("SELECT seq FROM snapshots ORDER BY seq DESC") as cursor:
        return [int(row[0]) for row in await cursor.fetchall()]


async def load(db: aiosqlite.Connection, *, raw_horizon: int) -> Projection | None:
    """The newest usable snapshot's projection; ``None`` when the projection must be folded from the start.

    Raises ``JournalCorrupt`` when no snapshot is usable and records were already pruned.
    """
    for seq in await seqs(db):
        if seq < raw_horizon:
            break
        async with db.execute("SELECT body, checksum FROM snapshots WHERE seq = ?", (seq,)) as cursor:
            row = await cursor.fetchone()
        assert row is not None
        try:
            return unpack(bytes(row[0]), int(row[1]), seq=seq)
        except JournalCorrupt as exc:
            log.warning("skipping a damaged snapshot: %s", exc, extra={"seq": seq})
    if raw_horizon > 0:
        raise JournalCorrupt(
            f"no usable snapshot covers the records pruned up to seq {raw_horizon}; "
            "the projection cannot be rebuilt (restore the journal or import an export)"
        )
    return None


async def prune(db: aiosqlite.Connection, *, keep: int, raw_horizon: int) -> int:
    """Delete all but the newest ``keep`` snapshots, and any the raw horizon has passed (but the newest).

    Runs inside the caller's transaction; returns how many were deleted.
    """
    stored = await seqs(db)
    doomed = [seq for i, seq in enumerate(stored) if i > 0 and (i >= keep or seq < raw_horizon)]
    await db.executemany("DELETE FROM snapshots WHERE seq = ?", [(seq,) for seq in doomed])
    return len(doomed)
