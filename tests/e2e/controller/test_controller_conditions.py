"""The controller end to end: the runner set, the runner and the listener report ``Ready`` conditions.

Real composition root, real journal, emulated cluster with the fake GitHub. A scale set with one runner
comes up; its EphemeralRunnerSet (``Ready``, ``RevisionApplied``), its EphemeralRunner (``Ready``,
``Registered``) and its AutoscalingListener (``Ready``) end up True at their current generation, and
the journal shows no object was written the same conditions twice (a pass that flips a condition back
and forth, or rewrites a settled one, would).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from kubernetes_asyncio import client

from sim.world import World
from store.records import RecordType
from tests.e2e.controller import harness
from tests.e2e.controller.harness import CONTROLLER_NS, Controller
from tests.helpers import eventually

pytestmark = pytest.mark.both_worlds

TIMEOUT = 60.0


@pytest.fixture
async def world(world_kind: str) -> AsyncIterator[World]:
    async with harness.github_world(world_kind) as w:
        yield w


WANTED = {
    "EphemeralRunnerSet": ("Ready", "RevisionApplied"),
    "EphemeralRunner": ("Ready", "Registered"),
    "AutoscalingListener": ("Ready",),
}


def true_at_generation(obj: dict[str, Any], types: tuple[str, ...]) -> bool:
    found = {c["type"]: c for c in (obj.get("status") or {}).get("conditions") or []}
    generation = obj["metadata"].get("generation")
    return all(
        t in found and found[t]["status"] == "True" and found[t]["observedGeneration"] == generation
        for t in types
    )


async def objects(kube: client.ApiClient) -> list[dict[str, Any]]:
    found = await harness.items(kube, "EphemeralRunnerSet")
    found += await harness.items(kube, "EphemeralRunner")
    found += await harness.items(kube, "AutoscalingListener", CONTROLLER_NS)
    return found


async def test_runner_set_runner_and_listener_become_ready_and_write_each_condition_once(
    world: World, kube: client.ApiClient, tmp_path: Path
) -> None:
    async with Controller(world, tmp_path) as controller:
        await harness.create(kube, harness.scale_set_body(world, minRunners=1))

        async def all_ready() -> list[dict[str, Any]]:
            found = await objects(kube)
            kinds = sorted(obj["kind"] for obj in found)
            assert kinds == ["AutoscalingListener", "EphemeralRunner", "EphemeralRunnerSet"], kinds
            states = {
                obj["kind"]: (obj["metadata"].get("generation"), (obj.get("status") or {}).get("conditions"))
                for obj in found
            }
            assert all(true_at_generation(obj, WANTED[obj["kind"]]) for obj in found), states
            return found

        ready = await eventually(all_ready, timeout=TIMEOUT, what="runner set, runner and listener Ready")
        for obj in ready:
            for condition in obj["status"]["conditions"]:
                assert condition["reason"] and "\n" not in condition["message"], condition

        effects = await harness.journaled(controller.journal, {RecordType.EFFECT})
    written: dict[tuple[str, str], list[list[tuple[Any, ...]]]] = defaultdict(list)
    for record in effects:
        body = record.body
        if body.get("type") != "MergePatch" or body.get("subresource") != "status":
            continue
        conditions = (body.get("patch") or {}).get("status", {}).get("conditions")
        if conditions is None or body["target"]["kind"] not in WANTED:
            continue
        key = (body["target"]["kind"], body["target"]["name"])
        seen = [
            (c["type"], c["status"], c["reason"], c["message"], c["observedGeneration"]) for c in conditions
        ]
        written[key].append(seen)
    assert {kind for kind, _ in written} == set(WANTED)
    for key, lists in written.items():
        repeated = [seen for i, seen in enumerate(lists) if seen in lists[:i]]
        assert not repeated, (key, lists)
