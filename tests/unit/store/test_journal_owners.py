"""The owners index (``owners``, format 3): what it holds, what an object owned at a position read through
it (and without it, from a format-2 journal read as it is), its upgrade from format 2, and its pruning.

The oracle is the records themselves: ``owner_uids`` of each observed body, and the records up to a
position folded into a fresh ``Projection``.
"""

from __future__ import annotations

import dataclasses
import pathlib
import sqlite3

from store import exporting, schema
from store.journal import Journal
from store.projection import Projection, owner_uids
from store.readonly import ReadOnlyJournal
from store.records import Record, RecordType
from store.settings import RetentionSettings
from tests.unit.store.factories import QUIET, OpenJournal, seen

SEED_STORY = (
    pathlib.Path(__file__).resolve().parents[2]
    / "journals"
    / "4-6-b-rejected-runners-park-the-scale-set-and-an-image-fix-recovers-it.jsonl.gz"
)
Rows = set[tuple[str, int, int]]


def story() -> list[Record]:
    with exporting.open_lines(SEED_STORY) as lines:
        return list(exporting.parse_lines(lines))


def odd_records() -> list[Record]:
    """Owner references a body may hold: two owners, the same one twice, and ones that name no uid."""
    two = seen("two", owners=("o-1", "o-2"))
    twice = seen("twice", owners=("o-1", "o-1"))
    no_uid = seen("no-uid")
    no_uid.body["object"]["metadata"]["ownerReferences"] = [{"kind": "X"}, {"uid": 7}, "o-1", {"uid": "o-3"}]
    not_a_list = seen("not-a-list")
    not_a_list.body["object"]["metadata"]["ownerReferences"] = {"uid": "o-1"}
    return [two, twice, no_uid, not_a_list, seen("two", "DELETED", owners=("o-1", "o-2"))]


async def written(open_journal: OpenJournal) -> tuple[Journal, int, list[Record]]:
    """The seed story and the odd records in a journal, a projection snapshot taken halfway."""
    records = story() + odd_records()
    half = len(records) // 2
    journal = await open_journal(QUIET)
    await journal.import_records(iter(records[:half]))
    taken = await journal.snapshot()
    await journal.import_records(iter(dataclasses.replace(r, seq=None) for r in records[half:]))
    return journal, taken, await journal.read()


def expected_rows(records: list[Record]) -> Rows:
    found: Rows = set()
    for record in records:
        obj = record.body.get("object")
        if record.type is RecordType.OBSERVED and isinstance(obj, dict):
            gone = int(record.body.get("event") == "DELETED")
            found |= {(uid, record.seq or 0, gone) for uid in owner_uids(obj)}
    return found


def owner_rows(path: pathlib.Path) -> Rows:
    with sqlite3.connect(path) as db:
        return {(str(u), int(s), int(g)) for u, s, g in db.execute("SELECT uid, seq, gone FROM owners")}


def as_format_2(path: pathlib.Path) -> None:
    """The journal as an arcsm of format 2 wrote it: no owners table, no trigger."""
    with sqlite3.connect(path) as db:
        db.execute("DROP TRIGGER owners_of_pruned")
        db.execute("DROP TABLE owners")
        db.execute("PRAGMA user_version = 2")
        assert not db.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'").fetchall()


def owners_in(records: list[Record]) -> list[tuple[str, str, str]]:
    """The objects some record names as an owner: the ones whose children are worth checking."""
    named = {uid for uid, _, _ in expected_rows(records)}
    return sorted({(r.kind, r.namespace, r.name) for r in records if r.uid in named})


async def check_children(reader: Journal | ReadOnlyJournal, records: list[Record], *, step: int) -> int:
    """Every owner's children at every ``step``-th position are the fold's; how many answers had some."""
    keys = owners_in(records)
    assert len(keys) >= 3, "the story has owners with children"
    projection = Projection()
    with_children = 0
    for record in records:
        projection.apply(record)
        seq = record.seq or 0
        if seq % step:
            continue
        for kind, namespace, name in keys:
            position = await reader.at(kind=kind, namespace=namespace, name=name, seq=seq)
            obj = projection.get(kind, namespace, name)
            assert position.exists == (obj is not None), (kind, name, seq)
            if obj is None:
                continue
            expected = projection.children(obj["metadata"]["uid"])
            assert [(c.kind, c.namespace, c.name) for c in position.children] == expected, (kind, name, seq)
            assert [c.body["object"] for c in position.children] == [projection.get(*k) for k in expected]
            with_children += bool(expected)
    return with_children


async def test_the_owners_index_holds_every_owner_an_observed_body_names(open_journal: OpenJournal) -> None:
    journal, _, records = await written(open_journal)
    rows = owner_rows(journal.path)
    assert rows == expected_rows(records)
    odd = {r.seq or 0: r.name for r in records[-5:]}
    assert {(uid, odd[seq]) for uid, seq, _ in rows if seq in odd} == {
        ("o-1", "two"),
        ("o-2", "two"),
        ("o-1", "twice"),
        ("o-3", "no-uid"),
    }
    assert {gone for _, seq, gone in rows if seq == max(odd)} == {1}


async def test_the_children_at_a_position_are_the_folds_with_the_index_and_without(
    open_journal: OpenJournal, tmp_path: pathlib.Path
) -> None:
    journal, taken, records = await written(open_journal)
    assert 0 < taken < len(records)
    assert await check_children(journal, records, step=3) > 20
    await journal.close()

    as_format_2(journal.path)
    async with await ReadOnlyJournal.open(journal.path) as old:
        assert await check_children(old, records, step=5) > 10

    upgraded = await open_journal(QUIET, at=journal.path)
    assert schema.FORMAT == 3 and owner_rows(journal.path) == expected_rows(records)
    assert await check_children(upgraded, records, step=5) > 10


async def test_a_record_appended_after_the_upgrade_is_indexed(open_journal: OpenJournal) -> None:
    journal = await open_journal(QUIET)
    await journal.import_records(iter(odd_records()[:1]))
    await journal.close()
    as_format_2(journal.path)
    again = await open_journal(QUIET, at=journal.path)
    await again.import_records(iter([seen("later", owners=("o-9",))]))
    assert owner_rows(again.path) == expected_rows(await again.read())


async def test_retention_prunes_the_owners_of_the_records_it_deletes(open_journal: OpenJournal) -> None:
    journal = await open_journal(dataclasses.replace(QUIET, retention=RetentionSettings(max_records=40)))
    await journal.import_records(iter(story()))
    await journal.retain()
    raw = journal.horizons.raw
    assert raw > 0
    rows = owner_rows(journal.path)
    assert rows == expected_rows(await journal.read())
    assert rows and min(seq for _, seq, _ in rows) > raw


async def test_appended_records_fill_the_index_in_their_own_transaction(open_journal: OpenJournal) -> None:
    journal = await open_journal(QUIET)
    appended = await journal.append(odd_records())
    appended += await journal.append([seen("solo", owners=("o-5",)), seen("none")])
    with sqlite3.connect(journal.path) as db:
        found = set(db.execute("SELECT uid, seq, kind, namespace, name, gone FROM owners"))
    by_seq = {r.seq: r for r in appended}
    assert {(uid, seq, gone) for uid, seq, _, _, _, gone in found} == expected_rows(appended)
    assert all(
        (kind, namespace, name) == (by_seq[seq].kind, by_seq[seq].namespace, by_seq[seq].name)
        for _, seq, kind, namespace, name, _ in found
    )


async def test_a_damaged_body_does_not_stop_the_upgrade_and_names_no_owner(open_journal: OpenJournal) -> None:
    journal, taken, records = await written(open_journal)
    await journal.close()
    as_format_2(journal.path)
    damaged = next(r for r in records if (r.seq or 0) < taken and expected_rows([r]))
    with sqlite3.connect(journal.path) as db:
        db.execute("UPDATE records SET body = substr(body, 1, 40) WHERE seq = ?", (damaged.seq,))
    upgraded = await open_journal(QUIET, at=journal.path)
    with sqlite3.connect(upgraded.path) as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == schema.FORMAT
    assert owner_rows(upgraded.path) == expected_rows([r for r in records if r.seq != damaged.seq])


async def test_a_window_read_before_more_records_came_still_answers_for_them(
    open_journal: OpenJournal,
) -> None:
    # The owner ranges a window keeps were read up to the position then asked; records appended after
    # it (past the newest snapshot) must reach later answers, in chunks and with a snapshot midway.
    records = story()
    journal = await open_journal(QUIET)
    keys = owners_in(records)
    projection = Projection()
    checked = 0
    for start in range(0, len(records), 25):
        before = journal.last_seq
        await journal.import_records(dataclasses.replace(r, seq=None) for r in records[start : start + 25])
        if start == 100:
            await journal.snapshot()
        for record in await journal.read(after=before):
            projection.apply(record)
        tip = journal.last_seq
        for kind, namespace, name in keys:
            obj = projection.get(kind, namespace, name)
            position = await journal.at(kind=kind, namespace=namespace, name=name, seq=tip)
            if obj is None:
                continue
            expected = projection.children(obj["metadata"]["uid"])
            assert [(c.kind, c.namespace, c.name) for c in position.children] == expected, (name, tip)
            checked += bool(expected)
    assert checked > 10


async def test_the_deleted_children_of_an_owner_are_its_deletions_newest_first(
    open_journal: OpenJournal,
) -> None:
    journal, _, records = await written(open_journal)
    # The oracle: every DELETED observed record whose body names the owner, by kind.
    for uid in {uid for uid, _, _ in owner_rows(journal.path)}:
        for kind in {r.kind for r in records}:
            expected = [
                r.seq
                for r in reversed(records)
                if r.type is RecordType.OBSERVED
                and r.kind == kind
                and r.body.get("event") == "DELETED"
                and uid in owner_uids(r.body.get("object") or {})
            ]
            found = await journal.deleted_children(uid, kind=kind, limit=1_000)
            assert found.total == len(expected)
            assert [r.seq for r in found.records] == expected
            if len(expected) > 1:
                second = await journal.deleted_children(uid, kind=kind, offset=1, limit=1)
                assert [r.seq for r in second.records] == expected[1:2] and second.total == len(expected)
    runners = [r for r in records if r.kind == "EphemeralRunner" and r.body.get("event") == "DELETED"]
    assert runners, "the seed story deletes a runner: the loop above checked a real deletion"
    nobody = await journal.deleted_children("no-such-uid", kind="EphemeralRunner")
    assert nobody.total == 0 and nobody.records == []
