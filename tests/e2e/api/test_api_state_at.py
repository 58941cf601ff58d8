"""An object at a journal position over HTTP (``GET .../{name}/at``) and offline (``arcsm history --at``).

Recorded journals imported into a journal on disk and served by uvicorn on loopback, as the controller
serves them: the seed's story with a snapshot taken halfway (so positions after it are read from the
snapshot and the records after it, and those before from the first record); the run whose scale set is
deleted; what a standby journals of that run (observed records only, as after a failover); and that run
with its raw records pruned by retention. The oracle is the journal itself: the records up to the
position folded into a fresh ``Projection``, the fold the controller decides from.

Nothing is mocked; no test waits on time.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import sqlite3
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx
from typer.testing import CliRunner

from controller.commands.cli import app
from store import exporting
from store.clocks import parse_time, shown_time
from store.journal import Journal
from store.projection import Projection
from store.records import Record, RecordType, Seq
from store.settings import RetentionSettings
from tests.e2e.api.apiworld import ARS, JOURNALS, SEED_STORY, retained, served
from tests.e2e.api.test_api_history_deletion import every, imported, recorded


def seed_story() -> list[Record]:
    with exporting.open_lines(JOURNALS / SEED_STORY) as lines:
        return list(exporting.parse_lines(lines))


async def with_snapshot_halfway(directory: Path, records: list[Record]) -> tuple[Journal, int]:
    """``records`` in a new journal, a snapshot taken after the first half of them (its marker record
    takes a seq, so the second half follows it)."""
    half = len(records) // 2
    # The snapshot's marker is stamped with the time of the record before it, as if taken then.
    journal = await Journal.open(directory / "journal.db", clock=Stopped(parse_time(records[half - 1].at)))
    await journal.import_records(iter(records[:half]))
    taken = await journal.snapshot()
    await journal.import_records(iter(dataclasses.replace(r, seq=None) for r in records[half:]))
    return journal, taken


async def seed_story_journal(directory: Path) -> tuple[Journal, int, list[Record]]:
    """The seed's story with a snapshot halfway, and its records as the journal holds them."""
    journal, taken = await with_snapshot_halfway(directory, seed_story())
    return journal, taken, await journal.read()


@dataclasses.dataclass(frozen=True)
class Stopped:
    moment: datetime

    def now(self) -> datetime:
        return self.moment


async def snapshot_seqs(journal: Journal) -> set[int]:
    return {r.seq or 0 for r in await journal.read(types={RecordType.SNAPSHOT})}


def folded(records: list[Record], seq: int) -> Projection:
    projection = Projection()
    for record in records:
        if (record.seq or 0) <= seq:
            projection.apply(record)
    return projection


def last_decision(records: list[Record], seq: int, uid: str) -> Record | None:
    found = [
        r
        for r in records
        if r.type is RecordType.DECISION
        and (r.seq or 0) <= seq
        and (r.kind, r.namespace, r.name) == ("AutoscalingRunnerSet", "default", "arc")
        and r.uid in (uid, "")
    ]
    return found[-1] if found else None


def check_against_fold(answer: dict[str, Any], records: list[Record], seq: int) -> None:
    projection = folded(records, seq)
    expected = projection.get("AutoscalingRunnerSet", "default", "arc")
    assert expected is not None
    assert answer["seq"] == seq
    assert answer["object"] == expected
    assert answer["phase"] == expected.get("status", {}).get("phase")
    assert answer["conditions"] == expected.get("status", {}).get("conditions", [])
    children = projection.children(expected["metadata"]["uid"])
    assert [(c["kind"], c["namespace"], c["name"]) for c in answer["children"]] == children
    assert [c["object"] for c in answer["children"]] == [projection.get(*key) for key in children]
    decision = last_decision(records, seq, expected["metadata"]["uid"])
    if decision is None:
        assert answer["decision"] is None
    else:
        assert answer["decision"]["seq"] == decision.seq
        assert answer["decision"]["effects"] == decision.body["effects"]
        assert [t["to"] for t in answer["decision"]["transitions"]] == [
            t["to"] for t in decision.body["transitions"]
        ]


async def test_the_state_at_any_position_is_the_journal_folded_up_to_it(tmp_path: Path) -> None:
    journal, snapshot, records = await seed_story_journal(tmp_path)
    try:
        async with served(journal) as (_, http):
            transitions = await every(http, f"{ARS}/phases")
            first = min(r.seq or 0 for r in records if r.kind == "AutoscalingRunnerSet" and r.name == "arc")
            positions = sorted({t["seq"] for t in transitions} | set(range(first, len(records) + 1, 7)))
            read_from = set()
            for seq in positions:
                answer = await http.get(f"{ARS}/at", params={"seq": seq})
                assert answer.status_code == 200, answer.text
                body = answer.json()
                check_against_fold(body, records, seq)
                read_from.add(body["snapshot"])
                assert body["snapshot"] == (snapshot if seq >= snapshot else 0)
            assert read_from == {0, snapshot}, "positions on both sides of the snapshot were asked"

            # At a transition, the decision in force is the one that took it.
            for item in transitions:
                decision = (await http.get(f"{ARS}/at", params={"seq": item["seq"]})).json()["decision"]
                assert decision["seq"] == item["seq"] and decision["trigger"] == item["trigger"]
                taken = [(t["from"], t["to"], t["reason"]) for t in decision["transitions"]]
                assert (item["from"], item["to"], item["reason"]) in taken
                assert decision["reason"]

            # ?time= falls on the last record journaled at or before it.
            outdated = next(t for t in transitions if t["to"] == "Outdated")
            by_time = await http.get(f"{ARS}/at", params={"time": outdated["at"]})
            same_time = max(r.seq or 0 for r in records if r.at <= outdated["at"])
            assert by_time.status_code == 200 and by_time.json()["seq"] == same_time
            assert by_time.json()["decision"]["seq"] == outdated["seq"]

            again = await http.get(
                f"{ARS}/at",
                params={"seq": outdated["seq"]},
                headers={"If-None-Match": by_time.headers["ETag"]},
            )
            assert again.status_code == 200, "another position is another answer"
            cached = await http.get(
                f"{ARS}/at", params={"seq": same_time}, headers={"If-None-Match": by_time.headers["ETag"]}
            )
            assert cached.status_code == 304
    finally:
        await journal.close()


async def test_a_position_that_is_not_one_answers_one_line(tmp_path: Path) -> None:
    journal, _, records = await seed_story_journal(tmp_path)
    first = min(r.seq or 0 for r in records if r.kind == "AutoscalingRunnerSet" and r.name == "arc")
    try:
        async with served(journal) as (_, http):
            cases: list[tuple[dict[str, Any], int, str]] = [
                ({"seq": first - 1}, 404, f"did not exist at seq {first - 1}: the journal had not observed"),
                ({"seq": 0}, 422, "query parameter seq"),
                ({"seq": "ten"}, 422, "query parameter seq"),
                ({"time": "yesterday"}, 422, "query parameter time"),
                ({"time": "2026-11-30T13:39:49"}, 422, "has no zone"),
                ({"time": "2001-01-01T00:00:00Z"}, 404, "the journal holds no record at or before"),
            ]
            for params, status, detail in cases:
                answer = await http.get(f"{ARS}/at", params=params)
                assert answer.status_code == status, (params, answer.text)
                assert detail in answer.json()["detail"] and "\n" not in answer.json()["detail"], params
            # Past the last record, or with no position: the last record (nothing later is known).
            for params in ({"seq": len(records) + 5}, {}):
                answer = await http.get(f"{ARS}/at", params=params)
                assert answer.status_code == 200 and answer.json()["seq"] == len(records), params
            # Both: the earlier of the two positions.
            both = await http.get(f"{ARS}/at", params={"seq": len(records), "time": records[first + 5].at})
            assert both.json()["seq"] == max(r.seq or 0 for r in records if r.at <= records[first + 5].at)
            missing = await http.get("/api/v1/namespaces/default/autoscalingrunnersets/nobody/at?seq=5")
            assert missing.status_code == 404 and "had not observed it" in missing.json()["detail"]
            assert (await http.get("/api/v1/namespaces/default/widgets/arc/at?seq=5")).status_code == 422
    finally:
        await journal.close()


async def test_a_deleted_scale_set_did_not_exist_after_its_deletion(tmp_path: Path) -> None:
    records = recorded()
    journal = await imported(tmp_path, records)
    deleted = next(
        r.seq or 0
        for r in records
        if r.type is RecordType.OBSERVED
        and (r.kind, r.name) == ("AutoscalingRunnerSet", "arc")
        and r.body.get("event") == "DELETED"
    )
    try:
        async with served(journal) as (_, http):
            end = (await every(http, f"{ARS}/phases"))[-1]
            assert end["to"] is None and end["seq"] < deleted
            # At its end (the finalizer released) it still exists, terminating; the end is in force.
            at_end = (await http.get(f"{ARS}/at", params={"seq": end["seq"]})).json()
            assert at_end["object"]["metadata"].get("deletionTimestamp")
            assert at_end["decision"]["seq"] == end["seq"] and at_end["decision"]["trigger"] == "deleted"
            check_against_fold(at_end, records, end["seq"])
            gone = await http.get(f"{ARS}/at", params={"seq": deleted})
            assert gone.status_code == 404
            assert gone.json()["detail"] == (
                f"AutoscalingRunnerSet default/arc did not exist at seq {deleted}: "
                f"it was deleted at seq {deleted}"
            )
            served_json = (await http.get(f"{ARS}/at", params={"seq": deleted - 1})).json()

        runner = CliRunner()
        path = str(journal.path)
        as_json = await asyncio.to_thread(
            runner.invoke,
            app,
            ["history", "default/arc", "--journal", path, "--at", str(deleted - 1), "--json"],
        )
        assert as_json.exit_code == 0, as_json.output
        assert json.loads(as_json.output) == served_json, "the command answers what the API does"
        text = await asyncio.to_thread(
            runner.invoke, app, ["history", "default/arc", "--journal", path, "--at", str(end["seq"])]
        )
        assert text.exit_code == 0, text.output
        lines = text.output.splitlines()
        assert lines[0] == f"AutoscalingRunnerSet default/arc at seq {end['seq']}"
        assert f"decision in force: seq {end['seq']}  {shown_time(end['at'])}  deleted: " in text.output
        after = await asyncio.to_thread(
            runner.invoke, app, ["history", "default/arc", "--journal", path, "--at", str(deleted)]
        )
        assert after.exit_code == 1
        assert after.output.strip() == (
            f"arcsm history: AutoscalingRunnerSet default/arc did not exist at seq {deleted}: "
            f"it was deleted at seq {deleted}"
        )
        by_time = await asyncio.to_thread(
            runner.invoke, app, ["history", "default/arc", "--journal", path, "--at", end["at"], "--json"]
        )
        assert by_time.exit_code == 0 and json.loads(by_time.output)["decision"]["seq"] == end["seq"]
        bad = await asyncio.to_thread(
            runner.invoke, app, ["history", "default/arc", "--journal", path, "--at", "soon"]
        )
        assert bad.exit_code == 2 and "is not an RFC 3339 time" in bad.output
    finally:
        await journal.close()


async def test_a_standby_has_the_observed_state_and_no_decision_of_its_own(tmp_path: Path) -> None:
    # What a standby journals of that run (as before a failover): the observed records only.
    observed = [
        dataclasses.replace(r, seq=Seq(i))
        for i, r in enumerate((r for r in recorded() if r.type is RecordType.OBSERVED), start=1)
    ]
    journal = await imported(tmp_path, observed)
    try:
        async with served(journal) as (_, http):
            items = await every(http, f"{ARS}/phases")
            running = next(i for i in items if i["to"] == "Running")
            answer = (await http.get(f"{ARS}/at", params={"seq": running["seq"]})).json()
            assert answer["phase"] == "Running" and answer["decision"] is None
            assert answer["observedSeq"] == running["seq"]
            assert [c["kind"] for c in answer["children"]] == ["EphemeralRunnerSet"]
            check_against_fold(answer, observed, running["seq"])
            assert (await http.get(f"{ARS}/at", params={"seq": items[-1]["seq"]})).status_code == 404
    finally:
        await journal.close()


async def test_a_position_retention_pruned_answers_410(tmp_path: Path) -> None:
    records = recorded()
    keep = 30
    journal = await imported(tmp_path, records, retention=RetentionSettings(max_records=keep))
    try:
        await retained(journal)
        raw = journal.horizons.raw
        assert raw > 0
        async with served(journal) as (_, http):
            end = (await every(http, f"{ARS}/phases"))[-1]
            pruned = await http.get(f"{ARS}/at", params={"seq": raw})
            assert pruned.status_code == 410
            detail = pruned.json()["detail"]
            assert detail.startswith(f"seq {raw} was pruned by retention (records up to seq {raw} are gone)")
            first = int(detail.rsplit("positions from seq ", 1)[1].split()[0])
            # Retention snapshots the projection before it prunes: the state is known again from there.
            assert first > raw and first in await snapshot_seqs(journal)
            between = await http.get(f"{ARS}/at", params={"seq": first - 1})
            assert between.status_code == 410 and f"positions from seq {first} on" in between.json()["detail"]
            after = await http.get(f"{ARS}/at", params={"seq": first})
            assert after.status_code == 404 and "it was deleted at seq" in after.json()["detail"]
            assert end["to"] is None, "the decided history is kept longer than the raw records"
        result = await asyncio.to_thread(
            CliRunner().invoke,
            app,
            ["history", "default/arc", "--journal", str(journal.path), "--at", str(raw)],
        )
        assert result.exit_code == 1 and f"seq {raw} was pruned by retention" in result.output
    finally:
        await journal.close()


async def test_the_api_and_the_command_read_the_journal_not_the_cluster(tmp_path: Path) -> None:
    # No cluster exists here at all: the answers come from the journal file alone.
    journal, _, records = await seed_story_journal(tmp_path)
    try:
        async with served(journal) as (_, http):
            last = await http.get(f"{ARS}/at", params={"seq": len(records)})
            now = await http.get(ARS)
        assert last.status_code == now.status_code == 200
        assert last.json()["phase"] == now.json()["phase"]
        assert last.json()["conditions"] == now.json()["conditions"]
        assert isinstance(http, httpx.AsyncClient)
    finally:
        await journal.close()


async def test_every_owners_children_are_the_folds_and_a_format_2_journal_read_as_it_is_says_the_same(
    tmp_path: Path,
) -> None:
    # Every object the story's records name as an owner (the scale set, its runner set, its runners), at
    # every third position: its children over HTTP are the fold's. Then the journal as a format-2 arcsm
    # wrote it (no owners index): ``arcsm history --at`` reads it as it is, leaves it untouched, and
    # answers what the API answered from the index.
    journal, _, records = await seed_story_journal(tmp_path)
    named = {
        ref["uid"]
        for r in records
        if r.type is RecordType.OBSERVED
        for ref in r.body["object"]["metadata"].get("ownerReferences", [])
    }
    owners = sorted({(r.kind, r.namespace, r.name) for r in records if r.uid in named})
    assert {kind for kind, _, _ in owners} >= {"AutoscalingRunnerSet", "EphemeralRunnerSet"}
    served_answers: dict[tuple[str, str, str, int], dict[str, Any]] = {}
    try:
        async with served(journal) as (_, http):
            for seq in range(1, len(records) + 1, 3):
                projection = folded(records, seq)
                for kind, namespace, name in owners:
                    plural = f"{kind.lower()}s"
                    answer = await http.get(f"/api/v1/namespaces/{namespace}/{plural}/{name}/at?seq={seq}")
                    obj = projection.get(kind, namespace, name)
                    assert answer.status_code == (404 if obj is None else 200), (kind, name, seq)
                    if obj is None:
                        continue
                    children = projection.children(obj["metadata"]["uid"])
                    body = answer.json()
                    assert [(c["kind"], c["namespace"], c["name"]) for c in body["children"]] == children
                    assert [c["object"] for c in body["children"]] == [projection.get(*k) for k in children]
                    if children and sum(k == kind for k, _, _, _ in served_answers) < 3:
                        served_answers[(kind, namespace, name, seq)] = body
    finally:
        await journal.close()
    assert {kind for kind, _, _, _ in served_answers} >= {"AutoscalingRunnerSet", "EphemeralRunnerSet"}

    with sqlite3.connect(journal.path) as db:  # as format 2: no owners table, no trigger
        db.execute("DROP TRIGGER owners_of_pruned")
        db.execute("DROP TABLE owners")
        db.execute("PRAGMA user_version = 2")
    db.close()
    before = journal.path.read_bytes()
    runner = CliRunner()
    for (kind, namespace, name, seq), body in served_answers.items():
        args = ["history", f"{namespace}/{name}", "--kind", kind, "--journal", str(journal.path)]
        found = await asyncio.to_thread(runner.invoke, app, [*args, "--at", str(seq), "--json"])
        assert found.exit_code == 0, found.output
        assert json.loads(found.output) == body, (kind, namespace, name, seq)
    assert journal.path.read_bytes() == before, "a reader leaves a format-2 journal as it is"
