"""Serving an app with uvicorn inside a running event loop (``arcsm run --http``, ``arcsm demo``, tests).

    server = await ApiServer.start(app, host="127.0.0.1", port=0)   # port 0: a free one
    server.url            # "http://127.0.0.1:41234"
    await server.stop()   # ends the event streams, then stops uvicorn

or ``async with serving(app, host=..., port=...) as server: ...``.

The socket is bound here, before uvicorn starts, so an address in use is an ``OSError`` naming it
rather than uvicorn exiting the process. uvicorn's own signal handling is switched off: the process that
embeds the server (the controller) owns SIGTERM and SIGINT and stops the server itself.

The server keeps to ``limits`` (``api.limits.HttpLimits``): its own accept loop bounds the connections
open (one more takes the place of the longest idle, or is answered 503 when all are answering), a
connection that sends no request head in time is closed, a kept-alive one idle too long too, and one
whose client stops reading (a write blocked too long) is dropped, giving back its journal stream
(``api.connections``). Fewer connections than asked are kept when the process's descriptor limit
leaves less than ``limits.RESERVED`` descriptors to the rest of the process (a warning says so at
start), so a flood of clients cannot take the descriptors the controller's own
Kubernetes client needs. Repeated errors of uvicorn, of the accept loop and of asyncio's transports are
logged once a minute with a count (``api.summarising``) while the server runs.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import resource
import socket
from collections.abc import AsyncIterator, Generator

import uvicorn
from fastapi import FastAPI

from api import connections
from api.limits import RESERVED, HttpLimits
from api.summarising import Summarising

log = logging.getLogger("arcsm.api")

DEFAULT_LIMITS = HttpLimits()
GRACE = 5  # seconds requests in flight get to finish when the server stops
# Where uvicorn, the accept loop and asyncio's transports (``socket.send() raised exception.`` for each
# write to a client gone) log what a client can make them repeat.
REPEATING = ("uvicorn.error", connections.log.name, "asyncio")


class _EmbeddedServer(uvicorn.Server):
    def __init__(self, config: uvicorn.Config, *, sock: socket.socket, limits: HttpLimits) -> None:
        super().__init__(config)
        self._sock = sock
        self._limits = limits

    @contextlib.contextmanager
    def capture_signals(self) -> Generator[None, None, None]:
        yield  # the embedding process handles signals

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        """uvicorn's startup with the bounded accept loop and the header timeout in place of asyncio's
        server and uvicorn's protocol."""
        await self.lifespan.startup()
        if self.lifespan.should_exit:
            raise SystemExit(3)  # as uvicorn says its startup failed

        def protocol() -> asyncio.Protocol:
            return connections.TimedH11Protocol(
                config=self.config,
                server_state=self.server_state,
                app_state=self.lifespan.state,
                header_timeout=self._limits.header_timeout,
                write_timeout=self._limits.write_timeout,
            )

        acceptor = connections.Acceptor(
            self._sock,
            protocol,
            connections=self.server_state.connections,
            max_connections=connection_budget(self._limits.max_connections),
        )
        acceptor.start()
        self.servers = [acceptor]  # type: ignore[list-item]  # what shutdown uses of a server
        self.started = True


def connection_budget(wanted: int) -> int:
    """``wanted``, or fewer when the descriptor limit leaves less than ``RESERVED`` to the process (and
    ``connections.REFUSING`` to the refusals past the bound)."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return wanted
    room = soft - len(os.listdir("/dev/fd")) - RESERVED - connections.REFUSING
    if room >= wanted:
        return wanted
    kept = max(room, 1)
    log.warning(
        "the HTTP API keeps at most %d connections, not %d: the descriptor limit is %d and the controller "
        "keeps %d for itself and its refusals (raise the limit, ulimit -n, to allow more)",
        kept,
        wanted,
        soft,
        RESERVED + connections.REFUSING,
    )
    return kept


async def _run(server: _EmbeddedServer, sock: socket.socket) -> None:
    """What ``uvicorn.Server.serve`` does after its startup: serve until told to exit, then shut down."""
    await server.main_loop()
    try:
        await server.shutdown()
    finally:
        sock.close()  # once the accept loop has stopped waiting on it


class ApiServer:
    def __init__(
        self,
        app: FastAPI,
        server: _EmbeddedServer,
        task: asyncio.Task[None],
        url: str,
        summary: Summarising,
    ) -> None:
        self.app = app
        self.url = url
        self._server = server
        self._task = task
        self._summary = summary

    @classmethod
    async def start(
        cls, app: FastAPI, *, host: str, port: int, limits: HttpLimits = DEFAULT_LIMITS
    ) -> ApiServer:
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
            app,
            log_config=None,
            access_log=False,
            lifespan="on",
            ws="none",
            timeout_graceful_shutdown=GRACE,
            timeout_keep_alive=limits.idle_timeout,  # type: ignore[arg-type]  # used as a float
        )
        server = _EmbeddedServer(config, sock=sock, limits=limits)
        config.load()
        server.lifespan = config.lifespan_class(config)
        summary = Summarising()
        for name in REPEATING:
            summary.attach(logging.getLogger(name))
        try:
            await server.startup()  # the app's lifespan startup, then listening
        except SystemExit:  # uvicorn's way of saying the lifespan startup failed
            sock.close()
            summary.close()
            raise RuntimeError("the HTTP API did not start: its startup failed (see the log)") from None
        task = asyncio.create_task(_run(server, sock), name="http api")
        bound_host, bound_port = sock.getsockname()[:2]
        shown = f"[{bound_host}]" if ":" in bound_host else bound_host
        return cls(app, server, task, f"http://{shown}:{bound_port}", summary)

    async def stop(self) -> None:
        """End the event streams, finish the requests in flight (``GRACE`` at most) and stop."""
        self.app.state.api.streams.close()
        self._server.should_exit = True
        try:
            await self._task
        finally:
            self._summary.close()


@contextlib.asynccontextmanager
async def serving(
    app: FastAPI, *, host: str, port: int, limits: HttpLimits = DEFAULT_LIMITS
) -> AsyncIterator[ApiServer]:
    server = await ApiServer.start(app, host=host, port=port, limits=limits)
    try:
        yield server
    finally:
        await server.stop()
