"""A decision being built: the steps of one pass add effects and transitions to a ``Draft``.

Several steps of a pass may write the same object (upstream's lazyCopy gathers them into one patch,
seed C5): a ``MergePatch`` on a target and subresource already written in this pass is merged into the
earlier one, so a decision holds at most one effect per key and the executor sends one request for it.
A second ``RequeueAfter`` keeps the earlier deadline; any other effect whose key is already there is
dropped (it would do the same thing twice).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from statemachines import effects
from statemachines.decisions import Decision, Transition


def deep_merge(base: Mapping[str, Any], patch: Mapping[str, Any]) -> dict[str, Any]:
    """Two merge patches as one: ``patch`` applied over ``base``, keeping ``null``s (they are deletions)."""
    out = dict(base)
    for key, value in patch.items():
        current = out.get(key)
        if isinstance(value, Mapping) and isinstance(current, Mapping):
            out[key] = deep_merge(current, value)
        else:
            out[key] = value
    return out


class Draft:
    def __init__(self, subject: effects.ObjectRef) -> None:
        self.subject = subject
        self.transitions: list[Transition] = []
        self._effects: dict[str, effects.Effect] = {}
        self.note = ""

    def add(self, *new: effects.Effect) -> None:
        for effect in new:
            earlier = self._effects.get(effect.key)
            if earlier is None:
                self._effects[effect.key] = effect
            elif isinstance(earlier, effects.MergePatch) and isinstance(effect, effects.MergePatch):
                self._effects[effect.key] = replace(
                    earlier,
                    patch=deep_merge(earlier.patch, effect.patch),
                    resource_version=earlier.resource_version or effect.resource_version,
                )
            elif isinstance(earlier, effects.RequeueAfter) and isinstance(effect, effects.RequeueAfter):
                self._effects[effect.key] = min(earlier, effect, key=lambda e: e.seconds)

    def record(self, transition: Transition | None) -> None:
        if transition is not None:
            self.transitions.append(transition)

    @property
    def effects(self) -> tuple[effects.Effect, ...]:
        return tuple(self._effects.values())

    def decision(self) -> Decision:
        return Decision(
            subject=self.subject,
            transitions=tuple(self.transitions),
            effects=self.effects,
            note=self.note,
        )
