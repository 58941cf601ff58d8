"""The real control plane as the tests and ``arcsm sim --control-plane real`` use it: the pinned build in
the cache, kube-apiserver and its companions started on loopback, and the emulated node running pods.

Nothing is mocked: the binaries are the ones ``python -m sim.controlplane.build`` made; requests go to
kube-apiserver over HTTPS with a client certificate; kubectl is the one built beside it.
"""

from __future__ import annotations

import asyncio
import json
import signal
import socket
import subprocess
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from kubernetes_asyncio import client, config
from kubernetes_asyncio.client.rest import ApiException

from sim.controlplane import build, cluster, pki
from sim.controlplane.world import RealWorld
from tests import worlds
from tests.helpers import ARCSM, eventually
from tests.kubectl import ok

TIMEOUT = 60.0


@pytest.fixture
async def world() -> AsyncIterator[RealWorld]:
    async with worlds.open_world(worlds.REAL) as w:
        yield w


def test_the_build_is_pinned_stamped_and_found_in_the_cache_the_second_time() -> None:
    worlds.require_real()
    command = [sys.executable, "-m", "sim.controlplane.build", "--quiet"]
    first = subprocess.run(command, capture_output=True, text=True, check=True)
    stamp = Path(first.stdout.strip()) / build.STAMP
    before = stamp.stat().st_mtime_ns
    second = subprocess.run(command, capture_output=True, text=True, check=True)
    assert second.stdout == first.stdout
    assert stamp.stat().st_mtime_ns == before, "the second run built again"
    bin_dir = Path(first.stdout.strip())
    pins = build.pins()
    version = subprocess.run([bin_dir / "kube-apiserver", "--version"], capture_output=True, text=True)
    assert version.stdout.strip() == f"Kubernetes {pins.kubernetes}"
    kubectl = subprocess.run([bin_dir / "kubectl", "version", "--client", "-o", "json"], capture_output=True)
    assert json.loads(kubectl.stdout)["clientVersion"]["gitVersion"] == pins.kubernetes
    etcd = subprocess.run([bin_dir / "etcd", "--version"], capture_output=True, text=True)
    assert f"etcd Version: {pins.etcd.lstrip('v')}" in etcd.stdout


async def test_version_node_and_namespaces(world: RealWorld, tmp_path: Path) -> None:
    async with client.ApiClient(world.configuration()) as api:
        version = await client.VersionApi(api).get_code()
        assert version.git_version == build.pins().kubernetes
        names = {n.metadata.name for n in (await client.CoreV1Api(api).list_namespace()).items}
        assert {"default", "arc-systems", "kube-node-lease"} <= names
    kubeconfig = world.write_kubeconfig(tmp_path / "kubeconfig")
    nodes = json.loads(await ok(kubeconfig, "get", "nodes", "-o", "json"))
    (node,) = nodes["items"]
    ready = {c["type"]: c["status"] for c in node["status"]["conditions"]}
    assert ready["Ready"] == "True"
    assert not node["spec"].get("taints")


def gone(read: Callable[[str, str], Awaitable[Any]], name: str) -> Callable[[], Awaitable[bool]]:
    """Whether ``read(name, "default")`` answers 404 now."""

    async def check() -> bool:
        try:
            await read(name, "default")
        except ApiException as exc:
            return exc.status == 404
        return False

    return check


def pod(name: str, *, annotations: dict[str, str] | None = None, grace: int = 30) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "annotations": annotations or {}},
        "spec": {
            "restartPolicy": "Never",
            "terminationGracePeriodSeconds": grace,
            "containers": [{"name": "main", "image": "busybox"}],
        },
    }


async def test_a_pod_is_scheduled_run_and_deleted_gracefully(world: RealWorld) -> None:
    async with client.ApiClient(world.configuration()) as api:
        core = client.CoreV1Api(api)
        await core.create_namespaced_pod("default", pod("waits"))

        async def running() -> Any:
            found = await core.read_namespaced_pod("waits", "default")
            return found if found.status.phase == "Running" else None

        found = await eventually(running, timeout=TIMEOUT, what="the pod Running")
        assert found.spec.node_name == world.node_name
        assert found.status.pod_ip and found.status.container_statuses[0].ready
        ready = {c.type: c.status for c in found.status.conditions}
        assert ready["Ready"] == "True" and ready["PodScheduled"] == "True"
        await core.delete_namespaced_pod("waits", "default")
        await eventually(gone(core.read_namespaced_pod, "waits"), timeout=TIMEOUT, what="the pod deleted")


async def test_a_container_that_exits_non_zero_fails_its_pod(world: RealWorld) -> None:
    async with client.ApiClient(world.configuration()) as api:
        core = client.CoreV1Api(api)
        await core.create_namespaced_pod("default", pod("fails", annotations={"sim.arcsm.io/exit-code": "3"}))

        async def failed() -> Any:
            found = await core.read_namespaced_pod("fails", "default")
            return found if found.status.phase == "Failed" else None

        found = await eventually(failed, timeout=TIMEOUT, what="the pod Failed")
        terminated = found.status.container_statuses[0].state.terminated
        assert (terminated.exit_code, terminated.reason) == (3, "Error")


async def test_the_garbage_collector_removes_what_a_deleted_owner_owned(world: RealWorld) -> None:
    async with client.ApiClient(world.configuration()) as api:
        core = client.CoreV1Api(api)
        owner = await core.create_namespaced_config_map("default", {"metadata": {"name": "owner"}})
        ref = {"apiVersion": "v1", "kind": "ConfigMap", "name": "owner", "uid": owner.metadata.uid}
        await core.create_namespaced_config_map(
            "default", {"metadata": {"name": "owned", "ownerReferences": [ref]}}
        )
        await core.delete_namespaced_config_map("owner", "default")
        collected = gone(core.read_namespaced_config_map, "owned")
        await eventually(collected, timeout=TIMEOUT, what="the owned ConfigMap collected")


async def test_kube_apiserver_refuses_a_client_without_a_certificate(world: RealWorld) -> None:
    configuration = world.configuration()
    configuration.cert_file = configuration.key_file = None
    async with client.ApiClient(configuration) as api:
        with pytest.raises(ApiException) as caught:
            await client.CoreV1Api(api).list_namespace()
    assert caught.value.status == 403  # anonymous: authenticated as system:anonymous, not authorized


async def test_the_request_log_is_read_from_kube_apiservers_audit_log(world: RealWorld) -> None:
    """``world.requests`` answers as the emulator's request log does: who asked, what, and the answer."""
    async with client.ApiClient(world.configuration()) as api:
        await client.CoreV1Api(api).list_namespaced_config_map("default")
    anonymous = world.configuration()
    anonymous.cert_file = anonymous.key_file = None
    async with client.ApiClient(anonymous) as api:
        with pytest.raises(ApiException):
            await client.CoreV1Api(api).list_namespaced_secret("default")

    def logged() -> list[tuple[str, str, str, str, int]]:
        return [
            (r.method, r.path, r.verb, r.user, r.status)
            for r in world.requests
            if r.path in ("/api/v1/namespaces/default/configmaps", "/api/v1/namespaces/default/secrets")
        ]

    await eventually(lambda: len(logged()) == 2, timeout=TIMEOUT, what="both requests in the audit log")
    assert logged() == [
        ("GET", "/api/v1/namespaces/default/configmaps", "list", pki.ADMIN.user, 200),
        ("GET", "/api/v1/namespaces/default/secrets", "list", "system:anonymous", 403),
    ]


async def test_arcsm_sim_serves_the_real_control_plane_with_the_same_lines_and_kubeconfig(
    tmp_path: Path,
) -> None:
    worlds.require_real()
    kubeconfig = tmp_path / "kubeconfig"
    proc = await asyncio.create_subprocess_exec(
        ARCSM,
        "sim",
        "--control-plane",
        "real",
        "--kubeconfig",
        str(kubeconfig),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        assert proc.stdout is not None
        lines = [
            (await asyncio.wait_for(proc.stdout.readline(), TIMEOUT * 2)).decode().strip() for _ in range(3)
        ]
        assert lines[0].startswith("arcsm sim: kubernetes https://127.0.0.1:"), lines
        assert lines[1].startswith("arcsm sim: github http://127.0.0.1:"), lines
        assert lines[2] == f"arcsm sim: kubeconfig {kubeconfig}"
        configuration = client.Configuration()
        await config.load_kube_config(config_file=str(kubeconfig), client_configuration=configuration)
        async with client.ApiClient(configuration) as api:
            assert (await client.VersionApi(api).get_code()).git_version == build.pins().kubernetes
            nodes = (await client.CoreV1Api(api).list_node()).items
            assert [n.metadata.name for n in nodes] == ["arcsm-node-1"]
            crds = await client.ApiextensionsV1Api(api).list_custom_resource_definition()
            assert "autoscalingrunnersets.actions.github.com" in {c.metadata.name for c in crds.items}
        github = lines[1].rsplit(" ", 1)[1]
        async with httpx.AsyncClient() as http:
            state = (await http.get(f"{github}/_sim/state")).json()
        assert state["scaleSets"] == []
        proc.send_signal(signal.SIGTERM)
        assert await asyncio.wait_for(proc.wait(), TIMEOUT) == 0
        assert proc.stderr is not None
        assert "arcsm sim: stopped" in (await proc.stderr.read()).decode()
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()


async def test_a_port_taken_before_a_component_binds_it_is_given_up_for_another(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The first port picked for etcd and the first for kube-apiserver are held by a listener here, as
    # another process's connection can take a port between its pick and the component's bind.
    held = [socket.create_server((cluster.HOST, 0)) for _ in range(2)]
    taken = {0: held[0].getsockname()[1], 4: held[1].getsockname()[1]}  # etcd: picks 0-1, 2-3 again
    picked: list[int] = []
    fresh = cluster.free_port

    def pick(host: str = cluster.HOST) -> int:
        picked.append(taken.get(len(picked)) or fresh(host))
        return picked[-1]

    monkeypatch.setattr(cluster, "free_port", pick)
    plane = cluster.ControlPlane(
        build.binaries(), state_dir=tmp_path / "state", controller_manager=False, scheduler=False
    )
    try:
        async with plane:
            cert, key = plane.keys.client(pki.ADMIN)
            async with httpx.AsyncClient(verify=str(plane.ca_file), cert=(str(cert), str(key))) as http:
                assert (await http.get(f"{plane.url}/readyz")).status_code == 200
            assert plane.port != taken[4]
            logs = {name: (plane.log_dir / f"{name}.log").read_text() for name in ("etcd", "kube-apiserver")}
    finally:
        for listener in held:
            listener.close()
    assert all("address already in use" in log for log in logs.values()), "a component met no taken port"
