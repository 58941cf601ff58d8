"""Deletions in the phase history over HTTP: recorded journals and a live failover.

Recorded: ``the-cluster-role-allows-every-request-of-a-full-run`` (a controller that ran a scale set, a
runner that ran a job, then the scale set deleted) imported into a journal on disk and served by uvicorn
on loopback, as the controller serves it; then the same run as a standby journals it (its observed records
only: every phase change and the deletion only observed); then the same journal with its raw records
pruned by retention.

Live: two controllers in this process, with leader election, each on its own journal with its HTTP API,
against the emulated cluster and fake GitHub. ``a`` leads and runs the scale set, ``b`` stands by and
observes; ``a`` stops, ``b`` leads, and the scale set is deleted: ``b`` serves the phases ``a`` decided as
observed, and the deletion it decided itself as the end of each object's history; its ``/at`` shows the
scale set at those points (``test_api_state_at`` covers ``/at`` over recorded journals).

Nothing is mocked; every wait is on a condition with a deadline.
"""

from __future__ import annotations

import asyncio
import collections
import dataclasses
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from kubernetes_asyncio import client
from typer.testing import CliRunner

from api import phasehistory
from controller.commands.cli import app
from controller.loop import running
from controller.loop.settings import HttpSettings, LeaderElectionSettings
from store import exporting
from store.clocks import shown_time
from store.journal import Journal
from store.records import Record, RecordType, Seq
from store.settings import RetentionSettings
from tests.e2e.api.apiworld import JOURNALS, RECORDINGS, retained, served
from tests.e2e.controller import harness
from tests.helpers import eventually

DELETED_SCALE_SET = JOURNALS / "the-cluster-role-allows-every-request-of-a-full-run.jsonl.gz"
KINDS = ["AutoscalingRunnerSet", "EphemeralRunnerSet", "EphemeralRunner", "AutoscalingListener"]
ARS = "/api/v1/namespaces/default/autoscalingrunnersets/arc"
TIMEOUT = 40.0


def recorded() -> list[Record]:
    with exporting.open_lines(DELETED_SCALE_SET) as lines:
        return list(exporting.parse_lines(lines))


async def imported(directory: Path, records: list[Record], **settings: Any) -> Journal:
    await asyncio.to_thread(directory.mkdir, exist_ok=True)
    path = directory / "journal.db"
    lines = [exporting.to_line(record) for record in records]
    await exporting.import_lines(path, lines)
    return await Journal.open(path, settings=dataclasses.replace(RECORDINGS, **settings))


@pytest.fixture
async def journal(tmp_path: Path) -> AsyncIterator[Journal]:
    opened = await imported(tmp_path, recorded())
    try:
        yield opened
    finally:
        await opened.close()


def deleted_uids(records: list[Record], kind: str) -> set[str]:
    return {
        r.uid
        for r in records
        if r.type is RecordType.OBSERVED and r.kind == kind and r.body.get("event") == "DELETED"
    }


def by_uid(items: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    grouped: dict[str, list[dict[str, Any]]] = collections.defaultdict(list)
    for item in items:
        grouped[item["uid"]].append(item)
    return grouped


async def every(http: httpx.AsyncClient, path: str, **params: Any) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    after: int | None = 0
    while after is not None:
        answer = await http.get(path, params={**params, "after": after, "limit": 1000})
        assert answer.status_code == 200, answer.text
        items += answer.json()["items"]
        after = answer.json()["next"]
    return items


async def test_a_deleted_scale_set_and_its_runners_end_their_histories(journal: Journal) -> None:
    records = recorded()
    async with served(journal) as (_, http):
        items = await every(http, f"{ARS}/phases")
        end = items[-1]
        assert (end["to"], end["trigger"], end["source"]) == (None, "deleted", "decided"), items
        assert end["from"] == items[-2]["to"] and end["reason"]
        assert all(i["from"] != i["to"] for i in items), "re-affirmations are left out by default"
        with_reaffirmed = await every(http, f"{ARS}/phases", include="reaffirmed")
        assert len(with_reaffirmed) > len(items)
        assert [i for i in with_reaffirmed if i["from"] != i["to"]] == items

        for kind in KINDS:
            objects = by_uid(await every(http, "/api/v1/phases", kind=kind))
            gone = deleted_uids(records, kind)
            assert gone and set(objects) >= gone, kind
            for uid in gone:
                assert objects[uid][-1]["to"] is None and objects[uid][-1]["trigger"] == "deleted", objects[
                    uid
                ]
                assert objects[uid][-1]["source"] == "decided", "one controller released every finalizer"
        ends = [i for i in await every(http, "/api/v1/phases") if i["to"] is None]
        assert len(ends) == len({i["uid"] for i in ends}) == sum(len(deleted_uids(records, k)) for k in KINDS)

        view = await http.get(ARS)
        assert view.status_code == 404
        assert view.json()["detail"] == (
            f"AutoscalingRunnerSet default/arc was deleted (seq {end['seq']}); its history stays at "
            "GET /api/v1/namespaces/default/autoscalingrunnersets/arc/phases"
        )
    result = await asyncio.to_thread(
        CliRunner().invoke, app, ["history", "default/arc", "--journal", str(journal.path)]
    )
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[0].endswith(f", deleted at seq {end['seq']} ({shown_time(end['at'])})")
    assert result.output.splitlines()[-1].startswith(f"  seq {end['seq']}  ")
    assert f"{end['from']} → (deleted)  deleted: {end['reason']}" in result.output.splitlines()[-1]


async def test_a_standby_serves_the_deletion_it_only_observed(tmp_path: Path) -> None:
    # What a standby journals of the same run: the observed records, not one decision of its own.
    # Numbered as its own journal numbers them.
    observed = [
        dataclasses.replace(r, seq=Seq(i))
        for i, r in enumerate((r for r in recorded() if r.type is RecordType.OBSERVED), start=1)
    ]
    journal = await imported(tmp_path, observed)
    try:
        async with served(journal) as (_, http):
            items = await every(http, f"{ARS}/phases")
            assert [i["to"] for i in items][-1] is None and {i["source"] for i in items} == {"observed"}
            assert items[0]["from"] is None, "created while the standby watched: from no phase"
            assert items[-1]["reason"] == phasehistory.GONE and items[-1]["from"] == items[-2]["to"]
            for kind in ("EphemeralRunnerSet", "EphemeralRunner"):
                objects = by_uid(await every(http, "/api/v1/phases", kind=kind))
                for uid in deleted_uids(observed, kind):
                    assert objects[uid][-1]["to"] is None and objects[uid][-1]["source"] == "observed"
            assert (await http.get(ARS)).status_code == 404
    finally:
        await journal.close()


async def test_a_retention_pruned_journal_still_ends_the_history(tmp_path: Path) -> None:
    records = recorded()
    whole = await imported(tmp_path / "whole", records)
    try:
        async with served(whole) as (_, http):
            unpruned = await every(http, f"{ARS}/phases")
    finally:
        await whole.close()

    keep = 30  # the newest raw records: the deletion and a little before it
    journal = await imported(tmp_path, records, retention=RetentionSettings(max_records=keep))
    try:
        await retained(journal)
        assert journal.horizons.raw > 0, "retention pruned raw records"
        async with served(journal) as (_, http):
            items = await every(http, f"{ARS}/phases")
        # Decisions are kept longer than raw records: the decided history, its end included, is whole,
        # and the observed records left after the horizon add no phase change that never happened.
        assert items == unpruned
        assert items[-1]["to"] is None and all(i["source"] == "decided" for i in items)
    finally:
        await journal.close()


# -- live ---------------------------------------------------------------------------------------------------


@dataclasses.dataclass
class Replica:
    name: str
    task: asyncio.Task[int]
    stop: asyncio.Event
    urls: list[str]

    async def get(self, path: str, **params: Any) -> httpx.Response:
        async with httpx.AsyncClient(base_url=self.urls[0], timeout=60) as http:
            return await http.get(path, params=params)

    async def role(self) -> str:
        if not self.urls:
            return ""
        body = (await self.get("/readyz")).json()
        return str(body["role"]) if body.get("ready") or body["role"] == "standby" else ""

    async def phases(self, path: str, **params: Any) -> list[dict[str, Any]]:
        async with httpx.AsyncClient(base_url=self.urls[0], timeout=60) as http:
            return await every(http, path, **params)


def start(world: Any, directory: Path, name: str) -> Replica:
    directory.mkdir()
    election = LeaderElectionSettings(
        identity=name, namespace=harness.CONTROLLER_NS, lease_duration=6, renew_deadline=4, retry_period=0.2
    )
    base = harness.Controller(world, directory).settings
    settings = dataclasses.replace(
        base, leader_election=election, http=HttpSettings(host="127.0.0.1", port=0)
    )
    stop, urls = asyncio.Event(), []
    task = asyncio.create_task(running.run(settings, stop=stop, on_http=urls.append), name=f"arcsm {name}")
    return Replica(name, task, stop, urls)


@pytest.mark.both_worlds
async def test_after_a_failover_the_new_leader_serves_what_it_observed_and_the_deletion_it_decided(
    tmp_path: Path, world_kind: str
) -> None:
    async with harness.github_world(world_kind) as world, client.ApiClient(world.configuration()) as kube:
        await harness.create_secret(kube)
        a = start(world, tmp_path / "a", "a")
        replicas = [a]
        try:
            await eventually(lambda: _role_is(a, "leader"), timeout=TIMEOUT, what="a leading")
            b = start(world, tmp_path / "b", "b")
            replicas.append(b)
            await eventually(lambda: _role_is(b, "standby"), timeout=TIMEOUT, what="b standing by")

            await harness.create(kube, harness.scale_set_body(world, minRunners=1))

            async def b_saw_running() -> bool:
                items = await b.phases(f"{ARS}/phases")
                return bool(items) and items[-1]["to"] == "Running"

            await eventually(b_saw_running, timeout=TIMEOUT, what="b observing the scale set Running")

            async def a_runner() -> list[dict[str, Any]]:
                return [r for r in await harness.items(kube, "EphemeralRunner") if r["metadata"].get("uid")]

            runner = (await eventually(a_runner, timeout=TIMEOUT, what="a runner created"))[0]
            a.stop.set()
            async with asyncio.timeout(30):
                assert await a.task == 0
            await eventually(lambda: _role_is(b, "leader"), timeout=TIMEOUT, what="b leading")

            await harness.delete(kube, "AutoscalingRunnerSet", "arc")

            async def ended() -> list[dict[str, Any]]:
                items = await b.phases(f"{ARS}/phases")
                return items if items and items[-1]["to"] is None else []

            items = await eventually(ended, timeout=TIMEOUT, what="b ending the scale set's history")
            assert items[0]["source"] == "observed", "a decided the first phases; b only observed them"
            assert items[-1]["trigger"] == "deleted" and items[-1]["source"] == "decided", items
            assert items[-1]["from"] == "Running"
            assert all(i["from"] != i["to"] for i in items)

            async def runner_ended() -> list[dict[str, Any]]:
                found = by_uid(await b.phases("/api/v1/phases", kind="EphemeralRunner"))
                mine = found.get(runner["metadata"]["uid"], [])
                return mine if mine and mine[-1]["to"] is None else []

            await eventually(runner_ended, timeout=TIMEOUT, what="the runner's history ending")
            view = await b.get(ARS)
            assert view.status_code == 404 and "was deleted" in view.json()["detail"]

            # The state at a position, from b's journal: what b observed while a decided (no decision of
            # its own in force), its own end decided, then nothing once the deletion is observed.
            early = (await b.get(f"{ARS}/at", seq=items[0]["seq"])).json()
            assert early["phase"] == items[0]["to"] and early["decision"] is None, early
            at_end = (await b.get(f"{ARS}/at", seq=items[-1]["seq"])).json()
            assert (
                at_end["decision"]["trigger"] == "deleted" and at_end["decision"]["seq"] == items[-1]["seq"]
            )

            async def deletion_observed() -> bool:
                last = (await b.get("/readyz")).json()["lastSeq"]
                answer = await b.get(f"{ARS}/at", seq=last)
                return answer.status_code == 404 and "it was deleted at seq" in answer.json()["detail"]

            await eventually(deletion_observed, timeout=TIMEOUT, what="b observing the scale set deleted")
        finally:
            for replica in replicas:
                replica.stop.set()
            for replica in replicas:
                async with asyncio.timeout(30):
                    await replica.task


async def _role_is(replica: Replica, role: str) -> bool:
    try:
        return await replica.role() == role
    except httpx.HTTPError:
        return False
