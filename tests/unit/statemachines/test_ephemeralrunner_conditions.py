"""The EphemeralRunner's conditions (``Ready``, ``Registered``) in each phase, and the Warning Events of the
failures a user must act on, each emitted once."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from statemachines import effects
from statemachines import ephemeralrunners as ER
from statemachines.decisions import Decision
from statemachines.phases import ErPhase
from tests.unit.statemachines.runnerworld import NAME, NOW, REF, SCALE_SET_ID, RunnerWorld, make_runner


def written(decision: Decision) -> dict[str, dict[str, Any]] | None:
    """The conditions of the decision's status patch by type; None when it writes none."""
    for effect in decision.effects:
        if isinstance(effect, effects.MergePatch) and effect.subresource == "status" and effect.target == REF:
            found = effect.patch["status"].get("conditions")
            return None if found is None else {c["type"]: c for c in found}
    return None


def observed(world: RunnerWorld) -> dict[str, dict[str, Any]]:
    return {c["type"]: c for c in world.runner["status"].get("conditions") or []}


def short(conditions: dict[str, dict[str, Any]]) -> dict[str, tuple[str, str]]:
    return {t: (c["status"], c["reason"]) for t, c in conditions.items()}


def warnings(decision: Decision) -> list[tuple[str, str]]:
    return [
        (e.reason, e.message) for e in decision.effects if isinstance(e, effects.EmitEvent) and not e.trigger
    ]


def test_conditions_through_the_happy_path() -> None:
    world = RunnerWorld.with_runner()
    first = world.step()  # finalizers, the JIT Secret
    conditions = written(first)
    assert conditions is not None and short(conditions) == {
        "Ready": ("False", "Pending"),
        "Registered": ("False", "Registering"),
    }
    assert conditions["Ready"] == {
        "type": "Ready",
        "status": "False",
        "observedGeneration": 1,
        "lastTransitionTime": "2026-01-01T12:00:00Z",
        "reason": "Pending",
        "message": ER.READY_MESSAGES[ErPhase.NONE],
    }
    world.advance(1)
    second = world.step()  # the runner id, the pod
    registered = (written(second) or {})["Registered"]
    assert (registered["status"], registered["reason"]) == ("True", "RunnerRegistered")
    assert registered["message"] == f"Registered as runner 100 ({NAME})"
    assert registered["lastTransitionTime"] == "2026-01-01T12:00:01Z"
    world.advance(1)
    world.run_pod("Pending", running=False)
    pending = world.step()
    assert short(written(pending) or {})["Ready"] == ("False", "PodPhase")
    # Ready stayed False: its transition time holds.
    assert (written(pending) or {})["Ready"]["lastTransitionTime"] == "2026-01-01T12:00:00Z"
    world.advance(1)
    world.run_pod("Running", ready=True)
    running = world.step()
    ready = (written(running) or {})["Ready"]
    assert (ready["status"], ready["reason"], ready["lastTransitionTime"]) == (
        "True",
        "PodPhase",
        "2026-01-01T12:00:03Z",
    )
    assert ready["message"] == ER.READY_MESSAGES[ErPhase.RUNNING]
    # Settled: nothing written, the reason of the transition kept.
    world.advance(60)
    assert ER.decide(world.snapshot()).effects == ()
    assert short(observed(world))["Ready"] == ("True", "PodPhase")
    assert warnings(first) == warnings(second) == warnings(pending) == warnings(running) == []


def test_observed_generation_is_the_generation_read() -> None:
    world = RunnerWorld.with_runner()
    world.step()
    world.runner["metadata"]["generation"] = 3
    conditions = written(world.step()) or {}
    assert {c["observedGeneration"] for c in conditions.values()} == {3}


def test_a_jit_config_failure_is_registered_false_with_one_warning() -> None:
    world = RunnerWorld.with_runner()
    world.jit_errors.append({"error": "ServiceUnavailable", "message": "the service is down\nretry later"})
    world.step()  # the JIT call fails
    world.advance(1)
    waiting = world.step()
    registered = (written(waiting) or {})["Registered"]
    message = "Generating the JIT config failed (ServiceUnavailable): the service is down retry later"
    assert (registered["status"], registered["reason"], registered["message"]) == (
        "False",
        "JitConfigFailed",
        message,
    )
    assert warnings(waiting) == [("JitConfigFailed", message)]
    world.advance(1)
    still = world.step()  # still waiting out the window: the condition already says it
    assert written(still) is None and warnings(still) == []
    world.advance(5)
    world.step()  # the retry succeeds
    world.advance(1)
    recovered = world.step()
    assert short(written(recovered) or {})["Registered"] == ("True", "RunnerRegistered")
    assert warnings(recovered) == []


def test_a_runner_name_in_another_scale_set_warns_once_as_the_runner_is_deleted() -> None:
    world = RunnerWorld.with_runner()
    world.registered[NAME] = (55, SCALE_SET_ID + 1)
    world.step()
    world.step()
    decision = world.step()
    assert [d.target for d in decision.effects if isinstance(d, effects.DeleteObject)] == [REF]
    assert [reason for reason, _ in warnings(decision)] == ["RunnerNameTaken"]
    assert written(decision) is None  # a pass that deletes the runner states nothing
    assert written(world.step()) is None  # nor does the deletion


def _created(**status: Any) -> RunnerWorld:
    world = RunnerWorld.with_runner(make_runner(status={"runnerId": 100, "runnerName": NAME, **status}))
    world.step()
    world.step()
    assert world.get("Pod") is not None
    return world


def test_a_failed_runner_pod_warns_once_per_pod() -> None:
    world = _created()
    for failure in (1, 2):
        world.run_pod("Running", exit_code=1)
        failed = world.step()
        assert [reason for reason, _ in warnings(failed)] == ["RunnerPodFailed"]
        assert f"failure {failure};" in warnings(failed)[0][1]
        assert world.get("Pod") is None
        backing_off = world.step()  # waiting out the backoff: the failure is recorded, no second Event
        assert warnings(backing_off) == [] and written(backing_off) is None
        world.advance(ER.BACKOFF_SECONDS[failure])
        world.step()  # the pod is made again
        assert world.get("Pod") is not None


def test_the_spent_failure_budget_warns_as_the_runner_is_deleted() -> None:
    spent = {f"pod-{i}": "2026-01-01T11:00:00Z" for i in range(ER.MAX_FAILURES + 1)}
    world = RunnerWorld.with_runner(
        make_runner(status={"runnerId": 100, "runnerName": NAME, "failures": spent})
    )
    world.step()  # the JIT Secret
    decision = world.step()
    assert [d.target for d in decision.effects if isinstance(d, effects.DeleteObject)] == [REF]
    assert [reason for reason, _ in warnings(decision)] == ["TooManyPodFailures"]
    assert written(decision) is None


QUOTA = 'pods "x" is forbidden: exceeded quota: compute, requested: cpu=2, used: cpu=8, limited: cpu=8'


def test_a_pod_over_quota_is_not_ready_with_one_warning_until_it_is_made() -> None:
    world = RunnerWorld.with_runner(make_runner(status={"runnerId": 100, "runnerName": NAME}))
    world.create_errors["Pod"] = [{"error": "Forbidden", "message": QUOTA}]
    world.step()
    world.step()  # the create fails
    world.advance(1)
    waiting = world.step()
    ready = (written(waiting) or {})["Ready"]
    assert (ready["status"], ready["reason"]) == ("False", "PodQuotaExceeded")
    assert ready["message"] == f"Creating the runner pod failed (Forbidden): {QUOTA}"
    assert warnings(waiting) == [("PodQuotaExceeded", ready["message"])]
    world.advance(1)
    assert warnings(world.step()) == []
    world.advance(30)
    world.step()  # made
    world.run_pod("Pending", running=False)
    assert short(written(world.step()) or {})["Ready"] == ("False", "PodPhase")


def test_a_pod_over_quota_for_10_minutes_warns_as_the_runner_is_deleted() -> None:
    world = RunnerWorld.with_runner(
        make_runner(status={"runnerId": 100, "runnerName": NAME}, created=NOW - timedelta(seconds=601))
    )
    world.create_errors["Pod"] = [{"error": "Forbidden", "message": QUOTA}]
    world.step()
    world.step()
    decision = world.step()
    assert [reason for reason, _ in warnings(decision)] == ["PodQuotaExceeded"]
    assert written(decision) is None


def test_a_rejected_pod_fails_the_runner_and_done_passes_write_nothing() -> None:
    world = RunnerWorld.with_runner(make_runner(status={"runnerId": 100, "runnerName": NAME}))
    world.create_errors["Pod"] = [{"error": "Invalid", "message": "spec.containers[0].image: Required value"}]
    world.step()
    world.step()
    rejected = world.step()
    ready = (written(rejected) or {})["Ready"]
    assert (ready["status"], ready["reason"]) == ("False", "PodRejected")
    assert ready["message"] == (
        "The runner failed: Failed to create the pod: spec.containers[0].image: Required value"
    )
    # The phase change is the Warning Event (statemachines.phaseevents); the condition adds none.
    assert [(e.type, e.reason) for e in rejected.effects if isinstance(e, effects.EmitEvent)] == [
        ("Warning", "PodRejected")
    ]
    for _ in range(2):
        world.advance(10)
        done = world.step()
        assert written(done) is None and not [e for e in done.effects if isinstance(e, effects.EmitEvent)]
    assert set(observed(world)) == {"Ready", "Registered"}


def test_exit_7_is_outdated_and_not_ready() -> None:
    world = _created()
    world.run_pod("Running", ready=True)
    world.step()
    world.advance(5)
    world.run_pod("Running", exit_code=7)
    decision = world.step()
    ready = (written(decision) or {})["Ready"]
    assert (ready["status"], ready["reason"], ready["message"]) == (
        "False",
        "RunnerOutdated",
        ER.READY_MESSAGES[ErPhase.OUTDATED],
    )
    assert ready["lastTransitionTime"] == "2026-01-01T12:00:05Z"


def test_the_deletion_states_no_conditions() -> None:
    world = _created()
    world.runner["metadata"]["deletionTimestamp"] = "2026-01-01T12:00:00Z"
    for _ in range(3):
        assert written(world.step()) is None
