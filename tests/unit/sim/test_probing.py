"""Probes as the kubelet runs them (sim.probing): reading a probe, ports, checks against real sockets,
and the thresholds a prober flips its result on."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator

import pytest
from aiohttp import web

from sim import probing
from sim.probing import Probe, Prober
from tests.helpers import eventually


def test_a_probe_is_read_with_the_kubelet_defaults() -> None:
    probe = Probe.of({"readinessProbe": {"tcpSocket": {"port": 80}}}, "readiness")
    assert probe is not None
    assert (probe.handler, probe.period, probe.timeout, probe.success_threshold, probe.failure_threshold) == (
        "tcpSocket",
        10.0,
        1.0,
        1,
        3,
    )
    assert Probe.of({}, "liveness") is None
    assert [Probe.of({f"{k}Probe": {"exec": {"command": ["true"]}}}, k).initially for k in probing.KINDS] == [
        None,
        True,
        False,
    ]


def test_ports_are_numbers_or_names_of_container_ports() -> None:
    container = {"ports": [{"name": "http", "containerPort": 8080}]}
    assert probing.port_of(80, container) == 80
    assert probing.port_of("81", container) == 81
    assert probing.port_of("http", container) == 8080
    assert probing.port_of("grpc", container) is None


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
async def server() -> AsyncIterator[tuple[int, dict[str, int]]]:
    answers = {"code": 200}

    async def handle(request: web.Request) -> web.Response:
        return web.Response(status=answers["code"])

    app = web.Application()
    app.router.add_get("/check", handle)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    yield port, answers
    await runner.cleanup()


async def test_http_checks_pass_on_2xx_and_3xx_and_say_why_otherwise(
    server: tuple[int, dict[str, int]],
) -> None:
    port, answers = server
    probe = Probe("readiness", "httpGet", {"path": "/check", "port": port})
    assert await probing.check(probe, pod_ip="127.0.0.1", container={}) == (True, "")
    answers["code"] = 503
    assert await probing.check(probe, pod_ip="127.0.0.1", container={}) == (
        False,
        "HTTP probe failed with statuscode: 503",
    )
    dead = closed_port()
    refused = Probe("readiness", "httpGet", {"path": "/check", "port": dead})
    assert await probing.check(refused, pod_ip="127.0.0.1", container={}) == (
        False,
        f'Get "http://127.0.0.1:{dead}/check": dial tcp 127.0.0.1:{dead}: connect: connection refused',
    )


async def test_tcp_checks(server: tuple[int, dict[str, int]]) -> None:
    port, _ = server
    assert await probing.check(
        Probe("liveness", "tcpSocket", {"port": port}), pod_ip="127.0.0.1", container={}
    ) == (True, "")
    dead = closed_port()
    assert await probing.check(
        Probe("liveness", "tcpSocket", {"port": dead}), pod_ip="127.0.0.1", container={}
    ) == (False, f"dial tcp 127.0.0.1:{dead}: connect: connection refused")


async def test_results_flip_after_the_thresholds(server: tuple[int, dict[str, int]]) -> None:
    port, answers = server
    probe = Probe(
        "readiness",
        "httpGet",
        {"path": "/check", "port": port},
        period=0.01,
        success_threshold=2,
        failure_threshold=3,
    )
    flips: list[bool] = []
    failures: list[str] = []
    prober = Prober(
        probe,
        pod_ip=lambda: "127.0.0.1",
        container={},
        on_result=lambda ok, _: flips.append(ok),
        on_failure=failures.append,
    )
    task = asyncio.create_task(prober.run())
    try:
        await eventually(lambda: flips == [True], what="ready after two successes")
        answers["code"] = 500
        await eventually(lambda: flips == [True, False], what="unready after three failures")
        assert len(failures) >= 3
    finally:
        task.cancel()


async def test_a_startup_probe_stops_once_it_passed_and_exec_probes_pass() -> None:
    flips: list[bool] = []
    exec_probe = Probe("startup", "exec", {"command": ["true"]})
    warned: list[str] = []
    prober = Prober(
        exec_probe,
        pod_ip=lambda: "",
        container={},
        on_result=lambda ok, _: flips.append(ok),
        on_unsupported=lambda: warned.append("exec"),
    )
    await asyncio.wait_for(prober.run(), 5)
    assert flips == [True] and warned == ["exec"]
