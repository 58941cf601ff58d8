"""A journal file read beside the controller that holds it: a read-only connection, as
``arcsm journal export`` uses, that answers ``ports.JournalReader`` and ``ports.PositionReader``
(``arcsm history`` reads with it, and anything else that follows a journal another process writes can).

It never writes, so it needs no lock and may be open while a controller appends; each ``read`` sees the
records committed when it starts. It reads the current format and format 2 (a journal an older arcsm is
writing: it lacks only the owners index, ``store.schema``); an older one must be upgraded first.
"""

from __future__ import annotations

import pathlib
import sqlite3
from collections.abc import Collection
from datetime import datetime
from types import TracebackType
from typing import TYPE_CHECKING

import aiosqlite

from store import ports, positions, reading, retention, schema
from store.errors import JournalCorrupt, JournalFormatError, translate
from store.records import Record, RecordType


class ReadOnlyJournal:
    def __init__(self, db: aiosqlite.Connection, horizons: retention.Horizons) -> None:
        self._db = db
        # What retention had pruned when the journal was opened (``store.journal.Journal.horizons``).
        self.horizons = horizons
        self._positions = positions.Snapshots()

    @classmethod
    async def open(cls, path: pathlib.Path) -> ReadOnlyJournal:
        """Open the journal at ``path`` for reading; ``JournalError`` if it is missing or not a journal."""
        db = await schema.connect(pathlib.Path(path), read_only=True)
        try:
            if await schema.check(db, pathlib.Path(path), empty_ok=False) < schema.READABLE:
                raise JournalFormatError(
                    f"{path} is a journal of an older format; upgrade it first (arcsm journal export does)"
                )
            horizons = await retention.load(db)
        except BaseException:
            await db.close()
            raise
        return cls(db, horizons)

    async def check(self) -> None:
        """Raise ``JournalCorrupt`` when SQLite finds the file damaged (``PRAGMA quick_check``: every page,
        without comparing indexes to their tables), so a reader that reads only part of the file does
        not take a damaged journal for a whole one."""
        try:
            async with self._db.execute("PRAGMA quick_check(1)") as cursor:
                found = [str(row[0]) for row in await cursor.fetchall()]
        except sqlite3.Error as exc:
            raise translate(exc, doing="check the journal") from exc
        if found != ["ok"]:
            raise JournalCorrupt(f"SQLite finds the file damaged: {' '.join(found[0].split())}")

    async def close(self) -> None:
        await self._db.close()

    async def __aenter__(self) -> ReadOnlyJournal:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.close()

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
        """Records committed when the read starts with seq > ``after`` (and <= ``through``) matching
        every filter, in seq order."""
        sql, args = reading.query(
            after=after, through=through, limit=limit, kind=kind, namespace=namespace, name=name, types=types
        )
        return await reading.select(self._db, sql, args)

    async def at(self, *, kind: str, namespace: str, name: str, seq: int) -> positions.Position:
        """What the journal held about the object at ``seq`` (``positions.at``)."""
        return await positions.at(
            self._db, self._positions, self.horizons, kind=kind, namespace=namespace, name=name, seq=seq
        )

    async def seq_at(self, moment: datetime) -> int:
        """The seq of the last record appended at or before ``moment`` (0 if none is left that early)."""
        return await positions.seq_at(self._db, moment)


if TYPE_CHECKING:  # a read-only journal offers the readers of store.ports, and no writer

    def _port(journal: ReadOnlyJournal) -> tuple[ports.JournalReader, ports.PositionReader]:
        return journal, journal
