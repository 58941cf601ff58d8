"""The HTTP API end to end: uvicorn on loopback over a real journal holding a recorded controller run.

Every endpoint is exercised through the real HTTP stack: phase history (one object and across objects),
pagination, ETags and 304, the journal and its event stream, the scale set view, health, readiness and
metrics, and the error answers (404 for an unknown object, 422 for a bad parameter, one line each).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sqlite3
from collections.abc import AsyncIterator
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx
import pytest

from store import rows
from store.journal import Journal
from store.records import Record, RecordType
from tests.e2e.api.apiworld import ARS, decision, recorded_journal, served
from tests.helpers import eventually

SEED_STORY = ["Pending", "Running", "Outdated", "Pending", "Running"]
KINDS = ["AutoscalingRunnerSet", "EphemeralRunnerSet", "EphemeralRunner", "AutoscalingListener"]


@pytest.fixture
async def journal(tmp_path: Path) -> AsyncIterator[Journal]:
    opened = await recorded_journal(tmp_path)
    try:
        yield opened
    finally:
        await opened.close()


@pytest.fixture
async def client(journal: Journal) -> AsyncIterator[httpx.AsyncClient]:
    async with served(journal) as (_, http):
        yield http


def phase_changes(items: list[dict[str, Any]]) -> list[str]:
    return [item["to"] for item in items if item["from"] != item["to"]]


async def all_pages(client: httpx.AsyncClient, path: str, **params: Any) -> tuple[list[dict[str, Any]], int]:
    """Every item of a paginated answer, following ``next``; and how many pages it took."""
    items: list[dict[str, Any]] = []
    after: int | None = 0
    pages = 0
    while after is not None:
        answer = await client.get(path, params={**params, "after": after})
        assert answer.status_code == 200, answer.text
        pages += 1
        items.extend(answer.json()["items"])
        after = answer.json()["next"]
    return items, pages


async def test_an_object_history_shows_the_seed_story_oldest_first(client: httpx.AsyncClient) -> None:
    answer = await client.get(f"{ARS}/phases")
    assert answer.status_code == 200
    body = answer.json()
    items = body["items"]
    assert body["next"] is None
    assert phase_changes(items) == SEED_STORY
    assert items[0]["from"] is None and items[0]["to"] == "Pending"
    assert [item["seq"] for item in items] == sorted(item["seq"] for item in items)
    for item in items:
        assert set(item) == {
            "seq", "at", "kind", "namespace", "name", "uid", "from", "to", "trigger", "reason", "revisions",
            "source",
        }  # fmt: skip
        assert item["source"] == "decided", "one controller decided the whole story"
        assert (item["kind"], item["namespace"], item["name"]) == ("AutoscalingRunnerSet", "default", "arc")
        assert item["uid"] and item["trigger"] and item["reason"]
        assert {"generation", "observedGeneration"} <= set(item["revisions"])
        assert datetime.fromisoformat(item["at"]).tzinfo is not None
    outdated = next(item for item in items if item["to"] == "Outdated")
    assert outdated["trigger"] == "runners_rejected_spec"


async def test_a_runner_set_history_carries_its_actionable_revisions(client: httpx.AsyncClient) -> None:
    answer = await client.get("/api/v1/namespaces/default/ephemeralrunnersets/arc/phases")
    assert answer.status_code == 200
    items = answer.json()["items"]
    assert "Outdated" in phase_changes(items)
    for item in items:
        assert {"actionableRevision", "appliedActionableRevision"} <= set(item["revisions"])


async def test_pages_follow_next_and_return_every_transition_once(client: httpx.AsyncClient) -> None:
    whole = (await client.get("/api/v1/phases", params={"limit": 1000})).json()["items"]
    assert len(whole) > 10
    for limit in (1, 3, 7):
        paged, pages = await all_pages(client, "/api/v1/phases", limit=limit)
        assert paged == whole
        assert pages >= len(whole) // limit
    one, _ = await all_pages(client, f"{ARS}/phases", limit=2)
    assert phase_changes(one) == SEED_STORY


async def test_a_page_never_splits_the_transitions_of_one_decision(
    journal: Journal, client: httpx.AsyncClient
) -> None:
    await journal.append(
        [
            decision(
                "twice", ("Outdated", "Pending", "generation_advanced"), ("Pending", "Pending", "republished")
            )
        ]
    )
    path = "/api/v1/namespaces/default/autoscalingrunnersets/twice/phases"
    # The second transition re-affirms Pending: asked for, it comes in the same page as the first.
    first = (await client.get(path, params={"limit": 1, "include": "reaffirmed"})).json()
    assert [item["trigger"] for item in first["items"]] == ["generation_advanced", "republished"]
    assert first["next"] == first["items"][0]["seq"]
    rest = await client.get(path, params={"after": first["next"], "include": "reaffirmed"})
    assert rest.json() == {"items": [], "next": None}
    # By default the re-affirmation is left out: it is journaled, but not a phase change.
    default = (await client.get(path, params={"limit": 1})).json()
    assert [item["trigger"] for item in default["items"]] == ["generation_advanced"]
    bad = await client.get(path, params={"include": "everything"})
    assert bad.status_code == 422 and "\n" not in bad.json()["detail"]


async def test_transitions_across_objects_filter_by_kind_and_namespace(client: httpx.AsyncClient) -> None:
    items, _ = await all_pages(client, "/api/v1/phases", limit=1000)
    assert {item["kind"] for item in items} >= {
        "AutoscalingRunnerSet",
        "EphemeralRunnerSet",
        "EphemeralRunner",
    }
    runners, _ = await all_pages(client, "/api/v1/phases", kind="EphemeralRunner", limit=1000)
    assert runners and {item["kind"] for item in runners} == {"EphemeralRunner"}
    assert runners == [item for item in items if item["kind"] == "EphemeralRunner"]
    listeners, _ = await all_pages(client, "/api/v1/phases", namespace="arc-systems", limit=1000)
    assert listeners == [item for item in items if item["namespace"] == "arc-systems"]
    nothing = await client.get("/api/v1/phases", params={"namespace": "elsewhere"})
    assert nothing.json() == {"items": [], "next": None}


async def test_history_answers_carry_an_etag_and_304_while_unchanged(
    journal: Journal, client: httpx.AsyncClient
) -> None:
    for path in (f"{ARS}/phases", "/api/v1/phases", "/api/v1/journal?limit=5", ARS):
        first = await client.get(path)
        etag = first.headers["etag"]
        assert (await client.get(path)).headers["etag"] == etag
        again = await client.get(path, headers={"If-None-Match": etag})
        assert again.status_code == 304 and again.content == b""
        assert again.headers["etag"] == etag
        other = await client.get(path, headers={"If-None-Match": '"something-else"'})
        assert other.status_code == 200
    before = await client.get(f"{ARS}/phases")
    await journal.append([decision("arc", ("Running", "Outdated", "runners_rejected_spec"))])
    after = await client.get(f"{ARS}/phases", headers={"If-None-Match": before.headers["etag"]})
    assert after.status_code == 200
    assert after.headers["etag"] != before.headers["etag"]
    assert after.json()["items"][-1]["to"] == "Outdated"


async def test_an_unknown_object_is_a_404_and_a_bad_parameter_a_422_each_one_line(
    client: httpx.AsyncClient,
) -> None:
    missing = await client.get("/api/v1/namespaces/default/autoscalingrunnersets/nope/phases")
    assert missing.status_code == 404
    assert "nope" in missing.json()["detail"] and "\n" not in missing.json()["detail"]
    assert (await client.get("/api/v1/namespaces/default/autoscalingrunnersets/nope")).status_code == 404
    for path in (
        "/api/v1/namespaces/default/runnersets/arc/phases",
        "/api/v1/phases?limit=0",
        "/api/v1/phases?limit=1001",
        "/api/v1/phases?after=-1",
        "/api/v1/phases?after=x",
        "/api/v1/phases?kind=Pod",
        "/api/v1/journal?type=nonsense",
        f"{ARS}/phases?after={2**63}",
    ):
        answer = await client.get(path)
        assert answer.status_code == 422, (path, answer.text)
        detail = answer.json()["detail"]
        assert isinstance(detail, str) and "\n" not in detail, detail


async def test_the_journal_serves_raw_records_with_filters_and_pages(
    journal: Journal, client: httpx.AsyncClient
) -> None:
    everything, pages = await all_pages(client, "/api/v1/journal", limit=100)
    assert [record["seq"] for record in everything] == list(range(1, journal.last_seq + 1))
    assert pages == journal.last_seq // 100 + 1
    results = (await client.get("/api/v1/journal", params={"type": "effect_result", "limit": 1000})).json()
    assert results["items"] and {r["type"] for r in results["items"]} == {"effect_result"}
    two = await client.get(
        "/api/v1/journal", params=[("type", "timer"), ("type", "decision"), ("limit", 1000)]
    )
    assert {r["type"] for r in two.json()["items"]} == {"timer", "decision"}
    mine = await client.get(
        "/api/v1/journal", params={"kind": "EphemeralRunnerSet", "name": "arc", "limit": 1000}
    )
    assert {(r["kind"], r["name"]) for r in mine.json()["items"]} == {("EphemeralRunnerSet", "arc")}
    first = everything[0]
    assert set(first) == {"seq", "at", "type", "kind", "namespace", "name", "uid", "resourceVersion", "body"}


def write_unredacted(path: Path, records: list[Record]) -> list[int]:
    """Rows written as an older arcsm that did not redact might have: plain sqlite, the bodies as they
    are (secret data included), each row with a valid checksum so the journal reads it."""
    with contextlib.closing(sqlite3.connect(path)) as db, db:
        (last,) = db.execute("SELECT COALESCE(MAX(seq), 0) FROM records").fetchone()
        seqs = []
        for seq, record in enumerate(records, start=last + 1):
            at, text = "2026-01-01T00:00:00.000000Z", json.dumps(record.body)
            fields = (seq, at, str(record.type), record.kind, record.namespace, record.name, record.uid)
            crc = rows.checksum(*fields, record.resource_version, text)
            db.execute(
                f"INSERT INTO records ({rows.COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (*fields, record.resource_version, text, crc),
            )
            seqs.append(seq)
    return seqs


async def test_no_secret_material_is_ever_served_even_from_a_journal_that_holds_it(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    await (await Journal.open(path)).close()
    secret = {
        "metadata": {"name": "github-config", "namespace": "default", "uid": "s1", "resourceVersion": "9"},
        "data": {"github_token": "Z2hwX3Rva2Vu"},
        "stringData": {"github_token": "ghp_verysecret"},
    }
    unredacted = [
        Record(
            type=RecordType.OBSERVED,
            kind="Secret",
            namespace="default",
            name="github-config",
            uid="s1",
            resource_version="9",
            body={"event": "ADDED", "object": secret},
        ),
        Record(
            type=RecordType.EFFECT_RESULT,
            kind="EphemeralRunner",
            namespace="default",
            name="r1",
            body={"ok": True, "key": "jit:Secret/default/r1", "jitToken": "jit-verysecret", "runnerId": 7},
        ),
    ]
    first, _ = write_unredacted(path, unredacted)
    with contextlib.closing(sqlite3.connect(path)) as db:
        stored = "".join(body for (body,) in db.execute("SELECT body FROM records"))
    assert "verysecret" in stored and "Z2hwX3Rva2Vu" in stored, "the journal file holds the secrets"

    journal = await Journal.open(path)
    try:
        async with served(journal) as (_, client):
            answer = await client.get("/api/v1/journal", params={"after": first - 1})
            served_records = answer.json()["items"]
            async with client.stream("GET", "/api/v1/journal/stream", params={"after": first - 1}) as stream:
                streamed = [record async for _, record in _events(stream, count=2)]
    finally:
        await journal.close()
    for records in (served_records, streamed):
        text = json.dumps(records)
        assert "verysecret" not in text and "Z2hwX3Rva2Vu" not in text
        assert records[0]["body"]["object"]["metadata"]["name"] == "github-config"
        assert records[1]["body"]["runnerId"] == 7


async def _events(response: httpx.Response, *, count: int) -> AsyncIterator[tuple[str, dict[str, Any]]]:
    """The first ``count`` server-sent events of ``response``: (id, data)."""
    event_id, data, seen = "", "", 0
    async for line in response.aiter_lines():
        if line.startswith("id: "):
            event_id = line[4:]
        elif line.startswith("data: "):
            data = line[6:]
        elif line == "" and data:
            yield event_id, json.loads(data)
            event_id, data, seen = "", "", seen + 1
            if seen == count:
                return


async def test_the_stream_follows_new_records_and_resumes_after_last_event_id(
    journal: Journal, client: httpx.AsyncClient
) -> None:
    start = journal.last_seq
    async with client.stream("GET", "/api/v1/journal/stream", params={"after": start - 1}) as stream:
        assert stream.headers["content-type"].startswith("text/event-stream")
        events = _events(stream, count=3)
        first_id, first = await anext(events)
        assert int(first_id) == first["seq"] == start
        await journal.append([decision("live", ("", "Pending", "generation_advanced"))])
        second_id, second = await anext(events)
        assert second["seq"] == start + 1 and second["type"] == "decision" and second["name"] == "live"
        await journal.append([decision("live", ("Pending", "Running", "settled"))])
        _, third = await anext(events)
        assert third["body"]["transitions"][0]["to"] == "Running"
    # A reconnecting EventSource repeats its URL and sends the last id it saw: the stream resumes after it.
    resumed = {"Last-Event-ID": second_id}
    again = {"after": start - 1}
    async with client.stream("GET", "/api/v1/journal/stream", params=again, headers=resumed) as stream:
        assert [record["seq"] async for _, record in _events(stream, count=1)] == [start + 2]
    filtered = {"name": "live", "type": "decision", "after": 0}
    async with client.stream("GET", "/api/v1/journal/stream", params=filtered) as stream:
        assert [record["seq"] async for _, record in _events(stream, count=2)] == [start + 1, start + 2]


async def test_the_stream_ends_when_the_server_stops(journal: Journal) -> None:
    async with served(journal) as (server, http):
        async with http.stream("GET", "/api/v1/journal/stream", params={"after": journal.last_seq}) as stream:
            lines = stream.aiter_lines()
            assert (await anext(lines)).startswith(":")
            stopping = asyncio.create_task(server.stop())
            rest = [line async for line in lines]
            await stopping
        assert all(not line or line.startswith(":") for line in rest)
    async with httpx.AsyncClient(base_url=server.url) as fresh:
        with pytest.raises(httpx.ConnectError):
            await fresh.get("/healthz")


async def test_the_scale_set_view_shows_phase_revisions_runners_and_listener(
    client: httpx.AsyncClient,
) -> None:
    answer = await client.get(ARS)
    assert answer.status_code == 200
    view = answer.json()
    assert (view["kind"], view["namespace"], view["name"]) == ("AutoscalingRunnerSet", "default", "arc")
    assert view["phase"] == "Running"
    revisions = view["revisions"]
    assert revisions["generation"] == revisions["observedGeneration"]
    assert revisions["actionableRevision"] == revisions["appliedActionableRevision"] > 1  # recovered
    assert view["runnerSet"]["name"] and view["runnerSet"]["phase"] == "Running"
    assert set(view["runners"]) == {"Pending", "Running", "Succeeded", "Failed", "Outdated", "Unknown"}
    assert sum(view["runners"].values()) >= 1
    assert view["listener"]["namespace"] == "arc-systems" and view["listener"]["state"] == "Running"
    assert phase_changes(view["transitions"]) == SEED_STORY
    assert isinstance(view["conditions"], list) and view["seq"] >= view["transitions"][-1]["seq"]


async def test_health_readiness_and_metrics(journal: Journal, client: httpx.AsyncClient) -> None:
    assert (await client.get("/healthz")).json() == {"status": "ok"}
    ready = await client.get("/readyz")
    assert ready.status_code == 200
    assert ready.json() == {
        "ready": True, "journalWritable": True, "synced": True, "role": "none", "lastSeq": journal.last_seq
    }  # fmt: skip
    await journal.append(
        [
            decision("metered", ("", "Pending", "generation_advanced"), ("Pending", "Running", "settled")),
            Record(
                type=RecordType.EFFECT_RESULT,
                kind="AutoscalingRunnerSet",
                namespace="default",
                name="metered",
                body={
                    "ok": False,
                    "error": "ServiceUnavailable",
                    "key": "actions:AutoscalingRunnerSet/default/"
                    "metered@u/1:CreateRunnerScaleSet(name=metered)",
                },
            ),
        ]
    )

    async def counted() -> str:
        text = (await client.get("/metrics")).text
        return text if 'arcsm_journal_records_total{type="effect_result"} 1.0' in text else ""

    text = await eventually(counted, timeout=30, what="the appended records counted")
    assert (
        'arcsm_phase_transitions_total{from="Pending",kind="AutoscalingRunnerSet",to="Running"} 1.0' in text
    )
    assert 'arcsm_phase_transitions_total{from="",kind="AutoscalingRunnerSet",to="Pending"} 1.0' in text
    assert (
        'arcsm_actions_calls_total{endpoint="CreateRunnerScaleSet",outcome="ServiceUnavailable"} 1.0' in text
    )
    assert 'arcsm_runners{namespace="default",phase="Pending",scale_set="arc"}' in text
    assert f"arcsm_journal_last_seq {float(journal.last_seq)}" in text
    assert "arcsm_reconciles_total" not in text  # no controller runs beside this API


async def test_the_api_only_reads(journal: Journal, client: httpx.AsyncClient) -> None:
    last = journal.last_seq
    for path in (f"{ARS}/phases", "/api/v1/journal", "/api/v1/phases"):
        assert (await client.post(path)).status_code == 405
        assert (await client.delete(path)).status_code == 405
    assert (await client.get("/readyz")).status_code == 200
    assert journal.last_seq == last


async def test_openapi_describes_every_route_with_its_response_model(client: httpx.AsyncClient) -> None:
    document = (await client.get("/openapi.json")).json()
    paths = document["paths"]
    for path in (
        "/api/v1/namespaces/{namespace}/{plural}/{name}/phases",
        "/api/v1/phases",
        "/api/v1/journal",
        "/api/v1/journal/stream",
        "/api/v1/namespaces/{namespace}/autoscalingrunnersets/{name}",
        "/healthz",
        "/readyz",
        "/metrics",
    ):
        assert set(paths[path]) == {"get"}, path
    item = document["components"]["schemas"]["PhaseItem"]
    assert {"seq", "at", "from", "to", "trigger", "reason", "revisions"} <= set(item["properties"])
    phases = paths["/api/v1/phases"]["get"]["responses"]
    assert phases["200"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/PhasePage"
    }
    assert phases["422"]["content"]["application/json"]["schema"] == {"$ref": "#/components/schemas/Problem"}


async def test_readiness_is_503_until_synced_and_after_the_journal_closes(tmp_path: Path) -> None:
    journal = await Journal.open(tmp_path / "empty.db")
    try:
        async with served(journal) as (_, http):
            unsynced = await http.get("/readyz")
            assert unsynced.status_code == 503
            assert unsynced.json() == {
                "ready": False, "journalWritable": True, "synced": False, "role": "none", "lastSeq": 0
            }  # fmt: skip
            await journal.append([Record(type=RecordType.SYNC, kind=kind) for kind in KINDS])
            assert (await http.get("/readyz")).status_code == 200
            assert (await http.get("/api/v1/phases")).json() == {"items": [], "next": None}
            await journal.close()
            closed = await http.get("/readyz")
            assert closed.status_code == 503 and closed.json()["journalWritable"] is False
            assert (await http.get("/healthz")).status_code == 200
    finally:
        await journal.close()


async def test_the_scale_set_view_is_unchanged_by_records_about_other_objects(
    journal: Journal, client: httpx.AsyncClient
) -> None:
    first = await client.get(ARS)
    etag, seq = first.headers["etag"], first.json()["seq"]
    assert seq < journal.last_seq, "the view's seq is its own objects' last record, not the journal's"
    await journal.append(
        [
            decision("other", ("", "Pending", "generation_advanced")),
            Record(
                type=RecordType.EFFECT_RESULT, kind="Pod", namespace="default", name="x", body={"ok": True}
            ),
        ]
    )
    again = await client.get(ARS, headers={"If-None-Match": etag})
    assert again.status_code == 304, "records about other objects do not change the scale set's ETag"
    await journal.append([decision("arc", ("Running", "Outdated", "runners_rejected_spec"))])
    changed = await client.get(ARS, headers={"If-None-Match": etag})
    assert changed.status_code == 200 and changed.json()["seq"] == journal.last_seq
    assert changed.json()["transitions"][-1]["to"] == "Outdated"


async def test_the_stream_takes_several_kinds_and_types(journal: Journal, client: httpx.AsyncClient) -> None:
    start = journal.last_seq
    runner_set = decision("set", ("", "Pending", "generation_advanced"), kind="EphemeralRunnerSet")
    await journal.append(
        [
            decision("a", ("", "Pending", "generation_advanced")),
            Record(type=RecordType.EFFECT_RESULT, kind="AutoscalingRunnerSet", namespace="default", name="a"),
            decision("r", ("", "Pending", "runner_created"), kind="EphemeralRunner"),
            runner_set,
        ]
    )
    params = [
        ("after", str(start)),
        ("type", "decision"),
        ("type", "observed"),
        ("kind", "AutoscalingRunnerSet"),
        ("kind", "EphemeralRunnerSet"),
    ]
    async with client.stream("GET", "/api/v1/journal/stream", params=params) as stream:
        found = [(record["kind"], record["name"]) async for _, record in _events(stream, count=2)]
    assert found == [("AutoscalingRunnerSet", "a"), ("EphemeralRunnerSet", "set")]


async def test_no_docs_page_loads_from_a_cdn_and_openapi_json_stays(client: httpx.AsyncClient) -> None:
    for path in ("/docs", "/redoc", "/docs/oauth2-redirect"):
        assert (await client.get(path)).status_code == 404, path
    answer = await client.get("/openapi.json")
    assert answer.status_code == 200
    assert answer.json()["info"]["title"] == "arcsm"
