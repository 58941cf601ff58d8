"""Reading records back: filtered queries, full scans in pages, the deletions of an owner's objects, and
folding records into a projection.

Every row read is checked against its checksum (``rows.decode``); a damaged one raises
``JournalCorrupt`` with its seq rather than being handed out.
"""

from __future__ import annotations

import contextlib
import logging
import sqlite3
from collections.abc import AsyncGenerator, Collection, Sequence
from dataclasses import dataclass

import aiosqlite

from store import onthread, rows
from store.errors import JournalCorrupt, translate
from store.projection import PROJECTED_TYPES, Projection
from store.records import Record, RecordType, Seq

log = logging.getLogger(__name__)

PAGE = 2_000
_PROJECTED = frozenset(t.value for t in PROJECTED_TYPES)
_OBSERVED = RecordType.OBSERVED.value


def query(
    *,
    after: int = 0,
    through: int | None = None,
    limit: int | None = None,
    kind: str | None = None,
    namespace: str | None = None,
    name: str | None = None,
    types: Collection[RecordType] | None = None,
) -> tuple[str, list[object]]:
    """The SQL selecting the records that match, in seq order."""
    where: list[str] = ["seq > ?"]
    args: list[object] = [after]
    if through is not None:
        where.append("seq <= ?")
        args.append(through)
    for column, value in (("kind", kind), ("namespace", namespace), ("name", name)):
        if value is not None:
            where.append(f"{column} = ?")
            args.append(value)
    if types is not None:
        values = sorted(RecordType(t).value for t in types)
        where.append(f"type IN ({', '.join('?' * len(values)) or 'NULL'})")
        args.extend(values)
    sql = f"SELECT {rows.COLUMNS} FROM records WHERE {' AND '.join(where)} ORDER BY seq"
    if limit is not None:
        sql += " LIMIT ?"
        args.append(limit)
    return sql, args


async def select(db: aiosqlite.Connection, sql: str, args: Sequence[object]) -> list[Record]:
    """The records a ``query`` selects."""
    try:
        found = await db.execute_fetchall(sql, args)  # one hand-off to the connection's thread
    except sqlite3.Error as exc:
        raise translate(exc, doing="read") from exc
    return [rows.decode(as_row(row)) for row in found]


def as_row(row: sqlite3.Row | tuple[object, ...]) -> rows.Row:
    return tuple(row)


async def scan(
    db: aiosqlite.Connection, *, after: int = 0, through: int | None = None
) -> AsyncGenerator[list[rows.Row]]:
    """Every row with seq > ``after`` (and <= ``through``, if given), in seq order, a page at a time (not
    yet checked)."""
    sql, args = query(after=after, through=through)
    try:
        async with db.execute(sql, args) as cursor:
            while page := await cursor.fetchmany(PAGE):
                yield [as_row(row) for row in page]
    except sqlite3.Error as exc:
        raise translate(exc, doing="scan") from exc


@dataclass(frozen=True)
class Deleted:
    """How many objects of a kind that named an owner were deleted, and a page of their DELETED records."""

    total: int
    records: list[Record]


_DELETED_COUNT = "SELECT count(*) FROM owners WHERE uid = ? AND kind = ? AND gone = 1"
_DELETED_PAGE = (
    f"SELECT {rows.COLUMNS} FROM records WHERE seq IN (SELECT seq FROM owners WHERE uid = ? AND kind = ? "
    "AND gone = 1 ORDER BY seq DESC LIMIT ? OFFSET ?) ORDER BY seq DESC"
)


async def deleted_children(
    db: aiosqlite.Connection, owner_uid: str, *, kind: str, offset: int, limit: int
) -> Deleted:
    """The DELETED records of the objects of ``kind`` whose ``ownerReferences`` named ``owner_uid`` when
    they were deleted, newest first (``limit`` from ``offset``), and how many there are: read from the
    ``owners`` index (``store.schema``) in one hand-off, no other record read."""

    def work(connection: sqlite3.Connection) -> tuple[int, list[rows.Row]]:
        total = connection.execute(_DELETED_COUNT, (owner_uid, kind)).fetchone()[0]
        found = connection.execute(_DELETED_PAGE, (owner_uid, kind, limit, offset)).fetchall()
        return int(total), [as_row(row) for row in found]

    try:
        total, found = await onthread.call(db, work)
    except sqlite3.Error as exc:
        raise translate(exc, doing="read") from exc
    return Deleted(total=total, records=[rows.decode(row) for row in found])


async def decision_reach(db: aiosqlite.Connection) -> tuple[int, int]:
    """The seq of the last record, and how far ahead of the seq it read (its body's ``seq``) a decision
    record lies at most (0 without decisions; a body that is not JSON, or does not say, is not counted:
    the reader refuses it when it reads it). Read by SQLite from the type index, no row decoded."""
    sql = (
        "SELECT (SELECT coalesce(max(seq), 0) FROM records), "
        "(SELECT coalesce(max(seq - json_extract(body, '$.seq')), 0) FROM records "
        "WHERE type = ? AND json_valid(body) AND json_type(body, '$.seq') = 'integer')"
    )
    try:
        async with db.execute(sql, (RecordType.DECISION.value,)) as cursor:
            found = await cursor.fetchone()
    except sqlite3.Error as exc:
        raise translate(exc, doing="scan") from exc
    assert found is not None
    return int(found[0]), max(0, int(found[1]))


async def fold(db: aiosqlite.Connection, projection: Projection) -> Projection:
    """``projection`` with every record after its seq applied (the tail after a snapshot).

    The fold is last-writer-wins per object, so only the newest observation of each object is decoded
    and applied (in seq order); every row's checksum is still checked. A damaged record the projection
    needs raises ``JournalCorrupt``; a damaged one it does not need (a decision, an effect) is logged,
    so the controller still starts, and is refused when it is read.
    """
    newest: dict[tuple[str, str, str], rows.Row] = {}
    others: list[rows.Row] = []
    last = projection.seq
    # Closed here, not when the loop collects it: a damaged row ends the fold before its connection closes.
    async with contextlib.aclosing(scan(db, after=projection.seq)) as pages:
        async for page in pages:
            for row in page:
                last = row[0]
                if row[2] == _OBSERVED:
                    rows.verify(row)
                    newest[row[3], row[4], row[5]] = row
                elif row[2] in _PROJECTED:
                    others.append(row)
                else:
                    try:
                        rows.verify(row)
                    except JournalCorrupt as exc:
                        log.error(
                            "journal damaged: %s; run `arcsm journal verify`", exc, extra={"seq": row[0]}
                        )
    for row in sorted([*newest.values(), *others]):
        projection.apply(rows.decode(row))
    projection.apply(Record(type=RecordType.TIMER, seq=Seq(last)))  # only advances its seq
    return projection
