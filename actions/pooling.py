"""``Pool``: one connection pool that the Actions clients of many credentials send through.

A controller keeps an Actions client per scale set's credentials (``controller.executor.actionsclients``), and
each ``httpx.AsyncClient`` built on its own keeps its own pool, i.e. its own idle keep-alive connection
to the same service: about 20 KB of objects and buffers per scale set. The clients of many credentials
with the same TLS and proxy settings can send through one pool instead. ``Pool`` owns an
``httpx.AsyncClient`` built exactly as a client's own would be (its trust store, its proxy transport, or
the proxy from the environment), and ``Pool.transport()`` is what each client is given as its
transport: a request goes out on the pool's connections, and everything else stays each client's own
(headers, cookies, redirects, timeouts, rate limit, credentials).

Rules: closing a client does not close the pool (``transport().aclose`` does nothing); whoever built
the pool closes it, after the clients that send through it. The pool follows no redirects and keeps no
cookies of its own (a client does both for itself), so nothing one client receives reaches another.
"""

from __future__ import annotations

import http.cookiejar
import ssl

import httpx


class _RefuseAll(http.cookiejar.DefaultCookiePolicy):
    """Accepts no cookie: the pool's own jar stays empty (each client keeps the cookies it receives)."""

    def set_ok(self, cookie: http.cookiejar.Cookie, request: object) -> bool:
        return False


class Pool:
    def __init__(self, *, verify: ssl.SSLContext, transport: httpx.AsyncBaseTransport | None = None) -> None:
        self._client = httpx.AsyncClient(
            transport=transport,
            verify=verify,
            follow_redirects=False,
            cookies=http.cookiejar.CookieJar(policy=_RefuseAll()),
        )
        self._transport = _Through(self._client)

    def transport(self) -> httpx.AsyncBaseTransport:
        """The transport a client sends through this pool with."""
        return self._transport

    async def aclose(self) -> None:
        await self._client.aclose()


class _Through(httpx.AsyncBaseTransport):
    def __init__(self, client: httpx.AsyncClient) -> None:
        self._client = client

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        # The request keeps its own timeout (an extension the sending client set), and its body is not
        # read here: the pool's client sends it as it is, on one of the pool's connections.
        return await self._client.send(request, stream=True)

    async def aclose(self) -> None:
        """Nothing: the pool outlives the clients sending through it."""
