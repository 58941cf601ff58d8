"""Corners of the scale set's lifecycle that used to fail silently, end to end: the labels new runners get
under ``--exclude-label-propagation-prefix``, a listener annotated by someone else, and a drain that waited
on a runner which never registered.

Real controller (``harness.Controller``), real journal, emulated cluster with the fake GitHub.
"""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from kubernetes_asyncio import client
from kubernetes_asyncio.client.exceptions import ApiException

from sim.world import World
from tests.e2e.controller import harness
from tests.e2e.controller import scenario_steps as steps
from tests.e2e.controller.harness import CONTROLLER_NS, Controller
from tests.e2e.controller.scenario_steps import AL, ER, ERS
from tests.helpers import eventually
from tests.kubectl import ok, requires_kubectl

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


@requires_kubectl
async def test_an_annotation_someone_else_puts_on_the_listener_does_not_restart_it(
    world: World, kube: client.ApiClient, tmp_path: Path
) -> None:
    kubeconfig = world.write_kubeconfig(tmp_path / "kubectl.kubeconfig")
    async with Controller(world, tmp_path) as controller:
        await steps.start_running(world, kube)
        (listener,) = await steps.listeners(kube)
        name = listener["metadata"]["name"]
        pod = await eventually(
            lambda: listener_pod(kube, name), timeout=steps.TIMEOUT, what="the listener pod"
        )
        mark = await steps.last_seq(controller.journal)

        annotation = "backup.example.com/skip"
        await ok(
            kubeconfig, "annotate", "-n", CONTROLLER_NS, "autoscalinglistener", name, f"{annotation}=true"
        )

        def annotated(obj: dict[str, Any]) -> bool:
            return annotation in ((obj.get("metadata") or {}).get("annotations") or {})

        seen = await eventually(
            lambda: steps.first_observed(controller.journal, AL, annotated, after=mark),
            timeout=steps.TIMEOUT,
            what="the annotated listener observed",
        )
        # A pass that finds nothing to do is not journaled: give the scale set something to record (its
        # runner count, once a runner is made) and read the pass that recorded it, which read the listener.
        await harness.merge_patch(kube, ERS, "arc", {"spec": {"replicas": 1, "patchID": 0}})
        await eventually(
            lambda: ars_decided_after(controller.journal, seen),
            timeout=steps.TIMEOUT,
            what="a scale set pass that read the annotated listener",
        )

        assert not await steps.effects(controller.journal, "DeleteObject", AL, mark), (
            "the listener was deleted"
        )
        (now,) = await steps.listeners(kube)
        assert steps.uid(now) == steps.uid(listener)
        assert steps.uid(await listener_pod(kube, name) or {}) == steps.uid(pod), (
            "the listener pod was recreated"
        )
        assert await harness.phase(kube) == "Running"


async def listener_pod(kube: client.ApiClient, name: str) -> dict[str, Any] | None:
    try:
        pod = await client.CoreV1Api(kube).read_namespaced_pod(name, CONTROLLER_NS)
    except ApiException as exc:
        if exc.status == 404:
            return None
        raise
    found: dict[str, Any] = kube.sanitize_for_serialization(pod)
    return found


async def ars_decided_after(journal: Path, seen: int) -> bool:
    """An ARS decision was journaled that read the journal through ``seen`` or later."""
    return any(int(r.body.get("seq") or 0) >= seen for r in await steps.ars_decisions(journal, seen))
