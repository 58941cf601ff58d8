"""``arcsm demo --in-cluster``: arcsm installed with its Helm chart on the emulated cluster and run there as a
real in-cluster process, then a scale set installed the way upstream's gha-runner-scale-set chart does,
run to Running and given a job.

One line on stdout per step, each waiting on what it says with a deadline:

1. a fresh emulated cluster (no CRDs, only ``default``) with the fake GitHub, whose kubelet runs the
   containers of image ``arcsm`` as this installation's ``arcsm`` (``controller.emulated.simimage``);
2. the chart rendered by Helm (``controller.installation.manifests``) with the HTTP API on ``port`` (0: a free
   one), created through the API in the order ``kubectl apply -f`` would (the CRDs, the namespace, the rest);
3. the Deployment available: its pod Ready through ``/readyz``, its journal on its claim;
4. a scale set as upstream's chart 0.14 makes it in its default container mode: ``sim.scalesetchart``,
   the stand-in for that chart, rendered by Helm against the cluster with a user's values and nothing
   about the controller, so its lookup finds arcsm's Deployment and binds the manager Role to the account
   its labels name; its objects (the config Secret, the runners' ServiceAccount, the Role and RoleBinding,
   the AutoscalingRunnerSet with its cleanup annotations) created;
5. the scale set Running, its listener a real ``arcsm listener`` process;
6. a job queued on the fake service, run by a runner;
7. the phase history, read from the controller's HTTP API on its pod's address.

With a pace (``demostory.Pace``, ``arcsm demo --pace``) it waits that long before steps 4 and 6, the things
it does once the timeline page can be opened.

It needs Helm's SDK (the ``helm`` extra) and a machine that allows mount namespaces (root or
CAP_SYS_ADMIN), which the kubelet's process containers use; without either it says so in one line.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import socket
from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx
from kubernetes_asyncio import client, utils

from controller.emulated import demostory, simimage
from controller.installation import manifests
from sim import processes, scalesetchart
from sim.github.fake import GitHubFake
from sim.github.records import JobState
from sim.world import World
from statemachines import kinds

NAMESPACE = "arc-runners"
CONTROLLER_NAMESPACE = manifests.NAMESPACE
SCALE_SET = "arc-runner-set"
CHART_VERSION = "0.14.2"  # the upstream chart sim.scalesetchart stands in for
RUNNER_IMAGE = "ghcr.io/actions/actions-runner:2.330.0"
CONTROLLER_PODS = "app.kubernetes.io/name=arcsm"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def chart_values(http_port: int, listener_port: int) -> dict[str, Any]:
    """The chart's values: its defaults but the ports, since the emulator's pods share the host's."""
    return {
        "metrics": {"controllerManagerAddr": f":{http_port}", "listenerAddr": f":{listener_port}"},
    }


async def install(kube: client.ApiClient, documents: list[dict[str, Any]]) -> None:
    """Create ``documents`` in order, as ``kubectl apply -f`` does on a cluster that has none of them."""
    for document in documents:
        try:
            await utils.create_from_dict(kube, document)
        except utils.FailToCreateError as exc:
            reasons = "; ".join(getattr(e, "reason", str(e)) for e in exc.api_exceptions)
            kind, name = document["kind"], document["metadata"]["name"]
            raise demostory.DemoFailed(f"could not create {kind} {name}: {reasons}") from None


def scale_set_values(world: World) -> dict[str, Any]:
    """What a user gives upstream's scale-set chart: nothing about the controller."""
    return {
        "githubConfigUrl": world.github_url + "/org",
        "githubConfigSecret": {"github_token": demostory.DEMO_PAT},
        "runnerScaleSetName": SCALE_SET,
        "minRunners": 0,
        "maxRunners": 2,
        "template": {
            "spec": {"restartPolicy": "Never", "containers": [{"name": "runner", "image": RUNNER_IMAGE}]}
        },
    }


class InClusterStory:
    """The steps, against a started world; ``say`` prints one line."""

    def __init__(
        self, world: World, kube: client.ApiClient, say: Callable[[str], None], *, port: int
    ) -> None:
        self.world, self.kube, self.say = world, kube, say
        self.core = client.CoreV1Api(kube)
        self.port = port if port else free_port()
        self.timeout = 60.0
        self.pace = demostory.Pace()
        self.url = ""

    async def until(self, predicate: Callable[[], Any], step: str) -> Any:
        try:
            return await demostory.until(predicate, step=step, timeout=self.timeout)
        except demostory.StepTimedOut as exc:
            raise demostory.DemoFailed(f"{exc}{await self._pod_problem()}") from None

    async def play(self) -> None:
        if not processes.mounts_allowed():
            raise demostory.DemoFailed(
                "the emulated kubelet runs arcsm's pods as processes in private mount namespaces, which this "
                "machine does not allow: run the in-cluster demo as root (or with CAP_SYS_ADMIN)"
            )
        await self.install_chart()
        await self.controller_ready()
        # Paced once the timeline page (the pod's) can be opened: before each thing done to the cluster.
        await self.pace.pause()
        await self.install_scale_set()
        await self.pace.pause()
        await self.run_a_job()
        await self.show_history()

    async def install_chart(self) -> None:
        release = manifests.Release(values=chart_values(self.port, free_port()))
        documents = manifests.render(release)
        kinds_ = sorted({d["kind"] for d in documents})
        self.say(
            f"installing arcsm's Helm chart (release {release.name} in {release.namespace}): "
            + ", ".join(kinds_)
        )
        await install(self.kube, documents)

    async def controller_ready(self) -> None:
        apps = client.AppsV1Api(self.kube)

        async def available() -> Any:
            deployment = await apps.read_namespaced_deployment("arcsm", CONTROLLER_NAMESPACE)
            if not (deployment.status.available_replicas or 0):
                return None
            pods = await self.core.list_namespaced_pod(CONTROLLER_NAMESPACE, label_selector=CONTROLLER_PODS)
            return next((p for p in pods.items if p.status.pod_ip), None)

        pod = await self.until(available, "the controller's Deployment available")
        self.url = f"http://{pod.status.pod_ip}:{self.port}"
        claim = self.world.claim_path(CONTROLLER_NAMESPACE, "journal-arcsm-0")
        self.say(
            f"arcsm runs in-cluster: pod {pod.metadata.name} is Ready through /readyz, "
            f"its journal on claim journal-arcsm-0 ({claim})"
        )
        self.say(
            f"its timeline page: {self.url}/ and history: curl -s '{self.url}/api/v1/phases?kind={kinds.ARS}'"
        )

    async def install_scale_set(self) -> None:
        await install(self.kube, [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}}])
        kubeconfig = self.world.write_kubeconfig(self.world.state_dir / "kubeconfig")
        release = manifests.Release(name=SCALE_SET, namespace=NAMESPACE, values=scale_set_values(self.world))
        try:
            # Helm's SDK blocks while it asks the cluster, which this event loop serves.
            render = functools.partial(
                manifests.render_templates, chart=scalesetchart.path(), kubeconfig=kubeconfig
            )
            objects = await asyncio.to_thread(render, release)
        except manifests.RenderError as exc:
            raise demostory.DemoFailed(f"upstream's scale-set chart would fail: {exc}") from None
        [binding] = [o for o in objects if o["kind"] == "RoleBinding"]
        [account] = binding["subjects"]
        bound = f"{account['namespace']}/{account['name']}"
        self.say(
            f"upstream's gha-runner-scale-set chart ({CHART_VERSION}, a stand-in), given no controller "
            f"values, found arcsm by its labels: its manager Role is bound to {bound}"
        )
        custom = client.CustomObjectsApi(self.kube)
        for body in objects:
            if body["kind"] == kinds.ARS:
                await custom.create_namespaced_custom_object(
                    kinds.GROUP, kinds.VERSION, NAMESPACE, kinds.PLURALS[kinds.ARS], body
                )
            else:
                await install(self.kube, [body])
        self.say(f"scale set {NAMESPACE}/{SCALE_SET} installed as that chart makes it")

        async def running() -> bool:
            ars = await custom.get_namespaced_custom_object(
                kinds.GROUP, kinds.VERSION, NAMESPACE, kinds.PLURALS[kinds.ARS], SCALE_SET
            )
            listeners = await self.core.list_namespaced_pod(
                CONTROLLER_NAMESPACE, label_selector="app.kubernetes.io/component=runner-scale-set-listener"
            )
            up = [p for p in listeners.items if p.status.phase == "Running"]
            return (ars.get("status") or {}).get("phase") == "Running" and bool(up)

        await self.until(running, "the scale set Running with its listener")
        self.say("the scale set is Running; its listener is an arcsm listener process in its own pod")

    async def run_a_job(self) -> None:
        registered = self.world.github.scale_set(SCALE_SET)
        if registered is None:
            raise demostory.DemoFailed("the scale set is Running but not registered with the fake service")
        [job] = self.world.github.queue_jobs(registered.id, 1)
        self.say("a job is queued")

        async def done() -> bool:
            return job.state is JobState.COMPLETED

        await self.until(done, "the job run")
        self.say(f"the job ran on runner {job.runner_name} ({job.result})")

    async def show_history(self) -> None:
        async with httpx.AsyncClient(timeout=30) as http:
            path = f"/api/v1/namespaces/{NAMESPACE}/autoscalingrunnersets/{SCALE_SET}/phases"
            items = (await http.get(self.url + path)).json()["items"]
        phases = " → ".join(item["to"] for item in items)
        self.say(f"phase history of {NAMESPACE}/{SCALE_SET}, from the pod's HTTP API: {phases}")

    async def _pod_problem(self) -> str:
        """Why the controller's pod is not up, when its status says (a container that cannot start)."""
        with contextlib.suppress(client.ApiException):
            pods = await self.core.list_namespaced_pod(CONTROLLER_NAMESPACE, label_selector=CONTROLLER_PODS)
            for pod in pods.items:
                for status in pod.status.container_statuses or []:
                    state = status.state.waiting or status.state.terminated or status.last_state.terminated
                    if state is not None and state.message:
                        return f": the controller's container: {state.reason}: {state.message}"
        return ""


@contextlib.asynccontextmanager
async def world(github: GitHubFake) -> AsyncIterator[World]:
    """A fresh emulated cluster that runs the arcsm image's containers as this arcsm."""
    async with World(github=github, crd_dir=None, namespaces=("default",)) as started:
        simimage.register(started, listeners=True)
        yield started
