"""Every request the controller sends in a real run is one the rendered ClusterRole allows.

Inputs: the emulated cluster with the fake GitHub, the real controller (``harness.Controller``) reaching
it with a token of its own, so the emulator's request log tells its requests from the test's and the
simulated listener's; a scale set created, run with one runner, then deleted and cleaned up. Outputs:
each request of the controller, as (API group, resource[/subresource], verb), is granted by the
ClusterRole ``arcsm manifests`` renders; the run used both the Kubernetes effects and the Actions effects
(Secrets created, runners released).
"""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import yaml
from kubernetes_asyncio import client

from controller.installation import manifests, permissions
from controller.installation.permissions import Permission
from controller.loop.kubeconfigs import Source
from sim import routing
from sim.world import World
from tests.e2e.controller import harness
from tests.e2e.controller.harness import CONTROLLER_NS, Controller
from tests.helpers import eventually

TIMEOUT = 30.0
CONTROLLER_USER = "system:serviceaccount:arc-systems:arcsm"


@pytest.fixture
async def world(world_kind: str) -> AsyncIterator[World]:
    async with harness.github_world(world_kind) as w:
        yield w


def controller_kubeconfig(world: World, path: Path) -> Path:
    config = world.kubeconfig()
    config["users"][0]["user"]["token"] = CONTROLLER_USER
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path


def requested(world: World) -> set[Permission]:
    """The permissions the controller's logged requests needed (discovery paths need none)."""
    out = set()
    for request in world.requests:
        if request.user != CONTROLLER_USER:
            continue
        target = routing.parse(world.registry, request.path)
        if isinstance(target, routing.Discovery):
            continue
        kind = target.kind
        resource = f"{kind.plural}/{target.subresource}" if target.subresource else kind.plural
        out.add(Permission(kind.group, resource, request.verb))
    return out


async def test_the_cluster_role_allows_every_request_of_a_full_run(
    world: World, kube: client.ApiClient, tmp_path: Path
) -> None:
    controller = Controller(world, tmp_path)
    controller.settings = dataclasses.replace(
        controller.settings,
        cluster=Source.kubeconfig(controller_kubeconfig(world, tmp_path / "controller.kubeconfig")),
    )
    async with controller:
        await harness.create(kube, harness.scale_set_body(world, minRunners=1))

        async def runner_running() -> bool:
            runners = await harness.items(kube, "EphemeralRunner")
            return any((r.get("status") or {}).get("phase") == "Running" for r in runners)

        await eventually(runner_running, timeout=TIMEOUT, what="one runner Running")
        await harness.delete(kube, "AutoscalingRunnerSet", "arc")

        async def gone() -> bool:
            left = [
                await harness.get(kube, "AutoscalingRunnerSet", "arc"),
                *await harness.items(kube, "EphemeralRunner"),
                *await harness.items(kube, "AutoscalingListener", CONTROLLER_NS),
            ]
            return not any(left)

        await eventually(gone, timeout=TIMEOUT, what="the scale set and its objects gone")

    used = requested(world)
    documents = manifests.render_templates(manifests.Release())
    [cluster_role] = [d for d in documents if d["kind"] == "ClusterRole"]
    rules = cluster_role["rules"]
    denied = sorted(p for p in used if not permissions.allows(rules, p))
    assert not denied, f"the ClusterRole does not allow {denied}"
    # The run went through the effects that read and write Secrets and that release runners.
    assert {
        Permission("", "secrets", "create"),
        Permission("", "secrets", "get"),
        Permission("actions.github.com", "ephemeralrunners", "delete"),
        Permission("", "events", "create"),
        Permission("actions.github.com", "autoscalingrunnersets/status", "patch"),
    } <= used
