"""The GitHub credentials of a scope with a ``vaultConfig``, read from Azure Key Vault (spec §2.0) and
kept for a short while, so a scale set's calls do not each ask the vault.

    vaults = VaultSecrets(reach)                       # reach: the process's CA bundle, its files
    value = await vaults.read(scope, reader)           # ScopeUnavailable naming what to fix

The vault's proxy (``vaultConfig.proxy``) is resolved as ``spec.proxy`` is, its credential Secrets read
in the scope's namespace. A value read is kept ``ttl`` seconds per (vault, secret name): a rotated secret
is used within that time, and at most one request for a key is in flight. A failure is not kept: the
next call asks again. Nothing here is journaled; the value stays in memory as a ``SecretStr``.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from actions import azurekeyvault
from actions.azurekeyvault import AzureKeyVault, Reach, VaultError, VaultProxy
from actions.redaction import SecretStr
from controller.executor import scopes
from controller.executor.errors import ScopeUnavailable
from controller.executor.kubewriting import ObjectReader
from statemachines.effects import ActionsScope
from statemachines.jsonvalues import as_mapping

TTL: Final = 30.0


def uses_vault(scope: ActionsScope) -> bool:
    return bool(as_mapping(scope.vault).get("type"))


async def vault_of(scope: ActionsScope, reader: ObjectReader) -> AzureKeyVault:
    """The scope's vault, its proxy's credentials read; ``VaultConfigInvalid`` for a type arcsm (and
    upstream) does not know."""
    vault = as_mapping(scope.vault)
    kind = str(vault.get("type") or "")
    if kind != azurekeyvault.AZURE_KEY_VAULT:
        raise ScopeUnavailable(
            azurekeyvault.CONFIG_INVALID,
            f"spec.vaultConfig.type {kind!r} is unknown; the one vault type is "
            f"{azurekeyvault.AZURE_KEY_VAULT}",
        )
    urls = await scopes.proxy_urls(
        reader, as_mapping(vault.get("proxy")), scope.namespace, field="spec.vaultConfig.proxy"
    )
    proxy = VaultProxy(http=urls.http, https=urls.https, no_proxy=urls.no_proxy)
    return AzureKeyVault.from_spec(as_mapping(vault.get("azureKeyVault")), proxy)


@dataclass
class _Kept:
    value: SecretStr
    at: float


class VaultSecrets:
    def __init__(
        self, reach: Reach | None = None, *, ttl: float = TTL, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.reach = reach or Reach()
        self._ttl = ttl
        self._clock = clock
        self._kept: dict[tuple[AzureKeyVault, str], _Kept] = {}
        self._locks: dict[tuple[AzureKeyVault, str], asyncio.Lock] = {}

    async def read(self, scope: ActionsScope, reader: ObjectReader) -> SecretStr:
        """The value of the secret ``scope.secret_name`` in the scope's vault."""
        vault = await vault_of(scope, reader)
        key = (vault, scope.secret_name)
        async with self._locks.setdefault(key, asyncio.Lock()):
            kept = self._kept.get(key)
            if kept is not None and self._clock() - kept.at < self._ttl:
                return kept.value
            try:
                value = await azurekeyvault.read_secret(vault, scope.secret_name, reach=self.reach)
            except VaultError as exc:
                self._kept.pop(key, None)
                raise ScopeUnavailable(exc.reason, str(exc)) from None
            self._kept[key] = _Kept(value, self._clock())
            return value

    def forget(self, scope: ActionsScope) -> None:
        """Drop what is kept for ``scope``'s secret name (its value was found unusable)."""
        for key in [k for k in self._kept if k[1] == scope.secret_name]:
            del self._kept[key]
