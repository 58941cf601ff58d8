"""The EphemeralRunnerSet's conditions: ``Ready`` per phase and ``RevisionApplied`` through a revision's
cleanup, with the generation and the decision clock, written once and then never again while they hold."""

from __future__ import annotations

import copy
from dataclasses import replace
from datetime import timedelta
from typing import Any

from statemachines import effects
from statemachines import ephemeralrunnersets as machine
from statemachines.decisions import Decision
from statemachines.snapshots import Snapshot
from tests.unit.statemachines.ersworld import NOW, World, make_ers, make_runner

LATER = NOW + timedelta(minutes=5)


def conditions_written(decision: Decision) -> list[dict[str, Any]] | None:
    """The conditions list of the decision's status patch; None when it writes none."""
    for effect in decision.effects:
        if isinstance(effect, effects.MergePatch) and effect.subresource == "status":
            found = effect.patch["status"].get("conditions")
            return None if found is None else list(found)
    return None


def by_type(conditions: list[dict[str, Any]] | None) -> dict[str, dict[str, Any]]:
    return {c["type"]: c for c in conditions or []}


def decide_at(w: World, now: Any) -> Decision:
    decision = machine.decide(replace(w.snapshot(), now=now))
    w.apply(decision)
    return decision


def test_the_first_status_carries_ready_and_revision_applied_at_the_generation() -> None:
    w = World(make_ers(phase=None, rev=2, generation=4))
    decision = w.step()
    written = by_type(conditions_written(decision))
    assert written == {
        "Ready": {
            "type": "Ready",
            "status": "True",
            "observedGeneration": 4,
            "lastTransitionTime": "2026-01-01T00:00:00Z",
            "reason": "ApplyRevision",
            "message": machine.READY_MESSAGES[machine.ErsPhase.RUNNING],
        },
        "RevisionApplied": {
            "type": "RevisionApplied",
            "status": "True",
            "observedGeneration": 4,
            "lastTransitionTime": "2026-01-01T00:00:00Z",
            "reason": "Applied",
            "message": "Runner spec revision 2 is applied (actionableRevision 2)",
        },
    }
    # The same patch as the phase and the applied revision, and the required counter.
    (status,) = [e for e in decision.effects if isinstance(e, effects.MergePatch) and e.subresource]
    assert status.patch["status"]["phase"] == "Running"
    assert status.patch["status"]["appliedActionableRevision"] == 2
    assert "currentReplicas" in status.patch["status"]


def test_a_settled_set_writes_nothing_and_keeps_the_reason_of_its_transition() -> None:
    w = World(make_ers(phase=None))
    w.step()  # applies the revision: phase and conditions
    w.step()  # the counters
    assert w.status["conditions"][0]["reason"] == "ApplyRevision"
    assert w.step().is_noop
    assert decide_at(w, LATER).is_noop


def test_observed_generation_follows_the_generation_and_the_transition_time_holds() -> None:
    w = World(make_ers(phase=None, replicas=0))
    w.step()
    w.listener_patch(replicas=0, patch_id=1)
    decision = decide_at(w, LATER)
    written = by_type(conditions_written(decision))
    assert {c["observedGeneration"] for c in written.values()} == {2}
    assert {c["lastTransitionTime"] for c in written.values()} == {"2026-01-01T00:00:00Z"}


def test_revision_pending_while_the_old_runners_are_cleaned_up_then_applied() -> None:
    w = World(make_ers(rev=1, replicas=1, patch_id=1))
    w.runners["a"] = make_runner("a", phase="Running", runner_id=5, revision=1)
    w.step()  # settles the conditions at revision 1
    assert by_type(w.status["conditions"])["RevisionApplied"]["status"] == "True"
    w.publish(2)
    w.failing.add(5)  # RemoveRunner fails: the cleanup is asked for again
    cleaning = decide_at(w, LATER)
    assert [e.runner_id for e in cleaning.effects if isinstance(e, effects.ReleaseRunner)] == [5]
    pending = by_type(conditions_written(cleaning))
    assert pending["RevisionApplied"] == {
        "type": "RevisionApplied",
        "status": "False",
        "observedGeneration": 2,
        "lastTransitionTime": "2026-01-01T00:05:00Z",
        "reason": "RevisionPending",
        "message": "Cleaning up runners of the old runner spec before applying actionableRevision 2 "
        "(appliedActionableRevision 1)",
    }
    # Ready still holds, so its transition time does not move.
    assert pending["Ready"]["status"] == "True"
    assert pending["Ready"]["lastTransitionTime"] == "2026-01-01T00:00:00Z"
    assert w.status["appliedActionableRevision"] == 1
    # The cleanup again: the same conditions, nothing written.
    again = decide_at(w, LATER)
    assert [e.runner_id for e in again.effects if isinstance(e, effects.ReleaseRunner)] == [5]
    assert conditions_written(again) is None
    w.failing.clear()
    assert conditions_written(decide_at(w, LATER)) is None  # released: the runner is deleting
    applied = decide_at(w, LATER + timedelta(minutes=1))
    revision = by_type(conditions_written(applied))["RevisionApplied"]
    assert (revision["status"], revision["reason"]) == ("True", "Applied")
    assert revision["message"] == "Runner spec revision 2 is applied (actionableRevision 2)"
    assert revision["lastTransitionTime"] == "2026-01-01T00:06:00Z"
    assert w.status["appliedActionableRevision"] == 2


def test_outdated_is_not_ready_and_parking_writes_nothing_more() -> None:
    w = World(make_ers(rev=1, replicas=1, patch_id=1))
    w.runners["a"] = make_runner("a", phase="Running", runner_id=5, revision=1)
    w.step()
    w.set_runner("a", phase="Outdated")
    decision = decide_at(w, LATER)
    assert [t.to for t in decision.transitions] == ["Outdated"]
    ready = by_type(conditions_written(decision))["Ready"]
    assert (ready["status"], ready["reason"]) == ("False", "UpdateStatus")
    assert ready["message"] == machine.READY_MESSAGES[machine.ErsPhase.OUTDATED]
    assert ready["lastTransitionTime"] == "2026-01-01T00:05:00Z"
    # The phase change is a Warning Event (statemachines.phaseevents); the parked passes add none.
    assert [(e.type, e.reason) for e in decision.effects if isinstance(e, effects.EmitEvent)] == [
        ("Warning", "UpdateStatus")
    ]
    for _ in range(3):
        parked = decide_at(w, LATER + timedelta(minutes=1))
        assert conditions_written(parked) is None
        assert not [e for e in parked.effects if isinstance(e, effects.EmitEvent)]


def test_deletion_and_the_finalizer_step_state_no_conditions() -> None:
    w = World(make_ers(phase=None, finalizer=False))
    assert conditions_written(w.step()) is None
    w.step()
    assert conditions_written(w.step()) is None  # settled
    w.obj["metadata"]["deletionTimestamp"] = "2026-01-01T01:00:00Z"
    w.runners["a"] = make_runner("a", phase="Running", runner_id=5)
    assert conditions_written(w.step()) is None


def test_conditions_of_other_writers_are_kept_and_the_snapshot_is_not_mutated() -> None:
    w = World(make_ers(phase=None))
    foreign = {
        "type": "example.com/Audited",
        "status": "True",
        "reason": "Ok",
        "message": "",
        "lastTransitionTime": "2025-01-01T00:00:00Z",
    }
    w.obj["status"]["conditions"] = [foreign]
    snapshot: Snapshot = w.snapshot()
    before = copy.deepcopy(snapshot.obj)
    decision = machine.decide(snapshot)
    assert snapshot.obj == before
    written = conditions_written(decision)
    assert written is not None and written[0] == foreign
    assert [c["type"] for c in written] == ["example.com/Audited", "Ready", "RevisionApplied"]
    assert machine.decide(snapshot) == decision


REFUSED = 'Failed to create the pod: Pod "arc-runner-a" is invalid: spec.containers[0].image: Required value'


def test_a_runner_whose_pod_was_refused_makes_ready_false_with_the_verdict_and_no_pod_name() -> None:
    w = World(make_ers(replicas=1))
    w.add_runner("arc-runner-a", phase="Failed", runner_id=1)
    w.set_runner("arc-runner-a", reason="InvalidPod", message=REFUSED)
    ready = by_type(conditions_written(w.step()))["Ready"]

    assert (ready["status"], ready["reason"]) == ("False", machine.PODS_REFUSED)
    assert "spec.containers[0].image: Required value" in ready["message"]
    assert "arc-runner-a" not in ready["message"] and "\n" not in ready["message"]


def test_refused_pods_of_a_runner_spec_being_replaced_are_not_reported() -> None:
    w = World(make_ers(replicas=1, rev=2, app=1))
    w.add_runner("arc-runner-a", phase="Failed", runner_id=1, revision=1)
    w.set_runner("arc-runner-a", reason="InvalidPod", message=REFUSED)
    written = conditions_written(w.step())

    assert by_type(written)["Ready"]["reason"] != machine.PODS_REFUSED
