"""The validation step of ``sim.schemas.StructuralSchema`` (apiserver-semantics.md S64): the kube-openapi
schema validator, then embedded-resource checks, then ``x-kubernetes-list-type`` set/map uniqueness, along a
compiled schema (``sim.schemanodes``), with kube's field paths and messages.

Messages copy kube's wording, including its quirks: schema errors carry kube-openapi's detail
(``spec.replicas in body must be of type integer: "string"``, with the JSON type name as the bad value), a
failed ``anyOf`` adds an error at field ``<nil>``, list-type errors name map keys as ``labels[key]`` while
schema errors name them ``labels.key``, and a ``type: string`` field with a known ``format`` accepts arrays.

Values are JSON as Python decodes it. Python ``float`` s are numbers, never integers (kube would accept
``1.0`` for an integer field); ints outside int64 count as numbers, as they do when kube decodes them.

Known limits: no CEL (``x-kubernetes-validations``) and no validation ratcheting on update; nested
embedded ObjectMeta is not validated; the string formats checked are ``date-time``, ``date``, ``byte``,
``uuid``/``uuid3``/``uuid4``/``uuid5``, ``ipv4`` and ``ipv6`` (the others, and ``int32``/``int64``, which
kube does not range-check either, are accepted); the bad value of a duplicate list-map key renders as JSON
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
from collections.abc import Mapping
from typing import Any

from sim import errors, schemanodes

_INT64_MIN = -(2**63)
_INT64_MAX = 2**63 - 1

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

    def run(
        self, x: Any, node: schemanodes.Node, path: schemanodes.Path | None, out: _Errors, *, top: bool
    ) -> None:
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

    def _field(self, path: schemanodes.Path | None) -> str:
        return self.field(schemanodes.render(path))

    def _invalid(self, path: schemanodes.Path | None, value: Any, message: str) -> errors.FieldError:
        """field.Invalid with kube-openapi's detail, which starts with the schema path."""
        name = schemanodes.render(path)
        return errors.invalid_value(self.field(name), value, f"{name} in body {message}")

    def _type_error(
        self, path: schemanodes.Path | None, node: schemanodes.Node, actual: str
    ) -> errors.FieldError:
        name = schemanodes.render(path)
        detail = f"{name} in body must be of type {','.join(node.types)}: {_quote(actual)}"
        return errors.type_invalid(self.field(name), actual, detail)

    def _branch(
        self, x: Any, node: schemanodes.Node, path: schemanodes.Path | None
    ) -> list[errors.FieldError]:
        sub = _Errors()
        self.run(x, node, path, sub, top=False)
        return sub.schema

    def _combinators(
        self, x: Any, node: schemanodes.Node, path: schemanodes.Path | None, errs: list[errors.FieldError]
    ) -> None:
        """allOf, oneOf, anyOf, not: their own messages are plain errors, reported at the root path."""

        def composite(message: str) -> None:
            errs.append(
                errors.invalid_value(self.field(""), "", f"{_quote(schemanodes.render(path))} {message}")
            )

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

    def _string(
        self, x: str, node: schemanodes.Node, path: schemanodes.Path | None, errs: list[errors.FieldError]
    ) -> None:
        if node.max_length is not None and len(x) > node.max_length:
            detail = f"may not be more than {node.max_length} {'byte' if node.max_length == 1 else 'bytes'}"
            errs.append(errors.FieldError("FieldValueTooLong", self._field(path), detail, x))
        if node.min_length is not None and len(x) < node.min_length:
            errs.append(self._invalid(path, x, f"should be at least {node.min_length} chars long"))
        if node.pattern is not None and node.pattern.search(x) is None:
            errs.append(self._invalid(path, x, f"should match '{node.pattern_text}'"))
        if node.string_format and not _format_ok(node.string_format, x):
            name = schemanodes.render(path)
            detail = f"{name} in body must be of type {node.format}: {_quote(x)}"
            errs.append(errors.type_invalid(self.field(name), x, detail))

    def _number(
        self,
        x: int | float,
        node: schemanodes.Node,
        path: schemanodes.Path | None,
        errs: list[errors.FieldError],
    ) -> None:
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

    def _array(
        self, x: list[Any], node: schemanodes.Node, path: schemanodes.Path | None, out: _Errors, *, top: bool
    ) -> None:
        if node.items is not None:
            for i, item in enumerate(x):
                self.run(item, node.items, schemanodes.Path(path, i), out, top=top)
        errs = out.schema
        if node.min_items is not None and len(x) < node.min_items:
            errs.append(self._invalid(path, len(x), f"should have at least {node.min_items} items"))
        if node.max_items is not None and len(x) > node.max_items:
            detail = f"must have at most {node.max_items} items"
            errs.append(errors.FieldError("FieldValueTooMany", self._field(path), detail, len(x)))
        if top and node.list_type in ("set", "map"):
            out.list_type.extend(self._list_type(x, node, path))

    def _object(
        self,
        x: dict[str, Any],
        node: schemanodes.Node,
        path: schemanodes.Path | None,
        out: _Errors,
        *,
        top: bool,
    ) -> None:
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
                self.run(value, prop, schemanodes.Path(path, key), out, top=top)
            elif node.additional is not None:
                self.run(
                    value, node.additional, schemanodes.Path(path, schemanodes.MapKey(key)), out, top=top
                )
        for key in node.required:
            if key not in x:
                errs.append(errors.required(self._field(schemanodes.Path(path, key))))
        if top and node.embedded and path is not None:
            out.embedded.extend(self._embedded(x, path))

    def _embedded(self, x: dict[str, Any], path: schemanodes.Path) -> list[errors.FieldError]:
        """objectmeta.Validate of a nested embedded resource (TypeMeta only; ObjectMeta is not checked)."""
        base = schemanodes.render(path, brackets=True)
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

    def _list_type(
        self, x: list[Any], node: schemanodes.Node, path: schemanodes.Path | None
    ) -> list[errors.FieldError]:
        """listtype.ValidateListSetsAndMaps: the second appearance of a value (set) or key (map)."""

        def at(i: int) -> str:
            return self.field(f"{schemanodes.render(path, brackets=True)}[{i}]")

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


def validate(
    root: schemanodes.Node, obj: Mapping[str, Any], *, root_path: str = ""
) -> list[errors.FieldError]:
    """Schema errors, then embedded-resource errors, then list-type errors, as kube orders them."""
    found = _Errors()
    _Validator(root_path).run(dict(obj), root, None, found, top=True)
    return found.schema + found.embedded + found.list_type
