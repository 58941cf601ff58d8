"""``metadata.managedFields``: the entries kube-apiserver keeps per field manager, and how every write that
is not an apply updates them (the ``Update`` operation).

An entry is a manager, an operation (``Apply`` or ``Update``), the API version it wrote, a time, the
subresource and its field set (``fieldsType: FieldsV1``). Entries are identified as kube-apiserver
identifies them: manager, operation and subresource, plus the API version for ``Update`` entries, so a
manager that applies and also updates has two entries.

An update of any kind (create, PUT, merge / JSON / strategic patch, status writes) compares the object
before and after: the writer's ``Update`` entry gains the added and modified fields and loses the removed
ones; every other manager loses the fields the write changed or removed (an update always forces); empty
entries vanish. The writer's entry gets a new time whenever the write changes the object.
``managedFields`` sent in the body replace the stored ones when they decode (a list holding one empty
entry, ``[{}]``, thus clears them); an empty list or entries that do not decode keep the stored ones, as
upstream, so a client unaware of the field cannot drop it. Fields no manager may own (type meta, the
server-owned metadata, ``status`` of the main resource when there is a status subresource, ``spec`` on the
status subresource) are never recorded.
"""

from __future__ import annotations

import contextlib
import functools
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Any

from sim import fieldpaths, fieldtypes, structured
from sim.fieldpaths import FieldSet, Path
from sim.kinds import Kind

APPLY = "Apply"
UPDATE = "Update"
FIELDS_V1 = "FieldsV1"

# stripmeta.go: fields every manager's set leaves out.
_STRIPPED: tuple[Path, ...] = (
    ("f:apiVersion",),
    ("f:kind",),
    ("f:metadata",),
    *(
        ("f:metadata", f"f:{name}")
        for name in (
            "name",
            "namespace",
            "creationTimestamp",
            "selfLink",
            "uid",
            "clusterName",
            "generation",
            "managedFields",
            "resourceVersion",
        )
    ),
)


@dataclass(frozen=True)
class Entry:
    manager: str
    operation: str
    api_version: str
    time: str | None
    subresource: str
    fields: FieldSet
    # The entry as it is stored, when it was read from a stored object and is unchanged since: written
    # back as it is, not encoded again (encoding the field trie is most of an update's cost here).
    encoded: dict[str, Any] | None = field(default=None, compare=False, repr=False)

    def with_fields(self, fields: FieldSet, time: str | None = None) -> Entry:
        """This entry with ``fields`` (and ``time`` when given); itself when neither changes."""
        time = self.time if time is None else time
        if fields == self.fields and time == self.time:
            return self
        return replace(self, fields=fields, time=time, encoded=None)

    @property
    def identity(self) -> tuple[str, str, str, str]:
        return (
            self.manager,
            self.operation,
            self.subresource,
            self.api_version if self.operation == UPDATE else "",
        )

    def as_json(self) -> dict[str, Any]:
        if self.encoded is not None:
            return dict(self.encoded)
        # metav1.ManagedFieldsEntry's field order.
        out: dict[str, Any] = {"manager": self.manager, "operation": self.operation}
        if self.api_version:
            out["apiVersion"] = self.api_version
        if self.time:
            out["time"] = self.time
        out["fieldsType"] = FIELDS_V1
        out["fieldsV1"] = _fields_v1(self.fields)
        if self.subresource:
            out["subresource"] = self.subresource
        return out


# Objects of one shape have equal field sets (every runner Pod's status written by the kubelet, say), so
# their tries are made once and shared: stored objects are never changed in place, only replaced.
_fields_v1 = functools.lru_cache(maxsize=512)(fieldpaths.to_fields_v1)


def decode(raw: Any, *, canonical: bool = False) -> list[Entry]:
    """The entries of a ``managedFields`` list; ValueError when it is not a valid one.

    ``canonical``: the list is one this module encoded (a stored object's), so each entry keeps its JSON to
    be written back unchanged; a list a client sent is always encoded again."""
    if not isinstance(raw, list):
        raise ValueError("managedFields must be a list")
    out = []
    for item in raw:
        if not isinstance(item, dict):
            raise ValueError("a managedFields entry must be an object")
        if item.get("fieldsType") not in (None, "", FIELDS_V1):
            raise ValueError(f"invalid fieldsType {item.get('fieldsType')!r}")
        operation = item.get("operation") or ""
        if operation not in (APPLY, UPDATE, ""):
            raise ValueError(f"invalid operation {operation!r}")
        fields = fieldpaths.from_fields_v1(item.get("fieldsV1") or {})
        time = item.get("time")
        out.append(
            Entry(
                manager=str(item.get("manager") or ""),
                operation=operation,
                api_version=str(item.get("apiVersion") or ""),
                time=time if isinstance(time, str) else None,
                subresource=str(item.get("subresource") or ""),
                fields=fields,
                encoded=item if canonical else None,
            )
        )
    return out


def _sort_key(entry: Entry) -> tuple[str, str, str, str, str]:
    # sortEncodedManagedFields: operation, time, manager, API version, subresource.
    return (entry.operation, entry.time or "", entry.manager, entry.api_version, entry.subresource)


def encode(entries: Iterable[Entry]) -> list[dict[str, Any]]:
    """The ``managedFields`` list: non-empty entries in kube-apiserver's order, one per identity."""
    by_identity: dict[tuple[str, str, str, str], Entry] = {}
    for entry in entries:
        if entry.fields:
            by_identity[entry.identity] = entry
    return [e.as_json() for e in sorted(by_identity.values(), key=_sort_key)]


def stored(obj: Any) -> list[Entry]:
    """The entries an object carries (none when they do not decode)."""
    meta = obj.get("metadata") if isinstance(obj, dict) else None
    try:
        return decode((meta or {}).get("managedFields") or [], canonical=True)
    except ValueError:
        return []


def ownable(kind: Kind, fields: Iterable[Path], subresource: str) -> FieldSet:
    """The fields a manager may own on this kind through this subresource."""
    if subresource == "status":
        reset: Path | None = ("f:spec",)
    elif kind.status_subresource:
        reset = ("f:status",)
    else:
        reset = None
    out = set(fields)
    for path in list(out):
        if (
            path in _STRIPPED
            or path[:2] == ("f:metadata", "f:managedFields")
            or (reset is not None and path[: len(reset)] == reset)
        ):
            out.discard(path)
    return frozenset(out)


def without_managed_fields(obj: Any) -> Any:
    if not isinstance(obj, dict) or "managedFields" not in (obj.get("metadata") or {}):
        return obj
    meta = {k: v for k, v in obj["metadata"].items() if k != "managedFields"}
    return {**obj, "metadata": meta}


def manager_from_user_agent(user_agent: str) -> str:
    """kube-apiserver's default field manager: the user agent up to its first ``/``, printable, 128 bytes."""
    out = ""
    for ch in user_agent.split("/")[0]:
        if not ch.isprintable() or (unicodedata.category(ch) == "Zs" and ch != " "):
            continue
        if len((out + ch).encode()) > 128:
            break
        out += ch
    return out


def after_update(
    kind: Kind, old: Any, new: Any, *, manager: str, subresource: str, now: str
) -> list[dict[str, Any]]:
    """The ``managedFields`` of ``new`` after an update from ``old`` (``{}`` for a create) by ``manager``.

    ``new`` carries what the write asked for: the body's ``managedFields``, or the stored ones.
    """
    entries = stored(old)
    sent = ((new.get("metadata") or {}).get("managedFields")) if isinstance(new, dict) else None
    if sent and not subresource:
        with contextlib.suppress(ValueError):
            entries = decode(sent)
    shape = fieldtypes.for_kind(kind)
    diff = structured.compare(without_managed_fields(old), without_managed_fields(new), shape)
    changed = ownable(kind, diff.changed(), subresource)
    removed = frozenset(diff.removed)
    own = Entry(manager, UPDATE, kind.api_version, None, subresource, fieldpaths.EMPTY)
    out = []
    for entry in entries:
        if entry.identity == own.identity:
            own = entry
            continue
        out.append(entry.with_fields(entry.fields - changed - removed))
    fields = (own.fields - removed) | changed
    # The time of the writer's last change to the object (an update that changes nothing keeps it).
    changes = bool(changed or removed) or fields != own.fields or own.time is None
    out.append(own.with_fields(fields, now if changes else own.time))
    return encode(_capped([e for e in out if e.fields]))


MAX_UPDATE_MANAGERS = 10
ANCIENT = "ancient-changes"


def _capped(entries: list[Entry]) -> list[Entry]:
    """``capUpdateManagers``: past ten ``Update`` entries, the oldest are merged, per API version, into
    one ``ancient-changes`` entry carrying the time of the newest entry merged into it."""
    updaters = sorted((e for e in entries if e.operation != APPLY), key=lambda e: (e.time or "", e.identity))
    count = len(updaters)
    if count <= MAX_UPDATE_MANAGERS:
        return entries
    kept = {id(e): e for e in entries}
    first: dict[str, Entry] = {}
    # An ancient-changes entry of a version is that version's bucket already.
    bucket = {e.api_version: e for e in updaters if e.identity == (ANCIENT, UPDATE, "", e.api_version)}
    for entry in bucket.values():
        del kept[id(entry)]
    for entry in updaters:
        if count <= MAX_UPDATE_MANAGERS:
            break
        version = entry.api_version
        if entry.manager == ANCIENT and bucket.get(version) is entry:
            continue
        if version not in first and version not in bucket:
            first[version] = entry
            continue
        if version not in bucket:
            oldest = first[version]
            del kept[id(oldest)]
            bucket[version] = Entry(ANCIENT, UPDATE, version, oldest.time, "", oldest.fields)
        del kept[id(entry)]
        bucket[version] = bucket[version].with_fields(bucket[version].fields | entry.fields, entry.time)
        count -= 1
    return [*kept.values(), *bucket.values()]
