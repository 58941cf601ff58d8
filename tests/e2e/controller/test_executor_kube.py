"""The executor's Kubernetes effects against the emulated API server: the world afterwards and the result
body, including the error classes the machines read."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

import pytest
from kubernetes_asyncio import client

from controller.executor.actionsclients import ActionsClients
from controller.executor.executing import Executor, ExecutorSettings
from sim.world import World
from statemachines import effects
from statemachines.effects import ObjectRef
from tests.e2e.controller.executorworld import GROUP, NS, VERSION, JournaledBodies, get, owner_of, pod_body
from tests.helpers import eventually

MERGE_PATCH = "application/merge-patch+json"


def ers_body(name: str) -> dict[str, Any]:
    return {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": "EphemeralRunnerSet",
        "metadata": {"name": name, "namespace": NS, "labels": {"app": "demo"}},
        "spec": {"replicas": 0, "patchID": 0},
    }


async def create(executor: JournaledBodies, kind: str, name: str, body: dict[str, Any]) -> dict[str, Any]:
    return await executor.execute(effects.CreateObject(ObjectRef(kind, NS, name), body))


# -- CreateObject ------------------------------------------------------------------------------------------


async def test_create_object_creates_it_and_a_second_create_counts_as_done(
    executor: JournaledBodies, api: client.ApiClient
) -> None:
    ref = ObjectRef("EphemeralRunnerSet", NS, "demo")

    assert await create(executor, ref.kind, ref.name, ers_body("demo")) == {"ok": True}
    assert await create(executor, ref.kind, ref.name, ers_body("demo")) == {
        "ok": True,
        "alreadyExisted": True,
    }

    ers = await get(api, ref)
    assert ers is not None and ers["metadata"]["labels"] == {"app": "demo"}


async def test_create_object_fills_in_api_version_kind_and_name(
    executor: JournaledBodies, api: client.ApiClient
) -> None:
    body = {"metadata": {"labels": {"a": "b"}}, "data": {"k": "djE="}}
    assert await create(executor, "ConfigMap", "bare", body) == {"ok": True}
    found = await get(api, ObjectRef("ConfigMap", NS, "bare"))
    assert found is not None and found["data"] == {"k": "djE="}


async def test_a_pod_the_server_finds_invalid_is_reported_as_invalid(
    executor: JournaledBodies, api: client.ApiClient
) -> None:
    body = pod_body("bad")
    body["spec"]["containers"] = []

    result = await create(executor, "Pod", "bad", body)

    assert result["ok"] is False and result["error"] == "Invalid"
    assert "containers" in result["message"]
    assert await get(api, ObjectRef("Pod", NS, "bad")) is None


async def test_a_forbidden_pod_create_is_reported_as_forbidden(
    executor: JournaledBodies, api: client.ApiClient
) -> None:
    result = await create(executor, "Pod", "nosa", pod_body("nosa", serviceAccountName="missing"))

    assert result["ok"] is False and result["error"] == "Forbidden"
    assert 'serviceaccount "missing" not found' in result["message"]
    assert await get(api, ObjectRef("Pod", NS, "nosa")) is None


async def test_a_pod_that_already_exists_is_reported_as_already_exists(
    executor: JournaledBodies, api: client.ApiClient
) -> None:
    # The EphemeralRunner machine reads this class: upstream requeues 5 s on it (spec §2.3 step 8).
    assert await create(executor, "Pod", "twice", pod_body("twice")) == {"ok": True}

    result = await create(executor, "Pod", "twice", pod_body("twice"))

    assert result["ok"] is False and result["error"] == "AlreadyExists"


async def test_an_unknown_kind_is_a_failure_not_a_crash(executor: JournaledBodies) -> None:
    result = await create(executor, "Gadget", "x", {})
    assert result["ok"] is False and result["error"] == "UnknownKind"


async def test_an_unreachable_api_server_is_a_failure_not_a_crash(clients: ActionsClients) -> None:
    async with client.ApiClient(client.Configuration(host="http://127.0.0.1:1")) as dead:
        executor = JournaledBodies(
            Executor(api=dead, clients=clients, settings=ExecutorSettings(request_timeout=5))
        )
        result = await create(executor, "ConfigMap", "x", {})
    assert result["ok"] is False and result["error"] == "ServiceUnavailable"


# -- MergePatch --------------------------------------------------------------------------------------------


async def test_merge_patch_is_sent_as_a_json_merge_patch_even_for_core_kinds(
    executor: JournaledBodies, api: client.ApiClient, world: World
) -> None:
    await create(executor, "Pod", "p", pod_body("p"))
    ref = ObjectRef("Pod", NS, "p")

    result = await executor.execute(effects.MergePatch(ref, {"metadata": {"labels": {"x": "1"}}}))

    assert result == {"ok": True}
    pod = await get(api, ref)
    assert pod is not None and pod["metadata"]["labels"] == {"x": "1"}
    patches = [r for r in world.requests if r.verb == "patch" and r.path.endswith("/pods/p")]
    assert [r.content_type for r in patches] == [MERGE_PATCH]


async def test_a_status_patch_goes_to_the_status_subresource(
    executor: JournaledBodies, api: client.ApiClient
) -> None:
    ref = ObjectRef("EphemeralRunnerSet", NS, "s")
    await create(executor, ref.kind, ref.name, ers_body("s"))

    status = effects.MergePatch(
        ref, {"status": {"currentReplicas": 3, "phase": "Running"}}, subresource="status"
    )
    spec_through_status = effects.MergePatch(ref, {"spec": {"replicas": 9}}, subresource="status")

    assert await executor.execute(status) == {"ok": True}
    assert await executor.execute(spec_through_status) == {"ok": True}
    ers = await get(api, ref)
    assert ers is not None
    assert ers["status"] == {"currentReplicas": 3, "phase": "Running"}
    assert ers["spec"]["replicas"] == 0  # the status endpoint ignores the spec


async def test_a_conditional_patch_on_a_moved_object_is_a_conflict(
    executor: JournaledBodies, api: client.ApiClient
) -> None:
    ref = ObjectRef("EphemeralRunnerSet", NS, "c")
    await create(executor, ref.kind, ref.name, ers_body("c"))
    observed = await get(api, ref)
    assert observed is not None
    version = observed["metadata"]["resourceVersion"]
    await executor.execute(effects.MergePatch(ref, {"metadata": {"labels": {"moved": "on"}}}))

    stale = effects.MergePatch(ref, {"metadata": {"finalizers": ["f/x"]}}, resource_version=version)
    result = await executor.execute(stale)

    assert result["ok"] is False and result["error"] == "Conflict"
    ers = await get(api, ref)
    assert ers is not None and not ers["metadata"].get("finalizers")

    fresh = effects.MergePatch(
        ref, {"metadata": {"finalizers": ["f/x"]}}, resource_version=ers["metadata"]["resourceVersion"]
    )
    assert await executor.execute(fresh) == {"ok": True}
    ers = await get(api, ref)
    assert ers is not None and ers["metadata"]["finalizers"] == ["f/x"]


async def test_patching_a_missing_object_is_not_found(executor: JournaledBodies) -> None:
    result = await executor.execute(effects.MergePatch(ObjectRef("Pod", NS, "ghost"), {"metadata": {}}))
    assert result["ok"] is False and result["error"] == "NotFound"


# -- DeleteObject ------------------------------------------------------------------------------------------


async def test_delete_object_with_its_uid_deletes_it(
    executor: JournaledBodies, api: client.ApiClient
) -> None:
    ref = ObjectRef("ConfigMap", NS, "d")
    await create(executor, ref.kind, ref.name, {"data": {}})
    observed = await get(api, ref)
    assert observed is not None

    result = await executor.execute(effects.DeleteObject(ref, uid=observed["metadata"]["uid"]))

    assert result == {"ok": True}
    assert await get(api, ref) is None
    again = await executor.execute(effects.DeleteObject(ref, uid=observed["metadata"]["uid"]))
    assert again == {"ok": True, "alreadyGone": True}


async def test_delete_object_spares_another_object_of_the_same_name(
    executor: JournaledBodies, api: client.ApiClient
) -> None:
    ref = ObjectRef("ConfigMap", NS, "reused")
    await create(executor, ref.kind, ref.name, {"data": {}})

    result = await executor.execute(effects.DeleteObject(ref, uid="uid-of-an-earlier-object"))

    assert result == {"ok": True, "alreadyGone": True}  # the object that decision meant is gone
    assert await get(api, ref) is not None


async def test_delete_object_passes_the_propagation_policy(
    executor: JournaledBodies, api: client.ApiClient, world: World
) -> None:
    owner_ref = ObjectRef("EphemeralRunnerSet", NS, "owner")
    await create(executor, owner_ref.kind, owner_ref.name, ers_body("owner"))
    owner = await get(api, owner_ref)
    assert owner is not None
    child_ref = ObjectRef("ConfigMap", NS, "child")
    child_body = {"metadata": {"ownerReferences": [owner_of(owner, "EphemeralRunnerSet")]}, "data": {}}
    await create(executor, child_ref.kind, child_ref.name, child_body)

    result = await executor.execute(effects.DeleteObject(owner_ref, propagation="Orphan"))

    assert result == {"ok": True}

    async def orphaned() -> bool:
        child = await get(api, child_ref)
        return (
            await get(api, owner_ref) is None
            and child is not None
            and not child["metadata"].get("ownerReferences")
        )

    await eventually(orphaned, timeout=30, what="the owner gone and its child orphaned")
    await world.gc_idle()
    assert await get(api, child_ref) is not None


# -- DeleteMatching ----------------------------------------------------------------------------------------


async def test_delete_matching_deletes_only_the_labelled_objects(
    executor: JournaledBodies, api: client.ApiClient
) -> None:
    for name, labels in (("hook-1", {"runner-pod": "r1"}), ("hook-2", {"runner-pod": "r1"}), ("other", {})):
        body = pod_body(name)
        body["metadata"]["labels"] = labels
        await create(executor, "Pod", name, body)

    result = await executor.execute(effects.DeleteMatching("Pod", NS, "runner-pod=r1"))

    assert result == {"ok": True, "deleted": 2}
    pods = await client.CoreV1Api(api).list_namespaced_pod(NS)
    assert [p.metadata.name for p in pods.items if not p.metadata.deletion_timestamp] == ["other"]


# -- EmitEvent ---------------------------------------------------------------------------------------------


async def test_emit_event_creates_a_core_event_and_counts_repeats(
    executor: JournaledBodies, api: client.ApiClient
) -> None:
    target = ObjectRef("AutoscalingRunnerSet", NS, "arc")
    first = effects.EmitEvent(target, "uid-1", "Warning", "ActionsCallFailed", "GetRunnerScaleSet failed")
    again = effects.EmitEvent(
        target, "uid-1", "Warning", "ActionsCallFailed", "GetRunnerScaleSet failed again"
    )

    assert await executor.execute(first) == {"ok": True, "count": 1}
    assert await executor.execute(again) == {"ok": True, "count": 2}

    events = (await client.CoreV1Api(api).list_namespaced_event(NS)).items
    assert len(events) == 1
    event = events[0]
    assert event.metadata.name.startswith("arc.")
    assert (event.involved_object.kind, event.involved_object.name, event.involved_object.uid) == (
        "AutoscalingRunnerSet",
        "arc",
        "uid-1",
    )
    assert event.involved_object.api_version == "actions.github.com/v1alpha1"
    assert (event.type, event.reason, event.message) == ("Warning", "ActionsCallFailed", again.message)
    assert event.source.component == "arcsm"
    assert event.count == 2
    assert event.first_timestamp is not None and event.last_timestamp >= event.first_timestamp


async def test_events_of_different_reasons_are_different_events(
    executor: JournaledBodies, api: client.ApiClient
) -> None:
    target = ObjectRef("EphemeralRunner", NS, "r")
    await executor.execute(effects.EmitEvent(target, "u", "Normal", "Created", "made"))
    await executor.execute(effects.EmitEvent(target, "u", "Warning", "Failed", "broke"))

    events = (await client.CoreV1Api(api).list_namespaced_event(NS)).items
    assert sorted((e.reason, e.count) for e in events) == [("Created", 1), ("Failed", 1)]


# -- RequeueAfter ------------------------------------------------------------------------------------------


async def test_requeue_after_is_not_executed(executor: JournaledBodies) -> None:
    with pytest.raises(TypeError, match="timer"):
        await executor.execute(effects.RequeueAfter(ObjectRef("EphemeralRunner", NS, "r"), 5.0))


# -- the token bucket --------------------------------------------------------------------------------------


async def test_every_request_takes_a_token_from_the_bucket(
    api: client.ApiClient, clients: ActionsClients, world: World
) -> None:
    # One token, refilled every 1000 s: the first write goes through, the second waits for a token.
    executor = JournaledBodies(
        Executor(api=api, clients=clients, settings=ExecutorSettings(qps=0.001, burst=1))
    )
    assert await create(executor, "ConfigMap", "first", {}) == {"ok": True}

    second = asyncio.create_task(create(executor, "ConfigMap", "second", {}))
    done, _ = await asyncio.wait({second}, timeout=0.2)

    assert not done
    creates = [r for r in world.requests if r.verb == "create" and r.path.endswith("/configmaps")]
    assert len(creates) == 1
    second.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await second


def test_the_bucket_needs_a_positive_rate(api: client.ApiClient, clients: ActionsClients) -> None:
    with pytest.raises(ValueError, match="qps"):
        Executor(api=api, clients=clients, settings=ExecutorSettings(qps=0, burst=1))
