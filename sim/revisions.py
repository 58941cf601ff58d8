"""ControllerRevisions: the recorded templates of a StatefulSet (kube-controller-manager's
``controller/history`` package and the StatefulSet controller's ``getPatch``/``newRevision``).

A revision's ``data`` is the patch that restores the owner's pod template
(``{"spec": {"template": {..., "$patch": "replace"}}}``); its name is ``<owner>-<hash>`` with the hash
(FNV-1 of the data, plus the collision count as decimal digits when there is one, safe-encoded) also
in the label ``controller.kubernetes.io/hash``; the owner's template labels and annotations are copied
onto it and it has the owner as controller. Pods carry the name of their revision in the label
``controller-revision-hash``.

``History`` reads and writes the revisions of one owner through the API server: ``owned`` (sorted by
``revision``), ``create`` (a taken name with other data is a collision: the count goes up and the
next hash is tried), ``bump`` (an equal older revision becomes the newest, as a rollback does) and
``truncate`` (revisions neither current, nor the update revision, nor used by a live pod are deleted,
oldest first, beyond ``revisionHistoryLimit``).

Known limits: the data is hashed as canonical JSON, not as the bytes Go's encoder writes, so names
differ from a real cluster's for the same template.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from sim import errors, podcontrol
from sim.apiserver import ApiServer
from sim.kinds import Kind
from sim.store import Obj
from sim.workqueue import meta

REVISIONS = ("apps", "controllerrevisions")
HASH_LABEL = "controller.kubernetes.io/hash"
POD_REVISION_LABEL = "controller-revision-hash"
_FNV_OFFSET = 0x811C9DC5
_FNV_PRIME = 0x01000193


def fnv32(data: bytes) -> int:
    """FNV-1, 32 bit (``hash/fnv.New32``)."""
    h = _FNV_OFFSET
    for b in data:
        h = (h * _FNV_PRIME) & 0xFFFFFFFF
        h ^= b
    return h


def patch_of(owner: Obj) -> Obj:
    """``getPatch``: the data of a revision of ``owner``'s pod template."""
    template = copy.deepcopy(dict((owner.get("spec") or {}).get("template") or {}))
    template["$patch"] = "replace"
    return {"spec": {"template": template}}


def data_hash(data: Any, collision_count: int | None) -> str:
    """``HashControllerRevision``."""
    raw = json.dumps(data, sort_keys=True, separators=(",", ":")).encode()
    if collision_count is not None:
        raw += str(collision_count).encode()
    return podcontrol.safe_encode(str(fnv32(raw)))


def revision_number(revision: Obj) -> int:
    return int(revision.get("revision") or 0)


def pod_revision(pod: Obj) -> str:
    return str(podcontrol.labels_of(pod).get(POD_REVISION_LABEL, ""))


def equal(a: Obj, b: Obj) -> bool:
    """``EqualRevision``: the same data."""
    return podcontrol.semantically_equal(a.get("data"), b.get("data"))


class History:
    """The revisions of one owner (a StatefulSet), read from and written through the API server."""

    def __init__(self, api: ApiServer, owner: Obj) -> None:
        self.api = api
        self.owner = owner
        kind = api.registry.get("apps", "v1", "controllerrevisions")
        assert kind is not None
        self.kind: Kind = kind
        self.namespace = str(meta(owner)["namespace"])

    def owned(self) -> list[Obj]:
        """The owner's revisions, oldest revision first (``SortControllerRevisions``)."""
        uid = meta(self.owner)["uid"]
        owned = [
            r
            for r in self.api.store.items(REVISIONS, self.namespace)
            if (podcontrol.controller_ref(r) or {}).get("uid") == uid
        ]
        return sorted(owned, key=lambda r: (revision_number(r), *podcontrol.creation_key(r)))

    def draft(self, number: int) -> Obj:
        """``newRevision``: the revision of the owner's current template (not yet created)."""
        owner = self.owner
        tmeta = ((owner.get("spec") or {}).get("template") or {}).get("metadata") or {}
        return {
            "apiVersion": "apps/v1",
            "kind": "ControllerRevision",
            "metadata": {
                "namespace": self.namespace,
                "labels": dict(tmeta.get("labels") or {}),
                "annotations": dict(meta(owner).get("annotations") or {}),
                "ownerReferences": [podcontrol.new_controller_ref(owner)],
            },
            "data": patch_of(owner),
            "revision": number,
        }

    def create(self, draft: Obj, collision_count: int) -> tuple[Obj, int]:
        """``CreateControllerRevision``: (the revision, the collision count after any collisions)."""
        hash_once = data_hash(draft["data"], collision_count)
        draft = {**draft, "metadata": {**draft["metadata"]}}
        draft["metadata"]["labels"] = {**draft["metadata"]["labels"], HASH_LABEL: hash_once}
        while True:
            name = f"{meta(self.owner)['name'][:223]}-{data_hash(draft['data'], collision_count)}"
            draft["metadata"]["name"] = name
            try:
                return self.api.create(self.kind, self.namespace, draft).body, collision_count
            except errors.ApiError as err:
                if err.reason != "AlreadyExists":
                    raise
            existing = self.api.store.get((*REVISIONS, self.namespace, name))
            if existing is not None and equal(existing, draft):
                return existing, collision_count
            collision_count += 1

    def bump(self, revision: Obj, number: int) -> Obj:
        """``UpdateControllerRevision``: give an existing revision a new number."""
        if revision_number(revision) == number:
            return revision
        body = {**revision, "revision": number}
        return self.api.update(self.kind, self.namespace, meta(revision)["name"], body).body

    def truncate(self, live: set[str], limit: int) -> None:
        """``truncateHistory``: delete the oldest revisions not in ``live`` beyond ``limit``."""
        history = [r for r in self.owned() if meta(r)["name"] not in live]
        for revision in history[: max(len(history) - limit, 0)]:
            options = {"preconditions": {"uid": meta(revision)["uid"]}}
            try:
                self.api.delete(self.kind, self.namespace, meta(revision)["name"], options)
            except errors.ApiError as err:
                if err.code not in (404, 409):
                    raise
