"""Unknown fields of a built-in object, as kube-apiserver's decoder finds them: a field its Go type does
not have is dropped, and reported (``unknown field "spec.containers[0].bogus"``) to a request that asks
for ``fieldValidation`` Strict (400) or Warn (a warning).

``unknown(group, version, kind, obj)`` walks ``obj`` over the kind's schema (``sim.builtinschemas``) and
returns the object without the unknown fields and their paths, in the order they appear (for a merge or
strategic merge patch, its ``$`` directives are not fields). A kind the
client has no model of is returned as it is. Free-form fields (``object`` in the client: int-or-string,
raw extensions) and map values are not looked into.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sim import builtinschemas

Schema = Mapping[str, Any]
_REF = "#/components/schemas/"


def _resolve(schema: Schema, schemas: Mapping[str, Schema]) -> Schema:
    while True:
        if "$ref" in schema:
            schema = schemas.get(str(schema["$ref"]).removeprefix(_REF), {})
        elif len(schema.get("allOf") or ()) == 1:
            schema = schema["allOf"][0]
        else:
            return schema


class _Walk:
    def __init__(self, schemas: Mapping[str, Schema], *, patch: bool) -> None:
        self.schemas = schemas
        self.patch = patch
        self.found: list[str] = []

    def value(self, value: Any, schema: Schema, path: str) -> Any:
        schema = _resolve(schema, self.schemas)
        properties = schema.get("properties")
        if isinstance(value, dict) and properties is not None:
            out = {}
            for key, item in value.items():
                where = f"{path}.{key}" if path else key
                known = properties.get(key)
                if known is None and self.patch and key.startswith("$"):
                    out[key] = item  # a strategic merge patch directive ($patch, $setElementOrder/…)
                elif known is None:
                    self.found.append(where)
                else:
                    out[key] = self.value(item, known, where)
            return out
        items = schema.get("items")
        if isinstance(value, list) and items is not None:
            return [self.value(item, items, f"{path}[{i}]") for i, item in enumerate(value)]
        return value


def unknown(group: str, version: str, kind: str, obj: Any, *, patch: bool = False) -> tuple[Any, list[str]]:
    """``obj`` without the fields its kind does not have, and their paths. With ``patch``, ``obj`` is a
    merge or strategic merge patch: its ``$`` directives are kept."""
    root = builtinschemas.root_name(group, version, kind)
    if not root:
        return obj, []
    walk = _Walk(builtinschemas.components(group, version, kind), patch=patch)
    pruned = walk.value(obj, walk.schemas[root], "")
    return (pruned if walk.found else obj), walk.found
