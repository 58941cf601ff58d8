"""The forward proxy of the fake Azure: ``CONNECT host:443`` to Microsoft Entra's or a vault's public
name is tunnelled to the fake's HTTPS port (no DNS here knows those names; a cluster's egress proxy
resolves them the same way for its clients). Any other host is refused 403, a request that is not a
CONNECT 405.

With ``credentials`` (user, password) a CONNECT without the matching ``Proxy-Authorization: Basic`` is
answered 407, as an authenticating proxy does. ``tunnelled`` records each host a tunnel was opened to.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

from sim.keyvault.server import DNS_NAMES, Served

READ_LIMIT = 64 * 1024


@dataclass
class Tunnel:
    azure: Served
    credentials: tuple[str, str] | None = None
    tunnelled: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)
    port: int = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def serves(self, host: str) -> bool:
        return any(host == name or (name.startswith("*.") and host.endswith(name[1:])) for name in DNS_NAMES)

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError):
            writer.close()
            return
        lines = head.decode("latin-1").split("\r\n")
        method, _, target = lines[0].partition(" ")
        target = target.rpartition(" ")[0]
        headers = {
            k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:] if line)
        }
        host = target.rpartition(":")[0].strip("[]").lower()
        if method != "CONNECT":
            await _answer(writer, "405 Method Not Allowed")
            return
        if self.credentials and not self._authorized(headers.get("proxy-authorization", "")):
            self.refused.append(host)
            await _answer(
                writer, '407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm="proxy"'
            )
            return
        if not self.serves(host):
            self.refused.append(host)
            await _answer(writer, "403 Forbidden")
            return
        try:
            upstream_reader, upstream_writer = await asyncio.open_connection(self.azure.host, self.azure.port)
        except OSError:
            await _answer(writer, "502 Bad Gateway")
            return
        self.tunnelled.append(host)
        writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
        await writer.drain()
        await asyncio.gather(_pipe(reader, upstream_writer), _pipe(upstream_reader, writer))

    def _authorized(self, header: str) -> bool:
        assert self.credentials is not None
        scheme, _, value = header.partition(" ")
        if scheme.lower() != "basic":
            return False
        try:
            user, _, password = base64.b64decode(value).decode("utf-8").partition(":")
        except ValueError:
            return False
        return (user, password) == self.credentials


async def _answer(writer: asyncio.StreamWriter, status: str) -> None:
    writer.write(f"HTTP/1.1 {status}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".encode())
    with contextlib.suppress(ConnectionError):
        await writer.drain()
    writer.close()


async def _pipe(source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
    try:
        while chunk := await source.read(READ_LIMIT):
            sink.write(chunk)
            await sink.drain()
    except (ConnectionError, asyncio.CancelledError):
        pass
    finally:
        with contextlib.suppress(Exception):
            sink.close()


@contextlib.asynccontextmanager
async def serving(azure: Served, credentials: tuple[str, str] | None = None) -> AsyncIterator[Tunnel]:
    """The proxy to ``azure`` on a free loopback port until the block ends."""
    tunnel = Tunnel(azure, credentials)
    server = await asyncio.start_server(tunnel.handle, "127.0.0.1", 0)
    tunnel.port = server.sockets[0].getsockname()[1]
    try:
        yield tunnel
    finally:
        server.close()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(server.wait_closed(), 5)
