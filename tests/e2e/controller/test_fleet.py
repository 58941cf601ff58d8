"""A small fleet on one controller: 20 scale sets reach Running, each runs one job, and no runner is left.

Inputs: the emulated cluster with the fake GitHub (``harness.github_world``), 20 AutoscalingRunnerSets
with a config Secret each (minRunners 0, the runner template with ``restartPolicy: Never`` as the
upstream chart has it), the controller in-process on a real journal (``harness.Controller``), one job
queued on the fake for each scale set. Asserted: outcomes only (every set Running, every job run by a
runner of its own set, no EphemeralRunner, runner Pod or registered runner left), never how long it
took; ``bench/fleet.py`` measures that, at 10 to 1,000 sets.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from kubernetes_asyncio import client

from controller.executor.contexts import ExecutorSettings
from sim.github.records import JobState
from sim.world import World
from tests.e2e.controller import harness
from tests.helpers import eventually

SETS = 20
TIMEOUT = 120  # a deadline for a busy machine, not a figure


def fleet_scale_set(world: World, i: int) -> dict[str, Any]:
    body = harness.scale_set_body(
        world,
        f"fleet-{i}",
        githubConfigSecret=f"fleet-{i}-github",
        maxRunners=2,
        template={
            "spec": {
                "restartPolicy": "Never",
                "containers": [{"name": "runner", "image": harness.RUNNER_IMAGE}],
            }
        },
    )
    return body


async def test_twenty_scale_sets_each_run_a_job_and_leave_no_runner(tmp_path: Path) -> None:
    async with harness.github_world() as world, client.ApiClient(world.configuration()) as kube:
        controller = harness.Controller(world, tmp_path)
        # As the benchmark runs it: the client limit raised, so a busy machine is all that slows it.
        controller.settings = dataclasses.replace(
            controller.settings, executor=ExecutorSettings(qps=1000, burst=1000)
        )
        await fleet(world, kube, controller)


async def fleet(world: World, kube: client.ApiClient, controller: harness.Controller) -> None:
    async with controller:
        for i in range(SETS):
            await harness.create_secret(kube, name=f"fleet-{i}-github")
            await harness.create(kube, fleet_scale_set(world, i))

        async def all_running() -> bool:
            sets = await harness.items(kube, "AutoscalingRunnerSet")
            return len(sets) == SETS and all((s.get("status") or {}).get("phase") == "Running" for s in sets)

        await eventually(all_running, timeout=TIMEOUT, interval=0.2, what="every scale set Running")
        fake = world.github
        scale_sets = [fake.scale_set(f"fleet-{i}") for i in range(SETS)]
        assert all(s is not None for s in scale_sets)
        jobs = [job for s in scale_sets if s is not None for job in fake.queue_jobs(s.id, 1)]

        def all_run() -> bool:
            return all(fake.state.jobs[j.runner_request_id].state is JobState.COMPLETED for j in jobs)

        await eventually(all_run, timeout=TIMEOUT, interval=0.2, what="every job run")
        done = [fake.state.jobs[j.runner_request_id] for j in jobs]
        assert [j.result for j in done] == ["succeeded"] * SETS
        names = {s.id: s.name for s in scale_sets if s is not None}
        assert all(j.runner_name.startswith(names[j.scale_set_id] + "-") for j in done), done
        assert len({j.runner_name for j in done}) == SETS  # a runner of its own for each job

        async def nothing_left() -> bool:
            runners = await harness.items(kube, "EphemeralRunner")
            pods = (await client.CoreV1Api(kube).list_namespaced_pod(harness.NS)).items
            return not runners and not pods and not fake.state.agents

        await eventually(nothing_left, timeout=TIMEOUT, interval=0.2, what="no runner left")
        assert [await harness.phase(kube, f"fleet-{i}") for i in range(SETS)] == ["Running"] * SETS
