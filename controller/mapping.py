"""Which keys an observed change asks to decide: the handlers of controller-runtime, as one function.

``keys_for(change, projection)`` maps one ``observed`` record to the object keys whose decisions may
read it:

* the object itself, when it is one of the four decided kinds;
* its owners of a decided kind, through ``ownerReferences`` (ERS ← ER, ARS ← ERS, ER ← Pod and Secret,
  AL ← Pod, ServiceAccount and Secrets);
* the AutoscalingListener a Role or RoleBinding is labelled for (they live in the scale set's namespace,
  where an owner reference to the listener cannot point);
* the AutoscalingRunnerSet an AutoscalingListener names in its spec, and the listeners that name an
  AutoscalingRunnerSet;
* for a Secret, the listeners and scale sets that name it as their ``githubConfigSecret``.

Old and new object are both read, so a change of owner or label wakes the old key and the new one.
The update predicates (``statemachines.predicates``) apply to updates of an owned object only, and only
to the owner they serve: the object's own key is always delivered. They are an optimisation; with
``use_predicates=False`` every change is delivered and no decision may come out differently.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from controller import lookups, snapshotting
from controller.snapshotting import DECIDED
from statemachines import listenerobjects, predicates
from statemachines.effects import ObjectRef
from statemachines.jsonvalues import JsonObject, as_mapping
from statemachines.kinds import AL, ARS, ER, ERS
from store.projection import Projection

# (owned kind, owner kind) → deliver an update of the owned object to the owner?
UPDATE_PREDICATES: dict[tuple[str, str], Callable[[object, object], bool]] = {
    (ERS, ARS): predicates.ars_from_runner_set,
    (ER, ERS): predicates.ers_from_runner,
    ("Pod", ER): predicates.runner_from_pod,
}

# Role and RoleBinding name their listener in labels (listenerobjects); the prefixed spelling is read too.
LISTENER_LABELS = (
    (listenerobjects.LABEL_LISTENER_NAMESPACE, listenerobjects.LABEL_LISTENER_NAME),
    (
        "actions.github.com/" + listenerobjects.LABEL_LISTENER_NAMESPACE,
        "actions.github.com/" + listenerobjects.LABEL_LISTENER_NAME,
    ),
)


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
    for owner in owners(change):
        deliver = UPDATE_PREDICATES.get((change.kind, owner.kind))
        if (
            use_predicates
            and deliver is not None
            and change.is_update
            and not deliver(change.old, change.new)
        ):
            continue
        keys[owner] = None
    for ref in _related(change, projection):
        keys[ref] = None
    return list(keys)


def owners(change: Change) -> list[ObjectRef]:
    """The owners of a decided kind named by the old or new object's ownerReferences (same namespace)."""
    found: dict[ObjectRef, None] = {}
    for obj in change.objects():
        refs = as_mapping(obj.get("metadata")).get("ownerReferences")
        for ref in refs if isinstance(refs, list) else ():
            ref = as_mapping(ref)
            kind, name = ref.get("kind"), ref.get("name")
            if kind in DECIDED and isinstance(name, str) and name:
                found[ObjectRef(str(kind), change.namespace, name)] = None
    return list(found)


def _related(change: Change, projection: Projection) -> Iterable[ObjectRef]:
    for obj in change.objects():
        yield from _labelled_listener(obj)
        if change.kind == AL:
            spec = listenerobjects.spec(obj)
            name = str(spec.get("autoscalingRunnerSetName") or "")
            if name:
                yield ObjectRef(ARS, listenerobjects.ars_namespace(obj), name)
    if change.kind == ARS:
        for listener in snapshotting.listeners_of(projection, change.namespace, change.name):
            yield _ref(AL, listener)
    if change.kind == "Secret":
        yield from _credential_users(projection, change.namespace, change.name)


def _labelled_listener(obj: JsonObject) -> Iterable[ObjectRef]:
    labels = as_mapping(as_mapping(obj.get("metadata")).get("labels"))
    for namespace_label, name_label in LISTENER_LABELS:
        namespace, name = labels.get(namespace_label), labels.get(name_label)
        if isinstance(namespace, str) and isinstance(name, str) and namespace and name:
            yield ObjectRef(AL, namespace, name)


def _credential_users(projection: Projection, namespace: str, name: str) -> Iterable[ObjectRef]:
    """The listeners and scale sets whose ``githubConfigSecret`` is the Secret ``namespace/name``."""
    for listener in projection.find(lookups.LISTENERS_BY_CREDENTIALS, (namespace, name)):
        yield _ref(AL, listener)
    for scale_set in projection.find(lookups.SCALE_SETS_BY_CREDENTIALS, (namespace, name)):
        yield _ref(ARS, scale_set)


def _ref(kind: str, obj: JsonObject) -> ObjectRef:
    meta = snapshotting.meta(obj)
    return ObjectRef(kind, str(meta.get("namespace") or ""), str(meta.get("name") or ""))
