"""A rolling restart of two ``arcsm run --leader-elect`` replicas: SIGTERM the leader, the standby takes over
at once, the stopped replica comes back as the standby, and the same for the other one.

Each SIGTERM lands right after a spec change, with reconciles in flight. The stopped leader finishes them,
releases the Lease and exits 0 within the grace period; the standby takes the released Lease on its next try
rather than waiting for it to expire (15 s): the Lease's versions show the release (no holder, one-second
duration) followed at once by the standby's acquisition, one transition later. Nothing is lost: every
version of every scale set object the API server ever stored is observed in one of the two journals, the
scale set ends as asked, and the fake Actions service keeps no registration whose EphemeralRunner is gone.

Real subprocesses with their own journals, the emulated cluster and fake GitHub in this process on loopback.
Every wait is on a condition with a deadline.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import datetime
from pathlib import Path

import pytest
from kubernetes_asyncio import client

from sim.world import World
from statemachines.kinds import ARS, ER
from store.records import RecordType
from tests.e2e.controller import harness
from tests.e2e.controller.replicas import (
    LeaseVersions,
    Replica,
    Timings,
    lease,
    registrations_without_runner,
)
from tests.helpers import eventually

TIMEOUT = 40.0
TIMINGS = Timings(lease_duration=15, renew_deadline=10, retry_period=0.2)
KINDS = {plural: kind for kind, plural in harness.PLURALS.items()}


@pytest.fixture
async def world(world_kind: str) -> AsyncIterator[World]:
    async with harness.github_world(world_kind) as w:
        yield w


async def runs_with(world: World, kube: client.ApiClient, runners: int) -> bool:
    listed = await harness.items(kube, ER)
    return (
        await harness.phase(kube) == "Running"
        and len(listed) == runners
        and all((r.get("status") or {}).get("phase") == "Running" for r in listed)
        and sum(a.online for a in world.github.state.agents.values()) == runners
    )


async def roll(kube: client.ApiClient, leases: LeaseVersions, leader: Replica, standby: Replica) -> None:
    """SIGTERM the leader; it exits 0 having released the Lease, and the standby takes the released Lease
    (not one that expired): the Lease's own versions show the handover."""
    before = await lease(kube)
    seen = len(leases.versions)
    assert await leader.terminate(timeout=30) == 0, leader.failure()
    assert any("released the lease" in line for line in leader.log), leader.failure()

    async def leading() -> bool:
        return await standby.role() == "leader"

    await eventually(leading, timeout=TIMEOUT, what=f"{standby.name} leading")
    taken = await lease(kube)
    assert taken.spec.holder_identity.startswith(f"{standby.name}_")
    assert taken.spec.lease_transitions == before.spec.lease_transitions + 1
    versions = await leases.taken_by(standby.name, since=seen, timeout=TIMEOUT)
    released = next(i for i, v in enumerate(versions) if not v.holder)
    release, takeover = versions[released], versions[released + 1]
    assert all(v.holder.startswith(f"{leader.name}_") for v in versions[:released]), versions
    # The release: no holder, a one-second duration, so the next candidate need not wait.
    assert release.duration == 1 and release.transitions == before.spec.lease_transitions, release
    # The very next write is the standby's, from the released version: a new term, acquired after the
    # release as the Lease's own times say.
    assert takeover.holder.startswith(f"{standby.name}_"), versions
    assert takeover.transitions == release.transitions + 1
    assert _time(takeover.acquire_time) >= _time(release.renew_time), (release, takeover)


def _time(text: str) -> datetime:
    return datetime.fromisoformat(text)


async def standing_by(replica: Replica) -> bool:
    body = await replica.readiness()
    return bool(body["ready"]) and body["role"] == "standby"


async def test_a_rolling_restart_loses_nothing(
    world: World, kube: client.ApiClient, leases: LeaseVersions, tmp_path: Path
) -> None:
    a = Replica(world, tmp_path, "a", TIMINGS)
    b = Replica(world, tmp_path, "b", TIMINGS)
    try:
        await a.start()

        async def a_leads() -> bool:
            return await a.role() == "leader"

        await eventually(a_leads, timeout=TIMEOUT, what="a leading")
        await b.start()
        await eventually(lambda: standing_by(b), timeout=TIMEOUT, what="b standing by")
        await harness.create(kube, harness.scale_set_body(world, minRunners=2))
        await eventually(lambda: runs_with(world, kube, 2), timeout=TIMEOUT, what="2 runners")

        await harness.merge_patch(kube, ARS, "arc", {"spec": {"minRunners": 3}})
        await roll(kube, leases, a, b)
        await eventually(lambda: runs_with(world, kube, 3), timeout=TIMEOUT, what=f"3 runners\n{b.failure()}")
        await a.start()
        await eventually(lambda: standing_by(a), timeout=TIMEOUT, what="a back, standing by")

        await harness.merge_patch(kube, ARS, "arc", {"spec": {"minRunners": 1}})
        await roll(kube, leases, b, a)
        await eventually(lambda: runs_with(world, kube, 1), timeout=TIMEOUT, what=f"1 runner\n{a.failure()}")
        await b.start()
        await eventually(lambda: standing_by(b), timeout=TIMEOUT, what="b back, standing by")

        async def no_orphans() -> bool:
            return not await registrations_without_runner(world, kube)

        await eventually(no_orphans, timeout=TIMEOUT, what="no registration without its runner")
        assert await a.terminate() == 0, a.failure()
        assert await b.terminate() == 0, b.failure()
    finally:
        for replica in (a, b):
            if replica.proc is not None and replica.proc.returncode is None:
                await replica.kill()

    journaled = {
        (r.kind, r.namespace, r.name, r.resource_version)
        for replica in (a, b)
        for r in await harness.journaled(replica.journal, {RecordType.OBSERVED})
    }
    stored = {
        (KINDS[plural], namespace, name, str(event.rv))
        for event in world.store.events_after(0)
        for group, plural, namespace, name in [event.key]
        if group == harness.GROUP and plural in KINDS
    }
    assert stored, "the API server stored scale set objects"
    missing = sorted(stored - journaled)
    assert not missing, f"versions no journal observed: {missing[:10]}"
