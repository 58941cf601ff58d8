"""The HTTP server's bounds on loopback: a kept-alive connection idle too long is closed, so is one that
starts its next request head and never ends it (uvicorn's own keep-alive timer stops at the first byte);
at the connection bound a new connection takes the place of the longest silent one, and is answered 503
with a one-line JSON body when every connection is answering; an accept loop out of descriptors logs
once, retries without spinning, and serves again once descriptors are free.

Real uvicorn through ``api.serving`` on 127.0.0.1 over a real journal file; raw sockets as clients.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import json
import logging
import os
import re
import resource
import socket
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from api.app import create_app
from api.limits import HttpLimits
from api.serving import ApiServer
from store import records
from store.journal import Journal
from store.settings import JournalSettings
from tests.helpers import eventually

LIMITS = HttpLimits(max_connections=4, header_timeout=0.5, idle_timeout=0.5)
HEALTHZ = b"GET /healthz HTTP/1.1\r\nHost: arcsm\r\n\r\n"
DEADLINE = 10.0


@pytest.fixture
async def server(tmp_path: Path) -> AsyncIterator[ApiServer]:
    journal = await Journal.open(tmp_path / "journal.db")
    started = await ApiServer.start(create_app(journal), host="127.0.0.1", port=0, limits=LIMITS)
    try:
        yield started
    finally:
        await started.stop()
        await journal.close()


async def connect(server: ApiServer) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    host, port = server.url.removeprefix("http://").rsplit(":", 1)
    return await asyncio.open_connection(host, int(port))


async def answer(reader: asyncio.StreamReader) -> bytes:
    head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), timeout=DEADLINE)
    fields = dict(line.split(b": ", 1) for line in head.split(b"\r\n")[1:] if b": " in line)
    length = int(fields[b"content-length"])
    return head + await asyncio.wait_for(reader.readexactly(length), timeout=DEADLINE)


async def closed(reader: asyncio.StreamReader) -> bool:
    """True once the server closed the connection without sending anything more."""
    return await asyncio.wait_for(reader.read(1), timeout=DEADLINE) == b""


async def test_a_kept_alive_connection_idle_past_the_idle_timeout_is_closed(server: ApiServer) -> None:
    reader, writer = await connect(server)
    try:
        writer.write(HEALTHZ)
        assert (await answer(reader)).startswith(b"HTTP/1.1 200")
        assert await closed(reader)
    finally:
        writer.close()


async def test_a_next_request_head_that_never_ends_is_closed_after_the_header_timeout(
    server: ApiServer,
) -> None:
    reader, writer = await connect(server)
    try:
        writer.write(HEALTHZ)
        assert (await answer(reader)).startswith(b"HTTP/1.1 200")
        writer.write(b"GET /healthz HTTP/1.1\r\nHost: ar")  # stops uvicorn's keep-alive timer
        assert await closed(reader)
    finally:
        writer.close()


async def test_at_the_bound_a_new_connection_takes_the_place_of_the_longest_silent_one(
    server: ApiServer,
) -> None:
    silent = [await connect(server) for _ in range(LIMITS.max_connections)]
    try:
        reader, writer = await connect(server)
        writer.write(HEALTHZ)
        assert (await answer(reader)).startswith(b"HTTP/1.1 200")
        writer.close()
        assert await closed(silent[0][0])  # the longest silent, unanswered
    finally:
        for _, silent_writer in silent:
            silent_writer.close()


async def test_at_the_bound_with_every_connection_answering_a_new_one_is_answered_503(
    server: ApiServer,
) -> None:
    async with contextlib.AsyncExitStack() as streams:
        for _ in range(LIMITS.max_connections):
            reader, writer = await connect(server)
            streams.callback(writer.close)
            writer.write(b"GET /api/v1/journal/stream HTTP/1.1\r\nHost: arcsm\r\n\r\n")
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), timeout=DEADLINE)
            assert head.startswith(b"HTTP/1.1 200")
        reader, writer = await connect(server)
        streams.callback(writer.close)
        writer.write(HEALTHZ)
        refused = await answer(reader)
        assert refused.startswith(b"HTTP/1.1 503")
        detail = json.loads(refused.split(b"\r\n\r\n", 1)[1])["detail"]
        assert f"{LIMITS.max_connections} connections open" in detail and "\n" not in detail
        assert await closed(reader)


@contextlib.contextmanager
def descriptors_exhausted() -> Iterator[None]:
    """Every descriptor this process may open is taken (the soft limit lowered near the ones open), until
    the block ends."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (len(os.listdir("/proc/self/fd")) + 8, hard))
    taken: list[int] = []
    try:
        with contextlib.suppress(OSError):
            while True:
                taken.append(os.open(os.devnull, os.O_RDONLY))
        yield
    finally:
        for fd in taken:
            os.close(fd)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


async def test_out_of_descriptors_the_accept_loop_logs_once_and_serves_again(
    server: ApiServer, caplog: pytest.LogCaptureFixture
) -> None:
    loop = asyncio.get_running_loop()
    host, port = server.url.removeprefix("http://").rsplit(":", 1)
    clients = [socket.socket() for _ in range(3)]  # made before the descriptors run out
    for sock in clients:
        sock.setblocking(False)

    def failures() -> list[logging.LogRecord]:
        return [r for r in caplog.records if "cannot accept a connection" in r.getMessage()]

    try:
        with caplog.at_level(logging.INFO, logger="arcsm.api"), descriptors_exhausted():
            for sock in clients:
                with contextlib.suppress(BlockingIOError):
                    sock.connect((host, int(port)))
            await eventually(failures, timeout=DEADLINE, what="the accept loop out of descriptors")
        assert [r.levelname for r in failures()] == ["ERROR"]
        assert os.strerror(errno.EMFILE) in failures()[0].getMessage()
        for sock in clients:
            await loop.sock_sendall(sock, HEALTHZ)
            head = await asyncio.wait_for(loop.sock_recv(sock, 4096), timeout=DEADLINE)
            assert head.startswith(b"HTTP/1.1 200"), head
    finally:
        for sock in clients:
            sock.close()


async def test_while_it_serves_a_repeated_transport_warning_is_one_line_then_a_count(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    asyncio_log = logging.getLogger("asyncio")
    with caplog.at_level(logging.WARNING, logger="asyncio"):
        journal = await Journal.open(tmp_path / "journal.db")
        started = await ApiServer.start(create_app(journal), host="127.0.0.1", port=0, limits=LIMITS)
        for _ in range(100):
            asyncio_log.warning("socket.send() raised exception.")  # asyncio's line for a client gone
        await started.stop()
        await journal.close()
        asyncio_log.warning("socket.send() raised exception.")  # stopped: no longer summarised
    lines = [r.getMessage() for r in caplog.records if r.name == "asyncio"]
    assert len(lines) == 3 and lines[0] == lines[2] == "socket.send() raised exception."
    assert re.fullmatch(r"99 more like this in the last \d+ s: socket\.send\(\) raised exception\.", lines[1])


async def stalled_stream(server: ApiServer) -> socket.socket:
    """A client that asks for the journal stream with a tiny receive buffer and then never reads."""
    host, port = server.url.removeprefix("http://").rsplit(":", 1)
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # before connecting: the window it offers
    sock.setblocking(False)
    loop = asyncio.get_running_loop()
    await loop.sock_connect(sock, (host, int(port)))
    await loop.sock_sendall(sock, b"GET /api/v1/journal/stream HTTP/1.1\r\nHost: arcsm\r\n\r\n")
    return sock


async def test_a_stream_reader_that_stops_reading_is_dropped_after_the_write_timeout(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    limits = HttpLimits(max_streams=2, write_timeout=0.5)
    journal = await Journal.open(tmp_path / "journal.db", settings=JournalSettings(durable=False))
    app = create_app(journal, max_streams=limits.max_streams)
    streams = app.state.api.streams
    pad = "y" * 32_768

    async def grown_until_both_dropped() -> bool:
        await journal.append(
            [
                records.observed(
                    "ADDED", "Pod", {"metadata": {"name": f"p-{i}", "namespace": "arc"}, "pad": pad}
                )
                for i in range(journal.last_seq, journal.last_seq + 16)
            ]
        )
        return streams.open == 0

    with caplog.at_level(logging.INFO, logger="arcsm.api"):
        server = await ApiServer.start(app, host="127.0.0.1", port=0, limits=limits)
        stalled = [await stalled_stream(server) for _ in range(limits.max_streams)]
        try:
            await eventually(lambda: streams.open == 2, timeout=DEADLINE, what="both streams admitted")
            reader, writer = await connect(server)
            writer.write(b"GET /api/v1/journal/stream HTTP/1.1\r\nHost: arcsm\r\n\r\n")
            assert (await answer(reader)).startswith(b"HTTP/1.1 503")  # the stalled readers hold the slots
            writer.close()
            await eventually(
                grown_until_both_dropped, timeout=3 * DEADLINE, what="the stalled readers dropped"
            )
            reader, writer = await connect(server)
            writer.write(b"GET /api/v1/journal/stream HTTP/1.1\r\nHost: arcsm\r\n\r\n")
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), timeout=DEADLINE)
            assert head.startswith(b"HTTP/1.1 200")  # a new reader gets in
            await asyncio.wait_for(reader.readuntil(b"event: record"), timeout=DEADLINE)
            writer.close()
        finally:
            for sock in stalled:
                sock.close()
            await server.stop()
            await journal.close()
    dropped = [r for r in caplog.records if "dropped a client" in r.getMessage()]
    assert len(dropped) == 2, [r.getMessage() for r in dropped]  # the first, then the count at stop
    assert dropped[0].levelname == "WARNING" and "a write blocked for 0.5 s" in dropped[0].getMessage()
    assert re.match(
        r"1 more like this in the last \d+ s: the HTTP API dropped a client", dropped[1].getMessage()
    )


async def send_whole(server: ApiServer, request: bytes) -> bytes:
    """Send ``request`` to the end (as a client does before it reads), then read the answer."""
    reader, writer = await connect(server)
    try:
        writer.write(request)
        await asyncio.wait_for(writer.drain(), timeout=DEADLINE)
        return await answer(reader)
    finally:
        writer.close()


async def test_a_request_line_too_long_is_answered_414_not_reset(server: ApiServer) -> None:
    refused = await send_whole(
        server, b"GET /api/v1/journal?x=" + b"a" * (1 << 20) + b" HTTP/1.1\r\nHost: a\r\n\r\n"
    )
    assert refused.startswith(b"HTTP/1.1 414 "), refused[:200]
    detail = json.loads(refused.split(b"\r\n\r\n", 1)[1])["detail"]
    assert "URL" in detail and "\n" not in detail and "aaaa" not in detail


async def test_request_headers_too_large_are_answered_431_not_reset(server: ApiServer) -> None:
    big = b"X-Big: " + b"b" * (200 << 10) + b"\r\n"
    refused = await send_whole(server, b"GET /healthz HTTP/1.1\r\nHost: a\r\n" + big + b"\r\n")
    assert refused.startswith(b"HTTP/1.1 431 "), refused[:200]
    detail = json.loads(refused.split(b"\r\n\r\n", 1)[1])["detail"]
    assert "header" in detail and "\n" not in detail and "bbbb" not in detail
    # The server goes on answering.
    assert (await send_whole(server, HEALTHZ)).startswith(b"HTTP/1.1 200")
