"""Replay (DESIGN "Replay"): a recorded journal's decisions, decided again from its records.

The records are folded in seq order exactly as the live loop's tail did (``Fold.apply``: the projection,
the effect results and the journal's clock). A decision record names the journal prefix it was decided
from (its body's ``seq``, with that prefix's clock ``now``); once the fold has applied that record, the
snapshot is built as the live loop built it (``snapshotting.build``) and the kind's machine decides
again. The decision and its effects are put in their journaled form (``decision_record``,
``effect_record``, redacted as an append redacts them) and compared with the recorded decision record
and the ``effect`` records appended with it.

Pure over the records: no network, no clock, no executor (the recorded ``effect_result`` records are the
results). Each decision is decided with the machine settings of the newest ``settings`` record before the
prefix it read (``settingsrecords``: the controller journals them at start); a decision with no settings
record before it (a journal recorded before settings were journaled) is decided with the settings passed
to ``replay``, the defaults if none.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from controller import reconciling, settingsrecords, snapshotting
from controller.folding import Fold
from statemachines.decisions import Decision
from statemachines.effects import ObjectRef
from statemachines.snapshots import Settings as MachineSettings
from store import clocks, redacting
from store.projection import Projection
from store.records import Record, RecordType

SHOWN = 120  # characters of a value shown in a difference


class ReplayError(Exception):
    """The records cannot be replayed (not a whole journal from seq 1, a decision without a prefix)."""


@dataclass(frozen=True)
class Mismatch:
    seq: int  # the recorded decision record's seq
    subject: str  # kind namespace/name
    difference: str  # the first difference: where, what was recorded, what replay decided

    def line(self) -> str:
        return f"decision at seq {self.seq} ({self.subject}) differs: {self.difference}"


@dataclass(frozen=True)
class Step:
    """One recorded decision as the machines decided it again: the recorded decision record's seq, the
    clock it was decided at (the prefix's ``now``), and the replayed decision (None: nothing to do)."""

    seq: int
    now: str
    subject: str
    decision: Decision | None

    def lines(self) -> list[str]:
        """One line per phase transition, then one per effect (its type and key)."""
        head = f"seq {self.seq}  {self.now}"
        if self.decision is None:
            return [f"{head}  {self.subject}  (no decision: nothing to do)"]
        found = [
            f"{head}  {t.subject.kind} {t.subject.namespace}/{t.subject.name}  "
            f"{t.from_ or '(none)'} → {t.to}  {t.trigger}: {t.reason}"
            for t in self.decision.transitions
        ]
        found.extend(
            f"{head}  {self.subject}  effect {type(e).__name__} {e.key}" for e in self.decision.effects
        )
        return found


@dataclass(frozen=True)
class Replayed:
    decisions: int  # recorded decisions decided again
    mismatch: Mismatch | None  # the first (lowest seq) decision that came out differently
    timeline: tuple[Step, ...] = ()  # the decisions decided again, in recorded seq order

    def summary(self) -> str:
        if self.mismatch is None:
            return f"{self.decisions} decisions replayed, all equal"
        return self.mismatch.line()


@dataclass(frozen=True)
class _Recorded:
    record: Record
    effects: tuple[Record, ...]

    @property
    def seq(self) -> int:
        return self.record.seq or 0

    @property
    def read(self) -> int:
        read = self.record.body.get("seq")
        if not isinstance(read, int):
            raise ReplayError(f"the decision at seq {self.seq} does not say which seq it read")
        return read


def _ordered(records: Iterable[Record]) -> list[Record]:
    ordered = sorted(records, key=lambda r: r.seq or 0)
    for expected, record in enumerate(ordered, 1):
        if record.seq != expected:
            raise ReplayError(
                f"replay needs the whole journal from seq 1: expected seq {expected}, found {record.seq}"
            )
    return ordered


def _decisions(records: Sequence[Record]) -> list[_Recorded]:
    """Each decision record with the ``effect`` records appended with it (those right after it)."""
    found: list[_Recorded] = []
    for i, record in enumerate(records):
        if record.type is not RecordType.DECISION:
            continue
        effects: list[Record] = []
        for later in records[i + 1 :]:
            if later.type is not RecordType.EFFECT:
                break
            effects.append(later)
        found.append(_Recorded(record, tuple(effects)))
    return found


def _journaled(record: Record) -> dict[str, Any]:
    """What the journal keeps of a record about to be appended: its coordinates and redacted body."""
    _, text = redacting.for_journal(record)
    return {"uid": record.uid, "resourceVersion": record.resource_version, "body": json.loads(text)}


def _as_recorded(record: Record) -> dict[str, Any]:
    return {"uid": record.uid, "resourceVersion": record.resource_version, "body": dict(record.body)}


def _subject(record: Record) -> str:
    return f"{record.kind} {record.namespace}/{record.name}"


def _short(value: Any) -> str:
    text = json.dumps(value, sort_keys=True) if value is not _ABSENT else "(absent)"
    return text if len(text) <= SHOWN else text[: SHOWN - 1] + "…"


_ABSENT = object()


def first_difference(recorded: Any, replayed: Any, path: str = "") -> str | None:
    """Where two JSON values first differ, as ``path: recorded X, replayed Y``; None when equal."""
    if isinstance(recorded, Mapping) and isinstance(replayed, Mapping):
        for key in [*recorded, *(k for k in replayed if k not in recorded)]:
            found = first_difference(
                recorded.get(key, _ABSENT), replayed.get(key, _ABSENT), f"{path}.{key}" if path else str(key)
            )
            if found is not None:
                return found
        return None
    if isinstance(recorded, list) and isinstance(replayed, list):
        for i in range(max(len(recorded), len(replayed))):
            found = first_difference(
                recorded[i] if i < len(recorded) else _ABSENT,
                replayed[i] if i < len(replayed) else _ABSENT,
                f"{path}[{i}]",
            )
            if found is not None:
                return found
        return None
    if recorded == replayed and type(recorded) is type(replayed):
        return None
    return f"{path or '(whole)'}: recorded {_short(recorded)}, replayed {_short(replayed)}"


def _decide_again(fold: Fold, recorded: _Recorded, settings: MachineSettings) -> tuple[Step, Mismatch | None]:
    record = recorded.record
    ref = ObjectRef(record.kind, record.namespace, record.name)
    view = fold.view()
    snapshot = snapshotting.build(view, ref, settings)
    now = clocks.format_time(snapshot.now)
    decider = reconciling.DECIDERS.get(ref.kind)
    if decider is None:
        return Step(recorded.seq, now, _subject(record), None), Mismatch(
            recorded.seq, _subject(record), f"no machine decides the kind {ref.kind!r}"
        )
    decision = decider(snapshot)
    step = Step(recorded.seq, now, _subject(record), None if decision.is_noop else decision)
    want = {
        "decision": _as_recorded(record),
        "effects": [_as_recorded(e) for e in recorded.effects],
    }
    if decision.is_noop:
        got: dict[str, Any] = {"decision": "(no decision: nothing to do)", "effects": []}
    else:
        got = {
            "decision": _journaled(reconciling.decision_record(decision, snapshot, seq=view.seq)),
            "effects": [_journaled(reconciling.effect_record(e, snapshot)) for e in decision.effects],
        }
    difference = first_difference(want, got)
    return step, None if difference is None else Mismatch(recorded.seq, _subject(record), difference)


def _settings_of(record: Record) -> MachineSettings:
    try:
        return settingsrecords.from_json(record.body)
    except settingsrecords.BadSettingsRecord as exc:
        raise ReplayError(f"the settings record at seq {record.seq} cannot be read: {exc}") from exc


def replay(records: Iterable[Record], settings: MachineSettings | None = None) -> Replayed:
    """Decide every recorded decision again from the records before it; report the first that differs.

    ``settings`` are the machine settings for the decisions no ``settings`` record precedes (default:
    ``MachineSettings()``); after one, its settings are used.
    """
    current = settings or MachineSettings()
    ordered = _ordered(records)
    pending: dict[int, list[_Recorded]] = {}
    decisions = _decisions(ordered)
    for recorded in decisions:
        if not 0 <= recorded.read < recorded.seq:
            raise ReplayError(f"the decision at seq {recorded.seq} read seq {recorded.read}, not before it")
        pending.setdefault(recorded.read, []).append(recorded)
    fold = Fold(Projection())
    mismatches: list[Mismatch] = []
    steps: list[Step] = []

    def decide_at(seq: int) -> None:
        for recorded in pending.pop(seq, ()):
            step, mismatch = _decide_again(fold, recorded, current)
            steps.append(step)
            if mismatch is not None:
                mismatches.append(mismatch)

    decide_at(0)
    for record in ordered:
        fold.apply(record)
        if record.type is RecordType.SETTINGS:
            current = _settings_of(record)
        decide_at(record.seq or 0)
    first = min(mismatches, key=lambda m: m.seq) if mismatches else None
    timeline = tuple(sorted(steps, key=lambda s: s.seq))
    return Replayed(decisions=len(decisions), mismatch=first, timeline=timeline)
