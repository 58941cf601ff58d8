"""Discovery documents (S02): /api, /apis, /apis/{group}, /apis/{group}/{version}, /api/v1, /version."""

from __future__ import annotations

from typing import Any

from sim.kinds import Kind, Registry

KUBE_VERSION = {"major": "1", "minor": "34", "gitVersion": "v1.34.0-arcsm-sim", "platform": "linux/amd64"}

_VERBS = ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"]


def api_versions(server_address: str) -> dict[str, Any]:
    return {
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": server_address}],
    }


def _group(name: str, versions: list[str]) -> dict[str, Any]:
    entries = [{"groupVersion": f"{name}/{v}", "version": v} for v in versions]
    return {"name": name, "versions": entries, "preferredVersion": entries[0]}


def api_group_list(registry: Registry) -> dict[str, Any]:
    groups = [_group(g, vs) for g, vs in sorted(registry.groups().items()) if g]
    return {"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}


def api_group(registry: Registry, group: str) -> dict[str, Any] | None:
    versions = registry.groups().get(group)
    if not versions or not group:
        return None
    return {"kind": "APIGroup", "apiVersion": "v1", **_group(group, versions)}


def _resource(kind: Kind) -> list[dict[str, Any]]:
    main: dict[str, Any] = {
        "name": kind.plural,
        "singularName": kind.singular,
        "namespaced": kind.namespaced,
        "kind": kind.kind,
        "verbs": _VERBS,
    }
    if kind.short_names:
        main["shortNames"] = list(kind.short_names)
    out = [main]
    if kind.status_subresource:
        out.append(
            {
                "name": f"{kind.plural}/status",
                "singularName": "",
                "namespaced": kind.namespaced,
                "kind": kind.kind,
                "verbs": ["get", "patch", "update"],
            }
        )
    if kind.group == "" and kind.plural == "pods":
        out.append(
            {
                "name": "pods/binding",
                "singularName": "",
                "namespaced": True,
                "kind": "Binding",
                "verbs": ["create"],
            }
        )
    return out


def api_resource_list(registry: Registry, group: str, version: str) -> dict[str, Any]:
    resources = []
    for kind in sorted(registry.all(), key=lambda k: k.plural):
        if kind.group == group and kind.version == version:
            resources.extend(_resource(kind))
    group_version = f"{group}/{version}" if group else version
    return {
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": group_version,
        "resources": resources,
    }
