"""Emulator conformance, the HTTP protocol (apiserver-semantics.md S01-S05): URL layout, discovery,
content types and headers, the Status error body and Kubernetes query booleans.

Inputs: the ``world`` and ``kube`` fixtures (tests/conftest.py). Requests go over HTTP, through
kubernetes_asyncio's typed APIs and ``kubernetes_asyncio.dynamic`` or, where the client cannot express
the request (wrong verb or content type, raw query spellings), through aiohttp against ``world.url``.
Every assertion is what a real kube-apiserver (1.34/1.35) with the project's CRDs answers; where the
table's wording was settled from upstream source, the test says where it comes from.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from kubernetes_asyncio import client
from kubernetes_asyncio.client.exceptions import ApiException
from kubernetes_asyncio.dynamic import DynamicClient

from sim.world import World
from tests import worlds
from tests.e2e.sim.conformance import ARS, GROUP, NS, VERSION, ars, default_sa_ready, pod, status_body

pytestmark = pytest.mark.both_worlds(on_demand=True)

ARS_PATH = f"/apis/{GROUP}/{VERSION}/namespaces/{NS}/{ARS}"
SECRETS_PATH = f"/api/v1/namespaces/{NS}/secrets"
NOT_FOUND = "the server could not find the requested resource"
NOT_ALLOWED = "the server does not allow this method on the requested resource"
UNKNOWN_FORMAT = "the body of the request was in an unknown format - accepted media types include: "


# -- helpers ------------------------------------------------------------------------------------------


async def raw(
    world: World,
    method: str,
    path: str,
    *,
    body: Any = None,
    content_type: str = "application/json",
    params: dict[str, str] | None = None,
) -> tuple[int, Any, Any]:
    """One request over plain HTTP: (status, headers, decoded JSON body or None)."""
    data = None
    headers: dict[str, str] = {}
    if body is not None:
        data = body if isinstance(body, bytes | str) else json.dumps(body)
        headers["Content-Type"] = content_type
    async with (
        aiohttp.ClientSession() as session,
        session.request(
            method, world.url + path, data=data, headers=headers, params=params, ssl=worlds.client_ssl(world)
        ) as resp,
    ):
        payload = await resp.read()
        return resp.status, resp.headers, json.loads(payload) if payload else None


# -- S01 URL layout -----------------------------------------------------------------------------------


async def test_s01_url_layout_core_grouped_cluster_scoped_and_all_namespaces(
    world: World, kube: client.ApiClient
) -> None:
    core = client.CoreV1Api(kube)
    crs = client.CustomObjectsApi(kube)
    await core.create_namespaced_secret(NS, {"metadata": {"name": "s01", "labels": {"test": "s01"}}})
    await crs.create_namespaced_custom_object(GROUP, VERSION, NS, ARS, ars("s01"))
    await crs.create_namespaced_custom_object(GROUP, VERSION, "arc-systems", ARS, ars("s01"))

    # core: /api/v1/namespaces/{ns}/{plural}/{name}
    status, _, secret = await raw(world, "GET", f"{SECRETS_PATH}/s01")
    assert (status, secret["kind"], secret["metadata"]["name"]) == (200, "Secret", "s01")
    # grouped: /apis/{g}/{v}/namespaces/{ns}/{plural}/{name}
    status, _, obj = await raw(world, "GET", f"{ARS_PATH}/s01")
    assert (status, obj["kind"], obj["metadata"]["namespace"]) == (200, "AutoscalingRunnerSet", NS)
    # subresource: .../{name}/status answers the whole object
    status, _, obj = await raw(world, "GET", f"{ARS_PATH}/s01/status")
    assert (status, obj["kind"], obj["metadata"]["name"]) == (200, "AutoscalingRunnerSet", "s01")
    via_client = await crs.get_namespaced_custom_object_status(GROUP, VERSION, NS, ARS, "s01")
    assert via_client["metadata"]["uid"] == obj["metadata"]["uid"]
    # all-namespace list: /apis/{g}/{v}/{plural}
    everywhere = await crs.list_cluster_custom_object(GROUP, VERSION, ARS)
    assert sorted((i["metadata"]["namespace"], i["metadata"]["name"]) for i in everywhere["items"]) == [
        ("arc-systems", "s01"),
        (NS, "s01"),
    ]
    status, _, listed = await raw(world, "GET", "/api/v1/secrets", params={"labelSelector": "test=s01"})
    assert (status, listed["kind"], len(listed["items"])) == (200, "SecretList", 1)
    # namespaces: /api/v1/namespaces/{name} (cluster-scoped, no namespace in the object)
    namespace = await core.read_namespace(NS)
    assert namespace.metadata.name == NS
    assert namespace.metadata.namespace is None


async def test_s01_pods_binding_subresource(world: World, kube: client.ApiClient) -> None:
    core = client.CoreV1Api(kube)
    await default_sa_ready(core)
    # Another scheduler's pod: nobody binds it but this test.
    await core.create_namespaced_pod(NS, pod("s01-bind", schedulerName="s01-manual"))
    binding = {
        "apiVersion": "v1",
        "kind": "Binding",
        "metadata": {"name": "s01-bind"},
        "target": {"apiVersion": "v1", "kind": "Node", "name": "sim-node-1"},
    }
    status, _, body = await raw(world, "POST", f"/api/v1/namespaces/{NS}/pods/s01-bind/binding", body=binding)
    assert status == 201
    assert body == {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201}
    bound = await core.read_namespaced_pod("s01-bind", NS)
    assert bound.spec.node_name == "sim-node-1"


@pytest.mark.parametrize(
    "path",
    [
        f"/api/v1/namespaces/{NS}/nosuchthings",
        f"/api/v1/namespaces/{NS}/nosuchthings/x",
        "/api/v1/nosuchthings",
        f"/apis/rbac.authorization.k8s.io/v1/namespaces/{NS}/nosuchthings",
    ],
)
async def test_s01_unknown_builtin_resource_is_404_with_empty_details(world: World, path: str) -> None:
    # Paths under a built-in group version are go-restful's: its 404 becomes a generic Status whose
    # details are present but empty (apiserver/pkg/server/handler.go serviceErrorHandler).
    status, headers, body = await raw(world, "GET", path)
    assert status == 404
    assert headers["Content-Type"] == "application/json"
    assert body == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": NOT_FOUND,
        "reason": "NotFound",
        "details": {},
        "code": 404,
    }


@pytest.mark.parametrize(
    "path",
    [
        f"/apis/{GROUP}/{VERSION}/namespaces/{NS}/nosuchthings",
        f"/apis/{GROUP}/v9/namespaces/{NS}/{ARS}",
        "/apis/nosuch.example.com/v1/namespaces/default/things",
        "/apis/nosuch.example.com",
    ],
)
async def test_s01_unknown_group_or_custom_resource_is_a_plain_text_404(world: World, path: str) -> None:
    # Custom resource paths fall through the CRD handler, unknown groups past every API group, to the
    # server's mux: kube-apiserver 1.34 answers its plain-text 404 there, whatever the Accept header.
    async with (
        aiohttp.ClientSession() as session,
        session.get(
            world.url + path, headers={"Accept": "application/json"}, ssl=worlds.client_ssl(world)
        ) as resp,
    ):
        assert resp.status == 404
        assert resp.content_type == "text/plain"
        assert await resp.text() == "404 page not found\n"


async def test_s01_unknown_plural_through_the_client(world: World, kube: client.ApiClient) -> None:
    crs = client.CustomObjectsApi(kube)
    with pytest.raises(ApiException) as caught:
        await crs.list_namespaced_custom_object(GROUP, VERSION, NS, "nosuchthings")
    assert caught.value.status == 404
    assert caught.value.body.strip() == "404 page not found"


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("PUT", SECRETS_PATH),
        ("PATCH", SECRETS_PATH),
        ("POST", f"{SECRETS_PATH}/s01-verb"),
        ("POST", f"/api/v1/namespaces/{NS}/pods/s01-verb/status"),
        ("DELETE", f"/api/v1/namespaces/{NS}/pods/s01-verb/status"),
        ("PUT", "/api/v1/namespaces"),
    ],
)
async def test_s01_wrong_verb_on_a_builtin_path_is_405(world: World, method: str, path: str) -> None:
    status, _, body = await raw(world, method, path, body={"metadata": {"name": "s01-verb"}})
    assert status == 405
    assert body == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": NOT_ALLOWED,
        "reason": "MethodNotAllowed",
        "details": {},
        "code": 405,
    }


@pytest.mark.parametrize("method", ["POST", "DELETE"])
async def test_s01_wrong_verb_on_custom_resource_status_is_405(
    world: World, kube: client.ApiClient, method: str
) -> None:
    # The CRD handler's status endpoint serves get/update/patch only; anything else is
    # NewMethodNotSupported(group/resource, verb) (apiextensions-apiserver customresource_handler.go).
    crs = client.CustomObjectsApi(kube)
    await crs.create_namespaced_custom_object(GROUP, VERSION, NS, ARS, ars("s01-status"))
    verb = {"POST": "create", "DELETE": "delete"}[method]
    status, _, body = await raw(world, method, f"{ARS_PATH}/s01-status/status", body=ars("s01-status"))
    assert status == 405
    assert body == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": f'{verb} is not supported on resources of kind "{ARS}.{GROUP}"',
        "reason": "MethodNotAllowed",
        "details": {"group": GROUP, "kind": ARS},
        "code": 405,
    }


@pytest.mark.parametrize("method", ["PUT", "PATCH"])
async def test_s01_update_on_a_custom_resource_collection_needs_a_name(world: World, method: str) -> None:
    # The CRD handler resolves PUT/PATCH without a name to update/patch, whose namer refuses an empty
    # name: 400 "name must be provided" (apiserver/pkg/endpoints/handlers/namer.go).
    content_type = "application/json" if method == "PUT" else "application/merge-patch+json"
    status, _, body = await raw(world, method, ARS_PATH, body=ars("s01-coll"), content_type=content_type)
    assert status == 400
    assert body == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": "name must be provided",
        "reason": "BadRequest",
        "code": 400,
    }


# -- S02 discovery ------------------------------------------------------------------------------------


async def test_s02_discovery_documents(world: World) -> None:
    status, _, versions = await raw(world, "GET", "/api")
    assert status == 200
    assert versions["kind"] == "APIVersions"
    assert versions["versions"] == ["v1"]

    status, _, groups = await raw(world, "GET", "/apis")
    assert (status, groups["kind"], groups["apiVersion"]) == (200, "APIGroupList", "v1")
    by_name = {g["name"]: g for g in groups["groups"]}
    assert "" not in by_name  # the core group is /api, not a member of /apis
    gv = {"groupVersion": f"{GROUP}/{VERSION}", "version": VERSION}
    assert by_name[GROUP]["versions"] == [gv]
    assert by_name[GROUP]["preferredVersion"] == gv
    for builtin in ("rbac.authorization.k8s.io", "coordination.k8s.io", "apiextensions.k8s.io"):
        assert {"groupVersion": f"{builtin}/v1", "version": "v1"} in by_name[builtin]["versions"]

    status, _, group = await raw(world, "GET", f"/apis/{GROUP}")
    assert (status, group["kind"], group["apiVersion"], group["name"]) == (200, "APIGroup", "v1", GROUP)
    assert group["preferredVersion"] == gv

    status, _, resources = await raw(world, "GET", f"/apis/{GROUP}/{VERSION}")
    assert (status, resources["kind"], resources["groupVersion"]) == (
        200,
        "APIResourceList",
        f"{GROUP}/{VERSION}",
    )
    named = {r["name"]: r for r in resources["resources"]}
    for plural, kind in (
        ("autoscalingrunnersets", "AutoscalingRunnerSet"),
        ("ephemeralrunnersets", "EphemeralRunnerSet"),
        ("ephemeralrunners", "EphemeralRunner"),
        ("autoscalinglisteners", "AutoscalingListener"),
    ):
        main = named[plural]
        assert (main["kind"], main["namespaced"], main["singularName"]) == (kind, True, kind.lower())
        assert set(main["verbs"]) == {
            "create",
            "delete",
            "deletecollection",
            "get",
            "list",
            "patch",
            "update",
            "watch",
        }
        sub = named[f"{plural}/status"]
        assert (sub["kind"], sub["namespaced"]) == (kind, True)
        assert sorted(sub["verbs"]) == ["get", "patch", "update"]

    status, _, core = await raw(world, "GET", "/api/v1")
    assert (status, core["kind"], core["groupVersion"]) == (200, "APIResourceList", "v1")
    named = {r["name"]: r for r in core["resources"]}
    assert (named["pods"]["kind"], named["pods"]["namespaced"]) == ("Pod", True)
    assert sorted(named["pods/status"]["verbs"]) == ["get", "patch", "update"]
    assert named["pods/binding"]["verbs"] == ["create"]
    assert (named["namespaces"]["kind"], named["namespaces"]["namespaced"]) == ("Namespace", False)
    for plural in ("secrets", "serviceaccounts", "events"):
        assert named[plural]["namespaced"] is True

    status, _, version = await raw(world, "GET", "/version")
    assert status == 200
    assert version["major"] == "1"
    assert version["gitVersion"].startswith(f"v1.{version['minor'].rstrip('+')}.")


async def test_s02_dynamic_client_discovers_and_uses_the_crds(
    world: World, kube: client.ApiClient, tmp_path: Path
) -> None:
    dyn = await DynamicClient(kube, cache_file=str(tmp_path / "discovery.json"))
    runner_sets = await dyn.resources.get(api_version=f"{GROUP}/{VERSION}", kind="AutoscalingRunnerSet")
    assert (runner_sets.name, runner_sets.namespaced) == (ARS, True)
    created = await dyn.create(runner_sets, body=ars("s02"), namespace=NS)
    assert created.metadata.name == "s02"
    got = await dyn.get(runner_sets, name="s02", namespace=NS)
    assert got.metadata.uid == created.metadata.uid
    listed = await dyn.get(runner_sets, namespace=NS)
    assert [i.metadata.name for i in listed.items] == ["s02"]

    secrets = await dyn.resources.get(api_version="v1", kind="Secret")
    await dyn.create(secrets, body={"metadata": {"name": "s02"}, "stringData": {"k": "v"}}, namespace=NS)
    assert (await dyn.get(secrets, name="s02", namespace=NS)).type == "Opaque"


# -- S03 content types and headers ------------------------------------------------------------------------


async def test_s03_responses_are_json(world: World, kube: client.ApiClient) -> None:
    crs = client.CustomObjectsApi(kube)
    await crs.create_namespaced_custom_object(GROUP, VERSION, NS, ARS, ars("s03"))
    for path in (f"{ARS_PATH}/s03", ARS_PATH, f"{ARS_PATH}/missing", SECRETS_PATH, "/apis", "/version"):
        _, headers, body = await raw(world, "GET", path)
        assert headers["Content-Type"] == "application/json", path
        assert isinstance(body, dict)


@pytest.mark.parametrize("media_type", ["text/plain", "application/xml"])
async def test_s03_unknown_body_media_type_is_415(
    world: World, kube: client.ApiClient, media_type: str
) -> None:
    crs = client.CustomObjectsApi(kube)
    created = await crs.create_namespaced_custom_object(GROUP, VERSION, NS, ARS, ars("s03-415"))
    payload = json.dumps({"metadata": {"name": "s03-415"}})

    status, _, body = await raw(world, "POST", SECRETS_PATH, body=payload, content_type=media_type)
    assert status == 415
    assert (body["kind"], body["status"], body["reason"], body["code"]) == (
        "Status",
        "Failure",
        "UnsupportedMediaType",
        415,
    )
    # Built-ins accept JSON, YAML and protobuf (and CBOR where its alpha gate is on).
    assert body["message"].startswith(UNKNOWN_FORMAT + "application/json, application/yaml, ")
    assert "application/vnd.kubernetes.protobuf" in body["message"]
    assert "details" not in body

    for method, path in (("POST", ARS_PATH), ("PUT", f"{ARS_PATH}/s03-415")):
        body_json = json.dumps({**ars("s03-415"), "metadata": created["metadata"]})
        status, _, body = await raw(world, method, path, body=body_json, content_type=media_type)
        assert status == 415, (method, path)
        assert body["reason"] == "UnsupportedMediaType"
        # The CRD handler's input serializer lists protobuf too (for the objects the server itself
        # encodes), although a custom resource cannot be decoded from it.
        assert body["message"].startswith(
            UNKNOWN_FORMAT + "application/json, application/yaml, application/vnd.kubernetes.protobuf"
        )
        assert "details" not in body


async def test_s03_warning_header_for_unknown_fields(world: World, kube: client.ApiClient) -> None:
    crs = client.CustomObjectsApi(kube)
    body = ars("s03-warn")
    body["spec"]["bogusField"] = "x"
    created, status, headers = await crs.create_namespaced_custom_object_with_http_info(
        GROUP, VERSION, NS, ARS, body
    )
    assert status == 201
    assert headers.getall("Warning") == ['299 - "unknown field \\"spec.bogusField\\""']
    # The unknown field is pruned, not stored.
    assert "bogusField" not in created["spec"]
    stored = await crs.get_namespaced_custom_object(GROUP, VERSION, NS, ARS, "s03-warn")
    assert "bogusField" not in stored["spec"]

    _, status, headers = await crs.get_namespaced_custom_object_with_http_info(
        GROUP, VERSION, NS, ARS, "s03-warn"
    )
    assert status == 200
    assert "Warning" not in headers


# -- S04 error body ---------------------------------------------------------------------------------------


async def test_s04_not_found_and_already_exists_name_the_plural_resource(
    world: World, kube: client.ApiClient
) -> None:
    core = client.CoreV1Api(kube)
    crs = client.CustomObjectsApi(kube)

    with pytest.raises(ApiException) as caught:
        await crs.get_namespaced_custom_object(GROUP, VERSION, NS, ARS, "s04-missing")
    assert caught.value.status == 404
    assert caught.value.reason == "Not Found"
    assert status_body(caught.value) == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": f'{ARS}.{GROUP} "s04-missing" not found',
        "reason": "NotFound",
        "details": {"name": "s04-missing", "group": GROUP, "kind": ARS},
        "code": 404,
    }

    await core.create_namespaced_secret(NS, {"metadata": {"name": "s04"}})
    with pytest.raises(ApiException) as caught:
        await core.create_namespaced_secret(NS, {"metadata": {"name": "s04"}})
    assert caught.value.status == 409
    assert status_body(caught.value) == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": 'secrets "s04" already exists',
        "reason": "AlreadyExists",
        "details": {"name": "s04", "kind": "secrets"},
        "code": 409,
    }


async def test_s04_conflict_names_the_plural_resource(world: World, kube: client.ApiClient) -> None:
    crs = client.CustomObjectsApi(kube)
    created = await crs.create_namespaced_custom_object(GROUP, VERSION, NS, ARS, ars("s04-conflict"))
    await crs.patch_namespaced_custom_object(
        GROUP,
        VERSION,
        NS,
        ARS,
        "s04-conflict",
        {"metadata": {"labels": {"a": "b"}}},
        _content_type="application/merge-patch+json",
    )
    with pytest.raises(ApiException) as caught:
        await crs.replace_namespaced_custom_object(GROUP, VERSION, NS, ARS, "s04-conflict", created)
    assert caught.value.status == 409
    assert status_body(caught.value) == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": f'Operation cannot be fulfilled on {ARS}.{GROUP} "s04-conflict": the object has been '
        "modified; please apply your changes to the latest version and try again",
        "reason": "Conflict",
        "details": {"name": "s04-conflict", "group": GROUP, "kind": ARS},
        "code": 409,
    }


async def test_s04_invalid_names_the_kind_and_lists_causes(world: World, kube: client.ApiClient) -> None:
    core = client.CoreV1Api(kube)
    crs = client.CustomObjectsApi(kube)
    subdomain = 'metadata.name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain must consist of'

    with pytest.raises(ApiException) as caught:
        await crs.create_namespaced_custom_object(GROUP, VERSION, NS, ARS, ars("Bad_Name"))
    body = status_body(caught.value)
    assert caught.value.status == 422
    assert (body["kind"], body["apiVersion"], body["status"], body["reason"], body["code"]) == (
        "Status",
        "v1",
        "Failure",
        "Invalid",
        422,
    )
    assert body["metadata"] == {}
    assert body["message"].startswith(f'AutoscalingRunnerSet.{GROUP} "Bad_Name" is invalid: {subdomain}')
    details = body["details"]
    assert (details["name"], details["group"], details["kind"]) == ("Bad_Name", GROUP, "AutoscalingRunnerSet")
    assert [(c["reason"], c["field"]) for c in details["causes"]] == [("FieldValueInvalid", "metadata.name")]
    assert details["causes"][0]["message"].startswith('Invalid value: "Bad_Name": a lowercase RFC 1123')

    with pytest.raises(ApiException) as caught:
        await core.create_namespaced_secret(NS, {"metadata": {"name": "Bad_Name"}})
    body = status_body(caught.value)
    assert (caught.value.status, body["reason"]) == (422, "Invalid")
    assert body["message"].startswith(f'Secret "Bad_Name" is invalid: {subdomain}')
    assert "group" not in body["details"]
    assert (body["details"]["name"], body["details"]["kind"]) == ("Bad_Name", "Secret")
    assert [(c["reason"], c["field"]) for c in body["details"]["causes"]] == [
        ("FieldValueInvalid", "metadata.name")
    ]


# -- S05 boolean query parameters ----------------------------------------------------------------------


@pytest.mark.parametrize("value", ["true", "True", "TRUE", "1", "", "yes", "anything"])
async def test_s05_true_spellings_start_a_watch(world: World, kube: client.ApiClient, value: str) -> None:
    crs = client.CustomObjectsApi(kube)
    await crs.create_namespaced_custom_object(GROUP, VERSION, NS, ARS, ars("s05"))
    async with (
        aiohttp.ClientSession() as session,
        session.get(world.url + ARS_PATH, params={"watch": value}, ssl=worlds.client_ssl(world)) as resp,
    ):
        assert resp.status == 200
        assert resp.headers["Transfer-Encoding"] == "chunked"
        line = await asyncio.wait_for(resp.content.readline(), 5)
        event = json.loads(line)
        assert (event["type"], event["object"]["metadata"]["name"]) == ("ADDED", "s05")


@pytest.mark.parametrize("value", ["false", "False", "FALSE", "fAlSe", "0"])
async def test_s05_false_spellings_list(world: World, kube: client.ApiClient, value: str) -> None:
    crs = client.CustomObjectsApi(kube)
    await crs.create_namespaced_custom_object(GROUP, VERSION, NS, ARS, ars("s05"))
    status, _, body = await raw(world, "GET", ARS_PATH, params={"watch": value})
    assert status == 200
    assert body["kind"] == "AutoscalingRunnerSetList"
    assert [i["metadata"]["name"] for i in body["items"]] == ["s05"]


async def test_s05_other_watch_booleans_use_the_same_rules(world: World, kube: client.ApiClient) -> None:
    # allowWatchBookmarks=1 and sendInitialEvents=True are both "true": the initial state ends with
    # the initial-events-end bookmark, which is only sent when bookmarks are allowed.
    crs = client.CustomObjectsApi(kube)
    await crs.create_namespaced_custom_object(GROUP, VERSION, NS, ARS, ars("s05-init"))
    params = {
        "watch": "1",
        "allowWatchBookmarks": "1",
        "sendInitialEvents": "True",
        "resourceVersionMatch": "NotOlderThan",
    }
    async with (
        aiohttp.ClientSession() as session,
        session.get(world.url + ARS_PATH, params=params, ssl=worlds.client_ssl(world)) as resp,
    ):
        assert resp.status == 200
        added = json.loads(await asyncio.wait_for(resp.content.readline(), 5))
        assert (added["type"], added["object"]["metadata"]["name"]) == ("ADDED", "s05-init")
        bookmark = json.loads(await asyncio.wait_for(resp.content.readline(), 5))
        assert bookmark["type"] == "BOOKMARK"
        assert bookmark["object"]["metadata"]["annotations"] == {"k8s.io/initial-events-end": "true"}


async def test_s05_kubernetes_asyncio_sends_watch_true(world: World, kube: client.ApiClient) -> None:
    crs = client.CustomObjectsApi(kube)
    await crs.create_namespaced_custom_object(GROUP, VERSION, NS, ARS, ars("s05-client"))
    resp = await crs.list_namespaced_custom_object(
        GROUP, VERSION, NS, ARS, watch=True, timeout_seconds=1, _preload_content=False
    )
    try:
        line = await asyncio.wait_for(resp.content.readline(), 5)
    finally:
        resp.release()
    # The client renders the boolean as "True": the server answered with a watch stream, not a list.
    assert json.loads(line)["type"] == "ADDED"
