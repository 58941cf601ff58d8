"""The projection: the latest observed object per key and its indexes, folded from records.

``apply`` is the one definition of the fold; the journal applies every committed record in seq order, and
on start rebuilds the same state from the newest snapshot plus the records after it. Only ``observed``
records (and ``sync`` markers) change it; every other record type only advances ``seq``. The fold is
last-writer-wins per object: applying only each object's newest observation gives the same state,
which is what a rebuild does (``reading.fold``).

Objects are kept as they were journaled and handed out as read-only mappings: a reader must not mutate
one (the controller builds merge patches instead of copying, DESIGN "State machines").

So that no per-event lookup scans every object of a kind, the projection keeps indexes beside the
objects, each kept in step by ``_put``/``_remove``. They are derived state: a snapshot holds the
objects only, and a projection read back from one rebuilds them. Every answer comes in the same order a
sorted scan gave (namespace, then name; ``(kind, namespace, name)`` for keys), so what a decision reads
does not depend on which index answered it or on the order objects arrived in:

* ``items(kind, namespace)``: the keys of a kind, sorted on the first call after the set of keys last
  changed and kept until it changes again (a replacement keeps it), so a repeated call costs the objects
  it returns (a namespace's by ``bisect``), and a fold that adds and drops objects pays nothing for it;
* ``children(owner_uid)``: the owner index over ``ownerReferences`` uids, kept sorted;
* ``find(index, value)``: an ``Index`` the caller declares (a kind and a pure function from an object to
  the values it is found under, e.g. the scale set a listener's spec names). It is built on its first
  ``find``, from the objects held then, and kept in step from then on.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Hashable, Iterable, Mapping
from dataclasses import dataclass
from operator import itemgetter
from typing import Any

from store.records import Record, RecordType

ObjectKey = tuple[str, str, str]  # (kind, namespace, name)
NameKey = tuple[str, str]  # (namespace, name) within a kind

_namespace_of = itemgetter(0)

PROJECTED_TYPES = frozenset({RecordType.OBSERVED, RecordType.SYNC})


def owner_uids(obj: Mapping[str, Any]) -> tuple[str, ...]:
    meta = obj.get("metadata")
    refs = meta.get("ownerReferences") if isinstance(meta, Mapping) else None
    if not isinstance(refs, list):
        return ()
    return tuple(ref["uid"] for ref in refs if isinstance(ref, Mapping) and isinstance(ref.get("uid"), str))


@dataclass(frozen=True, eq=False)
class Index:
    """A secondary index over the objects of ``kind``: ``values(key, obj)`` are the values the object is
    found under by ``Projection.find``. It must be a pure function of its arguments (the index is derived
    state, rebuilt by folding the same objects). Indexes are told apart by identity: declare each once,
    at module level."""

    name: str
    kind: str
    values: Callable[[ObjectKey, Mapping[str, Any]], Iterable[Hashable]]


class Postings:
    """Value → the keys found under it, each list kept sorted; and key → its values, to move it."""

    def __init__(self) -> None:
        self._keys: dict[Hashable, list[ObjectKey]] = {}
        self._values: dict[ObjectKey, tuple[Hashable, ...]] = {}

    def get(self, value: Hashable) -> list[ObjectKey]:
        return list(self._keys.get(value, ()))

    def set(self, key: ObjectKey, values: Iterable[Hashable]) -> None:
        """File ``key`` under ``values`` (each once) and nowhere else; no values: drop it."""
        new = tuple(values)
        if len(new) > 1:
            new = tuple(dict.fromkeys(new))
        old = self._values.get(key, ())
        if new == old:
            return
        for value in old:
            keys = self._keys[value]
            del keys[bisect.bisect_left(keys, key)]
            if not keys:
                del self._keys[value]
        for value in new:
            bisect.insort(self._keys.setdefault(value, []), key)
        if new:
            self._values[key] = new
        else:
            del self._values[key]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Postings):
            return NotImplemented
        return self._keys == other._keys

    __hash__ = None  # type: ignore[assignment]


class Projection:
    def __init__(self) -> None:
        self._seq = 0
        self._objects: dict[str, dict[NameKey, Mapping[str, Any]]] = {}
        self._sorted: dict[str, list[NameKey]] = {}  # per kind, from ``items`` until its keys change
        self._children = Postings()  # owner uid → the keys of the objects it owns
        self._indexes: dict[Index, Postings] = {}
        self._indexes_of: dict[str, list[Index]] = {}  # kind → the indexes built over it
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
        objects = self._objects.get(kind)
        if not objects:
            return []
        order = self._sorted.get(kind)
        if order is None:
            order = self._sorted[kind] = sorted(objects)
        if namespace is None:
            return [objects[key] for key in order]
        start = bisect.bisect_left(order, namespace, key=_namespace_of)
        end = bisect.bisect_right(order, namespace, lo=start, key=_namespace_of)
        return [objects[key] for key in order[start:end]]

    def children(self, owner_uid: str) -> list[ObjectKey]:
        """(kind, namespace, name) of the current objects whose ownerReferences name ``owner_uid``, sorted."""
        return self._children.get(owner_uid)

    def find(self, index: Index, value: Hashable) -> list[Mapping[str, Any]]:
        """The current objects of ``index.kind`` that ``index`` files under ``value``, ordered by namespace
        and name (as ``items`` would list them)."""
        postings = self._indexes.get(index)
        if postings is None:
            postings = self._build(index)
        objects = self._objects.get(index.kind, {})
        return [objects[(namespace, name)] for _, namespace, name in postings.get(value)]

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
        objects = self._objects.setdefault(kind, {})
        if (namespace, name) not in objects:
            self._sorted.pop(kind, None)
        objects[(namespace, name)] = obj
        self._children.set(key, owner_uids(obj))
        for index in self._indexes_of.get(kind, ()):
            self._indexes[index].set(key, index.values(key, obj))

    def _remove(self, key: ObjectKey) -> None:
        kind, namespace, name = key
        objects = self._objects.get(kind)
        if objects is None or objects.pop((namespace, name), None) is None:
            return
        if not objects:
            del self._objects[kind]
        self._sorted.pop(kind, None)
        self._children.set(key, ())
        for index in self._indexes_of.get(kind, ()):
            self._indexes[index].set(key, ())

    def _build(self, index: Index) -> Postings:
        postings = self._indexes[index] = Postings()
        self._indexes_of.setdefault(index.kind, []).append(index)
        for (namespace, name), obj in self._objects.get(index.kind, {}).items():
            key = (index.kind, namespace, name)
            postings.set(key, index.values(key, obj))
        return postings

    def for_snapshot(self) -> dict[str, Any]:
        """The state as JSON-ready data (the indexes are derived, so they are not included)."""
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
