"""The result of one effect, typed: what the executor answers and what a later decision reads.

One value for both ends of the loop. The executor builds it (``EffectResult.success(**facts)``,
``EffectResult.failure(CLASS, TEXT)``), the runtime journals it as an ``effect_result`` body
(``to_body``), and a decision reads it back from its snapshot (``from_body``, with the record's ``at``).
The body on the journal:

    success: {"ok": true, ...facts}
    failure: {"ok": false, "error": CLASS, "message": TEXT}          (+ "retryAfter": seconds, when known)

There is one notion of failure: a result failed when it carries an error class (``failed``; ``ok`` is
its negation). A body that says ``"ok": false`` without a class reads as the class ``Failed``; a body
with a class is a failure whatever its ``ok`` says; a body with neither is a success (older journals
leave ``ok`` out).

``to_body`` writes exactly the body the executor has always written, key for key and in the same order,
so a recorded journal reads the same and the journal's bytes do not change. Keys a body carries beside
``ok``, ``error``, ``message``, ``retryAfter`` and ``at`` are its facts (the runtime adds ``key`` and
``effectSeq`` to every journaled body; they read as facts too).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from statemachines.jsonvalues import JsonObject
from statemachines.pods import parse_time

_NOT_FACTS = frozenset(("ok", "error", "message", "retryAfter", "at"))


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
    TIMEOUT = "Timeout"
    UNCLASSIFIED = "Failed"  # the class of a failure whose body names none
    # The scale set's config Secret does not exist: no call can be made for it until a user creates it.
    CONFIG_SECRET_MISSING = "ConfigSecretMissing"


@dataclass(frozen=True)
class EffectResult:
    error: str = ""  # the failure's class; "" when the effect succeeded
    message: str = ""
    retry_after: float | None = None  # seconds the server asked to be called back after, when it said
    facts: JsonObject = field(default_factory=dict)
    at: datetime | None = None  # when the result was journaled; None before, or in an undated body

    @classmethod
    def success(cls, **facts: object) -> EffectResult:
        return cls(facts=facts)

    @classmethod
    def failure(cls, error: str, message: str, *, retry_after: float | None = None) -> EffectResult:
        return cls(error=error or Failure.UNCLASSIFIED.value, message=message, retry_after=retry_after)

    @classmethod
    def from_body(cls, body: JsonObject) -> EffectResult:
        """The result a journaled (or recorded) ``effect_result`` body holds; never raises."""
        error = str(body.get("error") or "")
        if not error and body.get("ok") is False:
            error = Failure.UNCLASSIFIED.value
        retry_after = body.get("retryAfter")
        return cls(
            error=error,
            message=str(body.get("message") or ""),
            retry_after=retry_after if _is_number(retry_after) else None,
            facts={k: v for k, v in body.items() if k not in _NOT_FACTS},
            at=parse_time(body.get("at")),
        )

    def to_body(self) -> dict[str, object]:
        """The ``effect_result`` body of this result (without ``at``: the record carries its time)."""
        if self.ok:
            return {"ok": True, **self.facts}
        body: dict[str, object] = {"ok": False, "error": self.error, "message": self.message}
        if self.retry_after is not None:
            body["retryAfter"] = self.retry_after
        body.update(self.facts)
        return body

    @property
    def failed(self) -> bool:
        return bool(self.error)

    @property
    def ok(self) -> bool:
        return not self.error

    def failed_with(self, failure: Failure) -> bool:
        return self.error == failure.value

    def newer_than(self, other: EffectResult | None) -> bool:
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


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)
