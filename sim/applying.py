"""Server-side apply: ``PATCH`` with ``application/apply-patch+yaml`` (apiserver-semantics.md S26).

``apply`` merges the applied configuration into the live object along the kind's field types
(``sim.fieldtypes``, ``sim.structured``), records the configuration's field set as the manager's ``Apply``
entry of ``managedFields``, removes the fields the manager applied last time and no longer applies unless
another manager owns them, and refuses (409 ``Conflict``, kube-apiserver's message and causes) to change a
field another manager owns unless ``force`` is set, in which case it takes the field over. Applying to an
object that does not exist creates it (201). A no-op apply writes nothing and keeps the resourceVersion.
The result goes through the same write path as every update (``ApiServer``), so admission, validation,
generation and the status subresource rules are those of an update.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from sim import admission, decoding, errors, fieldpaths, fieldtypes, managedfields, schemas, structured
from sim.fieldpaths import FieldSet, Path
from sim.kinds import Kind
from sim.managedfields import APPLY, UPDATE, Entry

if TYPE_CHECKING:
    from sim.apiserver import ApiServer, Result


def field_manager_errors(manager: str) -> list[errors.FieldError]:
    """``ValidateFieldManager``: at most 128 bytes, every character printable (Go's ``unicode.IsPrint``)."""
    errs = []
    if len(manager.encode()) > 128:
        errs.append(errors.FieldError("FieldValueTooLong", "fieldManager", "may not be more than 128 bytes"))
    position = 0
    for ch in manager:
        if not ch.isprintable():
            detail = f"invalid character U+{ord(ch):04X} (at position {position})"
            errs.append(errors.invalid_value("fieldManager", manager, detail))
        position += len(ch.encode())
    return errs


def check_field_manager(options: str, manager: str) -> None:
    """422 on ``CreateOptions`` / ``UpdateOptions`` for a ``fieldManager`` kube-apiserver refuses."""
    errs = field_manager_errors(manager)
    if errs:
        raise errors.invalid(options, "meta.k8s.io", "", errs)


def patch_options_errors(*, apply: bool, manager: str, force: bool) -> list[errors.FieldError]:
    """``ValidatePatchOptions``: an apply names its manager; only an apply may force."""
    errs = []
    if not apply and force:
        errs.append(errors.forbidden("force", "may not be specified for non-apply patch"))
    if apply and not manager:
        errs.append(errors.required("fieldManager", "is required for apply patch"))
    return errs + field_manager_errors(manager)


def check_patch_options(*, apply: bool, manager: str, force: bool) -> None:
    errs = patch_options_errors(apply=apply, manager=manager, force=force)
    if errs:
        raise errors.invalid("PatchOptions", "meta.k8s.io", "", errs)


def _config(kind: Kind, namespace: str, name: str, body: Any) -> dict[str, Any]:
    """The applied configuration, checked as the apply patcher checks it."""
    if not isinstance(body, dict):
        raise errors.bad_request("error decoding YAML: the apply patch is not an object")
    if body.get("apiVersion") != kind.api_version:
        raise errors.bad_request(
            "Incorrect version specified in apply patch. "
            f"Specified patch version: {body.get('apiVersion') or ''}, expected: {kind.api_version}"
        )
    if body.get("kind") != kind.kind:
        raise errors.bad_request(
            f"Incorrect kind specified in apply patch. Specified patch kind: {body.get('kind') or ''}, "
            f"expected: {kind.kind}"
        )
    meta = body.get("metadata")
    if meta is None:
        meta = {}
    if not isinstance(meta, dict):
        raise errors.bad_request("error decoding YAML: metadata must be an object")
    if meta.get("managedFields") is not None:
        raise errors.bad_request("metadata.managedFields must be nil")
    if meta.get("name") and meta["name"] != name:
        raise errors.bad_request(
            f"the name of the object ({meta['name']}) does not match the name on the URL ({name})"
        )
    if kind.namespaced and meta.get("namespace") and meta["namespace"] != namespace:
        raise errors.bad_request(
            "the namespace of the provided object does not match the namespace sent on the request"
        )
    meta = {**meta, "name": name}
    if kind.namespaced:
        meta["namespace"] = namespace
    return {**body, "metadata": meta}


def _writable(kind: Kind, config: dict[str, Any], subresource: str | None) -> dict[str, Any]:
    """The part of a configuration the write can change (the strategy resets the rest): no ``status``
    through the main resource of a kind with a status subresource; through ``status``, only the status
    (and, for built-ins, labels and annotations, as their status writes allow)."""
    if subresource == "status":
        meta = config["metadata"]
        kept: tuple[str, ...] = ("name", "namespace", "resourceVersion", "uid")
        kept += () if kind.is_custom else ("labels", "annotations")
        out = {k: v for k, v in config.items() if k in ("apiVersion", "kind", "status")}
        return {**out, "metadata": {k: v for k, v in meta.items() if k in kept}}
    if kind.status_subresource:
        return {k: v for k, v in config.items() if k != "status"}
    return config


_pruners: dict[int, schemas.StructuralSchema] = {}


def _pruned(kind: Kind, config: dict[str, Any], field_validation: str) -> tuple[dict[str, Any], list[str]]:
    """The configuration without the fields the kind does not declare: a built-in's as its Go struct
    decodes it (``sim.decoding``), a custom resource's as its structural schema prunes it."""
    if not kind.is_custom:
        return decoding.decode_body(kind, config, field_validation=field_validation)
    if kind.schema is None:
        return config, []
    pruner = _pruners.get(id(kind.schema))
    if pruner is None:
        pruner = _pruners[id(kind.schema)] = schemas.StructuralSchema(kind.schema)
    out, unknown = pruner.prune(config)
    if unknown and field_validation == "Strict":
        raise errors.bad_request(
            "strict decoding error: " + ", ".join(f'unknown field "{u}"' for u in unknown)
        )
    return out, [] if field_validation == "Ignore" else [f'unknown field "{u}"' for u in unknown]


def _iterate(paths: FieldSet) -> list[Path]:
    """structured-merge-diff's ``Set.Iterate`` order: a node's members, then its children in turn."""
    trie: dict[str, Any] = {}
    for path in paths:
        node = trie
        for pe in path:
            node = node.setdefault(pe, {})
        node["."] = True
    out: list[Path] = []

    def walk(node: dict[str, Any], prefix: Path) -> None:
        children = sorted((pe for pe in node if pe != "."), key=fieldpaths.order)
        out.extend((*prefix, pe) for pe in children if "." in node[pe])
        for pe in children:
            walk(node[pe], (*prefix, pe))

    walk(trie, ())
    return out


def _print_manager(entry: Entry) -> str:
    """``printManager``: how a conflict names the manager holding the field."""
    text = json.dumps(entry.manager)
    if entry.subresource:
        text += f" with subresource {json.dumps(entry.subresource)}"
    if entry.operation == UPDATE:
        text += f" using {entry.api_version}"
    return text


def conflict_error(conflicts: Iterable[tuple[Entry, FieldSet]]) -> errors.ApiError:
    """409 Conflict as ``NewConflictError`` words it, one cause per field and manager."""
    ordered = sorted(conflicts, key=lambda c: (c[0].manager, c[0].operation, c[0].subresource))
    pairs = [(entry, path) for entry, paths in ordered for path in _iterate(paths)]
    causes = [
        {
            "reason": "FieldManagerConflict",
            "message": f"conflict with {_print_manager(entry)}",
            "field": fieldpaths.render(path),
        }
        for entry, path in pairs
    ]
    if len(pairs) == 1:
        entry, path = pairs[0]
        message = (
            f"Apply failed with 1 conflict: conflict with {_print_manager(entry)}: {fieldpaths.render(path)}"
        )
    else:
        lines = []
        for entry, paths in ordered:
            lines.append(f"conflicts with {_print_manager(entry)}:")
            lines += [f"- {fieldpaths.render(p)}" for p in _iterate(paths)]
        message = f"Apply failed with {len(pairs)} conflicts: " + "\n".join(lines)
    return errors.ApiError(409, "Conflict", message, {"causes": causes})


def apply(
    api: ApiServer,
    kind: Kind,
    namespace: str,
    name: str,
    body: Any,
    *,
    manager: str,
    force: bool,
    subresource: str | None,
    field_validation: str,
    dry_run: bool,
) -> Result:
    check_patch_options(apply=True, manager=manager, force=force)
    config, warnings = _pruned(kind, _config(kind, namespace, name, body), field_validation)
    config = _writable(kind, config, subresource)
    shape = fieldtypes.for_kind(kind)
    sub = subresource or ""
    applied = managedfields.ownable(kind, structured.field_set(config, shape), sub)
    existing = api.store.get(api.key(kind, namespace, name))
    if existing is None:
        if subresource:
            raise errors.not_found(kind.plural, kind.group, name)
        live: dict[str, Any] = {}
        entries: list[Entry] = []
    else:
        live = api.to_view(kind, admission.read_defaults(kind, existing))
        cmeta = config["metadata"]
        api.check_preconditions(
            kind, existing, rv=cmeta.get("resourceVersion") or "", uid=cmeta.get("uid") or ""
        )
        entries = managedfields.stored(live)
        live = managedfields.without_managed_fields(live)
    merged = structured.merge(live, config, shape)

    identity = (manager, APPLY, sub, "")
    last = next((e for e in entries if e.identity == identity), None)
    others = [e for e in entries if e.identity != identity]
    if last is not None:
        owned = applied.union(*(e.fields for e in others))
        held = fieldpaths.prefixes(owned)
        gone = frozenset(p for p in last.fields - owned if p not in held)
        merged = structured.remove(merged, gone, shape)

    diff = structured.compare(live, merged, shape)
    changed = diff.changed()
    removed = frozenset(diff.removed)
    conflicts = [(e, e.fields & changed) for e in others if e.fields & changed]
    if conflicts and not force:
        raise conflict_error(conflicts)
    object_changed = merged != live
    now = api.now_text()
    time = now if object_changed or last is None or last.time is None else last.time
    mine = Entry(manager, APPLY, kind.api_version, time, sub, applied)
    managed = managedfields.encode([*(e.with_fields(e.fields - changed - removed) for e in others), mine])
    if existing is None:
        # The storage layer clears a resourceVersion when an update creates (as PUT does).
        meta = {k: v for k, v in merged["metadata"].items() if k != "resourceVersion"}
        result = api.create(
            kind,
            namespace,
            {**merged, "metadata": meta},
            field_validation=field_validation,
            dry_run=dry_run,
            managed=managed,
        )
    else:
        result = api.write_applied(
            kind,
            existing,
            merged,
            managed,
            subresource=subresource,
            field_validation=field_validation,
            dry_run=dry_run,
        )
    result.warnings[:0] = warnings
    return result
