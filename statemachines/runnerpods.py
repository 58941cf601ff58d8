"""The runner pod of an EphemeralRunner (spec §1.5, §1.6: upstream's ``newEphemeralRunnerPod``).

The pod is the runner's inline template with four things added: the controller ownerReference, the labels
``actions-ephemeral-runner=True`` and ``pod-template-hash``, and, in the container named ``runner``, the
environment the runner needs (its JIT config from the Secret named after the runner, the extra user agent,
the opt-in to exit code 7 for a deprecated runner version, and the proxy variables when the runner has a
proxy Secret). Every other container is copied unchanged. Nothing observed is mutated: the body is built
from fresh dicts and lists.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from statemachines import naming, runners
from statemachines.jsonvalues import JsonObject, as_mapping, as_strings

KIND = "EphemeralRunner"
RUNNER_CONTAINER = "runner"

ENV_JIT_CONFIG = "ACTIONS_RUNNER_INPUT_JITCONFIG"
ENV_EXTRA_USER_AGENT = "GITHUB_ACTIONS_RUNNER_EXTRA_USER_AGENT"
ENV_DEPRECATED_EXIT_CODE = "ACTIONS_RUNNER_RETURN_VERSION_DEPRECATED_EXIT_CODE"
ENV_CONTAINER_HOOKS = "ACTIONS_RUNNER_CONTAINER_HOOKS"
JIT_TOKEN_KEY = "jitToken"

LABEL_EPHEMERAL_RUNNER = "actions-ephemeral-runner"
LABEL_POD_TEMPLATE_HASH = "pod-template-hash"
# Container-hook pods and secrets carry this label with the runner's name (§1.5).
LABEL_RUNNER_POD = "runner-pod"

# (env name, proxy block key) in the order upstream appends them; each only when the proxy sets it.
_PROXY_ENVS = (("http_proxy", "http"), ("https_proxy", "https"), ("no_proxy", "noProxy"))


def template(runner: JsonObject) -> JsonObject:
    """The runner's inline pod template: ``{"metadata": ..., "spec": ...}`` under the runner's spec."""
    return as_mapping(runner.get("spec"))


def runner_container(runner: JsonObject) -> JsonObject | None:
    containers = as_mapping(template(runner).get("spec")).get("containers")
    for container in containers if isinstance(containers, list) else []:
        if isinstance(container, Mapping) and container.get("name") == RUNNER_CONTAINER:
            return container
    return None


def work_folder(runner: JsonObject) -> str:
    """The JIT request's work folder: the ``runner`` container's ``workingDir``, when set."""
    return str((runner_container(runner) or {}).get("workingDir") or "")


def has_container_hooks(runner: JsonObject) -> bool:
    """True when the ``runner`` container sets ``ACTIONS_RUNNER_CONTAINER_HOOKS`` (kubernetes mode)."""
    env = (runner_container(runner) or {}).get("env")
    entries = env if isinstance(env, list) else []
    return any(isinstance(e, Mapping) and e.get("name") == ENV_CONTAINER_HOOKS for e in entries)


def _secret_env(name: str, secret: str, key: str) -> dict[str, Any]:
    return {"name": name, "valueFrom": {"secretKeyRef": {"name": secret, "key": key}}}


def runner_env(runner: JsonObject, *, build_version: str) -> list[dict[str, Any]]:
    """What is appended to the ``runner`` container's env, in upstream's order."""
    name = str(as_mapping(runner.get("metadata")).get("name") or "")
    env = [
        _secret_env(ENV_JIT_CONFIG, name, JIT_TOKEN_KEY),
        {"name": ENV_EXTRA_USER_AGENT, "value": f"actions-runner-controller/{build_version}"},
        {"name": ENV_DEPRECATED_EXIT_CODE, "value": "1"},
    ]
    spec = as_mapping(runner.get("spec"))
    proxy_secret = str(spec.get("proxySecretRef") or "")
    proxy = as_mapping(spec.get("proxy"))
    if proxy_secret:
        env.extend(_secret_env(var, proxy_secret, var) for var, key in _PROXY_ENVS if _proxy_sets(proxy, key))
    return env


def _proxy_sets(proxy: JsonObject, key: str) -> bool:
    """Go's ``proxy.HTTP != nil`` (an empty block counts) or ``len(proxy.NoProxy) > 0``."""
    value = proxy.get(key)
    return bool(value) if key == "noProxy" else value is not None


def runner_pod(runner: JsonObject, secret: JsonObject | None, *, build_version: str) -> dict[str, Any]:
    """The pod body for ``runner`` whose JIT config is in ``secret`` (the observed Secret, for its uid)."""
    meta = as_mapping(runner.get("metadata"))
    tmpl = template(runner)
    tmpl_meta = as_mapping(tmpl.get("metadata"))
    labels = {**as_strings(meta.get("labels")), **as_strings(tmpl_meta.get("labels"))}
    labels[LABEL_EPHEMERAL_RUNNER] = "True"
    annotations = {**as_strings(meta.get("annotations")), **as_strings(tmpl_meta.get("annotations"))}
    # Upstream hashes the secret's data; the journal never holds it, and a new JIT config is a new Secret.
    secret_uid = str(as_mapping((secret or {}).get("metadata")).get("uid") or "")
    labels[LABEL_POD_TEMPLATE_HASH] = naming.stable_hash(labels, annotations, runner.get("spec"), secret_uid)
    pod_spec = dict(as_mapping(tmpl.get("spec")))
    extra = runner_env(runner, build_version=build_version)
    containers = pod_spec.get("containers")
    pod_spec["containers"] = [
        _with_env(c, extra) if isinstance(c, Mapping) and c.get("name") == RUNNER_CONTAINER else c
        for c in (containers if isinstance(containers, list) else [])
    ]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": meta.get("name", ""),
            "namespace": meta.get("namespace", ""),
            "labels": labels,
            "annotations": annotations,
            "ownerReferences": [runners.owner_reference(runner, KIND)],
        },
        "spec": pod_spec,
    }


def _with_env(container: JsonObject, extra: list[dict[str, Any]]) -> dict[str, Any]:
    env = container.get("env")
    return {**container, "env": [*(env if isinstance(env, list) else []), *extra]}
