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

An object's history ends with its deletion, as a final item ``to: null``, trigger ``deleted``
(``DELETED``), with the reason, from the phase the object was last known in:

* decided, when this replica released the object's last finalizer: for an AutoscalingRunnerSet the
  table's own row (A8, trigger ``deleted``, which keeps the phase in the machine) is served as that end;
  for the other kinds (their tables have no such row) a decision on an object observed terminating
  (``metadata.deletionTimestamp``) that patches the object's own metadata, which is the finalizer
  release in their machines (the reason is the decision's note);
* observed, when the watch reports the object DELETED and no decided end came first (another replica
  released it, or it had no finalizer left).

After its end nothing more of that object is served (the DELETED that follows a decided end, a late status
write); a version under a new uid is a new object, which starts over. A history reads from the journal's first
record, so a page after seq N folds the records up to N too (``phases.page``), and emits only those after it;
``phaseindex`` keeps one history per app, fed as records commit.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from api.models import PhaseItem
from statemachines import kinds
from statemachines.jsonvalues import as_mapping
from store.records import Record, RecordType

DECIDED = "decided"
OBSERVED = "observed"

Key = tuple[str, str, str]
ItemsOf = Callable[[Record], list[PhaseItem]]

# The kinds whose phases are the machines': only their observed phase changes (and deletions) are history.
KINDS = frozenset(kinds.BY_KIND)
# The kinds without ``status.phase``: their decided targets are never observed, so never held as pending.
PHASELESS = frozenset({kinds.AUTOSCALING_LISTENER.kind})
PENDING = 8  # decided targets held per object until observed
# The trigger of an end, and the one row (A8, AutoscalingRunnerSet) that ends an object in its table.
DELETED = "deleted"
# The kinds without a ``deleted`` row: their finalizer release is a metadata patch while terminating.
RELEASED_BY_PATCH = frozenset(kinds.BY_KIND) - {kinds.AUTOSCALING_RUNNER_SET.kind}
RELEASED = "finalizer released: the deletion is complete"
GONE = "deleted: the watch reports the object gone from the cluster"

_WORD_START = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")


def snake_case(reason: str) -> str:
    """``RunnersRejectedSpec`` → ``runners_rejected_spec``: the inverse of ``phaseevents.camel_case``, so a
    Ready reason reads as the table trigger it came from (a snake_case word stays as it is)."""
    return _WORD_START.sub("_", reason.strip()).lower()


@dataclass
class _Seen:
    uid: str = ""
    phase: str | None = None  # the last observed phase
    current: str | None = None  # the last phase of any item (decided or observed): where an end starts
    observed: bool = False  # an observed version of this object was folded
    terminating: bool = False  # its last observed version carries a deletionTimestamp
    ended: bool = False  # its history ended (a decided release): nothing more until a new uid
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
            return self._decide(record)
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

    def _decide(self, record: Record) -> list[PhaseItem]:
        found: list[PhaseItem] = []
        own = (record.kind, record.namespace, record.name)
        for item in self._items_of_decision(record):
            key = (item.kind, item.namespace, item.name)
            # The record's uid is its own object's: a transition of another subject does not carry it.
            seen = self._seen(key, record.uid if key == own else "")
            if seen.ended:
                continue
            if item.trigger == DELETED:
                seen.ended, seen.pending = True, []
                found.append(item.model_copy(update={"to": None}))
                continue
            seen.current = item.to
            # A transition to the same phase writes no phase change, and a phaseless kind none at all.
            if item.to is not None and item.to != item.from_ and item.kind not in PHASELESS:
                seen.pending.append(item.to)
                del seen.pending[:-PENDING]
            found.append(item)
        subject = self._objects.get(own)
        if (
            subject is not None
            and subject.terminating
            and not subject.ended
            and record.kind in RELEASED_BY_PATCH
            and f"MergePatch:patch:{record.kind}/{record.namespace}/{record.name}" in _effects(record)
        ):
            subject.ended, subject.pending = True, []
            found.append(_end(record, subject, DECIDED, str(record.body.get("note") or RELEASED)))
        return found

    def _observe(self, record: Record) -> list[PhaseItem]:
        if record.kind not in KINDS:
            return []
        key = (record.kind, record.namespace, record.name)
        if record.body.get("event") == "DELETED":
            seen = self._objects.pop(key, None)
            if seen is not None and seen.ended and (not record.uid or record.uid == seen.uid):
                return []  # the end was decided already
            if seen is None and self.raw_horizon == 0:
                return []  # never seen: nothing to end
            return [_end(record, seen or _Seen(uid=record.uid), OBSERVED, GONE)]
        obj = record.body.get("object")
        if not isinstance(obj, Mapping):
            return []
        status = as_mapping(obj.get("status"))
        phase = str(status.get("phase") or "") or None
        seen = self._seen(key, record.uid)
        seen.terminating = bool(as_mapping(obj.get("metadata")).get("deletionTimestamp"))
        first, seen.observed = not seen.observed, True
        if seen.ended or phase is None or phase == seen.phase:
            return []
        previous, seen.phase = seen.phase, phase
        if first and (seen.pending or self.raw_horizon > 0):
            seen.pending.clear()  # the starting point: see the module's docstring
            seen.current = phase
            return []
        if phase in seen.pending:
            del seen.pending[: seen.pending.index(phase) + 1]
            return []
        seen.pending.clear()
        seen.current = phase
        return [_observed_item(record, obj, status, previous, phase)]


def _effects(record: Record) -> list[str]:
    effects = record.body.get("effects")
    return [e for e in effects if isinstance(e, str)] if isinstance(effects, list) else []


def _end(record: Record, seen: _Seen, source: str, reason: str) -> PhaseItem:
    """The final item of an object's history: from the phase it was last known in to none."""
    assert record.seq is not None
    return PhaseItem(
        seq=record.seq,
        at=record.at,
        kind=record.kind,
        namespace=record.namespace,
        name=record.name,
        uid=record.uid or seen.uid,
        from_=seen.current,
        to=None,
        trigger=DELETED,
        reason=reason,
        revisions={},
        source=source,
    )


class _Step(Protocol):
    @property
    def from_(self) -> str | None: ...
    @property
    def to(self) -> str | None: ...


def reaffirms(item: _Step) -> bool:
    """Whether the item re-affirms its phase (from = to): journaled, but not a transition a user reads."""
    return item.to is not None and item.from_ == item.to


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
            "generation": as_mapping(obj.get("metadata")).get("generation"),
            "observedGeneration": status.get("observedGeneration"),
        }
    elif kind == "EphemeralRunnerSet":
        found = {
            "actionableRevision": as_mapping(obj.get("spec")).get("actionableRevision"),
            "appliedActionableRevision": status.get("appliedActionableRevision"),
        }
    else:
        return {}
    return {k: v for k, v in found.items() if isinstance(v, int) and not isinstance(v, bool)}
