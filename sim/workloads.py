"""Registry rules of the apps/v1 kinds: Deployments, ReplicaSets, StatefulSets and ControllerRevisions.

Pure functions over JSON-shaped dicts (no I/O, no clock); inputs are never mutated. What kube-apiserver
1.34 does on a write of these kinds (``pkg/apis/apps/v1/defaults.go``, ``pkg/registry/apps/*``,
``pkg/apis/apps/validation``), as far as the simulated controllers and ``kubectl`` depend on it:

* ``prepare(kind, obj)`` - the scheme defaults every decoded write gets: for Deployments ``replicas`` 1,
  strategy RollingUpdate with ``maxSurge``/``maxUnavailable`` 25%, ``revisionHistoryLimit`` 10,
  ``progressDeadlineSeconds`` 600; for ReplicaSets ``replicas`` 1; for StatefulSets ``replicas`` 1,
  ``podManagementPolicy`` OrderedReady, ``updateStrategy`` RollingUpdate with ``partition`` 0 (only
  when the type was defaulted, as upstream), ``revisionHistoryLimit`` 10, the Retain/Retain
  ``persistentVolumeClaimRetentionPolicy``, and each ``volumeClaimTemplates`` entry defaulted as a
  PersistentVolumeClaim (``volumeMode`` Filesystem, ``status.phase`` Pending); the alpha
  ``rollingUpdate.maxUnavailable`` of StatefulSets is dropped (MaxUnavailableStatefulSet is off in
  1.34). Pod templates get the Pod scheme defaults (``sim.pods.canonicalize_pod``).
* ``validate(kind, obj)`` and ``validate_update(kind, old, new)`` - the field errors of a 422.

Known limits: bad values of selectors and templates are printed as JSON, not in Go's ``%#v``; pod
templates are validated with the rules of ``sim.pods`` (so what those skip is skipped here); the
StatefulSet status, ``ordinals`` and ``minReadySeconds`` checks are not made.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping
from typing import Any

from sim import errors, persistentvolumes, podcontrol, pods, selectors, validation

FieldError = errors.FieldError
Obj = dict[str, Any]

DEFAULT_SURGE = "25%"
DEFAULT_UNAVAILABLE = "25%"
REVISION_HISTORY_LIMIT = 10
PROGRESS_DEADLINE_SECONDS = 600
_PERCENT = re.compile(r"^[0-9]+%$")

STATEFULSET_UPDATABLE = (
    "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', "
    "'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and "
    "'minReadySeconds' are forbidden"
)


# -- defaults ---------------------------------------------------------------------------------------------


def default_template(template: Any, kind: str) -> Any:
    """A pod template with the Pod scheme defaults of its spec (decode errors name ``kind``)."""
    if not isinstance(template, Mapping):
        return template
    try:
        spec = pods.canonicalize_pod({"spec": template.get("spec") or {}})["spec"]
    except errors.ApiError as err:
        err.message = err.message.replace(
            'Pod in version "v1" cannot be handled as a Pod',
            f'{kind} in version "v1" cannot be handled as a {kind}',
        )
        raise
    return {**template, "spec": spec}


def _spec(obj: Obj) -> Obj:
    spec = obj.get("spec")
    out: Obj = dict(spec) if isinstance(spec, Mapping) else {}
    obj["spec"] = out
    return out


def _default_deployment(spec: Obj) -> None:
    spec.setdefault("replicas", 1)
    strategy: Obj = dict(spec.get("strategy") or {})
    if not strategy.get("type"):
        strategy["type"] = "RollingUpdate"
    if strategy["type"] == "RollingUpdate":
        rolling: Obj = dict(strategy.get("rollingUpdate") or {})
        if rolling.get("maxUnavailable") is None:
            rolling["maxUnavailable"] = DEFAULT_UNAVAILABLE
        if rolling.get("maxSurge") is None:
            rolling["maxSurge"] = DEFAULT_SURGE
        strategy["rollingUpdate"] = rolling
    spec["strategy"] = strategy
    if spec.get("revisionHistoryLimit") is None:
        spec["revisionHistoryLimit"] = REVISION_HISTORY_LIMIT
    if spec.get("progressDeadlineSeconds") is None:
        spec["progressDeadlineSeconds"] = PROGRESS_DEADLINE_SECONDS


def _default_statefulset(spec: Obj) -> None:
    if not spec.get("podManagementPolicy"):
        spec["podManagementPolicy"] = "OrderedReady"
    strategy: Obj = dict(spec.get("updateStrategy") or {})
    if not strategy.get("type"):
        strategy["type"] = "RollingUpdate"
        strategy.setdefault("rollingUpdate", {})
    if strategy["type"] == "RollingUpdate" and isinstance(strategy.get("rollingUpdate"), Mapping):
        rolling = {k: v for k, v in strategy["rollingUpdate"].items() if k != "maxUnavailable"}
        if rolling.get("partition") is None:
            rolling["partition"] = 0
        strategy["rollingUpdate"] = rolling
    spec["updateStrategy"] = strategy
    policy: Obj = dict(spec.get("persistentVolumeClaimRetentionPolicy") or {})
    for when in ("whenDeleted", "whenScaled"):
        if not policy.get(when):
            policy[when] = "Retain"
    spec["persistentVolumeClaimRetentionPolicy"] = policy
    spec.setdefault("replicas", 1)
    if spec.get("revisionHistoryLimit") is None:
        spec["revisionHistoryLimit"] = REVISION_HISTORY_LIMIT
    if isinstance(spec.get("volumeClaimTemplates"), list):
        spec["volumeClaimTemplates"] = [
            persistentvolumes.default_claim(t) if isinstance(t, Mapping) else t
            for t in spec["volumeClaimTemplates"]
        ]


def prepare(kind: str, obj: Mapping[str, Any]) -> Obj:
    """``obj`` (a Deployment, ReplicaSet or StatefulSet) with the scheme defaults of a decoded write."""
    out: Obj = copy.deepcopy(dict(obj))
    if kind == "ControllerRevision":
        return out  # it has no spec to default
    spec = _spec(out)
    if spec.get("replicas") is None:
        spec.pop("replicas", None)
    if kind == "Deployment":
        _default_deployment(spec)
    elif kind == "ReplicaSet":
        spec.setdefault("replicas", 1)
    elif kind == "StatefulSet":
        _default_statefulset(spec)
    if "template" in spec:
        spec["template"] = default_template(spec["template"], kind)
    return out


# -- validation -------------------------------------------------------------------------------------------


def _non_negative(path: str, value: Any) -> list[FieldError]:
    if isinstance(value, int) and not isinstance(value, bool) and value < 0:
        return [errors.invalid_value(path, value, "must be greater than or equal to 0")]
    return []


def validate_label_selector(selector: Any, path: str) -> list[FieldError]:
    """``ValidateLabelSelector``: matchLabels are labels, expressions have a known operator and values."""
    if not isinstance(selector, Mapping):
        return []
    errs = validation.validate_labels(selector.get("matchLabels"), f"{path}.matchLabels")
    for i, expression in enumerate(selector.get("matchExpressions") or []):
        p = f"{path}.matchExpressions[{i}]"
        if not isinstance(expression, Mapping):
            errs.append(errors.type_invalid(p, expression, "must be of type object"))
            continue
        operator = expression.get("operator") or ""
        values = expression.get("values") or []
        if operator in ("In", "NotIn"):
            if not values:
                errs.append(
                    errors.required(f"{p}.values", "must be specified when `operator` is 'In' or 'NotIn'")
                )
        elif operator in ("Exists", "DoesNotExist"):
            if values:
                errs.append(
                    errors.forbidden(
                        f"{p}.values", "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"
                    )
                )
        else:
            errs.append(errors.invalid_value(f"{p}.operator", operator, "not a valid selector operator"))
        key = str(expression.get("key") or "")
        errs += [errors.invalid_value(f"{p}.key", key, m) for m in validation.is_qualified_name(key)]
    return errs


def _template_errors(spec: Mapping[str, Any], kind: str) -> list[FieldError]:
    """The selector and pod template of a workload spec (``ValidatePodTemplateSpecForReplicaSet``)."""
    errs: list[FieldError] = []
    raw_selector = spec.get("selector")
    selector = selectors.from_label_selector(raw_selector) if isinstance(raw_selector, Mapping) else None
    if raw_selector is None:
        errs.append(errors.required("spec.selector"))
    else:
        errs += validate_label_selector(raw_selector, "spec.selector")
        if selector is not None and selector.empty:
            errs.append(
                errors.invalid_value(
                    "spec.selector", raw_selector, f"empty selector is invalid for {kind.lower()}"
                )
            )
    template = spec.get("template")
    if not isinstance(template, Mapping):
        errs.append(errors.required("spec.template"))
        return errs
    tmeta = template.get("metadata") or {}
    labels = tmeta.get("labels") or {}
    errs += validation.validate_labels(tmeta.get("labels"), "spec.template.metadata.labels")
    errs += validation.validate_annotations(tmeta.get("annotations"), "spec.template.metadata.annotations")
    if selector is not None and not selector.empty and not selector.matches(labels):
        errs.append(
            errors.invalid_value(
                "spec.template.metadata.labels", labels, "`selector` does not match template `labels`"
            )
        )
    for err in pods.validate_pod({"spec": template.get("spec") or {}}):
        errs.append(
            errors.FieldError(err.type, "spec.template." + err.field, err.detail, err.value, err.supported)
        )
    policy = (template.get("spec") or {}).get("restartPolicy")
    if policy and policy != "Always":
        errs.append(errors.not_supported("spec.template.spec.restartPolicy", policy, ("Always",)))
    if (template.get("spec") or {}).get("activeDeadlineSeconds") is not None:
        owner = "StatefulSet" if kind == "StatefulSet" else "ReplicaSet"
        errs.append(
            errors.forbidden(
                "spec.template.spec.activeDeadlineSeconds",
                f"activeDeadlineSeconds in {owner} is not Supported",
            )
        )
    return errs


def _int_or_percent(value: Any, path: str) -> list[FieldError]:
    """``ValidatePositiveIntOrPercent``."""
    if isinstance(value, str):
        if not _PERCENT.match(value):
            return [
                errors.invalid_value(
                    path,
                    value,
                    "a valid percent string must be a numeric string followed by an ending '%' "
                    "(e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')",
                )
            ]
        return []
    if isinstance(value, int) and not isinstance(value, bool):
        return _non_negative(path, value)
    return [errors.invalid_value(path, value, "must be an integer or percentage (e.g '5%')")]


def _percent_or_int_zero(value: Any) -> bool:
    return value in (0, "0%")


def _validate_rolling(rolling: Mapping[str, Any], path: str) -> list[FieldError]:
    surge, unavailable = rolling.get("maxSurge"), rolling.get("maxUnavailable")
    errs = _int_or_percent(surge, f"{path}.maxSurge") + _int_or_percent(unavailable, f"{path}.maxUnavailable")
    if isinstance(unavailable, str) and _PERCENT.match(unavailable) and int(unavailable[:-1]) > 100:
        errs.append(
            errors.invalid_value(f"{path}.maxUnavailable", unavailable, "must not be greater than 100%")
        )
    if _percent_or_int_zero(surge) and _percent_or_int_zero(unavailable):
        errs.append(
            errors.invalid_value(f"{path}.maxUnavailable", unavailable, "may not be 0 when `maxSurge` is 0")
        )
    return errs


def _validate_deployment(spec: Mapping[str, Any]) -> list[FieldError]:
    errs = _non_negative("spec.replicas", spec.get("replicas"))
    errs += _template_errors(spec, "Deployment")
    strategy = spec.get("strategy") or {}
    stype = strategy.get("type") or ""
    if stype not in ("Recreate", "RollingUpdate"):
        errs.append(errors.not_supported("spec.strategy.type", stype, ("Recreate", "RollingUpdate")))
    rolling = strategy.get("rollingUpdate")
    if stype == "Recreate" and rolling is not None:
        errs.append(
            errors.forbidden(
                "spec.strategy.rollingUpdate", "may not be specified when strategy `type` is 'Recreate'"
            )
        )
    elif stype == "RollingUpdate" and isinstance(rolling, Mapping):
        errs += _validate_rolling(rolling, "spec.strategy.rollingUpdate")
    errs += _non_negative("spec.revisionHistoryLimit", spec.get("revisionHistoryLimit"))
    min_ready = spec.get("minReadySeconds") or 0
    errs += _non_negative("spec.minReadySeconds", min_ready)
    deadline = spec.get("progressDeadlineSeconds")
    if isinstance(deadline, int):
        errs += _non_negative("spec.progressDeadlineSeconds", deadline)
        if isinstance(min_ready, int) and deadline <= min_ready:
            errs.append(
                errors.invalid_value(
                    "spec.progressDeadlineSeconds", deadline, "must be greater than minReadySeconds"
                )
            )
    return errs


def _validate_statefulset(spec: Mapping[str, Any]) -> list[FieldError]:
    errs = _non_negative("spec.replicas", spec.get("replicas"))
    errs += _template_errors(spec, "StatefulSet")
    policy = spec.get("podManagementPolicy") or ""
    if policy not in ("OrderedReady", "Parallel"):
        errs.append(
            errors.invalid_value("spec.podManagementPolicy", policy, "must be 'OrderedReady' or 'Parallel'")
        )
    strategy = spec.get("updateStrategy") or {}
    stype = strategy.get("type") or ""
    rolling = strategy.get("rollingUpdate")
    if stype == "OnDelete" and rolling is not None:
        errs.append(
            errors.invalid_value(
                "spec.updateStrategy.rollingUpdate",
                rolling,
                "only allowed for updateStrategy 'RollingUpdate'",
            )
        )
    elif stype == "RollingUpdate" and isinstance(rolling, Mapping):
        errs += _non_negative("spec.updateStrategy.rollingUpdate.partition", rolling.get("partition"))
    elif stype not in ("OnDelete", "RollingUpdate"):
        errs.append(
            errors.invalid_value("spec.updateStrategy", strategy, "must be 'RollingUpdate' or 'OnDelete'")
        )
    retention = spec.get("persistentVolumeClaimRetentionPolicy") or {}
    for when in ("whenDeleted", "whenScaled"):
        value = retention.get(when) or ""
        if value not in ("Retain", "Delete"):
            errs.append(
                errors.not_supported(
                    f"spec.persistentVolumeClaimRetentionPolicy.{when}", value, ("Retain", "Delete")
                )
            )
    errs += _non_negative("spec.revisionHistoryLimit", spec.get("revisionHistoryLimit"))
    errs += _non_negative("spec.minReadySeconds", spec.get("minReadySeconds"))
    for i, claim in enumerate(spec.get("volumeClaimTemplates") or []):
        if isinstance(claim, Mapping):
            errs += persistentvolumes.validate_claim_template(claim, f"spec.volumeClaimTemplates[{i}]")
    if spec.get("serviceName"):
        errs += [
            errors.invalid_value("spec.serviceName", spec["serviceName"], m)
            for m in validation.is_dns1123_label(str(spec["serviceName"]))
        ]
    return errs


def _validate_controller_revision(obj: Mapping[str, Any]) -> list[FieldError]:
    return _non_negative("revision", obj.get("revision"))


def validate(kind: str, obj: Mapping[str, Any]) -> list[FieldError]:
    """The spec errors of a prepared object of ``kind`` (metadata is ``sim.validation``'s job)."""
    spec = obj.get("spec") or {}
    if kind == "Deployment":
        return _validate_deployment(spec)
    if kind == "ReplicaSet":
        return (
            _non_negative("spec.replicas", spec.get("replicas"))
            + _non_negative("spec.minReadySeconds", spec.get("minReadySeconds"))
            + _template_errors(spec, "ReplicaSet")
        )
    if kind == "StatefulSet":
        return _validate_statefulset(spec)
    if kind == "ControllerRevision":
        return _validate_controller_revision(obj)
    return []


def _changed(old: Any, new: Any) -> bool:
    return not podcontrol.semantically_equal(old, new)


def validate_update(kind: str, old: Mapping[str, Any], new: Mapping[str, Any]) -> list[FieldError]:
    """``validate(kind, new)`` plus what may not change: the selector of every workload, the data of a
    ControllerRevision and every StatefulSet spec field but the updatable ones."""
    errs = validate(kind, new)
    old_spec, new_spec = old.get("spec") or {}, new.get("spec") or {}
    if kind in ("Deployment", "ReplicaSet", "StatefulSet") and _changed(
        old_spec.get("selector"), new_spec.get("selector")
    ):
        errs.append(errors.invalid_value("spec.selector", new_spec.get("selector"), "field is immutable"))
    if kind == "StatefulSet":
        updatable = (
            "replicas",
            "ordinals",
            "template",
            "updateStrategy",
            "revisionHistoryLimit",
            "persistentVolumeClaimRetentionPolicy",
            "minReadySeconds",
            "selector",
        )
        rest_old = {k: v for k, v in old_spec.items() if k not in updatable}
        rest_new = {k: v for k, v in new_spec.items() if k not in updatable}
        if _changed(rest_old, rest_new):
            errs.append(errors.forbidden("spec", STATEFULSET_UPDATABLE))
    if kind == "ControllerRevision" and _changed(old.get("data"), new.get("data")):
        errs.append(errors.invalid_value("data", new.get("data"), "field is immutable"))
    return errs
