"""Per-kind rules of the built-in kinds the emulated API server serves; the server's one entry point.

Pure functions over JSON-shaped dicts (no I/O, no clock); inputs are never mutated. Each is what
kube-apiserver 1.34/1.35 does for the kind on a write (defaulting, registry strategy, validation),
read in upstream ``pkg/apis/*/validation`` and ``pkg/registry``; apiserver-semantics.md S55, S57, S58,
S59, S61, S65, S66.

Defined here: Secrets (``prepare_secret``, ``validate_secret``, ``validate_secret_update``), Leases
(``prepare_lease``, ``validate_lease``), RBAC (``default_rolebinding``, ``validate_rolebinding``,
``validate_rolebinding_update``, ``validate_role``) and Namespaces (``default_namespace``). Pods live
in ``sim.pods`` and Events in ``sim.events``; their public functions are re-exported here so the
server needs only this module.

Conventions: ``prepare_*``/``default_*`` return the object to store and raise ``errors.ApiError``
(400) where real kube fails to decode the body; ``validate_*`` return ``FieldError`` lists (a 422);
``validate_*_update(old, new)`` include the full validation of ``new``, as upstream's do. Metadata is
checked by ``validation.validate_metadata``, not here.

Known limits: Secret data of the docker-config types is checked for presence, not parsed as JSON;
RBAC escalation checks and ClusterRoles/ClusterRoleBindings are not covered.
"""

from __future__ import annotations

import base64
import binascii
import copy
from collections.abc import Mapping
from typing import Any

from sim import errors, events, pods, validation

FieldError = errors.FieldError
Obj = dict[str, Any]

# Pods and Events (re-exported).
canonicalize_pod = pods.canonicalize_pod
default_pod = pods.default_pod
validate_pod = pods.validate_pod
validate_pod_update = pods.validate_pod_update
validate_core_event = events.validate_core_event
validate_events_v1 = events.validate_events_v1
validate_events_v1_update = events.validate_events_v1_update
core_to_events_v1 = events.core_to_events_v1
events_v1_to_core = events.events_v1_to_core

# -- Secrets --------------------------------------------------------------------------------------------

MAX_SECRET_SIZE = 1024 * 1024
_FIELD_IMMUTABLE_WHEN_SET = "field is immutable when `immutable` is set"
_B64 = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")


class Base64Error(ValueError):
    """Input Go's ``base64.StdEncoding`` refuses; ``str()`` is Go's ``CorruptInputError`` text."""

    def __init__(self, offset: int) -> None:
        super().__init__(f"illegal base64 data at input byte {offset}")
        self.offset = offset


def go_base64_decode(text: str) -> bytes:
    """Decode like Go's ``base64.StdEncoding.DecodeString`` (padding required, CR/LF skipped).

    Raises ``Base64Error`` at the byte offset Go reports.
    """
    src = text.encode("utf-8")
    si = 0
    while si < len(src):
        quantum = 0
        while quantum < 4:
            if si == len(src):
                if quantum == 0:
                    break
                raise Base64Error(si - quantum)
            ch = src[si]
            si += 1
            if ch in _B64:
                quantum += 1
                continue
            if ch in b"\r\n":
                continue
            if ch != ord("="):
                raise Base64Error(si - 1)
            if quantum in (0, 1):
                raise Base64Error(si - 1)
            if quantum == 2:
                while si < len(src) and src[si] in b"\r\n":
                    si += 1
                if si == len(src):
                    raise Base64Error(len(src))
                if src[si] != ord("="):
                    raise Base64Error(si - 1)
                si += 1
            while si < len(src) and src[si] in b"\r\n":
                si += 1
            if si < len(src):
                raise Base64Error(si)
            quantum = 4
            break
    cleaned = src.replace(b"\r", b"").replace(b"\n", b"")
    try:
        return base64.b64decode(cleaned, validate=True)
    except binascii.Error as exc:  # pragma: no cover - the scan above refuses everything b64decode would
        raise Base64Error(0) from exc


def _secret_decode_error(message: str) -> errors.ApiError:
    return errors.bad_request(f'Secret in version "v1" cannot be handled as a Secret: {message}')


def _unmarshal_error(value: Any, field: str, go_type: str) -> errors.ApiError:
    return _secret_decode_error(
        f"json: cannot unmarshal {_json_type(value)} into Go struct field Secret.{field} of type {go_type}"
    )


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, list):
        return "array"
    if isinstance(value, Mapping):
        return "object"
    return "string"


def prepare_secret(secret: Mapping[str, Any]) -> Obj:
    """A Secret as stored (S65): ``data`` checked as base64 and re-encoded canonically, ``stringData``
    merged into ``data`` (its keys win) and dropped, ``type`` defaulted to ``Opaque``.

    Raises ``errors.bad_request`` with kube's decode error for data that is not base64.
    """
    out: Obj = copy.deepcopy(dict(secret))
    data_in = out.get("data")
    if data_in is not None and not isinstance(data_in, Mapping):
        raise _unmarshal_error(data_in, "data", "map[string][]uint8")
    data: dict[str, Any] = {}
    for key, value in (data_in or {}).items():
        if value is None:
            data[key] = None
            continue
        if not isinstance(value, str):
            raise _unmarshal_error(value, "data", "[]uint8")
        try:
            data[key] = base64.b64encode(go_base64_decode(value)).decode("ascii")
        except Base64Error as exc:
            raise _secret_decode_error(str(exc)) from None
    string_data = out.pop("stringData", None)
    if string_data is not None and not isinstance(string_data, Mapping):
        raise _unmarshal_error(string_data, "stringData", "map[string]string")
    for key, value in (string_data or {}).items():
        if value is not None and not isinstance(value, str):
            raise _unmarshal_error(value, "stringData", "string")
        data[key] = base64.b64encode((value or "").encode("utf-8")).decode("ascii")
    if data:
        out["data"] = data
    else:
        out.pop("data", None)
    if not out.get("type"):
        out["type"] = "Opaque"
    return out


def _decoded_size(value: Any) -> int:
    if not isinstance(value, str):
        return 0
    try:
        return len(go_base64_decode(value))
    except Base64Error:
        return 0


def validate_secret(secret: Mapping[str, Any]) -> list[FieldError]:
    """``ValidateSecret`` without metadata: data keys, total size, the per-type required keys."""
    errs: list[FieldError] = []
    data = secret.get("data") or {}
    for key in sorted(data):
        errs += [errors.invalid_value(f"data[{key}]", key, m) for m in validation.is_config_map_key(key)]
    if sum(_decoded_size(v) for v in data.values()) > MAX_SECRET_SIZE:
        errs.append(FieldError("FieldValueTooLong", "data", f"must have at most {MAX_SECRET_SIZE} bytes"))
    secret_type = secret.get("type") or ""
    annotations = (secret.get("metadata") or {}).get("annotations") or {}
    if secret_type == "kubernetes.io/service-account-token":
        if not annotations.get("kubernetes.io/service-account.name"):
            errs.append(errors.required("metadata.annotations[kubernetes.io/service-account.name]"))
    elif secret_type == "kubernetes.io/dockercfg":
        if ".dockercfg" not in data:
            errs.append(errors.required("data[.dockercfg]"))
    elif secret_type == "kubernetes.io/dockerconfigjson":
        if ".dockerconfigjson" not in data:
            errs.append(errors.required("data[.dockerconfigjson]"))
    elif secret_type == "kubernetes.io/basic-auth":
        if "username" not in data and "password" not in data:
            errs += [errors.required("data[username]"), errors.required("data[password]")]
    elif secret_type == "kubernetes.io/ssh-auth":
        if not data.get("ssh-privatekey"):
            errs.append(errors.required("data[ssh-privatekey]"))
    elif secret_type == "kubernetes.io/tls":
        errs += [errors.required(f"data[{k}]") for k in ("tls.crt", "tls.key") if k not in data]
    return errs


def validate_secret_update(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[FieldError]:
    """``ValidateSecretUpdate`` (both prepared): ``type`` is immutable; ``immutable: true`` freezes
    ``data`` and itself; then ``validate_secret(new)``."""
    errs: list[FieldError] = []
    if (new.get("type") or "") != (old.get("type") or ""):
        errs.append(errors.invalid_value("type", new.get("type") or "", "field is immutable"))
    if old.get("immutable") is True:
        if new.get("immutable") is not True:
            errs.append(errors.forbidden("immutable", _FIELD_IMMUTABLE_WHEN_SET))
        if (new.get("data") or {}) != (old.get("data") or {}):
            errs.append(errors.forbidden("data", _FIELD_IMMUTABLE_WHEN_SET))
    return errs + validate_secret(new)


# -- Leases ---------------------------------------------------------------------------------------------


def prepare_lease(lease: Mapping[str, Any]) -> Obj:
    """A Lease as stored (S55): ``strategy``/``preferredHolder`` dropped (CoordinatedLeaderElection is
    off), ``acquireTime``/``renewTime`` parsed as MicroTime and re-emitted in UTC, nulls dropped.

    Raises ``errors.bad_request`` with kube's decode error for a time MicroTime parsing refuses
    (it needs exactly six fractional digits and an offset).
    """
    out: Obj = copy.deepcopy(dict(lease))
    spec: Obj = dict(out.get("spec") or {})
    spec.pop("strategy", None)
    spec.pop("preferredHolder", None)
    for key in ("acquireTime", "renewTime"):
        if key not in spec:
            continue
        if spec[key] is None:
            del spec[key]
            continue
        try:
            spec[key] = validation.format_micro_time(validation.parse_micro_time(spec[key]))
        except validation.TimeParseError as exc:
            raise errors.bad_request(f'Lease in version "v1" cannot be handled as a Lease: {exc}') from None
    out["spec"] = spec
    return out


def validate_lease(lease: Mapping[str, Any]) -> list[FieldError]:
    """``ValidateLeaseSpec``: ``leaseDurationSeconds`` > 0, ``leaseTransitions`` >= 0."""
    spec = lease.get("spec") or {}
    errs: list[FieldError] = []
    duration = spec.get("leaseDurationSeconds")
    if isinstance(duration, int) and duration <= 0:
        errs.append(errors.invalid_value("spec.leaseDurationSeconds", duration, "must be greater than 0"))
    transitions = spec.get("leaseTransitions")
    if isinstance(transitions, int) and transitions < 0:
        errs.append(
            errors.invalid_value("spec.leaseTransitions", transitions, "must be greater than or equal to 0")
        )
    return errs


# -- RBAC -----------------------------------------------------------------------------------------------

RBAC_GROUP = "rbac.authorization.k8s.io"


def default_rolebinding(rb: Mapping[str, Any]) -> Obj:
    """rbac/v1 defaults: ``roleRef.apiGroup`` (also of a missing roleRef, a zero struct in Go) and
    User/Group subjects' ``apiGroup`` become the RBAC group."""
    out: Obj = copy.deepcopy(dict(rb))
    raw_ref = out.get("roleRef")
    role_ref: Mapping[str, Any] = raw_ref if isinstance(raw_ref, Mapping) else {}
    if not role_ref.get("apiGroup"):
        out["roleRef"] = {"apiGroup": RBAC_GROUP, **{k: v for k, v in role_ref.items() if k != "apiGroup"}}
    if isinstance(out.get("subjects"), list):
        subjects = []
        for s in out["subjects"]:
            if isinstance(s, Mapping) and not s.get("apiGroup") and s.get("kind") in ("User", "Group"):
                s = {**s, "apiGroup": RBAC_GROUP}
            subjects.append(s)
        out["subjects"] = subjects
    return out


def _validate_subject(subject: Mapping[str, Any], path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    name = str(subject.get("name") or "")
    kind = subject.get("kind") or ""
    group = subject.get("apiGroup") or ""
    if not name:
        errs.append(errors.required(f"{path}.name"))
    if kind == "ServiceAccount":
        if name:
            errs += [
                errors.invalid_value(f"{path}.name", name, m) for m in validation.is_dns1123_subdomain(name)
            ]
        if group:
            errs.append(errors.not_supported(f"{path}.apiGroup", group, ("",)))
    elif kind in ("User", "Group"):
        if not name:
            errs.append(errors.invalid_value(f"{path}.name", name, f"{kind.lower()} name cannot be empty"))
        if group != RBAC_GROUP:
            errs.append(errors.not_supported(f"{path}.apiGroup", group, (RBAC_GROUP,)))
    else:
        errs.append(errors.not_supported(f"{path}.kind", kind, ("ServiceAccount", "User", "Group")))
    return errs


def validate_rolebinding(rb: Mapping[str, Any]) -> list[FieldError]:
    """``ValidateRoleBinding`` without metadata, on the rbac/v1-defaulted binding."""
    rb = default_rolebinding(rb)
    raw_ref = rb.get("roleRef")
    role_ref: Mapping[str, Any] = raw_ref if isinstance(raw_ref, Mapping) else {}
    errs: list[FieldError] = []
    group = role_ref.get("apiGroup") or ""
    if group != RBAC_GROUP:
        errs.append(errors.not_supported("roleRef.apiGroup", group, (RBAC_GROUP,)))
    kind = role_ref.get("kind") or ""
    if kind not in ("Role", "ClusterRole"):
        errs.append(errors.not_supported("roleRef.kind", kind, ("Role", "ClusterRole")))
    name = str(role_ref.get("name") or "")
    if not name:
        errs.append(errors.required("roleRef.name"))
    else:
        errs += [errors.invalid_value("roleRef.name", name, m) for m in validation.is_path_segment_name(name)]
    for i, subject in enumerate(rb.get("subjects") or []):
        path = f"subjects[{i}]"
        if not isinstance(subject, Mapping):
            errs.append(errors.type_invalid(path, subject, "must be of type object"))
            continue
        errs += _validate_subject(subject, path)
    return errs


def validate_rolebinding_update(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[FieldError]:
    """``ValidateRoleBindingUpdate``: ``validate_rolebinding(new)`` and an unchanged ``roleRef``."""
    errs = validate_rolebinding(new)
    old_ref = default_rolebinding(old).get("roleRef") or {}
    new_ref = default_rolebinding(new).get("roleRef") or {}
    if old_ref != new_ref:
        errs.append(errors.invalid_value("roleRef", new_ref, "cannot change roleRef"))
    return errs


def validate_role(role: Mapping[str, Any]) -> list[FieldError]:
    """``ValidateRole`` without metadata: every rule needs verbs, and resources or (never, for a
    namespaced Role) nonResourceURLs."""
    errs: list[FieldError] = []
    for i, rule in enumerate(role.get("rules") or []):
        path = f"rules[{i}]"
        if not isinstance(rule, Mapping):
            errs.append(errors.type_invalid(path, rule, "must be of type object"))
            continue
        if not rule.get("verbs"):
            errs.append(errors.required(f"{path}.verbs", "verbs must contain at least one value"))
        urls = rule.get("nonResourceURLs") or []
        if urls:
            errs.append(
                errors.invalid_value(
                    f"{path}.nonResourceURLs", urls, "namespaced rules cannot apply to non-resource URLs"
                )
            )
            if rule.get("apiGroups") or rule.get("resources") or rule.get("resourceNames"):
                errs.append(
                    errors.invalid_value(
                        f"{path}.nonResourceURLs",
                        urls,
                        "rules cannot apply to both regular resources and non-resource URLs",
                    )
                )
            continue
        if not rule.get("apiGroups"):
            errs.append(
                errors.required(f"{path}.apiGroups", "resource rules must supply at least one api group")
            )
        if not rule.get("resources"):
            errs.append(
                errors.required(f"{path}.resources", "resource rules must supply at least one resource")
            )
        if rule.get("resourceNames") and len(rule.get("resources") or []) > 1:
            errs.append(
                errors.required(f"{path}.resourceNames", "resource names cannot apply to multiple resources")
            )
    return errs


# -- Namespaces -----------------------------------------------------------------------------------------


def default_namespace(ns: Mapping[str, Any]) -> Obj:
    """A Namespace as created: the ``kubernetes`` finalizer in ``spec.finalizers``, ``status.phase``
    Active and the ``kubernetes.io/metadata.name`` label (always set to the name)."""
    out: Obj = copy.deepcopy(dict(ns))
    meta: Obj = dict(out.get("metadata") or {})
    name = meta.get("name") or ""
    if name:
        meta["labels"] = {**(meta.get("labels") or {}), "kubernetes.io/metadata.name": name}
    out["metadata"] = meta
    spec: Obj = dict(out.get("spec") or {})
    finalizers = list(spec.get("finalizers") or [])
    if "kubernetes" not in finalizers:
        finalizers.append("kubernetes")
    spec["finalizers"] = finalizers
    out["spec"] = spec
    out["status"] = {"phase": "Active"}
    return out


# -- CustomResourceDefinitions -------------------------------------------------------------------------


def validate_crd(crd: Mapping[str, Any]) -> list[FieldError]:
    """The required parts of a CRD's spec that serving it needs (a subset of
    ``ValidateCustomResourceDefinitionSpec``: group, names, scope, named versions)."""
    spec = crd.get("spec") or {}
    names = spec.get("names") or {}
    errs = [
        errors.required(path)
        for path, value in (
            ("spec.group", spec.get("group")),
            ("spec.names.plural", names.get("plural")),
            ("spec.names.kind", names.get("kind")),
            ("spec.scope", spec.get("scope")),
        )
        if not value
    ]
    versions = spec.get("versions") or []
    if not versions:
        errs.append(
            errors.required("spec.versions", "must have exactly one version marked as storage version")
        )
    errs += [errors.required(f"spec.versions[{i}].name") for i, v in enumerate(versions) if not v.get("name")]
    return errs
