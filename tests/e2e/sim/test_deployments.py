"""Deployments and ReplicaSets run by the emulator's controllers, driven with kubectl and kubernetes_asyncio.

Inputs: the ``world``, ``kube`` and ``kubeconfig`` fixtures; Debian's ``kubectl``. Pods run with the
kubelet's default runtime (until deleted); readiness is the kubelet's Ready condition. Outputs: what
``kubectl rollout status`` reports, the ReplicaSets and pods the controllers made, and - from watches
started before a change - every intermediate state of a rollout, so the strategies' guarantees are
checked at each step, not only at the end.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from kubernetes_asyncio import client
from kubernetes_asyncio.client.exceptions import ApiException

from sim import validation
from sim.kubelet import Kubelet
from sim.replicasets import ReplicaSetController
from sim.runtimes import FAIL
from sim.scheduling import Scheduler
from sim.world import World
from tests.e2e.sim.watch_history import History, label, ready, terminal, terminating
from tests.helpers import eventually
from tests.kubectl import get_json, kubectl, ok, requires_kubectl

pytestmark = requires_kubectl

NS = "default"
HASH = "pod-template-hash"
REVISION = "deployment.kubernetes.io/revision"


RS_LABELS = {"app": "rs"}


def replica_set(replicas: int, image: str = "a") -> dict[str, Any]:
    """The ReplicaSet ``rs`` of ``replicas`` pods labelled ``RS_LABELS``, one container ``main``."""
    return {
        "metadata": {"name": "rs"},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": RS_LABELS},
            "template": {
                "metadata": {"labels": RS_LABELS},
                "spec": {"containers": [{"name": "main", "image": image}]},
            },
        },
    }


def deployment(
    name: str = "web",
    *,
    replicas: int = 3,
    image: str = "nginx:1.27",
    strategy: dict[str, Any] | None = None,
    **spec: Any,
) -> dict[str, Any]:
    body: dict[str, Any] = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "main", "image": image}]},
            },
            **spec,
        },
    }
    if strategy is not None:
        body["spec"]["strategy"] = strategy
    return body


async def apply(kubeconfig: Path, body: dict[str, Any]) -> None:
    await ok(kubeconfig, "apply", "-f", "-", stdin=yaml.safe_dump(body))


async def rolled_out(kubeconfig: Path, name: str = "web") -> str:
    return await ok(kubeconfig, "rollout", "status", f"deployment/{name}", "--timeout=60s")


async def live_pods(core: client.CoreV1Api, app: str = "web") -> list[Any]:
    """The pods of ``app`` not being deleted."""
    pods = (await core.list_namespaced_pod(NS, label_selector=f"app={app}")).items
    return [p for p in pods if p.metadata.deletion_timestamp is None]


async def test_a_deployment_rolls_out_through_a_replica_set_and_rollout_status_succeeds(
    world: World, kube: client.ApiClient, kubeconfig: Path
) -> None:
    await apply(kubeconfig, deployment(replicas=3))
    assert 'deployment "web" successfully rolled out' in await rolled_out(kubeconfig)

    apps, core = client.AppsV1Api(kube), client.CoreV1Api(kube)
    d = await apps.read_namespaced_deployment("web", NS)
    # The defaults kube-apiserver fills in.
    assert d.spec.strategy.type == "RollingUpdate"
    assert (d.spec.strategy.rolling_update.max_surge, d.spec.strategy.rolling_update.max_unavailable) == (
        "25%",
        "25%",
    )
    assert (d.spec.revision_history_limit, d.spec.progress_deadline_seconds) == (10, 600)
    assert d.spec.template.spec.restart_policy == "Always"
    status = d.status
    assert status.observed_generation == d.metadata.generation
    counts = (status.replicas, status.updated_replicas, status.ready_replicas, status.available_replicas)
    assert counts == (3, 3, 3, 3)
    assert status.unavailable_replicas is None
    conditions = {c.type: (c.status, c.reason) for c in status.conditions}
    assert conditions == {
        "Available": ("True", "MinimumReplicasAvailable"),
        "Progressing": ("True", "NewReplicaSetAvailable"),
    }
    assert d.metadata.annotations[REVISION] == "1"

    [rs] = (await apps.list_namespaced_replica_set(NS)).items
    pod_hash = rs.metadata.labels[HASH]
    assert rs.metadata.name == f"web-{pod_hash}"
    assert rs.spec.selector.match_labels == {"app": "web", HASH: pod_hash}
    assert rs.spec.template.metadata.labels == {"app": "web", HASH: pod_hash}
    assert rs.metadata.annotations == {
        REVISION: "1",
        "deployment.kubernetes.io/desired-replicas": "3",
        "deployment.kubernetes.io/max-replicas": "4",
    }
    [owner] = rs.metadata.owner_references
    assert (owner.kind, owner.name, owner.uid, owner.controller, owner.block_owner_deletion) == (
        "Deployment",
        "web",
        d.metadata.uid,
        True,
        True,
    )
    assert (rs.status.replicas, rs.status.fully_labeled_replicas, rs.status.ready_replicas) == (3, 3, 3)
    assert (rs.status.available_replicas, rs.status.observed_generation) == (3, rs.metadata.generation)

    pods = await live_pods(core)
    assert len(pods) == 3
    for pod in pods:
        suffix = pod.metadata.name.removeprefix(f"web-{pod_hash}-")
        assert len(suffix) == 5 and set(suffix) <= set(validation.GENERATE_NAME_ALPHABET)
        assert pod.metadata.generate_name == f"web-{pod_hash}-"
        [owner] = pod.metadata.owner_references
        assert (owner.kind, owner.uid, owner.controller, owner.block_owner_deletion) == (
            "ReplicaSet",
            rs.metadata.uid,
            True,
            True,
        )
        assert pod.status.phase == "Running"

    # kubectl sees them as it would on a cluster.
    listed = await ok(kubeconfig, "get", "deploy,rs", "-o", "name")
    assert set(listed.split()) == {"deployment.apps/web", f"replicaset.apps/web-{pod_hash}"}
    events = await get_json(kubeconfig, "events", "--field-selector", "involvedObject.kind=Deployment")
    assert [e["message"] for e in events["items"]] == [f"Scaled up replica set web-{pod_hash} from 0 to 3"]


async def test_rolling_update_keeps_within_max_surge_and_max_unavailable(
    world: World, kube: client.ApiClient, kubeconfig: Path
) -> None:
    strategy = {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}}
    await apply(kubeconfig, deployment(replicas=4, strategy=strategy))
    await rolled_out(kubeconfig)
    apps, core = client.AppsV1Api(kube), client.CoreV1Api(kube)
    [old] = (await apps.list_namespaced_replica_set(NS)).items
    old_hash = old.metadata.labels[HASH]

    async with (
        History(apps.list_namespaced_replica_set, NS) as sets,
        History(core.list_namespaced_pod, NS, label_selector="app=web") as pods,
    ):
        await apply(kubeconfig, deployment(replicas=4, image="nginx:1.28", strategy=strategy))
        await rolled_out(kubeconfig)

        async def old_pods_gone() -> bool:
            return all(p.metadata.labels[HASH] != old_hash for p in await live_pods(core))

        await eventually(old_pods_gone, what="the old pods deleted")

    # Every step: the sets together ask for at most replicas + maxSurge pods, and the surge was used.
    wanted = [sum(rs["spec"]["replicas"] for rs in state.values()) for state in sets.states()]
    assert max(wanted) == 5
    # Every step: at least replicas - maxUnavailable pods are ready and not being deleted.
    for state in pods.states():
        assert sum(1 for p in state.values() if ready(p) and not terminating(p)) >= 4

    d = await apps.read_namespaced_deployment("web", NS)
    assert d.metadata.annotations[REVISION] == "2"
    by_name = {rs.metadata.name: rs for rs in (await apps.list_namespaced_replica_set(NS)).items}
    new = next(rs for name, rs in by_name.items() if name != old.metadata.name)
    assert (by_name[old.metadata.name].spec.replicas, new.spec.replicas) == (0, 4)
    assert new.metadata.annotations[REVISION] == "2"
    assert new.spec.template.spec.containers[0].image == "nginx:1.28"
    current = await live_pods(core)
    assert {p.metadata.labels[HASH] for p in current} == {new.metadata.labels[HASH]}
    assert len(current) == 4


async def test_recreate_never_runs_old_and_new_pods_at_once(
    world: World, kube: client.ApiClient, kubeconfig: Path
) -> None:
    await apply(kubeconfig, deployment(replicas=3, strategy={"type": "Recreate"}))
    await rolled_out(kubeconfig)
    apps, core = client.AppsV1Api(kube), client.CoreV1Api(kube)
    [old] = (await apps.list_namespaced_replica_set(NS)).items
    old_hash = old.metadata.labels[HASH]

    async with (
        History(apps.list_namespaced_replica_set, NS) as sets,
        History(core.list_namespaced_pod, NS, label_selector="app=web") as pods,
    ):
        await apply(kubeconfig, deployment(replicas=3, image="nginx:1.28", strategy={"type": "Recreate"}))
        await rolled_out(kubeconfig)

    new_hashes = {label(p, HASH) for state in pods.states() for p in state.values()} - {old_hash}
    assert len(new_hashes) == 1
    for state in pods.states():
        old_running = [p for p in state.values() if label(p, HASH) == old_hash and not terminal(p)]
        new_pods = [p for p in state.values() if label(p, HASH) in new_hashes]
        assert not (old_running and new_pods), "old pods were still running when new ones were created"
    # The new set was created only once the old one had been scaled to zero.
    created = sets.first(lambda t, rs: t == "ADDED")
    scaled_down = sets.first(
        lambda t, rs: rs["metadata"]["name"] == old.metadata.name and rs["spec"]["replicas"] == 0
    )
    assert 0 <= scaled_down < created
    current = await live_pods(core)
    assert len(current) == 3 and {p.metadata.labels[HASH] for p in current} == new_hashes


async def test_kubectl_scale_resizes_the_replica_set(
    world: World, kube: client.ApiClient, kubeconfig: Path
) -> None:
    await apply(kubeconfig, deployment(replicas=2))
    await rolled_out(kubeconfig)
    apps, core = client.AppsV1Api(kube), client.CoreV1Api(kube)

    await ok(kubeconfig, "scale", "deployment/web", "--replicas=5")
    await rolled_out(kubeconfig)
    assert len(await live_pods(core)) == 5
    scale = await get_json(kubeconfig, "deployment", "web", "--subresource=scale")
    assert (scale["kind"], scale["spec"], scale["status"]) == (
        "Scale",
        {"replicas": 5},
        {"replicas": 5, "selector": "app=web"},
    )

    await ok(kubeconfig, "scale", "deployment/web", "--replicas=1")

    async def one_left() -> bool:
        return len((await core.list_namespaced_pod(NS, label_selector="app=web")).items) == 1

    await eventually(one_left, what="the surplus pods deleted")
    [rs] = (await apps.list_namespaced_replica_set(NS)).items
    assert rs.spec.replicas == 1
    assert rs.metadata.annotations["deployment.kubernetes.io/desired-replicas"] == "1"
    await rolled_out(kubeconfig)
    d = await apps.read_namespaced_deployment("web", NS)
    assert (d.status.replicas, d.status.available_replicas) == (1, 1)
    events = await get_json(kubeconfig, "events", "--field-selector", "reason=ScalingReplicaSet")
    name = rs.metadata.name
    assert [e["message"] for e in events["items"]] == [
        f"Scaled up replica set {name} from 0 to 2",
        f"Scaled up replica set {name} from 2 to 5",
        f"Scaled down replica set {name} from 5 to 1",
    ]


async def test_a_replica_set_adopts_orphans_and_scales_down_unscheduled_then_not_ready_pods_first(
    world: World, kube: client.ApiClient
) -> None:
    core, apps = client.CoreV1Api(kube), client.AppsV1Api(kube)
    labels = RS_LABELS
    container = [{"name": "main", "image": "nginx:1.27"}]
    unscheduled = {"metadata": {"name": "unscheduled", "labels": labels}}
    unscheduled["spec"] = {"schedulerName": "nobody", "containers": container}
    stuck = {"metadata": {"name": "stuck", "labels": labels, "annotations": {FAIL: "ErrImagePull"}}}
    stuck["spec"] = {"containers": container}
    for pod in (unscheduled, stuck):
        await core.create_namespaced_pod(NS, pod)
    rs = await apps.create_namespaced_replica_set(NS, replica_set(4, image="nginx:1.27"))

    async def replicas(want: int, ready_count: int) -> bool:
        current = await apps.read_namespaced_replica_set("rs", NS)
        return current.status.replicas == want and (current.status.ready_replicas or 0) == ready_count

    await eventually(lambda: replicas(4, 2), what="two orphans adopted and two pods made")
    for name in ("unscheduled", "stuck"):
        [owner] = (await core.read_namespaced_pod(name, NS)).metadata.owner_references
        assert (owner.kind, owner.uid, owner.controller) == ("ReplicaSet", rs.metadata.uid, True)

    async def names() -> set[str]:
        return {p.metadata.name for p in await live_pods(core, "rs")}

    await apps.patch_namespaced_replica_set("rs", NS, {"spec": {"replicas": 3}})
    await eventually(lambda: replicas(3, 2), what="scaled to 3")
    assert "unscheduled" not in await names() and "stuck" in await names()
    await apps.patch_namespaced_replica_set("rs", NS, {"spec": {"replicas": 2}})
    await eventually(lambda: replicas(2, 2), what="scaled to 2")
    assert "stuck" not in await names()


async def test_revision_history_limit_deletes_the_oldest_replica_sets(
    world: World, kube: client.ApiClient, kubeconfig: Path
) -> None:
    apps = client.AppsV1Api(kube)
    for image in ("nginx:1.25", "nginx:1.26", "nginx:1.27", "nginx:1.28"):
        await apply(kubeconfig, deployment(replicas=1, image=image, revisionHistoryLimit=1))
        await rolled_out(kubeconfig)

    async def two_sets() -> list[Any]:
        sets = (await apps.list_namespaced_replica_set(NS)).items
        return sets if len(sets) == 2 else []

    sets = await eventually(two_sets, what="only the new set and one old one left")
    revisions = sorted(
        (int(rs.metadata.annotations[REVISION]), rs.spec.template.spec.containers[0].image) for rs in sets
    )
    assert revisions == [(3, "nginx:1.27"), (4, "nginx:1.28")]


async def test_a_paused_deployment_rolls_nothing_out_until_resumed(
    world: World, kube: client.ApiClient, kubeconfig: Path
) -> None:
    apps = client.AppsV1Api(kube)
    await apply(kubeconfig, deployment(replicas=2))
    await rolled_out(kubeconfig)
    await ok(kubeconfig, "rollout", "pause", "deployment/web")
    await apply(kubeconfig, deployment(replicas=2, image="nginx:1.28"))

    async def observed() -> Any:
        d = await apps.read_namespaced_deployment("web", NS)
        return d if d.status.observed_generation == d.metadata.generation else None

    d = await eventually(observed, what="the paused spec observed")
    progressing = next(c for c in d.status.conditions if c.type == "Progressing")
    assert (progressing.status, progressing.reason, progressing.message) == (
        "Unknown",
        "DeploymentPaused",
        "Deployment is paused",
    )
    assert len((await apps.list_namespaced_replica_set(NS)).items) == 1

    await ok(kubeconfig, "rollout", "resume", "deployment/web")
    await rolled_out(kubeconfig)
    sets = (await apps.list_namespaced_replica_set(NS)).items
    assert sorted(rs.spec.replicas for rs in sets) == [0, 2]


async def test_a_rollout_without_progress_exceeds_its_deadline(
    world: World, kube: client.ApiClient, kubeconfig: Path
) -> None:
    apps = client.AppsV1Api(kube)
    body = deployment(replicas=1, progressDeadlineSeconds=1)
    body["spec"]["template"]["metadata"]["annotations"] = {FAIL: "ErrImagePull"}
    await apply(kubeconfig, body)

    async def timed_out() -> Any:
        d = await apps.read_namespaced_deployment("web", NS)
        return next(
            (
                c
                for c in d.status.conditions or []
                if c.type == "Progressing" and c.reason == "ProgressDeadlineExceeded"
            ),
            None,
        )

    condition = await eventually(timed_out, timeout=20, what="ProgressDeadlineExceeded")
    [rs] = (await apps.list_namespaced_replica_set(NS)).items
    assert condition.status == "False"
    assert condition.message == f'ReplicaSet "{rs.metadata.name}" has timed out progressing.'
    code, _, err = await kubectl(kubeconfig, "rollout", "status", "deployment/web", "--timeout=30s")
    assert code != 0 and 'deployment "web" exceeded its progress deadline' in err


async def test_a_single_replica_deployment_with_a_journal_claim_rolls_out(
    world: World, kube: client.ApiClient, kubeconfig: Path
) -> None:
    # The shape of a chart's single-replica installation: a claim for the journal, a Deployment that
    # mounts it (Recreate: a ReadWriteOnce volume has one writer), a Service and a PodDisruptionBudget.
    journal = {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": "journal"},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
    }
    body = deployment(replicas=1, strategy={"type": "Recreate"})
    pod_spec = body["spec"]["template"]["spec"]
    pod_spec["containers"][0]["volumeMounts"] = [{"name": "journal", "mountPath": "/var/lib/arcsm"}]
    pod_spec["volumes"] = [{"name": "journal", "persistentVolumeClaim": {"claimName": "journal"}}]
    service = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "web"},
        "spec": {"selector": {"app": "web"}, "ports": [{"port": 8080}]},
    }
    budget = {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": "web"},
        "spec": {"maxUnavailable": 1, "selector": {"matchLabels": {"app": "web"}}},
    }
    await ok(kubeconfig, "apply", "-f", "-", stdin=yaml.safe_dump_all([journal, body, service, budget]))
    await rolled_out(kubeconfig)

    core = client.CoreV1Api(kube)
    [pod] = await live_pods(core)
    assert pod.status.phase == "Running"
    assert next(c for c in pod.status.conditions if c.type == "Ready").status == "True"
    claim = await core.read_namespaced_persistent_volume_claim("journal", NS)
    assert claim.status.phase == "Bound"
    path = world.claim_path(NS, "journal")
    assert path is not None and path.is_dir()
    listed = await ok(kubeconfig, "get", "all", "-o", "name")
    assert {"deployment.apps/web", "service/web", f"pod/{pod.metadata.name}"} <= set(listed.split())


async def test_a_replica_set_whose_pods_are_refused_reports_it_and_tries_again() -> None:
    # Without the ServiceAccount controller nothing makes a namespace's default ServiceAccount, so
    # ServiceAccount admission refuses the set's pods until the test makes it.
    controllers = [ReplicaSetController(), Scheduler(), Kubelet()]
    async with (
        World(seed=1, crd_dir=None, controllers=controllers) as world,
        client.ApiClient(world.configuration()) as kube,
    ):
        core, apps = client.CoreV1Api(kube), client.AppsV1Api(kube)
        await apps.create_namespaced_replica_set(NS, replica_set(2))

        async def failure() -> Any:
            rs = await apps.read_namespaced_replica_set("rs", NS)
            return next((c for c in rs.status.conditions or [] if c.type == "ReplicaFailure"), None)

        condition = await eventually(failure, what="the ReplicaFailure condition")
        assert (condition.status, condition.reason) == ("True", "FailedCreate")
        assert 'serviceaccount "default" not found' in condition.message
        events = await core.list_namespaced_event(NS, field_selector="reason=FailedCreate")
        assert events.items and events.items[0].type == "Warning"

        await core.create_namespaced_service_account(NS, {"metadata": {"name": "default"}})

        async def recovered() -> bool:
            rs = await apps.read_namespaced_replica_set("rs", NS)
            return rs.status.ready_replicas == 2 and not rs.status.conditions

        await eventually(recovered, timeout=15, what="the pods made on a later try")


async def test_the_scale_subresource_reads_and_writes_spec_replicas(
    world: World, kube: client.ApiClient
) -> None:
    apps = client.AppsV1Api(kube)
    rs = await apps.create_namespaced_replica_set(NS, replica_set(1))
    scale = await apps.read_namespaced_replica_set_scale("rs", NS)
    assert (scale.spec.replicas, scale.metadata.uid) == (1, rs.metadata.uid)

    patched = await apps.patch_namespaced_replica_set_scale("rs", NS, {"spec": {"replicas": 3}})
    assert patched.spec.replicas == 3
    current = await apps.read_namespaced_replica_set("rs", NS)
    assert (current.spec.replicas, current.metadata.generation) == (3, 2)

    stale = {
        "metadata": {"name": "rs", "resourceVersion": rs.metadata.resource_version},
        "spec": {"replicas": 0},
    }
    with pytest.raises(ApiException) as conflict:
        await apps.replace_namespaced_replica_set_scale("rs", NS, stale)
    assert conflict.value.status == 409
    assert json.loads(conflict.value.body)["message"].startswith(
        'Operation cannot be fulfilled on replicasets.apps "rs": the object has been modified'
    )

    async def status_caught_up() -> bool:
        scale = await apps.read_namespaced_replica_set_scale("rs", NS)
        return scale.status.replicas == 3 and scale.status.selector == "app=rs"

    await eventually(status_caught_up, what="the Scale's status")


async def test_kubectl_rollout_undo_brings_the_previous_replica_set_back_at_a_new_revision(
    world: World, kube: client.ApiClient, kubeconfig: Path
) -> None:
    apps = client.AppsV1Api(kube)
    await apply(kubeconfig, deployment(replicas=2, image="nginx:1.27"))
    await rolled_out(kubeconfig)
    [first] = (await apps.list_namespaced_replica_set(NS)).items
    await apply(kubeconfig, deployment(replicas=2, image="nginx:1.28"))
    await rolled_out(kubeconfig)
    history = await ok(kubeconfig, "rollout", "history", "deployment/web")
    assert [line.split()[0] for line in history.splitlines()[2:] if line.strip()] == ["1", "2"]

    await ok(kubeconfig, "rollout", "undo", "deployment/web")
    await rolled_out(kubeconfig)
    back = await apps.read_namespaced_replica_set(first.metadata.name, NS)
    assert back.spec.replicas == 2
    assert back.metadata.annotations[REVISION] == "3"
    assert back.metadata.annotations["deployment.kubernetes.io/revision-history"] == "1"
    d = await apps.read_namespaced_deployment("web", NS)
    assert d.metadata.annotations[REVISION] == "3"
    assert d.spec.template.spec.containers[0].image == "nginx:1.27"
    assert len((await apps.list_namespaced_replica_set(NS)).items) == 2
