"""Restarts on the same journal: the controller converges, performs the effects an earlier run recorded
without a result (the outbox), and arms the timers that had not fired."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from kubernetes_asyncio import client

from controller.loop import reconciling
from sim.world import World
from statemachines import effects
from statemachines.decisions import Decision
from statemachines.effects import ObjectRef
from statemachines.snapshots import Snapshot
from store.journal import Journal
from store.records import RecordType
from tests.e2e.controller import harness
from tests.e2e.controller.harness import NS, Controller
from tests.helpers import eventually

pytestmark = pytest.mark.both_worlds

TIMEOUT = 60.0
ARS = ObjectRef("AutoscalingRunnerSet", NS, "arc")


@pytest.fixture
async def world(world_kind: str) -> AsyncIterator[World]:
    async with harness.github_world(world_kind) as w:
        yield w


async def wait_running(kube: client.ApiClient) -> None:
    async def running() -> bool:
        return await harness.phase(kube) == "Running"

    await eventually(running, timeout=TIMEOUT, what="the scale set Running")


async def test_a_controller_cancelled_mid_way_converges_when_started_again(
    world: World, kube: client.ApiClient, tmp_path: Path
) -> None:
    controller = Controller(world, tmp_path)
    controller.start()
    await harness.create(kube, harness.scale_set_body(world))

    async def runner_set_created() -> bool:
        return await harness.get(kube, "EphemeralRunnerSet", "arc") is not None

    await eventually(runner_set_created, timeout=TIMEOUT, what="the runner set")
    assert controller.task is not None
    controller.task.cancel()  # no graceful stop: whatever was in flight stays in the outbox
    await asyncio.gather(controller.task, return_exceptions=True)

    controller.start()
    try:
        await wait_running(kube)
        assert [s.name for s in world.github.state.scale_sets.values()] == ["arc"]
        assert len(await harness.items(kube, "EphemeralRunnerSet")) == 1
        assert len(await harness.items(kube, "AutoscalingListener", harness.CONTROLLER_NS)) == 1
    finally:
        assert await controller.stop() == 0
    phases = await harness.phases_journaled(controller.journal)
    assert phases[-1][1] == "Running"


async def test_effects_recorded_without_a_result_are_performed_on_start(
    world: World, kube: client.ApiClient, tmp_path: Path
) -> None:
    controller = Controller(world, tmp_path)
    async with controller:
        await harness.create(kube, harness.scale_set_body(world))
        await wait_running(kube)
    ars = await harness.get(kube, "AutoscalingRunnerSet", "arc")
    assert ars is not None

    # A decision as a run that died right after recording it would leave it: effects, no results.
    label = effects.MergePatch(ARS, {"metadata": {"labels": {"outbox": "performed"}}})
    timer = effects.RequeueAfter(ARS, 0.0)
    snapshot = Snapshot(subject=ARS, obj=ars, now=datetime.now(UTC))
    decision = Decision(ARS, effects=(label, timer), note="left in the outbox")
    async with await Journal.open(controller.journal) as journal:
        recorded = await journal.append(
            [
                reconciling.decision_record(decision, snapshot, seq=journal.last_seq),
                reconciling.effect_record(label, snapshot),
                reconciling.effect_record(timer, snapshot),
            ]
        )
    label_seq, timer_seq = recorded[1].seq, recorded[2].seq

    async with controller:

        async def labelled() -> bool:
            found = await harness.get(kube, "AutoscalingRunnerSet", "arc")
            return bool(found and found["metadata"].get("labels", {}).get("outbox") == "performed")

        await eventually(labelled, timeout=TIMEOUT, what="the outbox patch performed")

        async def answered() -> bool:
            results = await harness.journaled(controller.journal, {RecordType.EFFECT_RESULT})
            return {label_seq, timer_seq} <= {r.body["effectSeq"] for r in results}

        await eventually(answered, timeout=TIMEOUT, what="both effects answered")
        timers = await harness.journaled(controller.journal, {RecordType.TIMER})
        assert any(timer_seq in t.body["effects"] for t in timers)
        await wait_running(kube)
