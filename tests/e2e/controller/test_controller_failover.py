"""Failover: two ``arcsm run --leader-elect`` replicas, the leader SIGKILLed mid-story, the standby leads.

The story is the seed's (C7): runners built from an image the service rejects park the scale set in
Outdated, and an image fix recovers it (Pending, Running). Replica ``a`` leads and ``b`` stands by,
watching and journaling; ``a`` is killed while the scale set runs its first rejected runner, so ``b``
decides the rest from its own journal. The test shows:

* ``b`` takes the unrenewed Lease once it expired: the Lease's versions show ``a``'s renewals, then
  directly ``b``'s acquisition (one transition more, ``acquireTime`` at least a lease duration after
  ``a``'s last ``renewTime``),
* the world ends as the seed's story ends without a failover (scale set Running at its generation, the
  runner set Running at an advanced revision, one listener, one runner registered and running),
* the fake Actions service keeps no registration whose EphemeralRunner is gone,
* the phase history ``b`` serves holds every phase the scale set went through, in order: what ``a``
  decided as ``b`` observed it (``source`` observed), then what ``b`` decided (``source`` decided).

A second test runs one replica in process and makes its renewals fail: it stands by (and writes nothing)
until the API server answers again, then leads again, and on stop releases the Lease.

Real subprocesses with their own journals, the cluster and fake GitHub in this process on loopback. The
takeover runs on both worlds (the emulated cluster and the real control plane); the second test's failing
renewals are the emulator's injected faults, so it runs there. Every wait is on a condition with a deadline.
"""

from __future__ import annotations

import asyncio
import dataclasses
import itertools
from collections.abc import AsyncIterator
from datetime import datetime
from pathlib import Path

import httpx
import pytest
from kubernetes_asyncio import client

from controller.loop import running
from controller.loop.settings import HttpSettings, LeaderElectionSettings
from sim.faults import Fault
from sim.world import World
from statemachines.kinds import AL, ARS, ER, ERS
from store.records import RecordType
from tests.e2e.controller import harness
from tests.e2e.controller.harness import merge_patch, revisions
from tests.e2e.controller.replicas import (
    LeaseVersions,
    Replica,
    Timings,
    holder,
    lease,
    registrations_without_runner,
)
from tests.e2e.controller.scenario_steps import MINIMUM, REJECTED_IMAGE, pinned_without_listener
from tests.helpers import eventually

TIMEOUT = 40.0
FIXED_IMAGE = "ghcr.io/actions/actions-runner:2.330.0"
# Generous enough that a leader on a busy machine renews in time; the takeover waits the whole duration.
TIMINGS = Timings(lease_duration=6, renew_deadline=4, retry_period=0.2)
STORY = ["Pending", "Running", "Outdated", "Pending", "Running"]


@pytest.fixture
async def world(world_kind: str) -> AsyncIterator[World]:
    async with harness.github_world(world_kind) as w:
        w.github.configure(min_runner_version=MINIMUM)
        yield w


async def recovered(world: World, kube: client.ApiClient) -> bool:
    """The end of the seed's story: Running at its generation, the runner set Running at an advanced
    revision, one listener, one runner running and registered online."""
    ars, ers = await harness.get(kube, ARS, "arc"), await harness.get(kube, ERS, "arc")
    if ars is None or ers is None:
        return False
    revision, applied = revisions(ers)
    runners = await harness.items(kube, ER)
    return (
        (ars.get("status") or {}).get("phase") == "Running"
        and ars["status"].get("observedGeneration") == ars["metadata"]["generation"]
        and (ers.get("status") or {}).get("phase") == "Running"
        and revision == applied > 1
        and len(await harness.items(kube, AL, harness.CONTROLLER_NS)) == 1
        and [(r.get("status") or {}).get("phase") for r in runners] == ["Running"]
        and sum(a.online for a in world.github.state.agents.values()) == 1
    )


@pytest.mark.both_worlds
async def test_the_standby_takes_over_a_killed_leader_and_serves_the_whole_history(
    world: World, kube: client.ApiClient, leases: LeaseVersions, tmp_path: Path
) -> None:
    a = Replica(world, tmp_path, "a", TIMINGS)
    b = Replica(world, tmp_path, "b", TIMINGS)
    await a.start()
    try:
        await eventually(lambda: _role_is(a, "leader"), timeout=TIMEOUT, what="a leading")
        await b.start()
        await eventually(lambda: _ready_standby(b), timeout=TIMEOUT, what="b synced, standing by")
        assert (await holder(kube)).startswith("a_")

        body = harness.scale_set_body(world, minRunners=1)
        body["spec"]["template"]["spec"]["containers"][0]["image"] = REJECTED_IMAGE
        body["spec"]["template"]["spec"]["restartPolicy"] = "Never"
        await harness.create(kube, body)

        async def mid_story() -> bool:  # a runner registered; b saw the scale set Running
            seen = [item["to"] for item in await b.phases()]
            return "Running" in seen and bool(world.github.state.agents)

        await eventually(mid_story, timeout=TIMEOUT, what="a runner registered while a leads")
        before = await lease(kube)
        transitions = before.spec.lease_transitions
        await a.kill()

        await eventually(lambda: _role_is(b, "leader"), timeout=TIMEOUT, what="b leading")
        taken = await lease(kube)
        assert taken.spec.holder_identity.startswith("b_")
        assert taken.spec.lease_transitions == transitions + 1
        # The Lease's own versions: a's renewals stop at the kill, and the next write is b's, a new term
        # acquired after a's last renewal; a killed leader released nothing.
        versions = await leases.taken_by("b", timeout=TIMEOUT)
        took = next(i for i, v in enumerate(versions) if v.holder.startswith("b_"))
        last_of_a, takeover = versions[took - 1], versions[took]
        assert last_of_a.holder.startswith("a_") and last_of_a.duration == TIMINGS.lease_duration, versions
        assert takeover.transitions == last_of_a.transitions + 1
        # b took the Lease only once it had expired since a's last renewal: never two leaders at once.
        waited = datetime.fromisoformat(takeover.acquire_time) - datetime.fromisoformat(last_of_a.renew_time)
        assert waited.total_seconds() >= TIMINGS.lease_duration, versions

        await eventually(
            lambda: pinned_without_listener(kube), timeout=TIMEOUT, what=f"parked by b\n{b.failure()}"
        )
        template = {"spec": {"containers": [{"name": "runner", "image": FIXED_IMAGE}]}}
        await merge_patch(kube, ARS, "arc", {"spec": {"template": template}})
        await eventually(
            lambda: recovered(world, kube), timeout=TIMEOUT, what=f"recovered by b\n{b.failure()}"
        )

        async def no_orphans() -> bool:
            return not await registrations_without_runner(world, kube)

        await eventually(no_orphans, timeout=TIMEOUT, what="no registration without its runner")

        async def whole_story() -> bool:
            items = await b.phases()
            return [phase for phase, _ in itertools.groupby(i["to"] for i in items)] == STORY

        await eventually(whole_story, timeout=TIMEOUT, what="the whole story in b's history")
        items = await b.phases()
        assert [i["seq"] for i in items] == sorted(i["seq"] for i in items)
        sources = [i["source"] for i in items]
        assert sources[0] == "observed", items  # a decided the first phases; b saw them
        assert sources[-1] == "decided", items  # b decided the recovery
        assert sources == sorted(sources, key=lambda s: s == "decided"), f"observed after decided: {items}"
        for item in items:
            if item["source"] == "observed":
                assert item["trigger"] and item["reason"], f"no Ready condition read: {item}"
        assert await b.terminate() == 0, b.failure()
    finally:
        for replica in (a, b):
            if replica.proc is not None and replica.proc.returncode is None:
                await replica.kill()


async def _role_is(replica: Replica, role: str) -> bool:
    return await replica.role() == role


async def _ready_standby(replica: Replica) -> bool:
    body = await replica.readiness()
    return bool(body["ready"]) and body["role"] == "standby"


async def test_a_leader_that_cannot_renew_stands_by_until_it_can_and_releases_on_stop(
    world: World, kube: client.ApiClient, tmp_path: Path
) -> None:
    election = LeaderElectionSettings(
        identity="solo", namespace=harness.CONTROLLER_NS, lease_duration=6, renew_deadline=4, retry_period=0.1
    )
    base = harness.Controller(world, tmp_path).settings
    settings = dataclasses.replace(base, leader_election=election, http=HttpSettings(port=0))
    urls: list[str] = []
    stop = asyncio.Event()
    task = asyncio.create_task(running.run(settings, stop=stop, on_http=urls.append))

    async def role() -> str:
        async with httpx.AsyncClient(base_url=urls[0], timeout=5) as http:
            return str((await http.get("/readyz")).json()["role"])

    async def role_is(expected: str) -> bool:
        return bool(urls) and await role() == expected

    try:
        await eventually(lambda: role_is("leader"), timeout=TIMEOUT, what="leading")
        await harness.create(kube, harness.scale_set_body(world, minRunners=0))
        await eventually(lambda: harness.phase(kube), timeout=TIMEOUT, what="a first phase written")

        fault = world.inject(Fault(verb="update", path="/leases/", code=500, times=None))
        await eventually(lambda: role_is("standby"), timeout=TIMEOUT, what="stepped down")
        await merge_patch(kube, ARS, "arc", {"spec": {"minRunners": 1}})

        async def observed_the_patch() -> bool:
            return any(
                r.kind == ARS and r.body["object"]["spec"].get("minRunners") == 1
                for r in await harness.journaled(settings.journal_path, {RecordType.OBSERVED})
            )

        await eventually(observed_the_patch, timeout=TIMEOUT, what="the patch journaled while standing by")
        assert not await harness.items(kube, ER), "a standby created a runner"
        assert fault.hits >= 2

        world.clear_faults()
        await eventually(lambda: role_is("leader"), timeout=TIMEOUT, what="leading again")
        await eventually(lambda: _one_runner(kube), timeout=TIMEOUT, what="the runner the patch asked for")
    finally:
        stop.set()
        async with asyncio.timeout(30):
            assert await task == 0
    released = await lease(kube)
    assert not released.spec.holder_identity, "the lease was released on stop"
    assert released.spec.lease_transitions == 0, "the same replica held it all along"


async def _one_runner(kube: client.ApiClient) -> bool:
    return len(await harness.items(kube, ER)) == 1
