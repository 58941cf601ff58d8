"""Lists and the options that lists and watches share: selectors, pagination and resourceVersion rules.

Rows S14–S18 of apiserver-semantics.md: the list RV is the store revision at read time, items are
ordered by namespace then name, ``limit``/``continue`` pages all carry the first page's revision (a
snapshot rebuilt from the history), and compacted revisions answer 410 Expired.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from sim import admission, errors, selectors
from sim.apiserver import ApiServer
from sim.kinds import Kind
from sim.store import Expired, Obj

Matcher = Callable[[Obj], bool]

CONTINUE_EXPIRED = (
    "The provided continue parameter is too old to display a consistent list result. You can start a new "
    "list without the continue parameter, or use the continue token in this response to retrieve the "
    "remainder of the results. Continuing with the provided token results in an inconsistent list - objects "
    "that were created, modified, or deleted between the time the first chunk was returned and now may show "
    "up in the list."
)


def matcher(kind: Kind, label_selector: str, field_selector: str) -> tuple[Matcher, bool]:
    """A predicate over stored objects for the selectors, and whether any selector was given."""
    labels = selectors.parse_label_selector(label_selector or "")
    fields = selectors.parse_field_selector(field_selector or "", kind.field_selectors)

    def matches(obj: Obj) -> bool:
        meta = obj.get("metadata") or {}
        return labels.matches(meta.get("labels") or {}) and fields.matches(
            selectors.field_set(obj, kind.kind)
        )

    return matches, bool(label_selector or field_selector)


@dataclass(frozen=True)
class ListOptions:
    label_selector: str = ""
    field_selector: str = ""
    limit: int = 0
    continue_token: str = ""
    resource_version: str = ""
    resource_version_match: str = ""
    send_initial_events: bool | None = None


def _list_options_invalid(errs: list[errors.FieldError]) -> errors.ApiError:
    return errors.invalid("ListOptions", "meta.k8s.io", "", errs)


def validate_list_options(opts: ListOptions) -> None:
    errs = []
    if opts.resource_version_match and not opts.resource_version:
        errs.append(
            errors.forbidden(
                "resourceVersionMatch", "resourceVersionMatch is forbidden unless resourceVersion is provided"
            )
        )
    if opts.resource_version_match and opts.continue_token:
        errs.append(
            errors.forbidden(
                "resourceVersionMatch", "resourceVersionMatch is forbidden when continue is provided"
            )
        )
    if opts.resource_version_match == "Exact" and opts.resource_version == "0":
        errs.append(
            errors.forbidden(
                "resourceVersionMatch", 'resourceVersionMatch "exact" is forbidden for resourceVersion "0"'
            )
        )
    if opts.resource_version_match and opts.resource_version_match not in ("Exact", "NotOlderThan"):
        errs.append(
            errors.not_supported(
                # Upstream lists the empty string as supported too (S18).
                "resourceVersionMatch",
                opts.resource_version_match,
                ("Exact", "NotOlderThan", ""),
            )
        )
    if opts.send_initial_events is not None:
        errs.append(errors.forbidden("sendInitialEvents", "sendInitialEvents is forbidden for list"))
    if errs:
        raise _list_options_invalid(errs)
    if opts.continue_token and opts.resource_version not in ("", "0"):
        raise errors.bad_request("specifying resource version is not allowed when using continue")


def encode_continue(rv: int, start: str) -> str:
    raw = json.dumps({"v": "meta.k8s.io/v1", "rv": rv, "start": start}, separators=(",", ":"))
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def decode_continue(token: str) -> tuple[int, str]:
    try:
        padded = token + "=" * (-len(token) % 4)
        data = json.loads(base64.urlsafe_b64decode(padded.encode()))
        return int(data["rv"]), str(data["start"])
    except (ValueError, KeyError, TypeError, binascii.Error) as exc:
        raise errors.bad_request(f"continue key is not valid: {exc}") from exc


def _rv_int(value: str) -> int:
    try:
        rv = int(value)
    except ValueError:
        raise errors.bad_request(f"invalid resource version: {value!r}") from None
    if rv < 0:
        raise errors.bad_request(f"invalid resource version: {value!r}")
    return rv


def list_objects(api: ApiServer, kind: Kind, namespace: str | None, opts: ListOptions) -> Obj:
    validate_list_options(opts)
    matches, selective = matcher(kind, opts.label_selector, opts.field_selector)
    store = api.store
    start = ""
    if opts.continue_token:
        rv, start = decode_continue(opts.continue_token)
        try:
            items = store.items_at(kind.key, rv, namespace)
        except Expired:
            raise errors.expired(CONTINUE_EXPIRED) from None
    elif opts.resource_version_match == "Exact":
        rv = _rv_int(opts.resource_version)
        try:
            items = store.items_at(kind.key, rv, namespace)
        except Expired as exc:
            raise errors.expired(f"The resourceVersion for the provided list is too old. ({exc})") from None
    else:
        if opts.resource_version:
            _rv_int(opts.resource_version)
        rv = store.revision
        items = store.items(kind.key, namespace)
    if start:
        items = [o for o in items if _sort_key(o) > start]
    selected: list[Obj] = []
    remaining = 0
    next_start = ""
    for obj in items:
        if not matches(obj):
            continue
        if opts.limit and len(selected) >= opts.limit:
            remaining += 1
            continue
        selected.append(obj)
    if opts.limit and remaining:
        next_start = _sort_key(selected[-1]) if selected else start
    metadata: dict[str, Any] = {"resourceVersion": str(rv)}
    if next_start:
        metadata["continue"] = encode_continue(rv, next_start)
        if not selective:
            metadata["remainingItemCount"] = remaining
    elif kind.is_custom:
        # A custom resource list is unstructured: kube-apiserver writes its empty continue ("") where a
        # built-in list's omitempty leaves it out.
        metadata["continue"] = ""
    return {
        "kind": kind.extra.get("listKind", kind.kind + "List"),
        "apiVersion": kind.api_version,
        "metadata": metadata,
        "items": [present_item(api, kind, o) for o in selected],
    }


def _sort_key(obj: Mapping[str, Any]) -> str:
    meta = obj.get("metadata") or {}
    return f"{meta.get('namespace', '')}/{meta.get('name', '')}"


def present_item(api: ApiServer, kind: Kind, obj: Obj) -> Obj:
    """A list item: CR items keep apiVersion/kind, built-in items omit them (S14)."""
    view = api.to_view(kind, admission.read_defaults(kind, obj))
    if kind.is_custom:
        return view
    return {k: v for k, v in view.items() if k not in ("apiVersion", "kind")}
