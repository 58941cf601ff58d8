"""Group commit: the journal's single writer task.

Every change to the database goes through one task, in submission order. ``submit`` prepares an
append's records on the spot (validated, redacted, encoded to JSON) and queues them, so a record that
cannot be journaled is refused at once and never holds up a group. Appends waiting when a transaction
ends are written together in the next one (group commit): a burst of watch events costs one sync of
the write-ahead log, not one each. The writer numbers records and stamps them with the clock as it
writes them (one clock reading per transaction: records become facts when they commit), and every
caller learns its records are durable when that transaction commits. A group's transaction (BEGIN,
its inserts, COMMIT) runs whole on the connection's thread in one hand-off (``write``).

Nothing of a failed transaction is written. When it held several appends, each is retried alone, so
one that cannot be written fails without its neighbours; seqs are only given to records as they are
written, so the sequence never has a gap. Other work that writes (snapshots, pruning, imports) runs as
an exclusive job between groups and numbers its records from ``last_seq``.

A write that fails for want of room or I/O (``JournalWriteFailed``: a full disk) opens an ``Outage``;
the next transaction that commits ends it. While it lasts ``outage`` says why and how many appends
failed, and ``on_outage`` is told when it starts and when it ends, so the journal's owner can report it
once rather than once per failed append. The appends that failed were not written: their
callers keep what they hold and submit it again (a watcher lists again; a reconcile is retried).
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import sqlite3
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import Any, TypeVar

import aiosqlite

from store import clocks, onthread, rows
from store.errors import JournalClosed, JournalError, JournalWriteFailed, translate
from store.records import Record, RecordType
from store.settings import JournalSettings

_OBSERVED = RecordType.OBSERVED.value

T = TypeVar("T")


class _Append:
    """One append waiting to be written: its prepared records, and the future of its caller."""

    __slots__ = ("future", "prepared")

    def __init__(self, prepared: list[rows.Prepared], future: asyncio.Future[list[Record]]) -> None:
        self.prepared, self.future = prepared, future


class Outage:
    """Writes failing since ``since`` (monotonic seconds): the first ``reason``, and how many appends
    failed since."""

    __slots__ = ("failed", "reason", "since")

    def __init__(self, reason: str, since: float) -> None:
        self.reason, self.since, self.failed = reason, since, 0


class _Exclusive:
    __slots__ = ("future", "run")

    def __init__(self, run: Callable[[], Awaitable[Any]], future: asyncio.Future[Any]) -> None:
        self.run, self.future = run, future


class Writer:
    def __init__(
        self,
        db: aiosqlite.Connection,
        *,
        last_seq: int,
        last_at: str,
        settings: JournalSettings,
        clock: clocks.Clock,
        on_commit: Callable[[list[Record], list[int]], None],
        on_outage: Callable[[Outage, bool], None] | None = None,
    ) -> None:
        self.db = db
        self._last_seq = last_seq
        self._last_at = last_at
        self._settings = settings
        self._clock = clock
        self._format = clocks.TimeFormatter()
        self._on_commit = on_commit
        self._on_outage = on_outage
        self.outage: Outage | None = None  # while writes fail for want of room or I/O
        self._queue: collections.deque[_Append | _Exclusive] = collections.deque()
        self._wake = asyncio.Event()
        self._stopping = False
        self._failure: JournalError | None = None
        self._task: asyncio.Task[None] | None = None
        self.transactions = 0  # write transactions committed (group commit makes it lower than appends)
        self.body_bytes = 0  # characters of record bodies appended: what makes the file grow

    @property
    def last_seq(self) -> int:
        """The seq of the last durable record."""
        return self._last_seq

    def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name="journal-writer")

    async def stop(self) -> None:
        """Write what was submitted, then stop."""
        self._stopping = True
        self._wake.set()
        if self._task is not None:
            await self._task

    @property
    def failure(self) -> str | None:
        """Why the writer stopped for good (its task failed, or the file no longer matches what it
        wrote: another writer was at it); only reopening the journal recovers. ``None`` otherwise."""
        return None if self._failure is None else str(self._failure)

    @property
    def refusal(self) -> str | None:
        """Why ``submit`` would raise now (the writer failed for good, or is stopping); else ``None``."""
        if self._failure is not None:
            return str(self._failure)
        if self._stopping:
            return "the journal is closed"
        return None

    def _check_open(self) -> None:
        if self._failure is not None:
            raise self._failure
        if self._stopping:
            raise JournalClosed("the journal is closed")

    def submit(self, records: Sequence[Record]) -> asyncio.Future[list[Record]]:
        """Queue ``records`` as one atomic append; the future resolves once they are durable.

        Raises ``InvalidRecord`` (queuing nothing) when one of them cannot be journaled.
        """
        self._check_open()
        prepared = [rows.prepare(record) for record in records]
        future: asyncio.Future[list[Record]] = asyncio.get_running_loop().create_future()
        if not prepared:
            future.set_result([])
            return future
        self._queue.append(_Append(prepared, future))
        self._wake.set()
        return future

    async def exclusive(self, run: Callable[[], Awaitable[T]], *, first: bool = False) -> T:
        """Run ``run`` in the writer, between groups, once everything queued before it is written; with
        ``first``, before what is queued (pruning that must keep up with appends)."""
        self._check_open()
        future: asyncio.Future[T] = asyncio.get_running_loop().create_future()
        job = _Exclusive(run, future)
        if first:
            self._queue.appendleft(job)
        else:
            self._queue.append(job)
        self._wake.set()
        return await asyncio.shield(future)

    # What exclusive jobs use.

    def stamp(self) -> str:
        """The time for the next records: the clock's, but never before the last one handed out."""
        self._last_at = max(self._last_at, self._format(self._clock.now()))
        return self._last_at

    def encode(
        self, records: Sequence[Record], *, after: int, at: str
    ) -> tuple[list[rows.Row], list[Record]]:
        """Rows for ``records`` appended with seqs after ``after`` (raises ``InvalidRecord``)."""
        encoded = [rows.encode(record, after + i, at) for i, record in enumerate(records, 1)]
        return [row for row, _ in encoded], [record for _, record in encoded]

    @contextlib.asynccontextmanager
    async def transaction(self, doing: str) -> AsyncIterator[aiosqlite.Connection]:
        """One write transaction; SQLite errors roll it back and are raised translated."""
        async with self._committed(doing):
            await self.db.execute("BEGIN IMMEDIATE")
            yield self.db
            await self.db.execute("COMMIT")

    async def write(self, doing: str, work: Callable[[sqlite3.Connection], T]) -> T:
        """``work`` as one write transaction run whole on the connection's thread: BEGIN, the work and
        COMMIT in one hand-off (``onthread``). SQLite errors roll it back and are raised translated."""

        def transaction(connection: sqlite3.Connection) -> T:
            connection.execute("BEGIN IMMEDIATE")
            result = work(connection)
            connection.execute("COMMIT")
            return result

        async with self._committed(doing):
            result = await onthread.call(self.db, transaction)
        return result

    @contextlib.asynccontextmanager
    async def _committed(self, doing: str) -> AsyncIterator[None]:
        """What every write transaction shares: a failure rolls it back (SQLite's errors raised
        translated), a commit is counted and ends a write outage."""
        try:
            yield
        except sqlite3.Error as exc:
            await self._rollback()
            raise self._translated(exc, doing) from exc
        except BaseException:
            await self._rollback()
            raise
        self.transactions += 1
        self._write_succeeded()

    def _translated(self, exc: sqlite3.Error, doing: str) -> JournalError:
        error = translate(exc, doing=doing)
        if isinstance(error, JournalWriteFailed):
            self._write_failed(error)
        return error

    def _write_failed(self, error: JournalWriteFailed) -> None:
        started = self.outage is None
        if self.outage is None:
            self.outage = Outage(str(error), time.monotonic())
        if started and self._on_outage is not None:
            self._on_outage(self.outage, False)

    def _write_succeeded(self) -> None:
        outage, self.outage = self.outage, None
        if outage is not None and self._on_outage is not None:
            self._on_outage(outage, True)

    def advance(self, last_seq: int, last_at: str) -> None:
        """Record that a transaction made ``last_seq`` durable (without telling ``on_commit``)."""
        self._last_seq = last_seq
        self._last_at = max(self._last_at, last_at)

    def committed(self, records: list[Record], sizes: list[int]) -> None:
        """Record that ``records`` are durable and tell ``on_commit``, with the size of each one's JSON
        body (``sizes``, from ``body_sizes``)."""
        if records:
            last = records[-1]
            assert last.seq is not None
            self.advance(last.seq, last.at)
            self._on_commit(records, sizes)

    # The task.

    async def _run(self) -> None:
        try:
            while True:
                while not self._queue:
                    if self._stopping:
                        return
                    self._wake.clear()
                    await self._wake.wait()
                entry = self._queue.popleft()
                if isinstance(entry, _Exclusive):
                    await self._run_exclusive(entry)
                    continue
                window = self._settings.group_commit_window.total_seconds()
                if window > 0 and not self._stopping:
                    await asyncio.sleep(window)  # let more appends arrive for this group
                await self._commit_group(self._gather(entry))
        except BaseException as exc:
            self._failure = JournalClosed(f"the journal writer stopped: {exc!r}; reopen the journal")
            raise
        finally:
            self._fail_queued()

    def _gather(self, first: _Append) -> list[_Append]:
        group, count = [first], len(first.prepared)
        queue = self._queue
        while queue and isinstance(queue[0], _Append):
            count += len(queue[0].prepared)
            if count > self._settings.max_batch_records:
                break
            group.append(queue.popleft())  # type: ignore[arg-type]
        return group

    async def _run_exclusive(self, job: _Exclusive) -> None:
        try:
            result = await job.run()
        except Exception as exc:
            _settle(job.future, exc)
        else:
            _settle(job.future, result)

    async def _commit_group(self, group: list[_Append]) -> None:
        at, seq = self.stamp(), self._last_seq
        written: list[rows.Row] = []
        owners: list[rows.OwnerRow] = []
        journaled: list[list[Record]] = []
        for append in group:
            mine = []
            for prepared in append.prepared:
                seq += 1
                row, record = rows.finish(prepared, seq, at)
                written.append(row)
                mine.append(record)
                if row[2] == _OBSERVED:
                    owners += rows.owners_of(seq, row[2], row[3], row[4], row[5], prepared[2])
            journaled.append(mine)
        try:
            await self.write("append", lambda connection: rows.insert_now(connection, written, owners))
        except JournalError as exc:
            if len(group) == 1 or self._failure is not None:
                if self.outage is not None:
                    self.outage.failed += len(group)
                for append in group:
                    _settle(append.future, exc)
                return
            for append in group:  # find the append that failed, and write the others
                await self._commit_group([append])
            return
        sizes = body_sizes(written)
        self.body_bytes += sum(sizes)
        self.committed([record for mine in journaled for record in mine], sizes)
        for append, mine in zip(group, journaled, strict=True):
            _settle(append.future, mine)

    async def _rollback(self) -> None:
        try:
            if self.db.in_transaction:
                await self.db.execute("ROLLBACK")
            async with self.db.execute("SELECT max(seq) FROM records") as cursor:
                row = await cursor.fetchone()
        except sqlite3.Error as exc:
            self._failure = translate(exc, doing="roll back")
            return
        if row is not None and row[0] is not None and int(row[0]) > self._last_seq:
            # A commit reported as failed did happen: our seqs no longer match the file's.
            self._failure = JournalClosed("a failed commit left the journal ahead of the writer; reopen it")

    def _fail_queued(self) -> None:
        error = self._failure or JournalClosed("the journal was closed before this was written")
        while self._queue:
            _settle(self._queue.popleft().future, error)


def body_sizes(written: Sequence[rows.Row]) -> list[int]:
    """The size of each row's JSON body (characters: bytes for the ASCII that JSON mostly is)."""
    return [len(row[8]) for row in written]


def _settle(future: asyncio.Future[Any], outcome: Any) -> None:
    if future.done():
        return
    if isinstance(outcome, BaseException):
        future.set_exception(outcome)
    else:
        future.set_result(outcome)
