"""What kube-apiextensions-apiserver does with the structural ``openAPIV3Schema`` of a CRD version.

``StructuralSchema`` compiles the schema once (``sim.schemanodes``: patterns, defaults, list-type keys) and
offers the steps a custom-resource write goes through, in the order the API server runs them
(apiserver-semantics.md S62-S64):

``prune``     decode-time pruning of fields the schema does not know (``pruning/algorithm.go``), plus the
              ObjectMeta coercion of nested ``x-kubernetes-embedded-resource`` objects; returns the unknown
              field paths, sorted, the way the ``unknown field "..."`` warnings name them.
``default``   drop ``null`` s on non-nullable fields without a default, then apply ``default`` s
              (``defaulting/prunenulls.go`` and ``defaulting/algorithm.go``); also used on reads.
``validate``  the kube-openapi schema validator, then embedded-resource checks, then
              ``x-kubernetes-list-type`` set/map uniqueness, with kube's field paths and messages
              (``sim.schemachecks``).
``process``   all three.

Results share untouched subtrees with their input (nothing is deep-copied unless it changes): treat both as
immutable, or copy before mutating.

Known limits: nested embedded ObjectMeta is coerced (unknown and malformed fields dropped) but not
validated; for patterns see ``sim.schemanodes``, for validation ``sim.schemachecks``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from sim import errors, schemachecks, schemanodes

# Top-level (and embedded-resource) keys the pruner leaves to the ObjectMeta / TypeMeta handling.
_META_FIELDS = frozenset({"apiVersion", "kind", "metadata"})

# metav1.ObjectMeta's JSON fields and the shape each must have; anything else in an embedded resource's
# metadata is dropped by the coercion, as are fields of the wrong shape (dropInvalidFields).
_OBJECT_META_FIELDS: dict[str, str] = {
    "name": "str",
    "generateName": "str",
    "namespace": "str",
    "selfLink": "str",
    "uid": "str",
    "resourceVersion": "str",
    "generation": "int",
    "creationTimestamp": "str",
    "deletionTimestamp": "str",
    "deletionGracePeriodSeconds": "int",
    "labels": "strmap",
    "annotations": "strmap",
    "ownerReferences": "list",
    "finalizers": "strlist",
    "managedFields": "list",
}


# ---------------------------------------------------------------------------------------------------------
# Values


def _copy(value: Any) -> Any:
    """Deep copy of a JSON value (defaults are copied into every object they fill)."""
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy(v) for v in value]
    return value


# ---------------------------------------------------------------------------------------------------------
# Pruning and defaulting


def _coerce_object_meta(meta: dict[str, Any], path: schemanodes.Path, pruned: list[str]) -> dict[str, Any]:
    """ObjectMeta coercion of an embedded resource: keep ObjectMeta's fields of the right shape,
    drop the rest (reporting unknown ones), omit empty values and a null creationTimestamp."""
    out: dict[str, Any] = {}
    for key, value in meta.items():
        shape = _OBJECT_META_FIELDS.get(key)
        if shape is None:
            pruned.append(schemanodes.render(schemanodes.Path(path, key)))
            continue
        if value is None or value == "" or value == 0 or value == {} or value == []:
            continue
        if shape == "str":
            ok = isinstance(value, str)
        elif shape == "int":
            ok = isinstance(value, int) and not isinstance(value, bool)
        elif shape == "strmap":
            ok = isinstance(value, dict) and all(isinstance(v, str) for v in value.values())
        elif shape == "strlist":
            ok = isinstance(value, list) and all(isinstance(v, str) for v in value)
        else:
            ok = isinstance(value, list)
        if ok:
            out[key] = value
    return meta if out == meta else out


def _embedded_meta(key: str, value: Any, path: schemanodes.Path | None, pruned: list[str]) -> Any:
    """TypeMeta and ObjectMeta of an embedded resource are not pruned by the schema; nested metadata is
    coerced to ObjectMeta instead (the resource root's metadata is the server's business)."""
    if key == "metadata" and path is not None and isinstance(value, dict):
        return _coerce_object_meta(value, schemanodes.Path(path, key), pruned)
    return value


def _prune(x: Any, node: schemanodes.Node | None, path: schemanodes.Path | None, pruned: list[str]) -> Any:
    """pruning.prune; returns ``x`` itself when nothing below it was dropped."""
    if node is not None and node.preserve_unknown:
        return _skip_prune(x, node, path, pruned)
    if isinstance(x, dict):
        if node is None:
            for key in x:
                pruned.append(schemanodes.render(schemanodes.Path(path, key)))
            return {} if x else x
        new: dict[str, Any] | None = None
        for key, value in x.items():
            if node.embedded and key in _META_FIELDS:
                child: Any = _embedded_meta(key, value, path, pruned)
            elif key in node.properties:
                child = _prune(value, node.properties[key], schemanodes.Path(path, key), pruned)
            elif node.has_additional:
                child = _prune(
                    value, node.additional, schemanodes.Path(path, schemanodes.MapKey(key)), pruned
                )
            else:
                pruned.append(schemanodes.render(schemanodes.Path(path, key)))
                if new is None:
                    new = _upto(x, key)
                continue
            if new is not None:
                new[key] = child
            elif child is not value:
                new = _upto(x, key)
                new[key] = child
        return x if new is None else new
    if isinstance(x, list):
        items = node.items if node is not None else None
        return _map_list(x, lambda i, v: _prune(v, items, schemanodes.Path(path, i), pruned))
    return x


def _skip_prune(x: Any, node: schemanodes.Node, path: schemanodes.Path | None, pruned: list[str]) -> Any:
    """Below ``x-kubernetes-preserve-unknown-fields`` unknown keys stay, known ones are still pruned."""
    if isinstance(x, dict):
        new: dict[str, Any] | None = None
        for key, value in x.items():
            if node.embedded and key in _META_FIELDS:
                child: Any = _embedded_meta(key, value, path, pruned)
            elif key in node.properties:
                child = _prune(value, node.properties[key], schemanodes.Path(path, key), pruned)
            elif node.has_additional:
                child = _prune(
                    value, node.additional, schemanodes.Path(path, schemanodes.MapKey(key)), pruned
                )
            else:
                continue
            if child is not value:
                if new is None:
                    new = dict(x)
                new[key] = child
        return x if new is None else new
    if isinstance(x, list) and node.items is not None:
        items = node.items
        return _map_list(x, lambda i, v: _prune(v, items, schemanodes.Path(path, i), pruned))
    return x


def _upto(x: dict[str, Any], key: str) -> dict[str, Any]:
    """A new dict with the entries of ``x`` before ``key``."""
    out: dict[str, Any] = {}
    for k, v in x.items():
        if k == key:
            break
        out[k] = v
    return out


def _map_list(x: list[Any], fn: Callable[[int, Any], Any]) -> list[Any]:
    """``[fn(i, v) for ...]`` that returns ``x`` itself when every ``fn`` returned its argument."""
    new: list[Any] | None = None
    for i, value in enumerate(x):
        child = fn(i, value)
        if child is not value and new is None:
            new = list(x[:i])
        if new is not None:
            new.append(child)
    return x if new is None else new


def _default(x: Any, node: schemanodes.Node | None) -> Any:
    """PruneNonNullableNullsWithoutDefaults then Default, copy-on-write."""
    if node is None:
        return x
    if isinstance(x, dict):
        new: dict[str, Any] | None = None
        for key, value in x.items():
            child_node = node.child(key)
            if value is None and child_node is not None and not child_node.nullable:
                if new is None:
                    new = dict(x)
                if child_node.has_default:
                    new[key] = _copy(child_node.default)
                else:
                    del new[key]
        for key, prop in node.properties.items():
            if prop.has_default and key not in x:
                if new is None:
                    new = dict(x)
                new[key] = _copy(prop.default)
        current = x if new is None else new
        for key, value in current.items():
            child = _default(value, node.child(key))
            if child is not value:
                if new is None:
                    new = dict(x)
                new[key] = child
        return x if new is None else new
    if isinstance(x, list):
        items = node.items
        if items is None:
            return x

        def one(_: int, value: Any) -> Any:
            assert items is not None
            if value is None and not items.nullable and items.has_default:
                value = _copy(items.default)
            return _default(value, items)

        return _map_list(x, one)
    return x


# ---------------------------------------------------------------------------------------------------------


class StructuralSchema:
    """A CRD version's ``openAPIV3Schema``, compiled once; the methods never modify their argument."""

    def __init__(self, schema: Mapping[str, Any]) -> None:
        self._root = schemanodes.Node(schema)
        # The resource root is always treated as an embedded resource: apiVersion, kind and metadata are
        # the server's business (ObjectMeta is coerced and validated elsewhere).
        self._root.embedded = True

    def prune(self, obj: Mapping[str, Any]) -> tuple[dict[str, Any], list[str]]:
        """Drop the fields the schema does not specify; returns the object and the sorted dropped paths."""
        pruned: list[str] = []
        out = _prune(dict(obj), self._root, None, pruned)
        pruned.sort()
        return out, pruned

    def default(self, obj: Mapping[str, Any]) -> dict[str, Any]:
        """Drop nulls of non-nullable fields that have no default, then fill in defaults (S63)."""
        out: dict[str, Any] = _default(dict(obj), self._root)
        return out

    def validate(self, obj: Mapping[str, Any], *, root_path: str = "") -> list[errors.FieldError]:
        """Schema errors, then embedded-resource errors, then list-type errors, as kube orders them."""
        return schemachecks.validate(self._root, obj, root_path=root_path)

    def process(self, obj: Mapping[str, Any]) -> tuple[dict[str, Any], list[str], list[errors.FieldError]]:
        """A create/update body through decode (prune), defaulting and validation.

        Returns the object to store, the unknown field paths (``spec.x``; the caller words them as
        ``unknown field "spec.x"`` warnings or a strict-decoding error) and the validation errors.
        """
        pruned, unknown = self.prune(obj)
        defaulted = self.default(pruned)
        return defaulted, unknown, self.validate(defaulted)


def from_crd(crd: Mapping[str, Any]) -> dict[str, StructuralSchema]:
    """Version name → compiled schema, for every version of a CRD that carries one."""
    out: dict[str, StructuralSchema] = {}
    for version in (crd.get("spec") or {}).get("versions") or ():
        schema = (version.get("schema") or {}).get("openAPIV3Schema")
        if isinstance(schema, Mapping):
            out[version["name"]] = StructuralSchema(schema)
    return out
