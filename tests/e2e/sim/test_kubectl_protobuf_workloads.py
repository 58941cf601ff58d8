"""kubectl's create generators for Deployments, Services and PodDisruptionBudgets against the emulated
cluster, and the other served built-ins (ReplicaSets, StatefulSets, ControllerRevisions, Endpoints,
EndpointSlices, claims, volumes, storage classes, Nodes) both ways in protobuf.

Inputs: an emulated cluster, a kubeconfig for it and the pinned ``kubectl``; raw HTTP for protobuf bodies
and protobuf-asked GETs. Outputs: the objects kubectl created, read back with ``kubectl get -o json``, and
each kind's object read in protobuf and in JSON, which must agree.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from sim import protobuf
from sim.world import World
from tests.helpers import eventually
from tests.kubectl import get_json, ok, requires_kubectl


@pytest.fixture
async def world(tmp_path: Path) -> AsyncIterator[World]:
    async with World(seed=1, crd_dir=None, namespaces=("default",)) as w:
        yield w


@requires_kubectl
async def test_kubectl_creates_a_deployment_a_service_and_a_pdb_in_protobuf(
    world: World, tmp_path: Path
) -> None:
    kubeconfig = world.write_kubeconfig(tmp_path / "kubeconfig")
    await ok(kubeconfig, "create", "deployment", "web", "--image=nginx", "--port=8080")
    await ok(kubeconfig, "create", "service", "clusterip", "web", "--tcp=80:8080")
    await ok(kubeconfig, "create", "pdb", "p", "--selector=app=x", "--min-available=1")

    deployment = await get_json(kubeconfig, "deployment", "web")
    assert deployment["spec"]["selector"] == {"matchLabels": {"app": "web"}}
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    assert (container["name"], container["image"]) == ("nginx", "nginx")
    assert container["ports"] == [{"containerPort": 8080, "protocol": "TCP"}]
    assert deployment["spec"]["strategy"]["rollingUpdate"] == {"maxSurge": "25%", "maxUnavailable": "25%"}
    service = await get_json(kubeconfig, "service", "web")
    assert service["spec"]["type"] == "ClusterIP"
    assert service["spec"]["selector"] == {"app": "web"}
    port = {"name": "80-8080", "port": 80, "protocol": "TCP", "targetPort": 8080}
    assert service["spec"]["ports"] == [port]
    assert service["spec"]["clusterIP"].startswith("10.96.")
    pdb = await get_json(kubeconfig, "pdb", "p")
    assert pdb["spec"] == {"minAvailable": 1, "selector": {"matchLabels": {"app": "x"}}}

    created = [r for r in world.server.requests if r.verb == "create"]
    assert [(r.content_type, r.status) for r in created] == [(protobuf.MEDIA_TYPE, 201)] * 3

    async def rolled_out() -> bool:
        status = (await get_json(kubeconfig, "deployment", "web")).get("status", {})
        return status.get("availableReplicas") == 1

    await eventually(rolled_out, what="deployment web available")


async def _request(world: World, method: str, path: str, **kw: Any) -> tuple[int, str, bytes]:
    async with aiohttp.ClientSession() as session, session.request(method, world.url + path, **kw) as resp:
        return resp.status, resp.content_type, await resp.read()


_TEMPLATE = {
    "metadata": {"labels": {"app": "a"}},
    "spec": {"containers": [{"name": "c", "image": "busybox:1.36", "command": ["sleep", "3600"]}]},
}
_OBJECTS: list[tuple[str, dict[str, Any]]] = [
    (
        "/apis/apps/v1/namespaces/default/replicasets",
        {
            "apiVersion": "apps/v1",
            "kind": "ReplicaSet",
            "metadata": {"name": "rs"},
            "spec": {"replicas": 0, "selector": {"matchLabels": {"app": "a"}}, "template": _TEMPLATE},
        },
    ),
    (
        "/apis/apps/v1/namespaces/default/statefulsets",
        {
            "apiVersion": "apps/v1",
            "kind": "StatefulSet",
            "metadata": {"name": "db"},
            "spec": {
                "replicas": 0,
                "serviceName": "db",
                "selector": {"matchLabels": {"app": "a"}},
                "template": _TEMPLATE,
                "volumeClaimTemplates": [
                    {
                        "metadata": {"name": "data"},
                        "spec": {
                            "accessModes": ["ReadWriteOnce"],
                            "resources": {"requests": {"storage": "1Gi"}},
                        },
                    }
                ],
            },
        },
    ),
    (
        "/apis/apps/v1/namespaces/default/controllerrevisions",
        {
            "apiVersion": "apps/v1",
            "kind": "ControllerRevision",
            "metadata": {"name": "rev-1"},
            "data": {"spec": {"template": {"metadata": {"labels": {"app": "a"}}}}},
            "revision": 1,
        },
    ),
    (
        "/api/v1/namespaces/default/endpoints",
        {
            "apiVersion": "v1",
            "kind": "Endpoints",
            "metadata": {"name": "ep"},
            "subsets": [{"addresses": [{"ip": "10.0.0.1"}], "ports": [{"name": "http", "port": 80}]}],
        },
    ),
    (
        "/apis/discovery.k8s.io/v1/namespaces/default/endpointslices",
        {
            "apiVersion": "discovery.k8s.io/v1",
            "kind": "EndpointSlice",
            "metadata": {"name": "ep-1"},
            "addressType": "IPv4",
            "endpoints": [{"addresses": ["10.0.0.1"], "conditions": {"ready": True}}],
            "ports": [{"name": "http", "port": 80, "protocol": "TCP"}],
        },
    ),
    (
        "/api/v1/namespaces/default/persistentvolumeclaims",
        {
            "apiVersion": "v1",
            "kind": "PersistentVolumeClaim",
            "metadata": {"name": "claim"},
            "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
        },
    ),
    (
        "/api/v1/persistentvolumes",
        {
            "apiVersion": "v1",
            "kind": "PersistentVolume",
            "metadata": {"name": "vol"},
            "spec": {
                "capacity": {"storage": "2Gi"},
                "accessModes": ["ReadWriteOnce"],
                "hostPath": {"path": "/tmp/vol"},
                "persistentVolumeReclaimPolicy": "Retain",
            },
        },
    ),
    (
        "/apis/storage.k8s.io/v1/storageclasses",
        {
            "apiVersion": "storage.k8s.io/v1",
            "kind": "StorageClass",
            "metadata": {"name": "fast"},
            "provisioner": "example.com/fast",
            "parameters": {"tier": "1"},
            "allowVolumeExpansion": True,
        },
    ),
]


def _holds(got: Any, sent: Any) -> bool:
    """Whether ``got`` has everything ``sent`` had (the server adds defaults and metadata)."""
    if isinstance(sent, dict):
        return isinstance(got, dict) and all(k in got and _holds(got[k], v) for k, v in sent.items())
    if isinstance(sent, list):
        return isinstance(got, list) and len(got) == len(sent) and all(map(_holds, got, sent))
    return bool(got == sent)


@pytest.mark.parametrize(("path", "obj"), _OBJECTS, ids=[obj["kind"] for _, obj in _OBJECTS])
async def test_built_in_kinds_are_created_and_answered_in_protobuf(
    world: World, path: str, obj: dict[str, Any]
) -> None:
    headers = {"Content-Type": protobuf.MEDIA_TYPE, "Accept": protobuf.MEDIA_TYPE}
    status, content_type, body = await _request(
        world, "POST", path, data=protobuf.encode(obj), headers=headers
    )
    assert (status, content_type) == (201, protobuf.MEDIA_TYPE), body
    created = protobuf.decode(body)
    assert _holds(created, obj), created

    item = f"{path}/{obj['metadata']['name']}"
    _, _, as_json = await _request(world, "GET", item, headers={"Accept": "application/json"})
    status, content_type, as_protobuf = await _request(
        world, "GET", item, headers={"Accept": protobuf.MEDIA_TYPE + ", application/json"}
    )
    assert (status, content_type) == (200, protobuf.MEDIA_TYPE)
    assert protobuf.decode(as_protobuf) == json.loads(as_json)
