"""``rest_client_requests_total`` for the controller's Kubernetes client, counted as client-go counts it.

client-go counts each request's final answer once, by status code, verb and the host of the server it
was configured with, and ``<error>`` for a request that got no answer (refused, reset, timed out,
cancelled). kubernetes_asyncio sends every request through one aiohttp session per ``ApiClient``; a
trace config on that session sees each one end, so the watchers' lists and watches (counted when the
stream's answer arrives, as client-go does), the executor's reads and writes and the leader election's
Lease requests are all counted, in one place, without the packages that send them knowing.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any, Protocol
from urllib.parse import urlsplit

import aiohttp
from kubernetes_asyncio import client

NO_ANSWER = "<error>"


class Counting(Protocol):
    def count_request(self, code: str, method: str, host: str) -> None: ...


def server_host(api: client.ApiClient) -> str:
    """The ``host`` label: the configured server's host and port as written, as client-go's ``base.Host``."""
    return urlsplit(str(api.configuration.host)).netloc.rpartition("@")[2] or "none"


def count_requests(api: client.ApiClient, metrics: Counting) -> None:
    """Count every request ``api`` sends from now on into ``metrics``."""
    host = server_host(api)

    async def answered(
        session: aiohttp.ClientSession, context: SimpleNamespace, params: aiohttp.TraceRequestEndParams
    ) -> None:
        metrics.count_request(str(params.response.status), params.method.upper(), host)

    async def unanswered(
        session: aiohttp.ClientSession, context: SimpleNamespace, params: aiohttp.TraceRequestExceptionParams
    ) -> None:
        metrics.count_request(NO_ANSWER, params.method.upper(), host)

    trace = aiohttp.TraceConfig()
    trace.on_request_end.append(answered)
    trace.on_request_exception.append(unanswered)
    trace.freeze()
    session: Any = api.rest_client.pool_manager
    session.trace_configs.append(trace)
