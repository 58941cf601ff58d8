"""Observed objects as the watchers hold them: the server's JSON, completed and redacted.

A watcher keeps a ``Cache`` (uid → last journaled object) of its kind and scope: what it has told the
journal. It is seeded from the journal's projection when the watcher starts and changed only by folding
in the records the journal accepted, so comparing a list with it says exactly what the journal lacks.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from statemachines.jsonvalues import JsonObject, section
from store.records import Record, RecordType, redact
from watchers import slimming
from watchers.kinds import WatchedKind

Cache = dict[str, JsonObject]

DELETED = "DELETED"


def normalize(kind: WatchedKind, obj: Mapping[str, Any], *, slim: bool = True) -> JsonObject:
    """``obj`` with ``apiVersion`` and ``kind`` (list items of built-in kinds come without them),
    without Secret material and, when ``slim``, as ``slimming.slim`` keeps it."""
    out: dict[str, Any] = {"apiVersion": kind.api_version, "kind": kind.kind}
    out.update(obj)
    return redact(kind.kind, slimming.slim(kind.kind, out) if slim else out)


def unchanged(kind: WatchedKind, before: JsonObject | None, after: JsonObject, *, slim: bool = True) -> bool:
    """Whether journaling ``after`` would tell nothing ``before`` (the last journaled) did not: only a
    slim Pod's resourceVersion moved (``slimming.unchanged``)."""
    return slim and slimming.unchanged(kind.kind, before, after)


def meta(obj: JsonObject) -> Mapping[str, Any]:
    return section(obj, "metadata")


def uid(obj: JsonObject) -> str:
    return str(meta(obj).get("uid") or "")


def resource_version(obj: JsonObject) -> str:
    return str(meta(obj).get("resourceVersion") or "")


def with_resource_version(obj: JsonObject, rv: str) -> JsonObject:
    out = dict(obj)
    out["metadata"] = {**meta(obj), "resourceVersion": rv}
    return out


def seed(objects: Iterable[JsonObject]) -> Cache:
    return {uid(o): o for o in objects if uid(o)}


def fold(cache: Cache, records: Iterable[Record]) -> None:
    """Apply appended ``observed`` records to ``cache``."""
    for record in records:
        if record.type is not RecordType.OBSERVED:
            continue
        if record.body.get("event") == DELETED:
            cache.pop(record.uid, None)
        else:
            cache[record.uid] = record.body["object"]
