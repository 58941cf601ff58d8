"""Upcasters: records written in an older format, brought to the current one.

Each format change that alters what a record looks like adds one function here, from format N to N+1,
over the export form of a record (``Record.as_json``). The chain is applied when an older database is
opened (``schema.migrate``) and to every line of an imported JSONL file. Every upcaster is a no-op on a
record already in the newer shape, so applying the chain to a current record changes nothing.

Format history:

* 0 — the prototype: no checksums, no snapshots, and ``observed`` bodies as the watch stream delivers
  them, ``{"type": "ADDED", "object": {...}}``.
* 1 — checksums, snapshots and retention horizons; ``observed`` bodies ``{"event": ..., "object": ...}``
  (the event type no longer shadows the record type).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Upcaster = Callable[[dict[str, Any]], dict[str, Any]]


def observed_event_key(data: dict[str, Any]) -> dict[str, Any]:
    """0 → 1: an observed body's ``type`` becomes ``event``."""
    body = data.get("body")
    if data.get("type") != "observed" or not isinstance(body, dict) or "event" in body or "type" not in body:
        return data
    renamed = {("event" if key == "type" else key): value for key, value in body.items()}
    return {**data, "body": renamed}


UPCASTERS: dict[int, Upcaster] = {0: observed_event_key}


def upcast(data: dict[str, Any], *, since: int = 0) -> dict[str, Any]:
    """``data`` (a record's export form, written in format ``since``) in the current format."""
    for version in sorted(UPCASTERS):
        if version >= since:
            data = UPCASTERS[version](data)
    return data
