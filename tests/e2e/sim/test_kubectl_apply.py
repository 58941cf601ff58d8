"""The committed installation applied to the emulated cluster with a real kubectl.

Inputs: an emulated cluster without the CRDs and without ``arc-systems`` (what a fresh cluster has), a
kubeconfig for it, Debian's ``kubectl``, the Helm chart's default rendering (``deploy/``) and others
rendered by Helm's SDK. Outputs: ``kubectl apply -k deploy/`` creates every object (discovery, OpenAPI,
GET then POST), a second apply changes nothing, an upgrade goes through kubectl's client-side apply
(GET, then a strategic merge PATCH with the last-applied-configuration annotation), ``kubectl get`` lists
what was applied, and the CRDs applied this way are served.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import yaml

import deploy
from controller.installation import crdgen, manifests
from sim.world import World
from tests.kubectl import apply_flags, get_json, kubectl, ok, requires_kubectl

pytestmark = requires_kubectl

ROOT = Path(__file__).resolve().parents[3]
DEPLOY = ROOT / "deploy"
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
NS = "arc-systems"


@pytest.fixture
async def cluster(tmp_path: Path) -> AsyncIterator[Path]:
    """A fresh emulated cluster; yields the path of its kubeconfig."""
    apply_flags()  # ask kubectl its version before the event loop serves the cluster
    async with World(seed=1, crd_dir=None, namespaces=("default",)) as world:
        yield world.write_kubeconfig(tmp_path / "kubeconfig")


def expected_objects(release: manifests.Release) -> set[str]:
    """``kind/name`` lines as kubectl apply prints them, for the rendered installation."""
    plural = {
        "CustomResourceDefinition": "customresourcedefinition.apiextensions.k8s.io",
        "Namespace": "namespace",
        "ServiceAccount": "serviceaccount",
        "ClusterRole": "clusterrole.rbac.authorization.k8s.io",
        "ClusterRoleBinding": "clusterrolebinding.rbac.authorization.k8s.io",
        "Role": "role.rbac.authorization.k8s.io",
        "RoleBinding": "rolebinding.rbac.authorization.k8s.io",
        "Service": "service",
        "StatefulSet": "statefulset.apps",
        "Deployment": "deployment.apps",
        "PersistentVolumeClaim": "persistentvolumeclaim",
        "PodDisruptionBudget": "poddisruptionbudget.policy",
    }
    return {f"{plural[m['kind']]}/{m['metadata']['name']}" for m in manifests.render(release)}


def rendered(release: manifests.Release, kind: str) -> list[dict[str, Any]]:
    return [m for m in manifests.render(release) if m["kind"] == kind]


def applied(output: str) -> dict[str, str]:
    """``kind/name`` → what kubectl did (created, configured, unchanged)."""
    found = {}
    for line in output.splitlines():
        name, _, action = line.rpartition(" ")
        if name:
            found[name] = action
    return found


async def test_apply_k_installs_the_committed_manifests(cluster: Path) -> None:
    first = applied(await ok(cluster, "apply", "-k", str(DEPLOY)))
    default = manifests.Release()
    assert set(first) == expected_objects(default)
    assert set(first.values()) == {"created"}

    deployment = await get_json(cluster, "deployment", "arcsm", "-n", NS)
    assert deployment["spec"]["replicas"] == 1
    assert deployment["spec"]["strategy"]["type"] == "Recreate"
    assert LAST_APPLIED in deployment["metadata"]["annotations"]
    claim = await get_json(cluster, "pvc", "journal-arcsm-0", "-n", NS)
    assert claim["spec"]["accessModes"] == ["ReadWriteOnce"]
    role = await get_json(cluster, "clusterrole", "arcsm")
    assert role["rules"] == rendered(default, "ClusterRole")[0]["rules"]
    for kind, name in [("serviceaccount", "arcsm"), ("service", "arcsm")]:
        assert (await get_json(cluster, kind, name, "-n", NS))["metadata"]["name"] == name
    listed = await ok(cluster, "get", "deployments,services,persistentvolumeclaims", "-n", NS, "-o", "name")
    assert set(listed.split()) == {
        "deployment.apps/arcsm",
        "service/arcsm",
        "persistentvolumeclaim/journal-arcsm-0",
    }

    # The CRDs kubectl created are established, as clients wait for, and served.
    await ok(cluster, "wait", "--for", "condition=established", "crd", "--all", "--timeout=30s")
    established = await get_json(cluster, "crd", "autoscalingrunnersets.actions.github.com")
    assert established["status"]["acceptedNames"]["kind"] == "AutoscalingRunnerSet"
    assert established["status"]["storedVersions"] == ["v1alpha1"]
    assert (await get_json(cluster, "autoscalingrunnersets", "-A"))["items"] == []
    crds = await get_json(cluster, "crd")
    assert {c["metadata"]["name"] for c in crds["items"]} == {k.crd_name for k in crdgen.resources.KINDS}

    again = applied(await ok(cluster, "apply", "-k", str(DEPLOY)))
    assert set(again.values()) == {"unchanged"}
    after = await get_json(cluster, "deployment", "arcsm", "-n", NS)
    assert after["metadata"]["generation"] == deployment["metadata"]["generation"]


async def test_an_upgrade_is_a_client_side_apply_patch(cluster: Path) -> None:
    await ok(cluster, "apply", "-k", str(DEPLOY))
    upgraded = manifests.Release(
        values={"image": {"repository": "registry.example.com/arcsm", "tag": "9.9.9"}}
    )
    out = applied(await ok(cluster, "apply", "-f", "-", stdin=manifests.dump(manifests.render(upgraded))))
    assert out["deployment.apps/arcsm"] == "configured"
    assert out["serviceaccount/arcsm"] == "unchanged"

    deployment = await get_json(cluster, "deployment", "arcsm", "-n", NS)
    [container] = deployment["spec"]["template"]["spec"]["containers"]
    assert container["image"] == "registry.example.com/arcsm:9.9.9"
    [expected] = rendered(upgraded, "Deployment")
    assert container["args"] == expected["spec"]["template"]["spec"]["containers"][0]["args"]
    last = json.loads(deployment["metadata"]["annotations"][LAST_APPLIED])
    assert last["spec"]["template"]["spec"]["containers"][0]["image"] == "registry.example.com/arcsm:9.9.9"


async def test_watch_namespaces_get_namespaced_roles(cluster: Path) -> None:
    # apply sends JSON (kubectl create sends protobuf: test_kubectl_protobuf.py).
    await ok(cluster, "apply", "-f", "-", stdin="apiVersion: v1\nkind: Namespace\nmetadata: {name: team-a}\n")
    release = manifests.Release(values={"flags": {"watchSingleNamespace": "team-a"}})
    out = applied(await ok(cluster, "apply", "-f", "-", stdin=manifests.dump(manifests.render(release))))
    assert set(out) == expected_objects(release)
    controller_rules = rendered(release, "Role")[0]["rules"]
    for ns in ("team-a", NS):
        role = await get_json(cluster, "role", "arcsm", "-n", ns)
        assert role["rules"] == controller_rules
        binding = await get_json(cluster, "rolebinding", "arcsm", "-n", ns)
        assert binding["subjects"] == [{"kind": "ServiceAccount", "name": "arcsm", "namespace": NS}]
    code, _, err = await kubectl(cluster, "get", "clusterrole", "arcsm")
    assert code != 0 and "NotFound" in err
    deployment = await get_json(cluster, "deployment", "arcsm", "-n", NS)
    assert (
        deployment["metadata"]["labels"]["actions.github.com/controller-watch-single-namespace"] == "team-a"
    )


async def test_an_object_whose_last_applied_configuration_is_too_long_is_refused(
    cluster: Path, tmp_path: Path
) -> None:
    # What kube-apiserver answers when client-side apply stores a CRD of more than 256 KiB.
    crd = yaml.safe_load(
        (deploy.chart_path() / "crds" / "actions.github.com_ephemeralrunners.yaml").read_text()
    )
    schema = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    schema["description"] = "x" * (256 * 1024)
    path = tmp_path / "big-crd.yaml"
    path.write_text(yaml.safe_dump(crd))
    code, _, err = await kubectl(cluster, "apply", "-f", str(path))
    assert code != 0
    assert "metadata.annotations: Too long: must have at most 262144 bytes" in err
