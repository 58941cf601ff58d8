"""Every endpoint of the Actions service table (arc-controller-spec.md §6.4) against the fake over real
HTTP, with the §6.3 error bodies and the §6.5 minimum behaviour: runner groups, scale sets, JIT configs,
agents, sessions, the message queue (long poll, delete-to-ack, 401 on an expired token) and acquirejobs.

Inputs: a ``GitHubFake`` on loopback with a 0.3 s long poll, an httpx client, and the registration flow
of ``github_flow``. Nothing is mocked.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator

import httpx
import pytest

from sim.github import GitHubFake, GitHubSettings
from tests.e2e.sim.github_flow import Admin, register
from tests.helpers import eventually

LONG_POLL = 0.3
SCALE_SETS = "_apis/runtime/runnerscalesets"
AGENTS = "_apis/distributedtask/pools/0/agents"


@pytest.fixture
async def fake() -> AsyncIterator[GitHubFake]:
    async with GitHubFake(settings=GitHubSettings(long_poll_seconds=LONG_POLL), seed=1) as f:
        yield f


@pytest.fixture
async def admin(fake: GitHubFake) -> AsyncIterator[Admin]:
    async with httpx.AsyncClient(timeout=10) as http:
        yield await register(http, fake)


def type_name(resp: httpx.Response) -> str:
    body = resp.json()
    assert set(body) >= {"typeName", "message"}
    return str(body["typeName"])


# -- runner groups -----------------------------------------------------------------------------------------


async def test_get_runner_group_by_name(fake: GitHubFake, admin: Admin) -> None:
    resp = await admin.call("GET", "_apis/runtime/runnergroups/", groupName="Default")
    assert resp.status_code == 200
    assert resp.json() == {
        "count": 1,
        "value": [{"id": 1, "name": "Default", "size": 0, "isDefaultGroup": True}],
    }
    fake.add_runner_group("acme", "gpu")
    gpu = await admin.call("GET", "_apis/runtime/runnergroups/", groupName="gpu")
    assert gpu.json()["value"] == [{"id": 2, "name": "gpu", "size": 0, "isDefaultGroup": False}]
    missing = await admin.call("GET", "_apis/runtime/runnergroups/", groupName="nope")
    assert missing.json() == {"count": 0, "value": []}
    without_slash = await admin.call("GET", "_apis/runtime/runnergroups", groupName="default")
    assert without_slash.json()["count"] == 1


# -- scale sets --------------------------------------------------------------------------------------------


async def test_create_and_get_a_scale_set(admin: Admin) -> None:
    missing = await admin.call("GET", SCALE_SETS, runnerGroupId=1, name="arc-runners")
    assert missing.json() == {"count": 0, "value": []}
    created = await admin.create_scale_set("arc-runners")
    assert created["id"] == 1
    assert created["runnerGroupId"] == 1 and created["runnerGroupName"] == "Default"
    assert created["RunnerSetting"] == {"disableUpdate": True}
    assert created["labels"] == [{"name": "arc-runners", "type": "System"}]
    assert created["runnerJitConfigUrl"].endswith("/runnerscalesets/1/generatejitconfig")
    assert created["statistics"]["totalAssignedJobs"] == 0
    found = await admin.call("GET", SCALE_SETS, runnerGroupId=1, name="arc-runners")
    assert found.json()["count"] == 1 and found.json()["value"][0]["id"] == 1
    by_id = await admin.call("GET", f"{SCALE_SETS}/1")
    assert by_id.status_code == 200 and by_id.json()["name"] == "arc-runners"
    assert (await admin.create_scale_set("second"))["id"] == 2


async def test_create_without_labels_gets_the_name_as_label(admin: Admin) -> None:
    resp = await admin.call("POST", SCALE_SETS, {"name": "plain", "runnerGroupId": 1})
    assert resp.status_code == 200
    assert resp.json()["labels"] == [{"name": "plain", "type": "System"}]


async def test_scale_set_errors(admin: Admin) -> None:
    await admin.create_scale_set("arc-runners")
    duplicate = await admin.call("POST", SCALE_SETS, {"name": "arc-runners", "runnerGroupId": 1})
    assert duplicate.status_code == 409
    assert "RunnerScaleSetExistsException" in type_name(duplicate)
    unknown = await admin.call("GET", f"{SCALE_SETS}/99")
    assert unknown.status_code == 404 and "RunnerScaleSetNotFoundException" in type_name(unknown)
    bad_group = await admin.call("POST", SCALE_SETS, {"name": "x", "runnerGroupId": 5})
    assert bad_group.status_code == 404 and "RunnerGroupNotFoundException" in type_name(bad_group)
    not_json = await admin.http.post(
        admin.base + SCALE_SETS,
        params={"api-version": "6.0-preview"},
        headers={"Authorization": f"Bearer {admin.token}"},
        content=b"{nope",
    )
    assert not_json.status_code == 400


async def test_update_a_scale_sets_group_and_name(fake: GitHubFake, admin: Admin) -> None:
    created = await admin.create_scale_set("arc-runners")
    fake.add_runner_group("acme", "gpu")
    moved = await admin.call("PATCH", f"{SCALE_SETS}/{created['id']}", {"runnerGroupId": 2})
    assert moved.status_code == 200
    assert (moved.json()["runnerGroupId"], moved.json()["runnerGroupName"]) == (2, "gpu")
    renamed = await admin.call("PATCH", f"{SCALE_SETS}/{created['id']}", {"name": "renamed"})
    assert (renamed.json()["name"], renamed.json()["runnerGroupName"]) == ("renamed", "gpu")
    assert (await admin.call("GET", SCALE_SETS, runnerGroupId=2, name="renamed")).json()["count"] == 1


async def test_delete_a_scale_set_removes_it_and_its_runners(admin: Admin) -> None:
    created = await admin.create_scale_set("arc-runners")
    await admin.jit_config(created["id"], "runner-a")
    deleted = await admin.call("DELETE", f"{SCALE_SETS}/{created['id']}")
    assert deleted.status_code == 204
    assert (await admin.call("GET", SCALE_SETS, runnerGroupId=1, name="arc-runners")).json()["count"] == 0
    assert (await admin.call("GET", AGENTS, agentName="runner-a")).json()["count"] == 0
    assert (await admin.call("DELETE", f"{SCALE_SETS}/{created['id']}")).status_code == 204


# -- JIT configs and agents ---------------------------------------------------------------------------------


async def test_generate_jit_config_and_find_the_runner(admin: Admin) -> None:
    scale_set = await admin.create_scale_set("arc-runners")
    config = await admin.jit_config(scale_set["id"], "runner-a")
    runner = config["runner"]
    assert (runner["id"], runner["name"], runner["runnerScaleSetId"]) == (1, "runner-a", scale_set["id"])
    assert isinstance(config["encodedJITConfig"], str) and config["encodedJITConfig"]
    second = await admin.jit_config(scale_set["id"], "runner-b")
    assert second["runner"]["id"] == 2
    by_name = await admin.call("GET", AGENTS, agentName="runner-a")
    assert by_name.status_code == 200
    assert by_name.json()["count"] == 1
    assert by_name.json()["value"][0]["runnerScaleSetId"] == scale_set["id"]
    assert (await admin.call("GET", AGENTS, agentName="nobody")).json() == {"count": 0, "value": []}
    by_id = await admin.call("GET", f"{AGENTS}/1")
    assert by_id.status_code == 200 and by_id.json()["name"] == "runner-a"


async def test_a_runner_name_clash_answers_agent_exists(admin: Admin) -> None:
    first = await admin.create_scale_set("first")
    second = await admin.create_scale_set("second")
    await admin.jit_config(first["id"], "runner-a")
    for scale_set_id in (first["id"], second["id"]):
        clash = await admin.call(
            "POST", f"{SCALE_SETS}/{scale_set_id}/generatejitconfig", {"name": "runner-a", "workFolder": ""}
        )
        assert clash.status_code == 409
        assert "AgentExistsException" in type_name(clash)


async def test_remove_runner(admin: Admin) -> None:
    scale_set = await admin.create_scale_set("arc-runners")
    config = await admin.jit_config(scale_set["id"], "runner-a")
    runner_id = config["runner"]["id"]
    assert (await admin.call("DELETE", f"{AGENTS}/{runner_id}")).status_code == 204
    gone = await admin.call("GET", f"{AGENTS}/{runner_id}")
    assert gone.status_code == 404 and "AgentNotFoundException" in type_name(gone)
    assert (await admin.call("DELETE", f"{AGENTS}/{runner_id}")).status_code == 204  # unknown: 204
    assert (await admin.call("DELETE", f"{AGENTS}/0")).status_code == 204
    # the name is free again
    assert (await admin.jit_config(scale_set["id"], "runner-a"))["runner"]["id"] != runner_id


# -- sessions and the message queue ------------------------------------------------------------------------


async def test_create_refresh_and_delete_a_session(admin: Admin) -> None:
    scale_set = await admin.create_scale_set("arc-runners")
    session = await admin.open_session(scale_set["id"], owner="listener-pod")
    body = session.body
    assert set(body) == {
        "sessionId",
        "ownerName",
        "runnerScaleSet",
        "messageQueueUrl",
        "messageQueueAccessToken",
        "statistics",
    }
    assert body["ownerName"] == "listener-pod"
    assert body["runnerScaleSet"]["id"] == scale_set["id"]
    assert body["statistics"]["totalAssignedJobs"] == 0
    assert body["messageQueueUrl"].startswith(admin.base)
    conflict = await admin.call("POST", f"{SCALE_SETS}/{scale_set['id']}/sessions", {"ownerName": "other"})
    assert conflict.status_code == 409
    assert type_name(conflict).startswith(
        "GitHub.Actions.Runtime.WebApi.RunnerScaleSetSessionConflictException"
    )
    old_token = body["messageQueueAccessToken"]
    refreshed = await session.refresh()
    assert refreshed.status_code == 200
    assert refreshed.json()["sessionId"] == body["sessionId"]
    assert refreshed.json()["messageQueueAccessToken"] != old_token
    deleted = await admin.call("DELETE", f"{SCALE_SETS}/{scale_set['id']}/sessions/{session.id}")
    assert deleted.status_code == 204
    assert (await session.get_message()).status_code == 401  # the session's tokens went with it
    again = await admin.open_session(scale_set["id"])
    assert again.id != session.id


async def test_get_message_long_polls_then_answers_202(admin: Admin) -> None:
    scale_set = await admin.create_scale_set("arc-runners")
    session = await admin.open_session(scale_set["id"])
    loop = asyncio.get_running_loop()
    started = loop.time()
    resp = await session.get_message()
    assert resp.status_code == 202
    assert resp.content == b""
    assert loop.time() - started >= LONG_POLL * 0.9


async def test_a_message_arriving_during_the_long_poll_is_answered_at_once(fake: GitHubFake) -> None:
    fake.configure(long_poll_seconds=30)
    async with httpx.AsyncClient(timeout=10) as http:
        admin = await register(http, fake)
        scale_set = await admin.create_scale_set("arc-runners")
        session = await admin.open_session(scale_set["id"])
        poll = asyncio.create_task(session.get_message())
        await eventually(
            lambda: fake.calls[-1].path.endswith("/messages") and fake.calls[-1].status is None,
            what="the poll to be waiting",
        )
        fake.queue_jobs(scale_set["id"])
        resp = await asyncio.wait_for(poll, 5)
    assert resp.status_code == 200
    assert resp.json()["messageType"] == "RunnerScaleSetJobMessages"


async def test_messages_have_increasing_ids_and_are_acked_by_delete(fake: GitHubFake, admin: Admin) -> None:
    scale_set = await admin.create_scale_set("arc-runners")
    session = await admin.open_session(scale_set["id"])
    fake.queue_jobs(scale_set["id"])
    first = (await session.get_message()).json()
    assert first["messageId"] >= 1 and first["statistics"]["totalAvailableJobs"] == 1
    again = (await session.get_message()).json()
    assert again["messageId"] == first["messageId"]  # not deleted: delivered again
    assert (await session.delete_message(first["messageId"])).status_code == 204
    assert (await session.get_message()).status_code == 202
    fake.queue_jobs(scale_set["id"])
    second = (await session.get_message()).json()
    assert second["messageId"] > first["messageId"]
    assert (await session.get_message(last_message_id=second["messageId"])).status_code == 202


async def test_an_expired_message_queue_token_answers_401_until_the_session_is_refreshed(
    fake: GitHubFake, admin: Admin
) -> None:
    scale_set = await admin.create_scale_set("arc-runners")
    session = await admin.open_session(scale_set["id"])
    fake.queue_jobs(scale_set["id"])
    assert fake.expire_message_queue_tokens(scale_set["id"]) == 1
    assert (await session.get_message()).status_code == 401
    assert (await session.delete_message(1)).status_code == 401
    assert (await session.acquire([1])).status_code == 401
    assert (await session.refresh()).status_code == 200
    message = (await session.get_message()).json()
    assert (await session.delete_message(message["messageId"])).status_code == 204


async def test_acquire_jobs_returns_the_still_available_subset(fake: GitHubFake, admin: Admin) -> None:
    scale_set = await admin.create_scale_set("arc-runners")
    session = await admin.open_session(scale_set["id"])
    first, second = (j.runner_request_id for j in fake.queue_jobs(scale_set["id"], 2))
    acquired = await session.acquire([first, 999])
    assert acquired.status_code == 200
    assert acquired.json() == {"count": 1, "value": [first]}
    assert (await session.acquire([first, second])).json() == {"count": 1, "value": [second]}
    assert (await session.acquire([first, second])).json() == {"count": 0, "value": []}
    bad = await session.acquire(["x"])  # type: ignore[list-item]
    assert bad.status_code == 400


async def test_acquire_with_an_admin_token_is_refused(fake: GitHubFake, admin: Admin) -> None:
    scale_set = await admin.create_scale_set("arc-runners")
    await admin.open_session(scale_set["id"])
    (job,) = fake.queue_jobs(scale_set["id"])
    resp = await admin.call("POST", f"{SCALE_SETS}/{scale_set['id']}/acquirejobs", [job.runner_request_id])
    assert resp.status_code == 401


async def test_job_messages_carry_the_spec_fields(fake: GitHubFake, admin: Admin) -> None:
    scale_set = await admin.create_scale_set("arc-runners")
    session = await admin.open_session(scale_set["id"])
    fake.queue_jobs(scale_set["id"])
    _, jobs = await session.next_jobs()
    (available,) = jobs
    assert available["messageType"] == "JobAvailable"
    assert set(available) >= {
        "runnerRequestId",
        "repositoryName",
        "ownerName",
        "jobId",
        "jobWorkflowRef",
        "jobDisplayName",
        "workflowRunId",
        "eventName",
        "requestLabels",
        "queueTime",
        "scaleSetAssignTime",
        "runnerAssignTime",
        "finishTime",
        "acquireJobUrl",
    }
    assert available["ownerName"] == "acme" and available["requestLabels"] == ["arc-runners"]
    assert available["acquireJobUrl"] == f"{admin.base}{SCALE_SETS}/{scale_set['id']}/acquirejobs"
    assert isinstance(available["jobId"], str) and isinstance(available["runnerRequestId"], int)


async def test_unknown_paths_answer_in_the_shape_of_their_api(fake: GitHubFake, admin: Admin) -> None:
    actions = await admin.call("GET", "_apis/runtime/nothing")
    assert actions.status_code == 404 and "typeName" in actions.json()
    github = await admin.http.get(f"{fake.api_url}/nothing")
    assert github.status_code == 404 and github.json()["message"] == "Not Found"
    wrong_method = await admin.call("PUT", f"{SCALE_SETS}/1")
    assert wrong_method.status_code == 405 and "typeName" in wrong_method.json()


async def test_a_bom_prefixed_body_is_read(admin: Admin) -> None:
    resp = await admin.http.post(
        admin.base + SCALE_SETS,
        params={"api-version": "6.0-preview"},
        headers={"Authorization": f"Bearer {admin.token}", "Content-Type": "application/json"},
        content=b"\xef\xbb\xbf" + json.dumps({"name": "bom", "runnerGroupId": 1}).encode(),
    )
    assert resp.status_code == 200 and resp.json()["name"] == "bom"
