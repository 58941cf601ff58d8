"""The listener's Prometheus metrics (spec §5.5) on a private registry, and the HTTP endpoint serving them.

    gauges      gha_assigned_jobs gha_running_jobs gha_registered_runners gha_busy_runners gha_idle_runners
                gha_min_runners gha_max_runners gha_desired_runners
    counters    gha_started_jobs_total gha_completed_jobs_total
    histograms  gha_job_startup_duration_seconds gha_job_execution_duration_seconds

Which metrics exist, with which labels and buckets, is ``MetricsSpec``: the config's ``metrics`` key
(``AL.spec.metrics``: ``{"gauges"|"counters"|"histograms": {name: {"labels": [...], "buckets": [...]}}}``),
or ``DEFAULT_SPEC`` when it is absent. A spec lists what is exported: a metric it leaves out is not.
Any of the eleven label keys may be put on any metric; one with no value for that metric (``job_name``
on a gauge) is exported empty. Unknown label keys and unsorted buckets are configuration errors; unknown
metric names are ignored, so a config written for a newer upstream listener still loads.

Label values: ``name`` (the scale set's ARS name), ``namespace`` and the ``enterprise``/``organization``/
``repository`` of the config URL for the scale-set gauges; for job metrics ``organization`` and
``repository`` are the job's owner and repository, and ``job_workflow_name``/``job_workflow_target`` come
from the job's workflow ref (``owner/repo/.github/workflows/ci.yaml@refs/heads/main`` → ``ci``,
``heads/main``; ``refs/pull/7/merge`` → ``pull/7``), after upstream's ``ParseWorkflowRef``.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Final, TypeVar

from aiohttp import web
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, disable_created_metrics
from prometheus_client.aiohttp import make_aiohttp_handler

from actions.messages import JobCompleted, JobMessage, JobStarted
from actions.models import Statistics

log = logging.getLogger(__name__)

# Upstream's metrics (Go's client) carry no `*_created` series for its counters and histograms.
disable_created_metrics()  # type: ignore[no-untyped-call]  # prometheus_client leaves it unannotated

M = TypeVar("M", Gauge, Counter, Histogram)

ASSIGNED_JOBS: Final = "gha_assigned_jobs"
RUNNING_JOBS: Final = "gha_running_jobs"
REGISTERED_RUNNERS: Final = "gha_registered_runners"
BUSY_RUNNERS: Final = "gha_busy_runners"
IDLE_RUNNERS: Final = "gha_idle_runners"
MIN_RUNNERS: Final = "gha_min_runners"
MAX_RUNNERS: Final = "gha_max_runners"
DESIRED_RUNNERS: Final = "gha_desired_runners"
STARTED_JOBS: Final = "gha_started_jobs_total"
COMPLETED_JOBS: Final = "gha_completed_jobs_total"
STARTUP_DURATION: Final = "gha_job_startup_duration_seconds"
EXECUTION_DURATION: Final = "gha_job_execution_duration_seconds"

GAUGES: Final = (
    ASSIGNED_JOBS,
    RUNNING_JOBS,
    REGISTERED_RUNNERS,
    BUSY_RUNNERS,
    IDLE_RUNNERS,
    MIN_RUNNERS,
    MAX_RUNNERS,
    DESIRED_RUNNERS,
)
COUNTERS: Final = (STARTED_JOBS, COMPLETED_JOBS)
HISTOGRAMS: Final = (STARTUP_DURATION, EXECUTION_DURATION)

SCALE_SET_LABELS: Final = ("name", "namespace", "enterprise", "organization", "repository")
JOB_LABELS: Final = (
    "repository",
    "organization",
    "enterprise",
    "job_name",
    "event_name",
    "job_workflow_ref",
    "job_workflow_name",
    "job_workflow_target",
)
RESULT_LABEL: Final = "job_result"
LABEL_KEYS: Final = frozenset((*SCALE_SET_LABELS, *JOB_LABELS, RESULT_LABEL))

# Upstream's default runtime buckets, in seconds.
DEFAULT_BUCKETS: Final = (
    0.01, 0.05, 0.1, 0.5, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 12, 15, 18, 20, 25, 30, 40, 50, 60, 70, 80, 90,
    100, 110, 120, 150, 180, 210, 240, 300, 360, 420, 480, 540, 600, 900, 1200, 1800, 2400, 3000, 3600,
)  # fmt: skip


class MetricsSpecError(ValueError):
    """The ``metrics`` configuration is malformed; the message is one line."""


@dataclass(frozen=True)
class MetricSpec:
    labels: tuple[str, ...]
    buckets: tuple[float, ...] = DEFAULT_BUCKETS  # histograms only


@dataclass(frozen=True)
class MetricsSpec:
    gauges: Mapping[str, MetricSpec] = field(default_factory=dict)
    counters: Mapping[str, MetricSpec] = field(default_factory=dict)
    histograms: Mapping[str, MetricSpec] = field(default_factory=dict)

    @classmethod
    def from_json(cls, data: object) -> MetricsSpec:
        """Read ``AL.spec.metrics``; raise ``MetricsSpecError`` naming the bad entry."""
        if not isinstance(data, dict):
            raise MetricsSpecError("metrics must be an object with gauges, counters and histograms")
        unknown = sorted(set(data) - {"gauges", "counters", "histograms"})
        if unknown:
            raise MetricsSpecError(f"metrics has unknown keys: {', '.join(unknown)}")
        return cls(
            gauges=_section(data, "gauges", GAUGES),
            counters=_section(data, "counters", COUNTERS),
            histograms=_section(data, "histograms", HISTOGRAMS),
        )


def _section(data: Mapping[str, object], kind: str, known: tuple[str, ...]) -> dict[str, MetricSpec]:
    raw = data.get(kind)
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise MetricsSpecError(f"metrics.{kind} must be an object of metric name to {{labels}}")
    out: dict[str, MetricSpec] = {}
    for name, entry in raw.items():
        where = f"metrics.{kind}.{name}"
        if name not in known:
            log.warning("%s: not a listener %s; ignored", where, kind.rstrip("s"))
            continue
        if not isinstance(entry, dict):
            raise MetricsSpecError(f"{where} must be an object with labels")
        out[name] = MetricSpec(
            labels=_labels(entry.get("labels"), where),
            buckets=_buckets(entry.get("buckets"), where) if kind == "histograms" else DEFAULT_BUCKETS,
        )
    return out


def _labels(raw: object, where: str) -> tuple[str, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list) or not all(isinstance(label, str) for label in raw):
        raise MetricsSpecError(f"{where}.labels must be a list of label names")
    unknown = sorted(set(raw) - LABEL_KEYS)
    if unknown:
        raise MetricsSpecError(
            f"{where}.labels has unknown label {', '.join(unknown)}; known: {', '.join(sorted(LABEL_KEYS))}"
        )
    return tuple(dict.fromkeys(raw))


def _buckets(raw: object, where: str) -> tuple[float, ...]:
    if raw is None or raw == []:
        return DEFAULT_BUCKETS
    if not isinstance(raw, list) or not all(
        isinstance(b, int | float) and not isinstance(b, bool) for b in raw
    ):
        raise MetricsSpecError(f"{where}.buckets must be a list of numbers")
    buckets = tuple(float(b) for b in raw)
    if any(later <= earlier for earlier, later in itertools.pairwise(buckets)):
        raise MetricsSpecError(f"{where}.buckets must be strictly increasing")
    return buckets


DEFAULT_SPEC: Final = MetricsSpec(
    gauges={name: MetricSpec(SCALE_SET_LABELS) for name in GAUGES},
    counters={
        STARTED_JOBS: MetricSpec(JOB_LABELS),
        COMPLETED_JOBS: MetricSpec((*JOB_LABELS, RESULT_LABEL)),
    },
    histograms={
        STARTUP_DURATION: MetricSpec(JOB_LABELS),
        EXECUTION_DURATION: MetricSpec((*JOB_LABELS, RESULT_LABEL)),
    },
)

HELP: Final = {
    ASSIGNED_JOBS: "Number of jobs assigned to this scale set.",
    RUNNING_JOBS: "Number of jobs running (or about to run).",
    REGISTERED_RUNNERS: "Number of runners registered by the scale set.",
    BUSY_RUNNERS: "Number of registered runners running a job.",
    IDLE_RUNNERS: "Number of registered runners not running a job.",
    MIN_RUNNERS: "Minimum number of runners.",
    MAX_RUNNERS: "Maximum number of runners.",
    DESIRED_RUNNERS: "Number of runners desired by the scale set.",
    STARTED_JOBS: "Total number of jobs started.",
    COMPLETED_JOBS: "Total number of jobs completed.",
    STARTUP_DURATION: "Time from the scale set's assignment of a job to a runner taking it, in seconds.",
    EXECUTION_DURATION: "Time from a runner taking a job to its completion, in seconds.",
}


def workflow_name_and_target(ref: str) -> tuple[str, str]:
    """``owner/repo/.github/workflows/ci.yaml@refs/heads/main`` → ``("ci", "heads/main")``."""
    path, _, git_ref = ref.partition("@")
    file = path.rsplit("/", 1)[-1]
    name = file.rsplit(".", 1)[0] if "." in file else file
    target = git_ref.removeprefix("refs/")
    if target.startswith("pull/"):
        target = "/".join(target.split("/")[:2])
    return name, target


class ListenerMetrics:
    """The listener's metrics for one scale set, on their own ``registry``."""

    def __init__(self, *, scale_set_labels: Mapping[str, str], spec: MetricsSpec = DEFAULT_SPEC) -> None:
        self.registry = CollectorRegistry()
        self._scale_set_labels = {key: scale_set_labels.get(key, "") for key in SCALE_SET_LABELS}
        self._gauges = {
            name: Gauge(name, HELP[name], m.labels, registry=self.registry) for name, m in spec.gauges.items()
        }
        self._counters = {
            name: Counter(name, HELP[name], m.labels, registry=self.registry)
            for name, m in spec.counters.items()
        }
        self._histograms = {
            name: Histogram(name, HELP[name], m.labels, buckets=m.buckets, registry=self.registry)
            for name, m in spec.histograms.items()
        }

    def publish_bounds(self, *, min_runners: int, max_runners: int) -> None:
        self._set(MIN_RUNNERS, min_runners)
        self._set(MAX_RUNNERS, max_runners)

    def publish_statistics(self, stats: Statistics) -> None:
        self._set(ASSIGNED_JOBS, stats.total_assigned_jobs)
        self._set(RUNNING_JOBS, stats.total_running_jobs)
        self._set(REGISTERED_RUNNERS, stats.total_registered_runners)
        self._set(BUSY_RUNNERS, stats.total_busy_runners)
        self._set(IDLE_RUNNERS, stats.total_idle_runners)

    def publish_desired(self, runners: int) -> None:
        self._set(DESIRED_RUNNERS, runners)

    def job_started(self, job: JobStarted) -> None:
        labels = self._job_labels(job)
        counter = self._counters.get(STARTED_JOBS)
        if counter is not None:
            _child(counter, labels).inc()
        startup = _seconds(job.scale_set_assign_time, job.runner_assign_time)
        histogram = self._histograms.get(STARTUP_DURATION)
        if histogram is not None and startup is not None:
            _child(histogram, labels).observe(startup)

    def job_completed(self, job: JobCompleted) -> None:
        labels = {**self._job_labels(job), RESULT_LABEL: job.result}
        counter = self._counters.get(COMPLETED_JOBS)
        if counter is not None:
            _child(counter, labels).inc()
        execution = _seconds(job.runner_assign_time, job.finish_time)
        histogram = self._histograms.get(EXECUTION_DURATION)
        if histogram is not None and execution is not None:
            _child(histogram, labels).observe(execution)

    def sample(self, name: str, labels: Mapping[str, str] | None = None) -> float | None:
        """One sample's value (for tests and diagnostics); None if it does not exist."""
        return self.registry.get_sample_value(name, dict(labels or {}))

    def _set(self, name: str, value: int) -> None:
        gauge = self._gauges.get(name)
        if gauge is not None:
            _child(gauge, self._scale_set_labels).set(value)

    def _job_labels(self, job: JobMessage) -> dict[str, str]:
        workflow_name, workflow_target = workflow_name_and_target(job.job_workflow_ref)
        return {
            **self._scale_set_labels,
            "organization": job.owner_name,
            "repository": job.repository_name,
            "job_name": job.job_display_name,
            "event_name": job.event_name,
            "job_workflow_ref": job.job_workflow_ref,
            "job_workflow_name": workflow_name,
            "job_workflow_target": workflow_target,
        }


def _child(metric: M, values: Mapping[str, str]) -> M:
    names: tuple[str, ...] = metric._labelnames
    return metric.labels(**{key: values.get(key, "") for key in names}) if names else metric


def _seconds(start: datetime | None, end: datetime | None) -> float | None:
    if start is None or end is None:
        return None
    seconds = (end - start).total_seconds()
    return seconds if seconds >= 0 else None


def split_address(addr: str) -> tuple[str | None, int]:
    """A Go-style listen address: ``:8080`` (every interface), ``127.0.0.1:0``, ``[::1]:9090``."""
    host, sep, port = addr.rpartition(":")
    if not sep or not port.isdigit() or int(port) > 65535:
        raise ValueError(f"metrics_addr {addr!r} must be HOST:PORT or :PORT")
    host = host.strip("[]")
    return (host or None), int(port)


class MetricsServer:
    """Serves ``metrics.registry`` at ``endpoint`` on ``addr`` (aiohttp, in the listener's event loop)."""

    def __init__(self, metrics: ListenerMetrics, *, addr: str, endpoint: str = "/metrics") -> None:
        self.host, self.port = split_address(addr)
        self.endpoint = "/" + (endpoint or "/metrics").lstrip("/")
        app = web.Application()
        app.router.add_get(self.endpoint, make_aiohttp_handler(metrics.registry))
        self._runner = web.AppRunner(app, handle_signals=False, access_log=None)

    async def start(self) -> MetricsServer:
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.host, self.port)
        await site.start()
        sockets = getattr(site._server, "sockets", None) or []
        if sockets:
            self.port = int(sockets[0].getsockname()[1])
        log.info("serving metrics on %s:%d%s", self.host or "*", self.port, self.endpoint)
        return self

    async def stop(self) -> None:
        await self._runner.cleanup()
