"""The kubelet's restart back-off of one container (CrashLoopBackOff), as data and pure functions.

A real kubelet keeps one back-off entry per container of a pod (client-go's ``flowcontrol.Backoff``,
``kuberuntime_manager.doBackOff``): the first exit of a container is restarted at once and starts the
entry at the initial delay (10 s); each later exit waits for the entry's delay, counted from when the
container finished, then restarts and doubles the delay up to the cap (300 s). An entry left alone for
longer than the reset threshold (twice the cap, 10 minutes: a container that ran that long since its
last restart) starts over. While it waits the container is reported ``waiting`` with reason
``CrashLoopBackOff`` and the message ``back-off 20s restarting failed container=NAME pod=NAME_NS(UID)``
(the delay as Go prints a ``time.Duration``).

Rules: nothing here reads a clock or sleeps; times are seconds on one monotonic clock, passed in.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

REASON = "CrashLoopBackOff"
EVENT_REASON = "BackOff"  # the kubelet's Warning Event while it backs off


@dataclass(frozen=True)
class Backoff:
    """How the kubelet backs off restarts: the first delay, the cap and when an entry starts over."""

    initial: float = 10.0
    cap: float = 300.0
    reset: float = 600.0  # an entry not updated for this long is forgotten (twice the cap upstream)


@dataclass(frozen=True)
class Entry:
    """One container's back-off: the delay its next exit waits for, and when it was last restarted."""

    delay: float
    updated: float


def expired(entry: Entry | None, now: float, policy: Backoff) -> bool:
    """Whether ``entry`` is gone by ``now``: never made, or left alone longer than ``policy.reset``."""
    return entry is None or now - entry.updated > policy.reset


def wait(entry: Entry | None, *, finished: float, now: float, policy: Backoff) -> float:
    """Seconds from ``now`` until a container that exited at ``finished`` may be started again."""
    if entry is None or expired(entry, now, policy):
        return 0.0
    return max(0.0, finished + entry.delay - now)


def restarted(entry: Entry | None, now: float, policy: Backoff) -> Entry:
    """The entry after a restart at ``now``: the initial delay when there was none, else doubled."""
    if entry is None or expired(entry, now, policy):
        return Entry(delay=min(policy.initial, policy.cap), updated=now)
    return Entry(delay=min(entry.delay * 2, policy.cap), updated=now)


def message(delay: float, *, container: str, pod: str, namespace: str, uid: str) -> str:
    """The waiting message of a container backing off, worded as the kubelet words it."""
    return (
        f"back-off {go_duration(delay)} restarting failed container={container} pod={pod}_{namespace}({uid})"
    )


def event_message(*, container: str, pod: str, namespace: str, uid: str) -> str:
    """The message of the kubelet's ``BackOff`` Event."""
    return f"Back-off restarting failed container {container} in pod {pod}_{namespace}({uid})"


def go_duration(seconds: float) -> str:
    """``seconds`` as Go's ``time.Duration.String`` prints it: ``10s``, ``1m20s``, ``5m0s``, ``50ms``."""
    ns = round(Decimal(repr(seconds)) * 1_000_000_000)
    if ns == 0:
        return "0s"
    sign, ns = ("-", -ns) if ns < 0 else ("", ns)
    if ns < 1_000_000_000:
        for unit, size in (("ms", 1_000_000), ("µs", 1_000), ("ns", 1)):
            if ns >= size:
                return sign + _fraction(ns, size) + unit
    hours, rest = divmod(ns, 3_600_000_000_000)
    minutes, rest = divmod(rest, 60_000_000_000)
    text = _fraction(rest, 1_000_000_000) + "s"
    if hours or minutes:
        text = f"{minutes}m" + text
    if hours:
        text = f"{hours}h" + text
    return sign + text


def _fraction(value: int, size: int) -> str:
    whole, part = divmod(value, size)
    if not part:
        return str(whole)
    digits = str(part).rjust(len(str(size)) - 1, "0").rstrip("0")
    return f"{whole}.{digits}"
