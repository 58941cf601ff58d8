"""One record, one time: every command that prints a journal record's time prints it as the others do.

``arcsm history`` (its lines and ``--at``) and ``arcsm replay`` (its timeline and ``--diff``) are run on one
recorded journal; each seq they both print carries the same text, the record's journal time in UTC to the
millisecond with a ``Z`` (``store.clocks.shown_time``), as the log lines are stamped.
"""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from controller.commands.cli import app
from controller.commands.replay_command import load_jsonl
from store import clocks, exporting
from store.records import Record, RecordType

JOURNAL = (
    Path(__file__).parents[2]
    / "journals"
    / ("a-reused-runner-name-does-not-adopt-the-predecessors-pod-or-secret-emulated.jsonl.gz")
)
# A line that starts with a seq and its time, as history and replay print them.
SEQ_AND_TIME = re.compile(r"^\s*seq (\d+)  (\S+)  ")
SHOWN = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")


def arcsm(*args: str) -> Result:
    result = CliRunner().invoke(app, list(args))
    assert result.exit_code in (0, 1), result.output
    return result


def times(output: str) -> dict[int, set[str]]:
    """Each seq the output's lines start with, and the times printed for it."""
    found: dict[int, set[str]] = {}
    for line in output.splitlines():
        if match := SEQ_AND_TIME.match(line):
            found.setdefault(int(match[1]), set()).add(match[2])
    return found


@pytest.fixture(scope="module")
def records() -> list[Record]:
    return load_jsonl(JOURNAL)


@pytest.fixture(scope="module")
def journal(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("times") / "journal.db"
    result = arcsm("journal", "import", str(JOURNAL), "--journal", str(path))
    assert result.exit_code == 0, result.output
    return path


@pytest.fixture(scope="module")
def history(journal: Path, records: list[Record]) -> dict[int, set[str]]:
    """What ``arcsm history`` prints for every ARC object of the journal, by seq."""
    objects = {(r.kind, r.namespace, r.name) for r in records if r.type is RecordType.DECISION}
    found: dict[int, set[str]] = {}
    for kind, namespace, name in sorted(objects):
        result = arcsm("history", f"{namespace}/{name}", "--kind", kind, "--journal", str(journal))
        assert result.exit_code == 0, result.output
        for seq, shown in times(result.stdout).items():
            found.setdefault(seq, set()).update(shown)
    return found


def test_history_and_replay_print_a_seq_at_the_same_time(
    history: dict[int, set[str]], records: list[Record]
) -> None:
    replayed = times(arcsm("replay", str(JOURNAL)).stdout)
    both = history.keys() & replayed.keys()
    decisions = {r.seq for r in records if r.type is RecordType.DECISION}
    assert both and both == history.keys() & decisions, "every decided transition is in both"
    at = {r.seq: r.at for r in records}
    for seq in both:
        assert history[seq] == replayed[seq] == {clocks.shown_time(at[seq])}, seq
    for seq, shown in (*history.items(), *replayed.items()):
        (text,) = shown
        assert SHOWN.match(text), (seq, text)


def test_history_at_a_seq_prints_the_decision_in_force_at_its_time(
    journal: Path, history: dict[int, set[str]]
) -> None:
    result = arcsm("history", "default/arc", "--journal", str(journal), "--at", "60")
    (line,) = [line for line in result.stdout.splitlines() if "decision in force: " in line]
    seq, shown = re.findall(r"decision in force: seq (\d+)  (\S+)  ", line)[0]
    assert {shown} == history[int(seq)]
    (observed,) = re.findall(r"\(observed at seq \d+, (\S+)\)", result.stdout)
    assert SHOWN.match(observed), observed


def test_replay_diff_prints_the_first_difference_at_the_time_history_prints(
    tmp_path: Path, records: list[Record], history: dict[int, set[str]]
) -> None:
    first = next(
        r for r in records if r.type is RecordType.DECISION and r.body.get("transitions") and r.seq in history
    )
    [transition, *rest] = first.body["transitions"]
    changed = dataclasses.replace(
        first, body={**first.body, "transitions": [{**transition, "to": "X"}, *rest]}
    )
    path = tmp_path / "differing.jsonl"
    lines = [exporting.to_line(changed if r is first else r) + "\n" for r in records]
    path.write_text("".join(lines), encoding="utf-8")
    result = arcsm("replay", str(path), "--diff")
    assert result.exit_code == 1
    (shown,) = re.findall(rf": first differs at seq {first.seq} \((\S+)\)$", result.stdout, re.MULTILINE)
    assert {shown} == history[first.seq]
    as_json = arcsm("replay", str(path), "--diff", "--json")
    objects = json.loads(as_json.stdout)["objects"]
    assert [o["at"] for o in objects] == [first.at], "the JSON keeps the journal's own text"


def test_a_time_copied_from_a_history_line_falls_on_that_lines_record(
    journal: Path, history: dict[int, set[str]]
) -> None:
    # Printed to the millisecond, a record's time is before it to the microsecond: --at reads a time as
    # the whole of its last digit, so the line's own decision is in force at the time the line shows.
    arc = arcsm("history", "default/arc", "--journal", str(journal))
    for seq, shown in sorted(times(arc.stdout).items())[:5]:
        (text,) = shown
        result = arcsm("history", "default/arc", "--journal", str(journal), "--at", text)
        (in_force,) = re.findall(r"decision in force: seq (\d+)  ", result.stdout)
        assert int(in_force) >= seq, (seq, text, result.stdout)
