"""The simulated garbage collector (apiserver-semantics.md §5, S37, S45-S48).

``GarbageCollector`` keeps an owner-uid → dependents index over every stored object of every type,
fed synchronously by a store listener, and works a de-duplicated queue of object keys with a few
worker tasks. Each item waits a small random delay (default 10-100 ms, like the real collector's
"milliseconds to a second") before it is processed. Processing reads the store and writes through
the ``ApiServer`` verbs only, without awaiting in between, so a decision and its write are atomic.

For one object the collector does what kube-controller-manager's does:

* owner being deleted with the ``orphan`` finalizer: strip its ownerReference from every dependent
  (merge patch), then remove the finalizer;
* owner being deleted with ``foregroundDeletion``: queue its dependents (they see the owner as
  *waiting*) and remove the finalizer once no remaining dependent points at it with
  ``blockOwnerDeletion: true``;
* any other object with ownerReferences: classify each reference as absent (no object of that
  group/kind, name and uid in the dependent's namespace, or cluster scope), waiting (foreground
  deletion in progress) or solid. With a solid owner the absent and waiting references are patched
  away; otherwise the object is deleted with ``preconditions.uid`` and propagation Foreground (a
  waiting owner and dependents of its own), its own GC finalizer's policy, or Background.

Items are queued when an owner is deleted (its dependents), when an object is created (or its
references change) with a reference that does not resolve to a live owner, when an owner enters
orphan/foreground deletion, and when a dependent of a foreground-deleting owner goes away or drops
the reference. A namespaced owner found only in another namespace is treated as absent and reported
with a Warning Event ``OwnerRefInvalidNamespace`` on the dependent.

Known limits: a reference whose apiVersion/kind is not served is left alone (the real collector
retries forever); a cluster-scoped dependent with a namespaced owner kind gets the Warning Event and
is never collected (as upstream documents); failed writes are logged, not retried.
"""

from __future__ import annotations

import asyncio
import logging
import random
from typing import Any, Literal

from sim import errors
from sim.apiserver import FOREGROUND, MERGE, ORPHAN, ApiServer, format_time
from sim.kinds import Kind
from sim.store import Event, Obj, ObjectKey
from sim.workqueue import QueueController, kind_for, meta, storage_kinds

log = logging.getLogger("arcsm.sim.gc")

COMPONENT = "garbage-collector-controller"
INVALID_NAMESPACE = "OwnerRefInvalidNamespace"

Verdict = Literal["absent", "waiting", "solid", "unresolvable"]


def owner_refs(obj: Obj | None) -> list[dict[str, Any]]:
    refs = meta(obj).get("ownerReferences")
    return [r for r in refs if isinstance(r, dict)] if isinstance(refs, list) else []


def _group(api_version: str) -> str:
    return api_version.split("/", 1)[0] if "/" in api_version else ""


def foreground_deleting(obj: Obj | None) -> bool:
    m = meta(obj)
    return bool(m.get("deletionTimestamp")) and FOREGROUND in (m.get("finalizers") or [])


class GarbageCollector(QueueController[ObjectKey]):
    """Run as a world controller (``await gc(api)``); ``idle()`` waits until all work is done."""

    logger = log
    what = "gc: processing"

    def __init__(
        self, *, delay: tuple[float, float] = (0.01, 0.1), workers: int = 8, seed: int | None = None
    ) -> None:
        super().__init__()
        self.delay = delay
        self.workers = workers
        self._random = random.Random(seed)
        self._dependents: dict[str, set[ObjectKey]] = {}
        self._uids: dict[str, ObjectKey] = {}
        self._warned: set[tuple[str, str]] = set()

    # -- lifecycle -----------------------------------------------------------------------------------

    def seed(self, api: ApiServer) -> None:
        for kind in storage_kinds(api.registry):
            for obj in api.store.items(kind.key):
                key: ObjectKey = (*kind.key, meta(obj).get("namespace", ""), meta(obj)["name"])
                self.on_event(Event(0, "ADDED", key, obj, None))

    def dependents(self, owner_uid: str) -> set[ObjectKey]:
        """The keys of the objects whose ownerReferences name ``owner_uid`` (a copy)."""
        return set(self._dependents.get(owner_uid, ()))

    # -- the informer side: keep the index, queue work ------------------------------------------------

    def on_event(self, event: Event) -> None:
        key = event.key
        obj = event.obj
        m = meta(obj)
        uid = m.get("uid", "")
        old_refs = owner_refs(event.prev)
        new_refs = [] if event.type == "DELETED" else owner_refs(obj)
        for ref in old_refs:
            deps = self._dependents.get(ref.get("uid", ""))
            if deps is not None:
                deps.discard(key)
                if not deps:
                    del self._dependents[ref.get("uid", "")]
        for ref in new_refs:
            self._dependents.setdefault(ref.get("uid", ""), set()).add(key)

        if event.type == "DELETED":
            if self._uids.get(uid) == key:
                del self._uids[uid]
            for dep in self._dependents.get(uid, ()):
                self._queue.add(dep)
        else:
            self._uids[uid] = key
            finalizers = m.get("finalizers") or []
            if m.get("deletionTimestamp") and (ORPHAN in finalizers or FOREGROUND in finalizers):
                self._queue.add(key)
            if (
                new_refs
                and not m.get("deletionTimestamp")
                and new_refs != old_refs
                and not all(self._looks_solid(key, ref) for ref in new_refs)
            ):
                self._queue.add(key)

        if old_refs and (event.type == "DELETED" or old_refs != new_refs):
            # A dependent went away or dropped/changed references: owners waiting on it may be unblocked.
            for ref in old_refs:
                owner_key = self._uids.get(ref.get("uid", ""))
                if owner_key is not None and foreground_deleting(self._store_get(owner_key)):
                    self._queue.add(owner_key)

    def _store_get(self, key: ObjectKey) -> Obj | None:
        assert self._api is not None
        return self._api.store.get(key)

    def _looks_solid(self, dependent: ObjectKey, ref: dict[str, Any]) -> bool:
        owner_key = self._owner_key(dependent, ref)
        if owner_key is None:
            return True  # unresolvable kinds are left alone
        owner = self._store_get(owner_key)
        return (
            owner is not None and meta(owner).get("uid") == ref.get("uid") and not foreground_deleting(owner)
        )

    def _owner_kind(self, ref: dict[str, Any]) -> Kind | None:
        assert self._api is not None
        registry = self._api.registry
        api_version = str(ref.get("apiVersion") or "")
        kind_name = str(ref.get("kind") or "")
        kind = registry.by_kind(api_version, kind_name)
        if kind is None:
            group = _group(api_version)
            kind = next((k for k in registry.all() if k.group == group and k.kind == kind_name), None)
        if kind is not None and kind.storage is not None:
            kind = kind_for(registry, kind.key)
        return kind

    def _owner_key(self, dependent: ObjectKey, ref: dict[str, Any]) -> ObjectKey | None:
        kind = self._owner_kind(ref)
        if kind is None:
            return None
        namespace = dependent[2] if kind.namespaced else ""
        return (*kind.key, namespace, str(ref.get("name") or ""))

    # -- the worker side -----------------------------------------------------------------------------

    async def pause(self, key: ObjectKey) -> None:
        low, high = self.delay
        if high > 0:
            await asyncio.sleep(self._random.uniform(low, high))

    def handle(self, api: ApiServer, key: ObjectKey) -> None:
        obj = api.store.get(key)
        if obj is None:
            return
        kind = kind_for(api.registry, key[:2])
        if kind is None:
            return
        m = meta(obj)
        if m.get("deletionTimestamp"):
            finalizers = m.get("finalizers") or []
            if ORPHAN in finalizers:
                self._orphan(api, kind, key, obj)
            elif FOREGROUND in finalizers:
                self._foreground(api, kind, key, obj)
            return
        if owner_refs(obj):
            self._attempt_to_delete(api, kind, key, obj)

    def _classify(self, api: ApiServer, key: ObjectKey, obj: Obj, ref: dict[str, Any]) -> Verdict:
        kind = self._owner_kind(ref)
        if kind is None:
            return "unresolvable"
        ref_uid = str(ref.get("uid") or "")
        if kind.namespaced and not key[2]:
            # A cluster-scoped dependent cannot have a namespaced owner.
            self._warn_invalid_namespace(api, key, obj, ref)
            return "unresolvable"
        owner_key: ObjectKey = (*kind.key, key[2] if kind.namespaced else "", str(ref.get("name") or ""))
        owner = api.store.get(owner_key)
        if owner is None or meta(owner).get("uid") != ref_uid:
            elsewhere = self._uids.get(ref_uid)
            if kind.namespaced and elsewhere is not None and elsewhere[2] and elsewhere[2] != key[2]:
                self._warn_invalid_namespace(api, key, obj, ref)
            return "absent"
        return "waiting" if foreground_deleting(owner) else "solid"

    def _attempt_to_delete(self, api: ApiServer, kind: Kind, key: ObjectKey, obj: Obj) -> None:
        m = meta(obj)
        refs = owner_refs(obj)
        verdicts = [self._classify(api, key, obj, ref) for ref in refs]
        if "unresolvable" in verdicts:
            return
        if "solid" in verdicts:
            keep = [ref for ref, v in zip(refs, verdicts, strict=True) if v == "solid"]
            if len(keep) != len(refs):
                log.debug("gc: removing dangling ownerReferences from %s", key)
                api.patch(
                    kind, key[2], key[3], {"metadata": {"uid": m["uid"], "ownerReferences": keep}}, MERGE
                )
            return
        finalizers = m.get("finalizers") or []
        if "waiting" in verdicts and self._dependents.get(m.get("uid", "")):
            policy = "Foreground"
        elif ORPHAN in finalizers:
            policy = "Orphan"
        elif FOREGROUND in finalizers:
            policy = "Foreground"
        else:
            policy = "Background"
        log.debug("gc: deleting %s (%s)", key, policy)
        api.delete(kind, key[2], key[3], {"propagationPolicy": policy, "preconditions": {"uid": m["uid"]}})

    def _foreground(self, api: ApiServer, kind: Kind, key: ObjectKey, obj: Obj) -> None:
        uid = meta(obj)["uid"]
        blocking = False
        for dep_key in sorted(self._dependents.get(uid, ())):
            dep = api.store.get(dep_key)
            if dep is None:
                continue
            if any(r.get("uid") == uid and r.get("blockOwnerDeletion") is True for r in owner_refs(dep)):
                blocking = True
            if not meta(dep).get("deletionTimestamp") or foreground_deleting(dep):
                self._queue.add(dep_key)
        if not blocking:
            self._remove_finalizer(api, kind, key, obj, FOREGROUND)

    def _orphan(self, api: ApiServer, kind: Kind, key: ObjectKey, obj: Obj) -> None:
        uid = meta(obj)["uid"]
        for dep_key in sorted(self._dependents.get(uid, ())):
            dep = api.store.get(dep_key)
            dep_kind = kind_for(api.registry, dep_key[:2])
            if dep is None or dep_kind is None:
                continue
            keep = [r for r in owner_refs(dep) if r.get("uid") != uid]
            patch = {"metadata": {"uid": meta(dep)["uid"], "ownerReferences": keep or None}}
            try:
                api.patch(dep_kind, dep_key[2], dep_key[3], patch, MERGE)
            except errors.ApiError as err:
                if err.code not in (404, 409):
                    raise
        self._remove_finalizer(api, kind, key, obj, ORPHAN)

    @staticmethod
    def _remove_finalizer(api: ApiServer, kind: Kind, key: ObjectKey, obj: Obj, finalizer: str) -> None:
        m = meta(obj)
        remaining = [f for f in m.get("finalizers") or [] if f != finalizer]
        api.patch(
            kind, key[2], key[3], {"metadata": {"uid": m["uid"], "finalizers": remaining or None}}, MERGE
        )

    def _warn_invalid_namespace(self, api: ApiServer, key: ObjectKey, obj: Obj, ref: dict[str, Any]) -> None:
        m = meta(obj)
        once = (str(m.get("uid") or ""), str(ref.get("uid") or ""))
        if once in self._warned:
            return
        self._warned.add(once)
        events = api.registry.get("", "v1", "events")
        if events is None:
            return
        namespace = key[2] or "default"
        now = api.clock()
        identity = (
            f"[{ref.get('apiVersion')}/{ref.get('kind')}, namespace: {key[2]}, name: {ref.get('name')}, "
            f"uid: {ref.get('uid')}]"
        )
        involved: dict[str, Any] = {
            "kind": obj.get("kind"),
            "apiVersion": obj.get("apiVersion"),
            "name": m.get("name"),
            "uid": m.get("uid"),
        }
        if key[2]:
            involved["namespace"] = key[2]
        body: Obj = {
            "metadata": {"name": f"{m.get('name')}.{int(now.timestamp() * 1e9):x}", "namespace": namespace},
            "involvedObject": involved,
            "reason": INVALID_NAMESPACE,
            "message": f'ownerRef {identity} does not exist in namespace "{key[2]}"',
            "source": {"component": COMPONENT},
            "firstTimestamp": format_time(now),
            "lastTimestamp": format_time(now),
            "count": 1,
            "type": "Warning",
            "eventTime": None,
            "reportingComponent": COMPONENT,
            "reportingInstance": "",
        }
        try:
            api.create(events, namespace, body)
        except errors.ApiError as err:
            log.info("gc: could not record %s event for %s: %s", INVALID_NAMESPACE, key, err.message)
