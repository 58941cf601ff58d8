"""Observed JSON and the coercions that read it: the one declaration of ``JsonObject`` and the helpers
that take a field of an expected shape, or a neutral value when the field is absent or of another shape.

An observed object is whatever the API server (or a recorded journal) sent: a field a decision reads
may be missing, ``null``, or of the wrong type, and a decision must not raise on it. Each helper here
says what it gives for such a value; none of them raises and none of them copies a mapping it returns.

    as_mapping(v)       v when a mapping, else {}          section(obj, name)  as_mapping(obj[name])
    as_strings(v)       a mapping's items as str → str     as_list(v)          v when a list, else []
    as_mappings(v)      the mappings in a list             as_int(v)           an int (not a bool), else 0
    parse_int(v)        an int or a decimal string, else 0 int_or_none(v)      an int (not a bool), else None
    str_or_none(v)      v when a string, else None

Every package that reads observed objects imports these from here (``statemachines`` is the lowest
layer): the controller, the store, the watchers and the HTTP API.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeAlias

JsonObject: TypeAlias = Mapping[str, Any]


def as_mapping(value: object) -> JsonObject:
    # The type check first: observed objects are dicts, and an ABC check costs several times more.
    return value if type(value) is dict or isinstance(value, Mapping) else {}


def section(obj: JsonObject | None, name: str) -> JsonObject:
    """``obj[name]`` as a mapping (``{}`` when ``obj`` is None, or the field absent or not a mapping)."""
    return as_mapping((obj or {}).get(name))


def as_strings(value: object) -> dict[str, str]:
    """A labels or annotations map with every key and value as a string; ``{}`` for anything else."""
    return {str(k): str(v) for k, v in as_mapping(value).items()}


def as_list(value: object) -> list[Any]:
    return list(value) if isinstance(value, list) else []


def as_mappings(value: object) -> list[JsonObject]:
    """The items of a list that are mappings (a list of conditions, of containers)."""
    if not isinstance(value, list):
        return []
    return [item for item in value if isinstance(item, Mapping)]


def as_int(value: object) -> int:
    """An integer field; 0 for anything else, a string of digits and a bool included."""
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def parse_int(value: object) -> int:
    """An integer field, or a string that ``int`` parses; 0 for anything else (bools, floats, None)."""
    if isinstance(value, bool) or not isinstance(value, int | str):
        return 0
    try:
        return int(value)
    except ValueError:
        return 0


def int_or_none(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def str_or_none(value: object) -> str | None:
    return value if isinstance(value, str) else None
