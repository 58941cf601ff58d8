"""How much of the process the HTTP API may hold, in a module of its own so that ``arcsm run`` checks its
flags without importing the HTTP server (``api.serving`` brings uvicorn and FastAPI).

* ``max_connections``: connections open at once, so a flood of clients holds no more descriptors than
  this; one more takes the place of the connection longest waiting for a request, or is answered 503
  and closed when every one is answering (``api.connections``).
* ``header_timeout``: seconds a client has to send a whole request head, from connecting or from the end
  of its previous response; a client that sends nothing, or dribbles its headers, is closed then.
* ``idle_timeout``: seconds a kept-alive connection waits for its next request (uvicorn's keep-alive).
* ``max_streams``: journal event streams (``/api/v1/journal/stream``) open at once; one past it is
  answered 503. A stream holds its connection as long as the client reads, so this bounds them apart.
* ``write_timeout``: seconds a write to a client may stay blocked (the client stopped reading and its
  receive window filled) before the connection is dropped; so a stream reader that stops reading gives
  its stream and its connection back, as does any client that stops reading its answer.

The process's descriptor limit bounds ``max_connections`` too: ``api.serving`` keeps ``RESERVED``
descriptors for the controller itself (its Kubernetes client's pool alone may hold 100 connections) and
``api.connections.REFUSING`` for the refusals past the bound.
"""

from __future__ import annotations

from dataclasses import dataclass

# Descriptors the HTTP API leaves to the rest of the process: the Kubernetes client's connection pool
# (kubernetes_asyncio's default, 100, which the watches share), the journal's files, the Actions clients.
RESERVED = 128


@dataclass(frozen=True)
class HttpLimits:
    max_connections: int = 128
    header_timeout: float = 10.0
    idle_timeout: float = 5.0
    max_streams: int = 32
    write_timeout: float = 30.0

    def __post_init__(self) -> None:
        if self.max_connections < 1 or self.max_streams < 1:
            raise ValueError(
                f"the HTTP API needs at least 1 connection and 1 stream, got {self.max_connections} "
                f"and {self.max_streams}"
            )
        if min(self.header_timeout, self.idle_timeout, self.write_timeout) <= 0:
            raise ValueError(
                f"the HTTP timeouts must be positive, got {self.header_timeout}, {self.idle_timeout} "
                f"and {self.write_timeout}"
            )
