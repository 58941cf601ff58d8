"""The ``Ready`` condition of a pass and the Warning Events of the problems a pass finds.

A machine computes its conditions once, at the end of a pass, from the phase the pass ends in and the
problem it found (``conditions`` has the list rules). This module holds what the machines share:

* ``ready``: True exactly when the phase is the kind's working phase. Its reason is the trigger in
  CamelCase when a transition of this pass set the phase, and stays that word on the following passes
  while the phase holds (the observed condition still says the same thing), so a settled object writes
  nothing; otherwise the phase name. A problem the pass found (a pod or Secret that cannot be made)
  makes it False with the problem's reason and message, whatever the phase: the phase lags such a
  failure (it moves only on a transition), and a True ``Ready`` carrying a failure would mislead
  ``kubectl wait``.
* ``warning``: the Warning ``EmitEvent`` for a condition that reports a problem, only when the observed
  condition does not say it yet, so an Event is emitted once per occurrence and not on every pass.
* ``status_patch``: the conditions merged with the object's ``metadata.generation`` and the snapshot's
  clock, ready to go into the pass's status merge patch.
"""

from __future__ import annotations

from collections.abc import Iterable

from statemachines import conditions
from statemachines.conditions import Condition
from statemachines.decisions import Transition
from statemachines.effects import EmitEvent
from statemachines.objects import StatusCondition
from statemachines.phaseevents import camel_case
from statemachines.snapshots import Snapshot

# The reason of an object no controller has given a phase yet.
NO_PHASE = "Pending"


def one_line(text: str, limit: int = 512) -> str:
    """``text`` on one line (whitespace runs become one space), cut to ``limit`` characters."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def generation(s: Snapshot) -> int:
    value = s.meta.get("generation")
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def ready(
    s: Snapshot,
    phase: str,
    *,
    working: str,
    transition: Transition | None,
    message: str,
    problem: tuple[str, str] | None = None,
) -> Condition:
    """``Ready`` for a pass ending in ``phase``; ``problem`` is (reason, message) of what went wrong."""
    if problem is not None:
        return Condition(conditions.READY, False, problem[0], problem[1])
    status = phase == working
    if transition is not None and transition.to == phase and transition.from_ != phase:
        return Condition(conditions.READY, status, camel_case(transition.trigger), message)
    wanted = conditions.TRUE if status else conditions.FALSE
    seen = conditions.find(s.status, conditions.READY)
    if seen is not None and seen.get("status") == wanted and seen.get("message") == message:
        reason = str(seen.get("reason") or "")
        if reason:
            return Condition(conditions.READY, status, reason, message)
    return Condition(conditions.READY, status, phase or NO_PHASE, message)


def warning(s: Snapshot, condition: Condition) -> EmitEvent | None:
    """A Warning Event saying what ``condition`` says, unless the observed status already says it."""
    seen = conditions.find(s.status, condition.type) or {}
    unchanged = (seen.get("status"), seen.get("reason"), seen.get("message")) == (
        condition.status_text,
        condition.reason,
        condition.message,
    )
    if unchanged:
        return None
    uid = str(s.meta.get("uid") or "")
    return EmitEvent(s.subject, uid, "Warning", condition.reason, condition.message)


def status_patch(s: Snapshot, wanted: Iterable[Condition]) -> dict[str, list[StatusCondition]]:
    """``{"conditions": [...]}`` for the pass's status patch, or ``{}`` when they are already observed."""
    return conditions.status_patch(s.status, wanted, generation=generation(s), now=s.now)
