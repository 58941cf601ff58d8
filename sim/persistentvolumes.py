"""Registry rules and admission of the storage kinds: PersistentVolumeClaims, PersistentVolumes and
StorageClasses (storage.k8s.io/v1).

Pure functions over JSON-shaped dicts (no I/O, no clock); inputs are never mutated. What kube-apiserver
1.34 does on a write of these kinds (``pkg/apis/core/v1/defaults.go``, ``pkg/apis/storage/v1/defaults.go``,
``pkg/registry/core/persistentvolume*``, ``pkg/apis/core/validation``, the DefaultStorageClass and
StorageObjectInUseProtection admission plugins):

* ``default_claim`` / ``default_volume`` / ``default_class`` - scheme defaults: a claim's ``volumeMode``
  Filesystem and ``status.phase`` Pending; a volume's ``persistentVolumeReclaimPolicy`` Retain,
  ``volumeMode`` Filesystem and ``status.phase`` Pending; a class's ``reclaimPolicy`` Delete and
  ``volumeBindingMode`` Immediate. Storage quantities are canonical (``1024Mi`` reads ``1Gi``).
* ``admit_claim`` / ``admit_volume`` - create-time admission: DefaultStorageClass fills a claim's unset
  ``storageClassName`` (absent, not ``""``) with the default class, and the protection finalizers
  ``kubernetes.io/pvc-protection`` / ``kubernetes.io/pv-protection`` are added.
* ``validate_*`` / ``validate_*_update`` - the field errors of a 422.
* ``default_class_name`` - which class is the default: among those annotated
  ``storageclass.kubernetes.io/is-default-class: "true"``, the newest (then the first by name), as
  upstream picks when several are.

Known limits: only the ``hostPath``, ``local``, ``csi`` and ``nfs`` volume sources are recognised as
sources (any other key counts as one without being checked); claim selectors, data sources, volume
attributes classes and the resize admission are not checked; a PersistentVolume's
``lastPhaseTransitionTime`` is written by the simulated controller that changes its phase (the registry
has no clock here), so a volume created already in some phase has none.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from typing import Any

from sim import errors, pods, validation

FieldError = errors.FieldError
Obj = dict[str, Any]

DEFAULT_CLASS_ANNOTATION = "storageclass.kubernetes.io/is-default-class"
BETA_CLASS_ANNOTATION = "volume.beta.kubernetes.io/storage-class"
PVC_PROTECTION = "kubernetes.io/pvc-protection"
PV_PROTECTION = "kubernetes.io/pv-protection"
ACCESS_MODES = ("ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod")
VOLUME_MODES = ("Block", "Filesystem")
RECLAIM_POLICIES = ("Delete", "Recycle", "Retain")
BINDING_MODES = ("Immediate", "WaitForFirstConsumer")
VOLUME_SOURCES = (
    "hostPath",
    "local",
    "csi",
    "nfs",
    "iscsi",
    "fc",
    "awsElasticBlockStore",
    "gcePersistentDisk",
    "azureDisk",
    "azureFile",
    "cephfs",
    "rbd",
    "cinder",
    "glusterfs",
    "flexVolume",
    "vsphereVolume",
    "portworxVolume",
    "scaleIO",
    "storageos",
    "quobyte",
    "flocker",
    "photonPersistentDisk",
)
CLAIM_IMMUTABLE = (
    "spec is immutable after creation except resources.requests and volumeAttributesClassName for "
    "bound claims"
)


def _decode_error(kind: str, message: str) -> errors.ApiError:
    return errors.bad_request(f'{kind} in version "v1" cannot be handled as a {kind}: {message}')


def _canonical_resources(resources: Any, kind: str) -> Any:
    if not isinstance(resources, Mapping):
        return resources
    out = dict(resources)
    try:
        for key in ("requests", "limits"):
            if isinstance(out.get(key), Mapping):
                out[key] = {k: pods.canonicalize_quantity(v) for k, v in out[key].items()}
    except pods.QuantityError as exc:
        raise _decode_error(kind, str(exc)) from None
    return out


# -- defaults ---------------------------------------------------------------------------------------------


def default_claim(claim: Mapping[str, Any]) -> Obj:
    """A PersistentVolumeClaim (or a StatefulSet's claim template) with its scheme defaults."""
    out: Obj = copy.deepcopy(dict(claim))
    spec: Obj = dict(out.get("spec") or {})
    if not spec.get("volumeMode"):
        spec["volumeMode"] = "Filesystem"
    if "resources" in spec:
        spec["resources"] = _canonical_resources(spec["resources"], "PersistentVolumeClaim")
    out["spec"] = spec
    status: Obj = dict(out.get("status") or {})
    if not status.get("phase"):
        status["phase"] = "Pending"
    out["status"] = status
    return out


def default_volume(volume: Mapping[str, Any]) -> Obj:
    out: Obj = copy.deepcopy(dict(volume))
    spec: Obj = dict(out.get("spec") or {})
    if not spec.get("persistentVolumeReclaimPolicy"):
        spec["persistentVolumeReclaimPolicy"] = "Retain"
    if not spec.get("volumeMode"):
        spec["volumeMode"] = "Filesystem"
    if isinstance(spec.get("capacity"), Mapping):
        try:
            spec["capacity"] = {k: pods.canonicalize_quantity(v) for k, v in spec["capacity"].items()}
        except pods.QuantityError as exc:
            raise _decode_error("PersistentVolume", str(exc)) from None
    out["spec"] = spec
    status: Obj = dict(out.get("status") or {})
    if not status.get("phase"):
        status["phase"] = "Pending"
    out["status"] = status
    return out


def default_class(storage_class: Mapping[str, Any]) -> Obj:
    out: Obj = copy.deepcopy(dict(storage_class))
    if not out.get("reclaimPolicy"):
        out["reclaimPolicy"] = "Delete"
    if not out.get("volumeBindingMode"):
        out["volumeBindingMode"] = "Immediate"
    return out


# -- admission --------------------------------------------------------------------------------------------


def default_class_name(classes: Iterable[Mapping[str, Any]]) -> str | None:
    """The default StorageClass among ``classes``: annotated default, newest first, then by name."""
    defaults = [
        c
        for c in classes
        if str(((c.get("metadata") or {}).get("annotations") or {}).get(DEFAULT_CLASS_ANNOTATION, "")).lower()
        == "true"
    ]
    if not defaults:
        return None
    defaults.sort(key=lambda c: str((c.get("metadata") or {}).get("name", "")))
    defaults.sort(key=lambda c: str((c.get("metadata") or {}).get("creationTimestamp", "")), reverse=True)
    return str(defaults[0]["metadata"]["name"])


def _with_finalizer(obj: Obj, finalizer: str) -> Obj:
    meta: Obj = dict(obj.get("metadata") or {})
    finalizers = list(meta.get("finalizers") or [])
    if finalizer not in finalizers:
        finalizers.append(finalizer)
    meta["finalizers"] = finalizers
    return {**obj, "metadata": meta}


def admit_claim(claim: Obj, default_class: str | None) -> Obj:
    """DefaultStorageClass and the pvc-protection finalizer, on a claim being created."""
    spec: Obj = dict(claim.get("spec") or {})
    annotations = (claim.get("metadata") or {}).get("annotations") or {}
    if spec.get("storageClassName") is None and BETA_CLASS_ANNOTATION not in annotations and default_class:
        spec["storageClassName"] = default_class
    return _with_finalizer({**claim, "spec": spec}, PVC_PROTECTION)


def admit_volume(volume: Obj) -> Obj:
    """The pv-protection finalizer, on a volume being created."""
    return _with_finalizer(volume, PV_PROTECTION)


# -- validation -------------------------------------------------------------------------------------------


def _access_modes(modes: Any, path: str) -> list[FieldError]:
    if not modes:
        return [errors.required(path, "at least 1 access mode is required")]
    errs = [errors.not_supported(path, m, ACCESS_MODES) for m in modes if m not in ACCESS_MODES]
    if "ReadWriteOncePod" in modes and len(modes) > 1:
        errs.append(errors.forbidden(path, "may not use ReadWriteOncePod with other access modes"))
    return errs


def _claim_spec_errors(spec: Mapping[str, Any], path: str) -> list[FieldError]:
    errs = _access_modes(spec.get("accessModes"), f"{path}.accessModes")
    requests = (spec.get("resources") or {}).get("requests") or {}
    storage = requests.get("storage")
    if storage is None:
        errs.append(errors.required(f"{path}.resources[storage]"))
    else:
        try:
            if pods.parse_quantity(storage)[0] <= 0:
                errs.append(
                    errors.invalid_value(f"{path}.resources[storage]", storage, "must be greater than zero")
                )
        except pods.QuantityError as exc:
            errs.append(errors.invalid_value(f"{path}.resources[storage]", storage, str(exc)))
    mode = spec.get("volumeMode")
    if mode is not None and mode not in VOLUME_MODES:
        errs.append(errors.not_supported(f"{path}.volumeMode", mode, VOLUME_MODES))
    class_name = spec.get("storageClassName")
    if class_name:
        errs += [
            errors.invalid_value(f"{path}.storageClassName", class_name, m)
            for m in validation.is_dns1123_subdomain(str(class_name))
        ]
    return errs


def validate_claim(claim: Mapping[str, Any]) -> list[FieldError]:
    return _claim_spec_errors(claim.get("spec") or {}, "spec")


def validate_claim_template(claim: Mapping[str, Any], path: str) -> list[FieldError]:
    """A StatefulSet's ``volumeClaimTemplates`` entry: a name and a valid claim spec."""
    name = str((claim.get("metadata") or {}).get("name") or "")
    errs = [] if name else [errors.required(f"{path}.metadata.name", "name or generateName is required")]
    errs += (
        [
            errors.invalid_value(f"{path}.metadata.name", name, m)
            for m in validation.is_dns1123_subdomain(name)
        ]
        if name
        else []
    )
    return errs + _claim_spec_errors(claim.get("spec") or {}, f"{path}.spec")


def _semantic(value: Any) -> Any:
    if isinstance(value, Mapping):
        out = {k: _semantic(v) for k, v in value.items()}
        return {k: v for k, v in out.items() if v not in (None, [], {})}
    if isinstance(value, list):
        return [_semantic(v) for v in value]
    return value


def validate_claim_update(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[FieldError]:
    """``validate_claim(new)``; the spec is immutable but for binding (``volumeName`` and an unset
    ``storageClassName`` may be set once) and, for bound claims, growing ``resources.requests``."""
    errs = validate_claim(new)
    old_spec: Obj = dict(old.get("spec") or {})
    new_spec: Obj = dict(new.get("spec") or {})
    bound = (old.get("status") or {}).get("phase") == "Bound"
    old_cmp, new_cmp = dict(old_spec), dict(new_spec)
    if not old_cmp.get("volumeName"):
        old_cmp["volumeName"] = new_cmp.get("volumeName")
    if old_cmp.get("storageClassName") is None:
        old_cmp["storageClassName"] = new_cmp.get("storageClassName")
    if bound:
        for spec in (old_cmp, new_cmp):
            spec["resources"] = {k: v for k, v in (spec.get("resources") or {}).items() if k != "requests"}
            spec.pop("volumeAttributesClassName", None)
    if _semantic(old_cmp) != _semantic(new_cmp):
        errs.append(errors.forbidden("spec", CLAIM_IMMUTABLE))
    elif bound:
        before = ((old_spec.get("resources") or {}).get("requests") or {}).get("storage")
        after = ((new_spec.get("resources") or {}).get("requests") or {}).get("storage")
        try:
            smaller = (
                before is not None
                and after is not None
                and pods.parse_quantity(after)[0] < pods.parse_quantity(before)[0]
            )
        except pods.QuantityError:
            smaller = False
        if smaller:
            errs.append(
                errors.forbidden(
                    "spec.resources.requests.storage", "field can not be less than previous value"
                )
            )
    return errs


def volume_source(volume: Mapping[str, Any]) -> str | None:
    """The key of a PersistentVolume's source (``hostPath``, ``local``, ...), None when it has none."""
    spec = volume.get("spec") or {}
    return next((k for k in VOLUME_SOURCES if isinstance(spec.get(k), Mapping)), None)


def validate_volume(volume: Mapping[str, Any]) -> list[FieldError]:
    spec = volume.get("spec") or {}
    errs = _access_modes(spec.get("accessModes"), "spec.accessModes")
    capacity = spec.get("capacity") or {}
    if not capacity:
        errs.append(errors.required("spec.capacity"))
    elif "storage" not in capacity or len(capacity) > 1:
        errs.append(errors.not_supported("spec.capacity", capacity, ("storage",)))
    policy = spec.get("persistentVolumeReclaimPolicy") or ""
    if policy not in RECLAIM_POLICIES:
        errs.append(errors.not_supported("spec.persistentVolumeReclaimPolicy", policy, RECLAIM_POLICIES))
    sources = [k for k in VOLUME_SOURCES if spec.get(k) is not None]
    if not sources:
        errs.append(errors.required("spec", "must specify a volume type"))
    elif len(sources) > 1:
        errs.append(errors.forbidden(f"spec.{sources[1]}", "may not specify more than 1 volume type"))
    for source in ("hostPath", "local"):
        if isinstance(spec.get(source), Mapping) and not spec[source].get("path"):
            errs.append(errors.required(f"spec.{source}.path"))
    if isinstance(spec.get("local"), Mapping) and not spec.get("nodeAffinity"):
        errs.append(errors.required("spec.nodeAffinity", "Local volume requires node affinity"))
    mode = spec.get("volumeMode")
    if mode is not None and mode not in VOLUME_MODES:
        errs.append(errors.not_supported("spec.volumeMode", mode, VOLUME_MODES))
    return errs


def validate_volume_update(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[FieldError]:
    errs = validate_volume(new)
    old_spec, new_spec = old.get("spec") or {}, new.get("spec") or {}
    if any(_semantic(old_spec.get(k)) != _semantic(new_spec.get(k)) for k in VOLUME_SOURCES):
        errs.append(
            errors.forbidden(
                "spec.persistentvolumesource", "spec.persistentvolumesource is immutable after creation"
            )
        )
    if old_spec.get("volumeMode") != new_spec.get("volumeMode"):
        errs.append(errors.invalid_value("spec.volumeMode", new_spec.get("volumeMode"), "field is immutable"))
    return errs


def validate_class(storage_class: Mapping[str, Any]) -> list[FieldError]:
    provisioner = str(storage_class.get("provisioner") or "")
    errs: list[FieldError] = []
    if not provisioner:
        errs.append(errors.required("provisioner"))
    else:
        errs += [
            errors.invalid_value("provisioner", provisioner, m)
            for m in validation.is_qualified_name(provisioner.lower())
        ]
    policy = storage_class.get("reclaimPolicy") or ""
    if policy not in ("Delete", "Retain"):
        errs.append(errors.not_supported("reclaimPolicy", policy, ("Delete", "Retain")))
    mode = storage_class.get("volumeBindingMode") or ""
    if mode not in BINDING_MODES:
        errs.append(errors.not_supported("volumeBindingMode", mode, BINDING_MODES))
    return errs


def validate_class_update(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[FieldError]:
    errs = validate_class(new)
    if _semantic(old.get("parameters")) != _semantic(new.get("parameters")):
        errs.append(errors.forbidden("parameters", "updates to parameters are forbidden."))
    if old.get("provisioner") != new.get("provisioner"):
        errs.append(errors.forbidden("provisioner", "updates to provisioner are forbidden."))
    if old.get("reclaimPolicy") != new.get("reclaimPolicy"):
        errs.append(errors.forbidden("reclaimPolicy", "updates to reclaimPolicy are forbidden."))
    if old.get("volumeBindingMode") != new.get("volumeBindingMode"):
        errs.append(
            errors.invalid_value("volumeBindingMode", new.get("volumeBindingMode"), "field is immutable")
        )
    return errs
