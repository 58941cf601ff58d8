"""The ``ApiClient`` every process of arcsm opens to reach an API server: ``api_client(configuration)``.

kubernetes_asyncio opens its aiohttp session with ``trust_env=True``, so aiohttp reads the proxy
variables and ``~/.netrc`` again for every request, on the loop's thread pool: one thread hand-off per
request, about a tenth of the emulated world's CPU with 300 listeners in it. Every request of a client goes
to the one server its configuration names, so the proxy is decided once, when the client opens, from the
same variables aiohttp reads (``HTTPS_PROXY`` or ``HTTP_PROXY`` by the server's scheme, ``NO_PROXY``),
unless the configuration names one. ``.netrc`` is not read: an API server is reached with the
kubeconfig's credentials, never a password from that file.
"""

from __future__ import annotations

import urllib.request
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from urllib.parse import urlsplit

import aiohttp
from kubernetes_asyncio import client

# kubernetes_asyncio's own read buffer: a watch event can carry an object of up to etcd's 1.5 MiB.
_READ_BUFSIZE = 2**21


def env_proxy(host: str) -> str | None:
    """The proxy the environment names for the server at URL ``host``, or None (none set, or NO_PROXY)."""
    parts = urlsplit(host)
    if parts.hostname is None or urllib.request.proxy_bypass(parts.hostname):
        return None
    return urllib.request.getproxies_environment().get(parts.scheme)


@asynccontextmanager
async def api_client(configuration: client.Configuration) -> AsyncIterator[client.ApiClient]:
    """An ``ApiClient`` for ``configuration`` whose requests do not read the environment each time."""
    async with client.ApiClient(configuration) as api:
        rest = api.rest_client
        per_request = rest.pool_manager
        rest.pool_manager = aiohttp.ClientSession(
            connector=per_request.connector, trust_env=False, read_bufsize=_READ_BUFSIZE
        )
        per_request.detach()  # the connector (its TLS settings and pool) now belongs to the new session
        if not configuration.proxy:
            rest.proxy = env_proxy(str(configuration.host))
        yield api
