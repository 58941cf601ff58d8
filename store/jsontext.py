"""JSON text to values, for the journal's readers: ``orjson`` where it reads a text as ``json`` does.

Every record read back (a journal row, an export line) is parsed once, and parsing is the largest cost
of reading a journal; ``orjson`` parses the same text two to three times faster. ``loads`` gives what
``json.loads`` gives, value for value and type for type, because it only lets ``orjson`` answer where
the two agree:

* ``orjson`` refuses what is not strict UTF-8 JSON (``NaN``, ``Infinity``, a number too large for a
  float, a lone surrogate, bytes in UTF-16), which ``json`` reads: a text ``orjson`` refuses is read
  again by ``json``, which gives its value or its own error;
* ``orjson`` reads an integer past 64 bits as a float, where ``json`` keeps it exact: a text that holds
  19 digits in a row (in a number or anywhere else) is read by ``json`` alone. Every integer of at most
  18 digits fits in 64 bits.

``loads_utf8`` is the same answer for a line of bytes a reader would decode as UTF-8 before ``loads``:
where ``orjson`` accepts the bytes they are UTF-8 (it checks), and it reads them as it reads their text,
so the line need not be decoded first; where it refuses them the caller reads them as before.
"""

from __future__ import annotations

import json
from typing import Any

import orjson

# Every byte but a digit to a space, every digit to "0": 19 digits in a row are 19 "0"s in a row.
_DIGITS = bytes(b"0"[0] if b"0"[0] <= byte <= b"9"[0] else b" "[0] for byte in range(256))
_LONG = b"0" * 19


class Refused(ValueError):
    """``loads_utf8`` leaves these bytes to the caller's own reading (``orjson`` alone cannot answer)."""


def loads_utf8(data: bytes) -> Any:
    """``json.loads(data.decode("utf-8"))`` by ``orjson`` alone; ``Refused`` when it cannot answer for
    certain (a text it refuses, bytes that are not UTF-8, or 19 digits in a row)."""
    if _LONG in data.translate(_DIGITS):
        raise Refused("19 digits in a row")
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise Refused(str(exc)) from None


def loads(text: str | bytes) -> Any:
    """``json.loads(text)``, faster (module docstring). Raises ``ValueError`` as ``json.loads`` does."""
    data = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text
    if _LONG not in data.translate(_DIGITS):
        try:
            return orjson.loads(text)
        except orjson.JSONDecodeError:
            pass
    return json.loads(text)
