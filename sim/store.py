"""Versioned object storage with one cluster-wide revision, an event history and watch fan-out.

This is the emulator's etcd: every successful write consumes a new revision (S33); the history of
events is kept until it is compacted (``watch_history``), and both watch resume and lists at an older
revision (``continue`` tokens, ``resourceVersionMatch=Exact``) are served from it, answering 410 once
the revision they need is gone. Objects are plain JSON dicts and are never mutated once stored.
"""

from __future__ import annotations

import asyncio
import random
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

# (group, plural) of a storage type; events.k8s.io and core events share ("", "events").
TypeKey = tuple[str, str]
# (group, plural, namespace, name); namespace "" for cluster-scoped objects.
ObjectKey = tuple[str, str, str, str]
Obj = dict[str, Any]


@dataclass(frozen=True)
class Event:
    rv: int
    type: str  # ADDED, MODIFIED, DELETED
    key: ObjectKey
    obj: Obj  # the object after the write (for DELETED: the last stored state, with the delete revision)
    prev: Obj | None  # the object before the write
    # Serialised watch lines, shared by every watcher that sends this event (see sim.watching).
    lines: dict[tuple[str, str, str], bytes] = field(default_factory=dict, compare=False, repr=False)


class Expired(Exception):
    """The requested revision has been compacted away."""

    def __init__(self, requested: int, oldest: int) -> None:
        super().__init__(f"too old resource version: {requested} ({oldest})")
        self.requested = requested
        self.oldest = oldest


@dataclass(eq=False)
class Subscription:
    """One watcher: gets every event of its type; filtering and framing are the watch handler's job."""

    type_key: TypeKey
    queue: asyncio.Queue[Event | None] = field(default_factory=asyncio.Queue)
    closed: bool = False

    def close(self) -> None:
        """End the stream cleanly: the handler sees ``None`` after what is queued."""
        if not self.closed:
            self.closed = True
            self.queue.put_nowait(None)


def with_rv(obj: Obj, rv: int) -> Obj:
    """A shallow copy of ``obj`` whose metadata carries ``rv`` as its resourceVersion."""
    meta = dict(obj.get("metadata") or {})
    meta["resourceVersion"] = str(rv)
    out = dict(obj)
    out["metadata"] = meta
    return out


class Store:
    def __init__(
        self, *, watch_history: int = 100_000, rv_gaps: bool = False, seed: int | None = None
    ) -> None:
        self.revision = 1
        self._objects: dict[ObjectKey, Obj] = {}
        self._by_type: dict[TypeKey, set[ObjectKey]] = {}
        self._history: deque[Event] = deque()
        self._watch_history = watch_history
        # Every event with rv > compacted is still in the history.
        self.compacted = 0
        self._subscribers: set[Subscription] = set()
        self._rv_gaps = rv_gaps
        self._random = random.Random(seed)
        self._listeners: list[Callable[[Event], None]] = []

    # -- reads -------------------------------------------------------------------------------------

    def get(self, key: ObjectKey) -> Obj | None:
        return self._objects.get(key)

    def keys(self, type_key: TypeKey) -> Iterator[ObjectKey]:
        return iter(self._by_type.get(type_key, ()))

    def items(self, type_key: TypeKey, namespace: str | None = None) -> list[Obj]:
        """Current objects of a type, ordered by namespace then name (S14)."""
        keys = sorted(k for k in self._by_type.get(type_key, ()) if namespace is None or k[2] == namespace)
        return [self._objects[k] for k in keys]

    def items_at(self, type_key: TypeKey, rv: int, namespace: str | None = None) -> list[Obj]:
        """The objects of a type as they were at revision ``rv``, rebuilt by undoing later events."""
        if rv < self.compacted:
            raise Expired(rv, self.compacted)
        state = {k: self._objects[k] for k in self._by_type.get(type_key, ())}
        for event in reversed(self._history):
            if event.rv <= rv:
                break
            if event.key[:2] != type_key:
                continue
            if event.prev is None:
                state.pop(event.key, None)
            else:
                state[event.key] = event.prev
        keys = sorted(k for k in state if namespace is None or k[2] == namespace)
        return [state[k] for k in keys]

    def events_after(self, rv: int) -> list[Event]:
        if rv < self.compacted:
            raise Expired(rv, self.compacted)
        out = []
        for event in reversed(self._history):
            if event.rv <= rv:
                break
            out.append(event)
        out.reverse()
        return out

    # -- writes ------------------------------------------------------------------------------------

    def next_revision(self) -> int:
        self.revision += self._random.randint(1, 7) if self._rv_gaps else 1
        return self.revision

    def put(self, key: ObjectKey, obj: Obj) -> Obj:
        """Store a created or changed object under a new revision; returns the stored object."""
        rv = self.next_revision()
        stored = with_rv(obj, rv)
        prev = self._objects.get(key)
        self._objects[key] = stored
        self._by_type.setdefault(key[:2], set()).add(key)
        self._record(Event(rv, "MODIFIED" if prev is not None else "ADDED", key, stored, prev))
        return stored

    def remove(self, key: ObjectKey) -> Obj:
        """Delete an object; the DELETED event carries its last state with the delete revision."""
        prev = self._objects.pop(key)
        self._by_type[key[:2]].discard(key)
        rv = self.next_revision()
        self._record(Event(rv, "DELETED", key, with_rv(prev, rv), prev))
        return prev

    def _record(self, event: Event) -> None:
        self._history.append(event)
        while len(self._history) > self._watch_history:
            dropped = self._history.popleft()
            self.compacted = dropped.rv
        for sub in list(self._subscribers):
            if sub.type_key == event.key[:2] and not sub.closed:
                sub.queue.put_nowait(event)
        for listener in self._listeners:
            listener(event)

    def compact(self, rv: int | None = None) -> None:
        """Forget history up to ``rv`` (default: everything): older revisions answer 410 from now on."""
        target = self.revision if rv is None else rv
        while self._history and self._history[0].rv <= target:
            self._history.popleft()
        self.compacted = max(self.compacted, target)

    # -- watch fan-out -----------------------------------------------------------------------------

    def subscribe(self, type_key: TypeKey) -> Subscription:
        sub = Subscription(type_key)
        self._subscribers.add(sub)
        return sub

    def unsubscribe(self, sub: Subscription) -> None:
        self._subscribers.discard(sub)

    def drop_watches(self, type_key: TypeKey | None = None) -> int:
        """End every open watch stream (of ``type_key`` only, when given) cleanly; returns how many
        were open."""
        subs = [s for s in self._subscribers if type_key is None or s.type_key == type_key]
        for sub in subs:
            sub.close()
            self._subscribers.discard(sub)
        return len(subs)

    @property
    def watch_count(self) -> int:
        return len(self._subscribers)

    def add_listener(self, listener: Callable[[Event], None]) -> None:
        """Call ``listener`` synchronously for every event (the simulated controllers' informer)."""
        self._listeners.append(listener)

    def remove_listener(self, listener: Callable[[Event], None]) -> None:
        """Stop calling ``listener`` (one added by ``add_listener``; unknown ones are ignored)."""
        if listener in self._listeners:
            self._listeners.remove(listener)


def meta(obj: Obj | None) -> dict[str, Any]:
    """``obj.metadata`` (an empty dict when missing)."""
    if obj is None:
        return {}
    m = obj.get("metadata")
    return m if isinstance(m, dict) else {}
