"""What the journal may keep of a record's body: Secret material and credentials never reach the disk.

Applied inside every append, whatever the caller already did (defence in depth):

* an observed Secret keeps its metadata but loses ``data``, ``stringData`` and the last-applied
  annotation (``records.redact``);
* any other record (decisions, effects, effect results, timers) is scrubbed throughout: every mapping
  whose ``kind`` is ``Secret`` loses its payload, and every key that names a credential (a token, a JIT
  runner config, a private key, a password) is dropped wherever it appears.

Scrubbing walks the body only when its JSON text mentions one of those names, so the common case costs a
few substring searches.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from store import records
from store.records import JsonObject, Record, RecordType

encode = json.JSONEncoder(separators=(",", ":"), allow_nan=False).encode

_CREDENTIAL_KEYS = frozenset(
    {"jitconfig", "encodedjitconfig", "runnerjitconfig", "privatekey", "githubappprivatekey", "password"}
)
_CREDENTIAL_SUFFIXES = ("token", "jitconfig", "privatekey", "password", "clientsecret")
_HINTS = ("secret", "token", "jit", "private", "password")
_NOT_LETTERS = re.compile(r"[^a-z]")


def is_credential(key: str) -> bool:
    """Whether a body key names secret material (``token``, ``accessToken``, ``encoded_jit_config``…)."""
    bare = _NOT_LETTERS.sub("", key.lower())
    return bare in _CREDENTIAL_KEYS or bare.endswith(_CREDENTIAL_SUFFIXES)


def scrub(value: Any) -> Any:
    """``value`` without Secret payloads and credential keys, at any depth."""
    if isinstance(value, Mapping):
        kept = {k: scrub(v) for k, v in value.items() if not (isinstance(k, str) and is_credential(k))}
        if kept.get("kind") == "Secret":
            for name in records.SECRET_FIELDS:
                kept.pop(name, None)
        return kept
    if isinstance(value, list | tuple):
        return [scrub(v) for v in value]
    return value


def for_journal(record: Record) -> tuple[JsonObject, str]:
    """The body the journal keeps for ``record``, and its JSON text.

    Raises ``TypeError``/``ValueError`` when the body is not JSON (a set, NaN, an object).
    """
    body = record.body
    if record.type is RecordType.OBSERVED:
        if record.kind == "Secret" and isinstance(body.get("object"), Mapping):
            body = {**body, "object": records.redact(record.kind, body["object"])}
        return body, encode(body)
    text = encode(body)
    lowered = text.lower()
    if any(hint in lowered for hint in _HINTS):
        body = scrub(body)
        text = encode(body)
    return body, text
