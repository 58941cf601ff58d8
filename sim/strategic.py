"""Kubernetes strategic merge patch (``application/strategic-merge-patch+json``, apiserver-semantics.md
S24), applied to plain JSON values; ported from ``k8s.io/apimachinery/pkg/util/strategicpatch``.

``strategic_merge_patch`` is driven by ``LIST_MERGE_KEYS``, the ``patchStrategy:"merge"`` tags of the
built-in kinds (other lists are replaced, maps merge, ``null`` deletes). Directives: ``$patch:
replace|delete`` in a map or as a list element, ``$deleteFromPrimitiveList/<field>``,
``$setElementOrder/<field>`` and ``$retainKeys``. The order of a merged list is upstream's:
``$setElementOrder`` first, then the order of the patch list, then the live order, and a new element is
placed before the live elements it is not known to follow (``finalizers: [a]`` patched with ``[b]`` gives
``[b, a]``, as on a real server). Errors: upstream's 400 BadRequest ones (malformed
``$retainKeys``/``$setElementOrder``/``$deleteFromPrimitiveList``) are raised as 400 ``ApiError``; the 422
ones (lists of lists) as ``sim.patches.PatchFailed``; the rest (a merge-list element without its merge
key, an unknown ``$patch`` value, mixed element types) as 500, since upstream answers them as plain
internal errors.

It does not mutate its inputs.

Known limits and deliberate differences:

* It knows the merge keys of the kinds in ``LIST_MERGE_KEYS`` only (Pod, ServiceAccount, Namespace, the
  pod templates of Deployments and StatefulSets, Service ports, and ``metadata`` of every kind);
  ``containerStatuses``, ``initContainerStatuses``, ``ephemeralContainerStatuses`` and a ServiceAccount's
  ``imagePullSecrets`` carry no patch strategy upstream, so they are replaced whole, as on a real server.
* A real server decodes the patched map into the typed object, which drops unknown keys and turns
  ``null`` into an absent field. Here the result stays JSON: every key starting with ``$`` is removed
  from it, and ``null``s are dropped from values copied from the patch (new members, new list elements,
  ``$patch: replace`` maps and lists). A map patched with ``$patch: delete`` is removed from its parent
  (upstream leaves an empty map, which the typed encoding then omits); at the top level the result is
  ``{}``. A list element carrying ``$patch`` in a list without a merge strategy is dropped.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from sim import errors, patches

# -- Go's view of decoded JSON -----------------------------------------------------------------------


def _go_type(value: Any) -> str:
    """The Go type of a decoded JSON value (``k8s.io/apimachinery/pkg/util/json`` keeps integers as int64)."""
    if value is None:
        return "<nil>"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int64"
    if isinstance(value, float):
        return "float64"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "[]interface {}"
    return "map[string]interface {}"


def _go_v(value: Any) -> str:
    """Go's ``%v`` of a decoded JSON value: ``map[a:1 b:[x y]]``."""
    if value is None:
        return "<nil>"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e21:
        return str(int(value))
    if isinstance(value, dict):
        return "map[" + " ".join(f"{k}:{_go_v(value[k])}" for k in sorted(value)) + "]"
    if isinstance(value, list):
        return "[" + " ".join(_go_v(v) for v in value) + "]"
    return str(value)


def _same(a: Any, b: Any) -> bool:
    """Go's ``==`` on two decoded JSON scalars: the same type and the same value."""
    return type(a) is type(b) and a == b


# -- directives and list merge keys ----------------------------------------------------------------

_DIRECTIVE = "$patch"
_REPLACE = "replace"
_DELETE = "delete"
_MERGE = "merge"
_RETAIN_KEYS = "$retainKeys"
_DELETE_FROM_PRIMITIVE_LIST = "$deleteFromPrimitiveList"
_SET_ELEMENT_ORDER = "$setElementOrder"

_CONTAINER_LISTS = {
    "env": "name",
    "volumeMounts": "mountPath",
    "ports": "containerPort",
    "volumeDevices": "devicePath",
}


def _pod_merge_keys() -> dict[str, str]:
    keys = {
        "spec.containers": "name",
        "spec.initContainers": "name",
        "spec.ephemeralContainers": "name",
        "spec.volumes": "name",
        "spec.imagePullSecrets": "name",
        "spec.hostAliases": "ip",
        "spec.topologySpreadConstraints": "topologyKey",
        "spec.resourceClaims": "name",
        "spec.schedulingGates": "name",
        "status.conditions": "type",
        "status.podIPs": "ip",
        "status.hostIPs": "ip",
        "status.resourceClaimStatuses": "name",
    }
    for containers in ("containers", "initContainers", "ephemeralContainers"):
        for field, key in _CONTAINER_LISTS.items():
            keys[f"spec.{containers}[].{field}"] = key
    return keys


def _template_merge_keys() -> dict[str, str]:
    """A workload's ``spec.template.spec``: the merged lists of a Pod's ``spec``."""
    return {
        f"spec.template.{path}": key for path, key in _pod_merge_keys().items() if path.startswith("spec.")
    }


# The lists tagged ``patchStrategy:"merge"`` in k8s.io/api, by kind and field path ("[]" steps into the
# elements of a list); the value is the ``patchMergeKey``, "" for a merged list of scalars. "*" applies to
# every kind. Every list not named here is replaced by the patch (Role rules, RoleBinding subjects, pod
# tolerations, container statuses, ...).
LIST_MERGE_KEYS: dict[str, dict[str, str]] = {
    "*": {"metadata.ownerReferences": "uid", "metadata.finalizers": ""},
    "Pod": _pod_merge_keys(),
    "ServiceAccount": {"secrets": "name"},
    "Namespace": {"status.conditions": "type"},
    # Stored as plain objects (sim.kinds), patched by kubectl's client-side apply: their pod templates
    # merge as a Pod's spec does.
    "Deployment": {**_template_merge_keys(), "status.conditions": "type"},
    "StatefulSet": {**_template_merge_keys(), "status.conditions": "type"},
    "Service": {"spec.ports": "port"},
}


class _Deleted:
    """The result of merging a map carrying ``$patch: delete``."""


_DELETED = _Deleted()


def _internal(message: str) -> errors.ApiError:
    return errors.internal(message)


def _no_merge_key(item: Any, merge_key: str) -> errors.ApiError:
    return _internal(f"map: {_go_v(item)} does not contain declared merge key: {merge_key}")


def _bad_arg_type(expected: str, actual: Any) -> errors.ApiError:
    return _internal(f"expected a {expected}, but received a {_go_type(actual)}")


def _discard_nulls(value: Any) -> Any:
    """``discardNullValuesFromPatch``, returning the cleaned value."""
    if isinstance(value, dict):
        return {k: _discard_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_discard_nulls(v) for v in value]
    return value


def _remove_directives(value: Any) -> tuple[Any, bool]:
    """``removeDirectives``: maps holding ``$patch`` vanish; returns the value and whether to keep it."""
    if isinstance(value, dict):
        if _DIRECTIVE in value:
            return None, False
        kept: dict[str, Any] = {}
        for k, v in value.items():
            cleaned, keep = _remove_directives(v)
            if keep:
                kept[k] = cleaned
        return kept, True
    if isinstance(value, list):
        items = []
        for v in value:
            cleaned, keep = _remove_directives(v)
            if keep:
                items.append(cleaned)
        return items, True
    return value, True


def _strip_dollar_keys(value: Any) -> Any:
    """Drop every ``$``-key left over (what the typed decoding of a real server drops as unknown)."""
    if isinstance(value, dict):
        return {k: _strip_dollar_keys(v) for k, v in value.items() if not k.startswith("$")}
    if isinstance(value, list):
        return [_strip_dollar_keys(v) for v in value]
    return value


def _extract_key(key: str, prefix: str) -> str:
    head, sep, rest = key.partition("/")
    if not sep or head != prefix:
        what = "primitive list" if prefix == _DELETE_FROM_PRIMITIVE_LIST else "setElementOrder list"
        raise errors.bad_request(f"invalid patch format of {what}")
    return rest


def _child(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _slice_kind(*lists: list[Any]) -> str:
    """``sliceElementType``: the one Go type of all elements; lists of lists are a 422."""
    seen: str | None = None
    for items in lists:
        for item in items:
            current = _go_type(item)
            if seen is None:
                if isinstance(item, list):
                    raise patches.PatchFailed("lists of lists are not supported")
                if item is None:
                    raise _internal("list element types are not identical: a list holds null")
                seen = current
            elif current != seen:
                raise _internal(f"list element types are not identical: {_go_v(list(lists))}")
    if seen is None:
        raise _internal("no elements in any of the given slices")
    return seen


def _is_map_kind(kind: str) -> bool:
    return kind.startswith("map")


def _key_value(item: Any, merge_key: str, kind: str) -> Any:
    """What ``index`` compares: the merge key's value for maps, the item itself for scalars."""
    if _is_map_kind(kind):
        return item.get(merge_key) if isinstance(item, dict) else None
    return item


def _index(items: list[Any], item: Any, merge_key: str, kind: str) -> int:
    wanted = _key_value(item, merge_key, kind)
    for i, candidate in enumerate(items):
        if _same(_key_value(candidate, merge_key, kind), wanted):
            return i
    return -1


def _find_by_key(items: list[Any], merge_key: str, value: Any) -> int:
    """``findMapInSliceBasedOnKeyValue``: the index of the first map whose merge key equals ``value``."""
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            raise _internal(f"value for key {i} is not a map")
        if merge_key in item and _same(item[merge_key], value):
            return i
    return -1


class _Strategic:
    """One strategic merge patch; works on private copies, so it may mutate what it is given."""

    def __init__(self, merge_keys: Mapping[str, str]) -> None:
        self.merge_keys = merge_keys

    # maps

    def merge_map(
        self, original: dict[str, Any], patch: dict[str, Any], path: str
    ) -> dict[str, Any] | _Deleted:
        if _DIRECTIVE in patch:
            directive = patch.pop(_DIRECTIVE)
            if directive == _REPLACE:
                replaced: dict[str, Any] = _discard_nulls(patch)
                return replaced
            if directive == _DELETE:
                return _DELETED
            raise _internal(
                f"unknown patch type: {_go_v(directive)} in map: {_go_v({**patch, _DIRECTIVE: directive})}"
            )
        self.apply_retain_keys(original, patch)
        self.merge_ordered_lists(original, patch, path)
        for key, patch_value in list(patch.items()):
            is_delete_list = key.startswith(_DELETE_FROM_PRIMITIVE_LIST)
            if is_delete_list:
                key = _extract_key(key, _DELETE_FROM_PRIMITIVE_LIST)
            if patch_value is None:
                original.pop(key, None)
                continue
            if key not in original or _go_type(original[key]) != _go_type(patch_value):
                if not is_delete_list:
                    cleaned, keep = _remove_directives(_discard_nulls(patch_value))
                    if keep:
                        original[key] = cleaned
                    else:
                        original.pop(key, None)
                continue
            current = original[key]
            child = _child(path, key)
            if isinstance(current, dict):
                merged = self.merge_map(current, patch_value, child)
                if isinstance(merged, _Deleted):
                    del original[key]
                else:
                    original[key] = merged
            elif isinstance(current, list):
                original[key] = self.merge_list_field(current, patch_value, child, is_delete_list)[0]
            else:
                original[key] = patch_value
        return original

    @staticmethod
    def apply_retain_keys(original: dict[str, Any], patch: dict[str, Any]) -> None:
        if _RETAIN_KEYS not in patch:
            return
        retain = patch.pop(_RETAIN_KEYS)
        if not isinstance(retain, list):
            raise errors.bad_request("invalid patch format of retainKeys")
        keep = {k for k in retain if isinstance(k, str)}
        for key, value in patch.items():
            if value is None or key.startswith((_DELETE_FROM_PRIMITIVE_LIST, _SET_ELEMENT_ORDER)):
                continue
            if key not in keep:
                raise errors.bad_request("invalid patch format of retainKeys")
        for key in [k for k in original if k not in keep]:
            del original[key]

    # lists

    def merge_key(self, path: str) -> str | None:
        """The field's merge key ("" for a merged list of scalars), or None for a list that is replaced."""
        return self.merge_keys.get(path)

    def merge_list_field(
        self, original: list[Any], patch: list[Any], path: str, is_delete_list: bool
    ) -> tuple[list[Any], list[Any]]:
        """The merged list, and what a holder of ``original`` sees afterwards (see ``merge_list``)."""
        merge_key = self.merge_key(path)
        if merge_key is None and not is_delete_list:
            cleaned: list[Any] = _remove_directives(_discard_nulls(patch))[0]
            return cleaned, original
        return self.merge_list(original, patch, merge_key or "", path, is_delete_list)

    def merge_list(
        self, original: list[Any], patch: list[Any], merge_key: str, path: str, is_delete_list: bool = False
    ) -> tuple[list[Any], list[Any]]:
        """``mergeSlice``. Go deletes and appends in the original's backing array, which the
        ``$setElementOrder`` code still reads as the live order afterwards; the second value replays that
        (the original's length, with the elements Go's slice aliasing leaves in it)."""
        if not original and not patch:
            return original, original
        kind = _slice_kind(original, patch)
        if not _is_map_kind(kind):
            if is_delete_list:
                return [v for v in original if not any(_same(v, d) for d in patch)], original
            merged = _dedupe(original + patch)
            patch_items = [v for v in merged if any(_same(v, p) for p in patch)]
            server_only = [v for v in merged if not any(_same(v, p) for p in patch)]
            return _normalize_element_order(
                patch_items, server_only, patch, original, merge_key, kind
            ), original
        if not merge_key:
            raise _internal(f"cannot merge lists without merge key for {path}")
        window = list(original)
        live, plain, replaced = self.split_special_elements(window, patch, merge_key)
        merged = self.merge_plain_elements(live, plain, merge_key, path, None if replaced else window)
        patch_items, server_only = _partition_maps(merged, plain, merge_key)
        return _normalize_element_order(patch_items, server_only, plain, live, merge_key, kind), window

    @staticmethod
    def split_special_elements(
        window: list[Any], patch: list[Any], merge_key: str
    ) -> tuple[list[Any], list[Any], bool]:
        """``mergeSliceWithSpecialElements``: apply the ``$patch`` elements of ``patch``.

        Returns the live elements left, the plain patch elements and whether ``$patch: replace`` was
        given (then the plain elements are the new list). Deletions shift ``window`` in place, like Go's
        ``append(s[:i], s[i+1:]...)``."""
        length = len(window)
        plain: list[Any] = []
        replace = False
        for item in patch:
            if _DIRECTIVE not in item:
                plain.append(item)
                continue
            directive = item[_DIRECTIVE]
            if directive == _DELETE:
                if merge_key not in item:
                    raise _no_merge_key(item, merge_key)
                while (index := _find_by_key(window[:length], merge_key, item[merge_key])) >= 0:
                    window[index : length - 1] = window[index + 1 : length]
                    length -= 1
            elif directive == _REPLACE:
                replace = True
            elif directive == _MERGE:
                raise _internal("merging lists cannot yet be specified in the patch")
            else:
                raise _internal(f"unknown patch type: {_go_v(directive)} in map: {_go_v(item)}")
        if replace:
            replaced: list[Any] = _discard_nulls(plain)
            return replaced, [], True
        return window[:length], plain, False

    def merge_plain_elements(
        self, original: list[Any], patch: list[Any], merge_key: str, path: str, window: list[Any] | None
    ) -> list[Any]:
        """``mergeSliceWithoutSpecialElements``: merge elements with the same key, append the others
        (an append that Go makes inside the original's backing array also lands in ``window``)."""
        result = list(original)
        for item in patch:
            if merge_key not in item:
                raise _no_merge_key(item, merge_key)
            index = _find_by_key(result, merge_key, item[merge_key])
            if index >= 0:
                merged = self.merge_map(result[index], item, path + "[]")
                # Elements carrying $patch were taken out before, so a merge never deletes.
                assert isinstance(merged, dict)
                result[index] = merged
            else:
                added = _discard_nulls(item)
                if window is not None and len(result) < len(window):
                    window[len(result)] = added
                result.append(added)
        return result

    def merge_ordered_lists(self, original: dict[str, Any], patch: dict[str, Any], path: str) -> None:
        """``mergePatchIntoOriginal``: merge each list named by a ``$setElementOrder`` and order it."""
        for directive_key in [k for k in patch if k.startswith(_SET_ELEMENT_ORDER)]:
            order = patch.pop(directive_key)
            if not isinstance(order, list):
                raise _bad_arg_type("[]interface {}", order)
            key = _extract_key(directive_key, _SET_ELEMENT_ORDER)
            found_original, found_patch = key in original, key in patch
            original_list = original.get(key)
            patch_list = patch.get(key)
            if found_original and not isinstance(original_list, list):
                raise _bad_arg_type("[]interface {}", original_list)
            if found_patch and not isinstance(patch_list, list):
                raise _bad_arg_type("[]interface {}", patch_list)
            child = _child(path, key)
            merge_key = self.merge_key(child) or ""
            _validate_order(patch_list or [], order, merge_key)
            live_order: list[Any] = original_list if isinstance(original_list, list) else []
            if found_original and found_patch:
                assert isinstance(original_list, list) and isinstance(patch_list, list)
                merged, live_order = self.merge_list_field(original_list, patch_list, child, False)
            elif found_original:
                assert isinstance(original_list, list)
                merged = original_list
            elif found_patch:
                merged = _remove_directives(_discard_nulls(patch_list))[0]
            else:
                continue
            kind = _slice_kind(original_list or [], patch_list or [])
            if merge_key:
                patch_items, server_only = _partition_maps(merged, order, merge_key)
            else:
                if _is_map_kind(kind):
                    raise _internal(f"cannot order a list of maps without a merge key: {child}")
                patch_items = [v for v in merged if any(_same(v, o) for o in order)]
                server_only = [v for v in merged if not any(_same(v, o) for o in order)]
            original[key] = _normalize_element_order(
                patch_items, server_only, order, live_order, merge_key, kind
            )
            patch.pop(key, None)


def _dedupe(items: list[Any]) -> list[Any]:
    """``deduplicateScalars``, including the way it moves the last element into a duplicate's slot."""
    items = list(items)
    length = len(items) - 1
    i = 0
    while i < length:
        j = i + 1
        while j <= length:
            if _same(items[i], items[j]):
                items[j] = items[length]
                items = items[:length]
                length -= 1
                j -= 1
            j += 1
        i += 1
    return items


def _partition_maps(
    merged: list[Any], partition_by: list[Any], merge_key: str
) -> tuple[list[Any], list[Any]]:
    """``partitionMapsByPresentInList``: (elements whose key is in ``partition_by``, the others)."""
    inside: list[Any] = []
    outside: list[Any] = []
    for item in merged:
        if not isinstance(item, dict):
            raise _bad_arg_type("map[string]interface {}", item)
        if merge_key not in item:
            raise _no_merge_key(item, merge_key)
        (inside if _find_by_key(partition_by, merge_key, item[merge_key]) >= 0 else outside).append(item)
    return inside, outside


def _validate_order(patch_list: list[Any], order: list[Any], merge_key: str) -> None:
    """``validatePatchWithSetOrderList``: the patch list must follow the ``$setElementOrder`` list."""
    if not order or not patch_list:
        return
    if merge_key:
        for item in patch_list:
            if not isinstance(item, dict):
                raise _bad_arg_type("map[string]interface {}", item)
        plain = [item for item in patch_list if item.get(_DIRECTIVE) != _DELETE]
    else:
        plain = list(patch_list)
    patch_index = order_index = 0
    while patch_index < len(plain) and order_index < len(order):
        item = plain[patch_index]
        if isinstance(item, dict) and _DIRECTIVE in item:
            patch_index += 1
            continue
        if merge_key:
            entry = order[order_index]
            if not isinstance(entry, dict):
                raise _bad_arg_type("map[string]interface {}", entry)
            if merge_key not in item:
                raise _no_merge_key(item, merge_key)
            if merge_key not in entry:
                raise _no_merge_key(entry, merge_key)
            equal = _same(item[merge_key], entry[merge_key])
        else:
            equal = _same(item, order[order_index])
        if equal:
            patch_index += 1
        order_index += 1
    if patch_index < len(plain) and order_index >= len(order):
        raise _internal(
            f"the order in patch list:\n{_go_v(patch_list)}\n doesn't match {_SET_ELEMENT_ORDER} list:\n"
            f"{_go_v(order)}"
        )


def _normalize_slice_order(items: list[Any], order: list[Any], merge_key: str, kind: str) -> list[Any]:
    """``normalizeSliceOrder``: sort by position in ``order`` (unknown first); deletions go last."""
    to_delete: list[Any] = []
    if _is_map_kind(kind):
        for item in [*items, *order]:
            if not isinstance(item, dict):
                raise _bad_arg_type("map[string]interface {}", item)
            if merge_key not in item:
                raise _no_merge_key(item, merge_key)
        to_delete = [item for item in items if item.get(_DIRECTIVE) == _DELETE]
        items = [item for item in items if item.get(_DIRECTIVE) != _DELETE]
    ordered = sorted(items, key=lambda item: _index(order, item, merge_key, kind))
    return ordered + to_delete


def _normalize_element_order(
    patch_items: list[Any],
    server_only: list[Any],
    patch_order: list[Any],
    server_order: list[Any],
    merge_key: str,
    kind: str,
) -> list[Any]:
    """``normalizeElementOrder`` + ``mergeSortedSlice``: interleave patch and server-only elements."""
    right = _normalize_slice_order(patch_items, patch_order, merge_key, kind)
    left = _normalize_slice_order(server_only, server_order, merge_key, kind)
    result: list[Any] = []
    i = j = 0
    while i < len(left) and j < len(right):
        li = _index(server_order, left[i], merge_key, kind)
        ri = _index(server_order, right[j], merge_key, kind)
        if li >= 0 and ri >= 0 and li < ri:
            result.append(left[i])
            i += 1
        else:
            result.append(right[j])
            j += 1
    return result + left[i:] + right[j:]


def merge_keys_for(kind: str) -> dict[str, str]:
    """The merged lists of ``kind`` (field path → merge key), including those of every kind."""
    return {**LIST_MERGE_KEYS["*"], **LIST_MERGE_KEYS.get(kind, {})}


def strategic_merge_patch(target: dict[str, Any], patch: dict[str, Any], kind: str) -> dict[str, Any]:
    """Apply a strategic merge patch to an object of the built-in ``kind`` (see the module docstring)."""
    merged = _Strategic(merge_keys_for(kind)).merge_map(copy.deepcopy(target), copy.deepcopy(patch), "")
    if isinstance(merged, _Deleted):
        return {}
    result: dict[str, Any] = _strip_dollar_keys(merged)
    return result
