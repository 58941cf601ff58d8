"""The projection: latest object per key and owner index, kept in step with appends and rebuilt on open
from the newest snapshot plus the records after it, identically."""

from __future__ import annotations

import asyncio
import pathlib
import sqlite3
import zlib

import pytest

from store import redacting, snapshots
from store.journal import Journal
from store.projection import Projection
from store.records import Record, RecordType, Seq
from store.settings import JournalSettings
from tests.helpers import eventually
from tests.unit.store.factories import OpenJournal, decision, seen


async def test_projection_keeps_the_latest_object_and_forgets_deleted_ones(journal: Journal) -> None:
    await journal.append([seen("a", status={"phase": "Pending"})])
    await journal.append([seen("a", "MODIFIED", status={"phase": "Running"}), seen("b")])
    latest = journal.projection.get("Pod", "default", "a")
    assert latest is not None and latest["status"] == {"phase": "Running"}
    assert [o["metadata"]["name"] for o in journal.projection.items("Pod")] == ["a", "b"]
    await journal.append([seen("a", "DELETED")])
    assert journal.projection.get("Pod", "default", "a") is None
    assert [o["metadata"]["name"] for o in journal.projection.items("Pod", "default")] == ["b"]
    assert journal.projection.items("Pod", "elsewhere") == []
    assert journal.projection.seq == journal.last_seq == 4


async def test_owner_index_follows_owner_references(journal: Journal) -> None:
    await journal.append([seen("r1", owners=("ers-1",)), seen("r2", owners=("ers-1", "ers-2")), seen("x")])
    assert journal.projection.children("ers-1") == [("Pod", "default", "r1"), ("Pod", "default", "r2")]
    assert journal.projection.children("ers-2") == [("Pod", "default", "r2")]
    await journal.append([seen("r1", "MODIFIED", owners=("ers-2",))])  # adopted by another owner
    assert journal.projection.children("ers-1") == [("Pod", "default", "r2")]
    assert journal.projection.children("ers-2") == [("Pod", "default", "r1"), ("Pod", "default", "r2")]
    await journal.append([seen("r2", "DELETED", owners=("ers-1", "ers-2"))])
    assert journal.projection.children("ers-1") == []
    assert journal.projection.children("ers-2") == [("Pod", "default", "r1")]


async def test_records_that_are_not_observations_leave_objects_alone(journal: Journal) -> None:
    await journal.append([seen("a")])
    await journal.append([decision("a", to="Running"), decision("b")])
    assert [o["metadata"]["name"] for o in journal.projection.items("Pod")] == ["a"]
    assert journal.projection.items("AutoscalingRunnerSet") == []
    assert journal.projection.seq == 3


async def test_sync_records_mark_a_kind_complete(journal: Journal) -> None:
    assert not journal.projection.is_synced("Pod")
    await journal.append([seen("a")])
    await journal.append([Record(type=RecordType.SYNC, kind="Pod")])
    assert journal.projection.is_synced("Pod")
    assert not journal.projection.is_synced("Secret")


async def churn(journal: Journal, start: int, count: int) -> None:
    """Appends that create, change, re-own and delete objects, some in the same transaction."""
    for i in range(start, start + count):
        owner = f"ers-{i % 3}"
        batch = [seen(f"runner-{i}", owners=(owner,), spec={"i": i})]
        if i % 4 == 0:
            batch.append(seen(f"runner-{i - 2}", "MODIFIED", owners=("ers-9",)))
        if i % 5 == 0:
            batch.append(seen(f"runner-{i - 3}", "DELETED"))
        if i % 7 == 0:
            batch.append(decision("ars", i=i))
        await journal.append(batch)


async def test_projection_is_rebuilt_identically_from_snapshot_and_tail(
    open_journal: OpenJournal, path: pathlib.Path
) -> None:
    journal = await open_journal()
    await churn(journal, 0, 40)
    seq = await journal.snapshot()
    await churn(journal, 40, 30)
    assert journal.projection.seq == journal.last_seq > seq
    kept = journal.projection
    await journal.close()

    reopened = await open_journal()
    assert reopened.projection == kept
    assert reopened.projection.children("ers-9") == kept.children("ers-9") != []
    await reopened.close()

    # And the same again with no snapshot at all: a fold of every record from the first.
    with sqlite3.connect(path) as db:
        db.execute("DELETE FROM snapshots")
    from_scratch = await open_journal()
    assert from_scratch.projection == kept


async def test_a_damaged_snapshot_is_skipped_for_the_records(
    open_journal: OpenJournal, path: pathlib.Path
) -> None:
    journal = await open_journal()
    await churn(journal, 0, 20)
    await journal.snapshot()
    await churn(journal, 20, 5)
    kept = journal.projection
    await journal.close()
    with sqlite3.connect(path) as db:
        db.execute("UPDATE snapshots SET body = zeroblob(length(body))")
    reopened = await open_journal()
    assert reopened.projection == kept


async def test_snapshots_are_taken_every_n_records(open_journal: OpenJournal, path: pathlib.Path) -> None:
    journal = await open_journal(JournalSettings(snapshot_every=25))
    await churn(journal, 0, 30)

    async def snapshot_seqs() -> list[int]:
        def query() -> list[int]:
            with sqlite3.connect(path) as db:
                return [row[0] for row in db.execute("SELECT seq FROM snapshots")]

        return await asyncio.to_thread(query)

    found = await eventually(snapshot_seqs, what="an automatic snapshot")
    assert found[0] >= 25
    markers = await journal.read(types={RecordType.SNAPSHOT})
    assert [r.seq for r in markers] == found


def test_snapshot_form_round_trips() -> None:
    projection = Projection()
    changes = [seen("a", owners=("o",)), seen("b"), seen("a", "MODIFIED", owners=("p",))]
    for i, record in enumerate(changes, 1):
        projection.apply(record.as_journaled(Seq(i), "t", record.body))
    again = Projection.from_snapshot(projection.for_snapshot())
    assert again == projection
    assert again.children("p") == [("Pod", "default", "a")]
    assert again.children("o") == []
    assert len(again) == 2


def test_a_snapshot_is_compressed_from_the_same_text_the_whole_state_encodes_to() -> None:
    projection = Projection()
    changes = [seen("a", owners=("o",)), seen("b"), seen("a", "MODIFIED", owners=("p",)), seen("é ☃")]
    for i, record in enumerate(changes, 1):
        projection.apply(record.as_journaled(Seq(i), "t", record.body))
    state = {**projection.for_snapshot(), "seq": 4}
    whole = redacting.encode(state)
    assert "".join(snapshots.pieces(state)) == whole
    assert "".join(snapshots.pieces({"seq": 0, "objects": [], "synced": []})) == redacting.encode(
        {"seq": 0, "objects": [], "synced": []}
    )
    blob, checksum = snapshots.pack(state)
    assert zlib.decompress(blob).decode() == whole
    assert snapshots.unpack(blob, checksum, seq=4) == Projection.from_snapshot(state)
    with pytest.raises(TypeError):
        snapshots.pack({1: "a key that is not a string"})
