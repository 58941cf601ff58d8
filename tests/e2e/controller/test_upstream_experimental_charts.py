"""Scale sets installed the way upstream's experimental charts install them run on arcsm, given the values
a user gave those charts: gha-runner-scale-set-experimental's for the scale set, and
gha-runner-scale-set-controller-experimental's for arcsm's own chart.

Inputs: each world (the emulated cluster, and the real control plane) with the fake GitHub, and volumes
made beforehand of the class the chart's kubernetes mode asks for by default (``local-path``, which
nothing provisions here); arcsm's chart rendered by Helm with values in the experimental controller
chart's layout (``controller.*``, naming the ServiceAccount as the user's release of that chart named
it) and applied with the pinned kubectl; ``sim.experimentalscalesetchart``, a stand-in for upstream's
experimental scale-set chart (0.14.2) written from the facts of its templates, rendered by Helm and
applied with kubectl, with a user's values: ``auth``, ``scaleset`` (a GitHub name other than the
release's), ``runner`` and ``controllerServiceAccount``, which that chart requires as it looks for no
controller; the real controller in-process with a token of arcsm's ServiceAccount, so it has nothing but
arcsm's grants and the Role the scale-set chart binds.

Outputs: arcsm's ServiceAccount has the name the scale sets' values give, so the chart's manager
RoleBinding names it; each runner mode (default, dind, kubernetes) reaches Running, registered at GitHub
under ``scaleset.name`` with ``scaleset.labels``, runs two queued jobs on runners whose pods are the
chart's template (which says no ``restartPolicy``), and a listener; deleting the scale set releases the
cleanup-protection finalizers of everything the chart made, so its objects all go, and its registration
at GitHub goes.
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
# The account a user's release "arc" of the experimental controller chart made (<release>-gha-rs-controller),
# which the values of their scale sets name.
ACCOUNT = {"name": "arc-gha-rs-controller", "namespace": CONTROLLER_NS}
# The values they gave that chart, and the one they add for arcsm: the name of that account.
CONTROLLER_VALUES = {
    "controller": {
        "manager": {"config": {"logLevel": "debug", "logFormat": "text"}},
        "serviceAccount": {"name": ACCOUNT["name"]},
    }
}


def user_values(world: World, mode: str) -> dict[str, Any]:
    """What a user gives upstream's experimental scale-set chart."""
    return {
        "auth": {"url": world.github_url + "/org", "githubToken": PAT},
        "scaleset": {"name": GITHUB_NAME, "labels": ["linux"], "minRunners": 0, "maxRunners": 2},
        "runner": {"mode": mode, "container": {"image": harness.RUNNER_IMAGE}},
        "controllerServiceAccount": ACCOUNT,
    }


@pytest.mark.parametrize("mode", MODES, ids=[mode or "default" for mode in MODES])
async def test_a_scale_set_from_upstreams_experimental_chart_runs_jobs(
    tmp_path: Path, mode: str, world_kind: str
) -> None:
    async with harness.github_world(world_kind) as world, client.ApiClient(world.configuration()) as kube:
        kubeconfig = await scalesetcharts.prepared(world, tmp_path, storage_class=WORK_CLASS)
        installed = await scalesetcharts.install_arcsm(kubeconfig, CONTROLLER_VALUES)
        arcsm = scalesetcharts.one(installed, "ServiceAccount")["metadata"]
        scale_set = await scalesetcharts.render_chart(
            kubeconfig, experimentalscalesetchart.path(), RELEASE, user_values(world, mode)
        )
        binding = scalesetcharts.one(scale_set, "RoleBinding", "-manager-role")
        assert binding["subjects"] == [
            {"kind": "ServiceAccount", "name": arcsm["name"], "namespace": arcsm["namespace"]}
        ]
        await ok(kubeconfig, "apply", "-f", "-", stdin=manifests.dump(scale_set))
        controller = Controller(world, tmp_path)
        controller.with_token(await harness.service_account_token(kube, arcsm["name"]))
        async with controller:
            registered = await eventually(
                lambda: world.github.scale_set(GITHUB_NAME), timeout=scalesetcharts.TIMEOUT, what="registered"
            )
            assert "linux" in {label["name"] for label in registered.labels}
            await scalesetcharts.runs_jobs_then_goes(
                world, kube, kubeconfig, scale_set, registered=GITHUB_NAME
            )
