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

import json
from pathlib import Path
from typing import Any

import pytest
from kubernetes_asyncio import client

from controller.installation import manifests
from sim import scalesetchart
from sim.world import World
from tests.e2e.controller import harness, scalesetcharts
from tests.e2e.controller.harness import CONTROLLER_NS, PAT, Controller
from tests.kubectl import ok, requires_kubectl

pytestmark = [requires_kubectl, pytest.mark.both_worlds]

RUNNERS_NS = scalesetcharts.RUNNERS_NS
RELEASE = "arc-runner-set"
KUBE_MODE_CLAIM = {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}
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
    return await scalesetcharts.render_chart(kubeconfig, scalesetchart.path(), RELEASE, values)


@pytest.mark.parametrize("mode", MODES.values(), ids=MODES.keys())
async def test_a_scale_set_from_upstreams_chart_runs_a_job_with_no_controller_values(
    tmp_path: Path, mode: dict[str, Any], world_kind: str
) -> None:
    async with harness.github_world(world_kind) as world, client.ApiClient(world.configuration()) as kube:
        kubeconfig = await scalesetcharts.prepared(world, tmp_path)
        account = scalesetcharts.one(await scalesetcharts.install_arcsm(kubeconfig, {}), "ServiceAccount")
        scale_set = await render_scale_set(kubeconfig, user_values(world, mode))
        binding = scalesetcharts.one(scale_set, "RoleBinding", "-manager")
        assert binding["subjects"] == [
            {"kind": "ServiceAccount", "name": account["metadata"]["name"], "namespace": CONTROLLER_NS}
        ]
        await ok(kubeconfig, "apply", "-f", "-", stdin=manifests.dump(scale_set))
        async with Controller(world, tmp_path):
            await scalesetcharts.runs_jobs_then_goes(world, kube, kubeconfig, scale_set, registered=RELEASE)


async def test_the_lookup_fails_as_upstreams_without_or_with_two_controllers_and_a_named_account_works(
    tmp_path: Path, world_kind: str
) -> None:
    async with harness.github_world(world_kind) as world:
        kubeconfig = await scalesetcharts.prepared(world, tmp_path)
        values = user_values(world, {})
        with pytest.raises(manifests.RenderError, match="No gha-rs-controller deployment found"):
            await render_scale_set(kubeconfig, values)
        await scalesetcharts.install_arcsm(kubeconfig, {})
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
