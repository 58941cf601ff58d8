"""The Secrets the executor writes from what effects must never carry (spec §1.5, §2.3 step 4, §5.2).

Pure builders: each takes the effect and the secret material the executor read or was given, and
returns a Secret body (or a patch) with ``data`` base64-encoded.

* JIT Secret (``<runner>``): ``jitToken`` (the encoded JIT config), ``runnerName``, ``runnerId``,
  ``scaleSetId``, plus the annotations ``naming.ANNOTATION_JIT_RUNNER_ID``/``_NAME`` (the journal keeps
  Secrets without data, so the EphemeralRunner machine reads the runner from them).
* Listener config Secret (``<AL>-config``): ``config.json`` = the effect's settings, the credentials of
  its scope (``github_token``, or ``github_app_id``, ``github_app_installation_id``,
  ``github_app_private_key``) and ``server_root_ca``. The machine computed the integrity hash.
* Proxy Secret: ``http_proxy``, ``https_proxy``, ``no_proxy`` and the annotation
  ``actions.github.com/integrity-hash`` over that data.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Mapping
from typing import Any, Final

from actions.azurekeyvault import AZURE_KEY_VAULT, VaultProxy
from actions.credentials import Credentials, GitHubApp, PersonalAccessToken
from actions.models import JitConfig
from statemachines import naming
from statemachines.effects import CreateJitConfigSecret, CreateListenerConfigSecret, WriteProxySecret
from statemachines.jsonvalues import JsonObject, as_mapping, as_strings

JIT_TOKEN: Final = "jitToken"
RUNNER_NAME: Final = "runnerName"
RUNNER_ID: Final = "runnerId"
SCALE_SET_ID: Final = "scaleSetId"
CONFIG_JSON: Final = "config.json"


def encode(text: str) -> str:
    return base64.b64encode(text.encode("utf-8")).decode("ascii")


def decode(value: object) -> str:
    """A base64 ``data`` value as text; "" when it is missing or not base64 UTF-8."""
    if not isinstance(value, str):
        return ""
    try:
        return base64.b64decode(value, validate=True).decode("utf-8")
    except (binascii.Error, ValueError):
        return ""


def _metadata(
    name: str, namespace: str, metadata: JsonObject, owner: JsonObject, *, annotations: Mapping[str, str]
) -> dict[str, Any]:
    return {
        "name": name,
        "namespace": namespace,
        "labels": as_strings(metadata.get("labels")),
        "annotations": {**as_strings(metadata.get("annotations")), **annotations},
        "ownerReferences": [dict(owner)] if owner else [],
    }


def _secret(meta: dict[str, Any], data: Mapping[str, str]) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": meta,
        "type": "Opaque",
        "data": {key: encode(value) for key, value in data.items()},
    }


# -- the JIT Secret ----------------------------------------------------------------------------------------


def jit_secret(effect: CreateJitConfigSecret, jit: JitConfig) -> dict[str, Any]:
    runner_id, runner_name = str(jit.runner.id), jit.runner.name
    annotations = {naming.ANNOTATION_JIT_RUNNER_ID: runner_id, naming.ANNOTATION_JIT_RUNNER_NAME: runner_name}
    meta = _metadata(
        effect.target.name, effect.target.namespace, effect.metadata, effect.owner, annotations=annotations
    )
    data = {
        JIT_TOKEN: jit.encoded_jit_config.reveal(),
        RUNNER_NAME: runner_name,
        RUNNER_ID: runner_id,
        SCALE_SET_ID: str(jit.runner.runner_scale_set_id or effect.scale_set_id),
    }
    return _secret(meta, data)


def owner_uids(obj: JsonObject) -> list[str]:
    """The uids of ``obj``'s ownerReferences."""
    refs = as_mapping(obj.get("metadata")).get("ownerReferences")
    return [str(as_mapping(ref).get("uid") or "") for ref in refs] if isinstance(refs, list) else []


def owned_by(secret: JsonObject, owner: JsonObject) -> bool:
    """Whether ``secret`` is the one a write with ``owner`` (an ownerReference) made: one of its
    ownerReferences has that uid. With no owner uid to compare, only a Secret that no one owns is."""
    uid = str(owner.get("uid") or "")
    uids = owner_uids(secret)
    return uid in uids if uid else not uids


def jit_facts(secret: JsonObject) -> dict[str, Any]:
    """``runnerId`` and ``runnerName`` an existing JIT Secret names (annotations first, then data);
    ``runnerId`` is left out when neither holds a positive integer."""
    annotations = as_strings(as_mapping(secret.get("metadata")).get("annotations"))
    data = as_mapping(secret.get("data"))
    raw_id = annotations.get(naming.ANNOTATION_JIT_RUNNER_ID) or decode(data.get(RUNNER_ID))
    name = annotations.get(naming.ANNOTATION_JIT_RUNNER_NAME) or decode(data.get(RUNNER_NAME))
    facts: dict[str, Any] = {"runnerName": name}
    if raw_id.strip().isdigit() and int(raw_id) > 0:
        facts["runnerId"] = int(raw_id)
    return facts


# -- the listener config Secret ----------------------------------------------------------------------------


def credential_fields(credentials: Credentials) -> dict[str, Any]:
    """The credential keys of ``config.json`` (§5.2), in the form the config Secret holds."""
    if isinstance(credentials, PersonalAccessToken):
        return {"github_token": credentials.token.reveal()}
    assert isinstance(credentials, GitHubApp)
    return {
        "github_app_id": credentials.app_id,
        "github_app_installation_id": credentials.installation_id,
        "github_app_private_key": credentials.private_key.reveal(),
    }


def listener_config(
    effect: CreateListenerConfigSecret,
    credentials: Credentials | None,
    root_ca: str,
    vault_proxy: VaultProxy | None = None,
) -> dict[str, Any]:
    """``config.json``: the effect's settings, then the credentials (none with a vault) and the CA; with
    a vault, its proxy resolved (credentials in the URLs) in the form of Go's ``httpproxy.Config``, as
    upstream's listener reads ``azure_key_vault.proxy``."""
    config = dict(effect.settings)
    if credentials is not None:
        config.update(credential_fields(credentials))
    block = config.get(AZURE_KEY_VAULT)
    if isinstance(block, Mapping):
        resolved = {k: v for k, v in block.items() if k != "proxy"}
        if vault_proxy:
            resolved["proxy"] = vault_proxy.as_go_config()
        config[AZURE_KEY_VAULT] = resolved
    config["server_root_ca"] = root_ca
    return config


def listener_config_secret(effect: CreateListenerConfigSecret, config: JsonObject) -> dict[str, Any]:
    meta = _metadata(
        effect.target.name, effect.target.namespace, effect.metadata, effect.owner, annotations={}
    )
    return _secret(meta, {CONFIG_JSON: json.dumps(config, separators=(",", ":"))})


# -- the proxy Secret --------------------------------------------------------------------------------------


def proxy_annotations(effect: WriteProxySecret, data: Mapping[str, str]) -> dict[str, str]:
    wanted = as_strings(effect.metadata.get("annotations"))
    return {**wanted, naming.ANNOTATION_INTEGRITY_HASH: naming.secret_hash(dict(data))}


def proxy_secret(effect: WriteProxySecret, data: Mapping[str, str]) -> dict[str, Any]:
    annotations = proxy_annotations(effect, data)
    meta = _metadata(
        effect.target.name, effect.target.namespace, effect.metadata, effect.owner, annotations=annotations
    )
    return _secret(meta, data)


def proxy_patch(effect: WriteProxySecret, data: Mapping[str, str], live: JsonObject) -> dict[str, Any]:
    """The merge patch that brings ``live`` to ``data`` and the effect's metadata; {} when it matches."""
    live_meta = as_mapping(live.get("metadata"))
    patch: dict[str, Any] = {}
    meta: dict[str, Any] = {}
    for key, wanted in (
        ("labels", as_strings(effect.metadata.get("labels"))),
        ("annotations", proxy_annotations(effect, data)),
    ):
        have = as_strings(live_meta.get(key))
        changed = {k: v for k, v in wanted.items() if have.get(k) != v}
        if changed:
            meta[key] = changed
    if meta:
        patch["metadata"] = meta
    live_data = {str(k): decode(v) for k, v in as_mapping(live.get("data")).items()}
    if live_data != dict(data):
        changed_data: dict[str, str | None] = {k: encode(v) for k, v in data.items()}
        changed_data.update({k: None for k in live_data if k not in data})
        patch["data"] = changed_data
    return patch
