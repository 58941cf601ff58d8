"""What an ``ActionsScope`` (or a ``proxy`` block) resolves to, read through the Kubernetes API when an
effect is executed: the credentials Secret, the server root CA and the proxy URLs (spec §2.0).

None of this is journaled: the journal keeps Secrets without data, and effects only name the Secrets.
The values live in memory for one execution (or in a cached client) and leave the process only in the
Secrets the executor writes and in requests to GitHub.

    scope.secret_name                 Secret: github_token, or github_app_id, _installation_id, _private_key
    scope.tls.certificateFrom         ConfigMap key: the PEM appended to the system trust store
    proxy.http(s).credentialSecretRef Secret: username and password, the user info of the proxy URL

A scope with a ``vaultConfig`` names a secret of its vault instead of a Secret (``controller.executor.vaults``
reads it, its ``vaultConfig.proxy`` resolved here as ``spec.proxy`` is). What a user must fix has a class
of its own, with a message naming the field: the CA's ConfigMap or key missing
(``RootCAMissing``), a proxy credentials Secret missing (``ProxySecretMissing``), a proxy URL no client
can use (``InvalidProxyUrl``). The proxy credentials Secrets are read in the namespace the caller names:
the scale set's, for its own client, its runners' and its listener's proxy (as upstream reads them).
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass
from typing import Any, Final
from urllib.parse import quote, urlsplit, urlunsplit

import httpx

from actions import credentials as actions_credentials
from actions import errors as actions_errors
from actions.credentials import Credentials
from controller.executor import errors
from controller.executor.errors import KubeError, ScopeUnavailable
from controller.executor.kubewriting import ObjectReader
from statemachines import arsconditions
from statemachines.effects import ActionsScope
from statemachines.jsonvalues import JsonObject, as_mapping

PROXY_USERNAME: Final = "username"
PROXY_PASSWORD: Final = "password"


@dataclass(frozen=True)
class ProxyUrls:
    """Proxy URLs with their credentials in the user info (secret), and the hosts that bypass them."""

    http: str = ""
    https: str = ""
    no_proxy: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.http or self.https)

    def as_secret_data(self) -> dict[str, str]:
        """``http_proxy``, ``https_proxy`` and ``no_proxy``, as upstream's ``ProxyConfig.ToSecretData``."""
        return {"http_proxy": self.http, "https_proxy": self.https, "no_proxy": ",".join(self.no_proxy)}


async def read_secret(reader: ObjectReader, namespace: str, name: str, *, what: str) -> dict[str, Any]:
    if not name:
        raise ScopeUnavailable(errors.CREDENTIALS_UNAVAILABLE, f"no Secret is named for {what}")
    try:
        return await reader.get("Secret", namespace, name)
    except KubeError as exc:
        raise ScopeUnavailable(
            errors.CREDENTIALS_UNAVAILABLE,
            f"cannot read {what}, the Secret {namespace}/{name} ({exc.reason}): {exc}",
            retry_after=exc.retry_after,
        ) from exc


async def credentials_secret(reader: ObjectReader, scope: ActionsScope) -> dict[str, Any]:
    """The scope's config Secret as the API returns it (``data`` base64)."""
    return await read_secret(reader, scope.namespace, scope.secret_name, what="the GitHub credentials")


def parse_credentials(secret: JsonObject) -> Credentials:
    meta = as_mapping(secret.get("metadata"))
    data = {str(k): str(v) for k, v in as_mapping(secret.get("data")).items()}
    try:
        return actions_credentials.from_secret_data(data)
    except actions_errors.InvalidCredentials as exc:
        where = f"{meta.get('namespace', '')}/{meta.get('name', '')}"
        raise ScopeUnavailable(errors.INVALID_CREDENTIALS, f"the Secret {where}: {exc}") from None


async def read_credentials(reader: ObjectReader, scope: ActionsScope) -> Credentials:
    return parse_credentials(await credentials_secret(reader, scope))


async def root_ca(reader: ObjectReader, scope: ActionsScope) -> str:
    """The PEM ``scope.tls`` names (a ConfigMap key in ``scope.namespace``), or "" when it names none."""
    ref = as_mapping(as_mapping(as_mapping(scope.tls).get("certificateFrom")).get("configMapKeyRef"))
    if not ref:
        return ""
    name, key = str(ref.get("name") or ""), str(ref.get("key") or "")
    where = f"{scope.namespace}/{name}"
    field = "spec.githubServerTLS.certificateFrom.configMapKeyRef"
    try:
        config_map = await reader.get("ConfigMap", scope.namespace, name)
    except KubeError as exc:
        if exc.reason == "NotFound":
            raise ScopeUnavailable(
                errors.ROOT_CA_MISSING,
                f"the ConfigMap {where} named by {field} does not exist; create it with the key {key!r} "
                "holding the PEM root certificate of the GitHub server, or fix the name",
            ) from exc
        raise ScopeUnavailable(
            errors.ROOT_CA_UNAVAILABLE,
            f"cannot read githubServerTLS's ConfigMap {where} ({exc.reason}): {exc}",
            retry_after=exc.retry_after,
        ) from exc
    pem = as_mapping(config_map.get("data")).get(key)
    if not isinstance(pem, str) or not pem.strip():
        raise ScopeUnavailable(
            errors.ROOT_CA_MISSING,
            f"the ConfigMap {where} named by {field} has no key {key!r}; put the PEM root certificate of "
            "the GitHub server under that key, or fix the key",
        )
    return pem


def not_pem(scope: ActionsScope) -> ScopeUnavailable:
    """The error for a ``scope.tls`` value that is not a PEM certificate."""
    ref = as_mapping(as_mapping(as_mapping(scope.tls).get("certificateFrom")).get("configMapKeyRef"))
    where = f"{scope.namespace}/{ref.get('name') or ''}"
    return ScopeUnavailable(
        errors.ROOT_CA_INVALID,
        f"the key {str(ref.get('key') or '')!r} of the ConfigMap {where} (spec.githubServerTLS) is not a PEM "
        "certificate; put the GitHub server's root certificate there, from -----BEGIN CERTIFICATE----- "
        "to -----END CERTIFICATE-----",
    )


async def proxy_urls(
    reader: ObjectReader, proxy: JsonObject, namespace: str, *, field: str = "spec.proxy"
) -> ProxyUrls:
    """The URLs of a ``proxy`` block (``field``: where the spec has it), with the credentials its
    ``credentialSecretRef`` Secrets (in ``namespace``) hold."""
    if not proxy:
        return ProxyUrls()
    no_proxy = tuple(str(h) for h in proxy.get("noProxy") or () if str(h))
    return ProxyUrls(
        http=await _proxy_url(reader, as_mapping(proxy.get("http")), namespace, f"{field}.http"),
        https=await _proxy_url(reader, as_mapping(proxy.get("https")), namespace, f"{field}.https"),
        no_proxy=no_proxy,
    )


def proxy_url_problem(url: str) -> str:
    """Why ``url`` cannot be a proxy's URL (``arsconditions.proxy_url_problem``, then what httpx refuses),
    or "" when it can. Never quotes ``url``: it may hold a password."""
    if why := arsconditions.proxy_url_problem(url):
        return why
    try:
        httpx.URL(url)
    except httpx.InvalidURL:
        return "cannot be parsed as a URL (a character a URL cannot hold)"
    return ""


async def _proxy_url(reader: ObjectReader, server: JsonObject, namespace: str, where: str) -> str:
    url = str(server.get("url") or "")
    ref = str(server.get("credentialSecretRef") or "")
    if url and (problem := proxy_url_problem(url)):
        raise ScopeUnavailable(
            errors.INVALID_PROXY_URL,
            f"{where}.url {problem}; write it as http://<host>:<port>",
        )
    if not url or not ref:
        return url
    try:
        secret = await reader.get("Secret", namespace, ref)
    except KubeError as exc:
        if exc.reason == "NotFound":
            raise ScopeUnavailable(
                errors.PROXY_SECRET_MISSING,
                f"the Secret {namespace}/{ref} named by {where}.credentialSecretRef does not "
                "exist; create it with the keys username and password, in the scale set's namespace",
            ) from exc
        raise ScopeUnavailable(
            errors.CREDENTIALS_UNAVAILABLE,
            f"cannot read the credentials of the proxy {url}, the Secret {namespace}/{ref} ({exc.reason}): "
            f"{exc}",
            retry_after=exc.retry_after,
        ) from exc
    data = as_mapping(secret.get("data"))
    username = _decode(data.get(PROXY_USERNAME), f"{namespace}/{ref}", PROXY_USERNAME)
    password = _decode(data.get(PROXY_PASSWORD), f"{namespace}/{ref}", PROXY_PASSWORD)
    return with_user_info(url, username, password)


def with_user_info(url: str, username: str, password: str) -> str:
    """``url`` with ``username:password@`` (escaped as Go's ``url.UserPassword`` does)."""
    parts = urlsplit(url)
    host = parts.netloc.rsplit("@", 1)[-1]
    userinfo = f"{quote(username, safe='')}:{quote(password, safe='')}"
    return urlunsplit(parts._replace(netloc=f"{userinfo}@{host}"))


def _decode(value: object, where: str, key: str) -> str:
    if value is None:
        return ""
    try:
        return base64.b64decode(str(value), validate=True).decode("utf-8")
    except (binascii.Error, ValueError):
        raise ScopeUnavailable(
            errors.INVALID_CREDENTIALS, f"{key} in the Secret {where} is not base64 UTF-8 text"
        ) from None
