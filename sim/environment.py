"""What a container's process sees in its environment, resolved as the kubelet does
(``pkg/kubelet/kubelet_pods.go: makeEnvironmentVariables``), and the downward API values it and the
volumes (``sim.volumes``) read.

``container_env`` goes through ``envFrom`` (ConfigMaps and Secrets, with ``prefix``; keys that are not
valid variable names are skipped) and then ``env`` in order: ``value`` with ``$(VAR)`` references to the
variables defined before it and the service variables expanded, or ``valueFrom`` — ``fieldRef``
(``metadata.name``, ``metadata.namespace``, ``metadata.uid``, ``metadata.labels['k']``,
``metadata.annotations['k']``, ``spec.nodeName``, ``spec.serviceAccountName``, ``status.podIP``,
``status.podIPs``, ``status.hostIP``, ``status.hostIPs``), ``resourceFieldRef``, ``configMapKeyRef`` and
``secretKeyRef`` (a missing object or key skips the variable when ``optional``, else raises
``runtimes.ContainerConfigError`` with the kubelet's message, e.g. ``secret "s" not found`` or
``couldn't find key k in Secret ns/s``). Then the service variables of the ``kubernetes`` Service are
added unless defined (``KUBERNETES_SERVICE_HOST``, ``KUBERNETES_SERVICE_PORT``,
``KUBERNETES_SERVICE_PORT_HTTPS``, ``KUBERNETES_PORT`` and ``KUBERNETES_PORT_<port>_TCP*``): built from
the API server's endpoint (``api_endpoint``: the ``kubernetes`` Endpoints ``sim.publishing`` writes, or
the one the kubelet's node API answers), because a process on the node has no kube-proxy to turn the
ClusterIP into it.

``expand`` is ``third_party/forked/golang/expansion``: ``$(VAR)`` becomes the variable's value when it is
defined and stays as written when not, ``$$`` is a literal ``$``.

Known limits: only the ``kubernetes`` Service's variables (not those of the pod's namespace, whatever
``enableServiceLinks`` says); a ``resourceFieldRef`` without a limit reads the node's allocatable
(``NODE_ALLOCATABLE``).
"""

from __future__ import annotations

import base64
import binascii
import math
import re
from collections.abc import Callable, Mapping
from fractions import Fraction
from typing import Any

from sim import pods, runtimes
from sim.nodeapi import Objects
from sim.store import Obj

ENV_NAME = re.compile(r"^[-._a-zA-Z][-._a-zA-Z0-9]*$")
_KEYED = re.compile(r"^metadata\.(labels|annotations)\['(.*)'\]$")
NODE_ALLOCATABLE = {"cpu": "4", "memory": "16Gi", "ephemeral-storage": "100Gi"}


def expand(text: str, lookup: Callable[[str], str | None]) -> str:
    """``$(VAR)`` expansion as Kubernetes does it for env values, commands and args."""
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch != "$" or i + 1 >= n:
            out.append(ch)
            i += 1
            continue
        nxt = text[i + 1]
        if nxt == "$":
            out.append("$")
            i += 2
        elif nxt == "(":
            close = text.find(")", i + 2)
            if close < 0:
                out.append("$(")
                i += 2
                continue
            name = text[i + 2 : close]
            value = lookup(name)
            out.append(value if value is not None else f"$({name})")
            i = close + 1
        else:
            out.append("$" + nxt)
            i += 2
    return "".join(out)


def _format_map(values: Mapping[str, Any]) -> str:
    """``fieldpath.FormatMap``: ``key="value"`` lines, sorted."""
    return "\n".join(f"{k}={_go_quote(str(values[k]))}" for k in sorted(values))


def _go_quote(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\t", "\\t")
    return f'"{escaped}"'


def field_value(pod: Obj, path: str, *, pod_ip: str, host_ip: str, whole_maps: bool = False) -> str:
    """A ``fieldRef``'s value (``whole_maps``: also ``metadata.labels``/``annotations``, as downward API
    volumes allow). Raises ``ValueError`` for a field the downward API does not offer."""
    meta = pod.get("metadata") or {}
    spec = pod.get("spec") or {}
    keyed = _KEYED.match(path)
    if keyed:
        return str((meta.get(keyed.group(1)) or {}).get(keyed.group(2), ""))
    if whole_maps and path in ("metadata.labels", "metadata.annotations"):
        return _format_map(meta.get(path.split(".")[1]) or {})
    simple = {
        "metadata.name": meta.get("name"),
        "metadata.namespace": meta.get("namespace"),
        "metadata.uid": meta.get("uid"),
        "spec.nodeName": spec.get("nodeName"),
        "spec.serviceAccountName": spec.get("serviceAccountName"),
        "status.podIP": pod_ip,
        "status.podIPs": pod_ip,
        "status.hostIP": host_ip,
        "status.hostIPs": host_ip,
    }
    if path not in simple:
        raise ValueError(f"unsupported fieldPath: {path}")
    return str(simple[path] or "")


def resource_value(container: Mapping[str, Any], resource: str, divisor: Any = None) -> str:
    """A ``resourceFieldRef``'s value: the container's limit (or request) divided by ``divisor``,
    rounded up; a limit the container does not set is the node's allocatable."""
    kind, _, name = resource.partition(".")
    resources = container.get("resources") or {}
    quantity = (resources.get(kind) or {}).get(name)
    if quantity is None:
        quantity = (resources.get("requests") or {}).get(name) if kind == "limits" else None
    if quantity is None:
        quantity = NODE_ALLOCATABLE.get(name, "0") if kind == "limits" else "0"
    value = pods.parse_quantity(quantity)[0]
    scale = pods.parse_quantity(divisor)[0] if divisor not in (None, "", 0, "0") else Fraction(1)
    return str(math.ceil(value / scale))


def _configmap(store: Objects, namespace: str, name: str) -> Obj | None:
    return store.get(("", "configmaps", namespace, name))


def _secret_data(store: Objects, namespace: str, name: str) -> dict[str, bytes] | None:
    secret = store.get(("", "secrets", namespace, name))
    if secret is None:
        return None
    out = {}
    for key, value in (secret.get("data") or {}).items():
        try:
            out[key] = base64.b64decode(str(value), validate=True)
        except (binascii.Error, ValueError):
            continue
    return out


def configmap_data(cm: Obj) -> dict[str, bytes]:
    """A ConfigMap's ``data`` and ``binaryData`` as bytes."""
    out = {k: str(v).encode() for k, v in (cm.get("data") or {}).items()}
    for key, value in (cm.get("binaryData") or {}).items():
        try:
            out[key] = base64.b64decode(str(value))
        except (binascii.Error, ValueError):
            continue
    return out


def secret_data(store: Objects, namespace: str, name: str) -> dict[str, bytes] | None:
    return _secret_data(store, namespace, name)


def _key_ref(store: Objects, namespace: str, ref: Mapping[str, Any], *, secret: bool) -> str | None:
    name, key, optional = str(ref.get("name") or ""), str(ref.get("key") or ""), bool(ref.get("optional"))
    if secret:
        data = _secret_data(store, namespace, name)
        kind = "Secret"
    else:
        cm = _configmap(store, namespace, name)
        data = configmap_data(cm) if cm is not None else None
        kind = "ConfigMap"
    if data is None:
        if optional:
            return None
        raise runtimes.ContainerConfigError(f'{kind.lower()} "{name}" not found')
    if key not in data:
        if optional:
            return None
        raise runtimes.ContainerConfigError(f"couldn't find key {key} in {kind} {namespace}/{name}")
    return data[key].decode("utf-8", errors="replace")


def api_endpoint(store: Objects) -> tuple[str, int] | None:
    """(address, port) of the API server's HTTPS endpoint as the ``kubernetes`` Endpoints name it."""
    endpoints = store.get(("", "endpoints", "default", "kubernetes"))
    for subset in (endpoints or {}).get("subsets") or []:
        addresses = [a.get("ip") for a in subset.get("addresses") or [] if a.get("ip")]
        ports = [p.get("port") for p in subset.get("ports") or [] if p.get("name") == "https"]
        if addresses and ports:
            return str(addresses[0]), int(ports[0])
    return None


def service_env(store: Objects) -> dict[str, str]:
    """The variables of the ``kubernetes`` Service, pointing at the API server's HTTPS endpoint."""
    endpoint = api_endpoint(store)
    if endpoint is None:
        return {}
    host, port = endpoint
    address = f"tcp://{host}:{port}"
    prefix = f"KUBERNETES_PORT_{port}_TCP"
    return {
        "KUBERNETES_SERVICE_HOST": host,
        "KUBERNETES_SERVICE_PORT": str(port),
        "KUBERNETES_SERVICE_PORT_HTTPS": str(port),
        "KUBERNETES_PORT": address,
        prefix: address,
        f"{prefix}_PROTO": "tcp",
        f"{prefix}_PORT": str(port),
        f"{prefix}_ADDR": host,
    }


def container_env(
    store: Objects, pod: Obj, container: Mapping[str, Any], *, pod_ip: str, host_ip: str
) -> dict[str, str]:
    """The container's variables in kubelet order (``envFrom``, ``env``, then the service variables)."""
    namespace = str((pod.get("metadata") or {}).get("namespace", ""))
    services = service_env(store)
    env: dict[str, str] = {}
    for source in container.get("envFrom") or []:
        if not isinstance(source, Mapping):
            continue
        prefix = str(source.get("prefix") or "")
        for field_name, is_secret in (("configMapRef", False), ("secretRef", True)):
            ref = source.get(field_name)
            if not isinstance(ref, Mapping):
                continue
            name, optional = str(ref.get("name") or ""), bool(ref.get("optional"))
            if is_secret:
                data = _secret_data(store, namespace, name)
            else:
                cm = _configmap(store, namespace, name)
                data = configmap_data(cm) if cm is not None else None
            if data is None:
                if optional:
                    continue
                raise runtimes.ContainerConfigError(
                    f'{"secret" if is_secret else "configmap"} "{name}" not found'
                )
            for key, raw in data.items():
                if ENV_NAME.match(prefix + key):
                    env[prefix + key] = raw.decode("utf-8", errors="replace")

    def lookup(name: str) -> str | None:
        return env.get(name, services.get(name))

    for entry in container.get("env") or []:
        if not isinstance(entry, Mapping) or not entry.get("name"):
            continue
        name = str(entry["name"])
        source = entry.get("valueFrom")
        if not isinstance(source, Mapping):
            env[name] = expand(str(entry.get("value") or ""), lookup)
            continue
        value: str | None
        if isinstance(source.get("fieldRef"), Mapping):
            try:
                value = field_value(
                    pod, str(source["fieldRef"].get("fieldPath", "")), pod_ip=pod_ip, host_ip=host_ip
                )
            except ValueError as exc:
                raise runtimes.ContainerConfigError(str(exc)) from None
        elif isinstance(source.get("resourceFieldRef"), Mapping):
            ref = source["resourceFieldRef"]
            value = resource_value(container, str(ref.get("resource") or ""), ref.get("divisor"))
        elif isinstance(source.get("configMapKeyRef"), Mapping):
            value = _key_ref(store, namespace, source["configMapKeyRef"], secret=False)
        elif isinstance(source.get("secretKeyRef"), Mapping):
            value = _key_ref(store, namespace, source["secretKeyRef"], secret=True)
        else:
            value = None
        if value is not None:
            env[name] = value
    for name, value in services.items():
        env.setdefault(name, value)
    return env
