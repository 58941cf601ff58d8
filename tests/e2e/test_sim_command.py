"""``arcsm sim`` as a user runs it: a subprocess that prints its URL, writes a kubeconfig, serves the
CRDs and namespaces (with ``--no-crds``, no CRDs until a chart installs its own, here upstream's),
honours ``--watch-history`` and exits cleanly on SIGTERM and SIGINT.

Nothing is mocked: the installed console script is started and driven with kubernetes_asyncio loaded
from the kubeconfig it wrote.
"""

from __future__ import annotations

import asyncio
import json
import signal
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from kubernetes_asyncio import client, config, watch
from kubernetes_asyncio.client.rest import ApiException

from sim.world import load_crds
from tests import upstreamcrds
from tests.e2e.sim.processworld import needs_mounts
from tests.helpers import ARCSM, eventually, free_port
from tests.kubectl import ok, requires_kubectl

GROUP, ARS = "actions.github.com", "autoscalingrunnersets"


async def start_sim(*args: str) -> tuple[asyncio.subprocess.Process, str]:
    proc = await asyncio.create_subprocess_exec(
        ARCSM, "sim", *args, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
    )
    assert proc.stdout is not None
    line = await asyncio.wait_for(proc.stdout.readline(), timeout=30)
    text = line.decode().strip()
    assert text.startswith("arcsm sim: kubernetes http://127.0.0.1:"), text
    return proc, text.rsplit(" ", 1)[1]


async def stop(proc: asyncio.subprocess.Process, sig: int) -> int:
    proc.send_signal(sig)
    return await asyncio.wait_for(proc.wait(), timeout=15)


@pytest.fixture
async def sim_process(tmp_path: Path) -> AsyncIterator[tuple[asyncio.subprocess.Process, Path]]:
    kubeconfig = tmp_path / "kubeconfig"
    proc, _ = await start_sim("--kubeconfig", str(kubeconfig), "--watch-history", "5")
    try:
        yield proc, kubeconfig
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()


async def test_sim_serves_crds_and_namespaces_through_its_kubeconfig(
    sim_process: tuple[asyncio.subprocess.Process, Path],
) -> None:
    proc, kubeconfig = sim_process
    cfg = client.Configuration()
    await config.load_kube_config(config_file=str(kubeconfig), client_configuration=cfg)
    async with client.ApiClient(cfg) as api:
        namespaces = await client.CoreV1Api(api).list_namespace()
        assert {"default", "arc-systems"} <= {n.metadata.name for n in namespaces.items}
        crds = await client.ApiextensionsV1Api(api).list_custom_resource_definition()
        assert {c.metadata.name for c in crds.items} == {
            "autoscalingrunnersets.actions.github.com",
            "ephemeralrunnersets.actions.github.com",
            "ephemeralrunners.actions.github.com",
            "autoscalinglisteners.actions.github.com",
        }
        listed = await client.CustomObjectsApi(api).list_namespaced_custom_object(
            "actions.github.com", "v1alpha1", "default", "autoscalingrunnersets"
        )
        assert listed["kind"] == "AutoscalingRunnerSetList"
        assert listed["items"] == []
    assert await stop(proc, signal.SIGTERM) == 0


async def test_no_crds_starts_without_arcsms_so_a_chart_installs_its_own(tmp_path: Path) -> None:
    kubeconfig = tmp_path / "kubeconfig"
    proc, _ = await start_sim("--kubeconfig", str(kubeconfig), "--no-crds")
    try:
        cfg = client.Configuration()
        await config.load_kube_config(config_file=str(kubeconfig), client_configuration=cfg)
        async with client.ApiClient(cfg) as api:
            ext, custom = client.ApiextensionsV1Api(api), client.CustomObjectsApi(api)
            assert (await ext.list_custom_resource_definition()).items == []
            with pytest.raises(ApiException) as unserved:
                await custom.list_namespaced_custom_object(GROUP, "v1alpha1", "default", ARS)
            assert unserved.value.status == 404
            namespaces = await client.CoreV1Api(api).list_namespace()
            assert {"default", "arc-systems"} <= {n.metadata.name for n in namespaces.items}

            # As upstream's chart installs its CRDs (arcsm's without its status.conditions).
            for crd in load_crds():
                await ext.create_custom_resource_definition(upstreamcrds.without_conditions(crd))

            async def served() -> bool:
                listed = await custom.list_namespaced_custom_object(GROUP, "v1alpha1", "default", ARS)
                return listed["kind"] == "AutoscalingRunnerSetList"

            await eventually(served, what="upstream's AutoscalingRunnerSet CRD served")
            installed = await ext.read_custom_resource_definition(f"{ARS}.{GROUP}")
            status = installed.spec.versions[0].schema.open_apiv3_schema.properties["status"]
            assert "conditions" not in status.properties
    finally:
        assert await stop(proc, signal.SIGTERM) == 0


async def test_watch_history_expires_older_resource_versions(
    sim_process: tuple[asyncio.subprocess.Process, Path],
) -> None:
    proc, kubeconfig = sim_process
    cfg = client.Configuration()
    await config.load_kube_config(config_file=str(kubeconfig), client_configuration=cfg)
    async with client.ApiClient(cfg) as api:
        core = client.CoreV1Api(api)
        first = await core.create_namespaced_config_map("default", {"metadata": {"name": "cm-0"}})
        start_rv = first.metadata.resource_version
        for i in range(1, 8):
            await core.create_namespaced_config_map("default", {"metadata": {"name": f"cm-{i}"}})
        with pytest.raises(ApiException) as raised:
            async with watch.Watch().stream(
                core.list_namespaced_config_map, "default", resource_version=start_rv, timeout_seconds=5
            ) as stream:
                async for _ in stream:
                    pass
        assert raised.value.status == 410
    assert await stop(proc, signal.SIGINT) == 0


@requires_kubectl
@needs_mounts
async def test_the_chart_applied_to_arcsm_sim_runs_the_controller_in_its_pod(tmp_path: Path) -> None:
    # A user's try: `arcsm sim`, then arcsm's rendered chart through kubectl. The emulator's pods share the
    # host's network, so the controller gets a port of its own instead of the chart's 8080.
    kubeconfig = tmp_path / "kubeconfig"
    proc, _ = await start_sim("--kubeconfig", str(kubeconfig))
    try:
        port = free_port()
        rendered = await asyncio.create_subprocess_exec(
            ARCSM,
            "manifests",
            "--set",
            f"metrics.controllerManagerAddr=:{port}",
            stdout=asyncio.subprocess.PIPE,
        )
        manifest, _ = await rendered.communicate()
        assert rendered.returncode == 0
        await eventually(kubeconfig.exists, timeout=10, what="the kubeconfig written")
        await ok(kubeconfig, "apply", "-f", "-", stdin=manifest.decode())
        await ok(kubeconfig, "rollout", "status", "deployment/arcsm", "-n", "arc-systems", "--timeout=120s")
        pods = json.loads(await ok(kubeconfig, "get", "pods", "-n", "arc-systems", "-o", "json"))["items"]
        [pod] = [p for p in pods if p["metadata"]["labels"].get("app.kubernetes.io/name") == "arcsm"]
        async with httpx.AsyncClient(timeout=30) as http:
            ready = (await http.get(f"http://{pod['status']['podIP']}:{port}/readyz")).json()
        assert ready["role"] == "leader"
    finally:
        assert await stop(proc, signal.SIGTERM) == 0


@pytest.mark.parametrize("option", ["--port", "--github-port"])
async def test_a_port_already_taken_is_refused_in_one_line(option: str) -> None:
    """As arcsm run and arcsm demo say it: one line naming the address, no traceback, exit 1."""
    taken = await asyncio.start_server(lambda _r, _w: None, "127.0.0.1", 0)
    port = taken.sockets[0].getsockname()[1]
    try:
        proc = await asyncio.create_subprocess_exec(
            ARCSM, "sim", option, str(port), stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
        )
        out, err = await asyncio.wait_for(proc.communicate(), 60)
    finally:
        taken.close()
        await taken.wait_closed()
    lines = err.decode().strip().splitlines()
    assert proc.returncode == 1, err.decode()
    assert len(lines) == 1 and lines[0].startswith("arcsm sim: "), lines
    assert "address already in use" in lines[0] and str(port) in lines[0]
    assert b"Traceback" not in out + err
