"""Which keys an observed change asks to decide (the fold's ``apply`` over ``controller.loop.mapping``)."""

from __future__ import annotations

import copy
from typing import Any

from controller.loop.folding import Fold
from statemachines import listenerobjects
from store import clocks
from store.projection import Projection
from store.records import Record, RecordType
from tests.unit.controller.objects import CONTROLLER_NS, NS, Prefix, obj, ref

ARS_UID, ERS_UID, ER_UID, AL_UID = "ars-uid", "ers-uid", "er-uid", "al-uid"


def scale_set() -> dict[str, Any]:
    return obj(
        "AutoscalingRunnerSet",
        "arc",
        uid=ARS_UID,
        spec={"githubConfigUrl": "https://x/org", "githubConfigSecret": "creds"},
    )


def runner_set() -> dict[str, Any]:
    return obj(
        "EphemeralRunnerSet",
        "arc",
        uid=ERS_UID,
        owner=("AutoscalingRunnerSet", "arc", ARS_UID),
        spec={"replicas": 1},
    )


def runner(**status: object) -> dict[str, Any]:
    return obj(
        "EphemeralRunner",
        "arc-r1",
        uid=ER_UID,
        owner=("EphemeralRunnerSet", "arc", ERS_UID),
        spec={"githubConfigUrl": "https://x/org"},
        status=dict(status),
    )


def listener() -> dict[str, Any]:
    spec = {
        "autoscalingRunnerSetNamespace": NS,
        "autoscalingRunnerSetName": "arc",
        "githubConfigSecret": "creds",
    }
    return obj("AutoscalingListener", "arc-abc-listener", CONTROLLER_NS, uid=AL_UID, spec=spec)


def test_a_decided_kind_maps_to_itself() -> None:
    prefix = Prefix()
    assert prefix.put(scale_set()) == [ref("AutoscalingRunnerSet", "arc")]


def test_children_map_to_their_owners_through_owner_references() -> None:
    prefix = Prefix()
    assert prefix.put(runner_set()) == [ref("EphemeralRunnerSet", "arc"), ref("AutoscalingRunnerSet", "arc")]
    assert prefix.put(runner()) == [ref("EphemeralRunner", "arc-r1"), ref("EphemeralRunnerSet", "arc")]
    pod = obj("Pod", "arc-r1", owner=("EphemeralRunner", "arc-r1", ER_UID))
    assert prefix.put(pod) == [ref("EphemeralRunner", "arc-r1")]
    secret = obj("Secret", "arc-r1", owner=("EphemeralRunner", "arc-r1", ER_UID))
    assert prefix.put(secret) == [ref("EphemeralRunner", "arc-r1")]


def test_listener_objects_map_to_the_listener() -> None:
    prefix = Prefix()
    al_ref = ref("AutoscalingListener", "arc-abc-listener", CONTROLLER_NS)
    owned = ("AutoscalingListener", "arc-abc-listener", AL_UID)
    assert prefix.put(obj("Pod", "arc-abc-listener", CONTROLLER_NS, owner=owned)) == [al_ref]
    assert prefix.put(obj("ServiceAccount", "arc-abc-listener", CONTROLLER_NS, owner=owned)) == [al_ref]
    labels = {
        listenerobjects.LABEL_LISTENER_NAMESPACE: CONTROLLER_NS,
        listenerobjects.LABEL_LISTENER_NAME: "arc-abc-listener",
    }
    assert prefix.put(obj("Role", "arc-abc-listener", labels=labels)) == [al_ref]
    assert prefix.put(obj("RoleBinding", "arc-abc-listener", labels=labels)) == [al_ref]


def test_listener_and_scale_set_wake_each_other() -> None:
    prefix = Prefix()
    al_ref = ref("AutoscalingListener", "arc-abc-listener", CONTROLLER_NS)
    assert prefix.put(listener()) == [al_ref, ref("AutoscalingRunnerSet", "arc")]
    assert prefix.put(scale_set()) == [ref("AutoscalingRunnerSet", "arc"), al_ref]


def test_the_credentials_secret_wakes_the_scale_set_and_its_listener() -> None:
    prefix = Prefix()
    prefix.put(scale_set())
    prefix.put(listener())
    assert prefix.put(obj("Secret", "creds")) == [
        ref("AutoscalingListener", "arc-abc-listener", CONTROLLER_NS),
        ref("AutoscalingRunnerSet", "arc"),
    ]
    assert prefix.put(obj("Secret", "unrelated")) == []


def test_an_update_the_owner_does_not_read_is_dropped_for_the_owner_only() -> None:
    prefix = Prefix()
    prefix.put(runner_set())
    before = runner(phase="Running")
    prefix.put(before)
    after = copy.deepcopy(before)
    after["status"]["ready"] = True  # the runner set does not read ``ready``
    after["metadata"]["resourceVersion"] = "9"
    assert prefix.modify(after) == [ref("EphemeralRunner", "arc-r1")]
    phase = copy.deepcopy(after)
    phase["status"]["phase"] = "Succeeded"
    assert prefix.modify(phase) == [ref("EphemeralRunner", "arc-r1"), ref("EphemeralRunnerSet", "arc")]


def test_without_predicates_every_update_reaches_the_owner() -> None:
    prefix = Prefix(fold=Fold(Projection(), use_predicates=False))
    before = runner(phase="Running")
    prefix.put(before)
    after = copy.deepcopy(before)
    after["status"]["ready"] = True
    assert prefix.modify(after) == [ref("EphemeralRunner", "arc-r1"), ref("EphemeralRunnerSet", "arc")]


def test_creates_and_deletes_of_owned_objects_always_reach_the_owner() -> None:
    prefix = Prefix()
    pod = obj("Pod", "arc-r1", owner=("EphemeralRunner", "arc-r1", ER_UID), status={"phase": "Running"})
    assert prefix.put(pod) == [ref("EphemeralRunner", "arc-r1")]
    assert prefix.delete(pod) == [ref("EphemeralRunner", "arc-r1")]
    # A DELETED for an object the projection never held still names its owner.
    assert prefix.delete(obj("Pod", "other", owner=("EphemeralRunner", "other", "x"))) == [
        ref("EphemeralRunner", "other")
    ]


def test_a_changed_owner_wakes_the_old_and_the_new_one() -> None:
    prefix = Prefix(fold=Fold(Projection(), use_predicates=False))
    first = obj("Pod", "p", owner=("EphemeralRunner", "a", "a-uid"))
    prefix.put(first)
    moved = obj("Pod", "p", owner=("EphemeralRunner", "b", "b-uid"))
    assert prefix.modify(moved) == [ref("EphemeralRunner", "a"), ref("EphemeralRunner", "b")]


def test_a_timer_record_maps_to_its_key_and_advances_the_clock() -> None:
    prefix = Prefix()
    keys = prefix.append(Record(type=RecordType.TIMER, kind="EphemeralRunner", namespace=NS, name="arc-r1"))
    assert keys == [ref("EphemeralRunner", "arc-r1")]
    assert prefix.fold.seq == 1
    assert prefix.fold.view().now == clocks.parse_time(prefix.at(1))
