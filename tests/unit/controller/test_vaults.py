"""The controller keeps what a vault answered for a short while: one read per key while it is fresh, a
new read once it is not, a failure never kept, and one read in flight however many ask at once."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from actions import azurekeyvault
from actions.azurekeyvault import AzureKeyVault, Reach, VaultError
from actions.redaction import SecretStr
from controller.executor import vaults
from controller.executor.errors import ScopeUnavailable
from statemachines.effects import ActionsScope
from tests.helpers import eventually

AKV = {"url": "https://kv.vault.azure.net/", "tenantId": "t", "clientId": "c", "certificatePath": "/c.pem"}
SCOPE = ActionsScope(
    config_url="https://github.com/org",
    namespace="ns",
    secret_name="github",
    vault={"type": "azure_key_vault", "azureKeyVault": AKV},
)


class Reads:
    def __init__(self) -> None:
        self.count = 0
        self.fail: VaultError | None = None
        self.gate: asyncio.Event | None = None

    async def __call__(self, vault: AzureKeyVault, name: str, *, reach: Reach) -> SecretStr:
        self.count += 1
        if self.gate is not None:
            await self.gate.wait()
        if self.fail is not None:
            raise self.fail
        return SecretStr(f'{{"github_token": "ghp_{self.count:032d}"}}')


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> Reads:
    fake = Reads()
    monkeypatch.setattr(azurekeyvault, "read_secret", fake)
    return fake


class NoReads:
    async def get(self, kind: str, namespace: str, name: str) -> dict[str, Any]:
        raise AssertionError("a scope without a vault proxy reads nothing from the cluster")


async def test_a_value_is_kept_while_fresh_and_read_again_after(reads: Reads) -> None:
    now = [0.0]
    kept = vaults.VaultSecrets(ttl=30.0, clock=lambda: now[0])
    first = await kept.read(SCOPE, NoReads())  # type: ignore[arg-type]
    now[0] = 29.0
    assert (await kept.read(SCOPE, NoReads())).reveal() == first.reveal()  # type: ignore[arg-type]
    assert reads.count == 1
    now[0] = 31.0
    assert (await kept.read(SCOPE, NoReads())).reveal() != first.reveal()  # type: ignore[arg-type]
    assert reads.count == 2


async def test_a_failure_is_not_kept_and_is_the_scopes_error(reads: Reads) -> None:
    kept = vaults.VaultSecrets(clock=lambda: 0.0)
    reads.fail = VaultError(azurekeyvault.SECRET_MISSING, "the Key Vault has no secret 'github'")
    with pytest.raises(ScopeUnavailable) as caught:
        await kept.read(SCOPE, NoReads())  # type: ignore[arg-type]
    assert (caught.value.error, str(caught.value)) == (
        "VaultSecretMissing",
        "the Key Vault has no secret 'github'",
    )
    reads.fail = None
    await kept.read(SCOPE, NoReads())  # type: ignore[arg-type]
    assert reads.count == 2


async def test_many_asking_at_once_share_one_read_and_forget_drops_it(reads: Reads) -> None:
    kept = vaults.VaultSecrets(clock=lambda: 0.0)
    reads.gate = asyncio.Event()
    asking = [asyncio.create_task(kept.read(SCOPE, NoReads())) for _ in range(5)]  # type: ignore[arg-type]
    await eventually(lambda: reads.count == 1, timeout=5, what="the first read in flight")
    reads.gate.set()
    assert len({value.reveal() for value in await asyncio.gather(*asking)}) == 1
    assert reads.count == 1
    kept.forget(SCOPE)
    await kept.read(SCOPE, NoReads())  # type: ignore[arg-type]
    assert reads.count == 2


async def test_a_vault_type_no_one_knows_is_named() -> None:
    scope = ActionsScope(
        config_url="https://github.com/org", namespace="ns", secret_name="g", vault={"type": "hashicorp"}
    )
    with pytest.raises(ScopeUnavailable) as caught:
        await vaults.VaultSecrets().read(scope, NoReads())  # type: ignore[arg-type]
    assert caught.value.error == "VaultConfigInvalid" and "'hashicorp' is unknown" in str(caught.value)
