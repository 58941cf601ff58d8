"""``kubectl get`` of Deployments, ReplicaSets, StatefulSets and Services prints the columns of kube's
printers, from the emulated API server's Tables (sim.builtinprinters).

Inputs: an emulated cluster with its controllers and kubelet, a kubeconfig for it and the pinned
``kubectl``. Outputs: kubectl's header and row of each kind, plain and ``-o wide``, once the workloads
have rolled out.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from sim.world import World
from tests.helpers import eventually
from tests.kubectl import get_json, ok, requires_kubectl

STATEFULSET = """
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db}
spec:
  replicas: 1
  serviceName: db
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec: {containers: [{name: main, image: busybox:1.36, command: [sleep, "3600"]}]}
"""
NODEPORT = """
apiVersion: v1
kind: Service
metadata: {name: edge}
spec:
  type: NodePort
  selector: {app: web, tier: front}
  ports: [{port: 443, targetPort: 8443, nodePort: 30443}]
"""


@pytest.fixture
async def world(tmp_path: Path) -> AsyncIterator[World]:
    async with World(seed=1, crd_dir=None, namespaces=("default",)) as w:
        yield w


def rows(out: str) -> list[list[str]]:
    return [re.split(r"\s{2,}", line.strip()) for line in out.strip().splitlines()]


@requires_kubectl
async def test_kubectl_get_prints_the_workload_and_service_printers_columns(
    world: World, tmp_path: Path
) -> None:
    kubeconfig = world.write_kubeconfig(tmp_path / "kubeconfig")
    await ok(kubeconfig, "create", "deployment", "web", "--image=nginx", "--replicas=2")
    await ok(kubeconfig, "apply", "-f", "-", stdin=STATEFULSET)
    await ok(kubeconfig, "create", "service", "clusterip", "web", "--tcp=80:8080")
    await ok(kubeconfig, "apply", "-f", "-", stdin=NODEPORT)

    async def rolled_out() -> bool:
        deployment = (await get_json(kubeconfig, "deployment", "web")).get("status", {})
        statefulset = (await get_json(kubeconfig, "statefulset", "db")).get("status", {})
        return deployment.get("availableReplicas") == 2 and statefulset.get("readyReplicas") == 1

    await eventually(rolled_out, what="deployment web and statefulset db ready")

    header, row = rows(await ok(kubeconfig, "get", "deployment", "web"))
    assert header == ["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"]
    assert row[:4] == ["web", "2/2", "2", "2"]
    header, row = rows(await ok(kubeconfig, "get", "deployment", "web", "-o", "wide"))
    assert header[5:] == ["CONTAINERS", "IMAGES", "SELECTOR"]
    assert row[5:] == ["nginx", "nginx", "app=web"]

    header, row = rows(await ok(kubeconfig, "get", "replicasets", "-l", "app=web"))
    assert header == ["NAME", "DESIRED", "CURRENT", "READY", "AGE"]
    assert row[0].startswith("web-") and row[1:4] == ["2", "2", "2"]
    header, row = rows(await ok(kubeconfig, "get", "replicasets", "-l", "app=web", "-o", "wide"))
    assert header[5:] == ["CONTAINERS", "IMAGES", "SELECTOR"]
    assert row[5] == "nginx" and row[7].startswith("app=web,pod-template-hash=")

    header, row = rows(await ok(kubeconfig, "get", "statefulset", "db", "-o", "wide"))
    assert header == ["NAME", "READY", "AGE", "CONTAINERS", "IMAGES"]
    assert (row[:2], row[3:]) == (["db", "1/1"], ["main", "busybox:1.36"])

    service = await get_json(kubeconfig, "service", "web")
    header, row = rows(await ok(kubeconfig, "get", "service", "web"))
    assert header == ["NAME", "TYPE", "CLUSTER-IP", "EXTERNAL-IP", "PORT(S)", "AGE"]
    assert row[:5] == ["web", "ClusterIP", service["spec"]["clusterIP"], "<none>", "80/TCP"]
    header, row = rows(await ok(kubeconfig, "get", "service", "edge", "-o", "wide"))
    assert header[6:] == ["SELECTOR"]
    assert (row[1], row[3], row[4], row[6]) == ("NodePort", "<none>", "443:30443/TCP", "app=web,tier=front")
