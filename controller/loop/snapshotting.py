"""Snapshots: what one decision reads, gathered from the projection, the effect results and the clock.

``build(view, ref, settings)`` gives the ``statemachines.snapshots.Snapshot`` of one object key. It reads
nothing but its arguments, so the same journal prefix always gives the same snapshot (replay depends on
it). What a kind's snapshot holds is what its declaration (``DECLARATION`` at the end of its machine's
module; ``statemachines.declaring``) names: ``read_related`` finds each related entry as declared,
``read_children`` the owned children of the declared kind.

``results`` are the latest ``effect_result`` body per effect key recorded for the subject, plus the
record's ``at`` (``statemachines.outcomes``), and only those recorded for the object the subject is now
(its uid): a result of an earlier object of the same name is never read as this one's.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime

from controller.loop import declared
from statemachines import declaring, effects, outcomes, runners
from statemachines.effects import ObjectRef
from statemachines.jsonvalues import JsonObject, as_mapping, section
from statemachines.kinds import ER, ERS
from statemachines.snapshots import Settings, Snapshot
from store.projection import Projection
from store.records import Record, RecordType

Related = dict[str, JsonObject | None]


def meta(obj: JsonObject | None) -> JsonObject:
    return section(obj, "metadata")


def uid(obj: JsonObject | None) -> str:
    return str(meta(obj).get("uid") or "")


class Results:
    """The latest effect result per subject and effect key, folded from ``effect_result`` records.

    A result is kept under the record's kind, namespace and name (the subject of the decision whose effect
    it answers) with the record's uid (the subject's uid then). ``forget`` drops a subject's results once
    it is gone; ``forget_runner`` drops what a set holds about one of its runners once that runner is gone
    (a long-lived set would otherwise keep a result per runner it ever made); ``for_subject`` only hands
    out those of the uid asked for.
    """

    def __init__(self) -> None:
        self._by_subject: dict[ObjectRef, dict[str, tuple[str, JsonObject]]] = {}

    def apply(self, record: Record) -> None:
        if record.type is not RecordType.EFFECT_RESULT:
            return
        key = record.body.get("key")
        if not isinstance(key, str):
            return
        subject = ObjectRef(record.kind, record.namespace, record.name)
        body = {**record.body, "at": record.at}
        self._by_subject.setdefault(subject, {})[key] = (record.uid, body)

    def forget(self, subject: ObjectRef) -> None:
        self._by_subject.pop(subject, None)

    def forget_runner(self, runner: JsonObject) -> None:
        """Drop the results its EphemeralRunnerSet holds about ``runner`` (the last observed object of a
        runner now gone): its create's, unless the API server refused it, and its registration's release.

        The set's decisions read a create's result only for a refusal (``refusals``: its next runners
        may be created under the same name) and a release's only for a runner it owns now (the key names
        the registration), so no decision reads what is dropped.
        """
        runner_meta = meta(runner)
        namespace, name = str(runner_meta.get("namespace") or ""), str(runner_meta.get("name") or "")
        for owner in runner_meta.get("ownerReferences") or ():
            if not isinstance(owner, Mapping) or owner.get("kind") != ERS:
                continue
            held = self._by_subject.get(ObjectRef(ERS, namespace, str(owner.get("name") or "")))
            if not held:
                continue
            target = ObjectRef(ER, namespace, name)
            create = effects.CreateObject(target, {}).key
            created = held.get(create)
            if created is not None and created[1].get("error") != outcomes.Failure.INVALID:
                del held[create]
            held.pop(effects.release_key(target, runners.runner_id(runner)), None)

    def for_subject(self, subject: ObjectRef, subject_uid: str) -> dict[str, JsonObject]:
        found = self._by_subject.get(subject, {})
        return {
            key: body for key, (of, body) in found.items() if not (of and subject_uid) or of == subject_uid
        }

    def __len__(self) -> int:
        return sum(len(results) for results in self._by_subject.values())


@dataclass(frozen=True)
class View:
    """What a snapshot is built from: the projection, the results and the journal's clock, all as of the
    same record (``seq``)."""

    projection: Projection
    results: Results
    now: datetime
    seq: int


def build(view: View, ref: ObjectRef, settings: Settings) -> Snapshot:
    """The snapshot of ``ref`` (one of the ``declared.DECIDED`` kinds)."""
    projection = view.projection
    obj = projection.get(ref.kind, ref.namespace, ref.name)
    declaration = declared.BY_KIND[ref.kind]
    return Snapshot(
        subject=ref,
        obj=obj,
        now=view.now,
        settings=settings,
        related=read_related(projection, declaration, ref, obj, settings),
        children=read_children(projection, declaration, obj),
        results=view.results.for_subject(ref, uid(obj)) if obj is not None else {},
    )


def _children(projection: Projection, owner: JsonObject | None, kind: str) -> list[JsonObject]:
    owner_uid = uid(owner)
    if not owner_uid:
        return []
    found = (projection.get(*key) for key in projection.children(owner_uid) if key[0] == kind)
    return [obj for obj in found if obj is not None]


def _owned(projection: Projection, obj: JsonObject | None) -> set[tuple[str, str, str]]:
    return set(projection.children(uid(obj))) if uid(obj) else set()


def _referred(
    projection: Projection,
    find: declaring.Referrers,
    ref: ObjectRef,
    obj: JsonObject | None,
    settings: Settings,
) -> JsonObject | None:
    found = declared.referrers(projection, find.lookup, ref.namespace, ref.name)
    if not found or obj is None or find.prefer is None:
        return found[0] if found else None
    wanted = find.prefer(obj, settings)
    named = [
        x for x in found if (meta(x).get("namespace"), meta(x).get("name")) == (wanted.namespace, wanted.name)
    ]
    return (named or found)[0]


def read_related(
    projection: Projection,
    declaration: declaring.Declaration,
    ref: ObjectRef,
    obj: JsonObject | None,
    settings: Settings,
) -> Related:
    """``Snapshot.related`` of ``ref``: each entry ``declaration`` names, found as it says."""
    related: Related = {}
    for entry in declaration.related:
        related.update(_find(projection, entry, ref, obj, settings))
    return related


def _find(
    projection: Projection,
    entry: declaring.Related,
    ref: ObjectRef,
    obj: JsonObject | None,
    settings: Settings,
) -> Related:
    find = entry.find
    if isinstance(find, declaring.SameName):
        return {entry.key: projection.get(find.kind, ref.namespace, ref.name)}
    if isinstance(find, declaring.Named):
        at = find.locate(ref, obj)
        return {entry.key: projection.get(find.kind, *at) if at is not None else None}
    if isinstance(find, declaring.SameNameElseOwned):
        found = projection.get(find.kind, ref.namespace, ref.name)
        if found is None:
            owned = _children(projection, obj, find.kind)
            found = owned[0] if owned else None
        return {entry.key: found}
    if isinstance(find, declaring.SameNameOwned):
        found = projection.get(find.kind, ref.namespace, ref.name)
        mine = (find.kind, ref.namespace, ref.name) in _owned(projection, obj)
        return {entry.key: found, find.other: None} if mine else {entry.key: None, find.other: found}
    if isinstance(find, declaring.NamedByAnnotation):
        name = as_mapping(meta(obj).get("annotations")).get(find.annotation)
        return (
            {entry.key: projection.get(find.kind, ref.namespace, name)}
            if isinstance(name, str) and name
            else {}
        )
    if isinstance(find, declaring.Peer):
        return {entry.key: _peer(projection, find, ref, obj)}
    return {entry.key: _referred(projection, find, ref, obj, settings)}


def _peer(
    projection: Projection, find: declaring.Peer, ref: ObjectRef, obj: JsonObject | None
) -> JsonObject | None:
    if obj is None:
        return None
    peers = [
        found
        for key in find.lookup.keys((ref.kind, ref.namespace, ref.name), obj)
        for found in declared.referrers(projection, find.lookup, *key)
        if (meta(found).get("namespace"), meta(found).get("name")) != (ref.namespace, ref.name)
    ]
    return min(peers, key=find.rank, default=None)


def read_children(
    projection: Projection, declaration: declaring.Declaration, obj: JsonObject | None
) -> tuple[JsonObject, ...]:
    """``Snapshot.children``: the owned objects of the kind ``declaration`` reads as children, if any."""
    if declaration.children is None:
        return ()
    return tuple(_children(projection, obj, declaration.children))
