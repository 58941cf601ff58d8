"""The rendered RBAC is exactly what arcsm's watches and effects need.

Inputs: the watched kinds (``watchers.kinds``), the effect types (``statemachines.effects``), the
executor run against a recording Kubernetes adapter, the recorded journals of real runs, the listener
Role the AutoscalingListener machine builds. Outputs: every effect type has a row in
``permissions.EFFECT_ACCESS``; every request the executor sends for an effect is in that row (and for
the effects that only talk to Kubernetes, the row is exactly what is sent); every effect the machines
made in the recorded runs targets a kind its row names; the rendered ClusterRole, Roles and the
leader-election Role grant the derived set, nothing missing and nothing extra; and the controller holds
every permission it puts into the listener Role (RBAC's escalation rule).
"""

from __future__ import annotations

import contextlib
import gzip
import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from actions import errors as actions_errors
from controller.executor import executing, kubewriting
from controller.executor.actionsclients import ActionsClients
from controller.executor.contexts import Context, ExecutorSettings
from controller.executor.errors import ExecutionError, KubeError
from controller.installation import manifests, permissions
from controller.installation.permissions import Permission
from statemachines import effects, listenerobjects
from statemachines.effects import ObjectRef
from watchers import kinds as watched

JOURNALS = Path(__file__).resolve().parents[2] / "journals"
NS = "team-a"
CONFIG_MAP = "github-ca"
SCOPE = effects.ActionsScope(
    config_url="https://github.example.com/org",
    namespace=NS,
    secret_name="github-config",
    proxy={"https": {"url": "http://proxy.example.com:3128", "credentialSecretRef": "proxy-creds"}},
    tls={"certificateFrom": {"configMapKeyRef": {"name": CONFIG_MAP, "key": "ca.crt"}}},
)
PROXY = {"http": {"url": "http://proxy.example.com:3128", "credentialSecretRef": "proxy-creds"}}
OWNER = {"apiVersion": "actions.github.com/v1alpha1", "kind": "EphemeralRunner", "name": "r", "uid": "u1"}

# HTTP method of each adapter call → the RBAC verb.
VERBS = {"get": "get", "create": "create", "merge_patch": "patch", "delete": "delete"}


class RecordingKube:
    """The executor's Kubernetes adapter, recording each request as the permission it needs.

    ``exists``: reads find the object and creates answer AlreadyExists (the paths that read, then
    patch); otherwise reads answer NotFound and creates succeed.
    """

    def __init__(self, *, exists: bool) -> None:
        self.exists = exists
        self.sent: set[Permission] = set()

    def _record(self, verb: str, kind: str, subresource: str = "") -> None:
        group, resource = permissions.resource_of(kind, subresource)
        self.sent.add(Permission(group, resource, verb))

    async def get(self, kind: str, namespace: str, name: str) -> dict[str, Any]:
        self._record("get", kind)
        if kind in ("Secret", "ConfigMap") and name in (SCOPE.secret_name, CONFIG_MAP, "proxy-creds"):
            # The scope's own objects are there (and unusable, so no Actions call is made).
            return {"metadata": {"name": name, "namespace": namespace, "resourceVersion": "1"}, "data": {}}
        if not self.exists:
            raise KubeError("NotFound", f"{kind} {namespace}/{name} not found", code=404)
        return {"metadata": {"name": name, "namespace": namespace, "resourceVersion": "7"}, "count": 1}

    async def create(self, kind: str, namespace: str, body: Mapping[str, Any]) -> dict[str, Any]:
        self._record("create", kind)
        if self.exists:
            raise KubeError("AlreadyExists", f"{kind} already exists", code=409)
        return dict(body)

    async def merge_patch(
        self, ref: ObjectRef, patch: Mapping[str, Any], *, subresource: str = ""
    ) -> dict[str, Any]:
        self._record("patch", ref.kind, subresource)
        return dict(patch)

    async def delete(self, ref: ObjectRef, *, uid: str = "", propagation: str = "") -> None:
        self._record("delete", ref.kind)

    async def delete_matching(self, kind: str, namespace: str, label_selector: str) -> int:
        self._record("list", kind)
        self._record("delete", kind)
        return 0


def samples(effect_type: type[effects.Effect]) -> Iterator[effects.Effect]:
    """Effects of ``effect_type``: for the generic Kubernetes effects, one aimed at every kind (and
    subresource) its row names; for the others, one that exercises every read its scope can need."""
    ref = ObjectRef("EphemeralRunner", NS, "r")
    if effect_type is effects.EmitEvent:
        yield effects.EmitEvent(ObjectRef("AutoscalingRunnerSet", NS, "arc"), "u1", "Normal", "Why", "msg")
    elif effect_type is effects.WriteProxySecret:
        yield effects.WriteProxySecret(ObjectRef("Secret", NS, "arc-proxy"), PROXY, OWNER)
    elif effect_type is effects.ActionsCall:
        yield effects.ActionsCall(ref, SCOPE, effects.ActionsOp.GET_RUNNER_SCALE_SET, {"name": "arc"})
    elif effect_type is effects.ReleaseRunner:
        yield effects.ReleaseRunner(ref, ref, "u1", SCOPE, 7)
    elif effect_type is effects.CreateJitConfigSecret:
        yield effects.CreateJitConfigSecret(ObjectRef("Secret", NS, "r"), SCOPE, "r", 1, "_work", OWNER)
    elif effect_type is effects.CreateListenerConfigSecret:
        yield effects.CreateListenerConfigSecret(ObjectRef("Secret", NS, "l-config"), SCOPE, {}, OWNER)
    for access in permissions.EFFECT_ACCESS[effect_type]:
        for kind in access.kinds:
            target = ObjectRef(kind, NS, "obj")
            if effect_type is effects.CreateObject:
                yield effects.CreateObject(target, {"metadata": {"name": "obj"}})
            elif effect_type is effects.MergePatch:
                yield effects.MergePatch(
                    target, {"metadata": {"labels": {"a": "b"}}}, subresource=access.subresource
                )
            elif effect_type is effects.DeleteObject:
                yield effects.DeleteObject(target, uid="u1")
            elif effect_type is effects.DeleteMatching:
                yield effects.DeleteMatching(kind, NS, "a=b")


# The effects that only talk to Kubernetes: the recording sees every request they can send.
GENERIC = {
    effects.CreateObject,
    effects.MergePatch,
    effects.DeleteObject,
    effects.DeleteMatching,
    effects.EmitEvent,
    effects.WriteProxySecret,
}


async def sent_for(effect_type: type[effects.Effect]) -> set[Permission]:
    sent: set[Permission] = set()
    for exists in (False, True):
        for effect in samples(effect_type):
            kube = RecordingKube(exists=exists)
            ctx = Context(kube=kube, clients=ActionsClients(), settings=ExecutorSettings())  # type: ignore[arg-type]
            await _perform(effect, ctx)
            sent |= kube.sent
    return sent


async def _perform(effect: effects.Effect, ctx: Context) -> None:
    # The scope objects the recording returns hold no credentials: an Actions effect fails once it has
    # read them, before it would call the service. What it sent up to then is what is checked.
    with contextlib.suppress(ExecutionError, actions_errors.ActionsError):
        await executing.perform(effect, ctx)


def declared(effect_type: type[effects.Effect]) -> set[Permission]:
    out = set()
    for access in permissions.EFFECT_ACCESS[effect_type]:
        for kind in access.kinds:
            group, resource = permissions.resource_of(kind, access.subresource)
            out.update(Permission(group, resource, verb) for verb in access.verbs)
    return out


def test_every_effect_type_has_a_row() -> None:
    assert set(permissions.EFFECT_ACCESS) == set(permissions.effect_types())
    assert effects.RequeueAfter in permissions.EFFECT_ACCESS


@pytest.mark.parametrize("effect_type", permissions.effect_types(), ids=lambda t: t.__name__)
async def test_the_executor_sends_only_what_the_row_declares(effect_type: type[effects.Effect]) -> None:
    if effect_type is effects.RequeueAfter:
        assert permissions.EFFECT_ACCESS[effect_type] == ()
        return
    sent = await sent_for(effect_type)
    assert sent, f"{effect_type.__name__} sent nothing"
    assert sent <= declared(effect_type), (
        f"{effect_type.__name__} sent {sorted(sent - declared(effect_type))}"
    )
    if effect_type in GENERIC:
        assert sent == declared(effect_type)


def recorded_effects() -> Iterator[dict[str, Any]]:
    for path in sorted(JOURNALS.glob("*.jsonl.gz")):
        for line in gzip.decompress(path.read_bytes()).decode("utf-8").splitlines():
            record = json.loads(line)
            if record["type"] == "effect":
                yield record["body"]


def test_the_recorded_runs_aim_effects_only_at_declared_kinds() -> None:
    types = {t.__name__: t for t in permissions.effect_types()}
    seen = 0
    for body in recorded_effects():
        effect_type = types[body["type"]]
        if effect_type not in GENERIC - {effects.EmitEvent, effects.WriteProxySecret}:
            continue
        kind = body["kind"] if effect_type is effects.DeleteMatching else body["target"]["kind"]
        subresource = body.get("subresource", "")
        rows = permissions.EFFECT_ACCESS[effect_type]
        assert any(kind in a.kinds and a.subresource == subresource for a in rows), (effect_type, kind)
        seen += 1
    assert seen > 0


def derived() -> set[Permission]:
    """What the watches and the effects need, derived here from their sources."""
    need = {Permission(k.group, k.plural, verb) for k in watched.KINDS for verb in ("list", "watch")}
    for effect_type in permissions.effect_types():
        need |= declared(effect_type)
    return need


LEASES = {Permission("coordination.k8s.io", "leases", verb) for verb in ("get", "create", "update")}
RBAC = "rbac.authorization.k8s.io"
GROUP = "actions.github.com"
CUSTOM = ("autoscalingrunnersets", "ephemeralrunnersets", "ephemeralrunners", "autoscalinglisteners")
FINALIZERS = {Permission(GROUP, f"{plural}/finalizers", "update") for plural in CUSTOM}
BUILT_IN_WATCHED = (("", "pods"), ("", "serviceaccounts"), (RBAC, "roles"), (RBAC, "rolebindings"))
# Upstream's gha-runner-scale-set-controller chart (templates/manager_cluster_role.yaml and
# manager_listener_role.yaml), rule by rule.
_ALL = ["create", "delete", "get", "list", "patch", "update", "watch"]
UPSTREAM_CLUSTER_ROLE = [
    *({"apiGroups": [GROUP], "resources": [plural], "verbs": _ALL} for plural in CUSTOM),
    *(
        {"apiGroups": [GROUP], "resources": [f"{plural}/finalizers"], "verbs": ["patch", "update"]}
        for plural in CUSTOM
    ),
    *(
        {"apiGroups": [GROUP], "resources": [f"{plural}/status"], "verbs": ["get", "patch", "update"]}
        for plural in CUSTOM
    ),
    {"apiGroups": [""], "resources": ["pods"], "verbs": ["list", "watch"]},
    {"apiGroups": [""], "resources": ["serviceaccounts"], "verbs": ["list", "watch"]},
    {"apiGroups": [RBAC], "resources": ["rolebindings"], "verbs": ["list", "watch"]},
    {"apiGroups": [RBAC], "resources": ["roles"], "verbs": ["list", "watch", "patch"]},
]
UPSTREAM_LISTENER_ROLE = [
    {"apiGroups": [""], "resources": ["pods"], "verbs": ["create", "delete", "get"]},
    {"apiGroups": [""], "resources": ["pods/status"], "verbs": ["get"]},
    {"apiGroups": [""], "resources": ["secrets"], "verbs": ["create", "delete", "get", "patch", "update"]},
    {
        "apiGroups": [""],
        "resources": ["serviceaccounts"],
        "verbs": ["create", "delete", "get", "patch", "update"],
    },
]
# controller.loop.servedschemas reads the four CRDs at start; only a ClusterRole can grant it.
CRD_READS = {Permission("apiextensions.k8s.io", "customresourcedefinitions", "get")}


def by_kind(documents: list[dict[str, Any]]) -> dict[tuple[str, str, str], dict[str, Any]]:
    return {(d["kind"], d["metadata"].get("namespace", ""), d["metadata"]["name"]): d for d in documents}


RBAC_KINDS = ("Role", "ClusterRole", "RoleBinding", "ClusterRoleBinding")


def rbac(values: dict[str, Any]) -> list[dict[str, Any]]:
    """The RBAC objects of the Helm chart rendered with ``values``, in install order."""
    documents = manifests.render_templates(manifests.Release(values=values))
    return [d for d in documents if d["kind"] in RBAC_KINDS]


def test_cluster_wide_rbac_is_exactly_what_is_needed() -> None:
    docs = by_kind(rbac({}))
    cluster_role = docs[("ClusterRole", "", "arcsm")]
    listener_role = docs[("Role", "arc-systems", "arcsm-listener")]
    cluster, listener = (
        permissions.granted(cluster_role["rules"]),
        permissions.granted(listener_role["rules"]),
    )
    # What is needed anywhere is granted by the chart's two roles, or in a scale set's namespace by
    # upstream's manager Role; the ClusterRole reads no Secret and writes no built-in kind.
    upstream_manager = permissions.granted(permissions.UPSTREAM_MANAGER_ROLE)
    assert (
        derived() | FINALIZERS | CRD_READS
        == cluster | listener | permissions.scale_set_namespace_permissions()
    )
    assert permissions.scale_set_namespace_permissions() <= upstream_manager
    assert cluster == permissions.cluster_permissions() | CRD_READS
    assert listener == permissions.listener_permissions()
    assert not {p for p in cluster if p.resource in ("secrets", "configmaps")}
    assert not {p for p in cluster if p.group in ("", RBAC) and p.resource != "events"} - {
        Permission(g, r, v) for g, r in BUILT_IN_WATCHED for v in ("list", "watch")
    }
    lease_role = docs[("Role", "arc-systems", "arcsm-leader-election")]
    assert permissions.granted(lease_role["rules"]) == LEASES
    assert {k for k in docs if k[0] in ("Role", "ClusterRole")} == {
        ("ClusterRole", "", "arcsm"),
        ("Role", "arc-systems", "arcsm-listener"),
        ("Role", "arc-systems", "arcsm-leader-election"),
    }
    binding = docs[("ClusterRoleBinding", "", "arcsm")]
    assert binding["roleRef"] == {
        "apiGroup": "rbac.authorization.k8s.io",
        "kind": "ClusterRole",
        "name": "arcsm",
    }
    subject = [{"kind": "ServiceAccount", "name": "arcsm", "namespace": "arc-systems"}]
    assert binding["subjects"] == subject
    assert docs[("RoleBinding", "arc-systems", "arcsm-listener")]["subjects"] == subject


def test_no_rule_grants_more_than_upstreams_charts() -> None:
    """Side by side with upstream's gha-runner-scale-set-controller chart: the ClusterRole is within its
    manager ClusterRole but for Events (upstream's recorder has no grant for them) and the CRD reads;
    the listener Role within its listener Role but for patching a listener pod's metadata."""
    docs = by_kind(rbac({}))
    cluster = permissions.granted(docs[("ClusterRole", "", "arcsm")]["rules"])
    listener = permissions.granted(docs[("Role", "arc-systems", "arcsm-listener")]["rules"])
    events = {Permission("", "events", verb) for verb in ("get", "create", "patch")}
    assert cluster - permissions.granted(UPSTREAM_CLUSTER_ROLE) == events | CRD_READS
    assert listener - permissions.granted(UPSTREAM_LISTENER_ROLE) == {Permission("", "pods", "patch")}


def test_watch_namespaces_get_roles_there_and_in_the_controller_namespace() -> None:
    docs = by_kind(rbac({"flags": {"watchSingleNamespace": "team-b", "watchNamespaces": ["team-a"]}}))
    assert not any(kind.startswith("Cluster") for kind, _, _ in docs)
    for ns in ("team-a", "team-b", "arc-systems"):
        assert permissions.granted(docs[("Role", ns, "arcsm")]["rules"]) == permissions.cluster_permissions()
        assert docs[("RoleBinding", ns, "arcsm")]["roleRef"]["name"] == "arcsm"
    listener = docs[("Role", "arc-systems", "arcsm-listener")]
    assert permissions.granted(listener["rules"]) == permissions.listener_permissions()
    assert permissions.granted(docs[("Role", "arc-systems", "arcsm-leader-election")]["rules"]) == LEASES


def test_the_controller_holds_what_it_grants_listeners() -> None:
    al = {
        "metadata": {"name": "arc-listener", "namespace": "arc-systems"},
        "spec": {"ephemeralRunnerSetName": "x"},
    }
    granted_to_listener = permissions.granted(listenerobjects.role_rules(al))
    assert granted_to_listener
    [cluster_role] = [d for d in rbac({}) if d["kind"] == "ClusterRole"]
    rules = cluster_role["rules"]
    for permission in granted_to_listener:
        assert permissions.allows(rules, permission), permission
    assert not permissions.allows(rules, Permission("rbac.authorization.k8s.io", "roles", "escalate"))
    assert not permissions.allows(rules, Permission("rbac.authorization.k8s.io", "roles", "bind"))


def test_every_kind_an_effect_names_is_one_the_executor_can_address() -> None:
    for accesses in permissions.EFFECT_ACCESS.values():
        for access in accesses:
            for kind in access.kinds:
                assert kind in kubewriting.KINDS


def test_rules_group_resources_by_verb_set() -> None:
    rules = permissions.rules(
        {
            Permission("", "pods", "get"),
            Permission("", "secrets", "get"),
            Permission("", "pods", "list"),
            Permission("apps", "statefulsets", "get"),
        }
    )
    assert rules == [
        {"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list"]},
        {"apiGroups": [""], "resources": ["secrets"], "verbs": ["get"]},
        {"apiGroups": ["apps"], "resources": ["statefulsets"], "verbs": ["get"]},
    ]
    assert permissions.allows(
        [{"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}], Permission("x", "y", "z")
    )
