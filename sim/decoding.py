"""How kube-apiserver decodes the JSON body of a built-in kind into its Go struct, over the shapes of
``sim.builtinschemas``.

``decode`` walks an object against its kind's struct the way Kubernetes' JSON decoder (sigs.k8s.io/json,
case-sensitive, strict) does:

- a field the struct does not declare is dropped and reported by its path (``spec.containers[0].imagee``:
  list indices in brackets, map keys after a dot), once, in document order, at most 100 of them (with
  the duplicate fields);
- a value of the wrong JSON type is skipped and the first such error is kept, Go's
  ``json: cannot unmarshal string into Go struct field Container.spec.containers.ports of type
  []v1.ContainerPort`` (the struct holding the field, then the JSON names down to it, without indices);
- a ``metav1.Time``, ``MicroTime``, ``Quantity`` or ``IntOrString`` that its own ``UnmarshalJSON`` refuses
  stops the decoding with that method's error (``parsing time ...``, ``quantities must match ...``);
- times are stored as Go writes them back: UTC, ``Z``, seconds (``Time``) or six fractional digits
  (``MicroTime``); quantities in their canonical form, as strings (``sim.quantities``). Nulls are kept
  (the verbs treat them as absent).

The verbs call ``decode_body`` (create, update, status update: a bad body is 400 ``... cannot be handled as
a Pod: ...``) and ``decode_patched`` (the object a patch produced: 422 on the ``patch`` field, as the patch
handler answers). Both honour ``fieldValidation``: ``Strict`` refuses unknown (and duplicate) fields,
``Warn`` (the default) answers them as ``Warning`` headers, ``Ignore`` drops them silently.

A key named twice in one JSON object is a ``duplicate field`` strict error, when the body was parsed with
``object_pairs`` (the server parses request bodies so).

Known limits: a strategic merge patch's type errors are worded as the JSON decoder words them, where
kube's unstructured converter words them its own way.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from sim import builtinschemas, errors, quantities, validation
from sim.builtinschemas import IntOrString, ListOf, MapOf, Node, Quantity, Scalar, Struct, Time
from sim.kinds import Kind

STRICT = "Strict"
IGNORE = "Ignore"

_MAX_STRICT_ERRORS = 100  # the strict decoder keeps no more
_RANGE = {32: (-(1 << 31), (1 << 31) - 1), 64: (-(1 << 63), (1 << 63) - 1)}


class DecodeError(ValueError):
    """A body the Go decoder refuses; ``str()`` is its error text."""


@dataclass
class _Walk:
    strict: list[str] = field(default_factory=list)  # unknown and duplicate fields, worded
    saved: str = ""  # the first type error: decoding goes on, the error is returned at the end

    def strict_error(self, kind: str, path: str) -> None:
        message = f"{kind} field " + json.dumps(path, ensure_ascii=False)
        if message not in self.strict and len(self.strict) < _MAX_STRICT_ERRORS:
            self.strict.append(message)


class _Path:
    """Where the walk is, as a linked list rendered only when an error or unknown field needs it.

    ``struct`` is the Go struct holding the innermost field (the ``Struct`` of Go's type errors)."""

    __slots__ = ("kind", "parent", "seg", "struct")

    def __init__(self, parent: _Path | None, seg: str | int, kind: str, struct: str) -> None:
        self.parent, self.seg, self.kind, self.struct = parent, seg, kind, struct

    def segments(self) -> list[_Path]:
        out: list[_Path] = []
        node: _Path | None = self
        while node is not None:
            out.append(node)
            node = node.parent
        return out[::-1]

    def strict(self) -> str:
        """The strict decoder's path: ``spec.containers[0].imagee``, map keys after a dot."""
        text = ""
        for node in self.segments():
            if node.kind == "i":
                text += f"[{node.seg}]"
            else:
                text = f"{text}.{node.seg}" if text else str(node.seg)
        return text

    def context(self) -> tuple[str, str]:
        """(struct, field stack) of Go's type errors: the struct fields' JSON names down to here."""
        return self.struct, ".".join(str(n.seg) for n in self.segments() if n.kind == "f")


def _json_kind(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def _type_error(value: str, path: _Path | None, go_type: str) -> str:
    if path is None:
        return f"json: cannot unmarshal {value} into Go value of type {go_type}"
    struct, stack = path.context()
    return f"json: cannot unmarshal {value} into Go struct field {struct}.{stack} of type {go_type}"


def _number_text(value: int | float) -> str:
    return repr(value) if isinstance(value, float) else str(value)


def _integer_error(value: Any, bits: int) -> str | None:
    """The ``Value`` of Go's type error for an integer field, or None when the value fits."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return _json_kind(value)
    low, high = _RANGE[bits]
    if isinstance(value, float) or not low <= value <= high:
        return "number " + _number_text(value)
    return None


def _time(node: Time, value: Any, path: _Path | None) -> Any:
    if not isinstance(value, str):
        # metav1.Time unmarshals a JSON string first; the type error gets the field's context.
        raise DecodeError(_type_error(_json_kind(value), path, "string"))
    try:
        if node.micro:
            return validation.format_micro_time(validation.parse_micro_time(value))
        return validation.format_time(validation.parse_time(value))
    except validation.TimeParseError as exc:
        raise DecodeError(str(exc)) from None


def _save(walk: _Walk, value: Any, path: _Path | None, go_type: str, bad: str = "") -> None:
    if not walk.saved:
        walk.saved = _type_error(bad or _json_kind(value), path, go_type)


def _scalar(node: Scalar, value: Any, walk: _Walk, path: _Path | None) -> Any:
    json_type = node.json
    if json_type == "string":
        if type(value) is not str:
            _save(walk, value, path, node.go_type)
    elif json_type == "integer":
        bad = _integer_error(value, node.bits)
        if bad is not None:
            _save(walk, value, path, node.go_type, bad)
    elif json_type == "boolean":
        if type(value) is not bool:
            _save(walk, value, path, node.go_type)
    elif isinstance(value, bool) or not isinstance(value, int | float):
        _save(walk, value, path, node.go_type)
    return value


def _quantity(value: Any) -> str:
    if isinstance(value, str) or (isinstance(value, int | float) and not isinstance(value, bool)):
        text = value if isinstance(value, str) else _number_text(value)
    else:
        text = json.dumps(value)
    try:
        return quantities.parse(text)  # written back canonical, as a string
    except quantities.QuantityError as exc:
        raise DecodeError(str(exc)) from None


def _int_or_string(value: Any, path: _Path | None) -> Any:
    if not isinstance(value, str):
        bad = _integer_error(value, 32)
        if bad is not None:
            raise DecodeError(_type_error(bad, path, "int32"))
    return value


def _list(node: ListOf, value: Any, walk: _Walk, path: _Path | None) -> Any:
    if type(value) is not list:
        _save(walk, value, path, node.go_type)
        return value
    struct = path.struct if path is not None else ""
    item = node.item
    changed = False
    items = []
    for i, v in enumerate(value):
        decoded = _value(item, v, walk, _Path(path, i, "i", struct))
        changed = changed or decoded is not v
        items.append(decoded)
    return items if changed else value


def _map(node: MapOf, value: Any, walk: _Walk, path: _Path | None) -> Any:
    if not isinstance(value, dict):
        _save(walk, value, path, node.go_type)
        return value
    struct = path.struct if path is not None else ""
    entry = node.value
    changed = _duplicates(value, walk, path, struct)
    entries = {}
    for k, v in value.items():
        decoded = _value(entry, v, walk, _Path(path, k, "k", struct))
        changed = changed or decoded is not v
        entries[k] = decoded
    return entries if changed else value


def _value(node: Node, value: Any, walk: _Walk, path: _Path | None) -> Any:
    if value is None:
        return value
    kind = type(node)
    if kind is Scalar:
        return _scalar(node, value, walk, path)  # type: ignore[arg-type]
    if kind is Struct:
        if not isinstance(value, dict):
            _save(walk, value, path, node.go_type)
            return value
        return _struct(node, value, walk, path)  # type: ignore[arg-type]
    if kind is ListOf:
        return _list(node, value, walk, path)  # type: ignore[arg-type]
    if kind is MapOf:
        return _map(node, value, walk, path)  # type: ignore[arg-type]
    if kind is Time:
        return _time(node, value, path)  # type: ignore[arg-type]
    if kind is Quantity:
        return _quantity(value)
    if kind is IntOrString:
        return _int_or_string(value, path)
    return value  # AnyJSON


def _duplicates(value: dict[str, Any], walk: _Walk, path: _Path | None, struct: str) -> bool:
    """Report the keys a JSON object named twice (``object_pairs``); whether there were any."""
    duplicates = getattr(value, "duplicates", ())
    for key in duplicates:
        walk.strict_error("duplicate", _Path(path, key, "f", struct).strict())
    return bool(duplicates)


def _struct(node: Struct, value: dict[str, Any], walk: _Walk, path: _Path | None) -> dict[str, Any]:
    out: dict[str, Any] = {}
    changed = _duplicates(value, walk, path, node.name)
    fields = node.fields
    for key, child in value.items():
        child_node = fields.get(key)
        child_path = _Path(path, key, "f", node.name)
        if child_node is None:
            walk.strict_error("unknown", child_path.strict())
            changed = True
            continue
        decoded = _value(child_node, child, walk, child_path)
        changed = changed or decoded is not child
        out[key] = decoded
    return out if changed else value


class DuplicateKeys(dict[str, Any]):
    """A JSON object that named some keys more than once; the last value is kept, as Go keeps it."""

    duplicates: tuple[str, ...] = ()


def object_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A ``json.loads`` object hook that remembers repeated keys for the strict decoder."""
    out = dict(pairs)
    if len(out) == len(pairs):
        return out
    seen: set[str] = set()
    repeated: list[str] = []
    for key, _ in pairs:
        if key in seen and key not in repeated:
            repeated.append(key)
        seen.add(key)
    marked = DuplicateKeys(out)
    marked.duplicates = tuple(repeated)
    return marked


def decode(root: Struct, obj: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """The object as stored and the strict decoder's errors (``unknown field "spec.x"``, ``duplicate field
    "metadata.name"``); ``DecodeError`` when Go would not decode it."""
    walk = _Walk()
    out = _struct(root, obj, walk, None)
    if walk.saved:
        raise DecodeError(walk.saved)
    return out, walk.strict


def _strict_text(strict: list[str]) -> str:
    return "strict decoding error: " + ", ".join(strict)


def decode_body(
    kind: Kind, body: dict[str, Any], *, field_validation: str
) -> tuple[dict[str, Any], list[str]]:
    """A create or update body of a built-in kind: (object, warnings), or 400 as the handlers answer."""
    root = None if kind.is_custom else builtinschemas.schema(kind.api_version, kind.kind)
    if root is None:
        return body, []
    prefix = f'{kind.kind} in version "{kind.version}" cannot be handled as a {kind.kind}: '
    try:
        out, unknown = decode(root, body)
    except DecodeError as exc:
        raise errors.bad_request(prefix + str(exc)) from None
    if unknown and field_validation == STRICT:
        raise errors.bad_request(prefix + _strict_text(unknown))
    return out, [] if field_validation == IGNORE else unknown


def decode_patched(
    kind: Kind, patched: dict[str, Any], *, field_validation: str, strategic_patch: Any = None
) -> tuple[dict[str, Any], list[str]]:
    """The object a patch produced: (object, warnings), or 422 on the ``patch`` field as the patch
    handler answers (its value is the patched JSON, or a strategic merge patch as Go prints it)."""
    root = None if kind.is_custom else builtinschemas.schema(kind.api_version, kind.kind)
    if root is None:
        return patched, []
    try:
        out, unknown = decode(root, patched)
    except DecodeError as exc:
        raise _patch_invalid(patched, strategic_patch, str(exc)) from None
    if unknown and field_validation == STRICT:
        raise _patch_invalid(patched, strategic_patch, _strict_text(unknown))
    return out, [] if field_validation == IGNORE else unknown


def _patch_invalid(patched: dict[str, Any], strategic_patch: Any, message: str) -> errors.ApiError:
    if strategic_patch is not None:
        value = go_print(strategic_patch)
    else:
        value = json.dumps(patched, separators=(",", ":"), sort_keys=True)
    cause = errors.invalid_value("patch", value, message)
    return errors.ApiError(422, "Invalid", f'"" is invalid: {cause}', {"causes": [cause.cause()]})


def go_print(value: Any) -> str:
    """A decoded JSON value as Go's ``fmt.Sprintf("%+v", ...)`` prints it (maps sorted by key)."""
    if value is None:
        return "<nil>"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return "map[" + " ".join(f"{k}:{go_print(value[k])}" for k in sorted(value)) + "]"
    if isinstance(value, list):
        return "[" + " ".join(go_print(v) for v in value) + "]"
    if isinstance(value, float):
        return f"{value:g}" if value != int(value) or abs(value) >= 1e21 else str(int(value))
    return str(value)


__all__ = [
    "IGNORE",
    "STRICT",
    "DecodeError",
    "DuplicateKeys",
    "decode",
    "decode_body",
    "decode_patched",
    "go_print",
    "object_pairs",
]
