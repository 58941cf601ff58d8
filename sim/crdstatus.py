"""The simulated apiextensions controllers that write a CustomResourceDefinition's status.

kube-apiserver's naming controller accepts a CRD's names (``status.acceptedNames``, condition
``NamesAccepted``) and its establishing controller marks it served (``Established``) a moment later;
clients wait for that: ``kubectl wait --for condition=established``, Helm after it installs a chart's
``crds/``. ``CrdStatus`` does both in one status write, as soon as a CRD is created or its names or
versions change: ``acceptedNames`` are the spec's names, ``storedVersions`` keep every version ever
stored plus the current storage version, and both conditions are True with upstream's reasons
(``NoConflicts``, ``InitialNamesAccepted``). The emulator serves a CRD's kinds from its creation on, so
there is nothing to wait for in between.

A deleted CRD's ``Terminating`` condition is the CRD finalizer's to write (``sim.crdfinalizer``): this
controller leaves a CRD alone once it has a ``deletionTimestamp``.

Known limits: no name conflicts between CRDs are detected (two CRDs claiming one plural are both
accepted).
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from typing import Any

from sim.apiserver import ApiServer, format_time
from sim.store import Event, Obj, ObjectKey
from sim.workqueue import QueueController, meta, served_kind

log = logging.getLogger("arcsm.sim.crdstatus")

CRDS = ("apiextensions.k8s.io", "customresourcedefinitions")


def _condition(kind: str, reason: str, message: str, previous: list[Any], now: str) -> dict[str, Any]:
    """A True condition, its transition time kept when it was True already."""
    old = next((c for c in previous if isinstance(c, dict) and c.get("type") == kind), None)
    since = old.get("lastTransitionTime") if old and old.get("status") == "True" else now
    return {"type": kind, "status": "True", "lastTransitionTime": since, "reason": reason, "message": message}


def desired_status(crd: Obj, now: str) -> dict[str, Any]:
    spec = crd.get("spec") or {}
    status = crd.get("status") or {}
    storage = [
        str(v.get("name")) for v in spec.get("versions") or [] if isinstance(v, dict) and v.get("storage")
    ]
    stored = list(dict.fromkeys([*(status.get("storedVersions") or []), *storage]))
    previous = status.get("conditions") or []
    return {
        **status,
        "acceptedNames": dict(spec.get("names") or {}),
        "storedVersions": stored,
        "conditions": [
            _condition("NamesAccepted", "NoConflicts", "no conflicts found", previous, now),
            _condition(
                "Established", "InitialNamesAccepted", "the initial names have been accepted", previous, now
            ),
        ],
    }


def _settled(crd: Obj, wanted: dict[str, Any]) -> bool:
    status = crd.get("status") or {}

    def shape(s: dict[str, Any]) -> Any:
        conditions = [(c.get("type"), c.get("status"), c.get("reason")) for c in s.get("conditions") or []]
        return s.get("acceptedNames"), s.get("storedVersions"), conditions

    return bool(shape(status) == shape(wanted))


class CrdStatus(QueueController[ObjectKey]):
    """Accepts the names of every CRD and marks it Established (run as a world controller)."""

    logger = log
    what = "crd status: syncing"
    ignored_codes = frozenset({404, 409})

    def seed(self, api: ApiServer) -> None:
        for crd in api.store.items(CRDS):
            self._queue.add((*CRDS, "", meta(crd)["name"]))

    def on_event(self, event: Event) -> None:
        if event.key[:2] == CRDS and event.type != "DELETED":
            self._queue.add(event.key)

    def handle(self, api: ApiServer, key: ObjectKey) -> None:
        crd = api.store.get(key)
        if crd is None or meta(crd).get("deletionTimestamp"):
            return
        wanted = desired_status(crd, format_time(datetime.now(UTC)))
        if _settled(crd, wanted):
            return
        api.update(
            served_kind(api, *CRDS), "", meta(crd)["name"], {**crd, "status": wanted}, subresource="status"
        )
