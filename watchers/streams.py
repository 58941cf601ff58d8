"""Watch streams: opening one, reading what has arrived as a batch of lines, and turning a batch into
records.

A batch is every complete line received so far, so events that arrive together are appended together
and the journal can commit them at once. ``translate`` is pure: it drops what the journal already has
(an ADDED or MODIFIED with the (uid, resourceVersion) last journaled, or one whose slim form is the one
last journaled but for its resourceVersion (``slimming.unchanged``), a DELETED of an object it does not
know), follows bookmarks, and stops at an ERROR event.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import aiohttp

from statemachines.jsonvalues import JsonObject
from store.records import Record, observed
from watchers import decoding, errors, objects, requesting
from watchers.kinds import ListCall, WatchedKind
from watchers.objects import Cache

log = logging.getLogger("arcsm.watchers")

CHANGES = ("ADDED", "MODIFIED", objects.DELETED)


@dataclass(frozen=True)
class Batch:
    records: list[Record] = field(default_factory=list)
    resource_version: str = ""  # where to resume: the last event's or bookmark's, "" if none came
    error: errors.ApiError | None = None  # an ERROR event: the stream ends after the records before it


async def open_watch(
    call: ListCall, *, resource_version: str, timeout_seconds: int, grace: float
) -> aiohttp.ClientResponse:
    query = {
        "watch": True,
        "allow_watch_bookmarks": True,
        "resource_version": resource_version,
        "timeout_seconds": timeout_seconds,
    }
    # The client gives up only well after the server should have ended the stream: a hung connection.
    timeout = aiohttp.ClientTimeout(total=timeout_seconds + grace, sock_connect=grace)
    return await requesting.send(call, query, timeout=timeout)


class Lines:
    """The lines of one watch response, a batch at a time."""

    def __init__(self, resp: aiohttp.ClientResponse) -> None:
        self._content = resp.content
        self._rest = bytearray()

    async def batch(self) -> list[bytes]:
        """The complete lines received so far, waiting for at least one; ``[]`` at a clean end."""
        buf = self._rest
        try:
            complete = b"\n" in buf
            while not complete:
                chunk = await self._content.readany()
                if not chunk:
                    if buf.strip():
                        raise errors.TransportError("the watch stream ended inside an event")
                    return []
                buf += chunk
                complete = b"\n" in chunk
            while chunk := self._content.read_nowait(-1):
                buf += chunk
        except requesting.TRANSPORT_ERRORS as exc:
            raise errors.TransportError(f"the watch stream broke: {exc!r}") from exc
        end = buf.rindex(b"\n")
        lines = bytes(buf[:end]).split(b"\n")
        self._rest = bytearray(buf[end + 1 :])
        return [line for line in lines if line.strip()]


def translate(kind: WatchedKind, known: Cache, lines: Sequence[bytes], *, slim: bool = True) -> Batch:
    records: list[Record] = []
    staged: dict[str, JsonObject | None] = {}  # uid → object journaled by this batch (None: deleted)
    resource_version = ""
    for line in lines:
        event = _parse(line)
        etype, obj = event["type"], event["object"]
        if etype == "ERROR":
            return Batch(records, resource_version, errors.from_status(obj))
        if etype == "BOOKMARK":
            resource_version = objects.resource_version(obj) or resource_version
            continue
        if etype not in CHANGES:
            log.warning("%s: ignoring a watch event of type %r", kind.kind, etype)
            continue
        obj = objects.normalize(kind, obj, slim=slim)
        uid, rv = objects.uid(obj), objects.resource_version(obj)
        resource_version = rv or resource_version
        last = staged[uid] if uid in staged else known.get(uid)
        if etype == objects.DELETED:
            if last is None:
                continue  # the journal has this already
        elif last is not None and (
            objects.resource_version(last) == rv or objects.unchanged(kind, last, obj, slim=slim)
        ):
            continue  # the journal has this already, or all of it the journal keeps
        staged[uid] = None if etype == objects.DELETED else obj
        records.append(observed(etype, kind.kind, obj))
    return Batch(records, resource_version)


def _parse(line: bytes) -> dict[str, Any]:
    try:
        event = decoding.loads(line)
    except ValueError as exc:
        raise errors.TransportError(f"a watch line is not JSON: {line[:100]!r}") from exc
    if not isinstance(event, dict) or not isinstance(event.get("object"), dict) or "type" not in event:
        raise errors.TransportError(f"a watch line is not an event: {line[:100]!r}")
    return event
