"""Just enough of Kubernetes' protobuf encoding to read the one body kubectl sends that way and the
emulator must understand: the ``TokenRequest`` of ``kubectl create token``.

kubectl's typed clients send ``application/vnd.kubernetes.protobuf``: the magic ``k8s\\x00``, then a
``runtime.Unknown`` message {typeMeta {apiVersion, kind}, raw, contentEncoding, contentType} whose ``raw``
is the object's own message. ``decode`` turns a TokenRequest body into the JSON shape the rest of the
emulator reads (``metadata.name``/``namespace``, ``spec.audiences``, ``spec.expirationSeconds``,
``spec.boundObjectRef``); any other kind is refused with ``ValueError`` and the server answers 415, as
it does for every protobuf body (the emulator speaks JSON).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

MEDIA_TYPE = "application/vnd.kubernetes.protobuf"
MAGIC = b"k8s\x00"

# Field numbers (k8s.io/api/authentication/v1/generated.proto, apimachinery's generated.proto).
_UNKNOWN_TYPE_META, _UNKNOWN_RAW = 1, 2
_TYPE_META_API_VERSION, _TYPE_META_KIND = 1, 2
_OBJECT_META_NAME, _OBJECT_META_NAMESPACE = 1, 3
_TOKEN_REQUEST_METADATA, _TOKEN_REQUEST_SPEC = 1, 2
_SPEC_AUDIENCES, _SPEC_BOUND_OBJECT_REF, _SPEC_EXPIRATION_SECONDS = 1, 3, 4
_REF_FIELDS = {1: "kind", 2: "apiVersion", 3: "name", 4: "uid"}


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if pos >= len(data):
            raise ValueError("truncated varint")
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value, pos
        shift += 7
        if shift > 63:
            raise ValueError("varint too long")


def fields(data: bytes) -> Iterator[tuple[int, int | bytes]]:
    """(field number, value) of each field of one message: an int for varints, bytes otherwise."""
    pos = 0
    while pos < len(data):
        key, pos = _varint(data, pos)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = _varint(data, pos)
            yield number, value
        elif wire == 2:
            length, pos = _varint(data, pos)
            if pos + length > len(data):
                raise ValueError("truncated field")
            yield number, data[pos : pos + length]
            pos += length
        elif wire in (1, 5):
            size = 8 if wire == 1 else 4
            yield number, data[pos : pos + size]
            pos += size
        else:
            raise ValueError(f"unsupported wire type {wire}")


def _text(value: int | bytes) -> str:
    if not isinstance(value, bytes):
        raise ValueError("expected a string field")
    return value.decode("utf-8")


def _message(value: int | bytes) -> bytes:
    if not isinstance(value, bytes):
        raise ValueError("expected a message field")
    return value


def unwrap(body: bytes) -> tuple[str, str, bytes]:
    """(apiVersion, kind, raw object message) of a protobuf request body."""
    if not body.startswith(MAGIC):
        raise ValueError("not a Kubernetes protobuf body (no k8s\\x00 prefix)")
    api_version = kind = ""
    raw = b""
    for number, value in fields(body[len(MAGIC) :]):
        if number == _UNKNOWN_TYPE_META:
            for n, v in fields(_message(value)):
                if n == _TYPE_META_API_VERSION:
                    api_version = _text(v)
                elif n == _TYPE_META_KIND:
                    kind = _text(v)
        elif number == _UNKNOWN_RAW:
            raw = _message(value)
    return api_version, kind, raw


def _token_request(raw: bytes) -> dict[str, Any]:
    metadata: dict[str, Any] = {}
    spec: dict[str, Any] = {}
    for number, value in fields(raw):
        if number == _TOKEN_REQUEST_METADATA:
            for n, v in fields(_message(value)):
                if n == _OBJECT_META_NAME and _text(v):
                    metadata["name"] = _text(v)
                elif n == _OBJECT_META_NAMESPACE and _text(v):
                    metadata["namespace"] = _text(v)
        elif number == _TOKEN_REQUEST_SPEC:
            for n, v in fields(_message(value)):
                if n == _SPEC_AUDIENCES:
                    spec.setdefault("audiences", []).append(_text(v))
                elif n == _SPEC_EXPIRATION_SECONDS:
                    if not isinstance(v, int):
                        raise ValueError("expirationSeconds is not a varint")
                    spec["expirationSeconds"] = v - (1 << 64) if v >= 1 << 63 else v
                elif n == _SPEC_BOUND_OBJECT_REF:
                    spec["boundObjectRef"] = {
                        _REF_FIELDS[rn]: _text(rv) for rn, rv in fields(_message(v)) if rn in _REF_FIELDS
                    }
    return {
        "apiVersion": "authentication.k8s.io/v1",
        "kind": "TokenRequest",
        "metadata": metadata,
        "spec": spec,
    }


def decode(body: bytes) -> dict[str, Any]:
    """The JSON shape of a protobuf ``TokenRequest`` body; ``ValueError`` for anything else."""
    api_version, kind, raw = unwrap(body)
    if (api_version, kind) != ("authentication.k8s.io/v1", "TokenRequest"):
        raise ValueError(f"the emulator reads no protobuf {api_version} {kind}")
    return _token_request(raw)
