"""What kube-apiextensions-apiserver does with the structural ``openAPIV3Schema`` of a CRD version.

``StructuralSchema`` compiles the schema once (patterns, defaults, list-type keys) and offers the steps a
custom-resource write goes through, in the order the API server runs them (apiserver-semantics.md S62-S64):

``prune``     decode-time pruning of fields the schema does not know (``pruning/algorithm.go``), plus the
              ObjectMeta coercion of nested ``x-kubernetes-embedded-resource`` objects; returns the unknown
              field paths, sorted, the way the ``unknown field "..."`` warnings name them.
``default``   drop ``null`` s on non-nullable fields without a default, then apply ``default`` s
              (``defaulting/prunenulls.go`` and ``defaulting/algorithm.go``); also used on reads.
``validate``  the kube-openapi schema validator, then embedded-resource checks, then
              ``x-kubernetes-list-type`` set/map uniqueness, with kube's field paths and messages.
``process``   all three.

Messages copy kube's wording, including its quirks: schema errors carry kube-openapi's detail
(``spec.replicas in body must be of type integer: "string"``, with the JSON type name as the bad value), a
failed ``anyOf`` adds an error at field ``<nil>``, list-type errors name map keys as ``labels[key]`` while
schema errors name them ``labels.key``, and a ``type: string`` field with a known ``format`` accepts arrays.

Values are JSON as Python decodes it. Python ``float`` s are numbers, never integers (kube would accept
``1.0`` for an integer field); ints outside int64 count as numbers, as they do when kube decodes them.

Results share untouched subtrees with their input (nothing is deep-copied unless it changes): treat both as
immutable, or copy before mutating.

Known limits: no CEL (``x-kubernetes-validations``) and no validation ratcheting on update; nested
embedded ObjectMeta is coerced (unknown and malformed fields dropped) but not validated; the string formats
checked are ``date-time``, ``date``, ``byte``, ``uuid``/``uuid3``/``uuid4``/``uuid5``, ``ipv4`` and
``ipv6`` (the others, and ``int32``/``int64``, which kube does not range-check either, are accepted);
patterns are Go RE2 translated to Python ``re`` (``$`` and ``\\z`` mean end of text, classes are ASCII) and a
pattern Python cannot compile is not checked; the bad value of a duplicate list-map key renders as JSON
where Go prints ``map[string]interface {}{...}``.
"""

from __future__ import annotations

import base64
import binascii
import datetime
import decimal
import ipaddress
import json
import math
import re
from collections.abc import Callable, Mapping
from typing import Any

from sim import errors

_INT64_MIN = -(2**63)
_INT64_MAX = 2**63 - 1

# Top-level (and embedded-resource) keys the pruner leaves to the ObjectMeta / TypeMeta handling.
_META_FIELDS = frozenset({"apiVersion", "kind", "metadata"})

# metav1.ObjectMeta's JSON fields and the shape each must have; anything else in an embedded resource's
# metadata is dropped by the coercion, as are fields of the wrong shape (dropInvalidFields).
_OBJECT_META_FIELDS: dict[str, str] = {
    "name": "str",
    "generateName": "str",
    "namespace": "str",
    "selfLink": "str",
    "uid": "str",
    "resourceVersion": "str",
    "generation": "int",
    "creationTimestamp": "str",
    "deletionTimestamp": "str",
    "deletionGracePeriodSeconds": "int",
    "labels": "strmap",
    "annotations": "strmap",
    "ownerReferences": "list",
    "finalizers": "strlist",
    "managedFields": "list",
}


class _MapKey(str):
    """A path segment that is a key of an ``additionalProperties`` map."""

    __slots__ = ()


class _Path:
    """A field path as a linked list, rendered only when an error or pruned field needs it."""

    __slots__ = ("parent", "seg")

    def __init__(self, parent: _Path | None, seg: str | int) -> None:
        self.parent = parent
        self.seg = seg


def _render(path: _Path | None, *, brackets: bool = False) -> str:
    """``spec.containers[0].name``; map keys as ``.key`` (schema paths) or ``[key]`` (``field.Path``)."""
    segs: list[str | int] = []
    while path is not None:
        segs.append(path.seg)
        path = path.parent
    out = ""
    for seg in reversed(segs):
        if isinstance(seg, int) or (brackets and isinstance(seg, _MapKey)):
            out += f"[{seg}]"
        else:
            out = f"{out}.{seg}" if out else seg
    return out


# ---------------------------------------------------------------------------------------------------------
# Compiled schema nodes


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


class _Node:
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
        self.properties: dict[str, _Node] = (
            {k: _Node(v) for k, v in props.items()} if isinstance(props, Mapping) else {}
        )
        additional = schema.get("additionalProperties")
        # ``additionalProperties: true`` keeps every key but prunes inside the values like a missing schema.
        self.has_additional = isinstance(additional, Mapping) or additional is True
        self.additional = _Node(additional) if isinstance(additional, Mapping) else None
        items = schema.get("items")
        self.items = _Node(items) if isinstance(items, Mapping) else None
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

        self.any_of = [_Node(s) for s in schema.get("anyOf") or ()]
        self.all_of = [_Node(s) for s in schema.get("allOf") or ()]
        self.one_of = [_Node(s) for s in schema.get("oneOf") or ()]
        not_ = schema.get("not")
        self.not_ = _Node(not_) if isinstance(not_, Mapping) else None

        list_type = schema.get("x-kubernetes-list-type")
        self.list_type = list_type if isinstance(list_type, str) else ""
        self.list_map_keys: tuple[str, ...] = tuple(schema.get("x-kubernetes-list-map-keys") or ())

    def child(self, key: str) -> _Node | None:
        """The schema of a map key: its property, else ``additionalProperties``."""
        prop = self.properties.get(key)
        if prop is not None:
            return prop
        return self.additional


# ---------------------------------------------------------------------------------------------------------
# Formats (kube-openapi's strfmt registry, the parts worth checking)

_RX_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}\Z", re.ASCII)
_RX_TIME = re.compile(r"([0-9]{2}):([0-9]{2}):([0-9]{2})(.[0-9]+)?(z|([+-][0-9]{2}:[0-9]{2}))\Z", re.ASCII)
_RX_UUID = {
    "uuid": re.compile(r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}\Z"),
    "uuid3": re.compile(r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?3[0-9a-f]{3}-?[0-9a-f]{4}-?[0-9a-f]{12}\Z"),
    "uuid4": re.compile(r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?4[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}\Z"),
    "uuid5": re.compile(r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?5[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}\Z"),
}

_KNOWN_STRING_FORMATS = frozenset(
    f.replace("-", "")
    for f in (
        *("bsonobjectid", "uri", "email", "hostname", "ipv4", "ipv6", "cidr", "mac", "byte", "password"),
        *("uuid", "uuid3", "uuid4", "uuid5", "isbn", "isbn10", "isbn13", "creditcard", "ssn", "hexcolor"),
        *("rgbcolor", "date", "duration", "datetime", "quantity", "k8s-short-name", "k8s-long-name"),
    )
)


def _is_date(text: str) -> bool:
    if not _RX_DATE.match(text):
        return False
    year = int(text[:4]) or 2000  # Go accepts year 0, a leap year like 2000
    try:
        datetime.date(year, int(text[5:7]), int(text[8:10]))
    except ValueError:
        return False
    return True


def _is_date_time(text: str) -> bool:
    """strfmt.IsDateTime: RFC 3339 with a mandatory offset, any fraction, case-insensitive T and Z."""
    if len(text) < 4:
        return False
    parts = text.lower().split("t")
    if len(parts) < 2 or not _is_date(parts[0]):
        return False
    m = _RX_TIME.match(parts[1])
    return m is not None and m[1] <= "23" and m[2] <= "59" and m[3] <= "59"


def _is_byte(text: str) -> bool:
    try:
        base64.b64decode(text.replace("\r", "").replace("\n", ""), validate=True)
    except (binascii.Error, ValueError):
        return False
    return True


def _is_ip(text: str, sep: str) -> bool:
    if sep not in text or "%" in text:
        return False
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True


def _format_ok(fmt: str, text: str) -> bool:
    if fmt == "datetime":
        return _is_date_time(text)
    if fmt == "date":
        return _is_date(text)
    if fmt == "byte":
        return _is_byte(text)
    if fmt in _RX_UUID:
        return _RX_UUID[fmt].match(text) is not None
    if fmt == "ipv4":
        return _is_ip(text, ".")
    if fmt == "ipv6":
        return _is_ip(text, ":")
    return True


# ---------------------------------------------------------------------------------------------------------
# Values


_JSON_TYPES: dict[type, str] = {
    str: "string",
    bool: "boolean",
    dict: "object",
    list: "array",
    float: "number",
    type(None): "null",
}


def _json_type(value: Any) -> str:
    """The JSON type kube's decoder would give the value (ints beyond int64 decode as floats)."""
    name = _JSON_TYPES.get(type(value))
    if name is not None:
        return name
    if isinstance(value, int) and not isinstance(value, bool):
        return "integer" if _INT64_MIN <= value <= _INT64_MAX else "number"
    for kind, name in _JSON_TYPES.items():
        if isinstance(value, kind):
            return name
    return type(value).__name__


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _copy(value: Any) -> Any:
    """Deep copy of a JSON value (defaults are copied into every object they fill)."""
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy(v) for v in value]
    return value


def _go_float(value: float) -> str:
    """Go's ``%v`` of a float64 (shortest digits; exponent form below 1e-4 and from 1e6)."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    if value == 0:
        return "-0" if math.copysign(1.0, value) < 0 else "0"
    sign, digit_tuple, exponent = decimal.Decimal(repr(value)).normalize().as_tuple()
    assert isinstance(exponent, int)
    digits = "".join(map(str, digit_tuple))
    point = len(digits) + exponent  # where the decimal point goes in the digit string
    exp = point - 1
    prefix = "-" if sign else ""
    if exp < -4 or exp >= 6:
        mantissa = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
        return f"{prefix}{mantissa}e{'-' if exp < 0 else '+'}{abs(exp):02d}"
    if point <= 0:
        return f"{prefix}0.{'0' * -point}{digits}"
    if point >= len(digits):
        return prefix + digits + "0" * (point - len(digits))
    return f"{prefix}{digits[:point]}.{digits[point:]}"


def _is_json_integer(value: float) -> bool:
    """swag.IsFloat64AJSONInteger: integral up to a relative error of 1e-9."""
    if not math.isfinite(value):
        return False
    truncated = float(math.trunc(value))
    if value == 0 or truncated == 0:
        return value == truncated
    return abs(value - truncated) / (abs(value) + abs(truncated)) < 1e-9


def _enum_matches(value: Any, allowed: Any) -> bool:
    """go-openapi's enum check: convert the value to the enum value's Go type, then compare."""
    if value is None or allowed is None:
        return False
    if isinstance(allowed, bool) or isinstance(value, bool):
        return type(allowed) is type(value) and allowed == value
    if _is_number(allowed):
        if not _is_number(value) or (isinstance(value, float) and not math.isfinite(value)):
            return False
        return bool(int(value) == allowed if isinstance(allowed, int) else float(value) == allowed)
    if isinstance(allowed, str):
        return isinstance(value, str) and value == allowed
    return _canonical(value) == _canonical(allowed)


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def _quote(text: str) -> str:
    """Go's ``%q`` (printable non-ASCII characters stay as they are)."""
    return json.dumps(text, ensure_ascii=False)


def _enum_text(value: Any) -> str:
    return value if isinstance(value, str) else _canonical(value)


def _scalar_key(value: Any) -> tuple[str, Any]:
    """Go interface equality: 1, 1.0 and true are three different values."""
    return (_json_type(value) if not isinstance(value, float) else "float", value)


# ---------------------------------------------------------------------------------------------------------
# Errors


class _Errors:
    """Errors of the three validation passes, kept apart so they come out in kube's order."""

    __slots__ = ("embedded", "list_type", "schema")

    def __init__(self) -> None:
        self.schema: list[errors.FieldError] = []
        self.embedded: list[errors.FieldError] = []
        self.list_type: list[errors.FieldError] = []


class _Validator:
    """One ``validate`` call: the root path prefix and where errors go."""

    __slots__ = ("root",)

    def __init__(self, root: str) -> None:
        self.root = root

    def field(self, name: str) -> str:
        """``fldPath.Child(name)``; a nil root path prints as ``<nil>``."""
        if self.root and name:
            return f"{self.root}.{name}"
        return self.root or name or "<nil>"

    def run(self, x: Any, node: _Node, path: _Path | None, out: _Errors, *, top: bool) -> None:
        """The kube-openapi validators in their order: type, anyOf etc., string, format, number, array, enum,
        object. ``top`` is false inside anyOf/allOf/oneOf/not, where only schema errors count."""
        errs = out.schema
        if x is None:
            if node.types and not node.nullable:
                errs.append(self._type_error(path, node, "null"))
            if node.enum is not None:
                errs.append(errors.not_supported(self._field(path), None, tuple(map(_enum_text, node.enum))))
            return

        actual = _json_type(x)
        if node.types:
            ok = actual in node.types or (actual == "integer" and "number" in node.types)
            # kube-openapi skips the type check of a formatted string field for strings and arrays.
            if not ok and not (node.string_format and actual in ("string", "array")):
                errs.append(self._type_error(path, node, actual))

        if node.any_of or node.all_of or node.one_of or node.not_ is not None:
            self._combinators(x, node, path, errs)

        if isinstance(x, str):
            self._string(x, node, path, errs)
        elif _is_number(x):
            self._number(x, node, path, errs)
        elif isinstance(x, list):
            self._array(x, node, path, out, top=top)

        if node.enum is not None and not any(_enum_matches(x, e) for e in node.enum):
            errs.append(errors.not_supported(self._field(path), x, tuple(map(_enum_text, node.enum))))

        if isinstance(x, dict):
            self._object(x, node, path, out, top=top)

    def _field(self, path: _Path | None) -> str:
        return self.field(_render(path))

    def _invalid(self, path: _Path | None, value: Any, message: str) -> errors.FieldError:
        """field.Invalid with kube-openapi's detail, which starts with the schema path."""
        name = _render(path)
        return errors.invalid_value(self.field(name), value, f"{name} in body {message}")

    def _type_error(self, path: _Path | None, node: _Node, actual: str) -> errors.FieldError:
        name = _render(path)
        detail = f"{name} in body must be of type {','.join(node.types)}: {_quote(actual)}"
        return errors.type_invalid(self.field(name), actual, detail)

    def _branch(self, x: Any, node: _Node, path: _Path | None) -> list[errors.FieldError]:
        sub = _Errors()
        self.run(x, node, path, sub, top=False)
        return sub.schema

    def _combinators(self, x: Any, node: _Node, path: _Path | None, errs: list[errors.FieldError]) -> None:
        """allOf, oneOf, anyOf, not: their own messages are plain errors, reported at the root path."""

        def composite(message: str) -> None:
            errs.append(errors.invalid_value(self.field(""), "", f"{_quote(_render(path))} {message}"))

        if node.all_of:
            failures = [e for branch in node.all_of for e in self._branch(x, branch, path)]
            if failures:
                composite("must validate all the schemas (allOf)")
                errs.extend(failures)
        if node.one_of:
            results = [self._branch(x, branch, path) for branch in node.one_of]
            passed = sum(1 for r in results if not r)
            if passed == 0:
                composite("must validate one and only one schema (oneOf). Found none valid")
                fewest: list[errors.FieldError] = min(results, key=len)
                errs.extend(fewest)
            elif passed > 1:
                composite(f"must validate one and only one schema (oneOf). Found {passed} valid alternatives")
        if node.any_of:
            best: list[errors.FieldError] | None = None
            for branch in node.any_of:
                result = self._branch(x, branch, path)
                if not result:
                    best = None
                    break
                if best is None or len(result) < len(best):
                    best = result
            if best is not None:
                composite("must validate at least one schema (anyOf)")
                errs.extend(best)
        if node.not_ is not None and not self._branch(x, node.not_, path):
            composite("must not validate the schema (not)")

    def _string(self, x: str, node: _Node, path: _Path | None, errs: list[errors.FieldError]) -> None:
        if node.max_length is not None and len(x) > node.max_length:
            detail = f"may not be more than {node.max_length} {'byte' if node.max_length == 1 else 'bytes'}"
            errs.append(errors.FieldError("FieldValueTooLong", self._field(path), detail, x))
        if node.min_length is not None and len(x) < node.min_length:
            errs.append(self._invalid(path, x, f"should be at least {node.min_length} chars long"))
        if node.pattern is not None and node.pattern.search(x) is None:
            errs.append(self._invalid(path, x, f"should match '{node.pattern_text}'"))
        if node.string_format and not _format_ok(node.string_format, x):
            name = _render(path)
            detail = f"{name} in body must be of type {node.format}: {_quote(x)}"
            errs.append(errors.type_invalid(self.field(name), x, detail))

    def _number(self, x: int | float, node: _Node, path: _Path | None, errs: list[errors.FieldError]) -> None:
        """Integer data is compared with the bound truncated to an integer, as kube-openapi does."""
        factor = node.multiple_of
        if factor is not None and factor > 0:
            if isinstance(x, int) and float(factor).is_integer():
                ok = x % int(factor) == 0
                shown = str(int(factor))
            else:
                ok = _is_json_integer(x * (1 / factor) if factor < 1 else x / factor)
                shown = _go_float(float(factor))
            if not ok:
                errs.append(self._invalid(path, x, f"should be a multiple of {shown}"))
        for bound, exclusive, upper in (
            (node.maximum, node.exclusive_maximum, True),
            (node.minimum, node.exclusive_minimum, False),
        ):
            if bound is None:
                continue
            limit: int | float = math.trunc(bound) if isinstance(x, int) else float(bound)
            beyond = (
                (x >= limit if exclusive else x > limit)
                if upper
                else (x <= limit if exclusive else x < limit)
            )
            if beyond:
                than = ("less than" if upper else "greater than") + ("" if exclusive else " or equal to")
                shown = str(limit) if isinstance(limit, int) else _go_float(limit)
                errs.append(self._invalid(path, x, f"should be {than} {shown}"))

    def _array(self, x: list[Any], node: _Node, path: _Path | None, out: _Errors, *, top: bool) -> None:
        if node.items is not None:
            for i, item in enumerate(x):
                self.run(item, node.items, _Path(path, i), out, top=top)
        errs = out.schema
        if node.min_items is not None and len(x) < node.min_items:
            errs.append(self._invalid(path, len(x), f"should have at least {node.min_items} items"))
        if node.max_items is not None and len(x) > node.max_items:
            detail = f"must have at most {node.max_items} items"
            errs.append(errors.FieldError("FieldValueTooMany", self._field(path), detail, len(x)))
        if top and node.list_type in ("set", "map"):
            out.list_type.extend(self._list_type(x, node, path))

    def _object(self, x: dict[str, Any], node: _Node, path: _Path | None, out: _Errors, *, top: bool) -> None:
        errs = out.schema
        if node.min_properties is not None and len(x) < node.min_properties:
            errs.append(self._invalid(path, len(x), f"should have at least {node.min_properties} properties"))
            return
        if node.max_properties is not None and len(x) > node.max_properties:
            detail = f"must have at most {node.max_properties} items"
            errs.append(errors.FieldError("FieldValueTooMany", self._field(path), detail, len(x)))
            return
        for key, value in x.items():
            prop = node.properties.get(key)
            if prop is not None:
                self.run(value, prop, _Path(path, key), out, top=top)
            elif node.additional is not None:
                self.run(value, node.additional, _Path(path, _MapKey(key)), out, top=top)
        for key in node.required:
            if key not in x:
                errs.append(errors.required(self._field(_Path(path, key))))
        if top and node.embedded and path is not None:
            out.embedded.extend(self._embedded(x, path))

    def _embedded(self, x: dict[str, Any], path: _Path) -> list[errors.FieldError]:
        """objectmeta.Validate of a nested embedded resource (TypeMeta only; ObjectMeta is not checked)."""
        base = _render(path, brackets=True)
        found: list[errors.FieldError] = []
        for key in ("apiVersion", "kind"):
            where = self.field(f"{base}.{key}")
            if key not in x:
                found.append(errors.required(where, "must not be empty"))
                continue
            value = x[key]
            if not isinstance(value, str):
                found.append(errors.invalid_value(where, value, "must be a string"))
            elif not value:
                found.append(errors.invalid_value(where, value, "must not be empty"))
            elif key == "apiVersion" and value.count("/") > 1:
                found.append(errors.invalid_value(where, value, f"unexpected GroupVersion string: {value}"))
        return found

    def _list_type(self, x: list[Any], node: _Node, path: _Path | None) -> list[errors.FieldError]:
        """listtype.ValidateListSetsAndMaps: the second appearance of a value (set) or key (map)."""

        def at(i: int) -> str:
            return self.field(f"{_render(path, brackets=True)}[{i}]")

        if node.list_type == "set":
            return [errors.duplicate(at(i), x[i]) for i in _non_unique(x)] if len(x) > 1 else []
        for i, item in enumerate(x):
            if item is not None and not isinstance(item, dict):
                return [errors.invalid_value(at(i), item, "must be an object for an array of list-type map")]
        if len(x) < 2:
            return []
        keys: list[Any] = []
        for item in x:
            if item is None:
                keys.append({})
            else:
                keys.append({k: item[k] for k in node.list_map_keys if k in item})
        if len(node.list_map_keys) == 1:
            (key_field,) = node.list_map_keys
            _missing = object()
            singles = [k.get(key_field, _missing) for k in keys]
            return [errors.duplicate(at(i), keys[i]) for i in _non_unique(singles, _missing)]
        return [errors.duplicate(at(i), keys[i]) for i in _non_unique(keys)]


def _non_unique(values: list[Any], missing: object = None) -> list[int]:
    """Indices of the second appearance of each repeated value (Go equality, compounds by their JSON)."""
    seen: dict[Any, int] = {}
    repeated: list[int] = []
    for i, value in enumerate(values):
        if value is missing and missing is not None:
            key: Any = ("<missing>",)
        elif isinstance(value, dict | list):
            key = ("<compound>", _canonical(value))
        else:
            key = _scalar_key(value)
        times = seen.get(key, 0)
        seen[key] = times + 1
        if times == 1:
            repeated.append(i)
    return repeated


# ---------------------------------------------------------------------------------------------------------
# Pruning and defaulting


def _coerce_object_meta(meta: dict[str, Any], path: _Path, pruned: list[str]) -> dict[str, Any]:
    """ObjectMeta coercion of an embedded resource: keep ObjectMeta's fields of the right shape,
    drop the rest (reporting unknown ones), omit empty values and a null creationTimestamp."""
    out: dict[str, Any] = {}
    for key, value in meta.items():
        shape = _OBJECT_META_FIELDS.get(key)
        if shape is None:
            pruned.append(_render(_Path(path, key)))
            continue
        if value is None or value == "" or value == 0 or value == {} or value == []:
            continue
        if shape == "str":
            ok = isinstance(value, str)
        elif shape == "int":
            ok = isinstance(value, int) and not isinstance(value, bool)
        elif shape == "strmap":
            ok = isinstance(value, dict) and all(isinstance(v, str) for v in value.values())
        elif shape == "strlist":
            ok = isinstance(value, list) and all(isinstance(v, str) for v in value)
        else:
            ok = isinstance(value, list)
        if ok:
            out[key] = value
    return meta if out == meta else out


def _embedded_meta(key: str, value: Any, path: _Path | None, pruned: list[str]) -> Any:
    """TypeMeta and ObjectMeta of an embedded resource are not pruned by the schema; nested metadata is
    coerced to ObjectMeta instead (the resource root's metadata is the server's business)."""
    if key == "metadata" and path is not None and isinstance(value, dict):
        return _coerce_object_meta(value, _Path(path, key), pruned)
    return value


def _prune(x: Any, node: _Node | None, path: _Path | None, pruned: list[str]) -> Any:
    """pruning.prune; returns ``x`` itself when nothing below it was dropped."""
    if node is not None and node.preserve_unknown:
        return _skip_prune(x, node, path, pruned)
    if isinstance(x, dict):
        if node is None:
            for key in x:
                pruned.append(_render(_Path(path, key)))
            return {} if x else x
        new: dict[str, Any] | None = None
        for key, value in x.items():
            if node.embedded and key in _META_FIELDS:
                child: Any = _embedded_meta(key, value, path, pruned)
            elif key in node.properties:
                child = _prune(value, node.properties[key], _Path(path, key), pruned)
            elif node.has_additional:
                child = _prune(value, node.additional, _Path(path, _MapKey(key)), pruned)
            else:
                pruned.append(_render(_Path(path, key)))
                if new is None:
                    new = _upto(x, key)
                continue
            if new is not None:
                new[key] = child
            elif child is not value:
                new = _upto(x, key)
                new[key] = child
        return x if new is None else new
    if isinstance(x, list):
        items = node.items if node is not None else None
        return _map_list(x, lambda i, v: _prune(v, items, _Path(path, i), pruned))
    return x


def _skip_prune(x: Any, node: _Node, path: _Path | None, pruned: list[str]) -> Any:
    """Below ``x-kubernetes-preserve-unknown-fields`` unknown keys stay, known ones are still pruned."""
    if isinstance(x, dict):
        new: dict[str, Any] | None = None
        for key, value in x.items():
            if node.embedded and key in _META_FIELDS:
                child: Any = _embedded_meta(key, value, path, pruned)
            elif key in node.properties:
                child = _prune(value, node.properties[key], _Path(path, key), pruned)
            elif node.has_additional:
                child = _prune(value, node.additional, _Path(path, _MapKey(key)), pruned)
            else:
                continue
            if child is not value:
                if new is None:
                    new = dict(x)
                new[key] = child
        return x if new is None else new
    if isinstance(x, list) and node.items is not None:
        items = node.items
        return _map_list(x, lambda i, v: _prune(v, items, _Path(path, i), pruned))
    return x


def _upto(x: dict[str, Any], key: str) -> dict[str, Any]:
    """A new dict with the entries of ``x`` before ``key``."""
    out: dict[str, Any] = {}
    for k, v in x.items():
        if k == key:
            break
        out[k] = v
    return out


def _map_list(x: list[Any], fn: Callable[[int, Any], Any]) -> list[Any]:
    """``[fn(i, v) for ...]`` that returns ``x`` itself when every ``fn`` returned its argument."""
    new: list[Any] | None = None
    for i, value in enumerate(x):
        child = fn(i, value)
        if child is not value and new is None:
            new = list(x[:i])
        if new is not None:
            new.append(child)
    return x if new is None else new


def _default(x: Any, node: _Node | None) -> Any:
    """PruneNonNullableNullsWithoutDefaults then Default, copy-on-write."""
    if node is None:
        return x
    if isinstance(x, dict):
        new: dict[str, Any] | None = None
        for key, value in x.items():
            child_node = node.child(key)
            if value is None and child_node is not None and not child_node.nullable:
                if new is None:
                    new = dict(x)
                if child_node.has_default:
                    new[key] = _copy(child_node.default)
                else:
                    del new[key]
        for key, prop in node.properties.items():
            if prop.has_default and key not in x:
                if new is None:
                    new = dict(x)
                new[key] = _copy(prop.default)
        current = x if new is None else new
        for key, value in current.items():
            child = _default(value, node.child(key))
            if child is not value:
                if new is None:
                    new = dict(x)
                new[key] = child
        return x if new is None else new
    if isinstance(x, list):
        items = node.items
        if items is None:
            return x

        def one(_: int, value: Any) -> Any:
            assert items is not None
            if value is None and not items.nullable and items.has_default:
                value = _copy(items.default)
            return _default(value, items)

        return _map_list(x, one)
    return x


# ---------------------------------------------------------------------------------------------------------


class StructuralSchema:
    """A CRD version's ``openAPIV3Schema``, compiled once; the methods never modify their argument."""

    def __init__(self, schema: Mapping[str, Any]) -> None:
        self._root = _Node(schema)
        # The resource root is always treated as an embedded resource: apiVersion, kind and metadata are
        # the server's business (ObjectMeta is coerced and validated elsewhere).
        self._root.embedded = True

    def prune(self, obj: Mapping[str, Any]) -> tuple[dict[str, Any], list[str]]:
        """Drop the fields the schema does not specify; returns the object and the sorted dropped paths."""
        pruned: list[str] = []
        out = _prune(dict(obj), self._root, None, pruned)
        pruned.sort()
        return out, pruned

    def default(self, obj: Mapping[str, Any]) -> dict[str, Any]:
        """Drop nulls of non-nullable fields that have no default, then fill in defaults (S63)."""
        out: dict[str, Any] = _default(dict(obj), self._root)
        return out

    def validate(self, obj: Mapping[str, Any], *, root_path: str = "") -> list[errors.FieldError]:
        """Schema errors, then embedded-resource errors, then list-type errors, as kube orders them."""
        found = _Errors()
        _Validator(root_path).run(dict(obj), self._root, None, found, top=True)
        return found.schema + found.embedded + found.list_type

    def process(self, obj: Mapping[str, Any]) -> tuple[dict[str, Any], list[str], list[errors.FieldError]]:
        """A create/update body through decode (prune), defaulting and validation.

        Returns the object to store, the unknown field paths (``spec.x``; the caller words them as
        ``unknown field "spec.x"`` warnings or a strict-decoding error) and the validation errors.
        """
        pruned, unknown = self.prune(obj)
        defaulted = self.default(pruned)
        return defaulted, unknown, self.validate(defaulted)


def from_crd(crd: Mapping[str, Any]) -> dict[str, StructuralSchema]:
    """Version name → compiled schema, for every version of a CRD that carries one."""
    out: dict[str, StructuralSchema] = {}
    for version in (crd.get("spec") or {}).get("versions") or ():
        schema = (version.get("schema") or {}).get("openAPIV3Schema")
        if isinstance(schema, Mapping):
            out[version["name"]] = StructuralSchema(schema)
    return out
