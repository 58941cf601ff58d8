"""The executor's answers as observations, for the kinds no watcher lists: Secrets.

The controller asks the cluster for no more than upstream ARC's charts grant: no list or watch of Secrets
anywhere, only get, create, patch and delete in its own namespace and in the namespaces of its scale sets.
So no watch shows it a Secret; what it knows of one is what the API server answered when the executor read
or wrote it. ``Observations`` hands each such answer to the loop's observer, which journals it as an
``observed`` record like a watch event (without data, as every Secret is journaled), so machines keep
deciding from observed state and a replay reads the same records:

* a read, create or patch answers the object: ``MODIFIED`` (``ADDED`` the first time this process sees it);
* a delete answers the object still terminating (``MODIFIED``), or it is gone (``DELETED``), as is a read
  or delete answered NotFound;
* a delete refused because the name now holds another object (its uid precondition failed: another replica
  recreated it, say) reads that object, so the machines learn what the name holds.

An answer that says nothing new (the same resourceVersion, or gone again) is not reported twice, so the
config Secret read at every Actions call adds a record only when it changed.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Final

from statemachines.effects import ObjectRef

# Journals one observation: (event, kind, object).
Observer = Callable[[str, str, Mapping[str, Any]], Awaitable[None]]

REPORTED: Final = frozenset({"Secret"})
_GONE: Final = ""


class Observations:
    def __init__(self, observer: Observer | None) -> None:
        self._observer = observer
        self._seen: dict[tuple[str, str, str], str] = {}

    def reports(self, kind: str) -> bool:
        return self._observer is not None and kind in REPORTED

    async def answered(self, kind: str, obj: Mapping[str, Any]) -> None:
        """The API server answered ``obj`` (a read, a create, a patch or a delete still terminating)."""
        if not self.reports(kind) or not isinstance(obj, Mapping):
            return
        meta = obj.get("metadata") or {}
        key = (kind, str(meta.get("namespace") or ""), str(meta.get("name") or ""))
        version = str(meta.get("resourceVersion") or "")
        before = self._seen.get(key)
        if before == version:
            return
        self._seen[key] = version
        await self._report("ADDED" if before in (None, _GONE) else "MODIFIED", kind, obj)

    async def gone(self, ref: ObjectRef, last: Mapping[str, Any] | None = None) -> None:
        """``ref`` does not exist (any more): deleted, or answered NotFound."""
        if not self.reports(ref.kind):
            return
        key = (ref.kind, ref.namespace, ref.name)
        if self._seen.get(key) == _GONE:
            return
        self._seen[key] = _GONE
        obj = dict(last) if isinstance(last, Mapping) and last.get("metadata") else {}
        obj["metadata"] = {**(obj.get("metadata") or {}), "namespace": ref.namespace, "name": ref.name}
        await self._report("DELETED", ref.kind, obj)

    async def _report(self, event: str, kind: str, obj: Mapping[str, Any]) -> None:
        assert self._observer is not None
        await self._observer(event, kind, obj)
