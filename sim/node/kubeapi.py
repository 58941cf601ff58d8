"""The kubelet's Kubernetes client: JSON over HTTP(S) with aiohttp, the few verbs a kubelet uses.

A kubelet needs little of the API: create and patch its Node, renew its Lease, list and watch the pods
bound to it, patch ``pods/status``, delete a pod it finished with, read what a pod names (Secrets,
ConfigMaps, claims), record Events and ask for a service-account token. ``KubeApi`` sends exactly those
requests, as JSON, to any API server (kube-apiserver or the emulator), authenticated by a client
certificate or a bearer token.
"""

from __future__ import annotations

import json
import ssl
from collections.abc import AsyncIterator, Mapping
from typing import Any

import aiohttp

MERGE_PATCH = "application/merge-patch+json"
WATCH_TIMEOUT = 300  # seconds a watch stays open before the server ends it and the kubelet re-watches
# A request kube-apiserver does not answer within this fails, and the kubelet tries again later. Without it
# one request to a kube-apiserver killed or stuck starting would hold a pod worker for aiohttp's five
# minutes.
REQUEST_TIMEOUT = aiohttp.ClientTimeout(total=30, sock_connect=10)


class ApiError(Exception):
    """The API server answered with an error status; ``status`` and ``reason`` are its Status's."""

    def __init__(self, method: str, path: str, status: int, body: Mapping[str, Any]) -> None:
        self.status = status
        self.reason = str(body.get("reason") or "")
        message = str(body.get("message") or body)
        super().__init__(f"{method} {path}: {status} {message}")


class KubeApi:
    """JSON requests to one API server. Use as an async context manager, or ``close()`` it."""

    def __init__(
        self, url: str, *, ssl_context: ssl.SSLContext | None = None, token: str | None = None
    ) -> None:
        self.url = url.rstrip("/")
        self._ssl: ssl.SSLContext | bool = ssl_context if ssl_context is not None else False
        headers = {"Accept": "application/json", "User-Agent": "arcsm-kubelet"}
        if token:
            headers["Authorization"] = f"Bearer {token}"
        self._session = aiohttp.ClientSession(headers=headers, timeout=REQUEST_TIMEOUT)

    async def close(self) -> None:
        await self._session.close()

    async def __aenter__(self) -> KubeApi:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def request(
        self,
        method: str,
        path: str,
        *,
        body: Any = None,
        params: Mapping[str, str] | None = None,
        content_type: str = "application/json",
    ) -> dict[str, Any]:
        data = None if body is None else json.dumps(body)
        headers = {"Content-Type": content_type} if data is not None else {}
        async with self._session.request(
            method, self.url + path, data=data, params=params, headers=headers, ssl=self._ssl
        ) as response:
            text = await response.text()
            answer = json.loads(text) if text else {}
            if response.status >= 400:
                raise ApiError(method, path, response.status, answer if isinstance(answer, dict) else {})
            return answer if isinstance(answer, dict) else {}

    async def get(self, path: str, params: Mapping[str, str] | None = None) -> dict[str, Any]:
        return await self.request("GET", path, params=params)

    async def create(self, path: str, body: Mapping[str, Any]) -> dict[str, Any]:
        return await self.request("POST", path, body=body)

    async def patch(self, path: str, patch: Mapping[str, Any]) -> dict[str, Any]:
        return await self.request("PATCH", path, body=patch, content_type=MERGE_PATCH)

    async def replace(self, path: str, body: Mapping[str, Any]) -> dict[str, Any]:
        return await self.request("PUT", path, body=body)

    async def delete(self, path: str, options: Mapping[str, Any] | None = None) -> dict[str, Any]:
        return await self.request("DELETE", path, body=options)

    async def watch(self, path: str, params: Mapping[str, str]) -> AsyncIterator[dict[str, Any]]:
        """The events of one watch request (``{"type", "object"}``), until the server ends it."""
        query = {
            **params,
            "watch": "true",
            "allowWatchBookmarks": "true",
            "timeoutSeconds": str(WATCH_TIMEOUT),
        }
        timeout = aiohttp.ClientTimeout(total=None, sock_connect=10, sock_read=WATCH_TIMEOUT + 30)
        async with self._session.get(
            self.url + path, params=query, ssl=self._ssl, timeout=timeout
        ) as response:
            if response.status >= 400:
                text = await response.text()
                answer = json.loads(text) if text.startswith("{") else {"message": text}
                raise ApiError("WATCH", path, response.status, answer)
            async for line in response.content:
                if line.strip():
                    event = json.loads(line)
                    if isinstance(event, dict):
                        yield event
