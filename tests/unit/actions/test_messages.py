"""Reading messages and job messages (§6.4): types, times, unknown types skipped, bad shapes refused."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from actions import errors
from actions.messages import JobAssigned, JobCompleted, RunnerScaleSetMessage, parse_job_messages
from actions.models import RunnerScaleSet

COMMON = {
    "runnerRequestId": 11,
    "repositoryName": "repo",
    "ownerName": "owner",
    "jobId": "job-1",
    "jobWorkflowRef": "owner/repo/.github/workflows/ci.yml@refs/heads/main",
    "jobDisplayName": "build",
    "workflowRunId": 1001,
    "eventName": "push",
    "requestLabels": ["arc"],
    "queueTime": "2025-01-01T12:00:00.1234567Z",
    "scaleSetAssignTime": "2025-01-01T12:00:01Z",
    "runnerAssignTime": "0001-01-01T00:00:00Z",
    "finishTime": "",
}


def test_common_fields_and_times() -> None:
    (job,) = parse_job_messages(json.dumps([{"messageType": "JobCompleted", "result": "failed", **COMMON}]))
    assert isinstance(job, JobCompleted)
    assert (job.runner_request_id, job.repository_name, job.owner_name, job.job_id) == (
        11,
        "repo",
        "owner",
        "job-1",
    )
    assert (job.workflow_run_id, job.event_name, job.request_labels, job.result) == (
        1001,
        "push",
        ("arc",),
        "failed",
    )
    assert job.queue_time == datetime(2025, 1, 1, 12, 0, 0, 123456, tzinfo=UTC)
    assert job.scale_set_assign_time == datetime(2025, 1, 1, 12, 0, 1, tzinfo=UTC)
    assert job.runner_assign_time is None  # Go's zero time
    assert job.finish_time is None


def test_numeric_job_id_is_read_as_text() -> None:
    (job,) = parse_job_messages(
        json.dumps([{"messageType": "JobAssigned", "runnerRequestId": 1, "jobId": 5}])
    )
    assert isinstance(job, JobAssigned) and job.job_id == "5"


def test_unknown_job_types_are_skipped_and_an_empty_body_has_none() -> None:
    assert parse_job_messages(json.dumps([{"messageType": "JobCancelled", "runnerRequestId": 1}])) == ()
    assert parse_job_messages("") == ()


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("{not json", "not a JSON array"),
        ('{"a": 1}', "expected a JSON array"),
        ("[1]", "expected a JSON object"),
        ('[{"messageType": "JobStarted", "runnerRequestId": "x"}]', "'runnerRequestId' is a str"),
    ],
)
def test_bad_bodies_are_protocol_errors(body: str, message: str) -> None:
    with pytest.raises(errors.ProtocolError, match=message):
        parse_job_messages(body)


def test_message_statistics() -> None:
    message = RunnerScaleSetMessage.from_wire(
        {
            "messageId": 3,
            "messageType": "RunnerScaleSetJobMessages",
            "statistics": {"totalAssignedJobs": 2, "totalRunningJobs": 1},
            "body": "[]",
        }
    )
    assert message.statistics is not None
    assert (message.statistics.total_assigned_jobs, message.statistics.total_running_jobs) == (2, 1)
    assert message.jobs == ()


def test_scale_set_labels_default_their_type() -> None:
    found = RunnerScaleSet.from_wire({"id": 1, "name": "a", "labels": [{"name": "x", "type": ""}]})
    assert found.labels[0].type == "System"
    assert found.as_wire()["labels"] == [{"name": "x", "type": "System"}]
