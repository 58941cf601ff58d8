"""Kubernetes' protobuf encoding (``application/vnd.kubernetes.protobuf``) for the kinds of
``sim.protoschemas`` and the ``*messages`` modules: one generic decoder and encoder over those tables.

A body is the magic ``k8s\\x00``, then a ``runtime.Unknown`` message {typeMeta {apiVersion, kind}, raw,
contentEncoding, contentType} whose ``raw`` is the object's own message. ``decode`` turns such a body into
the JSON shape the rest of the emulator reads; ``encode`` does the reverse for an answer. Unknown field
numbers are skipped, as Go's decoder does; a malformed body or a kind outside the table is a
``ValueError`` (the server answers 400 or 415).
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

from sim import (
    appsmessages,
    nodemessages,
    podmessages,
    policymessages,
    protoschemas,
    servicemessages,
    storagemessages,
)
from sim.protoschemas import KINDS, Field

MESSAGES: dict[str, dict[int, Field]] = {
    **protoschemas.MESSAGES,
    **podmessages.MESSAGES,
    **appsmessages.MESSAGES,
    **servicemessages.MESSAGES,
    **storagemessages.MESSAGES,
    **policymessages.MESSAGES,
    **nodemessages.MESSAGES,
}
# Messages that are their one ``raw`` field in JSON (the field's JSON itself).
_RAW_JSON = {"FieldsV1": "Raw", "RawExtension": "raw"}

MEDIA_TYPE = "application/vnd.kubernetes.protobuf"
MAGIC = b"k8s\x00"


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
            if pos + size > len(data):
                raise ValueError("truncated field")
            yield number, data[pos : pos + size]
            pos += size
        else:
            raise ValueError(f"unsupported wire type {wire}")


# -- decoding -----------------------------------------------------------------------------------------


def _bytes(value: int | bytes) -> bytes:
    if not isinstance(value, bytes):
        raise ValueError("expected a length-delimited field")
    return value


def _int(value: int | bytes) -> int:
    if not isinstance(value, int):
        raise ValueError("expected a varint field")
    return value - (1 << 64) if value >= 1 << 63 else value


def _time_text(data: bytes, *, micro: bool = False) -> str | None:
    seconds = nanos = 0
    for number, value in fields(data):
        if number == 1:
            seconds = _int(value)
        elif number == 2:
            nanos = _int(value)
    if not data:
        return None  # a zero Time is sent empty: null in JSON
    text = datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%S")
    return f"{text}.{nanos // 1000:06d}Z" if micro else text + "Z"


def _int_or_string(data: bytes) -> int | str:
    kind = int_val = 0
    str_val = ""
    for number, value in fields(data):
        if number == 1:
            kind = _int(value)
        elif number == 2:
            int_val = _int(value)
        elif number == 3:
            str_val = _bytes(value).decode("utf-8")
    return str_val if kind == 1 else int_val


def _quantity(data: bytes) -> str:
    text = ""
    for number, value in fields(data):
        if number == 1:
            text = _bytes(value).decode("utf-8")
    return text


def _packed(value: int | bytes) -> list[int]:
    """A repeated integer sent packed (one length-delimited run of varints) or as one varint."""
    if isinstance(value, int):
        return [_int(value)]
    out, pos = [], 0
    while pos < len(value):
        item, pos = _varint(value, pos)
        out.append(_int(item))
    return out


def _scalar(f: Field, value: int | bytes) -> Any:
    shape = f.shape
    if shape == "str":
        return _bytes(value).decode("utf-8")
    if shape == "bytes":
        return base64.b64encode(_bytes(value)).decode()
    if shape == "int":
        return _int(value)
    if shape == "bool":
        return bool(_int(value))
    if shape in ("time", "microtime"):
        return _time_text(_bytes(value), micro=shape == "microtime")
    if shape == "quantity":
        return _quantity(_bytes(value))
    if shape == "intorstr":
        return _int_or_string(_bytes(value))
    if shape == "raw":
        return json.loads(_bytes(value)) if value else {}
    if shape == "msg":
        return decode_message(f.message, _bytes(value))
    raise ValueError(f"no decoding for shape {shape}")


def _map_value(shape: str, data: bytes) -> Any:
    if shape == "str":
        return data.decode("utf-8")
    if shape == "strs":  # ExtraValue {repeated string items = 1}
        return [_bytes(v).decode("utf-8") for n, v in fields(data) if n == 1]
    if shape == "quantity":
        return _quantity(data)
    if shape == "time":
        return _time_text(data)
    return base64.b64encode(data).decode()


def _map_entry(shape: str, value: Any) -> bytes:
    if shape == "str":
        return str(value).encode()
    if shape == "strs":
        return b"".join(_delimited(1, str(item).encode()) for item in value)
    if shape == "quantity":
        return _delimited(1, str(value).encode())
    if shape == "time":
        return _time_bytes(value)
    return base64.b64decode(value)


def _empty(value: Any) -> bool:
    return value is None or value == "" or value == 0 or value is False or value == {} or value == []


def decode_message(message: str, data: bytes) -> dict[str, Any]:
    """The JSON object of one message of the table; unknown field numbers are skipped."""
    schema = MESSAGES[message]
    out: dict[str, Any] = {}
    for number, value in fields(data):
        f = schema.get(number)
        if f is None:
            continue
        if f.shape == "map":
            key = val = b""
            for n, v in fields(_bytes(value)):
                if n == 1:
                    key = _bytes(v)
                elif n == 2:
                    val = _bytes(v)
            out.setdefault(f.name, {})[key.decode("utf-8")] = _map_value(f.message, val)
            continue
        if f.inline:
            out.update(decode_message(f.message, _bytes(value)))
            continue
        if f.repeated and f.shape == "int":
            out.setdefault(f.name, []).extend(_packed(value))
            continue
        decoded = _scalar(f, value)
        if f.repeated:
            out.setdefault(f.name, []).append(decoded)
        elif f.keep or not _empty(decoded):
            out[f.name] = decoded
        else:
            out.pop(f.name, None)
    if message in _RAW_JSON:
        raw: dict[str, Any] = out.get(_RAW_JSON[message], {})  # its JSON in JSON
        return raw
    return out


def unwrap(body: bytes) -> tuple[str, str, bytes]:
    """(apiVersion, kind, raw object message) of a protobuf body."""
    if not body.startswith(MAGIC):
        raise ValueError("not a Kubernetes protobuf body (no k8s\\x00 prefix)")
    api_version = kind = ""
    raw = b""
    for number, value in fields(body[len(MAGIC) :]):
        if number == 1:
            meta = decode_message("TypeMeta", _bytes(value))
            api_version, kind = meta.get("apiVersion", ""), meta.get("kind", "")
        elif number == 2:
            raw = _bytes(value)
    return api_version, kind, raw


def readable(api_version: str, kind: str) -> bool:
    return (api_version, kind) in KINDS


def decode(body: bytes) -> dict[str, Any]:
    """The JSON shape of a protobuf body; ``ValueError`` for a kind outside the table."""
    api_version, kind, raw = unwrap(body)
    message = KINDS.get((api_version, kind))
    if message is None:
        raise ValueError(f"the emulator reads no protobuf {api_version} {kind}")
    return {"apiVersion": api_version, "kind": kind, **decode_message(message, raw)}


# -- encoding -----------------------------------------------------------------------------------------


def _put_varint(value: int) -> bytes:
    if value < 0:
        value += 1 << 64
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _key(number: int, wire: int) -> bytes:
    return _put_varint(number << 3 | wire)


def _delimited(number: int, data: bytes) -> bytes:
    return _key(number, 2) + _put_varint(len(data)) + data


def _time_bytes(text: str) -> bytes:
    moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    seconds = int(moment.timestamp())
    nanos = moment.microsecond * 1000
    out = (_key(1, 0) + _put_varint(seconds)) if seconds else b""
    return out + (_key(2, 0) + _put_varint(nanos) if nanos else b"")


def _int_or_string_bytes(value: int | str) -> bytes:
    if isinstance(value, str):
        return _key(1, 0) + _put_varint(1) + _delimited(3, value.encode())
    return _key(1, 0) + _put_varint(0) + _key(2, 0) + _put_varint(int(value))


def _encode_value(f: Field, value: Any) -> bytes:
    shape = f.shape
    if shape == "str":
        return str(value).encode()
    if shape == "bytes":
        return base64.b64decode(value)
    if shape in ("time", "microtime"):
        return _time_bytes(value)
    if shape == "quantity":
        return _delimited(1, str(value).encode())
    if shape == "intorstr":
        return _int_or_string_bytes(value)
    if shape == "raw":
        return json.dumps(value, separators=(",", ":")).encode()
    if shape == "msg":
        if f.message in _RAW_JSON:
            value = {_RAW_JSON[f.message]: value}
        return encode_message(f.message, value)
    raise ValueError(f"no length-delimited encoding for shape {shape}")


def _encode_field(number: int, f: Field, value: Any) -> bytes:
    if f.shape in ("int", "bool"):
        return _key(number, 0) + _put_varint(int(value))
    return _delimited(number, _encode_value(f, value))


def encode_message(message: str, obj: dict[str, Any]) -> bytes:
    """One message of the table from its JSON object; JSON fields outside the table are left out."""
    out = bytearray()
    for number, f in sorted(MESSAGES[message].items()):
        if f.inline:
            out += _delimited(number, encode_message(f.message, obj))
            continue
        if f.name not in obj:
            continue
        value = obj[f.name]
        if value is None:
            if f.keep and f.shape in ("time", "microtime"):
                out += _delimited(number, b"")  # a zero Time Go always writes (null in JSON)
            continue
        if f.shape == "map":
            for key in sorted(value):
                entry = _map_entry(f.message, value[key])
                out += _delimited(number, _delimited(1, key.encode()) + _delimited(2, entry))
        elif f.repeated:
            for item in value:
                out += _encode_field(number, f, item)
        else:
            out += _encode_field(number, f, value)
    return bytes(out)


def encodable(obj: Any) -> bool:
    """Whether an answer is an object (or a list of objects) of a kind in the table."""
    if not isinstance(obj, dict):
        return False
    return (obj.get("apiVersion", ""), obj.get("kind", "")) in KINDS


def encode(obj: dict[str, Any]) -> bytes:
    """The protobuf body of an object of the table, in its ``runtime.Unknown`` envelope."""
    api_version, kind = obj["apiVersion"], obj["kind"]
    type_meta = _delimited(1, api_version.encode()) + _delimited(2, kind.encode())
    raw = encode_message(KINDS[(api_version, kind)], obj)
    return MAGIC + _delimited(1, type_meta) + _delimited(2, raw) + _delimited(3, b"") + _delimited(4, b"")
