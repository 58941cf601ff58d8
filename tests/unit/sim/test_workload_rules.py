"""Unit tests of the apps/v1 and storage registry rules (sim.workloads, sim.persistentvolumes) and of the
ReplicaSet controller's scale-down order (sim.replicasets.pods_to_delete). Expected defaults and
messages are kube-apiserver's; the order is kube-controller-manager's ActivePodsWithRanks."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from sim import persistentvolumes, replicasets, workloads

NOW = datetime(2025, 1, 1, tzinfo=UTC)


def stamp(seconds_ago: float) -> str:
    return (NOW - timedelta(seconds=seconds_ago)).strftime("%Y-%m-%dT%H:%M:%SZ")


def template(labels: dict[str, str] | None = None, **spec: Any) -> dict[str, Any]:
    return {
        "metadata": {"labels": labels or {"app": "a"}},
        "spec": {"containers": [{"name": "main", "image": "nginx:1.27"}], **spec},
    }


def workload(kind: str, **spec: Any) -> dict[str, Any]:
    return {
        "metadata": {"name": "w", "namespace": "ns"},
        "spec": {"selector": {"matchLabels": {"app": "a"}}, "template": template(), **spec},
    }


def texts(kind: str, obj: dict[str, Any]) -> list[str]:
    return [str(e) for e in workloads.validate(kind, workloads.prepare(kind, obj))]


def test_deployment_defaults() -> None:
    spec = workloads.prepare("Deployment", workload("Deployment"))["spec"]
    assert spec["replicas"] == 1
    assert spec["strategy"] == {
        "type": "RollingUpdate",
        "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"},
    }
    assert (spec["revisionHistoryLimit"], spec["progressDeadlineSeconds"]) == (10, 600)
    pod_spec = spec["template"]["spec"]
    assert (pod_spec["restartPolicy"], pod_spec["dnsPolicy"], pod_spec["terminationGracePeriodSeconds"]) == (
        "Always",
        "ClusterFirst",
        30,
    )
    assert pod_spec["containers"][0]["imagePullPolicy"] == "IfNotPresent"
    recreate = workloads.prepare("Deployment", workload("Deployment", strategy={"type": "Recreate"}))
    assert recreate["spec"]["strategy"] == {"type": "Recreate"}


def test_statefulset_defaults() -> None:
    claim = {"metadata": {"name": "data"}, "spec": {"accessModes": ["ReadWriteOnce"]}}
    spec = workloads.prepare("StatefulSet", workload("StatefulSet", volumeClaimTemplates=[claim]))["spec"]
    assert spec["podManagementPolicy"] == "OrderedReady"
    assert spec["updateStrategy"] == {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}}
    assert spec["persistentVolumeClaimRetentionPolicy"] == {"whenDeleted": "Retain", "whenScaled": "Retain"}
    assert (spec["replicas"], spec["revisionHistoryLimit"]) == (1, 10)
    [defaulted] = spec["volumeClaimTemplates"]
    assert (defaulted["spec"]["volumeMode"], defaulted["status"]) == ("Filesystem", {"phase": "Pending"})
    # A type given without rollingUpdate gets no partition (only a defaulted type does); the alpha
    # maxUnavailable is dropped.
    given = workloads.prepare(
        "StatefulSet", workload("StatefulSet", updateStrategy={"type": "RollingUpdate"})
    )
    assert given["spec"]["updateStrategy"] == {"type": "RollingUpdate"}
    alpha = {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 2}}
    dropped = workloads.prepare("StatefulSet", workload("StatefulSet", updateStrategy=alpha))
    assert dropped["spec"]["updateStrategy"]["rollingUpdate"] == {"partition": 0}


@pytest.mark.parametrize(
    ("kind", "spec", "message"),
    [
        (
            "Deployment",
            {"template": template({"app": "b"})},
            'spec.template.metadata.labels: Invalid value: {"app":"b"}: '
            "`selector` does not match template `labels`",
        ),
        (
            "Deployment",
            {"selector": {}},
            "spec.selector: Invalid value: {}: empty selector is invalid for deployment",
        ),
        (
            "Deployment",
            {"strategy": {"type": "Recreate", "rollingUpdate": {}}},
            "spec.strategy.rollingUpdate: Forbidden: may not be specified when strategy `type` is 'Recreate'",
        ),
        (
            "Deployment",
            {"strategy": {"rollingUpdate": {"maxSurge": 0, "maxUnavailable": "0%"}}},
            'spec.strategy.rollingUpdate.maxUnavailable: Invalid value: "0%": '
            "may not be 0 when `maxSurge` is 0",
        ),
        (
            "Deployment",
            {"strategy": {"rollingUpdate": {"maxSurge": "1x"}}},
            'spec.strategy.rollingUpdate.maxSurge: Invalid value: "1x": a valid percent string must be a '
            "numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is "
            "'[0-9]+%')",
        ),
        (
            "Deployment",
            {"minReadySeconds": 600},
            "spec.progressDeadlineSeconds: Invalid value: 600: must be greater than minReadySeconds",
        ),
        (
            "ReplicaSet",
            {"template": template(restartPolicy="Never")},
            'spec.template.spec.restartPolicy: Unsupported value: "Never": supported values: "Always"',
        ),
        (
            "ReplicaSet",
            {"replicas": -1},
            "spec.replicas: Invalid value: -1: must be greater than or equal to 0",
        ),
        (
            "StatefulSet",
            {"updateStrategy": {"type": "OnDelete", "rollingUpdate": {"partition": 1}}},
            'spec.updateStrategy.rollingUpdate: Invalid value: {"partition":1}: '
            "only allowed for updateStrategy 'RollingUpdate'",
        ),
        (
            "StatefulSet",
            {
                "volumeClaimTemplates": [
                    {"metadata": {"name": "data"}, "spec": {"accessModes": ["ReadWriteOnce"]}}
                ]
            },
            "spec.volumeClaimTemplates[0].spec.resources[storage]: Required value",
        ),
    ],
)
def test_workload_validation(kind: str, spec: dict[str, Any], message: str) -> None:
    body = workload(kind)
    body["spec"].update(spec)
    assert message in texts(kind, body)


def test_immutable_fields() -> None:
    old = workloads.prepare("StatefulSet", workload("StatefulSet", serviceName="a"))
    new = workloads.prepare(
        "StatefulSet", {**old, "spec": {**old["spec"], "serviceName": "b", "replicas": 3}}
    )
    assert [str(e) for e in workloads.validate_update("StatefulSet", old, new)] == [
        f"spec: Forbidden: {workloads.STATEFULSET_UPDATABLE}"
    ]
    scaled = workloads.prepare("StatefulSet", {**old, "spec": {**old["spec"], "replicas": 3}})
    assert workloads.validate_update("StatefulSet", old, scaled) == []
    moved = {**old, "spec": {**old["spec"], "selector": {"matchLabels": {"app": "a", "x": "y"}}}}
    moved["spec"]["template"] = template({"app": "a", "x": "y"})
    assert any(
        str(e).startswith("spec.selector: Invalid value") and str(e).endswith("field is immutable")
        for e in workloads.validate_update("StatefulSet", old, workloads.prepare("StatefulSet", moved))
    )


def test_claim_defaults_admission_and_the_default_class() -> None:
    classes = [
        {
            "metadata": {
                "name": "old",
                "creationTimestamp": stamp(60),
                "annotations": {persistentvolumes.DEFAULT_CLASS_ANNOTATION: "true"},
            }
        },
        {
            "metadata": {
                "name": "new",
                "creationTimestamp": stamp(1),
                "annotations": {persistentvolumes.DEFAULT_CLASS_ANNOTATION: "true"},
            }
        },
        {"metadata": {"name": "plain", "creationTimestamp": stamp(0)}},
    ]
    assert persistentvolumes.default_class_name(classes) == "new"
    assert persistentvolumes.default_class_name(classes[2:]) is None
    unset = {
        "metadata": {"name": "c"},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1024Mi"}}},
    }
    admitted = persistentvolumes.admit_claim(persistentvolumes.default_claim(unset), "new")
    assert admitted["spec"]["storageClassName"] == "new"
    assert admitted["spec"]["resources"]["requests"]["storage"] == "1Gi"
    assert admitted["metadata"]["finalizers"] == [persistentvolumes.PVC_PROTECTION]
    explicit = {**unset, "spec": {**unset["spec"], "storageClassName": ""}}
    assert persistentvolumes.admit_claim(explicit, "new")["spec"]["storageClassName"] == ""


def pod(
    name: str, *, node: str = "n1", phase: str = "Running", ready_for: float | None = 100, **extra: Any
) -> Any:
    conditions = []
    if ready_for is not None:
        conditions.append({"type": "Ready", "status": "True", "lastTransitionTime": stamp(ready_for)})
    meta: dict[str, Any] = {"name": name, "uid": name, "creationTimestamp": stamp(extra.pop("age", 1000))}
    if "cost" in extra:
        meta["annotations"] = {replicasets.DELETION_COST: str(extra.pop("cost"))}
    return {
        "metadata": meta,
        "spec": {"nodeName": node},
        "status": {
            "phase": phase,
            "conditions": conditions,
            "containerStatuses": [{"restartCount": extra.pop("restarts", 0)}],
        },
    }


def test_scale_down_order_is_upstreams() -> None:
    pods = [
        pod("ready-long-ago", ready_for=10_000),
        pod("restarted", restarts=3),
        pod("ready-just-now", ready_for=2),
        pod("costly", cost=10),
        pod("not-ready", ready_for=None),
        pod("pending", phase="Pending", ready_for=None),
        pod("unscheduled", node="", phase="Pending", ready_for=None),
        pod("cheap", cost=-5),
    ]
    order = [p["metadata"]["name"] for p in replicasets.pods_to_delete(pods, pods, len(pods), NOW)]
    assert order == [
        "unscheduled",
        "pending",
        "not-ready",
        "cheap",
        "ready-just-now",
        "restarted",
        "ready-long-ago",
        "costly",
    ]
    assert [p["metadata"]["name"] for p in replicasets.pods_to_delete(pods, pods, 2, NOW)] == [
        "unscheduled",
        "pending",
    ]


def test_pods_doubled_up_on_a_node_go_first() -> None:
    lonely = pod("lonely", node="n2")
    crowded = [pod("crowded-1", node="n1"), pod("crowded-2", node="n1")]
    ranked = replicasets.pods_to_delete([lonely, crowded[0]], [lonely, *crowded], 1, NOW)
    assert [p["metadata"]["name"] for p in ranked] == ["crowded-1"]
