"""Export to JSONL and import back: the recorded-journal format tests replay."""

from __future__ import annotations

import gzip
import io
import json
import pathlib

import pytest

from store import exporting, verifying
from store.errors import JournalImportError
from store.journal import Journal
from store.records import Record, RecordType
from store.retention import Horizons
from store.settings import HistoryRetention, JournalSettings, RetentionSettings
from tests.unit.store.factories import OpenJournal, decision, seen


async def export(path: pathlib.Path, *, after: int = 0) -> str:
    out = io.StringIO()
    await exporting.export(path, out, after=after)
    return out.getvalue()


async def recorded(journal: Journal) -> None:
    await journal.append([seen("a"), seen("b", owners=("ers-1",))])
    await journal.append(
        [decision("ars", to="Running"), Record(type=RecordType.EFFECT, name="ars", body={"n": 1})]
    )
    await journal.append(
        [seen("a", "DELETED"), Record(type=RecordType.TIMER, name="ars", body={"due": "soon"})]
    )


async def test_export_writes_one_record_per_line(journal: Journal, path: pathlib.Path) -> None:
    await recorded(journal)
    lines = (await export(path)).splitlines()
    assert len(lines) == 6
    first = json.loads(lines[0])
    assert list(first) == ["seq", "at", "type", "kind", "namespace", "name", "uid", "resourceVersion", "body"]
    assert first["seq"] == 1 and first["type"] == "observed" and first["body"]["event"] == "ADDED"
    assert [json.loads(line)["seq"] for line in (await export(path, after=4)).splitlines()] == [5, 6]


async def test_export_then_import_round_trips(
    journal: Journal, path: pathlib.Path, tmp_path: pathlib.Path
) -> None:
    await recorded(journal)
    text = await export(path)
    copy = tmp_path / "copy.sqlite"
    imported = await exporting.import_lines(copy, io.StringIO(text))
    assert (imported.records, imported.first_seq, imported.last_seq) == (6, 1, 6)
    assert await export(copy) == text
    async with await Journal.open(copy) as again:
        assert again.projection == journal.projection
        assert again.last_seq == 6
        [next_one] = await again.append([seen("c")])
        assert next_one.seq == 7


async def test_import_keeps_seqs_and_takes_gaps_as_pruned(
    open_journal: OpenJournal, path: pathlib.Path, tmp_path: pathlib.Path
) -> None:
    journal = await open_journal(
        JournalSettings(
            snapshot_every=None,
            retention=RetentionSettings(max_records=3),
            history_retention=HistoryRetention(),
        )
    )
    for i in range(6):
        await journal.append([seen(f"pod-{i}"), decision("ars", i=i)])
    await journal.retain()
    text = await export(path)
    copy = tmp_path / "copy.sqlite"
    await exporting.import_lines(copy, io.StringIO(text))
    assert await export(copy) == text
    checked = await verifying.verify(copy)
    assert checked.horizons.raw == journal.horizons.raw
    # An export from the middle imports into an empty journal, which then starts there.
    tail = tmp_path / "tail.sqlite"
    await exporting.import_lines(tail, io.StringIO(await export(path, after=10)))
    assert (await verifying.verify(tail)).horizons == Horizons(raw=10, history=10)


async def test_records_without_seq_or_time_are_numbered_and_stamped(tmp_path: pathlib.Path) -> None:
    hand_written = [
        {
            "type": "observed",
            "kind": "Pod",
            "name": "a",
            "body": {"event": "ADDED", "object": {"metadata": {}}},
        },
        {"type": "timer", "kind": "AutoscalingRunnerSet", "name": "ars", "at": "2026-03-01T10:00:00Z"},
    ]
    path = tmp_path / "hand.sqlite"
    await exporting.import_lines(path, [json.dumps(d) for d in hand_written])
    async with await Journal.open(path) as journal:
        first, second = await journal.read()
    assert (first.seq, second.seq) == (1, 2)
    assert second.at == "2026-03-01T10:00:00.000000Z"
    assert first.at != ""


async def test_a_bad_line_imports_nothing(tmp_path: pathlib.Path) -> None:
    good = exporting.to_line(seen("a").as_journaled(1, "2026-01-01T00:00:00.000000Z", seen("a").body))  # type: ignore[arg-type]
    path = tmp_path / "bad.sqlite"
    with pytest.raises(JournalImportError, match="line 3: not JSON"):
        await exporting.import_lines(path, [good, "", "{oops"])
    async with await Journal.open(path) as journal:
        assert journal.last_seq == 0
        assert journal.projection.items("Pod") == []


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        (['{"seq": 2, "type": "timer"}', '{"seq": 2, "type": "timer"}'], "does not follow"),
        (['{"type": "nonsense"}'], "line 1: not a journal record"),
        (["[1, 2]"], "line 1: not a JSON object"),
        (['{"type": "observed", "body": {"event": "ADDED"}}'], "record 1"),
        (['{"type": "timer", "at": "yesterday"}'], "not RFC 3339"),
    ],
)
async def test_import_refuses_what_is_not_a_journal(
    tmp_path: pathlib.Path, lines: list[str], message: str
) -> None:
    with pytest.raises(JournalImportError, match=message):
        await exporting.import_lines(tmp_path / "j.sqlite", lines)


async def test_an_import_must_continue_a_journal_that_has_records(
    journal: Journal, path: pathlib.Path
) -> None:
    await journal.append([seen("a")])
    with pytest.raises(JournalImportError, match="ends at seq 1"):
        await journal.import_records([Record(type=RecordType.TIMER, seq=5)])  # type: ignore[arg-type]
    await journal.import_records([Record(type=RecordType.TIMER, seq=2)])  # type: ignore[arg-type]
    [next_one] = await journal.append([seen("b")])
    assert next_one.seq == 3


async def test_old_recordings_are_upcast_on_import(tmp_path: pathlib.Path) -> None:
    old = {
        "seq": 1,
        "type": "observed",
        "kind": "Pod",
        "name": "a",
        "body": {"type": "ADDED", "object": {"x": 1}},
    }
    path = tmp_path / "old.sqlite"
    await exporting.import_lines(path, [json.dumps(old)])
    async with await Journal.open(path) as journal:
        [record] = await journal.read()
        assert record.body == {"event": "ADDED", "object": {"x": 1}}
        assert journal.projection.get("Pod", "", "a") == {"x": 1}


@pytest.mark.parametrize(
    ("line", "error"),
    [
        ('{"type": "nonsense"}', "ValueError(\"'nonsense' is not a valid RecordType\")"),
        ('{"type": ["observed"]}', "ValueError(\"['observed'] is not a valid RecordType\")"),
        ('{"kind": "Pod"}', "KeyError('type')"),
        ('{"type": "timer", "seq": "two"}', "ValueError(\"invalid literal for int() with base 10: 'two'\")"),
        ('{"type": "timer", "body": [1]}', "TypeError('cannot convert dictionary update sequence element #0"),
    ],
)
def test_a_line_that_is_no_record_says_why(line: str, error: str) -> None:
    for given in (line, line.encode()):
        with pytest.raises(JournalImportError, match="line 1: not a journal record") as raised:
            list(exporting.parse_lines([given]))
        assert error in str(raised.value)


def test_lines_read_as_bytes_give_the_records_and_body_texts_of_lines_read_as_text() -> None:
    """An export's lines are bytes: most are read without decoding the whole line first; the records and
    the body texts are those of the same lines decoded."""
    lines = [
        '{"seq":1,"at":"t","type":"decision","kind":"K","namespace":"n","name":"a","uid":"u",'
        '"resourceVersion":"1","body":{"note":"café ✓","seq":0}}',
        "   ",
        '{"seq":2,"at":"t","type":"effect","body":{"big":12345678901234567890123}}',
        '{"seq":3,"type":"observed","kind":"Pod","name":"p","body":{"type":"ADDED","object":{"x":1}}}',
        '{"seq":4,"type":"effect","body":{"n":NaN},"kind":"K"}',
        '{"seq":5,"at":"t","type":"effect","body":{"x":[1,2.5,null]}}  ',
    ]
    compared = frozenset({RecordType.DECISION, RecordType.EFFECT})
    as_text = list(exporting.parse_lines_with_bodies(lines, bodies=compared))
    as_bytes = list(exporting.parse_lines_with_bodies([line.encode() for line in lines], bodies=compared))
    assert [(r.as_json(), text) for r, text in as_bytes] == [(r.as_json(), text) for r, text in as_text]
    assert as_bytes[0][1] == '{"note":"café ✓","seq":0}'
    assert as_bytes[1][0].body == {"big": 12345678901234567890123}  # exact: read by json, not orjson
    assert as_bytes[2][0].body == {"event": "ADDED", "object": {"x": 1}}  # upcast, as a text line is


def test_a_line_of_bytes_that_is_not_utf8_is_named() -> None:
    with pytest.raises(JournalImportError, match="line 2: not UTF-8 text"):
        list(exporting.parse_lines([b'{"type":"timer"}', b'{"type":"timer","name":"caf\xe9"}']))


def test_a_truncated_gzip_export_names_the_line_it_was_reading(tmp_path: pathlib.Path) -> None:
    lines = "".join(
        exporting.to_line(seen(f"pod-{i}").as_journaled(i, "2026-01-01T00:00:00.000000Z", seen("a").body))
        + "\n"  # type: ignore[arg-type]
        for i in range(1, 200)
    )
    whole = gzip.compress(lines.encode())
    truncated = tmp_path / "export.jsonl.gz"
    truncated.write_bytes(whole[: len(whole) // 2])
    read = 0
    with (
        pytest.raises(JournalImportError, match="the gzip file ends early") as raised,
        exporting.open_lines(truncated) as opened,
    ):
        for _ in exporting.parse_lines(opened):
            read += 1
    assert raised.value.line == read + 1
