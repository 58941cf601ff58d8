"""What the fake Azure knows and how it answers: Microsoft Entra's client-certificate token flow and
Key Vault's ``GET /secrets/{name}``, as Azure's SDKs meet them.

Token endpoint, ``POST /{tenant}/oauth2/v2.0/token`` (form ``grant_type=client_credentials``,
``client_id``, ``scope``, ``client_assertion_type`` jwt-bearer and ``client_assertion``): the assertion is
a JWT signed (PS256 or RS256) with the key of a certificate registered for the client in that tenant,
named by its ``x5t#S256`` or ``x5t`` thumbprint, for the audience of this very endpoint, issued by and
about the client, not expired. The answers are Entra's: an unknown tenant is 400 ``invalid_request``
(AADSTS90002), an unknown client 400 ``unauthorized_client`` (AADSTS700016), an assertion no registered
certificate signed 401 ``invalid_client`` (AADSTS700027). A token is an opaque string for the scope's
resource, good for an hour.

Key Vault, ``GET /secrets/{name}[/{version}]?api-version=...``: a request without a bearer token is
answered 401 with the challenge the SDK expects (``authorization`` naming the vault's tenant, ``resource``
``https://vault.azure.net``); a token of another tenant or resource 401; a client the vault's access
policy does not name 403 ``Forbidden``; no such secret 404 ``SecretNotFound``; else the secret bundle
(``value``, ``id``, ``attributes``). Every request is recorded (method, path, the client a token names),
never a token or a value.
"""

from __future__ import annotations

import base64
import hashlib
import secrets as random
import time
from dataclasses import dataclass, field
from typing import Any, Final

import jwt
from cryptography import x509
from cryptography.hazmat.primitives.serialization import Encoding

JWT_BEARER: Final = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
VAULT_RESOURCE: Final = "https://vault.azure.net"
AUTHORITY_HOST: Final = "login.microsoftonline.com"
TOKEN_SECONDS: Final = 3600


@dataclass(frozen=True)
class Answer:
    status: int
    body: dict[str, Any]
    headers: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class _Token:
    tenant: str
    client_id: str
    resource: str
    expires: float


@dataclass
class AzureFake:
    """One vault (``vault_tenant``'s) and the Entra tenants whose applications may ask for tokens."""

    vault_tenant: str
    secrets: dict[str, str] = field(default_factory=dict, repr=False)
    readers: set[str] = field(default_factory=set)  # client ids the vault's access policy lets read
    requests: list[tuple[str, str, str]] = field(default_factory=list)  # (method, path, client id)
    _certificates: dict[tuple[str, str], dict[str, x509.Certificate]] = field(default_factory=dict)
    _tokens: dict[str, _Token] = field(default_factory=dict, repr=False)
    _tenants: set[str] = field(default_factory=set)

    def __post_init__(self) -> None:
        self._tenants.add(self.vault_tenant)

    def add_tenant(self, tenant: str) -> None:
        self._tenants.add(tenant)

    def register(
        self, tenant: str, client_id: str, certificate_pem: bytes, *, reads_vault: bool = True
    ) -> None:
        """An application of ``tenant`` that authenticates with this certificate (its public part)."""
        self.add_tenant(tenant)
        certificate = x509.load_pem_x509_certificate(certificate_pem)
        der = certificate.public_bytes(Encoding.DER)
        by_thumbprint = self._certificates.setdefault((tenant, client_id), {})
        by_thumbprint[_b64url(hashlib.sha256(der).digest())] = certificate
        by_thumbprint[_b64url(hashlib.sha1(der).digest())] = certificate  # x5t is the SHA-1 thumbprint
        if reads_vault:
            self.readers.add(client_id)

    def set_secret(self, name: str, value: str) -> None:
        self.secrets[name] = value

    def requests_to(self, path_part: str) -> list[tuple[str, str, str]]:
        return [r for r in self.requests if path_part in r[1]]

    # -- Microsoft Entra ----------------------------------------------------------------------------------

    def token(self, tenant: str, form: dict[str, str], token_url: str) -> Answer:
        client_id = form.get("client_id", "")
        self.requests.append(("POST", f"/{tenant}/oauth2/v2.0/token", client_id))
        if tenant not in self._tenants:
            return _entra_error(400, "invalid_request", 90002, f"Tenant '{tenant}' not found.")
        if form.get("grant_type") != "client_credentials" or form.get("client_assertion_type") != JWT_BEARER:
            return _entra_error(
                400, "invalid_request", 900144, "The request body must contain a client assertion."
            )
        known = self._certificates.get((tenant, client_id))
        if not known:
            return _entra_error(
                400,
                "unauthorized_client",
                700016,
                f"Application with identifier '{client_id}' was not found in the directory '{tenant}'.",
            )
        assertion = form.get("client_assertion", "")
        if not self._signed_by(assertion, known, client_id, token_url):
            return _entra_error(
                401, "invalid_client", 700027, "Client assertion failed signature validation."
            )
        scope = form.get("scope", "")
        resource = scope.removesuffix("/.default")
        value = random.token_urlsafe(32)
        self._tokens[value] = _Token(tenant, client_id, resource, time.time() + TOKEN_SECONDS)
        return Answer(
            200,
            {
                "token_type": "Bearer",
                "expires_in": TOKEN_SECONDS,
                "ext_expires_in": TOKEN_SECONDS,
                "access_token": value,
            },
        )

    def _signed_by(
        self, assertion: str, known: dict[str, x509.Certificate], client_id: str, token_url: str
    ) -> bool:
        try:
            header = jwt.get_unverified_header(assertion)
        except jwt.PyJWTError:
            return False
        thumbprint = str(header.get("x5t#S256") or header.get("x5t") or "").rstrip("=")
        certificate = known.get(thumbprint)
        if certificate is None:
            return False
        try:
            claims = jwt.decode(
                assertion,
                certificate.public_key(),  # type: ignore[arg-type]
                algorithms=["PS256", "RS256"],
                audience=token_url,
                options={"require": ["exp", "iss", "sub", "aud"]},
            )
        except jwt.PyJWTError:
            return False
        return claims.get("iss") == client_id and claims.get("sub") == client_id

    # -- Key Vault ----------------------------------------------------------------------------------------

    def challenge(self) -> dict[str, str]:
        return {
            "WWW-Authenticate": f'Bearer authorization="https://{AUTHORITY_HOST}/{self.vault_tenant}", '
            f'resource="{VAULT_RESOURCE}"'
        }

    def get_secret(self, name: str, authorization: str, vault_url: str) -> Answer:
        token = self._tokens.get(authorization.removeprefix("Bearer ").strip()) if authorization else None
        self.requests.append(("GET", f"/secrets/{name}", token.client_id if token else ""))
        if token is None or token.expires < time.time():
            return Answer(
                401,
                _vault_error("Unauthorized", "AKV10000: Request is missing a Bearer or PoP token."),
                self.challenge(),
            )
        if token.tenant != self.vault_tenant or token.resource != VAULT_RESOURCE:
            return Answer(401, _vault_error("Unauthorized", "AKV10032: Invalid issuer."), self.challenge())
        if token.client_id not in self.readers:
            return Answer(
                403,
                _vault_error(
                    "Forbidden",
                    f"The user, group or application 'appid={token.client_id}' does not have secrets "
                    "get permission on key vault. Caller was not found on any access policy.",
                ),
            )
        if name not in self.secrets:
            return Answer(
                404,
                _vault_error(
                    "SecretNotFound", f"A secret with (name/id) {name} was not found in this key vault."
                ),
            )
        now = int(time.time())
        version = hashlib.sha256(name.encode()).hexdigest()[:32]
        return Answer(
            200,
            {
                "value": self.secrets[name],
                "id": f"{vault_url.rstrip('/')}/secrets/{name}/{version}",
                "attributes": {
                    "enabled": True,
                    "created": now,
                    "updated": now,
                    "recoveryLevel": "Recoverable",
                },
            },
        )


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode("ascii").rstrip("=")


def _entra_error(status: int, error: str, code: int, text: str) -> Answer:
    return Answer(
        status, {"error": error, "error_description": f"AADSTS{code}: {text}", "error_codes": [code]}
    )


def _vault_error(code: str, message: str) -> dict[str, Any]:
    return {"error": {"code": code, "message": message}}
