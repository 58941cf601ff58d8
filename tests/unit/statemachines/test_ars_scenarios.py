"""The AutoscalingRunnerSet scenarios of spec §4.1, 4.2, 4.5 and 4.6, as sequences of pure decisions.

Each ``world.step()`` is one ARS reconcile (the spec's R1..Rn). A step of the spec that makes several
Actions calls takes one pass per call here (``statemachines.scalesets``), so the spec's R2 of 4.1-A is
three passes. The EphemeralRunnerSet controller is played by the test writing the status it would
write. Every scenario ends by checking the invariants every pass must keep (``assert_invariants``).
"""

from __future__ import annotations

import pytest

from statemachines import autoscalingrunnersets as ars
from statemachines import desired, naming, tables
from statemachines.effects import (
    ActionsCall,
    ActionsOp,
    CreateObject,
    DeleteObject,
    EmitEvent,
    MergePatch,
    RequeueAfter,
)
from statemachines.phases import ArsPhase
from tests.unit.statemachines.arsworld import (
    ARS_REF,
    ERS_REF,
    World,
    assert_invariants,
    new_ars,
    runner_template,
    running_world,
)

# -- 4.1 C1: observedGeneration instead of the integrity hash ----------------------------------------------


def test_4_1_a_creation_passes_through_pending_once_and_catches_up_in_one_write() -> None:
    world = World()
    world.add(new_ars())
    assert world.generations == (1, 0)

    r1 = world.step()
    assert r1.note == "finalizer added" and world.phase == ""

    r2 = [world.step() for _ in range(3)]  # Pending; GetRunnerScaleSet → CreateRunnerScaleSet → annotate
    assert world.phase == "Pending"
    assert [type(e).__name__ for d in r2 for e in d.effects] == [
        "MergePatch",
        "ActionsCall",
        "EmitEvent",  # "" → Pending, after the effects of the pass
        "ActionsCall",
        "MergePatch",
    ]
    assert world.actions.ops() == [ActionsOp.GET_RUNNER_SCALE_SET, ActionsOp.CREATE_RUNNER_SCALE_SET]
    annotations = world.ars["metadata"]["annotations"]
    assert annotations[naming.ANNOTATION_RUNNER_SCALE_SET_ID] == "42"
    assert world.ars["metadata"]["labels"][naming.LABEL_ORGANIZATION] == "org"
    assert world.ars["spec"]["runnerScaleSetName"] == "arc"
    assert world.generations == (2, 0)  # the defaulted name is a spec write

    r3 = world.step()  # the runner set, and ConfigurationValid now that the scale set is recorded
    assert [type(e) for e in r3.effects] == [CreateObject, MergePatch]
    assert r3.effects[0] == CreateObject(ERS_REF, r3.effects[0].body)  # type: ignore[attr-defined]
    assert list(r3.effects[1].patch["status"]) == ["conditions"]  # type: ignore[attr-defined]
    r4 = world.step()
    assert [type(e) for e in r4.effects] == [CreateObject] and world.listener is not None
    r5 = world.step()
    assert world.phase == "Running" and r5.note == "settled"
    assert world.step().is_noop

    writes = [w for w in world.status_writes() if "phase" in w]  # not the conditions-only write of r3
    assert [w["phase"] for w in writes] == ["Pending", "Running"]
    assert [w["observedGeneration"] for w in writes] == [0, 2]
    assert [(t.from_, t.to) for t in world.transitions()] == [("", "Pending"), ("Pending", "Running")]
    assert naming.ANNOTATION_INTEGRITY_HASH not in world.ars["metadata"]["annotations"]
    assert_invariants(world)


def test_4_1_b_spec_edit_continues_after_the_pending_write() -> None:
    world = running_world(maxRunners=5)
    old_uid = world.listener["metadata"]["uid"]  # type: ignore[index]
    world.edit(ARS_REF, {"spec": {"minRunners": 1}})
    assert world.generations == (3, 2)

    r1 = world.step()
    assert [(t.from_, t.to) for t in r1.transitions] == [("Running", "Pending")]
    assert [type(e) for e in r1.effects] == [MergePatch, DeleteObject, EmitEvent]
    assert r1.effects[1].uid == old_uid  # type: ignore[attr-defined]
    assert world.generations == (3, 2) and world.phase == "Pending"

    world.step()  # R2: the listener is created again
    assert world.listener is not None and world.listener["spec"]["minRunners"] == 1
    world.step()  # R3
    assert world.phase == "Running" and world.generations == (3, 3)
    assert world.revisions == (1, 1)  # the runner spec did not change
    assert_invariants(world)


def test_4_1_c_a_failed_listener_delete_stays_pending_and_catches_up_after_the_retry() -> None:
    world = running_world()
    world.fail_deletes.add(desired.KIND_LISTENER)
    world.edit(ARS_REF, {"spec": {"minRunners": 1}})
    for _ in range(3):
        decision = world.step()
        assert any(isinstance(e, DeleteObject) for e in decision.effects)
        assert world.phase == "Pending" and world.generations == (3, 2)
    world.fail_deletes.clear()
    world.settle()
    assert world.phase == "Running" and world.generations == (3, 3)
    assert_invariants(world)


# -- 4.2 C2: Pending at the moment the listener is deleted ---------------------------------------------------


def test_4_2_a_label_only_edit_restarts_the_listener_through_pending() -> None:
    world = running_world()
    u1 = world.listener["metadata"]["uid"]  # type: ignore[index]
    world.edit(ARS_REF, {"metadata": {"labels": {"team": "x"}}})
    assert world.generations == (2, 2)

    r1 = world.step()
    (patch,) = r1.effects
    assert isinstance(patch, MergePatch) and patch.target == ERS_REF
    assert patch.patch == {"metadata": {"labels": {"team": "x"}}}
    assert r1.transitions == ()

    r2 = world.step()
    assert [t.to for t in r2.transitions] == ["Pending"]
    assert [type(e) for e in r2.effects] == [MergePatch, DeleteObject, EmitEvent]

    r3 = world.step()
    assert [type(e) for e in r3.effects] == [CreateObject]
    u2 = world.listener["metadata"]["uid"]  # type: ignore[index]
    assert world.listener["metadata"]["labels"]["team"] == "x"  # type: ignore[index]

    world.step()
    assert [w["phase"] for w in world.status_writes() if "phase" in w] == ["Pending", "Running"]
    assert u1 != u2
    assert world.generations == (2, 2)
    assert world.revisions == (1, 1)
    assert world.ers["metadata"]["labels"]["team"] == "x"  # type: ignore[index]
    assert_invariants(world)


def test_4_2_b_a_rejected_listener_create_stays_pending() -> None:
    world = running_world()
    world.reject_creates.add(desired.KIND_LISTENER)
    world.edit(ARS_REF, {"metadata": {"labels": {"team": "x"}}})
    world.step(), world.step()
    for _ in range(10):
        decision = world.step()
        assert decision.note == "listener created" and world.listener is None
        assert world.phase == "Pending" and world.generations == (2, 2)
    assert_invariants(world)


# -- 4.5 C7: record Outdated, keep the runner set pinned at zero ---------------------------------------------


def park(world: World, **counters: int) -> None:
    """The ERS controller's verdict: a runner at the applied revision exited 7 (status written by it)."""
    world.set_status(ERS_REF, phase="Outdated", **counters)


def parked_world(**spec: object) -> World:
    world = running_world(**spec)
    world.edit(ERS_REF, {"spec": {"replicas": 3, "patchID": 7}})
    park(world, runningEphemeralRunners=2, currentReplicas=3)
    world.settle()
    assert world.phase == "Outdated"
    return world


def test_4_5_a_park_keeps_the_runner_set_pinned_and_the_listener_away() -> None:
    world = running_world()
    world.edit(ERS_REF, {"spec": {"replicas": 3, "patchID": 7}})
    ers_uid = world.ers["metadata"]["uid"]  # type: ignore[index]
    park(world, runningEphemeralRunners=2, currentReplicas=3)

    r1 = world.step()
    assert [type(e) for e in r1.effects] == [DeleteObject, RequeueAfter]
    assert r1.effects[1] == RequeueAfter(ARS_REF, 5.0)
    assert world.phase == "Running" and r1.transitions == ()  # Outdated only once the listener is gone

    r2 = world.step()
    assert [(t.from_, t.to, t.trigger) for t in r2.transitions] == [
        ("Running", "Outdated", ars.Trigger.RUNNERS_REJECTED_SPEC)
    ]
    status, pin, event = r2.effects
    assert isinstance(event, EmitEvent) and (event.type, event.reason) == ("Warning", "RunnersRejectedSpec")
    assert isinstance(status, MergePatch) and status.target == ARS_REF
    assert pin == MergePatch(ERS_REF, {"spec": {"replicas": 0, "patchID": 0}})

    calls_before = len(world.actions.calls)
    for _ in range(20):
        assert world.step().is_noop
    assert len(world.actions.calls) == calls_before
    assert world.ers is not None and world.ers["metadata"]["uid"] == ers_uid
    assert world.phase == "Outdated" and world.listener is None
    assert (world.ers["spec"]["replicas"], world.ers["spec"]["patchID"]) == (0, 0)
    assert world.revisions == (1, 1)
    assert_invariants(world)


def test_4_5_b_a_late_listener_patch_is_re_pinned() -> None:
    world = parked_world()
    world.edit(ERS_REF, {"spec": {"replicas": 4, "patchID": 9}})
    decision = world.step()
    assert [t.trigger for t in decision.transitions] == [ars.Trigger.PARKED]
    assert (world.ers["spec"]["replicas"], world.ers["spec"]["patchID"]) == (0, 0)  # type: ignore[index]
    assert not world.effects_of(CreateObject)
    assert world.step().is_noop


def test_4_5_c_parking_never_deletes_the_runner_set() -> None:
    world = running_world()
    ers_uid = world.ers["metadata"]["uid"]  # type: ignore[index]
    park(world)
    world.settle()
    for _ in range(20):
        world.step()
    assert world.ers is not None and world.ers["metadata"]["uid"] == ers_uid
    assert not [e for e in world.effects_of(DeleteObject) if e.target == ERS_REF]


# -- 4.6 C7: recovery through a spec update that advances the revision ---------------------------------------


@pytest.mark.parametrize("ers_first", [False, True], ids=["ars-first", "ers-first"])
def test_4_6_a_a_non_template_edit_recovers(ers_first: bool) -> None:
    world = parked_world(maxRunners=5)
    gen = world.generations[0]
    world.edit(ARS_REF, {"spec": {"maxRunners": 6}})

    r1 = world.step()
    assert [(t.from_, t.to, t.trigger) for t in r1.transitions] == [
        ("Outdated", "Pending", ars.Trigger.GENERATION_ADVANCED),
        ("Pending", "Pending", ars.Trigger.RECOVERY_REPUBLISHED),
    ]
    (_, republish, event) = r1.effects  # no drain deferral though the frozen counters say 2 running
    assert isinstance(republish, MergePatch) and republish.target == ERS_REF
    assert isinstance(event, EmitEvent) and event.reason == "GenerationAdvanced"  # Pending → Pending: none
    assert republish.patch == {"spec": {"actionableRevision": 2}}  # runner spec byte-identical: not sent
    assert world.revisions == (2, 1)
    assert RequeueAfter(ARS_REF, 1.0) not in world.effects_of(RequeueAfter)

    if ers_first:  # the ERS controller applies the revision before the ARS runs again
        world.set_status(ERS_REF, appliedActionableRevision=2, phase="Running")
    r2 = world.step()
    (create,) = r2.effects
    assert isinstance(create, CreateObject) and create.target.kind == desired.KIND_LISTENER
    assert create.body["spec"]["maxRunners"] == 6
    if not ers_first:
        world.set_status(ERS_REF, appliedActionableRevision=2, phase="Running")

    world.settle()
    assert world.phase == "Running" and world.generations == (gen + 1, gen + 1)
    assert world.ers["status"]["phase"] == "Running" and world.revisions == (2, 2)  # type: ignore[index]
    assert (world.ers["spec"]["replicas"], world.ers["spec"]["patchID"]) == (0, 0)  # type: ignore[index]
    assert_invariants(world)


def test_4_6_b_a_template_fix_recovers_with_the_new_runner_spec() -> None:
    world = parked_world()
    world.edit(ARS_REF, {"spec": {"template": runner_template(image="fixed")}})
    r1 = world.step()
    republish = r1.effects[-2]
    assert isinstance(republish, MergePatch) and republish.target == ERS_REF
    assert isinstance(r1.effects[-1], EmitEvent)
    assert republish.patch["spec"]["actionableRevision"] == 2
    assert republish.patch["spec"]["ephemeralRunnerSpec"]["spec"]["containers"][0]["image"] == "fixed"
    world.set_status(ERS_REF, appliedActionableRevision=2, phase="Running")
    world.settle()
    assert world.phase == "Running" and world.revisions == (2, 2)
    assert_invariants(world)


def test_4_6_c_a_label_edit_does_not_recover() -> None:
    world = parked_world()
    world.edit(ARS_REF, {"metadata": {"labels": {"team": "x"}, "annotations": {"note": "hello"}}})
    for _ in range(5):
        assert world.step().is_noop
    assert world.phase == "Outdated" and world.listener is None and world.revisions == (1, 1)
    assert_invariants(world)


def test_4_6_d_without_the_recovery_bump_a_listener_runs_against_a_parked_set(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The mutation test the seed guards against: A6 disabled, the invariant check catches it."""

    def never(_: object) -> bool:
        return False

    rows = [
        tables.Row(row.trigger, row.source, row.dest, row.reason, (never,)) if row_id == "A6" else row
        for row_id, row in ars.TABLE
    ]
    monkeypatch.setattr(ars, "MACHINE", tables.PhaseMachine("mutant", ArsPhase, rows))
    world = parked_world()
    world.edit(ARS_REF, {"spec": {"maxRunners": 6}})
    r1 = world.step()
    assert any(isinstance(e, CreateObject) and e.target.kind == desired.KIND_LISTENER for e in r1.effects)
    assert world.revisions == (1, 1) and world.ers["status"]["phase"] == "Outdated"  # type: ignore[index]
    world.settle()  # Running against the parked set, then torn down again: the user's edit is consumed
    assert world.phase == "Outdated" and world.revisions == (1, 1)
    with pytest.raises(AssertionError, match=r"I6\.3"):
        assert_invariants(world)


def test_4_6_e_a_second_rejection_parks_again_without_churn() -> None:
    world = parked_world()
    world.edit(ARS_REF, {"spec": {"maxRunners": 6}})
    world.step()
    world.set_status(ERS_REF, appliedActionableRevision=2, phase="Running")
    world.settle()
    assert world.phase == "Running"
    ers_uid = world.ers["metadata"]["uid"]  # type: ignore[index]
    creates_before = len(world.effects_of(CreateObject))

    park(world)  # the runners built at revision 2 exit 7 as well
    world.settle()
    for _ in range(20):
        assert world.step().is_noop
    parks = [t for t in world.transitions() if t.to == "Outdated" and t.from_ == "Running"]
    assert len(parks) == 2  # the first park, and this one: once each
    assert world.phase == "Outdated" and world.listener is None and world.revisions == (2, 2)
    assert world.ers["metadata"]["uid"] == ers_uid  # type: ignore[index]
    assert len(world.effects_of(CreateObject)) == creates_before
    assert ActionsOp.CREATE_RUNNER_SCALE_SET not in world.actions.ops()
    assert_invariants(world)


def test_4_7_recovery_survives_a_pass_that_returns_early_after_the_pending_write() -> None:
    """§4.7: the edit also moves the runner group, so steps 6–8 end the first passes; no in-memory flag."""
    world = parked_world()
    world.edit(ARS_REF, {"spec": {"maxRunners": 6, "runnerGroup": "blue"}})
    early = [world.step() for _ in range(3)]  # Pending; GetRunnerGroupByName; UpdateRunnerScaleSet → annotate
    assert all(not any(isinstance(e, CreateObject) for e in d.effects) for d in early)
    assert world.phase == "Pending" and world.revisions == (1, 1)
    republish = world.step()
    assert [t.trigger for t in republish.transitions] == [ars.Trigger.RECOVERY_REPUBLISHED]
    assert world.revisions == (2, 1)
    world.set_status(ERS_REF, appliedActionableRevision=2, phase="Running")
    world.settle()
    assert world.phase == "Running"
    assert isinstance(world.actions.calls[-1], ActionsCall)
    assert_invariants(world)
