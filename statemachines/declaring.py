"""Controller declarations: what each decided kind reads and what wakes it, stated once beside its machine.

In the spirit of controller-runtime's ``For(kind).Owns(child, predicate).Watches(other, mapper)``, a
``Declaration`` names a kind, its ``decide`` function, the children it owns, the related objects its
snapshot carries and the watches that are not ownership. The controller derives everything else from the
declarations (``controller.loop.declared``): the snapshot builder, the event → key mapping, the projection
indexes of the reverse lookups, the registries by kind, the watched kinds and their RBAC. So adding a
related object to a kind touches its machine (which reads it) and its declaration (which names it), and
nothing else.

Pure data and pure functions of the subject's ref and object: how a finder is carried out against the
projection is the controller's business. The finders:

* ``SameName(kind)``: the object of ``kind`` with the subject's namespace and name;
* ``Named(kind, locate)``: the object of ``kind`` at the (namespace, name) ``locate`` computes from the
  subject's ref and object (None: no such object is looked for, the key holds None);
* ``SameNameElseOwned(kind)``: the object of ``kind`` with the subject's name, else the first one of
  that kind the subject owns;
* ``SameNameOwned(kind, other)``: the object of ``kind`` with the subject's name when the subject owns
  it; one of that name another owner holds goes under the key ``other`` instead;
* ``NamedByAnnotation(kind, annotation)``: the object of ``kind`` in the subject's namespace that the
  subject's annotation names; the key is left out of ``related`` when the annotation is unset;
* ``Referrers(lookup, prefer)``: the objects a ``ReverseLookup`` files under the subject's (namespace,
  name), the one at ``prefer(subject, settings)`` first, else the first in order (None: none);
* ``Peer(lookup, rank)``: of the other objects ``lookup`` files under a key it files the subject under
  (objects of the subject's kind that share something with it), the one ``rank`` puts first (None: none).

A ``ReverseLookup`` is "the objects of ``kind`` whose ``keys`` function yields a (namespace, name)": the
controller keeps a projection index for each, so neither a snapshot nor a mapping scans a kind.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from statemachines.decisions import Decision
from statemachines.effects import ObjectRef
from statemachines.jsonvalues import JsonObject
from statemachines.snapshots import Settings, Snapshot

ObjectKey = tuple[str, str, str]  # (kind, namespace, name), as the projection keys objects
NameRef = tuple[str, str]  # (namespace, name)
Predicate = Callable[[object, object], bool]  # (old, new) -> deliver the update?


@dataclass(frozen=True, eq=False)
class ReverseLookup:
    """The objects of ``kind`` found under each (namespace, name) ``keys(key, obj)`` yields for them.
    Told apart by identity: declare each once, at module level."""

    name: str
    kind: str
    keys: Callable[[ObjectKey, JsonObject], Iterable[NameRef]]


@dataclass(frozen=True)
class SameName:
    kind: str


@dataclass(frozen=True)
class Named:
    kind: str
    locate: Callable[[ObjectRef, JsonObject | None], NameRef | None]


@dataclass(frozen=True)
class SameNameElseOwned:
    kind: str


@dataclass(frozen=True)
class SameNameOwned:
    kind: str
    other: str  # the related key of an object of that name the subject does not own


@dataclass(frozen=True)
class NamedByAnnotation:
    kind: str
    annotation: str


@dataclass(frozen=True)
class Referrers:
    lookup: ReverseLookup
    prefer: Callable[[JsonObject, Settings], ObjectRef] | None = None


@dataclass(frozen=True)
class Peer:
    lookup: ReverseLookup
    rank: Callable[[JsonObject], tuple[object, ...]]  # ascending: the first is the one found


Finder = SameName | Named | SameNameElseOwned | SameNameOwned | NamedByAnnotation | Referrers | Peer


@dataclass(frozen=True)
class Related:
    """One entry of ``Snapshot.related``: its key and how the object is found."""

    key: str
    find: Finder

    @property
    def keys(self) -> tuple[str, ...]:
        """The keys this entry may put in ``related``."""
        return (self.key, self.find.other) if isinstance(self.find, SameNameOwned) else (self.key,)

    @property
    def kind(self) -> str:
        return self.find.lookup.kind if isinstance(self.find, Referrers | Peer) else self.find.kind


@dataclass(frozen=True)
class Owns:
    """A child kind whose ownerReferences wake the owner; ``predicate`` filters its updates (None: all)."""

    kind: str
    predicate: Predicate | None = None


@dataclass(frozen=True)
class Mapped:
    """A change of an object of ``kind`` wakes the subjects ``to(obj)`` names (same kind as declared)."""

    kind: str
    to: Callable[[JsonObject], Iterable[NameRef]]


@dataclass(frozen=True)
class Referred:
    """A change of the object of ``kind`` at (namespace, name) wakes what ``lookup`` files under it."""

    kind: str
    lookup: ReverseLookup


@dataclass(frozen=True)
class Peers:
    """A change of an object of ``lookup.kind`` wakes the others ``lookup`` files under the same keys (the
    keys of the old and of the new object)."""

    lookup: ReverseLookup

    @property
    def kind(self) -> str:
        return self.lookup.kind


Watch = Mapped | Referred | Peers


@dataclass(frozen=True)
class Declaration:
    """One decided kind: ``For(kind)`` with its decide function, ``Owns``, related reads and ``Watches``."""

    kind: str
    decide: Callable[[Snapshot], Decision]
    owns: tuple[Owns, ...] = ()
    related: tuple[Related, ...] = ()
    # The kind of the owned children read as ``Snapshot.children`` (None: none are read).
    children: str | None = None
    watches: tuple[Watch, ...] = ()

    @property
    def related_keys(self) -> frozenset[str]:
        """Every key the snapshot's ``related`` may hold: what the machine may read."""
        return frozenset(key for entry in self.related for key in entry.keys)

    @property
    def lookups(self) -> tuple[ReverseLookup, ...]:
        """The reverse lookups the related reads and the watches use."""
        found = [e.find.lookup for e in self.related if isinstance(e.find, Referrers | Peer)]
        found += [w.lookup for w in self.watches if isinstance(w, Referred | Peers)]
        return tuple(dict.fromkeys(found))

    @property
    def kinds(self) -> tuple[str, ...]:
        """Every kind this declaration names: itself, its children, what it reads and what it watches."""
        named = [self.kind, *(o.kind for o in self.owns), *(r.kind for r in self.related)]
        named += [w.kind for w in self.watches] + [lookup.kind for lookup in self.lookups]
        if self.children is not None:
            named.append(self.children)
        return tuple(dict.fromkeys(named))
