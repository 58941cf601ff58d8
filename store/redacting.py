"""What the journal may keep of a record's body: Secret material and credentials never reach the disk.

Applied inside every append, whatever the caller already did (defence in depth):

* an observed Secret keeps its metadata but loses ``data``, ``stringData`` and the last-applied
  annotation (``records.redact``);
* any other record (decisions, effects, effect results, timers) is scrubbed throughout: every mapping
  whose ``kind`` is ``Secret`` loses its payload, and every key that names a credential (a token, a JIT
  runner config, a private key, a password) is dropped wherever it appears;
* in every record, a config URL (``githubConfigUrl``, and the ``config_url`` an effect carries) keeps its
  user info masked: ``https://user:password@host/org`` is kept as ``https://***@host/org``, in the
  object and in the last-applied annotation kubectl writes beside it (``mask_user_info``). arcsm refuses
  a config URL with credentials, and the masked one is refused alike, so what is decided from the
  journal (live, and in a replay) is what would have been decided from the URL as written; other URLs
  (a runner's environment) are the user's to keep as they wrote them and are left alone.

Scrubbing walks the body only when its JSON text shows it may hold one of those (``may_hold_secret``),
so the common case costs a few substring searches: a text that names no ``"Secret"`` beside a ``"data"``
or ``"stringData"`` key, has no escape, and in whose letters no credential key's ending stands, holds
nothing the scrub would drop; one that names no config URL key or has no ``@`` holds no user info to
mask.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from statemachines.jsonvalues import JsonObject
from store import records
from store.records import Record, RecordType

encode = json.JSONEncoder(separators=(",", ":"), allow_nan=False).encode

_CREDENTIAL_KEYS = frozenset(
    {"jitconfig", "encodedjitconfig", "runnerjitconfig", "privatekey", "githubappprivatekey", "password"}
)
_CREDENTIAL_SUFFIXES = ("token", "jitconfig", "privatekey", "password", "clientsecret")
_NOT_LETTERS = re.compile(r"[^a-z]")
# Every credential key's letters end with one of the suffixes, so they stand in the letters of its text.
_ENDINGS = tuple(suffix.encode() for suffix in _CREDENTIAL_SUFFIXES)
_NOT_LETTER_BYTES = bytes(byte for byte in range(256) if not b"a"[0] <= byte <= b"z"[0])
_SECRET_KIND = '"Secret"'
_SECRET_FIELDS = tuple(f'"{name}"' for name in records.SECRET_FIELDS)


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


MASK = "***"
CONFIG_URL_KEYS = frozenset({"githubConfigUrl", "config_url"})
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"


def without_user_info(url: str) -> str:
    """``url`` with the user info of its authority (what stands before an ``@`` ahead of the path)
    replaced by ``***``; ``url`` itself when it has none."""
    start = url.find("://")
    start = 0 if start < 0 else start + 3
    end = len(url)
    for delimiter in "/?#":
        found = url.find(delimiter, start)
        if found >= 0:
            end = min(end, found)
    at = url.rfind("@", start, end)
    return url if at < 0 else url[:start] + MASK + url[at:]


def may_hold_user_info(text: str) -> bool:
    """Whether ``mask_user_info`` may change the body whose JSON text is ``text``."""
    return "@" in text and any(key in text for key in CONFIG_URL_KEYS)


def mask_user_info(value: Any) -> Any:
    """``value`` with every config URL's user info masked (``without_user_info``), at any depth, also
    in a last-applied annotation (JSON text)."""
    if isinstance(value, Mapping):
        return {k: _masked(k, v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [mask_user_info(v) for v in value]
    return value


def _masked(key: Any, value: Any) -> Any:
    if not isinstance(value, str):
        return mask_user_info(value)
    if key in CONFIG_URL_KEYS:
        return without_user_info(value)
    if key == LAST_APPLIED and may_hold_user_info(value):
        try:
            applied = json.loads(value)
        except ValueError:
            return MASK  # not JSON: kept as nothing rather than with a password in it
        masked = mask_user_info(applied)
        if masked == applied:
            return value
        return encode(masked) + ("\n" if value.endswith("\n") else "")
    return value


def may_hold_secret(text: str) -> bool:
    """Whether ``scrub`` may change the body whose JSON text (``encode``: ASCII only) is ``text``; False
    only when it certainly does not.

    A mapping the scrub empties of a payload has a ``"kind"`` of ``"Secret"`` and a ``"data"`` or
    ``"stringData"`` key, which stand in the text as they are. A text with a backslash (an escaped quote
    or control character, any character beyond ASCII) is scrubbed. In one without, every key is printable
    ASCII written as it is: a credential key's letters, lowered, end with one of
    ``_CREDENTIAL_SUFFIXES``, so the ending stands among the text's letters too; only when one does are
    the keys read out (every quote delimits a string, and a key is a string a colon follows) and asked.
    """
    if _SECRET_KIND in text and any(name in text for name in _SECRET_FIELDS):
        return True
    if "\\" in text:
        return True
    letters = text.encode("ascii").lower().translate(None, _NOT_LETTER_BYTES)
    for ending in _ENDINGS:
        if ending in letters:
            break
    else:
        return False
    parts = text.split('"')
    return any(
        is_credential(parts[i]) for i in range(1, len(parts) - 1, 2) if parts[i + 1].lstrip().startswith(":")
    )


def for_journal(record: Record) -> tuple[JsonObject, str]:
    """The body the journal keeps for ``record``, and its JSON text.

    Raises ``TypeError``/``ValueError`` when the body is not JSON (a set, NaN, an object).
    """
    body = record.body
    if record.type is RecordType.OBSERVED:
        if record.kind == "Secret" and isinstance(body.get("object"), Mapping):
            body = {**body, "object": records.redact(record.kind, body["object"])}
        return _without_user_info(body, encode(body))
    text = encode(body)
    if may_hold_secret(text):
        body = scrub(body)
        text = encode(body)
    return _without_user_info(body, text)


def _without_user_info(body: JsonObject, text: str) -> tuple[JsonObject, str]:
    if not may_hold_user_info(text):
        return body, text
    masked: JsonObject = mask_user_info(body)
    return (body, text) if masked == body else (masked, encode(masked))
