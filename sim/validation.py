"""Object metadata rules of the emulated API server, and the two wire time formats.

Everything here is pure: no I/O, no clock reads, no mutation of arguments (every function returns new
objects). Rules and messages follow kube-apiserver 1.34/1.35 as read in upstream source
(``apimachinery/pkg/util/validation``, ``apimachinery/pkg/api/validation/objectmeta.go``,
``apiextensions-apiserver/.../customresource/validator.go``, ``apiserver/.../handlers/rest.go``,
``meta/v1/micro_time.go``); apiserver-semantics.md rows S09, S11, S41, S43, S44 and §3.

What is here:

* name rules (``validate_name``: ``dns-subdomain``, ``dns-label``, ``path-segment``) and the string
  checks they are made of (``is_dns1123_label``, ``is_qualified_name``, ``is_label_value``, ...);
* ``validate_metadata`` (name/generateName, namespace, generation, labels, annotations, ownerReferences,
  finalizers), ``finalizer_warnings`` (the CR-only ``Warning`` texts), ``check_finalizers_while_deleting``
  (S41), ``dedupe_owner_references`` (S44) and ``generate_name`` (S09);
* ``parse_time``/``format_time`` (metav1.Time) and ``parse_micro_time``/``format_micro_time``
  (metav1.MicroTime), which mimic Go's ``time.Parse`` including its error text.

Known limits:

* Go prints struct values in field errors with ``%#v`` (``v1.OwnerReference{APIVersion:"v1", ...}``);
  ``errors.FieldError`` renders such values as JSON instead.
* Go iterates maps in random order, so the order of label/annotation errors varies on a real server;
  here keys are checked in sorted order.
* Length limits are counted in UTF-8 bytes like Go's ``len``. The wording is "must be no more than N
  characters" (1.34); newer servers say "bytes" for label keys and values (``_LABEL_LEN_UNIT``).
* ``metadata.managedFields`` is not validated.
* MicroTime input needs exactly six fractional digits and an offset: upstream parses it with the
  fixed layout ``2006-01-02T15:04:05.000000Z07:00`` (micro_time.go), and Go's ``.000000`` element
  accepts nothing else. So ``...T00:00:00+00:00`` (what ``datetime.isoformat()`` gives when the
  microsecond is 0) is rejected, as on a real server. metav1.Time accepts any number of fractional
  digits (Go's RFC 3339 parsing) but needs an offset.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

from sim import errors

FieldError = errors.FieldError

# -- string checks (k8s.io/apimachinery/pkg/util/validation and .../api/validate/content) ----------------

_LEN_UNIT = "characters"
_LABEL_LEN_UNIT = "characters"

DNS1123_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
DNS1123_SUBDOMAIN_FMT = DNS1123_LABEL_FMT + "(\\." + DNS1123_LABEL_FMT + ")*"
DNS1123_LABEL_MAX = 63
DNS1123_SUBDOMAIN_MAX = 253
_DNS1123_LABEL_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
    "and must start and end with an alphanumeric character"
)
_DNS1123_SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
    "and must start and end with an alphanumeric character"
)
_DNS1123_LABEL_RE = re.compile(DNS1123_LABEL_FMT)
_DNS1123_SUBDOMAIN_RE = re.compile(DNS1123_SUBDOMAIN_FMT)

_LABEL_KEY_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_LABEL_KEY_MSG = (
    "must consist of alphanumeric characters, '-', '_' or '.', "
    "and must start and end with an alphanumeric character"
)
_LABEL_KEY_RE = re.compile(_LABEL_KEY_FMT)
_LABEL_VALUE_FMT = "(" + _LABEL_KEY_FMT + ")?"
_LABEL_VALUE_MSG = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', "
    "and must start and end with an alphanumeric character"
)
_LABEL_VALUE_RE = re.compile(_LABEL_VALUE_FMT)
LABEL_MAX = 63

_CONFIG_MAP_KEY_FMT = "[-._a-zA-Z0-9]+"
_CONFIG_MAP_KEY_MSG = "a valid config key must consist of alphanumeric characters, '-', '_' or '.'"
_CONFIG_MAP_KEY_RE = re.compile(_CONFIG_MAP_KEY_FMT)

TOTAL_ANNOTATION_SIZE_LIMIT = 256 * 1024


def _blen(value: str) -> int:
    """Go's ``len`` of a string: its UTF-8 byte count."""
    return len(value.encode("utf-8"))


def max_len_error(length: int, unit: str = _LEN_UNIT) -> str:
    return f"must be no more than {length} {unit}"


def regex_error(msg: str, fmt: str, *examples: str) -> str:
    """``validation.RegexError``: the message, the examples and the regex."""
    if not examples:
        return f"{msg} (regex used for validation is '{fmt}')"
    # Go appends "'x', " per example with " or " between them, hence "'a',  or 'b', " (two spaces).
    shown = " or ".join(f"'{e}', " for e in examples)
    return f"{msg} (e.g. {shown}regex used for validation is '{fmt}')"


def is_dns1123_label(value: str) -> list[str]:
    msgs: list[str] = []
    if _blen(value) > DNS1123_LABEL_MAX:
        msgs.append(max_len_error(DNS1123_LABEL_MAX))
    if not _DNS1123_LABEL_RE.fullmatch(value):
        if _DNS1123_SUBDOMAIN_RE.fullmatch(value):
            msgs.append("must not contain dots")
        else:
            msgs.append(regex_error(_DNS1123_LABEL_MSG, DNS1123_LABEL_FMT, "my-name", "123-abc"))
    return msgs


def is_dns1123_subdomain(value: str, unit: str = _LEN_UNIT) -> list[str]:
    msgs: list[str] = []
    if _blen(value) > DNS1123_SUBDOMAIN_MAX:
        msgs.append(max_len_error(DNS1123_SUBDOMAIN_MAX, unit))
    if not _DNS1123_SUBDOMAIN_RE.fullmatch(value):
        msgs.append(regex_error(_DNS1123_SUBDOMAIN_MSG, DNS1123_SUBDOMAIN_FMT, "example.com"))
    return msgs


def is_path_segment_name(value: str) -> list[str]:
    """``path.IsValidPathSegmentName``: no '.', '..', '/' or '%' (no length limit, empty allowed)."""
    if value in (".", ".."):
        return [f"may not be '{value}'"]
    return [f"may not contain '{bad}'" for bad in ("/", "%") if bad in value]


def is_qualified_name(value: str) -> list[str]:
    """``IsQualifiedName`` / ``content.IsLabelKey``: ``[prefix/]name`` as label keys are."""
    parts = value.split("/")
    msgs: list[str] = []
    name_regex_error = regex_error(_LABEL_KEY_MSG, _LABEL_KEY_FMT, "MyName", "my.name", "123-abc")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            msgs.append("prefix part must be non-empty")
        else:
            msgs += ["prefix part " + m for m in is_dns1123_subdomain(prefix, _LABEL_LEN_UNIT)]
    else:
        return [
            "a valid label key "
            + name_regex_error
            + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
        ]
    if not name:
        msgs.append("name part must be non-empty")
    elif _blen(name) > LABEL_MAX:
        msgs.append("name part " + max_len_error(LABEL_MAX, _LABEL_LEN_UNIT))
    if not _LABEL_KEY_RE.fullmatch(name):
        msgs.append("name part " + name_regex_error)
    return msgs


def is_label_value(value: str) -> list[str]:
    msgs: list[str] = []
    if _blen(value) > LABEL_MAX:
        msgs.append(max_len_error(LABEL_MAX, _LABEL_LEN_UNIT))
    if not _LABEL_VALUE_RE.fullmatch(value):
        msgs.append(regex_error(_LABEL_VALUE_MSG, _LABEL_VALUE_FMT, "MyValue", "my_value", "12345"))
    return msgs


def is_config_map_key(value: str) -> list[str]:
    """Keys of Secret and ConfigMap data."""
    msgs: list[str] = []
    if _blen(value) > DNS1123_SUBDOMAIN_MAX:
        msgs.append(max_len_error(DNS1123_SUBDOMAIN_MAX))
    if not _CONFIG_MAP_KEY_RE.fullmatch(value):
        msgs.append(regex_error(_CONFIG_MAP_KEY_MSG, _CONFIG_MAP_KEY_FMT, "key.name", "KEY_NAME", "key-name"))
    if value == ".":
        msgs.append("must not be '.'")
    elif value == "..":
        msgs.append("must not be '..'")
    elif value.startswith(".."):
        msgs.append("must not start with '..'")
    return msgs


def inclusive_range_error(lo: int, hi: int) -> str:
    return f"must be between {lo} and {hi}, inclusive"


def go_string_slice(values: Iterable[str]) -> str:
    """Go's ``%#v`` of a ``[]string``: ``[]string{"a", "b"}``."""
    return "[]string{" + ", ".join(json.dumps(v, ensure_ascii=False) for v in values) + "}"


# -- names ----------------------------------------------------------------------------------------------

NAME_RULES = ("dns-subdomain", "dns-label", "path-segment")


def _mask_trailing_dash(name: str) -> str:
    """``maskTrailingDash`` as upstream writes it (it drops two characters before adding 'a')."""
    if len(name) > 1 and name.endswith("-"):
        return name[:-2] + "a"
    return name


def name_messages(name: str, rule: str, *, prefix: bool = False) -> list[str]:
    """The messages of a ``ValidateNameFunc``; ``prefix`` is set when checking a generateName."""
    if rule == "dns-subdomain":
        return is_dns1123_subdomain(_mask_trailing_dash(name) if prefix else name)
    if rule == "dns-label":
        return is_dns1123_label(_mask_trailing_dash(name) if prefix else name)
    if rule == "path-segment":
        return is_path_segment_name(name)
    raise ValueError(f"unknown name rule {rule!r}; expected one of {NAME_RULES}")


def validate_name(
    name: str, rule: str, *, path: str = "metadata.name", prefix: bool = False
) -> list[FieldError]:
    """One ``Invalid`` error at ``path`` per failed check of ``name`` under ``rule``."""
    return [errors.invalid_value(path, name, msg) for msg in name_messages(name, rule, prefix=prefix)]


# -- metadata -------------------------------------------------------------------------------------------


def _string_map_errors(value: Any, path: str) -> tuple[dict[str, str], list[FieldError]]:
    if value is None:
        return {}, []
    if not isinstance(value, Mapping):
        return {}, [errors.type_invalid(path, value, "must be of type object")]
    out: dict[str, str] = {}
    errs: list[FieldError] = []
    for k, v in value.items():
        if v is None:
            v = ""
        if not isinstance(v, str):
            errs.append(errors.type_invalid(f"{path}[{k}]", v, "must be of type string"))
            continue
        out[str(k)] = v
    return out, errs


def validate_labels(labels: Any, path: str = "metadata.labels") -> list[FieldError]:
    """Label keys are qualified names, values are label values; errors sit on the map's path."""
    values, errs = _string_map_errors(labels, path)
    for key in sorted(values):
        errs += [errors.invalid_value(path, key, msg) for msg in is_qualified_name(key)]
        errs += [errors.invalid_value(path, values[key], msg) for msg in is_label_value(values[key])]
    return errs


def validate_annotations(annotations: Any, path: str = "metadata.annotations") -> list[FieldError]:
    """Keys are qualified names (case-insensitive); keys plus values may total 256 KiB."""
    values, errs = _string_map_errors(annotations, path)
    for key in sorted(values):
        errs += [errors.invalid_value(path, key, msg) for msg in is_qualified_name(key.lower())]
    total = sum(_blen(k) + _blen(v) for k, v in values.items())
    if total > TOTAL_ANNOTATION_SIZE_LIMIT:
        errs.append(
            FieldError("FieldValueTooLong", path, f"must have at most {TOTAL_ANNOTATION_SIZE_LIMIT} bytes")
        )
    return errs


def _group_version(api_version: str) -> tuple[str, str] | None:
    """``schema.ParseGroupVersion``; None when it does not parse."""
    if not api_version or api_version == "/":
        return "", ""
    parts = api_version.split("/")
    if len(parts) == 1:
        return "", api_version
    if len(parts) == 2:
        return parts[0], parts[1]
    return None


def validate_owner_references(refs: Any, path: str = "metadata.ownerReferences") -> list[FieldError]:
    """``ValidateOwnerReferences``. Note upstream reports the per-reference errors on
    ``metadata.ownerReferences.<field>`` (no index) as ``Invalid ... must not be empty``."""
    if refs is None:
        return []
    if not isinstance(refs, list):
        return [errors.type_invalid(path, refs, "must be of type array")]
    errs: list[FieldError] = []
    first_controller = ""
    for ref in refs:
        if not isinstance(ref, Mapping):
            errs.append(errors.type_invalid(path, ref, "must be of type object"))
            continue
        api_version = str(ref.get("apiVersion") or "")
        kind = str(ref.get("kind") or "")
        gv = _group_version(api_version) or ("", "")
        if not gv[1]:
            errs.append(errors.invalid_value(f"{path}.apiVersion", api_version, "version must not be empty"))
        if not kind:
            errs.append(errors.invalid_value(f"{path}.kind", kind, "must not be empty"))
        if not ref.get("name"):
            errs.append(errors.invalid_value(f"{path}.name", str(ref.get("name") or ""), "must not be empty"))
        if not ref.get("uid"):
            errs.append(errors.invalid_value(f"{path}.uid", str(ref.get("uid") or ""), "must not be empty"))
        if gv == ("", "v1") and kind == "Event":
            errs.append(
                errors.invalid_value(path, dict(ref), "/v1, Kind=Event is disallowed from being an owner")
            )
        if ref.get("controller") is True:
            current = f"{kind}/{ref.get('name') or ''}"
            if first_controller:
                errs.append(
                    errors.invalid_value(
                        path,
                        list(refs),
                        "Only one reference can have Controller set to true. "
                        f'Found "true" in references for {first_controller} and {current}',
                    )
                )
            else:
                first_controller = current
    return errs


STANDARD_FINALIZERS = frozenset({"kubernetes", "orphan", "foregroundDeletion"})


def validate_finalizers(
    finalizers: Any, path: str = "metadata.finalizers", *, strict: bool = False
) -> list[FieldError]:
    """``ValidateFinalizers``; ``strict`` adds core/v1's "standard or fully qualified" rule per index."""
    if finalizers is None:
        return []
    if not isinstance(finalizers, list):
        return [errors.type_invalid(path, finalizers, "must be of type array")]
    errs: list[FieldError] = []
    names = [str(f) for f in finalizers]
    for name in names:
        errs += [errors.invalid_value(path, name, msg) for msg in is_qualified_name(name)]
    if "orphan" in names and "foregroundDeletion" in names:
        errs.append(
            errors.invalid_value(path, names, "finalizer orphan and foregroundDeletion cannot be both set")
        )
    if strict:
        for i, name in enumerate(names):
            if "/" not in name and name not in STANDARD_FINALIZERS:
                errs.append(
                    errors.invalid_value(
                        f"{path}[{i}]",
                        name,
                        "name is neither a standard finalizer name nor is it fully qualified",
                    )
                )
    return errs


def validate_metadata(
    meta: Mapping[str, Any],
    *,
    name_rule: str,
    namespaced: bool,
    strict_finalizers: bool = False,
) -> list[FieldError]:
    """``ValidateObjectMeta`` for a create (also fine for the metadata half of an update).

    ``name_rule`` is one of ``NAME_RULES``. A missing name is accepted while ``generateName`` is set
    (the server generates it). ``strict_finalizers`` is for kinds whose validation goes through
    core/v1's ``ValidateObjectMeta`` (Pods, Secrets, ServiceAccounts, Namespaces, RBAC, events.k8s.io
    Events): a finalizer without '/' must then be ``kubernetes``, ``orphan`` or ``foregroundDeletion``.
    Custom resources, CRDs and Leases use ``strict_finalizers=False`` (CRs get ``finalizer_warnings``
    instead).
    """
    errs: list[FieldError] = []
    name = meta.get("name") or ""
    generate = meta.get("generateName") or ""
    if not isinstance(name, str):
        return [errors.type_invalid("metadata.name", name, "must be of type string")]
    if not isinstance(generate, str):
        return [errors.type_invalid("metadata.generateName", generate, "must be of type string")]
    if generate:
        errs += validate_name(generate, name_rule, path="metadata.generateName", prefix=True)
    if name:
        errs += validate_name(name, name_rule)
    elif not generate:
        errs.append(errors.required("metadata.name", "name or generateName is required"))
    namespace = meta.get("namespace") or ""
    if namespaced:
        if not namespace:
            errs.append(errors.required("metadata.namespace"))
        else:
            errs += [
                errors.invalid_value("metadata.namespace", namespace, m)
                for m in is_dns1123_label(str(namespace))
            ]
    elif namespace:
        errs.append(errors.forbidden("metadata.namespace", "not allowed on this type"))
    generation = meta.get("generation")
    if isinstance(generation, int) and generation < 0:
        errs.append(
            errors.invalid_value("metadata.generation", generation, "must be greater than or equal to 0")
        )
    errs += validate_labels(meta.get("labels"))
    errs += validate_annotations(meta.get("annotations"))
    errs += validate_owner_references(meta.get("ownerReferences"))
    errs += validate_finalizers(meta.get("finalizers"), strict=strict_finalizers)
    return errs


def finalizer_warnings(meta: Mapping[str, Any], old_meta: Mapping[str, Any] | None = None) -> list[str]:
    """The ``Warning`` texts a custom resource write gets for its finalizer names.

    Upstream (``generateWarningsFromObj``) warns only about finalizers the write adds, so pass the
    stored object's metadata as ``old_meta`` on updates. Finalizers are visited sorted and deduplicated.
    A name with a '.' but no '/' gets the "including a path (/)" wording (1.32+).
    """
    new = {str(f) for f in meta.get("finalizers") or []}
    if old_meta is not None:
        new -= {str(f) for f in old_meta.get("finalizers") or []}
    path = "metadata.finalizers"
    warnings: list[str] = []
    for name in sorted(new):
        quoted = json.dumps(name, ensure_ascii=False)
        warnings += [f"{path}: {quoted}: {msg}" for msg in is_qualified_name(name)]
        if "/" not in name and name not in STANDARD_FINALIZERS:
            wording = (
                "a domain-qualified finalizer name including a path (/)"
                if "." in name
                else ("a domain-qualified finalizer name")
            )
            tail = "to avoid accidental conflicts with other finalizer writers"
            warnings.append(f"{path}: {quoted}: prefer {wording} {tail}")
    return warnings


def check_finalizers_while_deleting(
    old_meta: Mapping[str, Any], new_meta: Mapping[str, Any]
) -> list[FieldError]:
    """S41: once the stored object has a deletionTimestamp, a write may not add finalizers."""
    if not old_meta.get("deletionTimestamp"):
        return []
    extra = sorted(
        {str(f) for f in new_meta.get("finalizers") or []}
        - {str(f) for f in old_meta.get("finalizers") or []}
    )
    if not extra:
        return []
    return [
        errors.forbidden(
            "metadata.finalizers",
            "no new finalizers can be added if the object is being deleted, found new finalizers "
            + go_string_slice(extra),
        )
    ]


_DUPLICATE_OWNERS = (
    ".metadata.ownerReferences contains duplicate entries; API server dedups owner references in 1.20+, "
    "and may reject such requests as early as 1.24; please fix your requests; duplicate UID(s) observed: {}"
)
_DUPLICATE_OWNERS_AFTER_ADMISSION = (
    ".metadata.ownerReferences contains duplicate entries after mutating admission happens; "
    "API server dedups owner references in 1.20+, and may reject such requests as early as 1.24; "
    "please fix your requests; duplicate UID(s) observed: {}"
)


def dedupe_owner_references(
    meta: Mapping[str, Any], *, after_mutating_admission: bool = False
) -> tuple[dict[str, Any], list[str]]:
    """Drop ownerReferences that repeat an earlier one exactly; return (new metadata, warnings).

    Upstream (``dedupOwnerReferences``) removes a reference only when it is equal in every field to one
    already kept; two references with the same uid but different fields are both kept. Creates and
    updates warn with the first text; PATCH dedups only after mutating admission, so pass
    ``after_mutating_admission=True`` there to get its text.
    """
    out = dict(meta)
    refs = meta.get("ownerReferences")
    if not isinstance(refs, list):
        return out, []
    kept: list[Any] = []
    duplicates: list[str] = []
    for ref in refs:
        if ref in kept:
            duplicates.append(str(ref.get("uid") or "") if isinstance(ref, Mapping) else "")
        else:
            kept.append(ref)
    if not duplicates:
        return out, []
    out["ownerReferences"] = kept
    text = _DUPLICATE_OWNERS_AFTER_ADMISSION if after_mutating_admission else _DUPLICATE_OWNERS
    return out, [text.format(", ".join(duplicates))]


GENERATE_NAME_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
_MAX_GENERATED_PREFIX = 63 - 5


def generate_name(prefix: str, rand: random.Random) -> str:
    """``SimpleNameGenerator``: the prefix cut to 58 characters plus 5 random characters."""
    base = prefix[:_MAX_GENERATED_PREFIX]
    return base + "".join(rand.choice(GENERATE_NAME_ALPHABET) for _ in range(5))


# -- time formats (metav1.Time and metav1.MicroTime) ----------------------------------------------------

RFC3339 = "2006-01-02T15:04:05Z07:00"
RFC3339_MICRO = "2006-01-02T15:04:05.000000Z07:00"


class TimeParseError(ValueError):
    """A time string Go's ``time.Parse`` (or ``json.Unmarshal``) would refuse; the text is Go's."""


def _q(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, list):
        return "array"
    if isinstance(value, Mapping):
        return "object"
    return type(value).__name__


def _days_in(month: int, year: int) -> int:
    if month == 2:
        return 29 if (year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)) else 28
    return 30 if month in (4, 6, 9, 11) else 31


def _go_parse(value: Any, micro: bool) -> datetime:
    """Go's ``time.Parse`` for the two layouts the API uses; returns an aware UTC datetime.

    Nanoseconds beyond the microsecond are truncated (Python's datetime stops there).
    """
    if not isinstance(value, str):
        raise TimeParseError(f"json: cannot unmarshal {_json_type(value)} into Go value of type string")
    layout = RFC3339_MICRO if micro else RFC3339
    rest = value

    def bad(layout_elem: str, value_elem: str) -> TimeParseError:
        return TimeParseError(
            f"parsing time {_q(value)} as {_q(layout)}: cannot parse {_q(value_elem)} as {_q(layout_elem)}"
        )

    def out_of_range(what: str) -> TimeParseError:
        return TimeParseError(f"parsing time {_q(value)}: {what} out of range")

    def literal(ch: str) -> None:
        nonlocal rest
        if not rest or rest[0] != ch:
            raise bad(ch, rest)
        rest = rest[1:]

    def num2(elem: str, fixed: bool) -> int:
        nonlocal rest
        if not rest[:1].isdigit() or not rest[:1].isascii():
            raise bad(elem, rest)
        if not (len(rest) > 1 and rest[1].isascii() and rest[1].isdigit()):
            if fixed:
                raise bad(elem, rest)
            n, rest = int(rest[0]), rest[1:]
            return n
        n, rest = int(rest[:2]), rest[2:]
        return n

    if len(rest) < 4 or not all(c.isascii() and c.isdigit() for c in rest[:4]):
        raise bad("2006", rest)
    year, rest = int(rest[:4]), rest[4:]
    literal("-")
    month = num2("01", True)
    if not 1 <= month <= 12:
        raise out_of_range("month")
    literal("-")
    day = num2("02", True)
    literal("T")
    hour = num2("15", False)
    if hour >= 24:
        raise out_of_range("hour")
    literal(":")
    minute = num2("04", True)
    if minute >= 60:
        raise out_of_range("minute")
    literal(":")
    second = num2("05", True)
    if second >= 60:
        raise out_of_range("second")
    nanos = 0
    if micro:
        hold = rest
        digits = rest[1:7]
        if len(rest) < 7 or rest[0] not in ".," or not all(c.isascii() and c.isdigit() for c in digits):
            raise bad(".000000", hold)
        nanos, rest = int(digits) * 1000, rest[7:]
    elif len(rest) >= 2 and rest[0] in ".," and rest[1].isascii() and rest[1].isdigit():
        n = 2
        while n < len(rest) and rest[n].isascii() and rest[n].isdigit():
            n += 1
        frac = rest[1:n][:9]
        nanos, rest = int(frac.ljust(9, "0")), rest[n:]
    hold = rest
    if rest.startswith("Z"):
        offset, rest = 0, rest[1:]
    else:
        if len(rest) < 6 or rest[3] != ":" or rest[0] not in "+-":
            raise bad("Z07:00", hold)
        hh, mm = rest[1:3], rest[4:6]
        if not all(c.isascii() and c.isdigit() for c in hh + mm):
            raise bad("Z07:00", hold)
        if int(hh) > 24:
            raise out_of_range("time zone offset hour")
        if int(mm) > 60:
            raise out_of_range("time zone offset minute")
        offset = (int(hh) * 60 + int(mm)) * 60 * (1 if rest[0] == "+" else -1)
        rest = rest[6:]
    if rest:
        raise TimeParseError(f"parsing time {_q(value)}: extra text: {_q(rest)}")
    if not 1 <= day <= _days_in(month, year):
        raise TimeParseError(f"parsing time {_q(value)}: day out of range")
    if year < 1:
        raise TimeParseError(f"parsing time {_q(value)}: year out of range")
    local = datetime(year, month, day, hour, minute, second, nanos // 1000, tzinfo=UTC)
    return local - timedelta(seconds=offset)


def parse_time(value: Any) -> datetime:
    """metav1.Time input: RFC 3339 with a required offset, any number of fractional digits."""
    return _go_parse(value, micro=False)


def parse_micro_time(value: Any) -> datetime:
    """metav1.MicroTime input: RFC 3339 with exactly six fractional digits and a required offset."""
    return _go_parse(value, micro=True)


def _utc(dt: datetime) -> datetime:
    """Aware datetimes are converted to UTC; naive ones are taken to be UTC already."""
    return dt.replace(tzinfo=UTC) if dt.tzinfo is None else dt.astimezone(UTC)


def format_time(dt: datetime) -> str:
    """metav1.Time output: UTC, second precision (fraction truncated), ``Z``."""
    t = _utc(dt)
    return f"{t.year:04d}-{t.month:02d}-{t.day:02d}T{t.hour:02d}:{t.minute:02d}:{t.second:02d}Z"


def format_micro_time(dt: datetime) -> str:
    """metav1.MicroTime output: UTC with six fractional digits and ``Z``."""
    t = _utc(dt)
    return f"{format_time(t)[:-1]}.{t.microsecond:06d}Z"
