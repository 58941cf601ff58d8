"""The emulator's garbage collector seen through the real kubernetes_asyncio client (S37, S45-S48).

Inputs: the ``world`` and ``kube`` fixtures (tests/conftest.py). Every wait is an ``eventually`` with a
deadline; ``world.gc_idle()`` is used only to make a "still there" assertion meaningful.
"""

from __future__ import annotations

import functools
from typing import Any

from kubernetes_asyncio import client
from kubernetes_asyncio.client.exceptions import ApiException

from sim.collecting import GarbageCollector
from sim.world import World
from tests.helpers import eventually

NS = "default"
GROUP, VERSION = "actions.github.com", "v1alpha1"
MERGE = "application/merge-patch+json"


def owner_ref(
    obj: Any, *, api_version: str = "v1", kind: str = "ConfigMap", block: bool | None = None
) -> dict[str, Any]:
    ref: dict[str, Any] = {
        "apiVersion": api_version,
        "kind": kind,
        "name": obj.metadata.name,
        "uid": obj.metadata.uid,
    }
    if block is not None:
        ref["blockOwnerDeletion"] = block
    return ref


async def make_cm(
    core: client.CoreV1Api,
    name: str,
    *,
    namespace: str = NS,
    owners: list[dict[str, Any]] | None = None,
    finalizers: list[str] | None = None,
) -> Any:
    metadata: dict[str, Any] = {"name": name}
    if owners:
        metadata["ownerReferences"] = owners
    if finalizers:
        metadata["finalizers"] = finalizers
    return await core.create_namespaced_config_map(namespace, {"metadata": metadata, "data": {"k": "v"}})


async def cm_gone(core: client.CoreV1Api, name: str, namespace: str = NS) -> bool:
    try:
        await core.read_namespaced_config_map(name, namespace)
    except ApiException as exc:
        if exc.status == 404:
            return True
        raise
    return False


async def test_background_cascade_deletes_dependents_and_strips_dangling_refs(
    world: World, kube: client.ApiClient
) -> None:
    core = client.CoreV1Api(kube)
    owner = await make_cm(core, "owner")
    other = await make_cm(core, "other-owner")
    await make_cm(core, "only-child", owners=[owner_ref(owner)])
    await make_cm(core, "shared-child", owners=[owner_ref(owner), owner_ref(other)])

    await core.delete_namespaced_config_map("owner", NS)

    await eventually(lambda: cm_gone(core, "only-child"), what="only-child collected")

    async def shared_lost_dangling_ref() -> bool:
        cm = await core.read_namespaced_config_map("shared-child", NS)
        return [r.uid for r in cm.metadata.owner_references or []] == [other.metadata.uid]

    await eventually(shared_lost_dangling_ref, what="shared-child keeps only its live owner")
    await world.gc_idle()
    assert not await cm_gone(core, "shared-child")


async def test_foreground_waits_for_blocking_dependents(world: World, kube: client.ApiClient) -> None:
    core = client.CoreV1Api(kube)
    owner = await make_cm(core, "fg-owner")
    await make_cm(core, "blocker", owners=[owner_ref(owner, block=True)], finalizers=["example.com/hold"])
    await make_cm(core, "bystander", owners=[owner_ref(owner)])

    await core.delete_namespaced_config_map("fg-owner", NS, propagation_policy="Foreground")
    deleting = await core.read_namespaced_config_map("fg-owner", NS)
    assert deleting.metadata.deletion_timestamp is not None
    assert "foregroundDeletion" in deleting.metadata.finalizers

    async def blocker_terminating() -> bool:
        cm = await core.read_namespaced_config_map("blocker", NS)
        return cm.metadata.deletion_timestamp is not None

    await eventually(blocker_terminating, what="blocking dependent deleted")
    await eventually(lambda: cm_gone(core, "bystander"), what="non-blocking dependent collected")
    await world.gc_idle()
    held = await core.read_namespaced_config_map("fg-owner", NS)
    assert held.metadata.deletion_timestamp is not None
    assert held.metadata.finalizers == ["foregroundDeletion"]

    await core.patch_namespaced_config_map("blocker", NS, {"metadata": {"finalizers": None}})
    await eventually(lambda: cm_gone(core, "blocker"), what="blocker gone")
    await eventually(lambda: cm_gone(core, "fg-owner"), what="owner released once the blocker is gone")


async def test_orphan_strips_refs_then_owner_goes(world: World, kube: client.ApiClient) -> None:
    core = client.CoreV1Api(kube)
    owner = await make_cm(core, "orphan-owner")
    keeper = await make_cm(core, "keeper")
    await make_cm(core, "orphan-a", owners=[owner_ref(owner)])
    await make_cm(core, "orphan-b", owners=[owner_ref(owner), owner_ref(keeper)])

    await core.delete_namespaced_config_map("orphan-owner", NS, propagation_policy="Orphan")

    await eventually(lambda: cm_gone(core, "orphan-owner"), what="owner gone after orphaning")
    await world.gc_idle()
    a = await core.read_namespaced_config_map("orphan-a", NS)
    b = await core.read_namespaced_config_map("orphan-b", NS)
    assert not a.metadata.owner_references
    assert [r.uid for r in b.metadata.owner_references] == [keeper.metadata.uid]


async def test_dependent_of_unknown_uid_is_collected(world: World, kube: client.ApiClient) -> None:
    core = client.CoreV1Api(kube)
    real = await make_cm(core, "real-owner")
    ghost = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "name": "real-owner",
        "uid": "00000000-0000-4000-8000-000000000000",
    }
    await make_cm(core, "dangling", owners=[ghost])
    await make_cm(core, "attached", owners=[owner_ref(real)])

    await eventually(lambda: cm_gone(core, "dangling"), what="dependent of a non-existent uid collected")
    await world.gc_idle()
    assert not await cm_gone(core, "attached")


async def test_cross_namespace_owner_is_absent_and_reported(world: World, kube: client.ApiClient) -> None:
    core = client.CoreV1Api(kube)
    await core.create_namespace({"metadata": {"name": "elsewhere"}})
    owner = await make_cm(core, "ns-owner")
    dependent = await make_cm(core, "cross-child", namespace="elsewhere", owners=[owner_ref(owner)])

    await eventually(
        lambda: cm_gone(core, "cross-child", "elsewhere"), what="cross-namespace dependent collected"
    )

    async def warning() -> Any:
        events = await core.list_namespaced_event("elsewhere")
        return next((e for e in events.items if e.reason == "OwnerRefInvalidNamespace"), None)

    event = await eventually(warning, what="OwnerRefInvalidNamespace event")
    assert event.type == "Warning"
    assert event.involved_object.name == "cross-child"
    assert event.involved_object.uid == dependent.metadata.uid
    assert event.involved_object.kind == "ConfigMap"
    assert owner.metadata.uid in event.message
    assert not await cm_gone(core, "ns-owner")


async def test_custom_resources_cascade(world: World, kube: client.ApiClient) -> None:
    custom = client.CustomObjectsApi(kube)
    ers = await custom.create_namespaced_custom_object(
        GROUP,
        VERSION,
        NS,
        "ephemeralrunnersets",
        {
            "apiVersion": f"{GROUP}/{VERSION}",
            "kind": "EphemeralRunnerSet",
            "metadata": {"name": "set"},
            "spec": {"patchID": 0, "replicas": 1},
        },
    )
    ref = {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": "EphemeralRunnerSet",
        "name": "set",
        "uid": ers["metadata"]["uid"],
        "controller": True,
        "blockOwnerDeletion": True,
    }
    runner_spec = {
        "githubConfigSecret": "s",
        "githubConfigUrl": "https://github.com/o/r",
        "runnerScaleSetId": 1,
    }
    for name in ("runner-a", "runner-b"):
        await custom.create_namespaced_custom_object(
            GROUP,
            VERSION,
            NS,
            "ephemeralrunners",
            {
                "apiVersion": f"{GROUP}/{VERSION}",
                "kind": "EphemeralRunner",
                "metadata": {"name": name, "ownerReferences": [ref]},
                "spec": runner_spec,
            },
        )
    # A merge patch with a new finalizer holds runner-b; the set is deleted in the foreground.
    await custom.patch_namespaced_custom_object(
        GROUP,
        VERSION,
        NS,
        "ephemeralrunners",
        "runner-b",
        {"metadata": {"finalizers": ["actions.github.com/hold"]}},
        _content_type=MERGE,
    )
    await custom.delete_namespaced_custom_object(
        GROUP, VERSION, NS, "ephemeralrunnersets", "set", propagation_policy="Foreground"
    )

    async def runners() -> dict[str, Any]:
        listed = await custom.list_namespaced_custom_object(GROUP, VERSION, NS, "ephemeralrunners")
        return {r["metadata"]["name"]: r for r in listed["items"]}

    async def only_b_terminating() -> bool:
        current = await runners()
        return list(current) == ["runner-b"] and bool(
            current["runner-b"]["metadata"].get("deletionTimestamp")
        )

    await eventually(only_b_terminating, what="runner-a collected, runner-b terminating")
    await world.gc_idle()
    held = await custom.get_namespaced_custom_object(GROUP, VERSION, NS, "ephemeralrunnersets", "set")
    assert held["metadata"]["finalizers"] == ["foregroundDeletion"]

    await custom.patch_namespaced_custom_object(
        GROUP,
        VERSION,
        NS,
        "ephemeralrunners",
        "runner-b",
        {"metadata": {"finalizers": None}},
        _content_type=MERGE,
    )

    async def set_gone() -> bool:
        try:
            await custom.get_namespaced_custom_object(GROUP, VERSION, NS, "ephemeralrunnersets", "set")
        except ApiException as exc:
            return exc.status == 404
        return False

    await eventually(set_gone, what="set gone after its last blocking runner")
    assert await runners() == {}


async def test_recursive_foreground_with_instant_gc() -> None:
    """A chain A ← B ← C (blocking refs), GC without delays: A waits for B, which waits for C."""
    gc = GarbageCollector(delay=(0, 0))
    world = World(seed=2, crd_dir=None, namespaces=("default",), controllers=[gc])
    async with world, client.ApiClient(world.configuration()) as kube:
        core = client.CoreV1Api(kube)
        a = await make_cm(core, "a")
        b = await make_cm(core, "b", owners=[owner_ref(a, block=True)])
        await make_cm(core, "c", owners=[owner_ref(b, block=True)], finalizers=["example.com/hold"])

        await core.delete_namespaced_config_map("a", NS, propagation_policy="Foreground")
        await world.gc_idle()
        held = {n: await core.read_namespaced_config_map(n, NS) for n in ("a", "b", "c")}
        assert held["a"].metadata.finalizers == ["foregroundDeletion"]
        assert held["b"].metadata.finalizers == ["foregroundDeletion"]
        assert held["c"].metadata.deletion_timestamp is not None

        await core.patch_namespaced_config_map("c", NS, {"metadata": {"finalizers": None}})
        for name in ("c", "b", "a"):
            await eventually(functools.partial(cm_gone, core, name), what=f"{name} gone")


async def test_owned_pod_is_terminated_by_kubelet_after_owner_goes(
    world: World, kube: client.ApiClient
) -> None:
    core = client.CoreV1Api(kube)
    owner = await make_cm(core, "pod-owner")
    ref = {**owner_ref(owner, block=True), "controller": True}
    await core.create_namespaced_pod(
        NS,
        {
            "metadata": {"name": "owned", "ownerReferences": [ref]},
            "spec": {"containers": [{"name": "c", "image": "busybox"}]},
        },
    )

    async def running() -> bool:
        return (await core.read_namespaced_pod("owned", NS)).status.phase == "Running"

    await eventually(running, what="owned pod running")
    await core.delete_namespaced_config_map("pod-owner", NS)

    async def pod_gone() -> bool:
        try:
            await core.read_namespaced_pod("owned", NS)
        except ApiException as exc:
            return exc.status == 404
        return False

    await eventually(pod_gone, what="owned pod collected and terminated")
