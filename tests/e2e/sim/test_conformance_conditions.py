"""Emulator conformance, ``status.conditions`` of the four custom resources (metav1.Condition list-maps).

Inputs: the ``world`` and ``kube`` fixtures (tests/conftest.py), which install the chart's CRDs. Every kind
takes a conditions list through a status merge patch and keeps it (unknown fields inside a condition are
pruned); the schema refuses a status outside True/False/Unknown, a missing required field, a reason that is
no CamelCase word and two conditions of one type, each with a 422 naming the field, as kube-apiserver does.
"""

from __future__ import annotations

from typing import Any

import pytest
from kubernetes_asyncio import client

from sim.world import World
from tests.e2e.sim.conformance import GROUP, MERGE, NS, VERSION, error_status

pytestmark = pytest.mark.both_worlds(on_demand=True)

READY = {
    "type": "Ready",
    "status": "True",
    "observedGeneration": 1,
    "lastTransitionTime": "2026-01-01T12:00:00Z",
    "reason": "Running",
    "message": "the object works",
}

# plural -> (kind, a minimal valid body's spec, the status fields its schema requires)
KINDS: dict[str, tuple[str, dict[str, Any], dict[str, Any]]] = {
    "autoscalingrunnersets": (
        "AutoscalingRunnerSet",
        {"githubConfigUrl": "https://github.com/example", "githubConfigSecret": "gh"},
        {},
    ),
    "ephemeralrunnersets": ("EphemeralRunnerSet", {"patchID": 0}, {"currentReplicas": 0}),
    "ephemeralrunners": (
        "EphemeralRunner",
        {
            "githubConfigUrl": "https://github.com/example",
            "githubConfigSecret": "gh",
            "runnerScaleSetId": 1,
            "spec": {"containers": [{"name": "runner", "image": "runner:latest"}]},
        },
        {},
    ),
    "autoscalinglisteners": ("AutoscalingListener", {"githubConfigUrl": "https://github.com/example"}, {}),
}


async def created(kube: client.ApiClient, plural: str, name: str) -> client.CustomObjectsApi:
    kind, spec, _ = KINDS[plural]
    api = client.CustomObjectsApi(kube)
    body = {"apiVersion": f"{GROUP}/{VERSION}", "kind": kind, "metadata": {"name": name}, "spec": spec}
    await api.create_namespaced_custom_object(GROUP, VERSION, NS, plural, body)
    return api


async def patch_status(
    api: client.CustomObjectsApi, plural: str, name: str, status: dict[str, Any]
) -> dict[str, Any]:
    patched: dict[str, Any] = await api.patch_namespaced_custom_object_status(
        GROUP, VERSION, NS, plural, name, {"status": status}, _content_type=MERGE
    )
    return patched


@pytest.mark.parametrize("plural", sorted(KINDS))
async def test_conditions_survive_a_status_patch(world: World, kube: client.ApiClient, plural: str) -> None:
    api = await created(kube, plural, "cond-ok")
    required = KINDS[plural][2]
    stale = {**READY, "status": "False", "reason": "Pending", "bogus": "pruned"}
    first = await patch_status(api, plural, "cond-ok", {**required, "conditions": [stale]})
    assert first["status"]["conditions"] == [{k: v for k, v in stale.items() if k != "bogus"}]
    audited = {
        "type": "example.com/Audited",
        "status": "Unknown",
        "lastTransitionTime": "2026-01-01T12:00:00Z",
    }
    audited |= {"reason": "NotYet", "message": ""}
    # A merge patch replaces the list as a whole.
    second = await patch_status(api, plural, "cond-ok", {"conditions": [READY, audited]})
    stored = await api.get_namespaced_custom_object(GROUP, VERSION, NS, plural, "cond-ok")
    for obj in (second, stored):
        assert obj["status"]["conditions"] == [READY, audited]
    # The main resource ignores status, so a spec write keeps the conditions.
    after = await api.patch_namespaced_custom_object(
        GROUP, VERSION, NS, plural, "cond-ok", {"metadata": {"labels": {"a": "b"}}}, _content_type=MERGE
    )
    assert after["status"]["conditions"] == [READY, audited]


@pytest.mark.parametrize("plural", sorted(KINDS))
async def test_a_status_outside_the_enum_is_rejected(
    world: World, kube: client.ApiClient, plural: str
) -> None:
    api = await created(kube, plural, "cond-maybe")
    kind, _, required = KINDS[plural]
    body = await error_status(
        patch_status(api, plural, "cond-maybe", {**required, "conditions": [{**READY, "status": "Maybe"}]})
    )
    assert (body["code"], body["reason"]) == (422, "Invalid")
    assert body["message"] == (
        f'{kind}.actions.github.com "cond-maybe" is invalid: status.conditions[0].status: '
        'Unsupported value: "Maybe": supported values: "True", "False", "Unknown"'
    )
    assert [(c["reason"], c["field"]) for c in body["details"]["causes"]] == [
        ("FieldValueNotSupported", "status.conditions[0].status")
    ]
    stored = await api.get_namespaced_custom_object(GROUP, VERSION, NS, plural, "cond-maybe")
    assert "conditions" not in (stored.get("status") or {})


async def test_required_fields_and_the_reason_pattern(world: World, kube: client.ApiClient) -> None:
    api = await created(kube, "ephemeralrunners", "cond-fields")
    incomplete = {k: v for k, v in READY.items() if k not in ("lastTransitionTime", "message")}
    body = await error_status(
        patch_status(api, "ephemeralrunners", "cond-fields", {"conditions": [incomplete]})
    )
    assert (body["code"], body["reason"]) == (422, "Invalid")
    assert [(c["reason"], c["field"]) for c in body["details"]["causes"]] == [
        ("FieldValueRequired", "status.conditions[0].lastTransitionTime"),
        ("FieldValueRequired", "status.conditions[0].message"),
    ]
    body = await error_status(
        patch_status(api, "ephemeralrunners", "cond-fields", {"conditions": [{**READY, "reason": "not ok"}]})
    )
    assert [(c["reason"], c["field"]) for c in body["details"]["causes"]] == [
        ("FieldValueInvalid", "status.conditions[0].reason")
    ]
    body = await error_status(
        patch_status(
            api,
            "ephemeralrunners",
            "cond-fields",
            {"conditions": [READY, {**READY, "type": "Registered", "lastTransitionTime": "yesterday"}]},
        )
    )
    assert [(c["reason"], c["field"]) for c in body["details"]["causes"]] == [
        ("FieldValueTypeInvalid", "status.conditions[1].lastTransitionTime")
    ]


async def test_two_conditions_of_one_type_are_a_duplicate(world: World, kube: client.ApiClient) -> None:
    api = await created(kube, "ephemeralrunnersets", "cond-dup")
    body = await error_status(
        patch_status(
            api,
            "ephemeralrunnersets",
            "cond-dup",
            {"currentReplicas": 0, "conditions": [READY, {**READY, "status": "False"}]},
        )
    )
    assert (body["code"], body["reason"]) == (422, "Invalid")
    assert [(c["reason"], c["field"]) for c in body["details"]["causes"]] == [
        ("FieldValueDuplicate", "status.conditions[1]")
    ]
    assert body["message"].startswith(
        'EphemeralRunnerSet.actions.github.com "cond-dup" is invalid: status.conditions[1]: Duplicate value: '
    )
