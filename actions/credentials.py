"""The two credential forms a config Secret holds, read and validated (spec §2.0, §5.2).

    github_token                                                          → PersonalAccessToken
    github_app_id + github_app_installation_id + github_app_private_key   → GitHubApp

Exactly one form must be present. ``from_secret_data`` reads a Secret's ``data`` (values base64, as the
API returns them); ``from_mapping`` reads plain values (a Secret's ``stringData``, a vault's JSON, the
listener's ``config.json``, where the installation id may be a number). Other keys are ignored.
Tokens and ids are stripped of surrounding whitespace (a trailing newline from ``--from-file`` is
common); the private key is checked to be a PEM RSA key here, so a bad key fails at load with a
one-line error instead of at the first request. No value is ever quoted in an error.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from cryptography.exceptions import UnsupportedAlgorithm
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.hazmat.primitives.serialization import load_pem_private_key

from actions import errors
from actions.redaction import SecretStr

APP_ID: Final = "github_app_id"
INSTALLATION_ID: Final = "github_app_installation_id"
PRIVATE_KEY: Final = "github_app_private_key"
TOKEN: Final = "github_token"
APP_KEYS: Final = (APP_ID, INSTALLATION_ID, PRIVATE_KEY)


@dataclass(frozen=True)
class PersonalAccessToken:
    token: SecretStr


@dataclass(frozen=True)
class GitHubApp:
    """A GitHub App installation. ``app_id`` is the App's id or client id (the JWT issuer)."""

    app_id: str
    installation_id: int
    private_key: SecretStr


Credentials = PersonalAccessToken | GitHubApp


def from_secret_data(data: Mapping[str, str | bytes]) -> Credentials:
    """Credentials from a Secret's ``data``: every value is base64."""
    decoded: dict[str, object] = {}
    for key in (TOKEN, *APP_KEYS):
        if key in data:
            decoded[key] = _b64decode(key, data[key])
    return from_mapping(decoded)


def from_mapping(data: Mapping[str, object]) -> Credentials:
    """Credentials from plain values; raise ``InvalidCredentials`` naming what is wrong."""
    token = _text(data, TOKEN).strip()
    present = [key for key in APP_KEYS if _text(data, key).strip()]
    if token and present:
        raise errors.InvalidCredentials(
            f"the config Secret has both {TOKEN} and GitHub App keys ({', '.join(present)}); keep one form"
        )
    if token:
        return PersonalAccessToken(token=SecretStr(token))
    if not present:
        raise errors.InvalidCredentials(
            f"the config Secret has no credentials: set {TOKEN}, or {APP_ID}, {INSTALLATION_ID} and "
            f"{PRIVATE_KEY}"
        )
    missing = [key for key in APP_KEYS if key not in present]
    if missing:
        raise errors.InvalidCredentials(
            f"the config Secret has incomplete GitHub App credentials: missing {', '.join(missing)}"
        )
    return GitHubApp(
        app_id=_text(data, APP_ID).strip(),
        installation_id=_installation_id(data[INSTALLATION_ID]),
        private_key=_private_key(_text(data, PRIVATE_KEY)),
    )


def _text(data: Mapping[str, object], key: str) -> str:
    value = data.get(key)
    if value is None:
        return ""
    if isinstance(value, bytes):
        try:
            return value.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise errors.InvalidCredentials(f"{key} in the config Secret is not UTF-8 text") from exc
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise errors.InvalidCredentials(f"{key} in the config Secret must be a string")
    return str(value)


def _b64decode(key: str, value: str | bytes) -> bytes:
    try:
        return base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise errors.InvalidCredentials(f"{key} in the config Secret's data is not valid base64") from exc


def _installation_id(value: object) -> int:
    text = value.decode("utf-8", errors="replace") if isinstance(value, bytes) else str(value)
    text = text.strip()
    if isinstance(value, bool) or not text.isdigit() or int(text) <= 0:
        raise errors.InvalidCredentials(f"{INSTALLATION_ID} must be a positive integer")
    return int(text)


def _private_key(pem: str) -> SecretStr:
    try:
        key = load_pem_private_key(pem.encode("utf-8"), password=None)
    except (ValueError, TypeError, UnsupportedAlgorithm):
        # Not chained: a parser's message has no business near key material.
        raise errors.InvalidCredentials(
            f"{PRIVATE_KEY} is not an unencrypted PEM private key; paste the .pem file GitHub generated"
        ) from None
    if not isinstance(key, rsa.RSAPrivateKey):
        raise errors.InvalidCredentials(f"{PRIVATE_KEY} must be an RSA key (GitHub Apps sign with RS256)")
    return SecretStr(pem)
