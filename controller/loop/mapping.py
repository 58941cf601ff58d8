"""Which keys an observed change asks to decide: the handlers of controller-runtime, as one function.

``keys_for(change, projection)`` maps one ``observed`` record to the object keys whose decisions may
read it, as the declarations say (``controller.loop.declared``):

* the object itself, when it is one of the decided kinds;
* its owners of a decided kind, through ``ownerReferences``, when the owner's declaration owns the
  object's kind (ARS ← ERS, ERS ← ER and Secret, ER ← Pod and Secret, AL ← Pod, ServiceAccount and
  Secret);
* the keys of the declared watches on the object's kind: the listener a Role or RoleBinding is labelled
  for, the scale set a listener's spec names, the listeners naming a scale set, and for a Secret the
  listeners and scale sets that name it as their ``githubConfigSecret``.

Old and new object are both read, so a change of owner or label wakes the old key and the new one.
The update predicates of the owned watches apply to updates of an owned object only, and only to the
owner they serve: the object's own key is always delivered. They are an optimisation; with
``use_predicates=False`` every change is delivered and no decision may come out differently.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from controller.loop import declared, snapshotting
from controller.loop.declared import DECIDED
from statemachines import declaring
from statemachines.effects import ObjectRef
from statemachines.jsonvalues import JsonObject, as_mapping
from store.projection import Projection


@dataclass(frozen=True)
class Change:
    """One observed change of an object: what it was before (None: new) and is now (None: deleted)."""

    kind: str
    namespace: str
    name: str
    old: JsonObject | None
    new: JsonObject | None

    @property
    def is_update(self) -> bool:
        return self.old is not None and self.new is not None

    def objects(self) -> tuple[JsonObject, ...]:
        return tuple(obj for obj in (self.old, self.new) if obj is not None)


def keys_for(change: Change, projection: Projection, *, use_predicates: bool = True) -> list[ObjectRef]:
    """The keys to decide after ``change`` (each once, in a stable order)."""
    keys: dict[ObjectRef, None] = {}
    if change.kind in DECIDED:
        keys[ObjectRef(change.kind, change.namespace, change.name)] = None
    owned_by = declared.OWNERS.get(change.kind, {})
    for owner in owners(change):
        deliver = owned_by[owner.kind].predicate
        if (
            use_predicates
            and deliver is not None
            and change.is_update
            and not deliver(change.old, change.new)
        ):
            continue
        keys[owner] = None
    for ref in _watched(change, projection):
        keys[ref] = None
    return list(keys)


def owners(change: Change) -> list[ObjectRef]:
    """The owners named by the old or new object's ownerReferences (same namespace) whose declaration
    owns the object's kind."""
    owned_by = declared.OWNERS.get(change.kind, {})
    found: dict[ObjectRef, None] = {}
    for obj in change.objects():
        refs = as_mapping(obj.get("metadata")).get("ownerReferences")
        for ref in refs if isinstance(refs, list) else ():
            ref = as_mapping(ref)
            kind, name = ref.get("kind"), ref.get("name")
            if kind in owned_by and isinstance(name, str) and name:
                found[ObjectRef(str(kind), change.namespace, name)] = None
    return list(found)


def _watched(change: Change, projection: Projection) -> Iterable[ObjectRef]:
    for kind, watch in declared.WATCHES.get(change.kind, ()):
        if isinstance(watch, declaring.Mapped):
            for obj in change.objects():
                for namespace, name in watch.to(obj):
                    yield ObjectRef(kind, namespace, name)
        elif isinstance(watch, declaring.Peers):
            for obj in change.objects():
                for key in watch.lookup.keys((change.kind, change.namespace, change.name), obj):
                    for peer in declared.referrers(projection, watch.lookup, *key):
                        yield _ref(kind, peer)
        else:
            for obj in declared.referrers(projection, watch.lookup, change.namespace, change.name):
                yield _ref(kind, obj)


def _ref(kind: str, obj: JsonObject) -> ObjectRef:
    meta = snapshotting.meta(obj)
    return ObjectRef(kind, str(meta.get("namespace") or ""), str(meta.get("name") or ""))
