"""``arcsm run`` as a user runs it: a subprocess against the emulated world, stopped by SIGTERM or SIGINT
with exit status 0 and a journal another process can open; the queue flags reach the loop it runs (its
log says what it reconciles with); a failure to start is one line and status 1.

A running controller imports what it uses and no more: not the emulator, and of kubernetes_asyncio's
generated client only the API classes it calls and the models the Lease is read into
(``controller.commands.lazykube``), the rest being tens of MB of every controller's memory."""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from kubernetes_asyncio import client

from sim.world import World
from store.journal import Journal
from store.records import RecordType
from tests.e2e.controller import harness
from tests.helpers import ARCSM, collect, eventually, modules_in, of_packages, reporting_modules

# kubernetes_asyncio's API modules the controller calls: its custom resources, Pods and Secrets, RBAC,
# the Lease, and the CRDs it reads once at start.
USED_APIS = {
    f"kubernetes_asyncio.client.api.{name}"
    for name in (
        "custom_objects_api",
        "core_v1_api",
        "rbac_authorization_v1_api",
        "coordination_v1_api",
        "apiextensions_v1_api",
    )
}


@pytest.fixture
async def world(world_kind: str) -> AsyncIterator[World]:
    async with harness.github_world(world_kind) as w:
        yield w


async def arcsm_run(*args: str, env: dict[str, str] | None = None) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        ARCSM,
        "run",
        *args,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=None if env is None else {**os.environ, **env},
    )


async def stderr_once_running(
    proc: asyncio.subprocess.Process, world: World, kube: client.ApiClient, sig: signal.Signals
) -> str:
    """Create a scale set, wait for ``arcsm run`` to bring it Running, send ``sig``; what it logged."""
    try:
        await harness.create(kube, harness.scale_set_body(world))

        async def running() -> bool:
            return await harness.phase(kube) == "Running"

        await eventually(running, timeout=30, what="the scale set Running")
        proc.send_signal(sig)
        _, stderr = await asyncio.wait_for(proc.communicate(), timeout=30)
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    return stderr.decode()


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
async def test_run_decides_and_stops_cleanly_on_a_signal(
    world: World, kube: client.ApiClient, tmp_path: Path, sig: int
) -> None:
    kubeconfig = world.write_kubeconfig(tmp_path / "kubeconfig")
    journal = tmp_path / "journal.db"
    proc = await arcsm_run(
        "--journal", str(journal), "--kubeconfig", str(kubeconfig), "--namespace", "default"
    )
    stderr = await stderr_once_running(proc, world, kube, sig)
    assert proc.returncode == 0, stderr[-2000:]
    async with await Journal.open(journal) as opened:  # the lock is released: another process may open it
        decisions = await opened.read(types={RecordType.DECISION}, kind="AutoscalingRunnerSet")
    assert any(t["to"] == "Running" for d in decisions for t in d.body["transitions"])


async def test_the_queue_flags_reach_the_reconcile_loop(world: World, tmp_path: Path) -> None:
    kubeconfig = world.write_kubeconfig(tmp_path / "kubeconfig")
    proc = await arcsm_run(
        "--journal", str(tmp_path / "journal.db"), "--kubeconfig", str(kubeconfig), "--namespace", "default",
        "--log-format", "text", "--workers", "3", "--runner-concurrency", "2",
        "--reconcile-rate", "2.5", "--reconcile-burst", "7",
    )  # fmt: skip
    assert proc.stderr is not None
    lines: list[str] = []
    reader = asyncio.create_task(collect(proc.stderr, lines))
    expected = (
        "reconciling with 3 workers (per kind: EphemeralRunner 2); a failed key backs off from 0.005 s to "
        "300 s, and each kind's retries beyond a burst of 7 go at 2.5 per second"
    )
    try:
        await eventually(lambda: any(expected in line for line in lines), timeout=30, what="the queue's line")
        proc.send_signal(signal.SIGTERM)
        await asyncio.wait_for(proc.wait(), timeout=30)
        await asyncio.wait_for(reader, timeout=10)
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
        reader.cancel()
    assert proc.returncode == 0, "".join(lines)[-2000:]


async def test_a_leading_controller_imports_neither_the_emulator_nor_unused_kubernetes_classes(
    world: World, kube: client.ApiClient, tmp_path: Path
) -> None:
    kubeconfig = world.write_kubeconfig(tmp_path / "kubeconfig")
    env, report = reporting_modules(tmp_path)
    args = ["--journal", str(tmp_path / "journal.db"), "--kubeconfig", str(kubeconfig), "--leader-elect"]
    proc = await arcsm_run(*args, "--namespace", "default", env=env)
    stderr = await stderr_once_running(proc, world, kube, signal.SIGTERM)
    assert proc.returncode == 0, stderr[-2000:]
    assert any("/leases" in r.path for r in world.requests), "it led through the Lease"
    modules = modules_in(report)
    assert "controller.loop.running" in modules
    assert not of_packages(modules, "sim", "fastapi", "uvicorn"), of_packages(modules, "sim")
    apis = of_packages(modules, "kubernetes_asyncio.client.api") - {"kubernetes_asyncio.client.api"}
    assert apis <= USED_APIS, apis - USED_APIS
    models = of_packages(modules, "kubernetes_asyncio.client.models")
    assert "kubernetes_asyncio.client.models.v1_lease" in models
    # The Lease, its spec, object metadata and what that holds: a few of the 1,536 model modules.
    assert len(models) < 20, sorted(models)
    assert not of_packages(modules, "kubernetes_asyncio.dynamic", "kubernetes_asyncio.stream")


async def test_run_without_a_usable_kubeconfig_says_so_in_one_line(tmp_path: Path) -> None:
    proc = await arcsm_run("--journal", str(tmp_path / "j.db"), "--kubeconfig", str(tmp_path / "missing"))
    _, stderr = await asyncio.wait_for(proc.communicate(), timeout=30)
    assert proc.returncode == 1
    lines = stderr.decode().strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("arcsm run: cannot use the kubeconfig"), lines


async def test_run_on_a_journal_another_process_holds_says_so_in_one_line(
    world: World, tmp_path: Path
) -> None:
    kubeconfig = world.write_kubeconfig(tmp_path / "kubeconfig")
    journal = tmp_path / "journal.db"
    async with await Journal.open(journal):
        proc = await arcsm_run("--journal", str(journal), "--kubeconfig", str(kubeconfig))
        _, stderr = await asyncio.wait_for(proc.communicate(), timeout=30)
    assert proc.returncode == 1
    lines = stderr.decode().strip().splitlines()
    assert len(lines) == 1 and "is open in another process" in lines[0], lines
