"""Corners of the scale set's lifecycle that used to fail silently, end to end: the labels new runners get
under ``--exclude-label-propagation-prefix``, a listener annotated by someone else, and a drain that waited
on a runner which never registered.

Real controller (``harness.Controller``), real journal, emulated cluster with the fake GitHub.
"""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from kubernetes_asyncio import client

from sim.world import World
from tests.e2e.controller import harness
from tests.e2e.controller import scenario_steps as steps
from tests.e2e.controller.harness import Controller
from tests.e2e.controller.scenario_steps import ER
from tests.helpers import eventually

EXCLUDED = "internal.example.com/"


@pytest.fixture
async def world() -> AsyncIterator[World]:
    async with harness.github_world() as w:
        yield w


def excluding(controller: Controller, *prefixes: str) -> Controller:
    """``controller`` run with ``--exclude-label-propagation-prefix`` for each of ``prefixes``."""
    machines = dataclasses.replace(controller.settings.machines, exclude_label_prefixes=prefixes)
    controller.settings = dataclasses.replace(controller.settings, machines=machines)
    return controller


async def test_excluded_label_prefixes_are_dropped_from_the_runner_metadata_of_new_runners(
    world: World, kube: client.ApiClient, tmp_path: Path
) -> None:
    async with excluding(Controller(world, tmp_path), EXCLUDED):
        runner_metadata = {
            "labels": {"team": "a", f"{EXCLUDED}cost-center": "42"},
            "annotations": {f"{EXCLUDED}note": "kept"},
        }
        body = harness.scale_set_body(world, minRunners=1, ephemeralRunnerMetadata=runner_metadata)
        body["metadata"]["labels"][f"{EXCLUDED}owner"] = "platform"
        await harness.create(kube, body)

        async def one_runner() -> list[dict[str, object]]:
            return await harness.items(kube, ER)

        (runner,) = await eventually(one_runner, timeout=steps.TIMEOUT, what="the minimum runner created")
        meta = runner["metadata"]
        assert isinstance(meta, dict)
        assert meta["labels"]["team"] == "a"
        assert not [key for key in meta["labels"] if key.startswith(EXCLUDED)], meta["labels"]
        assert meta["annotations"][f"{EXCLUDED}note"] == "kept"  # annotations are not filtered, as upstream
