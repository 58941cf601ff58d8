"""The EphemeralRunner machine: its table, each step of §2.3 as a pure decision, and scenarios run as
sequences of decisions over the dict world of ``runnerworld`` (C5 finalizers, exit code 7, the failure
budget and backoff, pod-create errors, the JIT name collision, deletion)."""

from __future__ import annotations

import copy
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest

from statemachines import effects, ephemeralrunners, kinds, naming, pods, predicates, runnerpods
from statemachines.decisions import Decision
from statemachines.effectresults import EffectResult
from statemachines.phases import ErPhase
from statemachines.snapshots import Snapshot
from tests.unit.statemachines.runnerworld import NAME, NOW, REF, SCALE_SET_ID, RunnerWorld, make_runner

ER = ephemeralrunners
FINALIZER, REGISTRATION = ER.FINALIZERS


def of_type(decision: Decision, kind: type[effects.Effect]) -> list[Any]:
    return [e for e in decision.effects if isinstance(e, kind)]


def requeue(decision: Decision) -> float | None:
    found = of_type(decision, effects.RequeueAfter)
    return found[0].seconds if found else None


def status_patch(decision: Decision) -> dict[str, Any]:
    found = [
        p for p in of_type(decision, effects.MergePatch) if p.subresource == "status" and p.target == REF
    ]
    assert len(found) <= 1, "one status patch per decision"
    written = dict(found[0].patch["status"]) if found else {}
    written.pop("conditions", None)  # test_ephemeralrunner_conditions.py checks those
    return written


def calls(decision: Decision, op: effects.ActionsOp) -> list[effects.ActionsCall]:
    return [c for c in of_type(decision, effects.ActionsCall) if c.op is op]


def ready_world(**status: Any) -> RunnerWorld:
    """A registered runner whose JIT Secret exists and whose status holds its id: the pod step is next."""
    world = RunnerWorld.with_runner(make_runner(status={"runnerId": 100, "runnerName": NAME, **status}))
    world.step()  # creates the JIT secret
    world.step()  # runner id already set: creates the pod
    assert world.get("Secret") is not None and world.get("Pod") is not None
    return world


# -- the table (STYLE §6 item 7) ------------------------------------------------------------------------


def test_every_phase_is_reached_or_initial_except_succeeded() -> None:
    destinations = {row.dest for row in ER.ROWS}
    unreached = {p for p in ErPhase if p not in destinations and p is not ErPhase.NONE}
    # Upstream declares Succeeded and the set counts it, but a runner that exits 0 is deleted instead.
    assert unreached == {ErPhase.SUCCEEDED}


def test_every_row_source_is_a_declared_phase() -> None:
    declared = {p.value for p in ErPhase}
    for row in ER.ROWS:
        assert set(row.source) <= declared, row
        assert row.dest in declared


def test_done_phases_have_no_way_out() -> None:
    for row in ER.ROWS:
        assert not set(row.source) & {p.value for p in ER.DONE}


def test_rows_sharing_a_trigger_and_source_keep_their_order() -> None:
    pairs: dict[tuple[str, str], list[str]] = {}
    for row in ER.ROWS:
        for source in row.source:
            pairs.setdefault((row.trigger, source), []).append(row.dest)
    shared = {k: v for k, v in pairs.items() if len(v) > 1}
    # The three mirror rows have disjoint guards (``mirrored_phase``), so their order decides nothing.
    assert shared == {
        (ER.Trigger.POD_PHASE, s): ["Pending", "Running", "Unknown"]
        for s in ("", "Pending", "Running", "Unknown")
    }


def _pod_snapshot(pod_phase: str, exit_code: int | None = None) -> Snapshot:
    state = {"terminated": {"exitCode": exit_code}} if exit_code is not None else {"running": {}}
    pod = {"status": {"phase": pod_phase, "containerStatuses": [{"name": "runner", "state": state}]}}
    return Snapshot(subject=REF, obj=make_runner(), now=NOW, related={"pod": pod, "secret": None})


@pytest.mark.parametrize(
    ("trigger", "current", "snapshot", "expected"),
    [
        pytest.param(ER.Trigger.POD_PHASE, "", _pod_snapshot("Pending"), "Pending", id="mirror-pending"),
        pytest.param(
            ER.Trigger.POD_PHASE, "Pending", _pod_snapshot("Running"), "Running", id="mirror-running"
        ),
        pytest.param(
            ER.Trigger.POD_PHASE, "Running", _pod_snapshot("Unknown"), "Unknown", id="unknown-is-a-phase"
        ),
        pytest.param(
            ER.Trigger.POD_PHASE, "Unknown", _pod_snapshot("Running"), "Running", id="unknown-back-to-running"
        ),
        pytest.param(
            ER.Trigger.POD_PHASE, "Running", _pod_snapshot("Lost"), "Pending", id="no-phase-is-pending"
        ),
        pytest.param(
            ER.Trigger.RUNNER_OUTDATED, "Running", _pod_snapshot("Failed", 7), "Outdated", id="exit-7"
        ),
        pytest.param(ER.Trigger.RUNNER_OUTDATED, "Running", _pod_snapshot("Failed", 1), None, id="exit-1-no"),
        pytest.param(
            ER.Trigger.RUNNER_OUTDATED, "Outdated", _pod_snapshot("Failed", 7), None, id="done-stays"
        ),
        pytest.param(ER.Trigger.POD_REJECTED, "Pending", _pod_snapshot("Pending"), None, id="no-rejection"),
        pytest.param("to_Running", "Pending", _pod_snapshot("Running"), None, id="no-back-doors"),
    ],
)
def test_fire(trigger: str, current: str, snapshot: Snapshot, expected: str | None) -> None:
    taken = ER.MACHINE.fire(trigger, current, snapshot)
    assert (taken.to if taken else None) == expected


# -- C5: both finalizers in one pass (§4.8, §4.9) -------------------------------------------------------


@pytest.mark.parametrize(
    ("present", "patched"),
    [
        pytest.param([], [FINALIZER, REGISTRATION], id="neither"),
        pytest.param([FINALIZER], [FINALIZER, REGISTRATION], id="only-cleanup"),
        pytest.param([REGISTRATION], [REGISTRATION, FINALIZER], id="only-registration"),
        pytest.param(["example.com/keep"], ["example.com/keep", FINALIZER, REGISTRATION], id="foreign-kept"),
        pytest.param([FINALIZER, REGISTRATION], None, id="both-no-patch"),
    ],
)
def test_finalizers_in_one_patch(present: list[str], patched: list[str] | None) -> None:
    decision = ER.decide(RunnerWorld.with_runner(make_runner(finalizers=present)).snapshot())
    metadata = [p for p in of_type(decision, effects.MergePatch) if "metadata" in p.patch]
    if patched is None:
        assert metadata == []
    else:
        assert [p.patch for p in metadata] == [{"metadata": {"finalizers": patched}}]
        assert metadata[0].resource_version == "1"
    # The pass goes on (C5): the JIT config is asked for in the same decision.
    assert of_type(decision, effects.CreateJitConfigSecret)


def test_i9_1_a_runner_with_no_finalizers_has_both_after_its_first_pass() -> None:
    world = RunnerWorld.with_runner(make_runner(finalizers=[]))
    world.step()
    assert world.runner["metadata"]["finalizers"] == [FINALIZER, REGISTRATION]


def test_a_settled_runner_writes_nothing() -> None:
    world = ready_world()
    world.run_pod("Running", ready=True)
    world.step()
    assert ER.decide(world.snapshot()).effects == ()


# -- the JIT secret and the runner id -------------------------------------------------------------------


def test_happy_path_from_creation_to_deletion() -> None:
    world = RunnerWorld.with_runner(make_runner(finalizers=[]))
    first = world.step()
    jit = of_type(first, effects.CreateJitConfigSecret)[0]
    assert (jit.runner_name, jit.scale_set_id, jit.target.name) == (NAME, SCALE_SET_ID, NAME)
    second = world.step()  # the Secret is observed: runner id from its annotations, then the pod
    assert status_patch(second) == {"runnerId": 100, "runnerName": NAME}
    assert of_type(second, effects.CreateObject)[0].target.kind == "Pod"
    world.run_pod("Pending", running=False)
    third = world.step()
    assert [(t.from_, t.to, t.trigger) for t in third.transitions] == [("", "Pending", "pod_phase")]
    world.run_pod("Running", ready=True)
    fourth = world.step()
    assert [(t.from_, t.to) for t in fourth.transitions] == [("Pending", "Running")]
    assert world.runner["status"]["ready"] is True
    world.run_pod("Succeeded", exit_code=0)
    finished = world.step()  # exit 0: the runner is deleted, never marked Succeeded
    assert [d.target for d in of_type(finished, effects.DeleteObject)] == [REF] and finished.transitions == ()
    assert world.runner["metadata"].get("deletionTimestamp")
    removing = world.step()
    assert [c.args for c in calls(removing, effects.ActionsOp.REMOVE_RUNNER)] == [{"runnerId": 100}]
    world.step()  # removed: pod and secret deleted, both finalizers dropped in one patch
    assert world.get("EphemeralRunner") is None
    assert world.get("Pod") is None and world.get("Secret") is None


def test_the_created_secret_is_waited_for_then_made_again() -> None:
    world = RunnerWorld.with_runner()
    world.step()
    waiting = world.step(secret=True)
    assert requeue(waiting) == ER.SETTLE_SECONDS and not of_type(waiting, effects.CreateJitConfigSecret)
    world.advance(ER.SETTLE_SECONDS)
    assert of_type(ER.decide(world.snapshot(secret=True)), effects.CreateJitConfigSecret)


@pytest.mark.parametrize(
    ("annotations", "jit_result", "expected"),
    [
        pytest.param(
            {naming.ANNOTATION_JIT_RUNNER_ID: "42", naming.ANNOTATION_JIT_RUNNER_NAME: "r"}, None, (42, "r")
        ),
        pytest.param({}, {"ok": True, "runnerId": 43, "runnerName": "s"}, (43, "s"), id="from-the-result"),
        pytest.param({naming.ANNOTATION_JIT_RUNNER_ID: "x"}, None, None, id="unparsable"),
        pytest.param({naming.ANNOTATION_JIT_RUNNER_ID: "0"}, None, None, id="zero"),
        pytest.param({}, None, None, id="foreign-secret"),
    ],
)
def test_runner_id_source(
    annotations: dict[str, str], jit_result: dict[str, Any] | None, expected: tuple[int, str] | None
) -> None:
    secret = {"metadata": {"name": NAME, "uid": "s-1", "annotations": annotations}}
    snapshot = Snapshot(subject=REF, obj=make_runner(), now=NOW, related={"secret": secret, "pod": None})
    jit = EffectResult.from_body(jit_result) if jit_result else None
    assert ER.secret_runner(snapshot, jit) == expected


def test_a_secret_without_a_runner_id_is_deleted_and_made_again() -> None:
    world = RunnerWorld.with_runner()
    world.objects[("Secret", NAME)] = {
        "kind": "Secret",
        "metadata": {"name": NAME, "uid": "old", "annotations": {}},
    }
    decision = world.step()
    assert [d.target.kind for d in of_type(decision, effects.DeleteObject)] == ["Secret"]
    assert requeue(decision) == ER.REQUEUE_SOON
    assert not of_type(decision, effects.CreateObject)


def _colliding_world(scale_set_id: int) -> RunnerWorld:
    world = RunnerWorld.with_runner()
    world.registered[NAME] = (55, scale_set_id)
    return world


def test_jit_name_collision_in_the_same_scale_set_removes_and_retries() -> None:
    world = _colliding_world(SCALE_SET_ID)
    world.step()  # RunnerExists
    lookup = world.step()
    assert [c.args for c in calls(lookup, effects.ActionsOp.GET_RUNNER_BY_NAME)] == [{"name": NAME}]
    remove = world.step()
    assert [c.args for c in calls(remove, effects.ActionsOp.REMOVE_RUNNER)] == [{"runnerId": 55}]
    retry = world.step()
    assert of_type(retry, effects.CreateJitConfigSecret)
    assert world.registered[NAME][0] == 100 and world.get("Secret") is not None


def _interrupted_world(error: str = "Interrupted") -> tuple[RunnerWorld, effects.CreateJitConfigSecret]:
    """A controller stopped (or ran out of time) after the service issued a JIT config (runner 55) but
    before its Secret was written."""
    world = RunnerWorld.with_runner()
    (jit,) = of_type(world.step(), effects.CreateJitConfigSecret)
    world.objects.pop(("Secret", NAME))
    world.registered[NAME] = (55, SCALE_SET_ID)
    world.results[jit.key] = {"ok": False, "error": error, "at": pods.format_time(world.now)}
    return world, jit


@pytest.mark.parametrize("error", ["Interrupted", "Timeout"])
def test_an_interrupted_jit_config_is_looked_up_and_removed_before_another_is_generated(error: str) -> None:
    world, _ = _interrupted_world(error)
    lookup = world.step()
    assert not of_type(lookup, effects.CreateJitConfigSecret)
    assert [c.args for c in calls(lookup, effects.ActionsOp.GET_RUNNER_BY_NAME)] == [{"name": NAME}]
    remove = world.step()
    assert not of_type(remove, effects.CreateJitConfigSecret)
    assert [c.args for c in calls(remove, effects.ActionsOp.REMOVE_RUNNER)] == [{"runnerId": 55}]
    assert of_type(world.step(), effects.CreateJitConfigSecret)
    assert world.registered[NAME][0] not in (0, 55) and world.get("Secret") is not None


def test_an_interrupted_jit_config_that_was_never_issued_is_generated_after_the_lookup() -> None:
    world, _ = _interrupted_world()
    del world.registered[NAME]
    lookup = world.step()
    assert calls(lookup, effects.ActionsOp.GET_RUNNER_BY_NAME)
    assert requeue(world.step()) == ER.REQUEUE_SOON
    world.advance(ER.REQUEUE_SOON)
    assert of_type(world.step(), effects.CreateJitConfigSecret)
    assert NAME in world.registered and world.get("Secret") is not None


def test_an_interrupted_jit_config_whose_secret_was_written_is_used() -> None:
    world = RunnerWorld.with_runner()
    (jit,) = of_type(world.step(), effects.CreateJitConfigSecret)
    world.results[jit.key] = {"ok": False, "error": "Interrupted", "at": pods.format_time(world.now)}
    decision = world.step()
    assert not of_type(decision, effects.CreateJitConfigSecret)
    assert not calls(decision, effects.ActionsOp.GET_RUNNER_BY_NAME)
    assert world.runner["status"]["runnerId"] == 100


def test_jit_name_collision_in_another_scale_set_deletes_the_runner() -> None:
    world = _colliding_world(SCALE_SET_ID + 1)
    world.step()
    world.step()
    decision = world.step()
    assert [d.target for d in of_type(decision, effects.DeleteObject)] == [REF]
    assert world.runner["metadata"].get("deletionTimestamp")


def test_jit_collision_that_vanished_retries_after_a_moment() -> None:
    world = _colliding_world(SCALE_SET_ID)
    world.step()
    world.step()
    del world.registered[NAME]  # the lookup finds nothing...
    world.results.pop(next(k for k in world.results if "GetRunnerByName" in k))
    world.step()
    waiting = world.step()
    assert requeue(waiting) == ER.REQUEUE_SOON
    world.advance(ER.REQUEUE_SOON)
    assert of_type(world.step(), effects.CreateJitConfigSecret)
    assert world.get("Secret") is not None


def test_a_failed_jit_call_is_retried_after_a_window() -> None:
    world = RunnerWorld.with_runner()
    world.jit_errors.append({"error": "ServiceUnavailable", "message": "503"})
    world.step()
    world.advance(2)
    assert requeue(world.step()) == ER.RETRY_SECONDS - 2
    world.advance(3)
    assert of_type(world.step(), effects.CreateJitConfigSecret) and world.get("Secret") is not None


# -- the failure budget and the backoff, over now --------------------------------------------------------


def _failures(count: int, last_seconds_ago: float) -> dict[str, str]:
    last = NOW - timedelta(seconds=last_seconds_ago)
    return {f"pod-{i}": pods.format_time(last - timedelta(seconds=100 * i)) for i in range(count)}


@pytest.mark.parametrize(
    ("count", "ago", "expected"),
    [
        pytest.param(0, 0, "create", id="none"),
        pytest.param(1, 0, 5.0, id="1-just-now"),
        pytest.param(1, 4, 1.0, id="1-after-4s"),
        pytest.param(1, 5, "create", id="1-after-5s"),
        pytest.param(2, 3, 7.0, id="2-after-3s"),
        pytest.param(3, 0, 20.0, id="3"),
        pytest.param(4, 39, 1.0, id="4-after-39s"),
        pytest.param(5, 0, 80.0, id="5"),
        pytest.param(5, 80, "create", id="5-after-80s"),
        pytest.param(6, 1000, "delete", id="over-budget"),
    ],
)
def test_failure_budget_and_backoff(count: int, ago: float, expected: float | str) -> None:
    world = ready_world()
    world.objects.pop(("Pod", NAME))
    world.results.pop(f"create:Pod/default/{NAME}")  # that pod was made long ago
    world.runner["status"]["failures"] = _failures(count, ago)
    decision = ER.decide(world.snapshot())
    if expected == "create":
        assert of_type(decision, effects.CreateObject) and requeue(decision) is None
    elif expected == "delete":
        assert [d.target for d in of_type(decision, effects.DeleteObject)] == [REF]
    else:
        assert requeue(decision) == expected and not of_type(decision, effects.CreateObject)


def test_a_failing_pod_is_recorded_backed_off_and_recreated_until_the_budget_is_spent() -> None:
    world = ready_world()
    for failure in range(1, 7):
        world.run_pod("Running", exit_code=1)
        failed_uid = world.get("Pod")["metadata"]["uid"]  # type: ignore[index]
        decision = world.step()
        assert status_patch(decision)["failures"] == {failed_uid: pods.format_time(world.now)}
        assert world.runner["status"]["ready"] is False
        assert world.get("Pod") is None
        delay = ER.BACKOFF_SECONDS[failure] if failure < len(ER.BACKOFF_SECONDS) else None
        if delay is None:
            break
        assert requeue(world.step()) == delay
        world.advance(delay)
        world.step()  # the pod is made again
        assert world.get("Pod") is not None
        world.advance(1)
    final = world.step()
    assert len(world.runner["status"]["failures"]) == 6
    assert [d.target for d in of_type(final, effects.DeleteObject)] == [REF]
    assert world.runner["status"].get("phase") != "Failed"  # deleted, never marked Failed


def test_a_failure_already_recorded_is_not_recorded_again() -> None:
    world = ready_world()
    world.run_pod("Failed", exit_code=1)
    uid = world.get("Pod")["metadata"]["uid"]  # type: ignore[index]
    world.runner["status"]["failures"] = {uid: pods.format_time(NOW - timedelta(seconds=60))}
    decision = ER.decide(world.snapshot())
    assert status_patch(decision) == {}
    assert [d.target.kind for d in of_type(decision, effects.DeleteObject)] == ["Pod"]


# -- the pod: exit codes -------------------------------------------------------------------------------


@pytest.mark.parametrize("pod_phase", ["Failed", "Running"])
def test_exit_7_marks_outdated_and_removes_the_runner(pod_phase: str) -> None:
    world = ready_world(phase="Running")
    world.run_pod(pod_phase, exit_code=7)
    decision = world.step()
    assert [(t.from_, t.to, t.trigger) for t in decision.transitions] == [
        ("Running", "Outdated", "runner_outdated")
    ]
    assert status_patch(decision) == {
        "phase": "Outdated",
        "reason": "Outdated",
        "message": "Runner is deprecated",
    }
    assert [c.args for c in calls(decision, effects.ActionsOp.REMOVE_RUNNER)] == [{"runnerId": 100}]
    assert not of_type(decision, effects.DeleteObject)
    cleanup = world.step()  # done: pod and secret go, the runner waits for its set
    assert sorted(d.target.kind for d in of_type(cleanup, effects.DeleteObject)) == ["Pod", "Secret"]
    assert world.get("EphemeralRunner") is not None and cleanup.transitions == ()


@pytest.mark.parametrize(
    ("pod_phase", "exit_code", "job", "expected"),
    [
        pytest.param("Failed", 0, False, "delete-runner", id="failed-exit-0"),
        pytest.param("Running", 0, False, "delete-runner", id="exit-0"),
        pytest.param("Failed", None, False, "delete-pod", id="failed-without-termination"),
        pytest.param("Running", 1, False, "delete-pod", id="exit-1"),
        pytest.param("Running", 1, True, "delete-runner+remove", id="exit-1-with-job"),
        pytest.param("Failed", 137, True, "delete-runner+remove", id="killed-with-job"),
    ],
)
def test_pod_endings(pod_phase: str, exit_code: int | None, job: bool, expected: str) -> None:
    world = ready_world(**({"jobId": "j-1"} if job else {}))
    world.run_pod(pod_phase, exit_code=exit_code, running=False)
    decision = ER.decide(world.snapshot())
    deleted = [d.target.kind for d in of_type(decision, effects.DeleteObject)]
    removed = calls(decision, effects.ActionsOp.REMOVE_RUNNER)
    if expected == "delete-pod":
        assert deleted == ["Pod"] and not removed and "failures" in status_patch(decision)
    else:
        assert deleted == ["EphemeralRunner"]
        assert bool(removed) is expected.endswith("+remove")


@pytest.mark.parametrize(("last_exit", "deleted"), [(0, ["EphemeralRunner"]), (1, []), (None, [])])
def test_a_runner_restarted_after_it_exited_0_is_finished(last_exit: int | None, deleted: list[str]) -> None:
    """A pod without restartPolicy Never (upstream's experimental chart) restarts its runner after the
    job: the exit 0 may never be seen as the current state, only as the restarted container's last."""
    world = ready_world(jobId="j-1", jobRunnerId=100)
    world.run_pod("Running", ready=True)
    if last_exit is not None:
        pod = world.get("Pod")
        assert pod is not None
        [status] = pod["status"]["containerStatuses"]
        status.update(
            restartCount=1, lastState={"terminated": {"exitCode": last_exit, "reason": "Completed"}}
        )
    decision = ER.decide(world.snapshot())
    assert [d.target.kind for d in of_type(decision, effects.DeleteObject)] == deleted


def test_a_pod_failing_under_another_runners_job_is_a_pod_failure() -> None:
    """The job was recorded for runner 99 (a predecessor of the name): this runner never ran it, so its
    failed pod is made again, as for an idle runner, instead of the runner being deleted."""
    world = ready_world(jobId="j-1", jobRunnerId=99)
    world.run_pod("Running", exit_code=1, running=False)
    decision = ER.decide(world.snapshot())
    assert [d.target.kind for d in of_type(decision, effects.DeleteObject)] == ["Pod"]
    assert "failures" in status_patch(decision)


def test_a_pod_failing_under_its_own_job_deletes_the_runner() -> None:
    world = ready_world(jobId="j-1", jobRunnerId=100)
    world.run_pod("Running", exit_code=1, running=False)
    assert [d.target.kind for d in of_type(ER.decide(world.snapshot()), effects.DeleteObject)] == [
        "EphemeralRunner"
    ]


def test_a_failed_init_container_counts_as_a_pod_failure() -> None:
    world = ready_world()
    world.run_pod("Pending", running=False)
    world.get("Pod")["status"]["initContainerStatuses"] = [  # type: ignore[index]
        {"name": "init", "state": {"terminated": {"exitCode": 2}}}
    ]
    assert [d.target.kind for d in of_type(ER.decide(world.snapshot()), effects.DeleteObject)] == ["Pod"]


def test_no_runner_status_yet_waits() -> None:
    world = ready_world()
    world.get("Pod")["status"] = {"phase": "Pending"}  # type: ignore[index]
    assert ER.decide(world.snapshot()).effects == ()


@pytest.mark.parametrize(
    ("conditions", "ready"),
    [
        pytest.param(
            [("True", "2026-01-01T00:00:01Z"), ("False", "2026-01-01T00:00:02Z")], False, id="latest-false"
        ),
        pytest.param(
            [("False", "2026-01-01T00:00:01Z"), ("True", "2026-01-01T00:00:02Z")], True, id="latest-true"
        ),
        pytest.param([("True", None)], False, id="no-time"),
    ],
)
def test_i11_1_ready_is_pod_ready(conditions: list[tuple[str, str | None]], ready: bool) -> None:
    world = ready_world(phase="Running", ready=not ready)
    world.run_pod("Running")
    world.get("Pod")["status"]["conditions"] = [  # type: ignore[index]
        {"type": "Ready", "status": s, **({"lastTransitionTime": t} if t else {})} for s, t in conditions
    ]
    world.step()
    assert world.runner["status"]["ready"] is ready is pods.pod_ready(world.get("Pod"))


# -- pod create errors (they arrive as effect results) ---------------------------------------------------


def _pod_create_failed(error: str, message: str = "", *, age: float = 0) -> RunnerWorld:
    world = RunnerWorld.with_runner(
        make_runner(status={"runnerId": 100, "runnerName": NAME}, created=NOW - timedelta(seconds=age))
    )
    world.create_errors["Pod"] = [{"error": error, "message": message}]
    world.step()
    world.step()  # the create fails
    assert world.get("Pod") is None
    return world


@pytest.mark.parametrize(
    ("error", "message"),
    [
        pytest.param("Invalid", 'Pod "x" is invalid: spec.containers[0].image: Required value', id="invalid"),
        pytest.param("Forbidden", "pods is forbidden: violates PodSecurity", id="forbidden"),
    ],
)
def test_a_rejected_pod_fails_the_runner(error: str, message: str) -> None:
    world = _pod_create_failed(error, message)
    decision = world.step()
    assert [(t.to, t.trigger) for t in decision.transitions] == [("Failed", "pod_rejected")]
    assert status_patch(decision) == {
        "phase": "Failed",
        "reason": "InvalidPod",
        "message": f"Failed to create the pod: {message}",
    }
    assert [c.args for c in calls(decision, effects.ActionsOp.REMOVE_RUNNER)] == [{"runnerId": 100}]
    done = ER.decide(world.snapshot())  # Failed is done: only the Secret is left to clean up
    assert [(type(e).__name__, getattr(e, "target", None)) for e in done.effects] == [
        ("DeleteObject", effects.ObjectRef("Secret", "default", NAME))
    ]


QUOTA = 'pods "x" is forbidden: exceeded quota: compute, requested: cpu=2, used: cpu=8, limited: cpu=8'


def test_quota_is_retried_every_30s_while_the_runner_is_young() -> None:
    world = _pod_create_failed("Forbidden", QUOTA)
    world.advance(10)
    assert requeue(world.step()) == 20.0
    world.advance(20)
    assert of_type(world.step(), effects.CreateObject) and world.get("Pod") is not None


def test_quota_after_10_minutes_deletes_the_runner() -> None:
    world = _pod_create_failed("Forbidden", QUOTA, age=601)
    decision = world.step()
    assert [d.target for d in of_type(decision, effects.DeleteObject)] == [REF]
    assert decision.transitions == ()


@pytest.mark.parametrize(
    ("error", "window"),
    [("AlreadyExists", ER.ALREADY_EXISTS_SECONDS), ("InternalError", ER.RETRY_SECONDS)],
)
def test_other_create_errors_are_retried_after_a_window(error: str, window: float) -> None:
    world = _pod_create_failed(error)
    assert requeue(world.step()) == window
    world.advance(window)
    assert of_type(world.step(), effects.CreateObject)


def test_a_created_pod_not_yet_observed_is_waited_for() -> None:
    world = ready_world()
    waiting = ER.decide(world.snapshot(pod=True))
    assert requeue(waiting) == ER.SETTLE_SECONDS and not of_type(waiting, effects.CreateObject)


# -- deletion -------------------------------------------------------------------------------------------


def _deleting(**status: Any) -> RunnerWorld:
    world = ready_world(**status)
    world.runner["metadata"]["deletionTimestamp"] = pods.format_time(NOW)
    return world


def test_deletion_waits_30s_while_a_job_runs() -> None:
    world = _deleting()
    world.remove_errors.append({"error": "JobStillRunning", "message": "busy"})
    world.step()
    world.advance(12)
    waiting = world.step()
    assert requeue(waiting) == 18.0 and not of_type(waiting, effects.MergePatch)
    world.advance(18)
    world.step()  # RemoveRunner again: now it succeeds
    done = world.step()
    patch = [p for p in of_type(done, effects.MergePatch) if "metadata" in p.patch]
    assert [p.patch for p in patch] == [{"metadata": {"finalizers": []}}]
    assert world.get("EphemeralRunner") is None


def test_deletion_of_a_runner_that_never_registered_calls_nothing() -> None:
    world = RunnerWorld.with_runner(make_runner())
    world.runner["metadata"]["deletionTimestamp"] = pods.format_time(NOW)
    decision = world.step()
    assert of_type(decision, effects.ActionsCall) == []
    assert world.get("EphemeralRunner") is None


def test_deletion_between_the_jit_config_and_the_runner_id_removes_the_registration() -> None:
    """Deleted (a scale-down) after its JIT config registered it but before its id reached the status:
    the id the JIT Secret names is removed, or it would stay behind as an offline runner."""
    world = RunnerWorld.with_runner(make_runner())
    world.step()  # the JIT config: the Secret, and the registration
    (runner_id, _) = world.registered[NAME]
    assert "runnerId" not in world.runner["status"]
    world.runner["metadata"]["deletionTimestamp"] = pods.format_time(NOW)
    removing = world.step()
    assert [c.args for c in calls(removing, effects.ActionsOp.REMOVE_RUNNER)] == [{"runnerId": runner_id}]
    world.step()
    assert NAME not in world.registered
    assert world.get("EphemeralRunner") is None


def test_runner_not_found_counts_as_removed() -> None:
    world = _deleting()
    world.registered.clear()
    world.step()
    world.step()
    assert world.get("EphemeralRunner") is None


def test_deletion_cleans_up_hook_pods_and_secrets() -> None:
    hooks = [
        {"name": "runner", "image": "r", "env": [{"name": runnerpods.ENV_CONTAINER_HOOKS, "value": "/h.js"}]}
    ]
    world = RunnerWorld.with_runner(make_runner(containers=hooks, status={"runnerId": 100}))
    world.registered[NAME] = (100, SCALE_SET_ID)
    world.runner["metadata"]["deletionTimestamp"] = pods.format_time(NOW)
    world.step()
    world.step()
    assert [(m.kind, m.label_selector) for m in world.matching_deletes] == [
        ("Pod", f"runner-pod={NAME}"),
        ("Secret", f"runner-pod={NAME}"),
    ]


def test_deletion_without_our_finalizer_does_nothing() -> None:
    world = _deleting()
    world.runner["metadata"]["finalizers"] = [REGISTRATION]
    assert ER.decide(world.snapshot()).effects == ()


# -- the runner pod (§1.6) -------------------------------------------------------------------------------


def test_runner_pod() -> None:
    containers = [
        {"name": "sidecar", "image": "dind", "env": [{"name": "X", "value": "y"}]},
        {"name": "runner", "image": "runner:2", "workingDir": "/w", "env": [{"name": "A", "value": "1"}]},
    ]
    runner = make_runner(containers=containers, proxy=True)
    secret = {"metadata": {"name": NAME, "uid": "secret-1"}}
    pod = runnerpods.runner_pod(runner, secret, build_version="0.13.0")
    assert pod["metadata"]["name"] == NAME and pod["metadata"]["namespace"] == "default"
    assert pod["metadata"]["ownerReferences"] == [
        {
            "apiVersion": kinds.API_VERSION,
            "kind": "EphemeralRunner",
            "name": NAME,
            "uid": "er-uid",
            "controller": True,
            "blockOwnerDeletion": True,
        }
    ]
    labels = pod["metadata"]["labels"]
    assert labels["team"] == "ci"  # the template's labels win over the runner's
    assert labels["actions-ephemeral-runner"] == "True" and labels["pod-template-hash"]
    assert pod["metadata"]["annotations"] == {naming.ANNOTATION_PATCH_ID: "3", "note": "template"}
    sidecar, runner_container = pod["spec"]["containers"]
    assert sidecar == containers[0]
    assert runner_container["env"] == [
        {"name": "A", "value": "1"},
        {
            "name": "ACTIONS_RUNNER_INPUT_JITCONFIG",
            "valueFrom": {"secretKeyRef": {"name": NAME, "key": "jitToken"}},
        },
        {"name": "GITHUB_ACTIONS_RUNNER_EXTRA_USER_AGENT", "value": "actions-runner-controller/0.13.0"},
        {"name": "ACTIONS_RUNNER_RETURN_VERSION_DEPRECATED_EXIT_CODE", "value": "1"},
        {
            "name": "http_proxy",
            "valueFrom": {"secretKeyRef": {"name": "arc-xyz-runner-proxy", "key": "http_proxy"}},
        },
        {
            "name": "no_proxy",
            "valueFrom": {"secretKeyRef": {"name": "arc-xyz-runner-proxy", "key": "no_proxy"}},
        },
    ]
    assert pod["spec"]["restartPolicy"] == "Never"
    assert containers[1]["env"] == [{"name": "A", "value": "1"}], "the template is not mutated"
    assert runnerpods.work_folder(runner) == "/w"


def test_pod_template_hash_follows_the_secret() -> None:
    runner = make_runner()
    one = runnerpods.runner_pod(runner, {"metadata": {"uid": "a"}}, build_version="v")
    two = runnerpods.runner_pod(runner, {"metadata": {"uid": "b"}}, build_version="v")
    assert one["metadata"]["labels"]["pod-template-hash"] != two["metadata"]["labels"]["pod-template-hash"]
    assert one == runnerpods.runner_pod(runner, {"metadata": {"uid": "a"}}, build_version="v")


# -- purity and the pod predicate ------------------------------------------------------------------------


def test_decide_does_not_mutate_the_snapshot_and_replays_the_same() -> None:
    world = ready_world()
    world.run_pod("Running", exit_code=1)
    snapshot = world.snapshot()
    before = copy.deepcopy((snapshot.obj, snapshot.related, snapshot.results))
    assert ER.decide(snapshot) == ER.decide(snapshot)
    assert (snapshot.obj, snapshot.related, snapshot.results) == before


PodEdit = Callable[[dict[str, Any]], None]


def _edit_pod_ip(pod: dict[str, Any]) -> None:
    pod["status"]["podIP"] = "10.0.0.9"


def _edit_node(pod: dict[str, Any]) -> None:
    pod.setdefault("spec", {})["nodeName"] = "node-2"


def _edit_other_condition(pod: dict[str, Any]) -> None:
    pod["status"]["conditions"].append({"type": "PodScheduled", "status": "True"})


def _edit_start_time(pod: dict[str, Any]) -> None:
    pod["status"]["startTime"] = "2026-01-01T12:00:00Z"


def _edit_labels(pod: dict[str, Any]) -> None:
    pod["metadata"]["labels"] = {"extra": "x"}
    pod["metadata"]["resourceVersion"] = "999"


def _edit_empty_lists(pod: dict[str, Any]) -> None:
    pod["status"]["initContainerStatuses"] = []
    pod["status"]["containerStatuses"][0]["state"]["running"]["extra"] = ""


@pytest.mark.parametrize(
    "edit",
    [_edit_pod_ip, _edit_node, _edit_other_condition, _edit_start_time, _edit_labels, _edit_empty_lists],
)
@pytest.mark.parametrize("phase", ["Pending", "Running"])
def test_dropping_a_pod_update_per_the_predicate_never_changes_a_decision(edit: PodEdit, phase: str) -> None:
    world = ready_world(phase=phase)
    world.run_pod("Running", ready=True)
    old = world.snapshot()
    new_pod = copy.deepcopy(world.get("Pod"))
    assert new_pod is not None
    edit(new_pod)
    new = Snapshot(
        old.subject,
        old.obj,
        old.now,
        old.settings,
        {**old.related, "pod": new_pod},
        old.children,
        old.results,
    )
    assert predicates.runner_from_pod(old.related["pod"], new_pod) is False
    assert ER.decide(old) == ER.decide(new)
