"""The fleet overview and a scale set's runners over HTTP, on a journal holding a small fleet
(``fleetworld``): what needs a look comes first, the filters and the counts agree, a page is a page, the
Warning Events arrive once the phase history is read, and a scale set's runners come alive first and
deleted apart, newest first, with both counts."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest

from store.journal import Journal
from tests.e2e.api import fleetworld
from tests.e2e.api.apiworld import RECORDINGS, served
from tests.helpers import eventually

FLEET = "/api/v1/fleet"
RUNNERS = "/api/v1/namespaces/ci/autoscalingrunnersets/calm/runners"


@pytest.fixture
async def journal(tmp_path: Path) -> AsyncIterator[Journal]:
    journal = await Journal.open(tmp_path / "fleet.db", settings=RECORDINGS)
    await journal.append(fleetworld.fleet())
    try:
        yield journal
    finally:
        await journal.close()


@pytest.fixture
async def client(journal: Journal) -> AsyncIterator[httpx.AsyncClient]:
    async with served(journal) as (_, client):

        async def live() -> bool:
            return bool((await client.get(FLEET)).json()["history"]["live"])

        await eventually(live, what="the phase history read")
        yield client


def names(page: dict[str, object]) -> list[str]:
    return [f"{item['namespace']}/{item['name']}" for item in page["items"]]  # type: ignore[attr-defined, index]


async def test_the_scale_sets_that_need_a_look_come_first(client: httpx.AsyncClient) -> None:
    page = (await client.get(FLEET)).json()
    assert page["total"] == len(fleetworld.SCALE_SETS) and page["offset"] == 0
    # Outdated or badly configured, then not Ready, then with failed runners, then the rest; by name.
    assert names(page) == ["ci/badcreds", "ci/stuck", "ci/starting", "ci/failing", "ci/calm", "web/solo"]
    assert names((await client.get(FLEET, params={"order": "name"})).json()) == sorted(names(page))
    changed = (await client.get(FLEET, params={"order": "changed"})).json()
    assert names(changed)[:2] == ["ci/stuck", "ci/badcreds"], "the newest condition change first"


async def test_a_scale_set_says_what_an_operator_checks_first(client: httpx.AsyncClient) -> None:
    items = {item["name"]: item for item in (await client.get(FLEET)).json()["items"]}
    stuck = items["stuck"]
    assert stuck["phase"] == "Outdated"
    assert stuck["ready"]["status"] == "False" and stuck["ready"]["reason"] == "RunnersRejectedSpec"
    assert stuck["configurationValid"]["status"] == "True"
    assert stuck["lastWarning"]["reason"] == "RunnerPodsRefused"
    assert stuck["lastWarning"]["kind"] == "AutoscalingRunnerSet" and stuck["lastWarning"]["at"].endswith("Z")
    assert stuck["changedAt"] == fleetworld.when(30)
    calm = items["calm"]
    assert (calm["minRunners"], calm["maxRunners"], calm["desired"]) == (1, 5, 2)
    assert calm["runners"]["Running"] == 2 and calm["runners"]["Succeeded"] == 0, (
        "deleted ones are not counted"
    )
    assert calm["runnerSet"] == "calm-runners"
    assert calm["listener"]["ready"]["reason"] == "PodRunning" and calm["listener"]["podPhase"] == "Running"
    assert calm["lastWarning"] is None
    bad = items["badcreds"]
    assert bad["configurationValid"]["status"] == "False"
    assert bad["lastWarning"]["reason"] == "CredentialsRejected"
    assert items["starting"]["phase"] is None and items["starting"]["ready"] is None


async def test_the_counts_cover_the_namespace_and_search_and_the_filters_pick_from_them(
    client: httpx.AsyncClient,
) -> None:
    page = (await client.get(FLEET)).json()
    assert page["phases"] == {"Running": 4, "Outdated": 1, "": 1}
    assert page["ready"] == {"True": 4, "False": 1, "Unknown": 1}
    assert (
        page["runners"]["Running"] == 2 and page["runners"]["Failed"] == 1 and page["runners"]["Pending"] == 1
    )
    recent = [(item["name"], item["to"], item["source"]) for item in page["recent"]]
    assert ("stuck", "Outdated", "decided") in recent and ("solo", "Running", "observed") in recent
    assert [item["seq"] for item in page["recent"]] == sorted(
        (item["seq"] for item in page["recent"]), reverse=True
    )

    outdated = (await client.get(FLEET, params={"phase": "Outdated"})).json()
    assert names(outdated) == ["ci/stuck"] and outdated["total"] == 1
    assert outdated["phases"] == page["phases"], "the counts do not follow the phase filter"
    assert names((await client.get(FLEET, params={"ready": "False"})).json()) == ["ci/stuck"]
    assert names((await client.get(FLEET, params={"ready": "Unknown"})).json()) == ["ci/starting"]
    web = (await client.get(FLEET, params={"namespace": "web"})).json()
    assert names(web) == ["web/solo"] and web["phases"] == {"Running": 1}
    searched = (await client.get(FLEET, params={"search": "AL"})).json()
    assert names(searched) == ["ci/calm"] and searched["runners"]["Running"] == 2
    assert {item["name"] for item in searched["recent"]} == {"calm"}


async def test_a_page_of_the_fleet_is_the_slice_asked_for(client: httpx.AsyncClient) -> None:
    everything = names((await client.get(FLEET, params={"order": "name"})).json())
    pages = []
    for offset in range(0, len(everything), 4):
        page = (await client.get(FLEET, params={"order": "name", "offset": offset, "limit": 4})).json()
        assert page["total"] == len(everything) and page["offset"] == offset
        pages += names(page)
    assert pages == everything
    past = (await client.get(FLEET, params={"offset": 100})).json()
    assert past["items"] == [] and past["total"] == len(everything)
    assert (await client.get(FLEET, params={"ready": "maybe"})).status_code == 422
    assert (await client.get(FLEET, params={"limit": 0})).status_code == 422


async def test_a_scale_sets_runners_alive_first_and_deleted_apart(client: httpx.AsyncClient) -> None:
    live = (await client.get(RUNNERS)).json()
    assert (live["live"], live["deleted"], live["total"]) == (2, 3, 2)
    assert live["lastSeq"] == len(fleetworld.fleet()), "where a stream of what follows starts"
    assert [r["name"] for r in live["items"]] == ["calm-a", "calm-b"]
    assert all(r["deletedAt"] is None and r["phase"] == "Running" for r in live["items"])
    deleted = (await client.get(RUNNERS, params={"state": "deleted", "limit": 2})).json()
    assert (deleted["total"], deleted["live"], deleted["deleted"]) == (3, 2, 3)
    assert [r["name"] for r in deleted["items"]] == ["calm-old-2", "calm-old-1"], "newest first"
    assert all(r["phase"] == "Succeeded" and r["deletedSeq"] for r in deleted["items"])
    rest = (await client.get(RUNNERS, params={"state": "deleted", "offset": 2})).json()
    assert [r["name"] for r in rest["items"]] == ["calm-old-0"]

    failing = (await client.get("/api/v1/namespaces/ci/autoscalingrunnersets/failing/runners")).json()
    assert [(r["name"], r["phase"]) for r in failing["items"]] == [("failing-x", "Failed")]
    assert failing["items"][0]["ready"]["message"] == "The runner pod is failed"
    missing = await client.get("/api/v1/namespaces/ci/autoscalingrunnersets/nope/runners")
    assert missing.status_code == 404 and "\n" not in missing.json()["detail"]
    assert (await client.get(RUNNERS, params={"state": "gone"})).status_code == 422


async def test_the_scale_set_view_carries_its_limits_listener_and_last_warning(
    client: httpx.AsyncClient,
) -> None:
    view = (await client.get("/api/v1/namespaces/ci/autoscalingrunnersets/stuck")).json()
    assert (view["minRunners"], view["maxRunners"]) == (1, 5)
    assert view["lastWarning"]["reason"] == "RunnerPodsRefused" and view["historyLoaded"] is True
    assert view["listener"]["ready"]["reason"] == "PodRunning"


async def test_a_warning_about_a_deleted_object_is_forgotten(
    journal: Journal, client: httpx.AsyncClient
) -> None:
    before = {item["name"]: item for item in (await client.get(FLEET)).json()["items"]}
    assert before["badcreds"]["lastWarning"] is not None
    gone = fleetworld.scale_set("ci", "badcreds", "Running", [])[0]
    await journal.append([fleetworld.observed(dict(gone.body["object"]), "DELETED")])
    again = fleetworld.scale_set("ci", "badcreds", "Running", [])
    await journal.append(again)

    async def renewed() -> dict[str, object] | None:
        items = {item["name"]: item for item in (await client.get(FLEET)).json()["items"]}
        fresh = items["badcreds"]
        return fresh if fresh["configurationValid"] is None else None

    fresh = await eventually(renewed, what="the scale set created again")
    assert fresh["lastWarning"] is None, "a new object of the same name starts without the old Warning"
