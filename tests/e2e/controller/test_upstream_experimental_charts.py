"""A scale set installed the way upstream's gha-runner-scale-set-experimental chart installs it runs on
arcsm, given only the values a user gives that chart.

Inputs: each world (the emulated cluster, and the real control plane) with the fake GitHub, and volumes
made beforehand of the class the chart's kubernetes mode asks for by default (``local-path``, which
nothing provisions here); arcsm's own chart rendered by Helm and applied with the pinned kubectl;
``sim.experimentalscalesetchart``, a stand-in for upstream's experimental chart (0.14.2) written from the
facts of its templates, rendered by Helm and applied with kubectl, with a user's values: ``auth``,
``scaleset`` (a GitHub name other than the release's), ``runner`` and ``controllerServiceAccount``, which
that chart requires as it looks for no controller; the real controller in-process with a token of
arcsm's ServiceAccount, so it has nothing but arcsm's grants and the Role the chart binds.

Outputs: the chart's manager RoleBinding names arcsm's ServiceAccount; each runner mode (default, dind,
kubernetes) reaches Running, registered at GitHub under ``scaleset.name`` with ``scaleset.labels``, runs
two queued jobs on runners whose pods are the chart's template (which says no ``restartPolicy``), and a
listener; deleting the scale set releases the cleanup-protection finalizers of everything the chart
made, so its objects all go, and its registration at GitHub goes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from kubernetes_asyncio import client

from controller.installation import manifests
from sim import experimentalscalesetchart
from sim.world import World
from tests.e2e.controller import harness, scalesetcharts
from tests.e2e.controller.harness import CONTROLLER_NS, PAT, Controller
from tests.helpers import eventually
from tests.kubectl import ok, requires_kubectl

pytestmark = [requires_kubectl, pytest.mark.both_worlds]

RELEASE = "arc-runner-set"
GITHUB_NAME = "linux-x64"
# The class of the work claims the chart's kubernetes mode asks for when not told otherwise.
WORK_CLASS = "local-path"
MODES = ("", "dind", "kubernetes")


def user_values(world: World, mode: str, account: dict[str, Any]) -> dict[str, Any]:
    """What a user gives upstream's experimental scale-set chart."""
    return {
        "auth": {"url": world.github_url + "/org", "githubToken": PAT},
        "scaleset": {"name": GITHUB_NAME, "labels": ["linux"], "minRunners": 0, "maxRunners": 2},
        "runner": {"mode": mode, "container": {"image": harness.RUNNER_IMAGE}},
        "controllerServiceAccount": account,
    }


@pytest.mark.parametrize("mode", MODES, ids=[mode or "default" for mode in MODES])
async def test_a_scale_set_from_upstreams_experimental_chart_runs_jobs(
    tmp_path: Path, mode: str, world_kind: str
) -> None:
    async with harness.github_world(world_kind) as world, client.ApiClient(world.configuration()) as kube:
        kubeconfig = await scalesetcharts.prepared(world, tmp_path, storage_class=WORK_CLASS)
        arcsm = scalesetcharts.one(await scalesetcharts.install_arcsm(kubeconfig, {}), "ServiceAccount")
        account = {"name": arcsm["metadata"]["name"], "namespace": CONTROLLER_NS}
        scale_set = await scalesetcharts.render_chart(
            kubeconfig, experimentalscalesetchart.path(), RELEASE, user_values(world, mode, account)
        )
        binding = scalesetcharts.one(scale_set, "RoleBinding", "-manager-role")
        assert binding["subjects"] == [{"kind": "ServiceAccount", **account}]
        await ok(kubeconfig, "apply", "-f", "-", stdin=manifests.dump(scale_set))
        controller = Controller(world, tmp_path)
        controller.with_token(await harness.service_account_token(kube, account["name"]))
        async with controller:
            registered = await eventually(
                lambda: world.github.scale_set(GITHUB_NAME), timeout=scalesetcharts.TIMEOUT, what="registered"
            )
            assert "linux" in {label["name"] for label in registered.labels}
            await scalesetcharts.runs_jobs_then_goes(
                world, kube, kubeconfig, scale_set, registered=GITHUB_NAME
            )
