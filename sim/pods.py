"""Pod rules of the emulated API server: defaulting, create-time admission, validation, update limits.

Pure functions over JSON-shaped dicts (no I/O, no clock; randomness comes in as ``random.Random``);
inputs are never mutated. Follows kube-apiserver 1.34/1.35 (``pkg/apis/core/v1/defaults.go``,
``pkg/registry/core/pod/strategy.go``, the ServiceAccount, DefaultTolerationSeconds and Priority admission
plugins, ``pkg/apis/core/validation``); apiserver-semantics.md S58, S59, S61.

* ``canonicalize_pod`` - what decoding a v1 Pod does on every write: scheme defaults (restartPolicy,
  dnsPolicy, grace period, container pull policy, ports, probes, volume modes, limits copied to missing
  requests, ...) and canonical resource quantities (``"0.5"`` CPU becomes ``"500m"``).
* ``default_pod`` - a create: the above, then status ``{phase: Pending, qosClass}``, the ServiceAccount
  admission (``default`` SA, token volume ``kube-api-access-xxxxx`` mounted read-only in every
  container), the not-ready/unreachable tolerations and priority 0 / PreemptLowerPriority.
* ``validate_pod`` and ``validate_pod_update`` (S61: only images, activeDeadlineSeconds, added
  tolerations and the negative-grace-period special case may change).
* ``parse_quantity`` / ``canonical_quantity`` - a small resource.Quantity.

Known limits: pod-level resources, scheduling gates (and the node selector/affinity mutations they
allow), ephemeral containers, sidecar restart rules, volume-source details and volumeMount name
references are not checked; a priorityClassName is not resolved (priority is only set when none is
given); the "does the ServiceAccount exist" check is the server's. The ``spec`` Forbidden error of an
illegal pod update omits the diff real kube appends. Spec comparison treats missing, null and empty
lists/maps as equal but, unlike Go, also a missing pointer and its zero value (``false``/``0``).
"""

from __future__ import annotations

import copy
import random
import re
from collections.abc import Mapping
from fractions import Fraction
from typing import Any

from sim import errors, validation

FieldError = errors.FieldError
Obj = dict[str, Any]

# -- resource.Quantity ----------------------------------------------------------------------------------

QUANTITY_REGEX = "^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$"
QUANTITY_FORMAT_ERROR = f"quantities must match the regular expression '{QUANTITY_REGEX}'"
_NUMBER_RE = re.compile(r"([+-]?)([0-9]*)(?:\.([0-9]*))?")
_BINARY = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_DECIMAL = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_DECIMAL_SUFFIX = {v: k for k, v in _DECIMAL.items()}
_BINARY_SUFFIX = {v: k for k, v in _BINARY.items()}
_NANO = Fraction(1, 10**9)


class QuantityError(ValueError):
    """A quantity string resource.ParseQuantity refuses; the text is Go's."""


def parse_quantity(text: Any) -> tuple[Fraction, str]:
    """Parse a quantity into its exact value and format (``BinarySI``, ``DecimalSI``, ``DecimalExponent``).

    JSON numbers are accepted like Go's ``Quantity.UnmarshalJSON`` does. Non-zero values are rounded
    away from zero to a whole number of nano units, as upstream does.
    """
    if isinstance(text, bool) or not isinstance(text, str | int | float):
        raise QuantityError(QUANTITY_FORMAT_ERROR)
    s = text.strip() if isinstance(text, str) else repr(text)
    if not s:
        raise QuantityError(QUANTITY_FORMAT_ERROR)
    if s == "0":
        return Fraction(0), "DecimalSI"
    match = _NUMBER_RE.match(s)
    assert match is not None
    sign, whole, frac = match.group(1), match.group(2), match.group(3) or ""
    suffix = s[match.end() :]
    if not whole and not frac:
        raise QuantityError(QUANTITY_FORMAT_ERROR)
    if not re.fullmatch(r"[eEinumkKMGTP]*[-+]?[0-9]*", suffix):
        raise QuantityError(QUANTITY_FORMAT_ERROR)
    number = Fraction(int(whole or "0")) + (Fraction(int(frac), 10 ** len(frac)) if frac else 0)
    if suffix in _BINARY:
        value, fmt = number * 2 ** _BINARY[suffix], "BinarySI"
    elif suffix in _DECIMAL:
        value, fmt = number * Fraction(10) ** _DECIMAL[suffix], "DecimalSI"
    elif re.fullmatch(r"[eE][-+]?[0-9]+", suffix):
        value, fmt = number * Fraction(10) ** int(suffix[1:]), "DecimalExponent"
    else:
        raise QuantityError("unable to parse quantity's suffix")
    if sign == "-":
        value = -value
    if value.denominator != 1 and (value / _NANO).denominator != 1:
        nanos = value / _NANO
        rounded = (
            -((-nanos.numerator) // nanos.denominator) if value > 0 else nanos.numerator // nanos.denominator
        )
        value = rounded * _NANO
    return value, fmt


def canonical_quantity(value: Fraction, fmt: str) -> str:
    """``Quantity.String()``: the canonical text of a parsed quantity."""
    if value == 0:
        return "0"
    if fmt == "BinarySI" and (-1024 < value < 1024 or value.denominator != 1):
        fmt = "DecimalSI"
    if fmt == "BinarySI":
        mantissa, exponent = value.numerator, 0
        while mantissa % 1024 == 0 and exponent < 60:
            mantissa //= 1024
            exponent += 10
        return f"{mantissa}{_BINARY_SUFFIX[exponent]}"
    # Decimal: an integer mantissa times 10**exponent, exponent a multiple of 3, as large as possible.
    exponent = 0
    scaled = value
    while scaled.denominator != 1:
        scaled *= 10
        exponent -= 1
    mantissa = scaled.numerator
    while mantissa % 10 == 0:
        mantissa //= 10
        exponent += 1
    while exponent % 3:
        mantissa *= 10
        exponent -= 1
    if fmt == "DecimalExponent":
        return f"{mantissa}e{exponent}" if exponent else str(mantissa)
    return f"{mantissa}{_DECIMAL_SUFFIX.get(exponent, '')}"


def canonicalize_quantity(text: Any) -> str:
    value, fmt = parse_quantity(text)
    return canonical_quantity(value, fmt)


# -- defaulting (v1 scheme defaults: what decoding a Pod does) -------------------------------------------

TOKEN_MOUNT_PATH = "/var/run/secrets/kubernetes.io/serviceaccount"
TOKEN_VOLUME_PREFIX = "kube-api-access-"


def _decode_error(message: str) -> errors.ApiError:
    return errors.bad_request(f'Pod in version "v1" cannot be handled as a Pod: {message}')


def _image_tag(image: str) -> str:
    """The tag ``parsers.ParseImageName`` finds: "latest" when there is neither tag nor digest."""
    name, _, digest = image.partition("@")
    last = name.rsplit("/", 1)[-1]
    if ":" in last:
        return last.rsplit(":", 1)[1]
    return "" if digest else "latest"


def _default_resources(resources: Any, *, copy_limits: bool) -> Obj:
    out: Obj = dict(resources) if isinstance(resources, Mapping) else {}
    for key in ("limits", "requests"):
        if isinstance(out.get(key), Mapping):
            try:
                out[key] = {k: canonicalize_quantity(v) for k, v in out[key].items()}
            except QuantityError as exc:
                raise _decode_error(str(exc)) from None
        if key in out and not out[key]:
            del out[key]  # Go drops nil and empty maps (omitempty)
    if copy_limits and out.get("limits"):
        requests = dict(out.get("requests") or {})
        for k, v in out["limits"].items():
            requests.setdefault(k, v)
        out["requests"] = requests
    return out


def _default_handler(handler: Any) -> Any:
    if not isinstance(handler, Mapping):
        return handler
    out = dict(handler)
    if isinstance(out.get("httpGet"), Mapping):
        get = dict(out["httpGet"])
        get.setdefault("path", "/")
        get.setdefault("scheme", "HTTP")
        out["httpGet"] = get
    return out


def _default_probe(probe: Any) -> Any:
    if not isinstance(probe, Mapping):
        return probe
    out = _default_handler(probe)
    for key, default in (
        ("timeoutSeconds", 1),
        ("periodSeconds", 10),
        ("successThreshold", 1),
        ("failureThreshold", 3),
    ):
        if not out.get(key):
            out[key] = default
    return out


def _default_field_ref(holder: Any) -> Any:
    if isinstance(holder, Mapping) and isinstance(holder.get("fieldRef"), Mapping):
        out = dict(holder)
        out["fieldRef"] = {
            "apiVersion": "v1",
            **{
                k: v
                for k, v in holder["fieldRef"].items()
                if v is not None and not (k == "apiVersion" and not v)
            },
        }
        return out
    return holder


def _default_container(container: Mapping[str, Any], *, host_network: bool, copy_limits: bool) -> Obj:
    c = dict(container)
    image = c.get("image") or ""
    if not c.get("imagePullPolicy"):
        c["imagePullPolicy"] = "Always" if _image_tag(str(image)) == "latest" else "IfNotPresent"
    if not c.get("terminationMessagePath"):
        c["terminationMessagePath"] = "/dev/termination-log"
    if not c.get("terminationMessagePolicy"):
        c["terminationMessagePolicy"] = "File"
    c["resources"] = _default_resources(c.get("resources"), copy_limits=copy_limits)
    if isinstance(c.get("ports"), list):
        ports = []
        for port in c["ports"]:
            p = dict(port) if isinstance(port, Mapping) else port
            if isinstance(p, dict):
                if not p.get("protocol"):
                    p["protocol"] = "TCP"
                if host_network and not p.get("hostPort") and p.get("containerPort"):
                    p["hostPort"] = p["containerPort"]
            ports.append(p)
        c["ports"] = ports
    if isinstance(c.get("env"), list):
        c["env"] = [
            {**e, "valueFrom": _default_field_ref(e["valueFrom"])}
            if isinstance(e, Mapping) and isinstance(e.get("valueFrom"), Mapping)
            else e
            for e in c["env"]
        ]
    for probe in ("livenessProbe", "readinessProbe", "startupProbe"):
        if probe in c:
            c[probe] = _default_probe(c[probe])
    if isinstance(c.get("lifecycle"), Mapping):
        c["lifecycle"] = {k: _default_handler(v) for k, v in c["lifecycle"].items()}
    return c


def _default_volume(volume: Any) -> Any:
    if not isinstance(volume, Mapping):
        return volume
    v = dict(volume)
    for source in ("secret", "configMap", "downwardAPI", "projected"):
        if isinstance(v.get(source), Mapping):
            src = dict(v[source])
            if src.get("defaultMode") is None:
                src["defaultMode"] = 420
            if source == "downwardAPI" and isinstance(src.get("items"), list):
                src["items"] = [_default_field_ref(i) for i in src["items"]]
            if source == "projected" and isinstance(src.get("sources"), list):
                src["sources"] = [_default_projection(s) for s in src["sources"]]
            v[source] = src
    return v


def _default_projection(projection: Any) -> Any:
    if not isinstance(projection, Mapping):
        return projection
    p = dict(projection)
    if isinstance(p.get("serviceAccountToken"), Mapping):
        token = dict(p["serviceAccountToken"])
        if not token.get("expirationSeconds"):
            token["expirationSeconds"] = 3600
        p["serviceAccountToken"] = token
    if isinstance(p.get("downwardAPI"), Mapping) and isinstance(p["downwardAPI"].get("items"), list):
        p["downwardAPI"] = {
            **p["downwardAPI"],
            "items": [_default_field_ref(i) for i in p["downwardAPI"]["items"]],
        }
    return p


def canonicalize_pod(pod: Mapping[str, Any]) -> Obj:
    """The v1 scheme defaults and canonical quantities, as every decoded Pod write gets them.

    Raises ``errors.ApiError`` (400) for a resource quantity that does not parse.
    """
    out: Obj = copy.deepcopy(dict(pod))
    spec: Obj = dict(out.get("spec") or {})
    if not spec.get("dnsPolicy"):
        spec["dnsPolicy"] = "ClusterFirst"
    if not spec.get("restartPolicy"):
        spec["restartPolicy"] = "Always"
    if spec.get("securityContext") is None:
        spec["securityContext"] = {}
    if spec.get("terminationGracePeriodSeconds") is None:
        spec["terminationGracePeriodSeconds"] = 30
    if not spec.get("schedulerName"):
        spec["schedulerName"] = "default-scheduler"
    if spec.get("enableServiceLinks") is None:
        spec["enableServiceLinks"] = True
    # v1 conversion: the deprecated serviceAccount fills serviceAccountName and mirrors it on output.
    if not spec.get("serviceAccountName") and spec.get("serviceAccount"):
        spec["serviceAccountName"] = spec["serviceAccount"]
    if spec.get("serviceAccountName"):
        spec["serviceAccount"] = spec["serviceAccountName"]
    host_network = bool(spec.get("hostNetwork"))
    for key in ("initContainers", "containers"):
        if isinstance(spec.get(key), list):
            spec[key] = [
                _default_container(c, host_network=host_network, copy_limits=True)
                if isinstance(c, Mapping)
                else c
                for c in spec[key]
            ]
    if isinstance(spec.get("volumes"), list):
        spec["volumes"] = [_default_volume(v) for v in spec["volumes"]]
    out["spec"] = spec
    return out


# -- create: status, ServiceAccount / DefaultTolerationSeconds / Priority admission ----------------------

_QOS_RESOURCES = ("cpu", "memory")


def qos_class(pod: Mapping[str, Any]) -> str:
    """``qos.ComputePodQOS`` over containers and init containers (container-level resources only)."""
    spec = pod.get("spec") or {}
    requests: dict[str, Fraction] = {}
    limits: dict[str, Fraction] = {}
    guaranteed = True
    for container in list(spec.get("initContainers") or []) + list(spec.get("containers") or []):
        resources = (container or {}).get("resources") or {}
        for name, q in (resources.get("requests") or {}).items():
            if name in _QOS_RESOURCES and (value := parse_quantity(q)[0]) > 0:
                requests[name] = requests.get(name, Fraction(0)) + value
        found = set()
        for name, q in (resources.get("limits") or {}).items():
            if name in _QOS_RESOURCES and (value := parse_quantity(q)[0]) > 0:
                found.add(name)
                limits[name] = limits.get(name, Fraction(0)) + value
        if not found.issuperset(_QOS_RESOURCES):
            guaranteed = False
    if not requests and not limits:
        return "BestEffort"
    matching = all(limits.get(name) == req for name, req in requests.items())
    if guaranteed and matching and len(requests) == len(limits):
        return "Guaranteed"
    return "Burstable"


_DEFAULT_TOLERATIONS = ("node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable")


def _tolerates(tolerations: list[Any], key: str) -> bool:
    for t in tolerations:
        if not isinstance(t, Mapping):
            continue
        if (t.get("key") in (key, "", None)) and t.get("effect") in ("NoExecute", "", None):
            return True
    return False


def _token_volume(name: str) -> Obj:
    return {
        "name": name,
        "projected": {
            "sources": [
                {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
                {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
                {
                    "downwardAPI": {
                        "items": [
                            {
                                "path": "namespace",
                                "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"},
                            }
                        ]
                    }
                },
            ],
            "defaultMode": 420,
        },
    }


def _mount_token(spec: Obj, rand: random.Random) -> None:
    volumes = list(spec.get("volumes") or [])
    names = {v.get("name") for v in volumes if isinstance(v, Mapping)}
    existing = next((n for n in names if isinstance(n, str) and n.startswith(TOKEN_VOLUME_PREFIX)), None)
    name = existing
    while name is None or (existing is None and name in names):
        name = validation.generate_name(TOKEN_VOLUME_PREFIX, rand)
    mount = {"name": name, "readOnly": True, "mountPath": TOKEN_MOUNT_PATH}
    needed = False
    for key in ("initContainers", "containers"):
        containers = []
        for c in spec.get(key) or []:
            if isinstance(c, Mapping):
                mounts = list(c.get("volumeMounts") or [])
                if not any(isinstance(m, Mapping) and m.get("mountPath") == TOKEN_MOUNT_PATH for m in mounts):
                    c = {**c, "volumeMounts": [*mounts, dict(mount)]}
                    needed = True
            containers.append(c)
        if key in spec:
            spec[key] = containers
    if needed and existing is None:
        spec["volumes"] = [*volumes, _token_volume(name)]


def default_pod(
    pod: Mapping[str, Any], rand: random.Random, *, service_account: Mapping[str, Any] | None = None
) -> Obj:
    """A pod as kube-apiserver stores it on create (S58), before validation.

    ``service_account`` is the pod's ServiceAccount object when the caller has it; its
    ``automountServiceAccountToken: false`` suppresses the token volume unless the pod sets the field.
    """
    out = canonicalize_pod(pod)
    spec: Obj = out["spec"]
    if not spec.get("serviceAccountName"):
        spec["serviceAccountName"] = "default"
    spec["serviceAccount"] = spec["serviceAccountName"]
    if not spec.get("priorityClassName") and spec.get("priority") is None:
        spec["priority"] = 0
    if spec.get("priority") is not None and not spec.get("preemptionPolicy"):
        spec["preemptionPolicy"] = "PreemptLowerPriority"
    tolerations = list(spec.get("tolerations") or [])
    for key in _DEFAULT_TOLERATIONS:
        if not _tolerates(tolerations, key):
            tolerations.append(
                {"key": key, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}
            )
    spec["tolerations"] = tolerations
    automount = spec.get("automountServiceAccountToken")
    if automount is None and service_account is not None:
        automount = service_account.get("automountServiceAccountToken")
    if automount is not False:
        _mount_token(spec, rand)
    try:
        qos = qos_class(out)
    except QuantityError:  # pragma: no cover - canonicalize_pod already refused bad quantities
        qos = "BestEffort"
    out["status"] = {"phase": "Pending", "qosClass": qos}
    return out


# -- validation -----------------------------------------------------------------------------------------

_RESTART_POLICIES = ("Always", "OnFailure", "Never")
_DNS_POLICIES = ("ClusterFirstWithHostNet", "ClusterFirst", "Default", "None")
_PULL_POLICIES = ("Always", "IfNotPresent", "Never")
_MESSAGE_POLICIES = ("File", "FallbackToLogsOnError")
_PROTOCOLS = ("SCTP", "TCP", "UDP")
_MAX_INT32 = 2**31 - 1


def _enum(path: str, value: Any, supported: tuple[str, ...]) -> list[FieldError]:
    if not value:
        return [errors.required(path)]
    if value not in supported:
        return [errors.not_supported(path, value, supported)]
    return []


def _is_valid_port_name(name: str) -> list[str]:
    msgs = []
    if len(name) > 15:
        msgs.append("must be no more than 15 characters")
    if not re.fullmatch("[-a-z0-9]+", name):
        msgs.append("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)")
    if not re.search("[a-z]", name):
        msgs.append("must contain at least one letter (a-z)")
    if "--" in name:
        msgs.append("must not contain consecutive hyphens")
    if name.startswith("-") or name.endswith("-"):
        msgs.append("must not begin or end with a hyphen")
    return msgs


def _validate_ports(ports: Any, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    names: set[str] = set()
    for i, port in enumerate(ports or []):
        p = f"{path}[{i}]"
        if not isinstance(port, Mapping):
            errs.append(errors.type_invalid(p, port, "must be of type object"))
            continue
        name = port.get("name") or ""
        if name:
            msgs = _is_valid_port_name(str(name))
            if msgs:
                errs += [errors.invalid_value(f"{p}.name", name, m) for m in msgs]
            elif name in names:
                errs.append(errors.duplicate(f"{p}.name", name))
            else:
                names.add(name)
        for key in ("containerPort", "hostPort"):
            value = port.get(key) or 0
            if key == "containerPort" and not value:
                errs.append(errors.required(f"{p}.containerPort"))
            elif value and not 1 <= value <= 65535:
                errs.append(
                    errors.invalid_value(f"{p}.{key}", value, validation.inclusive_range_error(1, 65535))
                )
        errs += _enum(f"{p}.protocol", port.get("protocol"), _PROTOCOLS)
    return errs


def _validate_resources(resources: Any, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    if not isinstance(resources, Mapping):
        return errs
    limits = resources.get("limits") or {}
    for kind in ("limits", "requests"):
        for name, q in sorted((resources.get(kind) or {}).items()):
            try:
                value = parse_quantity(q)[0]
            except QuantityError as exc:
                errs.append(errors.invalid_value(f"{path}.{kind}[{name}]", q, str(exc)))
                continue
            if value < 0:
                errs.append(
                    errors.invalid_value(
                        f"{path}.{kind}[{name}]", str(q), "must be greater than or equal to 0"
                    )
                )
            if kind == "requests" and name in limits:
                try:
                    limit = parse_quantity(limits[name])[0]
                except QuantityError:
                    continue
                if value > limit:
                    errs.append(
                        errors.invalid_value(
                            f"{path}.requests",
                            str(q),
                            f"must be less than or equal to {name} limit of {limits[name]}",
                        )
                    )
    return errs


def _validate_container(c: Mapping[str, Any], path: str, *, regular: bool) -> list[FieldError]:
    errs: list[FieldError] = []
    name = c.get("name") or ""
    if not name:
        errs.append(errors.required(f"{path}.name"))
    else:
        errs += [
            errors.invalid_value(f"{path}.name", name, m) for m in validation.is_dns1123_label(str(name))
        ]
    image = c.get("image") or ""
    if not image:
        errs.append(errors.required(f"{path}.image"))
    errs += _enum(f"{path}.terminationMessagePolicy", c.get("terminationMessagePolicy"), _MESSAGE_POLICIES)
    errs += _validate_ports(c.get("ports"), f"{path}.ports")
    errs += _enum(f"{path}.imagePullPolicy", c.get("imagePullPolicy"), _PULL_POLICIES)
    errs += _validate_resources(c.get("resources"), f"{path}.resources")
    if regular and c.get("restartPolicy") is not None:
        errs.append(errors.forbidden(f"{path}.restartPolicy", "may not be set for non-init containers"))
    if isinstance(image, str) and image != image.strip():
        errs.append(
            errors.invalid_value(f"{path}.image", image, "must not have leading or trailing whitespace")
        )
    return errs


def validate_tolerations(tolerations: Any, path: str = "spec.tolerations") -> list[FieldError]:
    errs: list[FieldError] = []
    for i, t in enumerate(tolerations or []):
        p = f"{path}[{i}]"
        if not isinstance(t, Mapping):
            errs.append(errors.type_invalid(p, t, "must be of type object"))
            continue
        key, op, value, effect = (
            (t.get("key") or ""),
            (t.get("operator") or ""),
            (t.get("value") or ""),
            (t.get("effect") or ""),
        )
        if key:
            errs += [errors.invalid_value(f"{p}.key", key, m) for m in validation.is_qualified_name(str(key))]
        if not key and op != "Exists":
            errs.append(
                errors.invalid_value(
                    f"{p}.operator",
                    op,
                    "operator must be Exists when `key` is empty, which means "
                    '"match all values and all keys"',
                )
            )
        if t.get("tolerationSeconds") is not None and effect != "NoExecute":
            errs.append(
                errors.invalid_value(
                    f"{p}.effect", effect, "effect must be 'NoExecute' when `tolerationSeconds` is set"
                )
            )
        if op in ("Equal", ""):
            msgs = validation.is_label_value(str(value))
            if msgs:
                errs.append(errors.invalid_value(f"{p}.operator", value, ";".join(msgs)))
        elif op == "Exists":
            if value:
                errs.append(
                    errors.invalid_value(
                        f"{p}.operator", value, "value must be empty when `operator` is 'Exists'"
                    )
                )
        else:
            errs.append(errors.not_supported(f"{p}.operator", op, ("Equal", "Exists")))
        if effect and effect not in ("NoSchedule", "PreferNoSchedule", "NoExecute"):
            errs.append(
                errors.not_supported(f"{p}.effect", effect, ("NoSchedule", "PreferNoSchedule", "NoExecute"))
            )
    return errs


def validate_pod(pod: Mapping[str, Any]) -> list[FieldError]:
    """The basics of ``ValidatePodCreate`` for a defaulted pod (metadata is ``validation``'s job)."""
    spec = pod.get("spec") or {}
    errs: list[FieldError] = []
    volume_names: set[str] = set()
    for i, volume in enumerate(spec.get("volumes") or []):
        p = f"spec.volumes[{i}]"
        name = (volume or {}).get("name") or ""
        if not name:
            errs.append(errors.required(f"{p}.name"))
        else:
            errs += [
                errors.invalid_value(f"{p}.name", name, m) for m in validation.is_dns1123_label(str(name))
            ]
            if name in volume_names:
                errs.append(errors.duplicate(f"{p}.name", name))
            volume_names.add(name)
    containers = spec.get("containers") or []
    if not containers:
        errs.append(errors.required("spec.containers"))
    names: set[Any] = set()
    for i, c in enumerate(containers):
        p = f"spec.containers[{i}]"
        errs += _validate_container(c or {}, p, regular=True)
        name = (c or {}).get("name")
        if name in names:
            errs.append(errors.duplicate(f"{p}.name", name))
        names.add(name)
    for i, c in enumerate(spec.get("initContainers") or []):
        p = f"spec.initContainers[{i}]"
        errs += _validate_container(c or {}, p, regular=False)
        name = (c or {}).get("name")
        if name in names:
            errs.append(errors.duplicate(f"{p}.name", name))
        names.add(name)
    errs += _enum("spec.restartPolicy", spec.get("restartPolicy"), _RESTART_POLICIES)
    errs += _enum("spec.dnsPolicy", spec.get("dnsPolicy"), _DNS_POLICIES)
    if spec.get("terminationGracePeriodSeconds") is None:
        errs.append(errors.required("spec.terminationGracePeriodSeconds"))
    for key in ("serviceAccountName", "nodeName"):
        if spec.get(key):
            errs += [
                errors.invalid_value(f"spec.{key}", spec[key], m)
                for m in validation.is_dns1123_subdomain(str(spec[key]))
            ]
    deadline = spec.get("activeDeadlineSeconds")
    if deadline is not None and not 1 <= deadline <= _MAX_INT32:
        errs.append(
            errors.invalid_value(
                "spec.activeDeadlineSeconds", deadline, validation.inclusive_range_error(1, _MAX_INT32)
            )
        )
    for key in ("hostname", "subdomain"):
        if spec.get(key):
            errs += [
                errors.invalid_value(f"spec.{key}", spec[key], m)
                for m in validation.is_dns1123_label(str(spec[key]))
            ]
    errs += validate_tolerations(spec.get("tolerations"))
    return errs


UPDATABLE_POD_SPEC_FIELDS = (
    "`spec.containers[*].image`",
    "`spec.initContainers[*].image`",
    "`spec.activeDeadlineSeconds`",
    "`spec.tolerations` (only additions to existing tolerations)",
    "`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)",
)
POD_UPDATE_FORBIDDEN = "pod updates may not change fields other than " + ",".join(UPDATABLE_POD_SPEC_FIELDS)


def _semantic(value: Any) -> Any:
    """A comparable form: nulls and empty lists/maps dropped (Go's semantic equality treats nil and
    empty alike, and a missing field decodes to its zero value)."""
    if isinstance(value, Mapping):
        out = {k: _semantic(v) for k, v in value.items()}
        return {k: v for k, v in out.items() if v not in (None, "", False, 0, [], {})}
    if isinstance(value, list):
        return [_semantic(v) for v in value]
    return value


def _container_update_errors(new: list[Any], old: list[Any], path: str) -> tuple[list[FieldError], bool]:
    if len(new) != len(old):
        return [errors.forbidden(path, "pod updates may not add or remove containers")], True
    errs: list[FieldError] = []
    for i, c in enumerate(new):
        image = (c or {}).get("image") or ""
        if not image:
            errs.append(errors.required(f"{path}[{i}].image"))
        elif image != image.strip():
            errs.append(
                errors.invalid_value(
                    f"{path}[{i}].image", image, "must not have leading or trailing whitespace"
                )
            )
    return errs, False


def validate_pod_update(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[FieldError]:
    """``ValidatePodUpdate`` (S61): ``validate_pod(new)`` plus what may change on a pod's spec."""
    errs = validate_pod(new)
    old_spec: Obj = dict(old.get("spec") or {})
    new_spec: Obj = dict(new.get("spec") or {})
    for key in ("containers", "initContainers"):
        more, stop = _container_update_errors(
            list(new_spec.get(key) or []), list(old_spec.get(key) or []), f"spec.{key}"
        )
        errs += more
        if stop:
            return errs
    new_deadline, old_deadline = new_spec.get("activeDeadlineSeconds"), old_spec.get("activeDeadlineSeconds")
    if new_deadline is not None:
        if not 0 <= new_deadline <= _MAX_INT32:
            return [
                *errs,
                errors.invalid_value(
                    "spec.activeDeadlineSeconds",
                    new_deadline,
                    validation.inclusive_range_error(0, _MAX_INT32),
                ),
            ]
        if old_deadline is not None and old_deadline < new_deadline:
            return [
                *errs,
                errors.invalid_value(
                    "spec.activeDeadlineSeconds", new_deadline, "must be less than or equal to previous value"
                ),
            ]
    elif old_deadline is not None:
        errs.append(
            errors.invalid_value(
                "spec.activeDeadlineSeconds", None, "must not update from a positive integer to nil value"
            )
        )
    new_tolerations = [_semantic(t) for t in new_spec.get("tolerations") or []]
    for old_t in old_spec.get("tolerations") or []:
        wanted = {k: v for k, v in _semantic(old_t).items() if k != "tolerationSeconds"}
        if not any(
            {k: v for k, v in t.items() if k != "tolerationSeconds"} == wanted for t in new_tolerations
        ):
            errs.append(
                errors.forbidden(
                    "spec.tolerations", "existing toleration can not be modified except its tolerationSeconds"
                )
            )
            break
    # Munge the updatable fields back to their old values; anything still different is forbidden.
    munged = dict(new_spec)
    for key in ("containers", "initContainers"):
        if key in munged or key in old_spec:
            munged[key] = [
                {**(c or {}), "image": (o or {}).get("image")}
                for c, o in zip(new_spec.get(key) or [], old_spec.get(key) or [], strict=True)
            ]
    for key in ("activeDeadlineSeconds", "tolerations", "schedulingGates"):
        munged[key] = old_spec.get(key)
    old_grace, new_grace = (
        old_spec.get("terminationGracePeriodSeconds"),
        munged.get("terminationGracePeriodSeconds"),
    )
    if old_grace is not None and old_grace < 0 and new_grace == 1:
        munged["terminationGracePeriodSeconds"] = old_grace
    if _semantic(munged) != _semantic(old_spec):
        errs.append(errors.forbidden("spec", POD_UPDATE_FORBIDDEN))
    return errs
