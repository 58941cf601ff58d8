"""A CRD version's structural ``openAPIV3Schema`` compiled into a tree of ``Node`` s (patterns translated
from Go RE2 and compiled, defaults, list-type keys, the string format kube checks), and the field paths
(``Path``, ``render``) that pruning and validation name fields with. ``sim.schemas`` prunes and defaults
along the tree, ``sim.schemachecks`` validates along it.

Known limits: patterns are Go RE2 translated to Python ``re`` (``$`` and ``\\z`` mean end of text, classes
are ASCII) and a pattern Python cannot compile is not checked.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any


class MapKey(str):
    """A path segment that is a key of an ``additionalProperties`` map."""

    __slots__ = ()


class Path:
    """A field path as a linked list, rendered only when an error or pruned field needs it."""

    __slots__ = ("parent", "seg")

    def __init__(self, parent: Path | None, seg: str | int) -> None:
        self.parent = parent
        self.seg = seg


def render(path: Path | None, *, brackets: bool = False) -> str:
    """``spec.containers[0].name``; map keys as ``.key`` (schema paths) or ``[key]`` (``field.Path``)."""
    segs: list[str | int] = []
    while path is not None:
        segs.append(path.seg)
        path = path.parent
    out = ""
    for seg in reversed(segs):
        if isinstance(seg, int) or (brackets and isinstance(seg, MapKey)):
            out += f"[{seg}]"
        else:
            out = f"{out}.{seg}" if out else seg
    return out


# ---------------------------------------------------------------------------------------------------------
# Compiled schema nodes

# The formats of kube-openapi's strfmt registry; kube strips any other format before validating.
_KNOWN_STRING_FORMATS = frozenset(
    f.replace("-", "")
    for f in (
        *("bsonobjectid", "uri", "email", "hostname", "ipv4", "ipv6", "cidr", "mac", "byte", "password"),
        *("uuid", "uuid3", "uuid4", "uuid5", "isbn", "isbn10", "isbn13", "creditcard", "ssn", "hexcolor"),
        *("rgbcolor", "date", "duration", "datetime", "quantity", "k8s-short-name", "k8s-long-name"),
    )
)


def _go_pattern(pattern: str) -> str:
    """Translate the parts of Go RE2 syntax whose meaning differs in Python's ``re``."""
    multiline = re.search(r"\(\?[a-zA-Z]*m", pattern) is not None
    out: list[str] = []
    i = 0
    in_class = False
    while i < len(pattern):
        c = pattern[i]
        if c == "\\" and i + 1 < len(pattern):
            nxt = pattern[i + 1]
            out.append(r"\Z" if nxt == "z" and not in_class else pattern[i : i + 2])
            i += 2
            continue
        if in_class:
            if c == "]":
                in_class = False
            out.append(c)
        elif c == "[":
            in_class = True
            out.append(c)
            if pattern[i + 1 : i + 2] == "^":
                out.append("^")
                i += 1
            if pattern[i + 1 : i + 2] == "]":  # a leading ']' is a literal in RE2
                out.append("\\]")
                i += 1
        elif c == "$" and not multiline:
            out.append(r"\Z")  # RE2's '$' never matches before a trailing newline
        else:
            out.append(c)
        i += 1
    return "".join(out)


def _compile_pattern(pattern: str) -> re.Pattern[str] | None:
    try:
        return re.compile(_go_pattern(pattern), re.ASCII)
    except re.error:
        return None


def _bool(schema: Mapping[str, Any], key: str) -> bool:
    return schema.get(key) is True


class Node:
    """One compiled schema node."""

    __slots__ = (
        "additional",
        "all_of",
        "any_of",
        "default",
        "embedded",
        "enum",
        "exclusive_maximum",
        "exclusive_minimum",
        "format",
        "has_additional",
        "has_default",
        "int_or_string",
        "items",
        "list_map_keys",
        "list_type",
        "max_items",
        "max_length",
        "max_properties",
        "maximum",
        "min_items",
        "min_length",
        "min_properties",
        "minimum",
        "multiple_of",
        "not_",
        "nullable",
        "one_of",
        "pattern",
        "pattern_text",
        "preserve_unknown",
        "properties",
        "required",
        "string_format",
        "types",
    )

    def __init__(self, schema: Mapping[str, Any]) -> None:
        type_ = schema.get("type")
        self.int_or_string = _bool(schema, "x-kubernetes-int-or-string")
        types: tuple[str, ...] = (type_,) if isinstance(type_, str) and type_ else ()
        if self.int_or_string:
            types = ("integer", "string")
        self.types = types
        self.nullable = _bool(schema, "nullable")
        self.preserve_unknown = _bool(schema, "x-kubernetes-preserve-unknown-fields")
        self.embedded = _bool(schema, "x-kubernetes-embedded-resource")

        props = schema.get("properties")
        self.properties: dict[str, Node] = (
            {k: Node(v) for k, v in props.items()} if isinstance(props, Mapping) else {}
        )
        additional = schema.get("additionalProperties")
        # ``additionalProperties: true`` keeps every key but prunes inside the values like a missing schema.
        self.has_additional = isinstance(additional, Mapping) or additional is True
        self.additional = Node(additional) if isinstance(additional, Mapping) else None
        items = schema.get("items")
        self.items = Node(items) if isinstance(items, Mapping) else None
        self.required: tuple[str, ...] = tuple(schema.get("required") or ())

        # ``default: null`` is no default at all.
        self.default = schema.get("default")
        self.has_default = self.default is not None
        enum = schema.get("enum")
        self.enum: list[Any] | None = list(enum) if isinstance(enum, list) else None

        pattern = schema.get("pattern")
        self.pattern_text = pattern if isinstance(pattern, str) else ""
        self.pattern = _compile_pattern(self.pattern_text) if self.pattern_text else None
        self.min_length: int | None = schema.get("minLength")
        self.max_length: int | None = schema.get("maxLength")
        self.min_items: int | None = schema.get("minItems")
        self.max_items: int | None = schema.get("maxItems")
        self.min_properties: int | None = schema.get("minProperties")
        self.max_properties: int | None = schema.get("maxProperties")
        self.minimum: int | float | None = schema.get("minimum")
        self.maximum: int | float | None = schema.get("maximum")
        self.exclusive_minimum = _bool(schema, "exclusiveMinimum")
        self.exclusive_maximum = _bool(schema, "exclusiveMaximum")
        self.multiple_of: int | float | None = schema.get("multipleOf")

        fmt = schema.get("format")
        self.format = fmt if isinstance(fmt, str) else ""
        # kube strips formats it does not know (and any format on non-string types) before validating.
        normalized = self.format.replace("-", "")
        is_string_type = not types or types == ("string",)
        self.string_format = normalized if is_string_type and normalized in _KNOWN_STRING_FORMATS else ""

        self.any_of = [Node(s) for s in schema.get("anyOf") or ()]
        self.all_of = [Node(s) for s in schema.get("allOf") or ()]
        self.one_of = [Node(s) for s in schema.get("oneOf") or ()]
        not_ = schema.get("not")
        self.not_ = Node(not_) if isinstance(not_, Mapping) else None

        list_type = schema.get("x-kubernetes-list-type")
        self.list_type = list_type if isinstance(list_type, str) else ""
        self.list_map_keys: tuple[str, ...] = tuple(schema.get("x-kubernetes-list-map-keys") or ())

    def child(self, key: str) -> Node | None:
        """The schema of a map key: its property, else ``additionalProperties``."""
        prop = self.properties.get(key)
        if prop is not None:
            return prop
        return self.additional
