"""Replay (DESIGN "Replay"): a recorded journal's decisions, decided again from its records.

The records are folded in seq order exactly as the live loop's tail did (``Fold.apply``: the projection,
the effect results and the journal's clock). A decision record names the journal prefix it was decided
from (its body's ``seq``, with that prefix's clock ``now``); once the fold has applied that record, the
snapshot is built as the live loop built it (``snapshotting.build``) and the kind's machine decides
again. The decision and its effects are put in their journaled form (``decision_record``,
``effect_record``, redacted as an append redacts them) and compared with the recorded decision record
and the ``effect`` records appended with it: first by a check that proves them the same without
encoding them (``_reads_back_as``), then by their body text, value by value only when the texts differ.

Pure over the records: no network, no clock, no executor (the recorded ``effect_result`` records are the
results). Each decision is decided with the machine settings of the newest ``settings`` record before the
prefix it read (``settingsrecords``: the controller journals them at start); a decision with no settings
record before it (a journal recorded before settings were journaled) is decided with the settings passed
to ``replay``, the defaults if none.
"""

from __future__ import annotations

import collections
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import orjson

from controller.loop import reconciling, settingsrecords, snapshotting
from controller.loop.folding import Fold
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
    """One recorded decision as the machines decided it again: the recorded decision record's seq and
    journal time (its ``at``, the time ``arcsm history`` and the API give that seq; the clock the machines
    decide at is the time of the record the decision read, which may be earlier), and the replayed
    decision (None: nothing to do)."""

    seq: int
    at: str
    subject: str
    decision: Decision | None

    def lines(self) -> list[str]:
        """One line per phase transition, then one per effect (its type and key)."""
        head = f"seq {self.seq}  {clocks.shown_time(self.at)}"
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


class _Recorded:
    """A recorded decision record with the ``effect`` records appended with it (those right after it),
    each with its body's JSON text as the source held it (None: not known), and, once decided again,
    the replayed decision (``step``) and how it compares (``compared``)."""

    def __init__(self, record: Record, text: str | None) -> None:
        self.record = record
        self.text = text
        self.effects: list[tuple[Record, str | None]] = []
        self.complete = False  # every effect appended with it has been read
        self.step: Step | None = None
        self.replayed: _Replayed | None = None

    @property
    def seq(self) -> int:
        return self.record.seq or 0

    @property
    def read(self) -> int:
        read = self.record.body.get("seq")
        if not isinstance(read, int):
            raise ReplayError(f"the decision at seq {self.seq} does not say which seq it read")
        return read


@dataclass(frozen=True)
class _Replayed:
    """A decision decided again, in its journaled form: the records an append would be given (their
    coordinates and body, redacted when compared). ``None``: nothing to do."""

    records: tuple[Record, ...] | None


def reach(records: Iterable[Record]) -> int:
    """How far ahead of the seq it read a decision record lies, at most (0 without decisions): how many
    records a replay must have read before it folds one. Decisions that do not say what they read are
    left to the replay to refuse."""
    return reach_of(
        (record.seq, record.body.get("seq"))
        for record in records
        if record.type is RecordType.DECISION and record.seq is not None
    )


def reach_of(decisions: Iterable[tuple[int, object]]) -> int:
    """``reach`` from each decision's seq and what its body says it read (anything: only an int before
    the decision's seq counts), for a first pass that reads no more of a record than that."""
    found = 0
    for seq, read in decisions:
        if isinstance(read, int) and 0 <= read < seq:
            found = max(found, seq - read)
    return found


def _journaled(record: Record) -> dict[str, Any]:
    """What the journal keeps of a record about to be appended: its coordinates and redacted body."""
    _, text = redacting.for_journal(record)
    return {"uid": record.uid, "resourceVersion": record.resource_version, "body": json.loads(text)}


def _as_recorded(record: Record) -> dict[str, Any]:
    return {"uid": record.uid, "resourceVersion": record.resource_version, "body": dict(record.body)}


def _same(recorded: Record, text: str | None, replayed: Record) -> bool:
    """Whether a recorded record is, for certain, the replayed one as journaled: the same coordinates and
    a body that reads back as the recorded one (``_reads_back_as``), or the same body text (the same text
    is the same JSON value; a different text may still be one, which ``first_difference`` decides)."""
    return (
        text is not None
        and recorded.uid == replayed.uid
        and recorded.resource_version == replayed.resource_version
        and (_reads_back_as(replayed, recorded, text) or redacting.for_journal(replayed)[1] == text)
    )


def _reads_back_as(replayed: Record, recorded: Record, text: str) -> bool:
    """Whether ``replayed``'s body, as an append keeps it (``redacting.for_journal``), reads back as the
    recorded body ``recorded.body``, whose text is ``text`` — known without encoding it with ``json``.

    True only when ``text`` is ASCII, ``orjson`` writes the replayed body as ``text`` byte for byte, the
    replayed body equals the recorded one (``==``), and ``text`` holds nothing the redaction drops
    (``may_hold_secret``). Then the two bodies are the same JSON value, type for type: ``==`` alone
    would take ``1``, ``1.0`` and ``true`` (or ``0.0`` and ``-0.0``) for one another, but orjson spells
    them apart, and the recorded body is what ``text`` reads as; what orjson writes and ``json`` refuses
    equals no value read back (a NaN, which orjson writes as ``null``; a plain Enum or a UUID, which it
    writes as a string). The redaction keeps the body as it is: the recorded body has the same keys and
    ``kind`` values, and its text, spelt as it is, shows none a scrub drops. So ``first_difference``
    would find no difference; False says nothing.
    """
    if not text.isascii() or replayed.body != recorded.body or redacting.may_hold_secret(text):
        return False
    try:
        return orjson.dumps(replayed.body) == text.encode()
    except TypeError:  # what orjson cannot write (an integer past 64 bits, a key that is not text)
        return False


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


def _decide_again(fold: Fold, recorded: _Recorded, settings: MachineSettings) -> None:
    record = recorded.record
    ref = ObjectRef(record.kind, record.namespace, record.name)
    view = fold.view()
    snapshot = snapshotting.build(view, ref, settings)
    decider = reconciling.DECIDERS.get(ref.kind)
    if decider is None:
        recorded.step = Step(recorded.seq, record.at, _subject(record), None)
        return
    decision = decider(snapshot)
    recorded.step = Step(recorded.seq, record.at, _subject(record), None if decision.is_noop else decision)
    if decision.is_noop:
        recorded.replayed = _Replayed(None)
        return
    journaled = [
        reconciling.decision_record(decision, snapshot, seq=view.seq),
        *(reconciling.effect_record(e, snapshot) for e in decision.effects),
    ]
    recorded.replayed = _Replayed(tuple(journaled))


def _compare(recorded: _Recorded) -> Mismatch | None:
    """How the replayed decision compares with the recorded one: None when equal."""
    record, replayed = recorded.record, recorded.replayed
    if replayed is None:
        return Mismatch(recorded.seq, _subject(record), f"no machine decides the kind {record.kind!r}")
    if replayed.records is not None and len(replayed.records) == 1 + len(recorded.effects):
        pairs = zip([(record, recorded.text), *recorded.effects], replayed.records, strict=True)
        if all(_same(r, text, again) for (r, text), again in pairs):
            return None
    want = {
        "decision": _as_recorded(record),
        "effects": [_as_recorded(e) for e, _ in recorded.effects],
    }
    if replayed.records is None:
        got: dict[str, Any] = {"decision": "(no decision: nothing to do)", "effects": []}
    else:
        decision, *effects = replayed.records
        got = {
            "decision": _journaled(decision),
            "effects": [_journaled(e) for e in effects],
        }
    difference = first_difference(want, got)
    return None if difference is None else Mismatch(recorded.seq, _subject(record), difference)


def _settings_of(record: Record) -> MachineSettings:
    try:
        return settingsrecords.from_json(record.body)
    except settingsrecords.BadSettingsRecord as exc:
        raise ReplayError(f"the settings record at seq {record.seq} cannot be read: {exc}") from exc


class Replay:
    """A replay fed one record at a time, in seq order from seq 1, holding only what it must.

    ``reach`` is how far ahead of the seq it read a decision record may lie (``reach``: a first pass over
    the same records tells). A record is folded once ``reach`` more have been read, so every decision
    that read it is known by then and is decided right after it; the records between the fold and the
    newest one read, and the decisions among them, are all that is held. ``feed`` and ``end`` return the
    decisions decided again and compared, in recorded seq order, each with its mismatch (None: equal).
    """

    def __init__(self, settings: MachineSettings | None = None, *, reach: int) -> None:
        self.settings = settings or MachineSettings()
        self.reach = reach
        self.decisions = 0  # recorded decisions read
        self.fold = Fold(Projection())
        self._read = 0  # the seq of the newest record read
        self._folded = -1  # the seq the fold stands at, once its decisions are decided (-1: none yet)
        self._ahead: collections.deque[Record] = collections.deque()  # read, not folded yet
        self._pending: dict[int, list[_Recorded]] = {}  # decisions not decided yet, by the seq they read
        self._open: _Recorded | None = None  # the newest decision, while its effects may still follow
        self._unsettled: collections.deque[_Recorded] = collections.deque()  # not compared yet, by seq

    def feed(self, record: Record, text: str | None = None) -> list[tuple[Step, Mismatch | None]]:
        """Take the next record (``text``: its body's JSON text as the source holds it, if known)."""
        if record.seq != self._read + 1:
            raise ReplayError(
                f"replay needs the whole journal from seq 1: expected seq {self._read + 1}, "
                f"found {record.seq}"
            )
        self._read = record.seq
        if self._open is not None:
            if record.type is RecordType.EFFECT:
                self._open.effects.append((record, text))
            else:
                self._open.complete, self._open = True, None
        if record.type is RecordType.DECISION:
            recorded = _Recorded(record, text)
            if not 0 <= recorded.read < recorded.seq:
                raise ReplayError(
                    f"the decision at seq {recorded.seq} read seq {recorded.read}, not before it"
                )
            if recorded.read <= self._folded:
                raise ReplayError(
                    f"the decision at seq {recorded.seq} read seq {recorded.read}, more than "
                    f"{self.reach} records before it: the replay has folded past that seq"
                )
            self._pending.setdefault(recorded.read, []).append(recorded)
            self._unsettled.append(recorded)
            self._open = recorded
            self.decisions += 1
        self._ahead.append(record)
        self._advance(self._read - self.reach)
        return self._settled()

    def end(self) -> list[tuple[Step, Mismatch | None]]:
        """Every record has been fed: decide and compare what is left."""
        if self._open is not None:
            self._open.complete, self._open = True, None
        self._advance(self._read)
        return self._settled()

    def _advance(self, through: int) -> None:
        """Fold the records up to seq ``through``, deciding after each one the decisions that read it."""
        while self._folded < through:
            if self._folded >= 0:
                record = self._ahead.popleft()
                self.fold.advance(record)
                if record.type is RecordType.SETTINGS:
                    self.settings = _settings_of(record)
            self._folded += 1
            for recorded in self._pending.pop(self._folded, ()):
                _decide_again(self.fold, recorded, self.settings)

    def _settled(self) -> list[tuple[Step, Mismatch | None]]:
        found: list[tuple[Step, Mismatch | None]] = []
        while self._unsettled and (head := self._unsettled[0]).complete and head.step is not None:
            self._unsettled.popleft()
            found.append((head.step, _compare(head)))
        return found


def replay(records: Iterable[Record], settings: MachineSettings | None = None) -> Replayed:
    """Decide every recorded decision again from the records before it; report the first that differs.

    ``records`` are held in memory (``Replay`` streams them instead). ``settings`` are the machine
    settings for the decisions no ``settings`` record precedes (default: ``MachineSettings()``); after
    one, its settings are used.
    """
    ordered = sorted(records, key=lambda r: r.seq or 0)
    replaying = Replay(settings, reach=reach(ordered))
    settled: list[tuple[Step, Mismatch | None]] = []
    for record in ordered:
        settled.extend(replaying.feed(record))
    settled.extend(replaying.end())
    first = next((mismatch for _, mismatch in settled if mismatch is not None), None)
    timeline = tuple(step for step, _ in settled)
    return Replayed(decisions=replaying.decisions, mismatch=first, timeline=timeline)
