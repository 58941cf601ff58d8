"""The types server-side apply merges and tracks fields by: for every served kind, a tree of ``Shape`` s
saying which maps are granular or atomic and which lists are atomic, sets or associative lists with
key fields (structured-merge-diff's schema).

Custom resources take theirs from the CRD's ``openAPIV3Schema`` (``x-kubernetes-list-type``,
``x-kubernetes-list-map-keys``, ``x-kubernetes-map-type``; a list without a list type is atomic, as
for CRDs upstream). Built-in kinds take theirs from the ``patchMergeKey`` tables of strategic merge
(``sim.strategic.LIST_MERGE_KEYS``: a merge key makes an associative list, a merged list of scalars a
set), with the few lists whose apply keys are wider than their merge key (container ports and Service
ports are keyed by port and protocol, protocol defaulting to TCP), ``status.conditions`` keyed by type on
every kind, and the structs tagged atomic (label selectors of the workloads, role references). Every
field the tables do not name is *deduced*, as structured-merge-diff does for an unknown type: maps are
granular (their fields taken as a struct's), lists atomic.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from sim import strategic
from sim.kinds import Kind

MAP = "map"
LIST = "list"
SCALAR = "scalar"
DEDUCED = "deduced"

ATOMIC = "atomic"
SET = "set"
ASSOCIATIVE = "map"


@dataclass
class Shape:
    kind: str = DEDUCED
    fields: dict[str, Shape] = field(default_factory=dict)
    # Map values not among ``fields`` / list items; None for a map: deduced.
    elem: Shape | None = None
    atomic: bool = False
    list_type: str = ATOMIC
    keys: tuple[str, ...] = ()
    key_defaults: dict[str, Any] = field(default_factory=dict)

    def child(self, name: str) -> tuple[Shape, bool]:
        """The shape of a map's field and whether it is declared (not a map value or deduced)."""
        declared = self.fields.get(name)
        if declared is not None:
            return declared, True
        if self.elem is None:
            # A deduced field: taken as a struct field (built-ins' tables name only lists and atomics).
            return DEDUCED_SHAPE, True
        return self.elem, False

    def item(self) -> Shape:
        return self.elem or DEDUCED_SHAPE


DEDUCED_SHAPE = Shape()


# -- built-in kinds -------------------------------------------------------------------------------------

# Lists whose apply keys (x-kubernetes-list-map-keys) are wider than their strategic merge key.
_WIDER_KEYS: dict[str, tuple[tuple[str, ...], dict[str, Any]]] = {
    "containerPort": (("containerPort", "protocol"), {"protocol": "TCP"}),
}
_SERVICE_PORTS = (("port", "protocol"), {"protocol": "TCP"})

# Lists keyed for apply on every built-in kind served, whether or not strategic merge lists them (every
# served kind's ``status.conditions`` is ``+listType=map`` keyed by ``type``).
_EVERY_KIND: dict[str, str] = {"status.conditions": "type"}

# Structs tagged ``+structType=atomic`` (owned and replaced whole), by kind.
_ATOMIC_STRUCTS: dict[str, tuple[str, ...]] = {
    "Deployment": ("spec.selector",),
    "ReplicaSet": ("spec.selector",),
    "StatefulSet": ("spec.selector",),
    "PodDisruptionBudget": ("spec.selector",),
    "RoleBinding": ("roleRef",),
    "ClusterRoleBinding": ("roleRef",),
}


def _walk(root: Shape, dotted: str) -> Shape:
    """The node at ``a.b[].c``, made granular maps (and list items) on the way."""
    node = root
    for seg in dotted.split("."):
        is_items = seg.endswith("[]")
        name = seg[:-2] if is_items else seg
        node.kind = MAP
        nxt = node.fields.get(name)
        if nxt is None:
            nxt = node.fields[name] = Shape()
        node = nxt
        if is_items:
            node.kind = LIST
            if node.elem is None:
                node.elem = Shape()
            node = node.elem
    return node


def _builtin(kind_name: str) -> Shape:
    root = Shape(kind=MAP)
    tables = {**_EVERY_KIND, **strategic.LIST_MERGE_KEYS["*"], **strategic.LIST_MERGE_KEYS.get(kind_name, {})}
    for dotted, merge_key in tables.items():
        node = _walk(root, dotted)
        node.kind = LIST
        if node.elem is None:
            node.elem = Shape()
        if not merge_key:
            node.list_type = SET
            continue
        node.list_type = ASSOCIATIVE
        node.keys, defaults = _WIDER_KEYS.get(merge_key, ((merge_key,), {}))
        if kind_name == "Service" and dotted == "spec.ports":
            node.keys, defaults = _SERVICE_PORTS
        node.key_defaults = dict(defaults)
    for dotted in _ATOMIC_STRUCTS.get(kind_name, ()):
        node = _walk(root, dotted)
        node.kind, node.atomic = MAP, True
    return root


# -- custom resources -----------------------------------------------------------------------------------


def _from_schema(schema: Mapping[str, Any]) -> Shape:
    type_ = schema.get("type")
    preserve = schema.get("x-kubernetes-preserve-unknown-fields") is True
    props = schema.get("properties")
    additional = schema.get("additionalProperties")
    if type_ == "array":
        items = schema.get("items")
        shape = Shape(kind=LIST, elem=_from_schema(items) if isinstance(items, Mapping) else Shape())
        list_type = schema.get("x-kubernetes-list-type")
        if list_type in (SET, ASSOCIATIVE):
            shape.list_type = list_type
        keys = tuple(schema.get("x-kubernetes-list-map-keys") or ())
        if shape.list_type == ASSOCIATIVE:
            shape.keys = keys
            elem_fields = shape.item().fields
            shape.key_defaults = {
                k: (elem_fields[k].key_defaults.get("") if k in elem_fields else None)
                for k in keys
                if k in elem_fields and "" in elem_fields[k].key_defaults
            }
        return shape
    if type_ == "object" or isinstance(props, Mapping) or additional is not None:
        shape = Shape(kind=MAP)
        if isinstance(props, Mapping):
            shape.fields = {k: _from_schema(v) for k, v in props.items() if isinstance(v, Mapping)}
        if isinstance(additional, Mapping):
            shape.elem = _from_schema(additional)
        elif not preserve and not isinstance(props, Mapping) and additional is None:
            shape.elem = None  # an object with nothing declared: deduced below
        shape.atomic = schema.get("x-kubernetes-map-type") == ATOMIC
        if schema.get("x-kubernetes-embedded-resource") is True:
            shape.fields.setdefault("metadata", _object_meta())
        return shape
    if type_ is None and not schema.get("x-kubernetes-int-or-string"):
        return Shape()  # untyped (preserve-unknown-fields or anything): deduced
    shape = Shape(kind=SCALAR)
    if "default" in schema:
        shape.key_defaults = {"": schema["default"]}  # used when the scalar is a list key
    return shape


def _object_meta() -> Shape:
    return _builtin("").fields["metadata"]


_cache: dict[tuple[str, int], Shape] = {}


def for_kind(kind: Kind) -> Shape:
    """The root shape of a kind's objects (computed once per kind and schema)."""
    cache_key = (kind.kind, id(kind.schema))
    shape = _cache.get(cache_key)
    if shape is None:
        if kind.schema is not None:
            shape = _from_schema(kind.schema)
            shape.kind = MAP
            shape.fields["metadata"] = _object_meta()
        else:
            shape = _builtin(kind.kind)
        _cache[cache_key] = shape
    return shape
