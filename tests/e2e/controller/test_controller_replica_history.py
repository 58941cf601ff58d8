"""With two replicas behind one Service, a history answer says which replica gives it and what it lacks.

Replica ``a`` leads and decides; replica ``b`` stands by, journaling what it observes, so its history
holds the phase changes it saw (``source`` observed), not ``a``'s decisions. Either may answer a client
behind the Service. Shown: every phase history answer (``/api/v1/phases`` and an object's ``/phases``)
names the replica that answers and its role, in the body (``answeredBy``) and in headers; the
standby's also names the leader it last saw in the Lease and says what its history lacks; the leader's
lacks nothing it could know of.

Real ``arcsm run --leader-elect`` subprocesses with their own journals, the emulated cluster (or the real
control plane) and the fake GitHub; every wait is on a condition with a deadline.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from kubernetes_asyncio import client

from sim.world import World
from tests.e2e.controller import harness
from tests.e2e.controller.replicas import Replica, Timings, holder
from tests.helpers import eventually

pytestmark = pytest.mark.both_worlds

TIMEOUT = 40.0
TIMINGS = Timings(lease_duration=15, renew_deadline=10, retry_period=0.5)
OBJECT = f"/api/v1/namespaces/{harness.NS}/autoscalingrunnersets/arc/phases"


@pytest.fixture
async def world(world_kind: str) -> AsyncIterator[World]:
    async with harness.github_world(world_kind) as w:
        yield w


async def answered(replica: Replica, path: str) -> tuple[dict[str, Any], httpx.Headers]:
    async with httpx.AsyncClient(base_url=replica.url, timeout=10) as http:
        answer = await http.get(path)
    answer.raise_for_status()
    return answer.json(), answer.headers


async def test_each_replica_says_who_answers_the_history_and_what_it_lacks(
    world: World, kube: client.ApiClient, tmp_path: Path
) -> None:
    a, b = Replica(world, tmp_path, "a", TIMINGS), Replica(world, tmp_path, "b", TIMINGS)
    await a.start()
    try:
        await eventually(lambda: holder(kube), timeout=TIMEOUT, what="a holding the Lease")
        leader = await holder(kube)
        assert leader.startswith("a_"), leader
        await b.start()
        await harness.create(kube, harness.scale_set_body(world))

        async def running() -> bool:
            return await harness.phase(kube) == "Running"

        await eventually(running, timeout=TIMEOUT, what="the scale set Running")
        await eventually(lambda: b.phases(), timeout=TIMEOUT, what="b serving the history it observed")
        assert await b.role() == "standby" and await a.role() == "leader"

        for path in ("/api/v1/phases", OBJECT):
            body, headers = await answered(b, path)
            by = body["answeredBy"]
            assert by["role"] == "standby" and by["identity"].startswith("b_"), by
            assert by["leader"] == leader, by
            assert leader in by["lacks"] and "decisions" in by["lacks"], by
            assert headers["X-Arcsm-Replica"] == by["identity"] and headers["X-Arcsm-Role"] == "standby"
            assert {item["source"] for item in body["items"]} <= {"observed"}, body["items"]

            body, headers = await answered(a, path)
            by = body["answeredBy"]
            assert by == {"identity": leader, "role": "leader", "leader": leader, "lacks": None}, by
            assert headers["X-Arcsm-Replica"] == leader and headers["X-Arcsm-Role"] == "leader"
            assert body["items"] and {item["source"] for item in body["items"]} == {"decided"}
    finally:
        for replica in (b, a):
            if replica.proc is not None:
                assert await replica.terminate() == 0, replica.failure()
