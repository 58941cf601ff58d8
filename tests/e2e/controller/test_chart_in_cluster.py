"""arcsm installed with its Helm chart on each world, running in-cluster for real.

Inputs: a fresh cluster of each world without CRDs (the emulated one, and the real control plane,
which has no provisioner: a PersistentVolume on a host directory is made beforehand for the journal's
claim, as large as the chart asks) with the fake GitHub, whose kubelet runs the containers of image
``arcsm`` as this installation's ``arcsm`` (``controller.emulated.simimage``: the controller and the
listener, as real processes); arcsm's Helm chart rendered by Helm with two free ports for the HTTP API
and the listeners' metrics, applied with the pinned kubectl; a scale set shaped as upstream's
gha-runner-scale-set chart makes it (``sim.scalesetchart``, rendered by Helm against the cluster, so it
finds arcsm's Deployment itself), with nothing about the controller in its values.

Outputs: ``kubectl rollout status`` sees the Deployment available once the pod is Ready through its
probes on ``/readyz``; the controller reached the API server with its service-account token over HTTPS
and RBAC refused it nothing (the world's request log: the emulator's own, kube-apiserver's audit log on
the real control plane, where a request refused before it is authenticated names no user, so no 401 is
allowed from anyone); its journal is on its claim's volume; the scale set reaches Running with a
listener process that also runs under its own account, runs a queued job, and its phase history is
served on the pod's address; ``kubectl logs`` shows the controller's JSON lines and the listener's, and
no secret is in either (nor in the real control plane's logs, its audit log among them); deleting the
scale set cleans up, and deleting the Deployment stops the controller with SIGTERM, exit 0.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from kubernetes_asyncio import client, watch

from controller.emulated import simimage
from controller.installation import manifests
from sim.github.records import JobState
from sim.world import World
from statemachines.kinds import ARS
from tests import worlds
from tests.e2e.controller import harness, scraping
from tests.e2e.controller.harness import CONTROLLER_NS, PAT
from tests.e2e.controller.test_upstream_scale_set_chart import (
    RELEASE,
    RUNNERS_NS,
    render_scale_set,
    user_values,
)
from tests.e2e.sim import processworld
from tests.helpers import eventually, free_port
from tests.kubectl import ok, requires_kubectl

pytestmark = [requires_kubectl, processworld.needs_mounts, pytest.mark.both_worlds(crds=False)]

TIMEOUT = 120.0
CONTROLLER = f"system:serviceaccount:{CONTROLLER_NS}:arcsm"
JOURNAL_CLAIM = "journal-arcsm-0"


@contextlib.asynccontextmanager
async def fresh_cluster(world_kind: str) -> AsyncIterator[World]:
    async with worlds.open_world(world_kind, github=True, crds=False) as world:
        world.github.allow_pat(PAT)
        simimage.register(world, listeners=True)
        try:
            yield world
        finally:
            await harness.stop_pods(world)


def journal_volume(path: Path, rendered: list[dict[str, Any]]) -> dict[str, Any]:
    """A volume made beforehand for the journal's claim, as on a cluster without a provisioner: as large
    as the claim asks, bound to it by its ``claimRef``."""
    [claim] = [d for d in rendered if d["kind"] == "PersistentVolumeClaim"]
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {"name": "arcsm-journal"},
        "spec": {
            "capacity": claim["spec"]["resources"]["requests"],
            "accessModes": claim["spec"]["accessModes"],
            "claimRef": {"namespace": CONTROLLER_NS, "name": JOURNAL_CLAIM},
            "hostPath": {"path": str(path), "type": "DirectoryOrCreate"},
        },
    }


async def claim_directory(world: World, core: client.CoreV1Api) -> Path | None:
    """The host directory the journal's claim is bound to: a provisioned volume's on the emulator, the
    static volume's on the real control plane."""
    if not worlds.is_real(world):
        return world.claim_path(CONTROLLER_NS, JOURNAL_CLAIM)
    claim = await core.read_namespaced_persistent_volume_claim(JOURNAL_CLAIM, CONTROLLER_NS)
    if claim.status.phase != "Bound":
        return None
    volume = await core.read_persistent_volume(claim.spec.volume_name)
    return Path(volume.spec.host_path.path)


async def controller_pod(core: client.CoreV1Api) -> Any:
    pods = await core.list_namespaced_pod(CONTROLLER_NS, label_selector="app.kubernetes.io/name=arcsm")
    return pods.items[0] if pods.items else None


async def get(url: str) -> Any:
    async with httpx.AsyncClient(timeout=30) as http:
        resp = await http.get(url)
    resp.raise_for_status()
    return resp.json() if "json" in resp.headers.get("content-type", "") else resp.text


async def test_the_chart_runs_arcsm_in_cluster_and_a_scale_set_from_upstreams_chart_runs_a_job(
    tmp_path: Path, world_kind: str
) -> None:
    http_port, listener_port = free_port(), free_port()
    values = {
        "metrics": {"controllerManagerAddr": f":{http_port}", "listenerAddr": f":{listener_port}"},
        # Upstream's default level: debug lines must hold no secret either.
        "flags": {"logLevel": "debug"},
        "listener": {"logLevel": "debug"},
    }
    async with fresh_cluster(world_kind) as world, client.ApiClient(world.configuration()) as kube:
        kubeconfig = world.write_kubeconfig(tmp_path / "kubeconfig")
        core = client.CoreV1Api(kube)
        rendered = manifests.render(manifests.Release(values=values))
        if worlds.is_real(world):
            volume = journal_volume(tmp_path / "journal-volume", rendered)
            await ok(kubeconfig, "apply", "-f", "-", stdin=json.dumps(volume))
        await ok(kubeconfig, "apply", "-f", "-", stdin=manifests.dump(rendered))
        # The chart brought the CRDs: the controller's first runner would be refused for up to 30 s.
        await harness.owners_admitted(world, CONTROLLER)
        await ok(
            kubeconfig,
            "rollout",
            "status",
            "deployment/arcsm",
            "-n",
            CONTROLLER_NS,
            f"--timeout={int(TIMEOUT)}s",
        )

        async def ready_pod() -> Any:  # a busy node may fail one probe after the rollout: Ready comes back
            pod = await controller_pod(core)
            conditions = {c.type: c.status for c in (pod.status.conditions or [])} if pod else {}
            return pod if conditions.get("Ready") == "True" else None

        pod = await eventually(ready_pod, timeout=TIMEOUT, what="the controller's pod Ready")
        base = f"http://{pod.status.pod_ip}:{http_port}"

        async def leading() -> Any:  # Ready means synced; the chart's replica elects, then leads
            found = await get(f"{base}/readyz")
            return found if found.get("role") == "leader" else None

        await eventually(leading, timeout=TIMEOUT, what="the chart's replica leading")
        assert (await get(f"{base}/healthz"))["status"] == "ok"
        claim = await claim_directory(world, core)
        assert claim is not None and (claim / "journal.db").is_file()

        namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": RUNNERS_NS}}
        await ok(kubeconfig, "apply", "-f", "-", stdin=json.dumps(namespace))
        scale_set = await render_scale_set(kubeconfig, user_values(world, {}))
        await ok(kubeconfig, "apply", "-f", "-", stdin=manifests.dump(scale_set))

        async def running() -> bool:
            ars = await harness.get(kube, ARS, RELEASE, RUNNERS_NS)
            listeners = (
                await core.list_namespaced_pod(
                    CONTROLLER_NS, label_selector="app.kubernetes.io/component=runner-scale-set-listener"
                )
            ).items
            up = [p for p in listeners if p.status.phase == "Running"]
            return bool(ars and (ars.get("status") or {}).get("phase") == "Running" and up)

        await eventually(running, timeout=TIMEOUT, what="the scale set Running with a listener process")
        registered = world.github.scale_set(RELEASE)
        assert registered is not None
        [job] = world.github.queue_jobs(registered.id, 1)
        jit_configs: set[str] = set()  # kept to show no log line holds one

        async def job_done() -> bool:
            for secret in (await core.list_namespaced_secret(RUNNERS_NS)).items:
                if (secret.data or {}).get("jitToken"):
                    jit_configs.add(base64.b64decode(secret.data["jitToken"]).decode())
            return job.state is JobState.COMPLETED

        await eventually(job_done, timeout=TIMEOUT, interval=0.05, what="the job run")
        assert job.result == "succeeded"

        history = await get(f"{base}/api/v1/namespaces/{RUNNERS_NS}/autoscalingrunnersets/{RELEASE}/phases")
        assert [(t["from"], t["to"]) for t in history["items"]][:2] == [
            (None, "Pending"),
            ("Pending", "Running"),
        ]
        journaled = await harness.phases_journaled(claim / "journal.db", name=RELEASE)
        assert [to for _, to, _ in journaled][:2] == ["Pending", "Running"], journaled
        metrics = await get(f"{base}/metrics")
        assert "gha_controller_running_listeners{" in metrics
        # As upstream's: no `*_created` series beside the counters and histograms.
        assert not [s.name for s in scraping.samples(metrics) if s.name.endswith("_created")]

        # In-cluster for real: its token over HTTPS, nothing refused; the listener under its own account.
        mine = [r for r in world.requests if r.user == CONTROLLER]
        assert mine and not [r for r in mine if r.status in (401, 403)]
        assert not [r for r in world.requests if r.status == 401], "a token refused"
        [listener] = (
            await core.list_namespaced_pod(
                CONTROLLER_NS, label_selector="app.kubernetes.io/component=runner-scale-set-listener"
            )
        ).items
        # A real process: it logs where it finds the cluster, and serves its metrics on its port.
        listener_log = await ok(kubeconfig, "logs", "-n", CONTROLLER_NS, listener.metadata.name)
        assert "reaching the cluster with the pod's service account" in listener_log
        assert f"serving metrics on *:{listener_port}/metrics" in listener_log
        listener_users = {
            r.user
            for r in world.requests
            if r.user.startswith(f"system:serviceaccount:{CONTROLLER_NS}:") and r.user != CONTROLLER
        }
        assert listener_users, "the listener process used its own service account"
        assert not [r for r in world.requests if r.user in listener_users and r.status in (401, 403)]
        logs = await ok(kubeconfig, "logs", "-n", CONTROLLER_NS, "deployment/arcsm")
        lines = [json.loads(line) for line in logs.splitlines() if line.startswith("{")]
        assert lines and {"time", "level", "logger", "msg"} <= lines[0].keys()
        assert "debug" in {line["level"] for line in lines}
        assert jit_configs, "a runner's JIT config was seen"
        plain = [PAT, *jit_configs, *(agent.secret for agent in world.github.state.agents.values())]
        # As given, and as a Secret's data holds them.
        secrets = [*plain, *(base64.b64encode(p.encode()).decode() for p in plain)]
        # On the real control plane, its components' logs and the audit log too.
        cluster_logs = (
            [path.read_text(errors="replace") for path in world.control_plane.log_dir.iterdir()]
            if worlds.is_real(world)
            else []
        )
        for text in (logs, listener_log, *cluster_logs):
            assert not [s for s in secrets if s in text], "a secret in a log line"

        await harness.delete(kube, ARS, RELEASE, RUNNERS_NS)

        async def gone() -> bool:
            return await harness.get(kube, ARS, RELEASE, RUNNERS_NS) is None

        await eventually(gone, timeout=TIMEOUT, what="the scale set cleaned up and gone")
        # SIGTERM on deletion: the controller drains, releases its Lease and exits 0.
        name, version = pod.metadata.name, pod.metadata.resource_version
        await ok(kubeconfig, "delete", "deployment", "arcsm", "-n", CONTROLLER_NS, "--wait=false")
        last = None
        async with asyncio.timeout(TIMEOUT), watch.Watch() as w:
            stream = w.stream(
                core.list_namespaced_pod,
                CONTROLLER_NS,
                field_selector=f"metadata.name={name}",
                resource_version=version,
            )
            async for event in stream:
                last = (event["object"].status.container_statuses or [last])[0]
                if event["type"] == "DELETED":
                    break
        assert last is not None and last.state.terminated is not None
        assert (last.state.terminated.exit_code, last.state.terminated.reason) == (0, "Completed")
        lease = await client.CoordinationV1Api(kube).read_namespaced_lease("arcsm-controller", CONTROLLER_NS)
        assert not lease.spec.holder_identity, "the Lease was released"
