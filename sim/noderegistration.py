"""The Node the simulated kubelet registers for itself at start, as a kubelet's ``registerWithAPIServer``
does: its well-known labels, capacity and allocatable, addresses, the four conditions of a healthy node
(Ready, and no memory, disk or PID pressure) and its system info, so ``kubectl get nodes`` shows it Ready.

Known limits: the status is written once (no heartbeats: nothing here marks a node NotReady); no node
Lease in ``kube-node-lease``, images, volumes in use or taints; ``osImage``, ``kernelVersion`` and the
container runtime describe the emulator, not the host.
"""

from __future__ import annotations

from typing import Any

from sim import errors
from sim.apiserver import ApiServer
from sim.environment import NODE_ALLOCATABLE
from sim.store import Obj
from sim.workqueue import served_kind

KUBELET_VERSION = "v1.34.4"
MANAGER = "kubelet"
CAPACITY = {**NODE_ALLOCATABLE, "pods": "110"}
# (type, status, reason, message) of a healthy node's conditions, in the kubelet's order.
CONDITIONS = (
    ("MemoryPressure", "False", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
    ("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
    ("PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
    ("Ready", "True", "KubeletReady", "kubelet is posting ready status"),
)


def _condition(kind: str, status: str, reason: str, message: str, at: str) -> dict[str, Any]:
    return {
        "type": kind,
        "status": status,
        "lastHeartbeatTime": at,
        "lastTransitionTime": at,
        "reason": reason,
        "message": message,
    }


def node_object(name: str, host_ip: str, at: str) -> Obj:
    """The Node ``name`` as its kubelet registers it, its times ``at``."""
    labels = {
        "beta.kubernetes.io/arch": "amd64",
        "beta.kubernetes.io/os": "linux",
        "kubernetes.io/arch": "amd64",
        "kubernetes.io/hostname": name,
        "kubernetes.io/os": "linux",
    }
    annotations = {
        "node.alpha.kubernetes.io/ttl": "0",
        "volumes.kubernetes.io/controller-managed-attach-detach": "true",
    }
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": labels, "annotations": annotations},
        "spec": {},
        "status": {
            "capacity": dict(CAPACITY),
            "allocatable": dict(CAPACITY),
            "conditions": [_condition(*c, at) for c in CONDITIONS],
            "addresses": [
                {"type": "InternalIP", "address": host_ip},
                {"type": "Hostname", "address": name},
            ],
            "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
            "nodeInfo": {
                "machineID": "",
                "systemUUID": "",
                "bootID": "",
                "kernelVersion": "",
                "osImage": "arcsm emulated node",
                "containerRuntimeVersion": "arcsm://1.0",
                "kubeletVersion": KUBELET_VERSION,
                "kubeProxyVersion": "",
                "operatingSystem": "linux",
                "architecture": "amd64",
            },
        },
    }


def register(api: ApiServer, name: str, host_ip: str) -> Obj:
    """Create the Node, or bring the status of the one already there (a restarted kubelet's) up to date."""
    kind = served_kind(api, "", "nodes")
    node = node_object(name, host_ip, api.now_text())
    try:
        return api.create(kind, "", node, manager=MANAGER).body
    except errors.ApiError as err:
        if err.code != 409:
            raise
    existing = api.get(kind, "", name)
    return api.update(kind, "", name, {**existing, "status": node["status"]}, subresource="status").body
