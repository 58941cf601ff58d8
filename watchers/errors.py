"""What can go wrong between a watcher and the API server, classified by what the watcher does next.

    WatchError
     ├── TransportError   the connection failed, timed out or a stream broke off: back off, resume
     └── ApiError         the server answered a Status: back off (respecting Retry-After), retry
          └── Expired     410: the resourceVersion (or continue token) is gone: re-list at once

An answer is read as a ``kube.failures.Failure`` (status, reason, message, Retry-After), as every edge
reads one, and raised here as the error it calls for; aiohttp exceptions are translated where a request
is sent or a stream read (``requesting``, ``streams``), and chained.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kube.failures import Failure


class WatchError(Exception):
    pass


class TransportError(WatchError):
    pass


class ApiError(WatchError):
    def __init__(self, status: int, reason: str, message: str, *, retry_after: float | None = None) -> None:
        super().__init__(f"{status} {reason}: {message}" if message else f"{status} {reason}")
        self.failure = Failure(status, reason, message, retry_after)

    @classmethod
    def of(cls, failure: Failure) -> ApiError:
        """The error a failed answer stands for: ``Expired`` for a 410. A body that is not a Status
        stands in for the message."""
        error = Expired if failure.gone else ApiError
        return error(
            failure.code, failure.reason, failure.message or failure.text, retry_after=failure.retry_after
        )

    @property
    def status(self) -> int:
        return self.failure.code

    @property
    def reason(self) -> str:
        return self.failure.reason

    @property
    def message(self) -> str:
        return self.failure.message

    @property
    def retry_after(self) -> float | None:
        return self.failure.retry_after

    @property
    def transient(self) -> bool:
        """Whether waiting is expected to help (429 and 5xx); others need someone to act (RBAC, CRDs)."""
        return self.failure.retryable


class Expired(ApiError):
    pass


def from_status(status: Mapping[str, Any]) -> ApiError:
    """The error a ``Status`` object without an answer around it stands for (a watch ERROR event)."""
    return ApiError.of(Failure.from_status(status))


def from_response(code: int, body: bytes, headers: Mapping[str, str]) -> ApiError:
    """The error of a non-2xx response, whether or not its body is a ``Status``."""
    return ApiError.of(Failure.from_answer(code, body, headers))
