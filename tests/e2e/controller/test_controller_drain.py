"""The drain deferral with idle runners (spec §8 item 2): a runner-spec change on a scale set kept at
``minRunners: 1`` is published once the idle runner is released, and the new runner comes up at the new
revision with the new image. Real controller, emulated cluster, fake GitHub."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from kubernetes_asyncio import client

from sim.world import World
from statemachines import naming
from tests.e2e.controller import harness
from tests.e2e.controller.harness import Controller
from tests.helpers import eventually

pytestmark = pytest.mark.both_worlds

TIMEOUT = 60.0
NEW_IMAGE = "ghcr.io/actions/actions-runner:2.331.0"


@pytest.fixture
async def world(world_kind: str) -> AsyncIterator[World]:
    async with harness.github_world(world_kind) as w:
        yield w


def revision(runner: dict[str, Any]) -> str:
    return str((runner["metadata"].get("annotations") or {}).get(naming.ANNOTATION_ACTIONABLE_REVISION, ""))


def image(runner: dict[str, Any]) -> str:
    return str(runner["spec"]["spec"]["containers"][0]["image"])


async def runners(kube: client.ApiClient) -> list[dict[str, Any]]:
    return await harness.items(kube, "EphemeralRunner")


async def test_an_image_change_with_an_idle_min_runner_is_published_and_the_runner_replaced(
    world: World, kube: client.ApiClient, tmp_path: Path
) -> None:
    async with Controller(world, tmp_path):
        await harness.create(kube, harness.scale_set_body(world, minRunners=1))

        async def one_idle_runner() -> bool:
            found = await runners(kube)
            phases = [(r.get("status") or {}).get("phase") for r in found]
            return phases == ["Running"] and len(world.github.state.agents) == 1

        await eventually(one_idle_runner, timeout=TIMEOUT, what="one idle runner at minRunners")
        assert await harness.phase(kube) == "Running"
        (first,) = await runners(kube)
        old_revision = revision(first)

        template = {"spec": {"containers": [{"name": "runner", "image": NEW_IMAGE}]}}
        await harness.merge_patch(kube, "AutoscalingRunnerSet", "arc", {"spec": {"template": template}})

        async def replaced() -> bool:
            found = await runners(kube)
            return (
                len(found) == 1
                and found[0]["metadata"]["uid"] != first["metadata"]["uid"]
                and image(found[0]) == NEW_IMAGE
                and await harness.phase(kube) == "Running"
            )

        await eventually(replaced, timeout=TIMEOUT, what="the idle runner replaced by one at the new image")
        (second,) = await runners(kube)
        ers = await harness.get(kube, "EphemeralRunnerSet", "arc")
        assert ers is not None
        applied = ers["status"]["appliedActionableRevision"]
        assert ers["spec"]["actionableRevision"] == applied
        assert revision(second) == str(applied) and revision(second) != old_revision
        assert ers["spec"]["replicas"] == 1  # the recreated listener scaled the set back up
        ars = await harness.get(kube, "AutoscalingRunnerSet", "arc")
        assert ars is not None and ars["status"]["observedGeneration"] == ars["metadata"]["generation"]
