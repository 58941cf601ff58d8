"""The EphemeralRunnerSet machine: its table, the steps of §2.2, the invariants of §4.3–4.6 on the ERS side,
and their scenarios run as sequences of pure decisions over a dict world (``ersworld``)."""

from __future__ import annotations

import copy
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest

from statemachines import effects, naming, runners
from statemachines import ephemeralrunnersets as machine
from statemachines.decisions import Decision
from statemachines.ephemeralrunnersets import ROWS, Trigger
from statemachines.phases import ErsPhase
from statemachines.snapshots import Snapshot
from tests.unit.statemachines.ersworld import REF, World, effects_of, make_ers, make_runner, names


def world(runners_: tuple[dict[str, Any], ...] = (), **ers: Any) -> World:
    w = World(make_ers(**ers))
    for runner in runners_:
        w.runners[runner["metadata"]["name"]] = copy.deepcopy(runner)
    return w


def status_patches(decision: Decision) -> list[dict[str, Any]]:
    """The status patches of ``decision`` without their conditions (test_ers_conditions.py checks those)."""
    found = [dict(e.patch["status"]) for e in effects_of(decision, effects.MergePatch) if e.subresource]
    found = [{k: v for k, v in patch.items() if k != "conditions"} for patch in found]
    return [patch for patch in found if patch]


def creates(decision: Decision) -> list[effects.CreateObject]:
    return effects_of(decision, effects.CreateObject)


def releases(decision: Decision) -> list[effects.ReleaseRunner]:
    return effects_of(decision, effects.ReleaseRunner)


def deletes(decision: Decision) -> list[effects.DeleteObject]:
    return effects_of(decision, effects.DeleteObject)


def idle(name: str, rid: int, created: int = 0, **kw: Any) -> dict[str, Any]:
    return make_runner(name, phase="Running", runner_id=rid, created=created, **kw)


# == the table (STYLE §6 item 7) =========================================================================


def test_every_phase_is_the_initial_one_or_the_destination_of_a_row() -> None:
    destinations = {row.dest for row in ROWS}
    assert {p for p in ErsPhase if p is not ErsPhase.NONE} <= destinations


def test_every_row_uses_declared_triggers_and_phases() -> None:
    for row in ROWS:
        assert row.trigger in set(Trigger)
        assert set(row.source) <= set(ErsPhase) and row.dest in set(ErsPhase)
    assert {row.trigger for row in ROWS} == set(Trigger)


def test_rows_sharing_a_trigger_and_source_are_pinned_in_order_guarded_first() -> None:
    order: dict[tuple[str, str], list[tuple[str, bool]]] = {}
    for row in ROWS:
        for source in row.source:
            order.setdefault((row.trigger, source), []).append((row.dest, bool(row.guards)))
    outdated_then_running = [(ErsPhase.OUTDATED, True), (ErsPhase.RUNNING, False)]
    assert order == {
        (Trigger.UPDATE_STATUS, ErsPhase.NONE): outdated_then_running,
        (Trigger.UPDATE_STATUS, ErsPhase.RUNNING): [(ErsPhase.OUTDATED, True)],
        (Trigger.APPLY_REVISION, ErsPhase.NONE): outdated_then_running,
        (Trigger.APPLY_REVISION, ErsPhase.RUNNING): outdated_then_running,
        (Trigger.APPLY_REVISION, ErsPhase.OUTDATED): outdated_then_running,
    }


def test_only_a_revision_leaves_outdated() -> None:
    """Outdated is sticky for updateStatus (§3.2); only an applied revision recomputes it."""
    leaving = {row.trigger for row in ROWS if ErsPhase.OUTDATED in row.source}
    assert leaving == {Trigger.APPLY_REVISION}


OUTDATED_AT_1 = make_runner("o", phase="Outdated", revision=1, runner_id=3)
OUTDATED_AT_2 = make_runner("o", phase="Outdated", revision=2, runner_id=3)


@pytest.mark.parametrize(
    ("trigger", "phase", "children", "rev", "app", "expected"),
    [
        pytest.param(Trigger.UPDATE_STATUS, "", (), 1, 1, "Running", id="first-status"),
        pytest.param(
            Trigger.UPDATE_STATUS, "", (OUTDATED_AT_1,), 1, 1, "Outdated", id="first-status-outdated"
        ),
        pytest.param(Trigger.UPDATE_STATUS, "Running", (), 1, 1, None, id="running-stays"),
        pytest.param(
            Trigger.UPDATE_STATUS, "Running", (OUTDATED_AT_1,), 1, 1, "Outdated", id="running-outdated"
        ),
        pytest.param(Trigger.UPDATE_STATUS, "Running", (OUTDATED_AT_1,), 2, 2, None, id="stale-never-counts"),
        pytest.param(Trigger.UPDATE_STATUS, "Outdated", (), 1, 1, None, id="outdated-sticky"),
        pytest.param(Trigger.APPLY_REVISION, "Outdated", (), 2, 1, "Running", id="apply-clears"),
        pytest.param(
            Trigger.APPLY_REVISION, "Outdated", (OUTDATED_AT_1,), 2, 1, "Running", id="apply-stales"
        ),
        pytest.param(Trigger.APPLY_REVISION, "Running", (OUTDATED_AT_2,), 2, 1, "Outdated", id="apply-sets"),
        pytest.param(Trigger.APPLY_REVISION, "", (), 1, 0, "Running", id="apply-first"),
    ],
)
def test_fire(
    trigger: Trigger,
    phase: str,
    children: tuple[dict[str, Any], ...],
    rev: int,
    app: int,
    expected: str | None,
) -> None:
    snapshot = world(children, rev=rev, app=app, phase=phase).snapshot()
    taken = machine.MACHINE.fire(trigger, phase, snapshot)
    assert (taken.to if taken else None) == expected


# == the steps of §2.2 ===================================================================================


def test_a_gone_set_decides_nothing() -> None:
    assert machine.decide(Snapshot(subject=REF, obj=None, now=World(None).snapshot().now)).is_noop


def test_step_2_adds_the_finalizer_and_returns() -> None:
    w = world((idle("a", 1),), finalizer=False, replicas=3)
    w.obj["metadata"]["finalizers"] = ["other"]
    decision = w.step()
    (patch,) = decision.effects
    assert isinstance(patch, effects.MergePatch) and not patch.subresource
    assert patch.patch == {"metadata": {"finalizers": ["other", machine.FINALIZER]}}
    assert patch.resource_version == "1"
    assert not decision.transitions


def test_i8_1_a_settled_runner_set_decides_nothing() -> None:
    """I8.1: a pass that changes nothing writes nothing."""
    w = world((idle("a", 1, patch_id=4),), replicas=1, patch_id=4)
    w.obj["status"].update(currentReplicas=1, runningEphemeralRunners=1)
    first = w.step()
    assert status_patches(first) == []  # only the conditions were missing
    assert w.step().is_noop


class TestDeletion:
    def deleting(self, *children: dict[str, Any], proxy: bool = False) -> World:
        w = world(children, proxy=proxy, replicas=5)
        w.obj["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
        return w

    def test_cleanup_first_without_requeue(self) -> None:
        w = self.deleting(
            idle("a", 1),
            make_runner("b", phase="Running", runner_id=2, job=True),
            make_runner("p", phase="Pending", runner_id=0),
            make_runner("f", phase="Failed", runner_id=4),
        )
        decision = w.step()
        assert names(releases(decision)) == ["a"]
        assert sorted(names(deletes(decision))) == ["f", "p"]
        assert not effects_of(decision, effects.RequeueAfter) and not effects_of(decision, effects.MergePatch)
        # Child events drive progress: once only the busy runner is left, the decision just waits.
        w.settle()
        assert w.step().is_noop
        w.runners.clear()
        rv = w.obj["metadata"]["resourceVersion"]
        assert w.step().effects == (
            effects.MergePatch(REF, {"metadata": {"finalizers": []}}, resource_version=rv),
        )

    def test_the_proxy_secret_goes_before_the_finalizer(self) -> None:
        w = self.deleting(proxy=True)
        w.proxy_secret = {"metadata": {"name": "x", "uid": "s-uid"}}
        decision = w.step()
        (delete, requeue) = decision.effects
        assert isinstance(delete, effects.DeleteObject) and delete.target.kind == "Secret"
        assert delete.target.name == naming.runner_set_proxy_secret_name("arc", "default")
        assert delete.uid == "s-uid" and requeue == effects.RequeueAfter(REF, 1.0)
        (patch,) = w.step().effects
        assert isinstance(patch, effects.MergePatch) and patch.patch == {"metadata": {"finalizers": []}}

    def test_nothing_once_the_finalizer_is_gone(self) -> None:
        w = self.deleting(idle("a", 1))
        w.obj["metadata"]["finalizers"] = []
        assert w.step().is_noop


# == C3: the revision is applied only after a successful cleanup (§4.3) ===================================


def test_scenario_4_3_a_image_change_with_no_runners() -> None:
    w = world(rev=1, replicas=0)
    w.publish(2)
    rv = w.obj["metadata"]["resourceVersion"]
    decision = w.step()
    assert status_patches(decision) == [{"appliedActionableRevision": 2}]
    (patch,) = effects_of(decision, effects.MergePatch)
    assert patch.resource_version == rv != ""  # the optimistic lock of §2.2 step 3 [R]
    (transition,) = decision.transitions
    assert (transition.from_, transition.to, transition.trigger) == ("Running", "Running", "apply_revision")
    assert transition.revisions == {"actionableRevision": 2, "appliedActionableRevision": 2}
    assert w.status["appliedActionableRevision"] == 2 and w.status_writes == 1
    assert w.step().is_noop


def test_scenario_4_3_a_with_a_proxy_rewrites_the_secret_before_the_status() -> None:
    w = world(rev=1, proxy=True)
    w.proxy_secret = {"metadata": {"labels": {}}}
    w.publish(2)
    decision = w.step()
    kinds = [type(e).__name__ for e in decision.effects]
    assert kinds == ["WriteProxySecret", "MergePatch"]


def test_i3_4_a_failed_removal_keeps_the_applied_revision_and_the_next_pass_redoes_it() -> None:
    """I3.4 (and scenario 4.3-B on the machine): the runner whose RemoveRunner failed is redone and only
    then is the revision applied."""
    w = world((idle("r11", 11), idle("r12", 12, created=1)), rev=2, app=1)
    w.failing.add(12)
    r1 = w.step()
    assert [e.runner_id for e in releases(r1)] == [11, 12]
    assert w.status["appliedActionableRevision"] == 1 and w.live == ["r12"]
    assert not status_patches(w.step())  # still failing: asked again, not applied
    w.failing.clear()
    assert [e.runner_id for e in releases(w.step())] == [12]
    assert w.status["appliedActionableRevision"] == 1
    assert status_patches(w.step()) == [{"appliedActionableRevision": 2}]
    assert w.remove_calls == [11, 12, 12, 12]


def test_scenario_4_3_c_runners_with_jobs_survive_a_revision_change() -> None:
    w = world((idle("a", 1), make_runner("b", phase="Running", runner_id=2, job=True)), rev=1, replicas=2)
    w.publish(2)
    assert names(releases(w.step())) == ["a"]
    w.settle()
    assert status_patches(w.step()) == [{"appliedActionableRevision": 2}]
    assert w.live == ["b"]
    # b finishes: the EphemeralRunner controller deletes it; the next listener patch brings a replacement.
    del w.runners["b"]
    w.listener_patch(replicas=2, patch_id=3)
    created = creates(w.step())
    assert len(created) == 2
    for effect in created:
        assert effect.body["metadata"]["annotations"][naming.ANNOTATION_ACTIONABLE_REVISION] == "2"


REVISION_PENDING = [
    pytest.param((), 5, 0, id="no-runners-force"),
    pytest.param((idle("a", 1),), 5, 9, id="new-patch"),
    pytest.param((make_runner("p", runner_id=1),), 5, 0, id="pending"),
    pytest.param((make_runner("j", phase="Running", runner_id=1, job=True),), 5, 2, id="busy-only"),
    pytest.param((make_runner("o", phase="Outdated", runner_id=1),), 5, 0, id="outdated"),
]


@pytest.mark.parametrize(("children", "replicas", "patch_id"), REVISION_PENDING)
def test_i3_3_no_runner_is_created_while_a_revision_is_pending(
    children: tuple[dict[str, Any], ...], replicas: int, patch_id: int
) -> None:
    w = world(children, rev=3, app=2, replicas=replicas, patch_id=patch_id)
    for _ in range(4):
        snapshot = w.snapshot()
        decision = w.step()
        if machine.revision_pending(snapshot):
            assert not creates(decision)
        w.settle()
    assert w.status["appliedActionableRevision"] == 3


@pytest.mark.parametrize(
    ("rev", "app", "applied_after"),
    [
        pytest.param(2, 1, 2, id="advance"),
        pytest.param(7, 1, 7, id="jump"),
        pytest.param(1, 1, 1, id="caught-up"),
        pytest.param(1, 3, 3, id="applied-ahead-never-decreases"),
        pytest.param(0, 0, 0, id="legacy"),
    ],
)
def test_i3_1_the_applied_revision_never_decreases(rev: int, app: int, applied_after: int) -> None:
    w = world(rev=rev, app=app)
    w.steps(3)
    assert w.status["appliedActionableRevision"] == applied_after
    assert machine.target_revision(w.snapshot()) >= app


def test_i3_5_update_status_never_writes_the_applied_revision() -> None:
    w = world(rev=4, app=4, replicas=2, patch_id=0)
    w.obj["status"] = {"appliedActionableRevision": 4}  # a naive rebuild would null it
    for _ in range(6):
        for patch in status_patches(w.step()):
            assert "appliedActionableRevision" not in patch
        w.register_all()
    assert w.status["appliedActionableRevision"] == 4 and w.status["currentReplicas"] == 2


# == a job is its runner's: a job recorded for another runner id is ignored ==============================


def with_job_of(runner: dict[str, Any], runner_id: int) -> dict[str, Any]:
    """``runner`` holding a job the listener recorded for runner ``runner_id``."""
    runner["status"].update(jobId=f"job-of-{runner_id}", jobRunnerId=runner_id)
    return runner


def test_a_runner_holding_another_runners_job_is_released_like_an_idle_one() -> None:
    """A reused name: the job of runner 1, read late, on the new runner 2 of that name. Runner 3's own job,
    and one recorded without a runner id (upstream's listener), keep theirs from a release."""
    children = (
        with_job_of(idle("reused", 2), 1),
        with_job_of(idle("busy", 3, created=1), 3),
        idle("upstream", 4, created=2, job=True),
    )
    decision = world(children, rev=1, app=1, replicas=0, patch_id=0).step()
    assert names(releases(decision)) == ["reused"]


# == C4: revision annotation, stale vs current outdated, both-direction phase (§4.4) ======================


def test_i4_1_new_runners_carry_the_spec_revision_which_is_the_applied_one() -> None:
    for rev in (1, 4):
        w = world(rev=rev, replicas=3, patch_id=1)
        snapshot = w.snapshot()
        created = creates(w.step())
        assert len(created) == 3
        for effect in created:
            annotations = effect.body["metadata"]["annotations"]
            assert annotations[naming.ANNOTATION_ACTIONABLE_REVISION] == str(rev)
            assert machine.spec_revision(snapshot) == machine.applied_revision(snapshot) == rev


def test_a_spec_revision_lowered_below_the_applied_one_builds_runners_at_the_applied_one() -> None:
    """An outside write lowered rev below app: new runners carry app, so one that exits 7 is a current
    outdated runner that parks the set, not a stale one that is deleted and made again."""
    w = world(rev=1, app=3, replicas=2, patch_id=1)
    created = creates(w.step())
    assert len(created) == 2
    for effect in created:
        assert effect.body["metadata"]["annotations"][naming.ANNOTATION_ACTIONABLE_REVISION] == "3"
    w.settle()
    for name in list(w.runners):
        w.runners[name]["status"] = {"phase": "Outdated", "runnerId": 1}
    w.steps(3)
    assert w.status["phase"] == "Outdated" and w.status["appliedActionableRevision"] == 3
    assert not creates(w.step()), "a runner that rejects the spec was made again"


APPLY_CASES = [
    pytest.param((), id="empty"),
    pytest.param((make_runner("j", phase="Running", runner_id=1, job=True),), id="busy"),
    pytest.param((make_runner("o", phase="Outdated", revision=3, deleting=True),), id="outdated-deleting"),
    pytest.param((idle("a", 1), make_runner("o", phase="Outdated", revision=2)), id="needs-cleanup"),
]


@pytest.mark.parametrize("children", APPLY_CASES)
@pytest.mark.parametrize("phase", ["", "Running", "Outdated"])
def test_i4_2_an_applied_revision_sets_the_phase_from_the_runners_both_ways(
    children: tuple[dict[str, Any], ...], phase: str
) -> None:
    w = world(children, rev=3, app=2, phase=phase)
    for _ in range(4):
        snapshot = w.snapshot()
        decision = w.step()
        for patch in status_patches(decision):
            if "appliedActionableRevision" not in patch:
                continue  # a plain updateStatus: only "<=" holds there (Outdated is sticky)
            target = machine.target_revision(snapshot)
            current = runners.classify(snapshot.children, target).outdated
            phase_after = patch.get("phase", machine.current_phase(snapshot))
            assert (phase_after == "Outdated") == bool(current)
        w.settle()
    assert w.status["appliedActionableRevision"] == 3 and w.status["phase"] == "Running"


def test_i4_3_a_stale_outdated_runner_never_sets_outdated_and_is_deleted_next() -> None:
    w = world((make_runner("old", phase="Outdated", revision=1, runner_id=5), idle("a", 6)), rev=2, app=2)
    w.obj["spec"].update(replicas=2, patchID=0)
    decision = w.step()
    assert names(deletes(decision)) == ["old"] and not creates(decision)
    assert w.status["phase"] == "Running"
    w.settle()
    (created,) = creates(w.step())  # replaced through scaling on a later pass
    assert created.body["metadata"]["annotations"][naming.ANNOTATION_ACTIONABLE_REVISION] == "2"
    assert w.status["phase"] == "Running"


def test_a_current_outdated_runner_sets_outdated_and_is_not_replaced() -> None:
    """§8 item 12 not ported: the pass that sees the verdict creates no replacement."""
    w = world(
        (make_runner("o", phase="Outdated", revision=1, runner_id=5), idle("a", 6)), replicas=2, patch_id=0
    )
    decision = w.step()
    assert not creates(decision) and not deletes(decision)
    (transition,) = decision.transitions
    assert (transition.from_, transition.to) == ("Running", "Outdated")
    assert w.status["phase"] == "Outdated"


def test_scenario_4_4_b_a_spec_update_clears_outdated_immediately() -> None:
    w = world(
        (make_runner("r2", phase="Outdated", revision=3, runner_id=2), idle("r5", 5, revision=3)),
        rev=3,
        replicas=2,
        patch_id=4,
        phase="Outdated",
    )
    w.publish(4)
    first = w.step()
    assert names(deletes(first)) == ["r2"] and names(releases(first)) == ["r5"]
    assert not status_patches(first)
    w.settle()
    applied = w.step()
    assert status_patches(applied) == [{"appliedActionableRevision": 4, "phase": "Running"}]
    assert [(t.from_, t.to) for t in applied.transitions] == [("Outdated", "Running")]
    w.listener_patch(replicas=2, patch_id=5)
    for effect in creates(w.step()):
        assert effect.body["metadata"]["annotations"][naming.ANNOTATION_ACTIONABLE_REVISION] == "4"
    assert len(w.live) == 2


# == C7 on the ERS side: parked at zero, recovery (§4.5, §4.6) ============================================


def parked_world() -> World:
    """Scenario 4.5-A up to the park: a exits 7, the set goes Outdated, the ARS pins 0/0."""
    w = world(
        (
            idle("a", 1, patch_id=7),
            idle("b", 2, created=1, patch_id=7),
            make_runner("c", phase="Running", runner_id=3, job=True, created=2, patch_id=7),
        ),
        rev=1,
        replicas=3,
        patch_id=7,
    )
    w.obj["status"].update(currentReplicas=3, runningEphemeralRunners=3)
    w.set_runner("a", phase="Outdated")
    decision = w.step()
    assert [(t.from_, t.to) for t in decision.transitions] == [("Running", "Outdated")]
    w.listener_patch(replicas=0, patch_id=0)
    return w


def test_scenario_4_5_a_the_outdated_branch_releases_all_but_busy_runners() -> None:
    w = parked_world()
    decision = w.step()
    assert names(deletes(decision)) == ["a"] and names(releases(decision)) == ["b"]
    assert not creates(decision) and not status_patches(decision)
    w.settle()
    for _ in range(20):
        decision = w.step()
        assert decision.is_noop
    assert w.remove_calls == [2]  # I5.2: no Actions call but the release of b
    assert w.live == ["c"]  # I5.4: the runner with a job stays
    assert w.status["phase"] == "Outdated"
    assert w.obj["spec"]["actionableRevision"] == w.status["appliedActionableRevision"] == 1


def test_i5_4_while_parked_runners_with_a_job_stay_and_all_others_go() -> None:
    """I5.4: pinned at zero in Outdated, no pass deletes a runner that has a job, and a Running one is
    not even asked to be removed; every other child (idle, unregistered, finished, failed, outdated of
    either kind) goes. A Pending runner is asked to be removed whatever its job (§2.2 cleanup step 5):
    the service's JobStillRunning keeps it."""
    busy = (
        make_runner("busy-running", phase="Running", runner_id=1, job=True),
        make_runner("busy-pending", phase="Pending", runner_id=2, job=True, created=1),
    )
    others = (
        idle("idle", 3, created=2),
        make_runner("unregistered", phase="Pending", created=3),
        make_runner("finished", phase="Succeeded", runner_id=4, created=4),
        make_runner("failed", phase="Failed", runner_id=5, created=5),
        make_runner("outdated", phase="Outdated", runner_id=6, revision=1, created=6),
        make_runner("stale", phase="Outdated", runner_id=7, revision=0, created=7),
    )
    w = world((*busy, *others), rev=1, replicas=0, patch_id=0)
    w.obj["status"].update(phase="Outdated")
    w.busy.add(2)
    for _ in range(10):
        decision = w.step()
        assert not {"busy-running", "busy-pending"} & set(names(deletes(decision))), decision
        assert "busy-running" not in names(releases(decision)), decision
        assert not creates(decision)
        w.settle()
    assert sorted(w.runners) == w.live == ["busy-pending", "busy-running"]
    assert w.status["phase"] == "Outdated"
    assert 1 not in w.remove_calls and 3 in w.remove_calls


def test_scenario_4_5_b_a_late_listener_patch_creates_nothing_while_parked() -> None:
    w = parked_world()
    w.step()
    w.settle()
    w.listener_patch(replicas=4, patch_id=9)
    for _ in range(3):
        decision = w.step()
        assert not creates(decision) and not status_patches(decision)
    assert w.created == []


def test_scenario_4_6_a_recovery_applies_the_bumped_revision_then_scales() -> None:
    """I6.4 on the ERS side: Running with app == rev; the pin holds until the new listener patches."""
    w = parked_world()
    w.step()
    w.settle()
    w.publish(2)  # the ARS republishes the unchanged spec with max(rev, app) + 1
    decision = w.step()
    assert status_patches(decision) == [{"appliedActionableRevision": 2, "phase": "Running"}]
    pinned = w.step()  # pinned at 0/0: the counters frozen while Outdated catch up, nothing else
    assert not creates(pinned) and not releases(pinned) and not deletes(pinned)
    assert status_patches(pinned) == [{"currentReplicas": 1, "runningEphemeralRunners": 1}]
    w.listener_patch(replicas=2, patch_id=0)
    created = creates(w.step())
    assert len(created) == 1  # c still runs its job
    assert created[0].body["metadata"]["annotations"][naming.ANNOTATION_ACTIONABLE_REVISION] == "2"
    assert w.status["phase"] == "Running"


def test_scenario_4_6_d_without_the_bump_the_set_stays_parked() -> None:
    """The counter-example: a listener patch alone never scales an Outdated set (so the ARS must bump)."""
    w = parked_world()
    w.step()
    w.settle()
    w.listener_patch(replicas=3, patch_id=1)
    w.steps(5)
    assert w.created == [] and w.status["phase"] == "Outdated"


def test_scenario_4_6_e_a_second_rejection_parks_again_once() -> None:
    w = parked_world()
    w.step()
    w.settle()
    w.publish(2)
    w.step()
    w.listener_patch(replicas=2, patch_id=1)
    w.step()
    w.register_all()
    new = [n for n in w.live if n != "c"]
    w.set_runner(new[0], phase="Outdated")
    w.listener_patch(replicas=2, patch_id=2)
    decision = w.step()
    assert [(t.from_, t.to, t.revisions["appliedActionableRevision"]) for t in decision.transitions] == [
        ("Running", "Outdated", 2)
    ]
    assert not creates(decision)
    phases_written = [p.get("phase") for d in w.steps(10) for p in status_patches(d)]
    assert phases_written == []


# == scaling (§2.2 step 9) ===============================================================================


def scaled(pending: int, running: int, failed: int, *, latest: int, replicas: int, patch_id: int) -> Decision:
    children: list[dict[str, Any]] = []
    for i in range(pending):
        children.append(make_runner(f"p{i}", phase="Pending", runner_id=10 + i, created=i, patch_id=latest))
    for i in range(running):
        children.append(idle(f"r{i}", 20 + i, created=10 + i, patch_id=latest))
    for i in range(failed):
        children.append(make_runner(f"f{i}", phase="Failed", runner_id=30 + i, patch_id=latest))
    return world(tuple(children), replicas=replicas, patch_id=patch_id).step()


@pytest.mark.parametrize(
    ("pending", "running", "failed", "latest", "replicas", "patch_id", "created", "released"),
    [
        pytest.param(0, 0, 0, 0, 3, 1, 3, 0, id="up-new-patch"),
        pytest.param(0, 1, 0, 4, 3, 5, 2, 0, id="up-by-the-difference"),
        pytest.param(0, 1, 0, 4, 3, 4, 0, 0, id="same-patch-no-scaling"),
        pytest.param(0, 1, 0, 4, 3, 0, 2, 0, id="force-up"),
        pytest.param(1, 2, 0, 4, 1, 5, 0, 0, id="positive-patch-never-down"),
        pytest.param(1, 2, 0, 4, 1, 0, 0, 2, id="force-down"),
        pytest.param(0, 2, 0, 0, 0, 0, 0, 2, id="force-down-to-zero"),
        pytest.param(0, 2, 0, 0, 2, 0, 0, 0, id="at-scale"),
        pytest.param(0, 1, 1, 3, 2, 0, 0, 0, id="failed-counts-in-total"),
        pytest.param(0, 1, 2, 3, 1, 0, 0, 1, id="failed-is-never-released"),
    ],
)
def test_scaling_by_replicas_and_patch_id(
    pending: int,
    running: int,
    failed: int,
    latest: int,
    replicas: int,
    patch_id: int,
    created: int,
    released: int,
) -> None:
    decision = scaled(pending, running, failed, latest=latest, replicas=replicas, patch_id=patch_id)
    assert (len(creates(decision)), len(releases(decision))) == (created, released)


def test_idle_release_order_pending_oldest_first_then_running_oldest_first() -> None:
    children = (
        idle("r-new", 1, created=40),
        idle("r-old", 2, created=5),
        make_runner("p-new", phase="Pending", runner_id=3, created=30),
        make_runner("p-old", phase="Pending", runner_id=4, created=20),
    )
    w = world(children, replicas=0, patch_id=0)
    assert names(releases(w.step())) == ["p-old", "p-new", "r-old", "r-new"]
    w = world(children, replicas=1, patch_id=0)
    assert names(releases(w.step())) == ["p-old", "p-new", "r-old"]


def test_idle_release_skips_unregistered_and_busy_runners() -> None:
    children = (
        make_runner("unregistered", phase="Pending", runner_id=0, created=1),
        make_runner("job", phase="Running", runner_id=5, job=True, created=2),
        idle("idle", 6, created=3),
        idle("idle2", 7, created=4),
    )
    w = world(children, replicas=3, patch_id=0)
    decision = w.step()
    assert names(releases(decision)) == ["idle"]
    assert not deletes(decision)


def test_pinned_at_zero_an_unregistered_runner_is_deleted_and_busy_ones_are_waited_for() -> None:
    """The scale set's drain pin: a runner that never registered (its JIT config failed) cannot be running
    a job, so it goes, without a RemoveRunner; only the runner with a job is left."""
    children = (
        make_runner("unregistered", phase="Pending", runner_id=0, created=1),
        make_runner("job", phase="Running", runner_id=5, job=True, created=2),
        idle("idle", 6, created=3),
    )
    w = world(children, replicas=0, patch_id=0)
    decision = w.step()
    assert names(deletes(decision)) == ["unregistered"]
    assert names(releases(decision)) == ["idle"]
    assert 0 not in [e.runner_id for e in releases(decision)]
    w.settle()
    assert w.live == ["job"]
    w.step()
    assert (w.status["pendingEphemeralRunners"], w.status["runningEphemeralRunners"]) == (0, 1)


def test_job_still_running_skips_the_runner_and_a_later_decision_takes_the_next() -> None:
    w = world((idle("a", 1, created=1), idle("b", 2, created=2)), replicas=1, patch_id=0)
    w.busy.add(1)
    assert names(releases(w.step())) == ["a"]
    assert w.live == ["a", "b"]
    assert names(releases(w.step())) == ["b"]  # a is busy for now
    w.settle()
    assert not releases(w.step())
    assert w.remove_calls == [1, 2]


def test_a_busy_runner_is_asked_again_when_its_window_ends_and_goes_once_its_job_is_done() -> None:
    """Upstream asks a busy runner again on every pass: here a JobStillRunning answer holds for
    ``BUSY_RECHECK_SECONDS`` and the decision requeues itself for the end of the window."""
    w = world((idle("a", 1),), replicas=0, patch_id=0)
    w.busy.add(1)
    assert names(releases(w.step())) == ["a"]
    waiting = w.step()
    assert not releases(waiting)
    assert w.requeues == [machine.BUSY_RECHECK_SECONDS]
    w.busy.clear()  # the job finished
    w.now += timedelta(seconds=machine.BUSY_RECHECK_SECONDS - 1)
    assert not releases(w.step())
    assert w.requeues[-1] == 1
    w.now += timedelta(seconds=1)
    assert names(releases(w.step())) == ["a"]
    w.settle()
    assert w.live == [] and w.remove_calls == [1, 1]


def test_a_failed_release_is_asked_again_and_a_released_one_is_not() -> None:
    w = world((idle("a", 1),), replicas=0, patch_id=0)
    w.failing.add(1)
    w.step()
    assert names(releases(w.step())) == ["a"]
    w.failing.clear()
    w.step()
    # The deletion is not observed yet (watch lag): the result says it went, so it is deleting.
    w.runners["a"]["metadata"].pop("deletionTimestamp")
    decision = w.step()
    assert not releases(decision)
    assert w.status["currentReplicas"] == 0
    assert w.remove_calls == [1, 1, 1]


def test_finished_runners_are_deleted_after_the_status_only_when_scaling_runs() -> None:
    done = make_runner("done", phase="Succeeded", runner_id=9, patch_id=3)
    w = world((done,), replicas=1, patch_id=4)
    w.obj["status"]["currentReplicas"] = 1
    decision = w.step()
    assert [type(e).__name__ for e in decision.effects] == ["CreateObject", "MergePatch", "DeleteObject"]
    assert names(deletes(decision)) == ["done"]
    assert not deletes(world((done,), replicas=1, patch_id=3).step())


def test_a_decision_taken_again_before_its_runners_are_observed_asks_for_the_same_ones() -> None:
    w = world(replicas=3, patch_id=2)
    lagged = w.snapshot()
    first = w.step()
    seen = next(iter(w.runners.values()))
    again = machine.decide(Snapshot(subject=REF, obj=lagged.obj, now=lagged.now, children=(seen,)))
    assert set(names(creates(again))) < set(names(creates(first)))
    w.apply(again)
    assert len(w.runners) == 3  # AlreadyExists: nothing was created twice


def test_new_runners_reference_the_proxy_secret_written_first() -> None:
    w = world(replicas=2, patch_id=1, proxy=True)
    decision = w.step()
    (write,) = effects_of(decision, effects.WriteProxySecret)
    created = creates(decision)
    assert decision.effects.index(write) == 0
    assert write.target == effects.ObjectRef(
        "Secret", "default", naming.runner_set_proxy_secret_name("arc", "default")
    )
    assert write.metadata == {
        "labels": {naming.LABEL_SCALE_SET_NAME: "arc", naming.LABEL_SCALE_SET_NAMESPACE: "default"}
    }
    assert write.owner["kind"] == "EphemeralRunnerSet" and write.owner["controller"] is True
    assert write.proxy == w.obj["spec"]["ephemeralRunnerSpec"]["proxy"]
    assert [c.body["spec"]["proxySecretRef"] for c in created] == [write.target.name] * 2
    assert not effects_of(w.step(), effects.WriteProxySecret)  # present and matching: nothing


def test_proxy_secret_label_drift_updates_it_and_requeues() -> None:
    w = world(replicas=2, patch_id=1, proxy=True)
    w.proxy_secret = {"metadata": {"labels": {naming.LABEL_SCALE_SET_NAME: "other"}}}
    decision = w.step()
    assert [type(e).__name__ for e in decision.effects] == ["WriteProxySecret", "RequeueAfter"]
    assert w.requeues == [1.0]


# == status (§2.2 step 10) ===============================================================================


def test_the_first_status_carries_every_counter() -> None:
    w = world(
        (idle("a", 1, patch_id=2), make_runner("f", phase="Failed", patch_id=2)),
        rev=0,
        phase=None,
        patch_id=2,
    )
    decision = w.step()
    assert status_patches(decision) == [
        {
            "currentReplicas": 2,
            "pendingEphemeralRunners": 0,
            "runningEphemeralRunners": 1,
            "failedEphemeralRunners": 1,
            "phase": "Running",
        }
    ]
    assert [(t.from_, t.to, t.trigger) for t in decision.transitions] == [("", "Running", "update_status")]


def test_status_writes_only_the_fields_that_differ() -> None:
    w = world((idle("a", 1, patch_id=2),), patch_id=2, replicas=1)
    w.obj["status"].update(currentReplicas=1, pendingEphemeralRunners=1)
    assert status_patches(w.step()) == [{"pendingEphemeralRunners": 0, "runningEphemeralRunners": 1}]
    assert w.step().is_noop


def test_an_applied_revision_on_an_empty_status_includes_the_required_counter() -> None:
    w = world((idle("j", 1, job=True),), rev=1, phase=None)
    assert status_patches(w.step()) == [
        {"appliedActionableRevision": 1, "phase": "Running", "currentReplicas": 1}
    ]


def test_an_unknown_phase_reads_as_the_empty_one() -> None:
    w = world(phase="Bogus")
    assert machine.current_phase(w.snapshot()) is ErsPhase.NONE
    assert status_patches(w.step()) == [{"phase": "Running"}]


# == replay ==============================================================================================


SCENARIOS: list[Callable[[], World]] = [
    lambda: world((idle("a", 1), idle("b", 2)), rev=2, app=1),
    lambda: world((make_runner("o", phase="Outdated", revision=1), idle("a", 2)), rev=2, replicas=3),
    lambda: world((idle("a", 1, created=3), idle("b", 2, created=1)), replicas=0, patch_id=0),
    lambda: world(replicas=2, patch_id=5, proxy=True),
]


@pytest.mark.parametrize("build", SCENARIOS)
def test_decisions_are_pure_and_ignore_the_order_of_children(build: Callable[[], World]) -> None:
    snapshot = build().snapshot()
    reordered = Snapshot(
        subject=snapshot.subject,
        obj=snapshot.obj,
        now=snapshot.now,
        related=snapshot.related,
        children=tuple(reversed(snapshot.children)),
        results=snapshot.results,
    )
    assert machine.decide(snapshot) == machine.decide(snapshot) == machine.decide(reordered)


@pytest.mark.parametrize("build", SCENARIOS)
def test_i3_1_and_i3_2_revisions_stay_ordered_through_every_pass(build: Callable[[], World]) -> None:
    w = build()
    applied = [machine.applied_revision(w.snapshot())]
    for _ in range(6):
        w.step()
        w.register_all()
        w.settle()
        applied.append(machine.applied_revision(w.snapshot()))
        assert applied[-1] <= machine.spec_revision(w.snapshot())
    assert applied == sorted(applied)


def test_new_effects_round_trip_through_json() -> None:
    scope = effects.ActionsScope("https://github.com/org", "default", "creds", proxy={"https": {"url": "x"}})
    target = effects.ObjectRef("EphemeralRunner", "default", "arc-runner-bcdfg")
    originals: list[effects.Effect] = [
        effects.ReleaseRunner(subject=REF, target=target, uid="u", scope=scope, runner_id=12),
        effects.WriteProxySecret(
            target=effects.ObjectRef("Secret", "default", "p"),
            proxy={"https": {"url": "x"}},
            owner={"uid": "u"},
        ),
    ]
    for original in originals:
        assert effects.from_json(effects.to_json(original)) == original
    assert (
        originals[0].key
        == effects.release_key(target, 12)
        == "release:EphemeralRunner/default/arc-runner-bcdfg#12"
    )
