"""Phase machines declared as transition tables and run with ``transitions``.

A kind's lifecycle is a module-level tuple of ``Row``s: trigger, source phases, destination, guards (small
named predicates over the snapshot) and the reason a user reads. ``PhaseMachine`` builds one
``transitions.Machine`` per kind (``auto_transitions=False``: no ``to_<state>`` back doors;
``send_event=True``: every guard has one signature) and fires a trigger for a given current phase. Where
several rows share a trigger and a source, the first whose guards pass wins, as in ``transitions``.

Decisions fire a trigger or two each, and most find no row whose guards pass. So ``fire`` first asks the
rows that leave the current phase on that trigger (listed once per (trigger, phase) when the machine is
built): when no row's guards pass, nothing can fire and ``transitions`` is not entered; otherwise
``transitions`` takes the transition, and the row found is the one it took (the first of the same rows
whose guards pass: guards are pure over the snapshot), which names the reason.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from transitions import EventData, Machine

from statemachines.decisions import Transition
from statemachines.snapshots import Snapshot

Guard = Callable[[Snapshot], bool]


@dataclass(frozen=True)
class Row:
    trigger: str
    source: tuple[str, ...]  # phases; ("*",) for any
    dest: str
    reason: str
    guards: tuple[Guard, ...] = ()


class _Model:
    """The one model a machine drives: its state is set before each trigger (decisions are sequential)."""

    state: str = ""


class PhaseMachine:
    def __init__(self, name: str, phases: type[enum.StrEnum], rows: Sequence[Row]) -> None:
        self.name = name
        self.phases = phases
        self.rows = tuple(rows)
        states = [p.value or "none" for p in phases]
        self._model = _Model()
        # (trigger, phase) → the rows that leave the phase on the trigger, in table order.
        self._leaving: dict[tuple[str, str], tuple[Row, ...]] = {}
        for phase in phases:
            for row in self.rows:
                if row.source == ("*",) or phase.value in row.source:
                    key = (row.trigger, phase.value)
                    self._leaving[key] = (*self._leaving.get(key, ()), row)
        specs: list[dict[str, Any]] = []
        for row in self.rows:
            sources = states if row.source == ("*",) else [self._state(s) for s in row.source]
            conditions = [self._condition(g) for g in row.guards]
            specs.append(
                {
                    "trigger": row.trigger,
                    "source": sources,
                    "dest": self._state(row.dest),
                    "conditions": conditions,
                }
            )
        self._machine = Machine(
            model=self._model,
            states=states,
            transitions=specs,
            initial=states[0],
            auto_transitions=False,
            send_event=True,
            ignore_invalid_triggers=True,
        )

    @staticmethod
    def _state(phase: str) -> str:
        return str(phase) or "none"  # str(): a StrEnum member must name its value, not its member name

    @staticmethod
    def _condition(guard: Guard) -> Callable[[EventData], bool]:
        def condition(event: EventData) -> bool:
            snapshot: Snapshot = event.kwargs["snapshot"]
            return guard(snapshot)

        condition.__name__ = getattr(guard, "__name__", "guard")
        return condition

    def fire(self, trigger: str, current: str, snapshot: Snapshot) -> Transition | None:
        """Fire ``trigger`` from ``current``; the transition taken, or None when no row's guards pass."""
        row = next(
            (r for r in self._leaving.get((trigger, current), ()) if all(g(snapshot) for g in r.guards)),
            None,
        )
        if row is None:  # no row can fire (and none leaves ``current``: transitions would log a warning)
            return None
        self._machine.set_state(self._state(current), model=self._model)
        if not self._model.trigger(trigger, snapshot=snapshot):  # type: ignore[attr-defined]
            raise AssertionError(f"{self.name}: {trigger} from {current!r} took no transition, row {row}")
        dest = self._model.state
        phase = "" if dest == "none" else dest
        if phase != row.dest:
            raise AssertionError(f"{self.name}: {trigger} from {current!r} went to {phase!r}, row {row}")
        return Transition(
            subject=snapshot.subject, from_=current, to=phase, trigger=trigger, reason=row.reason
        )
