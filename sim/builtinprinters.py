"""The printers' columns of Nodes, Deployments, ReplicaSets, StatefulSets and Services (kube's
``pkg/printers/internalversion``): column definitions and cell functions, for ``sim.tables``.

Known limits: the column descriptions are shorter than the API docs kube-apiserver quotes in them; a
label selector is printed from its ``matchLabels`` and ``matchExpressions`` in key order, as
``labels.Selector.String`` does, without validating it.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from sim.tablecolumns import AGE, NAME, Obj, Printer, age, column, meta

_NODE_ROLE_PREFIX = "node-role.kubernetes.io/"


def _node_status(obj: Obj) -> str:
    conditions = {c.get("type"): c.get("status") for c in (obj.get("status") or {}).get("conditions") or []}
    parts = []
    if "Ready" in conditions:
        parts.append("Ready" if conditions["Ready"] == "True" else "NotReady")
    else:
        parts.append("Unknown")
    if (obj.get("spec") or {}).get("unschedulable"):
        parts.append("SchedulingDisabled")
    return ",".join(parts)


def _node_roles(obj: Obj) -> str:
    roles = set()
    for key, value in (meta(obj).get("labels") or {}).items():
        if key.startswith(_NODE_ROLE_PREFIX) and key[len(_NODE_ROLE_PREFIX) :]:
            roles.add(key[len(_NODE_ROLE_PREFIX) :])
        elif key == "kubernetes.io/role" and value:
            roles.add(value)
    return ",".join(sorted(roles)) or "<none>"


def _address(obj: Obj, kind: str) -> str:
    for address in (obj.get("status") or {}).get("addresses") or []:
        if address.get("type") == kind:
            return str(address.get("address") or "")
    return "<none>"


def _node(obj: Obj, now: datetime) -> list[Any]:
    info = (obj.get("status") or {}).get("nodeInfo") or {}
    return [
        meta(obj).get("name", ""),
        _node_status(obj),
        _node_roles(obj),
        age(meta(obj).get("creationTimestamp"), now),
        info.get("kubeletVersion", ""),
        _address(obj, "InternalIP"),
        _address(obj, "ExternalIP"),
        info.get("osImage") or "<unknown>",
        info.get("kernelVersion") or "<unknown>",
        info.get("containerRuntimeVersion") or "<unknown>",
    ]


NODE = Printer(
    (
        NAME,
        column("Status", description="The status of the node"),
        column("Roles", description="The roles of the node"),
        AGE,
        column("Version", description="Kubelet Version reported by the node."),
        column("Internal-IP", description="List of addresses reachable to the node.", priority=1),
        column("External-IP", description="List of addresses reachable to the node.", priority=1),
        column("OS-Image", description="OS Image reported by the node.", priority=1),
        column("Kernel-Version", description="Kernel Version reported by the node.", priority=1),
        column("Container-Runtime", description="ContainerRuntime Version reported by the node.", priority=1),
    ),
    _node,
)


def _selector(selector: Any) -> str:
    """``metav1.LabelSelectorAsSelector(selector).String()``; ``<none>`` for none, as the printers."""
    if not isinstance(selector, Mapping):
        return "<none>"
    parts: list[tuple[str, str]] = [(k, f"{k}={v}") for k, v in (selector.get("matchLabels") or {}).items()]
    for req in selector.get("matchExpressions") or []:
        key, op, values = req.get("key", ""), req.get("operator", ""), sorted(req.get("values") or [])
        text = {
            "In": f"{key} in ({','.join(values)})",
            "NotIn": f"{key} notin ({','.join(values)})",
            "Exists": key,
            "DoesNotExist": f"!{key}",
        }.get(op, key)
        parts.append((key, text))
    return ",".join(text for _, text in sorted(parts)) or "<none>"


def _containers(obj: Obj) -> list[Obj]:
    template = (obj.get("spec") or {}).get("template") or {}
    return list((template.get("spec") or {}).get("containers") or [])


def _names(obj: Obj) -> str:
    return ",".join(str(c.get("name", "")) for c in _containers(obj))


def _images(obj: Obj) -> str:
    return ",".join(str(c.get("image", "")) for c in _containers(obj))


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _deployment(obj: Obj, now: datetime) -> list[Any]:
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    return [
        meta(obj).get("name", ""),
        f"{_int(status.get('readyReplicas'))}/{_int(spec.get('replicas'))}",
        _int(status.get("updatedReplicas")),
        _int(status.get("availableReplicas")),
        age(meta(obj).get("creationTimestamp"), now),
        _names(obj),
        _images(obj),
        _selector(spec.get("selector")),
    ]


def _replicaset(obj: Obj, now: datetime) -> list[Any]:
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    return [
        meta(obj).get("name", ""),
        _int(spec.get("replicas")),
        _int(status.get("replicas")),
        _int(status.get("readyReplicas")),
        age(meta(obj).get("creationTimestamp"), now),
        _names(obj),
        _images(obj),
        _selector(spec.get("selector")),
    ]


def _statefulset(obj: Obj, now: datetime) -> list[Any]:
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    return [
        meta(obj).get("name", ""),
        f"{_int(status.get('readyReplicas'))}/{_int(spec.get('replicas'))}",
        age(meta(obj).get("creationTimestamp"), now),
        _names(obj),
        _images(obj),
    ]


def _external_ip(spec: Obj, status: Obj) -> str:
    """``getServiceExternalIP`` of the service printer."""
    kind = spec.get("type") or "ClusterIP"
    external = [str(ip) for ip in spec.get("externalIPs") or []]
    if kind == "ExternalName":
        return str(spec.get("externalName") or "")
    if kind == "LoadBalancer":
        ingress = ((status.get("loadBalancer") or {}).get("ingress")) or []
        found = [str(i.get("ip") or i.get("hostname") or "") for i in ingress] + external
        found = [ip for ip in found if ip]
        return ",".join(found) if found else "<pending>"
    return ",".join(external) if external else "<none>"


def _ports(spec: Obj) -> str:
    out = []
    for port in spec.get("ports") or []:
        protocol = port.get("protocol") or "TCP"
        node_port = port.get("nodePort")
        if node_port:
            out.append(f"{port.get('port')}:{node_port}/{protocol}")
        else:
            out.append(f"{port.get('port')}/{protocol}")
    return ",".join(out) or "<none>"


def _service(obj: Obj, now: datetime) -> list[Any]:
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    selector = spec.get("selector") or {}
    return [
        meta(obj).get("name", ""),
        spec.get("type") or "ClusterIP",
        spec.get("clusterIP") or "<none>",
        _external_ip(spec, status),
        _ports(spec),
        age(meta(obj).get("creationTimestamp"), now),
        ",".join(f"{k}={v}" for k, v in sorted(selector.items())) or "<none>",
    ]


_CONTAINERS = column("Containers", description="Names of each container in the template.", priority=1)
_IMAGES = column("Images", description="Images referenced by each container in the template.", priority=1)
_SELECTOR = column("Selector", description="Label selector for pods.", priority=1)

PRINTERS: Mapping[tuple[str, str], Printer] = {
    ("", "nodes"): NODE,
    ("apps", "deployments"): Printer(
        (
            NAME,
            column("Ready", description="Number of the pod with ready state"),
            column("Up-to-date", "integer", "Total number of non-terminating pods with the desired template"),
            column("Available", "integer", "Total number of available non-terminating pods."),
            AGE,
            _CONTAINERS,
            _IMAGES,
            _SELECTOR,
        ),
        _deployment,
    ),
    ("apps", "replicasets"): Printer(
        (
            NAME,
            column("Desired", "integer", "Replicas is the number of desired pods."),
            column("Current", "integer", "Replicas is the most recently observed number of replicas."),
            column("Ready", "integer", "The number of non-terminating pods with a Ready Condition."),
            AGE,
            _CONTAINERS,
            _IMAGES,
            _SELECTOR,
        ),
        _replicaset,
    ),
    ("apps", "statefulsets"): Printer(
        (NAME, column("Ready", description="Number of the pod with ready state"), AGE, _CONTAINERS, _IMAGES),
        _statefulset,
    ),
    ("", "services"): Printer(
        (
            NAME,
            column("Type", description="type determines how the Service is exposed."),
            column("Cluster-IP", description="clusterIP is the IP address of the service."),
            column("External-IP", description="List of IP addresses for which nodes accept traffic."),
            column("Port(s)", description="The list of ports that are exposed by this service."),
            AGE,
            column("Selector", description="Route service traffic to pods with these labels.", priority=1),
        ),
        _service,
    ),
}
