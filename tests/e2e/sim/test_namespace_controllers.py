"""The emulator's ServiceAccount and namespace controllers through the real client (S58, S66)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from kubernetes_asyncio import client
from kubernetes_asyncio.client.exceptions import ApiException

from sim.world import World
from tests.helpers import eventually


async def is_gone(read: Callable[[], Awaitable[Any]]) -> bool:
    try:
        await read()
    except ApiException as exc:
        if exc.status == 404:
            return True
        raise
    return False


async def test_default_service_account_in_every_namespace(world: World, kube: client.ApiClient) -> None:
    core = client.CoreV1Api(kube)
    # The world's own namespaces have it as soon as the world is up.
    for ns in ("default", "arc-systems"):
        await core.read_namespaced_service_account("default", ns)
    await core.create_namespace({"metadata": {"name": "fresh"}})
    await eventually(lambda: core.read_namespaced_service_account("default", "fresh"), what="default SA")
    # Deleting it brings it back.
    first = await core.read_namespaced_service_account("default", "fresh")
    await core.delete_namespaced_service_account("default", "fresh")

    async def recreated() -> bool:
        sa = await core.read_namespaced_service_account("default", "fresh")
        return bool(sa.metadata.uid != first.metadata.uid)

    await eventually(recreated, what="default SA recreated")


async def test_namespace_deletion_empties_then_removes(world: World, kube: client.ApiClient) -> None:
    core = client.CoreV1Api(kube)
    await core.create_namespace({"metadata": {"name": "doomed"}})
    await eventually(lambda: core.read_namespaced_service_account("default", "doomed"), what="default SA")
    await core.create_namespaced_config_map("doomed", {"metadata": {"name": "plain"}})
    await core.create_namespaced_secret("doomed", {"metadata": {"name": "secret"}, "stringData": {"a": "b"}})
    await core.create_namespaced_config_map(
        "doomed", {"metadata": {"name": "held", "finalizers": ["example.com/hold"]}}
    )
    await core.create_namespaced_pod(
        "doomed", {"metadata": {"name": "pod"}, "spec": {"containers": [{"name": "c", "image": "busybox"}]}}
    )

    async def running() -> bool:
        return (await core.read_namespaced_pod("pod", "doomed")).status.phase == "Running"

    await eventually(running, what="pod running")

    await core.delete_namespace("doomed")
    ns = await core.read_namespace("doomed")
    assert ns.status.phase == "Terminating"

    async def only_held_left() -> bool:
        cms = await core.list_namespaced_config_map("doomed")
        pods = await core.list_namespaced_pod("doomed")
        secrets = await core.list_namespaced_secret("doomed")
        sas = await core.list_namespaced_service_account("doomed")
        return (
            [c.metadata.name for c in cms.items] == ["held"]
            and not pods.items
            and not secrets.items
            and not sas.items
        )

    await eventually(only_held_left, what="namespace content deleted")
    held = await core.read_namespaced_config_map("held", "doomed")
    assert held.metadata.deletion_timestamp is not None
    assert (await core.read_namespace("doomed")).status.phase == "Terminating"

    await core.patch_namespaced_config_map("held", "doomed", {"metadata": {"finalizers": None}})
    await eventually(lambda: is_gone(lambda: core.read_namespace("doomed")), what="namespace removed")
