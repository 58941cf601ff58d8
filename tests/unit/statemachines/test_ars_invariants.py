"""One test per invariant of spec §4 that concerns the AutoscalingRunnerSet machine (I1.x, I2.x, I3.6, I4.4,
I5.x, I6.x, I8.1, I12.x), over pure decisions in hand-built worlds.

I5.4 (runners with a job are not removed while parked) is the EphemeralRunnerSet's: the ARS's share of
it, never deleting the runner set, is I5.2 and 4.5-C.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from statemachines import autoscalingrunnersets as ars
from statemachines import desired, naming
from statemachines.decisions import Decision
from statemachines.effects import ActionsOp, CreateObject, DeleteObject, MergePatch
from statemachines.snapshots import Snapshot
from tests.unit.statemachines.arsworld import (
    ARS_REF,
    ERS_REF,
    World,
    assert_invariants,
    new_ars,
    runner_template,
    running_world,
)


def tour() -> World:
    """Creation, a spec edit, a label edit, a drain, a park, a label edit while parked, and a recovery."""
    world = World()
    world.add(new_ars(maxRunners=5))
    world.settle()
    world.set_status(ERS_REF, appliedActionableRevision=1, phase="Running")
    world.settle()
    world.edit(ARS_REF, {"spec": {"minRunners": 1}})
    world.settle()
    world.edit(ARS_REF, {"metadata": {"labels": {"team": "x"}}})
    world.settle()
    world.set_status(ERS_REF, runningEphemeralRunners=1, currentReplicas=1)
    world.edit(ARS_REF, {"spec": {"template": runner_template(image="v2")}})
    world.step()
    world.set_status(ERS_REF, runningEphemeralRunners=0, currentReplicas=0)
    world.settle()
    world.set_status(ERS_REF, appliedActionableRevision=2, phase="Running")
    world.settle()
    world.set_status(ERS_REF, phase="Outdated")
    world.settle()
    world.edit(ARS_REF, {"metadata": {"labels": {"team": "y"}}})
    world.settle()
    world.edit(ARS_REF, {"spec": {"maxRunners": 6}})
    world.step()
    world.set_status(ERS_REF, appliedActionableRevision=3, phase="Running")
    world.settle()
    assert world.phase == "Running"
    return world


@pytest.fixture(scope="module")
def toured() -> World:
    return tour()


def passes(world: World) -> list[tuple[Snapshot, Decision]]:
    return list(zip(world.snapshots, world.decisions, strict=True))


def status_writes(decision: Decision) -> list[dict[str, Any]]:
    return [
        dict(e.patch["status"])
        for e in decision.effects
        if isinstance(e, MergePatch) and e.target == ARS_REF and e.subresource == "status"
    ]


# -- C1 ------------------------------------------------------------------------------------------------------


def test_i1_1_observed_generation_never_passes_the_generation(toured: World) -> None:
    for snapshot, _ in passes(toured):
        assert ars.observed_generation(snapshot) <= ars.generation(snapshot)
    generation, observed = toured.generations
    assert observed == generation


def test_i1_2_running_is_written_with_the_generation_the_pass_read(toured: World) -> None:
    running = [(s, w) for s, d in passes(toured) for w in status_writes(d) if w.get("phase") == "Running"]
    assert running
    for snapshot, write in running:
        assert write["observedGeneration"] == ars.generation(snapshot)


def test_i1_3_a_pending_write_never_moves_observed_generation(toured: World) -> None:
    pending = [(s, w) for s, d in passes(toured) for w in status_writes(d) if w.get("phase") == "Pending"]
    assert len(pending) >= 4
    for snapshot, write in pending:
        assert write["observedGeneration"] == ars.observed_generation(snapshot)


def test_i1_4_no_integrity_hash_is_written_on_the_ars(toured: World) -> None:
    for _, decision in passes(toured):
        for effect in decision.effects:
            if isinstance(effect, MergePatch) and effect.target == ARS_REF:
                assert naming.ANNOTATION_INTEGRITY_HASH not in str(effect.patch)
    assert naming.ANNOTATION_INTEGRITY_HASH not in toured.ars["metadata"].get("annotations", {})


def test_i1_4_a_legacy_integrity_hash_on_the_ars_is_ignored() -> None:
    world = running_world()
    world.edit(ARS_REF, {"metadata": {"annotations": {naming.ANNOTATION_INTEGRITY_HASH: "stale"}}})
    for _ in range(3):
        assert world.step().is_noop


def test_i1_5_a_label_only_edit_does_not_make_the_ars_pending_by_generation() -> None:
    world = running_world()
    world.edit(ARS_REF, {"metadata": {"labels": {"team": "x"}}})
    assert world.generations == (2, 2)
    first = world.step()
    assert first.transitions == () and world.phase == "Running"  # C2's Pending comes at the listener delete
    assert [t.trigger for t in world.step().transitions] == [ars.Trigger.LISTENER_REBUILT]


def test_i1_6_labels_reach_the_runner_set_without_a_revision_bump() -> None:
    world = running_world(
        ephemeralRunnerSetMetadata={"labels": {"tier": "a"}, "annotations": {"owner": "me"}}
    )
    world.edit(ARS_REF, {"metadata": {"labels": {"team": "x"}}})
    world.edit(ARS_REF, {"spec": {"ephemeralRunnerMetadata": {"labels": {"runner": "y"}}}})
    world.settle()
    ers = world.ers
    assert ers is not None
    assert ers["metadata"]["labels"]["team"] == "x" and ers["metadata"]["labels"]["tier"] == "a"
    assert ers["metadata"]["annotations"]["owner"] == "me"
    assert ers["spec"]["ephemeralRunnerMetadata"] == {"labels": {"runner": "y"}}
    assert world.revisions == (1, 1)


def test_i8_1_a_settled_scale_set_decides_nothing(toured: World) -> None:
    assert running_world().step().is_noop
    settled = copy.deepcopy(toured)
    for _ in range(5):
        decision = settled.step()
        assert decision.is_noop and not decision.effects


# -- C2 ------------------------------------------------------------------------------------------------------


def listener_deletes(world: World) -> list[tuple[Snapshot, Decision]]:
    return [
        (s, d)
        for s, d in passes(world)
        if any(isinstance(e, DeleteObject) and e.target.kind == desired.KIND_LISTENER for e in d.effects)
    ]


@pytest.mark.parametrize(
    "edit",
    [
        pytest.param({"metadata": {"labels": {"team": "x"}}}, id="label-rebuild"),
        pytest.param({"spec": {"minRunners": 2}}, id="spec-rebuild"),
        pytest.param({"spec": {"template": runner_template(image="v2")}}, id="drain"),
    ],
)
def test_i2_1_a_pass_that_deletes_the_listener_to_rebuild_or_drain_ends_pending(edit: dict[str, Any]) -> None:
    world = running_world()
    world.set_status(ERS_REF, runningEphemeralRunners=1)
    world.edit(ARS_REF, edit)
    for _ in range(3):
        world.step()
    deletes = listener_deletes(world)
    assert deletes
    for snapshot, decision in deletes:
        written = [w["phase"] for w in status_writes(decision) if "phase" in w]
        phases = written or [snapshot.status.get("phase")]
        assert phases[-1] == "Pending"


def test_i2_2_a_listener_that_cannot_be_recreated_keeps_the_ars_pending() -> None:
    world = running_world()
    world.reject_creates.add(desired.KIND_LISTENER)
    world.edit(ARS_REF, {"spec": {"minRunners": 2}})
    for _ in range(15):
        world.step()
        assert world.phase == "Pending"
    assert not [w for d in world.decisions for w in status_writes(d) if w.get("phase") == "Running"]


def test_i2_3_listener_rebuild_and_drain_writes_keep_observed_generation() -> None:
    world = running_world()
    world.set_status(ERS_REF, runningEphemeralRunners=1)
    world.edit(ARS_REF, {"metadata": {"labels": {"team": "x"}}})
    world.step(), world.step()
    world.edit(ARS_REF, {"spec": {"template": runner_template(image="v2")}})
    world.step()
    for snapshot, decision in listener_deletes(world):
        for write in status_writes(decision):
            assert write["observedGeneration"] == ars.observed_generation(snapshot)


# -- C3/C4: revisions ---------------------------------------------------------------------------------------


def equivalent_templates() -> tuple[dict[str, Any], dict[str, Any]]:
    """One runner template in two spellings with the same semantic content (§4.12)."""
    first = runner_template(volumes=[], nodeSelector={})
    first["spec"]["containers"][0].update(
        env=[], resources={"limits": {"cpu": "1000m", "memory": "1Gi"}, "requests": {}}
    )
    second = runner_template()
    second["spec"]["containers"][0].update(resources={"limits": {"cpu": "1", "memory": "1024Mi"}})
    return first, second


def test_i3_6_a_semantically_unchanged_template_never_bumps_the_revision() -> None:
    first, second = equivalent_templates()
    world = running_world(template=first)
    for i in range(6):
        # Each edit moves the generation (the ARS goes Pending, then Running) and the runner set's counters
        # move between passes; the runner spec compared is the same each time.
        world.edit(ARS_REF, {"spec": {"template": second if i % 2 == 0 else first}})
        world.set_status(ERS_REF, currentReplicas=i % 2, runningEphemeralRunners=i % 2)
        world.settle()
        for _ in range(5):
            world.step()
        assert world.phase == "Running"
    generation, observed = world.generations
    assert generation == observed > 2
    assert world.revisions == (1, 1)
    assert not [e for e in world.effects_of(MergePatch) if e.target == ERS_REF and "spec" in e.patch]


def test_i4_4_the_ars_never_tears_down_while_the_revision_is_ahead_of_the_applied_one() -> None:
    world = running_world()
    world.edit(ERS_REF, {"spec": {"actionableRevision": 2}})
    world.set_status(ERS_REF, phase="Outdated", appliedActionableRevision=1)
    for i in range(10):
        world.set_status(ERS_REF, runningEphemeralRunners=i % 2, currentReplicas=i % 2)
        world.step()
    assert world.phase == "Running" and world.listener is not None
    assert not [t for t in world.transitions() if t.to == "Outdated"]
    assert not world.effects_of(DeleteObject)
    # Once the revision is applied and the runner set is still Outdated, the teardown does happen.
    world.set_status(ERS_REF, appliedActionableRevision=2)
    world.settle()
    assert world.phase == "Outdated" and world.listener is None


# -- C7: parked ----------------------------------------------------------------------------------------------


def parked() -> World:
    world = running_world()
    world.edit(ERS_REF, {"spec": {"replicas": 3, "patchID": 7}})
    world.set_status(ERS_REF, phase="Outdated", runningEphemeralRunners=2, currentReplicas=3)
    world.settle()
    assert world.phase == "Outdated"
    world.decisions.clear()
    world.snapshots.clear()
    world.actions.calls.clear()
    return world


def disturb(world: World, i: int) -> None:
    """What the rest of the world may do to a parked scale set."""
    if i % 4 == 0:
        world.edit(ERS_REF, {"spec": {"replicas": i + 1, "patchID": i + 2}})  # a late listener patch
    elif i % 4 == 1:
        rogue = desired.autoscaling_listener(world.ars, "arc", world.settings)
        world.add(rogue)  # a listener someone recreated
    elif i % 4 == 2:
        world.edit(ARS_REF, {"metadata": {"labels": {"team": str(i)}}})
    else:
        world.set_status(ERS_REF, phase="Running" if i % 8 == 3 else "Outdated")


def test_i5_1_outdated_ends_every_pass_without_listener_and_pinned() -> None:
    world = parked()
    for i in range(12):
        disturb(world, i)
        world.settle()
        assert world.phase == "Outdated"
        assert world.listener is None
        ers = world.ers
        assert ers is not None and (ers["spec"].get("replicas", 0), ers["spec"]["patchID"]) == (0, 0)


def test_i5_2_no_churn_while_parked() -> None:
    world = parked()
    for i in range(12):
        disturb(world, i)
        world.settle()
    world.edit(ARS_REF, {"metadata": {"annotations": {naming.ANNOTATION_RUNNER_SCALE_SET_ID: None}}})
    world.settle()
    assert ActionsOp.CREATE_RUNNER_SCALE_SET not in world.actions.ops()
    assert not world.actions.calls
    assert not world.effects_of(CreateObject)
    assert not [e for e in world.effects_of(DeleteObject) if e.target.kind != desired.KIND_LISTENER]


def test_i5_3_revisions_are_kept_while_parked() -> None:
    world = parked()
    before = world.revisions
    for i in range(12):
        disturb(world, i)
        world.settle()
    assert world.revisions == before == (1, 1)
    assert not [e for e in world.effects_of(MergePatch) if "actionableRevision" in str(e.patch)]


@pytest.mark.parametrize(("replicas", "patch_id"), [(4, 9), (0, 3), (2, 0)])
def test_i5_5_a_target_written_while_parked_is_reset_by_the_next_pass(replicas: int, patch_id: int) -> None:
    world = parked()
    world.edit(ERS_REF, {"spec": {"replicas": replicas, "patchID": patch_id}})
    decision = world.step()
    assert [(e.target, e.patch) for e in decision.effects if isinstance(e, MergePatch)] == [
        (ERS_REF, {"spec": {"replicas": 0, "patchID": 0}})
    ]


def test_i5_6_a_runner_set_deleted_while_parked_is_recreated_only_after_a_spec_update() -> None:
    world = parked()
    world.edit(ERS_REF, {"metadata": {"finalizers": []}})
    world.apply(DeleteObject(ERS_REF))
    for _ in range(5):
        world.step()
        assert (world.ers, world.phase) == (None, "Outdated")
    world.edit(ARS_REF, {"spec": {"maxRunners": 9}})
    world.step()
    assert world.phase == "Pending"
    assert world.ers is not None


# -- C7: recovery --------------------------------------------------------------------------------------------


def test_i6_1_outdated_is_left_only_by_a_new_generation_or_deletion() -> None:
    world = parked()
    for i in range(12):
        disturb(world, i)
        world.settle()
    assert {(t.from_, t.to) for t in world.transitions()} <= {("Outdated", "Outdated")}
    deleting = copy.deepcopy(world)
    deleting.ars["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    deleting.settle()
    assert deleting.get(desired.KIND_ARS, "default", "arc") is None
    assert [t.trigger for t in deleting.transitions()][-1] == ars.Trigger.DELETED
    world.edit(ARS_REF, {"spec": {"minRunners": 1}})
    world.step()
    assert world.phase == "Pending"


@pytest.mark.parametrize(
    "edit",
    [
        pytest.param({"spec": {"maxRunners": 9}}, id="non-template"),
        pytest.param({"spec": {"template": runner_template(image="fixed")}}, id="template"),
        pytest.param({"spec": {"maxRunners": 9, "runnerGroup": "blue"}}, id="early-returns"),
    ],
)
def test_i6_2_leaving_outdated_bumps_the_revision_before_any_listener_is_created(
    edit: dict[str, Any],
) -> None:
    world = parked()
    world.edit(ARS_REF, edit)
    for _ in range(5):
        world.step()
    world.set_status(ERS_REF, appliedActionableRevision=2, phase="Running")
    world.settle()
    bumps = [
        i
        for i, d in enumerate(world.decisions)
        for e in d.effects
        if isinstance(e, MergePatch)
        and e.target == ERS_REF
        and e.patch.get("spec", {}).get("actionableRevision")
    ]
    creates = [
        i
        for i, d in enumerate(world.decisions)
        for e in d.effects
        if isinstance(e, CreateObject) and e.target.kind == desired.KIND_LISTENER
    ]
    assert bumps and creates and bumps[0] < creates[0]
    assert world.revisions == (2, 2)


def test_i6_3_no_listener_is_created_while_the_runner_set_is_outdated_at_its_applied_revision(
    toured: World,
) -> None:
    assert_invariants(toured)
    world = parked()
    for i in range(12):
        disturb(world, i)
        world.settle()
    world.edit(ARS_REF, {"spec": {"maxRunners": 9}})
    world.settle()
    assert_invariants(world)


def test_i6_3_a_label_only_edit_from_pending_parks_without_a_listener() -> None:
    """Pending for a label-only edit (the rebuilt listener's create rejected, gen = obs), then the runners
    reject the spec in force: the set parks from Pending, and no listener is created against it."""
    world = running_world()
    world.reject_creates.add(desired.KIND_LISTENER)
    world.edit(ARS_REF, {"metadata": {"labels": {"team": "x"}}})
    for _ in range(3):
        world.step()
    assert (world.phase, world.listener) == ("Pending", None)
    generation, observed = world.generations
    assert generation == observed
    world.set_status(ERS_REF, phase="Outdated")
    world.reject_creates.clear()
    mark = len(world.decisions)
    world.settle()
    assert_invariants(world)
    assert world.phase == "Outdated" and world.listener is None
    creates = [
        e
        for d in world.decisions[mark:]
        for e in d.effects
        if isinstance(e, CreateObject) and e.target.kind == desired.KIND_LISTENER
    ]
    assert not creates
    parks = [t for t in world.transitions() if t.to == "Outdated"]
    assert [(t.from_, t.trigger) for t in parks] == [("Pending", ars.Trigger.RUNNERS_REJECTED_SPEC)]
    ers = world.ers
    assert ers is not None and (ers["spec"].get("replicas", 0), ers["spec"]["patchID"]) == (0, 0)


def test_i6_4_recovery_settles_running_with_the_revision_applied() -> None:
    world = parked()
    world.edit(ARS_REF, {"spec": {"maxRunners": 9}})
    world.step()
    world.set_status(ERS_REF, appliedActionableRevision=2, phase="Running")
    world.settle()
    generation, observed = world.generations
    ers = world.ers
    assert ers is not None
    assert (world.phase, observed) == ("Running", generation)
    assert ers["status"]["phase"] == "Running" and world.revisions == (2, 2)
    assert (ers["spec"].get("replicas", 0), ers["spec"]["patchID"]) == (
        0,
        0,
    )  # until the new listener patches


# -- C3 semantic drift ---------------------------------------------------------------------------------------


def go_round_trip(value: Any) -> Any:
    """What a Go writer leaves of a value: empty collections and strings dropped (``omitempty``)."""
    if isinstance(value, dict):
        kept = {k: go_round_trip(v) for k, v in value.items()}
        return {k: v for k, v in kept.items() if v not in (None, "", [], {})}
    if isinstance(value, list):
        return [go_round_trip(v) for v in value]
    return value


RUNNER: dict[str, Any] = {"name": "runner", "image": "runner:1", "env": [{"name": "A", "value": "1"}]}
EMPTIES = runner_template(volumes=[], nodeSelector={})
EMPTIES["spec"]["containers"][0].update(env=[], resources={})


@pytest.mark.parametrize(
    ("template", "stored"),
    [
        pytest.param(EMPTIES, None, id="empties-dropped"),
        pytest.param(
            runner_template(
                containers=[{"name": "runner", "image": "i", "resources": {"limits": {"cpu": "1000m"}}}]
            ),
            {"containers": [{"name": "runner", "image": "i", "resources": {"limits": {"cpu": "1"}}}]},
            id="quantity-respelled",
        ),
        pytest.param(
            runner_template(
                containers=[{"name": "runner", "image": "i", "resources": {"requests": {"memory": "1Gi"}}}]
            ),
            {
                "containers": [
                    {"name": "runner", "image": "i", "resources": {"requests": {"memory": "1073741824"}}}
                ]
            },
            id="binary-quantity",
        ),
    ],
)
def test_i12_1_round_trips_never_bump_the_revision(
    template: dict[str, Any], stored: dict[str, Any] | None
) -> None:
    world = running_world(template=template)
    ers = world.ers
    assert ers is not None
    runner_spec = ers["spec"]["ephemeralRunnerSpec"]
    runner_spec["spec"] = stored if stored is not None else go_round_trip(runner_spec["spec"])
    for _ in range(10):
        world.step()
    assert world.revisions == (1, 1)
    assert not [e for e in world.effects_of(MergePatch) if e.target == ERS_REF]


@pytest.mark.parametrize(
    "template",
    [
        pytest.param(runner_template(containers=[RUNNER | {"image": "other"}]), id="image"),
        pytest.param(
            runner_template(containers=[RUNNER | {"env": [{"name": "A", "value": "2"}]}]), id="env-value"
        ),
        pytest.param(
            runner_template(containers=[RUNNER], volumes=[{"name": "w", "emptyDir": {}}]), id="added-volume"
        ),
    ],
)
def test_i12_2_a_real_change_bumps_the_revision_exactly_once(template: dict[str, Any]) -> None:
    base = runner_template(containers=[RUNNER | {"env": [{"name": "A", "value": "1"}]}])
    world = running_world(template=base)
    world.edit(ARS_REF, {"spec": {"template": template}})
    for _ in range(10):
        world.step()
    assert world.revisions == (2, 1)
    world.set_status(ERS_REF, appliedActionableRevision=2)
    for _ in range(10):
        world.step()
    assert world.revisions == (2, 2)
    bumps = [e for e in world.effects_of(MergePatch) if "actionableRevision" in e.patch.get("spec", {})]
    assert len(bumps) == 1
