"""Helpers of the listener e2e tests: the listener config, an EphemeralRunnerSet to patch, a minimal stand-in
for the EphemeralRunnerSet controller (no controller exists yet), the ERS's patch trace, and an httpx
transport that drops long polls.

``RunnerSetModel`` plays the ERS controller's part of §2.2 step 9 and nothing else: on every observed
change of the ERS's spec it scales only when ``patchID == 0`` or ``patchID`` differs from the newest
``patch-id`` of its live runners; it creates runners up to ``replicas`` (an EphemeralRunner object, a JIT
config and a runner connected to the fake, which takes one job), and scales down idle runners only
under patch id 0. A runner is live until its job completes (the fake then removes it).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx
from kubernetes_asyncio import client, watch

from actions import errors
from actions.client import ActionsClient
from sim.github import GitHubFake
from sim.github.records import Job

GROUP, VERSION = "actions.github.com", "v1alpha1"
NS = "arc-runners"
ERS = "arc-runner-set"
SCALE_SET = "arc-runner-set"
PAT = "ghp_listenerE2eToken0000000000000001"
RUNNER_VERSION = "2.330.0"


def config_json(config_url: str, scale_set_id: int, *, min_runners: int, max_runners: int) -> dict[str, Any]:
    """A listener config as the upstream AL controller writes it (§5.2), with a PAT."""
    return {
        "configure_url": config_url,
        "vault_type": "",
        "vault_lookup_key": "",
        "github_token": PAT,
        "ephemeral_runner_set_namespace": NS,
        "ephemeral_runner_set_name": ERS,
        "max_runners": max_runners,
        "min_runners": min_runners,
        "runner_scale_set_id": scale_set_id,
        "runner_scale_set_name": SCALE_SET,
        "server_root_ca": "",
        "log_level": "debug",
        "log_format": "text",
        "metrics_addr": "",
        "metrics_endpoint": "",
    }


async def create_namespace(api: client.ApiClient, name: str = NS) -> None:
    await client.CoreV1Api(api).create_namespace({"metadata": {"name": name}})


async def create_runner_set(api: client.ApiClient, config_url: str, scale_set_id: int) -> dict[str, Any]:
    body = {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": "EphemeralRunnerSet",
        "metadata": {"name": ERS, "namespace": NS},
        "spec": {"replicas": 0, "patchID": 0},
    }
    created: dict[str, Any] = await client.CustomObjectsApi(api).create_namespaced_custom_object(
        GROUP, VERSION, NS, "ephemeralrunnersets", body
    )
    return created


async def read_runner_set(api: client.ApiClient) -> tuple[int, int]:
    """(patchID, replicas) of the ERS now; absent replicas read 0."""
    ers = await client.CustomObjectsApi(api).get_namespaced_custom_object(
        GROUP, VERSION, NS, "ephemeralrunnersets", ERS
    )
    return _spec(ers)


def _spec(ers: dict[str, Any]) -> tuple[int, int]:
    spec = ers.get("spec") or {}
    return int(spec.get("patchID") or 0), int(spec.get("replicas") or 0)


@dataclass
class SimRunner:
    name: str
    runner_id: int
    patch_id: int
    task: asyncio.Task[Job | None]


@dataclass
class RunnerSetModel:
    api: client.ApiClient
    fake: GitHubFake
    actions: ActionsClient
    scale_set_id: int
    config_url: str
    runners: dict[str, SimRunner] = field(default_factory=dict)
    trace: list[tuple[int, int]] = field(default_factory=list)
    scale_downs: list[int] = field(default_factory=list)  # the patch id of every idle-runner removal
    jit_configs: list[str] = field(default_factory=list)
    _count: int = 0

    def live(self) -> list[SimRunner]:
        return [r for r in self.runners.values() if r.runner_id in self.fake.state.agents]

    async def observe(self, resource_version: str) -> None:
        """Watch the ERS from ``resource_version``, record each (patchID, replicas) and reconcile on it."""
        objects = client.CustomObjectsApi(self.api)
        async with watch.Watch() as stream:
            async for event in stream.stream(
                objects.list_namespaced_custom_object,
                GROUP,
                VERSION,
                NS,
                "ephemeralrunnersets",
                field_selector=f"metadata.name={ERS}",
                resource_version=resource_version,
            ):
                patch_id, replicas = _spec(event["object"])
                self.trace.append((patch_id, replicas))
                await self.reconcile(patch_id, replicas)

    async def reconcile(self, patch_id: int, replicas: int) -> None:
        live = self.live()
        latest = max((r.patch_id for r in live), default=-1)
        if patch_id != 0 and patch_id == latest:
            return
        if len(live) < replicas:
            for _ in range(replicas - len(live)):
                await self._create(patch_id)
        elif patch_id == 0 and len(live) > replicas:
            await self._remove_idle(len(live) - replicas)

    async def _create(self, patch_id: int) -> None:
        self._count += 1
        name = f"{ERS}-runner-{self._count}"
        await client.CustomObjectsApi(self.api).create_namespaced_custom_object(
            GROUP,
            VERSION,
            NS,
            "ephemeralrunners",
            {
                "apiVersion": f"{GROUP}/{VERSION}",
                "kind": "EphemeralRunner",
                "metadata": {
                    "name": name,
                    "namespace": NS,
                    "annotations": {"actions.github.com/patch-id": str(patch_id)},
                },
                "spec": {
                    "githubConfigUrl": self.config_url,
                    "githubConfigSecret": "github-config",
                    "runnerScaleSetId": self.scale_set_id,
                },
            },
        )
        jit = await self.actions.generate_jit_runner_config(self.scale_set_id, name)
        self.jit_configs.append(jit.encoded_jit_config.reveal())
        registration = self.fake.register_runner(jit.encoded_jit_config.reveal(), RUNNER_VERSION)
        # The runner id reaches the status before the runner can take a job, as the EphemeralRunner
        # controller writes it before it makes the pod: the listener records a job only on its runner.
        await client.CustomObjectsApi(self.api).patch_namespaced_custom_object_status(  # type: ignore[call-arg]
            GROUP,
            VERSION,
            NS,
            "ephemeralrunners",
            name,
            {"status": {"runnerId": registration.runner_id, "runnerName": name}},
            _content_type="application/merge-patch+json",
        )
        task = asyncio.create_task(self.fake.next_job_for(registration.runner_id), name=f"runner {name}")
        self.runners[name] = SimRunner(name, registration.runner_id, patch_id, task)

    async def _remove_idle(self, count: int) -> None:
        for runner in list(self.live()):
            if count == 0:
                return
            try:
                await self.actions.remove_runner(runner.runner_id)
            except errors.JobStillRunningError:
                continue
            self.scale_downs.append(self.trace[-1][0])
            count -= 1

    async def close(self) -> None:
        for runner in self.runners.values():
            runner.task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await runner.task


class DroppingTransport(httpx.AsyncBaseTransport):
    """Forwards requests; the next ``drop`` long polls (GET …/messages) reach the service, and then the
    connection breaks before the answer arrives, as when a proxy or load balancer drops an idle poll.
    ``seen`` keeps every Authorization header sent, for the log scan."""

    def __init__(self, inner: httpx.AsyncBaseTransport | None = None) -> None:
        self.inner = inner or httpx.AsyncHTTPTransport()
        self.drop = 0
        self.dropped = 0
        self.seen: set[str] = set()
        self.on_request: Callable[[httpx.Request], None] | None = None

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        header = request.headers.get("Authorization")
        if header:
            self.seen.add(header.split(" ", 1)[-1])
        response = await self.inner.handle_async_request(request)
        if self.drop > 0 and request.method == "GET" and request.url.path.endswith("/messages"):
            self.drop -= 1
            self.dropped += 1
            await response.aclose()
            raise httpx.RemoteProtocolError("peer closed connection without sending complete message body")
        return response

    async def aclose(self) -> None:
        await self.inner.aclose()
