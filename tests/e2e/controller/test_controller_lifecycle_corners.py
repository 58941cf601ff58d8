"""Corners of the scale set's lifecycle that used to fail silently, end to end: the labels new runners get
under ``--exclude-label-propagation-prefix``, a listener annotated by someone else, and a drain that waited
on a runner which never registered.

Real controller (``harness.Controller``), real journal, emulated cluster with the fake GitHub.
"""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from kubernetes_asyncio import client
from kubernetes_asyncio.client.exceptions import ApiException

from sim.faults import Fault
from sim.world import World
from store.records import RecordType
from tests.e2e.controller import harness, revision_steps
from tests.e2e.controller import scenario_steps as steps
from tests.e2e.controller.harness import CONTROLLER_NS, Controller
from tests.e2e.controller.scenario_steps import AL, ARS, ER, ERS
from tests.helpers import eventually
from tests.kubectl import ok, requires_kubectl

EXCLUDED = "internal.example.com/"
IMAGE = harness.RUNNER_IMAGE  # version 2.330.0
NEWER_VERSION = "2.331.0"


@pytest.fixture
async def world(world_kind: str) -> AsyncIterator[World]:
    async with harness.github_world(world_kind) as w:
        yield w


def excluding(controller: Controller, *prefixes: str) -> Controller:
    """``controller`` run with ``--exclude-label-propagation-prefix`` for each of ``prefixes``."""
    machines = dataclasses.replace(controller.settings.machines, exclude_label_prefixes=prefixes)
    controller.settings = dataclasses.replace(controller.settings, machines=machines)
    return controller


async def test_excluded_label_prefixes_are_dropped_from_the_runner_metadata_of_new_runners(
    world: World, kube: client.ApiClient, tmp_path: Path
) -> None:
    async with excluding(Controller(world, tmp_path), EXCLUDED):
        runner_metadata = {
            "labels": {"team": "a", f"{EXCLUDED}cost-center": "42"},
            "annotations": {f"{EXCLUDED}note": "kept"},
        }
        body = harness.scale_set_body(world, minRunners=1, ephemeralRunnerMetadata=runner_metadata)
        body["metadata"]["labels"][f"{EXCLUDED}owner"] = "platform"
        await harness.create(kube, body)

        async def one_runner() -> list[dict[str, object]]:
            return await harness.items(kube, ER)

        (runner,) = await eventually(one_runner, timeout=steps.TIMEOUT, what="the minimum runner created")
        meta = runner["metadata"]
        assert isinstance(meta, dict)
        assert meta["labels"]["team"] == "a"
        assert not [key for key in meta["labels"] if key.startswith(EXCLUDED)], meta["labels"]
        assert meta["annotations"][f"{EXCLUDED}note"] == "kept"  # annotations are not filtered, as upstream


@requires_kubectl
async def test_an_annotation_someone_else_puts_on_the_listener_does_not_restart_it(
    world: World, kube: client.ApiClient, tmp_path: Path
) -> None:
    kubeconfig = world.write_kubeconfig(tmp_path / "kubectl.kubeconfig")
    async with Controller(world, tmp_path) as controller:
        await steps.start_running(world, kube)
        (listener,) = await steps.listeners(kube)
        name = listener["metadata"]["name"]
        pod = await eventually(
            lambda: listener_pod(kube, name), timeout=steps.TIMEOUT, what="the listener pod"
        )
        mark = await steps.last_seq(controller.journal)

        annotation = "backup.example.com/skip"
        await ok(
            kubeconfig, "annotate", "-n", CONTROLLER_NS, "autoscalinglistener", name, f"{annotation}=true"
        )

        def annotated(obj: dict[str, Any]) -> bool:
            return annotation in ((obj.get("metadata") or {}).get("annotations") or {})

        seen = await eventually(
            lambda: steps.first_observed(controller.journal, AL, annotated, after=mark),
            timeout=steps.TIMEOUT,
            what="the annotated listener observed",
        )
        # A pass that finds nothing to do is not journaled: give the scale set something to record (its
        # runner count, once a runner is made) and read the pass that recorded it, which read the listener.
        await harness.merge_patch(kube, ERS, "arc", {"spec": {"replicas": 1, "patchID": 0}})
        await eventually(
            lambda: ars_decided_after(controller.journal, seen),
            timeout=steps.TIMEOUT,
            what="a scale set pass that read the annotated listener",
        )

        assert not await steps.effects(controller.journal, "DeleteObject", AL, mark), (
            "the listener was deleted"
        )
        (now,) = await steps.listeners(kube)
        assert steps.uid(now) == steps.uid(listener)
        assert steps.uid(await listener_pod(kube, name) or {}) == steps.uid(pod), (
            "the listener pod was recreated"
        )
        assert await harness.phase(kube) == "Running"


async def listener_pod(kube: client.ApiClient, name: str) -> dict[str, Any] | None:
    try:
        pod = await client.CoreV1Api(kube).read_namespaced_pod(name, CONTROLLER_NS)
    except ApiException as exc:
        if exc.status == 404:
            return None
        raise
    found: dict[str, Any] = kube.sanitize_for_serialization(pod)
    return found


async def ars_decided_after(journal: Path, seen: int) -> bool:
    """An ARS decision was journaled that read the journal through ``seen`` or later."""
    return any(int(r.body.get("seq") or 0) >= seen for r in await steps.ars_decisions(journal, seen))


async def test_a_drain_releases_a_runner_that_never_registered_and_the_new_config_secret_is_published(
    world: World, kube: client.ApiClient, tmp_path: Path
) -> None:
    """The config Secret goes, so the runner made for a job cannot get its JIT config and never registers
    (runnerId 0). The fix, a new githubConfigSecret, changes the runner spec: the drain must release that
    runner rather than wait on it, or the spec is never published."""
    async with Controller(world, tmp_path) as controller:
        await steps.start_running(world, kube)
        before = await steps.required(kube, ERS)
        # Runners are held back until the Secret is gone, so the one made for the job has no credentials.
        held = world.inject(Fault(verb="create", path="/ephemeralrunners$", code=500, times=None))
        job = revision_steps.queue_job(world)

        async def scaled_up() -> bool:
            return (await steps.required(kube, ERS))["spec"].get("replicas") == 1

        await eventually(scaled_up, timeout=steps.TIMEOUT, what="the listener asking for a runner")
        await client.CoreV1Api(kube).delete_namespaced_secret(harness.SECRET, harness.NS)
        world.server.faults.remove(held)

        async def unregistered() -> dict[str, Any] | None:
            for runner in await harness.items(kube, ER):
                status = runner.get("status") or {}
                refused = [c for c in status.get("conditions") or () if c.get("reason") == "JitConfigFailed"]
                if refused and not status.get("runnerId"):
                    return runner
            return None

        stuck = await eventually(unregistered, timeout=steps.TIMEOUT, what="a runner whose JIT config failed")
        mark = await steps.last_seq(controller.journal)

        await harness.create_secret(kube, name="github-config-2")
        await harness.merge_patch(kube, ARS, "arc", {"spec": {"githubConfigSecret": "github-config-2"}})

        async def published() -> dict[str, Any] | None:
            ers = await steps.required(kube, ERS)
            runner_spec = ers["spec"]["ephemeralRunnerSpec"]
            revision, applied = steps.revisions(ers)
            fixed = runner_spec["githubConfigSecret"] == "github-config-2" and revision == applied
            return ers if fixed and revision > steps.revisions(before)[0] else None

        await eventually(
            published, timeout=steps.TIMEOUT, what="the new config Secret published to the runners"
        )
        ars = await steps.running_at_generation(kube, "the scale set Running at the new generation")
        assert ars["spec"]["githubConfigSecret"] == "github-config-2"

        async def stuck_gone() -> bool:  # applied once it is deleting; its finalizer goes after
            return await harness.get(kube, ER, stuck["metadata"]["name"]) is None

        await eventually(stuck_gone, timeout=steps.TIMEOUT, what="the unregistered runner gone")
        deleted = await steps.effects(controller.journal, "DeleteObject", ER, mark)
        assert [r.body["target"]["name"] for r in deleted] == [stuck["metadata"]["name"]]

        async def job_taken() -> bool:
            return bool(world.github.state.jobs[job.runner_request_id].runner_name)

        await eventually(job_taken, timeout=steps.TIMEOUT, what="the job taken by a runner of the new spec")


async def test_i6_3_no_listener_after_a_label_only_edit_while_the_runners_reject_the_spec(
    world: World, kube: client.ApiClient, tmp_path: Path
) -> None:
    """Pending after a label-only edit (generation = observedGeneration; the rebuilt listener's create is
    rejected for a while), and meanwhile the runners reject the runner spec in force: the scale set parks
    from Pending. No listener is made against a runner set that is Outdated at its applied revision."""
    async with Controller(world, tmp_path) as controller:
        template = {"spec": {"restartPolicy": "Never", "containers": [{"name": "runner", "image": IMAGE}]}}
        await steps.start_running(world, kube, template=template)
        denied = 'admission webhook "listeners.example.com" denied the request: listeners are frozen'
        world.inject(Fault(verb="create", path="/autoscalinglisteners", code=400, message=denied, times=None))
        mark = await steps.last_seq(controller.journal)
        await harness.merge_patch(kube, ARS, "arc", {"metadata": {"labels": {"team": "x"}}})

        async def create_rejected() -> bool:
            return bool(await steps.failed_results(controller.journal, f"create:{AL}/", after=mark))

        await eventually(
            create_rejected, timeout=steps.TIMEOUT, what="the rebuilt listener's create rejected"
        )
        assert await harness.phase(kube) == "Pending"

        # The service stops accepting the runner version in force; a runner made now exits 7.
        world.github.configure(min_runner_version=NEWER_VERSION)
        await harness.merge_patch(kube, ERS, "arc", {"spec": {"replicas": 1, "patchID": 0}})

        def outdated_at_applied(ers: dict[str, Any]) -> bool:
            revision, applied = steps.revisions(ers)
            return (ers.get("status") or {}).get("phase") == "Outdated" and applied >= revision

        seen = await eventually(
            lambda: steps.first_observed(controller.journal, ERS, outdated_at_applied, after=mark),
            timeout=steps.TIMEOUT,
            what="the runner set Outdated at its applied revision",
        )

        async def parked_with_no_create_in_flight() -> bool:
            # The frozen listener create is lifted only once the scale set has parked on what it saw and
            # no create decided before that is still on its way: one that is would be no decision taken
            # against the Outdated runner set.
            parked = [t for t in await steps.ars_transitions(controller.journal, seen) if t.to == "Outdated"]
            creates = {r.seq for r in await steps.effects(controller.journal, "CreateObject", AL, mark)}
            answered = {
                r.body.get("effectSeq")
                for r in await harness.journaled(controller.journal, {RecordType.EFFECT_RESULT})
            }
            return bool(parked) and creates <= answered

        await eventually(
            parked_with_no_create_in_flight,
            timeout=steps.TIMEOUT,
            what="parked, no listener create in flight",
        )
        world.clear_faults()
        await eventually(
            lambda: steps.pinned_without_listener(kube), timeout=steps.TIMEOUT, what="the scale set parked"
        )

        made = [r for r in await steps.observed(controller.journal, AL, seen) if r.body["event"] == "ADDED"]
        assert not made, "a listener was created against the Outdated runner set"
        gen, obs = steps.generations(await steps.required(kube, ARS))
        assert gen == obs
        parks = [t for t in await steps.ars_transitions(controller.journal, mark) if t.to == "Outdated"]
        assert [(t.from_, t.trigger) for t in parks] == [("Pending", "runners_rejected_spec")]
