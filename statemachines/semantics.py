"""Semantic equality of Kubernetes objects, for drift checks that must not loop (spec §4.12).

An object read back from the API server is not byte-identical to the one a controller wrote: Go writers
drop empty collections (``omitempty``), quantities come back in another spelling (``1000m`` for ``1``)
and a template's ``creationTimestamp: null`` appears from nowhere. A strict comparison would report
drift on every pass; for the runner spec that means a revision bump and every idle runner deleted,
forever (seed C3).

``normalise`` removes those differences: keys whose value is ``None``, ``""``, ``[]`` or ``{}`` are
dropped (recursively, so a mapping that only held empties goes too), while ``0`` and ``false`` are kept
because several pod fields are pointers where zero is not absent. Values in quantity positions
(``resources.limits``/``requests``, ``overhead``, ``sizeLimit``) become exact ``Decimal``s. List order is
kept. ``semantic_equal`` compares two normalised values, and a bool never equals a number.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from decimal import Decimal, InvalidOperation
from typing import Any

# Mappings whose values are all quantities, and keys whose value is one.
QUANTITY_MAPS = frozenset({"limits", "requests", "overhead"})
QUANTITY_KEYS = frozenset({"sizeLimit"})

_BINARY = {"Ki": 1, "Mi": 2, "Gi": 3, "Ti": 4, "Pi": 5, "Ei": 6}
_DECIMAL = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_NUMBER = re.compile(r"^([+-]?(?:\d+(?:\.\d*)?|\.\d+))(.*)$")
_EXPONENT = re.compile(r"^[eE]([+-]?\d+)$")


def parse_quantity(value: object) -> Decimal | None:
    """A Kubernetes quantity (``"1.5Gi"``, ``"500m"``, ``"1e3"``, ``2``) as an exact Decimal, else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return Decimal(str(value))
    if not isinstance(value, str):
        return None
    match = _NUMBER.match(value.strip())
    if match is None:
        return None
    try:
        number = Decimal(match.group(1))
    except InvalidOperation:
        return None
    suffix = match.group(2)
    if suffix in _BINARY:
        return number * Decimal(1024 ** _BINARY[suffix])
    if suffix in _DECIMAL:
        return number.scaleb(_DECIMAL[suffix])
    exponent = _EXPONENT.match(suffix)
    if exponent is not None:
        return number.scaleb(int(exponent.group(1)))
    return None


def _is_empty(value: object) -> bool:
    return value is None or (isinstance(value, str | list | dict) and not value)


def _quantity(value: object) -> object:
    parsed = parse_quantity(value)
    return value if parsed is None else parsed


def normalise(value: object, *, quantity: bool = False) -> Any:
    """``value`` with empties dropped and quantities made exact (see the module docstring)."""
    if isinstance(value, Mapping):
        out: dict[str, Any] = {}
        for key, item in value.items():
            if key in QUANTITY_MAPS and isinstance(item, Mapping):
                normal = {k: _quantity(v) for k, v in item.items() if not _is_empty(v)}
            else:
                normal = normalise(item, quantity=key in QUANTITY_KEYS)
            if not _is_empty(normal):
                out[str(key)] = normal
        return out
    if isinstance(value, list | tuple):
        return [normalise(item) for item in value]
    if quantity:
        return _quantity(value)
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def _same(a: object, b: object) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return (
            isinstance(b, list) and len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
        )
    if isinstance(a, Decimal) != isinstance(b, Decimal):
        return False
    return a == b


def semantic_equal(a: object, b: object) -> bool:
    """Whether ``a`` and ``b`` are the same object once written to and read back from the API server."""
    left, right = normalise(a), normalise(b)
    return _same(None if _is_empty(left) else left, None if _is_empty(right) else right)


def _plain(value: object) -> str:
    if isinstance(value, Decimal):
        return format(value.normalize(), "f")
    raise TypeError(f"{type(value).__name__} is not JSON")


def canonical(value: object) -> str:
    """``value`` normalised, as compact JSON with sorted keys: equal text for semantically equal values."""
    return json.dumps(normalise(value), sort_keys=True, separators=(",", ":"), default=_plain)
