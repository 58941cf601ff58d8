"""The fake GitHub's test hooks at the root of its port (``/_sim/``) and their Python API: the call log
in arrival order, fault injection (429 with Retry-After, 5xx bursts, latency, error bodies), token
expiry, the state dump; that no token reaches a log line; and ``World(github=True)``.

Inputs: a ``GitHubFake`` on loopback, an httpx client, and (last tests) a ``World``. Nothing is mocked.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator

import httpx
import pytest

from sim.github import GitHubFake, GitHubFault, GitHubSettings
from sim.world import World
from tests.e2e.sim.github_flow import PAT, Admin, register, registration_token, runner_registration
from tests.helpers import eventually

SCALE_SETS = "_apis/runtime/runnerscalesets"


@pytest.fixture
async def fake() -> AsyncIterator[GitHubFake]:
    async with GitHubFake(settings=GitHubSettings(long_poll_seconds=0.2), seed=1) as f:
        yield f


@pytest.fixture
async def http() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(timeout=10) as client:
        yield client


async def test_the_call_log_lists_calls_in_arrival_order(fake: GitHubFake, http: httpx.AsyncClient) -> None:
    admin = await register(http, fake)
    await admin.create_scale_set("arc-runners")
    await admin.call("GET", f"{SCALE_SETS}/99")
    await http.get(f"{fake.url}/_sim/state")  # hooks are not logged
    calls = (await http.get(f"{fake.url}/_sim/calls")).json()
    assert calls == [
        {"method": "POST", "path": "/api/v3/orgs/acme/actions/runners/registration-token", "status": 201},
        {"method": "POST", "path": "/api/v3/actions/runner-registration", "status": 201},
        {"method": "POST", "path": "/tenant/1/_apis/runtime/runnerscalesets", "status": 200},
        {"method": "GET", "path": "/tenant/1/_apis/runtime/runnerscalesets/99", "status": 404},
    ]
    assert fake.calls_to("POST", "/runnerscalesets")[0].body["name"] == "arc-runners"
    assert (await http.delete(f"{fake.url}/_sim/calls")).status_code == 200
    assert (await http.get(f"{fake.url}/_sim/calls")).json() == []


async def test_a_long_poll_in_flight_is_logged_without_a_status(
    fake: GitHubFake, http: httpx.AsyncClient
) -> None:
    fake.configure(long_poll_seconds=30)
    admin = await register(http, fake)
    scale_set = await admin.create_scale_set("arc-runners")
    session = await admin.open_session(scale_set["id"])
    poll = asyncio.create_task(session.get_message())
    polled = f"/tenant/1/_apis/runtime/runnerscalesets/{scale_set['id']}/sessions/{session.id}/messages"
    await eventually(lambda: fake.calls[-1].path == polled, what="the poll to be logged")
    assert (await http.get(f"{fake.url}/_sim/calls")).json()[-1] == {
        "method": "GET",
        "path": polled,
        "status": None,
    }
    await admin.call("GET", "_apis/runtime/runnergroups/")  # arrives later, logged after the poll
    fake.queue_jobs(scale_set["id"])
    assert (await asyncio.wait_for(poll, 5)).status_code == 200
    assert [(c.path, c.status) for c in fake.calls[-2:]] == [
        (polled, 200),
        ("/tenant/1/_apis/runtime/runnergroups/", 200),
    ]


async def test_a_429_fault_carries_retry_after(fake: GitHubFake, http: httpx.AsyncClient) -> None:
    admin = await register(http, fake)
    added = await http.post(
        f"{fake.url}/_sim/faults",
        json={"method": "POST", "path": "/runnerscalesets$", "status": 429, "retryAfter": 3},
    )
    assert added.json() == {"faults": 1}
    limited = await admin.call("POST", SCALE_SETS, {"name": "x", "runnerGroupId": 1})
    assert limited.status_code == 429
    assert limited.headers["Retry-After"] == "3"
    assert "typeName" in limited.json()
    assert (await admin.call("POST", SCALE_SETS, {"name": "x", "runnerGroupId": 1})).status_code == 200
    assert [c.status for c in fake.calls_to("POST", "/runnerscalesets")] == [429, 200]


async def test_a_5xx_burst_then_success(fake: GitHubFake, http: httpx.AsyncClient) -> None:
    fake.inject(GitHubFault(path="registration-token", status=503, times=2))
    statuses = []
    for _ in range(3):
        resp = await http.post(
            f"{fake.api_url}/orgs/acme/actions/runners/registration-token",
            headers={"Authorization": f"Bearer {PAT}"},
        )
        statuses.append(resp.status_code)
    assert statuses == [503, 503, 201]
    assert resp.status_code == 201


async def test_skip_latency_and_typed_faults(fake: GitHubFake, http: httpx.AsyncClient) -> None:
    admin = await register(http, fake)
    scale_set = await admin.create_scale_set("arc-runners")
    fake.inject(
        GitHubFault(
            method="POST", path="generatejitconfig", status=409, type_key="AgentExistsException", skip=1
        )
    )
    assert (
        await admin.call("POST", f"{SCALE_SETS}/{scale_set['id']}/generatejitconfig", {"name": "a"})
    ).status_code == 200
    clash = await admin.call("POST", f"{SCALE_SETS}/{scale_set['id']}/generatejitconfig", {"name": "b"})
    assert clash.status_code == 409
    assert "AgentExistsException" in clash.json()["typeName"]
    fake.inject(GitHubFault(path="runnergroups", latency=0.2))
    loop = asyncio.get_running_loop()
    started = loop.time()
    assert (await admin.call("GET", "_apis/runtime/runnergroups/")).status_code == 200
    assert loop.time() - started >= 0.18
    github = fake.inject(GitHubFault(path="^/api/v3/", status=500, times=None))
    failed = await http.post(f"{fake.api_url}/actions/runner-registration")
    assert failed.status_code == 500 and "message" in failed.json() and "typeName" not in failed.json()
    assert github.hits == 1
    listed = (await http.get(f"{fake.url}/_sim/faults")).json()
    assert [f["status"] for f in listed] == [409, 0, 500]
    assert (await http.delete(f"{fake.url}/_sim/faults")).json() == {"faults": 0}
    assert fake.faults == []


async def test_a_held_call_waits_until_its_fault_is_released(
    fake: GitHubFake, http: httpx.AsyncClient
) -> None:
    admin = await register(http, fake)
    held = fake.inject(GitHubFault(method="GET", path="runnergroups", hold=True, skip=1, times=None))
    assert (await admin.call("GET", "_apis/runtime/runnergroups/")).status_code == 200  # skipped
    waiting = asyncio.create_task(admin.call("GET", "_apis/runtime/runnergroups/"))
    await eventually(lambda: held.hits == 1, timeout=10, what="the second call held")
    assert not waiting.done()
    assert fake.calls_to("GET", "runnergroups")[-1].status is None  # in flight
    held.release()
    assert (await waiting).status_code == 200
    assert (await admin.call("GET", "_apis/runtime/runnergroups/")).status_code == 200
    assert held.hits == 1, "a released fault holds nothing more"
    again = fake.inject(GitHubFault(method="GET", path="runnergroups", hold=True))
    waiting = asyncio.create_task(admin.call("GET", "_apis/runtime/runnergroups/"))
    await eventually(lambda: again.hits == 1, timeout=10, what="a call held")
    assert (await http.delete(f"{fake.url}/_sim/faults")).json() == {"faults": 0}
    assert (await waiting).status_code == 200, "clearing the faults releases what they hold"


async def test_a_bad_fault_is_refused(fake: GitHubFake, http: httpx.AsyncClient) -> None:
    resp = await http.post(f"{fake.url}/_sim/faults", json={"verb": "get"})
    assert resp.status_code == 400


async def test_tokens_expire_through_the_hook(fake: GitHubFake, http: httpx.AsyncClient) -> None:
    admin = await register(http, fake)
    scale_set = await admin.create_scale_set("arc-runners")
    session = await admin.open_session(scale_set["id"])
    expire = f"{fake.url}/_sim/expire-tokens"
    assert (
        await http.post(expire, json={"kind": "message-queue", "scaleSetId": scale_set["id"]})
    ).status_code == 200
    assert (await session.get_message()).status_code == 401
    assert (await http.post(expire, json={"kind": "admin"})).status_code == 200
    assert (await admin.call("GET", "_apis/runtime/runnergroups/")).status_code == 401
    assert (await http.post(expire, json={"kind": "everything"})).status_code == 400


async def test_the_state_dump_shows_the_model_without_secrets(
    fake: GitHubFake, http: httpx.AsyncClient
) -> None:
    admin = await register(http, fake)
    scale_set = await admin.create_scale_set("arc-runners")
    session = await admin.open_session(scale_set["id"])
    config = await admin.jit_config(scale_set["id"], "runner-a")
    fake.queue_jobs(scale_set["id"])
    group = await http.post(f"{fake.url}/_sim/runner-groups", json={"scope": "acme", "name": "gpu"})
    assert group.status_code == 201 and group.json()["id"] == 2
    dump = (await http.get(f"{fake.url}/_sim/state")).text
    state = json.loads(dump)
    assert [s["name"] for s in state["scaleSets"]] == ["arc-runners"]
    assert [r["name"] for r in state["runners"]] == ["runner-a"]
    assert [s["sessionId"] for s in state["sessions"]] == [session.id]
    assert [j["state"] for j in state["jobs"]] == ["available"]
    for secret in (admin.token, session.body["messageQueueAccessToken"], config["encodedJITConfig"]):
        assert secret not in dump


async def test_no_token_reaches_a_log_line(
    fake: GitHubFake, http: httpx.AsyncClient, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    reg = (await registration_token(http, fake, "orgs/acme", PAT)).json()["token"]
    connection = (await runner_registration(http, fake, fake.config_url("acme"), reg)).json()
    admin = Admin(http, connection["url"], connection["token"])
    scale_set = await admin.create_scale_set("arc-runners")
    session = await admin.open_session(scale_set["id"])
    config = await admin.jit_config(scale_set["id"], "runner-a")
    fake.queue_jobs(scale_set["id"])
    await session.next_jobs()
    fake.register_runner(config["encodedJITConfig"], "2.330.0")
    fake.inject(GitHubFault(path="runnergroups", status=500))
    await admin.call("GET", "_apis/runtime/runnergroups/")
    await http.get(admin.base + "_apis/runtime/runnergroups/", headers={"Authorization": "Bearer wrong"})
    secrets = [PAT, reg, admin.token, session.body["messageQueueAccessToken"], config["encodedJITConfig"]]
    logged = caplog.text + "".join(json.dumps(c.as_json()) + repr(c.body) for c in fake.calls)
    for secret in secrets:
        assert secret not in logged


async def test_the_world_starts_the_fake_on_its_own_port() -> None:
    async with World(github=True, seed=1) as world:
        assert world.github_url.startswith("http://127.0.0.1:")
        assert world.github_url != world.url
        async with httpx.AsyncClient(timeout=10) as http:
            admin = await register(http, world.github)
            assert admin.base == f"{world.github_url}/tenant/1/"
    async with World(seed=1) as plain:
        with pytest.raises(RuntimeError):
            _ = plain.github


async def test_the_world_takes_a_configured_fake() -> None:
    configured = GitHubFake(settings=GitHubSettings(min_runner_version="2.330.0"))
    async with World(github=configured, seed=1) as world:
        assert world.github is configured
        assert world.github.settings.min_runner_version == "2.330.0"
