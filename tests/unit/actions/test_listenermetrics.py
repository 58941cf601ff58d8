"""The listener's metrics (spec §5.5): names, labels and values from statistics and job messages, a
configured spec limiting what is exported, and the HTTP endpoint serving the private registry."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import httpx
import pytest

from actions.listenermetrics import (
    ListenerMetrics,
    MetricSpec,
    MetricsServer,
    MetricsSpec,
    split_address,
    workflow_name_and_target,
)
from actions.messages import JobCompleted, JobStarted
from actions.models import Statistics

SCALE_SET = {
    "name": "arc",
    "namespace": "arc-runners",
    "enterprise": "",
    "organization": "my-org",
    "repository": "",
}
T0 = datetime(2026, 1, 1, tzinfo=UTC)
REF = "my-org/app/.github/workflows/ci.yaml@refs/heads/main"


def started(request_id: int = 1) -> JobStarted:
    return JobStarted(
        message_type="JobStarted",
        runner_request_id=request_id,
        owner_name="my-org",
        repository_name="app",
        job_workflow_ref=REF,
        job_display_name="build",
        event_name="push",
        scale_set_assign_time=T0,
        runner_assign_time=T0 + timedelta(seconds=3),
        runner_name="arc-runner-1",
    )


def completed(request_id: int = 1, result: str = "succeeded") -> JobCompleted:
    return JobCompleted(
        message_type="JobCompleted",
        runner_request_id=request_id,
        owner_name="my-org",
        repository_name="app",
        job_workflow_ref=REF,
        job_display_name="build",
        event_name="push",
        runner_assign_time=T0 + timedelta(seconds=3),
        finish_time=T0 + timedelta(seconds=63),
        result=result,
    )


JOB = {
    "repository": "app",
    "organization": "my-org",
    "enterprise": "",
    "job_name": "build",
    "event_name": "push",
    "job_workflow_ref": REF,
    "job_workflow_name": "ci",
    "job_workflow_target": "heads/main",
}


@pytest.mark.parametrize(
    ("ref", "expected"),
    [
        (REF, ("ci", "heads/main")),
        ("o/r/.github/workflows/deploy.yml@refs/pull/123/merge", ("deploy", "pull/123")),
        ("o/r/.github/workflows/release.yaml@refs/tags/v1.0.0", ("release", "tags/v1.0.0")),
        ("", ("", "")),
    ],
)
def test_workflow_name_and_target(ref: str, expected: tuple[str, str]) -> None:
    assert workflow_name_and_target(ref) == expected


def test_gauges_from_statistics_and_bounds() -> None:
    metrics = ListenerMetrics(scale_set_labels=SCALE_SET)
    metrics.publish_bounds(min_runners=1, max_runners=3)
    metrics.publish_statistics(
        Statistics(
            total_assigned_jobs=3,
            total_running_jobs=2,
            total_registered_runners=4,
            total_busy_runners=2,
            total_idle_runners=2,
        )
    )
    metrics.publish_desired(3)
    values = {
        name: metrics.sample(name, SCALE_SET)
        for name in (
            "gha_min_runners",
            "gha_max_runners",
            "gha_assigned_jobs",
            "gha_running_jobs",
            "gha_registered_runners",
            "gha_busy_runners",
            "gha_idle_runners",
            "gha_desired_runners",
        )
    }
    assert values == {
        "gha_min_runners": 1,
        "gha_max_runners": 3,
        "gha_assigned_jobs": 3,
        "gha_running_jobs": 2,
        "gha_registered_runners": 4,
        "gha_busy_runners": 2,
        "gha_idle_runners": 2,
        "gha_desired_runners": 3,
    }


def test_job_counters_and_durations() -> None:
    metrics = ListenerMetrics(scale_set_labels=SCALE_SET)
    metrics.job_started(started())
    metrics.job_completed(completed())
    done = {**JOB, "job_result": "succeeded"}
    assert metrics.sample("gha_started_jobs_total", JOB) == 1
    assert metrics.sample("gha_completed_jobs_total", done) == 1
    assert metrics.sample("gha_job_startup_duration_seconds_sum", JOB) == 3
    assert metrics.sample("gha_job_execution_duration_seconds_sum", done) == 60
    assert metrics.sample("gha_job_execution_duration_seconds_bucket", {**done, "le": "60.0"}) == 1
    assert metrics.sample("gha_job_execution_duration_seconds_bucket", {**done, "le": "50.0"}) == 0


def test_a_spec_limits_metrics_and_labels() -> None:
    spec = MetricsSpec(
        gauges={"gha_desired_runners": MetricSpec(("name",))},
        counters={"gha_completed_jobs_total": MetricSpec(("job_result", "name"))},
        histograms={"gha_job_startup_duration_seconds": MetricSpec((), buckets=(1.0, 5.0))},
    )
    metrics = ListenerMetrics(scale_set_labels=SCALE_SET, spec=spec)
    metrics.publish_bounds(min_runners=1, max_runners=3)
    metrics.publish_desired(2)
    metrics.job_started(started())
    metrics.job_completed(completed(result="failed"))
    assert metrics.sample("gha_desired_runners", {"name": "arc"}) == 2
    assert metrics.sample("gha_min_runners", SCALE_SET) is None
    assert metrics.sample("gha_completed_jobs_total", {"job_result": "failed", "name": "arc"}) == 1
    assert metrics.sample("gha_job_startup_duration_seconds_bucket", {"le": "5.0"}) == 1
    assert metrics.sample("gha_started_jobs_total", JOB) is None


def test_split_address() -> None:
    assert split_address(":8080") == (None, 8080)
    assert split_address("127.0.0.1:0") == ("127.0.0.1", 0)
    assert split_address("[::1]:9090") == ("::1", 9090)
    for bad in ("8080x", "localhost", ":99999"):
        with pytest.raises(ValueError):
            split_address(bad)


async def test_the_endpoint_serves_the_registry() -> None:
    metrics = ListenerMetrics(scale_set_labels=SCALE_SET)
    metrics.publish_desired(2)
    server = await MetricsServer(metrics, addr="127.0.0.1:0", endpoint="/metrics").start()
    try:
        async with httpx.AsyncClient() as http:
            reply = await http.get(f"http://127.0.0.1:{server.port}/metrics")
            missing = await http.get(f"http://127.0.0.1:{server.port}/other")
    finally:
        await server.stop()
    assert reply.status_code == 200 and missing.status_code == 404
    assert 'gha_desired_runners{enterprise="",name="arc",namespace="arc-runners"' in reply.text
    assert "python_gc" not in reply.text  # a private registry: no process collectors
