"""Emulator conformance, patches and status subresources (apiserver-semantics.md S22-S29).

Inputs: the ``world`` and ``kube`` fixtures (tests/conftest.py). Requests go over HTTP through
kubernetes_asyncio's typed APIs (CustomObjectsApi, CoreV1Api, RbacAuthorizationV1Api,
CoordinationV1Api); error bodies are the raw ``Status`` JSON of ``ApiException.body``.

Every ``test_sNN_*`` asserts what a real kube-apiserver (1.34/1.35) with the project's CRDs answers,
except ``test_s26_*``: server-side apply is deliberately not implemented by the emulator, which answers
415 for ``application/apply-patch+yaml`` (a real server applies it); that test pins the emulator's
choice so the project never starts relying on apply unnoticed.
"""

from __future__ import annotations

import asyncio
import json
from functools import partial
from typing import Any

import pytest
from kubernetes_asyncio import client
from kubernetes_asyncio.client.exceptions import ApiException

from sim.world import World
from tests.e2e.sim import conformance
from tests.e2e.sim.conformance import (
    ARS,
    GROUP,
    MERGE,
    NS,
    SLEEP,
    VERSION,
    default_sa_ready,
    get_ars,
    patch_ars,
    raw_response,
    rv,
)

pytestmark = pytest.mark.both_worlds(on_demand=True)

JSON_PATCH = "application/json-patch+json"
APPLY = "application/apply-patch+yaml"
STALE = "the object has been modified; please apply your changes to the latest version and try again"
ARS_QUALIFIED = f"{ARS}.{GROUP}"
ARS_SPEC = {
    "githubConfigUrl": "https://github.com/example/repo",
    "githubConfigSecret": "github-secret",
    "minRunners": 0,
    "maxRunners": 5,
    "runnerScaleSetLabels": ["linux", "x64"],
}
ars_body = partial(conformance.ars, spec=ARS_SPEC)
create_ars = partial(conformance.create_ars, spec=ARS_SPEC)


# -- helpers ------------------------------------------------------------------------------------------


def status_of(exc: ApiException) -> dict[str, Any]:
    """The Status body of an error; its ``code`` always equals the HTTP status."""
    body: dict[str, Any] = json.loads(exc.body)
    assert body["kind"] == "Status"
    assert body["apiVersion"] == "v1"
    assert body["metadata"] == {}
    assert body["status"] == "Failure"
    assert body["code"] == exc.status
    return body


def sans_managed_fields(obj: dict[str, Any]) -> dict[str, Any]:
    """``obj`` without ``metadata.managedFields`` (a real server adds one entry per manager and
    subresource)."""
    meta = {k: v for k, v in obj["metadata"].items() if k != "managedFields"}
    return {**obj, "metadata": meta}


def pod_body(name: str, *, containers: tuple[str, ...] = ("main",), **meta: Any) -> dict[str, Any]:
    """An unbound pod (scheduled by nobody here), so no kubelet writes its status meanwhile."""
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, **meta},
        "spec": {
            "schedulerName": "other-scheduler",
            "restartPolicy": "Never",
            "containers": [{"name": c, "image": "busybox:1.36", "command": SLEEP} for c in containers],
        },
    }


# -- S22 JSON merge patch ---------------------------------------------------------------------------


async def test_s22_merge_patch_merges_maps_deletes_nulls_replaces_lists(kube: client.ApiClient) -> None:
    custom = client.CustomObjectsApi(kube)
    await create_ars(custom, "merge", labels={"a": "1", "b": "2"}, annotations={"keep": "me"})

    patched = await patch_ars(
        custom,
        "merge",
        {
            "metadata": {"labels": {"b": None, "c": "3"}},
            "spec": {"runnerScaleSetLabels": ["arm64"], "maxRunners": 7, "runnerGroup": None},
        },
    )

    assert patched["metadata"]["labels"] == {"a": "1", "c": "3"}
    assert patched["metadata"]["annotations"] == {"keep": "me"}
    spec = patched["spec"]
    assert spec["runnerScaleSetLabels"] == ["arm64"]  # lists are replaced whole
    assert spec["maxRunners"] == 7
    assert spec["minRunners"] == 0
    assert spec["githubConfigUrl"] == "https://github.com/example/repo"
    assert "runnerGroup" not in spec
    assert await get_ars(custom, "merge") == patched


async def test_s22_merge_patch_resource_version_is_a_precondition(kube: client.ApiClient) -> None:
    custom = client.CustomObjectsApi(kube)
    created = await create_ars(custom, "merge-rv")
    old_rv = created["metadata"]["resourceVersion"]
    await patch_ars(custom, "merge-rv", {"spec": {"maxRunners": 6}})

    with pytest.raises(ApiException) as caught:
        await patch_ars(
            custom, "merge-rv", {"metadata": {"resourceVersion": old_rv}, "spec": {"maxRunners": 9}}
        )

    assert caught.value.status == 409
    assert status_of(caught.value) == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": f'Operation cannot be fulfilled on {ARS_QUALIFIED} "merge-rv": {STALE}',
        "reason": "Conflict",
        "details": {"name": "merge-rv", "group": GROUP, "kind": ARS},
        "code": 409,
    }
    current = await get_ars(custom, "merge-rv")
    assert current["spec"]["maxRunners"] == 6
    # With the current resourceVersion the same patch applies.
    patched = await patch_ars(
        custom,
        "merge-rv",
        {"metadata": {"resourceVersion": current["metadata"]["resourceVersion"]}, "spec": {"maxRunners": 9}},
    )
    assert patched["spec"]["maxRunners"] == 9
    assert rv(patched) > rv(current)


async def test_s22_concurrent_merge_patches_without_rv_never_conflict(kube: client.ApiClient) -> None:
    custom = client.CustomObjectsApi(kube)
    await create_ars(custom, "merge-race")

    results = await asyncio.gather(
        *(patch_ars(custom, "merge-race", {"metadata": {"labels": {f"writer-{i}": "x"}}}) for i in range(20))
    )

    assert len({r["metadata"]["resourceVersion"] for r in results}) == 20
    labels = (await get_ars(custom, "merge-race"))["metadata"]["labels"]
    assert labels == {f"writer-{i}": "x" for i in range(20)}


# -- S23 JSON patch ---------------------------------------------------------------------------------


async def test_s23_json_patch_applies_rfc6902_operations(kube: client.ApiClient) -> None:
    custom = client.CustomObjectsApi(kube)
    await create_ars(custom, "jp", labels={"a": "1"})

    patched = await patch_ars(
        custom,
        "jp",
        [
            {"op": "test", "path": "/spec/minRunners", "value": 0},
            {"op": "replace", "path": "/spec/minRunners", "value": 2},
            {"op": "add", "path": "/metadata/labels/b", "value": "2"},
            {"op": "remove", "path": "/spec/runnerScaleSetLabels/0"},
            {"op": "add", "path": "/spec/runnerScaleSetLabels/-", "value": "gpu"},
        ],
        JSON_PATCH,
    )

    assert patched["spec"]["minRunners"] == 2
    assert patched["spec"]["runnerScaleSetLabels"] == ["x64", "gpu"]
    assert patched["metadata"]["labels"] == {"a": "1", "b": "2"}
    assert patched["metadata"]["generation"] == 2


@pytest.mark.parametrize(
    "ops",
    [
        [{"op": "test", "path": "/spec/minRunners", "value": 3}],
        [{"op": "replace", "path": "/spec/nothing/here", "value": 1}],
        [{"op": "remove", "path": "/metadata/labels/absent"}],
    ],
    ids=["failing-test", "replace-missing-path", "remove-missing-key"],
)
async def test_s23_json_patch_that_does_not_apply_is_422(kube: client.ApiClient, ops: list[Any]) -> None:
    custom = client.CustomObjectsApi(kube)
    created = await create_ars(custom, "jp-bad", labels={"a": "1"})

    with pytest.raises(ApiException) as caught:
        await patch_ars(custom, "jp-bad", ops, JSON_PATCH)

    # Upstream answers NewGenericServerResponse(422, ..., isUnexpectedResponse=false): the json-patch
    # library's own message is not passed on (kubectl shows "The request is invalid").
    assert caught.value.status == 422
    assert status_of(caught.value) == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": "the server rejected our request due to an error in our request",
        "reason": "Invalid",
        "details": {},
        "code": 422,
    }
    assert rv(await get_ars(custom, "jp-bad")) == rv(created)


async def test_s23_json_patch_with_an_object_body_is_400(kube: client.ApiClient) -> None:
    custom = client.CustomObjectsApi(kube)
    await create_ars(custom, "jp-object")

    with pytest.raises(ApiException) as caught:
        await patch_ars(custom, "jp-object", {"spec": {"minRunners": 1}}, JSON_PATCH)

    assert caught.value.status == 400
    assert status_of(caught.value) == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": "error decoding patch: json: cannot unmarshal object into Go value of type "
        "[]handlers.jsonPatchOp",
        "reason": "BadRequest",
        "code": 400,
    }


async def test_s23_json_patch_over_10000_operations_is_413(kube: client.ApiClient) -> None:
    custom = client.CustomObjectsApi(kube)
    await create_ars(custom, "jp-huge")
    ops = [{"op": "test", "path": "/spec/minRunners", "value": 0}] * 10001

    with pytest.raises(ApiException) as caught:
        await patch_ars(custom, "jp-huge", ops, JSON_PATCH)

    assert caught.value.status == 413
    assert status_of(caught.value) == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": "Request entity too large: "
        "The allowed maximum operations in a JSON patch is 10000, got 10001",
        "reason": "RequestEntityTooLarge",
        "code": 413,
    }
    # Exactly the limit is fine.
    patched = await patch_ars(custom, "jp-huge", ops[:10000], JSON_PATCH)
    assert patched["spec"]["minRunners"] == 0


# -- S24 strategic merge patch ----------------------------------------------------------------------


async def test_s24_strategic_merge_patch_on_a_custom_resource_is_415(kube: client.ApiClient) -> None:
    custom = client.CustomObjectsApi(kube)
    await create_ars(custom, "smp")

    with pytest.raises(ApiException) as caught:
        await patch_ars(custom, "smp", {"spec": {"minRunners": 1}}, "application/strategic-merge-patch+json")

    assert caught.value.status == 415
    assert status_of(caught.value) == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": "the body of the request was in an unknown format - accepted media types include: "
        "application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml",
        "reason": "UnsupportedMediaType",
        "code": 415,
    }


async def test_s24_strategic_merge_patch_merges_pod_lists_by_key(kube: client.ApiClient) -> None:
    core = client.CoreV1Api(kube)
    await default_sa_ready(core)
    owner_a = await core.create_namespaced_config_map(NS, {"metadata": {"name": "owner-a"}})
    owner_b = await core.create_namespaced_config_map(NS, {"metadata": {"name": "owner-b"}})
    ref_a = {"apiVersion": "v1", "kind": "ConfigMap", "name": "owner-a", "uid": owner_a.metadata.uid}
    ref_b = {"apiVersion": "v1", "kind": "ConfigMap", "name": "owner-b", "uid": owner_b.metadata.uid}
    await core.create_namespaced_pod(
        NS,
        pod_body(
            "smp-pod",
            containers=("first", "second"),
            finalizers=["example.com/a"],
            ownerReferences=[ref_a],
            labels={"keep": "1", "drop": "1"},
        ),
    )

    # A dict body makes kubernetes_asyncio send application/strategic-merge-patch+json.
    pod = await core.patch_namespaced_pod(
        "smp-pod",
        NS,
        {
            "metadata": {
                "labels": {"drop": None, "new": "1"},
                "finalizers": ["example.com/b"],
                "ownerReferences": [ref_b],
            },
            "spec": {"containers": [{"name": "second", "image": "busybox:1.37"}]},
        },
    )

    assert [(c.name, c.image) for c in pod.spec.containers] == [
        ("first", "busybox:1.36"),
        ("second", "busybox:1.37"),
    ]
    # Merged lists: items the patch adds come first (strategicpatch.normalizeElementOrder).
    assert pod.metadata.finalizers == ["example.com/b", "example.com/a"]
    assert [r.uid for r in pod.metadata.owner_references] == [owner_b.metadata.uid, owner_a.metadata.uid]
    assert pod.metadata.labels == {"keep": "1", "new": "1"}

    pod = await core.patch_namespaced_pod(
        "smp-pod",
        NS,
        {
            "metadata": {
                "$deleteFromPrimitiveList/finalizers": ["example.com/a"],
                "ownerReferences": [{"uid": owner_a.metadata.uid, "$patch": "delete"}],
                "labels": {"$patch": "replace", "only": "this"},
            }
        },
    )

    assert pod.metadata.finalizers == ["example.com/b"]
    assert [r.uid for r in pod.metadata.owner_references] == [owner_b.metadata.uid]
    assert pod.metadata.labels == {"only": "this"}


async def test_s24_strategic_merge_patch_replaces_untagged_lists(kube: client.ApiClient) -> None:
    rbac = client.RbacAuthorizationV1Api(kube)
    core = client.CoreV1Api(kube)
    rule_pods = {"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list"]}
    rule_secrets = {"apiGroups": [""], "resources": ["secrets"], "verbs": ["get"]}
    await rbac.create_namespaced_role(NS, {"metadata": {"name": "smp-role"}, "rules": [rule_pods]})
    await core.create_namespaced_service_account(
        NS, {"metadata": {"name": "smp-sa"}, "secrets": [{"name": "one"}, {"name": "two"}]}
    )

    role = await rbac.patch_namespaced_role("smp-role", NS, {"rules": [rule_secrets]})
    sa = await core.patch_namespaced_service_account(
        "smp-sa", NS, {"secrets": [{"name": "three"}, {"name": "one", "$patch": "delete"}]}
    )

    assert [r.resources for r in role.rules] == [["secrets"]]  # PolicyRule lists carry no strategy
    assert [s.name for s in sa.secrets] == ["three", "two"]  # ServiceAccount.secrets merge by name


# -- S25 client default patch type ------------------------------------------------------------------


async def test_s25_client_default_patch_types(kube: client.ApiClient) -> None:
    custom = client.CustomObjectsApi(kube)
    core = client.CoreV1Api(kube)
    await create_ars(custom, "default-type")
    await core.create_namespaced_secret(
        NS, {"metadata": {"name": "default-type", "finalizers": ["example.com/a"]}, "data": {}}
    )

    # CustomObjectsApi + dict -> application/json-patch+json -> the server cannot decode an object.
    with pytest.raises(ApiException) as caught:
        await custom.patch_namespaced_custom_object(
            GROUP, VERSION, NS, ARS, "default-type", {"spec": {"minRunners": 1}}
        )
    assert caught.value.status == 400
    assert status_of(caught.value)["message"] == (
        "error decoding patch: json: cannot unmarshal object into Go value of type []handlers.jsonPatchOp"
    )

    # CustomObjectsApi + list -> json-patch, applied.
    patched = await custom.patch_namespaced_custom_object(
        GROUP, VERSION, NS, ARS, "default-type", [{"op": "replace", "path": "/spec/minRunners", "value": 1}]
    )
    assert patched["spec"]["minRunners"] == 1

    # The project's way: a dict with an explicit merge-patch content type.
    patched = await patch_ars(custom, "default-type", {"spec": {"minRunners": 2}})
    assert patched["spec"]["minRunners"] == 2

    # Core API + dict -> strategic merge patch: finalizers are a merged list (a merge patch would replace).
    secret = await core.patch_namespaced_secret(
        "default-type", NS, {"metadata": {"finalizers": ["example.com/b"]}}
    )
    assert secret.metadata.finalizers == ["example.com/b", "example.com/a"]

    # Core API + list -> json-patch.
    secret = await core.patch_namespaced_secret(
        "default-type", NS, [{"op": "remove", "path": "/metadata/finalizers/1"}]
    )
    assert secret.metadata.finalizers == ["example.com/b"]

    # Core API + dict + explicit merge-patch content type -> the list is replaced.
    secret = await core.patch_namespaced_secret(
        "default-type", NS, {"metadata": {"finalizers": ["example.com/c"]}}, _content_type=MERGE
    )
    assert secret.metadata.finalizers == ["example.com/c"]


# -- S26 server-side apply (the details: test_server_side_apply.py) ----------------------------------


async def test_s26_apply_patch_updates_and_creates(kube: client.ApiClient, world: World) -> None:
    """``application/apply-patch+yaml`` with a field manager and ``force``: an existing object is patched
    (200), a missing one is created (201, which kubernetes_asyncio's patch methods answer as the body), and
    both record the manager's ``Apply`` entry in ``managedFields``."""
    custom = client.CustomObjectsApi(kube)
    created = await create_ars(custom, "applied")
    body = ars_body("applied")
    body["spec"]["minRunners"] = 3

    applied = await custom.patch_namespaced_custom_object(
        GROUP, VERSION, NS, ARS, "applied", body, field_manager="conformance", force=True, _content_type=APPLY
    )
    assert applied["spec"]["minRunners"] == 3
    assert rv(applied) > rv(created)
    managers = {(e["manager"], e["operation"]) for e in applied["metadata"]["managedFields"]}
    assert ("conformance", "Apply") in managers

    absent = {**body, "metadata": {"name": "never-created"}}
    async with raw_response(
        world,
        "PATCH",
        f"/apis/{GROUP}/{VERSION}/namespaces/{NS}/{ARS}/never-created?fieldManager=conformance&force=true",
        absent,
        APPLY,
    ) as resp:
        assert resp.status == 201
        made = await resp.json()
    assert made["spec"]["minRunners"] == 3
    assert await get_ars(custom, "never-created") == made


# -- S27 patch of a missing object ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "content_type"),
    [
        ({"spec": {"minRunners": 1}}, MERGE),
        ([{"op": "replace", "path": "/spec/minRunners", "value": 1}], JSON_PATCH),
        # Not even decoded: the object is looked up first.
        ([{"op": "test", "path": "/nowhere", "value": 1}], JSON_PATCH),
    ],
    ids=["merge", "json-patch", "json-patch-not-applicable"],
)
async def test_s27_patch_of_a_missing_custom_resource_is_404(
    kube: client.ApiClient, body: Any, content_type: str
) -> None:
    custom = client.CustomObjectsApi(kube)

    with pytest.raises(ApiException) as caught:
        await patch_ars(custom, "absent", body, content_type)

    assert caught.value.status == 404
    assert status_of(caught.value) == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": 'autoscalingrunnersets.actions.github.com "absent" not found',
        "reason": "NotFound",
        "details": {"name": "absent", "group": GROUP, "kind": ARS},
        "code": 404,
    }


async def test_s27_patch_of_a_missing_builtin_object_is_404(kube: client.ApiClient) -> None:
    core = client.CoreV1Api(kube)
    coordination = client.CoordinationV1Api(kube)

    with pytest.raises(ApiException) as pod:
        await core.patch_namespaced_pod("absent", NS, {"metadata": {"labels": {"a": "b"}}})
    # Leases are created by PUT (S21), but never by a non-apply patch.
    with pytest.raises(ApiException) as lease:
        await coordination.patch_namespaced_lease(
            "absent", NS, {"spec": {"holderIdentity": "me"}}, _content_type=MERGE
        )

    assert pod.value.status == 404
    assert status_of(pod.value) == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": 'pods "absent" not found',
        "reason": "NotFound",
        "details": {"name": "absent", "kind": "pods"},
        "code": 404,
    }
    assert lease.value.status == 404
    assert status_of(lease.value)["message"] == 'leases.coordination.k8s.io "absent" not found'


# -- S28 custom resource status subresource ---------------------------------------------------------


async def test_s28_main_resource_writes_keep_the_stored_status(kube: client.ApiClient) -> None:
    custom = client.CustomObjectsApi(kube)
    await create_ars(custom, "iso-main")
    with_status = await custom.patch_namespaced_custom_object_status(
        GROUP, VERSION, NS, ARS, "iso-main", {"status": {"currentRunners": 1}}, _content_type=MERGE
    )

    # A status-only change through the main resource is a no-op: same object, same resourceVersion.
    put = await custom.replace_namespaced_custom_object(
        GROUP, VERSION, NS, ARS, "iso-main", {**with_status, "status": {"currentRunners": 9}}
    )
    assert put == with_status
    patched = await patch_ars(custom, "iso-main", {"status": {"currentRunners": 9}})
    assert patched == with_status

    # A spec change alongside: the spec applies, the status does not.
    patched = await patch_ars(
        custom, "iso-main", {"spec": {"maxRunners": 8}, "status": {"currentRunners": 9, "phase": "X"}}
    )
    assert patched["spec"]["maxRunners"] == 8
    assert patched["status"] == {"currentRunners": 1}
    assert patched["metadata"]["generation"] == 2

    # Dropping status from a PUT body does not clear it either.
    body = {k: v for k, v in patched.items() if k != "status"}
    body["spec"] = {**body["spec"], "maxRunners": 4}
    put = await custom.replace_namespaced_custom_object(GROUP, VERSION, NS, ARS, "iso-main", body)
    assert put["status"] == {"currentRunners": 1}
    assert put["spec"]["maxRunners"] == 4


async def test_s28_status_writes_change_only_the_status(kube: client.ApiClient) -> None:
    custom = client.CustomObjectsApi(kube)
    core = client.CoreV1Api(kube)
    owner = await core.create_namespaced_config_map(NS, {"metadata": {"name": "iso-owner"}})
    created = await create_ars(custom, "iso-status", labels={"a": "1"})

    put = await custom.replace_namespaced_custom_object_status(
        GROUP,
        VERSION,
        NS,
        ARS,
        "iso-status",
        {
            **created,
            "metadata": {
                **created["metadata"],
                "labels": {"b": "2"},
                "annotations": {"x": "y"},
                "finalizers": ["example.com/f"],
                "ownerReferences": [
                    {"apiVersion": "v1", "kind": "ConfigMap", "name": "iso-owner", "uid": owner.metadata.uid}
                ],
            },
            "spec": {**created["spec"], "minRunners": 4},
            "status": {"currentRunners": 2, "phase": "Running"},
        },
    )

    expected = {
        **created,
        "metadata": {**created["metadata"], "resourceVersion": put["metadata"]["resourceVersion"]},
        "status": {"currentRunners": 2, "phase": "Running"},
    }
    # The whole object comes back; only the status changed.
    assert sans_managed_fields(put) == sans_managed_fields(expected)
    assert rv(put) > rv(created)

    patched = await custom.patch_namespaced_custom_object_status(
        GROUP,
        VERSION,
        NS,
        ARS,
        "iso-status",
        {
            "metadata": {"labels": {"a": None, "c": "3"}, "finalizers": ["example.com/g"]},
            "spec": {"maxRunners": 1},
            "status": {"phase": "Pending"},
        },
        _content_type=MERGE,
    )
    assert patched["status"] == {"currentRunners": 2, "phase": "Pending"}
    assert patched["metadata"]["labels"] == {"a": "1"}
    assert "finalizers" not in patched["metadata"]
    assert patched["spec"] == created["spec"]
    assert patched["metadata"]["generation"] == 1
    assert await get_ars(custom, "iso-status") == patched


async def test_s28_both_endpoints_enforce_resource_version(kube: client.ApiClient) -> None:
    custom = client.CustomObjectsApi(kube)
    created = await create_ars(custom, "iso-rv")
    await patch_ars(custom, "iso-rv", {"metadata": {"labels": {"bump": "1"}}})
    conflict = {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": f'Operation cannot be fulfilled on {ARS_QUALIFIED} "iso-rv": {STALE}',
        "reason": "Conflict",
        "details": {"name": "iso-rv", "group": GROUP, "kind": ARS},
        "code": 409,
    }
    stale = created["metadata"]["resourceVersion"]

    attempts = [
        custom.replace_namespaced_custom_object_status(
            GROUP, VERSION, NS, ARS, "iso-rv", {**created, "status": {"currentRunners": 1}}
        ),
        custom.patch_namespaced_custom_object_status(
            GROUP,
            VERSION,
            NS,
            ARS,
            "iso-rv",
            {"metadata": {"resourceVersion": stale}, "status": {"currentRunners": 1}},
            _content_type=MERGE,
        ),
        custom.replace_namespaced_custom_object(GROUP, VERSION, NS, ARS, "iso-rv", created),
    ]
    for attempt in attempts:
        with pytest.raises(ApiException) as caught:
            await attempt
        assert caught.value.status == 409
        assert status_of(caught.value) == conflict


# -- S29 pod status subresource ---------------------------------------------------------------------


async def test_s29_pod_status_writes_keep_spec_and_owners_but_apply_labels(kube: client.ApiClient) -> None:
    core = client.CoreV1Api(kube)
    await default_sa_ready(core)
    owner = await core.create_namespaced_config_map(NS, {"metadata": {"name": "pod-owner"}})
    ref = {"apiVersion": "v1", "kind": "ConfigMap", "name": "pod-owner", "uid": owner.metadata.uid}
    created = await core.create_namespaced_pod(
        NS, pod_body("status-pod", labels={"a": "1"}, ownerReferences=[ref])
    )

    pod = await core.patch_namespaced_pod_status(
        "status-pod",
        NS,
        {
            "metadata": {
                "labels": {"b": "2"},
                "annotations": {"note": "via-status"},
                "finalizers": ["example.com/status"],
                "ownerReferences": None,
            },
            "spec": {"activeDeadlineSeconds": 5},
            "status": {"conditions": [{"type": "example.com/Gate", "status": "True"}]},
        },
    )

    # The legacy pod status strategy resets only spec, ownerReferences and deletionTimestamp.
    assert pod.metadata.labels == {"a": "1", "b": "2"}
    assert pod.metadata.annotations == {"note": "via-status"}
    assert pod.metadata.finalizers == ["example.com/status"]
    assert [r.uid for r in pod.metadata.owner_references] == [owner.metadata.uid]
    assert pod.spec.active_deadline_seconds is None
    assert pod.spec == created.spec
    assert ("example.com/Gate", "True") in [(c.type, c.status) for c in pod.status.conditions]
    assert pod.metadata.generation == created.metadata.generation


async def test_s29_main_pod_writes_keep_the_stored_status(kube: client.ApiClient) -> None:
    core = client.CoreV1Api(kube)
    await default_sa_ready(core)
    created = await core.create_namespaced_pod(NS, pod_body("main-pod"))
    assert created.status.phase == "Pending"

    pod = await core.patch_namespaced_pod(
        "main-pod",
        NS,
        {"metadata": {"labels": {"x": "1"}}, "status": {"phase": "Failed", "message": "nope"}},
    )

    assert pod.metadata.labels == {"x": "1"}
    assert pod.status == created.status

    # A status-only change through the main resource is a no-op.
    again = await core.patch_namespaced_pod("main-pod", NS, {"status": {"phase": "Succeeded"}})
    assert again.metadata.resource_version == pod.metadata.resource_version
