"""The listener pod's restart backoff, beyond upstream (which recreates a failed listener pod at once).

The listener exits on any error and its pod is recreated, which makes a new message session (§5.3). A
listener that cannot start (bad credentials, a session another listener holds: §8 item 6) would be
recreated as fast as the API server allows. So a failed pod is deleted and the failure recorded, and the
next pod is created after ``delay(count)``: at once for the first failure of a streak, then 5 s doubling
to 5 min for every further failure in a row.

A streak ends, and the count starts again at 1, when the failed pod's listener ran for ``STABLE_SECONDS``
or more, or when it was a different pod from the one that failed last (its integrity hash differs: its
configuration changed). Likewise the wait is skipped when the pod about to be created differs from the
one that failed: a fixed configuration is tried at once.

The record (count, time, integrity hash of the failed pod) is kept in annotations on the listener's
ServiceAccount, an object the AutoscalingListener owns and nothing else reads. It is observed state, and
the times come from ``Snapshot.now`` and the pod's own status, so a replay decides the same.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from statemachines import naming, pods
from statemachines.jsonvalues import JsonObject, as_mapping

BASE_SECONDS = 5.0
CAP_SECONDS = 300.0
STABLE_SECONDS = 600.0
LISTENER_CONTAINER = "listener"

ANNOTATION_FAILURES = naming.ARCSM_PREFIX + "listener-failures"
ANNOTATION_FAILED_AT = naming.ARCSM_PREFIX + "listener-failed-at"
ANNOTATION_FAILED_HASH = naming.ARCSM_PREFIX + "listener-failed-hash"


def annotations_of(obj: JsonObject | None) -> JsonObject:
    return as_mapping(as_mapping((obj or {}).get("metadata")).get("annotations"))


def pod_hash(pod: JsonObject | None) -> str:
    return str(annotations_of(pod).get(naming.ANNOTATION_INTEGRITY_HASH) or "")


def delay(count: int) -> float:
    """Seconds to wait before recreating the pod after ``count`` failures in a row."""
    if count <= 1:
        return 0.0
    doublings = min(count - 2, 16)  # the cap is reached long before; keeps the power small
    return min(BASE_SECONDS * float(2**doublings), CAP_SECONDS)


def run_seconds(pod: JsonObject | None, now: datetime) -> float:
    """How long the listener container ran (to its end, or to ``now``); 0 when it never started."""
    state = as_mapping((pods.container_status(pod, LISTENER_CONTAINER) or {}).get("state"))
    ended = as_mapping(state.get("terminated"))
    started = pods.parse_time(ended.get("startedAt") or as_mapping(state.get("running")).get("startedAt"))
    started = started or pods.parse_time(as_mapping((pod or {}).get("status")).get("startTime"))
    if started is None:
        return 0.0
    finished = pods.parse_time(ended.get("finishedAt")) or now
    return max((finished - started).total_seconds(), 0.0)


@dataclass(frozen=True)
class FailureRecord:
    """The streak so far: how many failures in a row, when the last one was seen, which pod it was."""

    count: int = 0
    at: datetime | None = None
    pod_hash: str = ""

    @classmethod
    def from_observed(cls, holder: JsonObject | None) -> FailureRecord:
        found = annotations_of(holder)
        raw = str(found.get(ANNOTATION_FAILURES) or "0")
        return cls(
            count=int(raw) if raw.isdigit() else 0,
            at=pods.parse_time(found.get(ANNOTATION_FAILED_AT)),
            pod_hash=str(found.get(ANNOTATION_FAILED_HASH) or ""),
        )

    def with_failure(self, pod: JsonObject | None, now: datetime) -> FailureRecord:
        """The record once ``pod`` (which just ended) is counted."""
        fresh = run_seconds(pod, now) >= STABLE_SECONDS or self.pod_hash != pod_hash(pod)
        return FailureRecord(count=1 if fresh else self.count + 1, at=now, pod_hash=pod_hash(pod))

    def as_annotations(self) -> dict[str, str]:
        at = pods.format_time(self.at) if self.at is not None else ""
        return {
            ANNOTATION_FAILURES: str(self.count),
            ANNOTATION_FAILED_AT: at,
            ANNOTATION_FAILED_HASH: self.pod_hash,
        }

    def remaining(self, wanted_hash: str, now: datetime) -> float:
        """Seconds left before the pod ``wanted_hash`` names may be created (0: now)."""
        if self.at is None or self.pod_hash != wanted_hash:
            return 0.0
        until = self.at + timedelta(seconds=delay(self.count))
        return max((until - now).total_seconds(), 0.0)
