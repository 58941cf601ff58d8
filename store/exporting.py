"""Recorded journals: a journal as JSONL, one record per line, and back.

A line is ``Record.as_json``: ``seq``, ``at``, ``type``, ``kind``, ``namespace``, ``name``, ``uid``,
``resourceVersion`` and ``body``, compact and in that key order, so two exports of the same records are
byte-identical and diff well. This is the format tests replay (``tests/journals/``). Checksums are not
exported: they guard the database file and are computed again on import. Imported lines are upcast from
older formats first (``upcasting``), so an old recording still imports.
"""

from __future__ import annotations

import gzip
import json
import pathlib
from collections.abc import Iterable, Iterator
from typing import IO, TextIO

from store import journal, reading, redacting, rows, schema, upcasting
from store.errors import JournalImportError
from store.journal import Imported, Journal
from store.records import Record


def open_lines(path: pathlib.Path) -> IO[str]:
    """A JSONL export for reading, gzip-compressed when its name ends in ``.gz``."""
    if path.suffix == ".gz":
        return gzip.open(path, "rt", encoding="utf-8")
    return path.open(encoding="utf-8")


def to_line(record: Record) -> str:
    return redacting.encode(record.as_json())


def parse_lines(lines: Iterable[str]) -> Iterator[Record]:
    """The records of JSONL ``lines`` (blank lines skipped); ``JournalImportError`` names a bad line."""
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except ValueError as exc:
            raise JournalImportError(f"not JSON: {exc}", line=number) from exc
        if not isinstance(data, dict):
            raise JournalImportError("not a JSON object", line=number)
        try:
            yield Record.from_json(upcasting.upcast(data))
        except (KeyError, ValueError, TypeError) as exc:
            raise JournalImportError(f"not a journal record: {exc!r}", line=number) from exc


async def export(path: pathlib.Path, out: TextIO, *, after: int = 0) -> int:
    """Write the records of the journal at ``path`` with seq > ``after`` to ``out``; returns how many.

    Reads through its own read-only connection, so it works while a controller appends.
    """
    await journal.upgrade_if_older(path)
    db = await schema.connect(path, read_only=True)
    count = 0
    try:
        async for page in reading.scan(db, after=after):
            out.write("".join(to_line(rows.decode(row)) + "\n" for row in page))
            count += len(page)
    finally:
        await db.close()
    return count


async def import_lines(path: pathlib.Path, lines: Iterable[str]) -> Imported:
    """Import JSONL ``lines`` into the journal at ``path`` (created if missing), all or nothing."""
    async with await Journal.open(path, settings=journal.OFFLINE) as opened:
        return await opened.import_records(parse_lines(lines))
