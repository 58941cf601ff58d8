"""The simulated CRD finalizer (apiextensions-apiserver's ``crd_finalizer`` controller): what makes a
deleted CustomResourceDefinition go, with its custom resources.

A CRD that has a ``deletionTimestamp`` and the finalizer ``customresourcecleanup.apiextensions.k8s.io``
(``sim.crdterminating``: its first DELETE sets both) is worked as upstream's controller works it: its
``Terminating`` condition becomes ``InstanceDeletionInProgress``; every custom resource of it, in every
namespace, is deleted (the default propagation: a resource with finalizers of its own gets its
``deletionTimestamp`` and stays until they are removed); once none is left, ``Terminating`` turns False
(``InstanceDeletionCompleted``, or ``NeverEstablished`` for a CRD that was never Established and holds
nothing) and the finalizer is removed through the status, which removes the CRD unless it has other
finalizers. Its kinds are then no longer served (``World`` drops them when the CRD is deleted), so
creating the CRD again starts empty.

Upstream deletes one collection per namespace and then polls every 5 s for up to a minute (then reports
``InstanceDeletionCheck`` and retries); here the deletes are the same and the CRD is looked at again
whenever one of its resources is deleted, so it goes as soon as its last resource does. Writes are made
as ``kube-apiserver``, which runs this controller.
"""

from __future__ import annotations

import logging

from sim import crdterminating, errors
from sim.apiserver import ApiServer
from sim.crdterminating import CLEANUP, CRDS, TERMINATING
from sim.store import Event, Obj, TypeKey
from sim.workqueue import QueueController, kind_for, meta, served_kind

log = logging.getLogger("arcsm.sim.crdfinalizer")

MANAGER = "kube-apiserver"


def _pending(crd: Obj | None) -> bool:
    m = meta(crd)
    return bool(m.get("deletionTimestamp")) and CLEANUP in (m.get("finalizers") or [])


def _served(crd: Obj) -> TypeKey:
    spec = crd.get("spec") or {}
    return (str(spec.get("group") or ""), str((spec.get("names") or {}).get("plural") or ""))


class CrdFinalizer(QueueController[str]):
    """Deletes the custom resources of deleted CRDs, then lets the CRDs go (run as a world controller)."""

    logger = log
    what = "crd finalizer: finalizing"
    ignored_codes = frozenset({404, 409})

    def __init__(self) -> None:
        super().__init__()
        # The resources of the CRDs being finalized → the CRD's name.
        self._finalizing: dict[TypeKey, str] = {}

    def seed(self, api: ApiServer) -> None:
        for crd in api.store.items(CRDS):
            if _pending(crd):
                self._finalizing[_served(crd)] = meta(crd)["name"]
                self._queue.add(meta(crd)["name"])

    def on_event(self, event: Event) -> None:
        if event.key[:2] == CRDS:
            served = _served(event.obj)
            if event.type != "DELETED" and _pending(event.obj):
                self._finalizing[served] = event.key[3]
                self._queue.add(event.key[3])
            elif self._finalizing.get(served) == event.key[3]:
                del self._finalizing[served]
        elif event.type == "DELETED" and event.key[:2] in self._finalizing:
            # One of its resources is gone: maybe the last.
            self._queue.add(self._finalizing[event.key[:2]])

    def handle(self, api: ApiServer, name: str) -> None:
        crd = api.store.get((*CRDS, "", name))
        if crd is None or not _pending(crd):
            return
        crd = self._set_terminating(
            api, crd, "True", "InstanceDeletionInProgress", "CustomResource deletion is in progress"
        )
        served = _served(crd)
        instances = api.store.items(served)
        if not instances and not crdterminating.condition_true(crd, "Established"):
            status, reason, message = "False", "NeverEstablished", "resource was never established"
        else:
            if not self._delete_instances(api, served, instances):
                return  # asked again when one of them is deleted
            status, reason, message = "False", "InstanceDeletionCompleted", "removed all instances"
        crd = crdterminating.with_condition(crd, TERMINATING, status, reason, message, api.now_text())
        finalizers = [f for f in meta(crd).get("finalizers") or [] if f != CLEANUP]
        released = {**crd, "metadata": {**meta(crd), "finalizers": finalizers}}
        api.update(served_kind(api, *CRDS), "", name, released, subresource="status", manager=MANAGER)

    def _set_terminating(self, api: ApiServer, crd: Obj, status: str, reason: str, message: str) -> Obj:
        wanted = crdterminating.with_condition(crd, TERMINATING, status, reason, message, api.now_text())
        if wanted == crd:
            return crd
        kind = served_kind(api, *CRDS)
        return api.update(kind, "", meta(crd)["name"], wanted, subresource="status", manager=MANAGER).body

    @staticmethod
    def _delete_instances(api: ApiServer, served: TypeKey, instances: list[Obj]) -> bool:
        """Delete every resource not yet deleting; whether none is left."""
        kind = kind_for(api.registry, served)
        if kind is None:
            return not instances
        for obj in instances:
            m = meta(obj)
            if m.get("deletionTimestamp"):
                continue
            try:
                api.delete(kind, m.get("namespace", ""), m["name"], {"preconditions": {"uid": m["uid"]}})
            except errors.ApiError as err:
                if err.code not in (404, 409):
                    raise
        return not api.store.items(served)
