"""Authentication and RBAC for requests bearing a token the emulator issued.

Inputs: the ``world`` and ``kube`` fixtures (tests/conftest.py); a ServiceAccount ``robot`` with a Role
(read pods, get one Secret by name) bound in ``default`` and a ClusterRole (list namespaces) bound
cluster-wide; its token from the TokenRequest subresource; kubernetes_asyncio over HTTPS with that
token, Debian's ``kubectl`` with ``--token``. Outputs: what the roles allow answers, the rest is 403 with
kube-apiserver's message; discovery and ``/version`` are open to every authenticated user; a token of
another signature, an expired one and one whose account or pod is gone are 401; requests without a
token, or with one the emulator did not issue, stay unchecked; the request log names the account.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric import rsa
from kubernetes_asyncio import client

from sim import tokens
from sim.world import World
from tests.e2e.sim.conformance import api_error, status_body
from tests.helpers import eventually
from tests.kubectl import KUBECTL

NS = "default"
ROBOT = "system:serviceaccount:default:robot"
RBAC = "rbac.authorization.k8s.io"


async def grant(kube: client.ApiClient) -> None:
    core, rbac = client.CoreV1Api(kube), client.RbacAuthorizationV1Api(kube)
    await core.create_namespaced_service_account(NS, {"metadata": {"name": "robot"}})
    await core.create_namespaced_secret(NS, {"metadata": {"name": "open"}, "stringData": {"k": "v"}})
    await core.create_namespaced_secret(NS, {"metadata": {"name": "closed"}, "stringData": {"k": "v"}})
    await rbac.create_namespaced_role(
        NS,
        {
            "metadata": {"name": "reader"},
            "rules": [
                {"apiGroups": [""], "resources": ["pods", "pods/log"], "verbs": ["get", "list", "watch"]},
                {"apiGroups": [""], "resources": ["secrets"], "resourceNames": ["open"], "verbs": ["get"]},
            ],
        },
    )
    subject = {"kind": "ServiceAccount", "name": "robot", "namespace": NS}
    await rbac.create_namespaced_role_binding(
        NS,
        {
            "metadata": {"name": "robot"},
            "roleRef": {"apiGroup": RBAC, "kind": "Role", "name": "reader"},
            "subjects": [subject],
        },
    )
    await rbac.create_cluster_role(
        {
            "metadata": {"name": "ns-lister"},
            "rules": [{"apiGroups": [""], "resources": ["namespaces"], "verbs": ["list"]}],
        }
    )
    await rbac.create_cluster_role_binding(
        {
            "metadata": {"name": "robot-ns"},
            "roleRef": {"apiGroup": RBAC, "kind": "ClusterRole", "name": "ns-lister"},
            "subjects": [subject],
        }
    )


async def token_for(kube: client.ApiClient, account: str = "robot", **spec: object) -> str:
    body = {"spec": {"audiences": [], **spec}}
    answer = await client.CoreV1Api(kube).create_namespaced_service_account_token(account, NS, body)
    return str(answer.status.token)


@pytest.fixture
async def robot(world: World, kube: client.ApiClient) -> AsyncIterator[client.ApiClient]:
    """A client over HTTPS bearing robot's token."""
    await grant(kube)
    async with client.ApiClient(world.https_configuration(token=await token_for(kube))) as api:
        yield api


async def test_what_the_roles_grant_is_allowed(robot: client.ApiClient) -> None:
    core = client.CoreV1Api(robot)
    await core.list_namespaced_pod(NS)
    await core.read_namespaced_secret("open", NS)
    assert {"default", "arc-systems"} <= {n.metadata.name for n in (await core.list_namespace()).items}


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            lambda core: core.list_namespaced_pod("arc-systems"),
            f'pods is forbidden: User "{ROBOT}" cannot list resource "pods" in API group "" '
            'in the namespace "arc-systems"',
        ),
        (
            lambda core: core.create_namespaced_pod(
                NS, {"metadata": {"name": "p"}, "spec": {"containers": []}}
            ),
            f'pods is forbidden: User "{ROBOT}" cannot create resource "pods" in API group "" '
            'in the namespace "default"',
        ),
        (
            lambda core: core.read_namespaced_secret("closed", NS),
            f'secrets "closed" is forbidden: User "{ROBOT}" cannot get resource "secrets" in API group "" '
            'in the namespace "default"',
        ),
        (
            lambda core: core.list_namespaced_secret(NS),
            f'secrets is forbidden: User "{ROBOT}" cannot list resource "secrets" in API group "" '
            'in the namespace "default"',
        ),
        (
            lambda core: core.patch_namespaced_pod_status("p", NS, {"status": {}}),
            f'pods "p" is forbidden: User "{ROBOT}" cannot patch resource "pods/status" in API group "" '
            'in the namespace "default"',
        ),
        (
            # A namespace is "in" itself for authorization, as kube-apiserver reads the path.
            lambda core: core.read_namespace(NS),
            f'namespaces "default" is forbidden: User "{ROBOT}" cannot get resource "namespaces" '
            'in API group "" in the namespace "default"',
        ),
    ],
    ids=[
        "other-namespace",
        "create",
        "unnamed-secret",
        "list-secrets",
        "status-subresource",
        "get-namespace",
    ],
)
async def test_the_rest_is_forbidden_with_kube_apiservers_message(
    robot: client.ApiClient, call: object, message: str
) -> None:
    exc = await api_error(call(client.CoreV1Api(robot)))  # type: ignore[operator]
    body = status_body(exc)
    assert (exc.status, body["reason"], body["message"]) == (403, "Forbidden", message)


async def test_cluster_scoped_refusals_say_so(robot: client.ApiClient) -> None:
    exc = await api_error(client.RbacAuthorizationV1Api(robot).list_cluster_role())
    assert status_body(exc) == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": f'clusterroles.{RBAC} is forbidden: User "{ROBOT}" cannot list resource "clusterroles" '
        f'in API group "{RBAC}" at the cluster scope',
        "reason": "Forbidden",
        "details": {"group": RBAC, "kind": "clusterroles"},
        "code": 403,
    }


async def test_discovery_and_version_are_open_to_every_account(robot: client.ApiClient) -> None:
    version = await client.VersionApi(robot).get_code()
    assert version.minor == "34"
    assert (await client.CoreApi(robot).get_api_versions()).versions == ["v1"]
    groups = await client.ApisApi(robot).get_api_versions()
    assert "apps" in {g.name for g in groups.groups}
    resources = await client.CoreV1Api(robot).get_api_resources()
    assert "pods" in {r.name for r in resources.resources}
    for check in ("/healthz", "/livez", "/readyz"):
        answer = await robot.call_api(check, "GET", auth_settings=["BearerToken"], _preload_content=False)
        assert (answer.status, await answer.text()) == (200, "ok")


async def test_a_role_the_binding_names_that_does_not_exist_is_in_the_reason(
    world: World, kube: client.ApiClient
) -> None:
    await client.CoreV1Api(kube).create_namespaced_service_account(NS, {"metadata": {"name": "lost"}})
    await client.RbacAuthorizationV1Api(kube).create_namespaced_role_binding(
        NS,
        {
            "metadata": {"name": "lost"},
            "roleRef": {"apiGroup": RBAC, "kind": "Role", "name": "ghost"},
            "subjects": [{"kind": "ServiceAccount", "name": "lost"}],
        },
    )
    async with client.ApiClient(world.https_configuration(token=await token_for(kube, "lost"))) as api:
        exc = await api_error(client.CoreV1Api(api).list_namespaced_pod(NS))
    assert status_body(exc)["message"].endswith(f': RBAC: role.{RBAC} "ghost" not found')


async def unauthorized(world: World, token: str) -> None:
    async with client.ApiClient(world.https_configuration(token=token)) as api:
        exc = await api_error(client.CoreV1Api(api).list_namespaced_pod(NS))
    assert status_body(exc) == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": "Unauthorized",
        "reason": "Unauthorized",
        "code": 401,
    }


async def test_a_token_of_another_signature_or_expired_is_unauthorized(
    world: World, kube: client.ApiClient
) -> None:
    await grant(kube)
    account = (await client.CoreV1Api(kube).read_namespaced_service_account("robot", NS)).to_dict()
    account["metadata"] = {"name": "robot", "namespace": NS, "uid": account["metadata"]["uid"]}
    other_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    forged = tokens.issue(
        service_account=account,
        audiences=list(tokens.API_AUDIENCES),
        expiration_seconds=3600,
        now=datetime.now(UTC),
        key=other_key,
    )
    await unauthorized(world, forged)
    expired = tokens.issue(
        service_account=account,
        audiences=list(tokens.API_AUDIENCES),
        expiration_seconds=600,
        now=datetime.now(UTC) - timedelta(hours=1),
    )
    await unauthorized(world, expired)
    header, payload, _ = (await token_for(kube)).split(".")
    await unauthorized(world, f"{header}.{payload}.bm90LWEtc2lnbmF0dXJl")


async def test_a_token_of_a_deleted_account_or_pod_is_unauthorized(
    world: World, kube: client.ApiClient
) -> None:
    await grant(kube)
    core = client.CoreV1Api(kube)
    await core.create_namespaced_pod(
        NS,
        {
            "metadata": {"name": "holder"},
            "spec": {"serviceAccountName": "robot", "containers": [{"name": "c", "image": "busybox"}]},
        },
    )
    pod = await core.read_namespaced_pod("holder", NS)
    ref = {"apiVersion": "v1", "kind": "Pod", "name": "holder", "uid": pod.metadata.uid}
    pod_token = await token_for(kube, boundObjectRef=ref)
    account_token = await token_for(kube)
    async with client.ApiClient(world.https_configuration(token=pod_token)) as api:
        await client.CoreV1Api(api).list_namespaced_pod(NS)

    await core.delete_namespaced_pod("holder", NS, grace_period_seconds=0)

    async def pod_gone() -> bool:
        return not (await core.list_namespaced_pod(NS, field_selector="metadata.name=holder")).items

    await eventually(pod_gone, what="the pod deleted")
    await unauthorized(world, pod_token)

    await core.delete_namespaced_service_account("robot", NS)
    await unauthorized(world, account_token)


async def test_requests_without_an_emulator_token_stay_unchecked(world: World) -> None:
    for token in (None, "arcsm-sim", "system:serviceaccount:default:nobody"):
        async with client.ApiClient(world.https_configuration(token=token)) as api:
            await client.RbacAuthorizationV1Api(api).list_cluster_role()


async def test_the_request_log_names_the_account_never_the_token(
    world: World, robot: client.ApiClient
) -> None:
    await client.CoreV1Api(robot).list_namespaced_pod(NS)
    mine = [r for r in world.requests if r.path == f"/api/v1/namespaces/{NS}/pods" and r.verb == "list"]
    assert [r.user for r in mine] == [ROBOT]
    assert not any(r.user.count(".") == 2 and len(r.user) > 100 for r in world.requests)


@pytest.mark.skipif(KUBECTL is None, reason="kubectl is not installed")
async def test_kubectl_with_a_created_token_is_authorized_by_rbac(
    world: World, kube: client.ApiClient, tmp_path: Path
) -> None:
    await grant(kube)
    kubeconfig = world.write_kubeconfig(tmp_path / "kubeconfig")
    assert KUBECTL is not None

    async def kubectl(*args: str) -> tuple[int, str, str]:
        proc = await asyncio.create_subprocess_exec(
            KUBECTL, *args, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
        )
        out, err = await asyncio.wait_for(proc.communicate(), 60)
        return proc.returncode or 0, out.decode(), err.decode()

    code, token, err = await kubectl("--kubeconfig", str(kubeconfig), "create", "token", "robot")
    assert code == 0, err
    as_robot = (
        f"--server={world.https_url}",
        f"--certificate-authority={world.ca_file}",
        f"--token={token.strip()}",
        "--kubeconfig=/dev/null",
        "-n",
        NS,
    )
    code, _, err = await kubectl(*as_robot, "get", "pods")
    assert code == 0, err
    code, _, err = await kubectl(*as_robot, "get", "secrets")
    assert code != 0
    assert f'secrets is forbidden: User "{ROBOT}" cannot list resource "secrets"' in err
