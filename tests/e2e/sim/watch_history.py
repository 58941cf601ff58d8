"""What a watch saw, for the workload and storage tests of the emulator.

``History`` runs one kubernetes_asyncio watch (a real list, then a watch from the list's
resourceVersion, over HTTP) in the background and keeps every event in order, so a test can check a
property of every intermediate state - "old and new pods never ran at once" - rather than of the end
state only. ``states`` replays the events into the set of objects that existed after each one.

Inputs: a kubernetes_asyncio list function and its arguments. Outputs: (type, object) pairs, objects as
the JSON the server sent. Nothing is mocked.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Iterator
from types import TracebackType
from typing import Any

from kubernetes_asyncio import watch

Obj = dict[str, Any]


class History:
    def __init__(self, list_fn: Callable[..., Awaitable[Any]], *args: Any, **kwargs: Any) -> None:
        self._list_fn = list_fn
        self._args = args
        self._kwargs = kwargs
        self.events: list[tuple[str, Obj]] = []
        self.initial: list[Obj] = []
        self._watch = watch.Watch()
        self._task: asyncio.Task[None] | None = None

    async def __aenter__(self) -> History:
        listed = await self._list_fn(*self._args, **self._kwargs, _preload_content=False)
        body = await listed.json()
        self.initial = list(body.get("items") or [])
        rv = body["metadata"]["resourceVersion"]
        self._task = asyncio.create_task(self._follow(rv))
        return self

    async def _follow(self, rv: str) -> None:
        async for event in self._watch.stream(
            self._list_fn, *self._args, resource_version=rv, **self._kwargs
        ):
            self.events.append((event["type"], event["raw_object"]))

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._watch.stop()
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        await self._watch.close()

    def states(self) -> Iterator[dict[str, Obj]]:
        """The objects by name after each event (the listed ones first)."""
        current = {o["metadata"]["name"]: o for o in self.initial}
        for event_type, obj in self.events:
            name = obj["metadata"]["name"]
            if event_type == "DELETED":
                current.pop(name, None)
            elif event_type in ("ADDED", "MODIFIED"):
                current[name] = obj
            else:
                continue
            yield dict(current)

    def first(self, predicate: Callable[[str, Obj], bool]) -> int:
        """The index of the first event that satisfies ``predicate`` (-1 when none does)."""
        return next((i for i, (t, o) in enumerate(self.events) if predicate(t, o)), -1)


def ready(pod: Obj) -> bool:
    return any(
        c.get("type") == "Ready" and c.get("status") == "True"
        for c in (pod.get("status") or {}).get("conditions") or []
    )


def terminal(pod: Obj) -> bool:
    return (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed")


def terminating(pod: Obj) -> bool:
    return bool(pod["metadata"].get("deletionTimestamp"))


def label(obj: Obj, key: str) -> str:
    return str((obj["metadata"].get("labels") or {}).get(key, ""))
