"""The JSON the fake answers: the model of ``state`` rendered in the Actions service's wire shapes (§6.4).

Times are RFC 3339 in UTC; an unset time is Go's zero time, as the real service's Go and .NET clients
expect. Nothing here renders a token except ``session``, whose ``messageQueueAccessToken`` is the
listener's to have.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from sim.github.records import Agent, Job, JobEvent, Message, RunnerGroup, ScaleSet, Session, Statistics
from sim.github.state import State

ZERO_TIME = "0001-01-01T00:00:00Z"


def format_time(value: float | None) -> str:
    if value is None:
        return ZERO_TIME
    return datetime.fromtimestamp(value, UTC).isoformat().replace("+00:00", "Z")


def statistics(stats: Statistics) -> dict[str, int]:
    return {
        "totalAvailableJobs": stats.available,
        "totalAcquiredJobs": stats.acquired,
        "totalAssignedJobs": stats.assigned,
        "totalRunningJobs": stats.running,
        "totalRegisteredRunners": stats.registered,
        "totalBusyRunners": stats.busy,
        "totalIdleRunners": stats.idle,
    }


def scale_set(state: State, found: ScaleSet, base: str) -> dict[str, Any]:
    group = state.tenant_by_id(found.tenant_id).groups.get(found.runner_group_id)
    return {
        "id": found.id,
        "name": found.name,
        "runnerGroupId": found.runner_group_id,
        "runnerGroupName": group.name if group is not None else "",
        "labels": [dict(label) for label in found.labels],
        "RunnerSetting": dict(found.runner_setting),
        "createdOn": format_time(found.created_on),
        "runnerJitConfigUrl": f"{base}_apis/runtime/runnerscalesets/{found.id}/generatejitconfig",
        "statistics": statistics(state.statistics(found.id)),
    }


def group(state: State, found: RunnerGroup) -> dict[str, Any]:
    return {
        "id": found.id,
        "name": found.name,
        "size": state.group_size(found.tenant_id, found.id),
        "isDefaultGroup": found.is_default,
    }


def agent(found: Agent) -> dict[str, Any]:
    return {
        "id": found.id,
        "name": found.name,
        "runnerScaleSetId": found.scale_set_id,
        "version": found.version,
        "status": "online" if found.online else "offline",
        "busy": found.busy,
        "enabled": True,
    }


def job_message(event: JobEvent, base: str) -> dict[str, Any]:
    job = event.job
    body: dict[str, Any] = {
        "messageType": event.kind,
        "runnerRequestId": job.runner_request_id,
        "repositoryName": job.repository,
        "ownerName": job.owner,
        "jobId": job.job_id,
        "jobWorkflowRef": job.workflow_ref,
        "jobDisplayName": job.display_name,
        "workflowRunId": job.workflow_run_id,
        "eventName": job.event_name,
        "requestLabels": list(job.labels),
        "queueTime": format_time(job.queue_time),
        "scaleSetAssignTime": format_time(job.scale_set_assign_time),
        "runnerAssignTime": format_time(job.runner_assign_time),
        "finishTime": format_time(job.finish_time),
    }
    if event.kind == "JobAvailable":
        body["acquireJobUrl"] = f"{base}_apis/runtime/runnerscalesets/{job.scale_set_id}/acquirejobs"
    if event.kind in ("JobStarted", "JobCompleted"):
        body["runnerId"] = job.runner_id
        body["runnerName"] = job.runner_name
    if event.kind == "JobCompleted":
        body["result"] = job.result
    return body


def message(found: Message, base: str) -> dict[str, Any]:
    return {
        "messageId": found.id,
        "messageType": "RunnerScaleSetJobMessages",
        "statistics": statistics(found.statistics),
        "body": json.dumps([job_message(e, base) for e in found.events], separators=(",", ":")),
    }


def session(state: State, found: Session, base: str, *, queue_url: str, token: str) -> dict[str, Any]:
    owner = state.scale_sets[found.scale_set_id]
    return {
        "sessionId": found.id,
        "ownerName": found.owner,
        "runnerScaleSet": scale_set(state, owner, base),
        "messageQueueUrl": queue_url,
        "messageQueueAccessToken": token,
        "statistics": statistics(state.statistics(found.scale_set_id)),
    }


def job(found: Job) -> dict[str, Any]:
    """A job as the test hooks show it (not a wire message)."""
    return {
        "runnerRequestId": found.runner_request_id,
        "scaleSetId": found.scale_set_id,
        "jobId": found.job_id,
        "state": str(found.state),
        "ownerName": found.owner,
        "repositoryName": found.repository,
        "jobWorkflowRef": found.workflow_ref,
        "jobDisplayName": found.display_name,
        "workflowRunId": found.workflow_run_id,
        "runnerId": found.runner_id,
        "runnerName": found.runner_name,
        "result": found.result,
        # The fake's clock (seconds since the epoch) at each step, None until it happened: a benchmark
        # measures a job's wait from them (queued → a runner took it).
        "queueTime": found.queue_time,
        "scaleSetAssignTime": found.scale_set_assign_time,
        "runnerAssignTime": found.runner_assign_time,
        "finishTime": found.finish_time,
    }


def snapshot(state: State) -> dict[str, Any]:
    """Everything the fake holds, for ``GET /_sim/state``; tokens and runner credentials left out."""
    return {
        "tenants": [
            {"id": t.id, "scope": t.scope.path, "groups": [group(state, g) for g in t.groups.values()]}
            for t in state.tenants.values()
        ],
        "scaleSets": [{**scale_set(state, s, ""), "tenant": s.tenant_id} for s in state.scale_sets.values()],
        "runners": [agent(a) | {"jobRequestId": a.job} for a in state.agents.values()],
        "sessions": [
            {
                "sessionId": s.id,
                "scaleSetId": s.scale_set_id,
                "ownerName": s.owner,
                "pendingJobMessages": len(s.pending),
                "queuedMessageIds": [m.id for m in s.queue],
                "maxCapacity": s.max_capacity,
            }
            for s in state.sessions.values()
        ],
        "jobs": [job(j) for j in state.jobs.values()],
    }
