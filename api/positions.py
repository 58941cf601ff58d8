"""An object at a journal position: what arcsm had observed and decided about it at seq N (or at a time).

``state_at`` reads the journal through ``store.ports.PositionReader`` (a snapshot and the records after
it, ``store.positions``; never the cluster) and answers an ``ObjectAt``: the object's last observed body
at N, its phase and conditions from that body, the objects it owned then, and the decision in force (the
last one recorded for it at or before N). The HTTP route and ``arcsm history --at`` both answer with it,
so they say the same; each failure is a ``NotThere`` whose ``status`` the route answers with and whose
message is one line: 404 when the object did not exist at N (or a time before the first record), 410
when retention pruned what would say, 422 for a time without a zone. A position after the journal's last
record is answered at that record (nothing later is known), and says so in ``seq``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any

from api import phases
from api.models import ChildAt, DecisionAt, ObjectAt
from statemachines.jsonvalues import as_mapping, section, str_or_none
from store import clocks
from store.ports import PositionReader
from store.positions import Beyond, Position, Pruned
from store.records import Record


class NotThere(Exception):
    """The state asked for cannot be answered: ``status`` is the HTTP status, the message one line."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def parse_time(text: str) -> datetime:
    """An RFC 3339 time with its zone (``2026-01-01T14:02:00Z``); ``NotThere`` 422 otherwise.

    A time stands for the whole of its last digit: ``…:42.399Z`` (as ``arcsm history`` prints a record's
    time, to the millisecond) is the last microsecond of that millisecond, so the record printed with it
    is at or before it; a time to the second is the end of that second."""
    try:
        moment = datetime.fromisoformat(text.strip().replace("z", "Z").replace("Z", "+00:00"))
    except ValueError:
        raise NotThere(422, f"time {text!r} is not an RFC 3339 time (e.g. 2026-01-01T14:02:00Z)") from None
    return zoned(moment, text) + _rest_of_last_digit(text)


_FRACTION = re.compile(r"T\d\d:\d\d:\d\d(?:[.,](\d+))?")


def _rest_of_last_digit(text: str) -> timedelta:
    """What is left of the last digit ``text`` gives, in microseconds: 999 for milliseconds."""
    found = _FRACTION.search(text)
    digits = len(found.group(1) or "") if found else 6
    return timedelta(microseconds=10 ** max(0, 6 - digits) - 1)


def zoned(moment: datetime, text: str) -> datetime:
    if moment.tzinfo is None:
        raise NotThere(422, f"time {text!r} has no zone; add Z or an offset (e.g. 2026-01-01T14:02:00Z)")
    return moment


async def seq_of_time(journal: PositionReader, moment: datetime) -> int:
    """The seq a ``?time=`` falls on: the last record appended at or before it."""
    seq = await journal.seq_at(moment)
    if seq == 0:
        raise NotThere(
            404,
            f"the journal holds no record at or before {clocks.format_time(moment)}; ask for a later time",
        )
    return seq


async def state_at(journal: PositionReader, *, kind: str, namespace: str, name: str, seq: int) -> ObjectAt:
    """``kind`` ``namespace/name`` at ``seq``, or ``NotThere``."""
    try:
        position = await journal.at(kind=kind, namespace=namespace, name=name, seq=seq)
    except Pruned as exc:
        raise NotThere(410, str(exc)) from None
    except Beyond as exc:  # nothing after the last record is known: the state there holds
        return await state_at(journal, kind=kind, namespace=namespace, name=name, seq=exc.tip)
    observed = position.observed
    if observed is None:
        raise NotThere(
            404,
            f"{kind} {namespace}/{name} did not exist at seq {seq}: the journal had not observed it by then",
        )
    if not position.exists:
        raise NotThere(
            404, f"{kind} {namespace}/{name} did not exist at seq {seq}: it was deleted at seq {observed.seq}"
        )
    return _answer(position, observed, kind=kind, namespace=namespace, name=name)


def _answer(position: Position, observed: Record, *, kind: str, namespace: str, name: str) -> ObjectAt:
    obj = _object(observed)
    status = as_mapping(obj.get("status"))
    conditions = status.get("conditions")
    return ObjectAt(
        seq=position.seq,
        kind=kind,
        namespace=namespace,
        name=name,
        uid=observed.uid,
        phase=str_or_none(status.get("phase")) or None,
        conditions=[dict(c) for c in conditions if isinstance(c, Mapping)]
        if isinstance(conditions, list)
        else [],
        observed_seq=observed.seq or 0,
        observed_at=observed.at,
        object=dict(obj),
        children=[_child(record) for record in position.children],
        decision=None if position.decision is None else _decision(position.decision),
        snapshot=position.snapshot,
    )


def _child(record: Record) -> ChildAt:
    obj = _object(record)
    return ChildAt(
        kind=record.kind,
        namespace=record.namespace,
        name=record.name,
        uid=record.uid,
        phase=str_or_none(as_mapping(obj.get("status")).get("phase")) or None,
        seq=record.seq or 0,
        object=dict(obj),
    )


def _decision(record: Record) -> DecisionAt:
    transitions = phases.items_of(record)
    changes = [t for t in transitions if t.from_ != t.to] or transitions
    note = str_or_none(record.body.get("note")) or None
    effects = record.body.get("effects")
    read = record.body.get("seq")
    return DecisionAt(
        seq=record.seq or 0,
        at=record.at,
        read=read if isinstance(read, int) and not isinstance(read, bool) else None,
        trigger=changes[-1].trigger if changes else None,
        reason=note or (changes[-1].reason if changes else ""),
        transitions=transitions,
        effects=[str(e) for e in effects] if isinstance(effects, list) else [],
    )


def _object(record: Record) -> Mapping[str, Any]:
    return section(record.body, "object")
