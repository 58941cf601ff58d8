"""A derived object the API server refuses: reported on the object that wrote it and on its scale set,
asked again after a growing backoff, and at once when the inputs changed."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from statemachines import arsconditions, conditions, pods, refusals
from statemachines import autoscalinglisteners as AL
from statemachines import ephemeralrunnersets as ERS
from statemachines.effects import (
    CreateObject,
    EmitEvent,
    MergePatch,
    ObjectRef,
    RequeueAfter,
    WriteProxySecret,
)
from statemachines.snapshots import Snapshot
from tests.unit.statemachines import arsworld, ersworld, listenerworld
from tests.unit.statemachines.listenerworld import AL_NAME, AL_NS, ARS_NS, ListenerWorld

ROLE = ObjectRef("Role", ARS_NS, AL_NAME)
ROLE_CREATE = f"create:{ROLE}"
REFUSED = 'Role.rbac.authorization.k8s.io "x" is invalid: metadata.labels: Invalid value: "a b"'


def refused_at(world: Any) -> dict[str, Any]:
    return {"ok": False, "error": "Invalid", "message": REFUSED, "at": pods.format_time(world.now)}


def snapshot_with(ready: dict[str, Any] | None, *, generation: int = 1, at_offset: float = 0.0) -> Snapshot:
    obj: dict[str, Any] = {"metadata": {"generation": generation}, "status": {}}
    if ready is not None:
        obj["status"]["conditions"] = [ready]
    return Snapshot(subject=ROLE, obj=obj, now=arsworld.NOW + timedelta(seconds=at_offset))


def test_the_retry_waits_as_long_as_the_problem_has_been_reported() -> None:
    at = arsworld.NOW
    refusal = refusals.Refusal(ROLE, "create", REFUSED, at)
    # Not reported yet: the shortest wait, counted from the refusal.
    assert refusals.retry_in(snapshot_with(None), refusal, "X") == refusals.RETRY_MIN
    since = pods.format_time(at - timedelta(seconds=40))
    ready = {"type": "Ready", "status": "False", "reason": "X", "lastTransitionTime": since}
    assert refusals.retry_in(snapshot_with({**ready, "observedGeneration": 1}), refusal, "X") == 40
    assert refusals.retry_in(snapshot_with(ready, at_offset=15), refusal, "X") == 25
    long_ago = {**ready, "lastTransitionTime": pods.format_time(at - timedelta(hours=2))}
    assert refusals.retry_in(snapshot_with(long_ago), refusal, "X") == refusals.RETRY_MAX
    # Another reason, or the spec changed since the condition was written: no backoff carried over.
    assert refusals.retry_in(snapshot_with(ready), refusal, "Y") == refusals.RETRY_MIN
    moved = {**ready, "observedGeneration": 1}
    assert refusals.retry_in(snapshot_with(moved, generation=2), refusal, "X") == 0


def test_the_message_names_the_object_and_the_reason_on_one_line() -> None:
    refusal = refusals.Refusal(ROLE, "create", "bad\nlabel " + "x" * 500, None)
    assert refusal.message.startswith(
        f"the API server refused to create the Role {ARS_NS}/{AL_NAME}: bad label"
    )
    assert "\n" not in refusal.message and len(refusal.message) <= refusals.MESSAGE_LIMIT


# -- the listener -------------------------------------------------------------------------------------------


def ready_of(world: ListenerWorld) -> dict[str, Any]:
    listener = world.listener
    assert listener is not None
    found = conditions.find(listener.get("status"), conditions.READY)
    assert found is not None
    return found


def role_refused_world() -> ListenerWorld:
    """A listener whose Role create the API server has just refused."""
    world = ListenerWorld.with_listener()
    for _ in range(10):
        decision = world.step()
        if any(isinstance(e, CreateObject) and e.target == ROLE for e in decision.effects):
            break
    del world.objects[("Role", ARS_NS, AL_NAME)]
    world.results[ROLE_CREATE] = refused_at(world)
    return world


def test_a_refused_role_is_reported_once_and_asked_again_after_a_backoff() -> None:
    world = role_refused_world()
    world.advance(1)
    first = world.step()
    ready = ready_of(world)
    assert (ready["status"], ready["reason"]) == ("False", AL.OBJECT_REJECTED)
    assert ready["message"] == f"the API server refused to create the Role {ARS_NS}/{AL_NAME}: {REFUSED}"
    assert [e.reason for e in first.effects if isinstance(e, EmitEvent)] == [AL.OBJECT_REJECTED]
    assert not [e for e in first.effects if isinstance(e, CreateObject)]
    (wait,) = [e.seconds for e in first.effects if isinstance(e, RequeueAfter)]
    assert wait == refusals.RETRY_MIN - 1
    # Waited out: asked again, and refused again, the next wait is longer; no second Event.
    world.advance(wait)
    again = world.step()
    assert [e.target for e in again.effects if isinstance(e, CreateObject)] == [ROLE]
    del world.objects[("Role", ARS_NS, AL_NAME)]
    world.results[ROLE_CREATE] = refused_at(world)
    later = world.step()
    assert not [e for e in later.effects if isinstance(e, EmitEvent | CreateObject)]
    (longer,) = [e.seconds for e in later.effects if isinstance(e, RequeueAfter)]
    assert longer >= wait
    # Created at the next attempt: the listener goes on to its pod and is Ready once it runs.
    world.advance(longer)
    world.settle()
    world.run()
    world.settle()
    assert (ready_of(world)["status"], ready_of(world)["reason"]) == ("True", "PodRunning")


# -- the scale set ------------------------------------------------------------------------------------------


def ars_ready(world: arsworld.World) -> dict[str, Any]:
    found = conditions.find(world.ars.get("status"), conditions.READY)
    assert found is not None
    return found


def warnings(world: arsworld.World) -> list[str]:
    return [e.reason for e in world.effects_of(EmitEvent) if e.type == "Warning"]


def test_a_refused_runner_set_is_not_ready_and_is_asked_again_after_a_backoff() -> None:
    world = arsworld.World()
    world.add(arsworld.new_ars())
    world.reject_creates.add("EphemeralRunnerSet")
    for _ in range(10):
        if world.step().note == "runner set created":
            break
    ers_create = f"create:{arsworld.ERS_REF}"
    world.results[ers_create] = {**refused_at(world), "message": "labels: Invalid value"}
    world.now += timedelta(seconds=1)
    decision = world.step()
    ready = ars_ready(world)
    assert (ready["status"], ready["reason"]) == ("False", arsconditions.RUNNER_SET_REJECTED)
    assert "refused to create the EphemeralRunnerSet default/arc: labels: Invalid value" in ready["message"]
    assert warnings(world) == [arsconditions.RUNNER_SET_REJECTED]
    assert not [e for e in decision.effects if isinstance(e, CreateObject)]
    assert [e.seconds for e in decision.effects if isinstance(e, RequeueAfter)] == [refusals.RETRY_MIN - 1]
    # A spec edit may have fixed it: asked again at once.
    world.edit(arsworld.ARS_REF, {"spec": {"maxRunners": 4}})
    retried = world.step()
    assert [e.target for e in retried.effects if isinstance(e, CreateObject)] == [arsworld.ERS_REF]


def test_a_listener_that_reports_a_refused_object_makes_its_scale_set_not_ready() -> None:
    world = arsworld.running_world()
    listener = world.listener
    assert listener is not None
    message = f"the API server refused to create the Role {arsworld.NS}/x: {REFUSED}"
    refused = {"type": "Ready", "status": "False", "reason": AL.OBJECT_REJECTED, "message": message}
    listener["status"] = {"conditions": [refused]}
    world.step()
    ready = ars_ready(world)
    assert (ready["status"], ready["reason"]) == ("False", AL.OBJECT_REJECTED)
    assert ready["message"].endswith(message) and "listener arc-systems/" in ready["message"]
    assert world.phase == "Running"
    assert warnings(world) == [AL.OBJECT_REJECTED]
    assert world.step().is_noop  # said once
    listener["status"] = {"conditions": [{**refused, "status": "True", "reason": "PodRunning"}]}
    world.step()
    assert (ars_ready(world)["status"], ars_ready(world)["reason"]) == ("True", "Running")


# -- the runner set's runners -------------------------------------------------------------------------------


def test_a_refused_runner_makes_its_set_not_ready_and_waits_out_a_backoff() -> None:
    world = ersworld.World(ersworld.make_ers(replicas=1))
    first = world.step()
    (create,) = [e for e in first.effects if isinstance(e, CreateObject)]
    del world.runners[create.target.name]
    world.created.clear()
    at = pods.format_time(ersworld.NOW)
    world.results[create.key] = {"ok": False, "error": "Invalid", "message": "labels: bad", "at": at}
    refused = world.step()
    ready = conditions.find(world.obj["status"], conditions.READY)
    assert ready is not None and (ready["status"], ready["reason"]) == ("False", ERS.RUNNER_REJECTED)
    assert ready["message"] == (
        f"the API server refused to create the EphemeralRunner default/{create.target.name}: labels: bad"
    )
    assert [e.reason for e in world.events] == [ERS.RUNNER_REJECTED]
    assert world.created == [] and world.requeues == [refusals.RETRY_MIN]
    assert not [e for e in refused.effects if isinstance(e, CreateObject)]
    # A new spec (the runner metadata fixed) names new runners: created at once.
    world.listener_patch(replicas=1, patch_id=1)
    world.step()
    assert len(world.created) == 1 and world.created[0] != create.target.name


def test_a_runner_set_that_reports_a_refused_runner_makes_its_scale_set_not_ready() -> None:
    world = arsworld.running_world()
    message = "the API server refused to create the EphemeralRunner default/arc-runner-bcdfg: labels: bad"
    refused = {"type": "Ready", "status": "False", "reason": ERS.RUNNER_REJECTED, "message": message}
    world.set_status(arsworld.ERS_REF, conditions=[refused])
    world.step()
    ready = ars_ready(world)
    assert (ready["status"], ready["reason"]) == ("False", ERS.RUNNER_REJECTED)
    assert ready["message"] == f"runner set default/arc: {message}"
    assert warnings(world) == [ERS.RUNNER_REJECTED]


def test_a_refused_listener_pod_is_asked_again_ever_later() -> None:
    world = ListenerWorld.with_listener()
    world.settle()
    world.run()
    world.settle()
    pod = ("Pod", AL_NS, AL_NAME)
    waits: list[float] = []
    for _ in range(3):
        del world.objects[pod]
        world.results[f"create:Pod/{AL_NS}/{AL_NAME}"] = refused_at(world)
        world.advance(1)
        decision = world.step()
        assert not [e for e in decision.effects if isinstance(e, CreateObject)]
        (wait,) = [e.seconds for e in decision.effects if isinstance(e, RequeueAfter)]
        waits.append(wait)
        world.advance(wait)
        assert [e.target.kind for e in world.step().effects if isinstance(e, CreateObject)] == ["Pod"]
    assert ready_of(world)["reason"] == AL.POD_REJECTED
    assert waits[0] == refusals.RETRY_MIN - 1 and waits[2] > waits[1] >= refusals.RETRY_MIN - 1, waits


def test_a_refused_runner_set_update_is_reported_and_asked_again_after_a_spec_edit() -> None:
    world = arsworld.running_world()
    world.fail_patches.add(arsworld.ERS_REF)
    world.edit(arsworld.ARS_REF, {"spec": {"ephemeralRunnerSetMetadata": {"labels": {"a b": "x"}}}})
    sent = world.step()
    patch = next(e for e in sent.effects if isinstance(e, MergePatch) and e.target == arsworld.ERS_REF)
    world.results[patch.key] = {**refused_at(world), "message": 'metadata.labels: Invalid value: "a b"'}
    world.now += timedelta(seconds=1)
    refused = world.step()
    ready = ars_ready(world)
    assert (ready["status"], ready["reason"]) == ("False", arsconditions.RUNNER_SET_REJECTED)
    assert ready["message"].startswith("the API server refused to update the EphemeralRunnerSet default/arc")
    assert not [e for e in refused.effects if isinstance(e, MergePatch) and e.target == arsworld.ERS_REF]
    assert warnings(world) == [arsconditions.RUNNER_SET_REJECTED]
    world.edit(
        arsworld.ARS_REF, {"spec": {"ephemeralRunnerSetMetadata": {"labels": {"a b": None, "a": "x"}}}}
    )
    again = world.step()
    assert [e for e in again.effects if isinstance(e, MergePatch) and e.target == arsworld.ERS_REF]


# -- a listener object that cannot be built ------------------------------------------------------------------


def test_the_listener_proxy_secret_reads_its_credentials_in_the_scale_set_namespace() -> None:
    world = ListenerWorld.with_listener(listenerworld.make_listener(proxy=True))
    passes = world.settle()
    [written] = [e for d in passes for e in d.effects if isinstance(e, WriteProxySecret)]
    assert written.target.namespace == AL_NS and written.secrets_namespace == ARS_NS


def test_a_proxy_secret_that_cannot_be_written_makes_the_listener_not_ready_once() -> None:
    world = ListenerWorld.with_listener(listenerworld.make_listener(proxy=True))
    for _ in range(10):
        decision = world.step()
        if (written := [e for e in decision.effects if isinstance(e, WriteProxySecret)]) != []:
            break
    del world.objects[("Secret", AL_NS, written[0].target.name)]
    missing = f"the Secret {ARS_NS}/proxy-creds named by spec.proxy.https.credentialSecretRef does not exist"
    world.results[written[0].key] = {"ok": False, "error": "ProxySecretMissing", "message": missing}
    failed = world.step()
    ready = ready_of(world)
    assert (ready["status"], ready["reason"]) == ("False", AL.PROXY_SECRET_FAILED)
    assert missing in ready["message"] and "\n" not in ready["message"]
    assert [e.reason for e in failed.effects if isinstance(e, EmitEvent)] == [AL.PROXY_SECRET_FAILED]
    assert [e.seconds for e in failed.effects if isinstance(e, RequeueAfter)] == [AL.RETRY_SECONDS]
    again = world.step()
    assert not [e for e in again.effects if isinstance(e, EmitEvent)]  # said once


@pytest.mark.parametrize("reason", AL.NOT_BUILT_REASONS)
def test_a_scale_set_is_never_ready_while_its_listener_cannot_be_built(reason: str) -> None:
    world = arsworld.running_world()
    listener = world.listener
    assert listener is not None
    message = f"building the listener failed ({reason})"
    listener["status"] = {
        "conditions": [{"type": "Ready", "status": "False", "reason": reason, "message": message}]
    }
    world.step()
    ready = ars_ready(world)
    assert (ready["status"], ready["reason"]) == ("False", reason)
    assert ready["message"].endswith(message)
    assert warnings(world) == [reason]
