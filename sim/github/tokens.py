"""Credentials of the fake: GitHub App JWTs and PATs it accepts, and the tokens it issues (§6.2).

* **GitHub App JWTs** (RS256, ``iss`` = app or client id, ``exp`` in the future and at most ten minutes
  after ``iat``). Until a test registers an app (``register_app``) any well-formed RS256 JWT is
  accepted for any installation, so a user can point ``arcsm`` at ``arcsm sim`` with any App key.
  Once an app is registered only registered apps are: the signature is checked when the app was
  registered with a public key, and the installation must be one of the app's when it has a list.
* **PATs**: any non-empty token until a test lists allowed ones (``allow_pat``); ``ghs_`` tokens are
  installation tokens and must be ones this fake issued and that have not expired.
* **Installation tokens** (``ghs_…``) and **registration tokens** (29 characters) are opaque and
  remembered with their expiry.
* **Admin tokens** are JWTs signed HS256 with a per-fake secret, carrying the tenant and an ``exp``
  clients read without verifying; ``expire_admin_tokens`` revokes every one issued so far.
* **Message-queue tokens** are opaque, one per session refresh; ``expire_message_tokens`` marks them
  expired, as the §6.5 fake must.

All expiry is judged by the injected clock. No token value is ever logged or put in an error message.
"""

from __future__ import annotations

import secrets
import string
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import jwt

from sim.github import errors
from sim.github.records import Clock

APP_JWT_MAX_SECONDS = 600  # GitHub refuses App JWTs that live longer than ten minutes
CLOCK_SKEW = 60  # an App JWT's iat may lie this far in the future
ADMIN_ISSUER = "arcsm-sim"
ADMIN_AUDIENCE = "actions"
_ALNUM = string.ascii_letters + string.digits


def _random(alphabet: str, size: int) -> str:
    return "".join(secrets.choice(alphabet) for _ in range(size))


@dataclass(frozen=True)
class App:
    app_id: str
    public_key: str | None  # PEM; None: the signature is not checked
    installation_ids: frozenset[int] | None  # None: any installation


@dataclass
class _Issued:
    subject: str  # installation id, scope key or session id
    expires_at: float
    expired: bool = False


@dataclass(frozen=True)
class AdminGrant:
    tenant_id: int
    scope_key: str


class Tokens:
    def __init__(self, *, clock: Clock, secret: bytes | None = None) -> None:
        self.clock = clock
        self._secret = secret or secrets.token_bytes(32)
        self.apps: dict[str, App] = {}
        self.pats: set[str] | None = None
        self._installation: dict[str, _Issued] = {}
        self._registration: dict[str, _Issued] = {}
        self._message: dict[str, _Issued] = {}
        self._admin_generation = 0
        self._admin_valid_from = 0

    # -- what the test configures ----------------------------------------------------------------------

    def register_app(
        self, app_id: str, *, public_key: str | None = None, installation_ids: Iterable[int] | None = None
    ) -> App:
        app = App(
            str(app_id), public_key, frozenset(installation_ids) if installation_ids is not None else None
        )
        self.apps[app.app_id] = app
        return app

    def allow_pat(self, token: str) -> None:
        if self.pats is None:
            self.pats = set()
        self.pats.add(token)

    # -- GitHub side -----------------------------------------------------------------------------------

    def verify_app_jwt(self, token: str, installation_id: int) -> str:
        """The app id of a valid App JWT for ``installation_id``; ``GitHubError`` otherwise."""
        try:
            header = jwt.get_unverified_header(token)
            claims: dict[str, Any] = jwt.decode(token, options={"verify_signature": False})
        except jwt.PyJWTError:
            raise errors.bad_jwt("it is not a JWT") from None
        if header.get("alg") != "RS256":
            raise errors.bad_jwt("'alg' must be RS256")
        issuer = str(claims.get("iss") or "")
        iat, exp = claims.get("iat"), claims.get("exp")
        if not issuer:
            raise errors.bad_jwt("'iss' is missing")
        if not isinstance(iat, int | float) or not isinstance(exp, int | float):
            raise errors.bad_jwt("'iat' and 'exp' must be numeric")
        now = self.clock()
        if exp <= now:
            raise errors.bad_jwt("'exp' lies in the past")
        if iat > now + CLOCK_SKEW:
            raise errors.bad_jwt("'iat' lies in the future")
        if exp - iat > APP_JWT_MAX_SECONDS:
            raise errors.bad_jwt("'exp' is too far in the future")
        if self.apps:
            self._check_registered(token, issuer, installation_id)
        return issuer

    def _check_registered(self, token: str, issuer: str, installation_id: int) -> None:
        app = self.apps.get(issuer)
        if app is None:
            raise errors.GitHubError(401, "Integration not found")
        if app.public_key is not None:
            try:
                jwt.decode(
                    token,
                    app.public_key,
                    algorithms=["RS256"],
                    options={"verify_exp": False, "verify_iat": False, "verify_nbf": False},
                )
            except jwt.PyJWTError:
                raise errors.bad_jwt("the signature does not match the app's key") from None
        if app.installation_ids is not None and installation_id not in app.installation_ids:
            raise errors.github_not_found()

    def issue_installation_token(self, installation_id: int, seconds: float) -> tuple[str, float]:
        token = "ghs_" + _random(_ALNUM, 36)
        expires_at = self.clock() + seconds
        self._installation[token] = _Issued(str(installation_id), expires_at)
        return token, expires_at

    def check_github_credential(self, token: str) -> None:
        """A PAT or an installation token this fake issued, unexpired."""
        if not token:
            raise errors.bad_credentials()
        if token.startswith("ghs_"):
            issued = self._installation.get(token)
            if issued is None or not self._live(issued):
                raise errors.bad_credentials()
            return
        if self.pats is not None and token not in self.pats:
            raise errors.bad_credentials()

    def issue_registration_token(self, scope_key: str, seconds: float) -> tuple[str, float]:
        token = _random(string.ascii_uppercase + string.digits, 29)
        expires_at = self.clock() + seconds
        self._registration[token] = _Issued(scope_key, expires_at)
        return token, expires_at

    def check_registration_token(self, token: str) -> str:
        """The scope key a live registration token was issued for."""
        issued = self._registration.get(token)
        if issued is None or not self._live(issued):
            raise errors.GitHubError(401, "The registration token is not valid or has expired")
        return issued.subject

    # -- Actions side ----------------------------------------------------------------------------------

    def issue_admin_token(self, grant: AdminGrant, seconds: float) -> str:
        now = int(self.clock())
        self._admin_generation += 1
        claims = {
            "iss": ADMIN_ISSUER,
            "aud": ADMIN_AUDIENCE,
            "sub": grant.scope_key,
            "tid": grant.tenant_id,
            "gen": self._admin_generation,
            "iat": now,
            "nbf": now,
            "exp": now + max(1, round(seconds)),
        }
        return jwt.encode(claims, self._secret, algorithm="HS256")

    def check_admin_token(self, token: str) -> AdminGrant:
        try:
            claims: dict[str, Any] = jwt.decode(
                token,
                self._secret,
                algorithms=["HS256"],
                audience=ADMIN_AUDIENCE,
                issuer=ADMIN_ISSUER,
                options={
                    "verify_exp": False,
                    "verify_iat": False,
                    "verify_nbf": False,
                    "require": ["exp", "tid", "gen", "sub"],
                },
            )
        except jwt.PyJWTError:
            raise errors.unauthorized() from None
        if claims["exp"] <= self.clock() or claims["gen"] <= self._admin_valid_from:
            raise errors.unauthorized("The admin token has expired.")
        return AdminGrant(int(claims["tid"]), str(claims["sub"]))

    def issue_message_token(self, session_id: str, seconds: float) -> str:
        token = _random(_ALNUM, 48)
        self._message[token] = _Issued(session_id, self.clock() + seconds)
        return token

    def check_message_token(self, token: str) -> str:
        """The session id of a live message-queue token."""
        issued = self._message.get(token)
        if issued is None or not self._live(issued):
            raise errors.unauthorized("The message queue token is missing, invalid or expired.")
        return issued.subject

    # -- forcing expiry --------------------------------------------------------------------------------

    def expire_admin_tokens(self) -> None:
        self._admin_valid_from = self._admin_generation

    def expire_message_tokens(self, session_ids: Iterable[str] | None = None) -> int:
        wanted = None if session_ids is None else set(session_ids)
        hit = [i for i in self._message.values() if wanted is None or i.subject in wanted]
        for issued in hit:
            issued.expired = True
        return len(hit)

    def expire_installation_tokens(self) -> None:
        for issued in self._installation.values():
            issued.expired = True

    def expire_registration_tokens(self) -> None:
        for issued in self._registration.values():
            issued.expired = True

    def forget_session(self, session_id: str) -> None:
        self._message = {t: i for t, i in self._message.items() if i.subject != session_id}

    def _live(self, issued: _Issued) -> bool:
        return not issued.expired and issued.expires_at > self.clock()
