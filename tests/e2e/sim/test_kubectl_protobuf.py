"""kubectl's create generators and ``kubectl debug --copy-to`` against the emulated cluster: protobuf bodies.

Inputs: an emulated cluster, a kubeconfig for it and Debian's ``kubectl``; raw HTTP for protobuf bodies and
protobuf-asked GETs. Outputs: the objects kubectl created, read back with ``kubectl get -o json``; a
running pod, an Event and a Lease read in protobuf and in JSON, which must agree; a protobuf ``Status``
404 for a missing object.
"""

from __future__ import annotations

import base64
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
async def test_kubectl_create_generators_send_protobuf_the_emulator_reads(
    world: World, tmp_path: Path
) -> None:
    kubeconfig = world.write_kubeconfig(tmp_path / "kubeconfig")
    await ok(kubeconfig, "create", "namespace", "team-a")
    await ok(
        kubeconfig, "create", "secret", "generic", "creds", "-n", "team-a", "--from-literal=token=s3cr3t"
    )
    await ok(kubeconfig, "create", "configmap", "settings", "-n", "team-a", "--from-literal=mode=fast")
    await ok(kubeconfig, "create", "serviceaccount", "robot", "-n", "team-a")

    namespace = await get_json(kubeconfig, "namespace", "team-a")
    assert namespace["status"]["phase"] == "Active"
    secret = await get_json(kubeconfig, "secret", "creds", "-n", "team-a")
    assert base64.b64decode(secret["data"]["token"]) == b"s3cr3t"
    assert secret["type"] == "Opaque"
    configmap = await get_json(kubeconfig, "configmap", "settings", "-n", "team-a")
    assert configmap["data"] == {"mode": "fast"}
    account = await get_json(kubeconfig, "serviceaccount", "robot", "-n", "team-a")
    assert account["metadata"]["namespace"] == "team-a"
    created = [r for r in world.server.requests if r.verb == "create"]
    assert {r.content_type for r in created} == {protobuf.MEDIA_TYPE}
    assert {r.status for r in created} == {201}


async def test_a_protobuf_asked_get_of_a_missing_object_answers_a_protobuf_status(world: World) -> None:
    headers = {"Accept": protobuf.MEDIA_TYPE + ", application/json"}
    async with (
        aiohttp.ClientSession() as session,
        session.get(world.url + "/api/v1/namespaces/default/secrets/absent", headers=headers) as resp,
    ):
        body = await resp.read()
        assert resp.status == 404
        assert resp.content_type == protobuf.MEDIA_TYPE
    status = protobuf.decode(body)
    assert status["kind"] == "Status"
    assert status["code"] == 404
    assert status["reason"] == "NotFound"
    assert status["details"] == {"name": "absent", "kind": "secrets"}


@requires_kubectl
async def test_kubectl_debug_copies_a_pod_in_protobuf_both_ways(world: World, tmp_path: Path) -> None:
    """``kubectl run`` sends JSON (kubectl 1.32); ``kubectl debug --copy-to`` creates the copy through the
    typed client: a protobuf Pod body, and kubectl decodes the protobuf answer."""
    kubeconfig = world.write_kubeconfig(tmp_path / "kubeconfig")
    await ok(
        kubeconfig,
        "run",
        "runner",
        "--image=busybox:1.36",
        "--restart=Never",
        "--labels=app=runner",
        "--env=MODE=fast",
        "--port=8080",
        "--",
        "sleep",
        "3600",
    )
    await ok(
        kubeconfig,
        "debug",
        "runner",
        "--image=busybox:1.36",
        "--copy-to=runner-debug",
        "--container=debugger",
        "--",
        "sleep",
        "100",
    )
    copy = await get_json(kubeconfig, "pod", "runner-debug")
    runner, debugger = copy["spec"]["containers"]
    assert (runner["image"], runner["args"]) == ("busybox:1.36", ["sleep", "3600"])
    assert runner["env"] == [{"name": "MODE", "value": "fast"}]
    assert runner["ports"] == [{"containerPort": 8080, "protocol": "TCP"}]
    assert (debugger["name"], debugger["image"], debugger["command"]) == (
        "debugger",
        "busybox:1.36",
        ["sleep", "100"],
    )
    assert copy["spec"]["restartPolicy"] == "Never"
    created = [r for r in world.server.requests if r.verb == "create" and r.path.endswith("/pods")]
    assert [(r.content_type, r.status) for r in created] == [
        ("application/json", 201),
        (protobuf.MEDIA_TYPE, 201),
    ]


async def _get(world: World, path: str, accept: str) -> tuple[str, bytes]:
    async with (
        aiohttp.ClientSession() as session,
        session.get(world.url + path, headers={"Accept": accept}) as resp,
    ):
        assert resp.status == 200
        return resp.content_type, await resp.read()


async def test_a_running_pod_read_in_protobuf_decodes_to_its_json_form(world: World) -> None:
    """The pod as the kubelet left it (status, conditions, container states), both ways."""
    body = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "labels": {"app": "x"}},
        "spec": {
            "containers": [
                {
                    "name": "c",
                    "image": "busybox:1.36",
                    "command": ["sleep", "3600"],
                    "resources": {"limits": {"cpu": "1", "memory": "64Mi"}},
                    "readinessProbe": {"tcpSocket": {"port": 8080}, "periodSeconds": 1},
                }
            ],
            "volumes": [{"name": "scratch", "emptyDir": {}}],
        },
    }
    path = "/api/v1/namespaces/default/pods"
    headers = {"Content-Type": protobuf.MEDIA_TYPE, "Accept": protobuf.MEDIA_TYPE}
    async with (
        aiohttp.ClientSession() as session,
        session.post(world.url + path, data=protobuf.encode(body), headers=headers) as resp,
    ):
        assert resp.status == 201
        assert resp.content_type == protobuf.MEDIA_TYPE
        created = protobuf.decode(await resp.read())
    assert created["spec"]["volumes"][0] == {"name": "scratch", "emptyDir": {}}

    async def started() -> bool:
        _, raw = await _get(world, f"{path}/p", "application/json")
        statuses = json.loads(raw).get("status", {}).get("containerStatuses") or []
        return bool(statuses) and "running" in statuses[0]["state"]

    await eventually(started, what="pod p running")
    _, as_json = await _get(world, f"{path}/p", "application/json")
    content_type, as_protobuf = await _get(world, f"{path}/p", protobuf.MEDIA_TYPE + ", application/json")
    assert content_type == protobuf.MEDIA_TYPE
    assert protobuf.decode(as_protobuf) == json.loads(as_json)


@pytest.mark.parametrize(
    ("path", "obj"),
    [
        (
            "/api/v1/namespaces/default/events",
            {
                "apiVersion": "v1",
                "kind": "Event",
                "metadata": {"name": "e1"},
                "involvedObject": {"kind": "Pod", "namespace": "default", "name": "p"},
                "reason": "Started",
                "message": "Started container c",
                "type": "Normal",
                "eventTime": "2026-01-02T03:04:06.123456Z",
                "reportingComponent": "kubelet",
                "reportingInstance": "sim-node-1",
                "action": "Start",
            },
        ),
        (
            "/apis/coordination.k8s.io/v1/namespaces/default/leases",
            {
                "apiVersion": "coordination.k8s.io/v1",
                "kind": "Lease",
                "metadata": {"name": "leader"},
                "spec": {
                    "holderIdentity": "a",
                    "leaseDurationSeconds": 15,
                    "renewTime": "2026-01-02T03:04:20.654321Z",
                    "leaseTransitions": 0,
                },
            },
        ),
    ],
    ids=["event", "lease"],
)
async def test_events_and_leases_are_created_and_answered_in_protobuf(
    world: World, path: str, obj: dict[str, Any]
) -> None:
    headers = {"Content-Type": protobuf.MEDIA_TYPE, "Accept": protobuf.MEDIA_TYPE}
    async with (
        aiohttp.ClientSession() as session,
        session.post(world.url + path, data=protobuf.encode(obj), headers=headers) as resp,
    ):
        assert resp.status == 201
        created = protobuf.decode(await resp.read())
    _, as_json = await _get(world, f"{path}/{obj['metadata']['name']}", "application/json")
    assert created == json.loads(as_json)
    for key, value in obj.items():
        if key != "metadata":
            assert created[key] == value
