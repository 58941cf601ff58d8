"""What the stories of upstream's scale-set charts share: a world made ready for a scale set release,
arcsm's chart applied, a stand-in chart rendered by Helm against the world, and a scale set's life run to
its end on the in-process controller.

Inputs: a world with the fake GitHub (``harness.github_world``); the pinned kubectl; the chart to render
(``sim.scalesetchart``, ``sim.experimentalscalesetchart``). Outputs: ``prepared`` (the runners'
namespace, and volumes made beforehand for the kubernetes mode's work claims where nothing provisions
them), ``install_arcsm`` (arcsm's chart rendered by Helm and applied, as ``arcsm manifests | kubectl
apply -f -`` does), ``render_chart`` (Helm's rendering with the world at hand, so a ``lookup`` asks it), and
``runs_jobs_then_goes``.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from kubernetes_asyncio import client

from controller.installation import manifests
from sim.github.records import JobState
from sim.world import World
from statemachines.kinds import AL, ARS, ER
from tests import worlds
from tests.e2e.controller import harness
from tests.e2e.controller.harness import CONTROLLER_NS
from tests.helpers import eventually
from tests.kubectl import ok

RUNNERS_NS = "arc-runners"
TIMEOUT = 60.0
JOBS = 2
CLEANUP_PROTECTION = "actions.github.com/cleanup-protection"


def work_volumes(directory: Path, storage_class: str) -> list[dict[str, Any]]:
    """A volume for each job's work claim (the kubernetes mode's, one a runner), of ``storage_class``."""
    return [
        {
            "apiVersion": "v1",
            "kind": "PersistentVolume",
            "metadata": {"name": f"work-{n}"},
            "spec": {
                "capacity": {"storage": "1Gi"},
                "accessModes": ["ReadWriteOnce"],
                "storageClassName": storage_class,
                "hostPath": {"path": str(directory / f"work-{n}"), "type": "DirectoryOrCreate"},
            },
        }
        for n in range(1, JOBS + 1)
    ]


async def prepared(world: World, tmp_path: Path, *, storage_class: str | None = None) -> Path:
    """The world's kubeconfig, with the runners' namespace made. The work claims of the kubernetes mode
    get volumes made beforehand where nothing provisions them: on the real world (no provisioner), and
    on either for a ``storage_class`` of no provisioner."""
    kubeconfig = world.write_kubeconfig(tmp_path / "kubeconfig")
    await ok(kubeconfig, "apply", "-f", "-", stdin=manifests.dump([manifests.namespace(RUNNERS_NS)]))
    if storage_class is not None or worlds.is_real(world):
        volumes = work_volumes(tmp_path, storage_class or "")
        await ok(kubeconfig, "apply", "-f", "-", stdin=manifests.dump(volumes))
    return kubeconfig


async def install_arcsm(kubeconfig: Path, values: dict[str, Any]) -> list[dict[str, Any]]:
    rendered = manifests.render(manifests.Release(values=values))
    await ok(kubeconfig, "apply", "-f", "-", stdin=manifests.dump(rendered))
    return rendered


async def render_chart(
    kubeconfig: Path, chart: Path, release: str, values: dict[str, Any]
) -> list[dict[str, Any]]:
    """``chart`` rendered by Helm for ``release`` in the runners' namespace with the cluster at hand."""
    where = manifests.Release(name=release, namespace=RUNNERS_NS, values=values)
    # Helm's SDK blocks; the emulated cluster is served by this event loop.
    return await asyncio.to_thread(manifests.render_templates, where, chart=chart, kubeconfig=kubeconfig)


def one(documents: list[dict[str, Any]], kind: str, suffix: str = "") -> dict[str, Any]:
    [found] = [d for d in documents if d["kind"] == kind and d["metadata"]["name"].endswith(suffix)]
    return found


async def runs_jobs_then_goes(
    world: World,
    kube: client.ApiClient,
    kubeconfig: Path,
    scale_set: list[dict[str, Any]],
    *,
    registered: str,
) -> None:
    """The scale set a chart rendered (``scale_set``, applied) reaches Running with its listener under the
    running controller, which registered it at GitHub as ``registered``; it runs ``JOBS`` queued jobs on
    runners whose pods are the chart's template; deleted (``helm uninstall``), it goes with what arcsm
    made and its registration, and the chart's own objects go once their cleanup-protection finalizers
    are released."""
    ars = one(scale_set, "AutoscalingRunnerSet")
    name = ars["metadata"]["name"]

    async def running() -> bool:
        found = await harness.get(kube, ARS, name, RUNNERS_NS)
        listeners = await harness.items(kube, AL, CONTROLLER_NS)
        return bool(found and (found.get("status") or {}).get("phase") == "Running" and listeners)

    await eventually(running, timeout=TIMEOUT, what="the scale set Running with its listener")
    scale_set_at_github = world.github.scale_set(registered)
    assert scale_set_at_github is not None, f"no scale set {registered!r} registered at GitHub"
    jobs = world.github.queue_jobs(scale_set_at_github.id, JOBS)

    async def runner_pod() -> dict[str, Any] | None:
        pods = (await client.CoreV1Api(kube).list_namespaced_pod(RUNNERS_NS)).items
        return next((kube.sanitize_for_serialization(p) for p in pods), None)

    pod = await eventually(runner_pod, timeout=TIMEOUT, what="a runner pod")
    template = ars["spec"]["template"]["spec"]
    assert pod["spec"]["serviceAccountName"] == template["serviceAccountName"]
    # The API server's default where the chart says none (the experimental one says none).
    assert pod["spec"]["restartPolicy"] == template.get("restartPolicy", "Always")
    assert [c["name"] for c in pod["spec"].get("initContainers") or []] == [
        c["name"] for c in template.get("initContainers") or []
    ]
    assert {v["name"] for v in pod["spec"].get("volumes") or []} >= {
        v["name"] for v in template.get("volumes") or []
    }
    await eventually(
        lambda: all(job.state is JobState.COMPLETED for job in jobs),
        timeout=TIMEOUT,
        what="the jobs run by runners",
    )
    assert [job.result for job in jobs] == ["succeeded"] * JOBS

    await harness.delete(kube, ARS, name, RUNNERS_NS)

    async def cleaned_up() -> bool:
        left = [
            await harness.get(kube, ARS, name, RUNNERS_NS),
            *await harness.items(kube, ER, RUNNERS_NS),
            *await harness.items(kube, AL, CONTROLLER_NS),
        ]
        return not any(left)

    await eventually(cleaned_up, timeout=TIMEOUT, what="the scale set and what arcsm made gone")
    assert world.github.scale_set(registered) is None, "the scale set is still registered at GitHub"
    protected = [d for d in scale_set if CLEANUP_PROTECTION in d["metadata"].get("finalizers", [])]
    assert {d["kind"] for d in protected} >= {"Role", "RoleBinding", "ServiceAccount", "Secret"}
    for doc in protected:
        kind, doc_name = doc["kind"].lower(), doc["metadata"]["name"]
        await ok(kubeconfig, "delete", kind, doc_name, "-n", RUNNERS_NS, "--wait=true", "--timeout=60s")
