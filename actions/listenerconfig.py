"""The listener's ``config.json`` (spec §5.2): read, checked and typed, so a config written for upstream
ARC's listener (the AL controller's ``<AL>-config`` Secret) runs arcsm's listener unchanged.

    config = listenerconfig.load(Path("/etc/gha-listener/config.json"))

Validation follows upstream and says what to fix in one line: the URL is set and parses; the
EphemeralRunnerSet namespace and name are set; ``runner_scale_set_id`` is not 0; ``0 ≤ min_runners ≤
max_runners``; either a vault (type plus lookup key) or exactly one credential form. Keys the listener
does not know are ignored, as Go's decoder ignores them. Credentials are read by
``credentials.from_mapping`` into ``SecretStr``s, so neither this module's errors nor a config's ``repr``
can show them.

A config with ``vault_type`` ``azure_key_vault`` carries no credentials: it names the vault
(``azure_key_vault``: ``url``, ``tenant_id``, ``client_id``, ``certificate_path`` and, beyond upstream,
the vault's ``proxy`` in the form of Go's ``httpproxy.Config``) and the secret (``vault_lookup_key``);
``with_vault_credentials`` reads them from the vault when the listener starts (``actions.azurekeyvault``).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from actions import azurekeyvault, credentials, errors, listenermetrics, urls
from actions.azurekeyvault import AzureKeyVault, Reach
from actions.credentials import Credentials
from actions.listenermetrics import MetricsSpec

CONFIG_PATH_ENV: Final = "LISTENER_CONFIG_PATH"
DEFAULT_PATH: Final = "/etc/gha-listener/config.json"
LOG_LEVELS: Final = ("debug", "info", "warn", "warning", "error")
LOG_FORMATS: Final = ("text", "json")
AZURE_KEY_VAULT: Final = azurekeyvault.AZURE_KEY_VAULT


class ListenerConfigError(errors.InvalidConfiguration):
    """The listener config is unusable; the message names the key and what to do."""


@dataclass(frozen=True)
class ListenerConfig:
    config_url: urls.ConfigUrl
    # None while a vault holds them (``vault``), until ``with_vault_credentials`` read them.
    credentials: Credentials | None
    ephemeral_runner_set_namespace: str
    ephemeral_runner_set_name: str
    runner_scale_set_id: int
    min_runners: int
    max_runners: int
    runner_scale_set_name: str = ""
    server_root_ca: str = ""
    log_level: str = "debug"
    log_format: str = "text"
    metrics_addr: str = ""
    metrics_endpoint: str = ""
    metrics: MetricsSpec | None = None
    vault: AzureKeyVault | None = None
    vault_lookup_key: str = ""


def config_path(environ: Mapping[str, str]) -> Path:
    """Where the config lives: ``$LISTENER_CONFIG_PATH``, else ``/etc/gha-listener/config.json``."""
    return Path(environ.get(CONFIG_PATH_ENV) or DEFAULT_PATH)


def load(path: Path) -> ListenerConfig:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ListenerConfigError(
            f"cannot read the listener config {path}: {getattr(exc, 'strerror', None) or exc}"
        ) from None
    return parse(text, source=str(path))


def parse(text: str, *, source: str = "config.json") -> ListenerConfig:
    try:
        data = json.loads(text)
    except ValueError as exc:
        # The position only: a JSON error message can quote the text, and the text holds credentials.
        where = f"line {exc.lineno}" if isinstance(exc, json.JSONDecodeError) else "somewhere"
        raise ListenerConfigError(f"the listener config {source} is not valid JSON ({where})") from None
    if not isinstance(data, dict):
        raise ListenerConfigError(f"the listener config {source} must be a JSON object")
    try:
        return from_mapping(data)
    except errors.InvalidConfiguration as exc:
        raise ListenerConfigError(f"the listener config {source}: {exc}") from None


def from_mapping(data: Mapping[str, object]) -> ListenerConfig:
    """The config from its decoded JSON; raises ``InvalidConfiguration`` with a one-line reason."""
    raw_url = _text(data, "configure_url")
    if not raw_url:
        raise ListenerConfigError("configure_url is not set; it is the githubConfigUrl of the scale set")
    config_url = urls.parse_config_url(raw_url)
    namespace = _text(data, "ephemeral_runner_set_namespace")
    name = _text(data, "ephemeral_runner_set_name")
    if not namespace or not name:
        raise ListenerConfigError(
            "ephemeral_runner_set_namespace and ephemeral_runner_set_name must both be set"
        )
    scale_set_id = _integer(data, "runner_scale_set_id")
    if scale_set_id == 0:
        raise ListenerConfigError("runner_scale_set_id is missing or 0; it is the scale set's id on GitHub")
    min_runners, max_runners = _integer(data, "min_runners"), _integer(data, "max_runners")
    if min_runners < 0:
        raise ListenerConfigError(f"min_runners is {min_runners}; it must not be negative")
    if max_runners < min_runners:
        raise ListenerConfigError(
            f"min_runners {min_runners} cannot be greater than max_runners {max_runners}"
        )
    vault = _vault(data)
    return ListenerConfig(
        config_url=config_url,
        credentials=None if vault else _credentials(data),
        vault=vault,
        vault_lookup_key=_text(data, "vault_lookup_key") if vault else "",
        ephemeral_runner_set_namespace=namespace,
        ephemeral_runner_set_name=name,
        runner_scale_set_id=scale_set_id,
        min_runners=min_runners,
        max_runners=max_runners,
        runner_scale_set_name=_text(data, "runner_scale_set_name"),
        server_root_ca=_text(data, "server_root_ca"),
        log_level=_choice(data, "log_level", LOG_LEVELS, default="debug"),
        log_format=_choice(data, "log_format", LOG_FORMATS, default="text"),
        metrics_addr=_metrics_addr(data),
        metrics_endpoint=_text(data, "metrics_endpoint"),
        metrics=_metrics(data),
    )


def _vault(data: Mapping[str, object]) -> AzureKeyVault | None:
    """The vault the credentials are in, or None when the config embeds them."""
    vault_type = _text(data, "vault_type")
    if not vault_type:
        return None
    if not _text(data, "vault_lookup_key"):
        raise ListenerConfigError(f"vault_type is {vault_type!r} but vault_lookup_key is not set")
    if vault_type != AZURE_KEY_VAULT:
        raise ListenerConfigError(
            f"vault_type {vault_type!r} is unknown; the one upstream knows is {AZURE_KEY_VAULT}"
        )
    block = data.get(AZURE_KEY_VAULT)
    if not isinstance(block, Mapping):
        raise ListenerConfigError(
            f"vault_type is {AZURE_KEY_VAULT} but the {AZURE_KEY_VAULT} object is missing"
        )
    vault = AzureKeyVault.from_listener_config(block)
    if problem := vault.problem():
        raise ListenerConfigError(problem)
    return vault


async def with_vault_credentials(config: ListenerConfig, reach: Reach) -> ListenerConfig:
    """``config`` with the credentials its vault holds (unchanged without a vault); raises
    ``azurekeyvault.VaultError`` naming what to fix."""
    if config.vault is None or config.credentials is not None:
        return config
    value = await azurekeyvault.read_secret(config.vault, config.vault_lookup_key, reach=reach)
    return dataclasses.replace(
        config, credentials=azurekeyvault.credentials_from_vault(value, config.vault_lookup_key)
    )


def _credentials(data: Mapping[str, object]) -> Credentials:
    # Upstream's config embeds its AppConfig struct without omitempty: a PAT config also carries
    # "github_app_id": "", "github_app_private_key": "" and "github_app_installation_id": 0.
    embedded = dict(data)
    installation_id = embedded.get(credentials.INSTALLATION_ID)
    if installation_id == "0" or (installation_id == 0 and not isinstance(installation_id, bool)):
        del embedded[credentials.INSTALLATION_ID]
    return credentials.from_mapping(embedded)


def _text(data: Mapping[str, object], key: str) -> str:
    value = data.get(key)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise ListenerConfigError(f"{key} must be a string")
    return value.strip()


def _integer(data: Mapping[str, object], key: str) -> int:
    value = data.get(key, 0)
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, int):
        raise ListenerConfigError(f"{key} must be an integer")
    return value


def _choice(data: Mapping[str, object], key: str, allowed: tuple[str, ...], *, default: str) -> str:
    value = _text(data, key).lower() or default
    if value not in allowed:
        raise ListenerConfigError(f"{key} {value!r} is not one of {', '.join(allowed)}")
    return value


def _metrics_addr(data: Mapping[str, object]) -> str:
    addr = _text(data, "metrics_addr")
    if addr in ("", "0"):  # "0" is how the controller's flag says "disabled"
        return ""
    try:
        listenermetrics.split_address(addr)
    except ValueError as exc:
        raise ListenerConfigError(str(exc)) from None
    return addr


def _metrics(data: Mapping[str, object]) -> MetricsSpec | None:
    raw = data.get("metrics")
    if raw is None:
        return None
    try:
        return MetricsSpec.from_json(raw)
    except listenermetrics.MetricsSpecError as exc:
        raise ListenerConfigError(str(exc)) from None
