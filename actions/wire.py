"""The JSON on the wire: the request bodies arcsm sends (TypedDicts) and checked readers for answers.

What arcsm sends is typed by construction, so it is a TypedDict. What the service answers is untrusted
input, so it is read field by field through the readers below into the frozen dataclasses of
``models`` and ``messages``; a field of the wrong type raises ``ProtocolError`` naming the field. A
missing optional field reads as its zero value, as Go's decoder leaves it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import datetime
from typing import TypedDict

from actions import errors

Json = Mapping[str, object]

UTF8_BOM = b"\xef\xbb\xbf"


class LabelWire(TypedDict):
    name: str
    type: str


class RunnerSettingWire(TypedDict, total=False):
    disableUpdate: bool


class RunnerScaleSetWire(TypedDict, total=False):
    id: int
    name: str
    runnerGroupId: int
    labels: list[LabelWire]
    RunnerSetting: RunnerSettingWire  # capitalised on the wire (§6.4)


class JitConfigRequest(TypedDict):
    name: str
    workFolder: str


class SessionRequest(TypedDict):
    ownerName: str


def decode(body: bytes, *, what: str) -> object:
    """Parse a JSON answer, dropping a UTF-8 byte-order mark first (the service sends one at times)."""
    try:
        return json.loads(body.removeprefix(UTF8_BOM))
    except ValueError as exc:
        raise errors.ProtocolError(f"{what}: the answer is not JSON") from exc


def as_object(value: object, *, what: str) -> Json:
    if not isinstance(value, dict):
        raise errors.ProtocolError(f"{what}: expected a JSON object, got {type(value).__name__}")
    return value


def as_list(value: object, *, what: str) -> list[object]:
    if not isinstance(value, list):
        raise errors.ProtocolError(f"{what}: expected a JSON array, got {type(value).__name__}")
    return value


def integer(data: Json, key: str, *, what: str, required: bool = False) -> int:
    value = data.get(key)
    if value is None and not required:
        return 0
    if isinstance(value, bool) or not isinstance(value, int):
        raise errors.ProtocolError(f"{what}: field {key!r} is {_kind(value)}, expected an integer")
    return value


def text(data: Json, key: str, *, what: str, required: bool = False) -> str:
    value = data.get(key)
    if value is None and not required:
        return ""
    if not isinstance(value, str):
        raise errors.ProtocolError(f"{what}: field {key!r} is {_kind(value)}, expected a string")
    if required and not value:
        raise errors.ProtocolError(f"{what}: field {key!r} is empty")
    return value


def boolean(data: Json, key: str, *, what: str) -> bool:
    value = data.get(key)
    if value is None:
        return False
    if not isinstance(value, bool):
        raise errors.ProtocolError(f"{what}: field {key!r} is {_kind(value)}, expected true or false")
    return value


def strings(data: Json, key: str, *, what: str) -> tuple[str, ...]:
    value = data.get(key)
    if value is None:
        return ()
    items = as_list(value, what=f"{what}: field {key!r}")
    if not all(isinstance(item, str) for item in items):
        raise errors.ProtocolError(f"{what}: field {key!r} must hold strings")
    return tuple(str(item) for item in items)


def timestamp(data: Json, key: str) -> datetime | None:
    """An ISO 8601 time, or None when absent, Go's zero time (year 1) or unreadable.

    Times only feed metrics and logs, so an odd one is dropped rather than failing a message."""
    value = data.get(key)
    if not isinstance(value, str) or not value:
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return None
    return None if parsed.year <= 1 else parsed


def _kind(value: object) -> str:
    return "missing" if value is None else f"a {type(value).__name__}"
