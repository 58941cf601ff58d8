"""Records as rows of the ``records`` table, the checksum that guards each row, and how rows go in.

The checksum is a CRC-32 over every column (the sequence number included, so a row moved to another
seq does not verify), joined by a separator no field can contain unescaped. It detects damage, not
tampering. ``decode`` checks it and refuses a row that does not match.
"""

from __future__ import annotations

import functools
import itertools
import sqlite3
import zlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import aiosqlite

from statemachines.jsonvalues import JsonObject
from store import jsontext, redacting
from store.errors import InvalidRecord, JournalCorrupt
from store.records import RECORD_TYPES, Record, RecordType, Seq

COLUMNS = "seq, at, type, kind, namespace, name, uid, resource_version, body, checksum"
INSERT = f"INSERT INTO records ({COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"

Row = tuple[int, str, str, str, str, str, str, str, str, int]

# Rows go in by multi-row INSERTs of power-of-two sizes, the largest holding 2048 rows (20,480
# parameters; SQLite allows 32,766). One statement is one call into SQLite that runs without the GIL,
# where ``executemany`` takes the GIL back for every row: while the event loop's thread is busy, a
# thread doing that waits a switch interval (5 ms) per row, and a busy controller's group commit crawls.
MAX_ROWS_PER_INSERT = 2048


@functools.cache
def insert_statement(count: int) -> str:
    """An INSERT of ``count`` rows (a power of two, so few distinct statements are compiled)."""
    return f"INSERT INTO records ({COLUMNS}) VALUES " + ", ".join(["(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"] * count)


def insert_chunks(rows: Sequence[Row]) -> Iterator[tuple[str, list[object]]]:
    """(statement, parameters) pairs that insert ``rows`` in order."""
    return _chunks(rows, insert_statement)


def _chunks(
    rows: Sequence[Sequence[object]], statement: Callable[[int], str]
) -> Iterator[tuple[str, list[object]]]:
    """``rows`` as multi-row statements of a power-of-two count each (``statement(count)``), in order:
    ``executemany`` takes the GIL back for every row."""
    start = 0
    while start < len(rows):
        count = min(MAX_ROWS_PER_INSERT, 1 << ((len(rows) - start).bit_length() - 1))
        yield statement(count), list(itertools.chain.from_iterable(rows[start : start + count]))
        start += count


async def insert(db: aiosqlite.Connection, rows: Sequence[Row]) -> None:
    """Insert ``rows`` and their ``owners`` rows (inside the caller's transaction)."""
    for statement, parameters in insert_chunks(rows):
        await db.execute(statement, parameters)
    for statement, parameters in _owner_chunks(owner_rows(rows)):
        await db.execute(statement, parameters)


def insert_now(
    connection: sqlite3.Connection, rows: Sequence[Row], owners: Sequence[OwnerRow] | None = None
) -> None:
    """Insert ``rows`` and their ``owners`` rows through a plain connection (on its thread, inside the
    caller's transaction); ``owners`` when the caller has them from the bodies (``owners_of``), else
    they are read from the rows' text."""
    for statement, parameters in insert_chunks(rows):
        connection.execute(statement, parameters)
    for statement, parameters in _owner_chunks(owner_rows(rows) if owners is None else owners):
        connection.execute(statement, parameters)


# The owners index (``store.schema``): one row per owner uid an observed object names. It is filled here,
# in the transaction that inserts the records, rather than by an SQLite trigger: a trigger on ``records``
# cost every insert about 5 µs (a third of an append's SQLite time) even when its WHEN clause was false.
# An append hands the rows over from the bodies it holds (``owners_of``); other writers have them read
# from the text, parsed only where it holds the key.
OwnerRow = tuple[str, int, str, str, str, int]
_OBSERVED = RecordType.OBSERVED.value


@functools.cache
def _owners_statement(count: int) -> str:
    return "INSERT OR IGNORE INTO owners (uid, seq, kind, namespace, name, gone) VALUES " + ", ".join(
        ["(?, ?, ?, ?, ?, ?)"] * count
    )


def _owner_chunks(owners: Sequence[OwnerRow]) -> Iterator[tuple[str, list[object]]]:
    """Multi-row statements inserting ``owners``, as ``insert_chunks``."""
    return _chunks(owners, _owners_statement)


def owners_of(seq: int, type_: str, kind: str, namespace: str, name: str, body: object) -> list[OwnerRow]:
    """The ``owners`` rows of one record: for an observed one whose object's ``ownerReferences`` is a
    list, one per distinct ``uid`` text among its mappings, ``gone`` 1 for a DELETED event."""
    if type_ != _OBSERVED or not isinstance(body, dict):
        return []
    obj = body.get("object")
    meta = obj.get("metadata") if isinstance(obj, dict) else None
    refs = meta.get("ownerReferences") if isinstance(meta, dict) else None
    if not isinstance(refs, list):
        return []
    gone = int(body.get("event") == "DELETED")
    uids = dict.fromkeys(r["uid"] for r in refs if isinstance(r, dict) and isinstance(r.get("uid"), str))
    return [(uid, seq, kind, namespace, name, gone) for uid in uids]


def owner_rows(rows: Sequence[Row]) -> list[OwnerRow]:
    """The ``owners`` rows of ``rows``, read from their text. A body that does not read as JSON names
    none (``decode`` refuses it when it is read)."""
    found: list[OwnerRow] = []
    for seq, _, type_, kind, namespace, name, _, _, text, _ in rows:
        if type_ != _OBSERVED or '"ownerReferences"' not in text:
            continue
        try:
            body = jsontext.loads(text)
        except ValueError:
            continue
        found.extend(owners_of(seq, type_, kind, namespace, name, body))
    return found


OBSERVED_EVENTS = frozenset({"ADDED", "MODIFIED", "DELETED"})


def checksum(
    seq: int, at: str, type_: str, kind: str, namespace: str, name: str, uid: str, rv: str, body: str
) -> int:
    # The CRC of the fields joined by \x1f, computed in two steps so the body is not copied into a join.
    head = "\x1f".join((str(seq), at, type_, kind, namespace, name, uid, rv, ""))
    return zlib.crc32(
        body.encode("utf-8", "surrogatepass"), zlib.crc32(head.encode("utf-8", "surrogatepass"))
    )


_TYPE_TEXT = {t: t.value for t in RecordType}  # a StrEnum's .value is a property: slow per record


def _type_text(record: Record) -> str:
    type_ = _TYPE_TEXT.get(record.type)
    if type_ is None:
        raise InvalidRecord(f"record type {record.type!r} is not a RecordType")
    if record.type is RecordType.OBSERVED:
        body, obj = record.body, record.body.get("object")
        if body.get("event") not in OBSERVED_EVENTS or not (type(obj) is dict or isinstance(obj, Mapping)):
            raise InvalidRecord(
                f"observed {record.kind} {record.namespace}/{record.name}: the body must be "
                '{"event": "ADDED"|"MODIFIED"|"DELETED", "object": {...}}'
            )
    return type_


# A record made ready to append: the record, its type's text, and the body kept with its JSON text.
Prepared = tuple[Record, str, JsonObject, str]


def prepare(record: Record) -> Prepared:
    """The costly half of encoding, done when a record is submitted: validation, redaction and JSON.

    Raises ``InvalidRecord`` when the record cannot be journaled.
    """
    type_ = _type_text(record)
    try:
        body, text = redacting.for_journal(record)
    except (TypeError, ValueError) as exc:
        raise InvalidRecord(f"{type_} {record.kind} {record.name}: the body is not JSON: {exc}") from exc
    return record, type_, body, text


def finish(prepared: Prepared, seq: int, at: str) -> tuple[Row, Record]:
    """The row to insert for a prepared record appended as ``seq`` at ``at``, and the record as
    journaled (redacted, with its seq and time)."""
    record, type_, body, text = prepared
    kind, namespace, name = record.kind, record.namespace, record.name
    uid, rv = record.uid, record.resource_version
    crc = checksum(seq, at, type_, kind, namespace, name, uid, rv, text)
    journaled = record.as_journaled(Seq(seq), at, body)
    return (seq, at, type_, kind, namespace, name, uid, rv, text, crc), journaled


def encode(record: Record, seq: int, at: str) -> tuple[Row, Record]:
    """``finish(prepare(record), seq, at)``."""
    return finish(prepare(record), seq, at)


def verify(row: Row) -> None:
    """Raise ``JournalCorrupt`` with the row's seq unless its checksum matches its columns."""
    seq, at, type_, kind, namespace, name, uid, rv, text, stored = row
    # Every column but the seq and the checksum is text: the checksum's join and encode refuse any other.
    try:
        matches = stored == checksum(seq, at, type_, kind, namespace, name, uid, rv, text)
    except (TypeError, AttributeError):
        matches = False
    if not matches:
        raise JournalCorrupt("record checksum mismatch (damaged after it was written)", seq=seq)


def decode(row: Row) -> Record:
    """The record a row holds, after checking its checksum; ``JournalCorrupt`` (with the seq) if not."""
    verify(row)
    seq, at, type_, kind, namespace, name, uid, rv, text, _ = row
    record_type = RECORD_TYPES.get(type_)
    try:
        body: Any = jsontext.loads(text)
    except ValueError as exc:
        raise JournalCorrupt(f"unreadable record: {exc}", seq=seq) from exc
    if record_type is None:
        raise JournalCorrupt(f"unreadable record: {type_!r} is not a valid RecordType", seq=seq)
    if not isinstance(body, dict):
        raise JournalCorrupt("record body is not a JSON object", seq=seq)
    return Record.read_back(record_type, kind, namespace, name, uid, rv, body, Seq(seq), at)
