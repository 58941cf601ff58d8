"""Spec §4.1 (C1, observedGeneration) and §4.2 (C2, Pending while the listener is rebuilt) end to end.

Real controller, real journal, emulated cluster with the fake GitHub. Each test starts from a scale set
Running at its generation (minRunners 0, so no runner comes up), makes one edit and follows the phase,
the generations and the listener through the journal until the end state of the scenario.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from kubernetes_asyncio import client

from sim.faults import Fault
from sim.world import World
from tests.e2e.controller import harness
from tests.e2e.controller import scenario_steps as steps
from tests.e2e.controller.harness import Controller
from tests.e2e.controller.scenario_steps import AL, ARS, ERS
from tests.helpers import eventually

LISTENER_DELETE = f"delete:{AL}/"
LISTENER_CREATE = f"create:{AL}/"
FAILED_PASSES = 3  # how many failed passes show the phase holds while a write keeps failing


@pytest.fixture
async def world(world_kind: str) -> AsyncIterator[World]:
    async with harness.github_world(world_kind) as w:
        yield w


async def assert_generation_story(journal: Path, *, after: int, old: int, new: int) -> None:
    """After ``after``: the ARS went Running → Pending → Running, every Pending write kept observedGeneration
    at ``old`` (I1.3), and observedGeneration went from ``old`` straight to ``new`` (I1.1, I1.2)."""

    async def journaled() -> list[dict[str, Any]]:  # the Running write's watch event comes after the API's
        versions = [r.body["object"] for r in await steps.observed(journal, ARS, after)]
        return versions if versions and steps.generations(versions[-1]) == (new, new) else []

    versions = await eventually(journaled, timeout=steps.TIMEOUT, what="the ARS at Running journaled")
    transitions = await steps.ars_transitions(journal, after)
    assert steps.phase_path(transitions) == ["Running", "Pending", "Running"], transitions
    for t in transitions:
        expected = new if t.to == "Running" else old
        assert steps.read_generations(t) == (new, expected), t
    seen = [int((obj.get("status") or {}).get("observedGeneration") or 0) for obj in versions]
    assert [g for i, g in enumerate(seen) if i == 0 or g != seen[i - 1]] == [old, new], seen
    phases = [(obj.get("status") or {}).get("phase") for obj in versions]
    for i, obj in enumerate(versions):
        gen, obs = steps.generations(obj)
        assert obs <= gen, obj["metadata"]
        if i and phases[i] == "Running" != phases[i - 1]:  # the write that set Running set obs (I1.2)
            assert obs == gen, obj["status"]


async def running_decided(journal: Path, after: int) -> list[int]:
    """The seqs of the ARS decisions after ``after`` that wrote Running."""
    decided = [
        r.seq or 0
        for r in await steps.ars_decisions(journal, after)
        if any(t.to == "Running" for t in harness.transitions_of(r))
    ]
    assert decided, "no pass wrote Running"
    return decided


async def assert_status_then_delete(journal: Path, *, after: int, trigger: str) -> None:
    """The pass that took ``trigger`` to Pending also deleted the listener, after its status write (§4.2 [R];
    no early return after the Pending write, §4.1)."""
    decisions = [
        r
        for r in await steps.ars_decisions(journal, after)
        if any(t.trigger == trigger and t.to == "Pending" for t in harness.transitions_of(r))
    ]
    assert decisions, f"no pass took {trigger}"
    listed = steps.decided_effects(decisions[0])
    status = [
        i for i, e in enumerate(listed) if e.startswith(f"MergePatch:patch:{ARS}/") and e.endswith("/status")
    ]
    deletes = [i for i, e in enumerate(listed) if e.startswith(f"DeleteObject:{LISTENER_DELETE}")]
    assert status and deletes and status[0] < deletes[0], listed


async def test_4_1_b_spec_edit_while_running_goes_pending_then_running_at_the_new_generation(
    world: World, kube: client.ApiClient, tmp_path: Path
) -> None:
    async with Controller(world, tmp_path) as controller:
        ars = await steps.start_running(world, kube)
        old, _ = steps.generations(ars)
        (listener,) = await steps.listeners(kube)
        mark = await steps.last_seq(controller.journal)

        await harness.merge_patch(kube, ARS, "arc", {"spec": {"minRunners": 1}})

        ars = await steps.running_at_generation(kube, "Running at the edited generation")
        assert steps.generations(ars) == (old + 1, old + 1)
        (rebuilt,) = await steps.listeners(kube)
        assert steps.uid(rebuilt) != steps.uid(listener), "the listener was not rebuilt"
        assert rebuilt["spec"]["minRunners"] == 1
        await assert_generation_story(controller.journal, after=mark, old=old, new=old + 1)
        await assert_status_then_delete(controller.journal, after=mark, trigger="generation_advanced")


async def test_4_1_c_spec_edit_with_a_failing_listener_delete_stays_pending_at_the_old_generation(
    world: World, kube: client.ApiClient, tmp_path: Path
) -> None:
    async with Controller(world, tmp_path) as controller:
        ars = await steps.start_running(world, kube)
        old, _ = steps.generations(ars)
        (listener,) = await steps.listeners(kube)
        mark = await steps.last_seq(controller.journal)
        fault = world.inject(Fault(verb="delete", path="/autoscalinglisteners/", code=500, times=None))

        await harness.merge_patch(kube, ARS, "arc", {"spec": {"minRunners": 1}})

        async def deletes_failed() -> bool:
            failed = await steps.failed_results(controller.journal, LISTENER_DELETE, after=mark)
            return len(failed) >= FAILED_PASSES

        await eventually(
            deletes_failed, timeout=steps.TIMEOUT, what=f"{FAILED_PASSES} listener deletes failed"
        )
        ars = await steps.required(kube, ARS)
        assert (ars["status"]["phase"], steps.generations(ars)) == ("Pending", (old + 1, old))
        (kept,) = await steps.listeners(kube)
        assert steps.uid(kept) == steps.uid(listener) and not kept["metadata"].get("deletionTimestamp")
        lifted = await steps.last_seq(controller.journal)
        assert not [t for t in await steps.ars_transitions(controller.journal, mark) if t.to == "Running"]
        world.clear_faults()
        assert fault.hits >= FAILED_PASSES

        ars = await steps.running_at_generation(
            kube, "Running at the edited generation once the delete succeeds"
        )
        assert steps.generations(ars) == (old + 1, old + 1)
        (rebuilt,) = await steps.listeners(kube)
        assert steps.uid(rebuilt) != steps.uid(listener) and rebuilt["spec"]["minRunners"] == 1
        await assert_generation_story(controller.journal, after=mark, old=old, new=old + 1)
        assert min(await running_decided(controller.journal, mark)) > lifted


async def label_edit(kube: client.ApiClient, journal: Path) -> tuple[dict[str, Any], dict[str, Any], int]:
    """From Running: add the ARS label ``team=x``. Returns the ARS, its runner set and the journal's last seq
    as they were before the edit."""
    ars = await steps.required(kube, ARS)
    ers = await steps.required(kube, ERS)
    mark = await steps.last_seq(journal)
    await harness.merge_patch(kube, ARS, "arc", {"metadata": {"labels": {"team": "x"}}})
    return ars, ers, mark


async def assert_label_story(
    kube: client.ApiClient, journal: Path, *, ars: dict[str, Any], ers: dict[str, Any], mark: int
) -> None:
    """§4.2-A: Running → Pending → Running at an unchanged generation; the runner set carries the label at
    its old revision; the listener carrying the label is a new object."""
    gen, _ = steps.generations(ars)
    now = await steps.required(kube, ARS)
    assert steps.generations(now) == (gen, gen), "a label edit moved the generations"
    transitions = await steps.ars_transitions(journal, mark)
    assert steps.phase_path(transitions) == ["Running", "Pending", "Running"], transitions
    assert all(steps.read_generations(t) == (gen, gen) for t in transitions), transitions
    for r in await steps.observed(journal, ARS, mark):
        assert steps.generations(r.body["object"]) == (gen, gen), r.body["object"]["metadata"]
    runner_set = await steps.required(kube, ERS)
    assert runner_set["metadata"]["labels"].get("team") == "x"
    assert steps.revisions(runner_set)[0] == steps.revisions(ers)[0], "a label edit bumped the revision"
    for r in await steps.observed(journal, ERS, mark):
        assert steps.revisions(r.body["object"])[0] == steps.revisions(ers)[0]
    for r in await steps.effects(journal, "MergePatch", ERS, mark):
        assert "actionableRevision" not in (r.body["patch"].get("spec") or {}), r.body["patch"]
    (listener,) = await steps.listeners(kube)
    assert listener["metadata"]["labels"].get("team") == "x"
    await assert_status_then_delete(journal, after=mark, trigger="listener_rebuilt")


async def test_4_2_a_label_only_edit_rebuilds_the_listener_through_pending(
    world: World, kube: client.ApiClient, tmp_path: Path
) -> None:
    async with Controller(world, tmp_path) as controller:
        await steps.start_running(world, kube)
        (listener,) = await steps.listeners(kube)
        ars, ers, mark = await label_edit(kube, controller.journal)

        async def rebuilt() -> bool:
            found = await steps.listeners(kube)
            return (
                len(found) == 1
                and steps.uid(found[0]) != steps.uid(listener)
                and await harness.phase(kube) == "Running"
            )

        await eventually(rebuilt, timeout=steps.TIMEOUT, what="Running again with a new listener")
        await assert_label_story(kube, controller.journal, ars=ars, ers=ers, mark=mark)


async def test_4_2_b_label_edit_with_a_rejected_listener_create_stays_pending(
    world: World, kube: client.ApiClient, tmp_path: Path
) -> None:
    async with Controller(world, tmp_path) as controller:
        await steps.start_running(world, kube)
        (listener,) = await steps.listeners(kube)
        denied = 'admission webhook "listeners.example.com" denied the request: listeners are frozen'
        world.inject(Fault(verb="create", path="/autoscalinglisteners", code=400, message=denied, times=None))
        ars, ers, mark = await label_edit(kube, controller.journal)

        async def creates_failed() -> bool:
            failed = await steps.failed_results(controller.journal, LISTENER_CREATE, after=mark)
            return len(failed) >= FAILED_PASSES

        await eventually(
            creates_failed, timeout=steps.TIMEOUT, what=f"{FAILED_PASSES} listener creates rejected"
        )
        assert await harness.phase(kube) == "Pending"
        assert not await steps.listeners(kube), "a listener exists although every create was rejected"
        lifted = await steps.last_seq(controller.journal)
        transitions = await steps.ars_transitions(controller.journal, mark)
        assert steps.phase_path(transitions) == ["Running", "Pending"], transitions
        world.clear_faults()

        async def rebuilt() -> bool:
            found = await steps.listeners(kube)
            return len(found) == 1 and await harness.phase(kube) == "Running"

        await eventually(rebuilt, timeout=steps.TIMEOUT, what="Running once the listener create is accepted")
        (now,) = await steps.listeners(kube)
        assert steps.uid(now) != steps.uid(listener)
        await assert_label_story(kube, controller.journal, ars=ars, ers=ers, mark=mark)
        assert min(await running_decided(controller.journal, mark)) > lifted
