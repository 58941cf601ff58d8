"""The §4 scenarios not covered by the other scenario files, end to end: 4.1-A (creation), 4.4-A
(classification of real runners), 4.6-D (the mutation test of the recovery bump), 4.10 (the update
predicates on the owned watches) and 4.12 (semantic equality of the runner spec).

Real controller on a real journal (``harness.Controller``), the emulated cluster, the fake Actions service
and simulated runners. Every wait is on a condition with a deadline.

Scenarios with no end-to-end form here:

* 4.4-E (aliasing) is a property of a pure function, ``RunnersByState.terminated()``: no cluster state or
  controller pass can show whether a list was appended into a group's storage. It is pinned by the unit
  test of I4.5 (``tests/unit/statemachines/test_runners.py``).
* 4.11 (``podReady``): its cases are orderings of a pod's Ready conditions and a Ready condition without
  ``lastTransitionTime``. The simulated kubelet owns the pod status and rewrites it, so those shapes
  cannot be held on a pod long enough for a pass to read them. The one observable effect,
  ``EphemeralRunner.status.ready``, is waited on for the ordinary case (a Ready runner pod makes its
  runner ready) by 4.8-A's settled scale set (``revision_steps.settled``); the cases of the scenario
  are the unit tests of ``pods.pod_ready`` and of I11.1.
"""

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from kubernetes_asyncio import client

from controller.loop import mapping
from controller.loop.mapping import Change
from sim.world import World
from statemachines import autoscalingrunnersets as ars
from statemachines import naming, tables
from statemachines.effects import DeleteObject, ObjectRef
from statemachines.kinds import AL, ARS, ER, ERS
from statemachines.phases import ArsPhase
from store.records import RecordType
from tests.e2e.controller import harness
from tests.e2e.controller import scenario_steps as steps
from tests.e2e.controller.harness import Controller
from tests.e2e.controller.revision_steps import (
    IMAGE,
    Pass,
    Passes,
    create_scale_set,
    effects_on,
    running_with_idle_runners,
    settled,
    status_of,
)
from tests.helpers import eventually

pytestmark = pytest.mark.both_worlds

TIMEOUT = steps.TIMEOUT
HOLD = "example.com/hold"  # a finalizer of someone else's: keeps a deleted runner in the cluster
NOW = "2026-01-01T00:00:00Z"


@pytest.fixture
async def world(world_kind: str) -> AsyncIterator[World]:
    async with harness.github_world(world_kind) as w:
        yield w


def collapse(values: list[Any]) -> list[Any]:
    return [value for value, _ in itertools.groupby(values)]


# -- 4.1-A ---------------------------------------------------------------------------------------------------


async def test_4_1_a_creation_goes_pending_then_running_and_observed_generation_jumps_to_the_final_one(
    world: World, kube: client.ApiClient, tmp_path: Path
) -> None:
    """Phases exactly Pending then Running; observedGeneration 0 → the final generation with no value in
    between; no integrity-hash annotation on any version of the ARS."""
    async with Controller(world, tmp_path) as controller:
        final = await steps.start_running(world, kube)
        generation, observed = steps.generations(final)
        assert observed == generation >= 2, "the scale set name patch moves the generation (R2)"

        async def journaled_running() -> list[dict[str, Any]]:
            versions = [r.body["object"] for r in await steps.observed(controller.journal, ARS)]
            done = versions and steps.generations(versions[-1]) == (generation, generation)
            return versions if done else []

        versions = await eventually(journaled_running, timeout=TIMEOUT, what="the Running ARS journaled")
        phases = [status_of(v).get("phase") for v in versions if status_of(v).get("phase")]
        assert collapse(phases) == ["Pending", "Running"], phases
        assert collapse([steps.generations(v)[1] for v in versions]) == [0, generation]
        for version in versions:
            assert naming.ANNOTATION_INTEGRITY_HASH not in (version["metadata"].get("annotations") or {})

        transitions = await steps.ars_transitions(controller.journal)
        assert steps.phase_path(transitions) == ["", "Pending", "Running"], transitions
        running = [t for t in transitions if t.to == "Running" and t.from_ != "Running"]
        assert [steps.read_generations(t) for t in running] == [(generation, generation)]


# -- 4.4-A ---------------------------------------------------------------------------------------------------


def hand_made_runner(ers: dict[str, Any], name: str, revision: int | None) -> dict[str, Any]:
    """An EphemeralRunner of the runner set as the ERS controller would make one, at ``revision`` (None:
    without the annotation), with no finalizer of ours (a done runner gets none)."""
    annotations = {} if revision is None else {naming.ANNOTATION_ACTIONABLE_REVISION: str(revision)}
    return {
        "apiVersion": f"{harness.GROUP}/{harness.VERSION}",
        "kind": ER,
        "metadata": {
            "name": name,
            "namespace": harness.NS,
            "labels": {
                naming.LABEL_SCALE_SET_NAME: "arc",
                naming.LABEL_SCALE_SET_NAMESPACE: harness.NS,
                naming.LABEL_COMPONENT: "runner",
            },
            "annotations": annotations,
            "ownerReferences": [
                {
                    "apiVersion": f"{harness.GROUP}/{harness.VERSION}",
                    "kind": ERS,
                    "name": "arc",
                    "uid": steps.uid(ers),
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
        },
        "spec": ers["spec"]["ephemeralRunnerSpec"],
    }


def child_names(p: Pass) -> set[str]:
    return {str(c["metadata"]["name"]) for c in p.snapshot.children}


def deleted_runners(p: Pass) -> set[str]:
    return {e.target.name for e in p.decision.effects if isinstance(e, DeleteObject) and e.target.kind == ER}


async def test_4_4_a_runners_are_classified_against_the_applied_revision(
    world: World, kube: client.ApiClient, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The runner set at rev = app = 3 with four Outdated runners: r1 at revision 2, r2 at 3, r3 without
    the annotation, r4 at 3 and being deleted (a finalizer of someone else holds it). The Running-path
    pass deletes the stale ones (r1, r3) and goes Outdated because of r2 alone; r4 is left to its
    deletion. r2 is removed only by the Outdated branch's cleanup afterwards.

    The state is written while the controller is stopped: the revisions by merge patches of the runner
    set's spec and status, the runners by creates and status patches, as a set left so would be found."""
    controller = Controller(world, tmp_path)
    async with controller:
        await steps.start_running(world, kube)
        await running_with_idle_runners(world, kube, 0)
    await harness.merge_patch(kube, ERS, "arc", {"spec": {"actionableRevision": 3}})
    await harness.merge_patch(kube, ERS, "arc", {"status": {"appliedActionableRevision": 3}}, status=True)
    ers = await steps.required(kube, ERS)
    assert steps.revisions(ers) == (3, 3) and status_of(ers).get("phase") == "Running"
    for name, revision in (("r1", 2), ("r2", 3), ("r3", None), ("r4", 3)):
        body = hand_made_runner(ers, name, revision)
        if name == "r4":
            body["metadata"]["finalizers"] = [HOLD]
        await harness.create(kube, body)
        await harness.merge_patch(kube, ER, name, {"status": {"phase": "Outdated"}}, status=True)
    await harness.delete(kube, ER, "r4")
    passes = Passes.install(monkeypatch)

    async with controller:

        async def classified() -> bool:
            left = {r["metadata"]["name"] for r in await harness.items(kube, ER)}
            return left == {"r4"} and status_of(await steps.required(kube, ERS)).get("phase") == "Outdated"

        await eventually(
            classified, timeout=TIMEOUT, what="r1, r2, r3 gone, r4 held, the runner set Outdated"
        )

        ers_passes = passes.since(0, ERS)
        running_path = [
            p for p in ers_passes if status_of(dict(p.snapshot.obj or {})).get("phase") == "Running"
        ]
        verdicts = [p for p in running_path if p.enters("Outdated")]
        assert verdicts, [p.decision.note for p in ers_passes]
        assert all("r2" in child_names(p) for p in verdicts)
        assert set().union(*(deleted_runners(p) for p in running_path)) == {"r1", "r3"}
        assert not any("r4" in deleted_runners(p) for p in ers_passes), "a runner being deleted was deleted"
        # r2 goes only once the set is Outdated (its cleanup deletes every terminated runner).
        first_verdict = ers_passes.index(verdicts[0])
        assert not any("r2" in deleted_runners(p) for p in ers_passes[: first_verdict + 1])
        ers_after = await steps.required(kube, ERS)
        assert steps.revisions(ers_after) == (3, 3)
        held = await steps.required(kube, ER, "r4")
        assert held["metadata"].get("deletionTimestamp") and held["metadata"]["finalizers"] == [HOLD]


# -- 4.6-D ---------------------------------------------------------------------------------------------------


def without_the_recovery_bump(monkeypatch: pytest.MonkeyPatch) -> None:
    """The mutation: row A6 (republish under a new revision while recovering) never fires."""

    def never(_: object) -> bool:
        return False

    rows = [
        tables.Row(row.trigger, row.source, row.dest, row.reason, (never,)) if row_id == "A6" else row
        for row_id, row in ars.TABLE
    ]
    monkeypatch.setattr(ars, "MACHINE", tables.PhaseMachine("without A6", ArsPhase, rows))


async def listeners_created_beside_a_parked_set(journal: Path) -> list[int]:
    """The seqs at which the journal first shows a listener (a uid not seen before) while the runner set
    is Outdated at its applied revision: what I6.3 forbids."""
    ers: dict[str, Any] = {}
    seen: set[str] = set()
    found = []
    for record in await harness.journaled(journal, {RecordType.OBSERVED}):
        if record.kind == ERS and record.name == "arc":
            ers = {} if record.body["event"] == "DELETED" else record.body["object"]
        elif record.kind == AL and record.uid not in seen:
            seen.add(record.uid)
            revision, applied = steps.revisions(ers)
            if status_of(ers).get("phase") == "Outdated" and applied >= revision:
                found.append(record.seq or 0)
    return found


@pytest.mark.parametrize("mutant", [False, True], ids=["seed", "without-the-bump"])
async def test_4_6_d_without_the_recovery_bump_a_listener_runs_against_the_parked_set(
    world: World, kube: client.ApiClient, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mutant: bool
) -> None:
    """Scenario 4.6-A run twice: with the seed's code, and with the revision bump on recovery disabled.

    Without the bump the ARS goes Pending, creates a listener and records Running while the runner set
    stays Outdated at rev = app, pinned at 0 (its Outdated branch never scales), and the next pass parks
    again: the user's edit is consumed and the revision never moved. With the bump none of that happens:
    the listener comes back only after the runner set applied the new revision. The mutant's journal is
    not recorded (its decisions are not the machine's)."""
    world.github.configure(min_runner_version=steps.MINIMUM)
    if mutant:
        without_the_recovery_bump(monkeypatch)
    controller = Controller(world, tmp_path, record_to=None) if mutant else Controller(world, tmp_path)
    async with controller:
        await steps.park(world, kube, controller)
        parked = steps.revisions(await steps.required(kube, ERS))
        assert parked[0] == parked[1] and not await listeners_created_beside_a_parked_set(controller.journal)
        mark = await steps.last_seq(controller.journal)
        # The service stops refusing the runners; the user's retry edits only maxRunners (4.6-A).
        world.github.configure(min_runner_version="0.0.0")
        await harness.merge_patch(kube, ARS, "arc", {"spec": {"maxRunners": 4}})

        if mutant:
            await steps.wait_parked(kube, controller.journal, after=mark)
            path = steps.phase_path(await steps.ars_transitions(controller.journal, mark))
            assert path == ["Outdated", "Pending", "Running", "Outdated"], path
            assert await listeners_created_beside_a_parked_set(controller.journal)
            ers = await steps.required(kube, ERS)
            assert steps.revisions(ers) == parked and status_of(ers).get("phase") == "Outdated"
            gen, obs = steps.generations(await steps.required(kube, ARS))
            assert gen == obs, "the edit was not consumed"
            return

        await steps.running_at_generation(kube, "the scale set recovered")

        async def applied() -> bool:
            ers = await steps.required(kube, ERS)
            return steps.revisions(ers) == (parked[0] + 1,) * 2 and status_of(ers).get("phase") == "Running"

        await eventually(applied, timeout=TIMEOUT, what="the bumped revision applied")
        path = steps.phase_path(await steps.ars_transitions(controller.journal, mark))
        assert path == ["Outdated", "Pending", "Running"], path
        assert not await listeners_created_beside_a_parked_set(controller.journal)


# -- 4.10 ----------------------------------------------------------------------------------------------------


class Deliveries:
    """A read-only spy on ``controller.loop.mapping.keys_for``: each observed change with the keys it asked to
    decide. The keys are returned unchanged, so the controller runs as it would without it."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.seen: list[tuple[Change, list[ObjectRef]]] = []
        original = mapping.keys_for

        def spied(change: Change, projection: Any, *, use_predicates: bool = True) -> list[ObjectRef]:
            keys = original(change, projection, use_predicates=use_predicates)
            self.seen.append((change, keys))
            return keys

        monkeypatch.setattr(mapping, "keys_for", spied)

    async def update(self, kind: str, name: str, has: Any, what: str) -> set[str]:
        """The kinds of the keys the first update of ``kind``/``name`` whose new object satisfies ``has``
        asked to decide, once the controller mapped it."""

        def mapped() -> tuple[set[str]] | None:
            for change, keys in self.seen:
                if change.kind == kind and change.name == name and change.is_update and has(change.new):
                    return ({key.kind for key in keys},)
            return None

        found: tuple[set[str]] = await eventually(mapped, timeout=TIMEOUT, what=what)
        return found[0]


async def patch_status(kube: client.ApiClient, kind: str, name: str, status: dict[str, Any]) -> None:
    if kind == "Pod":
        await client.CoreV1Api(kube).patch_namespaced_pod_status(  # type: ignore[call-arg]
            name, harness.NS, {"status": status}, _content_type="application/merge-patch+json"
        )
    else:
        await harness.merge_patch(kube, kind, name, {"status": status}, status=True)


async def test_4_10_an_owned_update_reaches_the_owner_only_when_a_field_it_reads_changed(
    world: World, kube: client.ApiClient, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With a settled scale set (one idle runner): a runner's ``jobDisplayName`` does not wake the runner
    set, its phase does; a pod's start time or a restart of its runner container (restartCount,
    lastState) does not wake its runner, its Ready condition does; the runner set's conditions do not wake
    the scale set, its ``currentReplicas`` does ([R]); the creation of an owned object always wakes its
    owner. The object itself is always decided on its own update."""
    deliveries = Deliveries(monkeypatch)
    async with Controller(world, tmp_path):
        await create_scale_set(world, kube, minRunners=1)
        await settled(world, kube, 1)
        (runner,) = await harness.items(kube, ER)
        name = runner["metadata"]["name"]

        created = [
            {key.kind for key in keys}
            for change, keys in deliveries.seen
            if change.kind == ER and change.name == name and change.old is None
        ]
        assert created and all(ERS in kinds for kinds in created), created

        def status_has(field: str, value: Any) -> Any:
            return lambda obj: status_of(obj).get(field) == value

        await patch_status(kube, ER, name, {"jobDisplayName": "build"})
        kinds = await deliveries.update(
            ER, name, status_has("jobDisplayName", "build"), "the job name mapped"
        )
        assert kinds == {ER}

        await patch_status(kube, ER, name, {"phase": "Pending"})
        kinds = await deliveries.update(ER, name, status_has("phase", "Pending"), "the runner phase mapped")
        assert kinds == {ER, ERS}

        # The IP is not even journaled (``watchers.slimming``); the start time is, for listener pods.
        started = "2099-01-01T00:00:00Z"
        await patch_status(kube, "Pod", name, {"podIP": "10.9.9.9", "startTime": started})
        kinds = await deliveries.update(
            "Pod", name, status_has("startTime", started), "the start time mapped"
        )
        assert kinds == set()

        # A restart as a crash-looping kubelet reports it: count, last exit, new container; running again.
        pod = await client.CoreV1Api(kube).read_namespaced_pod(name, harness.NS)
        restarted = kube.sanitize_for_serialization(pod.status.container_statuses)
        restarted[0].update(
            restartCount=3,
            lastState={"terminated": {"exitCode": 1, "reason": "Error", "finishedAt": NOW}},
            containerID="containerd://restarted",
        )
        await patch_status(kube, "Pod", name, {"containerStatuses": restarted})
        kinds = await deliveries.update(
            "Pod",
            name,
            lambda p: [c.get("restartCount") for c in status_of(p).get("containerStatuses", [])] == [3],
            "restart mapped",
        )
        assert kinds == set()

        not_ready = [{"type": "Ready", "status": "False", "lastTransitionTime": "2099-01-01T00:00:00Z"}]
        await patch_status(kube, "Pod", name, {"conditions": not_ready})

        def flipped(pod: Any) -> bool:  # kube-apiserver writes the condition's lastProbeTime out as null
            conditions = status_of(pod).get("conditions") or []
            return [{k: v for k, v in c.items() if v is not None} for c in conditions] == not_ready

        kinds = await deliveries.update("Pod", name, flipped, "Ready flip mapped")
        assert kinds == {ER}

        extra = {
            "type": "Example",
            "status": "True",
            "reason": "Test",
            "message": "x",
            "lastTransitionTime": NOW,
        }
        conditions = [*status_of(await steps.required(kube, ERS)).get("conditions", []), extra]
        await patch_status(kube, ERS, "arc", {"conditions": conditions})

        def with_extra(obj: Any) -> bool:
            return extra["type"] in {c.get("type") for c in status_of(obj).get("conditions", [])}

        kinds = await deliveries.update(ERS, "arc", with_extra, "the runner set conditions mapped")
        assert kinds == {ERS}

        await patch_status(kube, ERS, "arc", {"currentReplicas": 7})
        kinds = await deliveries.update(ERS, "arc", status_has("currentReplicas", 7), "the counter mapped")
        assert kinds == {ERS, ARS}


# -- 4.12 ----------------------------------------------------------------------------------------------------


async def test_4_12_an_equivalent_template_rewrite_does_not_bump_the_revision(
    world: World, kube: client.ApiClient, tmp_path: Path
) -> None:
    """The ARS template rewritten into an equivalent form ("1000m" → "1", "1Gi" → "1024Mi", empty lists
    and maps → absent) moves the generation, and the ARS goes Pending then Running at it, but the
    runner-spec revision stays, nothing is published on the runner set and the runner is not replaced."""
    body = harness.scale_set_body(world, minRunners=1)
    pod_spec = body["spec"]["template"]["spec"]
    pod_spec.update(volumes=[], nodeSelector={})
    pod_spec["containers"][0].update(
        image=IMAGE, env=[], resources={"limits": {"cpu": "1000m", "memory": "1Gi"}, "requests": {}}
    )
    rewritten = {
        "containers": [
            {"name": "runner", "image": IMAGE, "resources": {"limits": {"cpu": "1", "memory": "1024Mi"}}}
        ],
        "volumes": None,
        "nodeSelector": None,
    }
    async with Controller(world, tmp_path) as controller:
        await harness.create(kube, body)
        (runner,) = await running_with_idle_runners(world, kube, 1)
        before_ers = await steps.required(kube, ERS)
        generation, _ = steps.generations(await steps.required(kube, ARS))
        mark = await steps.last_seq(controller.journal)

        await harness.merge_patch(kube, ARS, "arc", {"spec": {"template": {"spec": rewritten}}})

        async def caught_up() -> dict[str, Any] | None:
            found = await steps.required(kube, ARS)
            gen, obs = steps.generations(found)
            running = status_of(found).get("phase") == "Running" and gen == obs > generation
            return found if running and len(await steps.listeners(kube)) == 1 else None

        after = await eventually(
            caught_up, timeout=TIMEOUT, what="the ARS Running at the rewritten generation"
        )
        stored = after["spec"]["template"]["spec"]
        assert stored["containers"][0]["resources"]["limits"] == {"cpu": "1", "memory": "1024Mi"}
        transitions = await steps.ars_transitions(controller.journal, mark)
        assert steps.phase_path(transitions) == ["Running", "Pending", "Running"], transitions

        ers = await steps.required(kube, ERS)
        assert steps.revisions(ers) == steps.revisions(before_ers) == (1, 1)
        spec_patches = [
            e
            for e in await effects_on(controller.journal, ERS, "arc")
            if e["type"] == "MergePatch" and "actionableRevision" in (e["patch"].get("spec") or {})
        ]
        assert not spec_patches, spec_patches
        assert [steps.uid(r) for r in await harness.items(kube, ER)] == [steps.uid(runner)]
        assert not world.github.calls_to("DELETE", "agents")
