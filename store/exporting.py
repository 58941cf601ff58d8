"""Recorded journals: a journal as JSONL, one record per line, and back.

A line is ``Record.as_json``: ``seq``, ``at``, ``type``, ``kind``, ``namespace``, ``name``, ``uid``,
``resourceVersion`` and ``body``, compact and in that key order, so two exports of the same records are
byte-identical and diff well. This is the format tests replay (``tests/journals/``). Checksums are not
exported: they guard the database file and are computed again on import. Imported lines are upcast from
older formats first (``upcasting``), so an old recording still imports.
"""

from __future__ import annotations

import contextlib
import gzip
import pathlib
import zlib
from collections.abc import Collection, Iterable, Iterator
from typing import IO, TextIO, cast

from store import journal, jsontext, locking, reading, redacting, rows, schema, upcasting
from store.errors import JournalError, JournalImportError
from store.journal import Imported, Journal
from store.records import Record, RecordType

SQLITE_HEADER = b"SQLite format 3\0"


def open_lines(path: pathlib.Path) -> IO[bytes]:
    """A JSONL export for reading, gzip-compressed when its name ends in ``.gz``; its lines are bytes,
    which ``parse_lines`` decodes one by one, so a byte that is not UTF-8 is reported with its line.

    Raises ``JournalImportError`` for a journal database given where an export was expected."""
    if is_database(path):
        raise JournalImportError(
            f"{path} is a journal file (SQLite), not a JSONL export; `arcsm journal export --journal "
            f"{path}` writes one"
        )
    if path.suffix == ".gz":
        return cast(IO[bytes], gzip.open(path, "rb"))
    return path.open("rb")


def is_database(path: pathlib.Path) -> bool:
    """Whether ``path`` is an SQLite database (a journal file) rather than an export."""
    with path.open("rb") as file:
        return file.read(len(SQLITE_HEADER)) == SQLITE_HEADER


def to_line(record: Record) -> str:
    return redacting.encode(record.as_json())


def parse_lines(lines: Iterable[str] | Iterable[bytes]) -> Iterator[Record]:
    """The records of JSONL ``lines`` (blank lines skipped); ``JournalImportError`` names a bad line, one
    that is not UTF-8, and a gzip file that is truncated or damaged."""
    for record, _ in parse_lines_with_bodies(lines, bodies=frozenset()):
        yield record


def parse_lines_with_bodies(
    lines: Iterable[str] | Iterable[bytes], *, bodies: Collection[RecordType]
) -> Iterator[tuple[Record, str | None]]:
    """``parse_lines``, each record with its body's JSON text as the line holds it, for the record types
    in ``bodies`` when the line has the export's form (None otherwise): text read once, which a reader
    can compare with another body's text instead of encoding this one again."""
    wanted = frozenset(t.value for t in bodies)
    for number, line in _numbered(lines):
        if isinstance(line, bytes):
            try:  # most lines: read without decoding the whole line first (``jsontext.loads_utf8``)
                data = jsontext.loads_utf8(line)
            except jsontext.Refused:
                pass
            else:
                if type(data) is dict and (current := upcasting.upcast(data)) is data:
                    try:
                        record = Record.from_json(data)
                    except (KeyError, ValueError, TypeError) as exc:
                        raise JournalImportError(f"not a journal record: {exc!r}", line=number) from exc
                    yield record, _body_bytes(line) if data.get("type") in wanted else None
                    continue
            try:
                line = line.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise JournalImportError(
                    f"not UTF-8 text (byte 0x{line[exc.start]:02x} at column {exc.start + 1}): "
                    "an export is UTF-8 JSONL, check that this file is one",
                    line=number,
                ) from exc
        if not line.strip():
            continue
        try:
            data = jsontext.loads(line)
        except ValueError as exc:
            raise JournalImportError(f"not JSON: {exc}", line=number) from exc
        if not isinstance(data, dict):
            raise JournalImportError("not a JSON object", line=number)
        try:
            current = upcasting.upcast(data)
            record = Record.from_json(current)
        except (KeyError, ValueError, TypeError) as exc:
            raise JournalImportError(f"not a journal record: {exc!r}", line=number) from exc
        text = _body_text(line) if current is data and data.get("type") in wanted else None
        yield record, text


_BODY = ',"body":'


def _body_text(line: str) -> str | None:
    """The text from the first ``,"body":`` to the line's closing ``}``: the body's text in a line of the
    export's form (``Record.as_json``: no key before the body holds an unescaped quote, the body is the
    last key). In a line where the body is not the last key that text runs on past the body's end and is
    no single JSON value, so it equals no body's text. None when the line has no such key."""
    line = line.rstrip()
    at = line.find(_BODY)
    if at < 0 or not line.endswith("}"):
        return None
    return line[at + len(_BODY) : -1]


def _body_bytes(line: bytes) -> str | None:
    """``_body_text`` of a line of UTF-8 bytes (decoding only the body's text)."""
    line = line.rstrip()
    at = line.find(_BODY_BYTES)
    if at < 0 or not line.endswith(b"}"):
        return None
    return line[at + len(_BODY_BYTES) : -1].decode("utf-8")


_BODY_BYTES = _BODY.encode()


def _numbered(lines: Iterable[str] | Iterable[bytes]) -> Iterator[tuple[int, str | bytes]]:
    """``enumerate(lines, 1)``, with what reading the file raised as a ``JournalImportError`` naming the
    line it was reading (what the caller raises between two lines never reaches this generator)."""
    iterator: Iterator[str | bytes] = iter(lines)
    number = 0
    try:
        for number, line in enumerate(iterator, 1):
            yield number, line
    except EOFError as exc:  # gzip: the stream stops before its end marker
        raise JournalImportError(
            "the gzip file ends early (it is truncated): copy or download it again", line=number + 1
        ) from exc
    except (gzip.BadGzipFile, zlib.error) as exc:
        raise JournalImportError(f"the gzip file is damaged ({exc})", line=number + 1) from exc
    except UnicodeDecodeError as exc:  # a text stream (stdin) that is not UTF-8
        raise JournalImportError(
            f"not UTF-8 text ({exc.reason}): an export is UTF-8 JSONL, check that this is one",
            line=number + 1,
        ) from exc


async def export(path: pathlib.Path, out: TextIO, *, after: int = 0) -> int:
    """Write the records of the journal at ``path`` with seq > ``after`` to ``out``; returns how many.

    Reads through its own read-only connection, so it works while a controller appends.
    """
    await journal.upgrade_if_older(path)
    db = await schema.connect(path, read_only=True)
    count = 0
    try:
        async with contextlib.aclosing(reading.scan(db, after=after)) as pages:
            async for page in pages:
                out.write("".join(to_line(rows.decode(row)) + "\n" for row in page))
                count += len(page)
    finally:
        await db.close()
    return count


async def import_lines(path: pathlib.Path, lines: Iterable[str] | Iterable[bytes]) -> Imported:
    """Import JSONL ``lines`` into the journal at ``path`` (created if missing), all or nothing.

    An existing journal takes the records in one transaction. A new one is written beside ``path``
    and renamed into place once the import succeeds, so a failed import leaves nothing at ``path``
    (nor its ``-wal``, ``-shm`` or lock file); the lock on ``path`` is held throughout, so no one
    opens a journal there meanwhile."""
    path = pathlib.Path(path)
    if path.exists():
        async with await Journal.open(path, settings=journal.OFFLINE) as opened:
            return await opened.import_records(parse_lines(lines))
    lock_file = locking.lock_path(path)
    had_lock_file = lock_file.exists()
    lock = locking.FileLock.acquire(path)
    staging = path.with_name(f".{path.name}.importing")
    done = False
    try:
        _remove_journal(staging)  # what an import killed midway left
        try:
            async with await Journal.open(staging, settings=journal.OFFLINE) as opened:
                imported = await opened.import_records(parse_lines(lines))
            if _sidecars(staging, "-wal", "-shm"):
                raise JournalError(f"the import into {path} left a write-ahead log behind; import again")
            staging.replace(path)
            done = True
        finally:
            _remove_journal(staging)
            if not done and not had_lock_file:
                lock_file.unlink(missing_ok=True)  # it was not there before either
    finally:
        lock.release()
    return imported


def _sidecars(path: pathlib.Path, *suffixes: str) -> list[pathlib.Path]:
    return [found for suffix in suffixes if (found := path.with_name(path.name + suffix)).exists()]


def _remove_journal(path: pathlib.Path) -> None:
    """Remove the journal file at ``path`` with its ``-wal``, ``-shm`` and lock files."""
    for found in [path, *_sidecars(path, "-wal", "-shm", ".lock")]:
        found.unlink(missing_ok=True)
