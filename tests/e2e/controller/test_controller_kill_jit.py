"""SIGKILL between "JIT config issued" and "its Secret written": the restarted controller never generates a
runner's JIT config again blindly, and leaves no registration behind.

Real ``arcsm run`` subprocess, real journal on disk, emulated cluster with the fake GitHub in this process.
The kill point is a condition: the emulated API server holds the first JIT Secret create (a latency fault,
answered 500 after the controller is gone), and the controller is killed once the fake GitHub has issued the
config. What the fake recorded then tells whether a config was asked for again without first finding out
what the service held for that runner name.
"""

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

import pytest
from kubernetes_asyncio import client

from sim.faults import Fault
from sim.github import GitHubFake
from sim.github.faults import Call
from sim.world import World
from statemachines.kinds import ER
from tests.e2e.controller import harness
from tests.e2e.controller.test_controller_kill_restart import Arcsm
from tests.helpers import eventually

TIMEOUT = 60.0
JIT = "/generatejitconfig"
AGENTS = "/_apis/distributedtask/pools/0/agents"


@pytest.fixture
async def world(world_kind: str) -> AsyncIterator[World]:
    async with harness.github_world(world_kind) as w:
        yield w


def issued(fake: GitHubFake) -> list[Call]:
    return [c for c in fake.calls if c.method == "POST" and c.path.endswith(JIT)]


def asks_about(call: Call, name: str, runner_ids: set[int]) -> str | None:
    """What ``call`` found out or did about a registration of runner ``name`` (None: nothing)."""
    if call.method == "GET" and call.path.endswith(AGENTS):
        return "lookup" if parse_qs(call.query).get("agentName") == [name] else None
    if call.method == "DELETE" and AGENTS + "/" in call.path:
        return "removal" if call.path.rsplit("/", 1)[1] in {str(i) for i in runner_ids} else None
    return None


async def test_sigkill_after_the_jit_config_was_issued_never_issues_it_again_blindly(
    world: World, kube: client.ApiClient, tmp_path: Path
) -> None:
    fake = world.github
    # JIT Secret creates are held until the controller is gone, then refused: none is written before
    # the kill. The fault is lifted before the restart.
    hold = Fault(verb="create", path=f"/namespaces/{harness.NS}/secrets$", code=500, latency=20.0, times=None)
    world.inject(hold)
    arcsm = Arcsm(world, tmp_path)
    await arcsm.start()
    try:
        await harness.create(kube, harness.scale_set_body(world, minRunners=1))
        await eventually(
            lambda: any(c.status == 200 for c in issued(fake)), timeout=TIMEOUT, what="a JIT config issued"
        )
        await arcsm.kill()
        (first,) = issued(fake)
        name = first.body["name"]
        assert await client_secret(kube, name) is None, "the kill came after the Secret was written"
        first_id = fake.runner(name).id  # type: ignore[union-attr]
        world.clear_faults()
        await arcsm.start()

        async def running() -> dict[str, Any] | None:
            runner = await harness.get(kube, ER, name)
            status = (runner or {}).get("status") or {}
            agent = fake.runner(name)
            if status.get("phase") != "Running" or agent is None or not agent.online:
                return None
            return runner

        runner = await eventually(running, timeout=TIMEOUT, what="the runner running after the restart")
    finally:
        await arcsm.stop()

    # For every runner name, each JIT config after the first was asked for only after an earlier
    # registration of the name was looked up or removed, and the service never had to refuse one (a
    # blind retry meets RunnerExists). The interrupted runner's was looked up and removed.
    calls = fake.calls
    jit_at: dict[str, list[int]] = {}
    for i, call in enumerate(calls):
        if call.method == "POST" and call.path.endswith(JIT):
            jit_at.setdefault(call.body["name"], []).append(i)
    assert len(jit_at[name]) == 2, "the restart issued the interrupted runner's config once more"
    between = [asks_about(c, name, {first_id}) for c in calls[jit_at[name][0] + 1 : jit_at[name][1]]]
    assert between.index("lookup") < between.index("removal"), between
    for runner_name, at in jit_at.items():
        assert [calls[i].status for i in at] == [200] * len(at), (runner_name, [calls[i].status for i in at])
        for before, after in itertools.pairwise(at):
            issued_ids = {a.id for a in fake.state.agents.values()} | {first_id}
            found = [asks_about(c, runner_name, issued_ids) for c in calls[before + 1 : after]]
            assert "lookup" in found or "removal" in found, (runner_name, found)

    # Nothing orphaned: the one registration of the name is the runner's.
    agents = [a for a in fake.state.agents.values() if a.name == name]
    assert [a.id for a in agents] == [runner["status"]["runnerId"]]
    assert first_id not in fake.state.agents


async def client_secret(kube: client.ApiClient, name: str) -> object:
    try:
        return await client.CoreV1Api(kube).read_namespaced_secret(name, harness.NS)
    except client.ApiException as exc:
        if exc.status == 404:
            return None
        raise
