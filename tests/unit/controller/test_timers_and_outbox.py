"""Timers (RequeueAfter as ``timer`` records) and the outbox (effects without a result), over a real
journal file: a timer fires once due, with one record per target and a result per RequeueAfter it
answers; a timer the journal cannot write (a full file) fires again once it can; the outbox is every
effect no result names."""

from __future__ import annotations

import asyncio
import contextlib
from datetime import UTC, datetime, timedelta

from controller.executor import outbox
from controller.loop import timing
from statemachines.effects import ObjectRef, RequeueAfter
from store import clocks
from store.errors import JournalWriteFailed
from store.journal import Journal
from store.records import Record, RecordType, Seq
from tests.helpers import eventually

RUNNER = ObjectRef("EphemeralRunner", "runners", "arc-a")
AT = "2026-01-01T00:00:00.000000Z"


class StoppedClock:
    """A clock a test moves by hand."""

    def __init__(self, at: datetime) -> None:
        self.at = at

    def now(self) -> datetime:
        return self.at


def effect_record(seq: int, effect: RequeueAfter) -> Record:
    record = Record(type=RecordType.EFFECT, kind=RUNNER.kind, namespace=RUNNER.namespace, name=RUNNER.name)
    return record.with_seq(Seq(seq), AT)


def test_a_requeue_is_due_its_seconds_after_its_record() -> None:
    due = timing.due_time(effect_record(1, RequeueAfter(RUNNER, 5.0)), RequeueAfter(RUNNER, 5.0))
    assert due == clocks.parse_time(AT) + timedelta(seconds=5)


async def test_a_target_has_one_timer_due_at_the_earliest_time_asked(journal: Journal) -> None:
    clock = StoppedClock(clocks.parse_time(AT))
    timers = timing.Timers(journal=journal, clock=clock)
    timers.arm(effect_record(1, RequeueAfter(RUNNER, 30.0)), RequeueAfter(RUNNER, 30.0))
    timers.arm(effect_record(2, RequeueAfter(RUNNER, 5.0)), RequeueAfter(RUNNER, 5.0))
    assert timers.pending() == {RUNNER: clocks.parse_time(AT) + timedelta(seconds=5)}

    task = asyncio.create_task(timers.run())
    try:
        clock.at += timedelta(seconds=5)
        timers.arm(effect_record(3, RequeueAfter(RUNNER, 60.0)), RequeueAfter(RUNNER, 60.0))  # wakes the loop

        async def fired() -> list[Record]:
            return await journal.read(types={RecordType.TIMER, RecordType.EFFECT_RESULT})

        records = await eventually(fired, what="the timer record")
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
    timer, *results = records
    assert (timer.type, timer.kind, timer.name) == (RecordType.TIMER, RUNNER.kind, RUNNER.name)
    assert timer.body["effects"] == [1, 2, 3]
    assert [r.body["effectSeq"] for r in results] == [1, 2, 3]
    assert all(r.body["ok"] and r.body["key"] == RequeueAfter(RUNNER, 1).key for r in results)
    assert timers.pending() == {}


async def test_the_outbox_is_every_effect_no_result_answers(journal: Journal) -> None:
    def effect(name: str) -> Record:
        return Record(type=RecordType.EFFECT, kind="Pod", namespace="ns", name=name)

    recorded = await journal.append([effect("a"), effect("b"), effect("c")])
    answer = Record(
        type=RecordType.EFFECT_RESULT, body={"ok": True, "key": "k", "effectSeq": recorded[1].seq}
    )
    await journal.append([answer])
    pending = await outbox.unanswered(journal, through=journal.last_seq)
    assert [r.name for r in pending] == ["a", "c"]
    assert await outbox.unanswered(journal, through=recorded[0].seq or 0) == [pending[0]]


def test_a_timer_for_now_is_due_at_once() -> None:
    clock = StoppedClock(datetime(2026, 1, 1, tzinfo=UTC))
    assert timing.due_time(effect_record(1, RequeueAfter(RUNNER, 0)), RequeueAfter(RUNNER, 0)) <= clock.now()


async def test_a_timer_the_journal_cannot_write_fires_again_once_it_can(journal: Journal) -> None:
    db = journal._writer.db  # max_page_count caps the file of the connection that writes
    await db.execute("PRAGMA max_page_count = 1")  # no page more than the file has
    filler = Record(type=RecordType.SYNC, kind="Pod", body={"pad": "x" * 200})
    while journal.write_failure is None:  # fill the pages it has: then nothing more fits
        with contextlib.suppress(JournalWriteFailed):
            await journal.append([filler])
    clock = StoppedClock(clocks.parse_time(AT) + timedelta(seconds=10))
    timers = timing.Timers(journal=journal, clock=clock)
    timers.arm(effect_record(1, RequeueAfter(RUNNER, 5.0)), RequeueAfter(RUNNER, 5.0))
    task = asyncio.create_task(timers.run())
    try:
        failed = journal.failed_appends
        await eventually(lambda: journal.failed_appends > failed, what="the timer's append failing")
        assert RUNNER in timers.pending() and not task.done()
        await db.execute("PRAGMA max_page_count = 1073741823")

        async def fired() -> list[Record]:
            return await journal.read(types={RecordType.TIMER})

        (timer,) = await eventually(fired, what="the timer journaled once the journal takes it")
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
    assert timer.name == RUNNER.name and timers.pending() == {}
