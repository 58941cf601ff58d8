"""Service-account tokens as kube-apiserver issues them, and the ServiceAccount admission's token volume.

Inputs: the ``world`` and ``kube`` fixtures (tests/conftest.py), Debian's ``kubectl`` on a kubeconfig of
the world. Outputs: the TokenRequest subresource answers a signed RS256 JWT with upstream's claims (plain,
pod-bound with node, extended to a year for the projected volume's 3607 s), its validation errors, and
``kubectl create token`` (which sends its TokenRequest in protobuf) prints one; an account or pod that
opts out of automounting gets no ``kube-api-access-*`` volume.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import jwt
import pytest
from kubernetes_asyncio import client

from sim import tokens
from sim.world import World
from tests.e2e.sim.conformance import api_error, status_body
from tests.helpers import eventually
from tests.kubectl import KUBECTL

NS = "default"
needs_kubectl = pytest.mark.skipif(KUBECTL is None, reason="kubectl is not installed")


def claims(token: str, audience: str = tokens.ISSUER) -> dict[str, Any]:
    """The token's claims, verified with the emulator's public key."""
    public = tokens.signing_key().public_key()
    header = jwt.get_unverified_header(token)
    assert header == {"alg": "RS256", "kid": tokens.key_id(public)}
    return jwt.decode(token, public, algorithms=["RS256"], audience=audience, issuer=tokens.ISSUER)


async def request_token(core: client.CoreV1Api, name: str, **spec: Any) -> Any:
    body = {
        "apiVersion": "authentication.k8s.io/v1",
        "kind": "TokenRequest",
        "spec": {"audiences": [], **spec},
    }
    return await core.create_namespaced_service_account_token(name, NS, body)


async def running_pod(core: client.CoreV1Api, name: str, account: str = "default") -> Any:
    await core.create_namespaced_pod(
        NS,
        {
            "metadata": {"name": name},
            "spec": {"serviceAccountName": account, "containers": [{"name": "main", "image": "busybox"}]},
        },
    )

    async def bound() -> Any:
        pod = await core.read_namespaced_pod(name, NS)
        return pod if pod.spec.node_name else None

    return await eventually(bound, what=f"pod {name} scheduled")


async def test_a_token_request_answers_a_signed_token_with_upstreams_claims(kube: client.ApiClient) -> None:
    core = client.CoreV1Api(kube)
    account = await core.read_namespaced_service_account("default", NS)
    answer = await request_token(core, "default")
    assert answer.kind == "TokenRequest"
    assert answer.spec.audiences == [tokens.ISSUER]
    assert answer.spec.expiration_seconds == 3600
    c = claims(answer.status.token)
    assert c["sub"] == "system:serviceaccount:default:default"
    assert c["exp"] - c["iat"] == 3600 and c["nbf"] == c["iat"]
    assert c["jti"]
    assert c["kubernetes.io"] == {
        "namespace": NS,
        "serviceaccount": {"name": "default", "uid": account.metadata.uid},
    }
    assert int(answer.status.expiration_timestamp.timestamp()) in range(c["exp"] - 1, c["exp"] + 2)


async def test_audiences_and_duration_are_as_asked(kube: client.ApiClient) -> None:
    answer = await request_token(
        client.CoreV1Api(kube), "default", audiences=["vault"], expirationSeconds=7200
    )
    c = claims(answer.status.token, audience="vault")
    assert c["aud"] == ["vault"] and c["exp"] - c["iat"] == 7200


async def test_a_pod_bound_token_names_the_pod_and_node_and_the_projected_duration_is_extended(
    kube: client.ApiClient,
) -> None:
    core = client.CoreV1Api(kube)
    pod = await running_pod(core, "bound")
    ref = {"apiVersion": "v1", "kind": "Pod", "name": "bound", "uid": pod.metadata.uid}
    answer = await request_token(core, "default", boundObjectRef=ref, expirationSeconds=3607)
    c = claims(answer.status.token)
    private = c["kubernetes.io"]
    assert private["pod"] == {"name": "bound", "uid": pod.metadata.uid}
    assert private["node"] == {"name": "sim-node-1"}
    # The projected volume's 3607 s: valid a year, warned about after 3607 s, reported as asked.
    assert c["exp"] - c["iat"] == tokens.EXTENSION_SECONDS
    assert private["warnafter"] == c["iat"] + 3607
    assert int(answer.status.expiration_timestamp.timestamp()) - c["iat"] in range(3606, 3609)


@pytest.mark.parametrize(
    ("spec", "code", "message"),
    [
        (
            {"expirationSeconds": 60},
            422,
            'TokenRequest.authentication.k8s.io "" is invalid: spec.expirationSeconds: Invalid value: 60: '
            "may not specify a duration less than 10 minutes",
        ),
        (
            {"boundObjectRef": {"apiVersion": "v1", "kind": "Pod", "name": "nowhere"}},
            404,
            'pods "nowhere" not found',
        ),
        (
            {"boundObjectRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "d"}},
            400,
            "cannot bind token to object of type apps/v1, Kind=Deployment",
        ),
    ],
    ids=["too-short", "missing-pod", "unbindable-kind"],
)
async def test_token_request_errors(
    kube: client.ApiClient, spec: dict[str, Any], code: int, message: str
) -> None:
    exc = await api_error(request_token(client.CoreV1Api(kube), "default", **spec))
    assert (exc.status, status_body(exc)["message"]) == (code, message)


async def test_a_token_for_a_missing_account_or_a_pod_of_another_account_is_refused(
    kube: client.ApiClient,
) -> None:
    core = client.CoreV1Api(kube)
    exc = await api_error(request_token(core, "ghost"))
    assert (exc.status, status_body(exc)["message"]) == (404, 'serviceaccounts "ghost" not found')

    await core.create_namespaced_service_account(NS, {"metadata": {"name": "other"}})
    pod = await running_pod(core, "not-yours")
    ref = {"apiVersion": "v1", "kind": "Pod", "name": "not-yours", "uid": pod.metadata.uid}
    exc = await api_error(request_token(core, "other", boundObjectRef=ref))
    assert exc.status == 400
    assert status_body(exc)["message"] == (
        'cannot bind token for serviceaccount "other" to pod running with different serviceaccount name.'
    )
    exc = await api_error(request_token(core, "default", boundObjectRef={**ref, "uid": "0000"}))
    assert exc.status == 409
    assert status_body(exc)["message"].startswith(
        'Operation cannot be fulfilled on Pod "not-yours": the UID in the bound object reference (0000)'
    )


@needs_kubectl
async def test_kubectl_create_token_prints_a_token(world: World, tmp_path: Path) -> None:
    kubeconfig = world.write_kubeconfig(tmp_path / "kubeconfig")
    assert KUBECTL is not None
    proc = await asyncio.create_subprocess_exec(
        KUBECTL,
        "--kubeconfig",
        str(kubeconfig),
        "create",
        "token",
        "default",
        "--duration=2h",
        "--audience=https://kubernetes.default.svc.cluster.local",
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode == 0, err.decode()
    c = claims(out.decode().strip())
    assert c["sub"] == "system:serviceaccount:default:default"
    assert c["exp"] - c["iat"] == 7200


@pytest.mark.parametrize(
    ("account", "pod_spec", "mounted"),
    [
        ({}, {}, True),
        ({"automountServiceAccountToken": False}, {}, False),
        ({"automountServiceAccountToken": False}, {"automountServiceAccountToken": True}, True),
        ({}, {"automountServiceAccountToken": False}, False),
    ],
    ids=["default", "account-opts-out", "pod-opts-back-in", "pod-opts-out"],
)
async def test_the_token_volume_follows_automount_of_the_pod_then_the_account(
    kube: client.ApiClient, account: dict[str, Any], pod_spec: dict[str, Any], mounted: bool
) -> None:
    core = client.CoreV1Api(kube)
    await core.create_namespaced_service_account(NS, {"metadata": {"name": "robot"}, **account})
    pod = await core.create_namespaced_pod(
        NS,
        {
            "metadata": {"name": "automount"},
            "spec": {
                "serviceAccountName": "robot",
                "containers": [{"name": "c", "image": "busybox"}],
                **pod_spec,
            },
        },
    )
    volumes = [v.name for v in pod.spec.volumes or []]
    assert any(v.startswith("kube-api-access-") for v in volumes) is mounted
    mounts = [m.mount_path for m in pod.spec.containers[0].volume_mounts or []]
    assert ("/var/run/secrets/kubernetes.io/serviceaccount" in mounts) is mounted
