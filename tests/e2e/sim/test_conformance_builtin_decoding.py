"""Emulator conformance: built-in kinds are decoded as kube-apiserver decodes them into their Go structs.

Inputs: the ``world`` and ``kube`` fixtures (tests/conftest.py). Unknown fields in Pods, Events, Leases and
workloads under each ``fieldValidation`` (Warn: a ``Warning`` header and the field dropped; Strict: 400 on
create/update, 422 on patches; Ignore: dropped silently), wrong JSON types (400 with Go's decoding error),
timestamps without an offset, bad quantities; on create, update, status update and every patch type,
through kubernetes_asyncio and raw HTTP. Nothing is mocked.
"""

from __future__ import annotations

import json
from typing import Any

import aiohttp
import pytest
from kubernetes_asyncio import client

from sim.world import World
from tests import worlds
from tests.e2e.sim.conformance import NS, error_status, failure, raw_response

pytestmark = pytest.mark.both_worlds(on_demand=True)

PODS = f"/api/v1/namespaces/{NS}/pods"
EVENTS = f"/api/v1/namespaces/{NS}/events"
CANNOT = 'Pod in version "v1" cannot be handled as a Pod: '
PORTS_ERROR = (
    "json: cannot unmarshal string into Go struct field Container.spec.containers.ports"
    " of type []v1.ContainerPort"
)
JSON_PATCH = "application/json-patch+json"
MERGE = "application/merge-patch+json"
STRATEGIC = "application/strategic-merge-patch+json"


def pod(name: str, **container: Any) -> dict[str, Any]:
    """A pod no scheduler takes (it stays as written)."""
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {
            "schedulerName": "other-scheduler",
            "containers": [{"name": "main", "image": "busybox:1.36", **container}],
        },
    }


def warning(text: str) -> str:
    return '299 - "' + text.replace('"', '\\"') + '"'


async def send(
    world: World, method: str, path: str, body: Any, content_type: str = "application/json"
) -> Any:
    """(status, Warning headers, decoded body) of one raw request."""
    async with raw_response(world, method, path, body, content_type) as resp:
        return resp.status, resp.headers.getall("Warning", []), json.loads(await resp.read())


def bad_request(message: str) -> dict[str, Any]:
    return failure(400, "BadRequest", message)


def patch_invalid(value: str, message: str) -> dict[str, Any]:
    cause = f"Invalid value: {json.dumps(value)}: {message}"
    return failure(
        422,
        "Invalid",
        f'"" is invalid: patch: {cause}',
        {"causes": [{"reason": "FieldValueInvalid", "message": cause, "field": "patch"}]},
    )


# -- unknown fields on create ---------------------------------------------------------------------------


async def test_unknown_pod_field_is_dropped_with_a_warning_by_default(world: World) -> None:
    body = pod("dec-warn", imagee="busybox")
    body["metadata"]["labelz"] = {"a": "b"}
    status, warnings, created = await send(world, "POST", PODS, body)
    assert status == 201
    assert warnings == [
        warning('unknown field "metadata.labelz"'),
        warning('unknown field "spec.containers[0].imagee"'),
    ]
    assert "imagee" not in created["spec"]["containers"][0]
    assert "labelz" not in created["metadata"]
    # The emulator's request log keeps the warnings answered (how a test shows a client's writes drew
    # none); kube-apiserver's audit log, the real world's request log, does not hold them.
    if not worlds.is_real(world):
        logged = [r for r in world.requests if r.method == "POST" and r.path == PODS]
        assert logged[-1].warnings == tuple(warnings)
    status, _, stored = await send(world, "GET", f"{PODS}/dec-warn", None)
    assert status == 200 and "imagee" not in stored["spec"]["containers"][0]


async def test_unknown_pod_field_under_strict_validation_is_a_bad_request(world: World) -> None:
    status, _, body = await send(
        world, "POST", f"{PODS}?fieldValidation=Strict", pod("dec-strict", imagee="x")
    )
    assert (status, body) == (
        400,
        bad_request(CANNOT + 'strict decoding error: unknown field "spec.containers[0].imagee"'),
    )
    status, _, _ = await send(world, "GET", f"{PODS}/dec-strict", None)
    assert status == 404


async def test_unknown_pod_field_under_ignore_is_dropped_silently(world: World) -> None:
    status, warnings, created = await send(
        world, "POST", f"{PODS}?fieldValidation=Ignore", pod("dec-ignore", imagee="x")
    )
    assert (status, warnings) == (201, [])
    assert "imagee" not in created["spec"]["containers"][0]


async def test_kubernetes_asyncio_sees_the_warning_and_the_pruned_pod(kube: client.ApiClient) -> None:
    core = client.CoreV1Api(kube)
    created, status, headers = await core.create_namespaced_pod_with_http_info(
        NS, pod("dec-client", imagee="x", ports=[{"containerPort": 80, "hostPortt": 1}])
    )
    assert status == 201
    assert headers.getall("Warning") == [
        warning('unknown field "spec.containers[0].imagee"'),
        warning('unknown field "spec.containers[0].ports[0].hostPortt"'),
    ]
    assert created.spec.containers[0].ports[0].container_port == 80


# -- wrong types ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("validation", ["Strict", "Warn", "Ignore"])
async def test_a_wrong_json_type_is_a_bad_request_with_gos_decoding_error(
    world: World, validation: str
) -> None:
    status, _, body = await send(
        world, "POST", f"{PODS}?fieldValidation={validation}", pod("dec-type", ports="80")
    )
    assert (status, body) == (400, bad_request(CANNOT + PORTS_ERROR))


async def test_type_errors_name_the_innermost_struct_and_the_go_type(kube: client.ApiClient) -> None:
    core = client.CoreV1Api(kube)
    cases = [
        (
            {"ports": [{"containerPort": "80"}]},
            "json: cannot unmarshal string into Go struct field ContainerPort.spec.containers.ports"
            ".containerPort of type int32",
        ),
        (
            {"ports": [{"containerPort": 1.5}]},
            "json: cannot unmarshal number 1.5 into Go struct field ContainerPort.spec.containers.ports"
            ".containerPort of type int32",
        ),
        (
            {"ports": [{"containerPort": 4294967296}]},
            "json: cannot unmarshal number 4294967296 into Go struct field ContainerPort"
            ".spec.containers.ports.containerPort of type int32",
        ),
        (
            {"tty": "yes"},
            "json: cannot unmarshal string into Go struct field Container.spec.containers.tty of type bool",
        ),
        (
            {"env": [{"name": "A", "value": 1}]},
            "json: cannot unmarshal number into Go struct field EnvVar.spec.containers.env.value"
            " of type string",
        ),
        (
            {"resources": {"limits": {"cpu": "two"}}},
            "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
        ),
        (
            {"livenessProbe": {"httpGet": {"port": True}}},
            "json: cannot unmarshal bool into Go struct field HTTPGetAction"
            ".spec.containers.livenessProbe.httpGet.port of type int32",
        ),
    ]
    for container, message in cases:
        body = await error_status(core.create_namespaced_pod(NS, pod("dec-types", **container)))
        assert body == bad_request(CANNOT + message), container


async def test_labels_of_the_wrong_type_are_refused(world: World) -> None:
    body = pod("dec-labels")
    body["metadata"]["labels"] = {"a": 1}
    status, _, answer = await send(world, "POST", PODS, body)
    assert (status, answer) == (
        400,
        bad_request(
            CANNOT
            + "json: cannot unmarshal number into Go struct field ObjectMeta.metadata.labels of type string"
        ),
    )


async def test_a_quantity_given_as_a_number_is_stored_as_a_string(world: World) -> None:
    status, _, created = await send(world, "POST", PODS, pod("dec-qty", resources={"limits": {"cpu": 2}}))
    assert status == 201
    assert created["spec"]["containers"][0]["resources"]["limits"] == {"cpu": "2"}


# -- core Event times ---------------------------------------------------------------------------------------


def core_event(name: str, **fields: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": name},
        "involvedObject": {"kind": "Pod", "name": "p", "namespace": NS},
        "reason": "Test",
        "message": "m",
        "type": "Normal",
        **fields,
    }


async def test_core_event_timestamps_without_an_offset_are_refused(world: World) -> None:
    status, _, body = await send(
        world, "POST", EVENTS, core_event("dec-ev1", firstTimestamp="2025-01-01T00:00:00")
    )
    assert (status, body) == (
        400,
        bad_request(
            'Event in version "v1" cannot be handled as a Event: parsing time "2025-01-01T00:00:00" as '
            '"2006-01-02T15:04:05Z07:00": cannot parse "" as "Z07:00"'
        ),
    )
    status, _, body = await send(
        world, "POST", EVENTS, core_event("dec-ev2", eventTime="2025-01-01T00:00:00Z")
    )
    assert (status, body) == (
        400,
        bad_request(
            'Event in version "v1" cannot be handled as a Event: parsing time "2025-01-01T00:00:00Z" as '
            '"2006-01-02T15:04:05.000000Z07:00": cannot parse "Z" as ".000000"'
        ),
    )


async def test_core_event_times_are_stored_in_utc(world: World) -> None:
    status, _, created = await send(
        world,
        "POST",
        EVENTS,
        core_event(
            "dec-ev3",
            firstTimestamp="2025-01-01T02:00:00.75+02:00",
            eventTime="2025-01-01T02:00:00.250000+02:00",
            reportingComponent="c",
            reportingInstance="i",
            action="A",
        ),
    )
    assert status == 201, created
    assert created["firstTimestamp"] == "2025-01-01T00:00:00Z"
    assert created["eventTime"] == "2025-01-01T00:00:00.250000Z"


# -- update and status update ----------------------------------------------------------------------------


async def test_update_and_status_update_decode_the_whole_body(world: World) -> None:
    status, _, created = await send(world, "POST", PODS, pod("dec-upd"))
    assert status == 201
    created["spec"]["containers"][0]["imagee"] = "x"
    status, warnings, updated = await send(world, "PUT", f"{PODS}/dec-upd", created)
    assert status == 200
    assert warnings == [warning('unknown field "spec.containers[0].imagee"')]
    assert "imagee" not in updated["spec"]["containers"][0]

    updated["status"] = {"phase": "Pending", "podIPz": "1.2.3.4"}
    status, body_warnings, answer = await send(world, "PUT", f"{PODS}/dec-upd/status", updated)
    assert (status, body_warnings) == (200, [warning('unknown field "status.podIPz"')])
    assert "podIPz" not in answer["status"]

    answer["status"] = {"podIPz": "1.2.3.4"}
    status, _, body = await send(world, "PUT", f"{PODS}/dec-upd/status?fieldValidation=Strict", answer)
    assert (status, body) == (
        400,
        bad_request(CANNOT + 'strict decoding error: unknown field "status.podIPz"'),
    )

    answer["status"] = {"conditions": {"type": "Ready"}}
    status, _, body = await send(world, "PUT", f"{PODS}/dec-upd/status", answer)
    assert (status, body) == (
        400,
        bad_request(
            CANNOT + "json: cannot unmarshal object into Go struct field PodStatus.status.conditions of type "
            "[]v1.PodCondition"
        ),
    )


# -- patches: the patched object is what is decoded --------------------------------------------------------


async def test_merge_patch_with_an_unknown_field_warns_and_drops_it(world: World) -> None:
    await send(world, "POST", PODS, pod("dec-mp"))
    patch = {"metadata": {"labels": {"a": "b"}}, "spec": {"activeDeadlineSecondz": 5}}
    status, warnings, patched = await send(world, "PATCH", f"{PODS}/dec-mp", patch, MERGE)
    assert (status, warnings) == (200, [warning('unknown field "spec.activeDeadlineSecondz"')])
    assert patched["metadata"]["labels"] == {"a": "b"}
    assert "activeDeadlineSecondz" not in patched["spec"]


@pytest.mark.diverges_on_real(
    "a strict patch's refusal: kube-apiserver quotes the whole patch as the invalid value"
)
async def test_patches_under_strict_validation_are_invalid_on_the_patch_field(world: World) -> None:
    status, _, created = await send(world, "POST", PODS, pod("dec-sp"))
    assert status == 201
    patch = {"spec": {"containers": [{"name": "main", "imagee": "x"}]}}
    status, _, body = await send(world, "PATCH", f"{PODS}/dec-sp?fieldValidation=Strict", patch, STRATEGIC)
    assert (status, body) == (
        422,
        patch_invalid(
            "map[spec:map[containers:[map[imagee:x name:main]]]]",
            'strict decoding error: unknown field "spec.containers[0].imagee"',
        ),
    )
    json_patch = [{"op": "add", "path": "/spec/containers/0/imagee", "value": "x"}]
    status, _, body = await send(
        world, "PATCH", f"{PODS}/dec-sp?fieldValidation=Strict", json_patch, JSON_PATCH
    )
    assert status == 422 and body["reason"] == "Invalid"
    cause = body["details"]["causes"][0]
    assert cause["field"] == "patch"
    assert cause["message"].endswith(': strict decoding error: unknown field "spec.containers[0].imagee"')
    assert '\\"imagee\\":\\"x\\"' in cause["message"]  # the value is the patched object's JSON
    status, _, stored = await send(world, "GET", f"{PODS}/dec-sp", None)
    assert stored["metadata"]["resourceVersion"] == created["metadata"]["resourceVersion"]


async def test_a_patch_that_produces_a_wrong_type_is_invalid(world: World) -> None:
    await send(world, "POST", PODS, pod("dec-tp"))
    for content_type, patch in (
        (MERGE, {"spec": {"containers": "x"}}),
        (JSON_PATCH, [{"op": "replace", "path": "/spec/containers", "value": "x"}]),
    ):
        status, _, body = await send(world, "PATCH", f"{PODS}/dec-tp", patch, content_type)
        assert status == 422, content_type
        assert body["details"]["causes"][0]["message"].endswith(
            ": json: cannot unmarshal string into Go struct field PodSpec.spec.containers"
            " of type []v1.Container"
        )
    status, _, body = await send(
        world, "PATCH", f"{PODS}/dec-tp/status", {"status": {"startTime": "yesterday"}}, MERGE
    )
    assert status == 422
    assert body["details"]["causes"][0]["message"].endswith(
        ': parsing time "yesterday" as "2006-01-02T15:04:05Z07:00": cannot parse "yesterday" as "2006"'
    )


async def test_a_lease_patch_through_kubernetes_asyncio_warns_of_unknown_fields(
    kube: client.ApiClient,
) -> None:
    leases = client.CoordinationV1Api(kube)
    lease = {"metadata": {"name": "dec-lease"}, "spec": {"holderIdentity": "a", "leaseDurationSeconds": 15}}
    await leases.create_namespaced_lease(NS, lease)
    _, status, headers = await leases.patch_namespaced_lease_with_http_info(
        "dec-lease", NS, {"spec": {"holderIdentityy": "b"}}, _content_type=MERGE
    )
    assert status == 200
    assert headers.getall("Warning") == [warning('unknown field "spec.holderIdentityy"')]


async def test_workloads_are_decoded_too(kube: client.ApiClient) -> None:
    apps = client.AppsV1Api(kube)
    deployment = {
        "metadata": {"name": "dec-deploy"},
        "spec": {
            "replicas": "1",
            "selector": {"matchLabels": {"app": "x"}},
            "template": {
                "metadata": {"labels": {"app": "x"}},
                "spec": {"containers": [{"name": "c", "image": "i"}]},
            },
        },
    }
    body = await error_status(apps.create_namespaced_deployment(NS, deployment))
    assert body == bad_request(
        'Deployment in version "v1" cannot be handled as a Deployment: json: cannot unmarshal string into Go '
        "struct field DeploymentSpec.spec.replicas of type int32"
    )


# -- never a 500 -------------------------------------------------------------------------------------------


@pytest.mark.emulator_only("reads the emulator's kinds table")
async def test_garbage_in_any_built_in_kind_is_never_a_server_error(world: World) -> None:
    garbage: list[Any] = ["x", 1, True, [], {"a": 1}, None]
    for kind in world.api.registry.all():
        if kind.is_custom:
            continue
        base = f"/apis/{kind.group}/{kind.version}" if kind.group else f"/api/{kind.version}"
        path = f"{base}/namespaces/{NS}/{kind.plural}" if kind.namespaced else f"{base}/{kind.plural}"
        for value in garbage:
            for key in ("spec", "status", "data", "metadata", "subsets", "rules", "roleRef", "target"):
                body = {"apiVersion": kind.api_version, "kind": kind.kind, "metadata": {"name": "garbage"}}
                body[key] = value
                status, _, answer = await send(world, "POST", path, body)
                assert status < 500, (kind.plural, key, value, answer)
                if status == 201:
                    await send(world, "DELETE", f"{path}/garbage", None)


async def test_a_key_named_twice_is_a_duplicate_field(world: World) -> None:
    text = (
        '{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "dec-dup", "name": "dec-dup"},'
        ' "spec": {"schedulerName": "other-scheduler",'
        ' "containers": [{"name": "main", "image": "busybox:1.36", "image": "busybox:1.37"}]}}'
    )
    async with (
        aiohttp.ClientSession() as session,
        session.post(
            world.url + PODS + "?fieldValidation=Strict",
            ssl=worlds.client_ssl(world),
            data=text,
            headers={"Content-Type": "application/json"},
        ) as resp,
    ):
        assert resp.status == 400
        assert await resp.json() == bad_request(
            CANNOT + 'strict decoding error: duplicate field "metadata.name", '
            'duplicate field "spec.containers[0].image"'
        )
    async with (
        aiohttp.ClientSession() as session,
        session.post(
            world.url + PODS,
            data=text,
            headers={"Content-Type": "application/json"},
            ssl=worlds.client_ssl(world),
        ) as resp,
    ):
        assert resp.status == 201
        assert resp.headers.getall("Warning") == [
            warning('duplicate field "metadata.name"'),
            warning('duplicate field "spec.containers[0].image"'),
        ]
        created = await resp.json()
    assert created["spec"]["containers"][0]["image"] == "busybox:1.37"  # the last one, as Go keeps it
