"""``settings`` records in the store: retention keeps the newest one (older ones go as raw records do),
and they export, import and verify like any record."""

from __future__ import annotations

import io
import pathlib
from datetime import timedelta

from store import exporting, verifying
from store.journal import Journal
from store.records import Record, RecordType
from store.settings import HistoryRetention, JournalSettings, RetentionSettings
from tests.unit.store.factories import ManualClock, OpenJournal, decision, seen


def settings_record(image: str) -> Record:
    return Record(type=RecordType.SETTINGS, body={"listener_image": image, "image_pull_secrets": ["pull"]})


async def fill(journal: Journal, count: int, clock: ManualClock | None = None) -> None:
    for i in range(count):
        await journal.append([seen(f"pod-{i % 5}", "MODIFIED", spec={"i": i}), decision("ars", i=i)])
        if clock is not None:
            clock.advance(timedelta(minutes=1))


async def settings_kept(journal: Journal) -> list[str]:
    return [r.body["listener_image"] for r in await journal.read(types={RecordType.SETTINGS})]


async def test_raw_retention_keeps_the_newest_settings_record(
    open_journal: OpenJournal, path: pathlib.Path
) -> None:
    bounded = JournalSettings(snapshot_every=None, retention=RetentionSettings(max_records=10))
    journal = await open_journal(bounded)
    await journal.append([settings_record("a")])
    await fill(journal, 5)
    await journal.append([settings_record("b")])
    await fill(journal, 30)

    pruned = await journal.retain()

    assert pruned.horizons.raw > 20
    assert await settings_kept(journal) == ["b"]
    assert (await verifying.verify(path)).horizons == pruned.horizons


async def test_history_retention_keeps_the_newest_settings_record_too(
    open_journal: OpenJournal, clock: ManualClock, path: pathlib.Path
) -> None:
    minute = timedelta(minutes=1)
    bounded = JournalSettings(
        snapshot_every=None,
        retention=RetentionSettings(max_age=5 * minute),
        history_retention=HistoryRetention(max_age=10 * minute),
    )
    journal = await open_journal(bounded)
    await journal.append([settings_record("a")])
    await fill(journal, 3, clock)
    await journal.append([settings_record("b")])
    await fill(journal, 30, clock)

    pruned = await journal.retain()

    assert pruned.horizons.history > 20
    assert await settings_kept(journal) == ["b"]
    assert not [r for r in await journal.read(types={RecordType.DECISION}) if (r.seq or 0) <= 5]
    await journal.close()
    await verifying.verify(path)


async def test_a_settings_record_exports_and_imports_as_written(
    journal: Journal, path: pathlib.Path, tmp_path: pathlib.Path
) -> None:
    await journal.append([settings_record("arcsm:e2e")])
    await fill(journal, 2)
    await journal.close()
    out = io.StringIO()
    await exporting.export(path, out)
    copy = tmp_path / "copy.sqlite"
    imported = await exporting.import_lines(copy, out.getvalue().splitlines())
    assert imported.records == 5
    async with await Journal.open(copy) as opened:
        (found,) = await opened.read(types={RecordType.SETTINGS})
    assert found.seq == 1
    assert dict(found.body) == {"listener_image": "arcsm:e2e", "image_pull_secrets": ["pull"]}
