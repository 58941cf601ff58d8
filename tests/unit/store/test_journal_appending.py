"""Appending: order, gap-free seqs, atomic appends, group commit, durability, and refusals."""

from __future__ import annotations

import asyncio
import os
import pathlib
import sqlite3
from datetime import timedelta

import pytest

from store.errors import InvalidRecord, JournalClosed, JournalError, JournalLocked
from store.journal import Journal
from store.records import Record, RecordType
from tests.unit.store.factories import ManualClock, OpenJournal, decision, seen


def stored_seqs(path: pathlib.Path) -> list[int]:
    with sqlite3.connect(path) as db:
        return [row[0] for row in db.execute("SELECT seq FROM records ORDER BY seq")]


async def add_failing_trigger(path: pathlib.Path, name: str = "boom") -> None:
    """Make SQLite refuse, mid-transaction, any record named ``name`` (as a full disk or I/O error would).

    Written from another thread, as another process would: the journal's writer keeps running meanwhile.
    """

    def add() -> None:
        with sqlite3.connect(path) as db:
            db.execute(
                f"CREATE TRIGGER refuse BEFORE INSERT ON records WHEN NEW.name = '{name}' "
                "BEGIN SELECT RAISE(ABORT, 'refused'); END"
            )

    await asyncio.to_thread(add)


async def test_records_get_consecutive_seqs_in_append_order(journal: Journal, path: pathlib.Path) -> None:
    first = await journal.append([seen("a")])
    second = await journal.append([seen("b"), seen("c"), seen("d")])
    assert [r.seq for r in first + second] == [1, 2, 3, 4]
    assert [r.name for r in await journal.read()] == ["a", "b", "c", "d"]
    assert journal.last_seq == 4
    assert stored_seqs(path) == [1, 2, 3, 4]


async def test_appended_records_carry_the_clock_time(journal: Journal, clock: ManualClock) -> None:
    [one] = await journal.append([seen("a")])
    clock.advance(timedelta(seconds=5))
    [two] = await journal.append([seen("b")])
    assert one.at == "2026-01-01T00:00:00.000000Z"
    assert two.at == "2026-01-01T00:00:05.000000Z"


async def test_time_never_goes_backwards(journal: Journal, clock: ManualClock) -> None:
    await journal.append([seen("a")])
    clock.advance(timedelta(seconds=-30))  # the wall clock was stepped back
    [later] = await journal.append([seen("b")])
    assert later.at == "2026-01-01T00:00:00.000000Z"


async def test_a_decision_and_its_effects_are_one_append(journal: Journal) -> None:
    outbox = [
        decision("ars", transitions=[{"from": "Pending", "to": "Running"}]),
        Record(type=RecordType.EFFECT, kind="AutoscalingRunnerSet", name="ars", body={"patch": {"a": 1}}),
        Record(type=RecordType.EFFECT, kind="AutoscalingRunnerSet", name="ars", body={"patch": {"b": 2}}),
    ]
    appended = await journal.append(outbox)
    assert [r.seq for r in appended] == [1, 2, 3]
    assert len({r.at for r in appended}) == 1


async def test_a_failure_mid_transaction_writes_nothing_and_leaves_no_gap(
    journal: Journal, path: pathlib.Path
) -> None:
    await journal.append([seen("a")])
    await add_failing_trigger(path)
    with pytest.raises(JournalError, match="refused"):
        await journal.append([seen("b"), seen("boom"), seen("c")])
    assert [r.name for r in await journal.read()] == ["a"]
    assert journal.last_seq == 1
    assert journal.projection.get("Pod", "default", "b") is None
    [after] = await journal.append([seen("d")])
    assert after.seq == 2
    assert stored_seqs(path) == [1, 2]


async def test_a_failing_append_does_not_take_its_group_down(journal: Journal, path: pathlib.Path) -> None:
    await add_failing_trigger(path)
    futures = [journal.submit([seen("a")]), journal.submit([seen("boom")]), journal.submit([seen("c")])]
    outcomes = await asyncio.gather(*futures, return_exceptions=True)
    assert isinstance(outcomes[1], JournalError)
    assert [r.seq for r in outcomes[0]] == [1]  # type: ignore[union-attr]
    assert [r.seq for r in outcomes[2]] == [2]  # type: ignore[union-attr]
    assert stored_seqs(path) == [1, 2]


async def test_records_that_cannot_be_journaled_are_refused_without_using_a_seq(journal: Journal) -> None:
    with pytest.raises(InvalidRecord, match="not JSON"):
        await journal.append([seen("a"), decision("ars", surprise={1, 2})])
    with pytest.raises(InvalidRecord, match="must be"):
        bookmark = Record(type=RecordType.OBSERVED, kind="Pod", name="x", body={"event": "BOOKMARK"})
        await journal.append([bookmark])
    with pytest.raises(InvalidRecord, match="not JSON"):
        await journal.append([decision("ars", ratio=float("nan"))])
    [ok] = await journal.append([seen("b")])
    assert ok.seq == 1
    assert journal.last_seq == 1


async def test_concurrent_appends_are_group_committed(journal: Journal) -> None:
    before = journal.transactions
    results = await asyncio.gather(*(journal.append([seen(f"pod-{i}")]) for i in range(50)))
    assert sorted(r[0].seq for r in results) == list(range(1, 51))  # type: ignore[misc]
    assert journal.transactions - before < 50


async def test_submitted_appends_share_one_transaction(journal: Journal) -> None:
    before = journal.transactions
    futures = [journal.submit([seen(f"pod-{i}")]) for i in range(200)]
    await asyncio.gather(*futures)
    assert journal.transactions - before == 1
    assert [f.result()[0].seq for f in futures] == list(range(1, 201))


async def test_a_caller_can_wait_until_its_record_is_durable(journal: Journal, path: pathlib.Path) -> None:
    future = journal.submit([seen("a")])
    assert not future.done()
    assert journal.last_seq == 0
    [record] = await future
    assert journal.last_seq == record.seq == 1
    # Durable means committed: another connection (another process) sees it.
    assert stored_seqs(path) == [1]


async def test_a_second_writer_is_refused(journal: Journal, path: pathlib.Path) -> None:
    with pytest.raises(JournalLocked, match="another process"):
        await Journal.open(path)


@pytest.mark.parametrize("link", ["symlink", "hard link"])
async def test_a_second_writer_through_another_name_of_the_file_is_refused(
    journal: Journal, path: pathlib.Path, link: str
) -> None:
    other = path.with_name("other.db")
    if link == "symlink":
        other.symlink_to(path)
    else:
        os.link(path, other)
    with pytest.raises(JournalLocked, match="another link to the same file"):
        await Journal.open(other)
    [record] = await journal.append([seen("a")])  # the first writer is untouched
    assert record.seq == 1


async def test_a_closed_journal_refuses_appends_and_can_be_reopened(
    open_journal: OpenJournal, path: pathlib.Path
) -> None:
    journal = await open_journal()
    pending = journal.submit([seen("a")])
    await journal.close()
    assert (await pending)[0].seq == 1  # what was submitted before close is written
    with pytest.raises(JournalClosed):
        await journal.append([seen("b")])
    reopened = await open_journal()
    [record] = await reopened.append([seen("b")])
    assert record.seq == 2


async def test_append_refusal_says_what_an_append_would_raise_without_appending(
    open_journal: OpenJournal,
) -> None:
    journal = await open_journal()
    assert journal.append_refusal is None
    assert journal.last_seq == 0 and await journal.read() == []
    await journal.close()
    with pytest.raises(JournalClosed) as refused:
        await journal.append([seen("a")])
    assert journal.append_refusal == str(refused.value)


async def test_a_journal_works_as_an_async_context_manager(path: pathlib.Path) -> None:
    async with await Journal.open(path) as journal:
        await journal.append([seen("a")])
    async with await Journal.open(path) as journal:
        assert journal.last_seq == 1


async def test_an_empty_append_is_a_no_op(journal: Journal) -> None:
    assert await journal.append([]) == []
    assert journal.last_seq == 0
    [record] = await journal.append([seen("a")])
    assert record.seq == 1
