"""The places where the emulator was found to answer otherwise than kube-apiserver, asked the same way on
both worlds with the tools a user has: the answers must agree.

Inputs: each world (``world_kind``), a kubeconfig for it and the pinned kubectl. Outputs: a server-side
dry-run delete that deletes nothing; a CRD deleted with its resources, which do not come back when it is
created again; impersonation that answers for the impersonated account (``kubectl auth can-i --as``);
``kubectl create deployment|service`` (protobuf bodies); a node in ``kubectl get nodes``, and printer
columns of Deployments. Nothing is mocked.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import eventually
from tests.kubectl import kubectl, ok, requires_kubectl

pytestmark = [requires_kubectl, pytest.mark.both_worlds]

TIMEOUT = 60.0

CRD = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "widgets.example.com"},
    "spec": {
        "group": "example.com",
        "scope": "Namespaced",
        "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
        "versions": [
            {
                "name": "v1",
                "served": True,
                "storage": True,
                "schema": {
                    "openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
                },
            }
        ],
    },
}
WIDGET = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w", "namespace": "default"}}


@pytest.fixture
def kubeconfig(world: Any, tmp_path: Path) -> Path:
    path: Path = world.write_kubeconfig(tmp_path / "kubeconfig")
    return path


async def test_a_server_side_dry_run_delete_deletes_nothing(kubeconfig: Path) -> None:
    await ok(kubeconfig, "create", "configmap", "tried", "--from-literal=a=1")
    out = await ok(kubeconfig, "delete", "configmap", "tried", "--dry-run=server")
    assert "(server dry run)" in out
    assert json.loads(await ok(kubeconfig, "get", "configmap", "tried", "-o", "json"))["data"] == {"a": "1"}


async def test_a_deleted_crd_takes_its_resources_and_a_new_one_starts_empty(kubeconfig: Path) -> None:
    async def served() -> bool:
        return (await kubectl(kubeconfig, "get", "widgets"))[0] == 0

    await ok(kubeconfig, "apply", "-f", "-", stdin=json.dumps(CRD))
    await eventually(served, timeout=TIMEOUT, what="widgets served")
    await ok(kubeconfig, "apply", "-f", "-", stdin=json.dumps(WIDGET))
    await ok(kubeconfig, "delete", "crd", "widgets.example.com", "--wait=true", "--timeout=60s")
    code, _, err = await kubectl(kubeconfig, "get", "widgets")
    assert code != 0 and "NotFound" in err, err
    await ok(kubeconfig, "apply", "-f", "-", stdin=json.dumps(CRD))
    await eventually(served, timeout=TIMEOUT, what="widgets served again")
    assert json.loads(await ok(kubeconfig, "get", "widgets", "-A", "-o", "json"))["items"] == []


async def test_impersonation_answers_for_the_impersonated_account(kubeconfig: Path) -> None:
    await ok(kubeconfig, "create", "serviceaccount", "robot")
    account = "system:serviceaccount:default:robot"
    code, out, _ = await kubectl(kubeconfig, "auth", "can-i", "delete", "pods", "--as", account)
    assert (code, out.strip()) == (1, "no")
    await ok(kubeconfig, "create", "role", "deleter", "--verb=delete", "--resource=pods")
    await ok(
        kubeconfig,
        "create",
        "rolebinding",
        "robot-deletes",
        "--role=deleter",
        "--serviceaccount=default:robot",
    )

    async def allowed() -> bool:
        code, out, _ = await kubectl(kubeconfig, "auth", "can-i", "delete", "pods", "--as", account)
        return (code, out.strip()) == (0, "yes")

    await eventually(allowed, timeout=TIMEOUT, what="the binding honoured for the impersonated account")
    whoami = json.loads(await ok(kubeconfig, "auth", "whoami", "--as", account, "-o", "json"))
    assert whoami["status"]["userInfo"]["username"] == account


async def test_kubectl_creates_a_deployment_and_a_service_and_shows_their_columns(kubeconfig: Path) -> None:
    await ok(kubeconfig, "create", "deployment", "web", "--image=nginx", "--replicas=0")
    await ok(kubeconfig, "create", "service", "clusterip", "web", "--tcp=80:8080")
    header = (await ok(kubeconfig, "get", "deployment", "web")).splitlines()[0].split()
    assert header == ["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"]
    header = (await ok(kubeconfig, "get", "service", "web")).splitlines()[0].split()
    assert header == ["NAME", "TYPE", "CLUSTER-IP", "EXTERNAL-IP", "PORT(S)", "AGE"]


async def test_kubectl_get_nodes_shows_a_ready_node(kubeconfig: Path) -> None:
    nodes = json.loads(await ok(kubeconfig, "get", "nodes", "-o", "json"))["items"]
    assert len(nodes) == 1
    conditions = {c["type"]: c["status"] for c in nodes[0]["status"]["conditions"]}
    assert conditions["Ready"] == "True"
    header = (await ok(kubeconfig, "get", "nodes")).splitlines()[0].split()
    assert header == ["NAME", "STATUS", "ROLES", "AGE", "VERSION"]
