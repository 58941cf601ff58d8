"""The emulated world's kubelet as the node of a real control plane: what the node gained by being the same
kubelet (``sim.kubelet`` over ``sim.node.httpapi``) rather than a smaller node program of its own.

``kubectl logs`` reaches the kubelet's endpoint (``sim.kubeletserver``) through kube-apiserver's
``pods/log`` proxy.

Inputs: the pinned control plane (``tests.worlds``; skipped without it unless ``ARCSM_REAL_WORLD`` is
``required``), the process-container test image (``tests.e2e.sim.processworld``) registered on
``world.kubelet.runtimes``. Nothing is mocked: the kubelet reads Secrets, writes ``pods/status`` and
Events and asks for tokens over HTTPS as ``system:node:arcsm-node-1``, which kube-apiserver's Node
authorizer allows or refuses.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from kubernetes_asyncio import client

from sim import processes
from sim.controlplane.world import RealWorld
from tests import worlds
from tests.e2e.sim import processworld
from tests.e2e.sim.processworld import NS, ask, needs_mounts, pod_body, server_container, serving
from tests.helpers import eventually, free_port
from tests.kubectl import ok

TIMEOUT = 60.0


@pytest.fixture
async def world() -> AsyncIterator[RealWorld]:
    async with worlds.open_world(worlds.REAL) as w:
        runtime = processes.ProcessRuntime(processworld.image())
        w.kubelet.runtimes.register_image(processworld.IMAGE, runtime)
        yield w


@pytest.fixture
async def core(world: RealWorld) -> AsyncIterator[client.CoreV1Api]:
    async with client.ApiClient(world.configuration()) as api:
        yield client.CoreV1Api(api)


def conditions(pod: Any) -> dict[str, str]:
    return {c.type: c.status for c in pod.status.conditions or []}


@needs_mounts
async def test_a_process_container_runs_with_its_secret_and_reaches_kube_apiserver(
    world: RealWorld, core: client.CoreV1Api
) -> None:
    await core.create_namespaced_secret(NS, {"metadata": {"name": "creds"}, "stringData": {"token": "t0p"}})
    port = free_port()
    container = server_container(port)
    container["env"].append(
        {"name": "FROM_SECRET", "valueFrom": {"secretKeyRef": {"name": "creds", "key": "token"}}}
    )
    container["volumeMounts"] = [{"name": "creds", "mountPath": "/etc/creds"}]
    volumes = [{"name": "creds", "secret": {"secretName": "creds"}}]
    await core.create_namespaced_pod(NS, pod_body("proc", container, volumes=volumes))
    pod_ip = await serving(core, "proc", port, timeout=TIMEOUT)

    code, env = await ask(pod_ip, port, "/env")
    assert code == 200
    assert env["FROM_SECRET"] == "t0p" and env["POD_NAMESPACE"] == NS
    assert f"https://{env['KUBERNETES_SERVICE_HOST']}:{env['KUBERNETES_SERVICE_PORT']}" == world.url
    code, mounted = await ask(pod_ip, port, "/file", path="/etc/creds/token")
    assert (code, mounted["content"]) == (200, "t0p")
    # In-cluster config: the projected token (a TokenRequest the node made) and the cluster's CA reach
    # kube-apiserver, whose RBAC then answers for the pod's service account.
    code, answer = await ask(pod_ip, port, "/kube")
    assert code == 200, answer
    assert answer["pods"][0] == 403
    assert 'User "system:serviceaccount:default:default" cannot list resource "pods"' in answer["pods"][1]
    started = await core.list_namespaced_event(NS, field_selector="involvedObject.name=proc,reason=Started")
    assert [(e.source.component, e.source.host) for e in started.items] == [("kubelet", world.node_name)]


@needs_mounts
async def test_probes_decide_ready_and_a_failing_liveness_probe_restarts_the_container(
    world: RealWorld, core: client.CoreV1Api
) -> None:
    port = free_port()
    readiness = {"httpGet": {"path": "/readyz", "port": port}, "periodSeconds": 1, "failureThreshold": 1}
    liveness = {"httpGet": {"path": "/healthz", "port": port}, "periodSeconds": 1, "failureThreshold": 2}
    startup = {**liveness, "failureThreshold": 300}  # liveness from the moment it answers, however slow
    container = server_container(port, readinessProbe=readiness, livenessProbe=liveness, startupProbe=startup)
    container["env"].append({"name": "EXIT_ON_TERM", "value": "3"})
    await core.create_namespaced_pod(NS, pod_body("probed", container, terminationGracePeriodSeconds=5))
    pod_ip = await serving(core, "probed", port, timeout=TIMEOUT)

    async def ready() -> bool:
        pod = await core.read_namespaced_pod("probed", NS)
        return conditions(pod)["Ready"] == "True" and pod.status.container_statuses[0].ready

    assert not await ready()
    await ask(pod_ip, port, "/ready")
    # Ready implies started: the liveness probe runs from here on.
    await eventually(ready, timeout=TIMEOUT, what="Ready once the readiness probe passes")

    await ask(pod_ip, port, "/sicken")

    async def restarted() -> Any:
        pod = await core.read_namespaced_pod("probed", NS)
        cs = pod.status.container_statuses[0]
        return cs if cs.restart_count == 1 and cs.state.running is not None else None

    status = await eventually(restarted, timeout=TIMEOUT, what="the container restarted")
    assert (status.last_state.terminated.exit_code, status.last_state.terminated.reason) == (3, "Error")
    killing = await core.list_namespaced_event(NS, field_selector="involvedObject.name=probed,reason=Killing")
    assert [e.message for e in killing.items] == ["Container main failed liveness probe, will be restarted"]
    await serving(core, "probed", port, timeout=TIMEOUT)  # a new process, healthy again


async def test_a_crashing_container_backs_off_and_init_containers_complete(
    world: RealWorld, core: client.CoreV1Api
) -> None:
    body = {
        "metadata": {"name": "crashes", "annotations": {"sim.arcsm.io/exit-code": "1"}},
        "spec": {
            "initContainers": [{"name": "setup", "image": "busybox"}],
            "containers": [{"name": "main", "image": "busybox"}],
        },
    }
    await core.create_namespaced_pod(NS, body)

    async def backing_off() -> Any:
        pod = await core.read_namespaced_pod("crashes", NS)
        cs = (pod.status.container_statuses or [None])[0]
        waiting = cs.state.waiting if cs is not None else None
        return pod if waiting is not None and waiting.reason == "CrashLoopBackOff" else None

    pod = await eventually(backing_off, timeout=TIMEOUT, what="the container in CrashLoopBackOff")
    assert pod.status.container_statuses[0].restart_count >= 1
    assert pod.status.init_container_statuses[0].state.terminated.reason == "Completed"
    selector = "involvedObject.name=crashes,reason=BackOff"
    back_off = await core.list_namespaced_event(NS, field_selector=selector)
    assert back_off.items and back_off.items[0].type == "Warning"
    await core.delete_namespaced_pod("crashes", NS)

    async def gone() -> bool:
        pods = await core.list_namespaced_pod(NS, field_selector="metadata.name=crashes")
        return not pods.items

    await eventually(gone, timeout=TIMEOUT, what="the pod deleted by its kubelet")


async def test_kubectl_logs_reach_the_kubelet_through_kube_apiserver(
    world: RealWorld, core: client.CoreV1Api, tmp_path: Path
) -> None:
    body = {
        "metadata": {"name": "talks", "annotations": {"sim.arcsm.io/exit-code": "1"}},
        "spec": {"restartPolicy": "Never", "containers": [{"name": "main", "image": "busybox"}]},
    }
    runtime_lines = ["hello from the node", "and goodbye"]

    async def talks(ctx: Any) -> int:
        ctx.print(*runtime_lines)
        return 1

    world.kubelet.runtimes.register_name("main", talks)
    await core.create_namespaced_pod(NS, body)

    async def failed() -> bool:
        pod = await core.read_namespaced_pod("talks", NS)
        return pod.status.phase == "Failed"

    await eventually(failed, timeout=TIMEOUT, what="the pod Failed")
    kubeconfig = world.write_kubeconfig(tmp_path / "kubeconfig")
    assert await ok(kubeconfig, "logs", "talks") == "hello from the node\nand goodbye\n"
    assert await ok(kubeconfig, "logs", "talks", "--tail=1") == "and goodbye\n"
    answer = await core.read_namespaced_pod_log("talks", NS, container="main", timestamps=True)
    assert [line.split(" ", 1)[1] for line in answer.splitlines()] == runtime_lines


async def test_a_container_that_ends_while_kube_apiserver_is_down_is_reported_once_it_is_back(
    world: RealWorld, core: client.CoreV1Api, caplog: pytest.LogCaptureFixture
) -> None:
    """A status write kube-apiserver cannot answer is sent again until it can: the pod worker keeps the
    pod, and its end reaches the API once kube-apiserver is back (a kubelet's status manager does the
    same). Found by the long chaos runs on the real control plane, where a write that met a killed
    kube-apiserver ended the pod worker, and the pod stayed Running for ever with its runner gone."""
    caplog.set_level(logging.DEBUG, logger="arcsm.sim.kubelet")
    await core.create_namespaced_pod(
        NS,
        {
            "metadata": {"name": "ends"},
            "spec": {"restartPolicy": "Never", "containers": [{"name": "main", "image": "busybox"}]},
        },
    )

    async def running() -> bool:
        pod = await core.read_namespaced_pod("ends", NS)
        return pod.status.phase == "Running"

    await eventually(running, timeout=TIMEOUT, what="the pod running")

    async def ended_while_down() -> None:
        await world.kubelet.complete(NS, "ends", 0)

        def write_refused() -> bool:
            return any(
                "did not answer the status of pod default/ends" in r.getMessage() for r in caplog.records
            )

        await eventually(write_refused, timeout=TIMEOUT, what="the pod's status write unanswered")

    await world.control_plane.restart_apiserver(abrupt=True, until=ended_while_down)

    async def succeeded() -> bool:
        pod = await core.read_namespaced_pod("ends", NS)
        return pod.status.phase == "Succeeded"

    await eventually(succeeded, timeout=TIMEOUT, what="the pod Succeeded once kube-apiserver is back")
