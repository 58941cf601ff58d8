"""The Kubernetes permissions arcsm needs, derived from what it watches and what its effects do.

The controller asks for no more than upstream ARC's charts grant (deploy/README.md sets them side by
side). Four sources, and nothing else:

* the watched kinds (``declared.WATCHED``: every kind a controller declaration names, as the watchers'
  table ``watchers.kinds`` serves it; not Secrets, which it never lists or watches): ``list`` and
  ``watch`` on each, in every watched namespace;
* the effects: ``EFFECT_ACCESS`` says, per effect type, which kinds (and subresources) the machines
  aim it at, which verbs its executor sends for them (``controller/executor/kubeeffects.py``,
  ``secreteffects.py``, ``actionseffects.py``; the Actions effects read the credentials Secret, the CA
  ConfigMap and the proxy credential Secrets through the executor's Kubernetes reader) and in which
  namespaces: the custom resources and Events wherever they are (``CLUSTER``), the listener's objects in
  the controller's namespace (``CONTROLLER_NAMESPACE``), the runners' and the scale set's in its own
  (``SCALE_SET_NAMESPACE``, granted by upstream's scale set chart's manager Role:
  ``UPSTREAM_MANAGER_ROLE``, which a test pins as a superset of what arcsm needs there);
* ``update`` on the four custom resources' ``finalizers``, which owner references with
  ``blockOwnerDeletion`` need where OwnerReferencesPermissionEnforcement runs;
* leader election: ``get``, ``create`` and ``update`` on Leases in the controller namespace;
* the served schemas (``servedschemas``): ``get`` on CustomResourceDefinitions, cluster-scoped, so only
  the ClusterRole holds it (with ``watchNamespaces`` the controller assumes arcsm's CRDs).

The listener Role the AutoscalingListener machine creates (``statemachines.listenerobjects.role_rules``)
grants ``patch`` on runner sets and runners; RBAC lets a subject create a Role only with permissions it
holds itself (or with ``escalate``), and the effects above already hold those, so no ``escalate`` or
``bind`` is asked for.

``rules`` turns a set of ``Permission`` into the ``rules`` of a Role or ClusterRole: one rule per API
group and verb set, resources sorted, so the rendering is stable.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from controller.executor import kubewriting
from controller.loop import declared
from statemachines import effects
from statemachines.kinds import AL, ARS, ER, ERS
from watchers import kinds as watched

WATCH_VERBS: Final = ("list", "watch")
LEASE_GROUP: Final = "coordination.k8s.io"
LEASE_VERBS: Final = ("get", "create", "update")
CRD_GROUP: Final = "apiextensions.k8s.io"
RBAC_GROUP: Final = "rbac.authorization.k8s.io"


@dataclass(frozen=True, order=True)
class Permission:
    """One verb on one resource (``plural`` or ``plural/subresource``) of an API group."""

    group: str
    resource: str
    verb: str


# Where an effect's request goes. The custom resources are written wherever they are (the ClusterRole, or
# a Role in each watched namespace); the listener's pod, ServiceAccount and Secrets live in the controller's
# namespace (arcsm's chart's Role there, as upstream's listener Role); the runners' pods and JIT Secrets,
# the listener's Role and RoleBinding, the config Secret and the CA ConfigMap live in a scale set's
# namespace, where upstream's gha-runner-scale-set chart binds its manager Role to the controller.
CLUSTER: Final = "cluster"
CONTROLLER_NAMESPACE: Final = "controller namespace"
SCALE_SET_NAMESPACE: Final = "scale set namespace"
_BOTH_NAMESPACES = (CONTROLLER_NAMESPACE, SCALE_SET_NAMESPACE)
_CUSTOM = (ARS, ERS, ER, AL)


@dataclass(frozen=True)
class Access:
    """An effect aimed at ``kinds`` (their ``subresource``) is sent as ``verbs``, in the namespaces
    ``where``."""

    kinds: tuple[str, ...]
    verbs: tuple[str, ...]
    where: tuple[str, ...]
    subresource: str = ""


# Reading an Actions scope, in the scale set's namespace: the credentials Secret, the CA ConfigMap, the
# proxy credential Secrets.
_SCOPE_READS = (Access(("Secret", "ConfigMap"), ("get",), (SCALE_SET_NAMESPACE,)),)

EFFECT_ACCESS: Final[Mapping[type[effects.Effect], tuple[Access, ...]]] = {
    # The runner set, runners and listener of a scale set; runner pods (scale set namespace) and listener
    # pods (controller namespace); the listener's ServiceAccount, and its Role and RoleBinding in the scale
    # set's namespace.
    effects.CreateObject: (
        Access((ERS, ER, AL), ("create",), (CLUSTER,)),
        Access(("Pod",), ("create",), _BOTH_NAMESPACES),
        Access(("ServiceAccount",), ("create",), (CONTROLLER_NAMESPACE,)),
        Access(("Role", "RoleBinding"), ("create",), (SCALE_SET_NAMESPACE,)),
    ),
    # Finalizers, specs and metadata; the status of the four custom resources (phases, conditions); the
    # listener's pod, ServiceAccount, proxy Secret, Role and RoleBinding; the cleanup-protection finalizer
    # of what upstream's scale set chart made (ServiceAccounts, Roles, RoleBindings, its config Secret).
    effects.MergePatch: (
        Access(_CUSTOM, ("patch",), (CLUSTER,)),
        Access(_CUSTOM, ("patch",), (CLUSTER,), "status"),
        Access(("Pod",), ("patch",), (CONTROLLER_NAMESPACE,)),
        Access(("Secret", "ServiceAccount"), ("patch",), _BOTH_NAMESPACES),
        Access(("Role", "RoleBinding"), ("patch",), (SCALE_SET_NAMESPACE,)),
    ),
    effects.DeleteObject: (
        Access((ERS, ER, AL), ("delete",), (CLUSTER,)),
        Access(("Pod", "Secret"), ("delete",), _BOTH_NAMESPACES),
        Access(("ServiceAccount",), ("delete",), (CONTROLLER_NAMESPACE,)),
        Access(("Role", "RoleBinding"), ("delete",), (SCALE_SET_NAMESPACE,)),
    ),
    # The pods and Secrets a runner's container hooks made: listed by label (pods are listed anyway,
    # watched), then deleted one by one.
    effects.DeleteMatching: (Access(("Pod", "Secret"), ("list", "delete"), (SCALE_SET_NAMESPACE,)),),
    # Create; on AlreadyExists read the Event and patch its count.
    effects.EmitEvent: (Access(("Event",), ("create", "get", "patch"), (CLUSTER,)),),
    effects.ActionsCall: _SCOPE_READS,
    # RemoveRunner, then delete the EphemeralRunner.
    effects.ReleaseRunner: (*_SCOPE_READS, Access((ER,), ("delete",), (CLUSTER,))),
    # Read an existing JIT Secret, else create it.
    effects.CreateJitConfigSecret: (
        *_SCOPE_READS,
        Access(("Secret",), ("get", "create"), (SCALE_SET_NAMESPACE,)),
    ),
    effects.CreateListenerConfigSecret: (
        *_SCOPE_READS,
        Access(("Secret",), ("get", "create"), (CONTROLLER_NAMESPACE,)),
    ),
    # Read the proxy credentials and the live Secret; create it or patch what differs.
    effects.WriteProxySecret: (
        Access(("Secret",), ("get",), (SCALE_SET_NAMESPACE,)),
        Access(("Secret",), ("get", "create", "patch"), (CONTROLLER_NAMESPACE,)),
    ),
    # A timer: the runtime journals it, nothing goes to the API server.
    effects.RequeueAfter: (),
}

# Creating an object whose ownerReference sets blockOwnerDeletion needs ``update`` on the owner's
# ``finalizers`` subresource where the OwnerReferencesPermissionEnforcement admission plugin runs: runner
# sets (owner: the scale set), runners (the runner set), pods and Secrets (a runner, a listener), a
# listener's ServiceAccount (the listener). Upstream grants patch and update; the plugin checks update.
FINALIZER_OWNERS: Final = _CUSTOM

# What upstream's gha-runner-scale-set chart (0.14, ``templates/manager_role.yaml``) grants the controller
# in each scale set's namespace, by its manager Role and RoleBinding; ConfigMaps only with
# ``githubServerTLS``.
UPSTREAM_MANAGER_ROLE: Final[tuple[Mapping[str, Any], ...]] = (
    {"apiGroups": [""], "resources": ["pods"], "verbs": ["create", "delete", "get"]},
    {"apiGroups": [""], "resources": ["pods/status"], "verbs": ["get"]},
    {
        "apiGroups": [""],
        "resources": ["secrets", "serviceaccounts"],
        "verbs": ["create", "delete", "get", "list", "patch", "update"],
    },
    {
        "apiGroups": [RBAC_GROUP],
        "resources": ["rolebindings", "roles"],
        "verbs": ["create", "delete", "get", "patch", "update"],
    },
    {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"]},
)


def effect_types() -> list[type[effects.Effect]]:
    """Every concrete effect type ``statemachines.effects`` declares."""
    found: list[type[effects.Effect]] = []
    pending: list[type[effects.Effect]] = [effects.Effect]
    while pending:
        for sub in pending.pop().__subclasses__():
            found.append(sub)
            pending.append(sub)
    return sorted(found, key=lambda t: t.__name__)


def resource_of(kind: str, subresource: str = "") -> tuple[str, str]:
    """(API group, resource) of an effect's kind as the executor addresses it."""
    info = kubewriting.kind_info(kind)
    return info.group, f"{info.plural}/{subresource}" if subresource else info.plural


def watch_permissions() -> set[Permission]:
    kinds = (watched.BY_NAME[name] for name in declared.WATCHED)
    return {Permission(k.group, k.plural, verb) for k in kinds for verb in WATCH_VERBS}


def effect_permissions(where: str | None = None) -> set[Permission]:
    """What the effects need in ``where`` (None: anywhere)."""
    found: set[Permission] = set()
    for accesses in EFFECT_ACCESS.values():
        for access in accesses:
            if where is not None and where not in access.where:
                continue
            for kind in access.kinds:
                group, resource = resource_of(kind, access.subresource)
                found.update(Permission(group, resource, verb) for verb in access.verbs)
    return found


def finalizer_permissions() -> set[Permission]:
    return {Permission(*resource_of(kind, "finalizers"), "update") for kind in FINALIZER_OWNERS}


def cluster_permissions() -> set[Permission]:
    """What the controller needs in every namespace it watches (the ClusterRole): list and watch, the
    custom resources' writes and their finalizers, Events. No Secret, and no write on a built-in kind."""
    return watch_permissions() | effect_permissions(CLUSTER) | finalizer_permissions()


def listener_permissions() -> set[Permission]:
    """What the controller needs in its own namespace, where listeners run (arcsm's chart's Role there,
    as upstream's listener Role)."""
    return effect_permissions(CONTROLLER_NAMESPACE)


def scale_set_namespace_permissions() -> set[Permission]:
    """What the controller needs in a scale set's namespace beyond the ClusterRole: all of it granted by
    upstream's manager Role (``UPSTREAM_MANAGER_ROLE``), which arcsm's chart does not make."""
    return effect_permissions(SCALE_SET_NAMESPACE) - cluster_permissions()


def controller_permissions() -> set[Permission]:
    """Everything the controller needs, wherever: the watches and every effect."""
    return watch_permissions() | effect_permissions() | finalizer_permissions()


def leader_election_permissions() -> set[Permission]:
    """What leader election needs in the controller namespace."""
    return {Permission(LEASE_GROUP, "leases", verb) for verb in LEASE_VERBS}


def schema_read_permissions() -> set[Permission]:
    """What reading the served CRDs at start needs, cluster-wide."""
    return {Permission(CRD_GROUP, "customresourcedefinitions", "get")}


VERB_ORDER: Final = ("get", "list", "watch", "create", "update", "patch", "delete", "deletecollection")


def _verb_key(verb: str) -> tuple[int, str]:
    return (VERB_ORDER.index(verb) if verb in VERB_ORDER else len(VERB_ORDER), verb)


def rules(permissions: Iterable[Permission]) -> list[dict[str, Any]]:
    """RBAC ``rules``: per API group, the resources that share a verb set in one rule, ordered by group
    and resource."""
    verbs: dict[tuple[str, str], set[str]] = {}
    for p in permissions:
        verbs.setdefault((p.group, p.resource), set()).add(p.verb)
    grouped: dict[tuple[str, tuple[str, ...]], list[str]] = {}
    for (group, resource), found in verbs.items():
        key = (group, tuple(sorted(found, key=_verb_key)))
        grouped.setdefault(key, []).append(resource)
    out = [
        {"apiGroups": [group], "resources": sorted(resources), "verbs": list(verb_set)}
        for (group, verb_set), resources in grouped.items()
    ]
    return sorted(out, key=lambda rule: (rule["apiGroups"][0], rule["resources"][0]))


def granted(role_rules: Iterable[Mapping[str, Any]]) -> set[Permission]:
    """The permissions ``rules`` grant (wildcards are not expanded; ``resourceNames`` are ignored, so a
    rule limited to names counts as the whole resource)."""
    out: set[Permission] = set()
    for rule in role_rules:
        for group in rule.get("apiGroups") or ():
            for resource in rule.get("resources") or ():
                out.update(Permission(group, resource, verb) for verb in rule.get("verbs") or ())
    return out


def allows(role_rules: Iterable[Mapping[str, Any]], permission: Permission) -> bool:
    """Whether ``rules`` grant ``permission`` (``*`` matches any group, resource or verb)."""
    for rule in role_rules:
        groups = rule.get("apiGroups") or ()
        resources = rule.get("resources") or ()
        verbs = rule.get("verbs") or ()
        if (
            (permission.group in groups or "*" in groups)
            and (permission.resource in resources or "*" in resources)
            and (permission.verb in verbs or "*" in verbs)
        ):
            return True
    return False
