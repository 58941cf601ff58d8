"""Retention: snapshots, then pruning by count, age or size; decisions outlive the raw records."""

from __future__ import annotations

import asyncio
import pathlib
import sqlite3
from collections.abc import Callable
from datetime import timedelta

import pytest

from store import verifying
from store.journal import Journal
from store.records import RecordType
from store.retention import Horizons
from store.settings import HistoryRetention, JournalSettings, RetentionSettings
from tests.helpers import eventually
from tests.unit.store.factories import ManualClock, OpenJournal, decision, seen

UNBOUNDED, FOREVER = RetentionSettings(), HistoryRetention()
MINUTE = timedelta(minutes=1)


def settings(raw: RetentionSettings = UNBOUNDED, history: HistoryRetention = FOREVER) -> JournalSettings:
    return JournalSettings(snapshot_every=None, retention=raw, history_retention=history)


async def fill(journal: Journal, count: int, clock: ManualClock | None = None) -> None:
    """``count`` appends, one a minute: an observed Pod each, and a decision with every third."""
    for i in range(count):
        batch = [seen(f"pod-{i % 7}", "MODIFIED", spec={"i": i})]
        if i % 3 == 0:
            batch.append(decision("ars", i=i))
        await journal.append(batch)
        if clock is not None:
            clock.advance(MINUTE)


async def types_by_seq(journal: Journal) -> dict[int, RecordType]:
    return {r.seq: r.type for r in await journal.read() if r.seq is not None}


async def test_pruning_by_count_keeps_decisions_and_the_projection(
    open_journal: OpenJournal, path: pathlib.Path
) -> None:
    journal = await open_journal(settings(RetentionSettings(max_records=10)))
    await fill(journal, 30)
    last, decisions = journal.last_seq, await journal.read(types={RecordType.DECISION})
    projection = journal.projection

    pruned = await journal.retain()

    assert pruned.horizons == Horizons(raw=last - 10, history=0)
    kept = await types_by_seq(journal)
    assert min(seq for seq, t in kept.items() if t is not RecordType.DECISION) == last - 9
    assert await journal.read(types={RecordType.DECISION}) == decisions
    assert pruned.records == last - 10 - sum(1 for d in decisions if d.seq and d.seq <= last - 10)
    assert journal.projection == projection
    assert (await verifying.verify(path)).horizons == pruned.horizons
    await journal.close()
    assert (await open_journal()).projection == projection


async def test_a_snapshot_is_taken_before_records_it_needs_are_pruned(journal: Journal) -> None:
    await fill(journal, 10)
    last = journal.last_seq
    assert await journal.read(types={RecordType.SNAPSHOT}) == []
    await journal.retain()  # nothing to prune under the defaults
    assert await journal.read(types={RecordType.SNAPSHOT}) == []
    assert journal.last_seq == last


async def test_pruning_by_age_keeps_decisions_longer(open_journal: OpenJournal, clock: ManualClock) -> None:
    journal = await open_journal(
        settings(RetentionSettings(max_age=10 * MINUTE), HistoryRetention(max_age=30 * MINUTE))
    )
    start = clock.now()
    await fill(journal, 60, clock)  # minute i holds seq of pod-i (and a decision when i % 3 == 0)

    await journal.retain()

    kept = await journal.read()
    observed_minutes = [r.body["object"]["spec"]["i"] for r in kept if r.type is RecordType.OBSERVED]
    decided_minutes = [r.body["i"] for r in kept if r.type is RecordType.DECISION]
    assert observed_minutes == list(range(50, 60))  # older than 10 minutes: gone
    assert decided_minutes == list(range(30, 60, 3))  # decisions: 30 minutes
    assert all(r.at >= (start + timedelta(minutes=30)).strftime("%Y-%m-%dT%H:%M:%S") for r in kept)


async def test_history_count_applies_once_raw_records_are_gone(open_journal: OpenJournal) -> None:
    journal = await open_journal(settings(RetentionSettings(max_records=5), HistoryRetention(max_records=3)))
    await fill(journal, 30)
    await journal.retain()
    decisions = await journal.read(types={RecordType.DECISION})
    assert [d.body["i"] for d in decisions] == [21, 24, 27]
    assert journal.horizons.history <= journal.horizons.raw


async def test_pruning_by_size_brings_the_database_under_its_bound(
    open_journal: OpenJournal, path: pathlib.Path
) -> None:
    bound = 256 * 1024
    journal = await open_journal(settings(RetentionSettings(max_bytes=bound)))
    for i in range(20):
        await journal.append([seen(f"pod-{j}", spec={"pad": "x" * 1000, "i": i}) for j in range(50)])
    for _ in range(5):  # each pass estimates from the average record; a few converge
        await journal.retain()

    def used() -> int:
        with sqlite3.connect(path) as db:
            pragmas = ("page_count", "freelist_count", "page_size")
            [pages], [free], [size] = (db.execute(f"PRAGMA {name}").fetchone() for name in pragmas)
            return int((pages - free) * size)

    assert await asyncio.to_thread(used) <= bound
    assert journal.horizons.raw > 0
    assert len(await journal.read()) < 1000
    assert len(journal.projection.items("Pod")) == 50


async def test_retention_runs_after_automatic_snapshots(open_journal: OpenJournal) -> None:
    journal = await open_journal(
        JournalSettings(snapshot_every=20, retention=RetentionSettings(max_records=10), prune_chunk=3)
    )
    await fill(journal, 40)
    await eventually(lambda: journal.horizons.raw > 0, what="automatic pruning")


async def test_a_tail_skips_what_was_pruned(open_journal: OpenJournal) -> None:
    journal = await open_journal(settings(RetentionSettings(max_records=5)))
    await fill(journal, 12)
    await journal.retain()
    got = []
    async for record in journal.tail():
        got.append(record)
        if record.seq == journal.last_seq:
            break
    assert got == await journal.read()
    assert got[0].type is RecordType.DECISION


@pytest.mark.parametrize(
    "build",
    [
        lambda: RetentionSettings(max_records=0),
        lambda: RetentionSettings(max_age=timedelta(0)),
        lambda: HistoryRetention(max_age=-MINUTE),
        lambda: JournalSettings(prune_chunk=0),
        lambda: JournalSettings(snapshot_every=0),
        lambda: JournalSettings(group_commit_window=-MINUTE),
    ],
)
def test_settings_refuse_nonsense(build: Callable[[], object]) -> None:
    with pytest.raises(ValueError, match="must"):
        build()


async def test_a_tail_that_had_caught_up_skips_what_was_pruned_since(open_journal: OpenJournal) -> None:
    journal = await open_journal(settings(RetentionSettings(max_records=5)))
    await fill(journal, 3)
    tail = journal.tail()
    got = [await anext(tail) for _ in range(journal.last_seq)]
    cursor = journal.last_seq
    await fill(journal, 12)
    await journal.retain()
    assert journal.horizons.raw > cursor  # the records it has not read yet were pruned, some of them
    kept = await journal.read(after=cursor)
    while got[-1].seq != journal.last_seq:
        got.append(await anext(tail))
    await tail.aclose()
    assert got[cursor:] == kept
    assert {r.type for r in kept if r.seq is not None and r.seq <= journal.horizons.raw} == {
        RecordType.DECISION
    }
