"""Reading an EphemeralRunner's story back from a controller's journal: its decisions with their effects.

A decision record is appended in one transaction with its effect records, which follow it in the order its
body lists them (``Decision.as_json``'s ``effects``), so the records after a decision are its effects.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from statemachines import effects
from statemachines.decisions import Transition
from statemachines.kinds import ER
from store.records import Record, RecordType
from tests.e2e.controller import harness


@dataclass(frozen=True)
class Decided:
    record: Record
    transitions: tuple[Transition, ...]
    effects: tuple[effects.Effect, ...]

    def written_phase(self) -> str | None:
        """The ``status.phase`` this decision's status patch of the runner writes, if it writes one."""
        for effect in self.effects:
            if (
                isinstance(effect, effects.MergePatch)
                and effect.subresource == "status"
                and effect.target.kind == ER
                and effect.target.name == self.record.name
            ):
                phase: Any = (effect.patch.get("status") or {}).get("phase")
                return None if phase is None else str(phase)
        return None


async def runner_decisions(journal: Path, name: str | None = None) -> list[Decided]:
    """Every EphemeralRunner decision (of the runner ``name``, if given) with its effects, in seq order."""
    records = await harness.journaled(journal, {RecordType.DECISION, RecordType.EFFECT})
    found: list[Decided] = []
    for at, record in enumerate(records):
        if record.type is not RecordType.DECISION or record.kind != ER:
            continue
        if name is not None and record.name != name:
            continue
        count = len(record.body.get("effects") or [])
        following = records[at + 1 : at + 1 + count]
        assert all(r.type is RecordType.EFFECT for r in following), f"decision {record.seq}: effects missing"
        found.append(
            Decided(
                record,
                harness.transitions_of(record),
                tuple(effects.from_json(r.body) for r in following),
            )
        )
    return found
