"""Reading the results of earlier effects (``Snapshot.results``), the one way their outcomes reach a decision.

The executor appends an ``effect_result`` record for every effect it performs; the snapshot builder hands
the latest one per effect key to the subject's next decisions, as the record body plus the record's
``at`` (the journal time it was appended, RFC 3339). The body this module reads:

* success: ``{"ok": true, ...facts}`` (``ok`` may be left out when there is no ``error``);
* failure: ``{"ok": false, "error": CLASS, "message": TEXT}``, where ``CLASS`` is, for a Kubernetes
  write, the API status ``reason`` (``Invalid``, ``Forbidden``, ``AlreadyExists``, ``NotFound``,
  ``Conflict``, ...), and for an Actions call the service's verdict (``RunnerExists``,
  ``RunnerNotFound``, ``JobStillRunning``, or the client's error class name for anything else), or
  ``Interrupted`` for an effect a controller started, stopped during, and did not perform again on start
  (its outcome is unknown).

Facts a decision reads: ``runnerId`` and ``runnerName`` from ``CreateJitConfigSecret``; ``runner``
(``{"id", "name", "runnerScaleSetId"}`` or ``null``) from ``GetRunnerByName``; ``runnerGroup``
(``{"id", "name"}``) from ``GetRunnerGroupByName``; ``scaleSet`` (the service's scale set JSON, or ``null``
when none was found) from ``GetRunnerScaleSet``, ``CreateRunnerScaleSet`` and ``UpdateRunnerScaleSet``.

``at`` is what makes a result usable in a replay: "retry 30 s after the quota error" is measured from the
result's own time with ``Snapshot.now``, never from a clock. A result without ``at`` is undated: a window
measured from it has always elapsed.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from statemachines import pods
from statemachines.effects import DeleteObject, Effect, ObjectRef
from statemachines.jsonvalues import JsonObject
from statemachines.snapshots import Snapshot


class Failure(enum.StrEnum):
    """The error classes decisions branch on (anything else is just "failed")."""

    INVALID = "Invalid"
    FORBIDDEN = "Forbidden"
    ALREADY_EXISTS = "AlreadyExists"
    NOT_FOUND = "NotFound"
    RUNNER_EXISTS = "RunnerExists"
    RUNNER_NOT_FOUND = "RunnerNotFound"
    JOB_STILL_RUNNING = "JobStillRunning"
    INTERRUPTED = "Interrupted"


@dataclass(frozen=True)
class Outcome:
    error: str = ""  # "" when the effect succeeded
    message: str = ""
    at: datetime | None = None
    facts: JsonObject = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.error

    def failed_with(self, failure: Failure) -> bool:
        return self.error == failure.value

    def newer_than(self, other: Outcome | None) -> bool:
        """True when this result was recorded after ``other`` (or there is none); undated counts as newer."""
        if other is None or self.at is None or other.at is None:
            return True
        return self.at >= other.at

    def remaining(self, seconds: float, now: datetime) -> float:
        """Seconds left of a window of ``seconds`` that opened at this result; 0 once it has elapsed."""
        if self.at is None:
            return 0.0
        left = (self.at + timedelta(seconds=seconds) - now).total_seconds()
        return max(left, 0.0)


def from_body(body: JsonObject) -> Outcome:
    error = str(body.get("error") or "")
    if not error and body.get("ok") is False:
        error = "Failed"
    facts = {k: v for k, v in body.items() if k not in ("ok", "error", "message", "at")}
    return Outcome(
        error=error,
        message=str(body.get("message") or ""),
        at=pods.parse_time(body.get("at")),
        facts=facts,
    )


def of(snapshot: Snapshot, effect: Effect) -> Outcome | None:
    """The latest result of ``effect`` (matched by its key), or None when it has none yet."""
    body = snapshot.results.get(effect.key)
    return None if body is None else from_body(body)


def unobserved_for(snapshot: Snapshot, create: Effect, target: ObjectRef, seconds: float) -> float:
    """Seconds left to wait for an object the executor created but the watch has not shown yet.

    ``create`` made ``target``; while its success is younger than ``seconds`` and no delete of ``target``
    was recorded after it, the object exists and only its watch event is late, so a decision waits
    rather than create it again. Otherwise (0) it is gone and may be created.
    """
    created = of(snapshot, create)
    if created is None or not created.ok or created.at is None:
        return 0.0
    deleted = of(snapshot, DeleteObject(target))
    if deleted is not None and (deleted.at is None or deleted.at >= created.at):
        return 0.0
    return created.remaining(seconds, snapshot.now)
