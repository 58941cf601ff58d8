"""A runner deleted after its JIT config registered it, but before its id reached its status, leaves no
registration behind.

Real ``arcsm run`` subprocess, real journal on disk, the emulated cluster and the fake GitHub in this
process. The emulated API server refuses every EphemeralRunner status patch, so a runner's id never reaches
its status; once the fake has registered the runner, the test deletes the EphemeralRunner, as a scale-down
can in that window. The deletion must remove the registration the JIT Secret names: before, it took the
missing status id for "never registered" and the registration stayed on the service as an offline runner.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from kubernetes_asyncio import client

from sim.faults import Fault
from sim.world import World
from statemachines.kinds import ER
from tests.e2e.controller import harness
from tests.e2e.controller.test_controller_kill_restart import Arcsm
from tests.helpers import eventually

TIMEOUT = 60.0


@pytest.fixture
async def world(world_kind: str) -> AsyncIterator[World]:
    async with harness.github_world(world_kind) as w:
        yield w


async def test_a_runner_deleted_before_its_id_reached_the_status_is_removed_from_the_service(
    world: World, kube: client.ApiClient, tmp_path: Path
) -> None:
    fake = world.github
    world.inject(Fault(verb="patch", path=r"/ephemeralrunners/[^/]+/status$", code=500, times=None))
    arcsm = Arcsm(world, tmp_path)
    await arcsm.start()
    try:
        await harness.create(kube, harness.scale_set_body(world, minRunners=1))

        async def registered() -> str | None:
            names = [agent.name for agent in fake.state.agents.values()]
            return names[0] if names else None

        name = await eventually(registered, timeout=TIMEOUT, what="a runner registered")
        runner = await harness.get(kube, ER, name)
        assert runner is not None and not (runner.get("status") or {}).get("runnerId")
        await harness.delete(kube, ER, name)

        async def gone() -> bool:
            return await harness.get(kube, ER, name) is None and fake.runner(name) is None

        await eventually(gone, timeout=TIMEOUT, what="the runner and its registration gone")
    finally:
        await arcsm.stop()
