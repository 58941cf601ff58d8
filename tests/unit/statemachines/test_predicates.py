"""Update predicates of the owned watches (§4.10): exact projections, drops only when they are equal, and
for ERS←EphemeralRunner, dropping an update never changes what the EphemeralRunnerSet machine decides."""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import pytest

from statemachines import effects, ephemeralrunners, pods, predicates
from statemachines import ephemeralrunnersets as machine
from statemachines.decisions import Decision
from tests.unit.statemachines import runnerworld
from tests.unit.statemachines.ersworld import World, make_ers, make_runner
from tests.unit.statemachines.runnerworld import RunnerWorld

Mutation = Callable[[dict[str, Any]], None]


def changed(obj: dict[str, Any], mutate: Mutation) -> dict[str, Any]:
    new = copy.deepcopy(obj)
    mutate(new)
    return new


def status(**fields: Any) -> Mutation:
    return lambda obj: obj.setdefault("status", {}).update(fields)


def meta(**fields: Any) -> Mutation:
    return lambda obj: obj["metadata"].update(fields)


# == ERS ← EphemeralRunner ================================================================================

RUNNER = make_runner("r", phase="Running", runner_id=3, patch_id=2)


def _own_job(runner: dict[str, Any]) -> None:
    """A job the listener recorded for the runner's own id (it records none on an unregistered runner)."""
    status = runner.setdefault("status", {})
    status.update(jobId="job-1", **({"jobRunnerId": status["runnerId"]} if "runnerId" in status else {}))


# Updates of fields the EphemeralRunnerSet machine does not read (jobId only disables deletions).
DROPPED_RUNNER_UPDATES = [
    pytest.param(status(ready=True), id="ready"),
    pytest.param(status(failures={"pod-uid": "2026-01-01T00:00:00Z"}), id="failures"),
    pytest.param(status(reason="Evicted", message="node pressure"), id="reason-message"),
    pytest.param(status(jobDisplayName="build"), id="jobDisplayName"),
    pytest.param(
        status(
            jobRequestId=5, jobRepositoryName="o/r", jobWorkflowRef="o/r/.github/w.yml@main", workflowRunId=9
        ),
        id="job-fields",
    ),
    pytest.param(status(jobId="job-1"), id="jobId"),
    pytest.param(_own_job, id="its-own-job"),
    pytest.param(meta(resourceVersion="99", managedFields=[{"manager": "x"}]), id="resourceVersion"),
]

DELIVERED_RUNNER_UPDATES = [
    pytest.param(status(phase="Outdated"), id="phase"),
    pytest.param(status(runnerId=4), id="runnerId"),
    pytest.param(status(jobId="job-1", jobRunnerId=9), id="another-runners-job"),
    pytest.param(meta(deletionTimestamp="2026-01-01T00:00:00Z"), id="deletionTimestamp"),
    pytest.param(meta(finalizers=["ephemeralrunner.actions.github.com/finalizer"]), id="finalizer-removed"),
    pytest.param(lambda r: r["metadata"]["finalizers"].reverse(), id="finalizers-reordered"),
    pytest.param(meta(labels={"a": "b"}), id="labels"),
    pytest.param(
        lambda r: r["metadata"]["annotations"].update({"actions.github.com/patch-id": "3"}), id="patch-id"
    ),
    pytest.param(meta(ownerReferences=[{"uid": "x"}]), id="ownerReferences"),
    pytest.param(meta(generation=2), id="generation"),
    pytest.param(lambda r: r["spec"].update(runnerScaleSetId=8), id="spec"),
]


@pytest.mark.parametrize("mutate", DROPPED_RUNNER_UPDATES)
def test_ers_from_runner_drops_fields_the_set_does_not_read(mutate: Mutation) -> None:
    assert not predicates.ers_from_runner(RUNNER, changed(RUNNER, mutate))


@pytest.mark.parametrize("mutate", DELIVERED_RUNNER_UPDATES)
def test_ers_from_runner_delivers_fields_the_set_reads(mutate: Mutation) -> None:
    assert predicates.ers_from_runner(RUNNER, changed(RUNNER, mutate))


@pytest.mark.parametrize(
    ("old", "new"),
    [
        pytest.param(None, RUNNER, id="not-a-mapping"),
        pytest.param(RUNNER, {**RUNNER, "kind": "Pod"}, id="other-kind"),
        pytest.param({**RUNNER, "kind": "Secret"}, RUNNER, id="other-kind-old"),
    ],
)
def test_an_object_of_an_unexpected_type_is_delivered(old: Any, new: Any) -> None:
    assert predicates.ers_from_runner(old, new)


def test_a_missing_kind_is_taken_as_the_expected_one() -> None:
    bare = {k: v for k, v in RUNNER.items() if k != "kind"}
    assert not predicates.ers_from_runner(bare, changed(bare, status(ready=True)))


# Worlds in which the runner plays every part the machine gives a runner.
WORLDS: dict[str, Callable[[dict[str, Any]], World]] = {
    "scale-down-force": lambda r: _world(r, replicas=0, patch_id=0),
    "scale-up-new-patch": lambda r: _world(r, replicas=3, patch_id=5),
    "steady": lambda r: _world(r, replicas=1, patch_id=2),
    "revision-pending": lambda r: _world(r, rev=2, app=1),
    "outdated-branch": lambda r: _world(r, phase="Outdated"),
    "deleting": lambda r: _world(r, deleting=True),
}
RUNNER_PARTS = {
    "idle": make_runner("r", phase="Running", runner_id=3, patch_id=2),
    "pending": make_runner("r", phase="Pending", runner_id=3, patch_id=2),
    "unregistered": make_runner("r", phase="Pending", patch_id=2),
    "outdated": make_runner("r", phase="Outdated", runner_id=3, patch_id=2),
    "finished": make_runner("r", phase="Succeeded", runner_id=3, patch_id=2),
}


def _world(runner: dict[str, Any], *, deleting: bool = False, **ers: Any) -> World:
    w = World(make_ers(**ers))
    if deleting:
        w.obj["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    w.runners["r"] = runner
    w.runners["other"] = make_runner("other", phase="Running", runner_id=9, job=True, created=5, patch_id=2)
    return w


def decide_with(build: Callable[[dict[str, Any]], World], runner: dict[str, Any]) -> Decision:
    return machine.decide(build(copy.deepcopy(runner)).snapshot())


@pytest.mark.parametrize("mutate", DROPPED_RUNNER_UPDATES)
@pytest.mark.parametrize("part", RUNNER_PARTS)
@pytest.mark.parametrize("situation", WORLDS)
def test_dropping_an_update_never_changes_a_decision(situation: str, part: str, mutate: Mutation) -> None:
    old = RUNNER_PARTS[part]
    new = changed(old, mutate)
    assert not predicates.ers_from_runner(old, new)
    before = decide_with(WORLDS[situation], old)
    after = decide_with(WORLDS[situation], new)
    if before == after:
        return
    # Only a job id can matter, and only by taking the runner out of a release: the decision without
    # the update asks the service to release the runner, the service answers JobStillRunning (a result
    # is a fact that wakes the set), and the decision then is the one the update would have given, plus
    # the timer that asks the runner again once the answer's window has passed.
    assert new["status"].get("jobId") and not old["status"].get("jobId")
    (release,) = [e for e in before.effects if isinstance(e, effects.ReleaseRunner) and e.target.name == "r"]
    answered = WORLDS[situation](copy.deepcopy(old))
    at = answered.now.isoformat().replace("+00:00", "Z")
    answered.results[release.key] = {"ok": False, "error": "JobStillRunning", "at": at}
    decided = machine.decide(answered.snapshot())
    requeues = [e for e in decided.effects if isinstance(e, effects.RequeueAfter)]
    assert requeues == [effects.RequeueAfter(decided.subject, machine.BUSY_RECHECK_SECONDS)]
    assert replace(decided, effects=tuple(e for e in decided.effects if e not in requeues)) == after


# == ARS ← EphemeralRunnerSet =============================================================================

ERS = make_ers(rev=2, replicas=2, patch_id=3)


@pytest.mark.parametrize(
    ("mutate", "delivered"),
    [
        pytest.param(status(phase="Outdated"), True, id="phase"),
        pytest.param(status(appliedActionableRevision=1), True, id="appliedActionableRevision"),
        pytest.param(status(currentReplicas=5), True, id="currentReplicas-R"),
        pytest.param(status(pendingEphemeralRunners=1), True, id="pending"),
        pytest.param(status(runningEphemeralRunners=1), True, id="running"),
        pytest.param(status(failedEphemeralRunners=1), True, id="failed"),
        pytest.param(status(somethingElse=1), False, id="unread-status-field"),
        pytest.param(lambda e: e["spec"].update(replicas=3), True, id="spec-replicas"),
        pytest.param(lambda e: e["spec"].update(actionableRevision=3), True, id="spec-revision"),
        pytest.param(
            lambda e: e["spec"]["ephemeralRunnerSpec"]["spec"]["containers"][0].update(env=[]),
            False,
            id="spec-semantically-equal",
        ),
        pytest.param(
            lambda e: e["spec"]["ephemeralRunnerSpec"]["spec"]["containers"][0].update(image="runner:2"),
            True,
            id="spec-image",
        ),
        pytest.param(meta(labels={"a": "b"}), True, id="labels"),
        pytest.param(meta(annotations={}), True, id="annotations"),
        pytest.param(meta(resourceVersion="77"), False, id="resourceVersion"),
    ],
)
def test_ars_from_runner_set(mutate: Mutation, delivered: bool) -> None:
    assert predicates.ars_from_runner_set(ERS, changed(ERS, mutate)) is delivered


# == ER ← Pod =============================================================================================

POD: dict[str, Any] = {
    "kind": "Pod",
    "metadata": {"name": "r", "uid": "pod-uid", "resourceVersion": "5"},
    "spec": {"nodeName": "node-1"},
    "status": {
        "phase": "Running",
        "podIP": "10.0.0.1",
        "startTime": "2026-01-01T00:00:00Z",
        "conditions": [
            {"type": "PodScheduled", "status": "True", "lastTransitionTime": "2026-01-01T00:00:00Z"},
            {"type": "Ready", "status": "True", "lastTransitionTime": "2026-01-01T00:00:05Z"},
        ],
        "containerStatuses": [
            {"name": "runner", "state": {"running": {"startedAt": "2026-01-01T00:00:04Z"}}}
        ],
    },
}


def add_condition(condition: dict[str, Any]) -> Mutation:
    return lambda p: p["status"]["conditions"].append(condition)


def runner_status(**fields: Any) -> Mutation:
    return lambda p: p["status"]["containerStatuses"][0].update(fields)


def sidecar(state: dict[str, Any]) -> Mutation:
    return lambda p: p["status"]["containerStatuses"].append(
        {"name": "dind", "state": state, "restartCount": 4}
    )


# What a kubelet restarting containers writes that the EphemeralRunner machine does not read.
STORM: dict[str, Mutation] = {
    "restartCount": runner_status(restartCount=3),
    "lastState": runner_status(lastState={"terminated": {"exitCode": 1, "reason": "Error"}}),
    "containerID": runner_status(containerID="containerd://2", imageID="runner@sha256:2"),
    "container-ready": runner_status(ready=False, started=False),
    "sidecar": sidecar({"waiting": {"reason": "CrashLoopBackOff", "message": "back-off 20s"}}),
}
# ... and, on a runner container that has not terminated, the flips of its state that keep it so.
LIVE_STORM: dict[str, Mutation] = {
    "crash-loop-waiting": runner_status(
        state={"waiting": {"reason": "CrashLoopBackOff", "message": "back-off 40s restarting failed"}}
    ),
    "running-again": runner_status(state={"running": {"startedAt": "2026-01-01T00:09:00Z"}}),
}


@pytest.mark.parametrize(
    ("mutate", "delivered"),
    [
        pytest.param(status(podIP="10.0.0.2"), False, id="podIP"),
        pytest.param(lambda p: p["spec"].update(nodeName="node-2"), False, id="nodeName"),
        pytest.param(status(startTime="2026-01-01T00:01:00Z"), False, id="startTime"),
        pytest.param(
            add_condition(
                {"type": "Initialized", "status": "True", "lastTransitionTime": "2026-01-01T00:00:09Z"}
            ),
            False,
            id="other-condition",
        ),
        pytest.param(
            add_condition({"type": "Ready", "status": "False", "lastTransitionTime": "2026-01-01T00:00:09Z"}),
            True,
            id="ready-flips",
        ),
        pytest.param(
            add_condition({"type": "Ready", "status": "False"}), False, id="ready-without-time-ignored"
        ),
        pytest.param(
            lambda p: p["status"]["containerStatuses"][0].update(state={"terminated": {"exitCode": 7}}),
            True,
            id="container-state",
        ),
        pytest.param(
            status(initContainerStatuses=[{"name": "init", "state": {"terminated": {"exitCode": 1}}}]),
            True,
            id="init-container-failed",
        ),
        pytest.param(
            status(initContainerStatuses=[{"name": "init", "state": {"terminated": {"exitCode": 0}}}]),
            False,
            id="init-container-completed",
        ),
        pytest.param(status(initContainerStatuses=[]), False, id="init-containers-empty-is-absent"),
        pytest.param(status(containerStatuses=[]), True, id="runner-status-gone"),
        *[pytest.param(mutate, False, id=f"storm-{name}") for name, mutate in STORM.items()],
        pytest.param(status(phase="Failed"), True, id="phase"),
        pytest.param(status(reason="Evicted"), True, id="reason"),
        pytest.param(status(message="gone"), True, id="message"),
        pytest.param(meta(deletionTimestamp="2026-01-01T00:00:00Z"), True, id="deletionTimestamp"),
        pytest.param(meta(uid="pod-uid-2"), True, id="uid"),
        pytest.param(meta(resourceVersion="6", labels={"x": "y"}), False, id="other-metadata"),
    ],
)
def test_runner_from_pod(mutate: Mutation, delivered: bool) -> None:
    assert predicates.runner_from_pod(POD, changed(POD, mutate)) is delivered


def test_a_runner_container_terminating_or_running_again_is_delivered() -> None:
    terminated = changed(POD, runner_status(state={"terminated": {"exitCode": 0}}))
    assert predicates.runner_from_pod(POD, terminated)
    assert predicates.runner_from_pod(terminated, POD)  # restarted after its exit: no exit code any more
    again = changed(terminated, runner_status(state={"terminated": {"exitCode": 1}, "restartCount": 1}))
    assert predicates.runner_from_pod(terminated, again)


@pytest.mark.parametrize("name", LIVE_STORM)
def test_state_flips_of_a_live_runner_container_are_dropped(name: str) -> None:
    assert not predicates.runner_from_pod(POD, changed(POD, LIVE_STORM[name]))


def _runner_world(
    pod_phase: str, *, exit_code: int | None = None, settled: bool = True, **er: Any
) -> RunnerWorld:
    world = RunnerWorld.with_runner(
        runnerworld.make_runner(status={"runnerId": 100, "runnerName": runnerworld.NAME, **er})
    )
    world.step()  # the JIT Secret
    world.step()  # the pod
    world.run_pod(
        pod_phase, exit_code=exit_code, ready=pod_phase == "Running", running=pod_phase != "Pending"
    )
    if settled:
        world.step()
    return world


# Worlds in which the runner's pod plays every part the machine gives a pod.
POD_WORLDS: dict[str, Callable[[], RunnerWorld]] = {
    "pending": lambda: _runner_world("Pending"),
    "running-unmirrored": lambda: _runner_world("Running", settled=False),
    "running": lambda: _runner_world("Running"),
    "exited-0": lambda: _runner_world("Running", exit_code=0, settled=False),
    "exited-1": lambda: _runner_world("Running", exit_code=1, settled=False),
    "exited-7": lambda: _runner_world("Running", exit_code=7, settled=False),
    "failed": lambda: _runner_world("Failed", exit_code=1, settled=False),
    "exited-1-in-a-job": lambda: _runner_world("Running", exit_code=1, settled=False, jobId="job-1"),
    "succeeded": lambda: _runner_world("Succeeded", exit_code=0, settled=False),
}


def _decide_with_pod(
    build: Callable[[], RunnerWorld], mutate: Mutation | None
) -> tuple[dict[str, Any], Decision]:
    world = build()
    pod = world.get("Pod")
    assert pod is not None
    if mutate is not None:
        pod = world.objects[("Pod", runnerworld.NAME)] = changed(pod, mutate)
    return pod, ephemeralrunners.decide(world.snapshot())


@pytest.mark.parametrize("mutation", [*STORM, *LIVE_STORM])
@pytest.mark.parametrize("situation", POD_WORLDS)
def test_dropping_a_pod_update_never_changes_a_runner_decision(situation: str, mutation: str) -> None:
    mutate = {**STORM, **LIVE_STORM}[mutation]
    old, before = _decide_with_pod(POD_WORLDS[situation], None)
    new, after = _decide_with_pod(POD_WORLDS[situation], mutate)
    if predicates.runner_from_pod(old, new):
        assert mutation in LIVE_STORM and pods.exit_code(pods.runner_container_status(old)) is not None
        return
    assert after == before
