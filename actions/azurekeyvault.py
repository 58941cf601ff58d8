"""GitHub credentials read from Azure Key Vault, as upstream ARC reads them (``vaultConfig``, 0.12 on).

    vault = AzureKeyVault(url=..., tenant_id=..., client_id=..., certificate_path=..., proxy=proxy)
    value = await read_secret(vault, "github-app", reach=Reach.from_environ(os.environ))
    creds = credentials_from_vault(value, "github-app")

The secret's value is upstream's JSON: ``{"github_token": ...}`` or ``{"github_app_id": ...,
"github_app_installation_id": ..., "github_app_private_key": ...}``. The client is Azure's own SDK:
``azure-identity``'s client-certificate credential (the PEM at ``certificate_path`` holds the certificate
and its private key, as upstream's ``azidentity.ParseCertificates`` reads it) and
``azure-keyvault-secrets``' ``SecretClient``, both sending through one aiohttp session: through the vault's
proxy (``http``/``https`` URLs, the credentials in their user info; hosts that ``no_proxy`` lists go
direct), trusting the process's CA bundle (``Reach.ca_bundle``: the PEM ``$SSL_CERT_FILE`` names, which
replaces the system trust as OpenSSL and Go read it; else the system trust store). The Microsoft Entra
authority is the SDK's: ``login.microsoftonline.com``, or ``$AZURE_AUTHORITY_HOST`` for another cloud.

Every failure is a ``VaultError`` whose ``reason`` says what a user must fix and whose one-line
message names the field: the config itself (``VaultConfigInvalid``), the certificate file
(``VaultCertificateMissing``, ``VaultCertificateInvalid``), Microsoft Entra or the vault refusing the
client (``VaultAccessDenied``), no answer (``VaultUnreachable``), no such secret (``VaultSecretMissing``),
a secret that is no GitHub credential (``VaultSecretInvalid``). No message quotes the secret's value,
the certificate or a token; what the service said is quoted scrubbed and cut to its first line.
"""

from __future__ import annotations

import ipaddress
import json
import os
import re
import ssl
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final
from urllib.parse import urlsplit

from actions import credentials, errors, redaction
from actions.credentials import Credentials
from actions.redaction import SecretStr

AZURE_KEY_VAULT: Final = "azure_key_vault"
CA_BUNDLE_ENV: Final = "SSL_CERT_FILE"
FIELD: Final = "spec.vaultConfig.azureKeyVault"

# Azure's SDK tries a request this many times more before the error reaches the caller (whose own retry
# is paced by the work queue): bad input is reported in seconds, not after a minute of backoff.
SDK_RETRIES: Final = 1
_USER_INFO: Final = re.compile(r"//[^/@\s]*@")

CONFIG_INVALID: Final = "VaultConfigInvalid"
CERTIFICATE_MISSING: Final = "VaultCertificateMissing"
CERTIFICATE_INVALID: Final = "VaultCertificateInvalid"
ACCESS_DENIED: Final = "VaultAccessDenied"
UNREACHABLE: Final = "VaultUnreachable"
SECRET_MISSING: Final = "VaultSecretMissing"
SECRET_INVALID: Final = "VaultSecretInvalid"
REASONS: Final = (
    CONFIG_INVALID,
    CERTIFICATE_MISSING,
    CERTIFICATE_INVALID,
    ACCESS_DENIED,
    UNREACHABLE,
    SECRET_MISSING,
    SECRET_INVALID,
)


class VaultError(errors.Terminal):
    """The vault could not give the credentials; ``reason`` is one of ``REASONS``."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


@dataclass(frozen=True)
class VaultProxy:
    """The proxy a vault is reached through; the URLs may carry credentials (never shown)."""

    http: str = field(default="", repr=False)
    https: str = field(default="", repr=False)
    no_proxy: tuple[str, ...] = ()

    def for_host(self, host: str) -> dict[str, str]:
        """azure-core's ``proxies`` for a request to ``host``: none when ``no_proxy`` lists it."""
        if bypassed(host, self.no_proxy):
            return {}
        return {scheme: url for scheme, url in (("http", self.http), ("https", self.https)) if url}

    def as_go_config(self) -> dict[str, str]:
        """The form of Go's ``httpproxy.Config`` (upstream's listener config carries it as JSON)."""
        return {"HTTPProxy": self.http, "HTTPSProxy": self.https, "NoProxy": ",".join(self.no_proxy)}

    @classmethod
    def from_go_config(cls, data: Mapping[str, object]) -> VaultProxy:
        no_proxy = tuple(h.strip() for h in str(data.get("NoProxy") or "").split(",") if h.strip())
        return cls(
            http=str(data.get("HTTPProxy") or ""), https=str(data.get("HTTPSProxy") or ""), no_proxy=no_proxy
        )


@dataclass(frozen=True)
class AzureKeyVault:
    """``vaultConfig.azureKeyVault`` with the vault's resolved proxy."""

    url: str
    tenant_id: str
    client_id: str
    certificate_path: str
    proxy: VaultProxy = VaultProxy()

    def problem(self) -> str:
        """What keeps a client from being built at all (a field unset, a url no https URL), or ""."""
        named = (("url", self.url), ("tenantId", self.tenant_id), ("clientId", self.client_id))
        for key, value in (*named, ("certificatePath", self.certificate_path)):
            if not value:
                return f"{FIELD}.{key} is not set"
        parts = urlsplit(self.url)
        if parts.scheme != "https" or not parts.hostname:
            return f"{FIELD}.url is not an https:// URL with a host; write it as https://<vault>.vault.azure.net/"
        return ""

    @classmethod
    def from_spec(cls, block: Mapping[str, object], proxy: VaultProxy = VaultProxy()) -> AzureKeyVault:
        """From the CRD's ``azureKeyVault`` block (camelCase keys)."""

        def text(key: str) -> str:
            return str(block.get(key) or "").strip()

        return cls(text("url"), text("tenantId"), text("clientId"), text("certificatePath"), proxy)

    @classmethod
    def from_listener_config(cls, block: Mapping[str, object]) -> AzureKeyVault:
        """From the listener ``config.json``'s ``azure_key_vault`` block (upstream's snake_case keys)."""

        def text(key: str) -> str:
            value = block.get(key)
            return value.strip() if isinstance(value, str) else ""

        proxy = block.get("proxy")
        return cls(
            text("url"),
            text("tenant_id"),
            text("client_id"),
            text("certificate_path"),
            VaultProxy.from_go_config(proxy) if isinstance(proxy, Mapping) else VaultProxy(),
        )


@dataclass(frozen=True)
class Reach:
    """What the process brings to reach a vault: the CA bundle it trusts, and how it reads a file (the
    certificate) at a path of its filesystem."""

    ca_bundle: bytes | None = field(default=None, repr=False)
    read_file: Callable[[str], bytes | None] = field(default=lambda path: _read_file(path), repr=False)

    @classmethod
    def from_environ(cls, environ: Mapping[str, str]) -> Reach:
        """The process's own: ``$SSL_CERT_FILE`` when set (unreadable: the system trust), its files."""
        bundle = environ.get(CA_BUNDLE_ENV) or ""
        return cls(ca_bundle=_read_file(bundle) if bundle else None)


def _read_file(path: str) -> bytes | None:
    try:
        return Path(path).read_bytes()
    except OSError:
        return None


async def read_secret(vault: AzureKeyVault, name: str, *, reach: Reach) -> SecretStr:
    """The current value of the secret ``name``; ``VaultError`` naming what to fix."""
    # Imported here: only a scale set with a vault needs Azure's SDK.
    import aiohttp
    from azure.core.exceptions import (
        ClientAuthenticationError,
        HttpResponseError,
        ResourceNotFoundError,
        ServiceRequestError,
        ServiceResponseError,
    )
    from azure.core.pipeline.transport import AioHttpTransport
    from azure.identity.aio import CertificateCredential
    from azure.keyvault.secrets.aio import SecretClient

    if problem := vault.problem():
        raise VaultError(CONFIG_INVALID, problem)
    pem = reach.read_file(vault.certificate_path)
    if pem is None:
        raise VaultError(
            CERTIFICATE_MISSING,
            f"{FIELD}.certificatePath {vault.certificate_path} is no file this process can read; mount the "
            "PEM holding the client certificate and its private key at that path",
        )
    vault_host = urlsplit(vault.url).hostname or ""
    context = _ssl_context(reach.ca_bundle)
    session = aiohttp.ClientSession(connector=aiohttp.TCPConnector(ssl=context), trust_env=False)
    try:
        transport = AioHttpTransport(session=session, session_owner=False)
        try:
            credential = CertificateCredential(
                vault.tenant_id,
                vault.client_id,
                certificate_data=pem,
                transport=transport,
                proxies=vault.proxy.for_host(_authority_host()),
                retry_total=SDK_RETRIES,
            )
        except ValueError:
            raise VaultError(
                CERTIFICATE_INVALID,
                f"{FIELD}.certificatePath {vault.certificate_path} holds no PEM certificate with its RSA "
                "private key; put both in that file, unencrypted",
            ) from None
        async with (
            credential,
            SecretClient(
                vault.url,
                credential,
                transport=transport,
                proxies=vault.proxy.for_host(vault_host),
                retry_total=SDK_RETRIES,
            ) as client,
        ):
            secret = await client.get_secret(name)
    except ResourceNotFoundError:
        raise VaultError(
            SECRET_MISSING,
            f"the Key Vault {vault.url} has no secret {name!r} (spec.githubConfigSecret names it); create it "
            "with the GitHub credentials as JSON, or name another",
        ) from None
    except ClientAuthenticationError as exc:
        if "not configured to acquire tokens for tenant" in str(exc):
            raise VaultError(
                ACCESS_DENIED,
                f"the Key Vault {vault.url} belongs to another tenant than {FIELD}.tenantId "
                f"{vault.tenant_id}; set tenantId to the vault's tenant",
            ) from None
        raise VaultError(
            ACCESS_DENIED,
            f"Microsoft Entra or the Key Vault {vault.url} refused {FIELD}.clientId {vault.client_id} of "
            f"tenantId {vault.tenant_id} with its certificate: {_said(exc)}",
        ) from None
    except HttpResponseError as exc:
        if exc.status_code in (401, 403):
            raise VaultError(
                ACCESS_DENIED,
                f"the Key Vault {vault.url} does not let {FIELD}.clientId {vault.client_id} read the secret "
                f"{name!r} ({exc.status_code}): {_said(exc)}; grant it get on secrets",
            ) from None
        raise VaultError(
            UNREACHABLE, f"the Key Vault {vault.url} answered {exc.status_code}: {_said(exc)}"
        ) from None
    except (ServiceRequestError, ServiceResponseError, aiohttp.ClientError, OSError) as exc:
        through = " through spec.vaultConfig.proxy" if vault.proxy.for_host(vault_host) else ""
        raise VaultError(
            UNREACHABLE,
            f"the Key Vault {vault.url} ({FIELD}.url) or Microsoft Entra does not answer{through}: "
            f"{_said(exc)}",
        ) from None
    finally:
        await session.close()
    if secret.value is None:
        raise VaultError(SECRET_INVALID, f"the Key Vault secret {name!r} has no value")
    return SecretStr(secret.value)


def credentials_from_vault(value: SecretStr, name: str) -> Credentials:
    """The GitHub credentials of a vault secret's JSON; ``VaultError(SECRET_INVALID)`` otherwise."""
    try:
        data = json.loads(value.reveal())
    except ValueError:
        data = None
    if not isinstance(data, Mapping):
        raise VaultError(
            SECRET_INVALID,
            f"the Key Vault secret {name!r} is not a JSON object; store the GitHub credentials as "
            '{"github_token": ...} or {"github_app_id": ..., "github_app_installation_id": ..., '
            '"github_app_private_key": ...}',
        )
    embedded = dict(data)
    if embedded.get(credentials.INSTALLATION_ID) in (0, "0"):  # upstream's JSON without omitempty
        del embedded[credentials.INSTALLATION_ID]
    try:
        return credentials.from_mapping(embedded)
    except errors.InvalidCredentials as exc:
        message = str(exc).replace("the config Secret", f"the Key Vault secret {name!r}")
        raise VaultError(SECRET_INVALID, message) from None


def bypassed(host: str, no_proxy: Sequence[str]) -> bool:
    """Whether ``no_proxy`` (hosts, ``.suffix``/bare domains, IPs or CIDRs, ``*``) lists ``host``."""
    host = host.lower().strip("[]")
    for entry in (e.strip().lower() for e in no_proxy):
        name = entry.rsplit(":", 1)[0] if entry.count(":") == 1 else entry
        if not name:
            continue
        if name == "*" or host == name.lstrip(".") or host.endswith("." + name.lstrip(".")):
            return True
        try:
            if ipaddress.ip_address(host) in ipaddress.ip_network(name, strict=False):
                return True
        except ValueError:
            continue
    return False


def _authority_host() -> str:
    """The Microsoft Entra host the SDK will ask, as it chooses it."""
    authority = os.environ.get("AZURE_AUTHORITY_HOST") or "login.microsoftonline.com"
    return urlsplit(authority if "//" in authority else f"https://{authority}").hostname or authority


def _ssl_context(ca_bundle: bytes | None) -> ssl.SSLContext:
    if not ca_bundle:
        return ssl.create_default_context()
    try:
        return ssl.create_default_context(cadata=ca_bundle.decode("ascii", errors="replace"))
    except (ssl.SSLError, ValueError):
        return ssl.create_default_context()


def _said(exc: BaseException) -> str:
    """What the service (or the transport) said, on one line, scrubbed of anything token-shaped and of
    a URL's user info (a proxy's password)."""
    text = getattr(exc, "message", None) or str(exc) or type(exc).__name__
    first = next((line.strip() for line in str(text).splitlines() if line.strip()), type(exc).__name__)
    return redaction.scrub(_USER_INFO.sub("//", first))[:300]
