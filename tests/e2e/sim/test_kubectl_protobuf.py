"""kubectl's create generators against the emulated cluster: they send protobuf bodies.

Inputs: an emulated cluster, a kubeconfig for it and Debian's ``kubectl``; raw HTTP for a protobuf-asked
GET. Outputs: the objects kubectl created, read back with ``kubectl get -o json``, and a protobuf
``Status`` 404 for a missing object.
"""

from __future__ import annotations

import base64
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest

from sim import protobuf
from sim.world import World
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
