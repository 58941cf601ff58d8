"""``readycondition``: the ``Ready`` condition's reason rules and the once-per-problem Warning Event."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from statemachines import readycondition
from statemachines.conditions import Condition
from statemachines.decisions import Transition
from statemachines.effects import ObjectRef
from statemachines.snapshots import Snapshot

REF = ObjectRef("EphemeralRunner", "default", "r")
NOW = datetime(2026, 1, 1, tzinfo=UTC)


def snapshot(conditions: list[dict[str, Any]] | None = None, generation: Any = 2) -> Snapshot:
    obj = {"metadata": {"uid": "u", "generation": generation}, "status": {"conditions": conditions or []}}
    return Snapshot(subject=REF, obj=obj, now=NOW)


def seen(status: str, reason: str, message: str) -> dict[str, Any]:
    return {
        "type": "Ready",
        "status": status,
        "reason": reason,
        "message": message,
        "lastTransitionTime": "x",
    }


def test_a_transition_names_the_reason_then_the_reason_is_kept_while_the_phase_holds() -> None:
    moved = Transition(REF, "Pending", "Running", "pod_phase", "the pod runs")
    assert readycondition.ready(
        snapshot(), "Running", working="Running", transition=moved, message="runs"
    ) == Condition("Ready", True, "PodPhase", "runs")
    later = snapshot([seen("True", "PodPhase", "runs")])
    kept = readycondition.ready(later, "Running", working="Running", transition=None, message="runs")
    assert kept == Condition("Ready", True, "PodPhase", "runs")
    # Another message (another phase with the same status): the phase name.
    other = readycondition.ready(later, "Pending", working="Running", transition=None, message="pending")
    assert other == Condition("Ready", False, "Pending", "pending")
    assert (
        readycondition.ready(snapshot(), "", working="Running", transition=None, message="m").reason
        == "Pending"
    )


def test_a_problem_is_ready_false_whatever_the_phase() -> None:
    got = readycondition.ready(
        snapshot(), "Running", working="Running", transition=None, message="runs", problem=("Bad", "why")
    )
    assert got == Condition("Ready", False, "Bad", "why")


def test_a_warning_only_when_the_observed_condition_does_not_say_it_yet() -> None:
    problem = Condition("Ready", False, "PodCreateFailed", "quota")
    event = readycondition.warning(snapshot(), problem)
    assert event is not None and (event.type, event.reason, event.message, event.uid) == (
        "Warning",
        "PodCreateFailed",
        "quota",
        "u",
    )
    assert readycondition.warning(snapshot([seen("False", "PodCreateFailed", "quota")]), problem) is None
    assert (
        readycondition.warning(snapshot([seen("False", "PodCreateFailed", "other quota")]), problem)
        is not None
    )


def test_the_status_patch_uses_the_generation_and_the_clock() -> None:
    patch = readycondition.status_patch(snapshot(generation=7), [Condition("Ready", True, "Running", "ok")])
    assert patch["conditions"][0]["observedGeneration"] == 7
    assert patch["conditions"][0]["lastTransitionTime"] == "2026-01-01T00:00:00Z"
    assert readycondition.generation(snapshot(generation=True)) == 0


def test_one_line() -> None:
    assert readycondition.one_line("a\n  b\tc") == "a b c"
    assert readycondition.one_line("x" * 600, limit=10) == "x" * 9 + "…"
