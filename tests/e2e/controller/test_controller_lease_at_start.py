"""A controller does not act while another holds the Lease, whatever the leader election default.

With a kubeconfig, leader election is off by default: ``arcsm run`` then leads at once, as one replica.
Started beside a controller that holds the Lease (the chart's, say), it refuses to start, in one line
naming the Lease and its holder, and exits 1 before it writes anything; once the Lease is released, it
starts. (With ``--leader-elect`` it stands by instead: ``test_controller_failover``.) Started first, it
holds the Lease itself, as its journal's own: a replica that elects stands by beside it, a restart on the
same journal (after ``kill -9``) takes the Lease back at once, and once it stops the elected replica
leads.

Real ``arcsm run`` subprocesses against the emulated cluster (or the real control plane); every wait is
on a condition with a deadline.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from kubernetes_asyncio import client

from sim.world import World
from tests import helpers
from tests.e2e.controller import harness
from tests.e2e.controller.replicas import LEASE, Replica, Timings, holder, lease
from tests.helpers import eventually

pytestmark = pytest.mark.both_worlds

TIMEOUT = 40.0
TIMINGS = Timings(lease_duration=15, renew_deadline=10, retry_period=0.5)


@pytest.fixture
async def world(world_kind: str) -> AsyncIterator[World]:
    async with harness.github_world(world_kind) as w:
        yield w


async def test_a_controller_without_leader_election_refuses_to_start_beside_the_lease_holder(
    world: World, kube: client.ApiClient, tmp_path: Path
) -> None:
    leader = Replica(world, tmp_path, "chart", TIMINGS)
    await leader.start()
    try:
        await eventually(lambda: holder(kube), timeout=TIMEOUT, what="the chart's replica holding the Lease")
        held_by = await holder(kube)
        kubeconfig = world.write_kubeconfig(tmp_path / "kubeconfig")
        command = harness.run_command(tmp_path / "beside.db", kubeconfig)
        code, lines = await harness.run_to_exit(*command, timeout=TIMEOUT)
        assert code == 1, lines
        assert len(lines) == 1 and lines[0].startswith("arcsm run: "), lines
        assert f"{harness.CONTROLLER_NS}/{LEASE}" in lines[0] and held_by in lines[0], lines
        assert "--leader-elect" in lines[0], lines
        assert await holder(kube) == held_by  # it left the Lease alone
    finally:
        assert await leader.terminate() == 0, leader.failure()

    # Released on SIGTERM: a controller without leader election now starts and leads.
    assert await holder(kube) == ""
    alone = await asyncio.create_subprocess_exec(
        *harness.run_command(tmp_path / "alone.db", kubeconfig, "--log-format", "text"),
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
    )
    lines: list[str] = []
    assert alone.stderr is not None
    reading = asyncio.create_task(helpers.collect(alone.stderr, lines))
    try:
        await harness.create(kube, harness.scale_set_body(world))

        async def running() -> bool:
            return await harness.phase(kube) == "Running"

        await eventually(running, timeout=TIMEOUT, what="the scale set Running")
    finally:
        assert await helpers.terminate(alone) == 0, lines[-20:]
        await asyncio.wait_for(reading, timeout=10)


async def test_a_controller_without_leader_election_holds_the_lease_so_an_elected_one_stands_by(
    world: World, kube: client.ApiClient, tmp_path: Path
) -> None:
    kubeconfig = world.write_kubeconfig(tmp_path / "kubeconfig")
    command = harness.run_command(tmp_path / "alone.db", kubeconfig, "--log-format", "text", *TIMINGS.flags())
    env = {**os.environ, "HOSTNAME": "alone"}
    lines: list[str] = []

    async def start_alone() -> tuple[asyncio.subprocess.Process, asyncio.Task[None]]:
        proc = await asyncio.create_subprocess_exec(
            *command, stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE, env=env
        )
        assert proc.stderr is not None
        return proc, asyncio.create_task(helpers.collect(proc.stderr, lines))

    async def renewals_by(identity: str, count: int) -> None:
        seen: set[str] = set()

        async def renewed() -> bool:
            spec = (await lease(kube)).spec
            assert spec.holder_identity == identity, (spec.holder_identity, lines[-20:])
            seen.add(str(spec.renew_time))
            return len(seen) > count

        await eventually(renewed, timeout=TIMEOUT, what=f"{count} renewals of the Lease by {identity}")

    alone, reading = await start_alone()
    standby = Replica(world, tmp_path, "chart", TIMINGS)
    try:
        await eventually(lambda: holder(kube), timeout=TIMEOUT, what="the Lease held by the controller alone")
        claimed = await holder(kube)
        assert claimed.startswith("alone_"), claimed
        await harness.create(kube, harness.scale_set_body(world))

        async def running() -> bool:
            return await harness.phase(kube) == "Running"

        await eventually(running, timeout=TIMEOUT, what="the scale set Running")
        await standby.start()
        await renewals_by(claimed, 3)  # the elected replica tried for the Lease all along
        assert await standby.role() == "standby", standby.failure()
        assert not any("leading:" in line for line in standby.log), standby.failure()

        # kill -9: nothing is released; the same journal takes its claim back at once, with no wait
        # for the Lease to expire (15 s), while the elected replica still stands by.
        alone.kill()
        await alone.wait()
        await asyncio.wait_for(reading, timeout=10)
        alone, reading = await start_alone()
        await renewals_by(claimed, 2)
        assert alone.returncode is None, lines[-20:]
        assert await standby.role() == "standby", standby.failure()
    finally:
        assert await helpers.terminate(alone) == 0, lines[-20:]
        await asyncio.wait_for(reading, timeout=10)

    # Released on SIGTERM: the elected replica leads now.
    async def chart_leads() -> bool:
        return (await holder(kube)).startswith("chart_") and await standby.role() == "leader"

    try:
        await eventually(chart_leads, timeout=TIMEOUT, what="the elected replica leading once released")
    finally:
        assert await standby.terminate() == 0, standby.failure()
