"""The AutoscalingRunnerSet's conditions: ``Ready`` follows the phase, ``ConfigurationValid`` says whether
the pass got past the configuration checks, both written once per pass and never by a settled pass."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from statemachines import arsconditions, conditions
from statemachines import autoscalingrunnersets as ars
from statemachines.effects import ActionsCall, MergePatch
from statemachines.pods import format_time
from tests.unit.statemachines.arsworld import (
    ARS_REF,
    ERS_REF,
    NOW,
    World,
    new_ars,
    running_world,
)


def condition(world: World, type_: str) -> dict[str, Any] | None:
    return conditions.find(world.ars.get("status"), type_)


def summary(world: World) -> list[tuple[str, str, str, int]]:
    return [
        (c["type"], c["status"], c["reason"], c["observedGeneration"])
        for c in conditions.observed(world.ars.get("status"))
    ]


def ars_status_patches(world: World) -> list[MergePatch]:
    return [
        e
        for e in world.effects_of(MergePatch)
        if e.target == ARS_REF and e.subresource == "status"  # type: ignore[union-attr]
    ]


def test_a_running_scale_set_is_ready_with_a_valid_configuration() -> None:
    world = running_world()
    generation = world.ars["metadata"]["generation"]
    assert summary(world) == [
        ("Ready", "True", "Settled", generation),
        ("ConfigurationValid", "True", "Valid", generation),
    ]
    ready = condition(world, "Ready")
    assert ready is not None
    assert ready["message"] == dict(ars.TABLE)["A4"].reason
    assert ready["lastTransitionTime"] == format_time(NOW)


def test_a_settled_scale_set_writes_nothing_however_late_it_is_decided() -> None:
    world = running_world()
    world.now = NOW + timedelta(hours=3)
    for _ in range(5):
        assert world.step().is_noop


def test_no_condition_is_written_before_the_scale_set_has_a_phase() -> None:
    world = World()
    world.add(new_ars())
    first = world.step()
    assert first.note == "finalizer added"
    assert not [e for e in first.effects if isinstance(e, MergePatch) and e.subresource == "status"]


def test_a_pass_waiting_for_the_actions_service_states_ready_only() -> None:
    world = World()
    world.add(new_ars())
    world.step()  # finalizer
    asking = world.step()  # Pending, then GetRunnerScaleSet asked: nothing learned about the configuration
    assert any(isinstance(e, ActionsCall) for e in asking.effects)
    assert [c[:3] for c in summary(world)] == [("Ready", "False", "GenerationAdvanced")]


def test_the_conditions_go_in_the_one_status_patch_of_the_pass() -> None:
    world = running_world()
    world.edit(ARS_REF, {"spec": {"minRunners": 1}})  # the listener spec changes: rebuilt via Pending
    decision = world.step()
    patches = [e for e in decision.effects if isinstance(e, MergePatch) and e.target == ARS_REF]
    assert len(patches) == 1
    status = patches[0].patch["status"]
    assert status["phase"] == "Pending"
    assert [(c["type"], c["status"], c["reason"], c["observedGeneration"]) for c in status["conditions"]] == [
        ("Ready", "False", "GenerationAdvanced", 3),
        ("ConfigurationValid", "True", "Valid", 3),
    ]


def test_ready_flips_with_the_phase_and_keeps_its_reason_while_the_phase_holds() -> None:
    world = running_world()
    world.edit(ARS_REF, {"spec": {"minRunners": 1}})
    world.now = NOW + timedelta(minutes=1)
    world.step()  # Running → Pending, the listener deleted
    pending = condition(world, "Ready")
    assert pending is not None and (pending["status"], pending["reason"]) == ("False", "GenerationAdvanced")
    assert pending["lastTransitionTime"] == format_time(world.now)
    world.now = NOW + timedelta(minutes=2)
    created = world.step()  # the listener created again: no transition, Ready unchanged, nothing written
    assert not [e for e in created.effects if isinstance(e, MergePatch) and e.subresource == "status"]
    world.now = NOW + timedelta(minutes=3)
    world.settle()
    ready = condition(world, "Ready")
    assert ready is not None and (ready["status"], ready["reason"]) == ("True", "Settled")
    assert ready["lastTransitionTime"] == format_time(NOW + timedelta(minutes=3))
    assert ready["observedGeneration"] == world.ars["metadata"]["generation"]


def test_an_outdated_scale_set_is_not_ready_because_its_runners_rejected_the_spec() -> None:
    world = running_world()
    world.set_status(ERS_REF, phase="Outdated")
    world.settle()
    assert world.phase == "Outdated"
    assert summary(world)[0][:3] == ("Ready", "False", "RunnersRejectedSpec")
    assert world.step().is_noop


def test_a_scale_set_without_conditions_gets_them_once_with_its_phase_as_the_reason() -> None:
    world = running_world()
    status = dict(world.ars["status"])
    status.pop("conditions")
    world.ars["status"] = status  # written by a controller that kept no conditions
    decision = world.step()
    (patch,) = [e for e in decision.effects if isinstance(e, MergePatch)]
    assert [(c["type"], c["reason"]) for c in patch.patch["status"]["conditions"]] == [
        ("Ready", "Running"),
        ("ConfigurationValid", "Valid"),
    ]
    assert condition(world, "Ready") is not None
    assert (
        condition(world, "Ready")["message"]
        == arsconditions.PHASE_MESSAGES[  # type: ignore[index]
            ars.ArsPhase.RUNNING
        ]
    )
    assert world.step().is_noop


def test_conditions_of_other_writers_are_kept() -> None:
    world = running_world()
    foreign = {
        "type": "Audited",
        "status": "True",
        "reason": "Checked",
        "message": "",
        "lastTransitionTime": "",
    }
    world.set_status(ARS_REF, conditions=[foreign, *conditions.observed(world.ars["status"])])
    assert world.step().is_noop
    world.edit(ARS_REF, {"spec": {"minRunners": 1}})
    world.settle()
    assert conditions.observed(world.ars["status"])[0] == foreign


def test_a_deleting_scale_set_writes_no_conditions() -> None:
    world = running_world()
    world.edit(ARS_REF, {"spec": {"minRunners": 1}})  # a new generation the deleting passes never restate
    world.ars["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    world.decisions.clear()
    world.snapshots.clear()
    world.settle()
    assert world.get("AutoscalingRunnerSet", "default", "arc") is None
    assert not ars_status_patches(world)
