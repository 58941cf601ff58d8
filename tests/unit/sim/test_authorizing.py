"""RBAC as upstream's authorizer judges it (sim.authorizing): request attributes from a path, rule
matching, bindings and the 403 message, over a plain store."""

from __future__ import annotations

from typing import Any

import pytest

from sim import authorizing
from sim.authenticating import User
from sim.authorizing import Attributes, request_attributes, rule_allows
from sim.store import Store

ROBOT = User(
    "system:serviceaccount:team:robot",
    ("system:serviceaccounts", "system:serviceaccounts:team", "system:authenticated"),
)


@pytest.mark.parametrize(
    ("method", "path", "query", "expected"),
    [
        ("GET", "/api/v1/namespaces/team/pods", {}, ("list", "", "pods", "", "team", "")),
        ("GET", "/api/v1/namespaces/team/pods", {"watch": "True"}, ("watch", "", "pods", "", "team", "")),
        (
            "GET",
            "/api/v1/namespaces/team/pods",
            {"fieldSelector": "metadata.name=p"},
            ("list", "", "pods", "", "team", "p"),
        ),
        ("GET", "/api/v1/namespaces/team/pods/p/log", {}, ("get", "", "pods", "log", "team", "p")),
        ("PATCH", "/api/v1/namespaces/team/pods/p/status", {}, ("patch", "", "pods", "status", "team", "p")),
        ("DELETE", "/api/v1/namespaces/team/pods", {}, ("deletecollection", "", "pods", "", "team", "")),
        (
            "POST",
            "/api/v1/namespaces/team/serviceaccounts/sa/token",
            {},
            ("create", "", "serviceaccounts", "token", "team", "sa"),
        ),
        ("GET", "/api/v1/namespaces/team", {}, ("get", "", "namespaces", "", "team", "team")),
        (
            "PUT",
            "/api/v1/namespaces/team/finalize",
            {},
            ("update", "", "namespaces", "finalize", "team", "team"),
        ),
        ("GET", "/api/v1/namespaces", {}, ("list", "", "namespaces", "", "", "")),
        ("GET", "/apis/apps/v1/deployments", {}, ("list", "apps", "deployments", "", "", "")),
        (
            "PATCH",
            "/apis/actions.github.com/v1alpha1/namespaces/team/ephemeralrunners/r/status",
            {},
            ("patch", "actions.github.com", "ephemeralrunners", "status", "team", "r"),
        ),
    ],
)
def test_resource_request_attributes(
    method: str, path: str, query: dict[str, str], expected: tuple[str, ...]
) -> None:
    a = request_attributes(method, path, query)
    assert a.resource_request
    assert (a.verb, a.api_group, a.resource, a.subresource, a.namespace, a.name) == expected


@pytest.mark.parametrize(
    "path", ["/version", "/api", "/api/v1", "/apis", "/apis/apps", "/apis/apps/v1", "/openapi/v3"]
)
def test_discovery_and_version_are_non_resource_requests(path: str) -> None:
    a = request_attributes("GET", path, {})
    assert not a.resource_request and a.verb == "get" and a.path == path


def pods(verb: str, *, sub: str = "", name: str = "", group: str = "") -> Attributes:
    return Attributes(
        verb=verb,
        path="",
        resource_request=True,
        api_group=group,
        resource="pods",
        subresource=sub,
        name=name,
    )


@pytest.mark.parametrize(
    ("rule", "attrs", "allowed"),
    [
        ({"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}, pods("get"), True),
        ({"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}, pods("delete", group="x"), True),
        ({"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}, pods("list"), False),
        ({"verbs": ["get"], "apiGroups": ["apps"], "resources": ["pods"]}, pods("get"), False),
        # A subresource is its own resource: "pods" does not grant pods/status; */status does.
        ({"verbs": ["patch"], "apiGroups": [""], "resources": ["pods"]}, pods("patch", sub="status"), False),
        (
            {"verbs": ["patch"], "apiGroups": [""], "resources": ["pods/status"]},
            pods("patch", sub="status"),
            True,
        ),
        (
            {"verbs": ["patch"], "apiGroups": [""], "resources": ["*/status"]},
            pods("patch", sub="status"),
            True,
        ),
        ({"verbs": ["patch"], "apiGroups": [""], "resources": ["*/status"]}, pods("patch"), False),
        ({"verbs": ["get"], "apiGroups": [""], "resources": ["*"]}, pods("get", sub="log"), True),
        # resourceNames: only named requests can match.
        (
            {"verbs": ["get"], "apiGroups": [""], "resources": ["pods"], "resourceNames": ["a"]},
            pods("get", name="a"),
            True,
        ),
        (
            {"verbs": ["get"], "apiGroups": [""], "resources": ["pods"], "resourceNames": ["a"]},
            pods("get", name="b"),
            False,
        ),
        (
            {"verbs": ["list"], "apiGroups": [""], "resources": ["pods"], "resourceNames": ["a"]},
            pods("list"),
            False,
        ),
        # Non-resource URLs: exact, or a prefix with *; resource rules never grant paths.
        ({"verbs": ["get"], "nonResourceURLs": ["/version"]}, Attributes("get", "/version"), True),
        ({"verbs": ["get"], "nonResourceURLs": ["/apis/*"]}, Attributes("get", "/apis/apps/v1"), True),
        ({"verbs": ["get"], "nonResourceURLs": ["/apis"]}, Attributes("get", "/apis/apps"), False),
        ({"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}, Attributes("get", "/version"), False),
    ],
)
def test_rule_matching(rule: dict[str, Any], attrs: Attributes, allowed: bool) -> None:
    assert rule_allows(rule, attrs) is allowed


def store_with(*objects: tuple[str, str, str, dict[str, Any]]) -> Store:
    store = Store()
    for plural, namespace, name, body in objects:
        store.put(
            ("rbac.authorization.k8s.io", plural, namespace, name), {"metadata": {"name": name}, **body}
        )
    return store


READ_PODS = {"rules": [{"verbs": ["get", "list"], "apiGroups": [""], "resources": ["pods"]}]}


def binding(role_kind: str, role: str, subject: dict[str, Any]) -> dict[str, Any]:
    return {
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": role_kind, "name": role},
        "subjects": [subject],
    }


def test_a_role_binding_grants_in_its_namespace_only() -> None:
    store = store_with(
        ("roles", "team", "reader", READ_PODS),
        (
            "rolebindings",
            "team",
            "robot",
            binding("Role", "reader", {"kind": "ServiceAccount", "name": "robot"}),
        ),
    )
    list_in = request_attributes("GET", "/api/v1/namespaces/team/pods", {})
    list_elsewhere = request_attributes("GET", "/api/v1/namespaces/other/pods", {})
    assert authorizing.authorize(store, ROBOT, list_in).allowed
    assert not authorizing.authorize(store, ROBOT, list_elsewhere).allowed
    assert not authorizing.authorize(store, ROBOT, request_attributes("GET", "/api/v1/pods", {})).allowed


def test_cluster_role_bindings_grant_everywhere_and_groups_are_subjects() -> None:
    store = store_with(
        ("clusterroles", "", "reader", READ_PODS),
        (
            "clusterrolebindings",
            "",
            "all-sas",
            binding("ClusterRole", "reader", {"kind": "Group", "name": "system:serviceaccounts"}),
        ),
    )
    assert authorizing.authorize(store, ROBOT, request_attributes("GET", "/api/v1/pods", {})).allowed
    stranger = User("system:serviceaccount:x:y", ("system:authenticated",))
    assert not authorizing.authorize(store, stranger, request_attributes("GET", "/api/v1/pods", {})).allowed


def test_every_authenticated_user_may_discover() -> None:
    store = Store()
    for path in ("/version", "/api", "/apis/apps/v1", "/openapi/v3"):
        assert authorizing.authorize(store, ROBOT, request_attributes("GET", path, {})).allowed
    assert not authorizing.authorize(store, ROBOT, request_attributes("GET", "/logs", {})).allowed


def test_forbidden_messages_are_kube_apiservers() -> None:
    namespaced = authorizing.forbidden(ROBOT, request_attributes("GET", "/api/v1/namespaces/team/pods", {}))
    assert namespaced.status() == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": 'pods is forbidden: User "system:serviceaccount:team:robot" cannot list resource "pods" '
        'in API group "" in the namespace "team"',
        "reason": "Forbidden",
        "details": {"kind": "pods"},
        "code": 403,
    }
    named = authorizing.forbidden(
        ROBOT, request_attributes("PATCH", "/apis/apps/v1/namespaces/team/deployments/d/status", {})
    )
    assert named.message == (
        'deployments.apps "d" is forbidden: User "system:serviceaccount:team:robot" cannot patch resource '
        '"deployments/status" in API group "apps" in the namespace "team"'
    )
    assert named.details == {"name": "d", "group": "apps", "kind": "deployments"}
    cluster = authorizing.forbidden(
        ROBOT, request_attributes("GET", "/apis/rbac.authorization.k8s.io/v1/clusterroles", {})
    )
    assert cluster.message.endswith('in API group "rbac.authorization.k8s.io" at the cluster scope')
    path = authorizing.forbidden(ROBOT, request_attributes("GET", "/logs", {}))
    assert path.message == 'forbidden: User "system:serviceaccount:team:robot" cannot get path "/logs"'


def test_a_binding_to_a_missing_role_is_named_in_the_reason() -> None:
    store = store_with(
        (
            "rolebindings",
            "team",
            "robot",
            binding("Role", "ghost", {"kind": "ServiceAccount", "name": "robot"}),
        )
    )
    decision = authorizing.authorize(
        store, ROBOT, request_attributes("GET", "/api/v1/namespaces/team/pods", {})
    )
    assert decision == authorizing.Decision(False, 'RBAC: role.rbac.authorization.k8s.io "ghost" not found')
