"""The controller end to end: a scale set created, run, deleted and cleaned up, journaled as it goes.

Real composition root (``controller.loop.running.run``), real journal on disk, emulated cluster with the fake
GitHub; the listener pod runs arcsm's listener in the simulated kubelet.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from kubernetes_asyncio import client

from sim.world import World
from statemachines.phaseevents import camel_case
from store.records import RecordType
from tests.e2e.controller import harness
from tests.e2e.controller.harness import CONTROLLER_NS, Controller
from tests.helpers import eventually

pytestmark = pytest.mark.both_worlds

TIMEOUT = 60.0


@pytest.fixture
async def world(world_kind: str) -> AsyncIterator[World]:
    async with harness.github_world(world_kind) as w:
        yield w


async def running_scale_set(world: World, kube: client.ApiClient) -> None:
    """Wait for the scale set to be Running with its runner set, listener and Actions scale set."""

    async def running() -> bool:
        return await harness.phase(kube) == "Running"

    await eventually(running, timeout=TIMEOUT, what="the scale set Running")
    assert await harness.get(kube, "EphemeralRunnerSet", "arc") is not None
    listeners = await harness.items(kube, "AutoscalingListener", CONTROLLER_NS)
    assert [al["spec"]["autoscalingRunnerSetName"] for al in listeners] == ["arc"]
    assert world.github.scale_set("arc") is not None


async def test_a_scale_set_goes_pending_then_running_and_the_phases_are_journaled(
    world: World, kube: client.ApiClient, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="arcsm.controller")
    async with Controller(world, tmp_path) as controller:
        await harness.create(kube, harness.scale_set_body(world))
        await running_scale_set(world, kube)

        ars = await harness.get(kube, "AutoscalingRunnerSet", "arc")
        assert ars is not None
        scale_set = world.github.scale_set("arc")
        assert scale_set is not None
        assert ars["metadata"]["annotations"]["runner-scale-set-id"] == str(scale_set.id)
        assert ars["status"]["observedGeneration"] == ars["metadata"]["generation"]

        phases = await harness.phases_journaled(controller.journal)
        assert [to for _, to, _ in phases][:2] == ["Pending", "Running"], phases
        assert phases[-1][1] == "Running"

        # Each phase change is a core Event on the scale set, its reason the trigger in CamelCase.
        wanted = {camel_case(trigger) for from_, to, trigger in phases if from_ != to}
        assert {"Pending", "Running"} <= {to for from_, to, _ in phases if from_ != to}

        async def phase_events() -> bool:
            events = await client.CoreV1Api(kube).list_namespaced_event(
                harness.NS, field_selector="involvedObject.name=arc,involvedObject.kind=AutoscalingRunnerSet"
            )
            reasons = {
                event.reason for event in events.items if event.involved_object.uid == ars["metadata"]["uid"]
            }
            return wanted <= reasons

        await eventually(
            phase_events, timeout=TIMEOUT, what="an Event for each phase change of the scale set"
        )

        async def listener_pod_runs() -> bool:
            pods = await client.CoreV1Api(kube).list_namespaced_pod(CONTROLLER_NS)
            return any((pod.status.phase or "") == "Running" for pod in pods.items)

        await eventually(listener_pod_runs, timeout=TIMEOUT, what="the listener pod running")
    assert controller.task is not None and controller.task.result() == 0
    logged = [
        (r.kind, r.object_name, r.from_phase, r.to_phase, r.trigger)  # type: ignore[attr-defined]
        for r in caplog.records
        if hasattr(r, "to_phase") and hasattr(r, "seq")
    ]
    assert ("AutoscalingRunnerSet", "arc", "Pending", "Running", "settled") in logged


async def test_deleting_the_scale_set_cleans_up_everything(
    world: World, kube: client.ApiClient, tmp_path: Path
) -> None:
    async with Controller(world, tmp_path) as controller:
        await harness.create(kube, harness.scale_set_body(world))
        await running_scale_set(world, kube)

        await harness.delete(kube, "AutoscalingRunnerSet", "arc")

        async def gone() -> bool:
            return (
                await harness.get(kube, "AutoscalingRunnerSet", "arc") is None
                and await harness.get(kube, "EphemeralRunnerSet", "arc") is None
                and not await harness.items(kube, "AutoscalingListener", CONTROLLER_NS)
            )

        await eventually(gone, timeout=TIMEOUT, what="the scale set, runner set and listener gone")
        assert world.github.scale_set("arc") is None

        deletes = [
            r
            for r in await harness.journaled(controller.journal, {RecordType.DECISION})
            if r.kind == "AutoscalingRunnerSet"
            and any(t["trigger"] == "deleted" for t in r.body["transitions"])
        ]
        assert len(deletes) == 1


async def test_a_restart_on_the_same_journal_converges(
    world: World, kube: client.ApiClient, tmp_path: Path
) -> None:
    controller = Controller(world, tmp_path)
    controller.start()
    await harness.create(kube, harness.scale_set_body(world))

    async def pending() -> bool:
        return await harness.phase(kube) is not None

    await eventually(pending, timeout=TIMEOUT, what="a first phase written")
    assert await controller.stop() == 0

    controller.start()
    try:
        await running_scale_set(world, kube)
        assert world.github.scale_set("arc") is not None
        # One scale set, however many times the controller started.
        assert [s.name for s in world.github.state.scale_sets.values()] == ["arc"]
        assert len(await harness.items(kube, "EphemeralRunnerSet")) == 1
    finally:
        assert await controller.stop() == 0


async def test_runners_come_up_at_min_runners_and_idle_ones_are_released_on_scale_down(
    world: World, kube: client.ApiClient, tmp_path: Path
) -> None:
    async with Controller(world, tmp_path) as controller:
        await harness.create(kube, harness.scale_set_body(world, minRunners=1))
        await running_scale_set(world, kube)

        async def one_runner_running() -> bool:
            runners = await harness.items(kube, "EphemeralRunner")
            phases = [(r.get("status") or {}).get("phase") for r in runners]
            return phases == ["Running"] and len(world.github.state.agents) == 1

        await eventually(one_runner_running, timeout=TIMEOUT, what="one runner registered and running")

        await harness.merge_patch(kube, "AutoscalingRunnerSet", "arc", {"spec": {"minRunners": 0}})

        async def released() -> bool:
            return not await harness.items(kube, "EphemeralRunner") and not world.github.state.agents

        await eventually(released, timeout=TIMEOUT, what="the idle runner released")
        await running_scale_set(world, kube)
        results = await harness.journaled(controller.journal, {RecordType.EFFECT_RESULT})
        releases = [r.body for r in results if str(r.body.get("key", "")).startswith("release:")]
        assert releases and all(body["ok"] for body in releases), releases
