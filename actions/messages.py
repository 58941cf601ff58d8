"""Message sessions, the messages of a scale set's queue and the job messages inside them (§5.3, §6.4).

A ``RunnerScaleSetMessage`` arrives from GetMessage with ``messageType`` ``RunnerScaleSetJobMessages``
(any other type is a ``ProtocolError``) and a ``body`` that is a JSON-encoded *string* holding an array
of job messages. The client decodes that array here into ``JobAvailable``, ``JobAssigned``,
``JobStarted`` and ``JobCompleted``; job messages of any other type are skipped, as upstream does.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from datetime import datetime
from typing import Final

from actions import errors, wire
from actions.models import RunnerScaleSet, Statistics
from actions.redaction import SecretStr

log = logging.getLogger(__name__)

JOB_MESSAGES: Final = "RunnerScaleSetJobMessages"


@dataclass(frozen=True)
class MessageSession:
    """A listener's session on a scale set's message queue. The queue token is secret."""

    session_id: str
    message_queue_url: str
    message_queue_access_token: SecretStr
    owner_name: str = ""
    runner_scale_set: RunnerScaleSet | None = None
    statistics: Statistics | None = None

    @classmethod
    def from_wire(cls, data: wire.Json) -> MessageSession:
        what = "message session"
        scale_set = data.get("runnerScaleSet")
        stats = data.get("statistics")
        token = wire.text(data, "messageQueueAccessToken", what=what, required=True)
        return cls(
            session_id=wire.text(data, "sessionId", what=what, required=True),
            owner_name=wire.text(data, "ownerName", what=what),
            runner_scale_set=(
                None if scale_set is None else RunnerScaleSet.from_wire(wire.as_object(scale_set, what=what))
            ),
            message_queue_url=wire.text(data, "messageQueueUrl", what=what, required=True),
            message_queue_access_token=SecretStr(token),
            statistics=None if stats is None else Statistics.from_wire(wire.as_object(stats, what=what)),
        )


@dataclass(frozen=True, kw_only=True)
class JobMessage:
    """The fields every job message carries."""

    message_type: str
    runner_request_id: int
    repository_name: str = ""
    owner_name: str = ""
    job_id: str = ""
    job_workflow_ref: str = ""
    job_display_name: str = ""
    workflow_run_id: int = 0
    event_name: str = ""
    request_labels: tuple[str, ...] = ()
    queue_time: datetime | None = None
    scale_set_assign_time: datetime | None = None
    runner_assign_time: datetime | None = None
    finish_time: datetime | None = None


@dataclass(frozen=True, kw_only=True)
class JobAvailable(JobMessage):
    acquire_job_url: str = ""


@dataclass(frozen=True, kw_only=True)
class JobAssigned(JobMessage):
    pass


@dataclass(frozen=True, kw_only=True)
class JobStarted(JobMessage):
    runner_id: int = 0
    runner_name: str = ""


@dataclass(frozen=True, kw_only=True)
class JobCompleted(JobMessage):
    result: str = ""
    runner_id: int = 0
    runner_name: str = ""


@dataclass(frozen=True)
class RunnerScaleSetMessage:
    message_id: int
    message_type: str
    statistics: Statistics | None
    jobs: tuple[JobMessage, ...] = ()

    @classmethod
    def from_wire(cls, data: wire.Json) -> RunnerScaleSetMessage:
        what = "message"
        message_type = wire.text(data, "messageType", what=what)
        if message_type != JOB_MESSAGES:
            raise errors.ProtocolError(f"{what}: unsupported messageType {message_type!r}")
        stats = data.get("statistics")
        return cls(
            message_id=wire.integer(data, "messageId", what=what, required=True),
            message_type=message_type,
            statistics=None if stats is None else Statistics.from_wire(wire.as_object(stats, what=what)),
            jobs=parse_job_messages(wire.text(data, "body", what=what)),
        )

    @property
    def available(self) -> tuple[JobAvailable, ...]:
        return tuple(job for job in self.jobs if isinstance(job, JobAvailable))

    @property
    def started(self) -> tuple[JobStarted, ...]:
        return tuple(job for job in self.jobs if isinstance(job, JobStarted))

    @property
    def completed(self) -> tuple[JobCompleted, ...]:
        return tuple(job for job in self.jobs if isinstance(job, JobCompleted))


def parse_job_messages(body: str) -> tuple[JobMessage, ...]:
    """The job messages of a message body (a JSON array as a string); unknown types are skipped."""
    if not body.strip():
        return ()
    try:
        items = json.loads(body)
    except ValueError as exc:
        raise errors.ProtocolError("message: the body is not a JSON array of job messages") from exc
    jobs: list[JobMessage] = []
    for item in wire.as_list(items, what="message body"):
        job = _job_message(wire.as_object(item, what="job message"))
        if job is not None:
            jobs.append(job)
    return tuple(jobs)


def _job_message(data: wire.Json) -> JobMessage | None:
    what = "job message"
    message_type = wire.text(data, "messageType", what=what)
    common = JobMessage(
        message_type=message_type,
        runner_request_id=wire.integer(data, "runnerRequestId", what=what),
        repository_name=wire.text(data, "repositoryName", what=what),
        owner_name=wire.text(data, "ownerName", what=what),
        job_id=_job_id(data),
        job_workflow_ref=wire.text(data, "jobWorkflowRef", what=what),
        job_display_name=wire.text(data, "jobDisplayName", what=what),
        workflow_run_id=wire.integer(data, "workflowRunId", what=what),
        event_name=wire.text(data, "eventName", what=what),
        request_labels=wire.strings(data, "requestLabels", what=what),
        queue_time=wire.timestamp(data, "queueTime"),
        scale_set_assign_time=wire.timestamp(data, "scaleSetAssignTime"),
        runner_assign_time=wire.timestamp(data, "runnerAssignTime"),
        finish_time=wire.timestamp(data, "finishTime"),
    )
    fields = {name: getattr(common, name) for name in JobMessage.__dataclass_fields__}
    if message_type == "JobAvailable":
        return JobAvailable(**fields, acquire_job_url=wire.text(data, "acquireJobUrl", what=what))
    if message_type == "JobAssigned":
        return JobAssigned(**fields)
    runner_id = wire.integer(data, "runnerId", what=what)
    runner_name = wire.text(data, "runnerName", what=what)
    if message_type == "JobStarted":
        return JobStarted(**fields, runner_id=runner_id, runner_name=runner_name)
    if message_type == "JobCompleted":
        result = wire.text(data, "result", what=what)
        return JobCompleted(**fields, result=result, runner_id=runner_id, runner_name=runner_name)
    log.debug("skipping a job message of unknown type %r", message_type)
    return None


def _job_id(data: wire.Json) -> str:
    # A string on the wire; a number is accepted too, since an id is an id.
    value = data.get("jobId")
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return wire.text(data, "jobId", what="job message")
