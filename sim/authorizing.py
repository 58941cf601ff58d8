"""RBAC authorization of authenticated requests (``plugin/pkg/auth/authorizer/rbac``), and the request
attributes it judges (``k8s.io/apiserver/pkg/endpoints/request.RequestInfoFactory``).

``request_attributes`` reads a request as kube-apiserver does before anything else: paths under
``/api/v1/…`` and ``/apis/GROUP/VERSION/…`` with a resource are resource requests (verb from the method,
``list``/``watch`` for a collection GET, ``deletecollection`` for a collection DELETE, the name of a
``metadata.name=`` field selector as the name); everything else (``/version``, ``/healthz``, discovery,
``/openapi/v3``) is a non-resource request whose verb is the lowercased method.

``authorize`` grants a request when a rule of a role bound to the user allows it: ClusterRoleBindings
for every request, RoleBindings of the request's namespace for namespaced ones (to a Role of that
namespace or a ClusterRole); subjects are users, groups and service accounts (a RoleBinding's
service-account subject without a namespace is in the binding's). Rules match as upstream's
``RuleAllows``: verbs and apiGroups (``*`` for any), resources (``*``, ``plural``, ``plural/sub``,
``*/sub``), resourceNames (a rule naming some never matches a request without a name), nonResourceURLs
(exact, or a prefix ending in ``*``). The bootstrap policy a cluster grants every authenticated user —
``system:discovery``, ``system:basic-user``, ``system:public-info-viewer`` — is built in here.
An allowed decision carries upstream's reason (``RBAC: allowed by ClusterRoleBinding "b" of ClusterRole
"r" to Group "g"``), which ``kubectl auth can-i`` may show. ``forbidden`` is the 403 with
kube-apiserver's message, a binding whose role is missing adding
``RBAC: role.rbac.authorization.k8s.io "x" not found`` as upstream does.

Known limits: the bootstrap roles are not stored objects (``kubectl get clusterrole system:discovery``
finds nothing) and the other bootstrap roles (``cluster-admin``, ``admin``, ``edit``, ``view``, …) do not
exist; aggregated ClusterRoles get no aggregated rules (no aggregation controller); no escalation check
on writes of roles and bindings (S66); of the review APIs only the self reviews (``sim.selfreviews``)
are served. Impersonation (``sim.impersonating``) is authorized here too, as the verb ``impersonate``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from sim import errors
from sim.authenticating import AUTHENTICATED, MASTERS, UNAUTHENTICATED, User
from sim.store import Store

RBAC = "rbac.authorization.k8s.io"
NAMESPACE_SUBRESOURCES = ("status", "finalize")

Rule = Mapping[str, Any]

_DISCOVERY_URLS = ["/api", "/api/*", "/apis", "/apis/*", "/healthz", "/livez", "/openapi", "/openapi/*"]
_PUBLIC_INFO_URLS = ["/healthz", "/livez", "/readyz", "/version", "/version/"]
# system:discovery, system:basic-user and system:public-info-viewer, each bound by a ClusterRoleBinding of
# its name (to the groups of BOOTSTRAP_GROUPS).
BOOTSTRAP_ROLES: tuple[tuple[str, tuple[Rule, ...]], ...] = (
    (
        "system:discovery",
        ({"verbs": ["get"], "nonResourceURLs": [*_DISCOVERY_URLS, "/readyz", "/version", "/version/"]},),
    ),
    (
        "system:basic-user",
        (
            {
                "verbs": ["create"],
                "apiGroups": ["authorization.k8s.io"],
                "resources": ["selfsubjectaccessreviews", "selfsubjectrulesreviews"],
            },
            {
                "verbs": ["create"],
                "apiGroups": ["authentication.k8s.io"],
                "resources": ["selfsubjectreviews"],
            },
        ),
    ),
    ("system:public-info-viewer", ({"verbs": ["get"], "nonResourceURLs": _PUBLIC_INFO_URLS},)),
)
BOOTSTRAP_RULES: tuple[Rule, ...] = tuple(rule for _, rules in BOOTSTRAP_ROLES for rule in rules)
# The groups each bootstrap role's ClusterRoleBinding names (an impersonated system:anonymous is in
# system:unauthenticated).
BOOTSTRAP_GROUPS: dict[str, tuple[str, ...]] = {
    "system:discovery": (AUTHENTICATED,),
    "system:basic-user": (AUTHENTICATED,),
    "system:public-info-viewer": (AUTHENTICATED, UNAUTHENTICATED),
}


@dataclass(frozen=True)
class Attributes:
    verb: str
    path: str
    resource_request: bool = False
    api_group: str = ""
    api_version: str = ""
    resource: str = ""
    subresource: str = ""
    namespace: str = ""
    name: str = ""


def _flag(value: str | None) -> bool:
    return value is not None and value.lower() not in ("false", "0")


def _exact_name(field_selector: str) -> str:
    for term in field_selector.split(","):
        key, sep, value = term.partition("==") if "==" in term else term.partition("=")
        if sep and key.strip() == "metadata.name":
            return value.strip()
    return ""


def request_attributes(method: str, path: str, query: Mapping[str, str]) -> Attributes:
    parts = [p for p in path.strip("/").split("/") if p]
    non_resource = Attributes(verb=method.lower(), path=path)
    if len(parts) < 3 or parts[0] not in ("api", "apis"):
        return non_resource
    rest = parts[1:]
    group = ""
    if parts[0] == "apis":
        if len(rest) < 3:
            return non_resource
        group, rest = rest[0], rest[1:]
    version, rest = rest[0], rest[1:]
    verb = {"POST": "create", "GET": "get", "HEAD": "get", "PUT": "update", "PATCH": "patch"}.get(method, "")
    if method == "DELETE":
        verb = "delete"
    namespace = ""
    if rest and rest[0] == "namespaces" and len(rest) > 1:
        namespace = rest[1]
        if len(rest) > 2 and rest[2] not in NAMESPACE_SUBRESOURCES:
            rest = rest[2:]
    resource = rest[0] if rest else ""
    name = rest[1] if len(rest) > 1 else ""
    subresource = rest[2] if len(rest) > 2 else ""
    if not name and verb == "get":
        verb = "watch" if _flag(query.get("watch")) else "list"
        name = _exact_name(query.get("fieldSelector", ""))
    if not name and verb == "delete":
        verb = "deletecollection"
    return Attributes(
        verb=verb,
        path=path,
        resource_request=True,
        api_group=group,
        api_version=version,
        resource=resource,
        subresource=subresource,
        namespace=namespace,
        name=name,
    )


# -- rules ---------------------------------------------------------------------------------------------


def _resource_matches(rule: Rule, combined: str, subresource: str) -> bool:
    for resource in rule.get("resources") or []:
        if resource in ("*", combined):
            return True
        if subresource and resource == f"*/{subresource}":
            return True
    return False


def _url_matches(rule: Rule, path: str) -> bool:
    for url in rule.get("nonResourceURLs") or []:
        if url in ("*", path) or (url.endswith("*") and path.startswith(url.rstrip("*"))):
            return True
    return False


def rule_allows(rule: Rule, attrs: Attributes) -> bool:
    verbs = rule.get("verbs") or []
    if "*" not in verbs and attrs.verb not in verbs:
        return False
    if not attrs.resource_request:
        return _url_matches(rule, attrs.path)
    groups = rule.get("apiGroups") or []
    if "*" not in groups and attrs.api_group not in groups:
        return False
    combined = f"{attrs.resource}/{attrs.subresource}" if attrs.subresource else attrs.resource
    if not _resource_matches(rule, combined, attrs.subresource):
        return False
    names = rule.get("resourceNames") or []
    return not names or attrs.name in names


# -- bindings ------------------------------------------------------------------------------------------


def _subject(user: User, subjects: Any, namespace: str) -> str:
    """The first subject that names ``user``, described as upstream's RBAC does ("" for none)."""
    for subject in subjects or []:
        if not isinstance(subject, dict):
            continue
        kind, name = subject.get("kind"), subject.get("name")
        if kind == "User" and name == user.name:
            return f'User "{name}"'
        if kind == "Group" and name in user.groups:
            return f'Group "{name}"'
        if kind == "ServiceAccount":
            sa_namespace = subject.get("namespace") or namespace
            if sa_namespace and user.name == f"system:serviceaccount:{sa_namespace}:{name}":
                return f'ServiceAccount "{name}/{sa_namespace}"'
    return ""


def _role_rules(store: Store, ref: Any, namespace: str) -> tuple[list[Rule], str]:
    """The rules of a binding's roleRef, or an error text when its role is missing."""
    ref = ref if isinstance(ref, dict) else {}
    kind, name = ref.get("kind"), str(ref.get("name") or "")
    if kind == "Role":
        role = store.get((RBAC, "roles", namespace, name))
        missing = f'role.{RBAC} "{name}" not found'
    elif kind == "ClusterRole":
        role = store.get((RBAC, "clusterroles", "", name))
        missing = f'clusterrole.{RBAC} "{name}" not found'
    else:
        return [], f'unsupported role reference kind: "{kind}"'
    if role is None:
        return [], missing
    return [r for r in role.get("rules") or [] if isinstance(r, dict)], ""


def _describe(binding: Any, subject: str, namespace: str) -> str:
    """Upstream's ``clusterRoleBindingDescriber`` / ``roleBindingDescriber``."""
    name = str((binding.get("metadata") or {}).get("name", ""))
    ref = binding.get("roleRef") if isinstance(binding.get("roleRef"), dict) else {}
    role = f'{ref.get("kind", "")} "{ref.get("name", "")}"'
    if namespace:
        return f'RoleBinding "{name}/{namespace}" of {role} to {subject}'
    return f'ClusterRoleBinding "{name}" of {role} to {subject}'


def _bound_rules(store: Store, user: User, namespace: str) -> Iterator[tuple[list[Rule], str, str]]:
    """(rules, problem, source) of each binding that names ``user``: the rules of its role, why they are
    missing, and the binding described."""
    for role, bootstrap in BOOTSTRAP_ROLES:
        for group in BOOTSTRAP_GROUPS[role]:
            if group in user.groups:
                source = f'ClusterRoleBinding "{role}" of ClusterRole "{role}" to Group "{group}"'
                yield list(bootstrap), "", source
                break
    for binding in store.items((RBAC, "clusterrolebindings")):
        subject = _subject(user, binding.get("subjects"), "")
        if subject:
            rules, problem = _role_rules(store, binding.get("roleRef"), "")
            yield rules, problem, _describe(binding, subject, "")
    if namespace:
        for binding in store.items((RBAC, "rolebindings"), namespace):
            subject = _subject(user, binding.get("subjects"), namespace)
            if subject:
                rules, problem = _role_rules(store, binding.get("roleRef"), namespace)
                yield rules, problem, _describe(binding, subject, namespace)


@dataclass(frozen=True)
class Decision:
    allowed: bool
    reason: str = ""


def authorize(store: Store, user: User, attrs: Attributes) -> Decision:
    """RBAC's decision: allowed with ``RBAC: allowed by <binding>``, or denied with the problems met.
    ``system:masters`` is allowed everything first, with no reason (kube-apiserver's privileged group
    authorizer)."""
    if MASTERS in user.groups:
        return Decision(True)
    problems: list[str] = []
    namespace = attrs.namespace if attrs.resource_request else ""
    for rules, problem, source in _bound_rules(store, user, namespace):
        if problem:
            problems.append(problem)
        if any(rule_allows(rule, attrs) for rule in rules):
            return Decision(True, f"RBAC: allowed by {source}")
    if not problems:
        return Decision(False)
    reason = problems[0] if len(problems) == 1 else "[" + ", ".join(problems) + "]"
    return Decision(False, f"RBAC: {reason}")


def rules_of(store: Store, user: User, namespace: str) -> tuple[list[Rule], list[str]]:
    """Every rule bound to ``user`` in ``namespace`` (cluster-wide ones too), and the problems met
    (``RulesFor``, what a SelfSubjectRulesReview lists)."""
    found: list[Rule] = []
    problems: list[str] = []
    for rules, problem, _ in _bound_rules(store, user, namespace):
        found.extend(rules)
        if problem:
            problems.append(problem)
    return found, problems


def forbidden(user: User, attrs: Attributes, reason: str = "") -> errors.ApiError:
    """``responsewriters.Forbidden``: 403 with the resource, name and what the user cannot do."""
    if attrs.resource_request:
        resource = f"{attrs.resource}/{attrs.subresource}" if attrs.subresource else attrs.resource
        what = (
            f'User "{user.name}" cannot {attrs.verb} resource "{resource}" in API group "{attrs.api_group}"'
        )
        what += f' in the namespace "{attrs.namespace}"' if attrs.namespace else " at the cluster scope"
    else:
        what = f'User "{user.name}" cannot {attrs.verb} path "{attrs.path}"'
    if reason:
        what = f"{what}: {reason}"
    if not attrs.resource_request or not attrs.resource:
        return errors.ApiError(403, "Forbidden", f"forbidden: {what}", {})
    qualified = errors.qualified(attrs.resource, attrs.api_group)
    subject = f'{qualified} "{attrs.name}"' if attrs.name else qualified
    details: dict[str, Any] = {"name": attrs.name} if attrs.name else {}
    if attrs.api_group:
        details["group"] = attrs.api_group
    details["kind"] = attrs.resource
    return errors.ApiError(403, "Forbidden", f"{subject} is forbidden: {what}", details)


def check(store: Store, user: User, method: str, path: str, query: Mapping[str, str]) -> None:
    """Raise the 403 when ``user`` may not make this request."""
    attrs = request_attributes(method, path, query)
    decision = authorize(store, user, attrs)
    if not decision.allowed:
        raise forbidden(user, attrs, decision.reason)
