"""Spec §4.5 (C7, the parked scale set keeps its runner set pinned at zero) and §4.6 (recovery only through
a spec update) end to end.

Real controller, real journal, emulated cluster with the fake GitHub, which refuses runners older than its
minimum version: a runner built from the rejected image registers and exits 7, its EphemeralRunner goes
Outdated, then the EphemeralRunnerSet, and the AutoscalingRunnerSet parks. Each test starts from that park.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from kubernetes_asyncio import client

from sim.world import World
from tests.e2e.controller import harness
from tests.e2e.controller import scenario_steps as steps
from tests.e2e.controller.harness import Controller
from tests.e2e.controller.scenario_steps import AL, ARS, ER, ERS
from tests.helpers import eventually

pytestmark = pytest.mark.both_worlds


@pytest.fixture
async def world(world_kind: str) -> AsyncIterator[World]:
    async with harness.github_world(world_kind) as w:
        w.github.configure(min_runner_version=steps.MINIMUM)
        yield w


async def test_4_5_b_a_late_listener_patch_while_parked_is_reset_and_creates_no_runner(
    world: World, kube: client.ApiClient, tmp_path: Path
) -> None:
    async with Controller(world, tmp_path) as controller:
        await steps.park(world, kube, controller)
        before = await steps.required(kube, ERS)
        jit_configs = len(world.github.calls_to("POST", "generatejitconfig"))
        mark = await steps.last_seq(controller.journal)

        await steps.late_listener_patch(kube, controller.journal, replicas=4, patch_id=9)

        ers = await steps.required(kube, ERS)
        assert (ers["spec"]["replicas"], ers["spec"]["patchID"]) == (0, 0)
        assert steps.uid(ers) == steps.uid(before)
        assert steps.revisions(ers) == steps.revisions(before), "the revision bookkeeping moved while parked"
        assert not await steps.effects(controller.journal, "CreateObject", ER, mark), "a runner was decided"
        assert not await steps.observed(controller.journal, ER, mark), "a runner was created or changed"
        assert not await harness.items(kube, ER)
        assert len(world.github.calls_to("POST", "generatejitconfig")) == jit_configs
        assert await harness.phase(kube) == "Outdated"
        assert not await steps.listeners(kube)


async def test_4_5_c_parking_keeps_the_same_runner_set_and_never_deletes_it(
    world: World, kube: client.ApiClient, tmp_path: Path
) -> None:
    async with Controller(world, tmp_path) as controller:
        await steps.park(world, kube, controller)

        ers = await steps.assert_runner_set_kept(kube, controller.journal)
        assert (ers["spec"]["replicas"], ers["spec"]["patchID"]) == (0, 0)
        assert (ers.get("status") or {}).get("phase") == "Outdated"
        revision, applied = steps.revisions(ers)
        assert revision == applied >= 1, "the park changed the revision bookkeeping"
        parks = [t for t in await steps.ars_transitions(controller.journal) if t.to == "Outdated"]
        assert [(t.from_, t.trigger) for t in parks] == [("Running", "runners_rejected_spec")]
        assert steps.create_scale_set_calls(world) == 1


async def test_4_6_c_a_label_edit_does_not_recover_the_parked_scale_set(
    world: World, kube: client.ApiClient, tmp_path: Path
) -> None:
    async with Controller(world, tmp_path) as controller:
        await steps.park(world, kube, controller)
        ars = await steps.required(kube, ARS)
        ers = await steps.required(kube, ERS)
        mark = await steps.last_seq(controller.journal)

        await harness.merge_patch(kube, ARS, "arc", {"metadata": {"labels": {"team": "x"}}})

        def labelled(obj: dict[str, object]) -> bool:
            meta = obj.get("metadata")
            return isinstance(meta, dict) and (meta.get("labels") or {}).get("team") == "x"

        edited = await eventually(
            lambda: steps.first_observed(controller.journal, ARS, labelled, after=mark),
            timeout=steps.TIMEOUT,
            what="the label edit observed",
        )
        # A parked pass with nothing to do is not journaled: give it something to do (a late listener patch)
        # and read the pass that re-pinned the runner set, which read the label edit too.
        seen = await steps.late_listener_patch(kube, controller.journal, replicas=1, patch_id=1)
        assert seen > edited

        now = await steps.required(kube, ARS)
        assert now["status"]["phase"] == "Outdated"
        assert steps.generations(now) == steps.generations(ars), "a label edit moved the generations"
        assert steps.generations(now)[0] == steps.generations(now)[1]
        transitions = await steps.ars_transitions(controller.journal, mark)
        assert {(t.from_, t.to) for t in transitions} == {("Outdated", "Outdated")}, transitions
        assert not await steps.listeners(kube), "a listener came back after a label edit"
        assert not await steps.effects(controller.journal, "CreateObject", AL, mark)
        assert steps.revisions(await steps.required(kube, ERS)) == steps.revisions(ers)


async def test_4_6_e_a_recovery_whose_runners_are_rejected_again_parks_once_more_without_churn(
    world: World, kube: client.ApiClient, tmp_path: Path
) -> None:
    async with Controller(world, tmp_path) as controller:
        await steps.park(world, kube, controller)
        parked_revision, _ = steps.revisions(await steps.required(kube, ERS))
        mark = await steps.last_seq(controller.journal)

        # The retry edits maxRunners only, so the runners of the new revision carry the rejected image too.
        await harness.merge_patch(kube, ARS, "arc", {"spec": {"maxRunners": 4}})
        await steps.wait_parked(kube, controller.journal, after=mark)

        transitions = await steps.ars_transitions(controller.journal)
        assert steps.phase_path(transitions) == [
            "",
            "Pending",
            "Running",
            "Outdated",
            "Pending",
            "Running",
            "Outdated",
        ], transitions
        parks = [t for t in transitions if t.to == "Outdated" and t.from_ == "Running"]
        assert len(parks) == 2, transitions
        second = parks[1].revisions
        assert second["actionableRevision"] == second["appliedActionableRevision"] == parked_revision + 1
        ars = await steps.required(kube, ARS)
        gen, obs = steps.generations(ars)
        assert gen == obs and ars["status"]["phase"] == "Outdated"
        ers = await steps.assert_runner_set_kept(kube, controller.journal)
        assert steps.revisions(ers) == (parked_revision + 1, parked_revision + 1)
        rejected = [
            r
            for r in await steps.observed(controller.journal, ER, mark)
            if (r.body["object"].get("status") or {}).get("phase") == "Outdated"
        ]
        assert rejected and all(
            r.body["object"]["metadata"]["annotations"]["actions.github.com/actionable-revision"]
            == str(parked_revision + 1)
            for r in rejected
        ), "the runners rejected after the recovery were not of the new revision"
        # No churn: one Actions scale set for the whole story, one listener per Running period.
        assert steps.create_scale_set_calls(world) == 1
        outdated_at = [
            r.seq or 0
            for r in await steps.ars_decisions(controller.journal)
            if any(t.to == "Outdated" and t.from_ == "Running" for t in harness.transitions_of(r))
        ]
        created = [
            r.seq or 0 for r in await steps.observed(controller.journal, AL) if r.body["event"] == "ADDED"
        ]
        per_period = [
            len([s for s in created if low < s < high])
            for low, high in zip([0, *outdated_at], [*outdated_at, 1 << 62], strict=True)
        ]
        assert per_period == [1, 1, 0], (created, outdated_at)
        assert not await steps.listeners(kube)
