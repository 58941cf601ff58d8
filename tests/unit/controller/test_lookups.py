"""The lookups an event makes (a scale set's listeners, a Secret's credential users) answer, through the
projection's indexes, exactly what a scan of every listener and scale set answered, in the same order:
a fixed-seed random run of creates, spec edits that point a listener at another scale set or Secret,
deletes, and snapshot round trips of the projection."""

from __future__ import annotations

import random
from typing import Any

from controller.loop import declared, mapping
from controller.loop.folding import Fold
from statemachines import listenerobjects
from statemachines.effects import ObjectRef
from statemachines.kinds import AL, ARS
from store.projection import Projection
from store.records import observed
from tests.unit.controller.objects import CONTROLLER_NS, obj

SCALE_SET_NAMESPACES = ("r1", "r2")
NAMES = tuple(f"s{i}" for i in range(6))
SECRETS = ("c0", "c1", None)


def listener(rng: random.Random, name: str) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "autoscalingRunnerSetNamespace": rng.choice(SCALE_SET_NAMESPACES),
        "autoscalingRunnerSetName": rng.choice(NAMES),
    }
    if (secret := rng.choice(SECRETS)) is not None:
        spec["githubConfigSecret"] = secret
    return obj(AL, name, CONTROLLER_NS, spec=spec)


def scale_set(rng: random.Random, namespace: str, name: str) -> dict[str, Any]:
    secret = rng.choice(SECRETS)
    return obj(ARS, name, namespace, spec={} if secret is None else {"githubConfigSecret": secret})


def scan_listeners_of(projection: Projection, namespace: str, name: str) -> list[Any]:
    return [
        al
        for al in projection.items(AL)
        if al["spec"]["autoscalingRunnerSetNamespace"] == namespace
        and al["spec"]["autoscalingRunnerSetName"] == name
    ]


def scan_credential_users(projection: Projection, namespace: str, name: str) -> list[ObjectRef]:
    users = [
        ObjectRef(AL, CONTROLLER_NS, al["metadata"]["name"])
        for al in projection.items(AL)
        if al["spec"]["autoscalingRunnerSetNamespace"] == namespace
        and al["spec"].get("githubConfigSecret") == name
    ]
    return users + [
        ObjectRef(ARS, namespace, ars["metadata"]["name"])
        for ars in projection.items(ARS, namespace)
        if ars["spec"].get("githubConfigSecret") == name
    ]


def test_listener_and_credential_lookups_match_a_full_scan_through_random_changes() -> None:
    rng = random.Random(13)
    fold = Fold(Projection())
    checked = 0
    for _ in range(1_500):
        roll = rng.random()
        if roll < 0.45:
            fold.apply(observed("ADDED", AL, listener(rng, f"l{rng.randrange(15)}")))
        elif roll < 0.7:
            namespace = rng.choice(SCALE_SET_NAMESPACES)
            fold.apply(observed("ADDED", ARS, scale_set(rng, namespace, rng.choice(NAMES))))
        elif roll < 0.9:
            gone = rng.choice((AL, ARS))
            namespace = CONTROLLER_NS if gone == AL else rng.choice(SCALE_SET_NAMESPACES)
            name = f"l{rng.randrange(15)}" if gone == AL else rng.choice(NAMES)
            fold.apply(observed("DELETED", gone, obj(gone, name, namespace)))
        elif roll < 0.93:
            fold = Fold(Projection.from_snapshot(fold.projection.for_snapshot()))
        projection = fold.projection
        namespace, name = rng.choice(SCALE_SET_NAMESPACES), rng.choice(NAMES)
        assert declared.referrers(
            projection, listenerobjects.LISTENERS_BY_SCALE_SET, namespace, name
        ) == scan_listeners_of(projection, namespace, name)
        secret = rng.choice(("c0", "c1"))
        change = mapping.Change("Secret", namespace, secret, old=None, new=obj("Secret", secret, namespace))
        expected = scan_credential_users(projection, namespace, secret)
        assert mapping.keys_for(change, projection) == expected
        checked += bool(expected)
    assert checked > 100  # most steps had users to find, not only empty answers
