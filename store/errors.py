"""Errors of the journal, classified by what the caller must do.

Hierarchy::

    JournalError                 the root: every error the store raises is one of these
    ├── JournalClosed            the journal was closed (or failed and stopped); reopen it
    ├── JournalLocked            another process holds the journal open for writing
    ├── JournalFormatError       not an arcsm journal, or written by a newer arcsm
    ├── JournalCorrupt           a record or snapshot is damaged; carries the ``seq`` when one is known
    ├── JournalWriteFailed       a transaction failed (disk full, I/O error): none of it was written
    ├── InvalidRecord            a record cannot be journaled (also a ValueError): nothing was written
    └── JournalImportError       an import was refused (carries the JSONL line number when there is one)

SQLite's own exceptions never leave the store: ``translate`` maps them by their primary result code,
and callers raise the translation ``from`` the original.
"""

from __future__ import annotations

import sqlite3

# SQLite primary result codes (https://sqlite.org/rescode.html).
_BUSY, _LOCKED, _READONLY, _IOERR, _CORRUPT, _FULL, _CANTOPEN, _NOTADB = 5, 6, 8, 10, 11, 13, 14, 26


class JournalError(Exception):
    """Something went wrong with the journal; the message says what and what to do."""


class JournalClosed(JournalError):
    pass


class JournalLocked(JournalError):
    pass


class JournalFormatError(JournalError):
    pass


class JournalCorrupt(JournalError):
    def __init__(self, reason: str, *, seq: int | None = None) -> None:
        self.seq = seq
        self.reason = reason
        super().__init__(f"seq {seq}: {reason}" if seq is not None else reason)


class JournalWriteFailed(JournalError):
    pass


class InvalidRecord(JournalError, ValueError):
    pass


class JournalImportError(JournalError):
    def __init__(self, reason: str, *, line: int | None = None) -> None:
        self.line = line
        self.reason = reason
        super().__init__(reason if line is None else f"line {line}: {reason}")


def translate(exc: sqlite3.Error, *, doing: str) -> JournalError:
    """The journal error for a SQLite exception raised while ``doing`` something (e.g. "append")."""
    code = getattr(exc, "sqlite_errorcode", 0) & 0xFF
    detail = f"{doing}: {exc}"
    if code == _CORRUPT:  # SQLite's "database disk image is malformed": said in words a user acts on
        return JournalCorrupt(f"{doing}: SQLite cannot read some of its pages (the file is damaged)")
    if code == _NOTADB:
        return JournalCorrupt(f"{doing}: its first page is not a SQLite database's (the file is damaged)")
    if code in (_BUSY, _LOCKED):
        return JournalLocked(f"{detail} (another process is using the journal)")
    if code == _FULL:
        return JournalWriteFailed(f"{detail} (free disk space or lower the retention limits)")
    if code in (_IOERR, _READONLY):
        return JournalWriteFailed(f"{detail} (check the journal's disk and permissions)")
    if code == _CANTOPEN:
        return JournalError(f"{detail} (check that the journal's directory exists and is writable)")
    return JournalError(detail)
