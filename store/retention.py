"""Retention: which old records to forget, and forgetting them a chunk at a time.

Pruning moves two horizons up (``Horizons``): every raw record at or below ``raw`` is gone, and every
record at or below ``history`` is gone; ``history <= raw`` always, so decisions outlive the observed
events around them. Above ``raw`` the journal is complete and gap-free, and the journal never moves
``raw`` past its newest snapshot, so the projection can always be rebuilt.

``plan`` turns the settings into target horizons (times increase with seq, so an age becomes a seq by
binary search); ``prune_step`` deletes at most a chunk of rows towards them in the caller's
transaction, so appends wait for one chunk at most. The newest ``settings`` record is never pruned (it
says what the machines decide with, so a replay of what is left still knows), older ones go as raw
records do.

A size bound (``max_bytes``) bounds the journal's whole footprint on disk (``footprint``): the database
file with its free pages, the write-ahead log and its index. The log is held to ``wal_allowance`` of the
bound (``journal_size_limit`` and the auto-checkpoint, set by the journal on its writer); records are
pruned until their pages fit ``LOW_WATER`` of the bound less that allowance, and the journal then gives the
freed pages back (incremental vacuum) and truncates the log, so a pass starts again only after a tenth
of the bound was written.
"""

from __future__ import annotations

import contextlib
import math
import pathlib
from collections.abc import Collection
from dataclasses import dataclass
from datetime import datetime

import aiosqlite

from store import clocks
from store.records import RecordType
from store.schema import WAL_LIMIT, scalar
from store.settings import JournalSettings

HEADROOM = 0.85  # a footprint above this share of the size bound starts a retention pass
LOW_WATER = 0.7  # which brings the records' pages back under this share, less the log's allowance
WAL_SUFFIXES = ("-wal", "-shm")


@dataclass(frozen=True)
class Horizons:
    raw: int = 0
    history: int = 0


async def load(db: aiosqlite.Connection) -> Horizons:
    async with db.execute("SELECT raw, history FROM horizons WHERE id = 0") as cursor:
        row = await cursor.fetchone()
    return Horizons() if row is None else Horizons(raw=int(row[0]), history=int(row[1]))


async def used_bytes(db: aiosqlite.Connection) -> int:
    pages = await scalar(db, "PRAGMA page_count") - await scalar(db, "PRAGMA freelist_count")
    return pages * await scalar(db, "PRAGMA page_size")


def footprint(path: pathlib.Path) -> int:
    """Bytes the journal at ``path`` takes on disk: the database file, its write-ahead log and index."""
    total = 0
    for file in (path, *(path.with_name(path.name + suffix) for suffix in WAL_SUFFIXES)):
        with contextlib.suppress(FileNotFoundError):
            total += file.stat().st_size
    return total


def wal_allowance(max_bytes: int | None) -> int:
    """What the write-ahead log may hold on to between checkpoints under a size bound of ``max_bytes``."""
    return WAL_LIMIT if max_bytes is None else min(WAL_LIMIT, max_bytes // 16)


def over_bound(footprint: int, max_bytes: int | None, share: float = HEADROOM) -> bool:
    """Whether ``footprint`` is above ``share`` of the size bound (never without a bound)."""
    return max_bytes is not None and footprint > share * max_bytes


async def newest_before(db: aiosqlite.Connection, cutoff: str, *, above: int, through: int) -> int:
    """The largest seq in (above, through] of a record appended before ``cutoff`` (``above`` if none)."""
    lo, hi = above, through
    while lo < hi:
        mid = (lo + hi + 1) // 2
        async with db.execute(
            "SELECT seq, at FROM records WHERE seq >= ? AND seq <= ? ORDER BY seq LIMIT 1", (mid, hi)
        ) as cursor:
            row = await cursor.fetchone()
        if row is None or str(row[1]) >= cutoff:
            hi = mid - 1
        else:
            lo = int(row[0])
    return lo


def _in(types: Collection[RecordType]) -> str:
    return ", ".join(f"'{t.value}'" for t in sorted(types)) or "''"


# Every pruning deletion skips the newest settings record.
_NOT_NEWEST_SETTINGS = (
    f"seq <> (SELECT COALESCE(MAX(seq), 0) FROM records WHERE type = '{RecordType.SETTINGS.value}')"
)


async def newest_history_beyond(
    db: aiosqlite.Connection, count: int, kept_longer: Collection[RecordType]
) -> int:
    """The seq at or below which all but the newest ``count`` kept-longer records lie (0 if fewer)."""
    return await scalar(
        db,
        f"SELECT seq FROM records WHERE type IN ({_in(kept_longer)}) ORDER BY seq DESC LIMIT 1 OFFSET ?",
        count,
    )


async def plan(
    db: aiosqlite.Connection,
    *,
    current: Horizons,
    last_seq: int,
    settings: JournalSettings,
    now: datetime,
    footprint: int = 0,
) -> Horizons:
    """The horizons the settings ask for (never below ``current``, never above ``last_seq``);
    ``footprint`` is what the journal takes on disk now."""
    raw, history = current.raw, current.history
    bounds, kept = settings.retention, settings.history_retention
    if bounds.max_records is not None:
        raw = max(raw, last_seq - bounds.max_records)
    if bounds.max_age is not None:
        cutoff = clocks.format_time(now - bounds.max_age)
        raw = max(raw, await newest_before(db, cutoff, above=current.raw, through=last_seq))
    if kept.max_records is not None:
        history = max(history, await newest_history_beyond(db, kept.max_records, settings.kept_longer))
    if kept.max_age is not None:
        cutoff = clocks.format_time(now - kept.max_age)
        history = max(history, await newest_before(db, cutoff, above=current.history, through=last_seq))
    if bounds.max_bytes is not None:
        used = await used_bytes(db)
        budget = LOW_WATER * bounds.max_bytes - wal_allowance(bounds.max_bytes)
        if used > budget and (over_bound(footprint, bounds.max_bytes, LOW_WATER) or used > bounds.max_bytes):
            # Per record held (not per seq handed out: pruned seqs hold nothing).
            per_record = used / max(1, await scalar(db, "SELECT count(*) FROM records"))
            wanted = max(raw, current.raw + math.ceil((used - budget) / per_record))
            raw = min(wanted, last_seq)
            if wanted > last_seq:  # no raw record left to prune: history goes too
                history = max(history, min(last_seq, current.history + wanted - last_seq))
    raw = min(raw, last_seq)
    return Horizons(raw=raw, history=min(history, raw))


async def prune_step(
    db: aiosqlite.Connection,
    *,
    current: Horizons,
    target: Horizons,
    kept_longer: Collection[RecordType],
    chunk: int,
) -> tuple[Horizons, int]:
    """Delete at most ``chunk`` records towards ``target`` inside the caller's transaction and store the
    horizons reached; returns them and how many records were deleted."""
    if current.raw < target.raw:
        where = f"seq > ? AND seq <= ? AND type NOT IN ({_in(kept_longer)}) AND {_NOT_NEWEST_SETTINGS}"
        bounds = (current.raw, target.raw)
    elif current.history < target.history:
        where = f"seq > ? AND seq <= ? AND {_NOT_NEWEST_SETTINGS}"
        bounds = (current.history, target.history)
    else:
        return current, 0
    upto = await scalar(
        db, f"SELECT seq FROM records WHERE {where} ORDER BY seq LIMIT 1 OFFSET ?", *bounds, chunk
    )
    upto = bounds[1] if upto == 0 else upto - 1
    cursor = await db.execute(f"DELETE FROM records WHERE {where}", (bounds[0], upto))
    deleted = cursor.rowcount
    await cursor.close()
    reached = (
        Horizons(raw=upto, history=current.history)
        if current.raw < target.raw
        else Horizons(raw=current.raw, history=upto)
    )
    await db.execute("UPDATE horizons SET raw = ?, history = ? WHERE id = 0", (reached.raw, reached.history))
    return reached, deleted
