"""What the metrics e2e tests share: a controller run with its HTTP API and the listeners' metrics on, and
reading Prometheus text as a scraper does.

Inputs: the emulated world with the fake GitHub (``harness.github_world``) and a directory. Outputs:
``serving`` runs ``controller.loop.running.run`` (the real composition root, as ``harness.Controller``
configures it) with ``--http 127.0.0.1:0`` and ``--listener-metrics-addr :8080
--listener-metrics-endpoint /metrics``, and yields a ``Served`` whose ``controller()`` scrapes the
controller's ``/metrics`` and ``listener()`` the listener pod's, at its pod's address as a Prometheus pod
scrape would reach it. ``samples`` parses an answer with prometheus_client's own parser. Nothing is
mocked.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import httpx
from kubernetes_asyncio import client
from prometheus_client.parser import text_string_to_metric_families
from prometheus_client.samples import Sample

from controller.loop import running
from controller.loop.settings import ControllerSettings, HttpSettings
from sim.world import World
from tests.e2e.controller import harness
from tests.helpers import eventually

TIMEOUT = 60.0
LISTENER_PORT = 8080
LISTENER_ENDPOINT = "/metrics"


def samples(text: str) -> list[Sample]:
    return [sample for family in text_string_to_metric_families(text) for sample in family.samples]


def value(found: list[Sample], metric: str, /, **labels: str) -> float | None:
    """The sum of the samples called ``metric`` whose labels include ``labels``; None when there is none."""
    matching = [s.value for s in found if s.name == metric and labels.items() <= s.labels.items()]
    return sum(matching) if matching else None


def labelled(found: list[Sample], name: str) -> list[Mapping[str, str]]:
    """The label sets of the samples called ``name``."""
    return [s.labels for s in found if s.name == name]


@dataclass
class Served:
    url: str
    kube: client.ApiClient
    http: httpx.AsyncClient
    settings: ControllerSettings

    async def controller(self) -> str:
        answer = await self.http.get(f"{self.url}/metrics")
        answer.raise_for_status()
        return answer.text

    async def listener_url(self) -> str:
        """The metrics URL of the scale set's listener, once its pod runs and serves."""

        async def running_pod_ip() -> str | None:
            listeners = await harness.items(self.kube, "AutoscalingListener", harness.CONTROLLER_NS)
            for al in listeners:
                name = al["metadata"]["name"]
                try:
                    pod = await client.CoreV1Api(self.kube).read_namespaced_pod(name, harness.CONTROLLER_NS)
                except client.ApiException:
                    continue
                if pod.status.phase == "Running" and pod.status.pod_ip:
                    return str(pod.status.pod_ip)
            return None

        pod_ip = await eventually(running_pod_ip, timeout=TIMEOUT, what="the listener pod running")
        return f"http://{pod_ip}:{LISTENER_PORT}{LISTENER_ENDPOINT}"

    async def listener(self) -> str:
        url = await self.listener_url()

        async def answered() -> str | None:
            try:
                answer = await self.http.get(url)
            except httpx.TransportError:
                return None  # the listener binds its port as it starts
            return answer.text if answer.status_code == 200 else None

        text: str = await eventually(answered, timeout=TIMEOUT, what=f"the listener serving {url}")
        return text


def settings_for(world: World, directory: Path) -> ControllerSettings:
    base = harness.Controller(world, directory).settings
    machines = dataclasses.replace(
        base.machines,
        listener_metrics_addr=f":{LISTENER_PORT}",
        listener_metrics_endpoint=LISTENER_ENDPOINT,
    )
    return dataclasses.replace(base, http=HttpSettings(host="127.0.0.1", port=0), machines=machines)


@contextlib.asynccontextmanager
async def serving(
    world: World, kube: client.ApiClient, directory: Path, settings: ControllerSettings | None = None
) -> AsyncIterator[Served]:
    """The controller running until the block ends (then stopped as SIGTERM would, exiting 0)."""
    settings = settings or settings_for(world, directory)
    urls: list[str] = []
    stop = asyncio.Event()
    task = asyncio.create_task(running.run(settings, stop=stop, on_http=urls.append), name="arcsm run")
    try:
        await eventually(lambda: urls or task.done(), timeout=TIMEOUT, what="the API listening")
        assert urls, task
        # The listeners' addresses are loopback addresses no proxy setting may claim.
        async with httpx.AsyncClient(timeout=10, trust_env=False) as http:
            yield Served(url=urls[0], kube=kube, http=http, settings=settings)
    finally:
        stop.set()
        async with asyncio.timeout(30):
            assert await task == 0
