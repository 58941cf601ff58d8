"""The projection: the latest observed object per key and the owner→children index, folded from records.

``apply`` is the one definition of the fold; the journal applies every committed record in seq order, and
on start rebuilds the same state from the newest snapshot plus the records after it. Only ``observed``
records (and ``sync`` markers) change it; every other record type only advances ``seq``. The fold is
last-writer-wins per object: applying only each object's newest observation gives the same state,
which is what a rebuild does (``reading.fold``).

Objects are kept as they were journaled and handed out as read-only mappings: a reader must not mutate
one (the controller builds merge patches instead of copying, DESIGN "State machines").
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from store.records import Record, RecordType

ObjectKey = tuple[str, str, str]  # (kind, namespace, name)

PROJECTED_TYPES = frozenset({RecordType.OBSERVED, RecordType.SYNC})


def owner_uids(obj: Mapping[str, Any]) -> tuple[str, ...]:
    meta = obj.get("metadata")
    refs = meta.get("ownerReferences") if isinstance(meta, Mapping) else None
    if not isinstance(refs, list):
        return ()
    return tuple(ref["uid"] for ref in refs if isinstance(ref, Mapping) and isinstance(ref.get("uid"), str))


class Projection:
    def __init__(self) -> None:
        self._seq = 0
        self._objects: dict[str, dict[tuple[str, str], Mapping[str, Any]]] = {}
        self._owners: dict[ObjectKey, tuple[str, ...]] = {}
        self._children: dict[str, set[ObjectKey]] = {}
        self._synced: set[str] = set()

    @property
    def seq(self) -> int:
        """The seq of the last record applied."""
        return self._seq

    def get(self, kind: str, namespace: str, name: str) -> Mapping[str, Any] | None:
        """The latest observed object (``None`` if never seen, or once DELETED)."""
        return self._objects.get(kind, {}).get((namespace, name))

    def items(self, kind: str, namespace: str | None = None) -> list[Mapping[str, Any]]:
        """Every current object of ``kind`` (in ``namespace`` if given), ordered by namespace and name."""
        objects = self._objects.get(kind, {})
        return [objects[key] for key in sorted(objects) if namespace is None or key[0] == namespace]

    def children(self, owner_uid: str) -> list[ObjectKey]:
        """(kind, namespace, name) of the current objects whose ownerReferences name ``owner_uid``, sorted."""
        return sorted(self._children.get(owner_uid, ()))

    def is_synced(self, kind: str) -> bool:
        """Whether a watcher has finished listing ``kind`` (a ``sync`` record): all its objects are here."""
        return kind in self._synced

    def __len__(self) -> int:
        return sum(len(objects) for objects in self._objects.values())

    def apply(self, record: Record) -> None:
        """Fold one committed record in (records must come in seq order)."""
        if record.seq is not None:
            self._seq = record.seq
        if record.type is RecordType.OBSERVED:
            obj = record.body.get("object")
            if record.body.get("event") == "DELETED" or not isinstance(obj, Mapping):
                self._remove((record.kind, record.namespace, record.name))
            else:
                self._put((record.kind, record.namespace, record.name), obj)
        elif record.type is RecordType.SYNC and record.kind:
            self._synced.add(record.kind)

    def _put(self, key: ObjectKey, obj: Mapping[str, Any]) -> None:
        kind, namespace, name = key
        self._objects.setdefault(kind, {})[(namespace, name)] = obj
        owners = owner_uids(obj)
        if owners != self._owners.get(key, ()):
            self._unlink(key)
            if owners:
                self._owners[key] = owners
                for uid in owners:
                    self._children.setdefault(uid, set()).add(key)

    def _remove(self, key: ObjectKey) -> None:
        kind, namespace, name = key
        objects = self._objects.get(kind)
        if objects is not None:
            objects.pop((namespace, name), None)
            if not objects:
                del self._objects[kind]
        self._unlink(key)

    def _unlink(self, key: ObjectKey) -> None:
        for uid in self._owners.pop(key, ()):
            children = self._children.get(uid)
            if children is not None:
                children.discard(key)
                if not children:
                    del self._children[uid]

    def for_snapshot(self) -> dict[str, Any]:
        """The state as JSON-ready data (the owner index is derived, so it is not included)."""
        return {
            "seq": self._seq,
            "objects": [
                [kind, namespace, name, obj]
                for kind, objects in self._objects.items()
                for (namespace, name), obj in objects.items()
            ],
            "synced": sorted(self._synced),
        }

    @classmethod
    def from_snapshot(cls, data: Mapping[str, Any]) -> Projection:
        projection = cls()
        projection._seq = int(data["seq"])
        for kind, namespace, name, obj in data["objects"]:
            projection._put((kind, namespace, name), obj)
        projection._synced = set(data["synced"])
        return projection

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Projection):
            return NotImplemented
        return (
            self._seq == other._seq
            and self._objects == other._objects
            and self._children == other._children
            and self._synced == other._synced
        )

    __hash__ = None  # type: ignore[assignment]
