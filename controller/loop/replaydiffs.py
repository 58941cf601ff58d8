"""Decision diffs: where the installed machines decide a recorded journal differently, object by object.

``arcsm replay FILE --diff`` replays a journal (``replaying.Replay``) and, for each object whose decisions
come out differently, keeps the first such decision: its seq and journal time (in text as every command
shows a time, ``clocks.shown_time``; in JSON the journal's own text), the transitions and effects the
journal recorded beside the ones decided again, and the first difference in their journaled form
(``replaying.first_difference``, which also catches a difference inside an effect's body). This is how
an operator checks an upgrade against a journal of their own before rolling it out.

``DiffingReplay`` is a ``Replay`` that remembers what each recorded decision took until it is compared
(then forgets it), so memory stays bounded as the replay's own; ``Diffs`` collects the first difference
per object from what the replay settles, and renders it as text or JSON.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from controller.loop import replaying
from controller.loop.replaying import Mismatch, Step
from statemachines.decisions import Decision
from store import clocks
from store.records import Record, RecordType


@dataclass(frozen=True)
class Taken:
    """What one decision took: its transitions (from, to, trigger, reason) and its effects (type:key)."""

    transitions: tuple[tuple[str, str, str, str], ...] = ()
    effects: tuple[str, ...] = ()

    @classmethod
    def from_body(cls, body: Mapping[str, Any]) -> Taken:
        entries = body.get("transitions")
        effects = body.get("effects")
        return cls(
            transitions=tuple(
                (
                    str(t.get("from") or ""),
                    str(t.get("to") or ""),
                    str(t.get("trigger") or ""),
                    str(t.get("reason") or ""),
                )
                for t in (entries if isinstance(entries, list) else ())
                if isinstance(t, Mapping)
            ),
            effects=tuple(str(e) for e in (effects if isinstance(effects, list) else ())),
        )

    @classmethod
    def from_decision(cls, decision: Decision | None) -> Taken:
        if decision is None:
            return cls()
        return cls.from_body(decision.as_json())

    def as_json(self) -> dict[str, Any]:
        return {
            "transitions": [
                {"from": f or None, "to": t, "trigger": trigger, "reason": reason}
                for f, t, trigger, reason in self.transitions
            ],
            "effects": list(self.effects),
        }


@dataclass(frozen=True)
class Diff:
    """The first decision of one object that came out differently."""

    kind: str
    namespace: str
    name: str
    seq: int
    at: str
    recorded: Taken
    replayed: Taken
    difference: str

    def lines(self) -> list[str]:
        head = f"{self.kind} {self.namespace}/{self.name}: first differs at seq {self.seq}"
        found = [f"{head} ({clocks.shown_time(self.at)})"]
        if self.recorded.transitions != self.replayed.transitions:
            found.append(f"  transitions recorded: {_transitions(self.recorded)}")
            found.append(f"  transitions replayed: {_transitions(self.replayed)}")
        missing = [e for e in self.recorded.effects if e not in self.replayed.effects]
        extra = [e for e in self.replayed.effects if e not in self.recorded.effects]
        if missing:
            found.append(f"  effects recorded, not replayed: {', '.join(missing)}")
        if extra:
            found.append(f"  effects replayed, not recorded: {', '.join(extra)}")
        if not missing and not extra and self.recorded.effects != self.replayed.effects:
            found.append(f"  effects in another order: replayed {', '.join(self.replayed.effects)}")
        found.append(f"  first difference: {self.difference}")
        return found

    def as_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "namespace": self.namespace,
            "name": self.name,
            "seq": self.seq,
            "at": self.at,
            "recorded": self.recorded.as_json(),
            "replayed": self.replayed.as_json(),
            "difference": self.difference,
        }


def _transitions(taken: Taken) -> str:
    if not taken.transitions:
        return "(none)"
    return "; ".join(f"{f or '(none)'} → {t} ({trigger})" for f, t, trigger, _ in taken.transitions)


class DiffingReplay(replaying.Replay):
    """A ``Replay`` that keeps each recorded decision's subject and what it took until ``taken`` hands it
    out (once the decision was compared)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._taken: dict[int, tuple[Record, Taken]] = {}

    def feed(self, record: Record, text: str | None = None) -> list[tuple[Step, Mismatch | None]]:
        if record.type is RecordType.DECISION and record.seq is not None:
            self._taken[record.seq] = (record, Taken.from_body(record.body))
        return super().feed(record, text)

    def taken(self, seq: int) -> tuple[Record, Taken] | None:
        return self._taken.pop(seq, None)


@dataclass
class Diffs:
    """The first difference of each object, in the order they were found (recorded seq order)."""

    by_object: dict[tuple[str, str, str], Diff] = field(default_factory=dict)

    def settle(self, replay: DiffingReplay, steps: list[tuple[Step, Mismatch | None]]) -> None:
        for step, mismatch in steps:
            found = replay.taken(step.seq)
            if mismatch is None or found is None:
                continue
            record, recorded = found
            key = (record.kind, record.namespace, record.name)
            if key not in self.by_object:
                self.by_object[key] = Diff(
                    *key,
                    seq=step.seq,
                    at=step.at,
                    recorded=recorded,
                    replayed=Taken.from_decision(step.decision),
                    difference=mismatch.difference,
                )

    def lines(self, decisions: int) -> list[str]:
        found = [line for diff in self.by_object.values() for line in diff.lines()]
        if not self.by_object:
            return [f"{decisions} decisions replayed, all equal"]
        count = len(self.by_object)
        return [
            *found,
            f"{decisions} decisions replayed; {count} object{'s' * (count != 1)} decided differently",
        ]

    def as_json(self, decisions: int) -> dict[str, Any]:
        return {"decisions": decisions, "objects": [diff.as_json() for diff in self.by_object.values()]}
