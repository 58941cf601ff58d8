"""JSON merge patches (RFC 7386) built from the fields a decision changes.

A machine never deep-copies an observed object to diff it after mutation (the intent of the seed's
lazyCopy, C5). It builds the value it wants for a field and ``diff`` turns "this field, from what was
observed to what is wanted" into the smallest merge patch: changed keys carry their new value, removed
keys carry ``null``, unchanged keys are left out and lists are replaced whole, as a merge patch does.
``apply`` is the inverse, for tests and for reasoning: ``apply(before, diff(before, after)) == after``
whenever ``after`` holds no ``null``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def diff(before: Mapping[str, Any] | None, after: Mapping[str, Any] | None) -> dict[str, Any]:
    """The merge patch that turns ``before`` into ``after`` (``{}`` when they are equal)."""
    before, after = before or {}, after or {}
    patch: dict[str, Any] = {k: None for k in before if k not in after}
    for key, value in after.items():
        if key not in before:
            patch[key] = value
            continue
        old = before[key]
        if old == value and type(old) is type(value):
            continue
        if isinstance(old, Mapping) and isinstance(value, Mapping):
            nested = diff(old, value)
            if nested:
                patch[key] = nested
        else:
            patch[key] = value
    return patch


def apply(target: Mapping[str, Any] | None, patch: Mapping[str, Any]) -> dict[str, Any]:
    """``target`` with the merge patch ``patch`` applied; neither argument is modified."""
    out = dict(target or {})
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        elif isinstance(value, Mapping):
            current = out.get(key)
            out[key] = apply(current if isinstance(current, Mapping) else {}, value)
        else:
            out[key] = value
    return out
