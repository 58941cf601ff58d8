"""The Kubernetes permissions arcsm needs, derived from what it watches and what its effects do.

Three sources, and nothing else:

* the watched kinds (``declared.WATCHED``: every kind a controller declaration names, as the watchers'
  table ``watchers.kinds`` serves it): ``list`` and ``watch`` on each;
* the effects: ``EFFECT_ACCESS`` says, per effect type, which kinds (and subresources) the machines
  aim it at and which verbs its executor sends for them (``controller/executor/kubeeffects.py``,
  ``secreteffects.py``, ``actionseffects.py``; the Actions effects read the credentials Secret, the CA
  ConfigMap and the proxy credential Secrets through the executor's Kubernetes reader);
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


@dataclass(frozen=True, order=True)
class Permission:
    """One verb on one resource (``plural`` or ``plural/subresource``) of an API group."""

    group: str
    resource: str
    verb: str


@dataclass(frozen=True)
class Access:
    """An effect aimed at ``kinds`` (their ``subresource``) is sent as ``verbs``."""

    kinds: tuple[str, ...]
    verbs: tuple[str, ...]
    subresource: str = ""


_LISTENER_OBJECTS = ("ServiceAccount", "Role", "RoleBinding")
# Reading an Actions scope: the credentials Secret, the CA ConfigMap, the proxy credential Secrets.
_SCOPE_READS = (Access(("Secret", "ConfigMap"), ("get",)),)

EFFECT_ACCESS: Final[Mapping[type[effects.Effect], tuple[Access, ...]]] = {
    # The runner set, runners and listener of a scale set; runner and listener pods; the listener's
    # ServiceAccount, and its Role and RoleBinding in the scale set's namespace.
    effects.CreateObject: (Access((ERS, ER, AL, "Pod", *_LISTENER_OBJECTS), ("create",)),),
    # Finalizers, specs and metadata; the status of the four custom resources (phases, conditions).
    effects.MergePatch: (
        Access((ARS, ERS, ER, AL, "Pod", "Secret", *_LISTENER_OBJECTS), ("patch",)),
        Access((ARS, ERS, ER, AL), ("patch",), "status"),
    ),
    effects.DeleteObject: (Access((ERS, ER, AL, "Pod", "Secret", *_LISTENER_OBJECTS), ("delete",)),),
    # The pods and Secrets a runner's container hooks made.
    effects.DeleteMatching: (Access(("Pod", "Secret"), ("deletecollection",)),),
    # Create; on AlreadyExists read the Event and patch its count.
    effects.EmitEvent: (Access(("Event",), ("create", "get", "patch")),),
    effects.ActionsCall: _SCOPE_READS,
    # RemoveRunner, then delete the EphemeralRunner.
    effects.ReleaseRunner: (*_SCOPE_READS, Access((ER,), ("delete",))),
    # Read an existing JIT Secret, else create it.
    effects.CreateJitConfigSecret: (*_SCOPE_READS, Access(("Secret",), ("get", "create"))),
    effects.CreateListenerConfigSecret: (*_SCOPE_READS, Access(("Secret",), ("get", "create"))),
    # Read the proxy credentials and the live Secret; create it or patch what differs.
    effects.WriteProxySecret: (Access(("Secret",), ("get", "create", "patch")),),
    # A timer: the runtime journals it, nothing goes to the API server.
    effects.RequeueAfter: (),
}


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


def effect_permissions() -> set[Permission]:
    found: set[Permission] = set()
    for accesses in EFFECT_ACCESS.values():
        for access in accesses:
            for kind in access.kinds:
                group, resource = resource_of(kind, access.subresource)
                found.update(Permission(group, resource, verb) for verb in access.verbs)
    return found


def controller_permissions() -> set[Permission]:
    """What the controller needs in every namespace it works in."""
    return watch_permissions() | effect_permissions()


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
