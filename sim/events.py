"""Event rules of the emulated API server: the core/v1 and events.k8s.io/v1 views of one store.

Pure functions over JSON-shaped dicts; inputs are never mutated. Events are stored as core/v1 Events;
``core_to_events_v1`` and ``events_v1_to_core`` convert between the two views (field mapping of
``pkg/apis/events/v1/conversion.go``: ``note``/``message``, ``regarding``/``involvedObject``,
``deprecatedSource``/``source``, ``deprecatedFirstTimestamp``/``firstTimestamp``,
``deprecatedLastTimestamp``/``lastTimestamp``, ``deprecatedCount``/``count``,
``reportingController``/``reportingComponent``; the rest keep their names). The converters also emit
the fields Go always serialises (``eventTime: null``, ``involvedObject: {}``, ``source: {}``, core's
``reportingComponent: ""``/``reportingInstance: ""``, ...) and drop empty ``omitempty`` ones.

Validation follows ``pkg/apis/core/validation/events.go`` (apiserver-semantics.md S57):
``validate_core_event`` is the legacy check every Event write gets, ``validate_events_v1`` adds the
strict rules of events.k8s.io/v1 creates and ``validate_events_v1_update`` those of its updates.
Field paths are the internal (core) names even for events.k8s.io/v1 requests, as upstream reports them.

Known limits: upstream skips metadata validation for core/v1 Event writes entirely but runs it for
events.k8s.io/v1 (core flavour, ``validation.validate_metadata(..., strict_finalizers=True)``); these
functions leave metadata to the caller. Time fields are not parsed here (see ``validation.parse_time``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sim import errors, validation

FieldError = errors.FieldError
Obj = dict[str, Any]

REPORTING_INSTANCE_LIMIT = 128
ACTION_LIMIT = 128
REASON_LIMIT = 128
NOTE_LIMIT = 1024

# (core name, events.k8s.io/v1 name) for the fields whose names differ, in core's field order.
_RENAMED = (
    ("involvedObject", "regarding"),
    ("message", "note"),
    ("source", "deprecatedSource"),
    ("firstTimestamp", "deprecatedFirstTimestamp"),
    ("lastTimestamp", "deprecatedLastTimestamp"),
    ("count", "deprecatedCount"),
    ("reportingComponent", "reportingController"),
)
_CORE_ORDER = (
    "involvedObject",
    "reason",
    "message",
    "source",
    "firstTimestamp",
    "lastTimestamp",
    "count",
    "type",
    "eventTime",
    "series",
    "action",
    "related",
    "reportingComponent",
    "reportingInstance",
)
_V1_ORDER = (
    "eventTime",
    "series",
    "reportingController",
    "reportingInstance",
    "action",
    "reason",
    "regarding",
    "related",
    "note",
    "type",
    "deprecatedSource",
    "deprecatedFirstTimestamp",
    "deprecatedLastTimestamp",
    "deprecatedCount",
)
# What Go writes for a zero value of a field that is not (effectively) omitempty.
_CORE_ZERO: Mapping[str, Any] = {
    "involvedObject": {},
    "source": {},
    "firstTimestamp": None,
    "lastTimestamp": None,
    "eventTime": None,
    "reportingComponent": "",
    "reportingInstance": "",
}
_V1_ZERO: Mapping[str, Any] = {
    "eventTime": None,
    "regarding": {},
    "deprecatedSource": {},
    "deprecatedFirstTimestamp": None,
    "deprecatedLastTimestamp": None,
}
_TYPE_META = ("apiVersion", "kind", "metadata")


def _reshape(
    ev: Mapping[str, Any],
    mapping: Mapping[str, str],
    order: tuple[str, ...],
    zero: Mapping[str, Any],
    api_version: str,
) -> Obj:
    fields: Obj = {}
    for key, value in ev.items():
        if key in _TYPE_META:
            continue
        fields[mapping.get(key, key)] = value
    out: Obj = {"apiVersion": api_version, "kind": "Event"}
    if "metadata" in ev:
        out["metadata"] = ev["metadata"]
    for key in [*order, *(k for k in fields if k not in order)]:
        value = fields.get(key)
        if value in (None, "", 0, {}) and key not in zero:
            continue
        if value is None or (value in ("", {}) and key in zero):
            value = zero.get(key, value)
        out[key] = value
    return out


def core_to_events_v1(ev: Mapping[str, Any]) -> Obj:
    """The events.k8s.io/v1 view of a stored core/v1 Event."""
    return _reshape(ev, dict(_RENAMED), _V1_ORDER, _V1_ZERO, "events.k8s.io/v1")


def events_v1_to_core(ev: Mapping[str, Any]) -> Obj:
    """The core/v1 Event an events.k8s.io/v1 Event is stored as."""
    return _reshape(ev, {v1: core for core, v1 in _RENAMED}, _CORE_ORDER, _CORE_ZERO, "v1")


def _len_error(path: str, value: Any, limit: int) -> list[FieldError]:
    if isinstance(value, str) and len(value.encode("utf-8")) > limit:
        return [errors.invalid_value(path, "", f"can have at most {limit} characters")]
    return []


def validate_core_event(ev: Mapping[str, Any]) -> list[FieldError]:
    """``legacyValidateEvent`` on a core/v1 Event (every create and update, both API groups)."""
    errs: list[FieldError] = []
    namespace = str((ev.get("metadata") or {}).get("namespace") or "")
    involved_ns = str((ev.get("involvedObject") or {}).get("namespace") or "")
    mismatch = errors.invalid_value("involvedObject.namespace", involved_ns, "does not match event.namespace")
    if not ev.get("eventTime"):
        if not involved_ns:
            if namespace not in ("", "default"):
                errs.append(mismatch)
        elif namespace != involved_ns:
            errs.append(mismatch)
    else:
        if not involved_ns and namespace not in ("default", "kube-system"):
            errs.append(mismatch)
        controller = str(ev.get("reportingComponent") or "")
        if not controller:
            errs.append(errors.required("reportingController"))
        errs += [
            errors.invalid_value("reportingController", controller, m)
            for m in validation.is_qualified_name(controller)
        ]
        for path, key, limit in (
            ("reportingInstance", "reportingInstance", REPORTING_INSTANCE_LIMIT),
            ("action", "action", ACTION_LIMIT),
            ("reason", "reason", REASON_LIMIT),
        ):
            if not ev.get(key):
                errs.append(errors.required(path))
            errs += _len_error(path, ev.get(key), limit)
        errs += _len_error("message", ev.get("message"), NOTE_LIMIT)
    errs += [
        errors.invalid_value("namespace", namespace, m) for m in validation.is_dns1123_subdomain(namespace)
    ]
    return errs


def _validate_series(core: Mapping[str, Any]) -> list[FieldError]:
    series = core.get("series")
    if not isinstance(series, Mapping):
        return []
    errs: list[FieldError] = []
    if (series.get("count") or 0) < 2:
        errs.append(errors.invalid_value("series.count", "", "should be at least 2"))
    if not series.get("lastObservedTime"):
        errs.append(errors.required("series.lastObservedTime"))
    return errs


def validate_events_v1(ev: Mapping[str, Any]) -> list[FieldError]:
    """``ValidateEventCreate`` for an events.k8s.io/v1 Event (given in its v1 shape), without metadata."""
    core = events_v1_to_core(ev)
    errs = validate_core_event(core)
    errs += _validate_series(core)
    if not core.get("eventTime"):
        errs.append(errors.required("eventTime"))
    event_type = core.get("type") or ""
    if event_type not in ("Normal", "Warning"):
        errs.append(errors.invalid_value("type", "", f"has invalid value: {event_type}"))
    for key in ("firstTimestamp", "lastTimestamp", "count"):
        if core.get(key):
            errs.append(errors.invalid_value(key, "", "needs to be unset"))
    source = core.get("source") or {}
    if source.get("component") or source.get("host"):
        errs.append(errors.invalid_value("source", "", "needs to be unset"))
    return errs


_IMMUTABLE = (
    "involvedObject",
    "reason",
    "message",
    "source",
    "firstTimestamp",
    "lastTimestamp",
    "count",
    "reason",
    "type",
    "eventTime",
    "action",
    "related",
    "reportingComponent",
    "reportingInstance",
)


def validate_events_v1_update(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[FieldError]:
    """``ValidateEventUpdate`` for an events.k8s.io/v1 update (both given in their v1 shape).

    Only ``series`` (and metadata) may change; upstream reports ``reason`` twice when it changes.
    """
    old_core, new_core = events_v1_to_core(old), events_v1_to_core(new)
    errs = validate_core_event(new_core)
    if new_core.get("series") != old_core.get("series"):
        errs += _validate_series(new_core)
    for key in _IMMUTABLE:
        if new_core.get(key) != old_core.get(key):
            path = "reportingController" if key == "reportingComponent" else key
            errs.append(errors.invalid_value(path, new_core.get(key), "field is immutable"))
    return errs
