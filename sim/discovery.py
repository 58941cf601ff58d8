"""Discovery documents (S02): /api, /apis, /apis/{group}, /apis/{group}/{version}, /api/v1, /version, and
the OpenAPI v3 index and group-version documents kubectl reads (paths, operations and schemas)."""

from __future__ import annotations

from typing import Any

from sim import openapischemas, selfreviews
from sim.kinds import Kind, Registry

# The fields of version.Info; kubernetes_asyncio's VersionInfo requires them all.
KUBE_VERSION = {
    "major": "1",
    "minor": "34",
    "emulationMajor": "1",
    "emulationMinor": "34",
    "minCompatibilityMajor": "1",
    "minCompatibilityMinor": "33",
    "gitVersion": "v1.34.0-arcsm-sim",
    "gitCommit": "0000000000000000000000000000000000000000",
    "gitTreeState": "clean",
    "buildDate": "2025-08-27T00:00:00Z",
    "goVersion": "go1.24.6",
    "compiler": "gc",
    "platform": "linux/amd64",
}

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


def served_groups(registry: Registry) -> dict[str, list[str]]:
    """Group → versions: the registry's and those of the self reviews (``sim.selfreviews``)."""
    groups = {g: list(vs) for g, vs in registry.groups().items()}
    for group, version in selfreviews.RESOURCES:
        versions = groups.setdefault(group, [])
        if version not in versions:
            versions.append(version)
    return groups


def api_group_list(registry: Registry) -> dict[str, Any]:
    groups = [_group(g, vs) for g, vs in sorted(served_groups(registry).items()) if g]
    return {"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}


def api_group(registry: Registry, group: str) -> dict[str, Any] | None:
    versions = served_groups(registry).get(group)
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
    if kind.categories:
        main["categories"] = list(kind.categories)
    out = [main]
    if kind.scale:
        out.append(
            {
                "name": f"{kind.plural}/scale",
                "singularName": "",
                "namespaced": kind.namespaced,
                "group": "autoscaling",
                "version": "v1",
                "kind": "Scale",
                "verbs": ["get", "patch", "update"],
            }
        )
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
        out.append(
            {"name": "pods/log", "singularName": "", "namespaced": True, "kind": "Pod", "verbs": ["get"]}
        )
    if kind.group == "" and kind.plural == "serviceaccounts":
        out.append(
            {
                "name": "serviceaccounts/token",
                "singularName": "",
                "namespaced": True,
                "group": "authentication.k8s.io",
                "version": "v1",
                "kind": "TokenRequest",
                "verbs": ["create"],
            }
        )
    return out


def api_resource_list(registry: Registry, group: str, version: str) -> dict[str, Any]:
    resources = []
    for kind in sorted(registry.all(), key=lambda k: k.plural):
        if kind.group == group and kind.version == version:
            resources.extend(_resource(kind))
    resources.extend(selfreviews.RESOURCES.get((group, version), []))
    group_version = f"{group}/{version}" if group else version
    return {
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": group_version,
        "resources": resources,
    }


# -- OpenAPI v3 ------------------------------------------------------------------------------------------
#
# kubectl fetches /openapi/v3 before it validates or applies: the operations of a kind tell it whether the
# server takes ``fieldValidation`` (then it validates server-side and needs no schema). The documents list
# every served path and operation with its ``x-kubernetes-group-version-kind`` and query parameters, and
# ``components.schemas`` holds each kind's schema (``kubectl explain`` walks them). The patch operations
# name no request body media types, so kubectl does not compute strategic merge patches from these
# schemas (they lack the patch extensions) but from its compiled-in types, as before they were served.

OPENAPI_PREFIX = "/openapi/v3"
_WRITE_PARAMS = ("dryRun", "fieldManager", "fieldValidation")


def _gv_path(group: str, version: str) -> str:
    return f"apis/{group}/{version}" if group else f"api/{version}"


def openapi_index(registry: Registry) -> dict[str, Any]:
    """``GET /openapi/v3``: group-version path → the URL of its document."""
    paths = {}
    for group, versions in sorted(registry.groups().items()):
        for version in versions:
            gv = _gv_path(group, version)
            paths[gv] = {"serverRelativeURL": f"{OPENAPI_PREFIX}/{gv}"}
    return {"paths": paths}


def _query(*names: str) -> list[dict[str, Any]]:
    return [{"name": n, "in": "query", "schema": {"type": "string"}, "uniqueItems": True} for n in names]


def _operation(kind: Kind, action: str, op_id: str, params: tuple[str, ...] = ()) -> dict[str, Any]:
    return {
        "operationId": op_id,
        "parameters": _query(*params),
        "responses": {"200": {"description": "OK"}},
        "x-kubernetes-action": action,
        "x-kubernetes-group-version-kind": {"group": kind.group, "version": kind.version, "kind": kind.kind},
    }


def _kind_paths(kind: Kind) -> dict[str, dict[str, Any]]:
    root = "/" + _gv_path(kind.group, kind.version)
    scope = f"{root}/namespaces/{{namespace}}" if kind.namespaced else root
    collection = f"{scope}/{kind.plural}"
    item = f"{collection}/{{name}}"
    name = kind.kind
    paths: dict[str, dict[str, Any]] = {
        collection: {
            "get": _operation(kind, "list", f"list{name}", ("labelSelector", "fieldSelector", "watch")),
            "post": _operation(kind, "post", f"create{name}", _WRITE_PARAMS),
            "delete": _operation(kind, "deletecollection", f"deletecollection{name}", ("labelSelector",)),
        },
        item: {
            "get": _operation(kind, "get", f"read{name}"),
            "put": _operation(kind, "put", f"replace{name}", _WRITE_PARAMS),
            "patch": _operation(kind, "patch", f"patch{name}", (*_WRITE_PARAMS, "force")),
            "delete": _operation(kind, "delete", f"delete{name}", ("dryRun", "propagationPolicy")),
        },
    }
    if kind.scale:
        scale = Kind("autoscaling", "v1", kind.plural, "Scale", "scale")
        paths[f"{item}/scale"] = {
            "get": _operation(scale, "get", f"read{name}Scale"),
            "put": _operation(scale, "put", f"replace{name}Scale", _WRITE_PARAMS),
            "patch": _operation(scale, "patch", f"patch{name}Scale", (*_WRITE_PARAMS, "force")),
        }
    if kind.status_subresource:
        paths[f"{item}/status"] = {
            "get": _operation(kind, "get", f"read{name}Status"),
            "put": _operation(kind, "put", f"replace{name}Status", _WRITE_PARAMS),
            "patch": _operation(kind, "patch", f"patch{name}Status", (*_WRITE_PARAMS, "force")),
        }
    return paths


def openapi_kinds(registry: Registry, group: str, version: str) -> list[Kind] | None:
    """The kinds of a group-version's OpenAPI document; None for a group-version not served."""
    if version not in registry.groups().get(group, []):
        return None
    return [
        k for k in sorted(registry.all(), key=lambda k: k.plural) if k.group == group and k.version == version
    ]


def openapi_document(kinds: list[Kind]) -> dict[str, Any]:
    """The OpenAPI v3 document of one group-version's ``kinds``: their paths and their schemas
    (``sim.openapischemas``; the first call imports the client's models: servers call it off their loop)."""
    paths: dict[str, Any] = {}
    for kind in kinds:
        paths.update(_kind_paths(kind))
    return {
        "openapi": "3.0.0",
        "info": {"title": "Kubernetes", "version": KUBE_VERSION["gitVersion"]},
        "paths": paths,
        "components": {"schemas": openapischemas.schemas(kinds)},
    }


def openapi_group_version(registry: Registry, group: str, version: str) -> dict[str, Any] | None:
    """``GET /openapi/v3/apis/{group}/{version}`` (``/openapi/v3/api/v1``); None for an unknown one."""
    kinds = openapi_kinds(registry, group, version)
    return None if kinds is None else openapi_document(kinds)


def parse_openapi_path(path: str) -> tuple[str, str] | None:
    """``/openapi/v3/apis/G/V`` → (G, V); ``/openapi/v3/api/v1`` → ("", "v1"); anything else None."""
    parts = [p for p in path[len(OPENAPI_PREFIX) :].split("/") if p]
    if len(parts) == 2 and parts[0] == "api":
        return "", parts[1]
    if len(parts) == 3 and parts[0] == "apis":
        return parts[1], parts[2]
    return None
