"""Config URL parsing (§6.1, §1.9): scope, GitHub API base, hosted vs GHES, labels, service URLs."""

from __future__ import annotations

import pytest

from actions import errors, urls
from actions.urls import Scope

VALID = {
    # name: (config URL, scope, enterprise, organization, repository, API base)
    "org on github.com": (
        "https://github.com/my-org",
        Scope.ORGANIZATION, "", "my-org", "", "https://api.github.com",
    ),
    "repo on github.com": (
        "https://github.com/my-org/my-repo",
        Scope.REPOSITORY, "", "my-org", "my-repo", "https://api.github.com",
    ),
    "enterprise on github.com": (
        "https://github.com/enterprises/my-ent",
        Scope.ENTERPRISE, "my-ent", "", "", "https://api.github.com",
    ),
    "enterprises matched case-insensitively": (
        "https://github.com/Enterprises/my-ent",
        Scope.ENTERPRISE, "my-ent", "", "", "https://api.github.com",
    ),
    "www.github.com routes to api.github.com": (
        "https://www.github.com/my-org",
        Scope.ORGANIZATION, "", "my-org", "", "https://api.github.com",
    ),
    "hosted host case-insensitive": (
        "https://GitHub.com/my-org/",
        Scope.ORGANIZATION, "", "my-org", "", "https://api.GitHub.com",
    ),
    "github.localhost is hosted": (
        "http://github.localhost/my-org",
        Scope.ORGANIZATION, "", "my-org", "", "http://api.github.localhost",
    ),
    "GHE.com data residency is hosted": (
        "https://acme.ghe.com/my-org/my-repo",
        Scope.REPOSITORY, "", "my-org", "my-repo", "https://api.acme.ghe.com",
    ),
    "GHES org": (
        "https://ghes.example.com/my-org",
        Scope.ORGANIZATION, "", "my-org", "", "https://ghes.example.com/api/v3",
    ),
    "GHES enterprise with a port": (
        "https://ghes.example.com:8443/enterprises/ent",
        Scope.ENTERPRISE, "ent", "", "", "https://ghes.example.com:8443/api/v3",
    ),
    "GHES over http on loopback": (
        "http://127.0.0.1:8080/owner/repo",
        Scope.REPOSITORY, "", "owner", "repo", "http://127.0.0.1:8080/api/v3",
    ),
    "trailing slashes trimmed": (
        "https://github.com/my-org/my-repo///",
        Scope.REPOSITORY, "", "my-org", "my-repo", "https://api.github.com",
    ),
    "surrounding whitespace trimmed": (
        "  https://github.com/my-org \n",
        Scope.ORGANIZATION, "", "my-org", "", "https://api.github.com",
    ),
}  # fmt: skip


@pytest.mark.parametrize("name", VALID)
def test_valid_config_urls(name: str) -> None:
    raw, scope, enterprise, organization, repository, api_base = VALID[name]
    parsed = urls.parse_config_url(raw, environ={})
    assert (parsed.scope, parsed.enterprise, parsed.organization, parsed.repository) == (
        scope,
        enterprise,
        organization,
        repository,
    )
    assert parsed.api_base == api_base
    assert not parsed.url.endswith("/")


def test_url_sent_to_runner_registration_is_trimmed() -> None:
    assert urls.parse_config_url("https://github.com/my-org/", environ={}).url == "https://github.com/my-org"


@pytest.mark.parametrize(
    ("raw", "path"),
    [
        ("https://github.com/my-org", "/orgs/my-org/actions/runners/registration-token"),
        ("https://github.com/o/r", "/repos/o/r/actions/runners/registration-token"),
        ("https://github.com/enterprises/e", "/enterprises/e/actions/runners/registration-token"),
    ],
)
def test_registration_token_url_per_scope(raw: str, path: str) -> None:
    assert urls.parse_config_url(raw, environ={}).registration_token_url == "https://api.github.com" + path


def test_force_ghes_env_makes_any_host_ghes() -> None:
    parsed = urls.parse_config_url("https://github.com/my-org", environ={urls.FORCE_GHES_ENV: ""})
    assert not parsed.hosted
    assert parsed.api_base == "https://github.com/api/v3"


def test_hosted_flag() -> None:
    assert urls.parse_config_url("https://github.com/o", environ={}).hosted
    assert not urls.parse_config_url("https://github.example.com/o", environ={}).hosted
    assert not urls.parse_config_url("https://ghe.com.example.org/o", environ={}).hosted


INVALID = {
    "empty": ("", "must start with https://"),
    "no scheme": ("github.com/my-org", "must start with https://"),
    "ftp scheme": ("ftp://github.com/my-org", "must start with https://"),
    "no path": ("https://github.com", "expected https://<host>/<org>"),
    "only slashes": ("https://github.com///", "expected https://<host>/<org>"),
    "three segments": ("https://github.com/a/b/c", "expected https://<host>/<org>"),
    "empty middle segment": ("https://github.com/a//b", "expected https://<host>/<org>"),
    "no host": ("https:///my-org", "no host"),
    "bad port": ("https://github.com:port/my-org", "does not parse"),
}


@pytest.mark.parametrize("name", INVALID)
def test_invalid_config_urls_fail_in_one_line(name: str) -> None:
    raw, reason = INVALID[name]
    with pytest.raises(errors.InvalidConfigUrl) as caught:
        urls.parse_config_url(raw, environ={})
    message = str(caught.value)
    assert reason in message
    assert "\n" not in message
    assert isinstance(caught.value, ValueError) and isinstance(caught.value, errors.Terminal)


def test_credentials_in_a_config_url_are_refused_and_not_echoed() -> None:
    with pytest.raises(errors.InvalidConfigUrl) as caught:
        urls.parse_config_url("https://user:ghp_secretsecret@github.com/my-org", environ={})
    assert "ghp_secretsecret" not in str(caught.value)
    assert "credentials" in str(caught.value)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("https://github.com/org", {"enterprise": "", "organization": "org", "repository": ""}),
        ("https://github.com/org/repo", {"enterprise": "", "organization": "org", "repository": "repo"}),
        ("https://github.com/enterprises/ent", {"enterprise": "ent", "organization": "", "repository": ""}),
        ("https://github.com/-org_/.repo.", {"enterprise": "", "organization": "org", "repository": "repo"}),
    ],
)
def test_labels(raw: str, expected: dict[str, str]) -> None:
    assert urls.parse_config_url(raw, environ={}).labels() == expected


def test_long_label_values_are_cut_to_58_plus_trim() -> None:
    long = "a" * 64
    assert urls.trim_label_value(long) == "a" * 58 + "-trim"
    assert len(urls.trim_label_value(long)) == 63
    assert urls.trim_label_value("b" * 63) == "b" * 63


@pytest.mark.parametrize(
    ("base", "path", "query", "expected"),
    [
        (
            "https://svc/tenant/1/",
            "_apis/runtime/runnerscalesets/7",
            None,
            "https://svc/tenant/1/_apis/runtime/runnerscalesets/7?api-version=6.0-preview",
        ),
        (
            "https://svc/tenant/1",
            "/_apis/runtime/runnergroups/",
            {"groupName": "my group&co"},
            "https://svc/tenant/1/_apis/runtime/runnergroups/?api-version=6.0-preview&groupName=my+group%26co",
        ),
        (
            "https://svc/t/",
            "_apis/x?api-version=7.0",
            None,
            "https://svc/t/_apis/x?api-version=7.0",
        ),
    ],
)
def test_service_url_joins_and_adds_api_version(
    base: str, path: str, query: dict[str, str] | None, expected: str
) -> None:
    assert urls.service_url(base, path, query) == expected
