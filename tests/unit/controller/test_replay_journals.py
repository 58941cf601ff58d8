"""Recorded journals (``tests/journals/*.jsonl.gz``, left by the controller e2e tests) replay to the decisions
they recorded, with the machine settings they journaled, and a tampered decision is caught with its seq
(DESIGN "Replay")."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from controller.commands.cli import app
from controller.commands.replay_command import load_jsonl
from controller.loop import replaying
from store import exporting
from store.records import Record, RecordType

JOURNALS = sorted((Path(__file__).parents[2] / "journals").glob("*.jsonl.gz"))


def test_there_are_recorded_journals() -> None:
    assert len(JOURNALS) >= 3, "record them: ARCSM_RECORD_JOURNALS=1 pytest tests/e2e/controller"


@pytest.mark.parametrize("path", JOURNALS, ids=[p.stem for p in JOURNALS])
def test_a_recorded_journal_replays_to_the_same_decisions(path: Path) -> None:
    records = load_jsonl(path)
    replayed = replaying.replay(records)
    assert replayed.mismatch is None, replayed.mismatch.line()
    assert replayed.decisions == sum(r.type is RecordType.DECISION for r in records) > 0


def _tampered(records: list[Record]) -> tuple[list[Record], int]:
    """``records`` with the first effect of the last decision that has effects changed; that decision's
    seq."""
    for i in range(len(records) - 2, -1, -1):
        decision, effect = records[i], records[i + 1]
        if decision.type is RecordType.DECISION and effect.type is RecordType.EFFECT:
            body = {**effect.body, "key": str(effect.body.get("key", "")) + "-tampered"}
            changed = [*records[: i + 1], dataclasses.replace(effect, body=body), *records[i + 2 :]]
            assert decision.seq is not None
            return changed, decision.seq
    raise AssertionError("no decision with effects")


@pytest.mark.parametrize("path", JOURNALS, ids=[p.stem for p in JOURNALS])
def test_a_tampered_effect_is_detected_with_its_seq(path: Path) -> None:
    records, seq = _tampered(load_jsonl(path))
    mismatch = replaying.replay(records).mismatch
    assert mismatch is not None
    assert mismatch.seq == seq
    assert mismatch.difference.startswith("effects[0].body.key: recorded")
    assert "-tampered" in mismatch.difference


def test_the_first_mismatch_is_the_lowest_seq() -> None:
    records = load_jsonl(JOURNALS[0])
    decisions = [r for r in records if r.type is RecordType.DECISION]
    first, last = decisions[0], decisions[-1]
    changed = [
        dataclasses.replace(r, body={**r.body, "note": "edited"}) if r in (first, last) else r
        for r in records
    ]
    mismatch = replaying.replay(changed).mismatch
    assert mismatch is not None and mismatch.seq == first.seq
    assert mismatch.difference.startswith("decision.body.note: recorded")


def test_a_journal_not_from_seq_1_is_refused() -> None:
    with pytest.raises(replaying.ReplayError, match="from seq 1"):
        replaying.replay(load_jsonl(JOURNALS[0])[1:])


def test_arcsm_replay_says_all_equal_or_names_the_first_mismatch(tmp_path: Path) -> None:
    runner = CliRunner()
    result = runner.invoke(app, ["replay", "--check", str(JOURNALS[0])])
    assert result.exit_code == 0, result.output
    decisions = sum(r.type is RecordType.DECISION for r in load_jsonl(JOURNALS[0]))
    assert result.output == f"{decisions} decisions replayed, all equal\n"

    records, seq = _tampered(load_jsonl(JOURNALS[0]))
    tampered = tmp_path / "tampered.jsonl"
    tampered.write_text("".join(exporting.to_line(r) + "\n" for r in records), encoding="utf-8")
    result = runner.invoke(app, ["replay", "--check", str(tampered)])
    assert result.exit_code == 1
    lines = result.output.splitlines()
    assert len(lines) == 1 and f"decision at seq {seq} " in lines[0], result.output


def test_arcsm_replay_reads_a_journal_file(tmp_path: Path) -> None:
    journal = tmp_path / "journal.db"
    with exporting.open_lines(JOURNALS[0]) as lines:
        asyncio.run(exporting.import_lines(journal, lines))
    result = CliRunner().invoke(app, ["replay", "--check", "--journal-file", str(journal)])
    assert result.exit_code == 0, result.output
    assert result.output.endswith("decisions replayed, all equal\n")


def test_arcsm_replay_prints_the_phase_timeline_and_effects(tmp_path: Path) -> None:
    records = load_jsonl(JOURNALS[0])
    decisions = [r for r in records if r.type is RecordType.DECISION]
    transitions = [(d.seq, t) for d in decisions for t in d.body["transitions"]]
    effects = [(d.seq, e) for d in decisions for e in d.body["effects"]]
    assert transitions and effects
    result = CliRunner().invoke(app, ["replay", str(JOURNALS[0])])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    moves = [line for line in lines if " → " in line]
    assert len(moves) == len(transitions)
    for line, (seq, t) in zip(moves, transitions, strict=True):
        subject = t["subject"]
        assert line.startswith(f"seq {seq}  "), line
        assert f"  {subject['kind']} {subject['namespace']}/{subject['name']}  " in line, line
        assert f"{t['from'] or '(none)'} → {t['to']}  {t['trigger']}: {t['reason']}" in line, line
    shown = [line for line in lines if "  effect " in line]
    assert len(shown) == len(effects)
    for line, (seq, effect) in zip(shown, effects, strict=True):
        kind, key = effect.split(":", 1)
        assert line.startswith(f"seq {seq}  ") and line.endswith(f"  effect {kind} {key}"), line
    assert len(lines) == len(moves) + len(shown)

    # Without --check a tampered journal still prints its timeline and exits 0.
    tampered_records, _ = _tampered(records)
    tampered = tmp_path / "tampered.jsonl"
    tampered.write_text("".join(exporting.to_line(r) + "\n" for r in tampered_records), encoding="utf-8")
    result = CliRunner().invoke(app, ["replay", str(tampered)])
    assert result.exit_code == 0, result.output
    assert result.output.splitlines() == lines


def _leaf_path(value: object, want: type) -> list[str | int] | None:
    """The path to the first leaf of exactly type ``want`` in a JSON value."""
    if type(value) is want:
        return []
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, inner in items:
        found = _leaf_path(inner, want)
        if found is not None:
            return [key, *found]
    return None


def _with_leaf(value: Any, path: list[str | int], leaf: object) -> Any:
    if not path:
        return leaf
    head, *rest = path
    if isinstance(value, dict):
        return {**value, head: _with_leaf(value[head], rest, leaf)}
    return [*value[: int(head)], _with_leaf(value[int(head)], rest, leaf), *value[int(head) + 1 :]]


@pytest.mark.parametrize(("found", "changed"), [(int, float), (bool, int), (float, int)])
def test_a_number_of_another_type_is_a_difference_though_it_compares_equal(
    tmp_path: Path, found: type, changed: type
) -> None:
    # 1 == 1.0 == True in Python: the replayed body must still read back as the recorded one type for type.
    journals = (load_jsonl(path) for path in JOURNALS)
    records, i, path = next(
        (records, i, leaf)
        for records in journals
        for i, record in enumerate(records)
        if (leaf := _effect_leaf(record, found)) is not None
    )
    effect = records[i]
    old = _leaf(effect.body, path)
    body = _with_leaf(dict(effect.body), path, changed(old))
    assert body == effect.body  # equal to Python, not to JSON
    edited = [*records[:i], dataclasses.replace(effect, body=body), *records[i + 1 :]]
    export = tmp_path / "edited.jsonl"
    export.write_text("".join(exporting.to_line(r) + "\n" for r in edited), encoding="utf-8")
    result = CliRunner().invoke(app, ["replay", "--check", str(export)])
    assert result.exit_code == 1, result.output
    assert f"recorded {json.dumps(changed(old))}, replayed {json.dumps(old)}" in result.output


def _effect_leaf(record: Record, want: type) -> list[str | int] | None:
    return _leaf_path(dict(record.body), want) if record.type is RecordType.EFFECT else None


def _leaf(value: Any, path: list[str | int]) -> Any:
    for key in path:
        value = value[key]
    return value
