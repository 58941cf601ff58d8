"""The objects an AutoscalingListener owns or needs (spec §1.5, §1.7, §5.2), built from the listener alone.

Pure builders to plain JSON bodies and effects: the ServiceAccount (controller namespace, owned), the Role
and RoleBinding (in the ARS namespace, unowned, labelled with the listener's namespace and name), the
effects that make the config and proxy Secrets (the executor adds what the journal must never hold), and
the listener pod with its template merge. Every object carries ``actions.github.com/integrity-hash``: a
stable hash of what it was built from (§1.8 lets a port choose the hash), which the machine compares to
decide when a Secret must be made again or the pod rebuilt.

The AL spec is effectively immutable (the ARS deletes and recreates a listener whose spec drifted), so the
inputs that change under a running listener are the controller's settings and, for the config Secret, the
credentials Secret: its ``resourceVersion`` (the journal keeps it, without the data) feeds the hash.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from typing import Any

from statemachines import declaring, effects, memos, naming, runners
from statemachines.jsonvalues import JsonObject, as_list, as_mapping, as_strings
from statemachines.objects import AutoscalingListenerSpec, ObjectMeta, OwnerReference, al_spec, meta_of
from statemachines.snapshots import Settings

KIND = "AutoscalingListener"
LISTENER_CONTAINER = "listener"
CONFIG_VOLUME = "listener-config"
CONFIG_DIR = "/etc/gha-listener"
CONFIG_PATH = f"{CONFIG_DIR}/config.json"
RBAC_GROUP = "rbac.authorization.k8s.io"
LABEL_LISTENER_NAMESPACE = "auto-scaling-listener-namespace"
LABEL_LISTENER_NAME = "auto-scaling-listener-name"
# The listener objects keep the integrity hash: the seed drops it only from the ARS and the ERS.
INTEGRITY_HASH = naming.ANNOTATION_INTEGRITY_HASH
VAULT_AZURE = "azure_key_vault"
# The listener's RBAC objects kept per observed listener (``memos``): the callers only read them.
REMEMBERED = 1024

# Pod fields the template replaces outright, even with nothing (upstream's mergeListenerPodWithTemplate).
TEMPLATE_POD_FIELDS = (
    "initContainers", "ephemeralContainers", "terminationGracePeriodSeconds", "activeDeadlineSeconds",
    "dnsPolicy", "nodeSelector", "nodeName", "hostNetwork", "hostPID", "hostIPC", "shareProcessNamespace",
    "securityContext", "imagePullSecrets", "hostname", "subdomain", "affinity", "schedulerName",
    "tolerations", "hostAliases", "priorityClassName", "priority", "dnsConfig", "readinessGates",
    "runtimeClassName", "enableServiceLinks", "preemptionPolicy", "overhead", "topologySpreadConstraints",
    "setHostnameAsFQDN", "os", "hostUsers", "schedulingGates", "resourceClaims",
)  # fmt: skip
# Listener container fields: appended lists, replaced-when-set values, and values replaced outright.
CONTAINER_APPENDED = ("args", "ports", "envFrom", "env", "volumeMounts", "volumeDevices")
CONTAINER_IF_SET = ("image", "command", "workingDir", "imagePullPolicy")
CONTAINER_REPLACED = (
    "resources", "livenessProbe", "readinessProbe", "startupProbe", "lifecycle", "terminationMessagePath",
    "terminationMessagePolicy", "securityContext", "stdin", "stdinOnce", "tty",
)  # fmt: skip


def spec(al: JsonObject) -> AutoscalingListenerSpec:
    return al_spec(as_mapping(al.get("spec")))


def meta(al: JsonObject) -> ObjectMeta:
    return meta_of(al)


def name(al: JsonObject) -> str:
    return str(meta(al).get("name") or "")


def namespace(al: JsonObject) -> str:
    return str(meta(al).get("namespace") or "")


def ars_namespace(al: JsonObject) -> str:
    return str(spec(al).get("autoscalingRunnerSetNamespace") or "")


def owner(al: JsonObject) -> OwnerReference:
    return runners.owner_reference(al, KIND)


def _scale_set_labels(al: JsonObject) -> dict[str, str]:
    return {
        naming.LABEL_SCALE_SET_NAMESPACE: ars_namespace(al),
        naming.LABEL_SCALE_SET_NAME: naming.name_label(str(spec(al).get("autoscalingRunnerSetName") or "")),
    }


def _metadata(
    user: object, labels: Mapping[str, str], annotations: Mapping[str, str]
) -> tuple[dict[str, str], dict[str, str]]:
    """A ResourceMeta block (``labels``/``annotations``) as the base, the computed keys over it."""
    block = as_mapping(user)
    return {**as_strings(block.get("labels")), **labels}, {
        **as_strings(block.get("annotations")),
        **annotations,
    }


def _body(api_version: str, kind: str, obj_meta: dict[str, Any], **rest: Any) -> dict[str, Any]:
    return {"apiVersion": api_version, "kind": kind, "metadata": obj_meta, **rest}


# -- service account, role, role binding ------------------------------------------------------------------


@memos.by_identity(REMEMBERED)
def service_account(al: JsonObject) -> dict[str, Any]:
    labels = {**as_strings(meta(al).get("labels")), **_scale_set_labels(al)}
    annotations = {INTEGRITY_HASH: naming.stable_hash(labels)}
    labels, annotations = _metadata(spec(al).get("serviceAccountMetadata"), labels, annotations)
    obj_meta = {
        "name": name(al),
        "namespace": namespace(al),
        "labels": labels,
        "annotations": annotations,
        "ownerReferences": [owner(al)],
    }
    return _body("v1", "ServiceAccount", obj_meta)


def role_rules(al: JsonObject) -> list[dict[str, Any]]:
    """Patch the runner set (by name) and the runners (and their status): nothing else (§5.1)."""
    return [
        {
            "apiGroups": ["actions.github.com"],
            "resources": ["ephemeralrunnersets"],
            "resourceNames": [str(spec(al).get("ephemeralRunnerSetName") or "")],
            "verbs": ["patch"],
        },
        {
            "apiGroups": ["actions.github.com"],
            "resources": ["ephemeralrunners", "ephemeralrunners/status"],
            "verbs": ["patch"],
        },
    ]


def _rbac_labels(al: JsonObject) -> dict[str, str]:
    return {
        **as_strings(meta(al).get("labels")),
        **_scale_set_labels(al),
        LABEL_LISTENER_NAMESPACE: namespace(al),
        LABEL_LISTENER_NAME: name(al),
    }


def _rbac_meta(al: JsonObject, labels: dict[str, str], annotations: dict[str, str]) -> dict[str, Any]:
    return {"name": name(al), "namespace": ars_namespace(al), "labels": labels, "annotations": annotations}


@memos.by_identity(REMEMBERED)
def role(al: JsonObject) -> dict[str, Any]:
    rules = role_rules(al)
    labels, annotations = _metadata(
        spec(al).get("roleMetadata"), _rbac_labels(al), {INTEGRITY_HASH: naming.stable_hash(rules)}
    )
    return _body(f"{RBAC_GROUP}/v1", "Role", _rbac_meta(al, labels, annotations), rules=rules)


@memos.by_identity(REMEMBERED)
def role_binding(al: JsonObject) -> dict[str, Any]:
    role_ref = {"apiGroup": RBAC_GROUP, "kind": "Role", "name": name(al)}
    subjects = [{"kind": "ServiceAccount", "name": name(al), "namespace": namespace(al)}]
    labels, annotations = _metadata(
        spec(al).get("roleBindingMetadata"),
        _rbac_labels(al),
        {INTEGRITY_HASH: naming.stable_hash(role_ref, subjects)},
    )
    obj_meta = _rbac_meta(al, labels, annotations)
    return _body(f"{RBAC_GROUP}/v1", "RoleBinding", obj_meta, roleRef=role_ref, subjects=subjects)


# -- the two secrets --------------------------------------------------------------------------------------


def scope(al: JsonObject) -> effects.ActionsScope:
    """The credentials the config Secret embeds: the ARS's githubConfigSecret, in the ARS namespace."""
    return effects.ActionsScope(
        config_url=str(spec(al).get("githubConfigUrl") or ""),
        namespace=ars_namespace(al),
        secret_name=str(spec(al).get("githubConfigSecret") or ""),
        proxy=as_mapping(spec(al).get("proxy")),
        tls=as_mapping(spec(al).get("githubServerTLS")),
        vault=as_mapping(spec(al).get("vaultConfig")),
    )


def metrics_enabled(settings: Settings) -> bool:
    return settings.listener_metrics_addr not in ("", "0")


def config_settings(al: JsonObject, settings: Settings) -> dict[str, Any]:
    """Every ``config.json`` key of §5.2 but the credentials (and ``server_root_ca``, which the executor
    reads from the TLS ConfigMap)."""
    s = spec(al)
    metrics = metrics_enabled(settings)
    out: dict[str, Any] = {
        "configure_url": str(s.get("githubConfigUrl") or ""),
        "vault_type": "",
        "ephemeral_runner_set_namespace": ars_namespace(al),
        "ephemeral_runner_set_name": str(s.get("ephemeralRunnerSetName") or ""),
        "max_runners": s.get("maxRunners", 0),
        "min_runners": s.get("minRunners", 0),
        "runner_scale_set_id": s.get("runnerScaleSetId", 0),
        "runner_scale_set_name": str(s.get("autoscalingRunnerSetName") or ""),
        "server_root_ca": "",
        "log_level": settings.listener_log_level,
        "log_format": settings.listener_log_format,
        "metrics_addr": settings.listener_metrics_addr if metrics else "",
        "metrics_endpoint": settings.listener_metrics_endpoint if metrics else "",
        "metrics": s.get("metrics"),
    }
    vault = as_mapping(s.get("vaultConfig"))
    if vault.get("type"):
        azure = as_mapping(vault.get("azureKeyVault"))
        block: dict[str, Any] = {
            "tenant_id": azure.get("tenantId", ""),
            "client_id": azure.get("clientId", ""),
            "url": azure.get("url", ""),
            "certificate_path": azure.get("certificatePath", ""),
        }
        if vault.get("proxy"):
            block["proxy"] = vault["proxy"]
        out.update(vault_type=str(vault["type"]), vault_lookup_key=str(s.get("githubConfigSecret") or ""))
        out[VAULT_AZURE] = block
    return out


def config_secret_ref(al: JsonObject) -> effects.ObjectRef:
    return effects.ObjectRef("Secret", namespace(al), naming.listener_config_secret_name(name(al)))


def config_secret(
    al: JsonObject, settings: Settings, credentials: JsonObject | None
) -> effects.CreateListenerConfigSecret:
    """The effect that writes ``<AL>-config``; ``credentials`` is the observed credentials Secret, if any."""
    wanted = scope(al)
    config = config_settings(al, settings)
    version = str(as_mapping((credentials or {}).get("metadata")).get("resourceVersion") or "")
    digest = naming.stable_hash(config, dataclasses.asdict(wanted), version)
    user = as_mapping(spec(al).get("configSecretMetadata"))
    labels, annotations = _metadata(user, {}, {INTEGRITY_HASH: digest})
    return effects.CreateListenerConfigSecret(
        target=config_secret_ref(al),
        scope=wanted,
        settings=config,
        owner=owner(al),
        metadata={"labels": labels, "annotations": annotations},
    )


def proxy_secret_ref(al: JsonObject) -> effects.ObjectRef:
    return effects.ObjectRef("Secret", namespace(al), naming.listener_proxy_secret_name(name(al)))


def proxy_secret(al: JsonObject) -> effects.WriteProxySecret:
    """``<AL>-proxy``: the executor builds the data and stamps the integrity hash over it."""
    return effects.WriteProxySecret(
        target=proxy_secret_ref(al),
        proxy=as_mapping(spec(al).get("proxy")),
        owner=owner(al),
        metadata={"labels": _scale_set_labels(al)},
        secrets_namespace=ars_namespace(al),
    )


# -- the listener pod -------------------------------------------------------------------------------------


def _proxy_env(al: JsonObject) -> list[dict[str, Any]]:
    proxy = spec(al).get("proxy")
    if not isinstance(proxy, Mapping):
        return []
    secret = proxy_secret_ref(al).name
    wanted = [
        ("http_proxy", proxy.get("http") is not None),
        ("https_proxy", proxy.get("https") is not None),
        ("no_proxy", bool(proxy.get("noProxy"))),
    ]
    return [
        {"name": var, "valueFrom": {"secretKeyRef": {"name": secret, "key": var}}} for var, on in wanted if on
    ]


def _metrics_port(settings: Settings) -> int | None:
    if not metrics_enabled(settings):
        return None
    port = settings.listener_metrics_addr.rsplit(":", 1)[-1]
    return int(port) if port.isdigit() else None


def _listener_container(al: JsonObject, settings: Settings) -> dict[str, Any]:
    container: dict[str, Any] = {
        "name": LISTENER_CONTAINER,
        "image": str(spec(al).get("image") or ""),
        "command": [settings.listener_entrypoint],
        "env": [{"name": "LISTENER_CONFIG_PATH", "value": CONFIG_PATH}, *_proxy_env(al)],
        "volumeMounts": [{"name": CONFIG_VOLUME, "mountPath": CONFIG_DIR, "readOnly": True}],
    }
    port = _metrics_port(settings)
    if port is not None:
        container["ports"] = [{"name": "metrics", "containerPort": port, "protocol": "TCP"}]
    return container


def _merge_container(base: dict[str, Any], extra: JsonObject) -> dict[str, Any]:
    out = dict(base)
    for key in CONTAINER_APPENDED:
        if key in out or key in extra:
            out[key] = [*as_list(out.get(key)), *as_list(extra.get(key))]
    for key in CONTAINER_IF_SET:
        if extra.get(key):
            out[key] = extra[key]
    for key in CONTAINER_REPLACED:
        out.pop(key, None)
        if extra.get(key) is not None:
            out[key] = extra[key]
    return out


def pod_spec(al: JsonObject, settings: Settings) -> dict[str, Any]:
    """The listener pod's spec (§1.7), with ``AL.spec.template`` merged in when set."""
    out: dict[str, Any] = {
        "serviceAccountName": name(al),
        "containers": [_listener_container(al, settings)],
        "volumes": [{"name": CONFIG_VOLUME, "secret": {"secretName": config_secret_ref(al).name}}],
        "nodeSelector": {"kubernetes.io/os": "linux"},
        "restartPolicy": "Never",
        "terminationGracePeriodSeconds": 60,
        "imagePullSecrets": [dict(as_mapping(p)) for p in as_list(spec(al).get("imagePullSecrets"))],
    }
    template = as_mapping(spec(al).get("template"))
    if not template:
        return out
    tmpl = as_mapping(template.get("spec"))
    containers = [c for c in as_list(tmpl.get("containers")) if isinstance(c, Mapping)]
    for c in containers:
        if c.get("name") == LISTENER_CONTAINER:
            out["containers"][0] = _merge_container(out["containers"][0], c)
    out["containers"] += [c for c in containers if c.get("name") != LISTENER_CONTAINER]
    out["volumes"] += as_list(tmpl.get("volumes"))
    for key in TEMPLATE_POD_FIELDS:
        out.pop(key, None)
        if tmpl.get(key) is not None:
            out[key] = tmpl[key]
    return out


def pod_ref(al: JsonObject) -> effects.ObjectRef:
    return effects.ObjectRef("Pod", namespace(al), name(al))


def listener_pod(al: JsonObject, settings: Settings, dependencies: Mapping[str, str]) -> dict[str, Any]:
    """The listener pod; ``dependencies`` are the integrity hashes of the objects it runs with."""
    pod_spec_ = pod_spec(al, settings)
    digest = naming.stable_hash(pod_spec_, spec(al), dict(dependencies), settings.listener_metrics_addr)
    labels = as_strings(meta(al).get("labels"))
    annotations = {INTEGRITY_HASH: digest}
    tmpl_meta = as_mapping(as_mapping(spec(al).get("template")).get("metadata"))
    # Template labels and annotations are only added where the listener's own are absent.
    labels = {**as_strings(tmpl_meta.get("labels")), **labels}
    annotations = {**as_strings(tmpl_meta.get("annotations")), **annotations}
    obj_meta = {
        "name": name(al),
        "namespace": namespace(al),
        "labels": labels,
        "annotations": annotations,
        "ownerReferences": [owner(al)],
    }
    return _body("v1", "Pod", obj_meta, spec=pod_spec_)


# Role and RoleBinding name their listener in labels (``_rbac_labels``): they live in the scale set's
# namespace, where an owner reference to the listener cannot point. The prefixed spelling is read too.
LISTENER_LABELS = (
    (LABEL_LISTENER_NAMESPACE, LABEL_LISTENER_NAME),
    ("actions.github.com/" + LABEL_LISTENER_NAMESPACE, "actions.github.com/" + LABEL_LISTENER_NAME),
)


def labelled_listener(obj: JsonObject) -> Iterable[declaring.NameRef]:
    """The (namespace, name) of the listener ``obj``'s labels name (either spelling)."""
    labels = as_mapping(meta(obj).get("labels"))
    for namespace_label, name_label in LISTENER_LABELS:
        ns, listener = labels.get(namespace_label), labels.get(name_label)
        if isinstance(ns, str) and isinstance(listener, str) and ns and listener:
            yield ns, listener


def scale_set_named(al: JsonObject) -> Iterable[declaring.NameRef]:
    """The (namespace, name) of the AutoscalingRunnerSet the listener's spec names, if it names one."""
    scale_set = str(spec(al).get("autoscalingRunnerSetName") or "")
    if scale_set:
        yield ars_namespace(al), scale_set


def _scale_set_key(key: declaring.ObjectKey, al: JsonObject) -> Iterable[declaring.NameRef]:
    yield ars_namespace(al), str(spec(al).get("autoscalingRunnerSetName") or "")


def _credentials_key(key: declaring.ObjectKey, al: JsonObject) -> Iterable[declaring.NameRef]:
    secret = spec(al).get("githubConfigSecret")
    if isinstance(secret, str):
        yield ars_namespace(al), secret


LISTENERS_BY_SCALE_SET = declaring.ReverseLookup("listeners by the scale set they name", KIND, _scale_set_key)
LISTENERS_BY_CREDENTIALS = declaring.ReverseLookup(
    "listeners by their githubConfigSecret", KIND, _credentials_key
)
