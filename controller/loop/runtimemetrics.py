"""controller-runtime's metric families under its names, types, labels, help texts and buckets (those of
v0.24, which upstream ARC builds with), fed by arcsm's loop, so dashboards and alerts written for ARC read
arcsm.

One ``RuntimeMetrics`` per run of the controller: the composition root makes it, keeps it across terms of
leadership, counts the Kubernetes client's requests into it (``requestcounting``) and hands it to the
HTTP API, which collects ``registry`` when ``/metrics`` is scraped. Each term's ``Reconciler`` feeds a
``Term`` of it. The label ``controller`` (and the work queue's ``name``) is the kind in lower case, as
upstream registers its four controllers: ``autoscalingrunnerset``, ``ephemeralrunnerset``,
``ephemeralrunner``, ``autoscalinglistener``.

How arcsm's loop maps onto controller-runtime's (``controller.loop.reconciling``,
``controller.loop.queueing``):

==================================================  =====================================================
controller-runtime                                  arcsm
==================================================  =====================================================
a reconcile                                         a worker's pass over a key: snapshot, decide, record,
                                                    perform the effects, wait for their watch events
``reconcile_total{result="success"}``               the pass settled: nothing to do, or writes that the
                                                    watch brings back
``result="requeue_after"``                          settled, and a ``RequeueAfter`` effect armed a timer:
                                                    the key comes back when its ``timer`` record is read
``result="requeue"``                                results carrying facts only the Actions service knows:
                                                    the key is queued again at once (so too when a timer
                                                    was armed as well: the re-add is what comes next)
``result="error"``, ``reconcile_errors_total``      an effect failed (its result is not ok) or the pass
                                                    raised: the key is retried with its backoff
``reconcile_panics_total``                          the pass raised: a bug in a snapshot or a machine is
                                                    arcsm's panic, recovered (and an error, as there)
``terminal_reconcile_errors_total``                 an error that is not retried: an effect refused
                                                    because this replica lost the Lease (``NotLeading``);
                                                    the effect stays in the outbox for the next term
``reconcile_timeouts_total``                        always 0: arcsm bounds each effect (a late one is a
                                                    failed result, so an error), never a whole pass; the
                                                    ``ReconciliationTimeout`` it counts is off by default
``reconcile_time_seconds``                          the pass's duration
``max_concurrent_reconciles``                       the kind's bound: ``QueueSettings.per_kind``, else
                                                    ``workers``
``active_workers``                                  keys of the kind being reconciled now
``workqueue_adds_total``                            a key becomes queued: new, its delay over, or added
                                                    while it is reconciled (marked dirty); adding a key
                                                    already queued is no add
``workqueue_retries_total``                         an add with a positive delay: the backoff after an
                                                    error, and a ``RequeueAfter`` timer armed
``workqueue_depth{priority="0"}``                   keys queued (held back by the kind's bound and marked
                                                    dirty included); arcsm has one priority
``workqueue_queue_duration_seconds``                from an add to a worker taking the key
``workqueue_work_duration_seconds``                 from a worker taking the key to ``done``
``workqueue_unfinished_work_seconds``,              over the keys being reconciled now
``workqueue_longest_running_processor_seconds``
``rest_client_requests_total{code,method,host}``    every request of the controller's Kubernetes client
                                                    (``requestcounting``)
``leader_election_master_status{name}``             with leader election, 1 while this replica may write
                                                    (``Elector.leading``), else 0; ``name`` the Lease's
==================================================  =====================================================

As in controller-runtime, whose controllers start (and set their series to 0) once elected, a replica's
reconcile and work queue series appear when it first leads; they keep their totals over later terms, and
while it stands by its depth, active workers and unfinished work read 0.
"""

from __future__ import annotations

import collections
import enum
import time
from collections.abc import Callable, Hashable, Iterator, Mapping
from typing import Final, Protocol

from prometheus_client import CollectorRegistry, Counter, Histogram, disable_created_metrics
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from statemachines import kinds

PRIORITY: Final = "0"  # the work queue's one priority, as a depth label

# Upstream's metrics (Go's client) carry no `*_created` series for its counters and histograms.
disable_created_metrics()  # type: ignore[no-untyped-call]  # prometheus_client leaves it unannotated


def exponential_buckets(start: float, factor: float, count: int) -> tuple[float, ...]:
    """client_golang's ``ExponentialBuckets``, multiplied the same way so the bounds are the same floats."""
    buckets = []
    for _ in range(count):
        buckets.append(start)
        start *= factor
    return tuple(buckets)


RECONCILE_BUCKETS: Final = (
    0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0,
    1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5, 6, 7, 8, 9, 10, 15, 20, 25, 30, 40, 50, 60,
)  # fmt: skip
QUEUE_BUCKETS: Final = exponential_buckets(10e-9, 10, 12)

HELP: Final = {
    "controller_runtime_reconcile_total": "Total number of reconciliations per controller",
    "controller_runtime_reconcile_errors_total": "Total number of reconciliation errors per controller",
    "controller_runtime_terminal_reconcile_errors_total": (
        "Total number of terminal reconciliation errors per controller"
    ),
    "controller_runtime_reconcile_panics_total": "Total number of reconciliation panics per controller",
    "controller_runtime_reconcile_timeouts_total": "Total number of reconciliation timeouts per controller",
    "controller_runtime_reconcile_time_seconds": "Length of time per reconciliation per controller",
    "controller_runtime_max_concurrent_reconciles": "Maximum number of concurrent reconciles per controller",
    "controller_runtime_active_workers": "Number of currently used workers per controller",
    "workqueue_depth": "Current depth of workqueue by workqueue and priority",
    "workqueue_adds_total": "Total number of adds handled by workqueue",
    "workqueue_queue_duration_seconds": (
        "How long in seconds an item stays in workqueue before being requested"
    ),
    "workqueue_work_duration_seconds": "How long in seconds processing an item from workqueue takes.",
    "workqueue_unfinished_work_seconds": (
        "How many seconds of work has been done that is in progress and hasn't been observed by "
        "work_duration. Large values indicate stuck threads. One can deduce the number of stuck threads "
        "by observing the rate at which this increases."
    ),
    "workqueue_longest_running_processor_seconds": (
        "How many seconds has the longest running processor for workqueue been running."
    ),
    "workqueue_retries_total": (
        "Total number of items added to the workqueue with a non-zero delay (rate-limited requeues, "
        "explicit RequeueAfter or AddAfter calls)"
    ),
    "rest_client_requests_total": "Number of HTTP requests, partitioned by status code, method, and host.",
    "leader_election_master_status": (
        "Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates "
        "master. 'name' is the string used to identify the lease. Please make sure to group by name."
    ),
}


class Result(enum.StrEnum):
    """A reconcile's ``result`` label."""

    SUCCESS = "success"
    ERROR = "error"
    REQUEUE = "requeue"
    REQUEUE_AFTER = "requeue_after"


def controller_name(kind: str) -> str:
    """The ``controller`` label of a kind: its name in lower case, as controller-runtime names it."""
    return kind.lower()


class Leading(Protocol):
    @property
    def leading(self) -> bool: ...


def _counter(name: str, labels: list[str], registry: CollectorRegistry) -> Counter:
    return Counter(name, HELP[name], labels, registry=registry)


def _histogram(
    name: str, labels: list[str], buckets: tuple[float, ...], registry: CollectorRegistry
) -> Histogram:
    return Histogram(name, HELP[name], labels, buckets=buckets, registry=registry)


class RuntimeMetrics:
    """The families of one run of the controller, on ``registry``."""

    def __init__(self, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self.clock = clock
        r = self.registry
        self.reconciles = _counter("controller_runtime_reconcile_total", ["controller", "result"], r)
        self.errors = _counter("controller_runtime_reconcile_errors_total", ["controller"], r)
        self.terminal = _counter("controller_runtime_terminal_reconcile_errors_total", ["controller"], r)
        self.panics = _counter("controller_runtime_reconcile_panics_total", ["controller"], r)
        self.timeouts = _counter("controller_runtime_reconcile_timeouts_total", ["controller"], r)
        self.reconcile_time = _histogram(
            "controller_runtime_reconcile_time_seconds", ["controller"], RECONCILE_BUCKETS, r
        )
        self.adds = _counter("workqueue_adds_total", ["name", "controller"], r)
        self.retries = _counter("workqueue_retries_total", ["name", "controller"], r)
        self.queue_duration = _histogram(
            "workqueue_queue_duration_seconds", ["name", "controller"], QUEUE_BUCKETS, r
        )
        self.work_duration = _histogram(
            "workqueue_work_duration_seconds", ["name", "controller"], QUEUE_BUCKETS, r
        )
        self.requests = _counter("rest_client_requests_total", ["code", "method", "host"], r)
        self.bounds: dict[str, int] = {}  # controller → max concurrent reconciles, once it first led
        self.term: Term | None = None  # the term deciding now
        self.leases: list[tuple[str, Leading]] = []
        r.register(_Gauges(self))

    def start_term(self, *, workers: int, per_kind: Mapping[str, int]) -> Term:
        """A term of leadership begins: every controller's series exist from now on (at 0 until fed)."""
        for arc in kinds.ALL:
            controller = controller_name(arc.kind)
            self.bounds[controller] = per_kind.get(arc.kind, workers)
            for result in Result:
                self.reconciles.labels(controller, result.value)
            for family in (self.errors, self.terminal, self.panics, self.timeouts):
                family.labels(controller)
            self.adds.labels(controller, controller)
            self.retries.labels(controller, controller)
        self.term = Term(self)
        return self.term

    def follow_lease(self, name: str, elector: Leading) -> None:
        """Report ``leader_election_master_status{name}`` from ``elector.leading`` at each scrape."""
        self.leases.append((name, elector))

    def count_request(self, code: str, method: str, host: str) -> None:
        self.requests.labels(code, method, host).inc()


class Term:
    """One term's work queue and reconciles (``queueing.Observer`` for the term's queue)."""

    def __init__(self, metrics: RuntimeMetrics) -> None:
        self._metrics = metrics
        self._now = metrics.clock
        self._added: dict[Hashable, float] = {}  # when each queued (or dirty) key was added
        self._started: dict[Hashable, tuple[str, float]] = {}  # keys in flight: group, since when
        self.depth: collections.Counter[str] = collections.Counter()

    def end(self) -> None:
        """The term is over: its queue and workers no longer count."""
        if self._metrics.term is self:
            self._metrics.term = None

    # -- queueing.Observer ---------------------------------------------------------------------------------

    def added(self, group: str, key: Hashable) -> None:
        name = controller_name(group)
        self._metrics.adds.labels(name, name).inc()
        self.depth[group] += 1
        self._added.setdefault(key, self._now())

    def taken(self, group: str, key: Hashable) -> None:
        now = self._now()
        self.depth[group] -= 1
        added = self._added.pop(key, None)
        if added is not None:
            name = controller_name(group)
            self._metrics.queue_duration.labels(name, name).observe(now - added)
        self._started[key] = (group, now)

    def done(self, group: str, key: Hashable) -> None:
        started = self._started.pop(key, None)
        if started is not None:
            name = controller_name(group)
            self._metrics.work_duration.labels(name, name).observe(self._now() - started[1])

    def delayed(self, group: str) -> None:
        name = controller_name(group)
        self._metrics.retries.labels(name, name).inc()

    # -- reconciles ----------------------------------------------------------------------------------------

    def reconciled(
        self, kind: str, result: Result, seconds: float, *, panicked: bool = False, terminal: bool = False
    ) -> None:
        controller = controller_name(kind)
        m = self._metrics
        m.reconciles.labels(controller, result.value).inc()
        if result is Result.ERROR:
            m.errors.labels(controller).inc()
        if panicked:
            m.panics.labels(controller).inc()
        if terminal:
            m.terminal.labels(controller).inc()
        m.reconcile_time.labels(controller).observe(seconds)

    def in_flight(self) -> dict[str, list[float]]:
        """Per controller, how long each key in flight has been reconciled."""
        now = self._now()
        ages: dict[str, list[float]] = collections.defaultdict(list)
        for group, since in self._started.values():
            ages[controller_name(group)].append(now - since)
        return ages


class _Gauges(Collector):
    """The gauges read when scraped: bounds, workers, depth, unfinished work, leadership."""

    def __init__(self, metrics: RuntimeMetrics) -> None:
        self._metrics = metrics

    def collect(self) -> Iterator[Metric]:
        m = self._metrics
        term = m.term
        ages = term.in_flight() if term is not None else {}
        depth = {controller_name(g): n for g, n in term.depth.items()} if term is not None else {}
        families = {
            name: GaugeMetricFamily(name, HELP[name], labels=labels)
            for name, labels in (
                ("controller_runtime_max_concurrent_reconciles", ["controller"]),
                ("controller_runtime_active_workers", ["controller"]),
                ("workqueue_depth", ["name", "controller", "priority"]),
                ("workqueue_unfinished_work_seconds", ["name", "controller"]),
                ("workqueue_longest_running_processor_seconds", ["name", "controller"]),
            )
        }
        for controller, bound in m.bounds.items():
            running = ages.get(controller, [])
            families["controller_runtime_max_concurrent_reconciles"].add_metric([controller], bound)
            families["controller_runtime_active_workers"].add_metric([controller], len(running))
            families["workqueue_depth"].add_metric(
                [controller, controller, PRIORITY], depth.get(controller, 0)
            )
            families["workqueue_unfinished_work_seconds"].add_metric([controller, controller], sum(running))
            families["workqueue_longest_running_processor_seconds"].add_metric(
                [controller, controller], max(running, default=0.0)
            )
        yield from families.values()
        if m.leases:
            leader = GaugeMetricFamily(
                "leader_election_master_status", HELP["leader_election_master_status"], labels=["name"]
            )
            for name, elector in m.leases:
                leader.add_metric([name], 1 if elector.leading else 0)
            yield leader
