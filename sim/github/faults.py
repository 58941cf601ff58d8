"""Test hooks of the fake GitHub: fault injection per method and path, and the call log.

A ``GitHubFault`` answers matching requests with a status of the test's choice (429 with
``Retry-After``, a burst of 5xx with ``times``, an Actions error body with ``type_key``) or only delays
them (``latency`` with ``status`` 0); ``skip`` lets calls through first. A fault with ``hold`` keeps the
calls it hits waiting until the test releases it (``release``, or clearing the faults): a caller that is
behind for as long as a story needs, without a clock deciding how long. ``Call`` is one logged request,
kept in arrival order; its status is None while the request is in flight (a long poll).
"""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass, field
from typing import Any

from sim.faults import HitBudget


@dataclass
class GitHubFault(HitBudget):
    method: str = "*"  # GET, POST, PATCH, DELETE, or *
    path: str = ".*"  # a regular expression searched in the request path
    status: int = 0  # 0: no error, only latency
    message: str = "injected fault"
    type_key: str = ""  # Actions paths: the body's typeName, e.g. AgentExistsException
    retry_after: int | None = None
    latency: float = 0.0
    hold: bool = False  # keep the calls hit waiting until ``release``
    _pattern: re.Pattern[str] = field(init=False, repr=False)
    _released: asyncio.Event = field(init=False, repr=False, default_factory=asyncio.Event)

    def __post_init__(self) -> None:
        self.method = self.method.upper()
        self._pattern = re.compile(self.path)

    async def held(self) -> None:
        """Wait until the fault is released (at once when it holds nothing)."""
        if self.hold:
            await self._released.wait()

    def release(self) -> None:
        """Let the calls it holds go on, and every later one through."""
        self._released.set()
        self.times = self.hits

    def take(self, method: str, path: str) -> bool:
        """Whether this fault applies to the call (and count it)."""
        if self.method not in ("*", method.upper()) or not self._pattern.search(path):
            return False
        return self.spend()

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> GitHubFault:
        """From a ``/_sim/faults`` body: the field names above, or camelCase (``retryAfter``, ...)."""
        aliases = {
            "retryAfter": "retry_after",
            "typeKey": "type_key",
            "typeName": "type_key",
            "code": "status",
        }
        allowed = {
            "method",
            "path",
            "status",
            "message",
            "type_key",
            "retry_after",
            "latency",
            "hold",
            "skip",
            "times",
        }
        fields = {aliases.get(k, k): v for k, v in data.items()}
        unknown = set(fields) - allowed
        if unknown:
            raise ValueError(f"unknown fault fields: {', '.join(sorted(unknown))}")
        return cls(**fields)

    def as_json(self) -> dict[str, Any]:
        return {
            "method": self.method,
            "path": self.path,
            "status": self.status,
            "message": self.message,
            "typeKey": self.type_key,
            "retryAfter": self.retry_after,
            "latency": self.latency,
            "hold": self.hold,
            "skip": self.skip,
            "times": self.times,
            "hits": self.hits,
        }


@dataclass
class Call:
    method: str
    path: str
    query: str
    body: Any = None  # the request's JSON body (None if empty or not JSON); never a token
    status: int | None = None  # None while in flight

    def as_json(self) -> dict[str, Any]:
        return {"method": self.method, "path": self.path, "status": self.status}
