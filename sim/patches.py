"""Two of the three PATCH bodies of kube-apiserver, applied to plain JSON values (apiserver-semantics.md S22,
S23); the third, strategic merge patch (S24), is ``sim.strategic``, which raises ``PatchFailed`` too.

* ``merge_patch``: RFC 7386 JSON merge patch (``application/merge-patch+json``). Objects merge
  recursively, ``null`` deletes a member, anything else (lists included) replaces. The result is a new
  structure that **shares unchanged subtrees with the target** (only the maps along patched paths are
  copied; values taken from the patch are copied): copy it before mutating it in place.
* ``json_patch``: RFC 6902 JSON patch (``application/json-patch+json``) with the semantics and the error
  wording of ``gopkg.in/evanphx/json-patch.v4``, the library kube-apiserver applies it with, and the
  decoding checks of the API server's own handler (400 for a body that is not a list of operations, 413
  above 10000 operations). An operation that does not apply raises ``PatchFailed`` with the library's
  message; the server answers it as 422 Invalid. Messages, e.g.::

      testing value /spec/x failed: test failed
      add operation does not apply: doc is missing path: "/spec/x/y": missing value
      replace operation does not apply: doc is missing path: /spec/x/y: missing value
      error in remove for path: '/spec/x': Unable to remove nonexistent key: x: missing value
      Unexpected kind: frobnicate

  The operations are applied here rather than by the ``jsonpatch`` package because that package
  disagrees with the server on behaviour clients can see: v4 lets ``replace`` create a missing member of
  an existing object, accepts negative array indices (``-1`` is the last element), treats a missing
  ``value`` as ``null``, and compares ``test`` values by their JSON text (``1`` is neither ``1.0`` nor
  ``true``); its messages could not be mapped back reliably either.

None of the functions mutates its inputs.

Known limits and deliberate differences:

* JSON patch: the pointer is split like v4 does (the text before the first ``/`` is ignored); ``move``
  and ``copy`` report the paths exactly as v4 does, including its quirks.
* Merge patch does not reproduce evanphx's pruning of ``null``s inside objects nested in patch arrays;
  arrays are taken verbatim, as RFC 7386 says.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Mapping
from typing import Any

from sim import errors

MAX_JSON_PATCH_OPERATIONS = 10000


class PatchFailed(Exception):
    """A patch that does not apply to the object; the server answers 422 Invalid with this message."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


# -- Go's view of decoded JSON -----------------------------------------------------------------------


def go_json_kind(value: Any) -> str:
    """The JSON type name Go's decoder prints in ``cannot unmarshal <kind> into ...``."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


# -- RFC 7386 merge patch ----------------------------------------------------------------------------


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386: apply ``patch`` to ``target``; the result may share unchanged subtrees with ``target``."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    result: dict[str, Any] = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_patch(result.get(key), value)
    return result


# -- RFC 6902 JSON patch (gopkg.in/evanphx/json-patch.v4) --------------------------------------------

_MISSING = "missing value"  # jsonpatch.ErrMissing
_INVALID_INDEX = "invalid index referenced"  # jsonpatch.ErrInvalidIndex
_ATOI_RE = re.compile(r"[+-]?[0-9]+")
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


class _OpError(Exception):
    """A failure inside one container operation; the caller wraps it with the operation's context."""


def _atoi(key: str) -> int:
    """``strconv.Atoi``; raises ``_OpError`` with Go's message."""
    if not _ATOI_RE.fullmatch(key):
        raise _OpError(f"strconv.Atoi: parsing {json.dumps(key)}: invalid syntax")
    number = int(key)
    if not _INT64_MIN <= number <= _INT64_MAX:
        raise _OpError(f"strconv.Atoi: parsing {json.dumps(key)}: value out of range")
    return number


def _invalid_index(index: int) -> _OpError:
    return _OpError(f"Unable to access invalid index: {index}: {_INVALID_INDEX}")


def _decode_key(token: str) -> str:
    return re.sub("~[01]", lambda m: "/" if m.group() == "~1" else "~", token)


Container = dict[str, Any] | list[Any]


def _get(container: Container, key: str) -> Any:
    """``container.get``: a missing object member reads as ``None``; a bad array index raises."""
    if isinstance(container, dict):
        return container.get(key)
    index = _atoi(key)
    if index < 0:
        if index < -len(container):
            raise _invalid_index(index)
        index += len(container)
    if index >= len(container):
        raise _invalid_index(index)
    return container[index]


def _set(container: Container, key: str, value: Any) -> None:
    """``container.set`` (used by ``replace`` after ``_get`` succeeded)."""
    if isinstance(container, dict):
        container[key] = value
        return
    index = _atoi(key)
    if index < 0:
        index += len(container)
    container[index] = value


def _add(container: Container, key: str, value: Any) -> None:
    if isinstance(container, dict):
        container[key] = value
        return
    if key == "-":
        container.append(value)
        return
    try:
        index = _atoi(key)
    except _OpError as exc:
        raise _OpError(f"value was not a proper array index: '{key}': {exc}") from None
    size = len(container) + 1
    if index >= size:
        raise _invalid_index(index)
    if index < 0:
        if index < -size:
            raise _invalid_index(index)
        index += size
    container.insert(index, value)


def _remove(container: Container, key: str) -> None:
    if isinstance(container, dict):
        if key not in container:
            raise _OpError(f"Unable to remove nonexistent key: {key}: {_MISSING}")
        del container[key]
        return
    index = _atoi(key)
    if index >= len(container):
        raise _invalid_index(index)
    if index < 0:
        if index < -len(container):
            raise _invalid_index(index)
        index += len(container)
    del container[index]


def _find_object(doc: Container, path: str) -> tuple[Container, str] | None:
    """v4's ``findObject``: the container holding the last token of ``path``, or None if unreachable."""
    split = path.split("/")
    if len(split) < 2:
        return None
    current: Any = doc
    for part in split[1:-1]:
        try:
            current = _get(current, _decode_key(part))
        except _OpError:
            return None
        if not isinstance(current, dict | list):
            return None
    return current, _decode_key(split[-1])


def _json_equal(a: Any, b: Any) -> bool:
    """v4's ``lazyNode.equal``: structural for objects and arrays, by JSON text for scalars."""
    if isinstance(a, dict) or isinstance(b, dict):
        if not (isinstance(a, dict) and isinstance(b, dict)) or a.keys() != b.keys():
            return False
        return all(_json_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) or isinstance(b, list):
        if not (isinstance(a, list) and isinstance(b, list)) or len(a) != len(b):
            return False
        return all(_json_equal(x, y) for x, y in zip(a, b, strict=True))
    return json.dumps(a) == json.dumps(b)


def _decode_ops(ops: Any) -> list[dict[str, Any] | None]:
    """The handler's strict decode into ``[]handlers.jsonPatchOp``: 400 on anything else."""
    if ops is None:
        return []  # JSON null decodes into an empty slice
    prefix = "error decoding patch: json: cannot unmarshal"
    if not isinstance(ops, list):
        raise errors.bad_request(f"{prefix} {go_json_kind(ops)} into Go value of type []handlers.jsonPatchOp")
    for op in ops:
        if op is None:
            continue
        if not isinstance(op, dict):
            raise errors.bad_request(
                f"{prefix} {go_json_kind(op)} into Go value of type handlers.jsonPatchOp"
            )
        for name in ("op", "path", "from"):
            value = op.get(name)
            if value is not None and not isinstance(value, str):
                raise errors.bad_request(
                    f"{prefix} {go_json_kind(value)} into Go struct field jsonPatchOp.{name} of type string"
                )
    if len(ops) > MAX_JSON_PATCH_OPERATIONS:
        raise errors.too_large(
            f"The allowed maximum operations in a JSON patch is {MAX_JSON_PATCH_OPERATIONS}, got {len(ops)}"
        )
    return ops


class _JsonPatch:
    """Applies v4 operations to a private copy of the document."""

    def __init__(self, doc: dict[str, Any]) -> None:
        self.doc: dict[str, Any] = doc

    def apply(self, op: Mapping[str, Any]) -> None:
        kind = op.get("op")
        handler = {
            "add": self.add,
            "remove": self.remove,
            "replace": self.replace,
            "move": self.move,
            "test": self.test,
            "copy": self.copy,
        }.get(kind if isinstance(kind, str) else "")
        if handler is None:
            raise PatchFailed(f"Unexpected kind: {kind if isinstance(kind, str) else 'unknown'}")
        handler(op)

    @staticmethod
    def _value(op: Mapping[str, Any]) -> Any:
        # v4 stores a missing "value" as a nil node, which encodes as null.
        return copy.deepcopy(op.get("value"))

    def _find(self, path: str, message: str) -> tuple[Container, str]:
        found = _find_object(self.doc, path)
        if found is None:
            raise PatchFailed(f"{message}: {_MISSING}")
        return found

    def add(self, op: Mapping[str, Any]) -> None:
        path = op.get("path")
        if path is None:
            raise PatchFailed(f"add operation failed to decode path: {_MISSING}")
        container, key = self._find(path, f'add operation does not apply: doc is missing path: "{path}"')
        try:
            _add(container, key, self._value(op))
        except _OpError as exc:
            raise PatchFailed(f"error in add for path: '{path}': {exc}") from None

    def remove(self, op: Mapping[str, Any]) -> None:
        path = op.get("path")
        if path is None:
            raise PatchFailed(f"remove operation failed to decode path: {_MISSING}")
        container, key = self._find(path, f'remove operation does not apply: doc is missing path: "{path}"')
        try:
            _remove(container, key)
        except _OpError as exc:
            raise PatchFailed(f"error in remove for path: '{path}': {exc}") from None

    def replace(self, op: Mapping[str, Any]) -> None:
        path = op.get("path")
        if path is None:
            raise PatchFailed(
                f"replace operation failed to decode path: operation missing path field: {_MISSING}"
            )
        if path == "":
            value = self._value(op)
            if isinstance(value, dict):
                self.doc = value
            elif isinstance(value, list):
                # v4 would make the document an array, which no object can be decoded from.
                raise PatchFailed(
                    "json: cannot unmarshal array into Go value of type map[string]interface {}"
                )
            # v4 ignores a scalar or null value at the root (its error wraps a nil error).
            return
        container, key = self._find(path, f"replace operation does not apply: doc is missing path: {path}")
        try:
            _get(container, key)
        except _OpError:
            raise PatchFailed(
                f"replace operation does not apply: doc is missing key: {path}: {_MISSING}"
            ) from None
        # An object member that does not exist yet is created: v4 does not check for it.
        _set(container, key, self._value(op))

    def move(self, op: Mapping[str, Any]) -> None:
        source = op.get("from")
        if source is None:
            raise PatchFailed(
                f"move operation failed to decode from: operation, missing from field: {_MISSING}"
            )
        container, key = self._find(
            source, f"move operation does not apply: doc is missing from path: {source}"
        )
        try:
            value = _get(container, key)
            _remove(container, key)
        except _OpError as exc:
            raise PatchFailed(f"error in move for path: '{key}': {exc}") from None
        path = op.get("path")
        if path is None:
            raise PatchFailed(
                f"move operation failed to decode path: operation missing path field: {_MISSING}"
            )
        target, target_key = self._find(
            path, f"move operation does not apply: doc is missing destination path: {path}"
        )
        try:
            _add(target, target_key, value)
        except _OpError as exc:
            raise PatchFailed(f"error in move for path: '{path}': {exc}") from None

    def test(self, op: Mapping[str, Any]) -> None:
        path = op.get("path")
        if path is None:
            raise PatchFailed(
                f"test operation failed to decode path: operation missing path field: {_MISSING}"
            )
        failed = PatchFailed(f"testing value {path} failed: test failed")
        if path == "":
            if "value" not in op or not _json_equal(self.doc, op["value"]):
                raise failed
            return
        container, key = self._find(path, f"test operation does not apply: is missing path: {path}")
        try:
            value = _get(container, key)
        except _OpError as exc:
            raise PatchFailed(f"error in test for path: '{path}': {exc}") from None
        if "value" not in op:
            raise failed
        if value is None:
            # A missing member and a null member both pass a test against null.
            if op["value"] is not None:
                raise failed
            return
        if not _json_equal(value, op["value"]):
            raise failed

    def copy(self, op: Mapping[str, Any]) -> None:
        source = op.get("from")
        if source is None:
            raise PatchFailed(
                f"copy operation failed to decode from: operation, missing from field: {_MISSING}"
            )
        container, key = self._find(
            source, f"copy operation does not apply: doc is missing from path: {source}"
        )
        try:
            value = copy.deepcopy(_get(container, key))  # a missing object member copies as null
        except _OpError as exc:
            raise PatchFailed(f"error in copy for from: '{source}': {exc}") from None
        path = op.get("path")
        if path is None:
            raise PatchFailed(f"copy operation failed to decode path: {_MISSING}")
        target, target_key = self._find(
            path, f"copy operation does not apply: doc is missing destination path: {path}"
        )
        try:
            _add(target, target_key, value)
        except _OpError as exc:
            raise PatchFailed(f"error while adding value during copy: {exc}") from None


def json_patch(target: dict[str, Any], ops: Any) -> dict[str, Any]:
    """RFC 6902 as kube-apiserver applies it: 400/413 ``ApiError`` for a bad body, else ``PatchFailed``."""
    operations = _decode_ops(ops)
    patcher = _JsonPatch(copy.deepcopy(target))
    for op in operations:
        patcher.apply(op or {})
    return patcher.doc
