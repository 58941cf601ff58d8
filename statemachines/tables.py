"""Phase machines declared as transition tables and run with ``transitions``.

A kind's lifecycle is a module-level tuple of ``Row``s: trigger, source phases, destination, guards (small
named predicates over the snapshot) and the reason a user reads. ``PhaseMachine`` builds one
``transitions.Machine`` per kind (``auto_transitions=False``: no ``to_<state>`` back doors;
``send_event=True``: every guard has one signature) and fires a trigger for a given current phase. Where
several rows share a trigger and a source, the first whose guards pass wins, as in ``transitions``.
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
        self._reasons: dict[tuple[str, str, str], str] = {}
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
        # No row leaves ``current`` on ``trigger``: answer here, where transitions would log a warning.
        rows = [row for row in self.rows if row.trigger == trigger]
        if not any(row.source == ("*",) or current in row.source for row in rows):
            return None
        state = self._state(current)
        self._machine.set_state(state, model=self._model)
        if not self._model.trigger(trigger, snapshot=snapshot):  # type: ignore[attr-defined]
            return None
        dest = self._model.state
        phase = "" if dest == "none" else dest
        return Transition(
            subject=snapshot.subject,
            from_=current,
            to=phase,
            trigger=trigger,
            reason=self._reason_for(trigger, current, phase, snapshot),
        )

    def _reason_for(self, trigger: str, source: str, dest: str, snapshot: Snapshot) -> str:
        for row in self.rows:
            if row.trigger != trigger or row.dest != dest:
                continue
            if row.source != ("*",) and source not in row.source:
                continue
            if all(g(snapshot) for g in row.guards):
                return row.reason
        return trigger
