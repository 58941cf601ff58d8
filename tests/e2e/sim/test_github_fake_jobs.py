"""The fake's job source end to end: jobs queued through ``POST /_sim/jobs`` (or the Python API) are
offered to the scale set's session as JobAvailable, acquired, assigned to an idle registered runner,
started and completed, with the statistics the listener scales on (§5.3, §6.5); runner registration with
a JIT config and the minimum runner version; a busy runner cannot be removed.

Inputs: a ``GitHubFake`` on loopback (0.2 s long poll, 0.05 s jobs), an httpx client, the registration
flow of ``github_flow``. The simulated runner is played by the test through the fake's Python API.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from sim.github import GitHubFake, GitHubSettings, JobSpec, errors
from tests.e2e.sim.github_flow import Admin, Session, register
from tests.helpers import eventually

AGENTS = "_apis/distributedtask/pools/0/agents"


@pytest.fixture
async def fake() -> AsyncIterator[GitHubFake]:
    settings = GitHubSettings(long_poll_seconds=0.2, job_seconds=0.05, min_runner_version="2.320.0")
    async with GitHubFake(settings=settings, seed=1) as f:
        yield f


@pytest.fixture
async def http() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(timeout=10) as client:
        yield client


@pytest.fixture
async def admin(fake: GitHubFake, http: httpx.AsyncClient) -> Admin:
    return await register(http, fake)


async def scale_set_with_session(admin: Admin) -> tuple[int, Session]:
    scale_set = await admin.create_scale_set("arc-runners")
    return scale_set["id"], await admin.open_session(scale_set["id"])


async def test_jobs_queued_through_the_hook_are_offered_as_job_available(
    fake: GitHubFake, http: httpx.AsyncClient, admin: Admin
) -> None:
    scale_set_id, session = await scale_set_with_session(admin)
    queued = await http.post(f"{fake.url}/_sim/jobs", json={"scaleSetId": scale_set_id, "count": 2})
    assert queued.status_code == 201
    ids = [j["runnerRequestId"] for j in queued.json()["jobs"]]
    message, jobs = await session.next_jobs()
    assert [(j["messageType"], j["runnerRequestId"]) for j in jobs] == [("JobAvailable", i) for i in ids]
    assert message["statistics"]["totalAvailableJobs"] == 2
    listed = (await http.get(f"{fake.url}/_sim/jobs")).json()
    assert [(j["runnerRequestId"], j["state"]) for j in listed] == [(i, "available") for i in ids]


async def test_queueing_for_an_unknown_scale_set_is_a_bad_request(
    fake: GitHubFake, http: httpx.AsyncClient
) -> None:
    resp = await http.post(f"{fake.url}/_sim/jobs", json={"scaleSetId": 42, "count": 1})
    assert resp.status_code == 400


async def test_jobs_queued_before_the_session_are_offered_when_it_opens(
    fake: GitHubFake, admin: Admin
) -> None:
    scale_set = await admin.create_scale_set("arc-runners")
    fake.queue_jobs(scale_set["id"], spec=JobSpec(repository="app", display_name="test"))
    session = await admin.open_session(scale_set["id"])
    assert session.body["statistics"]["totalAvailableJobs"] == 1
    _, jobs = await session.next_jobs()
    assert [(j["messageType"], j["repositoryName"], j["jobDisplayName"]) for j in jobs] == [
        ("JobAvailable", "app", "test")
    ]
    assert jobs[0]["jobWorkflowRef"] == "acme/app/.github/workflows/ci.yaml@refs/heads/main"


async def test_a_job_runs_on_an_idle_runner_from_acquire_to_completion(
    fake: GitHubFake, admin: Admin
) -> None:
    scale_set_id, session = await scale_set_with_session(admin)
    (job,) = fake.queue_jobs(scale_set_id)
    _, jobs = await session.next_jobs()
    assert [j["messageType"] for j in jobs] == ["JobAvailable"]
    assert (await session.acquire([job.runner_request_id])).json()["value"] == [job.runner_request_id]

    message, jobs = await session.next_jobs()
    assert [j["messageType"] for j in jobs] == ["JobAssigned"]
    assert message["statistics"]["totalAssignedJobs"] == 1

    config = await admin.jit_config(scale_set_id, "arc-runners-abc12")
    registration = fake.register_runner(config["encodedJITConfig"], "2.330.0")
    assert registration.accepted
    assert (registration.runner_id, registration.name) == (config["runner"]["id"], "arc-runners-abc12")
    online = (await admin.call("GET", f"{AGENTS}/{registration.runner_id}")).json()
    assert (online["status"], online["busy"]) == ("online", False)

    started = await fake.next_job_for(registration.runner_id, timeout=5)
    assert started is not None and started.runner_request_id == job.runner_request_id
    message, jobs = await session.next_jobs()
    assert [(j["messageType"], j["runnerId"], j["runnerName"]) for j in jobs] == [
        ("JobStarted", registration.runner_id, "arc-runners-abc12")
    ]
    assert message["statistics"]["totalRunningJobs"] == 1
    assert message["statistics"]["totalBusyRunners"] == 1

    busy = await admin.call("DELETE", f"{AGENTS}/{registration.runner_id}")
    assert busy.status_code in (400, 409)
    assert "JobStillRunningException" in busy.json()["typeName"]

    assert fake.complete_job(job.runner_request_id) is not None
    message, jobs = await session.next_jobs()
    assert [(j["messageType"], j["result"], j["runnerName"]) for j in jobs] == [
        ("JobCompleted", "succeeded", "arc-runners-abc12")
    ]
    assert message["statistics"]["totalAssignedJobs"] == 0
    assert message["statistics"]["totalRegisteredRunners"] == 0  # ephemeral: gone after its job
    assert (await admin.call("DELETE", f"{AGENTS}/{registration.runner_id}")).status_code == 204


async def test_run_job_runs_for_job_seconds_and_completes(fake: GitHubFake, admin: Admin) -> None:
    scale_set_id, session = await scale_set_with_session(admin)
    (job,) = fake.queue_jobs(scale_set_id)
    await session.next_jobs()
    await session.acquire([job.runner_request_id])
    config = await admin.jit_config(scale_set_id, "runner-a")
    registration = fake.register_runner(config["encodedJITConfig"], "2.320.0")
    finished = await asyncio.wait_for(fake.run_job(registration.runner_id), 5)
    assert finished is not None and (finished.state, finished.result) == ("completed", "succeeded")
    assert finished.finish_time is not None and finished.runner_assign_time is not None
    assert finished.finish_time - finished.runner_assign_time >= fake.settings.job_seconds * 0.9
    kinds: list[str] = []
    while "JobCompleted" not in kinds:
        _, jobs = await session.next_jobs()
        kinds += [j["messageType"] for j in jobs]
    assert kinds == ["JobAssigned", "JobStarted", "JobCompleted"]


async def test_a_runner_waiting_for_a_job_gets_the_one_acquired_later(fake: GitHubFake, admin: Admin) -> None:
    scale_set_id, session = await scale_set_with_session(admin)
    config = await admin.jit_config(scale_set_id, "runner-a")
    registration = fake.register_runner(config["encodedJITConfig"], "2.330.0")
    waiting = asyncio.create_task(fake.next_job_for(registration.runner_id, timeout=5))
    (job,) = fake.queue_jobs(scale_set_id)
    assert not waiting.done()  # available is not enough: the listener must acquire it
    await session.acquire([job.runner_request_id])
    taken = await asyncio.wait_for(waiting, 5)
    assert taken is not None and taken.runner_request_id == job.runner_request_id


async def test_removing_an_idle_runner_ends_its_wait(fake: GitHubFake, admin: Admin) -> None:
    scale_set_id, _ = await scale_set_with_session(admin)
    config = await admin.jit_config(scale_set_id, "runner-a")
    registration = fake.register_runner(config["encodedJITConfig"], "2.330.0")
    waiting = asyncio.create_task(fake.next_job_for(registration.runner_id))
    assert (await admin.call("DELETE", f"{AGENTS}/{registration.runner_id}")).status_code == 204
    assert await asyncio.wait_for(waiting, 5) is None


async def test_a_stopped_runner_fails_its_job(fake: GitHubFake, admin: Admin) -> None:
    scale_set_id, session = await scale_set_with_session(admin)
    (job,) = fake.queue_jobs(scale_set_id)
    await session.acquire([job.runner_request_id])
    config = await admin.jit_config(scale_set_id, "runner-a")
    registration = fake.register_runner(config["encodedJITConfig"], "2.330.0")
    stopping = asyncio.Event()
    running = asyncio.create_task(fake.run_job(registration.runner_id, seconds=30, stopping=stopping))
    await eventually(
        lambda: fake.state.jobs[job.runner_request_id].state == "running", what="the job to start"
    )
    stopping.set()
    failed = await asyncio.wait_for(running, 5)
    assert failed is not None and failed.result == "failed"


async def test_an_old_runner_version_is_refused(fake: GitHubFake, admin: Admin) -> None:
    scale_set_id, _ = await scale_set_with_session(admin)
    config = await admin.jit_config(scale_set_id, "runner-old")
    registration = fake.register_runner(config["encodedJITConfig"], "2.319.9")
    assert not registration.accepted
    agent = (await admin.call("GET", f"{AGENTS}/{registration.runner_id}")).json()
    assert (agent["status"], agent["version"]) == ("offline", "2.319.9")
    assert await fake.next_job_for(registration.runner_id, timeout=1) is None
    fake.configure(min_runner_version="2.300.0")
    assert fake.register_runner(config["encodedJITConfig"], "2.319.9").accepted


async def test_a_removed_or_forged_registration_cannot_connect(fake: GitHubFake, admin: Admin) -> None:
    scale_set_id, _ = await scale_set_with_session(admin)
    config = await admin.jit_config(scale_set_id, "runner-a")
    await admin.call("DELETE", f"{AGENTS}/{config['runner']['id']}")
    with pytest.raises(errors.ServiceError) as raised:
        fake.register_runner(config["encodedJITConfig"], "2.330.0")
    assert raised.value.type_key == "AgentNotFoundException"
    with pytest.raises(ValueError):
        fake.register_runner("garbage", "2.330.0")


async def test_runner_and_completion_hooks(fake: GitHubFake, http: httpx.AsyncClient, admin: Admin) -> None:
    scale_set_id, session = await scale_set_with_session(admin)
    (job,) = fake.queue_jobs(scale_set_id)
    await session.acquire([job.runner_request_id])
    config = await admin.jit_config(scale_set_id, "runner-a")
    registered = await http.post(
        f"{fake.url}/_sim/runners",
        json={"encodedJITConfig": config["encodedJITConfig"], "version": "2.330.0"},
    )
    assert registered.status_code == 201
    assert registered.json() == {
        "runnerId": config["runner"]["id"],
        "name": "runner-a",
        "scaleSetId": scale_set_id,
        "version": "2.330.0",
        "accepted": True,
    }
    assert await fake.next_job_for(config["runner"]["id"], timeout=5) is not None
    done = await http.post(
        f"{fake.url}/_sim/jobs/{job.runner_request_id}/complete", json={"result": "failed"}
    )
    assert done.status_code == 200 and done.json()["result"] == "failed"
    again = await http.post(f"{fake.url}/_sim/jobs/{job.runner_request_id}/complete")
    assert again.status_code == 400


async def test_the_jobs_hook_filters_by_state_and_shows_when_each_step_happened(
    fake: GitHubFake, http: httpx.AsyncClient, admin: Admin
) -> None:
    scale_set_id, session = await scale_set_with_session(admin)
    first, second = fake.queue_jobs(scale_set_id, 2)
    await session.acquire([first.runner_request_id])
    config = await admin.jit_config(scale_set_id, "runner-a")
    registration = fake.register_runner(config["encodedJITConfig"], "2.330.0")
    assert await fake.next_job_for(registration.runner_id, timeout=5) is not None

    async def listed(query: str = "") -> dict[int, dict[str, Any]]:
        resp = await http.get(f"{fake.url}/_sim/jobs{query}")
        assert resp.status_code == 200, resp.text
        return {j["runnerRequestId"]: j for j in resp.json()}

    running = (await listed("?state=running"))[first.runner_request_id]
    assert list(await listed("?state=running")) == [first.runner_request_id]
    assert list(await listed("?state=available&state=completed")) == [second.runner_request_id]
    both = {first.runner_request_id, second.runner_request_id}
    assert set(await listed("?state=running,available")) == both
    assert (await http.get(f"{fake.url}/_sim/jobs?state=lost")).status_code == 400
    assert running["queueTime"] <= running["scaleSetAssignTime"] <= running["runnerAssignTime"]
    assert running["finishTime"] is None

    fake.complete_job(first.runner_request_id)
    done, waiting = (await listed()).values()
    assert done["state"] == "completed" and done["finishTime"] >= done["runnerAssignTime"]
    assert waiting["queueTime"] is not None
    assert (waiting["scaleSetAssignTime"], waiting["runnerAssignTime"], waiting["finishTime"]) == (None,) * 3


async def test_capacity_caps_acquisition(fake: GitHubFake, admin: Admin) -> None:
    scale_set_id, session = await scale_set_with_session(admin)
    ids = [j.runner_request_id for j in fake.queue_jobs(scale_set_id, 3)]
    await session.next_jobs(capacity=2)
    assert (await session.acquire(ids)).json()["value"] == ids[:2]
    assert fake.statistics(scale_set_id).available == 1


async def test_deleting_the_scale_set_cancels_its_jobs(fake: GitHubFake, admin: Admin) -> None:
    scale_set_id, session = await scale_set_with_session(admin)
    (job,) = fake.queue_jobs(scale_set_id)
    await session.acquire([job.runner_request_id])
    assert (await admin.call("DELETE", f"_apis/runtime/runnerscalesets/{scale_set_id}")).status_code == 204
    assert fake.state.jobs[job.runner_request_id].state == "canceled"
    assert (await session.get_message()).status_code == 401


async def test_a_job_answers_the_long_poll_of_its_own_scale_set_among_many(http: httpx.AsyncClient) -> None:
    # Long polls far longer than the test: an answer can only come from a job, never from the timeout.
    settings = GitHubSettings(long_poll_seconds=300, job_seconds=0.05)
    async with GitHubFake(settings=settings, seed=1) as fake:
        admin = await register(http, fake)
        sessions = [
            await admin.open_session((await admin.create_scale_set(f"set-{i}"))["id"]) for i in range(25)
        ]
        polls = {s.scale_set_id: asyncio.create_task(s.get_message()) for s in sessions}
        try:
            await eventually(
                lambda: all(fake.state.sessions[s.id].polling == 1 for s in sessions), what="every poll"
            )
            for session in sessions[::2]:
                others = {s.scale_set_id: fake.changes.current(s.scale_set_id) for s in sessions}
                del others[session.scale_set_id]
                [job] = fake.queue_jobs(session.scale_set_id)
                resp = await asyncio.wait_for(polls.pop(session.scale_set_id), 30)
                assert resp.status_code == 200
                body = json.loads(resp.json()["body"])
                assert [(j["messageType"], j["runnerRequestId"]) for j in body] == [
                    ("JobAvailable", job.runner_request_id)
                ]
                # No other set's long poll or runner was woken to look again.
                assert not any(event.is_set() for event in others.values())
            assert not any(p.done() for p in polls.values())
            assert all(fake.state.sessions[s.id].polling == 1 for s in sessions[1::2])
        finally:
            for poll in polls.values():
                poll.cancel()
            await asyncio.gather(*polls.values(), return_exceptions=True)
