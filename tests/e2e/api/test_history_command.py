"""``arcsm history``: an object's phase history printed offline from a journal file.

A recorded controller run is imported into a journal on disk; the command reads it through its own
read-only connection (the while-a-controller-runs case is in ``test_api_in_controller``). Its JSON
output is what the API serves for the same object.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
from pathlib import Path

from typer.testing import CliRunner, Result

from api.models import PhaseItem
from controller.commands.cli import app
from controller.commands.history_command import line
from store.journal import Journal
from store.records import observed
from store.settings import JournalSettings
from tests.e2e.api.apiworld import ARS, recorded_journal, served

SEED_STORY = [
    "(none) → Pending",
    "Pending → Running",
    "Running → Outdated",
    "Outdated → Pending",
    "Pending → Running",
]


def invoke(*args: str) -> Result:
    return CliRunner().invoke(app, ["history", *args])


async def test_history_prints_each_transition_with_its_revisions(tmp_path: Path) -> None:
    await (await recorded_journal(tmp_path)).close()
    journal = str(tmp_path / "journal.db")
    result = await asyncio.to_thread(invoke, "default/arc", "--journal", journal)
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0].startswith("seq ") and "(none) → Pending  generation_advanced:" in lines[0]
    assert "(generation 1, observedGeneration 0)" in lines[0]
    changes = [line.split("  ")[2] for line in lines]
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


def test_a_phase_change_only_observed_is_marked() -> None:
    item = PhaseItem(
        seq=7,
        at="2026-01-01T00:00:00Z",
        kind="AutoscalingRunnerSet",
        namespace="default",
        name="arc",
        uid="u1",
        from_="Running",
        to="Outdated",
        trigger="runners_rejected_spec",
        reason="rejected",
        revisions={},
        source="observed",
    )
    assert line(item).endswith("Running → Outdated  runners_rejected_spec: rejected  [observed]")
    assert "[observed]" not in line(item.model_copy(update={"source": "decided"}))


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
