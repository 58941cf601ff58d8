"""Test hooks of the emulated API server: fault injection per verb and path, and the request log.

A ``Fault`` answers matching requests with a ``Status`` of the test's choice (409, 429 with
``Retry-After``, 500, 504, ...) or delays them; ``skip`` and ``times`` pick which calls it hits.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from sim import errors

REASONS = {
    404: "NotFound",
    409: "Conflict",
    410: "Expired",
    429: "TooManyRequests",
    500: "InternalError",
    503: "ServiceUnavailable",
    504: "Timeout",
}


@dataclass(kw_only=True)
class HitBudget:
    """Which of the calls a fault matches it hits: ``skip`` let through first, then ``times`` hit (None:
    every one). ``hits`` counts the calls hit so far."""

    skip: int = 0
    times: int | None = 1
    hits: int = 0
    _seen: int = field(default=0, repr=False)

    def spend(self) -> bool:
        """A matching call arrived: count it; whether the fault hits it."""
        self._seen += 1
        if self._seen <= self.skip:
            return False
        if self.times is not None and self.hits >= self.times:
            return False
        self.hits += 1
        return True


@dataclass
class Fault(HitBudget):
    verb: str = "*"  # get, list, watch, create, update, patch, delete, deletecollection, or *
    path: str = ".*"  # a regular expression searched in the request path
    code: int = 0  # 0: no error, only latency
    message: str = "injected fault"
    retry_after: int | None = None
    latency: float = 0.0
    _pattern: re.Pattern[str] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._pattern = re.compile(self.path)

    def take(self, verb: str, path: str) -> bool:
        """Whether this fault applies to the call (and count it)."""
        if self.verb not in ("*", verb) or not self._pattern.search(path):
            return False
        return self.spend()

    def error(self) -> errors.ApiError | None:
        if not self.code:
            return None
        headers = {"Retry-After": str(self.retry_after)} if self.retry_after is not None else {}
        details: dict[str, Any] = (
            {"retryAfterSeconds": self.retry_after} if self.retry_after is not None else {}
        )
        return errors.ApiError(
            self.code, REASONS.get(self.code, "InternalError"), self.message, details or None, headers
        )

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Fault:
        allowed = {"verb", "path", "code", "message", "retry_after", "latency", "skip", "times"}
        return cls(**{k: v for k, v in data.items() if k in allowed})


@dataclass(frozen=True)
class LoggedRequest:
    method: str
    path: str
    query: str
    verb: str
    content_type: str
    status: int
    # Who asked: the account of an emulator-issued token, else the bearer token itself, which the
    # tests use as a user name (such tokens are not checked); "" for none or a refused token.
    user: str = ""
    # The Warning headers of the answer (unknown fields, deprecations), as sent.
    warnings: tuple[str, ...] = ()

    def as_json(self) -> dict[str, Any]:
        return {
            "method": self.method,
            "path": self.path,
            "query": self.query,
            "verb": self.verb,
            "contentType": self.content_type,
            "status": self.status,
            "user": self.user,
            "warnings": list(self.warnings),
        }
