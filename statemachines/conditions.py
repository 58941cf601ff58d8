"""Conditions: the ``status.conditions`` each kind carries next to its ``phase``.

A phase says where an object is in its lifecycle; conditions say why, in the shape every Kubernetes
tool reads (``kubectl wait --for=condition=Ready``, ``kubectl describe``): a list of
``{type, status, observedGeneration, lastTransitionTime, reason, message}`` keyed by ``type``, with
``status`` one of ``"True"``, ``"False"``, ``"Unknown"`` and ``reason`` a CamelCase word.

Machines state the conditions they want (``Condition``) and ``merged`` folds them into what was
observed:

* ``lastTransitionTime`` changes only when ``status`` changes; it is the decision's clock
  (``Snapshot.now``, taken from the journal), so a replay computes the same list.
* ``observedGeneration`` is the ``metadata.generation`` the pass read.
* Condition types the machine does not state (another writer's) are kept, in place; new types are
  appended in the order given.
* ``merged`` answers None when nothing would change, so a settled pass writes nothing (I8.1). A status
  patch carries the whole list (a merge patch replaces lists), which is why the machine must only ever
  write the list ``merged`` returned.

The condition types of each kind are named where they are decided (``READY`` is shared by all four:
True exactly when the phase is the kind's working phase).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import cast

from statemachines.jsonvalues import JsonObject
from statemachines.objects import StatusCondition
from statemachines.pods import format_time

READY = "Ready"

TRUE, FALSE, UNKNOWN = "True", "False", "Unknown"


@dataclass(frozen=True)
class Condition:
    """A condition a machine wants set: ``status`` True, False or None (Unknown)."""

    type: str
    status: bool | None
    reason: str
    message: str = ""

    @property
    def status_text(self) -> str:
        return UNKNOWN if self.status is None else (TRUE if self.status else FALSE)


def observed(status: JsonObject | None) -> list[StatusCondition]:
    """The conditions of an observed ``status`` (entries that are not objects with a type are dropped)."""
    found = (status or {}).get("conditions")
    if not isinstance(found, list):
        return []
    entries = [c for c in found if isinstance(c, Mapping) and isinstance(c.get("type"), str)]
    return [cast(StatusCondition, dict(c)) for c in entries]


def find(status: JsonObject | None, type_: str) -> StatusCondition | None:
    """The observed condition of ``type_``, or None."""
    return next((c for c in observed(status) if c["type"] == type_), None)


def merged(
    status: JsonObject | None, wanted: Iterable[Condition], *, generation: int, now: datetime
) -> list[StatusCondition] | None:
    """The ``status.conditions`` list with ``wanted`` set, or None when it would equal the observed one."""
    current = observed(status)
    result = [c.copy() for c in current]
    index = {c["type"]: i for i, c in enumerate(result)}
    for condition in wanted:
        entry: StatusCondition = {
            "type": condition.type,
            "status": condition.status_text,
            "observedGeneration": generation,
            "lastTransitionTime": format_time(now),
            "reason": condition.reason,
            "message": condition.message,
        }
        at = index.get(condition.type)
        if at is None:
            index[condition.type] = len(result)
            result.append(entry)
            continue
        before = result[at]
        if before.get("status") == entry["status"] and before.get("lastTransitionTime"):
            entry["lastTransitionTime"] = before["lastTransitionTime"]
        result[at] = entry
    return None if result == current else result


def status_patch(
    status: JsonObject | None, wanted: Iterable[Condition], *, generation: int, now: datetime
) -> dict[str, list[StatusCondition]]:
    """``{"conditions": [...]}`` to merge into a status patch, or ``{}`` when nothing changes."""
    conditions = merged(status, wanted, generation=generation, now=now)
    return {} if conditions is None else {"conditions": conditions}
