"""Emulator conformance, custom resources against the project's CRDs (apiserver-semantics.md S62-S64).

Inputs: the ``world`` and ``kube`` fixtures (tests/conftest.py), which install the chart's CRDs. Pruning,
unknown-field warnings and ``fieldValidation``, schema defaulting and schema validation of
EphemeralRunners and AutoscalingRunnerSets, over raw HTTP where the ``Warning`` headers matter and through
kubernetes_asyncio's CustomObjectsApi otherwise (merge patches pass ``_content_type``).
"""

from __future__ import annotations

import copy
from typing import Any

import aiohttp
import pytest
from kubernetes_asyncio import client

from sim.world import World
from tests.e2e.sim.conformance import GROUP, MERGE, NS, VERSION, error_status, raw_response

pytestmark = pytest.mark.both_worlds(on_demand=True)

ER_PATH = f"/apis/{GROUP}/{VERSION}/namespaces/{NS}/ephemeralrunners"
QUANTITY_PATTERN = (
    r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))"
    r"(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$"
)


def er(name: str) -> dict[str, Any]:
    return {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": "EphemeralRunner",
        "metadata": {"name": name},
        "spec": {
            "githubConfigUrl": "https://github.com/example",
            "githubConfigSecret": "github-secret",
            "runnerScaleSetId": 1,
            "spec": {"containers": [{"name": "runner", "image": "ghcr.io/actions/actions-runner:latest"}]},
        },
    }


def ars(name: str, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": "AutoscalingRunnerSet",
        "metadata": {"name": name},
        "spec": {"githubConfigUrl": "https://github.com/example", "githubConfigSecret": "s", **spec},
    }


def warnings(resp: aiohttp.ClientResponse) -> list[str]:
    return list(resp.headers.getall("Warning", []))


def unknown(path: str) -> str:
    """The Warning header kube-apiserver sends for a pruned field."""
    return f'299 - "unknown field \\"{path}\\""'


def crs(kube: client.ApiClient) -> client.CustomObjectsApi:
    return client.CustomObjectsApi(kube)


# -- S62 pruning, unknown-field warnings, fieldValidation ---------------------------------------------------


def with_unknown_fields(name: str) -> dict[str, Any]:
    body = er(name)
    body["extra"] = 1
    body["spec"]["bogus"] = True
    body["spec"]["spec"]["containers"][0]["bogus"] = "x"
    body["spec"]["metadata"] = {"name": "pod", "labels": {"a": "b"}, "uid": "not-kept"}
    return body


async def test_s62_unknown_fields_pruned_with_warnings(world: World, kube: client.ApiClient) -> None:
    async with raw_response(world, "POST", ER_PATH, with_unknown_fields("s62")) as resp:
        assert resp.status == 201
        created = await resp.json()
        got = warnings(resp)
    expected = sorted(["extra", "spec.bogus", "spec.spec.containers[0].bogus", "spec.metadata.uid"])
    assert got == [unknown(p) for p in expected]
    stored = await crs(kube).get_namespaced_custom_object(GROUP, VERSION, NS, "ephemeralrunners", "s62")
    for obj in (created, stored):
        assert "extra" not in obj
        assert "bogus" not in obj["spec"]
        assert obj["spec"]["spec"]["containers"] == [
            {"name": "runner", "image": "ghcr.io/actions/actions-runner:latest"}
        ]
        # The pod-template metadata keeps what its schema declares.
        assert obj["spec"]["metadata"] == {"name": "pod", "labels": {"a": "b"}}


async def test_s62_status_writes_are_pruned_too(world: World, kube: client.ApiClient) -> None:
    created = await crs(kube).create_namespaced_custom_object(
        GROUP, VERSION, NS, "ephemeralrunners", er("s62-st")
    )
    created["status"] = {"phase": "Running", "bogus": 1}
    async with raw_response(world, "PUT", f"{ER_PATH}/s62-st/status", created) as resp:
        assert resp.status == 200
        updated = await resp.json()
        assert warnings(resp) == [unknown("status.bogus")]
    assert updated["status"] == {"phase": "Running"}


@pytest.mark.diverges_on_real("strict decoding of a custom resource: the message is worded otherwise")
async def test_s62_field_validation_strict_rejects_unknown_fields(
    world: World, kube: client.ApiClient
) -> None:
    async with raw_response(
        world, "POST", f"{ER_PATH}?fieldValidation=Strict", with_unknown_fields("s62-strict")
    ) as resp:
        assert resp.status == 400
        body = await resp.json()
    assert body == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": "strict decoding error: "
        + ", ".join(
            f'unknown field "{p}"'
            for p in sorted(["extra", "spec.bogus", "spec.spec.containers[0].bogus", "spec.metadata.uid"])
        ),
        "reason": "BadRequest",
        "code": 400,
    }
    body = await error_status(
        crs(kube).get_namespaced_custom_object(GROUP, VERSION, NS, "ephemeralrunners", "s62-strict")
    )
    assert body["code"] == 404
    # Known fields only: Strict accepts.
    async with raw_response(world, "POST", f"{ER_PATH}?fieldValidation=Strict", er("s62-strict")) as resp:
        assert resp.status == 201
        assert warnings(resp) == []


async def test_s62_field_validation_ignore_prunes_silently(world: World) -> None:
    async with raw_response(
        world, "POST", f"{ER_PATH}?fieldValidation=Ignore", with_unknown_fields("s62-ignore")
    ) as resp:
        assert resp.status == 201
        assert warnings(resp) == []
        created = await resp.json()
    assert "extra" not in created


async def test_s62_patch_of_only_unknown_fields_is_a_no_op(world: World, kube: client.ApiClient) -> None:
    created = await crs(kube).create_namespaced_custom_object(
        GROUP, VERSION, NS, "ephemeralrunners", er("s62-noop")
    )
    async with raw_response(
        world, "PATCH", f"{ER_PATH}/s62-noop", {"spec": {"bogus": 1}}, content_type=MERGE
    ) as resp:
        assert resp.status == 200
        patched = await resp.json()
        assert warnings(resp) == [unknown("spec.bogus")]
    assert patched["metadata"]["resourceVersion"] == created["metadata"]["resourceVersion"]
    assert patched["metadata"]["generation"] == 1
    assert "bogus" not in patched["spec"]


# -- S63 defaulting ------------------------------------------------------------------------------------------


async def test_s63_schema_defaults_applied_on_create_and_update(world: World, kube: client.ApiClient) -> None:
    body = er("s63")
    container = body["spec"]["spec"]["containers"][0]
    container["ports"] = [{"containerPort": 8080}]
    container["env"] = [{"name": "TOKEN", "valueFrom": {"secretKeyRef": {"key": "token"}}}]
    created = await crs(kube).create_namespaced_custom_object(GROUP, VERSION, NS, "ephemeralrunners", body)
    got = created["spec"]["spec"]["containers"][0]
    assert got["ports"] == [{"containerPort": 8080, "protocol": "TCP"}]
    assert got["env"] == [{"name": "TOKEN", "valueFrom": {"secretKeyRef": {"key": "token", "name": ""}}}]
    # An update that adds an undefaulted field gets it defaulted too.
    patched = await crs(kube).patch_namespaced_custom_object(
        GROUP,
        VERSION,
        NS,
        "ephemeralrunners",
        "s63",
        {"spec": {"githubServerTLS": {"certificateFrom": {"configMapKeyRef": {"key": "ca.crt"}}}}},
        _content_type=MERGE,
    )
    assert patched["spec"]["githubServerTLS"] == {
        "certificateFrom": {"configMapKeyRef": {"key": "ca.crt", "name": ""}}
    }


async def test_s63_nulls_pruned_or_defaulted(world: World, kube: client.ApiClient) -> None:
    body = er("s63-null")
    body["spec"]["proxySecretRef"] = None  # not nullable, no default: dropped
    body["spec"]["spec"]["containers"][0]["ports"] = [
        {"containerPort": 80, "protocol": None}
    ]  # has a default
    created = await crs(kube).create_namespaced_custom_object(GROUP, VERSION, NS, "ephemeralrunners", body)
    assert "proxySecretRef" not in created["spec"]
    assert created["spec"]["spec"]["containers"][0]["ports"] == [{"containerPort": 80, "protocol": "TCP"}]


# -- S64 validation ------------------------------------------------------------------------------------------


async def test_s64_required_fields(world: World, kube: client.ApiClient) -> None:
    body = er("s64-req")
    del body["spec"]["githubConfigUrl"]
    del body["spec"]["runnerScaleSetId"]
    status = await error_status(
        crs(kube).create_namespaced_custom_object(GROUP, VERSION, NS, "ephemeralrunners", body)
    )
    assert (status["code"], status["reason"]) == (422, "Invalid")
    assert status["message"] == (
        'EphemeralRunner.actions.github.com "s64-req" is invalid: '
        "[spec.githubConfigUrl: Required value, spec.runnerScaleSetId: Required value]"
    )
    assert status["details"] == {
        "name": "s64-req",
        "group": GROUP,
        "kind": "EphemeralRunner",
        "causes": [
            {"reason": "FieldValueRequired", "message": "Required value", "field": "spec.githubConfigUrl"},
            {"reason": "FieldValueRequired", "message": "Required value", "field": "spec.runnerScaleSetId"},
        ],
    }


async def test_s64_type_and_minimum(world: World, kube: client.ApiClient) -> None:
    body = er("s64-type")
    body["spec"]["runnerScaleSetId"] = "abc"
    status = await error_status(
        crs(kube).create_namespaced_custom_object(GROUP, VERSION, NS, "ephemeralrunners", body)
    )
    assert status["message"] == (
        'EphemeralRunner.actions.github.com "s64-type" is invalid: '
        'spec.runnerScaleSetId: Invalid value: "string": '
        'spec.runnerScaleSetId in body must be of type integer: "string"'
    )
    assert status["details"]["causes"] == [
        {
            "reason": "FieldValueTypeInvalid",
            "message": 'Invalid value: "string": '
            'spec.runnerScaleSetId in body must be of type integer: "string"',
            "field": "spec.runnerScaleSetId",
        }
    ]
    status = await error_status(
        crs(kube).create_namespaced_custom_object(
            GROUP, VERSION, NS, "autoscalingrunnersets", ars("s64-min", minRunners=-1)
        )
    )
    assert (status["code"], status["reason"]) == (422, "Invalid")
    assert status["message"] == (
        'AutoscalingRunnerSet.actions.github.com "s64-min" is invalid: spec.minRunners: Invalid value: -1: '
        "spec.minRunners in body should be greater than or equal to 0"
    )


async def test_s64_quantities_pattern_and_int_or_string(world: World, kube: client.ApiClient) -> None:
    body = er("s64-qty")
    body["spec"]["spec"]["containers"][0]["resources"] = {"limits": {"cpu": "lots", "memory": 512}}
    status = await error_status(
        crs(kube).create_namespaced_custom_object(GROUP, VERSION, NS, "ephemeralrunners", body)
    )
    field = "spec.spec.containers[0].resources.limits.cpu"
    assert status["details"]["causes"] == [
        {
            "reason": "FieldValueInvalid",
            "message": f"Invalid value: \"lots\": {field} in body should match '{QUANTITY_PATTERN}'",
            "field": field,
        }
    ]
    # Both anyOf branches (integer, string) are fine, and CRs keep quantities as sent.
    body["spec"]["spec"]["containers"][0]["resources"] = {"limits": {"cpu": "0.5", "memory": 512}}
    created = await crs(kube).create_namespaced_custom_object(GROUP, VERSION, NS, "ephemeralrunners", body)
    assert created["spec"]["spec"]["containers"][0]["resources"] == {"limits": {"cpu": "0.5", "memory": 512}}


async def test_s64_list_map_keys_unique(world: World, kube: client.ApiClient) -> None:
    body = er("s64-dup")
    body["spec"]["spec"]["containers"].append(copy.deepcopy(body["spec"]["spec"]["containers"][0]))
    status = await error_status(
        crs(kube).create_namespaced_custom_object(GROUP, VERSION, NS, "ephemeralrunners", body)
    )
    assert (status["code"], status["reason"]) == (422, "Invalid")
    assert [(c["reason"], c["field"]) for c in status["details"]["causes"]] == [
        ("FieldValueDuplicate", "spec.spec.containers[1]")
    ]
    assert status["message"].startswith(
        'EphemeralRunner.actions.github.com "s64-dup" is invalid: spec.spec.containers[1]: Duplicate value: '
    )


@pytest.mark.diverges_on_real(
    "a status write's causes: kube-apiserver orders them otherwise and words the path relative to status"
)
async def test_s64_validation_runs_on_status_and_main_writes(world: World, kube: client.ApiClient) -> None:
    api = crs(kube)
    await api.create_namespaced_custom_object(GROUP, VERSION, NS, "ephemeralrunners", er("s64-st"))
    status = await error_status(
        api.patch_namespaced_custom_object_status(
            GROUP,
            VERSION,
            NS,
            "ephemeralrunners",
            "s64-st",
            {"status": {"failures": {"a": "yesterday"}, "jobRequestId": "x"}},
            _content_type=MERGE,
        )
    )
    assert (status["code"], status["reason"]) == (422, "Invalid")
    assert [c["field"] for c in status["details"]["causes"]] == ["status.failures.a", "status.jobRequestId"]
    assert status["details"]["causes"][0]["message"] == (
        'Invalid value: "yesterday": status.failures.a in body must be of type date-time: "yesterday"'
    )
    ok = await api.patch_namespaced_custom_object_status(
        GROUP,
        VERSION,
        NS,
        "ephemeralrunners",
        "s64-st",
        {"status": {"failures": {"a": "2025-01-01T00:00:00Z"}, "jobRequestId": 7}},
        _content_type=MERGE,
    )
    assert ok["status"] == {"failures": {"a": "2025-01-01T00:00:00Z"}, "jobRequestId": 7}
    status = await error_status(
        api.patch_namespaced_custom_object(
            GROUP,
            VERSION,
            NS,
            "ephemeralrunners",
            "s64-st",
            {"spec": {"runnerScaleSetId": "x"}},
            _content_type=MERGE,
        )
    )
    assert [c["field"] for c in status["details"]["causes"]] == ["spec.runnerScaleSetId"]
