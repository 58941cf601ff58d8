"""URL layout of the Kubernetes API (S01): which kind, namespace, name and subresource a path names."""

from __future__ import annotations

from dataclasses import dataclass

from sim import discovery, errors
from sim.kinds import Kind, Registry


@dataclass(frozen=True)
class Target:
    kind: Kind
    namespace: str | None  # None: all namespaces (or cluster scope)
    name: str = ""
    subresource: str = ""


@dataclass(frozen=True)
class Discovery:
    group: str | None  # None: /api or /apis root
    version: str = ""


NAMESPACE_SUBRESOURCES = ("status", "finalize")


def parse(registry: Registry, path: str) -> Target | Discovery:
    parts = [p for p in path.split("/") if p]
    if not parts or parts[0] not in ("api", "apis"):
        raise errors.no_such_resource()
    if parts[0] == "api":
        if len(parts) == 1:
            return Discovery(None)
        group, version, rest = "", parts[1], parts[2:]
        if version != "v1":
            raise errors.no_such_resource()
    else:
        if len(parts) == 1:
            return Discovery(None, "")
        if len(parts) == 2:
            return Discovery(parts[1])
        group, version, rest = parts[1], parts[2], parts[3:]
        if version not in discovery.served_groups(registry).get(group, []):
            raise errors.no_such_resource()
    if not rest:
        return Discovery(group, version)
    namespace_itself = len(rest) <= 2 or (len(rest) == 3 and rest[2] in NAMESPACE_SUBRESOURCES)
    if rest[0] == "namespaces" and group == "" and namespace_itself:
        kind = _kind(registry, "", "v1", "namespaces")
        return Target(kind, None, rest[1] if len(rest) > 1 else "", rest[2] if len(rest) == 3 else "")
    if rest[0] == "namespaces":
        if len(rest) < 3 or len(rest) > 5:
            raise errors.no_such_resource()
        kind = _kind(registry, group, version, rest[2])
        if not kind.namespaced:
            raise errors.no_such_resource()
        return Target(kind, rest[1], rest[3] if len(rest) > 3 else "", rest[4] if len(rest) > 4 else "")
    if len(rest) > 3:
        raise errors.no_such_resource()
    kind = _kind(registry, group, version, rest[0])
    if kind.namespaced and len(rest) > 1:
        raise errors.no_such_resource()
    return Target(kind, None, rest[1] if len(rest) > 1 else "", rest[2] if len(rest) > 2 else "")


def go_restful_path(registry: Registry, path: str) -> bool:
    """Whether kube-apiserver serves ``path`` from a built-in web service (``/api``, ``/apis`` and
    ``/apis/{built-in group}``), whose 404s carry empty details; everything else (custom resource groups,
    unknown groups) falls through to the mux, which answers a plain-text 404 (S01)."""
    parts = [p for p in path.split("/") if p]
    if parts[:1] == ["api"] or parts == ["apis"]:
        return True
    if parts[:1] != ["apis"]:
        return False
    return any(k.group == parts[1] and not k.is_custom for k in registry.all())


def _kind(registry: Registry, group: str, version: str, plural: str) -> Kind:
    kind = registry.get(group, version, plural)
    if kind is None:
        raise errors.no_such_resource()
    return kind
