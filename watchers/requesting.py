"""Requests through kubernetes_asyncio with the response left raw (``_preload_content=False``), so objects
are journaled as the JSON the server sent; failures come back as ``watchers.errors``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import aiohttp

from kube import failures
from watchers import errors
from watchers.kinds import ListCall

TRANSPORT_ERRORS = failures.UNANSWERED


async def send(
    call: ListCall, query: Mapping[str, Any], *, timeout: aiohttp.ClientTimeout | float
) -> aiohttp.ClientResponse:
    """Send a list or watch request; return the open response of a 2xx answer, raise for anything else."""
    try:
        resp: aiohttp.ClientResponse = await call(**query, _preload_content=False, _request_timeout=timeout)
    except TRANSPORT_ERRORS as exc:
        raise errors.TransportError(f"request failed: {exc!r}") from exc
    if 200 <= resp.status < 300:
        return resp
    try:
        body = await read(resp)
    finally:
        resp.release()
    raise errors.from_response(resp.status, body, resp.headers)


async def read(resp: aiohttp.ClientResponse) -> bytes:
    try:
        return await resp.read()
    except TRANSPORT_ERRORS as exc:
        raise errors.TransportError(f"reading the answer failed: {exc!r}") from exc
