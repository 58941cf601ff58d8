"""A derived object the API server refused: the problem to report and when to ask again.

A create or merge patch of an object a machine builds (the runner set, the listener, the listener's
ServiceAccount, Role and RoleBinding) that the API server answers ``422 Invalid`` will be refused again
as long as its inputs stay the same, so retrying it every second only fills the API server's log. The
machine that wrote it instead:

* reports it in its ``Ready`` condition, False with a reason of its own and a one-line message naming
  the object and the API server's reason (``Refusal.message``), and one Warning Event for it (the
  observed condition does not say it yet);
* asks again after a backoff (``retry_in``): how long its ``Ready`` condition has reported that reason
  when the refusal was recorded, within ``RETRY_MIN`` and ``RETRY_MAX``, measured from the refusal's own
  journal time, so the delay doubles from attempt to attempt and a replay computes the same;
* asks at once when the object's inputs may have changed: a new ``metadata.generation`` of the object
  deciding (its spec changed since the condition was written), or a new object under the same name (its
  results and status start empty).

Pure: reads the snapshot only.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from statemachines import conditions, outcomes, pods
from statemachines.effects import CreateObject, Effect, MergePatch, ObjectRef
from statemachines.snapshots import Snapshot

RETRY_MIN = 5.0
RETRY_MAX = 300.0
MESSAGE_LIMIT = 400


@dataclass(frozen=True)
class Refusal:
    """The API server's ``Invalid`` answer to a write of ``target``."""

    target: ObjectRef
    verb: str  # "create" or "update"
    detail: str
    at: datetime | None

    @property
    def message(self) -> str:
        where = f"{self.target.namespace}/{self.target.name}" if self.target.namespace else self.target.name
        text = f"the API server refused to {self.verb} the {self.target.kind} {where}"
        text = f"{text}: {self.detail}" if self.detail else text
        flat = " ".join(text.split())
        return flat if len(flat) <= MESSAGE_LIMIT else flat[: MESSAGE_LIMIT - 1] + "…"


def of(s: Snapshot, effect: CreateObject | MergePatch) -> Refusal | None:
    """The refusal the latest result of ``effect`` records, or None (no result, success, another error)."""
    out = outcomes.of(s, effect)
    if out is None or not out.failed_with(outcomes.Failure.INVALID):
        return None
    verb = "create" if isinstance(effect, CreateObject) else "update"
    return Refusal(effect.target, verb, out.message, out.at)


def first_of(s: Snapshot, *effects: Effect) -> Refusal | None:
    """The first refusal among the latest results of ``effects`` (creates and merge patches)."""
    for effect in effects:
        if isinstance(effect, CreateObject | MergePatch) and (found := of(s, effect)) is not None:
            return found
    return None


def _generation(s: Snapshot) -> int:
    value = s.meta.get("generation")
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def retry_in(s: Snapshot, refusal: Refusal, reason: str, condition: str = conditions.READY) -> float:
    """Seconds until ``refusal``'s write may be sent again (0: now).

    The delay is how long the observed ``condition`` had been False with ``reason`` when the refusal was
    recorded, within ``RETRY_MIN`` and ``RETRY_MAX`` (``RETRY_MIN`` when it does not say so yet); it is
    0 once the object's generation moved past the one the condition was written for.
    """
    if refusal.at is None:
        return 0.0
    seen = conditions.find(s.status, condition) or {}
    reported = seen.get("status") == conditions.FALSE and seen.get("reason") == reason
    if reported and seen.get("observedGeneration") not in (None, _generation(s)):
        return 0.0
    since = pods.parse_time(seen.get("lastTransitionTime")) if reported else None
    delay = RETRY_MIN
    if since is not None:
        delay = min(max((refusal.at - since).total_seconds(), RETRY_MIN), RETRY_MAX)
    left = (refusal.at - s.now).total_seconds() + delay
    return max(left, 0.0)
