"""What the simulated kubelet knows of one container of a pod, and how it reports it: the container's
entry in ``status.containerStatuses`` and the pod conditions the kubelet owns.

``ContainerState`` is one container across its runs: waiting (``ContainerCreating``,
``CreateContainerConfigError``, an image pull failure, ``CrashLoopBackOff``), running or terminated, its
restart count and last termination (while it backs off, the exit it backs off from), its restart back-off
(``sim.crashloops``), and what its probes said: ``started`` (its startup probe passed, or it has none) and
``ready`` (started, and its readiness probe passed or it has none). ``merge_conditions`` keeps each
condition's ``lastTransitionTime`` while its status stays the same.
"""

from __future__ import annotations

import asyncio
import hashlib
from dataclasses import dataclass, field
from typing import Any

from sim import crashloops, runtimes
from sim.store import Obj

# Conditions the kubelet owns, in the order it lists them.
KUBELET_CONDITIONS = ("PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady")
ZERO_TIME = "1970-01-01T00:00:00Z"  # a StartError's startedAt: the container never started


@dataclass(eq=False)
class ContainerState:
    spec: Obj
    state: str = "waiting"  # waiting, running, terminated
    waiting_reason: str = "ContainerCreating"
    waiting_message: str = ""
    restart_count: int = 0
    done: bool = False  # terminated for good (no restart will follow)
    restart_pending: bool = False  # terminated, to be started again after the back-off
    restart_at: float | None = None  # when (loop time) a pending restart is due
    backoff: crashloops.Entry | None = None  # the restart back-off (None: never restarted)
    exit_code: int | None = None
    started_at: str | None = None
    terminated: dict[str, Any] | None = None
    last_terminated: dict[str, Any] | None = None
    container_id: str = ""
    ctx: runtimes.ContainerContext | None = None
    task: asyncio.Task[None] | None = None
    exit: asyncio.Future[int] | None = None
    forced_reason: str | None = None
    started: bool = False  # the startup probe passed (or there is none)
    ready: bool = False  # started, and the readiness probe passed (or there is none)
    retry_at: float | None = None  # when to try making a container that could not be made again
    retry_delay: float = 0.0
    staged: bool = False  # its runtime is a runtimes.StagedRuntime (a real process)
    probers: list[asyncio.Task[None]] = field(default_factory=list)

    @property
    def name(self) -> str:
        return str(self.spec.get("name", ""))

    @property
    def image(self) -> str:
        return str(self.spec.get("image", ""))

    @property
    def running(self) -> bool:
        return self.state == "running"

    @property
    def backing_off(self) -> bool:
        """Waiting out the restart back-off after an exit (``CrashLoopBackOff``)."""
        return self.state == "waiting" and self.restart_pending and self.terminated is not None

    @property
    def never_ran(self) -> bool:
        return self.state == "waiting" and self.last_terminated is None and self.restart_count == 0

    def finish(self, code: int, reason: str | None = None) -> bool:
        """Make the current run exit with ``code`` (a test's ``complete`` or the kubelet killing it)."""
        if self.exit is None or self.exit.done():
            return False
        self.forced_reason = reason
        self.exit.set_result(code)
        return True

    def stop_probes(self) -> None:
        for task in self.probers:
            task.cancel()
        self.probers.clear()

    def status(self) -> dict[str, Any]:
        state: dict[str, Any]
        if self.state == "running":
            state = {"running": {"startedAt": self.started_at}}
        elif self.state == "terminated" and self.terminated is not None:
            state = {"terminated": self.terminated}
        else:
            waiting: dict[str, Any] = {"reason": self.waiting_reason}
            if self.waiting_message:
                waiting["message"] = self.waiting_message
            state = {"waiting": waiting}
        last = self.terminated if self.backing_off else self.last_terminated
        out: dict[str, Any] = {
            "name": self.name,
            "state": state,
            "lastState": {"terminated": last} if last else {},
            "ready": self.running and self.ready,
            "restartCount": self.restart_count,
            "image": self.image,
            "imageID": "",
            "started": self.running and self.started,
        }
        if self.container_id:
            out["containerID"] = self.container_id
            digest = hashlib.sha256(self.image.encode()).hexdigest()
            out["imageID"] = f"{runtimes.image_repository(self.image)}@sha256:{digest}"
        return out


def merge_conditions(
    existing: list[Any], wanted: dict[str, tuple[str, str | None, str | None]], now: str
) -> list[dict[str, Any]]:
    by_type = {c.get("type"): c for c in existing if isinstance(c, dict)}
    built: dict[str, dict[str, Any]] = {}
    for ctype, (status, reason, message) in wanted.items():
        old = by_type.get(ctype)
        cond: dict[str, Any] = {
            "type": ctype,
            "status": status,
            "lastProbeTime": None,
            "lastTransitionTime": old["lastTransitionTime"]
            if old is not None and old.get("status") == status and old.get("lastTransitionTime")
            else now,
        }
        if reason:
            cond["reason"] = reason
        if message:
            cond["message"] = message
        built[ctype] = cond
    ordered = [built.pop(t) for t in KUBELET_CONDITIONS if t in built]
    rest = [built.pop(c["type"]) if c.get("type") in built else c for c in existing if isinstance(c, dict)]
    return ordered + [c for c in rest if c.get("type") not in KUBELET_CONDITIONS] + list(built.values())
