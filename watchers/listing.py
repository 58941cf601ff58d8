"""Lists, and what a list reveals: the records that bring the journal level with the server.

``diff`` is pure: given what the journal knows (the watcher's cache) and a complete list, it returns an
``observed`` record for every difference and nothing for an object whose resourceVersion is unchanged,
or whose slim form differs from the one journaled only in its resourceVersion (``slimming.unchanged``).
An object missing from the list was deleted while nobody watched; its DELETED record carries its last
known state with the list's resourceVersion, the first revision at which the deletion is known (as a
watch DELETED carries the revision of the delete), so an object's records stay in resourceVersion order
and no (uid, resourceVersion) is journaled twice.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from statemachines.jsonvalues import JsonObject
from store.records import Record, observed
from watchers import decoding, objects, requesting, retrying
from watchers.errors import WatchError
from watchers.kinds import ListCall, WatchedKind
from watchers.objects import Cache


@dataclass(frozen=True)
class Listing:
    items: list[JsonObject]
    resource_version: str


def diff(
    kind: WatchedKind,
    known: Cache,
    listed: Sequence[JsonObject],
    resource_version: str,
    *,
    slim: bool = True,
) -> list[Record]:
    """The records that turn ``known`` into ``listed`` (normalized objects of ``kind``, one scope).

    Deletions come first: an object deleted and re-created under the same name must leave the
    journal's name-keyed projection holding the new one.
    """
    present = {objects.uid(o) for o in listed}
    gone = sorted(
        (o for u, o in known.items() if u not in present),
        key=lambda o: (objects.meta(o).get("namespace", ""), objects.meta(o).get("name", "")),
    )
    records = [
        observed(objects.DELETED, kind.kind, objects.with_resource_version(o, resource_version)) for o in gone
    ]
    for obj in listed:
        before = known.get(objects.uid(obj))
        if before is None:
            records.append(observed("ADDED", kind.kind, obj))
        elif objects.resource_version(before) != objects.resource_version(obj) and not objects.unchanged(
            kind, before, obj, slim=slim
        ):
            records.append(observed("MODIFIED", kind.kind, obj))
    return records


async def list_all(
    kind: WatchedKind,
    call: ListCall,
    *,
    page_size: int,
    timeout: float,
    retry: retrying.Retry,
    slim: bool = True,
) -> Listing:
    """Every object of ``kind`` that ``call`` lists, page by page from one snapshot.

    Each page is retried on its own; a continue token that expired (410) surfaces as ``Expired`` and the
    caller lists again from the start.
    """
    items: list[JsonObject] = []
    token = ""
    resource_version = ""
    while True:
        page = await retry(_page, call, limit=page_size, token=token, timeout=timeout)
        metadata = page.get("metadata") or {}
        resource_version = resource_version or str(metadata.get("resourceVersion") or "")
        items.extend(objects.normalize(kind, o, slim=slim) for o in page.get("items") or ())
        token = str(metadata.get("continue") or "")
        if not token:
            return Listing(items, resource_version)


async def _page(call: ListCall, *, limit: int, token: str, timeout: float) -> dict[str, Any]:
    query: dict[str, Any] = {"limit": limit}
    if token:
        query["_continue"] = token
    resp = await requesting.send(call, query, timeout=timeout)
    try:
        body = await requesting.read(resp)
    finally:
        resp.release()
    try:
        page = decoding.loads(body)
    except ValueError as exc:
        raise WatchError(f"the list answer is not JSON: {exc}") from exc
    if not isinstance(page, dict):
        raise WatchError("the list answer is not a JSON object")
    return page
