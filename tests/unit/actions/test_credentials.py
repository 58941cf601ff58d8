"""The credential forms of a config Secret: exactly one of a PAT or GitHub App credentials (§2.0, §5.2)."""

from __future__ import annotations

import base64

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from actions import credentials, errors
from actions.credentials import GitHubApp, PersonalAccessToken
from actions.redaction import SecretStr


def b64(value: str) -> str:
    return base64.b64encode(value.encode()).decode()


def test_pat_from_plain_values() -> None:
    parsed = credentials.from_mapping({"github_token": "ghp_abc\n", "other": "ignored"})
    assert parsed == PersonalAccessToken(token=SecretStr("ghp_abc"))


def test_pat_from_secret_data_is_base64_decoded() -> None:
    parsed = credentials.from_secret_data({"github_token": b64("ghp_abc")})
    assert isinstance(parsed, PersonalAccessToken)
    assert parsed.token.reveal() == "ghp_abc"


def test_app_from_plain_values_accepts_a_numeric_installation_id(rsa_pem: str) -> None:
    parsed = credentials.from_mapping(
        {"github_app_id": "12345", "github_app_installation_id": 678, "github_app_private_key": rsa_pem}
    )
    assert parsed == GitHubApp(app_id="12345", installation_id=678, private_key=SecretStr(rsa_pem))


def test_app_from_secret_data(rsa_pem: str) -> None:
    parsed = credentials.from_secret_data(
        {
            "github_app_id": b64("Iv1.client-id"),
            "github_app_installation_id": b64("678\n"),
            "github_app_private_key": b64(rsa_pem),
        }
    )
    assert isinstance(parsed, GitHubApp)
    assert (parsed.app_id, parsed.installation_id) == ("Iv1.client-id", 678)


def test_repr_never_shows_a_secret(rsa_pem: str) -> None:
    app = GitHubApp(app_id="1", installation_id=2, private_key=SecretStr(rsa_pem))
    pat = PersonalAccessToken(token=SecretStr("ghp_verysecret"))
    for text in (repr(app), str(app), repr(pat), str(pat), f"{pat.token}"):
        assert "PRIVATE KEY" not in text and "ghp_verysecret" not in text
    assert "***" in repr(pat)


def test_empty_values_count_as_absent() -> None:
    parsed = credentials.from_mapping(
        {"github_token": "t", "github_app_id": "", "github_app_private_key": " "}
    )
    assert isinstance(parsed, PersonalAccessToken)


FAILURES: dict[str, tuple[dict[str, object], str]] = {
    "nothing": ({}, "has no credentials: set github_token, or github_app_id"),
    "both forms": (
        {"github_token": "t", "github_app_id": "1"},
        "has both github_token and GitHub App keys (github_app_id); keep one form",
    ),
    "app without key": (
        {"github_app_id": "1", "github_app_installation_id": "2"},
        "incomplete GitHub App credentials: missing github_app_private_key",
    ),
    "app id only": (
        {"github_app_id": "1"},
        "missing github_app_installation_id, github_app_private_key",
    ),
    "installation id not a number": (
        {"github_app_id": "1", "github_app_installation_id": "abc", "github_app_private_key": "k"},
        "github_app_installation_id must be a positive integer",
    ),
    "installation id zero": (
        {"github_app_id": "1", "github_app_installation_id": 0, "github_app_private_key": "k"},
        "github_app_installation_id must be a positive integer",
    ),
    "key not PEM": (
        {"github_app_id": "1", "github_app_installation_id": "2", "github_app_private_key": "not-a-key"},
        "github_app_private_key is not an unencrypted PEM private key",
    ),
    "wrong type": ({"github_token": ["t"]}, "github_token in the config Secret must be a string"),
}


@pytest.mark.parametrize("name", FAILURES)
def test_invalid_credentials_fail_in_one_line(name: str) -> None:
    data, message = FAILURES[name]
    with pytest.raises(errors.InvalidCredentials) as caught:
        credentials.from_mapping(data)
    assert message in str(caught.value)
    assert "\n" not in str(caught.value)
    assert isinstance(caught.value, errors.Terminal)


def test_a_non_rsa_key_is_refused() -> None:
    pem = (
        ec.generate_private_key(ec.SECP256R1())
        .private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
        .decode()
    )
    data = {"github_app_id": "1", "github_app_installation_id": "2", "github_app_private_key": pem}
    with pytest.raises(errors.InvalidCredentials, match="must be an RSA key"):
        credentials.from_mapping(data)


def test_bad_base64_names_the_key_not_the_value() -> None:
    with pytest.raises(errors.InvalidCredentials) as caught:
        credentials.from_secret_data({"github_token": "ghp_not*base64"})
    assert "github_token" in str(caught.value)
    assert "ghp_not" not in str(caught.value)


def test_bad_key_error_does_not_chain_the_parser_error() -> None:
    data = {"github_app_id": "1", "github_app_installation_id": "2", "github_app_private_key": "-----BEGIN x"}
    with pytest.raises(errors.InvalidCredentials) as caught:
        credentials.from_mapping(data)
    assert caught.value.__cause__ is None
    assert caught.value.__suppress_context__
