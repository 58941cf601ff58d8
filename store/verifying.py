"""The integrity check: is the journal file whole, and is every record as it was written?

Checks, in order: SQLite's own ``PRAGMA integrity_check`` (pages, indexes); every record's checksum and
JSON body; that the sequence has no gap above the raw retention horizon; every snapshot's checksum and
contents. Damage is raised as ``JournalCorrupt`` carrying the seq of the first damaged record, with the
number of further problems in its message. It reads through a read-only connection, so it can run while
a controller appends (an older format is upgraded first, which needs the journal to be free).
"""

from __future__ import annotations

import pathlib
import sqlite3
from dataclasses import dataclass

import aiosqlite

from store import journal, reading, retention, rows, schema, snapshots
from store.errors import JournalCorrupt, JournalError, translate
from store.retention import Horizons


@dataclass(frozen=True)
class Verified:
    records: int
    first_seq: int
    last_seq: int
    snapshots: int
    horizons: Horizons

    def summary(self) -> str:
        snapshots = f"{self.snapshots} snapshot{'' if self.snapshots == 1 else 's'}"
        if not self.records:
            return f"journal ok: no records, {snapshots}"
        return f"journal ok: {self.records} records (seq {self.first_seq}–{self.last_seq}), {snapshots}"


def _lenient_text(data: bytes) -> str:
    # Damaged bytes must still reach the checksum (which then fails with the record's seq) rather than
    # abort the scan with a decoding error.
    return data.decode("utf-8", "surrogateescape")


async def verify(path: pathlib.Path) -> Verified:
    """Check the journal at ``path``; returns what it holds, or raises ``JournalCorrupt``."""
    await journal.upgrade_if_older(path)
    return await _verify(path)


async def before_opening(path: pathlib.Path) -> Verified | None:
    """What ``verify`` says of the journal at ``path``, asked before a controller opens it for writing,
    so it never appends to a journal ``verify`` calls damaged: raises ``JournalCorrupt``. None, checking
    nothing, when there is no journal yet (an empty or absent file) or it is of an older format (opening
    it checks every page and record before its upgrade rewrites them). Changes nothing in the file."""
    if not _written(path):
        return None
    db = await schema.connect(path, read_only=True)
    try:
        version = await schema.check(db, path)
    finally:
        await db.close()
    if version < schema.FORMAT:
        return None
    return await _verify(path)


def _written(path: pathlib.Path) -> bool:
    return path.is_file() and path.stat().st_size > 0


async def _verify(path: pathlib.Path) -> Verified:
    db = await schema.connect(path, read_only=True)
    db.text_factory = _lenient_text
    try:
        await _integrity(db)
        horizons = await retention.load(db)
        problems, counts = await _records(db, horizons)
        problems += await _snapshots(db)
        stored = await snapshots.seqs(db)
    except sqlite3.Error as exc:
        raise translate(exc, doing=f"verify {path}") from exc
    finally:
        await db.close()
    if problems:
        first = problems[0]
        more = f" (and {len(problems) - 1} more problems)" if len(problems) > 1 else ""
        raise JournalCorrupt(first.reason + more, seq=first.seq)
    return Verified(
        records=counts[0], first_seq=counts[1], last_seq=counts[2], snapshots=len(stored), horizons=horizons
    )


async def _integrity(db: aiosqlite.Connection) -> None:
    async with db.execute("PRAGMA integrity_check") as cursor:
        found = [str(row[0]) for row in await cursor.fetchall()]
    if found != ["ok"]:
        # SQLite lists its findings one a line, under a "*** in database main ***" heading: the first one
        # says where, and how many there are says how bad.
        problems = [line for text in found for line in text.splitlines() if not line.startswith("***")]
        first = problems[0] if problems else "no detail"
        more = f" and {len(problems) - 1} more" if len(problems) > 1 else ""
        raise JournalCorrupt(f"SQLite found its pages damaged ({first}{more})")


async def _records(
    db: aiosqlite.Connection, horizons: Horizons
) -> tuple[list[JournalCorrupt], tuple[int, int, int]]:
    problems: list[JournalCorrupt] = []
    count, first, last, expected = 0, 0, 0, horizons.raw + 1
    async for page in reading.scan(db):
        for row in page:
            seq = row[0]
            try:
                rows.decode(row)
            except JournalError as exc:
                problems.append(exc if isinstance(exc, JournalCorrupt) else JournalCorrupt(str(exc), seq=seq))
            if seq > horizons.raw:
                if seq != expected:
                    gap = f"seq {expected} is" if seq - 1 == expected else f"seqs {expected}–{seq - 1} are"
                    problems.append(JournalCorrupt(f"{gap} missing", seq=expected))
                expected = seq + 1
            count, first, last = count + 1, first or seq, seq
    return problems, (count, first, last)


async def _snapshots(db: aiosqlite.Connection) -> list[JournalCorrupt]:
    problems: list[JournalCorrupt] = []
    async with db.execute("SELECT seq, body, checksum FROM snapshots ORDER BY seq") as cursor:
        stored = await cursor.fetchall()
    for seq, blob, checksum in stored:
        try:
            snapshots.unpack(bytes(blob), int(checksum), seq=int(seq))
        except JournalCorrupt as exc:
            problems.append(exc)
    return problems
