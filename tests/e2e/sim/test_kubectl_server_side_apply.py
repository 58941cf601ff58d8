"""``kubectl apply --server-side`` against the emulated cluster with Debian's kubectl.

Inputs: an emulated cluster and a kubeconfig for it (``world``, ``kubeconfig``), manifests of a ConfigMap
and an AutoscalingRunnerSet given on stdin, two field managers (kubectl's default ``kubectl`` and
``--field-manager``), and a ``kubectl patch`` in between. Outputs: kubectl's exit codes and messages (a
conflict names the manager and field as the server words it, and kubectl adds its advice), the objects
and their ``managedFields`` as ``kubectl get -o json`` shows them after ``--force-conflicts``. Nothing
is mocked.
"""

from __future__ import annotations

from pathlib import Path

import yaml

from tests.kubectl import get_json, kubectl, ok, requires_kubectl

pytestmark = requires_kubectl

CONFIGMAP = {
    "apiVersion": "v1",
    "kind": "ConfigMap",
    "metadata": {"name": "settings", "namespace": "default"},
}
ARS = {
    "apiVersion": "actions.github.com/v1alpha1",
    "kind": "AutoscalingRunnerSet",
    "metadata": {"name": "runners", "namespace": "default"},
    "spec": {"githubConfigUrl": "https://github.com/example", "githubConfigSecret": "gh"},
}


def managers(obj: dict[str, object]) -> dict[tuple[str, str], object]:
    meta = obj["metadata"]
    assert isinstance(meta, dict)
    return {(e["manager"], e["operation"]): e["fieldsV1"] for e in meta["managedFields"]}


async def test_server_side_apply_conflicts_and_force(kubeconfig: Path) -> None:
    first = yaml.safe_dump({**CONFIGMAP, "data": {"mode": "fast", "size": "1"}})
    out = await ok(kubeconfig, "apply", "--server-side", "-f", "-", stdin=first)
    assert out.strip() == "configmap/settings serverside-applied"
    # Applying the same manifest again changes nothing.
    before = await get_json(kubeconfig, "configmap", "settings", "--show-managed-fields")
    out = await ok(kubeconfig, "apply", "--server-side", "-f", "-", stdin=first)
    after = await get_json(kubeconfig, "configmap", "settings", "--show-managed-fields")
    assert after["metadata"]["resourceVersion"] == before["metadata"]["resourceVersion"]

    other = yaml.safe_dump({**CONFIGMAP, "data": {"mode": "slow"}})
    code, _, err = await kubectl(
        kubeconfig, "apply", "--server-side", "--field-manager=tuner", "-f", "-", stdin=other
    )
    assert code != 0
    assert 'Apply failed with 1 conflict: conflict with "kubectl": .data.mode' in err
    assert "--force-conflicts" in err  # kubectl's own advice on a conflict

    await ok(
        kubeconfig,
        "apply",
        "--server-side",
        "--field-manager=tuner",
        "--force-conflicts",
        "-f",
        "-",
        stdin=other,
    )
    forced = await get_json(kubeconfig, "configmap", "settings", "--show-managed-fields")
    assert forced["data"] == {"mode": "slow", "size": "1"}
    owners = managers(forced)
    assert owners[("tuner", "Apply")] == {"f:data": {"f:mode": {}}}
    assert owners[("kubectl", "Apply")] == {"f:data": {"f:size": {}}}


async def test_an_update_by_kubectl_patch_conflicts_with_a_later_apply(kubeconfig: Path) -> None:
    manifest = yaml.safe_dump({**ARS, "spec": {**ARS["spec"], "minRunners": 1}})  # type: ignore[dict-item]
    out = await ok(kubeconfig, "apply", "--server-side", "-f", "-", stdin=manifest)
    assert "serverside-applied" in out
    await ok(
        kubeconfig,
        "patch",
        "autoscalingrunnerset",
        "runners",
        "--type=merge",
        "-p",
        '{"spec":{"minRunners":4}}',
    )
    patched = await get_json(kubeconfig, "autoscalingrunnerset", "runners", "--show-managed-fields")
    assert managers(patched)[("kubectl-patch", "Update")] == {"f:spec": {"f:minRunners": {}}}

    again = yaml.safe_dump({**ARS, "spec": {**ARS["spec"], "minRunners": 2}})  # type: ignore[dict-item]
    code, _, err = await kubectl(kubeconfig, "apply", "--server-side", "-f", "-", stdin=again)
    assert code != 0
    assert (
        'Apply failed with 1 conflict: conflict with "kubectl-patch" using actions.github.com/v1alpha1: '
        ".spec.minRunners" in err
    )
    await ok(kubeconfig, "apply", "--server-side", "--force-conflicts", "-f", "-", stdin=again)
    taken = await get_json(kubeconfig, "autoscalingrunnerset", "runners", "--show-managed-fields")
    assert taken["spec"]["minRunners"] == 2
    assert ("kubectl-patch", "Update") not in managers(taken)  # it owned only minRunners


async def test_the_move_from_client_side_apply_then_diff_and_dry_run(kubeconfig: Path) -> None:
    await ok(kubeconfig, "apply", "-f", "-", stdin=yaml.safe_dump({**CONFIGMAP, "data": {"a": "1"}}))
    csa = await get_json(kubeconfig, "configmap", "settings", "--show-managed-fields")
    assert managers(csa)[("kubectl-client-side-apply", "Update")] == {
        "f:data": {".": {}, "f:a": {}},
        "f:metadata": {"f:annotations": {".": {}, "f:kubectl.kubernetes.io/last-applied-configuration": {}}},
    }
    # A server-side apply of the same manifest co-owns a with client-side apply, then kubectl moves
    # client-side apply's fields to its own applier (a JSON patch of managedFields, and a second apply).
    await ok(
        kubeconfig,
        "apply",
        "--server-side",
        "-f",
        "-",
        stdin=yaml.safe_dump({**CONFIGMAP, "data": {"a": "1"}}),
    )
    same = await get_json(kubeconfig, "configmap", "settings", "--show-managed-fields")
    assert ("kubectl-client-side-apply", "Update") not in managers(same)
    # Now kubectl's own applier holds a: changing it conflicts with nobody.
    await ok(
        kubeconfig,
        "apply",
        "--server-side",
        "-f",
        "-",
        stdin=yaml.safe_dump({**CONFIGMAP, "data": {"a": "2"}}),
    )
    ssa = await get_json(kubeconfig, "configmap", "settings", "--show-managed-fields")
    assert ssa["data"] == {"a": "2"}
    owners = managers(ssa)
    assert ("kubectl-client-side-apply", "Update") not in owners
    assert owners[("kubectl", "Apply")] == {"f:data": {"f:a": {}}}

    changed = yaml.safe_dump({**CONFIGMAP, "data": {"a": "3"}})
    # kubectl diff --server-side is a dry-run apply (locked to the live resourceVersion): the diff
    # shows, nothing is written.
    code, out, err = await kubectl(kubeconfig, "diff", "--server-side", "-f", "-", stdin=changed)
    assert code == 1, err
    assert '-  a: "2"' in out and '+  a: "3"' in out
    out = await ok(kubeconfig, "apply", "--server-side", "--dry-run=server", "-f", "-", stdin=changed)
    assert out.strip() == "configmap/settings serverside-applied (server dry run)"
    after = await get_json(kubeconfig, "configmap", "settings")
    assert after["data"] == {"a": "2"}
    assert after["metadata"]["resourceVersion"] == ssa["metadata"]["resourceVersion"]
