"""Connections to the HTTP API within bounds: accepting them, refusing those past the bound, and closing
those that send no request.

The HTTP API runs in the controller's event loop and process: its connections share the descriptor table
with the controller's Kubernetes client, and its accept loop shares the loop with the reconciles. So:

* ``Acceptor`` is the accept loop (in place of asyncio's ``Server``, which uvicorn would start): one
  ``sock_accept`` at a time. With ``max_connections`` open, a new one takes the place of the one that
  has waited longest for a request head (a kept-alive connection between requests, or a client that
  sends nothing): so idle and silent clients cannot keep a probe out. When every one is answering a
  request (a stream, a slow answer), the new one is answered 503 with a one-line JSON body and closed
  (``Refusal``); past ``REFUSING`` refusals under way as well, it waits for one to end before it
  accepts again. When ``accept`` fails (the process or the system out of descriptors or memory, say),
  it waits ``RETRY`` seconds and tries again, never giving up, logging the failure once a window with
  a count (``api.summarising``): asyncio's own loop would log a traceback for every pending
  connection on every try (up to its backlog, 2048 in uvicorn's default, at each event-loop tick).
* ``TimedH11Protocol`` is uvicorn's h11 protocol plus a header timeout: a connection must send a whole
  request head within ``header_timeout`` seconds of connecting, or of the end of its previous response,
  or it is closed. uvicorn has no such timeout (its keep-alive timer stops at the first byte received,
  so a client dribbling a header never times out), h11 is sans-I/O and keeps no time, and httptools is
  a parser only; one timer on the protocol is the smallest change that closes the hole. It has a
  write timeout too: once a write has stayed blocked ``write_timeout`` seconds (the transport's buffer
  full because the client stopped reading), the connection is aborted, its unsent answer dropped. Without
  it a journal stream to a reader that stops reading would hold its stream and connection for good:
  uvicorn waits for the transport to drain with no bound, and closing it would wait for the same drain.
"""

from __future__ import annotations

import asyncio
import errno
import json
import logging
import socket
from collections.abc import Callable, Collection
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

log = logging.getLogger("arcsm.api.http")

RETRY = 0.5  # seconds between tries to accept while descriptors (or memory) are exhausted
LINGER = 1.0  # seconds a refused connection may take to close after its answer
REFUSING = 32  # refusals under way at most (each holds a descriptor up to LINGER seconds)
OUT_OF_RESOURCES = frozenset({errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM})
# The connection went away between the kernel accepting it and us: nothing to do.
GONE = frozenset({errno.ECONNABORTED, errno.EPROTO, errno.EPERM})


def unavailable(detail: str) -> bytes:
    """A whole HTTP/1.1 503 response with ``{"detail": ...}`` as the API's other errors have it."""
    return closing_answer("503 Service Unavailable", detail, "retry-after: 1\r\n")


def closing_answer(status: str, detail: str, extra: str = "") -> bytes:
    """A whole HTTP/1.1 response of ``status`` (code and phrase) with ``{"detail": ...}``, closing."""
    body = json.dumps({"detail": detail}).encode()
    head = (
        f"HTTP/1.1 {status}\r\n"
        "content-type: application/json\r\n"
        f"content-length: {len(body)}\r\n"
        f"{extra}"
        "connection: close\r\n\r\n"
    )
    return head.encode() + body


# A request head may hold this much before it is refused (h11's own bound, which would answer 400).
HEAD_LIMIT = 16 * 1024
# How long a refused oversized request may go on being sent (and dropped) before the connection closes.
OVERSIZED_LINGER = 30.0
URL_TOO_LONG = closing_answer(
    "414 URI Too Long",
    f"the request line is longer than the HTTP API reads ({HEAD_LIMIT // 1024} KiB): shorten the URL, "
    "or ask for less in its query",
)
HEADERS_TOO_LARGE = closing_answer(
    "431 Request Header Fields Too Large",
    f"the request headers are larger than the HTTP API reads ({HEAD_LIMIT // 1024} KiB together): "
    "send fewer or smaller header fields",
)


class Refusal(asyncio.Protocol):
    """Answers 503 at once, then reads and drops what the client sends until it closes (at most
    ``LINGER`` seconds): closing with its request unread would reset the connection and lose the answer."""

    def __init__(self, answer: bytes, refusing: set[Refusal], freed: asyncio.Event) -> None:
        self._answer = answer
        self._refusing = refusing
        self._freed = freed
        self._timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self._refusing.add(self)
        transport.write(self._answer)
        if transport.can_write_eof():
            transport.write_eof()
        self._timer = asyncio.get_running_loop().call_later(LINGER, transport.close)

    def data_received(self, data: bytes) -> None:
        pass

    def eof_received(self) -> bool:
        return False  # the transport closes itself

    def connection_lost(self, exc: Exception | None) -> None:
        self._refusing.discard(self)
        self._freed.set()
        if self._timer is not None:
            self._timer.cancel()


class Acceptor:
    """Accepts on ``sock`` for ``protocol`` while fewer than ``max_connections`` of ``connections`` are
    open; at the bound, in place of the one longest waiting for a request head, or, when every one is
    answering, refuses with ``Refusal``. While ``REFUSING`` refusals are under way too, it accepts
    nothing more until one ends (the kernel's backlog holds the clients meanwhile, with no
    descriptor of this process). ``close`` and ``wait_closed`` stand in for ``asyncio.Server``'s in
    uvicorn's shutdown."""

    def __init__(
        self,
        sock: socket.socket,
        protocol: Callable[[], asyncio.Protocol],
        *,
        connections: Collection[Any],
        max_connections: int,
    ) -> None:
        self._sock = sock
        self._protocol = protocol
        self._connections = connections
        self._max = max_connections
        self._refusing: set[Refusal] = set()
        self._freed = asyncio.Event()
        self._answer = unavailable(
            f"the HTTP API has {max_connections} connections open, its bound: retry later, or raise "
            "--http-max-connections"
        )
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._sock.setblocking(False)
        self._task = asyncio.create_task(self._accept(), name="http accept")

    def close(self) -> None:
        if self._task is not None:
            self._task.cancel()

    async def wait_closed(self) -> None:
        if self._task is not None:
            await asyncio.gather(self._task, return_exceptions=True)

    async def _accept(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            while len(self._refusing) >= REFUSING and len(self._connections) >= self._max:
                self._freed.clear()
                await self._freed.wait()
            try:
                conn, _ = await loop.sock_accept(self._sock)
            except OSError as exc:
                if exc.errno in GONE:
                    continue
                advice = (
                    "lower --http-max-connections or raise the descriptor limit"
                    if exc.errno in OUT_OF_RESOURCES
                    else "see the error"
                )
                log.error(
                    "the HTTP API cannot accept a connection: %s; it tries again every %.1f s, the "
                    "controller keeps running (%s)",
                    exc.strerror or exc,
                    RETRY,
                    advice,
                )
                await asyncio.sleep(RETRY)
                continue
            try:
                await loop.connect_accepted_socket(self._protocol_for_one_more, conn)
            except OSError:
                conn.close()

    def _protocol_for_one_more(self) -> asyncio.Protocol:
        if len(self._connections) < self._max or self._evict_the_longest_waiting():
            return self._protocol()
        log.warning("the HTTP API refused a connection: %d open, its bound, all answering", self._max)
        return Refusal(self._answer, self._refusing, self._freed)

    def _evict_the_longest_waiting(self) -> bool:
        """Close the connection that has waited longest for a request head, if one does: a client that
        sends nothing holds its place only until someone needs it."""
        waiting = [
            (since, c)
            for c in self._connections
            if isinstance(c, TimedH11Protocol) and (since := c.waiting_since) is not None
        ]
        if not waiting:
            return False
        _, longest = min(waiting, key=lambda pair: pair[0])
        longest.evict()
        log.info("the HTTP API closed its longest idle connection for a new one (%d open)", self._max)
        return True


class TimedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol whose connections must send a request head within ``header_timeout``, and
    are dropped when a write stays blocked ``write_timeout`` seconds; ``waiting_since`` says since when
    one has waited for a head (None while it is answering)."""

    def __init__(self, *args: Any, header_timeout: float, write_timeout: float, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._header_timeout = header_timeout
        self._header_timer: asyncio.TimerHandle | None = None
        self._write_timeout = write_timeout
        self._write_timer: asyncio.TimerHandle | None = None
        self._waiting_cycle: object = None
        self._waiting_at = 0.0
        self._closing = False
        self._dropping: asyncio.TimerHandle | None = None  # set once an oversized head was refused

    @property
    def waiting_since(self) -> float | None:
        """The loop time it started waiting for a request head, or None while it answers one."""
        cycle = self.cycle
        if self._closing or cycle is not self._waiting_cycle:
            return None  # closing, or a request head came since
        if cycle is not None and not cycle.response_complete:
            return None
        return self._waiting_at

    def evict(self) -> None:
        self._closing = True
        self._stop_waiting()
        self.transport.close()

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._await_head()

    def connection_lost(self, exc: Exception | None) -> None:
        self._closing = True
        self._stop_waiting()
        self._write_unblocked()
        if self._dropping is not None:
            self._dropping.cancel()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        """h11's, unless the request head grows past ``HEAD_LIMIT`` unfinished: then it is answered 414
        (the request line is not over yet) or 431 (the headers are not), and what the client still sends
        is read and dropped (closing with it unread would reset the connection and lose the answer)."""
        if self._dropping is not None:
            return
        if self.conn.their_state is h11.IDLE:
            pending, _ = self.conn.trailing_data
            head = pending + data
            if len(head) > HEAD_LIMIT and b"\r\n\r\n" not in head:
                self._refuse_oversized(
                    URL_TOO_LONG if b"\r\n" not in head.lstrip(b"\r\n") else HEADERS_TOO_LARGE
                )
                return
        super().data_received(data)

    def _refuse_oversized(self, answer: bytes) -> None:
        self._closing = True
        self._stop_waiting()
        self.transport.write(answer)
        if self.transport.can_write_eof():
            self.transport.write_eof()
        self._dropping = self.loop.call_later(OVERSIZED_LINGER, self.transport.close)
        log.info("the HTTP API refused a request: %s", answer.split(b"\r\n", 1)[0].decode()[9:])

    def pause_writing(self) -> None:
        """The transport's buffer is full: the client has this long to read before it is dropped."""
        super().pause_writing()
        if self._write_timer is None and not self._closing:
            self._write_timer = self.loop.call_later(self._write_timeout, self._write_late)

    def resume_writing(self) -> None:
        super().resume_writing()
        self._write_unblocked()

    def _write_unblocked(self) -> None:
        if self._write_timer is not None:
            self._write_timer.cancel()
            self._write_timer = None

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing():
            self._await_head()

    def _await_head(self) -> None:
        self._stop_waiting()
        self._waiting_cycle, self._waiting_at = self.cycle, self.loop.time()
        self._header_timer = self.loop.call_later(self._header_timeout, self._head_late)

    def _stop_waiting(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None

    def _head_late(self) -> None:
        """The timer: unless a request head came since it started, close the connection."""
        self._header_timer = None
        if self.waiting_since is None or self.transport.is_closing():
            return
        log.info(
            "the HTTP API closed a connection that sent no whole request head in %.0f s", self._header_timeout
        )
        self.evict()

    def _write_late(self) -> None:
        """The timer: a write has stayed blocked ``write_timeout`` seconds; drop the connection (abort:
        a close would wait for the client to read what is buffered)."""
        self._write_timer = None
        if self._closing:
            return
        log.warning(
            "the HTTP API dropped a client that stopped reading its answer (a write blocked for %g s: a "
            "journal stream reader gone quiet, say); raise --http-write-timeout if clients are that slow",
            self._write_timeout,
        )
        self._closing = True
        self._stop_waiting()
        self.transport.abort()
