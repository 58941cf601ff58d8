"""Many clients, one connection pool (``actions.pooling``), against a real HTTP server on loopback: the
clients' requests share the pool's keep-alive connection, each client keeps its own cookies, headers and
timeout, and closing a client leaves the pool to the others."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest
from aiohttp import web

from actions import tls
from actions.pooling import Pool


class Server:
    def __init__(self) -> None:
        self.peers: list[tuple[str, int]] = []  # the client end of the connection each request came on
        self.cookies: list[str] = []  # the Cookie header of each request ("" when none)
        self.url = ""

    async def answer(self, request: web.Request) -> web.Response:
        assert request.transport is not None
        self.peers.append(request.transport.get_extra_info("peername")[:2])
        self.cookies.append(request.headers.get("Cookie", ""))
        response = web.json_response({"path": request.path, "who": request.headers.get("X-Who", "")})
        if request.path == "/login":
            response.set_cookie("session", request.headers.get("X-Who", ""))
        return response


@pytest.fixture
async def server() -> AsyncIterator[Server]:
    served = Server()
    app = web.Application()
    app.router.add_get("/{tail:.*}", served.answer)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    served.url = f"http://127.0.0.1:{port}"
    try:
        yield served
    finally:
        await runner.cleanup()


async def test_clients_of_one_pool_share_its_connection_and_keep_their_own_cookies(server: Server) -> None:
    pool = Pool(verify=tls.context())
    a = httpx.AsyncClient(transport=pool.transport(), headers={"X-Who": "a"}, timeout=30)
    b = httpx.AsyncClient(transport=pool.transport(), headers={"X-Who": "b"}, timeout=30)
    try:
        assert (await a.get(server.url + "/login")).json() == {"path": "/login", "who": "a"}
        assert (await b.get(server.url + "/x")).json() == {"path": "/x", "who": "b"}
        assert (await a.get(server.url + "/y")).json() == {"path": "/y", "who": "a"}
        # One keep-alive connection served all three requests, sent one after another.
        assert len(set(server.peers)) == 1
        # The cookie a's login set goes back with a's requests only.
        assert server.cookies == ["", "", "session=a"]
        assert a.cookies.get("session") == "a" and b.cookies.get("session") is None

        await a.aclose()  # a client closed: the pool and the other clients go on
        assert (await b.get(server.url + "/z")).json() == {"path": "/z", "who": "b"}
        assert len(set(server.peers)) == 1
    finally:
        await a.aclose()
        await b.aclose()
        await pool.aclose()
    with pytest.raises(RuntimeError):  # closed with the pool: nothing sends through it any more
        await httpx.AsyncClient(transport=pool.transport()).get(server.url + "/after")


async def test_a_request_keeps_its_clients_timeout(server: Server) -> None:
    pool = Pool(verify=tls.context())
    seen: list[object] = []

    async def record(request: httpx.Request) -> None:
        seen.append(request.extensions["timeout"])

    client = httpx.AsyncClient(transport=pool.transport(), timeout=7.5, event_hooks={"request": [record]})
    try:
        response = await client.get(server.url + "/t")
        assert response.status_code == 200
        assert response.request.extensions["timeout"] == httpx.Timeout(7.5).as_dict()
        assert seen == [httpx.Timeout(7.5).as_dict()]
    finally:
        await client.aclose()
        await pool.aclose()
