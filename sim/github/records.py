"""The records of the fake Actions service's model: tenants, runner groups, scale sets, agents, jobs,
job messages, sessions and statistics, plus the runner-version rule. Plain data; ``sim.github.state``
holds the operations over them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from sim.github.scopes import Scope

Clock = Callable[[], float]
DEFAULT_GROUP = "Default"
DEFAULT_GROUP_ID = 1


class JobState(StrEnum):
    AVAILABLE = "available"
    ASSIGNED = "assigned"
    RUNNING = "running"
    COMPLETED = "completed"
    CANCELED = "canceled"


UNFINISHED = (JobState.AVAILABLE, JobState.ASSIGNED, JobState.RUNNING)


@dataclass
class RunnerGroup:
    id: int
    tenant_id: int
    name: str
    is_default: bool = False


@dataclass
class Tenant:
    id: int
    scope: Scope
    groups: dict[int, RunnerGroup] = field(default_factory=dict)


@dataclass
class ScaleSet:
    id: int
    tenant_id: int
    name: str
    runner_group_id: int
    labels: list[dict[str, str]]
    runner_setting: dict[str, Any]
    created_on: float


@dataclass
class Agent:
    id: int
    tenant_id: int
    name: str
    scale_set_id: int
    work_folder: str
    secret: str = field(repr=False)  # the runner's credential inside its JIT config
    version: str = ""
    online: bool = False
    job: int | None = None  # the runnerRequestId it runs

    @property
    def busy(self) -> bool:
        return self.job is not None


@dataclass
class Job:
    runner_request_id: int
    scale_set_id: int
    job_id: str
    owner: str
    repository: str
    workflow_ref: str
    display_name: str
    event_name: str
    workflow_run_id: int
    labels: list[str]
    queue_time: float
    state: JobState = JobState.AVAILABLE
    scale_set_assign_time: float | None = None
    runner_assign_time: float | None = None
    finish_time: float | None = None
    runner_id: int = 0
    runner_name: str = ""
    result: str = ""


@dataclass(frozen=True)
class JobEvent:
    """One job message: its type and the job as it was when it happened."""

    kind: str  # JobAvailable, JobAssigned, JobStarted, JobCompleted
    job: Job


@dataclass(frozen=True)
class Statistics:
    available: int = 0
    acquired: int = 0
    assigned: int = 0
    running: int = 0
    registered: int = 0
    busy: int = 0
    idle: int = 0


@dataclass
class Message:
    id: int
    events: list[JobEvent]
    statistics: Statistics


@dataclass
class Session:
    id: str
    scale_set_id: int
    owner: str
    last_seen: float
    pending: list[JobEvent] = field(default_factory=list)  # not yet sealed into a message
    queue: list[Message] = field(default_factory=list)  # sealed, not yet deleted, by id
    max_capacity: int | None = None  # X-ScaleSetMaxCapacity of the latest poll
    polling: int = 0  # long polls in progress (an abandoned session has none)


def version_tuple(version: str) -> tuple[int, ...] | None:
    """``2.329.0`` → (2, 329, 0); a leading ``v`` is allowed; anything else is None."""
    text = version.strip().removeprefix("v")
    parts = text.split(".")
    if not text or not all(p.isdigit() for p in parts):
        return None
    return tuple(int(p) for p in parts)


def version_at_least(version: str, minimum: str) -> bool:
    """Whether runner ``version`` is ``minimum`` or later; an unparsable version never is."""
    have, want = version_tuple(version), version_tuple(minimum)
    if have is None or want is None:
        return False
    width = max(len(have), len(want))
    return have + (0,) * (width - len(have)) >= want + (0,) * (width - len(want))
