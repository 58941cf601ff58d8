"""StatefulSets run by the emulator's controllers: ordered pods, claims from templates, revisions and
updates, driven with kubectl and kubernetes_asyncio.

Inputs: the ``world``, ``kube`` and ``kubeconfig`` fixtures; Debian's ``kubectl``. Pods run with the
kubelet's default runtime; claims are provisioned by the world's local-path provisioner (default class
``standard``, WaitForFirstConsumer). Outputs: ``kubectl rollout status statefulset/x``, the pods, claims,
volumes and ControllerRevisions, and the order of events seen by watches started before each change.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from kubernetes_asyncio import client

from sim.world import World
from tests.e2e.sim.watch_history import History, ready
from tests.helpers import eventually
from tests.kubectl import get_json, ok, requires_kubectl

pytestmark = requires_kubectl

NS = "default"
REVISION_LABEL = "controller-revision-hash"


def statefulset(
    name: str = "db",
    *,
    replicas: int = 3,
    image: str = "postgres:16",
    claims: bool = True,
    **spec: Any,
) -> dict[str, Any]:
    body: dict[str, Any] = {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": name},
        "spec": {
            "replicas": replicas,
            "serviceName": name,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {
                    "terminationGracePeriodSeconds": 5,
                    "containers": [
                        {
                            "name": "main",
                            "image": image,
                            "volumeMounts": [{"name": "data", "mountPath": "/data"}],
                        }
                    ],
                },
            },
            **spec,
        },
    }
    if claims:
        body["spec"]["volumeClaimTemplates"] = [
            {
                "metadata": {"name": "data"},
                "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
            }
        ]
    else:
        del body["spec"]["template"]["spec"]["containers"][0]["volumeMounts"]
    return body


async def apply(kubeconfig: Path, body: dict[str, Any]) -> None:
    await ok(kubeconfig, "apply", "-f", "-", stdin=yaml.safe_dump(body))


async def rolled_out(kubeconfig: Path, name: str = "db") -> str:
    return await ok(kubeconfig, "rollout", "status", f"statefulset/{name}", "--timeout=60s")


def ready_after(history: History, name: str) -> int:
    """Index of the first event in which pod ``name`` is Ready."""
    return history.first(lambda t, p: p["metadata"]["name"] == name and ready(p))


def back_ready(history: History, name: str) -> int:
    """Index of the first event, after pod ``name`` was deleted, in which the pod made anew is Ready."""
    gone = deleted_at(history, name)
    return next(
        (
            i
            for i, (_, p) in enumerate(history.events)
            if i > gone >= 0 and p["metadata"]["name"] == name and ready(p)
        ),
        -1,
    )


def deleted_at(history: History, name: str) -> int:
    return history.first(lambda t, p: t == "DELETED" and p["metadata"]["name"] == name)


def added_at(history: History, name: str) -> int:
    return history.first(lambda t, p: t == "ADDED" and p["metadata"]["name"] == name)


async def test_ordered_pods_with_bound_claims_and_rollout_status(
    world: World, kube: client.ApiClient, kubeconfig: Path
) -> None:
    core, apps = client.CoreV1Api(kube), client.AppsV1Api(kube)
    async with History(core.list_namespaced_pod, NS, label_selector="app=db") as pods:
        await apply(kubeconfig, statefulset())
        out = await rolled_out(kubeconfig)
    assert "partitioned roll out complete: 3 new pods have been updated..." in out

    # OrderedReady: each pod is created only once its predecessor is Ready.
    assert 0 <= ready_after(pods, "db-0") < added_at(pods, "db-1")
    assert 0 <= ready_after(pods, "db-1") < added_at(pods, "db-2")

    sts = await apps.read_namespaced_stateful_set("db", NS)
    assert (sts.spec.pod_management_policy, sts.spec.update_strategy.type) == (
        "OrderedReady",
        "RollingUpdate",
    )
    assert sts.spec.update_strategy.rolling_update.partition == 0
    assert sts.spec.persistent_volume_claim_retention_policy.when_deleted == "Retain"
    status = sts.status
    assert (status.replicas, status.ready_replicas, status.available_replicas) == (3, 3, 3)
    assert (status.current_replicas, status.updated_replicas, status.collision_count) == (3, 3, 0)
    assert status.current_revision == status.update_revision
    assert status.observed_generation == sts.metadata.generation
    [revision] = (await apps.list_namespaced_controller_revision(NS)).items
    assert revision.metadata.name == status.update_revision and revision.revision == 1
    assert revision.metadata.owner_references[0].uid == sts.metadata.uid

    for ordinal in range(3):
        name = f"db-{ordinal}"
        pod = await core.read_namespaced_pod(name, NS)
        assert pod.metadata.labels == {
            "app": "db",
            "statefulset.kubernetes.io/pod-name": name,
            "apps.kubernetes.io/pod-index": str(ordinal),
            REVISION_LABEL: status.update_revision,
        }
        assert (pod.spec.hostname, pod.spec.subdomain) == (name, "db")
        [owner] = pod.metadata.owner_references
        assert (owner.kind, owner.uid, owner.controller, owner.block_owner_deletion) == (
            "StatefulSet",
            sts.metadata.uid,
            True,
            True,
        )
        volume = next(v for v in pod.spec.volumes if v.name == "data")
        claim_name = f"data-db-{ordinal}"
        assert volume.persistent_volume_claim.claim_name == claim_name

        claim = await core.read_namespaced_persistent_volume_claim(claim_name, NS)
        assert claim.status.phase == "Bound"
        assert claim.spec.storage_class_name == "standard"
        assert claim.metadata.labels == {"app": "db"}
        assert claim.metadata.annotations["volume.kubernetes.io/selected-node"] == "sim-node-1"
        assert claim.metadata.annotations["pv.kubernetes.io/bind-completed"] == "yes"
        assert claim.metadata.annotations["pv.kubernetes.io/bound-by-controller"] == "yes"
        assert claim.metadata.finalizers == ["kubernetes.io/pvc-protection"]
        assert claim.status.capacity == {"storage": "1Gi"}
        assert not claim.metadata.owner_references  # Retain: the claims outlive the set
        volume = await core.read_persistent_volume(claim.spec.volume_name)
        assert volume.status.phase == "Bound"
        assert (volume.spec.claim_ref.name, volume.spec.claim_ref.uid) == (claim_name, claim.metadata.uid)
        assert volume.spec.persistent_volume_reclaim_policy == "Delete"
        path = world.claim_path(NS, claim_name)
        assert path is not None and path.is_dir() and path == Path(volume.spec.host_path.path)

    # The StatefulSet's pods and claims as kubectl lists them.
    claims = await get_json(kubeconfig, "pvc")
    assert {c["metadata"]["name"]: c["status"]["phase"] for c in claims["items"]} == {
        "data-db-0": "Bound",
        "data-db-1": "Bound",
        "data-db-2": "Bound",
    }


async def test_a_rolling_update_replaces_pods_in_reverse_ordinal_order(
    world: World, kube: client.ApiClient, kubeconfig: Path
) -> None:
    core, apps = client.CoreV1Api(kube), client.AppsV1Api(kube)
    await apply(kubeconfig, statefulset())
    await rolled_out(kubeconfig)
    before = (await apps.read_namespaced_stateful_set("db", NS)).status.current_revision
    claims = {
        c.metadata.name: c.metadata.uid
        for c in (await core.list_namespaced_persistent_volume_claim(NS)).items
    }

    async with History(core.list_namespaced_pod, NS, label_selector="app=db") as pods:
        await apply(kubeconfig, statefulset(image="postgres:17"))
        await rolled_out(kubeconfig)

    deleted = [p["metadata"]["name"] for t, p in pods.events if t == "DELETED"]
    assert deleted == ["db-2", "db-1", "db-0"]
    # Each one goes only once the pod above it is back, ready, at the new revision.
    assert ready_after(pods, "db-2") < pods.first(
        lambda t, p: t == "DELETED" and p["metadata"]["name"] == "db-1"
    )
    sts = await apps.read_namespaced_stateful_set("db", NS)
    assert sts.status.current_revision == sts.status.update_revision != before
    assert (sts.status.current_replicas, sts.status.updated_replicas) == (3, 3)
    for ordinal in range(3):
        pod = await core.read_namespaced_pod(f"db-{ordinal}", NS)
        assert pod.metadata.labels[REVISION_LABEL] == sts.status.update_revision
        assert pod.spec.containers[0].image == "postgres:17"
    revisions = sorted(
        (r.revision, r.metadata.name) for r in (await apps.list_namespaced_controller_revision(NS)).items
    )
    assert revisions == [(1, before), (2, sts.status.update_revision)]
    # The same claims, bound all along: the pods came back to their volumes.
    now = {
        c.metadata.name: c.metadata.uid
        for c in (await core.list_namespaced_persistent_volume_claim(NS)).items
    }
    assert now == claims


async def test_a_partition_keeps_the_lower_ordinals_at_the_current_revision(
    world: World, kube: client.ApiClient, kubeconfig: Path
) -> None:
    core, apps = client.CoreV1Api(kube), client.AppsV1Api(kube)
    strategy = {"type": "RollingUpdate", "rollingUpdate": {"partition": 2}}
    await apply(kubeconfig, statefulset(claims=False, updateStrategy=strategy))
    await rolled_out(kubeconfig)
    await apply(kubeconfig, statefulset(claims=False, image="postgres:17", updateStrategy=strategy))
    out = await rolled_out(kubeconfig)
    assert "partitioned roll out complete: 1 new pods have been updated..." in out

    sts = await apps.read_namespaced_stateful_set("db", NS)
    assert sts.status.current_revision != sts.status.update_revision
    assert (sts.status.current_replicas, sts.status.updated_replicas) == (2, 1)
    images = [(await core.read_namespaced_pod(f"db-{i}", NS)).spec.containers[0].image for i in range(3)]
    assert images == ["postgres:16", "postgres:16", "postgres:17"]

    # A pod below the partition that is deleted comes back at the current revision.
    await core.delete_namespaced_pod("db-0", NS, grace_period_seconds=0)

    async def recreated() -> Any:
        pod = await core.read_namespaced_pod("db-0", NS)
        return pod if pod.status.phase == "Running" else None

    pod = await eventually(recreated, what="db-0 made anew")
    assert pod.metadata.labels[REVISION_LABEL] == sts.status.current_revision
    assert pod.spec.containers[0].image == "postgres:16"


async def test_on_delete_changes_a_pod_only_when_it_is_deleted(
    world: World, kube: client.ApiClient, kubeconfig: Path
) -> None:
    core, apps = client.CoreV1Api(kube), client.AppsV1Api(kube)
    strategy = {"type": "OnDelete"}
    await apply(kubeconfig, statefulset(replicas=2, claims=False, updateStrategy=strategy))

    async def settled(revision_count: int) -> Any:
        sts = await apps.read_namespaced_stateful_set("db", NS)
        revisions = (await apps.list_namespaced_controller_revision(NS)).items
        if sts.status.observed_generation == sts.metadata.generation and len(revisions) == revision_count:
            return sts if sts.status.ready_replicas == 2 else None
        return None

    first = await eventually(lambda: settled(1), what="two pods ready")
    await apply(
        kubeconfig, statefulset(replicas=2, claims=False, image="postgres:17", updateStrategy=strategy)
    )
    sts = await eventually(lambda: settled(2), what="the new revision recorded")
    assert sts.status.update_revision != first.status.update_revision
    assert sts.status.updated_replicas is None  # no pod at the update revision yet
    images = [(await core.read_namespaced_pod(f"db-{i}", NS)).spec.containers[0].image for i in range(2)]
    assert images == ["postgres:16", "postgres:16"]

    await core.delete_namespaced_pod("db-1", NS, grace_period_seconds=0)

    async def updated() -> Any:
        pod = await core.read_namespaced_pod("db-1", NS)
        return (
            pod if pod.spec.containers[0].image == "postgres:17" and pod.status.phase == "Running" else None
        )

    pod = await eventually(updated, what="db-1 made anew at the update revision")
    assert pod.metadata.labels[REVISION_LABEL] == sts.status.update_revision
    assert (await core.read_namespaced_pod("db-0", NS)).spec.containers[0].image == "postgres:16"


async def test_scaling_down_deletes_the_highest_ordinals_first_and_keeps_their_claims(
    world: World, kube: client.ApiClient, kubeconfig: Path
) -> None:
    core = client.CoreV1Api(kube)
    await apply(kubeconfig, statefulset())
    await rolled_out(kubeconfig)
    async with History(core.list_namespaced_pod, NS, label_selector="app=db") as pods:
        await ok(kubeconfig, "scale", "statefulset/db", "--replicas=1")
        await rolled_out(kubeconfig)

        async def one_pod() -> bool:
            return [
                p.metadata.name for p in (await core.list_namespaced_pod(NS, label_selector="app=db")).items
            ] == ["db-0"]

        await eventually(one_pod, what="db-1 and db-2 gone")
    deleted = [p["metadata"]["name"] for t, p in pods.events if t == "DELETED"]
    assert deleted == ["db-2", "db-1"]
    # db-1 was only asked to go once db-2 was gone.
    gone = deleted_at(pods, "db-2")
    asked = pods.first(
        lambda t, p: p["metadata"]["name"] == "db-1" and bool(p["metadata"].get("deletionTimestamp"))
    )
    assert 0 <= gone < asked
    claims = {
        c.metadata.name: c.status.phase
        for c in (await core.list_namespaced_persistent_volume_claim(NS)).items
    }
    assert claims == {"data-db-0": "Bound", "data-db-1": "Bound", "data-db-2": "Bound"}


async def test_parallel_creates_every_pod_at_once(
    world: World, kube: client.ApiClient, kubeconfig: Path
) -> None:
    core = client.CoreV1Api(kube)
    async with History(core.list_namespaced_pod, NS, label_selector="app=db") as pods:
        await apply(kubeconfig, statefulset(claims=False, podManagementPolicy="Parallel"))
        await rolled_out(kubeconfig)
    # The three pods were created before any of them was even scheduled.
    kinds = [(t, p["metadata"]["name"]) for t, p in pods.events]
    assert kinds[:3] == [("ADDED", "db-0"), ("ADDED", "db-1"), ("ADDED", "db-2")]


async def test_when_deleted_delete_removes_the_claims_with_the_set(
    world: World, kube: client.ApiClient, kubeconfig: Path
) -> None:
    core, apps = client.CoreV1Api(kube), client.AppsV1Api(kube)
    policy = {"whenDeleted": "Delete", "whenScaled": "Retain"}
    await apply(kubeconfig, statefulset(replicas=2, persistentVolumeClaimRetentionPolicy=policy))
    await rolled_out(kubeconfig)
    sts = await apps.read_namespaced_stateful_set("db", NS)
    claim = await core.read_namespaced_persistent_volume_claim("data-db-0", NS)
    [owner] = claim.metadata.owner_references
    assert (owner.kind, owner.uid) == ("StatefulSet", sts.metadata.uid)
    paths = [world.claim_path(NS, f"data-db-{i}") for i in range(2)]
    assert all(p is not None and p.is_dir() for p in paths)

    await ok(kubeconfig, "delete", "statefulset/db", "--wait=false")

    async def nothing_left() -> bool:
        claims = (await core.list_namespaced_persistent_volume_claim(NS)).items
        volumes = (await core.list_persistent_volume()).items
        return not claims and not volumes

    await eventually(nothing_left, timeout=15, what="the claims and their volumes deleted")
    assert not any(p is not None and p.exists() for p in paths)


async def test_kubectl_rollout_undo_goes_back_to_the_previous_revision(
    world: World, kube: client.ApiClient, kubeconfig: Path
) -> None:
    apps, core = client.AppsV1Api(kube), client.CoreV1Api(kube)
    await apply(kubeconfig, statefulset(replicas=2, claims=False))
    await rolled_out(kubeconfig)
    first = (await apps.read_namespaced_stateful_set("db", NS)).status.current_revision
    await apply(kubeconfig, statefulset(replicas=2, claims=False, image="postgres:17"))
    await rolled_out(kubeconfig)
    history = await ok(kubeconfig, "rollout", "history", "statefulset/db")
    assert [line.split()[0] for line in history.splitlines()[2:] if line.strip()] == ["1", "2"]

    await ok(kubeconfig, "rollout", "undo", "statefulset/db")
    await rolled_out(kubeconfig)
    sts = await apps.read_namespaced_stateful_set("db", NS)
    # The revision of the first template is reused, renumbered as the newest.
    assert sts.status.current_revision == sts.status.update_revision == first
    numbers = {
        r.metadata.name: r.revision for r in (await apps.list_namespaced_controller_revision(NS)).items
    }
    assert numbers[first] == 3 and len(numbers) == 2
    images = [(await core.read_namespaced_pod(f"db-{i}", NS)).spec.containers[0].image for i in range(2)]
    assert images == ["postgres:16", "postgres:16"]
