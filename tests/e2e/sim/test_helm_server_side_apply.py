"""Helm 4 (its Go SDK, through helm_python) installs, upgrades, rolls back and uninstalls a release on the
emulated cluster.

Inputs: an emulated cluster (``world``) and a kubeconfig for it; ``smallchart/`` beside this file (a
Secret, a Role, a Deployment and an AutoscalingRunnerSet, with values for the image, the runner count and
the token); Helm's SDK with Secret release storage, waiting with its watcher for install and upgrade.
Helm 4 writes the chart's objects with server-side apply (``application/apply-patch+yaml``,
``force=false``) and keeps each revision in a protobuf Secret, deleted with protobuf DeleteOptions on
uninstall. Outputs: the objects read back through kubernetes_asyncio after each step, their
``managedFields`` and the release Secrets. Nothing is mocked.
"""

from __future__ import annotations

import asyncio
import base64
from pathlib import Path
from typing import Any

import pytest
from kubernetes_asyncio import client
from kubernetes_asyncio.client.exceptions import ApiException

from sim.world import World

sdk = pytest.importorskip("helm_python")

CHART = Path(__file__).with_name("smallchart")
NS = "default"
RELEASE = "small"
APPLY = "application/apply-patch+yaml"


async def helm(kubeconfig: Path, action: str, *args: Any, **kwargs: Any) -> Any:
    """One Helm action, off the event loop that serves the emulated cluster."""

    def run() -> Any:
        with sdk.Config(kubeconfig_path=str(kubeconfig), namespace=NS, storage_driver="secret") as cfg:
            return getattr(cfg, action)(*args, **kwargs)

    return await asyncio.to_thread(run)


async def objects(kube: client.ApiClient) -> dict[str, Any]:
    """The chart's four objects as the API serves them (None for a missing one)."""

    async def read(call: Any) -> Any:
        try:
            return kube.sanitize_for_serialization(await call)
        except ApiException as exc:
            assert exc.status == 404
            return None

    core, rbac, apps = client.CoreV1Api(kube), client.RbacAuthorizationV1Api(kube), client.AppsV1Api(kube)
    custom = client.CustomObjectsApi(kube)
    return {
        "secret": await read(core.read_namespaced_secret(f"{RELEASE}-token", NS)),
        "role": await read(rbac.read_namespaced_role(f"{RELEASE}-reader", NS)),
        "deployment": await read(apps.read_namespaced_deployment(f"{RELEASE}-web", NS)),
        "ars": await read(
            custom.get_namespaced_custom_object(
                "actions.github.com", "v1alpha1", NS, "autoscalingrunnersets", RELEASE
            )
        ),
    }


async def revisions(kube: client.ApiClient) -> dict[str, str]:
    """Release Secret name → its ``status`` label."""
    listed = await client.CoreV1Api(kube).list_namespaced_secret(
        NS, label_selector=f"owner=helm,name={RELEASE}"
    )
    return {s.metadata.name: s.metadata.labels["status"] for s in listed.items}


def appliers(obj: dict[str, Any]) -> list[dict[str, Any]]:
    return [e for e in obj["metadata"].get("managedFields") or [] if e["operation"] == "Apply"]


def token(secret: dict[str, Any]) -> str:
    return base64.b64decode(secret["data"]["github_token"]).decode()


async def test_helm_install_upgrade_rollback_uninstall(kube: client.ApiClient, kubeconfig: Path) -> None:
    # Helm waits (its watcher: kstatus over watches) until the objects are ready, within the timeout.
    await helm(kubeconfig, "install", str(CHART), RELEASE, {"minRunners": 1}, wait="watcher", timeout=60)
    installed = await objects(kube)
    assert installed["deployment"]["status"]["readyReplicas"] == 1
    assert installed["ars"]["spec"]["minRunners"] == 1
    assert installed["deployment"]["spec"]["template"]["spec"]["containers"][0]["image"] == "busybox:1"
    assert installed["role"]["rules"][0]["resourceNames"] == [f"{RELEASE}-token"]
    assert token(installed["secret"]) == "first"
    # Helm applied every object: one Apply entry each, owning what the chart sets.
    for obj in installed.values():
        [entry] = appliers(obj)
        assert entry["fieldsType"] == "FieldsV1"
    [ars_entry] = appliers(installed["ars"])
    assert set(ars_entry["fieldsV1"]["f:spec"]) >= {"f:minRunners", "f:maxRunners", "f:template"}
    assert await revisions(kube) == {f"sh.helm.release.v1.{RELEASE}.v1": "deployed"}

    values = {"minRunners": 2, "image": "busybox:2", "token": "second"}
    await helm(kubeconfig, "upgrade", str(CHART), RELEASE, values, wait="watcher", timeout=60)
    upgraded = await objects(kube)
    assert upgraded["deployment"]["status"]["updatedReplicas"] == 1
    assert upgraded["ars"]["spec"]["minRunners"] == 2
    assert upgraded["deployment"]["spec"]["template"]["spec"]["containers"][0]["image"] == "busybox:2"
    assert token(upgraded["secret"]) == "second"
    assert upgraded["role"]["metadata"]["resourceVersion"] == installed["role"]["metadata"]["resourceVersion"]
    assert await revisions(kube) == {
        f"sh.helm.release.v1.{RELEASE}.v1": "superseded",
        f"sh.helm.release.v1.{RELEASE}.v2": "deployed",
    }

    await helm(kubeconfig, "rollback", RELEASE, version=1)
    rolled = await objects(kube)
    assert rolled["ars"]["spec"]["minRunners"] == 1
    assert rolled["deployment"]["spec"]["template"]["spec"]["containers"][0]["image"] == "busybox:1"
    assert token(rolled["secret"]) == "first"
    assert (await revisions(kube))[f"sh.helm.release.v1.{RELEASE}.v3"] == "deployed"

    await helm(kubeconfig, "uninstall", RELEASE)
    assert await objects(kube) == {"secret": None, "role": None, "deployment": None, "ars": None}
    assert await revisions(kube) == {}


async def test_helm_upgrade_conflicts_with_another_manager(
    kube: client.ApiClient, kubeconfig: Path, world: World
) -> None:
    """Helm 4 applies without force: a field another manager took over fails the upgrade with the
    server's conflict, and the other manager's value stays."""
    await helm(kubeconfig, "install", str(CHART), RELEASE, {"minRunners": 1})
    custom = client.CustomObjectsApi(kube)
    taken = {
        "apiVersion": "actions.github.com/v1alpha1",
        "kind": "AutoscalingRunnerSet",
        "metadata": {"name": RELEASE},
        "spec": {"minRunners": 3},
    }
    await custom.patch_namespaced_custom_object(
        "actions.github.com",
        "v1alpha1",
        NS,
        "autoscalingrunnersets",
        RELEASE,
        taken,
        field_manager="autoscaler",
        force=True,
        _content_type=APPLY,
    )
    with pytest.raises(sdk.HelmError) as failed:
        await helm(kubeconfig, "upgrade", str(CHART), RELEASE, {"minRunners": 2})
    assert "conflict" in str(failed.value).lower()
    assert ".spec.minRunners" in str(failed.value)
    ars = (await objects(kube))["ars"]
    assert ars["spec"]["minRunners"] == 3
