"""Who a request comes from: kube-apiserver's service-account token authenticator, for the tokens this
emulator issued.

The emulator's rule (README): a request bearing a token the emulator issued (``tokens.issued_here``: a
JWT naming the emulator as issuer) is authenticated and then authorized by RBAC (``sim.authorizing``);
a token that claims the emulator but does not verify, has expired, or names a ServiceAccount, Pod or
Secret that is gone (or was replaced: another uid, or deleted more than a minute ago) answers 401 as a
real server does. A request without credentials, or with any other bearer token (the tests' kubeconfig
token, ``system:serviceaccount:…`` names the tests use to tell clients apart), is let through unchecked,
as every request was before the emulator authenticated anyone.

An authenticated service account is the user ``system:serviceaccount:NS:NAME`` in the groups
``system:serviceaccounts``, ``system:serviceaccounts:NS`` and ``system:authenticated``, with the pod and
node of a bound token as extra (``authentication.kubernetes.io/pod-name`` …).

A request that carries ``Impersonate-*`` headers then acts as the user they name (``sim.impersonating``);
the requester of an unchecked one is ``unchecked_user``, in ``system:masters``.

Known limits: no legacy Secret-based tokens, client certificates, static tokens or anonymous requests
(``system:anonymous``, but by impersonation); a request with no credentials is the unchecked kind above.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from sim import errors, tokens
from sim.store import Obj, Store

log = logging.getLogger("arcsm.sim.auth")

AUTHENTICATED = "system:authenticated"
UNAUTHENTICATED = "system:unauthenticated"
# The privileged group: authorized for everything, before RBAC is asked.
MASTERS = "system:masters"
# The user (and token) of the kubeconfigs the emulator writes; kubectl sends no token over plain HTTP.
KUBECONFIG_USER = "arcsm-sim"
SERVICE_ACCOUNTS = "system:serviceaccounts"
DELETION_LEEWAY = timedelta(seconds=tokens.LEEWAY)


@dataclass(frozen=True)
class User:
    name: str
    groups: tuple[str, ...] = ()
    uid: str = ""
    extra: Mapping[str, tuple[str, ...]] = field(default_factory=dict)


def bearer(authorization: str) -> str:
    """The token of an ``Authorization: Bearer …`` header ("" for none or another scheme)."""
    scheme, _, token = authorization.partition(" ")
    return token.strip() if scheme.lower() == "bearer" else ""


def unchecked_user(token: str) -> User:
    """Who a request the emulator serves unchecked is taken to be: the kubeconfig's user (kubectl sends
    no token over plain HTTP), or another bearer token itself, in ``system:masters``."""
    return User(token or KUBECONFIG_USER, (MASTERS, AUTHENTICATED))


def unauthorized() -> errors.ApiError:
    return errors.ApiError(401, "Unauthorized", "Unauthorized")


def _alive(obj: Obj | None, uid: str, now: datetime) -> bool:
    """The object exists with ``uid`` and was not deleted before now minus the leeway."""
    meta = (obj or {}).get("metadata") or {}
    if obj is None or meta.get("uid") != uid:
        return False
    deleted = meta.get("deletionTimestamp")
    return not deleted or datetime.fromisoformat(deleted) >= now - DELETION_LEEWAY


def _check_objects(store: Store, claims: tokens.Claims, now: datetime) -> None:
    ns = claims.namespace
    account = store.get(("", "serviceaccounts", ns, claims.service_account.name))
    if not _alive(account, claims.service_account.uid, now):
        raise tokens.InvalidToken(f"service account {ns}/{claims.service_account.name} is gone")
    for ref, plural in ((claims.pod, "pods"), (claims.secret, "secrets")):
        if ref is not None and not _alive(store.get(("", plural, ns, ref.name)), ref.uid, now):
            raise tokens.InvalidToken("service account token has been invalidated")


def authenticate(store: Store, authorization: str, *, now: datetime) -> User | None:
    """The user of a request with this ``Authorization`` header: None when it bears no token the
    emulator issued (let through unchecked); 401 ``ApiError`` when it bears one that is not valid."""
    token = bearer(authorization)
    if not token or not tokens.issued_here(token):
        return None
    try:
        claims = tokens.verify(token, now=now)
        _check_objects(store, claims, now)
    except tokens.InvalidToken as exc:
        log.info("auth: a service-account token was refused: %s", exc)
        raise unauthorized() from None
    extra: dict[str, tuple[str, ...]] = {}
    if claims.pod is not None:
        extra["authentication.kubernetes.io/pod-name"] = (claims.pod.name,)
        extra["authentication.kubernetes.io/pod-uid"] = (claims.pod.uid,)
    if claims.node is not None:
        extra["authentication.kubernetes.io/node-name"] = (claims.node.name,)
    if claims.jti:
        extra["authentication.kubernetes.io/credential-id"] = (f"JTI={claims.jti}",)
    return User(
        name=claims.username,
        groups=(SERVICE_ACCOUNTS, f"{SERVICE_ACCOUNTS}:{claims.namespace}", AUTHENTICATED),
        uid=claims.service_account.uid,
        extra=extra,
    )
