"""The fake Azure as the tests use it (``sim.keyvault``): a vault holding a GitHub token under
``VAULT_SECRET``, an application that may read it with a client certificate, the proxy that reaches
them (asking for credentials), and the certificate and CA bundle as files a process reads.

    async with azurevault.serving(tmp_path / "akv", token=PAT) as vault:
        vault.certificate_path, vault.ca_path, vault.proxy.url, vault.url
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from sim.keyvault import server, tunnel
from sim.keyvault.service import AzureFake
from tests import keys

TENANT = "7f3c1a52-arcsm-e2e-tenant"
OTHER_TENANT = "another-tenant"
CLIENT = "c0ffee00-arcsm-e2e-client"
VAULT = "arcsm-e2e"
VAULT_SECRET = "github-credentials"
NOT_CREDENTIALS = "not-github-credentials"
PROXY_USER, PROXY_PASSWORD = "vault-egress", "vaultProxyPassw0rdNeverShown"


@dataclass
class Vault:
    fake: AzureFake
    proxy: tunnel.Tunnel
    served: server.Served
    directory: Path
    key_pem: bytes

    @property
    def url(self) -> str:
        return self.served.vault_url(VAULT)

    @property
    def certificate_path(self) -> Path:
        return self.directory / "client.pem"

    @property
    def ca_path(self) -> Path:
        return self.directory / "ca.crt"

    @property
    def proxy_url_with_credentials(self) -> str:
        return f"http://{PROXY_USER}:{PROXY_PASSWORD}@127.0.0.1:{self.proxy.port}"

    def secrets(self) -> tuple[str, ...]:
        """What must never be journaled, logged or served: the vault secret, the proxy password, a line
        of the private key."""
        key_body = self.key_pem.decode().splitlines()[3]
        return (PROXY_PASSWORD, key_body, self.fake.secrets[VAULT_SECRET])


def client_certificate() -> tuple[bytes, bytes]:
    """A self-signed certificate and its RSA key, as an Entra application's credential is."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    return keys.self_signed(key, "arcsm-e2e"), pem


@contextlib.asynccontextmanager
async def serving(directory: Path, *, token: str) -> AsyncIterator[Vault]:
    """The fake Azure and its proxy until the block ends; the certificate and CA under ``directory``."""
    certificate, key = client_certificate()
    fake = AzureFake(TENANT)
    fake.add_tenant(OTHER_TENANT)
    fake.register(TENANT, CLIENT, certificate)
    fake.set_secret(VAULT_SECRET, json.dumps({"github_token": token}))
    fake.set_secret(NOT_CREDENTIALS, json.dumps({"token": "x", "github_app_id": "1"}))
    async with server.serving(fake) as served, tunnel.serving(served, (PROXY_USER, PROXY_PASSWORD)) as proxy:
        vault = Vault(fake, proxy, served, directory, key)
        write_files(vault, certificate)
        yield vault


def write_files(vault: Vault, certificate: bytes) -> None:
    """The PEM of the certificate with its key, and the fake Azure's CA bundle."""
    vault.directory.mkdir(parents=True, exist_ok=True)
    vault.certificate_path.write_bytes(certificate + vault.key_pem)
    vault.ca_path.write_bytes(vault.served.ca_pem)
