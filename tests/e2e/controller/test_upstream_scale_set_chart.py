"""A scale set installed the way upstream's gha-runner-scale-set chart installs it works with arcsm, given
only the values a user already gives ARC.

Inputs: each world (the emulated cluster, and the real control plane with a static volume for the
kubernetes mode's claim) with the fake GitHub; arcsm's own chart rendered by Helm and applied with the
pinned kubectl (as ``arcsm manifests | kubectl apply -f -`` does); ``sim.scalesetchart``, a stand-in for
upstream's chart (0.14.x) written from the facts of its templates, rendered by Helm *against the
cluster* so that its ``lookup`` of the controller's Deployment is Helm's own, and applied with
kubectl; the real controller in-process. The values are githubConfigUrl, githubConfigSecret,
runnerScaleSetName, min/maxRunners, template and containerMode, nothing about the controller.

Outputs: Helm's lookup finds arcsm's Deployment and binds the manager Role to arcsm's ServiceAccount;
each container mode (default, dind, kubernetes) reaches Running, runs two queued jobs on runners whose
pods are the chart's template, and a listener; deleting the scale set releases the cleanup-protection
finalizers of everything the chart made, so the chart's objects all go, and its registration at
GitHub goes; without a controller, or with two installed, the lookup fails as upstream's does, and
``controllerServiceAccount`` still names one.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from kubernetes_asyncio import client

from controller.installation import manifests
from sim import scalesetchart
from sim.github.records import JobState
from sim.world import World
from statemachines.kinds import AL, ARS, ER
from tests import worlds
from tests.e2e.controller import harness
from tests.e2e.controller.harness import CONTROLLER_NS, PAT, Controller
from tests.helpers import eventually
from tests.kubectl import ok, requires_kubectl

pytestmark = [requires_kubectl, pytest.mark.both_worlds]

RUNNERS_NS = "arc-runners"
RELEASE = "arc-runner-set"
TIMEOUT = 60.0
KUBE_MODE_CLAIM = {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}
# A cluster without a provisioner binds the kubernetes mode's work claims (one a runner) to volumes made
# beforehand, one for each of the jobs a test runs.
STATIC_VOLUMES = [
    {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {"name": f"work-{n}"},
        "spec": {
            "capacity": {"storage": "1Gi"},
            "accessModes": ["ReadWriteOnce"],
            "hostPath": {"path": f"/tmp/arcsm-work-{n}"},
        },
    }
    for n in (1, 2)
]
MODES: dict[str, dict[str, Any]] = {
    "default": {},
    "dind": {"type": "dind"},
    "kubernetes": {"type": "kubernetes", "kubernetesModeWorkVolumeClaim": KUBE_MODE_CLAIM},
}


def user_values(world: World, mode: dict[str, Any]) -> dict[str, Any]:
    """What a user of upstream's chart gives it: nothing about the controller."""
    return {
        "githubConfigUrl": world.github_url + "/org",
        "githubConfigSecret": {"github_token": PAT},
        "runnerScaleSetName": RELEASE,
        "minRunners": 0,
        "maxRunners": 2,
        "template": {"spec": {"containers": [{"name": "runner", "image": harness.RUNNER_IMAGE}]}},
        "containerMode": mode,
    }


async def render_scale_set(kubeconfig: Path, values: dict[str, Any]) -> list[dict[str, Any]]:
    """The stand-in chart rendered by Helm with the cluster at hand (its ``lookup`` asks the cluster)."""
    release = manifests.Release(name=RELEASE, namespace=RUNNERS_NS, values=values)
    # Helm's SDK blocks; the emulated cluster is served by this event loop.
    return await asyncio.to_thread(
        manifests.render_templates, release, chart=scalesetchart.path(), kubeconfig=kubeconfig
    )


async def install_arcsm(kubeconfig: Path, **values: Any) -> list[dict[str, Any]]:
    rendered = manifests.render(manifests.Release(values=values))
    await ok(kubeconfig, "apply", "-f", "-", stdin=manifests.dump(rendered))
    return rendered


async def prepared(world: World, tmp_path: Path) -> Path:
    kubeconfig = world.write_kubeconfig(tmp_path / "kubeconfig")
    await ok(
        kubeconfig,
        "apply",
        "-f",
        "-",
        stdin=f"apiVersion: v1\nkind: Namespace\nmetadata: {{name: {RUNNERS_NS}}}\n",
    )
    if worlds.is_real(world):
        volumes = {"apiVersion": "v1", "kind": "List", "items": STATIC_VOLUMES}
        await ok(kubeconfig, "apply", "-f", "-", stdin=json.dumps(volumes))
    return kubeconfig


@pytest.mark.parametrize("mode", MODES.values(), ids=MODES.keys())
async def test_a_scale_set_from_upstreams_chart_runs_a_job_with_no_controller_values(
    tmp_path: Path, mode: dict[str, Any], world_kind: str
) -> None:
    async with harness.github_world(world_kind) as world, client.ApiClient(world.configuration()) as kube:
        kubeconfig = await prepared(world, tmp_path)
        rendered = await install_arcsm(kubeconfig)
        [account] = [d for d in rendered if d["kind"] == "ServiceAccount"]
        scale_set = await render_scale_set(kubeconfig, user_values(world, mode))
        [binding] = [
            d for d in scale_set if d["kind"] == "RoleBinding" and d["metadata"]["name"].endswith("-manager")
        ]
        assert binding["subjects"] == [
            {"kind": "ServiceAccount", "name": account["metadata"]["name"], "namespace": CONTROLLER_NS}
        ]
        await ok(kubeconfig, "apply", "-f", "-", stdin=manifests.dump(scale_set))

        async with Controller(world, tmp_path):

            async def running() -> bool:
                ars = await harness.get(kube, ARS, RELEASE, RUNNERS_NS)
                listeners = await harness.items(kube, AL, CONTROLLER_NS)
                return bool(ars and (ars.get("status") or {}).get("phase") == "Running" and listeners)

            await eventually(running, timeout=TIMEOUT, what="the scale set Running with its listener")
            registered = world.github.scale_set(RELEASE)
            assert registered is not None
            jobs = world.github.queue_jobs(registered.id, 2)

            async def runner_pod() -> dict[str, Any] | None:
                pods = (await client.CoreV1Api(kube).list_namespaced_pod(RUNNERS_NS)).items
                return next((kube.sanitize_for_serialization(p) for p in pods), None)

            pod = await eventually(runner_pod, timeout=TIMEOUT, what="a runner pod")
            [chart_ars] = [d for d in scale_set if d["kind"] == "AutoscalingRunnerSet"]
            template = chart_ars["spec"]["template"]["spec"]
            assert pod["spec"]["serviceAccountName"] == template["serviceAccountName"]
            assert [c["name"] for c in pod["spec"].get("initContainers") or []] == [
                c["name"] for c in template.get("initContainers") or []
            ]
            assert {v["name"] for v in pod["spec"].get("volumes") or []} >= {
                v["name"] for v in template.get("volumes") or []
            }
            await eventually(
                lambda: all(job.state is JobState.COMPLETED for job in jobs),
                timeout=TIMEOUT,
                what="both jobs run by runners",
            )
            assert [job.result for job in jobs] == ["succeeded", "succeeded"]

            # `helm uninstall`: the chart's objects go; arcsm releases their cleanup-protection finalizers.
            await harness.delete(kube, ARS, RELEASE, RUNNERS_NS)

            async def cleaned_up() -> bool:
                left = [
                    await harness.get(kube, ARS, RELEASE, RUNNERS_NS),
                    *await harness.items(kube, ER, RUNNERS_NS),
                    *await harness.items(kube, AL, CONTROLLER_NS),
                ]
                return not any(left)

            await eventually(cleaned_up, timeout=TIMEOUT, what="the scale set and what arcsm made gone")
            assert world.github.scale_set(RELEASE) is None, "the scale set is still registered at GitHub"
            protected = [
                d
                for d in scale_set
                if "actions.github.com/cleanup-protection" in d["metadata"].get("finalizers", [])
            ]
            assert {d["kind"] for d in protected} >= {"Role", "RoleBinding", "ServiceAccount", "Secret"}
            for doc in protected:
                kind, name = doc["kind"].lower(), doc["metadata"]["name"]
                await ok(kubeconfig, "delete", kind, name, "-n", RUNNERS_NS, "--wait=true", "--timeout=60s")


async def test_the_lookup_fails_as_upstreams_without_or_with_two_controllers_and_a_named_account_works(
    tmp_path: Path, world_kind: str
) -> None:
    async with harness.github_world(world_kind) as world:
        kubeconfig = await prepared(world, tmp_path)
        values = user_values(world, {})
        with pytest.raises(manifests.RenderError, match="No gha-rs-controller deployment found"):
            await render_scale_set(kubeconfig, values)
        await install_arcsm(kubeconfig)
        assert await render_scale_set(kubeconfig, values)
        # Upstream's controller left installed beside arcsm (scaled to zero, as the migration says).
        upstream = {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {
                "name": "arc-gha-rs-controller",
                "namespace": CONTROLLER_NS,
                "labels": {
                    "app.kubernetes.io/part-of": "gha-rs-controller",
                    "actions.github.com/controller-service-account-name": "arc-gha-rs-controller",
                    "actions.github.com/controller-service-account-namespace": CONTROLLER_NS,
                },
            },
            "spec": {
                "replicas": 0,
                "selector": {"matchLabels": {"app": "upstream"}},
                "template": {
                    "metadata": {"labels": {"app": "upstream"}},
                    "spec": {
                        "containers": [
                            {
                                "name": "manager",
                                "image": "ghcr.io/actions/gha-runner-scale-set-controller:0.14.2",
                            }
                        ]
                    },
                },
            },
        }
        await ok(kubeconfig, "apply", "-f", "-", stdin=json.dumps(upstream))
        with pytest.raises(manifests.RenderError, match="More than one gha-rs-controller deployment found"):
            await render_scale_set(kubeconfig, values)
        named = {**values, "controllerServiceAccount": {"name": "arcsm", "namespace": CONTROLLER_NS}}
        [binding] = [d for d in await render_scale_set(kubeconfig, named) if d["kind"] == "RoleBinding"]
        assert binding["subjects"][0]["name"] == "arcsm"
