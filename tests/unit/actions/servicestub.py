"""An in-process GitHub API and Actions service for the client's unit tests, behind httpx.MockTransport.

``ServiceStub`` answers the auth flow (installation token, registration token, runner-registration with
an admin JWT whose ``exp`` follows the ``FakeClock``) and whatever routes a test adds; ``reply`` and
``sequence`` build route handlers. For the real fake service over HTTP see ``sim.github``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import jwt

from actions.client import ActionsClient

CONFIG_URL = "https://github.example.com/my-org"
API = "https://github.example.com/api/v3"
SERVICE = "https://pipelines.example.com/tenant/1/"
PAT = "ghp_unitTestPersonalAccessToken0001"
INSTALLATION_TOKEN = "ghs_unitTestInstallationToken00000001"
REGISTRATION_TOKEN = "AREGISTRATIONTOKEN00000000001"
JWT_SECRET = "unit-test-admin-secret-of-32-bytes!!"

Handler = Callable[[httpx.Request], httpx.Response]
MakeClient = Callable[..., ActionsClient]  # the ``make_client`` fixture


class FakeClock:
    def __init__(self, now: datetime | None = None) -> None:
        self.current = now or datetime(2025, 1, 1, 12, 0, tzinfo=UTC)

    def now(self) -> datetime:
        return self.current

    def advance(self, seconds: float) -> None:
        self.current += timedelta(seconds=seconds)


@dataclass
class ServiceStub:
    """GitHub's API and an Actions service in one MockTransport handler.

    The auth flow answers by default; ``route(method, path_regex, handler)`` adds endpoints (the latest
    matching route wins, so a test can override the auth flow too). Every request is kept in
    ``requests``; ``admin_tokens`` lists the admin JWTs issued, each expiring ``admin_lifetime`` after
    the clock's now."""

    clock: FakeClock
    admin_lifetime: float = 3600.0
    requests: list[httpx.Request] = field(default_factory=list)
    admin_tokens: list[str] = field(default_factory=list)
    routes: list[tuple[str, re.Pattern[str], Handler]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.route("POST", r"/api/v3/app/installations/\d+/access_tokens$", self._installation_token)
        self.route("POST", r"/api/v3/(orgs|repos|enterprises)/.+/registration-token$", self._registration)
        self.route("POST", r"/api/v3/actions/runner-registration$", self._admin)

    def route(self, method: str, path: str, handler: Handler) -> None:
        self.routes.insert(0, (method, re.compile(path), handler))

    def handle(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        for method, pattern, handler in self.routes:
            if request.method == method and pattern.search(request.url.path):
                return handler(request)
        return httpx.Response(404, json={"message": f"no route for {request.method} {request.url.path}"})

    def transport(self) -> httpx.MockTransport:
        return httpx.MockTransport(self.handle)

    def paths(self, contains: str = "") -> list[str]:
        return [f"{r.method} {r.url.path}" for r in self.requests if contains in r.url.path]

    def new_admin_token(self) -> str:
        exp = int((self.clock.now() + timedelta(seconds=self.admin_lifetime)).timestamp())
        token = jwt.encode({"exp": exp, "n": len(self.admin_tokens)}, JWT_SECRET, algorithm="HS256")
        self.admin_tokens.append(token)
        return token

    def _installation_token(self, request: httpx.Request) -> httpx.Response:
        return httpx.Response(201, json={"token": INSTALLATION_TOKEN, "expires_at": "2025-01-01T13:00:00Z"})

    def _registration(self, request: httpx.Request) -> httpx.Response:
        return httpx.Response(201, json={"token": REGISTRATION_TOKEN, "expires_at": "2025-01-01T13:00:00Z"})

    def _admin(self, request: httpx.Request) -> httpx.Response:
        return httpx.Response(201, json={"url": SERVICE, "token": self.new_admin_token()})


def json_body(request: httpx.Request) -> Any:
    return json.loads(request.content) if request.content else None


def reply(status: int, body: Any = None, **headers: str) -> Handler:
    """A handler answering ``status`` with a JSON ``body`` (or none) and ``headers``."""

    def handler(request: httpx.Request) -> httpx.Response:
        if body is None:
            return httpx.Response(status, headers=headers)
        return httpx.Response(status, json=body, headers=headers)

    return handler


def sequence(*handlers: Handler) -> Handler:
    """Answer with each handler in turn, then keep using the last."""
    pending = list(handlers)

    def handler(request: httpx.Request) -> httpx.Response:
        current = pending.pop(0) if len(pending) > 1 else pending[0]
        return current(request)

    return handler
