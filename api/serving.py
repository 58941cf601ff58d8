"""Serving an app with uvicorn inside a running event loop (``arcsm run --http``, ``arcsm demo``, tests).

    server = await ApiServer.start(app, host="127.0.0.1", port=0)   # port 0: a free one
    server.url            # "http://127.0.0.1:41234"
    await server.stop()   # ends the event streams, then stops uvicorn

or ``async with serving(app, host=..., port=...) as server: ...``.

The socket is bound here, before uvicorn starts, so an address in use is an ``OSError`` naming it
rather than uvicorn exiting the process. uvicorn's own signal handling is switched off: the process that
embeds the server (the controller) owns SIGTERM and SIGINT and stops the server itself.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import AsyncIterator, Generator

import uvicorn
from fastapi import FastAPI

GRACE = 5  # seconds requests in flight get to finish when the server stops


class _EmbeddedServer(uvicorn.Server):
    @contextlib.contextmanager
    def capture_signals(self) -> Generator[None, None, None]:
        yield  # the embedding process handles signals


async def _run(server: _EmbeddedServer, sock: socket.socket) -> None:
    """What ``uvicorn.Server.serve`` does after its startup: serve until told to exit, then shut down."""
    await server.main_loop()
    await server.shutdown(sockets=[sock])


class ApiServer:
    def __init__(self, app: FastAPI, server: _EmbeddedServer, task: asyncio.Task[None], url: str) -> None:
        self.app = app
        self.url = url
        self._server = server
        self._task = task

    @classmethod
    async def start(cls, app: FastAPI, *, host: str, port: int) -> ApiServer:
        """Listen on ``host:port`` and serve ``app`` until ``stop``; returns once requests are answered.

        Raises ``OSError`` when the address cannot be bound, ``RuntimeError`` when the app fails to start.
        """
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        try:
            sock = socket.create_server((host, port), family=family)
        except OSError as exc:
            raise OSError(exc.errno, f"cannot listen on {host}:{port}: {exc.strerror}") from exc
        # Accepted sockets inherit this. asyncio sets TCP_NODELAY only on sockets created with
        # IPPROTO_TCP, and uvicorn writes a response's head and body apart: without it every answer
        # waits for the client's delayed ACK (about 40 ms).
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        config = uvicorn.Config(
            app, log_config=None, access_log=False, lifespan="on", timeout_graceful_shutdown=GRACE
        )
        server = _EmbeddedServer(config)
        config.load()
        server.lifespan = config.lifespan_class(config)
        try:
            await server.startup(sockets=[sock])  # the app's lifespan startup, then listening
        except SystemExit:  # uvicorn's way of saying the lifespan startup failed
            sock.close()
            raise RuntimeError("the HTTP API did not start: its startup failed (see the log)") from None
        task = asyncio.create_task(_run(server, sock), name="http api")
        bound_host, bound_port = sock.getsockname()[:2]
        shown = f"[{bound_host}]" if ":" in bound_host else bound_host
        return cls(app, server, task, f"http://{shown}:{bound_port}")

    async def stop(self) -> None:
        """End the event streams, finish the requests in flight (``GRACE`` at most) and stop."""
        self.app.state.api.streams.close()
        self._server.should_exit = True
        await self._task


@contextlib.asynccontextmanager
async def serving(app: FastAPI, *, host: str, port: int) -> AsyncIterator[ApiServer]:
    server = await ApiServer.start(app, host=host, port=port)
    try:
        yield server
    finally:
        await server.stop()
