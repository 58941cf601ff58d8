"""``rest_client_requests_total`` as client-go counts it: every request of a kubernetes_asyncio client, by
the answer's status code (``<error>`` without one), its verb and the configured server's host.

Inputs: the emulated API server (``World``) over real HTTP, and a port nothing listens on. The client is
the one the controller uses, with ``requestcounting.count_requests`` on it. Nothing is mocked.
"""

from __future__ import annotations

import socket
from urllib.parse import urlsplit

import aiohttp
import pytest
from kubernetes_asyncio import client

from controller.loop import requestcounting
from controller.loop.runtimemetrics import RuntimeMetrics
from sim.world import World


def requests(metrics: RuntimeMetrics, code: str, method: str, host: str) -> float | None:
    labels = {"code": code, "method": method, "host": host}
    return metrics.registry.get_sample_value("rest_client_requests_total", labels)


async def test_each_request_is_counted_by_its_answer_verb_and_server() -> None:
    metrics = RuntimeMetrics()
    async with World() as world, client.ApiClient(world.configuration()) as api:
        requestcounting.count_requests(api, metrics)
        core = client.CoreV1Api(api)
        pod = {"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "busybox"}]}}
        await core.create_namespaced_pod("default", pod)
        await core.list_namespaced_pod("default")
        with pytest.raises(client.ApiException):
            await core.read_namespaced_pod("missing", "default")
        host = urlsplit(world.url).netloc
        assert requestcounting.server_host(api) == host
        assert requests(metrics, "201", "POST", host) == 1
        assert requests(metrics, "200", "GET", host) == 1
        assert requests(metrics, "404", "GET", host) == 1


async def test_a_request_that_gets_no_answer_is_counted_as_an_error() -> None:
    with socket.socket() as sock:  # a port that was free a moment ago and that nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    metrics = RuntimeMetrics()
    async with client.ApiClient(client.Configuration(host=f"http://127.0.0.1:{port}")) as api:
        requestcounting.count_requests(api, metrics)
        with pytest.raises(aiohttp.ClientConnectionError):
            await client.CoreV1Api(api).list_namespaced_pod("default")
    assert requests(metrics, "<error>", "GET", f"127.0.0.1:{port}") == 1
