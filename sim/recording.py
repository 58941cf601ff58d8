"""Events the simulated controllers record about the objects they act on (client-go's ``EventRecorder``).

``record(api, obj, type, reason, message, component=...)`` creates a core/v1 Event through the API
server, shaped as kube-controller-manager's recorder writes them (``source.component`` and
``reportingComponent`` set to the controller's name, ``count: 1``, first and last timestamp now), so
``kubectl describe`` and ``kubectl get events`` show what a cluster would: ``ScalingReplicaSet``,
``SuccessfulCreate``, ``SuccessfulDelete``, ``FailedScheduling``, ``ProvisioningSucceeded``, ...

``record_v1`` is the events.k8s.io/v1 recorder kube-scheduler uses for ``Scheduled``: an Event with
``eventTime`` (microseconds), ``reportingController``, ``reportingInstance`` and ``action``, and no
``source``, first or last timestamp or count, which the core view shows as ``source: {}`` and null
timestamps (``kubectl get events`` and ``describe`` read ``eventTime`` and ``reportingController``).

Known limits: no aggregation or spam filtering (a repeated event is a new Event, never a higher
``count``), so callers record only transitions; a failure to record is logged and otherwise ignored,
as upstream's recorder drops events it cannot write.
"""

from __future__ import annotations

import itertools
import logging
from datetime import UTC, datetime
from typing import Any

from sim import errors
from sim.apiserver import ApiServer, format_time
from sim.store import Obj
from sim.workqueue import meta

log = logging.getLogger("arcsm.sim.events")

NORMAL = "Normal"
WARNING = "Warning"

_sequence = itertools.count()


def record(api: ApiServer, obj: Obj, event_type: str, reason: str, message: str, *, component: str) -> None:
    """Create an Event about ``obj`` (in its namespace; ``default`` for cluster-scoped objects)."""
    now = api.clock()
    body: Obj = {
        "metadata": _metadata(obj, now),
        "involvedObject": _reference(obj),
        "reason": reason,
        "message": message,
        "source": {"component": component},
        "firstTimestamp": format_time(now),
        "lastTimestamp": format_time(now),
        "count": 1,
        "type": event_type,
        "eventTime": None,
        "reportingComponent": component,
        "reportingInstance": "",
    }
    _create(api, ("", "v1"), body, reporter=component, reason=reason, about=meta(obj).get("name"))


def micro_time(t: datetime) -> str:
    """A ``metav1.MicroTime`` in JSON: RFC 3339 with microseconds."""
    return t.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def record_v1(
    api: ApiServer,
    obj: Obj,
    event_type: str,
    reason: str,
    note: str,
    *,
    action: str,
    controller: str,
    instance: str,
) -> None:
    """Create an events.k8s.io/v1 Event ``regarding`` ``obj`` (in its namespace, else ``default``)."""
    now = api.clock()
    body: Obj = {
        "metadata": _metadata(obj, now),
        "eventTime": micro_time(now),
        "reportingController": controller,
        "reportingInstance": instance,
        "action": action,
        "reason": reason,
        "regarding": _reference(obj),
        "note": note,
        "type": event_type,
    }
    _create(
        api, ("events.k8s.io", "v1"), body, reporter=controller, reason=reason, about=meta(obj).get("name")
    )


def _reference(obj: Obj) -> dict[str, Any]:
    """The object an Event is about, as an ``ObjectReference``."""
    m = meta(obj)
    reference: dict[str, Any] = {
        "kind": obj.get("kind"),
        "apiVersion": obj.get("apiVersion"),
        "name": m.get("name"),
        "uid": m.get("uid"),
        "resourceVersion": m.get("resourceVersion"),
    }
    if m.get("namespace"):
        reference["namespace"] = m["namespace"]
    return reference


def _metadata(obj: Obj, now: datetime) -> Obj:
    """The Event's name and namespace: upstream names an event <object>.<unix nanoseconds in hex> (the
    sequence keeps names unique), in the object's namespace or ``default`` for a cluster-scoped one."""
    m = meta(obj)
    nanos = int(now.timestamp() * 1e9) + next(_sequence) % 1000
    return {"name": f"{m.get('name')}.{nanos:x}", "namespace": str(m.get("namespace") or "default")}


def _create(
    api: ApiServer, group_version: tuple[str, str], body: Obj, *, reporter: str, reason: str, about: object
) -> None:
    """Create ``body`` as an Event of ``group_version``; a failure is logged and dropped."""
    kind = api.registry.get(*group_version, "events")
    if kind is None:
        return
    try:
        api.create(kind, body["metadata"]["namespace"], body)
    except errors.ApiError as err:
        log.info(
            "%s: could not record %s event for %s: %s",
            reporter,
            reason,
            body["metadata"]["name"],
            err.message,
        )
