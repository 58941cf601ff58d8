"""DELETE and DELETECOLLECTION with ``dryRun=All``: answered as the delete would be, nothing stored.

Inputs: the ``world`` and ``kube`` fixtures (tests/conftest.py); Secrets, ConfigMaps, Pods (one bound to a
node no kubelet serves, so its grace period stays), AutoscalingRunnerSets with a finalizer and
Namespaces; the dry run asked in the query (``?dryRun=All``, what kubernetes_asyncio's ``dry_run`` sends)
and in a ``DeleteOptions`` body (``dryRun: ["All"]``), and with Debian's ``kubectl delete
--dry-run=server``. Outputs: each answer is what the real delete answers (a Status, the object, or the
object with ``deletionTimestamp``, finalizers added by the propagation policy, a Terminating phase), while
every object reads back unchanged at its resourceVersion and the cluster's revision does not move (no
write, so no watch event); preconditions, a missing object and bad options are refused as on a real
delete.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from kubernetes_asyncio import client

from sim.world import World
from tests.e2e.sim.conformance import (
    ARS,
    GROUP,
    NS,
    VERSION,
    create_ars,
    error_status,
    get_ars,
    raw,
)
from tests.kubectl import ok, requires_kubectl

HOLD = "example.com/hold"
DRY = {"dryRun": "All"}


async def delete_raw(world: World, path: str, body: Any = None, **params: str) -> tuple[int, Any]:
    return await raw(world, "DELETE", path, body, **params)


async def test_a_secret_dry_run_delete_answers_the_status_and_keeps_it(
    world: World, kube: client.ApiClient
) -> None:
    core = client.CoreV1Api(kube)
    created = await core.create_namespaced_secret(
        NS, {"metadata": {"name": "kept"}, "stringData": {"k": "v"}}
    )
    revision = world.revision

    code, body = await delete_raw(world, f"/api/v1/namespaces/{NS}/secrets/kept", **DRY)

    assert code == 200
    assert body == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Success",
        "details": {"name": "kept", "kind": "secrets", "uid": created.metadata.uid},
    }
    after = await core.read_namespaced_secret("kept", NS)
    assert after.metadata.resource_version == created.metadata.resource_version
    assert after.metadata.deletion_timestamp is None
    assert world.revision == revision


async def test_a_pod_dry_run_delete_answers_its_grace_period_and_keeps_it(
    world: World, kube: client.ApiClient
) -> None:
    core = client.CoreV1Api(kube)
    pod = {
        "metadata": {"name": "graceful"},
        "spec": {
            "nodeName": "unserved-node",
            "terminationGracePeriodSeconds": 45,
            "containers": [{"name": "main", "image": "busybox:1.36"}],
        },
    }
    created = await core.create_namespaced_pod(NS, pod)
    revision = world.revision

    answered = await core.delete_namespaced_pod("graceful", NS, dry_run="All")

    assert answered.metadata.deletion_timestamp is not None
    assert answered.metadata.deletion_grace_period_seconds == 45
    assert answered.metadata.generation == created.metadata.generation + 1
    assert answered.metadata.resource_version == created.metadata.resource_version
    after = await core.read_namespaced_pod("graceful", NS)
    assert after.metadata.deletion_timestamp is None
    assert after.metadata.resource_version == created.metadata.resource_version
    assert world.revision == revision


async def test_an_options_body_with_dry_run_answers_the_finalizers_and_keeps_the_object(
    world: World, kube: client.ApiClient
) -> None:
    custom = client.CustomObjectsApi(kube)
    created = await create_ars(custom, "held", finalizers=[HOLD])
    revision = world.revision
    path = f"/apis/{GROUP}/{VERSION}/namespaces/{NS}/{ARS}/held"

    code, body = await delete_raw(world, path, {"dryRun": ["All"], "propagationPolicy": "Foreground"})

    assert code == 200
    assert body["metadata"]["deletionTimestamp"]
    assert body["metadata"]["finalizers"] == [HOLD, "foregroundDeletion"]
    assert body["metadata"]["generation"] == created["metadata"]["generation"] + 1
    after = await get_ars(custom, "held")
    assert after == created
    assert world.revision == revision


async def test_a_dry_run_delete_without_finalizers_answers_success_and_keeps_the_object(
    world: World, kube: client.ApiClient
) -> None:
    custom = client.CustomObjectsApi(kube)
    created = await create_ars(custom, "plain")
    revision = world.revision

    answered = await custom.delete_namespaced_custom_object(GROUP, VERSION, NS, ARS, "plain", dry_run="All")

    assert answered["status"] == "Success"
    assert answered["details"]["uid"] == created["metadata"]["uid"]
    assert await get_ars(custom, "plain") == created
    assert world.revision == revision


async def test_a_namespace_dry_run_delete_answers_terminating_and_keeps_it_active(
    world: World, kube: client.ApiClient
) -> None:
    core = client.CoreV1Api(kube)
    await core.create_namespace({"metadata": {"name": "dry"}})
    revision = world.revision

    code, body = await delete_raw(
        world, "/api/v1/namespaces/dry", {"kind": "DeleteOptions", "dryRun": ["All"]}
    )

    assert code == 200
    assert body["status"]["phase"] == "Terminating"
    assert body["metadata"]["deletionTimestamp"]
    after = await core.read_namespace("dry")
    assert after.status.phase == "Active"
    assert after.metadata.deletion_timestamp is None
    assert world.revision == revision


async def test_a_dry_run_delete_collection_lists_what_it_would_delete_and_keeps_it(
    world: World, kube: client.ApiClient
) -> None:
    core = client.CoreV1Api(kube)
    for name in ("one", "two"):
        await core.create_namespaced_config_map(NS, {"metadata": {"name": name, "labels": {"batch": "x"}}})
    await create_ars(client.CustomObjectsApi(kube), "held-in-collection", finalizers=[HOLD])
    revision = world.revision

    code, body = await delete_raw(
        world, f"/api/v1/namespaces/{NS}/configmaps", labelSelector="batch=x", **DRY
    )
    assert code == 200
    assert body["kind"] == "ConfigMapList"
    code, held = await delete_raw(world, f"/apis/{GROUP}/{VERSION}/namespaces/{NS}/{ARS}", **DRY)
    assert code == 200
    assert [i["metadata"]["name"] for i in held["items"]] == ["held-in-collection"]
    assert held["items"][0]["metadata"]["deletionTimestamp"]

    listed = await core.list_namespaced_config_map(NS, label_selector="batch=x")
    assert sorted(c.metadata.name for c in listed.items) == ["one", "two"]
    assert (await get_ars(client.CustomObjectsApi(kube), "held-in-collection"))["metadata"].get(
        "deletionTimestamp"
    ) is None
    assert world.revision == revision


async def test_a_dry_run_delete_is_checked_as_a_real_one(world: World, kube: client.ApiClient) -> None:
    core = client.CoreV1Api(kube)
    created = await core.create_namespaced_config_map(NS, {"metadata": {"name": "checked"}})
    uid = created.metadata.uid

    stale = await error_status(
        core.delete_namespaced_config_map(
            "checked", NS, dry_run="All", body={"preconditions": {"uid": "other"}, "dryRun": ["All"]}
        )
    )
    assert stale["code"] == 409
    assert stale["message"] == (
        'Operation cannot be fulfilled on ConfigMap "checked": the UID in the precondition (other) does '
        f"not match the UID in record ({uid}). The object might have been deleted and then recreated"
    )
    missing = await error_status(core.delete_namespaced_config_map("absent", NS, dry_run="All"))
    assert missing["code"] == 404


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (
            {"dryRun": ["Some"]},
            'DeleteOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: []string{"Some"}: '
            'supported values: "All"',
        ),
        (
            {"propagationPolicy": "Sideways"},
            'DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Unsupported value: "Sideways": '
            'supported values: "Foreground", "Background", "Orphan", "nil"',
        ),
        (
            {"propagationPolicy": "Orphan", "orphanDependents": True},
            'DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Invalid value: "Orphan": '
            "orphanDependents and deletionPropagation cannot be both set",
        ),
    ],
    ids=["dry-run-value", "policy", "both"],
)
async def test_bad_delete_options_are_invalid_and_delete_nothing(
    world: World, kube: client.ApiClient, options: dict[str, Any], message: str
) -> None:
    core = client.CoreV1Api(kube)
    await core.create_namespaced_config_map(NS, {"metadata": {"name": "stays"}})

    code, body = await delete_raw(world, f"/api/v1/namespaces/{NS}/configmaps/stays", options)

    assert (code, body["reason"], body["message"]) == (422, "Invalid", message)
    assert body["details"]["group"] == "meta.k8s.io"
    assert body["details"]["kind"] == "DeleteOptions"
    await core.read_namespaced_config_map("stays", NS)


async def test_a_bad_dry_run_query_value_is_invalid(world: World, kube: client.ApiClient) -> None:
    core = client.CoreV1Api(kube)
    await core.create_namespaced_config_map(NS, {"metadata": {"name": "stays"}})

    code, body = await delete_raw(world, f"/api/v1/namespaces/{NS}/configmaps/stays", dryRun="Yes")

    assert code == 422
    assert 'dryRun: Unsupported value: []string{"Yes"}' in body["message"]
    await core.read_namespaced_config_map("stays", NS)


@requires_kubectl
async def test_kubectl_delete_dry_run_server_deletes_nothing(
    world: World, kube: client.ApiClient, kubeconfig: Path
) -> None:
    core = client.CoreV1Api(kube)
    await core.create_namespaced_config_map(NS, {"metadata": {"name": "tried"}})
    await core.create_namespace({"metadata": {"name": "tried-ns"}})
    revision = world.revision

    out = await ok(kubeconfig, "delete", "configmap", "tried", "--dry-run=server")
    # kubectl 1.34 names the namespace ("deleted from default namespace"); older ones did not.
    assert out.strip() in (
        'configmap "tried" deleted from default namespace (server dry run)',
        'configmap "tried" deleted (server dry run)',
    )
    out = await ok(kubeconfig, "delete", "namespace", "tried-ns", "--dry-run=server")
    assert out.strip() == 'namespace "tried-ns" deleted (server dry run)'

    await core.read_namespaced_config_map("tried", NS)
    assert (await core.read_namespace("tried-ns")).status.phase == "Active"
    assert world.revision == revision
    deletes = [r for r in world.requests if r.method == "DELETE"]
    assert [(r.verb, r.status) for r in deletes] == [("delete", 200), ("delete", 200)]
