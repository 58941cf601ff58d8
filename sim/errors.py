"""Errors of the emulated API server, rendered as Kubernetes ``Status`` bodies.

Hierarchy::

    ApiError                    an HTTP error answered as a Status (code, reason, message, details)
    FieldError (a value)        one validation failure; many of them make one 422 Invalid ApiError

Messages copy kube-apiserver's wording where clients or tests match on it
(apiserver-semantics.md S04, S08, S13, S19, S38).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any


class GoLiteral(str):
    """A bad value already rendered the Go way (e.g. ``0x0``, a uint64 printed with ``%#v``)."""

    __slots__ = ()


def go_repr(value: Any) -> str:
    """Render a value the way Go's field errors print it (strings quoted, nil as null)."""
    if isinstance(value, GoLiteral):
        return str(value)
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, int | float):
        return str(value)
    return json.dumps(value, separators=(",", ":"), sort_keys=True)


_BODY_PREFIX = {
    "FieldValueRequired": "Required value",
    "FieldValueForbidden": "Forbidden",
    "FieldValueTooLong": "Too long",
    "FieldValueTooMany": "Too many",
    "FieldValueInternal": "Internal error",
}


@dataclass(frozen=True)
class FieldError:
    """One validation failure at a field path, as ``k8s.io/apimachinery/pkg/util/validation/field``."""

    type: str  # FieldValueInvalid, FieldValueRequired, FieldValueForbidden, FieldValueNotSupported, ...
    field: str
    detail: str = ""
    value: Any = None
    supported: tuple[str, ...] = ()

    def body(self) -> str:
        if self.type in ("FieldValueInvalid", "FieldValueTypeInvalid"):
            text = f"Invalid value: {go_repr(self.value)}"
        elif self.type == "FieldValueNotSupported":
            text = f"Unsupported value: {go_repr(self.value)}"
            if self.supported:
                text += ": supported values: " + ", ".join(json.dumps(s) for s in self.supported)
            return text
        elif self.type == "FieldValueDuplicate":
            text = f"Duplicate value: {go_repr(self.value)}"
        else:
            text = _BODY_PREFIX.get(self.type, self.type)
        return f"{text}: {self.detail}" if self.detail else text

    def __str__(self) -> str:
        return f"{self.field}: {self.body()}"

    def cause(self) -> dict[str, str]:
        return {"reason": self.type, "message": self.body(), "field": self.field}


def invalid_value(path: str, value: Any, detail: str) -> FieldError:
    return FieldError("FieldValueInvalid", path, detail, value)


def required(path: str, detail: str = "") -> FieldError:
    return FieldError("FieldValueRequired", path, detail)


def forbidden(path: str, detail: str) -> FieldError:
    return FieldError("FieldValueForbidden", path, detail)


def not_supported(path: str, value: Any, supported: tuple[str, ...]) -> FieldError:
    return FieldError("FieldValueNotSupported", path, "", value, supported)


def type_invalid(path: str, value: Any, detail: str) -> FieldError:
    return FieldError("FieldValueTypeInvalid", path, detail, value)


def duplicate(path: str, value: Any) -> FieldError:
    return FieldError("FieldValueDuplicate", path, "", value)


@dataclass
class ApiError(Exception):
    """An error the server answers with a ``Status`` body."""

    code: int
    reason: str
    message: str
    details: dict[str, Any] | None = None
    headers: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        Exception.__init__(self, self.message)

    def status(self) -> dict[str, Any]:
        body: dict[str, Any] = {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
        }
        if self.reason:  # StatusReasonUnknown is "" and omitempty
            body["reason"] = self.reason
        if self.details is not None:
            body["details"] = self.details
        body["code"] = self.code
        return body


def _details(name: str, group: str, plural: str) -> dict[str, Any]:
    # StatusDetails fields are omitempty: a nameless error (e.g. on ListOptions) has no "name".
    details: dict[str, Any] = {"name": name} if name else {}
    if group:
        details["group"] = group
    details["kind"] = plural
    return details


def qualified(plural: str, group: str) -> str:
    """``pods`` for the core group, ``autoscalingrunnersets.actions.github.com`` otherwise."""
    return f"{plural}.{group}" if group else plural


def not_found(plural: str, group: str, name: str) -> ApiError:
    return ApiError(
        404, "NotFound", f'{qualified(plural, group)} "{name}" not found', _details(name, group, plural)
    )


def no_such_resource() -> ApiError:
    return ApiError(404, "NotFound", "the server could not find the requested resource", {})


def already_exists(plural: str, group: str, name: str, *, terminating: bool = False) -> ApiError:
    prefix = "object is being deleted: " if terminating else ""
    return ApiError(
        409,
        "AlreadyExists",
        f'{prefix}{qualified(plural, group)} "{name}" already exists',
        _details(name, group, plural),
    )


def conflict(plural: str, group: str, name: str, why: str) -> ApiError:
    return ApiError(
        409,
        "Conflict",
        f'Operation cannot be fulfilled on {qualified(plural, group)} "{name}": {why}',
        _details(name, group, plural),
    )


STALE = "the object has been modified; please apply your changes to the latest version and try again"


def invalid(
    kind: str, group: str, name: str, errors: list[FieldError], *, details_kind: str = ""
) -> ApiError:
    """422 Invalid with one cause per error; ``details.kind`` is the Kind unless told otherwise."""
    # events.k8s.io Events are validated as the core Event they are stored as: kube-apiserver names them
    # by the core group ("Event", not "Event.events.k8s.io").
    if (kind, group) == ("Event", "events.k8s.io"):
        group = ""
    qualified_kind = f"{kind}.{group}" if group else kind
    # Like field.ErrorList.ToAggregate: repeated messages are shown once, every cause is kept.
    messages = list(dict.fromkeys(str(e) for e in errors))
    text = messages[0] if len(messages) == 1 else "[" + ", ".join(messages) + "]"
    details = _details(name, group, details_kind or kind)
    details["causes"] = [e.cause() for e in errors]
    return ApiError(422, "Invalid", f'{qualified_kind} "{name}" is invalid: {text}', details)


def bad_request(message: str) -> ApiError:
    return ApiError(400, "BadRequest", message)


def forbidden_error(plural: str, group: str, name: str, why: str) -> ApiError:
    return ApiError(
        403,
        "Forbidden",
        f'{qualified(plural, group)} "{name}" is forbidden: {why}',
        _details(name, group, plural),
    )


def method_not_allowed(
    message: str = "the server does not allow this method on the requested resource",
) -> ApiError:
    return ApiError(405, "MethodNotAllowed", message, {})


def unsupported_media_type(content_type: str, accepted: list[str]) -> ApiError:
    """``negotiation.NewUnsupportedMediaTypeError``: no details, and the same text when the header is
    missing (``content_type`` is kept for the callers' sake)."""
    return ApiError(
        415,
        "UnsupportedMediaType",
        "the body of the request was in an unknown format - accepted media types include: "
        + ", ".join(accepted),
    )


def expired(message: str) -> ApiError:
    return ApiError(410, "Expired", message)


def internal(message: str) -> ApiError:
    return ApiError(
        500, "InternalError", f"Internal error occurred: {message}", {"causes": [{"message": message}]}
    )


def too_large(message: str) -> ApiError:
    return ApiError(413, "RequestEntityTooLarge", f"Request entity too large: {message}")


def patch_rejected(message: str) -> ApiError:
    """A patch that does not apply (422): ``NewGenericServerResponse(422, ..., isUnexpectedResponse=false)``,
    which drops the patch library's text (``message``): the details stay empty."""
    return ApiError(422, "Invalid", "the server rejected our request due to an error in our request", {})
