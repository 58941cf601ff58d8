"""One AutoscalingRunnerSet per Actions scale set (``statemachines.claims``), and a scale set deleted behind
the machine's back registered again (``scalesets.verify``): the pure decisions, over ``arsworld``.

* What a claim is: the config URL's host and scope, the runner group and the scale set name, compared as
  GitHub compares them.
* Who owns it: the claimant holding a scale set id, then the oldest; the others are refused with
  ``ConfigurationValid`` False naming the owner and ask nothing of the Actions service; one that was
  sharing the owner's id gives it up (listener deleted, runner set pinned, id dropped).
* Deleting never deletes an Actions scale set another scale set (not being deleted) holds.
* A listener whose pod failed makes the machine ask whether the scale set still exists, once per failure;
  gone, the id is dropped with a Warning Event and the scale set is registered again under a new id.
"""

from __future__ import annotations

from typing import Any

import pytest

from statemachines import arsconditions, claims, conditions, desired, naming, scalesets
from statemachines.effects import ActionsOp, DeleteObject, EmitEvent
from tests.unit.statemachines.arsworld import ARS_REF, ERS_REF, NS, World, new_ars, running_world

URL = "https://github.com/org"


def other(
    name: str = "first", namespace: str = "team-a", scale_set_id: int | None = 42, **spec: Any
) -> dict[str, Any]:
    body = new_ars(runnerScaleSetName="arc", **spec)
    meta = body["metadata"]
    meta.update(name=name, namespace=namespace, uid=f"uid-{name}", creationTimestamp="2025-06-01T00:00:00Z")
    if scale_set_id is not None:
        meta["annotations"] = {naming.ANNOTATION_RUNNER_SCALE_SET_ID: str(scale_set_id)}
    return body


@pytest.mark.parametrize(
    ("a", "b", "same"),
    [
        ({}, {"runnerScaleSetName": "ARC"}, True),
        ({"runnerGroup": ""}, {"runnerGroup": "Default"}, True),
        ({"githubConfigUrl": URL}, {"githubConfigUrl": "https://GitHub.com/ORG/"}, True),
        ({}, {"runnerScaleSetName": "arc-2"}, False),
        ({}, {"runnerGroup": "blue"}, False),
        ({}, {"githubConfigUrl": "https://github.com/org/repo"}, False),
        ({}, {"githubConfigUrl": "https://ghe.example.com/org"}, False),
    ],
)
def test_a_claim_is_host_scope_group_and_name_as_github_compares_them(
    a: dict[str, Any], b: dict[str, Any], same: bool
) -> None:
    first = new_ars(**{"runnerScaleSetName": "arc", **a})
    second = new_ars(**{"runnerScaleSetName": "arc", **b})
    assert (claims.claim(first) == claims.claim(second)) is same


def test_without_runner_scale_set_name_the_claim_is_the_object_name() -> None:
    assert claims.claim(new_ars()) == claims.claim(new_ars(runnerScaleSetName="ARC"))


def test_the_holder_of_an_id_outranks_an_older_claimant_without_one() -> None:
    older = other("older", scale_set_id=None)
    older["metadata"]["creationTimestamp"] = "2020-01-01T00:00:00Z"
    assert claims.rank(other("holder")) < claims.rank(older)
    assert claims.rank(older) < claims.rank(other("younger", scale_set_id=None))


def steps(world: World, count: int = 8) -> None:
    """``count`` passes (a refused scale set never goes quiet: it asks to be decided again later)."""
    for _ in range(count):
        world.step()


def fresh_world(peer: dict[str, Any] | None) -> World:
    world = World(peer=peer)
    world.add(new_ars(runnerScaleSetName="arc"))
    return world


def test_a_second_claim_is_refused_naming_the_owner_and_asks_the_service_nothing() -> None:
    world = fresh_world(other())
    steps(world)
    valid = conditions.find(world.ars.get("status"), arsconditions.CONFIGURATION_VALID)
    assert valid is not None and valid["status"] == conditions.FALSE
    assert valid["reason"] == arsconditions.Reason.SCALE_SET_NAME_TAKEN == "ScaleSetNameTaken"
    assert "team-a/first" in valid["message"] and "'arc'" in valid["message"]
    warnings = [e for e in world.effects_of(EmitEvent) if e.reason == "ScaleSetNameTaken"]
    assert len(warnings) == 1 and "team-a/first" in warnings[0].message
    assert world.actions.calls == [] and world.ers is None and world.listener is None


def test_the_owner_goes_on_beside_a_younger_claimant() -> None:
    younger = other("second", scale_set_id=None)
    younger["metadata"]["creationTimestamp"] = "2030-01-01T00:00:00Z"
    world = fresh_world(younger)
    world.settle()
    assert ActionsOp.CREATE_RUNNER_SCALE_SET in world.actions.ops()
    assert desired.scale_set_id(world.ars) is not None


def test_a_claimant_that_shared_the_owners_scale_set_gives_it_up() -> None:
    world = running_world(runnerScaleSetName="arc")
    held = desired.scale_set_id(world.ars)
    world.peer = other(scale_set_id=held)
    world.step()
    assert [e.target.kind for e in world.effects_of(DeleteObject)] == ["AutoscalingListener"]
    steps(world)
    assert world.listener is None
    assert naming.ANNOTATION_RUNNER_SCALE_SET_ID not in world.ars["metadata"].get("annotations", {})
    assert world.find(ERS_REF) is not None and world.find(ERS_REF)["spec"]["replicas"] == 0  # type: ignore[index]
    assert held in world.actions.scale_sets
    assert ActionsOp.DELETE_RUNNER_SCALE_SET not in world.actions.ops()


def delete_ars(world: World) -> None:
    world.ars["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"


def test_deleting_keeps_the_scale_set_another_claimant_holds() -> None:
    world = running_world(runnerScaleSetName="arc")
    held = desired.scale_set_id(world.ars)
    world.peer = other(scale_set_id=held)
    delete_ars(world)
    world.settle()
    assert world.get(ARS_REF.kind, NS, ARS_REF.name) is None
    assert held in world.actions.scale_sets
    assert ActionsOp.DELETE_RUNNER_SCALE_SET not in world.actions.ops()
    kept = [e for e in world.effects_of(EmitEvent) if e.reason == "ScaleSetKept"]
    assert kept and "team-a/first" in kept[0].message


@pytest.mark.parametrize("peer_state", ["terminating", "another id", "no id"])
def test_deleting_deletes_the_scale_set_no_live_claimant_holds(peer_state: str) -> None:
    world = running_world(runnerScaleSetName="arc")
    held = desired.scale_set_id(world.ars)
    assert held is not None
    peer = other(scale_set_id={"another id": held + 1, "no id": None}.get(peer_state, held))
    if peer_state == "terminating":
        peer["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    world.peer = peer
    delete_ars(world)
    world.settle()
    assert held not in world.actions.scale_sets


def failed_listener(world: World, since: str = "2026-01-01T00:00:00Z", reason: str = "PodFailed") -> None:
    listener = world.listener
    assert listener is not None
    condition = {"type": "Ready", "status": "False", "reason": reason, "lastTransitionTime": since}
    listener["status"] = {"conditions": [condition]}


def test_a_running_listener_asks_nothing_about_the_scale_set() -> None:
    world = running_world()
    world.step()
    assert ActionsOp.GET_RUNNER_SCALE_SET_BY_ID not in world.actions.ops()


def test_a_failed_listener_asks_once_whether_the_scale_set_exists_and_goes_on_when_it_does() -> None:
    world = running_world()
    held = desired.scale_set_id(world.ars)
    failed_listener(world)
    world.settle()
    world.step()
    assert world.actions.ops().count(ActionsOp.GET_RUNNER_SCALE_SET_BY_ID) == 1
    assert desired.scale_set_id(world.ars) == held
    failed_listener(world, since="2026-01-01T00:01:00Z", reason="ListenerBackOff")
    world.settle()
    assert world.actions.ops().count(ActionsOp.GET_RUNNER_SCALE_SET_BY_ID) == 2


def test_a_scale_set_gone_from_the_service_is_registered_again_saying_so() -> None:
    world = running_world()
    old = desired.scale_set_id(world.ars)
    assert old is not None
    world.actions.scale_sets.pop(old)
    failed_listener(world)
    world.settle()
    new = desired.scale_set_id(world.ars)
    assert new is not None and new != old and new in world.actions.scale_sets
    gone = [e for e in world.effects_of(EmitEvent) if e.reason == scalesets.SCALE_SET_GONE]
    assert len(gone) == 1 and gone[0].type == "Warning" and str(old) in gone[0].message
    assert world.ars["metadata"]["annotations"][scalesets.ANNOTATION_GONE] == str(old)
    ers = world.find(ERS_REF)
    assert ers is not None and ers["spec"]["ephemeralRunnerSpec"]["runnerScaleSetId"] == new
    assert world.ars["metadata"]["annotations"][naming.ANNOTATION_RUNNER_SCALE_SET_ID] == str(new)
