"""The seed's story end to end (C7, spec §4.5, §4.6): runners that reject their spec park the scale set
without churn (a runner busy with a job is kept), and a spec update recovers it through an advanced
runner-spec revision, even one that leaves the runner spec alone. The tests carry the ids of the scenarios
they run: 4.5-A (the park, around a runner busy with a job), 4.6-A (a spec update that leaves the runner
spec alone) and 4.6-B (an image fix); each also parks first, so each covers 4.5-A's park as well.

Real composition root (``controller.loop.running.run``), real journal on disk, emulated cluster with the fake
GitHub. The fake refuses runners older than its minimum version, so a runner built from an older image
exits 7: its EphemeralRunner goes Outdated, then the EphemeralRunnerSet, then the AutoscalingRunnerSet.
Every wait is on a condition with a deadline; "a window of further activity" is made of controller passes
the test provokes and then finds in the journal, never of time passing.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from kubernetes_asyncio import client
from typer.testing import CliRunner

from controller.commands.cli import app
from sim.world import World
from statemachines.kinds import AL, ARS, ER, ERS
from store.records import RecordType
from tests.e2e.controller import harness
from tests.e2e.controller.harness import CONTROLLER_NS, Controller, merge_patch, required, revisions
from tests.e2e.controller.scenario_steps import (
    ars_decisions,
    ars_transitions,
    last_seq,
    observed,
    pinned_without_listener,
    repinned,
)
from tests.helpers import eventually

pytestmark = pytest.mark.both_worlds

TIMEOUT = 60.0
MINIMUM = "2.330.0"
OLD_IMAGE = "ghcr.io/actions/actions-runner:2.329.0"
NEW_IMAGE = "ghcr.io/actions/actions-runner:2.330.0"


@pytest.fixture
async def world(world_kind: str) -> AsyncIterator[World]:
    async with harness.github_world(world_kind) as w:
        w.github.configure(min_runner_version=MINIMUM)
        yield w


# -- reading the cluster and the journal -------------------------------------------------------------------


async def runners_ever_created(journal: Path) -> set[str]:
    """The uids of every EphemeralRunner the journal ever observed."""
    return {r.uid for r in await observed(journal, ER)}


# -- the steps of the story ---------------------------------------------------------------------------------


async def park(world: World, kube: client.ApiClient, controller: Controller) -> None:
    """Create a scale set whose runners are too old for the service; wait for every level to go Outdated."""
    body = harness.scale_set_body(world, minRunners=1)
    body["spec"]["template"]["spec"]["containers"][0]["image"] = OLD_IMAGE
    body["spec"]["template"]["spec"]["restartPolicy"] = "Never"  # as the chart's runner template has it
    await harness.create(kube, body)

    async def started() -> bool:  # the journal's tables exist once the controller wrote anything
        return await harness.phase(kube) is not None

    await eventually(started, timeout=TIMEOUT, what="a first phase written")

    async def runner_rejected() -> bool:
        phases = [
            (r.body["object"].get("status") or {}).get("phase")
            for r in await observed(controller.journal, ER)
        ]
        return "Outdated" in phases

    await eventually(runner_rejected, timeout=TIMEOUT, what="an EphemeralRunner Outdated (exit 7)")

    async def set_outdated() -> bool:
        phases = [
            (r.body["object"].get("status") or {}).get("phase")
            for r in await observed(controller.journal, ERS)
        ]
        return "Outdated" in phases

    await eventually(set_outdated, timeout=TIMEOUT, what="the EphemeralRunnerSet Outdated")

    await wait_parked(kube)


async def wait_parked(kube: client.ApiClient) -> None:
    """The ARS Outdated, its runner set pinned at 0/0 (not deleted), no listener."""
    await eventually(
        lambda: pinned_without_listener(kube),
        timeout=TIMEOUT,
        what="the scale set parked: Outdated, pinned at 0/0, no listener",
    )


def has_job(runner: dict[str, Any]) -> bool:
    return bool((runner.get("status") or {}).get("jobId"))


async def idle_runners(kube: client.ApiClient) -> list[dict[str, Any]]:
    return [r for r in await harness.items(kube, ER) if not has_job(r)]


async def assert_parked_without_churn(world: World, kube: client.ApiClient, controller: Controller) -> None:
    """Provoke controller passes while parked (§4.5-B late listener patch, §4.6-C label edit) and check
    nothing is rebuilt: the same runner set pinned at 0/0, no listener, no new runner, still Outdated."""

    async def released() -> bool:  # the Outdated branch releases every runner without a job (I5.4)
        return not await idle_runners(kube)

    await eventually(released, timeout=TIMEOUT, what="the rejected runners released")
    ers_before = await required(kube, ERS)
    runners_before = await runners_ever_created(controller.journal)
    jit_before = len(world.github.calls_to("POST", "generatejitconfig"))
    scale_sets_before = len(world.github.calls_to("POST", "runnerscalesets"))
    assert runners_before, "a runner was created and rejected before the park"
    busy_before = {r["metadata"]["uid"] for r in await harness.items(kube, ER)}
    # A label edit does not move the generation, so it does not recover the set (§4.6-C).
    await merge_patch(kube, ARS, "arc", {"metadata": {"labels": {"edited": "yes"}}})

    async def label_observed() -> int:
        return next(
            (
                r.seq or 0
                for r in await observed(controller.journal, ARS)
                if "edited" in r.body["object"]["metadata"].get("labels", {})
            ),
            0,
        )

    label_seq = await eventually(label_observed, timeout=TIMEOUT, what="the label edit observed")

    # Listener patches that land late: each next ARS pass re-pins the set to 0/0 (A7, §4.5-B). A pass
    # with nothing to do is not journaled, so these are the passes the window is counted in; both read
    # the fold after the label edit.
    for replicas, patch_id in ((4, 9), (2, 11)):
        mark = await last_seq(controller.journal)
        await merge_patch(kube, ERS, "arc", {"spec": {"replicas": replicas, "patchID": patch_id}})
        await eventually(
            functools.partial(repinned, kube, controller.journal, after=mark, seen=label_seq),
            timeout=TIMEOUT,
            what=f"the late patch {replicas}/{patch_id} re-pinned to 0/0",
        )

    ers = await required(kube, ERS)
    ars = await required(kube, ARS)
    assert ers["metadata"]["uid"] == ers_before["metadata"]["uid"], "the runner set was recreated"
    assert (ers["spec"].get("replicas"), ers["spec"].get("patchID")) == (0, 0)
    assert revisions(ers) == revisions(ers_before), "the revision bookkeeping moved while parked (I5.3)"
    assert not await harness.items(kube, AL, CONTROLLER_NS), "a listener came back while parked"
    assert not await idle_runners(kube), "a runner without a job was kept while parked"
    busy = {r["metadata"]["uid"] for r in await harness.items(kube, ER)}
    assert busy == busy_before, "a runner busy with a job was removed while parked (I5.4)"
    assert await runners_ever_created(controller.journal) == runners_before, (
        "a runner was created while parked"
    )
    assert len(world.github.calls_to("POST", "generatejitconfig")) == jit_before
    assert len(world.github.calls_to("POST", "runnerscalesets")) == scale_sets_before
    assert ars["status"]["phase"] == "Outdated"
    assert ars["status"]["observedGeneration"] == ars["metadata"]["generation"]
    deletes = [r for r in await observed(controller.journal, ERS) if r.body["event"] == "DELETED"]
    assert not deletes, "the runner set was deleted (the old churn, §4.5-C)"


async def assert_recovered(
    world: World, kube: client.ApiClient, controller: Controller, parked_revision: int
) -> dict[str, Any]:
    """The ARS Running at its generation, the runner set Running at an advanced revision, a listener, and a
    runner registered with the service and running."""

    async def recovered() -> bool:
        ars, ers = await harness.get(kube, ARS, "arc"), await harness.get(kube, ERS, "arc")
        if ars is None or ers is None:
            return False
        runners = await harness.items(kube, ER)
        revision, applied = revisions(ers)
        return (
            (ars.get("status") or {}).get("phase") == "Running"
            and ars["status"].get("observedGeneration") == ars["metadata"]["generation"]
            and (ers.get("status") or {}).get("phase") == "Running"
            and revision == applied > parked_revision
            and len(await harness.items(kube, AL, CONTROLLER_NS)) == 1
            and [(r.get("status") or {}).get("phase") for r in runners] == ["Running"]
            and any(a.online for a in world.github.state.agents.values())
        )

    await eventually(recovered, timeout=TIMEOUT, what="the scale set recovered with a runner registered")
    return await required(kube, ERS)


async def assert_story_journaled(controller: Controller, recovered_revision: int) -> None:
    """Phase history (3) and the invariants over every observed version (4)."""
    transitions = await ars_transitions(controller.journal)
    collapsed = [phase for phase, _ in itertools.groupby(t.to for t in transitions)]
    assert collapsed == ["Pending", "Running", "Outdated", "Pending", "Running"], transitions
    for t in transitions:
        assert {"generation", "observedGeneration"} <= t.revisions.keys(), t
        assert t.revisions["observedGeneration"] <= t.revisions["generation"], t
    outdated = [t for t in transitions if t.to == "Outdated" and t.from_ == "Running"]
    assert [t.trigger for t in outdated] == ["runners_rejected_spec"]
    parked_at = outdated[0].revisions
    assert parked_at["actionableRevision"] == parked_at["appliedActionableRevision"]
    recovery = [t for t in transitions if t.from_ == "Outdated" and t.to == "Pending"]
    assert [t.trigger for t in recovery] == ["generation_advanced"]
    assert recovery[0].revisions["generation"] > recovery[0].revisions["observedGeneration"]
    republished = [t for t in transitions if t.trigger == "recovery_republished"]
    assert len(republished) == 1, transitions
    assert republished[0].revisions["actionableRevision"] == recovered_revision
    assert recovered_revision == parked_at["actionableRevision"] + 1
    final = transitions[-1]
    assert final.to == "Running"
    assert final.revisions["observedGeneration"] == final.revisions["generation"]

    records = await harness.journaled(controller.journal, {RecordType.OBSERVED})
    # I1.1: observedGeneration <= generation at every observed ARS version.
    for r in records:
        if r.kind == ARS:
            obj = r.body["object"]
            assert int((obj.get("status") or {}).get("observedGeneration") or 0) <= int(
                obj["metadata"].get("generation") or 0
            ), obj
    # The applied revision never goes back, per runner set.
    applied: dict[str, int] = {}
    for r in records:
        if r.kind == ERS:
            _, now = revisions(r.body["object"])
            assert now >= applied.get(r.uid, 0), (r.seq, now, applied)
            applied[r.uid] = now
    assert len(applied) == 1, "the runner set was recreated"
    # No runner is deleted while it has a job (vacuous unless a job was assigned).
    with_job = {
        r.uid for r in records if r.kind == ER and (r.body["object"].get("status") or {}).get("jobId")
    }
    deleted = {r.uid for r in records if r.kind == ER and r.body["event"] == "DELETED"}
    assert not with_job & deleted
    # I6.2/I6.3: after the park, no listener is created before the runner set's revision advanced.
    parked_seq = next(
        r.seq or 0
        for r in await ars_decisions(controller.journal)
        if any(t.to == "Outdated" for t in harness.transitions_of(r))
    )
    advanced = [
        r.seq or 0
        for r in records
        if r.kind == ERS
        and (r.seq or 0) > parked_seq
        and revisions(r.body["object"])[0] == recovered_revision
    ]
    relisted = [
        r.seq or 0
        for r in records
        if r.kind == AL and r.body["event"] == "ADDED" and (r.seq or 0) > parked_seq
    ]
    assert advanced and relisted and min(advanced) < min(relisted), (advanced, relisted)


# -- the tests -----------------------------------------------------------------------------------------------


async def test_4_6_b_rejected_runners_park_the_scale_set_and_an_image_fix_recovers_it(
    world: World, kube: client.ApiClient, tmp_path: Path
) -> None:
    exported = tmp_path / "story.jsonl.gz"
    async with Controller(world, tmp_path, record_to=exported) as controller:
        await park(world, kube, controller)
        await assert_parked_without_churn(world, kube, controller)
        parked_revision, _ = revisions(await required(kube, ERS))

        # The fix: a runner image the service accepts (a spec update; the generation moves).
        template = {"spec": {"containers": [{"name": "runner", "image": NEW_IMAGE}]}}
        await merge_patch(kube, ARS, "arc", {"spec": {"template": template}})

        ers = await assert_recovered(world, kube, controller, parked_revision)
        assert ers["spec"]["ephemeralRunnerSpec"]["spec"]["containers"][0]["image"] == NEW_IMAGE
        await assert_story_journaled(controller, revisions(ers)[0])

    # The journal the story left decides every decision alike when replayed, as a user checks it.
    result = CliRunner().invoke(app, ["replay", "--check", str(exported)])
    assert result.exit_code == 0, result.output
    assert result.output.endswith("decisions replayed, all equal\n"), result.output


async def test_4_6_a_a_spec_update_that_leaves_the_runner_spec_alone_still_advances_the_revision(
    world: World, kube: client.ApiClient, tmp_path: Path
) -> None:
    async with Controller(world, tmp_path) as controller:
        await park(world, kube, controller)
        await assert_parked_without_churn(world, kube, controller)
        parked = await required(kube, ERS)
        parked_revision, _ = revisions(parked)

        # The service stops refusing the old runners; the user's retry edits only maxRunners (§4.6-A).
        world.github.configure(min_runner_version="0.0.0")
        await merge_patch(kube, ARS, "arc", {"spec": {"maxRunners": 4}})

        ers = await assert_recovered(world, kube, controller, parked_revision)
        assert ers["spec"]["ephemeralRunnerSpec"] == parked["spec"]["ephemeralRunnerSpec"]
        listener = (await harness.items(kube, AL, CONTROLLER_NS))[0]
        assert listener["spec"]["maxRunners"] == 4
        await assert_story_journaled(controller, revisions(ers)[0])


async def test_4_5_a_a_runner_busy_with_a_job_is_kept_while_the_scale_set_parks(
    world: World, kube: client.ApiClient, tmp_path: Path
) -> None:
    # The first runner is accepted and takes a long job; the service then raises its minimum, so the
    # runner the job scales up to is rejected and the set parks around the busy one (§4.5-A, I5.4).
    world.github.configure(min_runner_version="0.0.0", job_seconds=600.0)
    body = harness.scale_set_body(world, minRunners=1)
    body["spec"]["template"]["spec"]["containers"][0]["image"] = OLD_IMAGE
    body["spec"]["template"]["spec"]["restartPolicy"] = "Never"
    async with Controller(world, tmp_path) as controller:
        await harness.create(kube, body)

        async def one_idle_runner() -> bool:
            runners = await harness.items(kube, ER)
            return [(r.get("status") or {}).get("phase") for r in runners] == ["Running"] and any(
                a.online for a in world.github.state.agents.values()
            )

        await eventually(one_idle_runner, timeout=TIMEOUT, what="one runner accepted and idle")
        world.github.configure(min_runner_version=MINIMUM)
        scale_set = world.github.scale_set("arc")
        assert scale_set is not None
        world.github.queue_jobs(scale_set.id)

        async def busy_runner() -> list[dict[str, Any]]:
            return [r for r in await harness.items(kube, ER) if has_job(r)]

        busy = (await eventually(busy_runner, timeout=TIMEOUT, what="the runner busy with the job"))[0]
        await wait_parked(kube)
        await assert_parked_without_churn(world, kube, controller)

        kept = await required(kube, ER, busy["metadata"]["name"])
        assert kept["metadata"]["uid"] == busy["metadata"]["uid"] and has_job(kept)
        assert not kept["metadata"].get("deletionTimestamp"), "the busy runner is being deleted"
        assert world.github.state.agents[int(kept["status"]["runnerId"])].online
        ers = await required(kube, ERS)
        assert (ers.get("status") or {}).get("phase") == "Outdated"
        records = await harness.journaled(controller.journal, {RecordType.OBSERVED})
        rejected = [
            r
            for r in records
            if r.kind == ER and (r.body["object"].get("status") or {}).get("phase") == "Outdated"
        ]
        assert rejected and {r.uid for r in rejected} != {busy["metadata"]["uid"]}
        deleted = {r.uid for r in records if r.kind == ER and r.body["event"] == "DELETED"}
        assert busy["metadata"]["uid"] not in deleted
