"""``arcsm history``: an object's phase history printed offline from a journal file.

A recorded controller run is imported into a journal on disk; the command reads it through its own
read-only connection (the while-a-controller-runs case is in ``test_api_in_controller``). Its JSON
output is what the API serves for the same object; its text prints each object that held the name (each
uid) as a life of its own, under a line saying when the journal first saw it and when it was deleted.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
from pathlib import Path
from typing import Any

from typer.testing import CliRunner, Result

from api import phasehistory
from api.models import PhaseItem
from controller.commands.cli import app
from controller.commands.history_command import Life, line, split_lives
from statemachines import diagrams
from store import exporting
from store.clocks import shown_time
from store.journal import Journal
from store.records import RecordType, observed
from store.settings import JournalSettings
from tests.e2e.api.apiworld import ARS, JOURNALS, recorded_journal, served
from tests.e2e.api.test_api_history_deletion import imported

# A runner deleted and created again under its name (a new uid), by the test of that name.
REUSED_NAME = (
    JOURNALS / "a-reused-runner-name-does-not-adopt-the-predecessors-pod-or-secret-emulated.jsonl.gz"
)

SEED_STORY = [
    "(none) → Pending",
    "Pending → Running",
    "Running → Outdated",
    "Outdated → Pending",
    "Pending → Running",
]


def invoke(*args: str) -> Result:
    return CliRunner().invoke(app, ["history", *args])


def served_item(served: dict[str, Any]) -> PhaseItem:
    """An item as the API (or ``--json``) serves it, read back."""
    return PhaseItem(**{key: value for key, value in served.items() if key != "from"}, from_=served["from"])


async def test_history_prints_each_transition_with_its_revisions(tmp_path: Path) -> None:
    await (await recorded_journal(tmp_path)).close()
    journal = str(tmp_path / "journal.db")
    result = await asyncio.to_thread(invoke, "default/arc", "--journal", journal)
    assert result.exit_code == 0, result.output
    header, *lines = result.output.splitlines()
    assert header.startswith("uid ") and header.endswith(", not deleted"), header
    assert all(line.startswith("  seq ") for line in lines), lines
    assert "(none) → Pending  generation_advanced:" in lines[0]
    assert "(generation 1, observedGeneration 0)" in lines[0]
    changes = [line.split("  ")[3] for line in lines]
    assert [c for c in changes if c.split(" → ")[0] != c.split(" → ")[1]] == SEED_STORY
    runner_set = await asyncio.to_thread(
        invoke, "default/arc", "--journal", journal, "--kind", "ephemeralrunnersets"
    )
    assert runner_set.exit_code == 0 and "actionableRevision" in runner_set.output


async def test_history_json_is_what_the_api_serves(tmp_path: Path) -> None:
    journal = await recorded_journal(tmp_path)
    try:
        async with served(journal) as (_, http):
            api_items = (await http.get(f"{ARS}/phases", params={"limit": 1000})).json()["items"]
        result = await asyncio.to_thread(invoke, "default/arc", "--journal", str(journal.path), "--json")
    finally:
        await journal.close()
    assert result.exit_code == 0, result.output
    assert [json.loads(line) for line in result.output.splitlines()] == api_items


async def test_history_says_what_is_wrong_in_one_line(tmp_path: Path) -> None:
    await (await recorded_journal(tmp_path)).close()
    journal = str(tmp_path / "journal.db")
    cases = [
        (("default/nope", "--journal", journal), 1, "holds nothing about AutoscalingRunnerSet default/nope"),
        (("arc", "--journal", journal), 2, "is not NAMESPACE/NAME"),
        (("default/arc", "--journal", journal, "--kind", "Pod"), 2, "--kind 'Pod' is not one of"),
        (("default/arc", "--journal", str(tmp_path / "missing.db")), 1, "no journal at"),
    ]
    for args, code, message in cases:
        result = await asyncio.to_thread(invoke, *args)
        assert result.exit_code == code, (args, result.output)
        assert message in result.output and len(result.output.strip().splitlines()) == 1, result.output


async def test_a_name_held_by_two_objects_in_turn_prints_each_life_under_its_uid(tmp_path: Path) -> None:
    with exporting.open_lines(REUSED_NAME) as lines:
        records = list(exporting.parse_lines(lines))
    first: dict[str, tuple[int, str]] = {}  # uid: the seq and time of its first record
    for r in records:
        if r.kind == "EphemeralRunner" and r.seq is not None and r.uid:
            first.setdefault(r.uid, (r.seq, r.at))
    runners = [r for r in records if r.kind == "EphemeralRunner" and r.type is RecordType.OBSERVED]
    (name,) = [n for n in {r.name for r in runners} if len({r.uid for r in runners if r.name == n}) == 2]
    journal = await imported(tmp_path, records)
    try:
        async with served(journal) as (_, http):
            answer = await http.get(f"/api/v1/namespaces/default/ephemeralrunners/{name}/phases")
        items = [served_item(i) for i in answer.json()["items"]]
        result = await asyncio.to_thread(
            invoke, f"default/{name}", "--kind", "er", "--journal", str(journal.path)
        )
    finally:
        await journal.close()
    assert result.exit_code == 0, result.output
    old, new = list(dict.fromkeys(i.uid for i in items))
    assert first[old][0] < first[new][0], "the API serves the older object first"
    end = items[[i.uid for i in items].index(new) - 1]
    assert (end.uid, end.to) == (old, None), "the first life ends with its deletion"
    expected = [
        f"uid {old[:8]}: first seen at seq {first[old][0]} ({shown_time(first[old][1])}), "
        f"deleted at seq {end.seq} ({shown_time(end.at)})",
        *(f"  {line(i)}" for i in items if i.uid == old),
        f"uid {new[:8]}: first seen at seq {first[new][0]} ({shown_time(first[new][1])}), not deleted",
        *(f"  {line(i)}" for i in items if i.uid == new),
    ]
    assert result.output.splitlines() == expected
    as_json = await asyncio.to_thread(
        invoke, f"default/{name}", "--kind", "er", "--journal", str(journal.path), "--json"
    )
    assert [served_item(json.loads(i)) for i in as_json.output.splitlines()] == items


def phase_item(seq: int, **fields: Any) -> PhaseItem:
    """An item of the runner default/arc-runner at ``seq`` (and a time of that many seconds), with
    ``fields`` changed."""
    return PhaseItem(
        **{
            "seq": seq,
            "at": f"2026-01-01T00:00:{seq:02d}.123456Z",
            "kind": "EphemeralRunner",
            "namespace": "default",
            "name": "arc-runner",
            "uid": "u1",
            "from_": None,
            "to": "Running",
            "trigger": "pod_phase",
            "reason": "",
            "revisions": {},
            "source": "decided",
            **fields,
        }
    )


def test_a_life_whose_deletion_is_not_journaled_still_ends_where_the_next_uid_starts() -> None:
    def item(seq: int, uid: str, to: str | None) -> PhaseItem:
        return phase_item(seq, uid=uid, to=to)

    # Retention dropped u1's deletion; an item without a uid stays with the object before it.
    items = [item(1, "u1", "Running"), item(5, "u2", "Pending"), item(6, "", "Running"), item(7, "u2", None)]
    lives = split_lives(items)
    assert [[i.seq for i in life] for life in lives] == [[1], [5, 6, 7]]
    first = Life(uid="u1", items=tuple(lives[0]), first_seq=1, first_at=items[0].at)
    assert first.header(last=False) == (
        "uid u1: first seen at seq 1 (2026-01-01T00:00:01.123Z), its deletion not in the journal"
    )
    assert first.header(last=True).endswith(", not deleted")
    second = Life(uid="u2", items=tuple(lives[1]), first_seq=3, first_at=items[1].at)
    assert second.header(last=True).endswith(", deleted at seq 7 (2026-01-01T00:00:07.123Z)")
    after_end = split_lives([*items, item(9, "", "Pending")])
    assert [i.seq for i in after_end[-1]] == [9], "nothing of an object follows its end"


def test_a_phase_change_only_observed_is_marked() -> None:
    item = phase_item(
        7,
        from_="Running",
        to="Outdated",
        trigger="runners_rejected_spec",
        reason="rejected",
        source="observed",
    )
    assert line(item).endswith("Running → Outdated  runners_rejected_spec: rejected  [observed]")
    assert "[observed]" not in line(item.model_copy(update={"source": "decided"}))


def test_an_end_is_printed_as_arcsm_graph_draws_it() -> None:
    end = phase_item(9, from_="Running", to=None, trigger=phasehistory.DELETED, reason=phasehistory.RELEASED)
    assert f"Running → {diagrams.ENDED}  {diagrams.DELETED}: " in line(end)
    assert f"Running --> {diagrams.END} : {diagrams.DELETED}" in diagrams.mermaid("EphemeralRunner")


async def observed_only_journal(path: Path, *, pruned: bool) -> None:
    """A journal holding one observation of a Running scale set and no decision about it; ``pruned``: as
    retention leaves it after dropping the raw records before it (the horizon above 0)."""
    scale_set = {
        "apiVersion": "actions.github.com/v1alpha1",
        "kind": "AutoscalingRunnerSet",
        "metadata": {"name": "arc", "namespace": "default", "uid": "u1", "generation": 1},
        "status": {"phase": "Running", "observedGeneration": 1},
    }
    async with await Journal.open(path, settings=JournalSettings(durable=False)) as journal:
        await journal.append([observed("MODIFIED", "AutoscalingRunnerSet", scale_set)])
    if pruned:
        with sqlite3.connect(path) as db:
            db.execute("UPDATE horizons SET raw = 1 WHERE id = 0")


def test_after_retention_the_first_observation_is_where_the_history_starts(tmp_path: Path) -> None:
    fresh, pruned = tmp_path / "fresh.db", tmp_path / "pruned.db"
    asyncio.run(observed_only_journal(fresh, pruned=False))
    asyncio.run(observed_only_journal(pruned, pruned=True))

    seen = invoke("default/arc", "--journal", str(fresh))
    assert seen.exit_code == 0, seen.output
    assert "(none) → Running" in seen.output and "[observed]" in seen.output
    # Its earlier records were pruned: the observation is no change from "(none)", only a starting point.
    started = invoke("default/arc", "--journal", str(pruned))
    assert started.exit_code == 0, started.output
    assert "→" not in started.output
