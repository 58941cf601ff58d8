"""Typed results of the scale-set, runner-group and runner endpoints, and their statistics (spec §6.4).

Frozen dataclasses read from the service's JSON with ``from_wire`` (checked field by field, see
``wire``). ``JitConfig.encoded_jit_config`` is a ``SecretStr``: the JIT config registers a runner, so it
is as sensitive as a token, and it only leaves the process in the runner's Secret.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Final

from actions import wire
from actions.redaction import SecretStr

SYSTEM_LABEL: Final = "System"


@dataclass(frozen=True)
class Statistics:
    total_available_jobs: int = 0
    total_acquired_jobs: int = 0
    total_assigned_jobs: int = 0
    total_running_jobs: int = 0
    total_registered_runners: int = 0
    total_busy_runners: int = 0
    total_idle_runners: int = 0

    @classmethod
    def from_wire(cls, data: wire.Json) -> Statistics:
        def count(key: str) -> int:
            return wire.integer(data, key, what="statistics")

        return cls(
            total_available_jobs=count("totalAvailableJobs"),
            total_acquired_jobs=count("totalAcquiredJobs"),
            total_assigned_jobs=count("totalAssignedJobs"),
            total_running_jobs=count("totalRunningJobs"),
            total_registered_runners=count("totalRegisteredRunners"),
            total_busy_runners=count("totalBusyRunners"),
            total_idle_runners=count("totalIdleRunners"),
        )


@dataclass(frozen=True)
class RunnerGroup:
    id: int
    name: str
    size: int = 0
    is_default_group: bool = False

    @classmethod
    def from_wire(cls, data: wire.Json) -> RunnerGroup:
        what = "runner group"
        return cls(
            id=wire.integer(data, "id", what=what, required=True),
            name=wire.text(data, "name", what=what),
            size=wire.integer(data, "size", what=what),
            is_default_group=wire.boolean(data, "isDefaultGroup", what=what),
        )


@dataclass(frozen=True)
class Label:
    name: str
    type: str = SYSTEM_LABEL

    def as_wire(self) -> wire.LabelWire:
        # An empty type is sent as System (§6.4).
        return {"name": self.name, "type": self.type or SYSTEM_LABEL}


@dataclass(frozen=True)
class RunnerScaleSet:
    """A runner scale set. To create one, fill ``name``, ``runner_group_id`` and optionally ``labels``
    (none means the single label ``<name>``) and ``disable_update``."""

    name: str
    runner_group_id: int = 0
    id: int = 0
    runner_group_name: str = ""
    labels: tuple[Label, ...] = ()
    disable_update: bool = False
    created_on: datetime | None = None
    runner_jit_config_url: str = ""
    statistics: Statistics | None = None

    @classmethod
    def from_wire(cls, data: wire.Json) -> RunnerScaleSet:
        what = "runner scale set"
        setting = wire.as_object(data.get("RunnerSetting") or {}, what=f"{what}: RunnerSetting")
        stats = data.get("statistics")
        return cls(
            id=wire.integer(data, "id", what=what, required=True),
            name=wire.text(data, "name", what=what),
            runner_group_id=wire.integer(data, "runnerGroupId", what=what),
            runner_group_name=wire.text(data, "runnerGroupName", what=what),
            labels=tuple(_label(item) for item in wire.as_list(data.get("labels") or [], what=what)),
            disable_update=wire.boolean(setting, "disableUpdate", what=what),
            created_on=wire.timestamp(data, "createdOn"),
            runner_jit_config_url=wire.text(data, "runnerJitConfigUrl", what=what),
            statistics=None if stats is None else Statistics.from_wire(wire.as_object(stats, what=what)),
        )

    def as_wire(self) -> wire.RunnerScaleSetWire:
        """The create body: labels default to ``[{name, System}]``, empty label types become System."""
        labels = self.labels or (Label(self.name),)
        body: wire.RunnerScaleSetWire = {
            "name": self.name,
            "runnerGroupId": self.runner_group_id,
            "labels": [label.as_wire() for label in labels],
            "RunnerSetting": {"disableUpdate": self.disable_update},
        }
        if self.id:
            body["id"] = self.id
        return body


@dataclass(frozen=True)
class RunnerReference:
    id: int
    name: str
    runner_scale_set_id: int = 0

    @classmethod
    def from_wire(cls, data: wire.Json) -> RunnerReference:
        what = "runner"
        return cls(
            id=wire.integer(data, "id", what=what, required=True),
            name=wire.text(data, "name", what=what),
            runner_scale_set_id=wire.integer(data, "runnerScaleSetId", what=what),
        )


@dataclass(frozen=True)
class JitConfig:
    """A just-in-time runner configuration: the registered runner and its opaque config (secret)."""

    runner: RunnerReference
    encoded_jit_config: SecretStr

    @classmethod
    def from_wire(cls, data: wire.Json) -> JitConfig:
        what = "JIT config"
        runner = wire.as_object(data.get("runner"), what=f"{what}: runner")
        return cls(
            runner=RunnerReference.from_wire(runner),
            encoded_jit_config=SecretStr(wire.text(data, "encodedJITConfig", what=what, required=True)),
        )


@dataclass(frozen=True)
class AcquirableJob:
    """A job the scale set may acquire, from the ``acquirablejobs`` listing."""

    runner_request_id: int
    acquire_job_url: str = ""
    message_type: str = ""
    repository_name: str = ""
    owner_name: str = ""
    job_workflow_ref: str = ""
    event_name: str = ""
    request_labels: tuple[str, ...] = ()

    @classmethod
    def from_wire(cls, data: wire.Json) -> AcquirableJob:
        what = "acquirable job"
        return cls(
            runner_request_id=wire.integer(data, "runnerRequestId", what=what, required=True),
            acquire_job_url=wire.text(data, "acquireJobUrl", what=what),
            message_type=wire.text(data, "messageType", what=what),
            repository_name=wire.text(data, "repositoryName", what=what),
            owner_name=wire.text(data, "ownerName", what=what),
            job_workflow_ref=wire.text(data, "jobWorkflowRef", what=what),
            event_name=wire.text(data, "eventName", what=what),
            request_labels=wire.strings(data, "requestLabels", what=what),
        )


def _label(value: object) -> Label:
    data = wire.as_object(value, what="runner scale set label")
    return Label(
        name=wire.text(data, "name", what="label"),
        type=wire.text(data, "type", what="label") or SYSTEM_LABEL,
    )
