"""Record the journals under ``tests/journals/``: real controller runs against the emulated world.

Run from the repository root: ``python -m tests.journals.record [NAME ...]`` (no names: all of them).
Each scenario starts ``sim.world.World(github=True)``, runs the real controller (``controller.running.run``,
as the e2e harness does, with the default machine settings so ``arcsm replay FILE`` replays it without
options), drives a story, stops the controller and exports its journal to ``tests/journals/NAME.jsonl``
(``store.exporting.export``, what ``arcsm journal export`` runs).
"""

from __future__ import annotations

import asyncio
import dataclasses
import io
import sys
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path

from kubernetes_asyncio import client

from sim.github.fake import GitHubFake, GitHubSettings
from sim.world import World
from statemachines.snapshots import Settings as MachineSettings
from store import exporting
from tests.e2e.controller import harness
from tests.e2e.controller.harness import CONTROLLER_NS, NS, PAT, Controller
from tests.helpers import eventually

HERE = Path(__file__).parent
TIMEOUT = 30.0
OLD_RUNNER_IMAGE = "ghcr.io/actions/actions-runner:2.300.0"  # below MIN_RUNNER_VERSION: the runner exits 7
MIN_RUNNER_VERSION = "2.320.0"

Story = Callable[[World, client.ApiClient], Awaitable[None]]


async def _runner_running(api: client.ApiClient) -> bool:
    runners = await harness.items(api, "EphemeralRunner")
    return any((r.get("status") or {}).get("phase") == "Running" for r in runners)


async def _running(api: client.ApiClient) -> None:
    async def running() -> bool:
        return await harness.phase(api) == "Running"

    await eventually(running, timeout=TIMEOUT, what="the scale set Running")


async def _listener_pod_runs(api: client.ApiClient) -> None:
    async def runs() -> bool:
        pods = await client.CoreV1Api(api).list_namespaced_pod(CONTROLLER_NS)
        return any((pod.status.phase or "") == "Running" for pod in pods.items)

    await eventually(runs, timeout=TIMEOUT, what="the listener pod running")


async def create_running(world: World, api: client.ApiClient) -> None:
    """A scale set with minRunners 1 is created, goes Pending → Running, and its one runner runs."""
    await harness.create(api, harness.scale_set_body(world, minRunners=1))
    await _running(api)
    await _listener_pod_runs(api)
    await eventually(lambda: _runner_running(api), timeout=TIMEOUT, what="one runner Running")


async def delete_cleanup(world: World, api: client.ApiClient) -> None:
    """A running scale set (one runner) is deleted: its runners, runner set and listener are cleaned up."""
    await create_running(world, api)
    await harness.delete(api, "AutoscalingRunnerSet", "arc")

    async def gone() -> bool:
        left = [
            await harness.get(api, "AutoscalingRunnerSet", "arc"),
            await harness.get(api, "EphemeralRunnerSet", "arc"),
            *await harness.items(api, "EphemeralRunner"),
            *await harness.items(api, "AutoscalingListener", CONTROLLER_NS),
        ]
        return not any(left)

    await eventually(gone, timeout=TIMEOUT, what="the scale set and its objects gone")


async def outdated_recovery(world: World, api: client.ApiClient) -> None:
    """The seed's story: the runner image is rejected (the runner exits 7), the scale set parks in Outdated
    with its runner set at replicas 0, patchID 0; a spec update fixes the image and it recovers to Running
    with the actionable revision advanced."""
    body = harness.scale_set_body(world, minRunners=1)
    body["spec"]["template"]["spec"]["containers"][0]["image"] = OLD_RUNNER_IMAGE
    await harness.create(api, body)

    async def parked() -> bool:
        if await harness.phase(api) != "Outdated":
            return False
        ers = await harness.get(api, "EphemeralRunnerSet", "arc")
        spec = (ers or {}).get("spec") or {}
        return spec.get("replicas") == 0 and spec.get("patchID") == 0

    await eventually(parked, timeout=TIMEOUT, what="the scale set parked in Outdated")
    ers = await harness.get(api, "EphemeralRunnerSet", "arc")
    revision = ((ers or {}).get("spec") or {}).get("actionableRevision")
    patch = {
        "spec": {"template": {"spec": {"containers": [{"name": "runner", "image": harness.RUNNER_IMAGE}]}}}
    }
    await client.CustomObjectsApi(api).patch_namespaced_custom_object(  # type: ignore[call-arg]
        harness.GROUP,
        harness.VERSION,
        NS,
        "autoscalingrunnersets",
        "arc",
        patch,
        _content_type="application/merge-patch+json",
    )

    async def recovered() -> bool:
        if await harness.phase(api) != "Running":
            return False
        ers = await harness.get(api, "EphemeralRunnerSet", "arc")
        advanced = ((ers or {}).get("spec") or {}).get("actionableRevision")
        return isinstance(advanced, int) and advanced != revision

    await eventually(recovered, timeout=TIMEOUT, what="the scale set Running again, revision advanced")


STORIES: dict[str, tuple[Story, GitHubSettings]] = {
    "create-running": (create_running, GitHubSettings()),
    "delete-cleanup": (delete_cleanup, GitHubSettings()),
    "outdated-recovery": (outdated_recovery, GitHubSettings(min_runner_version=MIN_RUNNER_VERSION)),
}


async def record(name: str, directory: Path) -> Path:
    story, github = STORIES[name]
    async with World(seed=1, github=GitHubFake(settings=github, seed=1)) as world:
        world.github.allow_pat(PAT)
        try:
            async with client.ApiClient(world.configuration()) as api:
                await harness.create_secret(api)
                controller = Controller(world, directory)
                # The default machine settings, so the recording replays without options.
                controller.settings = dataclasses.replace(controller.settings, machines=MachineSettings())
                async with controller:
                    await story(world, api)
                    await asyncio.sleep(1.0)  # let the last writes come back and settle into the journal
        finally:
            await harness.stop_pods(world)
    out = io.StringIO()
    await exporting.export(controller.journal, out)
    target = HERE / f"{name}.jsonl"
    target.write_text(out.getvalue(), encoding="utf-8")
    return target


async def main(names: list[str]) -> None:
    for name in names or list(STORIES):
        with tempfile.TemporaryDirectory() as directory:
            target = await record(name, Path(directory))
        print(f"{target.name}: {target.stat().st_size} bytes")


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1:]))
