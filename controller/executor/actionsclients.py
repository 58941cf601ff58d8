"""One ``ActionsClient`` per ``ActionsScope``, cached while its credentials stay the same (spec §2.0).

    clients = ActionsClients()
    async with clients.lease(scope, reader) as client:    # reader: the executor's Kubernetes reads
        await client.remove_runner(runner_id)

Every lease reads the scope's Secret (and its CA ConfigMap and proxy credential Secrets, when it names
them) through ``reader`` at that moment, so a rotated Secret is used at the next call; nothing read
here is journaled. A client is cached per (config URL, namespace, Secret name, proxy and TLS blocks)
and kept while the Secret's ``resourceVersion`` and the CA and proxy material are unchanged; each client
keeps its admin token and refreshes it itself. When they change, the old client is retired and closed
once its last lease ends, so a call in flight finishes on the client it started with. A lease that
finds the Secret gone or unusable drops the cached client too, so no call uses the old credentials.

A scope with a ``vaultConfig`` takes its credentials from the vault secret ``githubConfigSecret`` names
(``vaults.VaultSecrets``, which keeps a value read for a short while); its client is kept while the
value's digest is unchanged. A vault secret that is missing or no GitHub credential drops the client too.

The config Secret's two user errors have their own classes (``errors.CONFIG_SECRET_MISSING``: the
Secret does not exist or none is named; ``errors.CONFIG_SECRET_INCOMPLETE``: it holds no usable
credentials), so a machine tells them from an unreadable Secret (a Kubernetes outage, RBAC).

The scope's proxy applies to every request of its client, except to hosts ``noProxy`` lists (a host,
a ``.suffix`` or bare domain matching subdomains, ``host:port``, an IP or CIDR, or ``*``); the scope's
root CA is added to the system trust store.

The clients of every scope with the same root CA and proxy send through one connection pool
(``actions.pooling``), not one each: a pool is built with the first client that needs it and closed
with the last one.
"""

from __future__ import annotations

import hashlib
import ipaddress
import json
import ssl
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any, Final

import httpx

from actions import azurekeyvault, tls
from actions.azurekeyvault import Reach
from actions.client import ActionsClient, ClientSettings
from actions.credentials import Credentials
from actions.pooling import Pool
from actions.redaction import SecretStr
from actions.useragent import SystemInfo
from controller.executor import errors, scopes, vaults
from controller.executor.errors import KubeError, ScopeUnavailable
from controller.executor.kubewriting import ObjectReader
from controller.executor.scopes import ProxyUrls
from statemachines.effects import ActionsScope

SUBSYSTEM: Final = "controller"

CacheKey = tuple[str, str, str, str, str, str]
PoolKey = tuple[str, ProxyUrls]  # the root CA (PEM) and the proxy a pool's connections go with


@dataclass
class _Entry:
    client: ActionsClient
    fingerprint: str
    pool: PoolKey
    leases: int = 0
    retired: bool = False


@dataclass
class _Shared:
    pool: Pool
    clients: int = 0


@dataclass(frozen=True)
class _Material:
    """What a client is built from, read for one lease; ``fingerprint`` identifies it (a digest).
    ``credentials`` parses them (only when a client is built: an App key costs a PEM parse)."""

    credentials: Callable[[], Credentials] = field(repr=False)
    root_ca: str = field(repr=False)
    proxy: ProxyUrls = field(repr=False)
    fingerprint: str = ""


class ActionsClients:
    def __init__(
        self,
        *,
        settings: ClientSettings | None = None,
        system_info: SystemInfo | None = None,
        vault: Reach | None = None,
    ) -> None:
        self._settings = settings or ClientSettings()
        self._vaults = vaults.VaultSecrets(vault)
        self._system_info = system_info or SystemInfo(subsystem=SUBSYSTEM)
        self._entries: dict[CacheKey, _Entry] = {}
        self._retired: list[_Entry] = []
        self._pools: dict[PoolKey, _Shared] = {}

    @property
    def cached(self) -> int:
        """How many clients are cached (retired ones still in use not counted)."""
        return len(self._entries)

    @asynccontextmanager
    async def lease(self, scope: ActionsScope, reader: ObjectReader) -> AsyncIterator[ActionsClient]:
        """The client of ``scope``; ``ScopeUnavailable`` when its Secret, CA or proxy cannot be used,
        ``actions.errors.InvalidConfigUrl`` for a bad config URL."""
        try:
            material = await self._read(scope, reader)
            entry = await self._take(scope, material)
        except ScopeUnavailable as exc:
            if exc.error in _UNUSABLE:
                self._vaults.forget(scope)
                await self._drop(cache_key(scope))
            raise
        try:
            yield entry.client
        finally:
            entry.leases -= 1
            if entry.retired and entry.leases == 0:
                self._retired.remove(entry)
                await self._close(entry)

    async def _read(self, scope: ActionsScope, reader: ObjectReader) -> _Material:
        if vaults.uses_vault(scope):
            parse, version = _from_vault(await self._vaults.read(scope, reader), scope)
        else:
            parse, version = await _from_secret(scope, reader)
        root_ca = await scopes.root_ca(reader, scope)
        proxy = await scopes.proxy_urls(reader, scope.proxy, scope.namespace)
        digest = hashlib.sha256(json.dumps([root_ca, proxy.as_secret_data()]).encode()).hexdigest()
        return _Material(credentials=parse, root_ca=root_ca, proxy=proxy, fingerprint=f"{version}/{digest}")

    @property
    def pools(self) -> int:
        """How many connection pools the clients send through."""
        return len(self._pools)

    async def aclose(self) -> None:
        entries = [*self._entries.values(), *self._retired]
        self._entries.clear()
        self._retired.clear()
        for entry in entries:
            await self._close(entry)
        pools = [shared.pool for shared in self._pools.values()]  # any whose client failed to build
        self._pools.clear()
        for pool in pools:
            await pool.aclose()

    async def _close(self, entry: _Entry) -> None:
        """Close ``entry``'s client, and its pool once no other client sends through it."""
        await entry.client.aclose()
        shared = self._pools.get(entry.pool)
        if shared is None:
            return
        shared.clients -= 1
        if shared.clients == 0:
            del self._pools[entry.pool]
            await shared.pool.aclose()

    async def _drop(self, key: CacheKey) -> None:
        """Forget the client cached under ``key``; closed now, or once its last lease ends."""
        entry = self._entries.pop(key, None)
        if entry is None:
            return
        entry.retired = True
        if entry.leases:
            self._retired.append(entry)
        else:
            await self._close(entry)

    async def _take(self, scope: ActionsScope, material: _Material) -> _Entry:
        """The entry for ``material``, its lease counted before any await (so nothing closes it)."""
        key = cache_key(scope)
        entry = self._entries.get(key)
        if entry is not None and entry.fingerprint == material.fingerprint:
            entry.leases += 1
            return entry
        fresh = self._build(scope, material)
        self._entries[key] = fresh  # before any await: a concurrent lease finds the fresh client
        if entry is not None:
            entry.retired = True
            if entry.leases:
                self._retired.append(entry)  # closed when its last lease ends
            else:
                await self._close(entry)
        return fresh

    def _build(self, scope: ActionsScope, material: _Material) -> _Entry:
        """A client for ``material`` (its lease counted), sending through the pool of its CA and proxy."""
        creds = material.credentials()
        verify = _ssl_context(
            material.root_ca, scope
        )  # checked here, so a bad PEM always reads RootCAInvalid
        key = (material.root_ca, material.proxy)
        shared = self._pools.get(key)
        if shared is None:
            try:
                proxied = _transport(material.proxy, verify) if material.proxy else None
            except (httpx.InvalidURL, ValueError):  # what ``scopes.proxy_url_problem`` did not foresee
                raise ScopeUnavailable(
                    errors.INVALID_PROXY_URL,
                    "a URL of spec.proxy cannot be used as a proxy; write it as http://<host>:<port>",
                ) from None
            shared = self._pools[key] = _Shared(Pool(verify=verify, transport=proxied))
        client = ActionsClient(
            config_url=scope.config_url,
            credentials=creds,
            system_info=self._system_info,
            settings=self._settings,
            transport=shared.pool.transport(),
            root_ca=material.root_ca,
        )
        shared.clients += 1
        return _Entry(client, material.fingerprint, key, leases=1)


# The answers that say the scope's credentials are gone or unusable: its client is dropped.
_UNUSABLE: Final = (
    errors.CONFIG_SECRET_MISSING,
    errors.CONFIG_SECRET_INCOMPLETE,
    azurekeyvault.SECRET_MISSING,
    azurekeyvault.SECRET_INVALID,
)


def cache_key(scope: ActionsScope) -> CacheKey:
    def canonical(block: object) -> str:
        return json.dumps(block, sort_keys=True, default=str)

    return (
        scope.config_url,
        scope.namespace,
        scope.secret_name,
        canonical(scope.proxy),
        canonical(scope.tls),
        canonical(scope.vault),
    )


async def _config_secret(scope: ActionsScope, reader: ObjectReader) -> dict[str, Any]:
    """The scope's config Secret; ``ConfigSecretMissing`` when none is named or it does not exist."""
    try:
        return await scopes.credentials_secret(reader, scope)
    except ScopeUnavailable as exc:
        cause = exc.__cause__
        gone = isinstance(cause, KubeError) and cause.reason == "NotFound"
        if exc.error != errors.CREDENTIALS_UNAVAILABLE or not (gone or not scope.secret_name):
            raise
        where = f"{scope.namespace}/{scope.secret_name}" if scope.secret_name else "(none named)"
        raise ScopeUnavailable(
            errors.CONFIG_SECRET_MISSING,
            f"the GitHub credentials Secret {where} does not exist; create it or name another one",
        ) from exc


async def _from_secret(scope: ActionsScope, reader: ObjectReader) -> tuple[Callable[[], Credentials], str]:
    """The credentials of the scope's config Secret, and its version."""
    secret = await _config_secret(scope, reader)

    def parse() -> Credentials:
        try:
            return scopes.parse_credentials(secret)
        except ScopeUnavailable as exc:
            raise ScopeUnavailable(errors.CONFIG_SECRET_INCOMPLETE, str(exc)) from exc

    version = str((secret.get("metadata") or {}).get("resourceVersion") or "")
    if not version:
        # No resourceVersion to go by: the data itself decides (as a digest; never kept or shown).
        version = hashlib.sha256(json.dumps(secret.get("data"), sort_keys=True).encode()).hexdigest()
    return parse, version


def _from_vault(value: SecretStr, scope: ActionsScope) -> tuple[Callable[[], Credentials], str]:
    """The credentials of a vault secret's value, and its digest (never kept or shown)."""

    def parse() -> Credentials:
        try:
            return azurekeyvault.credentials_from_vault(value, scope.secret_name)
        except azurekeyvault.VaultError as exc:
            raise ScopeUnavailable(exc.reason, str(exc)) from None

    return parse, hashlib.sha256(value.reveal().encode()).hexdigest()


# -- the proxy ---------------------------------------------------------------------------------------------


def _ssl_context(root_ca: str, scope: ActionsScope) -> ssl.SSLContext:
    """The context every client of ``root_ca`` shares (``actions.tls``): one trust store, not one per set."""
    try:
        return tls.context(root_ca)
    except ssl.SSLError:
        raise scopes.not_pem(scope) from None


def _transport(proxy: ProxyUrls, verify: ssl.SSLContext) -> httpx.AsyncBaseTransport:
    return ProxyRouting(
        direct=httpx.AsyncHTTPTransport(verify=verify, trust_env=False),
        http=httpx.AsyncHTTPTransport(verify=verify, proxy=proxy.http) if proxy.http else None,
        https=httpx.AsyncHTTPTransport(verify=verify, proxy=proxy.https) if proxy.https else None,
        no_proxy=proxy.no_proxy,
    )


class ProxyRouting(httpx.AsyncBaseTransport):
    """Sends each request through the proxy of its scheme, or directly for a ``no_proxy`` host."""

    def __init__(
        self,
        *,
        direct: httpx.AsyncBaseTransport,
        http: httpx.AsyncBaseTransport | None,
        https: httpx.AsyncBaseTransport | None,
        no_proxy: tuple[str, ...],
    ) -> None:
        self._direct = direct
        self._by_scheme = {"http": http, "https": https}
        self._no_proxy = no_proxy

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        return await self.route(request.url).handle_async_request(request)

    def route(self, url: httpx.URL) -> httpx.AsyncBaseTransport:
        proxy = self._by_scheme.get(url.scheme)
        if proxy is None or bypasses(url.host, url.port, self._no_proxy):
            return self._direct
        return proxy

    async def aclose(self) -> None:
        for transport in {self._direct, *(t for t in self._by_scheme.values() if t is not None)}:
            await transport.aclose()


def bypasses(host: str, port: int | None, no_proxy: tuple[str, ...]) -> bool:
    """Whether ``host`` (and ``port``) is one of the ``no_proxy`` entries."""
    host = host.lower().strip("[]")
    for raw in no_proxy:
        entry = raw.strip().lower()
        if entry == "*":
            return True
        if not entry:
            continue
        if _ip_match(host, entry):
            return True
        name, _, entry_port = entry.rpartition(":") if entry.count(":") == 1 else (entry, "", "")
        if entry_port and (not entry_port.isdigit() or int(entry_port) != port):
            continue
        name = name.lstrip(".")
        if host == name or host.endswith("." + name):
            return True
    return False


def _ip_match(host: str, entry: str) -> bool:
    try:
        address = ipaddress.ip_address(host)
        network = ipaddress.ip_network(entry, strict=False)
    except ValueError:
        return False
    return address in network
