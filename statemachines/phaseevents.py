"""A Kubernetes Event for every phase change a machine records.

Every machine's ``decide`` is wrapped by ``with_phase_events``: the one place every recorded
``Transition`` passes through on its way into a ``Decision``. Each transition whose phase actually changes
gets an ``EmitEvent`` on the object, its reason the trigger in CamelCase, its message the transition's
reason and revisions, so ``kubectl describe`` shows the lifecycle.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from statemachines.decisions import Decision, Transition
from statemachines.effects import EmitEvent
from statemachines.snapshots import Snapshot

# Entering one of these phases is something a user must look at.
WARNING_PHASES = frozenset({"Outdated", "Failed", "BackOff"})


def camel_case(trigger: str) -> str:
    """``runners_rejected_spec`` → ``RunnersRejectedSpec``: an Event reason from a table trigger."""
    return "".join(part[:1].upper() + part[1:] for part in trigger.replace("-", "_").split("_") if part)


def event_message(transition: Transition) -> str:
    message = f"{transition.to}: {transition.reason}"
    if transition.revisions:
        revisions = ", ".join(f"{name} {value}" for name, value in transition.revisions.items())
        message += f" ({revisions})"
    return message


def transition_event(transition: Transition, uid: str) -> EmitEvent | None:
    """The Event for ``transition``, or None when the phase does not change."""
    if transition.from_ == transition.to:
        return None
    return EmitEvent(
        transition.subject,
        uid,
        "Warning" if transition.to in WARNING_PHASES else "Normal",
        camel_case(str(transition.trigger)),
        event_message(transition),
        trigger=str(transition.trigger),
    )


def with_phase_events(decide: Callable[[Snapshot], Decision]) -> Callable[[Snapshot], Decision]:
    """``decide`` with an ``EmitEvent`` added for each phase change of its decision."""

    @functools.wraps(decide)
    def decide_with_events(snapshot: Snapshot) -> Decision:
        decision = decide(snapshot)
        if not decision.transitions:
            return decision
        uid = str(snapshot.meta.get("uid", ""))
        present = {effect.key for effect in decision.effects}
        added: list[EmitEvent] = []
        for transition in decision.transitions:
            event = transition_event(transition, uid)
            if event is not None and event.key not in present:
                present.add(event.key)
                added.append(event)
        if not added:
            return decision
        return Decision(
            subject=decision.subject,
            transitions=decision.transitions,
            effects=(*decision.effects, *added),
            note=decision.note,
        )

    return decide_with_events
