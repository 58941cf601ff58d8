"""Field paths and field sets as server-side apply records them (structured-merge-diff's ``fieldpath``).

A path element is kept as the string ``FieldsV1`` uses for it: ``f:<name>`` (a field of a map),
``k:<json object>`` (the item of an associative list with those key fields), ``v:<json value>`` (the item
of a set list) or ``i:<index>``. A path is a tuple of them and a field set is a ``frozenset`` of paths.

``to_fields_v1`` and ``from_fields_v1`` convert a set to and from the ``fieldsV1`` trie of a
``managedFields`` entry (a node that is itself in the set and has children carries ``".": {}``);
``render`` writes a path as the conflict messages of kube-apiserver show it (``.spec.containers[name="a"]``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

Path = tuple[str, ...]
FieldSet = frozenset[Path]

EMPTY: FieldSet = frozenset()

# structured-merge-diff orders the children of a node by the element's type, then its value.
_RANK = {"f": 0, "k": 1, "v": 2, "i": 3}


# One encoder for every element: ``json.dumps`` with options builds a new one per call, and an
# associative list's items are keyed on every write that compares an object.
_compact = json.JSONEncoder(separators=(",", ":"), sort_keys=True, ensure_ascii=False).encode


def field(name: str) -> str:
    return "f:" + name


def key(fields: Mapping[str, Any]) -> str:
    return "k:" + _compact(dict(fields))


def value(item: Any) -> str:
    return "v:" + _compact(item)


def order(pe: str) -> tuple[int, str]:
    return _RANK.get(pe[:1], 9), pe


def to_fields_v1(paths: Iterable[Path]) -> dict[str, Any]:
    """The ``fieldsV1`` trie of a field set."""
    members: set[Path] = set()
    root: dict[str, Any] = {}
    for path in paths:
        members.add(path)
        node = root
        for pe in path:
            node = node.setdefault(pe, {})

    def encode(node: dict[str, Any], prefix: Path) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if node and prefix in members:
            out["."] = {}
        for pe in sorted(node, key=order):
            out[pe] = encode(node[pe], (*prefix, pe))
        return out

    return encode(root, ())


def _check_element(pe: str) -> None:
    kind, _, text = pe.partition(":")
    if kind == "f" and _:
        return
    try:
        if kind == "k" and isinstance(json.loads(text), dict):
            return
        if kind == "v":
            json.loads(text)
            return
        if kind == "i" and int(text) >= 0:
            return
    except ValueError:
        pass
    raise ValueError(f"unrecognized path element {pe!r}")


def from_fields_v1(trie: Any) -> FieldSet:
    """The field set of a ``fieldsV1`` trie; ValueError when it is not one."""
    out: set[Path] = set()

    def decode(node: Any, prefix: Path) -> None:
        if not isinstance(node, dict):
            raise ValueError("a fieldsV1 node must be an object")
        if not node and prefix:
            out.add(prefix)
        for pe, child in node.items():
            if pe == ".":
                if prefix:
                    out.add(prefix)
                continue
            _check_element(pe)
            decode(child, (*prefix, pe))

    decode(trie, ())
    return frozenset(out)


def _render_element(pe: str) -> str:
    kind, _, text = pe.partition(":")
    if kind == "f":
        return "." + text
    if kind == "k":
        fields = json.loads(text)
        return "[" + ",".join(f"{k}={_compact(v)}" for k, v in sorted(fields.items())) + "]"
    if kind == "v":
        return "[=" + text + "]"
    return "[" + text + "]"


def render(path: Path) -> str:
    """``.spec.containers[name="main"].image`` (structured-merge-diff's ``Path.String``)."""
    return "".join(_render_element(pe) for pe in path)


def under(paths: Iterable[Path], prefix: Path) -> FieldSet:
    """The paths at or below ``prefix``."""
    n = len(prefix)
    return frozenset(p for p in paths if p[:n] == prefix)


def prefixes(paths: Iterable[Path]) -> frozenset[Path]:
    """Every proper and improper prefix of the paths (the nodes that have something in the set below)."""
    return frozenset(p[:i] for p in paths for i in range(1, len(p) + 1))
