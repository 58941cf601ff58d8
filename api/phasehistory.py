"""Phase history without gaps: the transitions this replica decided, and the phase changes it only observed.

A replica journals every observed version of every object, but decision records only for the time it
led. For the rest (the old leader's term, seen by a standby), the observed objects still tell the story:
``status.phase``, and the ``Ready`` condition whose reason is the transition's trigger in CamelCase and
whose message its reason. ``History`` folds decision and observed records, in seq order, into phase items:

* a decision record gives its transitions, ``source`` "decided" (``phases.items_of``), and each
  transition's target is remembered as pending for its subject until the write is observed;
* an observed version of one of the four ARC kinds (``KINDS``; a Pod's or any other object's phase is not
  a machine's) whose ``status.phase`` differs from the object's previous observed phase is a phase
  change: when a pending decided transition led to that phase, it is this replica's own write coming back
  (no item; the pending entries up to it are done); otherwise it is an item with ``source`` "observed"
  (and the pending entries are dropped: what happened is not what this replica decided). Its trigger is
  the Ready reason turned back into the snake_case of the machines' tables (``snake_case``), so decided
  and observed items of one list read alike.

AutoscalingListeners have no ``status.phase`` (the listener machine's state lives only in its decisions),
so a listener's history has no observed items: the gaps of another replica's term stay gaps there, and its
decided targets are not held as pending (no observation would ever settle them). At most ``PENDING``
targets are held per object: the oldest go first.

An object's first observation, when it shows a phase, is taken as the starting point (the phase is set,
the pending entries dropped, no item) when it follows decided transitions (``pending``: what those decided
is history already, and targets left pending since cannot be told from this replica's writes) or when
retention has pruned raw records (``raw_horizon`` > 0: the object may have been observed before, so
"(none) → X" would be a change that never happened). Otherwise, as for an object created while this
replica watched, it is an observed item from no phase.

An object deleted, or recreated under a new uid, starts over. A history reads from the journal's first
record, so a page after seq N folds the records up to N too (``phases.page``), and emits only those after
it; ``phaseindex`` keeps one history per app, fed as records commit.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from api.models import PhaseItem
from statemachines import kinds
from store.records import Record, RecordType

DECIDED = "decided"
OBSERVED = "observed"

Key = tuple[str, str, str]
ItemsOf = Callable[[Record], list[PhaseItem]]

# The kinds whose phases are the machines': only their observed phase changes are history.
KINDS = frozenset(kinds.BY_KIND)
# The kinds without ``status.phase``: their decided targets are never observed, so never held as pending.
PHASELESS = frozenset({kinds.AUTOSCALING_LISTENER.kind})
PENDING = 8  # decided targets held per object until observed

_WORD_START = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")


def snake_case(reason: str) -> str:
    """``RunnersRejectedSpec`` → ``runners_rejected_spec``: the inverse of ``phaseevents.camel_case``, so a
    Ready reason reads as the table trigger it came from (a snake_case word stays as it is)."""
    return _WORD_START.sub("_", reason.strip()).lower()


@dataclass
class _Seen:
    uid: str = ""
    phase: str | None = None
    observed: bool = False  # an observed version of this object was folded
    pending: list[str] = field(default_factory=list)


class History:
    """``items_of_decision``: a decision record's transitions as items (``phases.items_of``);
    ``raw_horizon``: the journal's raw horizon (records at or below it were pruned)."""

    def __init__(self, items_of_decision: ItemsOf, *, raw_horizon: int = 0) -> None:
        self._items_of_decision = items_of_decision
        self.raw_horizon = raw_horizon
        self._objects: dict[Key, _Seen] = {}

    def feed(self, record: Record) -> list[PhaseItem]:
        """The phase items ``record`` adds (decided or observed), in order."""
        if record.type is RecordType.DECISION:
            found = self._items_of_decision(record)
            for item in found:
                key = (item.kind, item.namespace, item.name)
                # The record's uid is its own object's: a transition of another subject does not carry it.
                same = key == (record.kind, record.namespace, record.name)
                seen = self._seen(key, record.uid if same else "")
                # A transition to the same phase writes no phase change, and a phaseless kind none at all.
                if item.to != item.from_ and item.kind not in PHASELESS:
                    seen.pending.append(item.to)
                    del seen.pending[:-PENDING]
            return found
        if record.type is RecordType.OBSERVED and record.seq is not None:
            return self._observe(record)
        return []

    def pending_targets(self, key: Key) -> list[str]:
        """The decided targets held for the object ``key`` until observed, oldest first."""
        seen = self._objects.get(key)
        return list(seen.pending) if seen is not None else []

    def _seen(self, key: Key, uid: str) -> _Seen:
        seen = self._objects.get(key)
        if seen is None or (uid and seen.uid and uid != seen.uid):
            seen = self._objects[key] = _Seen(uid=uid)
        elif uid and not seen.uid:
            seen.uid = uid
        return seen

    def _observe(self, record: Record) -> list[PhaseItem]:
        if record.kind not in KINDS:
            return []
        key = (record.kind, record.namespace, record.name)
        if record.body.get("event") == "DELETED":
            self._objects.pop(key, None)
            return []
        obj = record.body.get("object")
        if not isinstance(obj, Mapping):
            return []
        status = _mapping(obj.get("status"))
        phase = str(status.get("phase") or "") or None
        seen = self._seen(key, record.uid)
        first, seen.observed = not seen.observed, True
        if phase is None or phase == seen.phase:
            return []
        previous, seen.phase = seen.phase, phase
        if first and (seen.pending or self.raw_horizon > 0):
            seen.pending.clear()  # the starting point: see the module's docstring
            return []
        if phase in seen.pending:
            del seen.pending[: seen.pending.index(phase) + 1]
            return []
        seen.pending.clear()
        return [_observed_item(record, obj, status, previous, phase)]


def raw_horizon(journal: object) -> int:
    """The journal's raw horizon (``store.journal.Journal.horizons``); 0 for a reader that keeps none."""
    horizons = getattr(journal, "horizons", None)
    return int(getattr(horizons, "raw", 0) or 0)


def _observed_item(
    record: Record, obj: Mapping[str, Any], status: Mapping[str, Any], previous: str | None, phase: str
) -> PhaseItem:
    assert record.seq is not None
    ready = next(
        (c for c in status.get("conditions") or () if isinstance(c, Mapping) and c.get("type") == "Ready"),
        None,
    )
    # Without a Ready condition (an object written by a controller that sets none, or before its first
    # pass), the status's own reason and message, as EphemeralRunners carry for a failure.
    said = ready if ready is not None else status
    trigger, reason = said.get("reason"), said.get("message")
    return PhaseItem(
        seq=record.seq,
        at=record.at,
        kind=record.kind,
        namespace=record.namespace,
        name=record.name,
        uid=record.uid,
        from_=previous,
        to=phase,
        trigger=snake_case(str(trigger or "")),
        reason=str(reason or ""),
        revisions=_revisions(record.kind, obj, status),
        source=OBSERVED,
    )


def _revisions(kind: str, obj: Mapping[str, Any], status: Mapping[str, Any]) -> dict[str, int]:
    """The revisions a decided item of the kind carries, as the observed object shows them."""
    if kind == "AutoscalingRunnerSet":
        found = {
            "generation": _mapping(obj.get("metadata")).get("generation"),
            "observedGeneration": status.get("observedGeneration"),
        }
    elif kind == "EphemeralRunnerSet":
        found = {
            "actionableRevision": _mapping(obj.get("spec")).get("actionableRevision"),
            "appliedActionableRevision": status.get("appliedActionableRevision"),
        }
    else:
        return {}
    return {k: v for k, v in found.items() if isinstance(v, int) and not isinstance(v, bool)}


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}
