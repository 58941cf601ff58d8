"""Events the simulated controllers record about the objects they act on (client-go's ``EventRecorder``).

``record(api, obj, type, reason, message, component=...)`` creates a core/v1 Event through the API
server, shaped as kube-controller-manager's recorder writes them (``source.component`` and
``reportingComponent`` set to the controller's name, ``count: 1``, first and last timestamp now), so
``kubectl describe`` and ``kubectl get events`` show what a cluster would: ``ScalingReplicaSet``,
``SuccessfulCreate``, ``SuccessfulDelete``, ``FailedScheduling``, ``ProvisioningSucceeded``, ...

Known limits: no aggregation or spam filtering (a repeated event is a new Event, never a higher
``count``), so callers record only transitions; a failure to record is logged and otherwise ignored,
as upstream's recorder drops events it cannot write.
"""

from __future__ import annotations

import itertools
import logging
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
    kind = api.registry.get("", "v1", "events")
    if kind is None:
        return
    m = meta(obj)
    namespace = str(m.get("namespace") or "default")
    now = api.clock()
    involved: dict[str, Any] = {
        "kind": obj.get("kind"),
        "apiVersion": obj.get("apiVersion"),
        "name": m.get("name"),
        "uid": m.get("uid"),
        "resourceVersion": m.get("resourceVersion"),
    }
    if m.get("namespace"):
        involved["namespace"] = m["namespace"]
    # Upstream names an event <object>.<unix nanoseconds in hex>; the sequence keeps names unique.
    nanos = int(now.timestamp() * 1e9) + next(_sequence) % 1000
    body: Obj = {
        "metadata": {"name": f"{m.get('name')}.{nanos:x}", "namespace": namespace},
        "involvedObject": involved,
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
    try:
        api.create(kind, namespace, body)
    except errors.ApiError as err:
        log.info("%s: could not record %s event for %s: %s", component, reason, m.get("name"), err.message)
