"""The controller runs a scale set's whole life under exactly the RBAC of the charts, and no more.

Inputs: each world (the emulated cluster, which enforces RBAC for the tokens it issues, and the real
control plane, whose kube-apiserver authorizes with Node and RBAC) with the fake GitHub; the objects
``arcsm manifests`` renders for the controller's ServiceAccount (its ClusterRole, its listener Role in the
controller namespace, their bindings), plus, in the scale set's namespace, upstream's manager Role
(``permissions.UPSTREAM_MANAGER_ROLE``, as upstream's gha-runner-scale-set chart makes it) bound to that
ServiceAccount; the real controller in-process with a token of that ServiceAccount from the TokenRequest
subresource. A scale set is created, runs one runner, then is deleted and cleaned up.

Outputs: the run completes (a runner Running, then the scale set and its objects gone) with nothing
but those grants; on the emulator, whose request log names the account, none of the controller's
requests was refused and each is granted by the chart's rules or, in the scale set's namespace, by the
manager Role; the run used the Secret, Event, status and runner-release paths; no request touched a
Secret outside the controller's and the scale set's namespaces, and none listed or watched a Secret.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from kubernetes_asyncio import client, utils
from kubernetes_asyncio.client.exceptions import ApiException

from controller.installation import manifests, permissions
from controller.installation.permissions import Permission
from sim import routing
from sim.world import World
from tests import worlds
from tests.e2e.controller import harness
from tests.e2e.controller.harness import CONTROLLER_NS, NS, Controller
from tests.helpers import eventually
from tests.kubectl import kubectl, ok, requires_kubectl

pytestmark = pytest.mark.both_worlds

TIMEOUT = 60.0
ACCOUNT = "arcsm"
CONTROLLER_USER = f"system:serviceaccount:{CONTROLLER_NS}:{ACCOUNT}"
RBAC_KINDS = ("ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding")


@pytest.fixture
async def world(world_kind: str) -> AsyncIterator[World]:
    async with harness.github_world(world_kind) as w:
        yield w


def chart_rbac() -> list[dict[str, Any]]:
    """The chart's default rendering: the controller's ServiceAccount and every RBAC object."""
    return [d for d in manifests.render_templates(manifests.Release()) if d["kind"] in RBAC_KINDS]


def upstream_manager_role(namespace: str) -> list[dict[str, Any]]:
    """The manager Role and RoleBinding upstream's scale set chart makes in ``namespace``."""
    name = "arc-gha-rs-manager"
    return [
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "Role",
            "metadata": {"name": name, "namespace": namespace},
            "rules": [dict(rule) for rule in permissions.UPSTREAM_MANAGER_ROLE],
        },
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "RoleBinding",
            "metadata": {"name": name, "namespace": namespace},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": name},
            "subjects": [{"kind": "ServiceAccount", "name": ACCOUNT, "namespace": CONTROLLER_NS}],
        },
    ]


async def install_rbac(kube: client.ApiClient) -> str:
    """Apply the grants as the cluster's admin; a token of the controller's ServiceAccount."""
    core = client.CoreV1Api(kube)
    with contextlib.suppress(ApiException):
        await core.create_namespace({"metadata": {"name": CONTROLLER_NS}})
    for document in [*chart_rbac(), *upstream_manager_role(NS)]:
        await utils.create_from_dict(kube, document)
    return await harness.service_account_token(kube, ACCOUNT)


def requested(world: World) -> list[tuple[str, Permission, int]]:
    """The controller's logged requests: (namespace, permission, status); discovery needs none."""
    out = []
    for request in world.requests:
        if request.user != CONTROLLER_USER:
            continue
        target = routing.parse(world.registry, request.path)
        if isinstance(target, routing.Discovery):
            continue
        kind = target.kind
        resource = f"{kind.plural}/{target.subresource}" if target.subresource else kind.plural
        namespace = getattr(target, "namespace", None) or ""
        out.append((namespace, Permission(kind.group, resource, request.verb), request.status))
    return out


async def test_a_full_run_needs_nothing_but_the_charts_rbac(
    world: World, world_kind: str, kube: client.ApiClient, tmp_path: Path
) -> None:
    token = await install_rbac(kube)
    controller = Controller(world, tmp_path)
    controller.with_token(token)
    async with controller:
        await harness.create(kube, harness.scale_set_body(world, minRunners=1))

        async def runner_running() -> bool:
            runners = await harness.items(kube, "EphemeralRunner")
            return any((r.get("status") or {}).get("phase") == "Running" for r in runners)

        await eventually(runner_running, timeout=TIMEOUT, what="one runner Running")
        await harness.delete(kube, "AutoscalingRunnerSet", "arc")

        async def gone() -> bool:
            left = [
                await harness.get(kube, "AutoscalingRunnerSet", "arc"),
                *await harness.items(kube, "EphemeralRunner"),
                *await harness.items(kube, "AutoscalingListener", CONTROLLER_NS),
            ]
            return not any(left)

        await eventually(gone, timeout=TIMEOUT, what="the scale set and its objects gone")
    if world_kind == worlds.REAL:
        return  # the real API server keeps no request log here; the run completing is the proof

    used = requested(world)
    refused = sorted({(ns, p) for ns, p, status in used if status == 403})
    assert not refused, f"the controller was refused {refused}"
    documents = chart_rbac()
    [cluster_role] = [d for d in documents if d["kind"] == "ClusterRole"]
    [listener_role] = [
        d for d in documents if d["kind"] == "Role" and d["metadata"]["name"] == "arcsm-listener"
    ]
    for namespace, permission, _ in used:
        rules = list(cluster_role["rules"])
        if namespace == CONTROLLER_NS:
            rules += listener_role["rules"]
        elif namespace == NS:
            rules += permissions.UPSTREAM_MANAGER_ROLE
        assert permissions.allows(rules, permission), (namespace, permission)
    secrets = {(ns, p.verb) for ns, p, _ in used if p.resource == "secrets"}
    assert {ns for ns, _ in secrets} <= {NS, CONTROLLER_NS}
    assert {ns for ns, verb in secrets if verb in ("list", "watch")} <= {NS}
    assert not {verb for _, verb in secrets if verb == "watch"}
    assert {
        Permission("", "secrets", "create"),
        Permission("", "secrets", "get"),
        Permission("actions.github.com", "ephemeralrunners", "delete"),
        Permission("", "events", "create"),
        Permission("actions.github.com", "autoscalingrunnersets/status", "patch"),
    } <= {p for _, p, _ in used}


def secret_rows(listing: str) -> list[str]:
    """The rows of ``kubectl auth can-i --list`` that grant something on Secrets (or on everything)."""
    rows = [line.split() for line in listing.splitlines()[1:] if line.strip()]
    return [" ".join(row) for row in rows if row and row[0] in ("secrets", "*", "*.*")]


@requires_kubectl
async def test_kubectl_auth_can_i_shows_secrets_only_in_its_own_and_the_scale_sets_namespaces(
    world: World, kube: client.ApiClient, tmp_path: Path
) -> None:
    await install_rbac(kube)
    other = "team-elsewhere"
    await client.CoreV1Api(kube).create_namespace({"metadata": {"name": other}})
    admin = world.write_kubeconfig(tmp_path / "admin.kubeconfig")

    async def listing(namespace: str) -> str:
        return await ok(admin, "auth", "can-i", "--list", "--as", CONTROLLER_USER, "-n", namespace)

    assert secret_rows(await listing(other)) == []
    assert secret_rows(await listing(NS)), "the manager Role grants Secrets in the scale set's namespace"
    assert secret_rows(await listing(CONTROLLER_NS)), "the listener Role grants Secrets in its namespace"
    # Nor anything beyond list and watch on a built-in kind elsewhere.
    code, _, _ = await kubectl(admin, "auth", "can-i", "create", "pods", "--as", CONTROLLER_USER, "-n", other)
    assert code != 0
