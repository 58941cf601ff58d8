"""The journal: open, append (group-committed), read, tail, snapshot, prune and import.

One SQLite file in WAL mode, two aiosqlite connections: the writer's (every change goes through the
single writer task of ``appending``) and a reader's, so reads and tails never wait behind a commit.
``append`` returns once its records are durable; ``submit`` hands back a future instead, so a watcher
can pipeline a burst and wait only for its last record. Tails that have caught up are served from the
records committed last (``recent``, bounded in records and in bytes); one further behind reads pages
from the reader's connection until it catches up.

The projection is rebuilt on open from the newest snapshot plus the records after it, and then kept in
step: every committed record is applied before its appender is told, so after ``await append(...)`` the
projection already shows it. A snapshot is taken every ``snapshot_every`` records, after which retention
runs; both also run on demand (``snapshot``, ``retain``).

When writes fail for want of room or I/O (a full disk), ``write_failure`` says why until a write commits
again; the outage is logged once as an error when it starts and once with its count when it ends, and
``on_outage`` callbacks (the controller's Kubernetes Event) are told both.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import pathlib
import sqlite3
import time
from collections.abc import AsyncIterator, Callable, Collection, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from types import TracebackType
from typing import TYPE_CHECKING

import aiosqlite

from store import appending, clocks, ports, positions, reading, retention, rows, schema, snapshots
from store.clocks import Clock, SystemClock
from store.errors import JournalClosed, JournalError, JournalImportError, translate
from store.locking import FileLock
from store.projection import Projection
from store.recent import Recent
from store.records import Record, RecordType
from store.retention import Horizons
from store.settings import HistoryRetention, JournalSettings, RetentionSettings

log = logging.getLogger(__name__)

IMPORT_CHUNK = 1_000
SIZE_ROUNDS = 4  # plans a retention pass makes at most to bring the footprint under a size bound

# For tools that open a journal briefly (an upgrade, an import): nothing is pruned behind their back.
OFFLINE = JournalSettings(
    snapshot_every=None, retention=RetentionSettings(), history_retention=HistoryRetention()
)


@dataclass(frozen=True)
class Pruned:
    """What a retention pass did."""

    records: int
    snapshots: int
    horizons: Horizons


@dataclass(frozen=True)
class Imported:
    records: int
    first_seq: int
    last_seq: int


class Journal:
    projection: Projection

    def __init__(
        self,
        path: pathlib.Path,
        *,
        writer_db: aiosqlite.Connection,
        reader_db: aiosqlite.Connection,
        lock: FileLock,
        settings: JournalSettings,
        clock: Clock,
        projection: Projection,
        last_seq: int,
        last_at: str,
        horizons: Horizons,
        snapshot_seq: int,
    ) -> None:
        self.path = path
        self.projection = projection
        self._reader = reader_db
        self._lock = lock
        self._settings = settings
        self._clock = clock
        self._horizons = horizons
        self._snapshot_seq = snapshot_seq
        self._positions = positions.Snapshots()
        self._recent = Recent(max_records=settings.tail_buffer, max_bytes=settings.tail_buffer_bytes)
        self._commit_event = asyncio.Event()
        self._closed = False
        self._maintenance: asyncio.Task[None] | None = None
        self._retaining = asyncio.Lock()
        self._outage_callbacks: list[Callable[[appending.Outage, bool], None]] = []
        self._footprint_after_pass = 0  # bytes on disk when the last retention pass ended
        self._body_bytes_checked = 0
        self._writer = appending.Writer(
            writer_db,
            last_seq=last_seq,
            last_at=last_at,
            settings=settings,
            clock=clock,
            on_commit=self._on_commit,
            on_outage=self._on_outage,
        )

    @classmethod
    async def open(
        cls,
        path: pathlib.Path,
        *,
        settings: JournalSettings | None = None,
        clock: Clock | None = None,
        lock: FileLock | None = None,
    ) -> Journal:
        """Open (or create) the journal at ``path``: upgrade an older format, rebuild the projection.

        An existing journal is read and checked before anything writes to it, so one it refuses
        (``JournalCorrupt``, ``JournalFormatError``) is left byte for byte as it was. ``lock``: the lock
        on ``path`` when the caller took it already (to check the file before opening it), else taken
        here; either way the journal releases it when it closes or fails to open."""
        path = pathlib.Path(path)
        settings = settings or JournalSettings()
        lock = lock or FileLock.acquire(path, database=True)
        connections: list[aiosqlite.Connection] = []
        try:
            loaded: _Loaded | None = None
            if path.is_file() and path.stat().st_size > 0:
                # An existing file is read and checked before anything writes to it: a journal refused
                # (damaged, of a newer format, not a journal) is left byte for byte as it was.
                reader_db = await schema.connect(path, read_only=True)
                connections.append(reader_db)
                if await schema.check(reader_db, path) == 0:
                    # The prototype's format has no checksums and its upgrade rewrites every record:
                    # every page and record is checked before the upgrade starts.
                    await schema.check_upgradable(reader_db, path)
                elif await schema.tables(reader_db):
                    loaded = await _load(reader_db, path)
            writer_db = await schema.connect(
                path,
                durable=settings.durable,
                wal_limit=retention.wal_allowance(settings.retention.max_bytes),
            )
            connections.insert(0, writer_db)
            await schema.prepare(writer_db, path)
            if not connections[1:]:
                connections.append(await schema.connect(path, read_only=True))
            reader_db = connections[1]
            horizons, stored, (last_seq, last_at), projection = loaded or await _load(reader_db, path)
        except BaseException:
            for db in connections:
                await db.close()
            lock.release()
            raise
        journal = cls(
            path,
            writer_db=writer_db,
            reader_db=reader_db,
            lock=lock,
            settings=settings,
            clock=clock or SystemClock(),
            projection=projection,
            last_seq=max(last_seq, horizons.raw, stored[0] if stored else 0),
            last_at=last_at,
            horizons=horizons,
            snapshot_seq=stored[0] if stored else 0,
        )
        journal._writer.start()
        journal._maintain_soon(snapshot=False)
        return journal

    async def close(self) -> None:
        """Finish the appends already submitted, stop, and release the journal."""
        if self._closed:
            return
        self._closed = True
        if self._maintenance is not None:
            self._maintenance.cancel()
            await asyncio.gather(self._maintenance, return_exceptions=True)
        await self._writer.stop()
        self._notify()
        await self._reader.close()
        await self._writer.db.close()  # the last connection: it checkpoints the WAL into the file
        self._lock.release()

    async def __aenter__(self) -> Journal:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.close()

    @property
    def last_seq(self) -> int:
        """The seq of the last durable record."""
        return self._writer.last_seq

    @property
    def transactions(self) -> int:
        """Write transactions committed since open; group commit keeps it below the number of appends."""
        return self._writer.transactions

    @property
    def tail_buffered(self) -> tuple[int, int]:
        """The records kept in memory for tails that have caught up, and the size of their JSON."""
        return len(self._recent), self._recent.bytes

    @property
    def horizons(self) -> Horizons:
        return self._horizons

    @property
    def write_failure(self) -> str | None:
        """Why writes fail (a full disk), from the first failure until a write commits again; else None."""
        outage = self._writer.outage
        return None if outage is None else outage.reason

    @property
    def writer_failure(self) -> str | None:
        """Why the journal's writer stopped for good, so that no append will be written until the
        journal is reopened (in a controller: until the process restarts); ``None`` while it writes, or
        may write again (a full disk is ``write_failure``, which ends when a write commits)."""
        return None if self._closed else self._writer.failure

    @property
    def append_refusal(self) -> str | None:
        """Why an append would not be written now, without appending anything: the journal is closed,
        its writer stopped on a failure, or its writes fail (``write_failure``); ``None`` when it takes
        appends."""
        if self._closed:
            return f"journal {self.path} is closed"
        return self._writer.refusal or self.write_failure

    @property
    def failed_appends(self) -> int:
        """Appends that failed in the current outage (0 when writes succeed)."""
        outage = self._writer.outage
        return 0 if outage is None else outage.failed

    def on_outage(self, callback: Callable[[appending.Outage, bool], None]) -> None:
        """Call ``callback(outage, ended)`` when writes start failing (``ended`` false) and when one
        commits again (true, with the outage's count of failed appends)."""
        self._outage_callbacks.append(callback)

    def _on_outage(self, outage: appending.Outage, ended: bool) -> None:
        if ended:
            log.warning(
                "journal writes succeed again: %d appends failed over %.0f s (%s)",
                outage.failed,
                time.monotonic() - outage.since,
                outage.reason,
            )
        else:
            log.error(
                "journal writes fail: %s; what could not be journaled is retried, nothing is decided on it",
                outage.reason,
            )
        for callback in self._outage_callbacks:
            try:
                callback(outage, ended)
            except Exception:
                log.exception("a journal outage callback failed")

    # Appending.

    def submit(self, records: Sequence[Record]) -> asyncio.Future[list[Record]]:
        """Queue ``records`` as one atomic append and return at once; the future resolves to the records
        as journaled (seq, time, redacted) when they are durable, or fails if nothing of them was written.
        Appends are written in the order they were submitted. Raises ``InvalidRecord`` at once for a
        record that cannot be journaled. A caller that submits without waiting should let go of
        futures as they complete and bound how many it keeps in flight (the queue is not bounded)."""
        if self._closed:
            raise JournalClosed(f"journal {self.path} is closed")
        return self._writer.submit(records)

    async def append(self, records: Sequence[Record]) -> list[Record]:
        """Append ``records`` atomically, with consecutive seqs; returns them once durable.

        Cancelling the caller does not withdraw the append, which is already queued.
        """
        return await asyncio.shield(self.submit(records))

    def _on_commit(self, records: list[Record], sizes: list[int]) -> None:
        for record in records:
            self.projection.apply(record)
        self._recent.extend(records, sizes)
        self._notify()
        every = self._settings.snapshot_every
        if every is not None and self.last_seq - self._snapshot_seq >= every:
            self._maintain_soon(snapshot=True)
        elif self._outgrown():
            self._maintain_soon(snapshot=False)

    def _outgrown(self) -> bool:
        """Whether the footprint on disk passed the size bound's trigger and grew since the last pass
        (a pass that could not bring it down is not repeated on every commit)."""
        bound = self._settings.retention.max_bytes
        if bound is None or self._writer.body_bytes - self._body_bytes_checked < bound // 200:
            return False  # the files are looked at once every 0.5% of the bound appended
        self._body_bytes_checked = self._writer.body_bytes
        size = retention.footprint(self.path)
        return retention.over_bound(size, bound) and size > self._footprint_after_pass + bound // 50

    def _notify(self) -> None:
        event, self._commit_event = self._commit_event, asyncio.Event()
        event.set()

    # Reading.

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
        """Durable records with seq > ``after`` (and <= ``through``) matching every filter, in seq order."""
        if self._closed:
            raise JournalClosed(f"journal {self.path} is closed")
        sql, args = reading.query(
            after=after, through=through, limit=limit, kind=kind, namespace=namespace, name=name, types=types
        )
        return await reading.select(self._reader, sql, args)

    async def deleted_children(
        self, owner_uid: str, *, kind: str, offset: int = 0, limit: int = 100
    ) -> reading.Deleted:
        """The deletions of the objects of ``kind`` ``owner_uid`` owned, newest first
        (``reading.deleted_children``)."""
        if self._closed:
            raise JournalClosed(f"journal {self.path} is closed")
        return await reading.deleted_children(self._reader, owner_uid, kind=kind, offset=offset, limit=limit)

    async def at(self, *, kind: str, namespace: str, name: str, seq: int) -> positions.Position:
        """What the journal held about the object at ``seq`` (``positions.at``)."""
        if self._closed:
            raise JournalClosed(f"journal {self.path} is closed")
        return await positions.at(
            self._reader, self._positions, self._horizons, kind=kind, namespace=namespace, name=name, seq=seq
        )

    async def seq_at(self, moment: datetime) -> int:
        """The seq of the last record appended at or before ``moment`` (0 if none is left that early)."""
        if self._closed:
            raise JournalClosed(f"journal {self.path} is closed")
        return await positions.seq_at(self._reader, moment)

    async def tail(self, *, after: int = 0) -> AsyncIterator[Record]:
        """Every record with seq > ``after`` in order, then each new one as it commits; ends when the
        journal closes. Records pruned by retention are skipped.

        A wake costs O(the records committed since): they are sliced from the recent records by seq.
        A tail further behind than those reads from the database a page at a time."""
        cursor = after
        while not self._closed:
            tip = self.last_seq
            if cursor >= tip:
                await self._commit_event.wait()
                continue
            batch = self._recent.after(cursor)
            if batch is None:
                batch = await self.read(after=cursor, through=tip, limit=reading.PAGE)
                if not batch:
                    cursor = tip  # everything up to the tip was pruned
            for record in batch:
                yield record
                assert record.seq is not None
                cursor = record.seq

    # Snapshots and retention.

    async def snapshot(self) -> int:
        """Write a snapshot of the projection now; returns its seq."""
        return await self._writer.exclusive(self._write_snapshot)

    async def _write_snapshot(self) -> int:
        writer = self._writer
        at = writer.stamp()
        marker = Record(type=RecordType.SNAPSHOT, body={"objects": len(self.projection)})
        row, journaled = writer.encode([marker], after=writer.last_seq, at=at)
        seq = writer.last_seq + 1
        state = {**self.projection.for_snapshot(), "seq": seq}
        blob, checksum = await asyncio.to_thread(snapshots.pack, state)
        async with writer.transaction("snapshot") as db:
            await rows.insert(db, row)
            await snapshots.write(
                db, seq=seq, at=at, objects=len(self.projection), blob=blob, checksum=checksum
            )
        self._snapshot_seq = seq
        writer.committed(journaled, appending.body_sizes(row))
        return seq

    async def retain(self, *, now: datetime | None = None) -> Pruned:
        """Prune what the retention settings no longer keep, a chunk per transaction; snapshots first if
        the raw horizon would pass the newest snapshot. Under a size bound a pass plans again while the
        footprint is still above ``retention.LOW_WATER`` of it (a plan estimates from the average record,
        and pruned records free less than their share of pages)."""
        async with self._retaining:
            moment = now or self._clock.now()
            bound = self._settings.retention.max_bytes
            deleted = dropped = 0
            for _ in range(SIZE_ROUNDS):
                pruned = await self._retain_once(moment)
                deleted, dropped = deleted + pruned[0], dropped + pruned[1]
                self._footprint_after_pass = retention.footprint(self.path)
                if not pruned[0] or not retention.over_bound(
                    self._footprint_after_pass, bound, retention.LOW_WATER
                ):
                    break
            return Pruned(records=deleted, snapshots=dropped, horizons=self._horizons)

    async def _retain_once(self, moment: datetime) -> tuple[int, int]:
        # A footprint over the size bound's trigger is pruned ahead of the appends queued, or a steady
        # stream of them would outgrow the bound while the pass waits its turn.
        over = retention.over_bound(retention.footprint(self.path), self._settings.retention.max_bytes)
        writer = self._writer
        target = await writer.exclusive(lambda: self._plan(moment), first=over)
        if target.raw > self._snapshot_seq:
            await writer.exclusive(self._write_snapshot, first=over)
        deleted = 0
        while self._horizons != target:
            before = self._horizons
            deleted += await writer.exclusive(lambda: self._prune_step(target), first=over)
            if self._horizons == before:  # cannot happen (targets only move up); never spin
                break
        vacuum = deleted > 0 or over
        dropped = await writer.exclusive(lambda: self._finish_pruning(vacuum=vacuum), first=over)
        return deleted, dropped

    async def _plan(self, now: datetime) -> Horizons:
        try:
            return await retention.plan(
                self._writer.db,
                current=self._horizons,
                last_seq=self.last_seq,
                settings=self._settings,
                now=now,
                footprint=retention.footprint(self.path),
            )
        except sqlite3.Error as exc:
            raise translate(exc, doing="plan retention") from exc

    async def _prune_step(self, target: Horizons) -> int:
        async with self._writer.transaction("prune") as db:
            reached, deleted = await retention.prune_step(
                db,
                current=self._horizons,
                target=target,
                kept_longer=self._settings.kept_longer,
                chunk=self._settings.prune_chunk,
            )
        self._horizons = reached
        # What is left stays consecutive: nothing above the raw horizon is pruned.
        self._recent.drop_through(reached.raw)
        return deleted

    async def _finish_pruning(self, *, vacuum: bool) -> int:
        """Drop the snapshots no longer needed, give freed pages back to the disk and truncate the
        write-ahead log (a reader in the middle of a read keeps it; the next pass truncates it)."""
        dropped = 0
        try:
            if len(await snapshots.seqs(self._writer.db)) > self._settings.snapshots_kept or vacuum:
                async with self._writer.transaction("prune snapshots") as db:
                    dropped = await snapshots.prune(
                        db, keep=self._settings.snapshots_kept, raw_horizon=self._horizons.raw
                    )
            if vacuum or dropped:
                # Stepped to its end: one step of ``execute`` frees a single page.
                await self._writer.db.executescript("PRAGMA incremental_vacuum;")
                await (await self._writer.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")).close()
        except sqlite3.Error as exc:
            raise translate(exc, doing="prune snapshots") from exc
        return dropped

    def _maintain_soon(self, *, snapshot: bool) -> None:
        if self._closed or (self._maintenance is not None and not self._maintenance.done()):
            return
        self._maintenance = asyncio.create_task(self._maintain(snapshot=snapshot), name="journal-maintenance")

    async def _maintain(self, *, snapshot: bool) -> None:
        try:
            if snapshot:
                await self.snapshot()
            pruned = await self.retain()
            if pruned.records:
                log.info("journal pruned %d records", pruned.records, extra={"seq": pruned.horizons.raw})
        except JournalClosed:
            pass
        except JournalError as exc:
            log.error("journal maintenance failed: %s", exc)

    # Importing.

    async def import_records(self, records: Iterable[Record]) -> Imported:
        """Append recorded ``records`` in one transaction, keeping their seq and time when they have them.

        Seqs must increase; the first must follow ``last_seq`` (into an empty journal it may start
        anywhere, and gaps are taken as records pruned by retention). A record without a seq gets the
        next one, without a time the clock's. Nothing is written unless all of it is.
        """
        if self._closed:
            raise JournalClosed(f"journal {self.path} is closed")
        return await self._writer.exclusive(lambda: self._import(records))

    async def _import(self, records: Iterable[Record]) -> Imported:
        writer, start = self._writer, self._writer.last_seq
        previous, last_at, horizons, count, first = start, "", self._horizons, 0, 0
        try:
            async with writer.transaction("import") as db:
                for chunk in _chunks(records, IMPORT_CHUNK):
                    encoded: list[rows.Row] = []
                    for record in chunk:
                        count += 1
                        seq = previous + 1 if record.seq is None else int(record.seq)
                        try:
                            horizons = _after_gap(horizons, seq=seq, previous=previous, empty=start == 0)
                            at = _normal_time(record.at) if record.at else writer.stamp()
                            row, journaled = writer.encode([record], after=seq - 1, at=at)
                        except JournalError as exc:
                            raise JournalImportError(f"record {count} (seq {seq}): {exc}") from exc
                        encoded.extend(row)
                        self.projection.apply(journaled[0])
                        previous, last_at, first = seq, max(last_at, at), first or seq
                    await rows.insert(db, encoded)
                await db.execute(
                    "UPDATE horizons SET raw = ?, history = ? WHERE id = 0", (horizons.raw, horizons.history)
                )
        except BaseException:
            self.projection = await _rebuild(self._reader, self._horizons)
            raise
        if previous > start:
            writer.advance(previous, last_at)
            self._horizons = horizons
            self._recent.clear()  # it holds consecutive records only
            self._notify()
            every = self._settings.snapshot_every
            if every is not None and self.last_seq - self._snapshot_seq >= every:
                self._maintain_soon(snapshot=True)
        return Imported(records=count, first_seq=first, last_seq=previous if count else 0)


def _after_gap(horizons: Horizons, *, seq: int, previous: int, empty: bool) -> Horizons:
    """The horizons after importing ``seq`` behind ``previous``: a gap is taken as pruned records."""
    if seq <= previous:
        raise JournalImportError(f"seq {seq} does not follow seq {previous}: seqs must increase")
    if seq == previous + 1:
        return horizons
    if not empty:
        raise JournalImportError(
            f"the journal ends at seq {previous} and the file continues at {seq}: import a gapped file "
            "into an empty journal"
        )
    if previous == 0:  # the file starts after records that were not exported
        return Horizons(raw=seq - 1, history=seq - 1)
    return Horizons(raw=seq - 1, history=horizons.history)  # raw records pruned before the export


def _normal_time(at: str) -> str:
    try:
        return clocks.format_time(clocks.parse_time(at))
    except ValueError as exc:
        raise JournalImportError(f"time {at!r} is not RFC 3339") from exc


def _chunks(records: Iterable[Record], size: int) -> Iterable[list[Record]]:
    iterator = iter(records)
    while chunk := list(itertools.islice(iterator, size)):
        yield chunk


async def upgrade_if_older(path: pathlib.Path) -> None:
    """Bring a journal of an older format to the current one (opening it for writing upgrades it); refuse
    a file that is no journal, or an empty one (a reader has nothing to read in it)."""
    db = await schema.connect(path, read_only=True)
    try:
        version = await schema.check(db, path, empty_ok=False)
    finally:
        await db.close()
    if version < schema.FORMAT:
        await (await Journal.open(path, settings=OFFLINE)).close()


_Loaded = tuple[Horizons, list[int], tuple[int, str], Projection]


async def _load(db: aiosqlite.Connection, path: pathlib.Path) -> _Loaded:
    """What opening the journal reads: its horizons, snapshot seqs, last record, and the projection."""
    try:
        horizons = await retention.load(db)
        stored = await snapshots.seqs(db)
        tip = await _tip(db)
    except sqlite3.Error as exc:
        raise translate(exc, doing=f"open {path}") from exc
    projection = await snapshots.load(db, raw_horizon=horizons.raw) or Projection()
    await reading.fold(db, projection)
    return horizons, stored, tip, projection


async def _tip(db: aiosqlite.Connection) -> tuple[int, str]:
    async with db.execute("SELECT seq, at FROM records ORDER BY seq DESC LIMIT 1") as cursor:
        row = await cursor.fetchone()
    return (0, "") if row is None else (int(row[0]), str(row[1]))


async def _rebuild(db: aiosqlite.Connection, horizons: Horizons) -> Projection:
    projection = await snapshots.load(db, raw_horizon=horizons.raw) or Projection()
    return await reading.fold(db, projection)


if TYPE_CHECKING:  # the ports of store.ports are what a Journal (and its projection) offer

    def _ports(
        journal: Journal,
    ) -> tuple[
        ports.JournalWriter,
        ports.JournalReader,
        ports.JournalTail,
        ports.PositionReader,
        ports.DeletionReader,
        ports.ObjectIndex,
    ]:
        return journal, journal, journal, journal, journal, journal.projection
