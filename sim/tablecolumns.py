"""What every server-side Table printer is made of: column definitions (Name and Age with their API
docs), ages as kubectl prints them (``HumanDuration``) and ``Printer``, a kind's columns with its cell
function."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

Obj = dict[str, Any]

NAME_DOC = (
    "Name must be unique within a namespace. Is required when creating resources, although some resources "
    "may allow a client to request the generation of an appropriate name automatically. Name is primarily "
    "intended for creation idempotence and configuration definition. Cannot be updated. More info: "
    "https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names"
)
CREATED_DOC = (
    "CreationTimestamp is a timestamp representing the server time when this object was created. It is not "
    "guaranteed to be set in happens-before order across separate operations. Clients may not set this "
    "value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for "
    "lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/"
    "api-conventions.md#metadata"
)


def column(name: str, type_: str = "string", description: str = "", *, priority: int = 0) -> Obj:
    return {"name": name, "type": type_, "format": "", "description": description, "priority": priority}


NAME = {**column("Name", description=NAME_DOC), "format": "name"}
AGE = column("Age", description=CREATED_DOC)


def parse_time(text: Any) -> datetime | None:
    if not isinstance(text, str) or not text:
        return None
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00")).astimezone(UTC)
    except ValueError:
        return None


def human_duration(seconds: float) -> str:
    """apimachinery's ``duration.HumanDuration``."""
    s = int(seconds)
    if s < -1:
        return "<invalid>"
    if s < 0:
        return "0s"
    if s < 120:
        return f"{s}s"
    minutes = s // 60
    if minutes < 10:
        return f"{minutes}m" if s % 60 == 0 else f"{minutes}m{s % 60}s"
    if minutes < 180:
        return f"{minutes}m"
    hours = s // 3600
    if hours < 8:
        return f"{hours}h" if minutes % 60 == 0 else f"{hours}h{minutes % 60}m"
    if hours < 48:
        return f"{hours}h"
    if hours < 192:
        return f"{hours // 24}d" if hours % 24 == 0 else f"{hours // 24}d{hours % 24}h"
    if hours < 24 * 365 * 2:
        return f"{hours // 24}d"
    if hours < 24 * 365 * 8:
        days = (hours // 24) % 365
        return f"{hours // 24 // 365}y" if days == 0 else f"{hours // 24 // 365}y{days}d"
    return f"{hours // 24 // 365}y"


def age(text: Any, now: datetime) -> str:
    """``translateTimestampSince``: ``<unknown>`` for no time."""
    t = parse_time(text)
    return "<unknown>" if t is None else human_duration((now - t).total_seconds())


def meta(obj: Obj) -> Obj:
    meta = obj.get("metadata")
    return meta if isinstance(meta, dict) else {}


def simple(*cells: Callable[[Obj], Any]) -> Callable[[Obj, datetime], list[Any]]:
    """A printer of the name, the given cells and the age."""

    def cells_of(obj: Obj, now: datetime) -> list[Any]:
        m = meta(obj)
        return [m.get("name", ""), *(c(obj) for c in cells), age(m.get("creationTimestamp"), now)]

    return cells_of


@dataclass(frozen=True)
class Printer:
    columns: tuple[Obj, ...]
    cells: Callable[[Obj, datetime], list[Any]]
