"""Lists, and what a list reveals: the records that bring the journal level with the server.

A list is read page by page (``limit``/``continue``, every page of one snapshot) and each page is diffed
as it arrives, so a re-list of 10,000 Pods holds one page of them, never the whole list. ``Diff`` is
pure: given what the journal knows (the watcher's cache) and the pages of a complete list, it returns an
``observed`` record for every difference and nothing for an object whose resourceVersion is unchanged,
or whose slim form differs from the one journaled only in its resourceVersion (``slimming.unchanged``).
An object missing from the list was deleted while nobody watched; its DELETED record carries its last
known state with the list's resourceVersion, the first revision at which the deletion is known (as a
watch DELETED carries the revision of the delete), so an object's records stay in resourceVersion order
and no (uid, resourceVersion) is journaled twice. Which objects are missing is known only after the last
page, so those DELETED records come last; but an object re-created under the same name (a new uid) has
the old one's DELETED just before its own ADDED, so the journal's name-keyed projection ends holding
the new one.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Sequence
from dataclasses import dataclass
from typing import Any

from statemachines.jsonvalues import JsonObject
from store.records import Record, observed
from watchers import decoding, objects, requesting, retrying
from watchers.errors import WatchError
from watchers.kinds import ListCall, WatchedKind
from watchers.objects import Cache


@dataclass(frozen=True)
class Page:
    items: list[JsonObject]
    # The list's resourceVersion: every page of one list carries the first page's.
    resource_version: str


class Diff:
    """The records that turn ``known`` into a list of ``kind`` (one scope) at ``resource_version``,
    fed a page at a time.

    ``page`` returns the records of one page (ADDED, MODIFIED, and the DELETED of an object a new one
    replaced under the same name); ``rest`` returns the DELETED of every other object the list lacked,
    after the last page. The caller may fold each page's records into ``known`` before the next page:
    the diff is the same whether it does or not.
    """

    def __init__(self, kind: WatchedKind, known: Cache, resource_version: str, *, slim: bool = True) -> None:
        self.kind = kind
        self.resource_version = resource_version
        self._known = known
        self._slim = slim
        self._present: set[str] = set()
        self._deleted: set[str] = set()
        self._names: dict[tuple[str, str], str] | None = None  # built when a new uid first shows up

    def page(self, listed: Sequence[JsonObject]) -> list[Record]:
        records: list[Record] = []
        for obj in listed:
            uid = objects.uid(obj)
            self._present.add(uid)
            before = self._known.get(uid)
            if before is None:
                replaced = self._replaced(obj, uid)
                if replaced is not None:
                    records.append(self._deletion(replaced))
                records.append(observed("ADDED", self.kind.kind, obj))
            elif objects.resource_version(before) != objects.resource_version(obj) and not objects.unchanged(
                self.kind, before, obj, slim=self._slim
            ):
                records.append(observed("MODIFIED", self.kind.kind, obj))
        return records

    def rest(self) -> list[Record]:
        gone = sorted(
            (o for u, o in self._known.items() if u not in self._present and u not in self._deleted),
            key=_name,
        )
        return [self._deletion(o) for o in gone]

    def _deletion(self, obj: JsonObject) -> Record:
        self._deleted.add(objects.uid(obj))
        return observed(
            objects.DELETED, self.kind.kind, objects.with_resource_version(obj, self.resource_version)
        )

    def _replaced(self, obj: JsonObject, uid: str) -> JsonObject | None:
        """The known object of ``obj``'s name under another uid, not yet listed nor deleted."""
        if self._names is None:
            self._names = {_name(o): u for u, o in self._known.items()}
        old = self._names.get(_name(obj))
        if old is None or old == uid or old in self._present or old in self._deleted:
            return None
        return self._known.get(old)


def _name(obj: JsonObject) -> tuple[str, str]:
    meta = objects.meta(obj)
    return str(meta.get("namespace") or ""), str(meta.get("name") or "")


def diff(
    kind: WatchedKind,
    known: Cache,
    listed: Sequence[JsonObject],
    resource_version: str,
    *,
    slim: bool = True,
) -> list[Record]:
    """The records that turn ``known`` into ``listed`` (a complete list in one page)."""
    whole = Diff(kind, known, resource_version, slim=slim)
    return [*whole.page(listed), *whole.rest()]


async def pages(
    kind: WatchedKind,
    call: ListCall,
    *,
    page_size: int,
    timeout: float,
    retry: retrying.Retry,
    slim: bool = True,
) -> AsyncGenerator[Page, None]:
    """Every object of ``kind`` that ``call`` lists, a page of at most ``page_size`` at a time, from one
    snapshot; the next page is asked for only when the caller is done with this one.

    Each page is retried on its own; a continue token that expired (410) surfaces as ``Expired`` and the
    caller lists again from the start.
    """
    token = ""
    resource_version = ""
    while True:
        page = await retry(_page, call, limit=page_size, token=token, timeout=timeout)
        metadata = page.get("metadata") or {}
        resource_version = resource_version or str(metadata.get("resourceVersion") or "")
        items = [objects.normalize(kind, o, slim=slim) for o in page.get("items") or ()]
        token = str(metadata.get("continue") or "")
        del page
        yield Page(items, resource_version)
        if not token:
            return


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
