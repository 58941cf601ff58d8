"""Reading observed pods: readiness, container statuses and exit codes (spec §2.3, §2.4, §4.11).

One definition of ``pod_ready`` serves both the EphemeralRunner machine (``updateRunStatusFromPod``) and
the ER←Pod update predicate, so the two cannot disagree (seed C6). Everything here reads a pod as a plain
JSON mapping, as the projection holds it; a missing or malformed field reads as absent, never raises.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import cast

from statemachines.jsonvalues import JsonObject, as_mappings, section
from statemachines.objects import PodStatus, meta_of

RUNNER_CONTAINER = "runner"
LISTENER_CONTAINER = "listener"

# Go's zero time.Time: a lastTransitionTime at (or before) it never counts.
ZERO_TIME = datetime(1, 1, 1, tzinfo=UTC)


def parse_time(value: object) -> datetime | None:
    """An RFC 3339 timestamp as an aware datetime; None when missing or unparsable."""
    if not isinstance(value, str) or not value:
        return None
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def format_time(value: datetime) -> str:
    """RFC 3339 in UTC with a ``Z``, to the second (the form Kubernetes writes)."""
    if value.tzinfo is None:  # local time, as the process's time zone says now: not remembered
        return _utc_text(value)
    return _remembered_utc_text(value)


def _utc_text(value: datetime) -> str:
    return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


# A decision formats its clock for every condition it writes, and replay decides many decisions at one
# journal time: the text of the last few aware times is kept (a pure function of the instant: aware
# datetimes of the same instant are equal keys, and give the same text).
_remembered_utc_text = functools.lru_cache(maxsize=256)(_utc_text)


def status_of(pod: JsonObject | None) -> PodStatus:
    """The pod's ``status``, viewed (``{}`` when there is no pod, or no status object)."""
    return cast(PodStatus, section(pod, "status"))


def pod_ready(pod: JsonObject | None) -> bool:
    """Upstream's ``podReady``: the Ready condition with the strictly latest ``lastTransitionTime``.

    The scan starts from the zero time and only a strictly later time replaces the current pick, so a
    Ready condition whose time is missing, unparsable or zero never counts (kept on purpose, §4.11).
    """
    latest = ZERO_TIME
    ready = False
    for condition in as_mappings(status_of(pod).get("conditions")):
        if condition.get("type") != "Ready":
            continue
        at = parse_time(condition.get("lastTransitionTime"))
        if at is not None and at > latest:
            latest = at
            ready = condition.get("status") == "True"
    return ready


def container_status(pod: JsonObject | None, name: str) -> JsonObject | None:
    """The status of the (non-init) container called ``name``; None when the pod reports none."""
    for status in as_mappings(status_of(pod).get("containerStatuses")):
        if status.get("name") == name:
            return status
    return None


def runner_container_status(pod: JsonObject | None) -> JsonObject | None:
    """The status of the container named ``runner``; None when the pod reports none yet."""
    return container_status(pod, RUNNER_CONTAINER)


def terminated(status: JsonObject | None) -> JsonObject | None:
    """The ``state.terminated`` block of a container status, when the container has terminated."""
    state = (status or {}).get("state")
    block = state.get("terminated") if isinstance(state, Mapping) else None
    return block if isinstance(block, Mapping) else None


def exit_code(status: JsonObject | None) -> int | None:
    """The exit code of a terminated container; None while it has not terminated."""
    return _code(terminated(status))


def last_exit_code(status: JsonObject | None) -> int | None:
    """The exit code of a container's previous run (``lastState.terminated``), when it was restarted."""
    last = (status or {}).get("lastState")
    block = last.get("terminated") if isinstance(last, Mapping) else None
    return _code(block if isinstance(block, Mapping) else None)


def _code(block: JsonObject | None) -> int | None:
    if block is None:
        return None
    code = block.get("exitCode")
    return code if isinstance(code, int) and not isinstance(code, bool) else 0


def is_running(status: JsonObject | None) -> bool:
    state = (status or {}).get("state")
    return isinstance(state, Mapping) and isinstance(state.get("running"), Mapping)


def init_container_failed(pod: JsonObject | None) -> bool:
    """True when any init container terminated with a non-zero exit code."""
    return any(
        exit_code(s) not in (None, 0) for s in as_mappings(status_of(pod).get("initContainerStatuses"))
    )


def phase(pod: JsonObject | None) -> str:
    return str(status_of(pod).get("phase") or "")


def reason(pod: JsonObject | None) -> str:
    return str(status_of(pod).get("reason") or "")


def message(pod: JsonObject | None) -> str:
    return str(status_of(pod).get("message") or "")


def uid(pod: JsonObject | None) -> str:
    return str(meta_of(pod).get("uid") or "")


def is_terminating(obj: JsonObject | None) -> bool:
    """True when the object carries a ``deletionTimestamp`` (being deleted)."""
    return bool(meta_of(obj).get("deletionTimestamp"))
