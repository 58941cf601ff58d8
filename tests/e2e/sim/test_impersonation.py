"""Impersonation (``Impersonate-User``, ``-Group``, ``-Uid``, ``-Extra-*``): each thing asked authorized
for the requester as the verb ``impersonate``, then the request served as the impersonated user.

Inputs: the ``world`` and ``kube`` fixtures (tests/conftest.py); ServiceAccounts ``robot`` (may get and
list pods in ``default``) and ``boss`` (may impersonate the user ``alice``, the group ``team``, the
account ``robot``, uids and the extra ``scopes``), their tokens from the TokenRequest subresource; raw
HTTP (aiohttp) with the headers, over plain HTTP without a token (the kubeconfig's user, in
``system:masters``) and over HTTPS with a token; Debian's ``kubectl`` with ``--as`` / ``--as-group``.
Outputs: the impersonated user's RBAC decides (``kubectl auth can-i delete pods --as
system:serviceaccount:default:robot`` says no), ``whoami`` shows the impersonated user with its groups
and extras, a requester without the right is 403 as kube-apiserver words it, and groups without a user
are the filter's plain-text 500.
"""

from __future__ import annotations

import json
import re
import ssl
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import aiohttp
from kubernetes_asyncio import client

from sim.world import World
from tests.e2e.sim.test_authorization import grant, token_for
from tests.kubectl import kubectl, ok, requires_kubectl

NS = "default"
ROBOT = "system:serviceaccount:default:robot"
BOSS = "system:serviceaccount:default:boss"
RBAC = "rbac.authorization.k8s.io"
AUTHN = "authentication.k8s.io"
ROBOT_RULE = 'RBAC: allowed by RoleBinding "robot/default" of Role "reader" to ServiceAccount "robot/default"'

Headers = Sequence[tuple[str, str]]


async def send(
    world: World, method: str, path: str, headers: Headers, body: Any = None, token: str | None = None
) -> tuple[int, Any]:
    """One request with ``headers`` (names may repeat): over HTTPS bearing ``token``, else plain HTTP
    without credentials. The status and the JSON body (the text when it is not JSON)."""
    url = (world.https_url if token else world.url) + path
    sent = list(headers) + ([("Authorization", f"Bearer {token}")] if token else [])
    sent += [] if body is None else [("Content-Type", "application/json")]
    tls = ssl.create_default_context(cafile=str(world.ca_file)) if token else None
    async with (
        aiohttp.ClientSession() as session,
        session.request(
            method, url, headers=sent, data=None if body is None else json.dumps(body), ssl=tls or True
        ) as resp,
    ):
        text = await resp.text()
        if resp.content_type == "application/json":
            return resp.status, json.loads(text)
        return resp.status, text


def as_user(name: str, *groups: str, **extra: str) -> list[tuple[str, str]]:
    headers = [("Impersonate-User", name)] + [("Impersonate-Group", g) for g in groups]
    return headers + [(f"Impersonate-Extra-{k}", v) for k, v in extra.items()]


def access_review(verb: str, resource: str, namespace: str = NS) -> dict[str, Any]:
    return {
        "apiVersion": "authorization.k8s.io/v1",
        "kind": "SelfSubjectAccessReview",
        "spec": {"resourceAttributes": {"verb": verb, "resource": resource, "namespace": namespace}},
    }


async def can_i(world: World, headers: Headers, verb: str, resource: str, token: str | None = None) -> Any:
    code, body = await send(
        world,
        "POST",
        "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
        headers,
        access_review(verb, resource),
        token,
    )
    assert code == 201, body
    return body["status"]


async def whoami(world: World, headers: Headers, token: str | None = None) -> Any:
    review = {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}
    code, body = await send(
        world, "POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews", headers, review, token
    )
    assert code == 201, body
    return body["status"]["userInfo"]


async def grant_boss(kube: client.ApiClient) -> str:
    """The account ``boss``, allowed to impersonate a few things; its token."""
    core, rbac = client.CoreV1Api(kube), client.RbacAuthorizationV1Api(kube)
    await core.create_namespaced_service_account(NS, {"metadata": {"name": "boss"}})
    await rbac.create_cluster_role(
        {
            "metadata": {"name": "impersonator"},
            "rules": [
                {
                    "apiGroups": [""],
                    "resources": ["users"],
                    "resourceNames": ["alice"],
                    "verbs": ["impersonate"],
                },
                {
                    "apiGroups": [""],
                    "resources": ["groups"],
                    "resourceNames": ["team"],
                    "verbs": ["impersonate"],
                },
                {
                    "apiGroups": [""],
                    "resources": ["serviceaccounts"],
                    "resourceNames": ["robot"],
                    "verbs": ["impersonate"],
                },
                {"apiGroups": [AUTHN], "resources": ["uids", "userextras/scopes"], "verbs": ["impersonate"]},
            ],
        }
    )
    await rbac.create_cluster_role_binding(
        {
            "metadata": {"name": "boss-impersonates"},
            "roleRef": {"apiGroup": RBAC, "kind": "ClusterRole", "name": "impersonator"},
            "subjects": [{"kind": "ServiceAccount", "name": "boss", "namespace": NS}],
        }
    )
    return await token_for(kube, "boss")


def forbidden(message: str, name: str, kind: str, group: str = "") -> dict[str, Any]:
    details: dict[str, Any] = {"name": name}
    if group:
        details["group"] = group
    details["kind"] = kind
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": "Forbidden",
        "details": details,
        "code": 403,
    }


async def test_the_kubeconfig_user_acts_as_an_account_under_its_rbac(
    world: World, kube: client.ApiClient
) -> None:
    await grant(kube)
    robot = as_user(ROBOT)

    code, listed = await send(world, "GET", f"/api/v1/namespaces/{NS}/pods", robot)
    assert (code, listed["kind"]) == (200, "PodList")
    code, refused = await send(world, "DELETE", f"/api/v1/namespaces/{NS}/secrets/open", robot)
    assert code == 403
    assert refused["message"] == (
        f'secrets "open" is forbidden: User "{ROBOT}" cannot delete resource "secrets" in API group "" '
        'in the namespace "default"'
    )
    await client.CoreV1Api(kube).read_namespaced_secret("open", NS)
    assert await can_i(world, robot, "delete", "pods") == {"allowed": False}
    assert await can_i(world, robot, "list", "pods") == {"allowed": True, "reason": ROBOT_RULE}
    assert await whoami(world, robot) == {
        "username": ROBOT,
        "groups": ["system:serviceaccounts", "system:serviceaccounts:default", "system:authenticated"],
    }
    assert [r.user for r in world.requests if r.path.endswith("/pods")] == [ROBOT]


async def test_groups_extras_and_uid_make_the_impersonated_user(world: World) -> None:
    headers = [*as_user("alice", "team", "qa", **{"Scopes": "read", "Example.com%2fTeam": "x"})]
    headers += [("Impersonate-Extra-Scopes", "write"), ("Impersonate-Uid", "u-1")]

    assert await whoami(world, headers) == {
        "username": "alice",
        "uid": "u-1",
        "groups": ["team", "qa", "system:authenticated"],
        "extra": {"scopes": ["read", "write"], "example.com/team": ["x"]},
    }
    # Groups given for an account replace its own; system:authenticated is added only once.
    assert (await whoami(world, as_user(ROBOT, "team", "system:authenticated")))["groups"] == [
        "team",
        "system:authenticated",
    ]
    # system:anonymous is unauthenticated: it may read /version, not review itself.
    anonymous = as_user("system:anonymous")
    assert (await send(world, "GET", "/version", anonymous))[0] == 200
    code, body = await send(
        world,
        "POST",
        "/apis/authentication.k8s.io/v1/selfsubjectreviews",
        anonymous,
        {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"},
    )
    assert (code, body["message"]) == (
        403,
        'selfsubjectreviews.authentication.k8s.io is forbidden: User "system:anonymous" cannot create '
        'resource "selfsubjectreviews" in API group "authentication.k8s.io" at the cluster scope',
    )
    # A name that is no valid account is a user.
    assert (await whoami(world, as_user("system:serviceaccount:Bad:robot")))["groups"] == [
        "system:authenticated"
    ]


async def test_an_impersonated_user_without_roles_is_refused_and_masters_may_do_anything(
    world: World, kube: client.ApiClient
) -> None:
    code, refused = await send(world, "GET", f"/api/v1/namespaces/{NS}/pods", as_user("alice"))
    assert (code, refused) == (
        403,
        {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": 'pods is forbidden: User "alice" cannot list resource "pods" in API group "" '
            'in the namespace "default"',
            "reason": "Forbidden",
            "details": {"kind": "pods"},
            "code": 403,
        },
    )
    masters = as_user("alice", "system:masters")
    code, _ = await send(world, "GET", f"/api/v1/namespaces/{NS}/pods", masters)
    assert code == 200
    assert await can_i(world, masters, "delete", "nodes") == {"allowed": True}


async def test_a_requester_may_impersonate_only_what_rbac_lets_it(
    world: World, kube: client.ApiClient
) -> None:
    await grant(kube)
    boss = await grant_boss(kube)
    robot = await token_for(kube, "robot")

    code, body = await send(world, "GET", f"/api/v1/namespaces/{NS}/pods", as_user("alice"), token=robot)
    assert (code, body) == (
        403,
        forbidden(
            f'users "alice" is forbidden: User "{ROBOT}" cannot impersonate resource "users" in API group "" '
            "at the cluster scope",
            "alice",
            "users",
        ),
    )
    code, body = await send(world, "GET", f"/api/v1/namespaces/{NS}/pods", as_user(BOSS), token=robot)
    assert (code, body) == (
        403,
        forbidden(
            f'serviceaccounts "boss" is forbidden: User "{ROBOT}" cannot impersonate resource '
            '"serviceaccounts" in API group "" in the namespace "default"',
            "boss",
            "serviceaccounts",
        ),
    )

    assert await whoami(
        world, [*as_user("alice", "team", Scopes="read"), ("Impersonate-Uid", "7")], boss
    ) == {
        "username": "alice",
        "uid": "7",
        "groups": ["team", "system:authenticated"],
        "extra": {"scopes": ["read"]},
    }
    assert await can_i(world, as_user(ROBOT), "list", "pods", boss) == {"allowed": True, "reason": ROBOT_RULE}
    code, body = await send(world, "GET", "/version", as_user("alice", "other"), token=boss)
    assert (code, body) == (
        403,
        forbidden(
            f'groups "other" is forbidden: User "{BOSS}" cannot impersonate resource "groups" '
            'in API group "" at the cluster scope',
            "other",
            "groups",
        ),
    )
    code, body = await send(world, "GET", "/version", as_user("alice", Reach="far"), token=boss)
    assert (code, body) == (
        403,
        forbidden(
            f'userextras.{AUTHN} "far" is forbidden: User "{BOSS}" cannot impersonate resource '
            f'"userextras/reach" in API group "{AUTHN}" at the cluster scope',
            "far",
            "userextras",
            AUTHN,
        ),
    )
    # Impersonated, boss is alice, who may list no pods.
    code, body = await send(world, "GET", f"/api/v1/namespaces/{NS}/pods", as_user("alice"), token=boss)
    assert code == 403
    assert body["message"].startswith('pods is forbidden: User "alice" cannot list resource "pods"')


async def test_groups_without_a_user_are_an_internal_error(world: World) -> None:
    code, text = await send(world, "GET", "/api/v1/namespaces?limit=1", [("Impersonate-Group", "team")])

    assert code == 500
    assert text == (
        'Internal Server Error: "/api/v1/namespaces?limit=1": requested [{Group  team    }] without '
        "impersonating a user\n"
    )


@requires_kubectl
async def test_kubectl_can_i_as_an_account_answers_from_its_rbac(
    world: World, kube: client.ApiClient, kubeconfig: Path
) -> None:
    await grant(kube)

    async def can_i(*args: str) -> tuple[int, str]:
        code, out, err = await kubectl(kubeconfig, "auth", "can-i", *args, "--as", ROBOT)
        assert code in (0, 1), err
        return code, out.strip()

    assert await can_i("delete", "pods") == (1, "no")
    assert await can_i("list", "pods") == (0, "yes")
    assert await can_i("get", "secrets/open") == (0, "yes")
    assert await can_i("get", "secrets/closed") == (1, "no")

    code, _, err = await kubectl(kubeconfig, "get", "pods", "-n", "arc-systems", "--as", ROBOT)
    assert code == 1
    assert err.strip() == (
        f'Error from server (Forbidden): pods is forbidden: User "{ROBOT}" cannot list resource "pods" '
        'in API group "" in the namespace "arc-systems"'
    )
    out = await ok(kubeconfig, "auth", "whoami", "--as", "alice", "--as-group", "team")
    rows = [re.split(r"\s{2,}", line.strip(), maxsplit=1) for line in out.strip().splitlines()[1:]]
    assert dict(rows) == {"Username": "alice", "Groups": "[team system:authenticated]"}
