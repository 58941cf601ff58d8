"""The per-type strategy table of the emulated API server.

One ``Kind`` row says everything the generic request handlers need to treat a resource type the way
kube-apiserver's registry strategy for it does (apiserver-semantics.md §9): scope, status subresource,
generation policy, create-on-update, unconditional update, delete response style, graceful deletion,
field-selector fields and whether strategic merge patch is accepted. Custom resources get their row from
their CRD (see ``from_crd``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from sim import selectors


@dataclass(frozen=True)
class Kind:
    group: str
    version: str
    plural: str
    kind: str
    singular: str
    namespaced: bool = True
    status_subresource: bool = False
    # metadata.generation is set to 1 on create and bumped on non-metadata changes.
    generation: bool = False
    create_on_update: bool = False
    unconditional_update: bool = True
    # DELETE that removes at once answers the object (Pods, ServiceAccounts) instead of a Status.
    delete_returns_object: bool = False
    graceful: bool = False
    strategic_merge: bool = True
    # Custom resources: the openAPIV3Schema of the served version.
    schema: Mapping[str, Any] | None = None
    short_names: tuple[str, ...] = ()
    # Discovery categories (``kubectl get all`` lists the kinds in "all").
    categories: tuple[str, ...] = ()
    # The ``scale`` subresource (autoscaling/v1 Scale over spec.replicas, sim.scales).
    scale: bool = False
    # Some kinds are views of another kind's storage (events.k8s.io Events are stored as core Events).
    storage: tuple[str, str] | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def key(self) -> tuple[str, str]:
        """The storage key of this type: (group, plural)."""
        return self.storage or (self.group, self.plural)

    @property
    def field_selectors(self) -> frozenset[str]:
        """The fields a field selector may name (custom resources: name and namespace only)."""
        if self.is_custom:
            return selectors.DEFAULT_SUPPORTED_FIELDS
        return selectors.supported_fields(self.kind)

    @property
    def is_custom(self) -> bool:
        return self.schema is not None

    @property
    def name_rule(self) -> str:
        if self.group == "rbac.authorization.k8s.io":
            return "path-segment"
        if self.plural == "namespaces":
            return "dns-label"
        return "dns-subdomain"


def _plain(group: str, version: str, plural: str, kind: str, *, namespaced: bool = True, **kw: Any) -> Kind:
    """A kind the emulator stores as a plain object (no controller simulates it)."""
    return Kind(group, version, plural, kind, kind.lower(), namespaced=namespaced, **kw)


BUILTIN: tuple[Kind, ...] = (
    Kind(
        "",
        "v1",
        "namespaces",
        "Namespace",
        "namespace",
        namespaced=False,
        status_subresource=True,
        short_names=("ns",),
    ),
    Kind(
        "",
        "v1",
        "pods",
        "Pod",
        "pod",
        status_subresource=True,
        generation=True,
        delete_returns_object=True,
        graceful=True,
        short_names=("po",),
        categories=("all",),
    ),
    Kind("", "v1", "secrets", "Secret", "secret"),
    Kind(
        "",
        "v1",
        "serviceaccounts",
        "ServiceAccount",
        "serviceaccount",
        delete_returns_object=True,
        short_names=("sa",),
    ),
    Kind("", "v1", "configmaps", "ConfigMap", "configmap", short_names=("cm",)),
    Kind(
        "",
        "v1",
        "events",
        "Event",
        "event",
        create_on_update=True,
        short_names=("ev",),
    ),
    Kind(
        "events.k8s.io",
        "v1",
        "events",
        "Event",
        "event",
        create_on_update=True,
        storage=("", "events"),
    ),
    Kind("rbac.authorization.k8s.io", "v1", "roles", "Role", "role", create_on_update=True),
    Kind(
        "rbac.authorization.k8s.io", "v1", "rolebindings", "RoleBinding", "rolebinding", create_on_update=True
    ),
    Kind(
        "coordination.k8s.io",
        "v1",
        "leases",
        "Lease",
        "lease",
        create_on_update=True,
        unconditional_update=False,
    ),
    # Stored as plain objects so manifests apply; nothing simulates them.
    _plain(
        "rbac.authorization.k8s.io",
        "v1",
        "clusterroles",
        "ClusterRole",
        namespaced=False,
        create_on_update=True,
    ),
    _plain(
        "rbac.authorization.k8s.io",
        "v1",
        "clusterrolebindings",
        "ClusterRoleBinding",
        namespaced=False,
        create_on_update=True,
    ),
    # Registered by the simulated kubelet for itself (sim.noderegistration).
    Kind(
        "",
        "v1",
        "nodes",
        "Node",
        "node",
        namespaced=False,
        status_subresource=True,
        short_names=("no",),
    ),
    # The API server publishes its own address in these (sim.publishing); nothing else fills them.
    _plain("", "v1", "endpoints", "Endpoints", short_names=("ep",)),
    _plain("discovery.k8s.io", "v1", "endpointslices", "EndpointSlice"),
    # Defaulted and given cluster IPs by sim.services; nothing routes traffic.
    Kind(
        "",
        "v1",
        "services",
        "Service",
        "service",
        status_subresource=True,
        short_names=("svc",),
        categories=("all",),
    ),
    # Workloads, simulated by sim.deployments, sim.replicasets and sim.statefulsets.
    Kind(
        "apps",
        "v1",
        "deployments",
        "Deployment",
        "deployment",
        status_subresource=True,
        generation=True,
        short_names=("deploy",),
        categories=("all",),
        scale=True,
    ),
    Kind(
        "apps",
        "v1",
        "replicasets",
        "ReplicaSet",
        "replicaset",
        status_subresource=True,
        generation=True,
        short_names=("rs",),
        categories=("all",),
        scale=True,
    ),
    Kind(
        "apps",
        "v1",
        "statefulsets",
        "StatefulSet",
        "statefulset",
        status_subresource=True,
        generation=True,
        short_names=("sts",),
        categories=("all",),
        scale=True,
    ),
    Kind("apps", "v1", "controllerrevisions", "ControllerRevision", "controllerrevision"),
    # Storage, bound and provisioned by sim.claimbinding and sim.provisioning.
    Kind(
        "",
        "v1",
        "persistentvolumeclaims",
        "PersistentVolumeClaim",
        "persistentvolumeclaim",
        status_subresource=True,
        short_names=("pvc",),
    ),
    Kind(
        "",
        "v1",
        "persistentvolumes",
        "PersistentVolume",
        "persistentvolume",
        namespaced=False,
        status_subresource=True,
        short_names=("pv",),
    ),
    Kind(
        "storage.k8s.io",
        "v1",
        "storageclasses",
        "StorageClass",
        "storageclass",
        namespaced=False,
        short_names=("sc",),
    ),
    _plain(
        "policy",
        "v1",
        "poddisruptionbudgets",
        "PodDisruptionBudget",
        status_subresource=True,
        generation=True,
        short_names=("pdb",),
    ),
    _plain(
        "apiextensions.k8s.io",
        "v1",
        "customresourcedefinitions",
        "CustomResourceDefinition",
        namespaced=False,
        status_subresource=True,
        generation=True,
        short_names=("crd", "crds"),
    ),
)


def from_crd(crd: Mapping[str, Any]) -> list[Kind]:
    """The kinds a CRD serves: one per served version (the storage version's schema drives validation)."""
    spec = crd["spec"]
    names = spec["names"]
    kinds = []
    for version in spec["versions"]:
        if not version.get("served", True):
            continue
        kinds.append(
            Kind(
                group=spec["group"],
                version=version["name"],
                plural=names["plural"],
                kind=names["kind"],
                singular=names.get("singular", names["kind"].lower()),
                namespaced=spec.get("scope", "Namespaced") == "Namespaced",
                status_subresource="status" in (version.get("subresources") or {}),
                generation=True,
                create_on_update=False,
                unconditional_update=False,
                strategic_merge=False,
                schema=(version.get("schema") or {}).get("openAPIV3Schema", {"type": "object"}),
                short_names=tuple(names.get("shortNames", ())),
                extra={
                    "listKind": names.get("listKind", names["kind"] + "List"),
                    "printerColumns": tuple(version.get("additionalPrinterColumns") or ()),
                },
            )
        )
    return kinds


class Registry:
    """The kinds the server serves, looked up by (group, version, plural)."""

    def __init__(self, kinds: Iterable[Kind] = BUILTIN) -> None:
        self._by_path: dict[tuple[str, str, str], Kind] = {}
        for k in kinds:
            self.add(k)

    def add(self, kind: Kind) -> None:
        self._by_path[(kind.group, kind.version, kind.plural)] = kind

    def replace(self, group: str, plural: str, kinds: Iterable[Kind]) -> None:
        """Serve ``plural`` in ``group`` as ``kinds`` only (none: no longer served), as a CRD's
        served versions change or the CRD goes."""
        for path in [p for p in self._by_path if p[0] == group and p[2] == plural]:
            del self._by_path[path]
        for kind in kinds:
            self.add(kind)

    def get(self, group: str, version: str, plural: str) -> Kind | None:
        return self._by_path.get((group, version, plural))

    def by_kind(self, api_version: str, kind: str) -> Kind | None:
        for k in self._by_path.values():
            if k.api_version == api_version and k.kind == kind:
                return k
        return None

    def all(self) -> list[Kind]:
        return list(self._by_path.values())

    def groups(self) -> dict[str, list[str]]:
        """Group name → served versions (the core group is "")."""
        out: dict[str, list[str]] = {}
        for g, v, _ in self._by_path:
            versions = out.setdefault(g, [])
            if v not in versions:
                versions.append(v)
        return out
