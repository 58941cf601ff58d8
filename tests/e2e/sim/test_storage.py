"""Storage in the emulated cluster: StorageClasses, claims, volumes, the local-path provisioner and the
scheduler's volume checks, through kubernetes_asyncio and kubectl.

Inputs: the ``world``, ``kube`` and ``kubeconfig`` fixtures (the world's default class ``standard``:
provisioner ``sim.arcsm.io/local-path``, WaitForFirstConsumer, reclaim policy Delete); Debian's
``kubectl`` for discovery. Outputs: the phases, annotations, finalizers and events of claims and
volumes, the pods' scheduling, and the directories backing the volumes (``World.claim_path``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from kubernetes_asyncio import client
from kubernetes_asyncio.client.exceptions import ApiException

from sim.world import World
from tests.e2e.sim.watch_history import History
from tests.helpers import eventually
from tests.kubectl import get_json, ok, requires_kubectl

NS = "default"
PROVISIONER = "sim.arcsm.io/local-path"


def claim(name: str, *, storage: str = "1Gi", storage_class: str | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": storage}}}
    if storage_class is not None:
        spec["storageClassName"] = storage_class
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": name}, "spec": spec}


def pod_with(name: str, claim_name: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {
            "containers": [
                {
                    "name": "main",
                    "image": "busybox:1.36",
                    "volumeMounts": [{"name": "data", "mountPath": "/data"}],
                }
            ],
            "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": claim_name}}],
        },
    }


def storage_class(name: str, *, binding: str, reclaim: str = "Delete") -> dict[str, Any]:
    return {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": {"name": name},
        "provisioner": PROVISIONER,
        "reclaimPolicy": reclaim,
        "volumeBindingMode": binding,
    }


async def phase_of(core: client.CoreV1Api, name: str) -> str:
    return str((await core.read_namespaced_persistent_volume_claim(name, NS)).status.phase)


async def bound(core: client.CoreV1Api, name: str) -> Any:
    c = await core.read_namespaced_persistent_volume_claim(name, NS)
    return c if c.status.phase == "Bound" else None


async def running(core: client.CoreV1Api, name: str) -> bool:
    return str((await core.read_namespaced_pod(name, NS)).status.phase) == "Running"


async def reasons(core: client.CoreV1Api, name: str) -> list[str]:
    events = await core.list_namespaced_event(NS, field_selector=f"involvedObject.name={name}")
    return [e.reason for e in events.items]


async def has_event(core: client.CoreV1Api, name: str, reason: str) -> bool:
    return reason in await reasons(core, name)


@requires_kubectl
async def test_kubectl_api_resources_lists_the_workload_and_storage_kinds(
    world: World, kubeconfig: Path
) -> None:
    out = await ok(kubeconfig, "api-resources", "--no-headers")
    rows = {line.split()[0]: line.split()[1:] for line in out.splitlines()}
    assert rows["deployments"] == ["deploy", "apps/v1", "true", "Deployment"]
    assert rows["replicasets"] == ["rs", "apps/v1", "true", "ReplicaSet"]
    assert rows["statefulsets"] == ["sts", "apps/v1", "true", "StatefulSet"]
    assert rows["controllerrevisions"] == ["apps/v1", "true", "ControllerRevision"]
    assert rows["persistentvolumeclaims"] == ["pvc", "v1", "true", "PersistentVolumeClaim"]
    assert rows["persistentvolumes"] == ["pv", "v1", "false", "PersistentVolume"]
    assert rows["storageclasses"] == ["sc", "storage.k8s.io/v1", "false", "StorageClass"]
    classes = await get_json(kubeconfig, "sc")
    [standard] = classes["items"]
    assert standard["metadata"]["name"] == "standard"
    assert standard["metadata"]["annotations"] == {"storageclass.kubernetes.io/is-default-class": "true"}
    assert (standard["provisioner"], standard["reclaimPolicy"], standard["volumeBindingMode"]) == (
        PROVISIONER,
        "Delete",
        "WaitForFirstConsumer",
    )


async def test_a_claim_waits_for_its_first_consumer_then_is_provisioned_and_bound(
    world: World, kube: client.ApiClient
) -> None:
    core = client.CoreV1Api(kube)
    created = await core.create_namespaced_persistent_volume_claim(NS, claim("data"))
    # DefaultStorageClass, the claim defaults and the protection finalizer.
    assert created.spec.storage_class_name == "standard"
    assert created.spec.volume_mode == "Filesystem"
    assert created.metadata.finalizers == ["kubernetes.io/pvc-protection"]
    assert created.status.phase == "Pending"
    await eventually(
        lambda: has_event(core, "data", "WaitForFirstConsumer"), what="WaitForFirstConsumer event"
    )
    await world.controllers_idle()
    assert await phase_of(core, "data") == "Pending"
    assert not (await core.list_persistent_volume()).items

    async with (
        History(core.list_namespaced_persistent_volume_claim, NS) as claims,
        History(core.list_namespaced_pod, NS) as pods,
    ):
        await core.create_namespaced_pod(NS, pod_with("app", "data"))
        await eventually(lambda: running(core, "app"), what="the pod running")
    # The pod was bound to the node only once its claim was bound (resourceVersions are one sequence).
    claim_bound = next(
        int(c["metadata"]["resourceVersion"]) for t, c in claims.events if c["status"]["phase"] == "Bound"
    )
    pod_bound = next(
        int(p["metadata"]["resourceVersion"]) for t, p in pods.events if p["spec"].get("nodeName")
    )
    assert claim_bound < pod_bound

    c = await core.read_namespaced_persistent_volume_claim("data", NS)
    assert c.metadata.annotations == {
        "volume.kubernetes.io/selected-node": "sim-node-1",
        "volume.kubernetes.io/storage-provisioner": PROVISIONER,
        "volume.beta.kubernetes.io/storage-provisioner": PROVISIONER,
        "pv.kubernetes.io/bind-completed": "yes",
        "pv.kubernetes.io/bound-by-controller": "yes",
    }
    assert (c.status.access_modes, c.status.capacity) == (["ReadWriteOnce"], {"storage": "1Gi"})
    v = await core.read_persistent_volume(c.spec.volume_name)
    assert v.metadata.name == f"pvc-{c.metadata.uid}"
    assert v.metadata.annotations == {"pv.kubernetes.io/provisioned-by": PROVISIONER}
    assert v.metadata.finalizers == ["kubernetes.io/pv-protection"]
    assert (v.spec.claim_ref.namespace, v.spec.claim_ref.name, v.spec.claim_ref.uid) == (
        NS,
        "data",
        c.metadata.uid,
    )
    assert (v.spec.capacity, v.spec.storage_class_name, v.spec.persistent_volume_reclaim_policy) == (
        {"storage": "1Gi"},
        "standard",
        "Delete",
    )
    assert v.status.phase == "Bound"
    path = world.claim_path(NS, "data")
    assert path is not None and path.is_dir() and str(path) == v.spec.host_path.path
    assert world.state_dir is not None and path.is_relative_to(world.state_dir)
    assert await reasons(core, "data") == [
        "WaitForFirstConsumer",
        "ExternalProvisioning",
        "Provisioning",
        "ProvisioningSucceeded",
    ]


async def test_an_immediate_class_provisions_without_a_consumer(world: World, kube: client.ApiClient) -> None:
    core, storage = client.CoreV1Api(kube), client.StorageV1Api(kube)
    await storage.create_storage_class(storage_class("fast", binding="Immediate"))
    await core.create_namespaced_persistent_volume_claim(NS, claim("quick", storage_class="fast"))
    c = await eventually(lambda: bound(core, "quick"), what="the claim bound without a pod")
    assert "volume.kubernetes.io/selected-node" not in c.metadata.annotations
    assert world.claim_path(NS, "quick") is not None


async def test_deleting_a_claim_waits_for_its_pod_then_removes_the_volume_and_its_directory(
    world: World, kube: client.ApiClient
) -> None:
    core = client.CoreV1Api(kube)
    await core.create_namespaced_persistent_volume_claim(NS, claim("data"))
    await core.create_namespaced_pod(NS, pod_with("app", "data"))
    await eventually(lambda: running(core, "app"), what="the pod running")
    c = await core.read_namespaced_persistent_volume_claim("data", NS)
    path = world.claim_path(NS, "data")
    assert path is not None
    (path / "journal.db").write_text("kept while the claim is")

    await core.delete_namespaced_persistent_volume_claim("data", NS)
    await world.controllers_idle()
    # The PVC protection controller keeps it while a running pod mounts it.
    held = await core.read_namespaced_persistent_volume_claim("data", NS)
    assert held.metadata.deletion_timestamp is not None
    assert held.metadata.finalizers == ["kubernetes.io/pvc-protection"]
    assert held.status.phase == "Bound"
    assert (path / "journal.db").read_text() == "kept while the claim is"

    await core.delete_namespaced_pod("app", NS)

    async def volume_gone() -> bool:
        try:
            await core.read_persistent_volume(c.spec.volume_name)
        except ApiException as exc:
            return exc.status == 404
        return False

    await eventually(volume_gone, what="the volume deleted")
    assert not path.exists()
    assert not (await core.list_namespaced_persistent_volume_claim(NS)).items


async def test_a_pod_whose_claim_is_missing_stays_pending_until_it_exists(
    world: World, kube: client.ApiClient
) -> None:
    core = client.CoreV1Api(kube)
    await core.create_namespaced_pod(NS, pod_with("app", "later"))

    async def unschedulable() -> Any:
        pod = await core.read_namespaced_pod("app", NS)
        return next((c for c in pod.status.conditions or [] if c.type == "PodScheduled"), None)

    condition = await eventually(unschedulable, what="PodScheduled=False")
    message = (
        '0/1 nodes are available: persistentvolumeclaim "later" not found. '
        "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."
    )
    assert (condition.status, condition.reason, condition.message) == ("False", "Unschedulable", message)
    pod = await core.read_namespaced_pod("app", NS)
    assert (pod.spec.node_name, pod.status.phase) == (None, "Pending")
    events = await core.list_namespaced_event(
        NS, field_selector="involvedObject.name=app,reason=FailedScheduling"
    )
    assert [(e.type, e.message) for e in events.items] == [("Warning", message)]

    await core.create_namespaced_persistent_volume_claim(NS, claim("later"))
    await eventually(lambda: running(core, "app"), what="the pod scheduled and running once its claim exists")
    scheduled = next(
        c for c in (await core.read_namespaced_pod("app", NS)).status.conditions if c.type == "PodScheduled"
    )
    assert scheduled.status == "True"


async def test_a_retained_volume_is_released_with_its_directory_kept(
    world: World, kube: client.ApiClient
) -> None:
    core, storage = client.CoreV1Api(kube), client.StorageV1Api(kube)
    await storage.create_storage_class(storage_class("keep", binding="Immediate", reclaim="Retain"))
    await core.create_namespaced_persistent_volume_claim(NS, claim("data", storage_class="keep"))
    c = await eventually(lambda: bound(core, "data"), what="the claim bound")
    path = world.claim_path(NS, "data")
    await core.delete_namespaced_persistent_volume_claim("data", NS)

    async def released() -> Any:
        v = await core.read_persistent_volume(c.spec.volume_name)
        return v if v.status.phase == "Released" else None

    v = await eventually(released, what="the volume released")
    assert v.spec.claim_ref.uid == c.metadata.uid
    assert v.status.last_phase_transition_time is not None
    await world.controllers_idle()
    assert (await core.read_persistent_volume(c.spec.volume_name)).status.phase == "Released"
    assert path is not None and path.is_dir()


async def test_a_static_volume_is_bound_to_a_claim_without_a_class(
    world: World, kube: client.ApiClient, tmp_path: Path
) -> None:
    core = client.CoreV1Api(kube)
    volume = {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {"name": "static"},
        "spec": {
            "capacity": {"storage": "2Gi"},
            "accessModes": ["ReadWriteOnce", "ReadOnlyMany"],
            "storageClassName": "",
            "hostPath": {"path": str(tmp_path)},
        },
    }
    created = await core.create_persistent_volume(volume)
    assert (created.spec.persistent_volume_reclaim_policy, created.status.phase) == ("Retain", "Pending")

    async def available() -> bool:
        return str((await core.read_persistent_volume("static")).status.phase) == "Available"

    await eventually(available, what="the volume available")
    await core.create_namespaced_persistent_volume_claim(NS, claim("mine", storage_class=""))
    c = await eventually(lambda: bound(core, "mine"), what="the claim bound to the static volume")
    assert c.spec.storage_class_name == ""  # an explicit "" is not defaulted
    assert c.spec.volume_name == "static"
    assert c.status.capacity == {"storage": "2Gi"}
    v = await core.read_persistent_volume("static")
    assert v.metadata.annotations == {"pv.kubernetes.io/bound-by-controller": "yes"}
    assert (v.spec.claim_ref.name, v.status.phase) == ("mine", "Bound")
    assert world.claim_path(NS, "mine") == tmp_path


async def test_claim_and_volume_validation(world: World, kube: client.ApiClient) -> None:
    core = client.CoreV1Api(kube)
    bad = claim("bad")
    bad["spec"] = {"resources": {"requests": {}}}
    with pytest.raises(ApiException) as invalid:
        await core.create_namespaced_persistent_volume_claim(NS, bad)
    assert invalid.value.status == 422
    assert "spec.accessModes: Required value: at least 1 access mode is required" in invalid.value.body
    assert "spec.resources[storage]: Required value" in invalid.value.body
    await core.create_namespaced_persistent_volume_claim(NS, claim("data"))
    with pytest.raises(ApiException) as immutable:
        await core.patch_namespaced_persistent_volume_claim(
            "data", NS, {"spec": {"accessModes": ["ReadWriteMany"]}}
        )
    assert immutable.value.status == 422
    assert "spec: Forbidden: spec is immutable after creation" in immutable.value.body


def pod_with_ephemeral(name: str) -> dict[str, Any]:
    template = {"metadata": {"labels": {"kind": "scratch"}}, "spec": claim("unused")["spec"]}
    pod = pod_with(name, "unused")
    pod["spec"]["volumes"] = [{"name": "work", "ephemeral": {"volumeClaimTemplate": template}}]
    return pod


async def test_an_ephemeral_volume_gets_a_claim_that_lives_and_goes_with_its_pod(
    world: World, kube: client.ApiClient
) -> None:
    core = client.CoreV1Api(kube)
    created = await core.create_namespaced_pod(NS, pod_with_ephemeral("job"))
    made = await eventually(lambda: bound(core, "job-work"), timeout=10, what="the claim job-work Bound")
    assert made.metadata.labels == {"kind": "scratch"}
    [owner] = made.metadata.owner_references
    assert (owner.kind, owner.name, owner.uid) == ("Pod", "job", created.metadata.uid)
    assert owner.controller is True and owner.block_owner_deletion is True
    await eventually(lambda: running(core, "job"), timeout=10, what="the pod Running on its volume")
    directory = world.claim_path(NS, "job-work")
    assert directory is not None and directory.is_dir()

    await core.delete_namespaced_pod("job", NS, grace_period_seconds=0)

    async def claim_gone() -> bool:
        try:
            await core.read_namespaced_persistent_volume_claim("job-work", NS)
        except ApiException as exc:
            return exc.status == 404
        return False

    await eventually(claim_gone, timeout=10, what="the claim gone with its pod")
    await eventually(lambda: not directory.exists(), timeout=10, what="the volume's directory removed")


async def test_a_claim_of_the_name_the_pod_does_not_own_is_left_alone(
    world: World, kube: client.ApiClient
) -> None:
    core = client.CoreV1Api(kube)
    await core.create_namespaced_persistent_volume_claim(NS, claim("other-work", storage_class="standard"))
    await core.create_namespaced_pod(NS, pod_with_ephemeral("other"))

    async def warned() -> bool:
        return "FailedBinding" in await reasons(core, "other")

    await eventually(warned, timeout=10, what="a Warning that the claim is not the pod's")
    pending = await core.read_namespaced_pod("other", NS)
    assert pending.status.phase == "Pending" and not pending.spec.node_name
    kept = await core.read_namespaced_persistent_volume_claim("other-work", NS)
    assert not kept.metadata.owner_references
