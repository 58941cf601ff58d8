"""A runner name reused while the predecessor's pod and JIT Secret linger: the new runner takes neither.

Inputs: the emulated cluster with the fake GitHub, the real controller on a real journal, a standalone
EphemeralRunner (no owner, so no runner set counts it) built from a scale set's runner spec. The test holds
the runner's pod and Secret with a finalizer of its own, deletes the runner (the controller removes it from
the service, deletes both, which then linger terminating, and releases the runner), and creates a runner
of the same name again: a new uid.

Outputs: while the predecessor's objects are there, the new runner reads no runner id from the old Secret,
mirrors no phase from the old pod, and says why (``Registered`` False, ``SecretNameTaken``, and a Warning
Event); once the test releases them, it gets a Secret and a pod of its own (owned by its uid) and runs as a
newly registered runner.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from kubernetes_asyncio import client
from kubernetes_asyncio.client.exceptions import ApiException

from sim.world import World
from tests.e2e.controller import harness
from tests.e2e.controller.harness import Controller, required
from tests.e2e.controller.revision_steps import (
    ER,
    ERS,
    TIMEOUT,
    create_scale_set,
    running_with_idle_runners,
    status_of,
)
from tests.helpers import eventually

pytestmark = pytest.mark.both_worlds

NAME = "arc-reused"
HOLD = "example.com/hold"


@pytest.fixture
async def world(world_kind: str) -> AsyncIterator[World]:
    async with harness.github_world(world_kind) as w:
        yield w


async def running(kube: client.ApiClient) -> dict[str, Any]:
    found: list[dict[str, Any]] = []

    async def registered_and_running() -> bool:
        runner = await harness.get(kube, ER, NAME)
        found[:] = [runner] if runner else []
        status = status_of(runner)
        return status.get("phase") == "Running" and bool(status.get("runnerId"))

    await eventually(registered_and_running, timeout=TIMEOUT, what=f"runner {NAME} registered and Running")
    return found[0]


async def pod_and_secret(core: client.CoreV1Api) -> tuple[Any, Any]:
    async def read(kind: str) -> Any:
        try:
            if kind == "Pod":
                return await core.read_namespaced_pod(NAME, harness.NS)
            return await core.read_namespaced_secret(NAME, harness.NS)
        except ApiException as exc:
            if exc.status == 404:
                return None
            raise

    return await read("Pod"), await read("Secret")


def owner_uids(obj: Any) -> list[str]:
    return [ref.uid for ref in obj.metadata.owner_references or []]


async def test_a_reused_runner_name_does_not_adopt_the_predecessors_pod_or_secret(
    world: World, kube: client.ApiClient, tmp_path: Path
) -> None:
    core = client.CoreV1Api(kube)
    async with Controller(world, tmp_path):
        await create_scale_set(world, kube)
        await running_with_idle_runners(world, kube, 0)
        body = harness.standalone_runner(await required(kube, ERS), NAME)
        await harness.create(kube, body)
        old = await running(kube)
        old_uid, old_id = old["metadata"]["uid"], status_of(old)["runnerId"]
        await hold(core, [HOLD])
        try:
            await reuse_the_name(kube, core, body, old_uid, old_id)
        finally:
            await hold(core, None)


async def hold(core: client.CoreV1Api, finalizers: list[str] | None) -> None:
    """Put the test's finalizer on the runner's pod and Secret (``None``: take it off again)."""
    patch = {"metadata": {"finalizers": finalizers}}
    for read, patch_it in (
        (core.read_namespaced_pod, core.patch_namespaced_pod),
        (core.read_namespaced_secret, core.patch_namespaced_secret),
    ):
        try:
            await read(NAME, harness.NS)
        except ApiException as exc:
            if exc.status == 404:
                continue
            raise
        await patch_it(NAME, harness.NS, patch)


async def reuse_the_name(
    kube: client.ApiClient,
    core: client.CoreV1Api,
    body: dict[str, Any],
    old_uid: str,
    old_id: int,
) -> None:
    """Delete the runner, create it again while its pod and Secret linger, then release them."""
    await harness.delete(kube, ER, NAME)

    async def released_and_lingering() -> bool:
        pod, secret = await pod_and_secret(core)
        return (
            await harness.get(kube, ER, NAME) is None
            and pod is not None
            and secret is not None
            and pod.metadata.deletion_timestamp is not None
            and secret.metadata.deletion_timestamp is not None
        )

    await eventually(
        released_and_lingering, timeout=TIMEOUT, what="the runner gone, its pod and Secret terminating"
    )
    new_uid = (await harness.create(kube, body))["metadata"]["uid"]
    assert new_uid != old_uid

    async def decided() -> tuple[dict[str, Any] | None, dict[str, Any]] | None:
        """The new runner and its Registered condition, once it has one, or once the runner is gone."""
        runner = await harness.get(kube, ER, NAME)
        if runner is None or runner["metadata"]["uid"] != new_uid:
            return None, {}
        for found in status_of(runner).get("conditions") or []:
            if found.get("type") == "Registered":
                return runner, found
        return None

    waiting, registered = await eventually(decided, timeout=TIMEOUT, what="the new runner's first decision")
    assert waiting is not None, "the new runner was deleted: it took the predecessor's pod for its own"
    assert "runnerId" not in status_of(waiting), f"the predecessor's runner id was taken: {old_id}"
    assert (registered["status"], registered["reason"]) == ("False", "SecretNameTaken"), registered
    assert "phase" not in status_of(waiting), status_of(waiting)
    events = (await core.list_namespaced_event(harness.NS)).items
    assert any(
        e.reason == "SecretNameTaken" and e.type == "Warning" and e.involved_object.uid == new_uid
        for e in events
    )

    await hold(core, None)
    new = await running(kube)
    assert new["metadata"]["uid"] == new_uid
    assert status_of(new)["runnerId"] != old_id
    pod, secret = await pod_and_secret(core)
    assert owner_uids(pod) == [new_uid] and owner_uids(secret) == [new_uid]
