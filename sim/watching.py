"""Watch streams (S49–S54): chunked JSON lines, start-RV rules, selector transitions, bookmarks, 410.

A watch subscribes to the store before it reads anything, so no event can fall between the initial
state (or the replayed history) and the live stream; with no ``await`` in between, asyncio makes that
atomic.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator
from dataclasses import dataclass
from typing import Any

from sim import admission, errors, listing, wirejson
from sim.apiserver import ApiServer
from sim.kinds import Kind
from sim.store import Event, Expired, Obj, with_rv

INITIAL_EVENTS_END = "k8s.io/initial-events-end"


@dataclass(frozen=True)
class WatchOptions:
    label_selector: str = ""
    field_selector: str = ""
    resource_version: str = ""
    resource_version_match: str = ""
    allow_bookmarks: bool = False
    send_initial_events: bool | None = None
    timeout_seconds: float | None = None


def validate(opts: WatchOptions) -> None:
    """``validateWatchOptions`` (WatchList on): every violation in one 422 on ListOptions."""
    match = opts.resource_version_match
    errs: list[errors.FieldError] = []
    if opts.send_initial_events is not None and match != "NotOlderThan":
        errs.append(
            errors.forbidden(
                "resourceVersionMatch",
                "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan",
            )
        )
    if match:
        if opts.send_initial_events is None:
            errs.append(
                errors.forbidden(
                    "resourceVersionMatch",
                    "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided",
                )
            )
        if match != "NotOlderThan":
            errs.append(errors.not_supported("resourceVersionMatch", match, ("NotOlderThan",)))
    if errs:
        raise errors.invalid("ListOptions", "meta.k8s.io", "", errs)


def check(kind: Kind, opts: WatchOptions) -> None:
    """Raise for options a watch cannot start with (before any header is sent)."""
    validate(opts)
    listing.matcher(kind, opts.label_selector, opts.field_selector)
    rv = opts.resource_version
    if rv not in ("", "0") and not opts.send_initial_events:
        try:
            int(rv)
        except ValueError:
            raise errors.bad_request(f"invalid resource version: {rv!r}") from None


def line(event_type: str, obj: Obj) -> bytes:
    return wirejson.dumps({"type": event_type, "object": obj}) + b"\n"


def bookmark(kind: Kind, rv: int, *, initial_end: bool = False) -> Obj:
    meta: dict[str, Any] = {"resourceVersion": str(rv)}
    if initial_end:
        meta["annotations"] = {INITIAL_EVENTS_END: "true"}
    obj: Obj = {"kind": kind.kind, "apiVersion": kind.api_version, "metadata": meta}
    if not kind.is_custom:
        meta["creationTimestamp"] = None
        obj["spec"] = {}
        obj["status"] = {}
    return obj


def _expired_status(exc: Expired) -> Obj:
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": str(exc),
        "reason": "Expired",
        "code": 410,
    }


async def stream(
    api: ApiServer,
    kind: Kind,
    namespace: str | None,
    opts: WatchOptions,
    *,
    bookmark_interval: float,
) -> AsyncGenerator[bytes, None]:
    """The lines of one watch stream, ending when the timeout passes or the store drops the watch."""
    validate(opts)
    matches, _ = listing.matcher(kind, opts.label_selector, opts.field_selector)
    store = api.store
    sub = store.subscribe(kind.key)

    def present(obj: Obj) -> Obj:
        return api.to_view(kind, admission.read_defaults(kind, obj))

    def shared_line(event_type: str, event: Event) -> bytes:
        # Every watcher of this kind sends the same bytes for an event: serialise it once.
        cache_key = (event_type, kind.group, kind.version)
        cached = event.lines.get(cache_key)
        if cached is None:
            cached = event.lines[cache_key] = line(event_type, present(event.obj))
        return cached

    def in_scope(event: Event) -> bool:
        return namespace is None or event.key[2] == namespace

    def translate(event: Event) -> bytes | None:
        if not in_scope(event):
            return None
        now_m = event.type != "DELETED" and matches(event.obj)
        was_m = event.prev is not None and matches(event.prev)
        if event.type == "DELETED":
            return shared_line("DELETED", event) if was_m else None
        if now_m and was_m:
            return shared_line("MODIFIED", event)
        if now_m:
            return shared_line("ADDED", event)
        if was_m and event.prev is not None:
            return line("DELETED", present(with_rv(event.prev, event.rv)))
        return None

    try:
        initial: list[bytes] = []
        rv = opts.resource_version
        last_rv = store.revision
        if opts.send_initial_events or (opts.send_initial_events is None and rv in ("", "0")):
            for obj in store.items(kind.key, namespace):
                if matches(obj):
                    initial.append(line("ADDED", present(obj)))
            if opts.send_initial_events and opts.allow_bookmarks:
                initial.append(line("BOOKMARK", bookmark(kind, last_rv, initial_end=True)))
        elif rv in ("", "0"):
            pass  # sendInitialEvents=false without a resourceVersion: only the changes from now on
        else:
            try:
                start = int(rv)
            except ValueError:
                raise errors.bad_request(f"invalid resource version: {rv!r}") from None
            try:
                replay = store.events_after(start)
            except Expired as exc:
                yield line("ERROR", _expired_status(exc))
                return
            for event in replay:
                if event.key[:2] == kind.key:
                    out = translate(event)
                    if out:
                        initial.append(out)
        for chunk in initial:
            yield chunk
        loop = asyncio.get_running_loop()
        deadline = loop.time() + opts.timeout_seconds if opts.timeout_seconds else None
        next_bookmark = loop.time() + bookmark_interval
        while True:
            now = loop.time()
            wake = next_bookmark if opts.allow_bookmarks else None
            if deadline is not None:
                # A last bookmark shortly before the server-side timeout (S52).
                if opts.allow_bookmarks and deadline - now > 2:
                    wake = min(wake or deadline, deadline - 2)
                wake = min(wake, deadline) if wake is not None else deadline
            try:
                timeout = None if wake is None else max(0.0, wake - now)
                item = await asyncio.wait_for(sub.queue.get(), timeout)
            except TimeoutError:
                if deadline is not None and loop.time() >= deadline:
                    return
                if opts.allow_bookmarks:
                    yield line("BOOKMARK", bookmark(kind, store.revision))
                    next_bookmark = loop.time() + bookmark_interval
                continue
            if item is None:
                return
            out = translate(item)
            if out:
                yield out
    finally:
        store.unsubscribe(sub)
