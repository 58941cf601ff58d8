"""The Node the simulated kubelet registers for itself at start, as a kubelet's ``registerWithAPIServer``
does: its well-known labels, capacity and allocatable, addresses, the four conditions of a healthy node
(Ready, and no memory, disk or PID pressure) and its system info, so ``kubectl get nodes`` shows it Ready.

It is registered through the kubelet's node API (``sim.nodeapi``), in process on the emulator and over
HTTPS on a real control plane, where the kubelet also renews the node's Lease (``Kubelet.lease_seconds``)
so the node lifecycle controller keeps it Ready.

Known limits: the status is written once (no heartbeats in it: on the emulator nothing marks a node
NotReady); no images, volumes in use or taints; ``osImage``, ``kernelVersion`` and the
container runtime describe the emulator, not the host.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sim.environment import NODE_ALLOCATABLE
from sim.nodeapi import NodeApi
from sim.store import Obj
from sim.timestamps import format_time

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


def node_object(
    name: str, host_ip: str, at: str, *, port: int = 10250, capacity: Mapping[str, str] = CAPACITY
) -> Obj:
    """The Node ``name`` as its kubelet registers it, its times ``at``, serving on ``port``."""
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
            "capacity": dict(capacity),
            "allocatable": dict(capacity),
            "conditions": [_condition(*c, at) for c in CONDITIONS],
            "addresses": [
                {"type": "InternalIP", "address": host_ip},
                {"type": "Hostname", "address": name},
            ],
            "daemonEndpoints": {"kubeletEndpoint": {"Port": port}},
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


async def register(
    api: NodeApi, name: str, host_ip: str, *, port: int = 10250, capacity: Mapping[str, str] = CAPACITY
) -> Obj:
    """Create the Node, or bring the status of the one already there (a restarted kubelet's) up to date."""
    at = format_time(api.clock())
    return await api.register_node(node_object(name, host_ip, at, port=port, capacity=capacity))
