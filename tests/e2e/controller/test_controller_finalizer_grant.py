"""The chart's ``*/finalizers`` grant is what lets the controller create the objects it owns where
OwnerReferencesPermissionEnforcement runs (OpenShift runs it; the real control plane of the tests does).

The controller creates each runner, runner set, listener, Pod and Secret with an ownerReference that sets
``blockOwnerDeletion``; the plugin then asks for ``update`` on the owner's ``finalizers`` subresource.
On kube-apiserver (the emulator does not run that plugin), two users create the same EphemeralRunner
owned by an EphemeralRunnerSet: one bound to the chart's ClusterRole as ``arcsm manifests`` renders it,
one bound to the same rules with every ``*/finalizers`` grant taken out. The first is let in; the
second is refused, naming blockOwnerDeletion. (``test_controller_rbac`` runs a whole scale set under
the chart's RBAC on the same control plane.)
"""

from __future__ import annotations

import copy
from collections.abc import AsyncIterator
from typing import Any

import pytest
from kubernetes_asyncio import client
from kubernetes_asyncio.client.exceptions import ApiException

from controller.installation import manifests
from sim.controlplane.world import RealWorld
from statemachines import kinds
from tests import worlds
from tests.e2e.controller.harness import GROUP, NS, VERSION

WITH, WITHOUT = "arcsm-chart", "arcsm-chart-without-finalizers"
RUNNER_SPEC = {
    "githubConfigUrl": "https://github.com/owner/repo",
    "githubConfigSecret": "github-config",
    "runnerScaleSetId": 1,
    "spec": {"containers": [{"name": "runner", "image": "runner"}]},
}


@pytest.fixture
async def world() -> AsyncIterator[RealWorld]:
    async with worlds.open_world(worlds.REAL) as w:
        yield w


def chart_cluster_role() -> dict[str, Any]:
    [role] = [d for d in manifests.render_templates(manifests.Release()) if d["kind"] == "ClusterRole"]
    return role


def without_finalizers(rules: list[dict[str, Any]]) -> list[dict[str, Any]]:
    kept = []
    for rule in copy.deepcopy(rules):
        rule["resources"] = [r for r in rule.get("resources", []) if not r.endswith("/finalizers")]
        if rule["resources"] or rule.get("nonResourceURLs"):
            kept.append(rule)
    return kept


async def grant(api: client.ApiClient, user: str, rules: list[dict[str, Any]]) -> None:
    rbac = client.RbacAuthorizationV1Api(api)
    await rbac.create_cluster_role({"metadata": {"name": user}, "rules": rules})
    await rbac.create_cluster_role_binding(
        {
            "metadata": {"name": user},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": user},
            "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": user}],
        }
    )


async def create_owned_runner(world: RealWorld, user: str, owner: dict[str, Any]) -> dict[str, Any]:
    """Create, as ``user`` (impersonated by the admin), an EphemeralRunner owned by ``owner`` with
    ``blockOwnerDeletion``, as the controller creates its runners."""
    metadata = owner["metadata"]
    body = {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": kinds.ER,
        "metadata": {
            "name": f"runner-of-{user}",
            "namespace": NS,
            "ownerReferences": [
                {
                    "apiVersion": f"{GROUP}/{VERSION}",
                    "kind": kinds.ERS,
                    "name": metadata["name"],
                    "uid": metadata["uid"],
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
        },
        "spec": RUNNER_SPEC,
    }
    async with client.ApiClient(world.configuration()) as api:
        api.set_default_header("Impersonate-User", user)
        created: dict[str, Any] = await client.CustomObjectsApi(api).create_namespaced_custom_object(
            GROUP, VERSION, NS, "ephemeralrunners", body
        )
        return created


async def test_owned_objects_need_the_finalizers_grant_the_chart_gives(world: RealWorld) -> None:
    rules = chart_cluster_role()["rules"]
    stripped = without_finalizers(rules)
    granted = {r for rule in rules for r in rule.get("resources", []) if r.endswith("/finalizers")}
    assert f"{kinds.EPHEMERAL_RUNNER_SET.plural}/finalizers" in granted, granted
    async with client.ApiClient(world.configuration()) as api:
        await grant(api, WITH, rules)
        await grant(api, WITHOUT, stripped)
        owner = await client.CustomObjectsApi(api).create_namespaced_custom_object(
            GROUP,
            VERSION,
            NS,
            "ephemeralrunnersets",
            {
                "apiVersion": f"{GROUP}/{VERSION}",
                "kind": kinds.ERS,
                "metadata": {"name": "owner", "namespace": NS},
                "spec": {"patchID": 0, "ephemeralRunnerSpec": RUNNER_SPEC},
            },
        )

    created = await create_owned_runner(world, WITH, owner)
    assert created["metadata"]["ownerReferences"][0]["blockOwnerDeletion"] is True

    with pytest.raises(ApiException) as refused:
        await create_owned_runner(world, WITHOUT, owner)
    assert refused.value.status == 403
    assert "blockOwnerDeletion" in str(refused.value.body), refused.value.body
