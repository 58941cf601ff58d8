"""Service-account tokens as kube-apiserver issues them: JWTs signed RS256 by the emulator's key.

``issue`` makes a token with the claims of ``pkg/serviceaccount/claims.go``: ``iss`` (``ISSUER``), ``sub``
``system:serviceaccount:NS:NAME``, ``aud``, ``exp``, ``iat``, ``nbf``, ``jti`` and the private claim
``kubernetes.io`` {``namespace``, ``serviceaccount`` {name, uid}, and for a bound token ``pod`` {name, uid}
with ``node`` {name} or ``secret`` {name, uid}, ``warnafter`` for an extended one}; the header names the
key (``kid``: the unpadded base64url SHA-256 of the public key's DER, as kube-apiserver computes it).

``verify`` checks what only the token says: the signature, the issuer, the API server's audiences and
the times (with go-jose's one-minute leeway); ``sim.authenticating`` then checks that the objects the
token names still exist. ``issued_here`` tells an emulator token (a JWT naming ``ISSUER``) from any other
bearer token without verifying it, which is what the emulator's authentication rule needs (README).

The signing key is made once per process, on first use (RSA generation is slow; most worlds never issue
a token). Nothing here logs a token.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import json
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

ISSUER = "https://kubernetes.default.svc.cluster.local"
API_AUDIENCES: tuple[str, ...] = (ISSUER,)
ALGORITHM = "RS256"
LEEWAY = 60  # go-jose's jwt.DefaultLeeway
# A pod-bound token asked for exactly this long (what the ServiceAccount admission's projected volume
# asks) lives EXTENSION_SECONDS and carries ``warnafter`` at the requested expiry (kube-apiserver's
# --service-account-extend-token-expiration, on by default).
WARN_ONLY_SECONDS = 3607
EXTENSION_SECONDS = 365 * 24 * 60 * 60
USER_PREFIX = "system:serviceaccount:"


class InvalidToken(Exception):
    """A token that does not authenticate; the message says why (it never contains the token)."""


@dataclass(frozen=True)
class Ref:
    name: str
    uid: str = ""


@dataclass(frozen=True)
class Claims:
    """What a verified token says."""

    namespace: str
    service_account: Ref
    pod: Ref | None
    secret: Ref | None
    node: Ref | None
    audiences: tuple[str, ...]
    expires: int
    issued: int
    jti: str

    @property
    def username(self) -> str:
        return f"{USER_PREFIX}{self.namespace}:{self.service_account.name}"


@functools.cache
def signing_key() -> rsa.RSAPrivateKey:
    """The emulator's token signing key (one per process)."""
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


def key_id(key: rsa.RSAPublicKey) -> str:
    der = key.public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    return base64.urlsafe_b64encode(hashlib.sha256(der).digest()).rstrip(b"=").decode()


def _ref(obj: Mapping[str, Any]) -> dict[str, str]:
    meta = obj.get("metadata") or {}
    return {"name": str(meta.get("name", "")), "uid": str(meta.get("uid", ""))}


def issue(
    *,
    service_account: Mapping[str, Any],
    audiences: Sequence[str],
    expiration_seconds: int,
    now: datetime,
    pod: Mapping[str, Any] | None = None,
    secret: Mapping[str, Any] | None = None,
    node_name: str = "",
    warn_after_seconds: int = 0,
    key: rsa.RSAPrivateKey | None = None,
) -> str:
    """A signed token for ``service_account``, bound to ``pod`` (and its node) or ``secret`` if given."""
    key = key or signing_key()
    sa_meta = service_account.get("metadata") or {}
    namespace = str(sa_meta.get("namespace", ""))
    issued = int(now.timestamp())
    private: dict[str, Any] = {"namespace": namespace, "serviceaccount": _ref(service_account)}
    if pod is not None:
        private["pod"] = _ref(pod)
        if node_name:
            private["node"] = {"name": node_name}  # no Node objects: the name only, as upstream then
    elif secret is not None:
        private["secret"] = _ref(secret)
    if warn_after_seconds:
        private["warnafter"] = issued + warn_after_seconds
    claims = {
        "aud": list(audiences),
        "exp": issued + expiration_seconds,
        "iat": issued,
        "iss": ISSUER,
        "jti": str(uuid.uuid4()),
        "kubernetes.io": private,
        "nbf": issued,
        "sub": f"{USER_PREFIX}{namespace}:{sa_meta.get('name', '')}",
    }
    # go-jose writes no "typ" header: {"alg":"RS256","kid":...}.
    headers = {"kid": key_id(key.public_key()), "typ": None}
    return jwt.encode(claims, key, algorithm=ALGORITHM, headers=headers)


def issued_here(token: str) -> bool:
    """Whether ``token`` claims to come from this emulator (a JWT whose ``iss`` is ``ISSUER``), read
    without verifying anything."""
    parts = token.split(".")
    if len(parts) != 3:
        return False
    try:
        payload = json.loads(base64.urlsafe_b64decode(parts[1] + "=" * (-len(parts[1]) % 4)))
    except (ValueError, UnicodeDecodeError):
        return False
    return isinstance(payload, dict) and payload.get("iss") == ISSUER


def _ref_claim(value: Any, what: str, *, uid: bool = True) -> Ref:
    if not isinstance(value, dict) or not value.get("name") or (uid and not value.get("uid")):
        raise InvalidToken(f"service account token has a malformed {what} claim")
    return Ref(str(value["name"]), str(value.get("uid") or ""))


def verify(token: str, *, now: datetime, key: rsa.RSAPublicKey | None = None) -> Claims:
    """The claims of a token this emulator signed; ``InvalidToken`` if it is not one or not valid now."""
    public = key or signing_key().public_key()
    try:
        payload = jwt.decode(
            token,
            public,
            algorithms=[ALGORITHM],
            audience=list(API_AUDIENCES),
            issuer=ISSUER,
            leeway=LEEWAY,
            # The times are checked below against the server's clock (a test's clock, maybe).
            options={
                "require": ["exp", "iat", "nbf", "sub", "iss", "aud"],
                "verify_exp": False,
                "verify_nbf": False,
                "verify_iat": False,
            },
        )
    except jwt.InvalidAudienceError:
        raise InvalidToken("token audiences are invalid for the target audiences") from None
    except jwt.InvalidSignatureError:
        raise InvalidToken("token signature is invalid") from None
    except jwt.PyJWTError as exc:
        raise InvalidToken(f"service account token is malformed: {type(exc).__name__}") from None
    at = now.timestamp()
    try:
        expires, not_before, issued = int(payload["exp"]), int(payload["nbf"]), int(payload["iat"])
    except (TypeError, ValueError):
        raise InvalidToken("service account token has malformed times") from None
    if expires + LEEWAY < at:
        raise InvalidToken("service account token has expired")
    if not_before - LEEWAY > at:
        raise InvalidToken("service account token is not valid yet")
    if issued - LEEWAY > at:
        raise InvalidToken("service account token is issued in the future")
    private = payload.get("kubernetes.io")
    if not isinstance(private, dict) or not private.get("namespace"):
        raise InvalidToken("service account token has no kubernetes.io claims")
    sa = _ref_claim(private.get("serviceaccount"), "serviceaccount")
    if payload["sub"] != f"{USER_PREFIX}{private['namespace']}:{sa.name}":
        raise InvalidToken("service account token subject does not match its claims")
    audiences = payload["aud"] if isinstance(payload["aud"], list) else [payload["aud"]]
    return Claims(
        namespace=str(private["namespace"]),
        service_account=sa,
        pod=_ref_claim(private["pod"], "pod") if "pod" in private else None,
        secret=_ref_claim(private["secret"], "secret") if "secret" in private else None,
        node=_ref_claim(private["node"], "node", uid=False) if "node" in private else None,
        audiences=tuple(str(a) for a in audiences),
        expires=expires,
        issued=issued,
        jti=str(payload.get("jti") or ""),
    )
