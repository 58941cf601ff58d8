"""Timers: how a ``RequeueAfter`` effect brings time into the journal.

A ``RequeueAfter(target, seconds)`` recorded at time T is due at ``T + seconds``. When it is due, one
append writes a ``timer`` record for the target (whose ``at`` is now past the due time, so the decision
it triggers reads a clock at least that late) and the ``effect_result`` of every RequeueAfter it answers.
The fold maps the ``timer`` record to its key; no decision ever reads the wall clock.

A target has one pending timer, due at the earliest time asked for: a later RequeueAfter for the same
target is answered by it (an earlier wakeup is harmless, the decision asks again if it must wait on),
as controller-runtime's delaying queue keeps the earliest. A timer that has not fired when the controller
stops has no result, so the outbox arms it again on start. A timer the journal could not write (a full
disk) stays pending and fires again ``WRITE_RETRY`` seconds later.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import NoReturn

from controller.loop import logkeys, wakeups
from statemachines.effects import ObjectRef, RequeueAfter
from store import clocks
from store.clocks import Clock
from store.errors import JournalWriteFailed
from store.ports import JournalWriter
from store.records import Record, RecordType

log = logging.getLogger("arcsm.controller")

WRITE_RETRY = 1.0  # seconds before a timer the journal could not write fires again


@dataclass
class Pending:
    due: datetime
    effects: list[tuple[Record, RequeueAfter]] = field(default_factory=list)


def due_time(record: Record, effect: RequeueAfter) -> datetime:
    """When the RequeueAfter journaled as ``record`` fires: its record's time plus its seconds."""
    return clocks.parse_time(record.at) + timedelta(seconds=max(effect.seconds, 0.0))


def result_record(effect_record: Record, body: dict[str, object]) -> Record:
    """The ``effect_result`` record answering ``effect_record`` (same subject and uid)."""
    return Record(
        type=RecordType.EFFECT_RESULT,
        kind=effect_record.kind,
        namespace=effect_record.namespace,
        name=effect_record.name,
        uid=effect_record.uid,
        body={**body, "effectSeq": effect_record.seq},
    )


class Timers:
    def __init__(self, *, journal: JournalWriter, clock: Clock) -> None:
        self._journal = journal
        self._clock = clock
        self._pending: dict[ObjectRef, Pending] = {}
        self._wakeup = wakeups.Wakeup()

    def arm(self, record: Record, effect: RequeueAfter) -> datetime:
        """Fire for ``effect`` (journaled as ``record``) when it is due; returns when that is."""
        due = due_time(record, effect)
        pending = self._pending.get(effect.target)
        if pending is None:
            self._pending[effect.target] = pending = Pending(due)
        pending.due = min(pending.due, due)
        pending.effects.append((record, effect))
        self._wakeup.notify()
        return pending.due

    def pending(self) -> dict[ObjectRef, datetime]:
        return {target: p.due for target, p in self._pending.items()}

    async def run(self) -> NoReturn:
        """Append each timer when it is due, forever."""
        while True:
            now = self._clock.now()
            due = [target for target, p in self._pending.items() if p.due <= now]
            try:
                for target in due:
                    pending = self._pending.pop(target)
                    try:
                        await self._fire(target, pending)
                    except JournalWriteFailed:
                        self._put_back(target, pending)
                        raise
            except JournalWriteFailed as exc:  # the journal logs its outage once; fire again soon
                log.debug("a timer was not journaled: %s", exc)
                await self._wakeup.wait(WRITE_RETRY)
                continue
            if due:
                continue
            await self._wakeup.wait(self._next_in(now))

    def _put_back(self, target: ObjectRef, pending: Pending) -> None:
        """``pending`` is due again, with whatever was armed for ``target`` while it was being fired."""
        armed = self._pending.get(target)
        if armed is not None:
            pending.due = min(pending.due, armed.due)
            pending.effects.extend(armed.effects)
        self._pending[target] = pending

    async def _fire(self, target: ObjectRef, pending: Pending) -> None:
        timer = Record(
            type=RecordType.TIMER,
            kind=target.kind,
            namespace=target.namespace,
            name=target.name,
            body={"due": clocks.format_time(pending.due), "effects": [r.seq for r, _ in pending.effects]},
        )
        results = [
            result_record(record, {"ok": True, "key": effect.key, "due": clocks.format_time(pending.due)})
            for record, effect in pending.effects
        ]
        await self._journal.append([timer, *results])
        log.debug(
            "timer fired for %s",
            target,
            extra=logkeys.about(target),
        )

    def _next_in(self, now: datetime) -> float | None:
        if not self._pending:
            return None
        return max((min(p.due for p in self._pending.values()) - now).total_seconds(), 0.0)
