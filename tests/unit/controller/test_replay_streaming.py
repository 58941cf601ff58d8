"""Replay streams a journal (``replaying.Replay``): each recorded decision is decided again and compared
while the records are still being read, a record is let go once it is folded, and ``arcsm replay`` over an
export or a journal file compares every recorded journal's decisions equal, printing nothing of a journal it
cannot replay to its end."""

from __future__ import annotations

import asyncio
import gc
import gzip
import weakref
from pathlib import Path

import pytest
from typer.testing import CliRunner

from controller.commands import replay_command
from controller.commands.cli import app
from controller.commands.replay_command import load_jsonl
from controller.loop import replaying
from store import exporting
from store.records import Record, RecordType

JOURNALS = sorted((Path(__file__).parents[2] / "journals").glob("*.jsonl.gz"))


def _longest_effect_run(records: list[Record]) -> int:
    longest = run = 0
    for record in records:
        run = run + 1 if record.type is RecordType.EFFECT else 0
        longest = max(longest, run)
    return longest


def test_decisions_settle_while_the_records_stream_and_folded_records_are_let_go() -> None:
    path = max(JOURNALS, key=lambda p: len(load_jsonl(p)))
    whole = load_jsonl(path)
    reach = replaying.reach(whole)
    # Held at most: the records not folded yet, and the newest decision with the effects read after it.
    bound = reach + 1 + _longest_effect_run(whole)
    decisions = sum(r.type is RecordType.DECISION for r in whole)
    del whole
    stream = replaying.Replay(reach=reach)
    refs: list[weakref.ref[Record]] = []
    settled: list[tuple[replaying.Step, replaying.Mismatch | None]] = []
    most_alive = 0
    # What the suite left alive is set aside, so each collection looks at the replay's own objects only.
    gc.freeze()
    try:
        with exporting.open_lines(path) as lines:
            for record in exporting.parse_lines(lines):
                refs.append(weakref.ref(record))
                settled.extend(stream.feed(record))
                del record
                gc.collect()
                most_alive = max(most_alive, sum(ref() is not None for ref in refs))
    finally:
        gc.unfreeze()
    assert len(refs) > 4 * bound  # a journal long enough to tell
    assert most_alive <= bound
    assert 0 < len(settled) < decisions  # decisions came out before the last record was read
    settled.extend(stream.end())
    assert [step.seq for step, _ in settled] == sorted(step.seq for step, _ in settled)
    assert len(settled) == stream.decisions == decisions
    assert all(mismatch is None for _, mismatch in settled)


@pytest.mark.parametrize("path", JOURNALS, ids=[p.stem for p in JOURNALS])
def test_arcsm_replay_check_finds_every_recorded_journal_equal(path: Path, tmp_path: Path) -> None:
    decisions = sum(r.type is RecordType.DECISION for r in load_jsonl(path))
    journal = tmp_path / "journal.db"
    with exporting.open_lines(path) as lines:
        asyncio.run(exporting.import_lines(journal, lines))
    for args in ([str(path)], ["--journal-file", str(journal)]):
        result = CliRunner().invoke(app, ["replay", "--check", *args])
        assert result.exit_code == 0, result.output
        assert result.stdout == f"{decisions} decisions replayed, all equal\n"


def test_arcsm_replay_prints_no_timeline_of_an_export_it_cannot_read_to_its_end(tmp_path: Path) -> None:
    with gzip.open(JOURNALS[0], "rb") as recorded:
        lines = recorded.read().splitlines(keepends=True)
    broken = tmp_path / "broken.jsonl"
    broken.write_bytes(b"".join([*lines, b"{oops\n"]))
    result = CliRunner().invoke(app, ["replay", str(broken)])
    assert result.exit_code == 1
    assert result.stdout == ""
    assert result.stderr.startswith(f"arcsm replay: line {len(lines) + 1}: not JSON")
    assert len(result.stderr.splitlines()) == 1


@pytest.mark.parametrize("path", JOURNALS, ids=lambda p: p.name)
def test_the_first_pass_over_an_export_finds_the_reach_its_records_have(path: Path) -> None:
    # The first pass reads only seqs from the lines that mention a decision; it must come to the same
    # reach as the records themselves (a smaller one makes the replay refuse a decision it folded past).
    with exporting.open_lines(path) as lines:
        found = replaying.reach_of(replay_command._decisions_of(lines))
    assert found == replaying.reach(load_jsonl(path)) > 0
