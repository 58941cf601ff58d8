"""Reading: by seq range, by object, by kind and namespace, by type; and the tail that wakes on commits."""

from __future__ import annotations

import asyncio
import pathlib
from typing import Any

from store.journal import Journal
from store.readonly import ReadOnlyJournal
from store.records import Record, RecordType
from store.settings import JournalSettings
from tests.helpers import eventually
from tests.unit.store.factories import OpenJournal, decision, seen


async def fill(journal: Journal) -> None:
    await journal.append([seen("a"), seen("b", namespace="other")])  # 1, 2
    await journal.append([seen("a", "MODIFIED"), decision("ars", to="Running")])  # 3, 4
    await journal.append([seen("ars", kind="AutoscalingRunnerSet"), seen("a", "DELETED")])  # 5, 6


def seqs(found: list[Record]) -> list[int | None]:
    return [r.seq for r in found]


async def test_read_by_seq_range(journal: Journal) -> None:
    await fill(journal)
    assert seqs(await journal.read()) == [1, 2, 3, 4, 5, 6]
    assert seqs(await journal.read(after=2)) == [3, 4, 5, 6]
    assert seqs(await journal.read(after=2, limit=2)) == [3, 4]
    assert seqs(await journal.read(after=1, through=3)) == [2, 3]
    assert await journal.read(after=6) == []


async def test_a_read_only_journal_reads_what_the_writer_reads(journal: Journal, path: pathlib.Path) -> None:
    await fill(journal)
    queries: list[dict[str, Any]] = [
        {},
        {"after": 2, "limit": 2},
        {"after": 1, "through": 3},
        {"kind": "Pod", "namespace": "other"},
        {"types": {RecordType.DECISION}, "through": 5},
    ]
    async with await ReadOnlyJournal.open(path) as reader:
        assert seqs(await reader.read(after=1, through=3)) == [2, 3]
        for query in queries:
            assert seqs(await reader.read(**query)) == seqs(await journal.read(**query)), query


async def test_read_by_object(journal: Journal) -> None:
    await fill(journal)
    history = await journal.read(kind="Pod", namespace="default", name="a")
    assert seqs(history) == [1, 3, 6]
    assert [r.body["event"] for r in history] == ["ADDED", "MODIFIED", "DELETED"]


async def test_read_by_kind_and_namespace(journal: Journal) -> None:
    await fill(journal)
    assert seqs(await journal.read(kind="Pod")) == [1, 2, 3, 6]
    assert seqs(await journal.read(kind="Pod", namespace="other")) == [2]
    assert seqs(await journal.read(namespace="default")) == [1, 3, 4, 5, 6]


async def test_read_by_type(journal: Journal) -> None:
    await fill(journal)
    assert seqs(await journal.read(types={RecordType.DECISION})) == [4]
    both = [RecordType.DECISION, RecordType.OBSERVED]
    assert seqs(await journal.read(types=both, after=3, limit=2)) == [4, 5]
    assert await journal.read(types=[]) == []


async def test_records_read_back_equal_the_records_appended(journal: Journal) -> None:
    outcome = decision("ars", to="Running", why={"nested": [1, 2.5, None], "text": "naïve ✓"})
    appended = await journal.append([seen("a"), outcome])
    assert await journal.read() == appended


async def test_tail_yields_the_past_then_wakes_on_new_commits(journal: Journal) -> None:
    await fill(journal)
    got: list[Record] = []

    async def follow() -> None:
        async for record in journal.tail(after=4):
            got.append(record)

    follower = asyncio.create_task(follow())
    await eventually(lambda: len(got) == 2, what="the records after seq 4")
    await journal.append([seen("late")])
    await eventually(lambda: len(got) == 3, what="the newly committed record")
    journal.submit([seen("later-1")])
    journal.submit([seen("later-2")])
    await eventually(lambda: len(got) == 5, what="both later records")
    assert seqs(got) == [5, 6, 7, 8, 9]
    await journal.close()
    await asyncio.wait_for(follower, timeout=5)  # a tail ends when the journal closes


async def test_a_tail_far_behind_reads_from_the_database(open_journal: OpenJournal) -> None:
    journal = await open_journal(JournalSettings(snapshot_every=None, tail_buffer=100))
    for i in range(30):
        await journal.append([seen(f"pod-{i}") for _ in range(100)])
    got: list[int | None] = []
    async for record in journal.tail(after=0):
        got.append(record.seq)
        if record.seq == journal.last_seq:
            break
    assert got == list(range(1, 3001))


async def test_a_tail_behind_a_byte_bounded_buffer_gets_every_record_from_the_database(
    open_journal: OpenJournal,
) -> None:
    bound = 8 * 1024
    journal = await open_journal(JournalSettings(snapshot_every=None, tail_buffer_bytes=bound))
    pad = "x" * 1000  # bodies of about 1 KiB: the buffer holds 7 of them
    await journal.append([seen("pod-0", spec={"pad": pad})])
    tail = journal.tail()
    got = [(await anext(tail)).seq]  # caught up, then held still while the journal moves on
    for round_ in range(3):
        for i in range(40):
            await journal.append([seen(f"pod-{i}", "MODIFIED", spec={"pad": pad, "round": round_})])
        records, size = journal.tail_buffered
        assert 0 < size <= bound and records < 10
        for _ in range(20):  # part of what it missed, then it falls behind again
            got.append((await anext(tail)).seq)
    while got[-1] != journal.last_seq:
        got.append((await anext(tail)).seq)
    await tail.aclose()
    assert got == list(range(1, 122))
