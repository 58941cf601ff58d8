"""Services in the emulated cluster: the defaults and the cluster IPs and node ports kube-apiserver gives
them (what Helm's ``--wait`` and ``kubectl get svc`` read), through kubectl and kubernetes_asyncio.

Inputs: the ``world``, ``kube`` and ``kubeconfig`` fixtures; Debian's ``kubectl``. Outputs: the stored
Services. Nothing routes traffic to them.
"""

from __future__ import annotations

import ipaddress
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from kubernetes_asyncio import client
from kubernetes_asyncio.client.exceptions import ApiException

from sim.world import World
from tests.kubectl import get_json, ok, requires_kubectl

NS = "default"


def service(name: str, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": name},
        "spec": {"selector": {"app": name}, "ports": [{"name": "http", "port": 8080}], **spec},
    }


@requires_kubectl
async def test_a_service_gets_its_defaults_and_a_cluster_ip_that_survives_reapplying(
    world: World, kubeconfig: Path
) -> None:
    await ok(kubeconfig, "apply", "-f", "-", stdin=yaml.safe_dump(service("web")))
    svc = await get_json(kubeconfig, "service", "web")
    spec = svc["spec"]
    ip = spec["clusterIP"]
    assert ipaddress.ip_address(ip) in ipaddress.ip_network("10.96.0.0/16") and ip != "10.96.0.1"
    assert (spec["clusterIPs"], spec["ipFamilies"], spec["ipFamilyPolicy"]) == ([ip], ["IPv4"], "SingleStack")
    assert (spec["type"], spec["sessionAffinity"], spec["internalTrafficPolicy"]) == (
        "ClusterIP",
        "None",
        "Cluster",
    )
    assert spec["ports"] == [{"name": "http", "port": 8080, "protocol": "TCP", "targetPort": 8080}]
    assert svc["status"] == {"loadBalancer": {}}

    again = await ok(kubeconfig, "apply", "-f", "-", stdin=yaml.safe_dump(service("web")))
    assert again.strip() == "service/web unchanged"
    await ok(kubeconfig, "replace", "-f", "-", stdin=json.dumps(service("web")))
    assert (await get_json(kubeconfig, "service", "web"))["spec"]["clusterIP"] == ip


async def test_cluster_ips_and_node_ports_are_allocated_once_and_kept(
    world: World, kube: client.ApiClient
) -> None:
    core = client.CoreV1Api(kube)
    first = await core.create_namespaced_service(NS, service("a"))
    second = await core.create_namespaced_service(NS, service("b", type="NodePort"))
    headless = await core.create_namespaced_service(NS, service("c", clusterIP="None"))
    assert first.spec.cluster_ip != second.spec.cluster_ip
    assert headless.spec.cluster_ip == "None" and headless.spec.cluster_ips == ["None"]
    [port] = second.spec.ports
    assert 30000 <= port.node_port <= 32767
    assert second.spec.external_traffic_policy == "Cluster"

    moved = {"spec": {"clusterIP": "10.96.200.200", "clusterIPs": ["10.96.200.200"]}}
    with pytest.raises(ApiException) as refused:
        await core.patch_namespaced_service("a", NS, moved)
    assert refused.value.status == 422
    assert "spec.clusterIPs[0]: Invalid value" in json.loads(refused.value.body)["message"]
    assert "may not change once set" in json.loads(refused.value.body)["message"]
