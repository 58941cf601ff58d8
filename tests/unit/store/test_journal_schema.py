"""The format version in ``PRAGMA user_version``: new files, upgrades of older ones, refusals."""

from __future__ import annotations

import json
import pathlib
import sqlite3

import pytest

from store import schema, verifying
from store.errors import JournalFormatError
from store.journal import Journal
from store.records import Record, RecordType
from store.settings import JournalSettings, RetentionSettings

POD_A = {"metadata": {"name": "a", "namespace": "default", "uid": "u-a", "ownerReferences": [{"uid": "o-1"}]}}
POD_B = {"metadata": {"name": "b", "namespace": "default", "uid": "u-b"}}
TRANSITIONS = {"transitions": [{"from": "Pending", "to": "Running"}]}
AT = "2025-06-01T00:00:0{}.000000Z"
V0_ROWS = [
    (1, AT.format(0), "observed", "Pod", "default", "a", "u-a", "1", {"type": "ADDED", "object": POD_A}),
    (2, AT.format(1), "decision", "AutoscalingRunnerSet", "default", "ars", "", "", TRANSITIONS),
    (3, AT.format(2), "observed", "Pod", "default", "b", "u-b", "2", {"type": "ADDED", "object": POD_B}),
    (4, AT.format(3), "observed", "Pod", "default", "b", "u-b", "3", {"type": "DELETED", "object": POD_B}),
]
KEEP_EVERYTHING = JournalSettings(snapshot_every=None, retention=RetentionSettings())


def make_version_0(path: pathlib.Path) -> None:
    """A journal as the prototype wrote it: no checksums, no snapshots, watch-shaped observed bodies."""
    with sqlite3.connect(path) as db:
        db.execute(
            "CREATE TABLE records (seq INTEGER PRIMARY KEY, at TEXT, type TEXT, kind TEXT, namespace TEXT, "
            "name TEXT, uid TEXT, resource_version TEXT, body TEXT)"
        )
        db.execute("CREATE INDEX records_by_object ON records (kind, namespace, name, seq)")
        db.executemany(
            "INSERT INTO records VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [(*row[:8], json.dumps(row[8])) for row in V0_ROWS],
        )


def user_version(path: pathlib.Path) -> int:
    with sqlite3.connect(path) as db:
        return int(db.execute("PRAGMA user_version").fetchone()[0])


async def test_a_new_journal_has_the_current_format(path: pathlib.Path) -> None:
    await (await Journal.open(path)).close()
    assert user_version(path) == schema.FORMAT == 3
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


async def test_a_version_0_journal_is_upcast_on_open(path: pathlib.Path) -> None:
    make_version_0(path)
    assert user_version(path) == 0
    async with await Journal.open(path, settings=KEEP_EVERYTHING) as journal:
        found = await journal.read()
        assert [r.seq for r in found] == [1, 2, 3, 4]
        assert [r.body.get("event") for r in found] == ["ADDED", None, "ADDED", "DELETED"]
        assert found[1].body == TRANSITIONS
        assert found[0].at == "2025-06-01T00:00:00.000000Z"
        assert journal.projection.children("o-1") == [("Pod", "default", "a")]
        assert journal.projection.get("Pod", "default", "b") is None
        [next_one] = await journal.append([found[1]])
        assert next_one.seq == 5
    assert user_version(path) == schema.FORMAT
    assert (await verifying.verify(path)).records == 5
    with sqlite3.connect(path) as db:  # the upgrade's records fill the owners index as appends do
        assert db.execute("SELECT uid, seq, kind, name, gone FROM owners").fetchall() == [
            ("o-1", 1, "Pod", "a", 0)
        ]


async def test_a_format_1_journal_becomes_format_2_on_open_and_keeps_its_records(
    path: pathlib.Path,
) -> None:
    async with await Journal.open(path) as journal:
        await journal.append([Record(RecordType.TIMER, kind="Pod", namespace="default", name="a")])
    with sqlite3.connect(path) as db:
        db.execute("PRAGMA user_version = 1")
    async with await Journal.open(path) as journal:
        assert [r.type for r in await journal.read()] == [RecordType.TIMER]
    assert user_version(path) == schema.FORMAT == 3


async def test_verify_upgrades_an_old_journal_first(path: pathlib.Path) -> None:
    make_version_0(path)
    assert (await verifying.verify(path)).records == 4
    assert user_version(path) == schema.FORMAT


async def test_a_newer_format_is_refused(path: pathlib.Path) -> None:
    await (await Journal.open(path)).close()
    with sqlite3.connect(path) as db:
        db.execute("PRAGMA user_version = 99")
    with pytest.raises(JournalFormatError, match="format 99, newer than this arcsm reads"):
        await Journal.open(path)


async def test_another_database_is_not_taken_for_a_journal(path: pathlib.Path) -> None:
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE users (id INTEGER PRIMARY KEY)")
    with pytest.raises(JournalFormatError, match="not an arcsm journal"):
        await Journal.open(path)
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE records (id INTEGER PRIMARY KEY, what TEXT)")
    with pytest.raises(JournalFormatError, match="not an arcsm journal"):
        await Journal.open(path)
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT count(*) FROM sqlite_master WHERE type = 'table'").fetchone()[0] == 2


async def test_a_journal_of_format_3_without_its_owners_index_is_damaged(path: pathlib.Path) -> None:
    await (await Journal.open(path)).close()
    with sqlite3.connect(path) as db:
        db.execute("DROP TABLE owners")
    with pytest.raises(JournalFormatError, match="damaged journal: tables are missing"):
        await Journal.open(path)
