"""Emulator conformance, create and get (apiserver-semantics.md S06-S13): the 201 answer and its server
fields, the namespace in the body, AlreadyExists, generateName, server-owned fields, name/label/annotation
validation, namespace existence and GET.

Inputs: the ``world`` and ``kube`` fixtures (tests/conftest.py). Requests go over HTTP through
kubernetes_asyncio's typed APIs, or aiohttp against ``world.url`` where the exact wire body matters
(typed models hide absent vs null and the ``apiVersion``/``kind`` of built-ins). Every assertion is what a
real kube-apiserver (1.34/1.35) with the project's CRDs answers.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from kubernetes_asyncio import client
from kubernetes_asyncio.client.exceptions import ApiException

from sim.world import World
from tests.e2e.sim.conformance import (
    ARS,
    GROUP,
    NS,
    VERSION,
    api_error,
    ars,
    default_sa_ready,
    failure,
    pod,
    raw,
    status_body,
)
from tests.helpers import eventually

pytestmark = pytest.mark.both_worlds(on_demand=True)

ARS_PATH = f"/apis/{GROUP}/{VERSION}/namespaces/{NS}/{ARS}"
TIMESTAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")
UID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
GENERATED = "[bcdfghjklmnpqrstvwxz2456789]{5}"


# -- helpers ------------------------------------------------------------------------------------------


def causes(body: dict[str, Any]) -> list[tuple[str, str]]:
    return [(c["reason"], c["field"]) for c in body["details"]["causes"]]


def check_server_fields(meta: dict[str, Any], namespace: str = NS) -> None:
    assert UID.match(meta["uid"]), meta["uid"]
    assert TIMESTAMP.match(meta["creationTimestamp"]), meta["creationTimestamp"]
    assert isinstance(meta["resourceVersion"], str)
    assert meta["resourceVersion"].isdigit()
    assert meta["namespace"] == namespace


# -- S06 create ---------------------------------------------------------------------------------------


async def test_s06_create_returns_201_with_server_fields(world: World, kube: client.ApiClient) -> None:
    crs = client.CustomObjectsApi(kube)
    created, status, _ = await crs.create_namespaced_custom_object_with_http_info(
        GROUP, VERSION, NS, ARS, ars("s06")
    )
    assert status == 201
    assert (created["apiVersion"], created["kind"]) == (f"{GROUP}/{VERSION}", "AutoscalingRunnerSet")
    check_server_fields(created["metadata"])
    assert created["metadata"]["generation"] == 1
    # kubernetes_asyncio deserialises the 201 (it would return None for any other 2xx).
    other = await crs.create_namespaced_custom_object(GROUP, VERSION, NS, ARS, ars("s06-b"))
    assert other["metadata"]["name"] == "s06-b"
    assert other["metadata"]["uid"] != created["metadata"]["uid"]


async def test_s06_builtin_creates_return_201_and_generation_only_for_pods(
    world: World, kube: client.ApiClient
) -> None:
    core = client.CoreV1Api(kube)
    rbac = client.RbacAuthorizationV1Api(kube)
    coordination = client.CoordinationV1Api(kube)
    await default_sa_ready(core)

    pod_path = f"/api/v1/namespaces/{NS}/pods"
    status, created_pod = await raw(world, "POST", pod_path, pod("s06-pod"))
    assert status == 201
    assert (created_pod["apiVersion"], created_pod["kind"]) == ("v1", "Pod")
    check_server_fields(created_pod["metadata"])
    assert created_pod["metadata"]["generation"] == 1  # 1.33+

    bodies: list[tuple[str, dict[str, Any], str, str]] = [
        (f"/api/v1/namespaces/{NS}/secrets", {"metadata": {"name": "s06"}}, "v1", "Secret"),
        (f"/api/v1/namespaces/{NS}/serviceaccounts", {"metadata": {"name": "s06"}}, "v1", "ServiceAccount"),
        (
            f"/apis/rbac.authorization.k8s.io/v1/namespaces/{NS}/roles",
            {"metadata": {"name": "s06"}, "rules": []},
            "rbac.authorization.k8s.io/v1",
            "Role",
        ),
        (
            f"/apis/coordination.k8s.io/v1/namespaces/{NS}/leases",
            {"metadata": {"name": "s06"}, "spec": {"holderIdentity": "me"}},
            "coordination.k8s.io/v1",
            "Lease",
        ),
        (
            f"/api/v1/namespaces/{NS}/events",
            {
                "metadata": {"name": "s06"},
                "involvedObject": {"kind": "Pod", "namespace": NS, "name": "s06-pod"},
                "reason": "Tested",
                "message": "s06",
                "type": "Normal",
            },
            "v1",
            "Event",
        ),
    ]
    for path, body, api_version, kind in bodies:
        status, created = await raw(world, "POST", path, body)
        assert status == 201, (kind, created)
        assert (created["apiVersion"], created["kind"]) == (api_version, kind)
        check_server_fields(created["metadata"])
        assert "generation" not in created["metadata"], kind

    # The typed APIs see the same 201s.
    _, status, _ = await core.create_namespaced_secret_with_http_info(NS, {"metadata": {"name": "s06-b"}})
    assert status == 201
    role, status, _ = await rbac.create_namespaced_role_with_http_info(NS, {"metadata": {"name": "s06-b"}})
    assert (status, role.metadata.generation) == (201, None)
    lease, status, _ = await coordination.create_namespaced_lease_with_http_info(
        NS, {"metadata": {"name": "s06-b"}, "spec": {}}
    )
    assert (status, lease.metadata.namespace) == (201, NS)


# -- S07 namespace in the body ------------------------------------------------------------------------------


MISMATCH = "the namespace of the provided object does not match the namespace sent on the request"


async def test_s07_body_namespace_empty_equal_or_different(world: World, kube: client.ApiClient) -> None:
    crs = client.CustomObjectsApi(kube)
    core = client.CoreV1Api(kube)

    empty = await crs.create_namespaced_custom_object(GROUP, VERSION, NS, ARS, ars("s07-empty"))
    assert empty["metadata"]["namespace"] == NS
    equal = await crs.create_namespaced_custom_object(GROUP, VERSION, NS, ARS, ars("s07-equal", namespace=NS))
    assert equal["metadata"]["namespace"] == NS

    exc = await api_error(
        crs.create_namespaced_custom_object(
            GROUP, VERSION, NS, ARS, ars("s07-other", namespace="arc-systems")
        )
    )
    assert exc.status == 400
    assert status_body(exc) == failure(400, "BadRequest", MISMATCH)

    exc = await api_error(
        core.create_namespaced_secret(NS, {"metadata": {"name": "s07", "namespace": "arc-systems"}})
    )
    assert exc.status == 400
    assert status_body(exc) == failure(400, "BadRequest", MISMATCH)

    # The same rule holds for a PUT.
    secret = await core.create_namespaced_secret(NS, {"metadata": {"name": "s07"}})
    secret.metadata.namespace = "arc-systems"
    exc = await api_error(core.replace_namespaced_secret("s07", NS, secret))
    assert exc.status == 400
    assert status_body(exc) == failure(400, "BadRequest", MISMATCH)


async def test_s07_cluster_scoped_objects_lose_a_body_namespace(world: World, kube: client.ApiClient) -> None:
    core = client.CoreV1Api(kube)
    status, namespace = await raw(
        world, "POST", "/api/v1/namespaces", {"metadata": {"name": "s07-ns", "namespace": NS}}
    )
    assert status == 201
    assert "namespace" not in namespace["metadata"]
    assert (await core.read_namespace("s07-ns")).metadata.namespace is None

    status, role = await raw(
        world,
        "POST",
        "/apis/rbac.authorization.k8s.io/v1/clusterroles",
        {"metadata": {"name": "s07-role", "namespace": NS}, "rules": []},
    )
    assert status == 201
    assert "namespace" not in role["metadata"]


# -- S08 AlreadyExists ------------------------------------------------------------------------------------


async def test_s08_duplicate_name_is_409_already_exists(world: World, kube: client.ApiClient) -> None:
    crs = client.CustomObjectsApi(kube)
    core = client.CoreV1Api(kube)
    await default_sa_ready(core)

    await crs.create_namespaced_custom_object(GROUP, VERSION, NS, ARS, ars("s08"))
    exc = await api_error(crs.create_namespaced_custom_object(GROUP, VERSION, NS, ARS, ars("s08")))
    assert exc.status == 409
    assert status_body(exc) == failure(
        409,
        "AlreadyExists",
        f'{ARS}.{GROUP} "s08" already exists',
        {"name": "s08", "group": GROUP, "kind": ARS},
    )

    await core.create_namespaced_pod(NS, pod("s08"))
    exc = await api_error(core.create_namespaced_pod(NS, pod("s08")))
    assert exc.status == 409
    assert status_body(exc) == failure(
        409, "AlreadyExists", 'pods "s08" already exists', {"name": "s08", "kind": "pods"}
    )

    # The same name in another namespace is another object.
    other = await crs.create_namespaced_custom_object(GROUP, VERSION, "arc-systems", ARS, ars("s08"))
    assert other["metadata"]["namespace"] == "arc-systems"


async def test_s08_already_exists_while_terminating_says_so(world: World, kube: client.ApiClient) -> None:
    crs = client.CustomObjectsApi(kube)
    core = client.CoreV1Api(kube)
    held = {"finalizers": ["example.com/hold"]}

    await crs.create_namespaced_custom_object(GROUP, VERSION, NS, ARS, ars("s08-term", **held))
    deleting = await crs.delete_namespaced_custom_object(GROUP, VERSION, NS, ARS, "s08-term")
    assert deleting["metadata"]["deletionTimestamp"]
    exc = await api_error(crs.create_namespaced_custom_object(GROUP, VERSION, NS, ARS, ars("s08-term")))
    assert exc.status == 409
    assert status_body(exc) == failure(
        409,
        "AlreadyExists",
        f'object is being deleted: {ARS}.{GROUP} "s08-term" already exists',
        {"name": "s08-term", "group": GROUP, "kind": ARS},
    )

    await core.create_namespaced_secret(NS, {"metadata": {"name": "s08-term", **held}})
    await core.delete_namespaced_secret("s08-term", NS)
    exc = await api_error(core.create_namespaced_secret(NS, {"metadata": {"name": "s08-term"}}))
    assert exc.status == 409
    assert status_body(exc)["message"] == 'object is being deleted: secrets "s08-term" already exists'


# -- S09 generateName -------------------------------------------------------------------------------------


async def test_s09_generate_name(world: World, kube: client.ApiClient) -> None:
    crs = client.CustomObjectsApi(kube)
    core = client.CoreV1Api(kube)

    names = set()
    for _ in range(5):
        created = await crs.create_namespaced_custom_object(GROUP, VERSION, NS, ARS, ars(generateName="s09-"))
        name = created["metadata"]["name"]
        assert re.fullmatch(f"s09-{GENERATED}", name), name
        assert created["metadata"]["generateName"] == "s09-"
        names.add(name)
    assert len(names) == 5

    prefix = "s09-" + "a" * 70 + "-"
    created = await crs.create_namespaced_custom_object(GROUP, VERSION, NS, ARS, ars(generateName=prefix))
    name = created["metadata"]["name"]
    assert len(name) == 63
    assert re.fullmatch(re.escape(prefix[:58]) + GENERATED, name), name

    # An explicit name wins over generateName.
    created = await crs.create_namespaced_custom_object(
        GROUP, VERSION, NS, ARS, ars("s09-explicit", generateName="s09-")
    )
    assert created["metadata"]["name"] == "s09-explicit"

    secret = await core.create_namespaced_secret(NS, {"metadata": {"generateName": "s09-"}})
    assert re.fullmatch(f"s09-{GENERATED}", secret.metadata.name)


async def test_s09_neither_name_nor_generate_name_is_422(world: World, kube: client.ApiClient) -> None:
    crs = client.CustomObjectsApi(kube)
    core = client.CoreV1Api(kube)
    required = "metadata.name: Required value: name or generateName is required"
    cause = {
        "reason": "FieldValueRequired",
        "message": "Required value: name or generateName is required",
        "field": "metadata.name",
    }

    exc = await api_error(crs.create_namespaced_custom_object(GROUP, VERSION, NS, ARS, ars()))
    assert exc.status == 422
    # An empty name is left out of the details (omitempty).
    assert status_body(exc) == failure(
        422,
        "Invalid",
        f'AutoscalingRunnerSet.{GROUP} "" is invalid: {required}',
        {"group": GROUP, "kind": "AutoscalingRunnerSet", "causes": [cause]},
    )

    exc = await api_error(core.create_namespaced_secret(NS, {"metadata": {"labels": {"a": "b"}}}))
    assert exc.status == 422
    assert status_body(exc) == failure(
        422, "Invalid", f'Secret "" is invalid: {required}', {"kind": "Secret", "causes": [cause]}
    )


# -- S10 server-owned fields on create ------------------------------------------------------------------


async def test_s10_client_server_fields_are_overwritten(world: World, kube: client.ApiClient) -> None:
    crs = client.CustomObjectsApi(kube)
    body = ars(
        "s10",
        uid="11111111-2222-3333-4444-555555555555",
        creationTimestamp="2001-01-01T00:00:00Z",
        deletionTimestamp="2001-01-01T00:00:00Z",
        deletionGracePeriodSeconds=30,
        generation=7,
    )
    body["status"] = {"currentRunners": 3, "state": "Running"}
    created = await crs.create_namespaced_custom_object(GROUP, VERSION, NS, ARS, body)
    meta = created["metadata"]
    assert meta["uid"] != "11111111-2222-3333-4444-555555555555"
    assert UID.match(meta["uid"])
    assert meta["creationTimestamp"] != "2001-01-01T00:00:00Z"
    assert TIMESTAMP.match(meta["creationTimestamp"])
    assert meta["generation"] == 1
    assert "deletionTimestamp" not in meta
    assert "deletionGracePeriodSeconds" not in meta
    # The status subresource owns status: a create drops it.
    assert "status" not in created
    stored = await crs.get_namespaced_custom_object(GROUP, VERSION, NS, ARS, "s10")
    assert "status" not in stored
    assert stored["metadata"]["uid"] == meta["uid"]


async def test_s10_pod_status_is_reset_on_create(world: World, kube: client.ApiClient) -> None:
    core = client.CoreV1Api(kube)
    await default_sa_ready(core)
    body = pod("s10-pod", schedulerName="s10-manual")
    body["status"] = {"phase": "Running", "podIP": "10.0.0.1", "hostIP": "10.0.0.2"}
    status, created = await raw(world, "POST", f"/api/v1/namespaces/{NS}/pods", body)
    assert status == 201
    assert created["status"] == {"phase": "Pending", "qosClass": "BestEffort"}


async def test_s10_resource_version_on_create_is_500(world: World, kube: client.ApiClient) -> None:
    # etcd3 store.Create returns storage.ErrResourceVersionSetOnCreate, a plain error that
    # ErrorToAPIStatus turns into a 500 with reason Unknown (empty, left out) and the bare text.
    crs = client.CustomObjectsApi(kube)
    core = client.CoreV1Api(kube)
    expected = failure(500, "", "resourceVersion should not be set on objects to be created")
    del expected["reason"]

    exc = await api_error(
        crs.create_namespaced_custom_object(GROUP, VERSION, NS, ARS, ars("s10-rv", resourceVersion="12"))
    )
    assert exc.status == 500
    assert status_body(exc) == expected

    exc = await api_error(
        core.create_namespaced_secret(NS, {"metadata": {"name": "s10-rv", "resourceVersion": "12"}})
    )
    assert exc.status == 500
    assert status_body(exc) == expected
    # Nothing was stored.
    exc = await api_error(core.read_namespaced_secret("s10-rv", NS))
    assert exc.status == 404


# -- S11 name, label and annotation validation ------------------------------------------------------------


async def test_s11_names_are_dns_subdomains(world: World, kube: client.ApiClient) -> None:
    crs = client.CustomObjectsApi(kube)
    core = client.CoreV1Api(kube)
    coordination = client.CoordinationV1Api(kube)
    await default_sa_ready(core)

    too_long = "a" * 254
    for bad in ("Bad_Name", "a:b", "-a", too_long):
        exc = await api_error(crs.create_namespaced_custom_object(GROUP, VERSION, NS, ARS, ars(bad)))
        assert exc.status == 422, bad
        body = status_body(exc)
        assert body["reason"] == "Invalid"
        assert set(causes(body)) == {("FieldValueInvalid", "metadata.name")}, bad
    # 253 characters in dot-separated labels of at most 63 is the longest valid name.
    longest = ".".join(["a" * 63] * 3 + ["a" * 61])
    assert len(longest) == 253
    created = await crs.create_namespaced_custom_object(GROUP, VERSION, NS, ARS, ars(longest))
    assert created["metadata"]["name"] == longest

    creators = [
        lambda name: core.create_namespaced_pod(NS, pod(name)),
        lambda name: core.create_namespaced_secret(NS, {"metadata": {"name": name}}),
        lambda name: core.create_namespaced_service_account(NS, {"metadata": {"name": name}}),
        lambda name: coordination.create_namespaced_lease(NS, {"metadata": {"name": name}, "spec": {}}),
    ]
    for create in creators:
        for bad in ("Bad_Name", "a:b"):
            exc = await api_error(create(bad))
            assert exc.status == 422, bad
            assert ("FieldValueInvalid", "metadata.name") in causes(status_body(exc))
        await create("s11.dotted-name")


async def test_s11_rbac_names_are_path_segments(world: World, kube: client.ApiClient) -> None:
    rbac = client.RbacAuthorizationV1Api(kube)
    for good in ("system:arcsm:Role_1", "UPPER", "a" * 300):
        role = await rbac.create_namespaced_role(NS, {"metadata": {"name": good}, "rules": []})
        assert role.metadata.name == good
    for bad, message in (
        ("a%b", "may not contain '%'"),
        ("..", "may not be '..'"),
        ("a/b", "may not contain '/'"),
    ):
        exc = await api_error(rbac.create_namespaced_role(NS, {"metadata": {"name": bad}, "rules": []}))
        assert exc.status == 422, bad
        body = status_body(exc)
        assert body["message"] == (
            f'Role.rbac.authorization.k8s.io "{bad}" is invalid: '
            f'metadata.name: Invalid value: "{bad}": {message}'
        )
        assert causes(body) == [("FieldValueInvalid", "metadata.name")]


async def test_s11_label_keys_and_values(world: World, kube: client.ApiClient) -> None:
    crs = client.CustomObjectsApi(kube)
    core = client.CoreV1Api(kube)
    good = {"example.com/key": "A.b_c-9", "plain": "", "k": "v" * 63, "a" * 63: "x"}
    created = await crs.create_namespaced_custom_object(
        GROUP, VERSION, NS, ARS, ars("s11-labels", labels=good)
    )
    assert created["metadata"]["labels"] == good

    bad_labels = [
        {"k": "v" * 64},  # value longer than 63
        {"k": "-v"},  # value not alphanumeric at the ends
        {"k": "a b"},  # value with a space
        {"bad key": "v"},  # key with a space
        {"a" * 64: "v"},  # key name longer than 63
        {"Example.com/k": "v"},  # prefix not a DNS subdomain
        {"a/b/c": "v"},  # two slashes
    ]
    for i, labels in enumerate(bad_labels):
        exc = await api_error(
            crs.create_namespaced_custom_object(GROUP, VERSION, NS, ARS, ars(f"s11-bad-{i}", labels=labels))
        )
        assert exc.status == 422, labels
        assert set(causes(status_body(exc))) == {("FieldValueInvalid", "metadata.labels")}, labels
        exc = await api_error(
            core.create_namespaced_secret(NS, {"metadata": {"name": f"s11-bad-{i}", "labels": labels}})
        )
        assert exc.status == 422, labels
        assert set(causes(status_body(exc))) == {("FieldValueInvalid", "metadata.labels")}, labels


async def test_s11_annotations_total_at_most_256_kib(world: World, kube: client.ApiClient) -> None:
    crs = client.CustomObjectsApi(kube)
    core = client.CoreV1Api(kube)
    limit = 256 * 1024
    # Keys count too: exactly the limit is fine, one byte more is not.
    fits = {"k": "x" * (limit - 1)}
    created = await core.create_namespaced_secret(NS, {"metadata": {"name": "s11-fits", "annotations": fits}})
    assert len(created.metadata.annotations["k"]) == limit - 1
    too_big = {"k": "x" * limit}
    exc = await api_error(
        core.create_namespaced_secret(NS, {"metadata": {"name": "s11-big", "annotations": too_big}})
    )
    assert exc.status == 422
    assert causes(status_body(exc)) == [("FieldValueTooLong", "metadata.annotations")]
    exc = await api_error(
        crs.create_namespaced_custom_object(GROUP, VERSION, NS, ARS, ars("s11-big", annotations=too_big))
    )
    assert exc.status == 422
    assert causes(status_body(exc)) == [("FieldValueTooLong", "metadata.annotations")]
    exc = await api_error(
        core.create_namespaced_secret(NS, {"metadata": {"name": "s11-key", "annotations": {"bad key": "v"}}})
    )
    assert exc.status == 422
    assert causes(status_body(exc)) == [("FieldValueInvalid", "metadata.annotations")]


# -- S12 namespace existence ------------------------------------------------------------------------------


async def test_s12_create_in_a_missing_namespace_is_404(world: World, kube: client.ApiClient) -> None:
    crs = client.CustomObjectsApi(kube)
    core = client.CoreV1Api(kube)
    expected = failure(
        404, "NotFound", 'namespaces "s12-missing" not found', {"name": "s12-missing", "kind": "namespaces"}
    )
    exc = await api_error(crs.create_namespaced_custom_object(GROUP, VERSION, "s12-missing", ARS, ars("x")))
    assert exc.status == 404
    assert status_body(exc) == expected
    exc = await api_error(core.create_namespaced_secret("s12-missing", {"metadata": {"name": "x"}}))
    assert exc.status == 404
    assert status_body(exc) == expected


async def test_s12_create_in_a_terminating_namespace_is_403(world: World, kube: client.ApiClient) -> None:
    core = client.CoreV1Api(kube)
    crs = client.CustomObjectsApi(kube)
    doomed = "s12-doomed"
    await core.create_namespace({"metadata": {"name": doomed}})
    # A finalizer nobody removes keeps the namespace Terminating for the rest of the test.
    await core.create_namespaced_config_map(
        doomed, {"metadata": {"name": "hold", "finalizers": ["example.com/hold"]}}
    )
    await core.delete_namespace(doomed)
    assert (await core.read_namespace(doomed)).status.phase == "Terminating"
    why = f"unable to create new content in namespace {doomed} because it is being terminated"

    async def refused(create: Any) -> ApiException | None:
        # NamespaceLifecycle reads an informer cache: it may take a moment to see the phase.
        try:
            await create()
        except ApiException as exc:
            if exc.status == 403:
                return exc
            raise
        return None

    exc = await eventually(
        lambda: refused(
            lambda: core.create_namespaced_secret(doomed, {"metadata": {"generateName": "s12-"}})
        ),
        what="secret create refused",
    )
    # NamespaceLifecycle adds a NamespaceTerminating cause clients can test for.
    cause = {
        "reason": "NamespaceTerminating",
        "message": f"namespace {doomed} is being terminated",
        "field": "metadata.namespace",
    }
    exc = await api_error(core.create_namespaced_secret(doomed, {"metadata": {"name": "s12"}}))
    assert exc.status == 403
    assert status_body(exc) == failure(
        403,
        "Forbidden",
        f'secrets "s12" is forbidden: {why}',
        {"name": "s12", "kind": "secrets", "causes": [cause]},
    )
    exc = await api_error(crs.create_namespaced_custom_object(GROUP, VERSION, doomed, ARS, ars("s12")))
    assert exc.status == 403
    assert status_body(exc) == failure(
        403,
        "Forbidden",
        f'{ARS}.{GROUP} "s12" is forbidden: {why}',
        {"name": "s12", "group": GROUP, "kind": ARS, "causes": [cause]},
    )


# -- S13 get ----------------------------------------------------------------------------------------------


async def test_s13_get_returns_the_object_with_type_fields(world: World, kube: client.ApiClient) -> None:
    crs = client.CustomObjectsApi(kube)
    core = client.CoreV1Api(kube)
    created = await crs.create_namespaced_custom_object(GROUP, VERSION, NS, ARS, ars("s13"))
    got, status, _ = await crs.get_namespaced_custom_object_with_http_info(GROUP, VERSION, NS, ARS, "s13")
    assert status == 200
    assert got == created

    await core.create_namespaced_secret(NS, {"metadata": {"name": "s13"}, "stringData": {"k": "v"}})
    status, secret = await raw(world, "GET", f"/api/v1/namespaces/{NS}/secrets/s13")
    assert status == 200
    assert (secret["apiVersion"], secret["kind"], secret["type"]) == ("v1", "Secret", "Opaque")
    assert secret["data"] == {"k": "dg=="}
    assert "stringData" not in secret


async def test_s13_get_missing_is_404_naming_the_resource(world: World, kube: client.ApiClient) -> None:
    crs = client.CustomObjectsApi(kube)
    core = client.CoreV1Api(kube)
    exc = await api_error(crs.get_namespaced_custom_object(GROUP, VERSION, NS, "ephemeralrunners", "nope"))
    assert exc.status == 404
    assert status_body(exc) == failure(
        404,
        "NotFound",
        f'ephemeralrunners.{GROUP} "nope" not found',
        {"name": "nope", "group": GROUP, "kind": "ephemeralrunners"},
    )
    exc = await api_error(crs.get_namespaced_custom_object_status(GROUP, VERSION, NS, ARS, "nope"))
    assert exc.status == 404
    assert status_body(exc)["message"] == f'{ARS}.{GROUP} "nope" not found'
    for read, plural in (
        (core.read_namespaced_pod, "pods"),
        (core.read_namespaced_secret, "secrets"),
        (core.read_namespaced_service_account, "serviceaccounts"),
    ):
        exc = await api_error(read("nope", NS))
        assert exc.status == 404
        assert status_body(exc) == failure(
            404, "NotFound", f'{plural} "nope" not found', {"name": "nope", "kind": plural}
        )
    exc = await api_error(client.CoordinationV1Api(kube).read_namespaced_lease("nope", NS))
    assert status_body(exc)["details"] == {"name": "nope", "group": "coordination.k8s.io", "kind": "leases"}
