"""What the emulated API server checks and fills in on every write, per kind.

``prepare_create`` and ``prepare_update`` are the admission chain and registry strategy rolled into
one: metadata validation, the CRD structural schema (pruning, defaulting, validation), and the rules
of the built-in kinds (pod defaults and update restrictions, ServiceAccount admission, secret data,
lease and event validation, RBAC roleRef immutability, the apps/v1 workloads of ``sim.workloads``, the
storage kinds and the DefaultStorageClass admission of ``sim.persistentvolumes``). They raise
``errors.ApiError`` and return the object to store plus the warnings to send back in ``Warning`` headers.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from typing import Any

from sim import builtins, errors, persistentvolumes, schemas, services, validation, workloads
from sim.kinds import Kind
from sim.store import Obj

# The ServiceAccount (namespace, name) for the ServiceAccount admission of pods; None when missing.
SaLookup = Callable[[str, str], Obj | None]
# Answers "which StorageClass is the default?" for the DefaultStorageClass admission of claims.
DefaultClassLookup = Callable[[], str | None]

_schema_cache: dict[int, schemas.StructuralSchema] = {}


def _schema(kind: Kind) -> schemas.StructuralSchema:
    assert kind.schema is not None
    key = id(kind.schema)
    if key not in _schema_cache:
        _schema_cache[key] = schemas.StructuralSchema(kind.schema)
    return _schema_cache[key]


def _raise_invalid(kind: Kind, name: str, errs: list[errors.FieldError]) -> None:
    if errs:
        raise errors.invalid(kind.kind, kind.group, name, errs)


def _custom(kind: Kind, obj: Obj, field_validation: str) -> tuple[Obj, list[str]]:
    out, unknown, errs = _schema(kind).process(obj)
    warnings: list[str] = []
    if unknown and field_validation == "Strict":
        raise errors.bad_request(
            "strict decoding error: " + ", ".join(f'unknown field "{u}"' for u in unknown)
        )
    if field_validation != "Ignore":
        warnings = [f'unknown field "{u}"' for u in unknown]
    _raise_invalid(kind, (obj.get("metadata") or {}).get("name", ""), errs)
    return out, warnings


def _metadata(kind: Kind, obj: Obj, old: Obj | None) -> list[str]:
    """Validate ObjectMeta; returns the finalizer warnings of custom resources."""
    meta = obj.get("metadata") or {}
    if kind.group == "" and kind.plural == "events":
        return []  # core/v1 Event writes skip ObjectMeta validation upstream
    # CRDs are validated by apiextensions' own rules, on apimachinery's ObjectMeta validation (their
    # cleanup finalizer has no '/').
    strict = not kind.is_custom and kind.key != ("apiextensions.k8s.io", "customresourcedefinitions")
    errs = validation.validate_metadata(
        meta, name_rule=kind.name_rule, namespaced=kind.namespaced, strict_finalizers=strict
    )
    _raise_invalid(kind, meta.get("name", ""), errs)
    if kind.is_custom:
        return validation.finalizer_warnings(meta, None if old is None else old.get("metadata") or {})
    return []


def prepare_create(
    kind: Kind,
    obj: Obj,
    *,
    field_validation: str,
    service_account: SaLookup,
    rand: random.Random,
    default_class: DefaultClassLookup = lambda: None,
) -> tuple[Obj, list[str]]:
    warnings: list[str] = []
    meta, warnings_dedup = validation.dedupe_owner_references(obj.get("metadata") or {})
    obj = {**obj, "metadata": meta}
    warnings += warnings_dedup
    if kind.is_custom:
        obj, more = _custom(kind, obj, field_validation)
        warnings += more
    elif kind.key in _STORAGE or kind.group == "apps":
        obj = _storage_or_workload_create(kind, obj, default_class)
    else:
        obj = _builtin_create(kind, obj, service_account=service_account, rand=rand)
    warnings += _metadata(kind, obj, None)
    return obj, warnings


def _builtin_create(kind: Kind, obj: Obj, *, service_account: SaLookup, rand: random.Random) -> Obj:
    name = (obj.get("metadata") or {}).get("name", "")
    plural = kind.plural
    if kind.group == "" and plural == "pods":
        namespace = (obj.get("metadata") or {}).get("namespace", "")
        spec = obj.get("spec")
        spec = spec if isinstance(spec, dict) else {}
        sa = str(spec.get("serviceAccountName") or spec.get("serviceAccount") or "default")
        account = service_account(namespace, sa)
        # The account's automountServiceAccountToken applies unless the pod says otherwise (S58).
        obj = builtins.default_pod(obj, rand, service_account=account)
        _raise_invalid(kind, name, builtins.validate_pod(obj))
        if account is None:
            raise errors.forbidden_error(
                "pods",
                "",
                name,
                f'error looking up service account {namespace}/{sa}: serviceaccount "{sa}" not found',
            )
    elif kind.group == "" and plural == "secrets":
        obj = builtins.prepare_secret(obj)
        _raise_invalid(kind, name, builtins.validate_secret(obj))
    elif kind.group == "coordination.k8s.io":
        obj = builtins.prepare_lease(obj)
        _raise_invalid(kind, name, builtins.validate_lease(obj))
    elif plural == "events" and kind.group == "":
        _raise_invalid(kind, name, builtins.validate_core_event(obj))
    elif plural == "events":
        _raise_invalid(kind, name, builtins.validate_events_v1(obj))
    elif kind.group == "rbac.authorization.k8s.io" and plural == "rolebindings":
        obj = builtins.default_rolebinding(obj)
        _raise_invalid(kind, name, builtins.validate_rolebinding(obj))
    elif kind.group == "rbac.authorization.k8s.io" and plural == "roles":
        _raise_invalid(kind, name, builtins.validate_role(obj))
    elif kind.group == "apiextensions.k8s.io":
        _raise_invalid(kind, name, builtins.validate_crd(obj))
    elif kind.group == "" and plural == "namespaces":
        obj = builtins.default_namespace(obj)
    elif kind.group == "" and plural == "services":
        obj = services.default_service(obj)
    return obj


def prepare_update(kind: Kind, old: Obj, new: Obj, *, field_validation: str) -> tuple[Obj, list[str]]:
    warnings: list[str] = []
    meta, warnings_dedup = validation.dedupe_owner_references(new.get("metadata") or {})
    new = {**new, "metadata": meta}
    warnings += warnings_dedup
    name = meta.get("name", "")
    errs = validation.check_finalizers_while_deleting(old.get("metadata") or {}, meta)
    _raise_invalid(kind, name, errs)
    if kind.is_custom:
        new, more = _custom(kind, new, field_validation)
        warnings += more
    elif kind.key in _STORAGE or kind.group == "apps":
        new = _storage_or_workload_update(kind, old, new)
    else:
        new = _builtin_update(kind, old, new)
    warnings += _metadata(kind, new, old)
    return new, warnings


def _builtin_update(kind: Kind, old: Obj, new: Obj) -> Obj:
    name = (new.get("metadata") or {}).get("name", "")
    plural = kind.plural
    if kind.group == "" and plural == "pods":
        new = builtins.canonicalize_pod(new)
        _raise_invalid(kind, name, builtins.validate_pod_update(old, new))
    elif kind.group == "" and plural == "secrets":
        new = builtins.prepare_secret(new)
        _raise_invalid(kind, name, builtins.validate_secret_update(old, new))
    elif kind.group == "coordination.k8s.io":
        new = builtins.prepare_lease(new)
        _raise_invalid(kind, name, builtins.validate_lease(new))
    elif kind.group == "rbac.authorization.k8s.io" and plural == "rolebindings":
        new = builtins.default_rolebinding(new)
        _raise_invalid(kind, name, builtins.validate_rolebinding_update(old, new))
    elif kind.group == "rbac.authorization.k8s.io" and plural == "roles":
        _raise_invalid(kind, name, builtins.validate_role(new))
    elif plural == "events" and kind.group == "":
        _raise_invalid(kind, name, builtins.validate_core_event(new))
    elif plural == "events":
        # Both are stored (core) shapes here; the events.k8s.io/v1 rules take the v1 view.
        old_v1, new_v1 = builtins.core_to_events_v1(old), builtins.core_to_events_v1(new)
        _raise_invalid(kind, name, builtins.validate_events_v1_update(old_v1, new_v1))
    elif kind.group == "apiextensions.k8s.io":
        _raise_invalid(kind, name, builtins.validate_crd(new))
    elif kind.group == "" and plural == "services":
        new = services.keep_allocated(old, services.default_service(new, create=False))
        _raise_invalid(kind, name, services.validate_update(old, new))
    return new


_PVC = ("", "persistentvolumeclaims")
_PV = ("", "persistentvolumes")
_SC = ("storage.k8s.io", "storageclasses")
_STORAGE = (_PVC, _PV, _SC)


def _storage_or_workload_create(kind: Kind, obj: Obj, default_class: DefaultClassLookup) -> Obj:
    """The apps/v1 kinds and the storage kinds on create: status reset (PrepareForCreate), defaults,
    admission, validation."""
    name = (obj.get("metadata") or {}).get("name", "")
    if kind.status_subresource:
        obj = {k: v for k, v in obj.items() if k != "status"}
    if kind.key == _PVC:
        obj = persistentvolumes.admit_claim(persistentvolumes.default_claim(obj), default_class())
        _raise_invalid(kind, name, persistentvolumes.validate_claim(obj))
    elif kind.key == _PV:
        obj = persistentvolumes.admit_volume(persistentvolumes.default_volume(obj))
        _raise_invalid(kind, name, persistentvolumes.validate_volume(obj))
    elif kind.key == _SC:
        obj = persistentvolumes.default_class(obj)
        _raise_invalid(kind, name, persistentvolumes.validate_class(obj))
    else:
        obj = workloads.prepare(kind.kind, obj)
        _raise_invalid(kind, name, workloads.validate(kind.kind, obj))
    return obj


def _storage_or_workload_update(kind: Kind, old: Obj, new: Obj) -> Obj:
    name = (new.get("metadata") or {}).get("name", "")
    if kind.key == _PVC:
        new = persistentvolumes.default_claim(new)
        _raise_invalid(kind, name, persistentvolumes.validate_claim_update(old, new))
    elif kind.key == _PV:
        new = persistentvolumes.default_volume(new)
        _raise_invalid(kind, name, persistentvolumes.validate_volume_update(old, new))
    elif kind.key == _SC:
        new = persistentvolumes.default_class(new)
        _raise_invalid(kind, name, persistentvolumes.validate_class_update(old, new))
    else:
        new = workloads.prepare(kind.kind, new)
        _raise_invalid(kind, name, workloads.validate_update(kind.kind, old, new))
    return new


def read_defaults(kind: Kind, obj: Mapping[str, Any]) -> Obj:
    """CR defaults also apply when a stored object is read (S63); built-ins are stored defaulted."""
    if kind.is_custom:
        return _schema(kind).default(dict(obj))
    return dict(obj)
