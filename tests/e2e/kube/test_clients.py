"""The ``ApiClient`` arcsm opens (``kube.clients``) honours the proxy the environment names, decided once.

A stand-in forward proxy (an aiohttp server answering absolute-URI requests) records what reaches it; the
API server behind the names used here does not exist, so an answer proves the request went through it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import aiohttp
import pytest
from aiohttp import web
from kubernetes_asyncio import client

from kube.clients import api_client, env_proxy


@pytest.fixture
async def proxy() -> AsyncIterator[tuple[str, list[str]]]:
    seen: list[str] = []

    async def forward(request: web.Request) -> web.Response:
        seen.append(str(request.url))
        version = dict.fromkeys(
            ("major", "minor", "buildDate", "compiler", "gitCommit", "gitTreeState", "goVersion", "platform"),
            "x",
        )
        return web.json_response({**version, "gitVersion": "v1.33.0-proxied"})

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", forward)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    try:
        yield f"http://127.0.0.1:{port}", seen
    finally:
        await runner.cleanup()


def _configuration(host: str) -> client.Configuration:
    configuration = client.Configuration()
    configuration.host = host
    return configuration


async def test_requests_go_through_the_proxy_the_environment_names(
    proxy: tuple[str, list[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    address, seen = proxy
    monkeypatch.setenv("HTTP_PROXY", address)
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    async with api_client(_configuration("http://apiserver.invalid:6443")) as api:
        for _ in range(3):
            version = await client.VersionApi(api).get_code()
            assert version.git_version == "v1.33.0-proxied"
        assert api.rest_client.pool_manager.trust_env is False
    assert seen == ["http://apiserver.invalid:6443/version/"] * 3


async def test_no_proxy_sends_requests_straight_to_the_server(
    proxy: tuple[str, list[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    address, seen = proxy
    monkeypatch.setenv("HTTP_PROXY", address)
    monkeypatch.setenv("NO_PROXY", "apiserver.invalid")
    async with api_client(_configuration("http://apiserver.invalid:6443")) as api:
        with pytest.raises(aiohttp.ClientConnectorError):
            await client.VersionApi(api).get_code()
    assert seen == []


def test_the_proxy_is_the_one_for_the_servers_scheme(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("NO_PROXY", "no_proxy", "HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy"):
        monkeypatch.delenv(name, raising=False)
    assert env_proxy("https://10.0.0.1:443") is None
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.corp:3128")
    monkeypatch.setenv("HTTP_PROXY", "http://plain.corp:3128")
    assert env_proxy("https://10.0.0.1:443") == "http://proxy.corp:3128"
    assert env_proxy("http://10.0.0.1:80") == "http://plain.corp:3128"
    monkeypatch.setenv("NO_PROXY", "10.0.0.1,.cluster.local")
    assert env_proxy("https://10.0.0.1:443") is None
    assert env_proxy("https://kubernetes.default.svc.cluster.local") is None
    assert env_proxy("https://api.example.com") == "http://proxy.corp:3128"
