"""The admin connection to the Actions service, and keeping it fresh (spec §6.2).

    PAT ─────────────────────────────────┐
    App: JWT (RS256) → installation token ┴→ registration token → runner-registration → admin connection
                                                                  (Actions service URL + admin JWT)

``AdminAuth.connection()`` is called before every Actions-service request. It returns the cached
connection unless the admin token is within ``margin`` (60 s) of the ``exp`` read from the admin JWT
(without verifying it: arcsm is not its audience), and then runs the whole flow again, as the upstream
client does: installation and registration tokens are short-lived and single-purpose, so neither is
cached. Concurrent callers share one refresh. The time comes from an injected ``Clock``, so a test
moves the clock to force a refresh.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Final

import jwt

from actions import errors, wire
from actions.clocks import Clock
from actions.credentials import Credentials, GitHubApp, PersonalAccessToken
from actions.redaction import SecretStr
from actions.sending import Authorization, Sender
from actions.urls import ConfigUrl

log = logging.getLogger(__name__)

REFRESH_MARGIN: Final = timedelta(seconds=60)
APP_JWT_BACKDATE: Final = timedelta(seconds=60)  # iat = now - 60 s, against clock drift
APP_JWT_LIFETIME: Final = timedelta(minutes=9)  # exp = iat + 9 min, under GitHub's 10-minute limit
GITHUB_JSON: Final = "application/vnd.github+json"
GITHUB_V3_JSON: Final = "application/vnd.github.v3+json"


@dataclass(frozen=True)
class ExpiringToken:
    value: SecretStr
    expires_at: datetime | None


@dataclass(frozen=True)
class AdminConnection:
    """Where the Actions service is, and the admin token for it."""

    actions_url: str
    token: SecretStr
    expires_at: datetime


def needs_refresh(expires_at: datetime, now: datetime, margin: timedelta = REFRESH_MARGIN) -> bool:
    return now >= expires_at - margin


def app_jwt(app: GitHubApp, *, now: datetime) -> SecretStr:
    """The GitHub App's JWT: RS256, ``iat`` a minute back, ``exp`` nine minutes after ``iat``."""
    issued = now - APP_JWT_BACKDATE
    claims = {
        "iat": int(issued.timestamp()),
        "exp": int((issued + APP_JWT_LIFETIME).timestamp()),
        "iss": app.app_id,
    }
    return SecretStr(jwt.encode(claims, app.private_key.reveal(), algorithm="RS256"))


def token_expiry(token: SecretStr) -> datetime:
    """The ``exp`` of a JWT, read without verifying the signature."""
    try:
        claims = jwt.decode(token.reveal(), options={"verify_signature": False})
    except jwt.PyJWTError:
        raise errors.ProtocolError("runner-registration: the admin token is not a JWT") from None
    exp = claims.get("exp")
    if isinstance(exp, bool) or not isinstance(exp, int | float):
        raise errors.ProtocolError("runner-registration: the admin token has no numeric exp claim")
    return datetime.fromtimestamp(exp, UTC)


class AdminAuth:
    def __init__(
        self,
        *,
        config_url: ConfigUrl,
        credentials: Credentials,
        sender: Sender,
        clock: Clock,
        margin: timedelta = REFRESH_MARGIN,
    ) -> None:
        self._config_url = config_url
        self._credentials = credentials
        self._sender = sender
        self._clock = clock
        self._margin = margin
        self._current: AdminConnection | None = None
        self._lock = asyncio.Lock()

    async def connection(self) -> AdminConnection:
        current = self._current
        if current is not None and not needs_refresh(current.expires_at, self._clock.now(), self._margin):
            return current
        async with self._lock:
            current = self._current
            if current is None or needs_refresh(current.expires_at, self._clock.now(), self._margin):
                current = await self._connect()
                self._current = current
            return current

    def invalidate(self, stale: AdminConnection) -> None:
        """Forget ``stale`` if it is still the current connection: the next request registers again.
        (A connection another caller has already replaced is left alone.)"""
        if self._current is stale:
            self._current = None

    async def _connect(self) -> AdminConnection:
        github_token = await self._github_token()
        registration = await self.registration_token(github_token)
        connection = await self.admin_connection(registration.value)
        log.info(
            "connected to the Actions service at %s (admin token expires %s)",
            connection.actions_url,
            connection.expires_at.isoformat(),
        )
        return connection

    async def _github_token(self) -> SecretStr:
        if isinstance(self._credentials, PersonalAccessToken):
            return self._credentials.token
        return (await self.installation_token(self._credentials)).value

    async def installation_token(self, app: GitHubApp) -> ExpiringToken:
        url = self._config_url.api_url(f"app/installations/{app.installation_id}/access_tokens")
        reply = await self._sender.send(
            "POST",
            url,
            auth=Authorization("Bearer", app_jwt(app, now=self._clock.now())),
            content_type=GITHUB_JSON,
            expect={201},
        )
        return _expiring_token(reply.object(), what="installation access token")

    async def registration_token(self, github_token: SecretStr) -> ExpiringToken:
        reply = await self._sender.send(
            "POST",
            self._config_url.registration_token_url,
            auth=Authorization("Bearer", github_token),
            content_type=GITHUB_V3_JSON,
            expect={201},
        )
        return _expiring_token(reply.object(), what="registration token")

    async def admin_connection(self, registration_token: SecretStr) -> AdminConnection:
        reply = await self._sender.send(
            "POST",
            self._config_url.api_url("actions/runner-registration"),
            auth=Authorization("RemoteAuth", registration_token),
            body={"url": self._config_url.url, "runner_event": "register"},
            expect=range(200, 300),
            retry_statuses=frozenset({401, 403}),
        )
        data = reply.object()
        what = "runner-registration"
        token = SecretStr(wire.text(data, "token", what=what, required=True))
        return AdminConnection(
            actions_url=wire.text(data, "url", what=what, required=True),
            token=token,
            expires_at=token_expiry(token),
        )


def _expiring_token(data: wire.Json, *, what: str) -> ExpiringToken:
    return ExpiringToken(
        value=SecretStr(wire.text(data, "token", what=what, required=True)),
        expires_at=wire.timestamp(data, "expires_at"),
    )
