"""A job reaches only the runner whose runner id it names, whatever the name of the EphemeralRunner.

Inputs: the emulated cluster with the fake GitHub, the real controller on a real journal, the scale set's
own listener (arcsm's, in its pod), and a standalone EphemeralRunner (no owner, so no runner set counts
it) built from the scale set's runner spec. The fake holds every acknowledgement of a message after the
first (``GitHubFault(hold=True)``): the listener takes the job, then stays behind, as one does after
Actions faults.

The story: runner ``arc-named`` (runner id A) takes the job, runs it and exits 0, so the controller deletes
it; a new runner of the same name (runner id B) registers and idles. Only then does the listener catch up
and read that the job started on ``arc-named``.

Outputs: the new runner carries no job (the listener's write is refused by its ``test`` on
``status.runnerId``), so it stays idle and releasable; it is the same object, Running, with runner id B.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from kubernetes_asyncio import client

from sim.github import GitHubFault
from sim.github.records import JobState
from sim.world import World
from tests.e2e.controller import harness
from tests.e2e.controller.harness import Controller, required
from tests.e2e.controller.revision_steps import (
    ER,
    ERS,
    TIMEOUT,
    create_scale_set,
    queue_job,
    running_with_idle_runners,
    status_of,
)
from tests.helpers import eventually

pytestmark = pytest.mark.both_worlds

NAME = "arc-named"
JOB_FIELDS = (
    "jobRequestId",
    "jobId",
    "jobRepositoryName",
    "jobWorkflowRef",
    "workflowRunId",
    "jobDisplayName",
)


@pytest.fixture
async def world(world_kind: str) -> AsyncIterator[World]:
    async with harness.github_world(world_kind) as w:
        yield w


async def idle(world: World, kube: client.ApiClient, uid: str) -> dict[str, Any]:
    """The runner ``NAME`` of ``uid`` Running, registered, and online and idle at the service."""

    async def ready() -> dict[str, Any] | None:
        runner = await harness.get(kube, ER, NAME)
        if runner is None or runner["metadata"]["uid"] != uid:
            return None
        agent = world.github.state.agents.get(status_of(runner).get("runnerId") or 0)
        phase = status_of(runner).get("phase")
        return runner if phase == "Running" and agent and agent.online and agent.job is None else None

    found: dict[str, Any] = await eventually(ready, timeout=TIMEOUT, what=f"runner {NAME} registered, idle")
    return found


async def test_a_job_reaches_only_the_runner_whose_runner_id_it_names(
    world: World, kube: client.ApiClient, tmp_path: Path
) -> None:
    async with Controller(world, tmp_path):
        await create_scale_set(world, kube)
        await running_with_idle_runners(world, kube, 0)
        body = harness.standalone_runner(await required(kube, ERS), NAME)
        old = await idle(world, kube, (await harness.create(kube, body))["metadata"]["uid"])
        old_id = status_of(old)["runnerId"]
        scale_set = world.github.scale_set("arc")
        assert scale_set is not None
        # The first message (the job available) is acknowledged; the next ones wait.
        behind = world.github.inject(
            GitHubFault(method="DELETE", path="/messages/", hold=True, skip=1, times=None)
        )
        try:
            job = queue_job(world)

            def finished_on_the_old_runner() -> bool:
                now = world.github.state.jobs[job.runner_request_id]
                return now.state is JobState.COMPLETED and now.runner_id == old_id

            await eventually(
                finished_on_the_old_runner, timeout=TIMEOUT, what="the job run by the old runner"
            )
            await eventually(lambda: behind.hits > 0, timeout=TIMEOUT, what="the listener held behind")

            async def gone() -> bool:
                return await harness.get(kube, ER, NAME) is None

            await eventually(gone, timeout=TIMEOUT, what="the old runner deleted after its job")
            new = await idle(world, kube, (await harness.create(kube, body))["metadata"]["uid"])
            new_id = status_of(new)["runnerId"]
            assert new_id != old_id
        finally:
            behind.release()

        def caught_up() -> bool:
            """Every job message acknowledged and the listener polling again: it has written what it read
            (the listener handles a message whole before it polls for the next)."""
            session = world.github.state.session_of(scale_set.id)
            return session is not None and not session.pending and not session.queue and session.polling > 0

        await eventually(caught_up, timeout=TIMEOUT, what="the listener caught up with the job's messages")
        runner = await required(kube, ER, NAME)
        assert runner["metadata"]["uid"] == new["metadata"]["uid"]
        status = status_of(runner)
        assert status.get("runnerId") == new_id
        recorded = {key: status[key] for key in JOB_FIELDS if key in status}
        assert not recorded, f"runner {new_id} took the job of runner {old_id}: {recorded}"
        assert status.get("phase") == "Running"
