"""The AutoscalingRunnerSet machine: its table (STYLE §6 item 7), its guards, and each step of §2.1 as
pure decisions over hand-built worlds (scenarios and invariants live in test_ars_scenarios.py and
test_ars_invariants.py)."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import pytest

from statemachines import autoscalingrunnersets as ars
from statemachines import desired, effects, naming
from statemachines.effects import (
    ActionsCall,
    ActionsOp,
    CreateObject,
    DeleteObject,
    EmitEvent,
    MergePatch,
    ObjectRef,
    RequeueAfter,
)
from statemachines.phases import ArsPhase
from statemachines.snapshots import Snapshot
from tests.unit.statemachines.arsworld import (
    ARS_REF,
    ERS_REF,
    NOW,
    NS,
    SETTINGS,
    World,
    new_ars,
    running_world,
)

# -- the table ----------------------------------------------------------------------------------------------


def test_every_phase_is_a_destination_or_the_initial_phase() -> None:
    destinations = {row.dest for _, row in ars.TABLE}
    assert set(ArsPhase) - destinations <= {ArsPhase.NONE}
    # Outdated in particular is assigned by a row (the phase upstream declared and never wrote, seed C7).
    assert ArsPhase.OUTDATED in destinations


def test_every_row_source_is_a_declared_phase() -> None:
    for row_id, row in ars.TABLE:
        assert set(row.source) <= set(ArsPhase), row_id
        assert row.dest in set(ArsPhase), row_id
        assert isinstance(row.trigger, ars.Trigger), row_id


def test_rows_sharing_a_trigger_and_source_are_in_a_pinned_order() -> None:
    # transitions takes the first row whose guards pass: pin every (trigger, source) pair served by more
    # than one row. The table is written so none is, which makes the order of rows irrelevant.
    served = Counter((row.trigger, source) for _, row in ars.TABLE for source in row.source)
    shared = {pair: n for pair, n in served.items() if n > 1}
    assert shared == {}
    order = [row_id for row_id, _ in ars.TABLE]
    assert order == ["A1", "A2", "A3", "A3", "A4", "A5", "A6", "A7", *["A8"] * len(ArsPhase)]


def test_outdated_is_left_only_by_a_new_generation_or_deletion() -> None:
    # I6.1 as a property of the table.
    exits = [(row_id, row) for row_id, row in ars.TABLE if ArsPhase.OUTDATED in row.source]
    leaving = {row_id for row_id, row in exits if row.dest != ArsPhase.OUTDATED}
    assert leaving == {"A2"}
    a2 = dict(ars.TABLE)["A2"]
    assert a2.guards == (ars.generation_ahead,)
    deletion = [row for row_id, row in exits if row_id == "A8"]
    assert [row.guards for row in deletion] == [(ars.deletion_requested,)]


def test_outdated_is_entered_by_the_teardown_or_stays_parked() -> None:
    # The seed's model tears down only from Running (§3.1, "guards worth testing"); arcsm also parks from
    # Pending at an applied generation, which is what keeps I6.3 after a label-only edit. The guards keep
    # a Pending pass with a new generation out: it is recovering, never torn down.
    into = {
        row_id: row.source for row_id, row in ars.TABLE if row.dest == ArsPhase.OUTDATED and row_id != "A8"
    }
    assert into == {
        "A5": (ArsPhase.NONE, ArsPhase.PENDING, ArsPhase.RUNNING),
        "A7": (ArsPhase.OUTDATED,),
    }
    a5 = dict(ars.TABLE)["A5"]
    assert a5.guards == (ars.runner_set_outdated_at_applied_revision, ars.not_recovering)


# -- guards over hand-built snapshots ------------------------------------------------------------------------


def snap(
    *, generation: int = 2, observed: int = 2, ers: dict[str, Any] | None = None, listener: bool = True
) -> Snapshot:
    obj = {"metadata": {"name": "arc", "generation": generation}, "status": {"observedGeneration": observed}}
    related: dict[str, Any] = {ars.ERS: ers, ars.LISTENER: {"metadata": {"name": "l"}} if listener else None}
    return Snapshot(ARS_REF, obj, NOW, SETTINGS, related)


def ers_at(rev: int, app: int, phase: str = "Outdated", running: int = 0, pending: int = 0) -> dict[str, Any]:
    return {
        "spec": {"actionableRevision": rev},
        "status": {
            "appliedActionableRevision": app,
            "phase": phase,
            "runningEphemeralRunners": running,
            "pendingEphemeralRunners": pending,
        },
    }


@pytest.mark.parametrize(
    ("snapshot", "outdated_at_applied", "is_recovering"),
    [
        pytest.param(snap(ers=None), False, False, id="no-runner-set"),
        pytest.param(snap(ers=ers_at(1, 1, "Running")), False, False, id="running"),
        pytest.param(snap(ers=ers_at(1, 1)), True, False, id="outdated-at-applied"),
        pytest.param(snap(ers=ers_at(2, 3)), True, False, id="applied-ahead"),
        pytest.param(snap(ers=ers_at(2, 1)), False, False, id="verdict-predates-spec"),
        pytest.param(snap(generation=5, observed=4, ers=ers_at(1, 1)), True, True, id="spec-update-recovers"),
        pytest.param(
            snap(generation=5, observed=4, ers=ers_at(2, 1)), False, False, id="already-republished"
        ),
    ],
)
def test_outdated_and_recovering_guards(
    snapshot: Snapshot, outdated_at_applied: bool, is_recovering: bool
) -> None:
    assert ars.runner_set_outdated_at_applied_revision(snapshot) is outdated_at_applied
    assert ars.recovering(snapshot) is is_recovering


@pytest.mark.parametrize(
    ("trigger", "current", "snapshot", "expected"),
    [
        pytest.param(
            ars.Trigger.GENERATION_ADVANCED, "", snap(generation=1, observed=0), "Pending", id="A1-new"
        ),
        pytest.param(ars.Trigger.GENERATION_ADVANCED, "Running", snap(generation=3), "Pending", id="A1"),
        pytest.param(ars.Trigger.GENERATION_ADVANCED, "Running", snap(), None, id="A1-no-new-generation"),
        pytest.param(
            ars.Trigger.GENERATION_ADVANCED, "Outdated", snap(generation=5, observed=4), "Pending", id="A2"
        ),
        pytest.param(ars.Trigger.GENERATION_ADVANCED, "Outdated", snap(), None, id="A2-label-edit"),
        pytest.param(
            ars.Trigger.RUNNERS_DRAINING, "Running", snap(ers=ers_at(1, 1, "Running", 2)), "Pending", id="A3"
        ),
        pytest.param(
            ars.Trigger.RUNNERS_DRAINING,
            "Pending",
            snap(generation=5, observed=4, ers=ers_at(1, 1, "Outdated", 2)),
            None,
            id="A3-no-drain-while-recovering",
        ),
        pytest.param(ars.Trigger.SETTLED, "Pending", snap(ers=ers_at(1, 1, "Running")), "Running", id="A4"),
        pytest.param(
            ars.Trigger.SETTLED,
            "Pending",
            snap(ers=ers_at(1, 1, "Running"), listener=False),
            None,
            id="A4-no-listener",
        ),
        pytest.param(
            ars.Trigger.RUNNERS_REJECTED_SPEC, "Running", snap(ers=ers_at(1, 1)), "Outdated", id="A5"
        ),
        pytest.param(
            ars.Trigger.RUNNERS_REJECTED_SPEC, "Pending", snap(ers=ers_at(1, 1)), "Outdated", id="A5-pending"
        ),
        pytest.param(
            ars.Trigger.RUNNERS_REJECTED_SPEC,
            "Pending",
            snap(generation=3, ers=ers_at(1, 1)),
            None,
            id="A5-not-while-recovering",
        ),
        pytest.param(
            ars.Trigger.RUNNERS_REJECTED_SPEC, "Running", snap(ers=ers_at(2, 1)), None, id="A5-rev-ahead"
        ),
        pytest.param(
            ars.Trigger.RECOVERY_REPUBLISHED,
            "Pending",
            snap(generation=5, observed=4, ers=ers_at(1, 1)),
            "Pending",
            id="A6",
        ),
        pytest.param(ars.Trigger.PARKED, "Outdated", snap(), "Outdated", id="A7"),
        pytest.param(ars.Trigger.PARKED, "Running", snap(), None, id="A7-only-outdated"),
    ],
)
def test_rows_fire_from_their_sources_when_their_guards_pass(
    trigger: ars.Trigger, current: str, snapshot: Snapshot, expected: str | None
) -> None:
    taken = ars.MACHINE.fire(trigger, current, snapshot)
    assert (taken.to if taken else None) == expected


# -- steps 1–3: deletion, version gate, finalizer ------------------------------------------------------------


def test_the_first_pass_adds_the_finalizer_and_returns() -> None:
    world = World()
    world.add(new_ars())
    decision = world.step()
    (patch,) = decision.effects
    assert isinstance(patch, MergePatch) and patch.target == ARS_REF
    assert patch.patch == {"metadata": {"finalizers": [naming.FINALIZER_AUTOSCALING_RUNNER_SET]}}
    assert patch.resource_version  # a finalizer list is replaced whole: only over what was read
    assert decision.transitions == ()


@pytest.mark.parametrize("version", ["0.1.0", "0.9.3", "", "not-a-version"])
def test_a_scale_set_is_adopted_whatever_its_version_label(version: str) -> None:
    """Upstream deletes a scale set labelled for another controller version; arcsm never does."""
    world = World(settings=SETTINGS.__class__(**{**SETTINGS.__dict__, "build_version": "0.13.0"}))
    body = new_ars()
    body["metadata"]["labels"][naming.LABEL_VERSION] = version
    world.add(body)
    for _ in range(6):
        decision = world.step()
        assert not any(isinstance(e, DeleteObject) for e in decision.effects)


def deleting_world(**annotations: str) -> World:
    world = running_world()
    world.edit(ARS_REF, {"metadata": {"annotations": annotations}})
    world.ars["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    return world


def test_deletion_removes_listener_then_runner_set_then_scale_set_then_finalizer() -> None:
    world = deleting_world()
    listener_uid = (world.listener or {})["metadata"]["uid"]
    scale_set_id = desired.scale_set_id(world.ars)

    first = world.step()
    assert [type(e) for e in first.effects] == [DeleteObject, RequeueAfter]
    assert first.effects[0].uid == listener_uid  # type: ignore[attr-defined]
    assert first.effects[1] == RequeueAfter(ARS_REF, 5.0)

    second = world.step()
    assert [type(e) for e in second.effects] == [DeleteObject, RequeueAfter]
    assert second.effects[0].target == ERS_REF  # type: ignore[attr-defined]

    third = world.step()
    (call,) = third.effects
    assert isinstance(call, ActionsCall) and call.op is ActionsOp.DELETE_RUNNER_SCALE_SET
    assert call.args == {"scaleSetId": scale_set_id}

    fourth = world.step()
    (drop_id,) = fourth.effects
    assert drop_id == MergePatch(
        ARS_REF, {"metadata": {"annotations": {naming.ANNOTATION_RUNNER_SCALE_SET_ID: None}}}
    )

    last = world.step()
    assert [t.trigger for t in last.transitions] == [ars.Trigger.DELETED]
    assert world.get(desired.KIND_ARS, NS, "arc") is None
    assert world.actions.scale_sets == {}


def test_deletion_waits_for_a_listener_that_is_already_terminating() -> None:
    world = deleting_world()
    listener = world.listener
    assert listener is not None
    listener["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    decision = world.step()
    assert decision.effects == (RequeueAfter(ARS_REF, 5.0),)


def test_deletion_removes_cleanup_protection_from_dependents_in_upstream_order() -> None:
    names = {annotation: f"dep-{i}" for i, (annotation, _) in enumerate(ars.DEPENDENTS)}
    world = deleting_world(**names)
    for i, (annotation, kind) in enumerate(ars.DEPENDENTS):
        finalizers = [ars.CLEANUP_PROTECTION] if i != 3 else []  # one has no protection: left alone
        world.add(
            {"kind": kind, "metadata": {"name": names[annotation], "namespace": NS, "finalizers": finalizers}}
        )
    world.settle()
    (dependents_pass,) = [d for d in world.decisions if "cleanup protection" in d.note]
    assert not any(isinstance(e, MergePatch) and e.target == ARS_REF for e in dependents_pass.effects)
    assert dependents_pass.effects[-1] == RequeueAfter(ARS_REF, 5.0)
    assert world.get(desired.KIND_ARS, NS, "arc") is None
    patched = [e.target for e in world.effects_of(MergePatch) if e.target.kind != desired.KIND_ARS]
    expected = [ObjectRef(kind, NS, names[a]) for i, (a, kind) in enumerate(ars.DEPENDENTS) if i != 3]
    assert patched == expected
    for annotation, kind in ars.DEPENDENTS:
        assert ars.CLEANUP_PROTECTION not in (world.get(kind, NS, names[annotation]) or {"metadata": {}})[
            "metadata"
        ].get("finalizers", [])


def test_the_finalizer_stays_while_a_dependent_is_still_protected() -> None:
    world = deleting_world(**{ars.DEPENDENTS[0][0]: "rb"})
    world.add(
        {
            "kind": "RoleBinding",
            "metadata": {"name": "rb", "namespace": NS, "finalizers": [ars.CLEANUP_PROTECTION]},
        }
    )
    rb = ObjectRef("RoleBinding", NS, "rb")
    world.fail_patches.add(rb)
    for _ in range(6):
        world.step()
    assert world.get(desired.KIND_ARS, NS, "arc") is not None
    assert world.decisions[-1].effects[0].target == rb  # type: ignore[attr-defined]
    world.fail_patches.clear()
    world.settle()
    assert world.get(desired.KIND_ARS, NS, "arc") is None


def test_a_deleted_ars_without_our_finalizer_is_left_alone() -> None:
    world = World()
    body = new_ars()
    body["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    body["metadata"]["finalizers"] = ["someone.else/finalizer"]
    world.add(body)
    assert world.step().is_noop


def test_a_failing_scale_set_delete_is_asked_again_and_not_found_counts_as_gone() -> None:
    world = deleting_world()
    world.actions.failing[ActionsOp.DELETE_RUNNER_SCALE_SET] = "InternalServerError"
    world.step(), world.step()  # listener, then runner set
    asked = world.step()
    retried = world.step()
    assert retried.effects[0] == asked.effects[0] and "failed" in retried.note
    assert isinstance(retried.effects[1], EmitEvent) and retried.effects[1].reason == "ActionsCallFailed"
    world.actions.failing[ActionsOp.DELETE_RUNNER_SCALE_SET] = "NotFound"
    world.step()
    world.settle()
    assert world.get(desired.KIND_ARS, NS, "arc") is None


# -- steps 6–8: the Actions scale set, one call per pass -----------------------------------------------------


def test_a_named_runner_group_is_looked_up_first_and_the_set_created_in_it() -> None:
    world = World()
    world.add(new_ars(runnerGroup="blue", runnerScaleSetLabels=["linux", "arc", "gpu"]))
    world.settle()
    ops = world.actions.ops()
    assert ops[:3] == [
        ActionsOp.GET_RUNNER_GROUP_BY_NAME,
        ActionsOp.GET_RUNNER_SCALE_SET,
        ActionsOp.CREATE_RUNNER_SCALE_SET,
    ]
    create = world.actions.calls[2]
    assert create.args == {
        "name": "arc",
        "runnerGroupId": 7,
        "labels": ["arc", "linux", "gpu"],
        "disableUpdate": True,
    }
    annotations = world.ars["metadata"]["annotations"]
    assert annotations[naming.ANNOTATION_RUNNER_GROUP_NAME] == "blue"
    assert world.ars["spec"]["runnerScaleSetName"] == "arc"


def test_an_existing_scale_set_is_adopted_not_created() -> None:
    world = World()
    world.actions.scale_sets[9] = {"id": 9, "name": "arc", "runnerGroupId": 1, "runnerGroupName": "Default"}
    world.add(new_ars())
    world.settle()
    assert ActionsOp.CREATE_RUNNER_SCALE_SET not in world.actions.ops()
    assert desired.scale_set_id(world.ars) == 9


def test_a_failed_call_is_asked_again_under_the_same_key() -> None:
    world = World()
    world.add(new_ars())
    world.actions.failing[ActionsOp.GET_RUNNER_SCALE_SET] = "InternalServerError"
    world.step(), world.step()  # the finalizer; then Pending and the first ask
    first, second = world.step(), world.step()
    assert first.effects == second.effects
    assert "failed (InternalServerError: injected)" in second.note
    del world.actions.failing[ActionsOp.GET_RUNNER_SCALE_SET]
    world.settle()
    assert desired.scale_set_id(world.ars) == 42


def test_an_unusable_config_url_warns_and_asks_the_service_nothing() -> None:
    world = World()
    world.add(new_ars(githubConfigUrl="https://github.com/a/b/c"))
    world.step()
    decision = world.step()
    assert not world.actions.calls
    assert any(isinstance(e, EmitEvent) and e.type == "Warning" for e in decision.effects)


def test_runner_group_edit_moves_the_set_and_asks_again_after_a_round_trip() -> None:
    world = running_world()
    for group in ("blue", "green", "blue"):
        world.edit(ARS_REF, {"spec": {"runnerGroup": group}})
        world.settle()
        assert world.ars["metadata"]["annotations"][naming.ANNOTATION_RUNNER_GROUP_NAME] == group
        assert world.actions.scale_sets[42]["runnerGroupName"] == group
    updates = [c for c in world.actions.calls if c.op is ActionsOp.UPDATE_RUNNER_SCALE_SET]
    # blue → green → blue: the second move to blue is a new call (a new generation, a new epoch).
    assert [c.args["runnerGroupId"] for c in updates] == [7, 8, 7]


def test_clearing_the_runner_group_does_not_move_the_set_back() -> None:
    world = running_world(runnerGroup="blue")
    world.edit(ARS_REF, {"spec": {"runnerGroup": None}})
    world.settle()
    assert not [c for c in world.actions.calls if c.op is ActionsOp.UPDATE_RUNNER_SCALE_SET]


def test_scale_set_rename() -> None:
    world = running_world()
    world.edit(ARS_REF, {"spec": {"runnerScaleSetName": "Renamed"}})
    world.settle()
    (update,) = [c for c in world.actions.calls if c.op is ActionsOp.UPDATE_RUNNER_SCALE_SET]
    assert update.args == {"scaleSetId": 42, "name": "Renamed"}
    assert world.ars["metadata"]["annotations"][naming.ANNOTATION_RUNNER_SCALE_SET_NAME] == "Renamed"
    # A case-only difference between spec and service is not a rename.
    world.edit(ARS_REF, {"spec": {"runnerScaleSetName": "RENAMED"}})
    world.settle()
    assert len([c for c in world.actions.calls if c.op is ActionsOp.UPDATE_RUNNER_SCALE_SET]) == 1


# -- steps 9–11: runner set, listener, settled ---------------------------------------------------------------


def test_the_created_runner_set_is_owned_pinned_and_at_the_initial_revision() -> None:
    world = World()
    world.add(new_ars())
    world.settle()
    (create,) = [e for e in world.effects_of(CreateObject) if e.target == ERS_REF]
    body = create.body
    assert body["spec"]["replicas"] == 0 and body["spec"]["patchID"] == 0
    assert body["spec"]["actionableRevision"] == desired.INITIAL_ACTIONABLE_REVISION
    (owner,) = body["metadata"]["ownerReferences"]
    assert (
        owner["controller"] and owner["blockOwnerDeletion"] and owner["uid"] == world.ars["metadata"]["uid"]
    )
    assert naming.ANNOTATION_INTEGRITY_HASH not in body["metadata"]["annotations"]


def test_drain_deferral_writes_pending_first_then_deletes_the_listener_and_pins_the_runner_set() -> None:
    world = running_world()
    world.edit(ERS_REF, {"spec": {"replicas": 2, "patchID": 5}})  # the listener's last scale
    world.set_status(ERS_REF, runningEphemeralRunners=1)
    world.edit(
        ARS_REF, {"spec": {"template": {"spec": {"containers": [{"name": "runner", "image": "new"}]}}}}
    )
    decision = world.step()
    kinds = [(type(e).__name__, getattr(e, "subresource", "")) for e in decision.effects]
    assert kinds == [
        ("MergePatch", "status"),
        ("DeleteObject", ""),
        ("MergePatch", ""),
        ("RequeueAfter", ""),
        ("EmitEvent", ""),
    ]
    assert decision.effects[2] == MergePatch(ERS_REF, {"spec": {"replicas": 0, "patchID": 0}})
    assert decision.effects[-2] == RequeueAfter(ARS_REF, 1.0)
    assert world.revisions == (1, 1)  # nothing published while runners drain

    # Still draining (a runner busy with a job): the pin holds, nothing is written again.
    assert [type(e) for e in world.step().effects] == [RequeueAfter]
    # The runner set released its idle runners and the busy one finished: the spec is published, and the
    # listener comes back to scale the set up again.
    world.set_status(ERS_REF, runningEphemeralRunners=0)
    world.step()
    assert world.revisions == (2, 1)
    world.settle()
    assert world.listener is not None


def test_a_terminating_listener_is_waited_for_as_pending() -> None:
    world = running_world()
    listener = world.listener
    assert listener is not None
    listener["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    decision = world.step()
    assert [t.to for t in decision.transitions] == ["Pending"]
    assert not any(isinstance(e, DeleteObject) for e in decision.effects)


def test_settled_mirrors_the_counters_only_when_the_total_differs() -> None:
    world = running_world()
    world.set_status(ERS_REF, currentReplicas=3, pendingEphemeralRunners=1, runningEphemeralRunners=2)
    decision = world.step()
    (patch,) = decision.effects
    assert isinstance(patch, MergePatch)
    assert patch.patch == {
        "status": {
            "phase": "Running",
            "observedGeneration": 2,
            "currentRunners": 3,
            "pendingEphemeralRunners": 1,
            "runningEphemeralRunners": 2,
            "failedEphemeralRunners": 0,
        }
    }
    # Same total, another split: not mirrored (upstream, §8 item 8).
    world.set_status(ERS_REF, pendingEphemeralRunners=0, runningEphemeralRunners=3)
    assert world.step().is_noop


def test_settled_writes_nothing_when_nothing_differs() -> None:
    world = running_world()
    for _ in range(5):
        assert world.step().is_noop


def test_a_spec_edit_with_nothing_to_rebuild_writes_one_status_patch_and_two_transitions() -> None:
    world = running_world()
    world.edit(ARS_REF, {"spec": {"runnerScaleSetLabels": ["only-used-at-creation"]}})
    decision = world.step()
    assert [(t.from_, t.to) for t in decision.transitions] == [("Running", "Pending"), ("Pending", "Running")]
    (patch, pending, running) = decision.effects
    assert isinstance(patch, MergePatch)
    status = dict(patch.patch["status"])
    assert [(c["type"], c["status"], c["reason"]) for c in status.pop("conditions")] == [
        ("Ready", "True", "Settled"),
        ("ConfigurationValid", "True", "Valid"),
    ]
    assert status == {"phase": "Running", "observedGeneration": 3}
    assert isinstance(pending, EmitEvent) and isinstance(running, EmitEvent)
    assert pending.key != running.key  # two transitions of one object in one decision: two Events


def test_transitions_carry_the_generations_they_read() -> None:
    world = running_world()
    world.edit(ARS_REF, {"spec": {"minRunners": 1}})
    decision = world.step()
    assert [dict(t.revisions) for t in decision.transitions] == [{"generation": 3, "observedGeneration": 2}]


def test_decide_is_pure_and_repeatable() -> None:
    world = running_world()
    world.edit(ARS_REF, {"spec": {"minRunners": 1}})
    snapshot = world.snapshot()
    assert ars.decide(snapshot) == ars.decide(snapshot)
    assert ars.decide(Snapshot(ARS_REF, None, NOW)).is_noop


def test_every_effect_survives_the_journal_form() -> None:
    # A vaultConfig without a type names no vault (a typed one is refused before any call): it still
    # travels in every call's scope.
    vault = {"azureKeyVault": {"url": "https://kv.example"}}
    world = World()
    world.add(new_ars(runnerGroup="blue", vaultConfig=vault, proxy={"https": {"url": "http://proxy:3128"}}))
    world.settle()
    emitted = [e for d in world.decisions for e in d.effects]
    calls = [e for e in emitted if isinstance(e, ActionsCall)]
    assert calls and all(c.epoch and c.scope.vault == vault for c in calls)
    assert [effects.from_json(json.loads(json.dumps(effects.to_json(e)))) for e in emitted] == emitted
