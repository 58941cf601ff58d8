"""Decisions for kinds whose served schema prunes ``status.conditions``: no condition is written, and a
condition's Warning goes out once per object and reason."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from statemachines import effects, servedfields
from statemachines.decisions import Decision, Transition
from statemachines.snapshots import Settings, Snapshot

NOW = datetime(2026, 1, 1, tzinfo=UTC)
ARS = effects.ObjectRef("AutoscalingRunnerSet", "default", "arc")
ERS = effects.ObjectRef("EphemeralRunnerSet", "default", "arc")
READY = {"type": "Ready", "status": "False", "reason": "ListenerFailed", "message": "the listener failed"}


def snapshot(*pruned: str, results: dict[str, Any] | None = None) -> Snapshot:
    return Snapshot(
        subject=ARS,
        obj={"metadata": {"name": "arc", "uid": "u"}},
        now=NOW,
        settings=Settings(conditions_pruned=pruned),
        results=results or {},
    )


def status(target: effects.ObjectRef, **fields: Any) -> effects.MergePatch:
    return effects.MergePatch(target, {"status": fields}, subresource="status")


def warning(reason: str, trigger: str = "") -> effects.EmitEvent:
    return effects.EmitEvent(ARS, "u", "Warning", reason, "the listener failed", trigger=trigger)


def test_with_every_kind_keeping_conditions_the_decision_is_the_machines() -> None:
    decision = Decision(ARS, effects=(status(ARS, phase="Running", conditions=[READY]), warning("X")))
    assert servedfields.without_pruned(decision, snapshot()) is decision


def test_conditions_leave_the_status_patches_of_kinds_that_prune_them_only() -> None:
    finalizers = effects.MergePatch(ARS, {"metadata": {"finalizers": ["f"]}})
    decision = Decision(
        ARS,
        effects=(
            status(ARS, phase="Running", conditions=[READY]),
            finalizers,
            status(ERS, conditions=[READY]),
        ),
    )
    kept = servedfields.without_pruned(decision, snapshot("AutoscalingRunnerSet")).effects
    assert kept == (status(ARS, phase="Running"), finalizers, status(ERS, conditions=[READY]))


def test_a_status_patch_of_nothing_but_conditions_goes_so_a_settled_pass_is_a_no_op() -> None:
    decision = Decision(ARS, effects=(status(ARS, conditions=[READY]),))
    assert servedfields.without_pruned(decision, snapshot("AutoscalingRunnerSet")).is_noop


def test_a_conditions_warning_goes_out_once_per_object_and_reason() -> None:
    event = warning("ListenerFailed")
    decision = Decision(ARS, effects=(status(ARS, conditions=[READY]), event))
    first = servedfields.without_pruned(decision, snapshot("AutoscalingRunnerSet"))
    assert first.effects == (event,)
    emitted = {event.key: {"ok": True, "count": 1}}
    again = servedfields.without_pruned(decision, snapshot("AutoscalingRunnerSet", results=emitted))
    assert again.is_noop
    failed = {event.key: {"ok": False, "error": "Forbidden"}}
    retried = servedfields.without_pruned(decision, snapshot("AutoscalingRunnerSet", results=failed))
    assert retried.effects == (event,)


def test_phase_events_and_warnings_no_condition_states_are_kept() -> None:
    phase_event = warning("ListenerFailed", trigger="listener_failed")
    other = warning("RunnerPodFailed")
    transition = Transition(ARS, "Running", "Pending", "listener_failed", "the listener failed")
    decision = Decision(
        ARS, transitions=(transition,), effects=(status(ARS, conditions=[READY]), phase_event, other)
    )
    results = {e.key: {"ok": True} for e in (phase_event, other)}
    kept = servedfields.without_pruned(decision, snapshot("AutoscalingRunnerSet", results=results))
    assert kept.effects == (phase_event, other)
    assert kept.transitions == (transition,)
