"""Spec §4.3 (C3, the runner-spec revision) and §4.4 (C4, the revision on runners, the teardown guard) end
to end: the real controller on a real journal, the emulated cluster and the fake Actions service, whose
runners register, take jobs and exit 7 when their image is older than the service's minimum.

How each scenario's starting state is reached is said in its test; the shared steps, and why 4.3-B and
4.3-C publish the new runner spec on the runner set, are in ``revision_steps``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from kubernetes_asyncio import client

from sim.faults import Fault
from sim.github.faults import GitHubFault
from sim.world import World
from tests.e2e.controller import harness
from tests.e2e.controller.harness import Controller, merge_patch, required, revisions
from tests.e2e.controller.revision_steps import (
    AL,
    ARS,
    ER,
    ERS,
    IMAGE,
    MINIMUM,
    NEXT_IMAGE,
    OLD_IMAGE,
    TIMEOUT,
    Pass,
    Passes,
    ars_transitions,
    change_image,
    create_scale_set,
    effects_on,
    failed_results,
    has_job,
    listeners,
    observed,
    publish_image,
    queue_job,
    runner_revision,
    runner_running,
    running_with_idle_runners,
    status_of,
    uid,
    wait_started,
)
from tests.helpers import eventually

LONG_JOB = 600.0  # outlasts the test: a job ends when the test lets it (GitHubFake.complete_job)


@pytest.fixture
async def world(world_kind: str) -> AsyncIterator[World]:
    async with harness.github_world(world_kind) as w:
        w.github.configure(min_runner_version=MINIMUM, job_seconds=LONG_JOB)
        yield w


@pytest.fixture
def passes(monkeypatch: pytest.MonkeyPatch) -> Passes:
    return Passes.install(monkeypatch)


# -- 4.3 ---------------------------------------------------------------------------------------------------


async def test_4_3_a_image_change_with_no_active_runners_publishes_one_revision(
    world: World, kube: client.ApiClient, tmp_path: Path
) -> None:
    """minRunners 0, no job: rev 1 → 2 and app 2 through exactly one runner-spec patch of the ERS."""
    async with Controller(world, tmp_path) as controller:
        await create_scale_set(world, kube)
        await running_with_idle_runners(world, kube, 0)
        assert revisions(await required(kube, ERS)) == (1, 1)

        await change_image(kube, NEXT_IMAGE)

        async def applied() -> bool:
            ars, ers = await required(kube, ARS), await required(kube, ERS)
            return (
                revisions(ers) == (2, 2)
                and status_of(ers).get("phase") == "Running"
                and status_of(ars).get("phase") == "Running"
                and status_of(ars).get("observedGeneration") == ars["metadata"]["generation"]
            )

        await eventually(applied, timeout=TIMEOUT, what="rev 2 applied and the ARS Running at its generation")

        spec_patches = [
            e["patch"]
            for e in await effects_on(controller.journal, ERS, "arc")
            if e["type"] == "MergePatch" and not e.get("subresource") and "spec" in e["patch"]
        ]
        assert len(spec_patches) == 1, spec_patches
        (published,) = spec_patches
        assert published["spec"]["actionableRevision"] == 2
        containers = published["spec"]["ephemeralRunnerSpec"]["spec"]["containers"]
        assert [c["image"] for c in containers] == [NEXT_IMAGE]
        ers = await required(kube, ERS)
        assert ers["spec"]["ephemeralRunnerSpec"]["spec"]["containers"][0]["image"] == NEXT_IMAGE


async def test_4_3_b_crash_midway_keeps_the_applied_revision_until_every_removal_succeeded(
    world: World, kube: client.ApiClient, tmp_path: Path
) -> None:
    """Two idle runners; the service answers 500 to the removal of one of them. The image changes (made
    while the controller is stopped, see ``revision_steps``): the other runner is removed and deleted, app
    stays at the old revision while the fault lasts, and advances once it is lifted."""
    controller = Controller(world, tmp_path)
    async with controller:
        await create_scale_set(world, kube, minRunners=2)
        first, second = sorted(
            await running_with_idle_runners(world, kube, 2), key=lambda r: status_of(r)["runnerId"]
        )
    failing_id = status_of(second)["runnerId"]
    world.github.inject(GitHubFault(method="DELETE", path=rf"/agents/{failing_id}$", status=500, times=None))
    old, _ = revisions(await required(kube, ERS))
    await change_image(kube, NEXT_IMAGE)
    new = await publish_image(kube, NEXT_IMAGE)

    async with controller:

        async def first_removed_second_failed() -> bool:
            deleted = [
                r
                for r in await observed(controller.journal, ER, first["metadata"]["name"])
                if r.body["event"] == "DELETED"
            ]  # journaled too: the story below reads the journal from that deletion on
            return (
                bool(deleted)
                and await harness.get(kube, ER, first["metadata"]["name"]) is None
                and bool(await failed_results(controller.journal, f"/{second['metadata']['name']}#"))
            )

        await eventually(
            first_removed_second_failed,
            timeout=TIMEOUT,
            what="the first runner removed and deleted, the second one's removal failed",
        )
        ers = await required(kube, ERS)
        assert revisions(ers) == (new, old), "app moved while a removal of the cleanup failed (I3.4)"
        kept = await required(kube, ER, second["metadata"]["name"])
        assert uid(kept) == uid(second) and not kept["metadata"].get("deletionTimestamp")
        deleted_at = next(
            r.seq or 0
            for r in await observed(controller.journal, ER, first["metadata"]["name"])
            if r.body["event"] == "DELETED"
        )
        after = [r for r in await observed(controller.journal, ERS, "arc") if (r.seq or 0) > deleted_at]
        assert all(revisions(r.body["object"])[1] == old for r in after), "app advanced while the fault held"

        world.github.clear_faults()

        async def applied() -> bool:
            ers = await required(kube, ERS)
            return (
                revisions(ers) == (new, new)
                and await harness.get(kube, ER, second["metadata"]["name"]) is None
            )

        await eventually(applied, timeout=TIMEOUT, what="app advanced once the removal succeeded")
        assert failing_id not in world.github.state.agents, "the failed runner was never removed"
        assert not [
            e
            for e in await effects_on(controller.journal, ERS, "arc")
            if e["type"] == "MergePatch" and "ephemeralRunnerSpec" in e["patch"].get("spec", {})
        ], "the ARS published a runner spec of its own: it saw drift after the edit"


async def test_4_3_c_a_runner_with_a_job_survives_a_revision_change(
    world: World, kube: client.ApiClient, tmp_path: Path
) -> None:
    """One idle runner and one busy with a job that lasts until the test ends it. The image changes: the
    idle one is removed, the busy one is left alone and app advances; once its job ends the busy runner is
    deleted and the set holds only runners of the new revision.

    The listener keeps the set at minRunners + running jobs, so the runner that takes the busy one's place
    is made as soon as the revision is applied; when the job ends the listener scales back to minRunners.
    Either way, every runner the set makes after the change carries the new revision (I4.1). The image
    changes while the controller is stopped (see ``revision_steps``)."""
    controller = Controller(world, tmp_path)
    async with controller:
        await create_scale_set(world, kube, minRunners=1)
        await running_with_idle_runners(world, kube, 1)
        job = queue_job(world)
        busy = await runner_running(world, kube, job)
        busy_id = status_of(busy)["runnerId"]

        async def one_idle_beside() -> list[dict[str, Any]]:
            return [
                r
                for r in await harness.items(kube, ER)
                if not has_job(r) and status_of(r).get("phase") == "Running" and status_of(r).get("runnerId")
            ]

        (idle,) = await eventually(
            one_idle_beside, timeout=TIMEOUT, what="an idle runner beside the busy one"
        )
    old, _ = revisions(await required(kube, ERS))
    await change_image(kube, NEXT_IMAGE)
    new = await publish_image(kube, NEXT_IMAGE)

    async with controller:

        async def applied_around_the_busy_one() -> bool:
            ers = await required(kube, ERS)
            ars = await required(kube, ARS)
            return (
                revisions(ers) == (new, new)
                and await harness.get(kube, ER, idle["metadata"]["name"]) is None
                and status_of(ars).get("phase") == "Running"
                and status_of(ars).get("observedGeneration") == ars["metadata"]["generation"]
            )

        await eventually(
            applied_around_the_busy_one, timeout=TIMEOUT, what="the idle runner removed and app advanced"
        )
        kept = await required(kube, ER, busy["metadata"]["name"])
        assert uid(kept) == uid(busy) and has_job(kept) and not kept["metadata"].get("deletionTimestamp")
        assert runner_revision(kept) == str(old)
        assert world.github.state.agents[busy_id].job == job.runner_request_id
        assert not world.github.calls_to("DELETE", f"/agents/{busy_id}"), "the busy runner was removed"

        world.github.complete_job(job.runner_request_id)

        async def replaced() -> list[dict[str, Any]]:
            if await harness.get(kube, ER, busy["metadata"]["name"]) is not None:
                return []
            runners = await harness.items(kube, ER)
            return runners if len(runners) == 1 and status_of(runners[0]).get("phase") == "Running" else []

        (replacement,) = await eventually(
            replaced,
            timeout=TIMEOUT,
            what="the busy runner deleted after its job, a runner of the new spec up",
        )
        assert runner_revision(replacement) == str(new)
        assert replacement["spec"]["spec"]["containers"][0]["image"] == NEXT_IMAGE
        # I4.1: every runner made after the revision change carries it, the busy one's replacement too.
        made = [r for r in await observed(controller.journal, ER) if r.body["event"] == "ADDED"]
        assert {r.uid for r in made} >= {uid(busy), uid(idle), uid(replacement)}
        for record in made:
            if record.uid not in {uid(busy), uid(idle)}:
                assert runner_revision(record.body["object"]) == str(new), record.body["object"]["metadata"]


# -- 4.4 ---------------------------------------------------------------------------------------------------

LISTENER_DELETE = r"/autoscalinglisteners/"


async def outdated_with_the_teardown_held(
    world: World, kube: client.ApiClient, journal: Path
) -> dict[str, Any]:
    """A scale set whose runner exits 7, with every DELETE of a listener answered 500: the runner set goes
    Outdated at its applied revision and the ARS starts the teardown (A5) but cannot get the listener
    deleted, so it cannot record Outdated. Returns the runner set as it was first observed Outdated."""
    world.inject(Fault(verb="delete", path=LISTENER_DELETE, code=500, times=None))
    await create_scale_set(world, kube, image=OLD_IMAGE, minRunners=1)
    await wait_started(kube)

    async def outdated() -> dict[str, Any] | None:
        return next(
            (
                r.body["object"]
                for r in await observed(journal, ERS, "arc")
                if status_of(r.body["object"]).get("phase") == "Outdated"
            ),
            None,
        )

    ers: dict[str, Any] = await eventually(outdated, timeout=TIMEOUT, what="the runner set Outdated")

    def teardown_refused() -> bool:
        return any(
            r.method == "DELETE" and LISTENER_DELETE in r.path and r.status == 500 for r in world.requests
        )

    await eventually(teardown_refused, timeout=TIMEOUT, what="the teardown's listener DELETE refused")
    return ers


async def test_4_4_b_a_spec_update_clears_outdated_before_the_teardown_parks_the_set(
    world: World, kube: client.ApiClient, tmp_path: Path
) -> None:
    """The runner set Outdated at rev = app, the ARS Running with its teardown held (the listener DELETE
    answers 500, so the ARS cannot park). The user's image fix lands first: the ARS republishes at
    rev + 1 (recovery, drain bypassed, the guard false), the runner set applies it and goes Running. The
    runner set is never deleted, the ARS never records Outdated, the new runners carry the new revision."""
    async with Controller(world, tmp_path) as controller:
        outdated = await outdated_with_the_teardown_held(world, kube, controller.journal)
        rev, app = revisions(outdated)
        assert rev == app, outdated["status"]
        listener = (await listeners(kube))[0]

        await change_image(kube, IMAGE)

        async def recovered() -> list[dict[str, Any]]:
            ars, ers = await required(kube, ARS), await required(kube, ERS)
            runners = await harness.items(kube, ER)
            done = (
                revisions(ers) == (rev + 1, rev + 1)
                and status_of(ers).get("phase") == "Running"
                and status_of(ars).get("phase") == "Running"
                and status_of(ars).get("observedGeneration") == ars["metadata"]["generation"]
                and len(runners) == 1
                and status_of(runners[0]).get("phase") == "Running"
            )
            return runners if done else []

        (runner,) = await eventually(
            recovered, timeout=TIMEOUT, what="the set Running at rev + 1 with a runner"
        )
        assert runner_revision(runner) == str(rev + 1)
        world.clear_faults()

        ers = await required(kube, ERS)
        assert uid(ers) == uid(outdated)
        assert not [r for r in await observed(controller.journal, ERS) if r.body["event"] == "DELETED"]
        transitions = await ars_transitions(controller.journal)
        assert "Outdated" not in {t.to for t in transitions}, transitions
        republished = [t for t in transitions if t.trigger == "recovery_republished"]
        assert [t.revisions["actionableRevision"] for t in republished] == [rev + 1], transitions
        assert [uid(al) for al in await listeners(kube)] == [uid(listener)], "the listener was rebuilt"
        made = [
            r.body["object"] for r in await observed(controller.journal, ER) if r.body["event"] == "ADDED"
        ]
        assert {runner_revision(r) for r in made} == {str(rev), str(rev + 1)}
        assert runner_revision(made[-1]) == str(rev + 1)


async def test_4_4_c_the_guard_suppresses_a_stale_verdict_while_rev_is_ahead_of_app(
    world: World, kube: client.ApiClient, tmp_path: Path, passes: Passes
) -> None:
    """The runner set Outdated with rev > app, the ARS Running at its generation: no teardown (I4.4).

    Built so: two idle runners whose removals the service refuses (400), one takes a long job, the service
    raises its minimum, so the runner the job scales up to exits 7 and the runner set goes Outdated at
    rev = app; the ARS starts the teardown but the listener DELETE answers 500. The controller is stopped,
    the ARS publishes rev + 1 (written on the runner set, as in ``revision_steps``), the listener fault is
    lifted and the controller started again: the runner set cannot apply rev + 1 (the idle runner's
    removal is refused), and the ARS pass that reads rev > app with the set Outdated neither deletes the
    listener nor records Outdated."""
    controller = Controller(world, tmp_path)
    async with controller:
        world.inject(Fault(verb="delete", path=LISTENER_DELETE, code=500, times=None))
        await create_scale_set(world, kube, minRunners=2)
        idle = await running_with_idle_runners(world, kube, 2)
        ids = "|".join(str(status_of(r)["runnerId"]) for r in idle)
        world.github.inject(GitHubFault(method="DELETE", path=rf"/agents/({ids})$", status=400, times=None))
        world.github.configure(min_runner_version="2.331.0")  # the runners of IMAGE are too old now
        queue_job(world)

        async def outdated() -> bool:
            ers = await required(kube, ERS)
            refused = any(
                r.method == "DELETE" and LISTENER_DELETE in r.path and r.status == 500 for r in world.requests
            )
            return status_of(ers).get("phase") == "Outdated" and refused

        await eventually(outdated, timeout=TIMEOUT, what="the runner set Outdated, the teardown refused")
    rev, app = revisions(await required(kube, ERS))
    assert rev == app
    listener = (await listeners(kube))[0]
    await merge_patch(kube, ERS, "arc", {"spec": {"actionableRevision": rev + 1}})
    world.clear_faults()
    mark = passes.mark()

    async with controller:

        def stale_verdicts() -> list[Pass]:
            found = []
            for p in passes.since(mark, ARS):
                ers = p.snapshot.get("ers") or {}
                if status_of(dict(ers)).get("phase") == "Outdated" and revisions(dict(ers)) == (rev + 1, app):
                    found.append(p)
            return found

        read = await eventually(
            stale_verdicts, timeout=TIMEOUT, what="an ARS pass reading rev > app, Outdated"
        )
        for p in read:
            assert not p.deletes(AL), p.decision
            assert not p.enters("Outdated"), p.decision
        ars, ers = await required(kube, ARS), await required(kube, ERS)
        assert revisions(ers) == (rev + 1, app), "the cleanup was not held"
        assert status_of(ars).get("phase") == "Running"
        assert status_of(ars).get("observedGeneration") == ars["metadata"]["generation"]
        kept = await listeners(kube)
        assert [uid(al) for al in kept] == [uid(listener)] and not kept[0]["metadata"].get(
            "deletionTimestamp"
        )
        assert "Outdated" not in {t.to for t in await ars_transitions(controller.journal)}


async def test_4_4_d_a_legacy_set_at_rev_app_zero_is_torn_down(
    world: World, kube: client.ApiClient, tmp_path: Path
) -> None:
    """A runner set of the pre-revision controller: rev = app = 0 and Outdated, the ARS Running. The guard
    app >= rev holds, so the teardown happens: the ARS records Outdated, the set is pinned, not deleted.

    The legacy state is written while the controller is stopped, by merge patches of the runner set's spec
    (actionableRevision 0) and of its status subresource (appliedActionableRevision 0, phase Outdated), as
    a set left by the old controller would be found."""
    controller = Controller(world, tmp_path)
    async with controller:
        await create_scale_set(world, kube)
        await running_with_idle_runners(world, kube, 0)
    before = await required(kube, ERS)
    await merge_patch(kube, ERS, "arc", {"spec": {"actionableRevision": 0}})
    await merge_patch(
        kube, ERS, "arc", {"status": {"appliedActionableRevision": 0, "phase": "Outdated"}}, status=True
    )

    async with controller:

        async def parked() -> bool:
            ers = await required(kube, ERS)
            return (
                await harness.phase(kube) == "Outdated"
                and (ers["spec"].get("replicas"), ers["spec"].get("patchID")) == (0, 0)
                and not await listeners(kube)
            )

        await eventually(
            parked, timeout=TIMEOUT, what="the legacy set torn down: Outdated, pinned, no listener"
        )
        ers = await required(kube, ERS)
        assert uid(ers) == uid(before) and not ers["metadata"].get("deletionTimestamp")
        assert revisions(ers) == (0, 0)
        assert not [r for r in await observed(controller.journal, ERS) if r.body["event"] == "DELETED"]
        teardown = [t for t in await ars_transitions(controller.journal) if t.to == "Outdated"]
        assert [(t.from_, t.trigger) for t in teardown] == [("Running", "runners_rejected_spec")]
        assert teardown[0].revisions["actionableRevision"] == 0
        assert teardown[0].revisions["appliedActionableRevision"] == 0
