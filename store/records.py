"""The records of the journal: what every fact and decision of arcsm looks like once appended.

A ``Record`` is immutable. ``seq`` is the journal's global sequence number (``None`` until appended);
``at`` is the time it was appended (RFC 3339, UTC); ``type`` says what kind of fact it is; the object
coordinates (``kind``, ``namespace``, ``name``, ``uid``, ``resource_version``) say what it is about; the
``body`` is JSON. Secret material never enters a record: ``redact`` strips what must not be kept.
A record has slots, not a dict of attributes: the journal holds many of them (its tail buffer, the
appends in flight), and each is one object less for memory and for the garbage collector to walk. It
keeps a weak-reference slot, so a reader can tell when the records it streamed are let go.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, NewType

from statemachines.jsonvalues import JsonObject

Seq = NewType("Seq", int)


class RecordType(enum.StrEnum):
    # A watch event or a re-list difference; body {"event": "ADDED"|"MODIFIED"|"DELETED", "object": {...}}.
    OBSERVED = "observed"
    DECISION = "decision"  # a machine's decision: the transitions taken (appended with its effects)
    EFFECT = "effect"  # one effect of a decision (the outbox)
    EFFECT_RESULT = "effect_result"  # what executing an effect returned
    TIMER = "timer"  # a requeue-after that fired: time enters decisions only through records
    SNAPSHOT = "snapshot"  # a projection snapshot marker written by retention
    SYNC = "sync"  # a watcher finished a (re-)list of a kind: the projection of that kind is complete
    # The machine settings the controller decides with (``statemachines.snapshots.Settings`` as JSON),
    # appended at start when they differ from the newest one; retention always keeps the newest.
    SETTINGS = "settings"


@dataclass(frozen=True, slots=True, weakref_slot=True)
class Record:
    type: RecordType
    kind: str = ""
    namespace: str = ""
    name: str = ""
    uid: str = ""
    resource_version: str = ""
    body: JsonObject = field(default_factory=dict)
    seq: Seq | None = None
    at: str = ""

    def with_seq(self, seq: Seq, at: str) -> Record:
        return replace(self, seq=seq, at=at)

    def as_journaled(self, seq: Seq, at: str, body: JsonObject) -> Record:
        """This record as the journal keeps it: its seq, its time and the (redacted) body kept.

        The journal calls this once per record appended; it sets the slots directly rather than
        through the frozen dataclass's ``__init__`` (about twice as slow), which is safe because every
        field is an already-built value.
        """
        return Record.read_back(
            self.type, self.kind, self.namespace, self.name, self.uid, self.resource_version, body, seq, at
        )

    @classmethod
    def read_back(
        cls,
        type: RecordType,
        kind: str,
        namespace: str,
        name: str,
        uid: str,
        resource_version: str,
        body: JsonObject,
        seq: Seq | None,
        at: str,
    ) -> Record:
        """A record from values already checked and converted (a row read back, an export line, a record
        journaled): its slots set directly, not through the frozen dataclass's ``__init__``."""
        record = object.__new__(cls)
        _TYPE(record, type)
        _KIND(record, kind)
        _NAMESPACE(record, namespace)
        _NAME(record, name)
        _UID(record, uid)
        _RESOURCE_VERSION(record, resource_version)
        _BODY(record, body)
        _SEQ(record, seq)
        _AT(record, at)
        return record

    def as_json(self) -> dict[str, Any]:
        """The export form: one JSON object per line in a recorded journal."""
        return {
            "seq": self.seq,
            "at": self.at,
            "type": str(self.type),
            "kind": self.kind,
            "namespace": self.namespace,
            "name": self.name,
            "uid": self.uid,
            "resourceVersion": self.resource_version,
            "body": dict(self.body),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Record:
        # Every record of an export is read through here: the slots are set as ``read_back`` sets them,
        # from the same conversions the dataclass's ``__init__`` would be given, in the same order.
        seq = data.get("seq")
        type_ = data["type"]
        return cls.read_back(
            (RECORD_TYPES.get(type_) if type(type_) is str else None) or RecordType(type_),
            str(data.get("kind", "")),
            str(data.get("namespace", "")),
            str(data.get("name", "")),
            str(data.get("uid", "")),
            str(data.get("resourceVersion", "")),
            dict(data.get("body") or {}),
            None if seq is None else Seq(int(seq)),
            str(data.get("at", "")),
        )


RECORD_TYPES = {t.value: t for t in RecordType}  # RecordType(text) looks a member up the slow way


SECRET_FIELDS = ("data", "stringData")


def redact(kind: str, obj: JsonObject) -> dict[str, Any]:
    """An object as the journal may keep it: Secrets lose ``data`` and ``stringData``, and the
    last-applied annotation (which would carry them) is dropped."""
    if kind != "Secret":
        return dict(obj)
    out = {k: v for k, v in obj.items() if k not in SECRET_FIELDS}
    meta = dict(out.get("metadata") or {})
    annotations = dict(meta.get("annotations") or {})
    if annotations.pop("kubectl.kubernetes.io/last-applied-configuration", None) is not None:
        meta["annotations"] = annotations
        out["metadata"] = meta
    return out


def observed(event: str, kind: str, obj: JsonObject) -> Record:
    """The record of a watch event (or a re-list difference) for an object of ``kind``."""
    meta = obj.get("metadata") or {}
    return Record(
        type=RecordType.OBSERVED,
        kind=kind,
        namespace=str(meta.get("namespace") or ""),
        name=str(meta.get("name") or ""),
        uid=str(meta.get("uid") or ""),
        resource_version=str(meta.get("resourceVersion") or ""),
        body={"event": event, "object": redact(kind, obj)},
    )


# The setters of Record's slots, which skip the frozen dataclass's ``__setattr__``.
_TYPE, _KIND, _NAMESPACE, _NAME, _UID, _RESOURCE_VERSION, _BODY, _SEQ, _AT = (
    getattr(Record, name).__set__
    for name in ("type", "kind", "namespace", "name", "uid", "resource_version", "body", "seq", "at")
)
