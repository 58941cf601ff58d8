"""Impersonation: the ``Impersonate-*`` headers, as kube-apiserver's impersonation filter reads them
(``k8s.io/apiserver/pkg/endpoints/filters/impersonation.go``).

A request may ask to act as another user: ``Impersonate-User`` (a name of the form
``system:serviceaccount:NS:NAME``, with a valid namespace and name, is that service account),
``Impersonate-Group`` (repeatable), ``Impersonate-Uid`` and ``Impersonate-Extra-KEY`` (repeatable; the
key lowercased and %-unescaped). Each of them is authorized for the requester, in that order (user,
groups, extras, uid), as the verb ``impersonate`` on ``users``, ``groups`` or ``serviceaccounts`` (in its
namespace, by its name) of the core group, or on ``userextras/KEY`` or ``uids`` of
``authentication.k8s.io``, each named by the value; the first one refused is the 403, worded as
kube-apiserver words it. Groups, extras or a uid without a user are refused with a plain-text 500, as
upstream's filter answers.

Allowed, the request is served as the impersonated user: its name, the groups given (a service account
with none given gets ``system:serviceaccounts`` and ``system:serviceaccounts:NS``), plus
``system:authenticated`` unless it or ``system:unauthenticated`` is among them (``system:anonymous``
gets ``system:unauthenticated`` instead), its extras and uid. It is authenticated and authorized as
that user from then on, self reviews (``kubectl auth can-i --as``, ``whoami``) included.

The requester is the authenticated user, or, for a request the emulator serves unchecked, the
kubeconfig's user in ``system:masters``, who may impersonate anyone (``selfreviews.requester``).
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import unquote

from multidict import CIMultiDictProxy

from sim import authorizing, validation
from sim.authenticating import AUTHENTICATED, SERVICE_ACCOUNTS, UNAUTHENTICATED, User
from sim.store import Store

USER_HEADER = "Impersonate-User"
GROUP_HEADER = "Impersonate-Group"
UID_HEADER = "Impersonate-Uid"
EXTRA_PREFIX = "impersonate-extra-"
AUTHENTICATION = "authentication.k8s.io"
ANONYMOUS = "system:anonymous"
SERVICE_ACCOUNT_PREFIX = "system:serviceaccount:"


class NoUser(Exception):
    """Groups, extras or a uid asked without a user: upstream answers a plain-text 500."""


@dataclass(frozen=True)
class Asked:
    """One thing to impersonate (upstream's ``ObjectReference``)."""

    kind: str  # ServiceAccount, User, Group, UserExtra or UID
    name: str
    namespace: str = ""
    api_version: str = ""
    field_path: str = ""

    def go(self) -> str:
        """Go's ``%v`` of the ObjectReference: its seven fields, in order, space-separated."""
        fields = (self.kind, self.namespace, self.name, "", self.api_version, "", self.field_path)
        return "{" + " ".join(fields) + "}"

    def attributes(self) -> authorizing.Attributes:
        group, version = self.api_version.partition("/")[::2] if self.api_version else ("", "")
        resource, subresource = {
            "ServiceAccount": ("serviceaccounts", ""),
            "User": ("users", ""),
            "Group": ("groups", ""),
            "UserExtra": ("userextras", self.field_path),
            "UID": ("uids", ""),
        }[self.kind]
        return authorizing.Attributes(
            verb="impersonate",
            path="",
            resource_request=True,
            api_group=group,
            api_version=version,
            resource=resource,
            subresource=subresource,
            namespace=self.namespace,
            name=self.name,
        )


def service_account(username: str) -> tuple[str, str] | None:
    """``serviceaccount.SplitUsername``: (namespace, name) of a service account's user name."""
    if not username.startswith(SERVICE_ACCOUNT_PREFIX):
        return None
    parts = username[len(SERVICE_ACCOUNT_PREFIX) :].split(":")
    if len(parts) != 2:
        return None
    namespace, name = parts
    if validation.is_dns1123_label(namespace) or validation.is_dns1123_subdomain(name):
        return None
    return namespace, name


def asked(headers: CIMultiDictProxy[str]) -> list[Asked]:
    """``buildImpersonationRequests``: what the headers ask to impersonate (none: no impersonation)."""
    out: list[Asked] = []
    user = headers.get(USER_HEADER, "")
    if user:
        account = service_account(user)
        out.append(Asked("ServiceAccount", account[1], account[0]) if account else Asked("User", user))
    groups = headers.getall(GROUP_HEADER, [])
    out += [Asked("Group", group) for group in groups]
    # Header names are case-insensitive: one key however its headers spell it.
    extra_names = [
        name for name in dict.fromkeys(n.lower() for n in headers) if name.startswith(EXTRA_PREFIX)
    ]
    for name in extra_names:
        key = unquote(name[len(EXTRA_PREFIX) :])
        out += [Asked("UserExtra", value, "", f"{AUTHENTICATION}/v1", key) for value in headers.getall(name)]
    uid = headers.get(UID_HEADER, "")
    if uid:
        out.append(Asked("UID", uid, "", f"{AUTHENTICATION}/v1"))
    if out and not user:
        raise NoUser("requested [" + " ".join(a.go() for a in out) + "] without impersonating a user")
    return out


def impersonated(store: Store, requester: User, headers: CIMultiDictProxy[str]) -> User | None:
    """The user the request acts as, when its headers ask for one (None: they do not); the 403
    ``ApiError`` when the requester may not, ``NoUser`` when they ask without a user."""
    wanted = asked(headers)
    if not wanted:
        return None
    name, uid = "", ""
    groups: list[str] = []
    extra: dict[str, tuple[str, ...]] = {}
    groups_given = bool(headers.getall(GROUP_HEADER, []))
    for one in wanted:
        attrs = one.attributes()
        decision = authorizing.authorize(store, requester, attrs)
        if not decision.allowed:
            raise authorizing.forbidden(requester, attrs, decision.reason)
        if one.kind == "ServiceAccount":
            name = f"{SERVICE_ACCOUNT_PREFIX}{one.namespace}:{one.name}"
            if not groups_given:
                groups += [SERVICE_ACCOUNTS, f"{SERVICE_ACCOUNTS}:{one.namespace}"]
        elif one.kind == "User":
            name = one.name
        elif one.kind == "Group":
            groups.append(one.name)
        elif one.kind == "UserExtra":
            extra[one.field_path] = (*extra.get(one.field_path, ()), one.name)
        else:
            uid = one.name
    if name != ANONYMOUS:
        if AUTHENTICATED not in groups and UNAUTHENTICATED not in groups:
            groups.append(AUTHENTICATED)
    elif UNAUTHENTICATED not in groups:
        groups.append(UNAUTHENTICATED)
    return User(name=name, groups=tuple(groups), uid=uid, extra=extra)
