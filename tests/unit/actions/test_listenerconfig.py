"""The listener's config.json (spec §5.2): an upstream-shaped config loads, every validation rule fails with
one line naming the key, and no credential shows in a repr or an error."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from actions import errors, listenerconfig
from actions.credentials import GitHubApp, PersonalAccessToken
from actions.listenerconfig import ListenerConfigError
from actions.listenermetrics import MetricSpec
from actions.redaction import SecretStr

TOKEN = "ghp_listenerConfigUnitToken00000001"
AKV = {
    "url": "https://arcsm.vault.azure.net/",
    "tenant_id": "tenant",
    "client_id": "client",
    "certificate_path": "/etc/akv/client.pem",
}


def upstream(**overrides: Any) -> dict[str, Any]:
    """A config as upstream's AL controller writes it (every key of §5.2)."""
    config: dict[str, Any] = {
        "configure_url": "https://github.com/my-org",
        "vault_type": "",
        "vault_lookup_key": "",
        "github_app_id": "",
        "github_app_installation_id": 0,
        "github_app_private_key": "",
        "github_token": TOKEN,
        "ephemeral_runner_set_namespace": "arc-runners",
        "ephemeral_runner_set_name": "arc-runner-set-xyz",
        "max_runners": 5,
        "min_runners": 1,
        "runner_scale_set_id": 42,
        "runner_scale_set_name": "arc-runner-set",
        "server_root_ca": "",
        "log_level": "debug",
        "log_format": "text",
        "metrics_addr": ":8080",
        "metrics_endpoint": "/metrics",
        "metrics": None,
    }
    config.update(overrides)
    return config


def parse(**overrides: Any) -> listenerconfig.ListenerConfig:
    return listenerconfig.parse(json.dumps(upstream(**overrides)))


def test_an_upstream_config_loads() -> None:
    config = parse()
    assert config.config_url.organization == "my-org"
    assert config.credentials == PersonalAccessToken(token=SecretStr(TOKEN))
    assert (config.ephemeral_runner_set_namespace, config.ephemeral_runner_set_name) == (
        "arc-runners",
        "arc-runner-set-xyz",
    )
    assert (config.runner_scale_set_id, config.min_runners, config.max_runners) == (42, 1, 5)
    assert (config.metrics_addr, config.metrics_endpoint, config.metrics) == (":8080", "/metrics", None)
    assert TOKEN not in repr(config)


def test_an_upstream_vault_config_names_the_vault_and_no_credentials() -> None:
    proxy = {"HTTPProxy": "", "HTTPSProxy": "http://u:p@proxy:3128", "NoProxy": "a.internal, .corp"}
    config = parse(
        vault_type="azure_key_vault",
        vault_lookup_key="github-app",
        github_token="",
        azure_key_vault={**AKV, "proxy": proxy},
    )
    assert config.credentials is None and config.vault_lookup_key == "github-app"
    assert config.vault is not None
    assert (config.vault.url, config.vault.tenant_id, config.vault.client_id) == (
        AKV["url"],
        "tenant",
        "client",
    )
    assert config.vault.certificate_path == "/etc/akv/client.pem"
    assert config.vault.proxy.for_host("arcsm.vault.azure.net") == {"https": "http://u:p@proxy:3128"}
    assert config.vault.proxy.for_host("x.corp") == {}
    assert "u:p" not in repr(config)


def test_app_credentials(rsa_pem: str) -> None:
    config = parse(
        github_token="",
        github_app_id="123",
        github_app_installation_id=456,
        github_app_private_key=rsa_pem,
    )
    assert isinstance(config.credentials, GitHubApp)
    assert config.credentials.installation_id == 456
    assert "PRIVATE KEY" not in repr(config)


def test_defaults_for_absent_optional_keys() -> None:
    minimal = {
        "configure_url": "https://github.com/my-org/app",
        "github_token": TOKEN,
        "ephemeral_runner_set_namespace": "ns",
        "ephemeral_runner_set_name": "ers",
        "runner_scale_set_id": 1,
        "max_runners": 2,
        "some_future_key": {"ignored": True},
    }
    config = listenerconfig.from_mapping(minimal)
    assert (config.min_runners, config.log_level, config.log_format, config.metrics_addr) == (
        0,
        "debug",
        "text",
        "",
    )
    assert config.config_url.repository == "app"


def test_metrics_spec() -> None:
    config = parse(
        metrics={
            "gauges": {"gha_assigned_jobs": {"labels": ["name", "namespace"]}},
            "counters": {"gha_started_jobs_total": {"labels": ["repository", "job_name"]}},
            "histograms": {
                "gha_job_startup_duration_seconds": {"labels": [], "buckets": [1, 2.5, 10]},
                "gha_some_future_metric": {"labels": []},
            },
        }
    )
    assert config.metrics is not None
    assert config.metrics.gauges == {"gha_assigned_jobs": MetricSpec(("name", "namespace"))}
    assert config.metrics.histograms["gha_job_startup_duration_seconds"].buckets == (1.0, 2.5, 10.0)
    assert "gha_some_future_metric" not in config.metrics.histograms


ERRORS: dict[str, tuple[dict[str, Any], str]] = {
    "no url": ({"configure_url": ""}, "configure_url is not set"),
    "bad url": ({"configure_url": "ftp://github.com/x"}, "invalid GitHub config URL"),
    "no namespace": ({"ephemeral_runner_set_namespace": ""}, "ephemeral_runner_set_namespace and"),
    "no name": ({"ephemeral_runner_set_name": None}, "ephemeral_runner_set_name must both be set"),
    "no scale set id": ({"runner_scale_set_id": 0}, "runner_scale_set_id is missing or 0"),
    "max below min": (
        {"min_runners": 4, "max_runners": 3},
        "min_runners 4 cannot be greater than max_runners 3",
    ),
    "negative min": ({"min_runners": -1}, "min_runners is -1"),
    "string number": ({"max_runners": "5"}, "max_runners must be an integer"),
    "boolean number": ({"runner_scale_set_id": True}, "runner_scale_set_id must be an integer"),
    "number string": ({"ephemeral_runner_set_name": 5}, "ephemeral_runner_set_name must be a string"),
    "no credentials": ({"github_token": ""}, "has no credentials"),
    "two credential forms": ({"github_app_id": "1"}, "has both github_token and GitHub App keys"),
    "vault without lookup key": ({"vault_type": "azure_key_vault"}, "vault_lookup_key is not set"),
    "unknown vault": (
        {"vault_type": "hashicorp", "vault_lookup_key": "k"},
        "vault_type 'hashicorp' is unknown",
    ),
    "azure vault without its object": (
        {"vault_type": "azure_key_vault", "vault_lookup_key": "k"},
        "vault_type is azure_key_vault but the azure_key_vault object is missing",
    ),
    "azure vault without a client": (
        {
            "vault_type": "azure_key_vault",
            "vault_lookup_key": "k",
            "azure_key_vault": {**AKV, "client_id": ""},
        },
        "spec.vaultConfig.azureKeyVault.clientId is not set",
    ),
    "log level": ({"log_level": "verbose"}, "log_level 'verbose' is not one of"),
    "log format": ({"log_format": "yaml"}, "log_format 'yaml' is not one of text, json"),
    "metrics address": ({"metrics_addr": "localhost"}, "metrics_addr 'localhost' must be HOST:PORT"),
    "metrics shape": ({"metrics": []}, "metrics must be an object"),
    "metrics label": (
        {"metrics": {"gauges": {"gha_busy_runners": {"labels": ["pod"]}}}},
        "metrics.gauges.gha_busy_runners.labels has unknown label pod",
    ),
    "metrics buckets": (
        {
            "metrics": {
                "histograms": {"gha_job_execution_duration_seconds": {"labels": [], "buckets": [5, 1]}}
            }
        },
        "buckets must be strictly increasing",
    ),
}


@pytest.mark.parametrize("name", list(ERRORS))
def test_invalid_configs_fail_with_one_line(name: str) -> None:
    overrides, expected = ERRORS[name]
    with pytest.raises(ListenerConfigError) as caught:
        parse(**overrides)
    message = str(caught.value)
    assert message.startswith("the listener config config.json: ")
    assert expected in message
    assert "\n" not in message and TOKEN not in message
    assert isinstance(caught.value, errors.InvalidConfiguration)


def test_json_errors_do_not_quote_the_text() -> None:
    with pytest.raises(ListenerConfigError, match=r"is not valid JSON \(line 1\)") as caught:
        listenerconfig.parse('{"github_token": "' + TOKEN + '", oops}')
    assert TOKEN not in str(caught.value) and caught.value.__cause__ is None
    with pytest.raises(ListenerConfigError, match="must be a JSON object"):
        listenerconfig.parse("[1, 2]")


def test_load_from_a_file(tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    path.write_text(json.dumps(upstream()))
    assert listenerconfig.load(path).runner_scale_set_id == 42
    with pytest.raises(ListenerConfigError, match=r"cannot read the listener config .*missing\.json: "):
        listenerconfig.load(tmp_path / "missing.json")
    path.write_text(json.dumps(upstream(runner_scale_set_id=0)))
    with pytest.raises(ListenerConfigError, match=r"listener config .*config\.json: runner_scale_set_id"):
        listenerconfig.load(path)


def test_config_path_from_the_environment() -> None:
    assert listenerconfig.config_path({}) == Path("/etc/gha-listener/config.json")
    assert listenerconfig.config_path({"LISTENER_CONFIG_PATH": "/run/listener/config.json"}) == Path(
        "/run/listener/config.json"
    )
