"""The integrity check finds damaged records (by seq), gaps, damaged snapshots and damaged files."""

from __future__ import annotations

import pathlib
import sqlite3

import pytest

from store import rows, verifying
from store.errors import JournalCorrupt, JournalError
from store.journal import Journal
from tests.unit.store.factories import OpenJournal, decision, seen


async def filled(open_journal: OpenJournal, *, snapshot: bool = False) -> None:
    journal = await open_journal()
    for i in range(10):
        await journal.append([seen(f"pod-{i}", spec={"note": f"needle-{i:02d}"}), decision("ars", i=i)])
        if snapshot and i == 4:
            await journal.snapshot()
    await journal.close()


def flip_a_byte_in_the_body(path: pathlib.Path, seq: int) -> None:
    with sqlite3.connect(path) as db:
        [body] = db.execute("SELECT body FROM records WHERE seq = ?", (seq,)).fetchone()
        middle = len(body) // 2
        damaged = body[:middle] + chr(ord(body[middle]) ^ 0x01) + body[middle + 1 :]
        db.execute("UPDATE records SET body = ? WHERE seq = ?", (damaged, seq))


def damage_on_disk(path: pathlib.Path, needle: bytes) -> None:
    data = bytearray(path.read_bytes())
    data[data.index(needle) + len(needle) - 2] ^= 0x01
    path.write_bytes(bytes(data))


async def test_an_intact_journal_verifies(open_journal: OpenJournal, path: pathlib.Path) -> None:
    await filled(open_journal, snapshot=True)
    checked = await verifying.verify(path)
    assert (checked.records, checked.first_seq, checked.last_seq, checked.snapshots) == (21, 1, 21, 1)
    assert checked.summary() == "journal ok: 21 records (seq 1–21), 1 snapshot"


async def test_a_damaged_record_is_reported_with_its_seq(
    open_journal: OpenJournal, path: pathlib.Path
) -> None:
    await filled(open_journal)
    flip_a_byte_in_the_body(path, 7)
    with pytest.raises(JournalCorrupt, match="checksum") as raised:
        await verifying.verify(path)
    assert raised.value.seq == 7
    assert str(raised.value).startswith("seq 7: ")


async def test_every_damaged_record_is_counted(open_journal: OpenJournal, path: pathlib.Path) -> None:
    await filled(open_journal)
    for seq in (3, 9, 12):
        flip_a_byte_in_the_body(path, seq)
    with pytest.raises(JournalCorrupt, match=r"and 2 more problems") as raised:
        await verifying.verify(path)
    assert raised.value.seq == 3


async def test_reads_refuse_a_damaged_record(open_journal: OpenJournal, path: pathlib.Path) -> None:
    await filled(open_journal)
    flip_a_byte_in_the_body(path, 18)  # a decision: the projection does not need it, so it opens
    journal = await open_journal()
    assert len(await journal.read(through=17)) == 17
    with pytest.raises(JournalCorrupt) as raised:
        await journal.read()
    assert raised.value.seq == 18


async def test_a_damaged_observation_stops_the_projection_rebuild(
    open_journal: OpenJournal, path: pathlib.Path
) -> None:
    await filled(open_journal)
    flip_a_byte_in_the_body(path, 17)
    with pytest.raises(JournalCorrupt) as raised:
        await open_journal()
    assert raised.value.seq == 17


async def test_damage_in_the_file_itself_is_found(open_journal: OpenJournal, path: pathlib.Path) -> None:
    await filled(open_journal)  # closed: every page is in the database file, none in the WAL
    damage_on_disk(path, b"needle-05")  # "needle-05" -> "needle-15" in the body of seq 11
    with pytest.raises(JournalCorrupt) as raised:
        await verifying.verify(path)
    assert raised.value.seq == 11


async def test_a_missing_record_is_a_gap(open_journal: OpenJournal, path: pathlib.Path) -> None:
    await filled(open_journal)
    with sqlite3.connect(path) as db:
        db.execute("DELETE FROM records WHERE seq IN (5, 6)")
    with pytest.raises(JournalCorrupt, match="seqs 5–6 are missing") as raised:
        await verifying.verify(path)
    assert raised.value.seq == 5


async def test_a_damaged_snapshot_is_reported(open_journal: OpenJournal, path: pathlib.Path) -> None:
    await filled(open_journal, snapshot=True)
    with sqlite3.connect(path) as db:
        db.execute("UPDATE snapshots SET body = zeroblob(length(body))")
    with pytest.raises(JournalCorrupt, match="snapshot checksum mismatch") as raised:
        await verifying.verify(path)
    assert raised.value.seq == 11


async def test_a_file_that_is_not_a_database_is_refused(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "notes.sqlite"
    path.write_text("these are not the records you are looking for\n" * 200)
    with pytest.raises(JournalCorrupt):
        await verifying.verify(path)
    with pytest.raises(JournalCorrupt):
        await Journal.open(path)


async def test_a_missing_journal_is_named(tmp_path: pathlib.Path) -> None:
    with pytest.raises(JournalError, match="no journal at"):
        await verifying.verify(tmp_path / "absent.sqlite")
    assert not (tmp_path / "absent.sqlite").exists()


async def test_a_column_that_is_no_longer_text_is_damage(
    open_journal: OpenJournal, path: pathlib.Path
) -> None:
    # The same bytes as a BLOB: the checksum is over text, so the row does not verify.
    await filled(open_journal)
    with sqlite3.connect(path) as db:
        db.execute("UPDATE records SET body = CAST(body AS BLOB) WHERE seq = 4")
        db.execute("UPDATE records SET name = CAST(name AS BLOB) WHERE seq = 6")
    with pytest.raises(JournalCorrupt, match=r"checksum mismatch .* \(and 1 more problems\)") as raised:
        await verifying.verify(path)
    assert raised.value.seq == 4


async def test_a_record_type_no_reader_knows_is_unreadable(
    open_journal: OpenJournal, path: pathlib.Path
) -> None:
    await filled(open_journal)
    with sqlite3.connect(path) as db:
        row = db.execute(f"SELECT {rows.COLUMNS} FROM records WHERE seq = 5").fetchone()
        crc = rows.checksum(row[0], row[1], "bogus", *row[3:9])
        db.execute("UPDATE records SET type = 'bogus', checksum = ? WHERE seq = 5", (crc,))
    with pytest.raises(
        JournalCorrupt, match="unreadable record: 'bogus' is not a valid RecordType"
    ) as raised:
        await verifying.verify(path)
    assert raised.value.seq == 5
