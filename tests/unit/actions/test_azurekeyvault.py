"""The vault client's pure parts: which hosts go around the vault's proxy, the proxy in the form upstream's
listener reads, the GitHub credentials a vault secret holds, and errors that never show a secret."""

from __future__ import annotations

import json

import pytest

from actions import azurekeyvault
from actions.azurekeyvault import AzureKeyVault, VaultError, VaultProxy
from actions.credentials import GitHubApp, PersonalAccessToken
from actions.redaction import SecretStr

TOKEN = "ghp_vaultUnitToken000000000000000001"


@pytest.mark.parametrize(
    ("host", "no_proxy", "bypassed"),
    [
        ("arcsm.vault.azure.net", ["vault.azure.net"], True),
        ("arcsm.vault.azure.net", [".vault.azure.net"], True),
        ("login.microsoftonline.com", [".vault.azure.net"], False),
        ("10.1.2.3", ["10.0.0.0/8"], True),
        ("anything", ["*"], True),
        ("arcsm.vault.azure.net", ["arcsm.vault.azure.net:443"], True),
        ("evilvault.azure.net", ["vault.azure.net"], False),
    ],
)
def test_no_proxy_lists_hosts_domains_networks_and_everything(
    host: str, no_proxy: list[str], bypassed: bool
) -> None:
    assert azurekeyvault.bypassed(host, no_proxy) is bypassed


def test_the_proxy_goes_to_the_listener_in_gos_httpproxy_form_and_back() -> None:
    proxy = VaultProxy(http="", https="http://u:p@proxy:3128", no_proxy=("a.internal", ".corp"))
    assert proxy.as_go_config() == {
        "HTTPProxy": "",
        "HTTPSProxy": "http://u:p@proxy:3128",
        "NoProxy": "a.internal,.corp",
    }
    assert VaultProxy.from_go_config(proxy.as_go_config()) == proxy
    assert proxy.for_host("kv.vault.azure.net") == {"https": "http://u:p@proxy:3128"}
    assert proxy.for_host("x.corp") == {}
    assert "u:p" not in repr(proxy)


def test_a_vault_secret_holds_upstreams_json_of_either_credential_form(rsa_pem: str) -> None:
    token = azurekeyvault.credentials_from_vault(SecretStr(json.dumps({"github_token": TOKEN})), "gh")
    assert token == PersonalAccessToken(token=SecretStr(TOKEN))
    # Upstream's AppConfig JSON, with the zero values its encoder writes for the other form.
    app = {
        "github_app_id": "123",
        "github_app_installation_id": 456,
        "github_app_private_key": rsa_pem,
        "github_token": "",
    }
    found = azurekeyvault.credentials_from_vault(SecretStr(json.dumps(app)), "gh")
    assert isinstance(found, GitHubApp) and (found.app_id, found.installation_id) == ("123", 456)


@pytest.mark.parametrize(
    ("value", "said"),
    [
        (TOKEN, "is not a JSON object"),
        ('["github_token"]', "is not a JSON object"),
        ('{"token": "x"}', "the Key Vault secret 'gh' has no credentials"),
        (
            json.dumps({"github_token": TOKEN, "github_app_id": "1"}),
            "has both github_token and GitHub App keys",
        ),
    ],
)
def test_a_vault_secret_that_is_no_github_credential_is_named_never_quoted(value: str, said: str) -> None:
    with pytest.raises(VaultError) as caught:
        azurekeyvault.credentials_from_vault(SecretStr(value), "gh")
    assert caught.value.reason == azurekeyvault.SECRET_INVALID
    assert said in str(caught.value) and TOKEN not in str(caught.value)


@pytest.mark.parametrize(
    ("vault", "said"),
    [
        (AzureKeyVault("", "t", "c", "/c.pem"), "azureKeyVault.url is not set"),
        (
            AzureKeyVault("https://kv.vault.azure.net/", "t", "", "/c.pem"),
            "azureKeyVault.clientId is not set",
        ),
        (AzureKeyVault("http://kv.vault.azure.net/", "t", "c", "/c.pem"), "url is not an https:// URL"),
        (AzureKeyVault("https://kv.vault.azure.net/", "t", "c", "/c.pem"), ""),
    ],
)
def test_a_vault_no_client_can_be_built_for_says_which_field(vault: AzureKeyVault, said: str) -> None:
    assert vault.problem() == said or (said and said in vault.problem())


async def test_a_certificate_path_with_no_file_is_named_before_any_request() -> None:
    vault = AzureKeyVault("https://kv.vault.azure.net/", "t", "c", "/nonexistent/client.pem")
    with pytest.raises(VaultError) as caught:
        await azurekeyvault.read_secret(vault, "gh", reach=azurekeyvault.Reach())
    assert caught.value.reason == azurekeyvault.CERTIFICATE_MISSING
    assert "certificatePath /nonexistent/client.pem" in str(caught.value)


def test_what_a_server_or_proxy_said_is_one_line_without_a_password_or_token() -> None:
    said = azurekeyvault._said(
        Exception(
            f"407, message='Proxy Authentication Required', url='http://u:s3cret@proxy:3128'\nBearer {TOKEN}"
        )
    )
    assert said == "407, message='Proxy Authentication Required', url='http://proxy:3128'"
