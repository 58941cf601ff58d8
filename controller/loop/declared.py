"""The controller declarations of the four decided kinds, and the registries derived from them.

Each machine module ends with its ``DECLARATION`` (``statemachines.declaring``): the kind, its decide
function, the children it owns, the related objects it reads and the watches that are not ownership.
Everything by kind the runtime needs comes from these four and nothing else:

* ``DECIDED``: the decided kinds, in the order a restart enqueues them;
* ``OWNERS``: child kind → the owner kinds that own it, with the update predicate of that owned watch
  (``mapping`` delivers an owned change through them);
* ``WATCHES``: changed kind → the declarations whose watches map it to their keys, taken by the kind
  they wake in name order (listeners before scale sets: the order keys were always given in);
* ``INDEXES``: one projection index per declared reverse lookup (``referrers`` reads them), so neither a
  snapshot nor a mapping scans a kind;
* ``WATCHED``: every kind a declaration names, in the order of the watchers' table
  (``watchers.kinds``), but the ``REPORTED`` ones; the controller watches these and asks list and watch
  on them (``permissions``);
* ``REPORTED``: the kinds a declaration names that no watcher lists (Secrets: no chart lets the controller
  list or watch them); they are observed through the executor's answers (``controller.executor.observing``).

The snapshot builder (``snapshotting``) interprets the declared related reads; ``reconciling.DECIDERS``
wraps the declared decide functions.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from controller.executor import observing
from statemachines import autoscalinglisteners, autoscalingrunnersets, ephemeralrunners, ephemeralrunnersets
from statemachines.declaring import Declaration, Owns, ReverseLookup, Watch
from statemachines.jsonvalues import JsonObject
from store.projection import Index, Projection
from watchers import kinds as watched

DECLARATIONS: Final[tuple[Declaration, ...]] = (
    autoscalingrunnersets.DECLARATION,
    ephemeralrunnersets.DECLARATION,
    ephemeralrunners.DECLARATION,
    autoscalinglisteners.DECLARATION,
)
BY_KIND: Final[Mapping[str, Declaration]] = {d.kind: d for d in DECLARATIONS}
DECIDED: Final[tuple[str, ...]] = tuple(BY_KIND)


def _owners() -> dict[str, dict[str, Owns]]:
    found: dict[str, dict[str, Owns]] = {}
    for declaration in DECLARATIONS:
        for owned in declaration.owns:
            found.setdefault(owned.kind, {})[declaration.kind] = owned
    return found


def _watches() -> dict[str, tuple[tuple[str, Watch], ...]]:
    found: dict[str, list[tuple[str, Watch]]] = {}
    for declaration in sorted(DECLARATIONS, key=lambda d: d.kind):
        for watch in declaration.watches:
            found.setdefault(watch.kind, []).append((declaration.kind, watch))
    return {kind: tuple(pairs) for kind, pairs in found.items()}


OWNERS: Final[Mapping[str, Mapping[str, Owns]]] = _owners()
WATCHES: Final[Mapping[str, tuple[tuple[str, Watch], ...]]] = _watches()
INDEXES: Final[Mapping[ReverseLookup, Index]] = {
    lookup: Index(lookup.name, lookup.kind, lookup.keys) for d in DECLARATIONS for lookup in d.lookups
}


def referrers(projection: Projection, lookup: ReverseLookup, namespace: str, name: str) -> list[JsonObject]:
    """The objects of ``lookup.kind`` that ``lookup`` files under ``(namespace, name)``, in name order."""
    return projection.find(INDEXES[lookup], (namespace, name))


def named_kinds() -> frozenset[str]:
    """Every kind a declaration names: decided, owned, read or watched."""
    return frozenset(kind for d in DECLARATIONS for kind in d.kinds)


REPORTED: Final[frozenset[str]] = observing.REPORTED


def _watched() -> tuple[str, ...]:
    named = named_kinds()
    unknown = sorted(named - set(watched.NAMES) - REPORTED)
    if unknown:
        raise RuntimeError(f"declared kinds the watchers cannot watch: {', '.join(unknown)}")
    return tuple(kind for kind in watched.NAMES if kind in named)


WATCHED: Final[tuple[str, ...]] = _watched()
