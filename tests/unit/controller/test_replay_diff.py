"""``arcsm replay FILE --diff`` (``controller.loop.replaydiffs``): every recorded journal under
``tests/journals`` is decided the same by the machines installed now (the check an operator runs before an
upgrade), and a journal whose recorded decisions differ from what the machines decide is reported per
object, first difference only, as text and as JSON, with exit 1.

The differing journals are recorded journals with decisions changed, as a journal recorded by another
version of the machines would differ: a transition's target, and an effect."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner, Result

from controller.commands.cli import app
from controller.commands.replay_command import load_jsonl
from store import exporting
from store.records import Record, RecordType

JOURNALS = sorted((Path(__file__).parents[2] / "journals").glob("*.jsonl.gz"))
SEED = next(p for p in JOURNALS if p.name.startswith("4-6-b-"))


def replay(*args: str) -> Result:
    return CliRunner().invoke(app, ["replay", *args])


@pytest.mark.parametrize("path", JOURNALS, ids=[p.stem for p in JOURNALS])
def test_a_recorded_journal_has_no_difference(path: Path) -> None:
    result = replay(str(path), "--diff")
    decisions = sum(r.type is RecordType.DECISION for r in load_jsonl(path))
    assert result.exit_code == 0, result.output
    assert result.stdout == f"{decisions} decisions replayed, all equal\n"


def _changed(record: Record, **changes: Any) -> Record:
    return dataclasses.replace(record, body={**record.body, **changes})


def differing(tmp_path: Path) -> tuple[Path, dict[str, int]]:
    """The seed's journal with the first two decisions of the scale set that took a transition changed
    (the target of their first transition) and the first effect of a runner's first decision with effects;
    the seqs changed: "arc" and "again" for the scale set, "runner" for the runner (and its name)."""
    changed: list[Record] = []
    seqs: dict[str, int] = {}
    for record in load_jsonl(SEED):
        transitions = list(record.body.get("transitions") or [])
        effects = list(record.body.get("effects") or [])
        if record.type is RecordType.DECISION and record.kind == "AutoscalingRunnerSet" and transitions:
            if "again" not in seqs:
                seqs["again" if "arc" in seqs else "arc"] = record.seq or 0
                record = _changed(
                    record, transitions=[{**transitions[0], "to": "Outdated"}, *transitions[1:]]
                )
        elif (
            record.type is RecordType.DECISION
            and record.kind == "EphemeralRunner"
            and effects
            and "runner" not in seqs
        ):
            seqs["runner"] = seqs[record.name] = record.seq or 0
            record = _changed(record, effects=[*effects[1:], effects[0] + "-changed"])
        changed.append(record)
    path = tmp_path / "differing.jsonl"
    path.write_text("".join(exporting.to_line(r) + "\n" for r in changed), encoding="utf-8")
    return path, seqs


def test_differences_are_listed_per_object_first_only(tmp_path: Path) -> None:
    path, first = differing(tmp_path)
    assert first["again"] > first["arc"], "two decisions of the scale set were changed"
    result = replay(str(path), "--diff")
    assert result.exit_code == 1, result.output
    lines = result.stdout.splitlines()
    heads = [line for line in lines if not line.startswith("  ")]
    runner = next(name for name in first if name.startswith("arc-runner"))
    assert heads[:2] == [
        f"AutoscalingRunnerSet default/arc: first differs at seq {first['arc']} " + heads[0].split(" ")[-1],
        f"EphemeralRunner default/{runner}: first differs at seq {first['runner']} "
        + heads[1].split(" ")[-1],
    ]
    assert heads[2].endswith("decisions replayed; 2 objects decided differently")
    assert f"seq {first['again']}" not in result.stdout, "only each object's first difference"
    assert "  transitions recorded: (none) → Outdated (generation_advanced)" in lines
    assert "  transitions replayed: (none) → Pending (generation_advanced)" in lines
    assert any(line.startswith("  effects recorded, not replayed: ") and "-changed" in line for line in lines)
    assert any(line.startswith("  effects replayed, not recorded: ") for line in lines)
    assert any(line.startswith("  first difference: decision.body.transitions[0].to: ") for line in lines)


def test_differences_as_json(tmp_path: Path) -> None:
    path, first = differing(tmp_path)
    result = replay(str(path), "--diff", "--json")
    assert result.exit_code == 1
    body = json.loads(result.stdout)
    assert body["decisions"] == sum(r.type is RecordType.DECISION for r in load_jsonl(path))
    ars, runner = body["objects"]
    assert (ars["kind"], ars["name"], ars["seq"]) == ("AutoscalingRunnerSet", "arc", first["arc"])
    assert ars["recorded"]["transitions"][0]["to"] == "Outdated"
    assert ars["replayed"]["transitions"][0]["to"] == "Pending"
    assert ars["recorded"]["effects"] == ars["replayed"]["effects"]
    assert ars["difference"].startswith('decision.body.transitions[0].to: recorded "Outdated"')
    assert (runner["kind"], runner["seq"]) == ("EphemeralRunner", first["runner"])
    assert sorted(runner["recorded"]["effects"]) != sorted(runner["replayed"]["effects"])


def test_a_journal_file_is_diffed_too(tmp_path: Path) -> None:
    path, _ = differing(tmp_path)
    journal = tmp_path / "journal.db"
    with exporting.open_lines(path) as lines:
        asyncio.run(exporting.import_lines(journal, lines))
    result = replay(str(journal), "--journal-file", "--diff")
    assert result.exit_code == 1 and result.stdout.endswith("2 objects decided differently\n")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--diff", "--check"), "arcsm replay: --check and --diff compare the same way; give one of them\n"),
        (("--json",), "arcsm replay: --json goes with --diff\n"),
    ],
)
def test_options_that_do_not_go_together_are_one_line_and_exit_2(args: tuple[str, ...], message: str) -> None:
    result = replay(str(SEED), *args)
    assert result.exit_code == 2 and result.stdout == "" and result.stderr == message
