"""The simulated kubelet's Node: registered at start and shown by ``kubectl get nodes``.

Inputs: an emulated cluster with its kubelet, a kubeconfig for it and the pinned ``kubectl``; raw HTTP
for a protobuf-asked GET. Outputs: the Node's labels, capacity, conditions and system info; kubectl's
NAME STATUS ROLES AGE VERSION columns (and ``-o wide``'s); the Node in protobuf, equal to its JSON; a
field selector on ``spec.unschedulable``.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from pathlib import Path

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


def rows(out: str) -> list[list[str]]:
    return [re.split(r"\s{2,}", line.strip()) for line in out.strip().splitlines()]


@requires_kubectl
async def test_kubectl_get_nodes_shows_the_kubelets_node_ready(world: World, tmp_path: Path) -> None:
    kubeconfig = world.write_kubeconfig(tmp_path / "kubeconfig")

    async def registered() -> bool:
        return world.store.get(("", "nodes", "", "sim-node-1")) is not None

    await eventually(registered, what="node sim-node-1 registered")
    node = await get_json(kubeconfig, "node", "sim-node-1")
    labels = node["metadata"]["labels"]
    assert labels["kubernetes.io/hostname"] == "sim-node-1"
    assert (labels["kubernetes.io/os"], labels["kubernetes.io/arch"]) == ("linux", "amd64")
    status = node["status"]
    assert set(status["capacity"]) >= {"cpu", "memory", "pods"}
    assert status["allocatable"]["pods"] == status["capacity"]["pods"]
    conditions = {c["type"]: c["status"] for c in status["conditions"]}
    assert conditions == {
        "MemoryPressure": "False",
        "DiskPressure": "False",
        "PIDPressure": "False",
        "Ready": "True",
    }
    assert {a["type"] for a in status["addresses"]} == {"InternalIP", "Hostname"}
    assert status["nodeInfo"]["kubeletVersion"] == "v1.34.4"

    out = await ok(kubeconfig, "get", "nodes")
    header, *lines = rows(out)
    assert header == ["NAME", "STATUS", "ROLES", "AGE", "VERSION"]
    ((name, state, roles, _age, version),) = lines
    assert (name, state, roles, version) == ("sim-node-1", "Ready", "<none>", "v1.34.4")
    wide = rows(await ok(kubeconfig, "get", "nodes", "-o", "wide"))
    assert wide[0][5:] == ["INTERNAL-IP", "EXTERNAL-IP", "OS-IMAGE", "KERNEL-VERSION", "CONTAINER-RUNTIME"]
    assert wide[1][5:7] == [world.kubelet.host_ip, "<none>"]

    await ok(kubeconfig, "cordon", "sim-node-1")
    assert rows(await ok(kubeconfig, "get", "nodes"))[1][1] == "Ready,SchedulingDisabled"
    cordoned = await ok(kubeconfig, "get", "nodes", "--field-selector=spec.unschedulable=true", "-o", "name")
    assert cordoned.split() == ["node/sim-node-1"]


async def test_the_node_is_answered_in_protobuf_as_in_json(world: World) -> None:
    path = world.url + "/api/v1/nodes/sim-node-1"

    async def read(accept: str) -> tuple[int, str, bytes]:
        async with aiohttp.ClientSession() as session, session.get(path, headers={"Accept": accept}) as resp:
            return resp.status, resp.content_type, await resp.read()

    async def registered() -> bool:
        return (await read("application/json"))[0] == 200

    await eventually(registered, what="node sim-node-1 registered")
    _, _, as_json = await read("application/json")
    status, content_type, as_protobuf = await read(protobuf.MEDIA_TYPE + ", application/json")
    assert (status, content_type) == (200, protobuf.MEDIA_TYPE)
    assert protobuf.decode(as_protobuf) == json.loads(as_json)
