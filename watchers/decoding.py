"""The API server's JSON as the watchers decode it: equal to ``json.loads``'s, with its strings shared.

Every object a watcher decodes is what the controller keeps in memory (the projection's latest object,
the watcher's cache and the journal's tail all hold that one object), and ``json.loads`` gives each
object its own copy of every key (``metadata``, ``lastTransitionTime``, ``imagePullPolicy``…) and of
every short value (``True``, ``Running``, a namespace, an image, a timestamp). Decoded here, an
object's keys and short string values are taken from a table of the strings recently decoded, so a
thousand Pods hold one ``"terminationMessagePolicy"``: a decoded Pod or EphemeralRunner takes less
than half the memory, for a decode 1.1–1.4× as long.

Rules: the result is equal to ``json.loads``'s, key order included (a repeated key keeps its first place
and its last value, as ``json.loads`` builds it), so what is journaled and every decision stay the same.
The table is bounded (``SHARED_STRINGS``; emptied when full, after which the strings in use come back at
once): it never keeps a deleted object's names alive, as ``sys.intern`` would on Pythons that make
interned strings immortal. It is one table per process, touched only by the event loop's thread.
"""

from __future__ import annotations

import json
from typing import Any, Final

# Values up to this length are shared: names, namespaces, phases, images, timestamps. Longer ones (a
# template's command line, a message) are rarely repeated and are left as decoded.
SHARED_VALUE_LENGTH: Final = 64
# At most this many distinct strings in the table (about 0.7 MB of strings and table at most).
SHARED_STRINGS: Final = 8192

_table: dict[str, str] = {}


def _shared(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    table, limit = _table, SHARED_VALUE_LENGTH
    if len(table) > SHARED_STRINGS:
        table.clear()
    share = table.setdefault
    out: dict[str, Any] = {}
    for key, value in pairs:
        out[share(key, key)] = share(value, value) if type(value) is str and len(value) <= limit else value
    return out


def loads(text: str | bytes) -> Any:
    """``json.loads(text)`` with the keys and short string values of its objects shared; raises what
    ``json.loads`` raises for text that is not JSON."""
    return json.loads(text, object_pairs_hook=_shared)
