"""``kubectl auth can-i`` and ``kubectl auth whoami``: the self reviews (sim.selfreviews) answered from
RBAC for a token the emulator issued, and for the unchecked requests as the kubeconfig's user.

Inputs: the ``world`` and ``kube`` fixtures; Debian's ``kubectl`` with the world's kubeconfig (plain HTTP,
no token sent) and with a ServiceAccount token over HTTPS; roles made with ``kubectl create role`` and
``rolebinding`` (protobuf bodies); kubernetes_asyncio and raw HTTP (JSON and protobuf) for the API.
Outputs: what kubectl prints and its exit codes, the reviews' status and reasons, discovery listing the
review resources, 422 for a review asking nothing or two things.
"""

from __future__ import annotations

import re
from pathlib import Path

import aiohttp
from kubernetes_asyncio import client

from sim import protobuf
from sim.world import World
from tests.e2e.sim.conformance import error_status
from tests.kubectl import kubectl, ok, requires_kubectl

NS = "default"
ROBOT = "system:serviceaccount:default:robot"
ALLOWED_BY_ROLE = (
    'RBAC: allowed by RoleBinding "robot-reads/default" of Role "pod-reader" to '
    'ServiceAccount "robot/default"'
)


async def robot(kubeconfig: Path) -> str:
    """A ServiceAccount ``robot`` that may get and list pods in ``default``; its token."""
    await ok(kubeconfig, "create", "serviceaccount", "robot")
    await ok(kubeconfig, "create", "role", "pod-reader", "--verb=get,list", "--resource=pods")
    await ok(
        kubeconfig,
        "create",
        "rolebinding",
        "robot-reads",
        "--role=pod-reader",
        "--serviceaccount=default:robot",
    )
    return (await ok(kubeconfig, "create", "token", "robot")).strip()


def as_token(world: World, token: str) -> tuple[str, ...]:
    return (
        f"--server={world.https_url}",
        f"--certificate-authority={world.ca_file}",
        f"--token={token}",
        "-n",
        NS,
    )


def attributes(out: str) -> dict[str, str]:
    """``kubectl auth whoami``'s table: attribute → value."""
    rows = [re.split(r"\s{2,}", line.strip(), maxsplit=1) for line in out.strip().splitlines()[1:]]
    return {row[0]: row[1] for row in rows}


@requires_kubectl
async def test_kubectl_asks_as_the_kubeconfigs_user_who_may_do_anything(
    world: World, kubeconfig: Path
) -> None:
    who = attributes(await ok(kubeconfig, "auth", "whoami"))
    assert who == {"Username": "arcsm-sim", "Groups": "[system:masters system:authenticated]"}
    assert (await ok(kubeconfig, "auth", "can-i", "delete", "secrets", "-A")).strip() == "yes"
    listed = (await ok(kubeconfig, "auth", "can-i", "--list")).splitlines()
    assert listed[0].split() == ["Resources", "Non-Resource", "URLs", "Resource", "Names", "Verbs"]
    assert listed[1].split() == ["*.*", "[]", "[]", "[*]"]


@requires_kubectl
async def test_kubectl_with_a_service_account_token_is_answered_from_rbac(
    world: World, kubeconfig: Path
) -> None:
    token = await robot(kubeconfig)
    # The flags replace the kubeconfig's server and token.
    code, out, err = await kubectl(kubeconfig, *as_token(world, token), "auth", "whoami")
    assert code == 0, err
    who = attributes(out)
    assert who["Username"] == ROBOT
    assert who["Groups"] == f"[system:serviceaccounts system:serviceaccounts:{NS} system:authenticated]"
    assert who["UID"]
    assert who["Extra: authentication.kubernetes.io/credential-id"].startswith("[JTI=")

    async def can_i(*args: str) -> tuple[int, str]:
        code, out, err = await kubectl(kubeconfig, *as_token(world, token), "auth", "can-i", *args)
        assert code in (0, 1), err
        return code, out.strip()

    assert await can_i("get", "pods") == (0, "yes")
    assert await can_i("list", "pods") == (0, "yes")
    assert await can_i("delete", "pods") == (1, "no")
    assert await can_i("get", "pods", "-n", "arc-systems") == (1, "no")
    assert await can_i("get", "/version") == (0, "yes")
    code, out = await can_i("--list")
    rows = {tuple(line.split()) for line in out.splitlines()[1:]}
    assert ("pods", "[]", "[]", "[get", "list]") in rows
    assert ("selfsubjectaccessreviews.authorization.k8s.io", "[]", "[]", "[create]") in rows
    assert ("[/version]", "[]", "[get]") in rows


@requires_kubectl
async def test_kubectl_finds_the_review_resources_in_discovery(world: World, kubeconfig: Path) -> None:
    out = await ok(kubeconfig, "api-resources", "--api-group=authorization.k8s.io", "-o", "wide")
    rows = [line.split() for line in out.strip().splitlines()[1:]]
    assert [r[0] for r in rows] == ["selfsubjectaccessreviews", "selfsubjectrulesreviews"]
    assert [r[1:] for r in rows] == [
        ["authorization.k8s.io/v1", "false", "SelfSubjectAccessReview", "create"],
        ["authorization.k8s.io/v1", "false", "SelfSubjectRulesReview", "create"],
    ]
    out = await ok(kubeconfig, "api-resources", "--api-group=authentication.k8s.io")
    assert out.strip().splitlines()[1].split()[:3] == [
        "selfsubjectreviews",
        "authentication.k8s.io/v1",
        "false",
    ]


async def test_access_reviews_through_kubernetes_asyncio(
    world: World, kube: client.ApiClient, kubeconfig: Path
) -> None:
    core, rbac = client.CoreV1Api(kube), client.RbacAuthorizationV1Api(kube)
    await core.create_namespaced_service_account(NS, {"metadata": {"name": "robot"}})
    await rbac.create_namespaced_role(
        NS,
        {
            "metadata": {"name": "pod-reader"},
            "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}],
        },
    )
    await rbac.create_namespaced_role_binding(
        NS,
        {
            "metadata": {"name": "robot-reads"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "pod-reader"},
            "subjects": [{"kind": "ServiceAccount", "name": "robot", "namespace": NS}],
        },
    )
    answer = await core.create_namespaced_service_account_token("robot", NS, {"spec": {"audiences": []}})
    async with client.ApiClient(world.https_configuration(token=answer.status.token)) as api:
        authz = client.AuthorizationV1Api(api)

        async def review(spec: dict[str, object]) -> client.V1SubjectAccessReviewStatus:
            done = await authz.create_self_subject_access_review({"spec": spec})
            return done.status

        got = await review({"resourceAttributes": {"namespace": NS, "verb": "get", "resource": "pods"}})
        assert (got.allowed, got.reason) == (True, ALLOWED_BY_ROLE)
        got = await review({"resourceAttributes": {"namespace": NS, "verb": "delete", "resource": "pods"}})
        assert (got.allowed, got.reason, got.denied) == (False, None, None)
        got = await review({"nonResourceAttributes": {"path": "/version", "verb": "get"}})
        assert got.allowed and got.reason == (
            'RBAC: allowed by ClusterRoleBinding "system:discovery" of ClusterRole "system:discovery" '
            'to Group "system:authenticated"'
        )
        both = {"resourceAttributes": {"verb": "get"}, "nonResourceAttributes": {"path": "/", "verb": "get"}}
        body = await error_status(authz.create_self_subject_access_review({"spec": both}))
        assert (body["code"], body["reason"]) == (422, "Invalid")
        assert body["message"].startswith('SelfSubjectAccessReview.authorization.k8s.io "" is invalid: ')
        (cause,) = body["details"]["causes"]
        assert (cause["field"], cause["reason"]) == ("spec.nonResourceAttributes", "FieldValueInvalid")
        assert cause["message"].endswith(": cannot be specified in combination with resourceAttributes")
        body = await error_status(authz.create_self_subject_access_review({"spec": {}}))
        assert body["message"].endswith(
            "exactly one of nonResourceAttributes or resourceAttributes must be specified"
        )

        rules = await authz.create_self_subject_rules_review({"spec": {"namespace": NS}})
        assert {"verbs": ["get"], "api_groups": [""], "resources": ["pods"], "resource_names": None} in [
            r.to_dict() for r in rules.status.resource_rules
        ]
        assert rules.status.incomplete is False

        who = await client.AuthenticationV1Api(api).create_self_subject_review({})
        assert who.status.user_info.username == ROBOT
        assert who.status.user_info.extra["authentication.kubernetes.io/credential-id"][0].startswith("JTI=")

    # The unchecked client (no token the emulator issued) may do anything and is the kubeconfig's user.
    got = await client.AuthorizationV1Api(kube).create_self_subject_access_review(
        {"spec": {"resourceAttributes": {"verb": "delete", "resource": "nodes"}}}
    )
    assert got.status.allowed is True
    who = await client.AuthenticationV1Api(kube).create_self_subject_review({})
    assert (who.status.user_info.username, who.status.user_info.groups) == (
        "arcsm-sim",
        ["system:masters", "system:authenticated"],
    )


async def test_a_protobuf_access_review_is_answered_in_protobuf(world: World) -> None:
    review = {
        "apiVersion": "authorization.k8s.io/v1",
        "kind": "SelfSubjectAccessReview",
        "metadata": {},
        "spec": {"resourceAttributes": {"namespace": NS, "verb": "get", "resource": "pods"}},
    }
    headers = {"Content-Type": protobuf.MEDIA_TYPE, "Accept": protobuf.MEDIA_TYPE + ",application/json"}
    async with (
        aiohttp.ClientSession() as session,
        session.post(
            world.url + "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
            data=protobuf.encode(review),
            headers=headers,
        ) as resp,
    ):
        assert resp.status == 201
        assert resp.content_type == protobuf.MEDIA_TYPE
        answered = protobuf.decode(await resp.read())
    assert answered["kind"] == "SelfSubjectAccessReview"
    assert answered["spec"] == review["spec"]
    assert answered["status"] == {"allowed": True}
    (logged,) = [r for r in world.requests if r.path.endswith("/selfsubjectaccessreviews")]
    assert (logged.verb, logged.status, logged.content_type) == ("create", 201, protobuf.MEDIA_TYPE)

    async with (
        aiohttp.ClientSession() as session,
        session.get(world.url + "/apis") as groups,
        session.get(world.url + "/apis/authentication.k8s.io/v1") as resources,
    ):
        names = {g["name"] for g in (await groups.json())["groups"]}
        listed = await resources.json()
    assert {"authorization.k8s.io", "authentication.k8s.io"} <= names
    assert [r["name"] for r in listed["resources"]] == ["selfsubjectreviews"]
    assert listed["resources"][0]["verbs"] == ["create"]
