"""Server-side apply's operations on JSON values along a ``sim.fieldtypes.Shape`` (structured-merge-diff's
``typed`` package): the field set of a value, the merge of an applied configuration into a live object,
the comparison of two objects (added, modified and removed fields) and the removal of fields.

The rules are structured-merge-diff's: a scalar, an atomic map or list, or a map or list empty on both
sides is a leaf; a granular map's fields and a set's or associative list's items are paths of their own;
an associative list item is named by its key fields (a missing key takes its default, else the item is
refused). The merged order of a list is upstream's: the live order, with the applied items placed where
the applied list puts them relative to the items both share.

Pure functions; they never modify their arguments.
"""

from __future__ import annotations

from typing import Any

from sim import errors
from sim.fieldpaths import FieldSet, Path
from sim.fieldpaths import field as fpe
from sim.fieldpaths import key as kpe
from sim.fieldpaths import value as vpe
from sim.fieldtypes import ASSOCIATIVE, LIST, MAP, SCALAR, SET, Shape


class _Missing:
    """An absent value (as opposed to JSON null)."""


MISSING: Any = _Missing()


def _granular_map(shape: Shape, v: Any) -> bool:
    return isinstance(v, dict) and shape.kind in (MAP, "deduced") and not shape.atomic


def _granular_list(shape: Shape, v: Any) -> bool:
    return isinstance(v, list) and shape.kind == LIST and shape.list_type in (SET, ASSOCIATIVE)


def item_element(shape: Shape, item: Any) -> str:
    """The path element of an item of a set or associative list; 400 when it cannot have one."""
    if shape.list_type == SET:
        if isinstance(item, (dict, list)):
            raise errors.bad_request("a set list may hold only scalars")
        return vpe(item)
    if not isinstance(item, dict):
        raise errors.bad_request("an associative list may hold only objects")
    fields: dict[str, Any] = {}
    for name in shape.keys:
        if name in item:
            fields[name] = item[name]
        elif name in shape.key_defaults:
            fields[name] = shape.key_defaults[name]
        else:
            raise errors.bad_request(
                f'associative list with keys has an element that omits key field "{name}" '
                "(and doesn't have default value)"
            )
    return kpe(fields)


def _elements(shape: Shape, items: list[Any], *, unique: bool) -> list[str]:
    pes = [item_element(shape, item) for item in items]
    if unique and len(set(pes)) != len(pes):
        seen: set[str] = set()
        for pe in pes:
            if pe in seen:
                raise errors.bad_request(f"duplicate entries for key {pe}")
            seen.add(pe)
    return pes


# -- field sets -----------------------------------------------------------------------------------------


def field_set(obj: Any, shape: Shape) -> FieldSet:
    """``ToFieldSet``: the leaves of a value, plus every list item and every map value not declared."""
    out: set[Path] = set()
    _to_set(obj, shape, (), out)
    return frozenset(out)


def _to_set(v: Any, shape: Shape, path: Path, out: set[Path]) -> None:
    if _granular_map(shape, v):
        for name, child in v.items():
            cshape, declared = shape.child(name)
            cpath = (*path, fpe(name))
            _to_set(child, cshape, cpath, out)
            if child is None or child == {} or not declared:
                out.add(cpath)
        return
    if _granular_list(shape, v):
        for item, pe in zip(v, _elements(shape, v, unique=True), strict=True):
            ipath = (*path, pe)
            _to_set(item, shape.item(), ipath, out)
            out.add(ipath)
        return
    if path:
        out.add(path)


# -- merge ----------------------------------------------------------------------------------------------


def merge(live: Any, config: Any, shape: Shape) -> Any:
    """The applied configuration merged into the live value (the configuration wins at the leaves)."""
    if config is MISSING:
        return live
    if live is MISSING:
        return config
    if _granular_map(shape, live) and _granular_map(shape, config):
        out = {}
        for name in [*live, *(k for k in config if k not in live)]:
            merged = merge(live.get(name, MISSING), config.get(name, MISSING), shape.child(name)[0])
            # A null applied clears the field (a typed object has no null member to keep).
            if merged is not MISSING and not (merged is None and name in config):
                out[name] = merged
        return out
    if _granular_list(shape, live) and _granular_list(shape, config):
        return _merge_list(live, config, shape)
    return config


def _merge_list(lhs: list[Any], rhs: list[Any], shape: Shape) -> list[Any]:
    """structured-merge-diff's ``visitListItems``: the merged items in upstream's order."""
    item_shape = shape.item()
    rpes = _elements(shape, rhs, unique=True)
    lpes = _elements(shape, lhs, unique=False)
    observed_r = dict(zip(rpes, rhs, strict=True))
    observed_l: dict[str, Any] = {}
    for pe, item in zip(lpes, lhs, strict=True):
        observed_l[pe] = MISSING if pe in observed_l else item  # duplicates are not merged
    shared = [pe for pe in rpes if pe in observed_l]
    next_shared = shared.pop(0) if shared else None
    merged_r: set[str] = set()
    out: list[Any] = []

    def take(left: Any, right: Any) -> None:
        merged = merge(left, right, item_shape)
        if merged is not MISSING:
            out.append(merged)

    li = ri = 0
    while li < len(lpes) or ri < len(rpes):
        if li < len(lpes) and ri < len(rpes):
            pe = lpes[li]
            if pe == rpes[ri]:
                merged_r.add(pe)
                take(observed_l[pe], observed_r[pe])
                li += 1
                ri += 1
                next_shared = shared.pop(0) if shared else None
                continue
            if pe in observed_r and next_shared is not None and next_shared != pe:
                li += 1
                continue
        if li < len(lpes):
            pe = lpes[li]
            if pe not in observed_r:
                take(lhs[li], MISSING)
                li += 1
                continue
            if pe in merged_r:
                li += 1
        if ri < len(rpes):
            pe = rpes[ri]
            merged_r.add(pe)
            take(observed_l.get(pe, MISSING), observed_r[pe])
            ri += 1
            if next_shared is not None and next_shared == pe:
                next_shared = shared.pop(0) if shared else None
    return out


# -- compare --------------------------------------------------------------------------------------------


class Comparison:
    __slots__ = ("added", "modified", "removed")

    def __init__(self) -> None:
        self.added: set[Path] = set()
        self.modified: set[Path] = set()
        self.removed: set[Path] = set()

    def changed(self) -> FieldSet:
        return frozenset(self.added | self.modified)


def compare(old: Any, new: Any, shape: Shape) -> Comparison:
    """``TypedValue.Compare``: the fields ``new`` adds, modifies and removes relative to ``old``."""
    out = Comparison()
    _compare(old, new, shape, (), out)
    return out


def _empty(v: Any) -> bool:
    return v is MISSING or v is None or v == {} or v == []


def _compare(lhs: Any, rhs: Any, shape: Shape, path: Path, out: Comparison) -> None:
    if lhs is rhs or (type(lhs) is type(rhs) and lhs == rhs):
        # Equal values hold no change below them (a subtree compared in C, not walked here). Python's
        # equality takes 1 and 1.0 for one value, as structured-merge-diff's does; only a nested bool
        # turned into 1 or 0, which no schema allows, would go unseen.
        return
    leaf = True
    if _empty(lhs) and _empty(rhs):
        pass
    elif (lhs is MISSING or _granular_map(shape, lhs)) and (rhs is MISSING or _granular_map(shape, rhs)):
        leaf = False
        lmap = {} if lhs is MISSING else lhs
        rmap = {} if rhs is MISSING else rhs
        for name in [*lmap, *(k for k in rmap if k not in lmap)]:
            cshape = shape.child(name)[0]
            _compare(lmap.get(name, MISSING), rmap.get(name, MISSING), cshape, (*path, fpe(name)), out)
    elif (lhs is MISSING or _granular_list(shape, lhs)) and (rhs is MISSING or _granular_list(shape, rhs)):
        leaf = False
        llist = [] if lhs is MISSING else lhs
        rlist = [] if rhs is MISSING else rhs
        lmap = dict(zip(_elements(shape, llist, unique=False), llist, strict=True))
        rmap = dict(zip(_elements(shape, rlist, unique=False), rlist, strict=True))
        for pe in [*lmap, *(k for k in rmap if k not in lmap)]:
            _compare(lmap.get(pe, MISSING), rmap.get(pe, MISSING), shape.item(), (*path, pe), out)
    if not path:
        return
    if leaf:
        if lhs is MISSING:
            out.added.add(path)
        elif rhs is MISSING:
            out.removed.add(path)
        elif lhs != rhs or type(lhs) is not type(rhs):
            out.modified.add(path)
    elif lhs is MISSING:
        out.added.add(path)
    elif rhs is MISSING:
        out.removed.add(path)


# -- removal --------------------------------------------------------------------------------------------


def remove(obj: Any, paths: FieldSet, shape: Shape) -> Any:
    """``obj`` without the nodes at ``paths`` (an item's key fields stay while the item does)."""
    if not paths:
        return obj
    trie: dict[str, Any] = {}
    for path in paths:
        node = trie
        for pe in path:
            node = node.setdefault(pe, {})
        node["."] = True
    return _remove(obj, trie, shape, ())


def _remove(v: Any, trie: dict[str, Any], shape: Shape, keep: tuple[str, ...]) -> Any:
    if _granular_map(shape, v):
        out = {}
        for name, child in v.items():
            sub = trie.get(fpe(name))
            if sub is None or name in keep:
                out[name] = child
            elif "." not in sub:
                out[name] = _remove(child, sub, shape.child(name)[0], ())
        return out
    if _granular_list(shape, v):
        items = []
        for item, pe in zip(v, _elements(shape, v, unique=False), strict=True):
            sub = trie.get(pe)
            if sub is None:
                items.append(item)
            elif "." not in sub:
                items.append(_remove(item, sub, shape.item(), shape.keys))
        return items
    return v


__all__ = ["MISSING", "SCALAR", "Comparison", "compare", "field_set", "item_element", "merge", "remove"]
