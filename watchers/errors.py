"""What can go wrong between a watcher and the API server, classified by what the watcher does next.

    WatchError
     ├── TransportError   the connection failed, timed out or a stream broke off: back off, resume
     └── ApiError         the server answered a Status: back off (respecting Retry-After), retry
          └── Expired     410: the resourceVersion (or continue token) is gone: re-list at once

kubernetes_asyncio and aiohttp exceptions are translated here, at the edge, and chained.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any


class WatchError(Exception):
    pass


class TransportError(WatchError):
    pass


class ApiError(WatchError):
    def __init__(self, status: int, reason: str, message: str, *, retry_after: float | None = None) -> None:
        super().__init__(f"{status} {reason}: {message}" if message else f"{status} {reason}")
        self.status = status
        self.reason = reason
        self.message = message
        self.retry_after = retry_after

    @property
    def transient(self) -> bool:
        """Whether waiting is expected to help (429 and 5xx); others need someone to act (RBAC, CRDs)."""
        return self.status == 429 or self.status >= 500


class Expired(ApiError):
    pass


def from_status(
    status: Mapping[str, Any], *, code: int = 0, headers: Mapping[str, str] | None = None
) -> ApiError:
    """The error a ``Status`` object (an error response body or a watch ERROR event) stands for."""
    code = int(status.get("code") or code or 500)
    reason = str(status.get("reason") or "")
    message = str(status.get("message") or "")
    details = status.get("details")
    retry_after = _retry_after((headers or {}).get("Retry-After"))
    if retry_after is None and isinstance(details, Mapping):
        retry_after = _retry_after(details.get("retryAfterSeconds"))
    cls = Expired if code == 410 else ApiError
    return cls(code, reason, message, retry_after=retry_after)


def from_response(code: int, body: bytes, headers: Mapping[str, str]) -> ApiError:
    """The error of a non-2xx response, whether or not its body is a ``Status``."""
    try:
        status = json.loads(body)
    except ValueError:
        status = None
    if not isinstance(status, dict):
        status = {"message": body[:200].decode(errors="replace")}
    return from_status(status, code=code, headers=headers)


def _retry_after(value: Any) -> float | None:
    try:
        seconds = float(value)
    except (TypeError, ValueError):
        return None  # absent, or an HTTP date (the API server sends seconds)
    return max(0.0, seconds)
