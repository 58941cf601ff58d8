"""A simulated runner's long job ends when the job is finished through the fake's hooks.

``run_job`` runs a job for ``seconds``; a test that gives a runner a long job and then lets it end
(``complete_job``, or ``POST /_sim/jobs/{id}/complete``) gets the runner back at once: the job finished,
the ephemeral agent removed, ``run_job`` returning the completed job.

Inputs: a ``GitHubFake`` on loopback, the registration flow of ``github_flow``; the runner is played
through the fake's Python API.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import httpx
import pytest

from sim.github import GitHubFake, GitHubSettings
from tests.e2e.sim.github_flow import Admin, register
from tests.helpers import eventually

LONG_JOB = 600.0


@pytest.fixture
async def fake() -> AsyncIterator[GitHubFake]:
    settings = GitHubSettings(long_poll_seconds=0.2, job_seconds=LONG_JOB, min_runner_version="2.320.0")
    async with GitHubFake(settings=settings, seed=1) as f:
        yield f


@pytest.fixture
async def admin(fake: GitHubFake) -> AsyncIterator[Admin]:
    async with httpx.AsyncClient(timeout=10) as http:
        yield await register(http, fake)


@pytest.mark.parametrize("stopping", [None, asyncio.Event], ids=["unstoppable", "stoppable"])
async def test_a_long_job_completed_by_the_test_ends_the_runs_wait(
    fake: GitHubFake, admin: Admin, stopping: type[asyncio.Event] | None
) -> None:
    scale_set = await admin.create_scale_set("arc-runners")
    session = await admin.open_session(scale_set["id"])
    (job,) = fake.queue_jobs(scale_set["id"])
    await session.acquire([job.runner_request_id])
    config = await admin.jit_config(scale_set["id"], "runner-a")
    registration = fake.register_runner(config["encodedJITConfig"], "2.330.0")
    running = asyncio.create_task(
        fake.run_job(registration.runner_id, stopping=stopping() if stopping is not None else None)
    )
    await eventually(
        lambda: fake.state.jobs[job.runner_request_id].state == "running", what="the job to start"
    )
    assert not running.done()

    assert fake.complete_job(job.runner_request_id, "succeeded") is not None
    finished = await asyncio.wait_for(running, 5)
    assert finished is not None and (finished.state, finished.result) == ("completed", "succeeded")
    assert registration.runner_id not in fake.state.agents, "the ephemeral agent outlived its job"
