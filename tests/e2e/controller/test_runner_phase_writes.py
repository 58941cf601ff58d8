"""An EphemeralRunner's journaled transitions are the phases it writes, end to end.

Inputs: the emulated cluster with the fake GitHub, the real controller on a real journal, a scale set with
one idle runner. The test plays the node going silent: it patches the runner pod's status to phase
``Unknown``, then back to ``Running``. Outputs: the runner mirrors both (``status.phase`` Unknown, then
Running), the journal's transitions say Running → Unknown → Running, and in every runner decision of the
journal the phase its status patch writes is the destination of its last transition (a decision writes a
phase exactly when it journals a transition).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from kubernetes_asyncio import client

from sim.world import World
from tests.e2e.controller import harness
from tests.e2e.controller.harness import Controller
from tests.e2e.controller.revision_steps import ER, TIMEOUT, create_scale_set, running_with_idle_runners
from tests.e2e.controller.runnerjournal import runner_decisions
from tests.helpers import eventually

pytestmark = pytest.mark.both_worlds


@pytest.fixture
async def world(world_kind: str) -> AsyncIterator[World]:
    async with harness.github_world(world_kind) as w:
        yield w


async def runner_phase_becomes(kube: client.ApiClient, name: str, phase: str) -> None:
    async def mirrored() -> bool:
        runner = await harness.get(kube, ER, name)
        return ((runner or {}).get("status") or {}).get("phase") == phase

    await eventually(mirrored, timeout=TIMEOUT, what=f"the runner's phase {phase}")


async def test_a_pod_of_unknown_phase_is_journaled_and_written_as_unknown(
    world: World, kube: client.ApiClient, tmp_path: Path
) -> None:
    controller = Controller(world, tmp_path)
    async with controller:
        await create_scale_set(world, kube, minRunners=1)
        (runner,) = await running_with_idle_runners(world, kube, 1)
        name = runner["metadata"]["name"]
        core = client.CoreV1Api(kube)
        await core.patch_namespaced_pod_status(name, harness.NS, {"status": {"phase": "Unknown"}})
        await runner_phase_becomes(kube, name, "Unknown")
        await core.patch_namespaced_pod_status(name, harness.NS, {"status": {"phase": "Running"}})
        await runner_phase_becomes(kube, name, "Running")

    decided = await runner_decisions(controller.journal)
    story = [(t.from_, t.to) for d in decided if d.record.name == name for t in d.transitions]
    assert story[-2:] == [("Running", "Unknown"), ("Unknown", "Running")], story
    for decision in decided:
        written = decision.written_phase()
        taken = decision.transitions[-1].to if decision.transitions else None
        assert written == taken, (decision.record.seq, decision.record.body.get("note"), written, taken)
