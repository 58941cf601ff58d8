"""The simulated ServiceAccount and namespace controllers (apiserver-semantics.md §5, S66).

``ServiceAccounts`` creates the ``default`` ServiceAccount in every namespace that lacks one: the
namespaces that exist when it starts, every new namespace, and again when someone deletes it. Pods
need it (ServiceAccount admission rejects a pod whose ServiceAccount does not exist, S58).

``Namespaces`` drives terminating namespaces: once a namespace has a ``deletionTimestamp`` (the API
server already set phase Terminating and refuses new content), it deletes every namespaced object in it
across all served kinds (Background propagation, as kube-controller-manager's namespace deleter does),
waits until they are gone, since finalizers and graceful pod deletion may hold them, and then calls
``ApiServer.finalize_namespace``, which removes the namespace.

Known limits: the namespace's ``spec.finalizers`` and its deletion conditions
(``NamespaceDeletionContentFailure`` and friends) are not simulated; a namespace whose content keeps a
finalizer nobody removes stays Terminating, as on a real cluster.
"""

from __future__ import annotations

import logging

from sim import errors
from sim.apiserver import ApiServer
from sim.store import Event, Obj
from sim.workqueue import QueueController, meta, storage_kinds

log = logging.getLogger("arcsm.sim.namespaces")

DEFAULT_SA = "default"
NAMESPACES = ("", "namespaces")
SERVICEACCOUNTS = ("", "serviceaccounts")


def _terminating(ns: Obj | None) -> bool:
    return bool(meta(ns).get("deletionTimestamp"))


class ServiceAccounts(QueueController[str]):
    """Creates the ``default`` ServiceAccount where it is missing (run as a world controller)."""

    logger = log
    what = "serviceaccounts: namespace"
    ignored_codes = frozenset({403, 404, 409})
    api_error_level = logging.WARNING

    def on_event(self, event: Event) -> None:
        type_key = event.key[:2]
        if type_key == NAMESPACES and event.type != "DELETED" and not _terminating(event.obj):
            self._queue.add(event.key[3])
        elif type_key == SERVICEACCOUNTS and event.type == "DELETED" and event.key[3] == DEFAULT_SA:
            self._queue.add(event.key[2])

    def seed(self, api: ApiServer) -> None:
        for ns in api.store.items(NAMESPACES):
            self._queue.add(meta(ns)["name"])

    def handle(self, api: ApiServer, namespace: str) -> None:
        ns = api.store.get(("", "namespaces", "", namespace))
        if ns is None or _terminating(ns):
            return
        if api.store.get(("", "serviceaccounts", namespace, DEFAULT_SA)) is not None:
            return
        kind = api.registry.get("", "v1", "serviceaccounts")
        assert kind is not None
        api.create(kind, namespace, {"metadata": {"name": DEFAULT_SA, "namespace": namespace}})


class Namespaces(QueueController[str]):
    """Empties and then finalizes terminating namespaces (run as a world controller)."""

    logger = log
    what = "namespaces: driving"
    api_error_level = None  # every failure is logged with its traceback

    def __init__(self) -> None:
        super().__init__()
        self._terminating: set[str] = set()

    def on_event(self, event: Event) -> None:
        if event.key[:2] == NAMESPACES:
            name = event.key[3]
            if event.type == "DELETED":
                self._terminating.discard(name)
            elif _terminating(event.obj):
                self._terminating.add(name)
                self._queue.add(name)
        elif event.key[2] in self._terminating and event.type != "ADDED":
            # Content of a terminating namespace changed or went away: check again.
            self._queue.add(event.key[2])

    def seed(self, api: ApiServer) -> None:
        for ns in api.store.items(NAMESPACES):
            if _terminating(ns):
                self._terminating.add(meta(ns)["name"])
                self._queue.add(meta(ns)["name"])

    def handle(self, api: ApiServer, name: str) -> None:
        ns = api.store.get(("", "namespaces", "", name))
        if ns is None or not _terminating(ns):
            return
        namespaced = [k for k in storage_kinds(api.registry) if k.namespaced]
        for kind in namespaced:
            for obj in api.store.items(kind.key, name):
                if meta(obj).get("deletionTimestamp"):
                    continue
                try:
                    api.delete(
                        kind,
                        name,
                        meta(obj)["name"],
                        {"propagationPolicy": "Background", "preconditions": {"uid": meta(obj)["uid"]}},
                    )
                except errors.ApiError as err:
                    if err.code not in (404, 409):
                        log.warning(
                            "namespaces: deleting %s %s/%s: %s %s",
                            kind.plural,
                            name,
                            meta(obj)["name"],
                            err.code,
                            err.message,
                        )
        if not any(api.store.items(kind.key, name) for kind in namespaced):
            api.finalize_namespace(name)
