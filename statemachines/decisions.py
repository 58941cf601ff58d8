"""Decisions: what one pass of a machine concluded about one object.

A ``Decision`` holds the phase transitions taken (usually none or one; a pass may write Pending and go
on) and the effects to perform. It is appended to the journal with its effects in one transaction, and
replaying the journal must produce the same decisions exactly, so it carries nothing but data.

``Decision.as_json`` is the journaled form (the runtime adds each transition's ``subject``);
``transitions_from_json`` reads the transitions of such a body back, for whatever reads the journal.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from statemachines.effects import Effect, ObjectRef


@dataclass(frozen=True)
class Transition:
    """One phase change: ``from_`` is the phase before (``""`` for a new object), ``to`` the phase after.

    ``trigger`` names the table row that fired; ``reason`` says why in words a user reads;
    ``revisions`` carries the bookkeeping the guard read (generation and observedGeneration for an
    AutoscalingRunnerSet, actionableRevision and appliedActionableRevision for an EphemeralRunnerSet).
    """

    subject: ObjectRef
    from_: str
    to: str
    trigger: str
    reason: str
    revisions: Mapping[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class Decision:
    subject: ObjectRef
    transitions: tuple[Transition, ...] = ()
    effects: tuple[Effect, ...] = ()
    # Why the pass ended where it did (the step of §2 that returned), for the journal and the logs.
    note: str = ""

    @property
    def is_noop(self) -> bool:
        return not self.transitions and not self.effects

    def as_json(self) -> dict[str, Any]:
        return {
            "subject": {
                "kind": self.subject.kind,
                "namespace": self.subject.namespace,
                "name": self.subject.name,
            },
            "transitions": [
                {
                    "from": t.from_,
                    "to": t.to,
                    "trigger": t.trigger,
                    "reason": t.reason,
                    "revisions": dict(t.revisions),
                }
                for t in self.transitions
            ],
            "effects": [type(e).__name__ + ":" + e.key for e in self.effects],
            "note": self.note,
        }


def transitions_from_json(body: Mapping[str, Any], subject: ObjectRef) -> tuple[Transition, ...]:
    """The transitions of a journaled decision body, read back as ``Transition`` values.

    ``subject`` is the record's object: it fills each part of a subject a transition does not name. A body
    is read leniently, as journals of older versions may hold it: an entry that is not an object is
    skipped, a missing field reads as ``""``, and only integer revisions are kept.
    """
    entries = body.get("transitions")
    if not isinstance(entries, list):
        return ()
    return tuple(_transition(entry, subject) for entry in entries if isinstance(entry, Mapping))


def _transition(entry: Mapping[str, Any], default: ObjectRef) -> Transition:
    named = entry.get("subject")
    named = named if isinstance(named, Mapping) else {}
    revisions = entry.get("revisions")
    return Transition(
        subject=ObjectRef(
            kind=str(named.get("kind") or default.kind),
            namespace=str(named.get("namespace") or default.namespace),
            name=str(named.get("name") or default.name),
        ),
        from_=str(entry.get("from") or ""),
        to=str(entry.get("to") or ""),
        trigger=str(entry.get("trigger") or ""),
        reason=str(entry.get("reason") or ""),
        revisions={
            str(key): value
            for key, value in (revisions.items() if isinstance(revisions, Mapping) else ())
            if isinstance(value, int) and not isinstance(value, bool)
        },
    )
