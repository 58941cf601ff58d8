"""controller-runtime's families as arcsm's loop feeds them (``controller.loop.runtimemetrics``): the series a
term declares, the work queue's adds, retries, depth and durations as client-go counts them, and the
result each outcome of a reconcile is counted under.

The queue tests drive the real ``WorkQueue`` with a ``Term`` as its observer and a clock the test moves;
the reconciler test runs the real worker pool of ``Reconciler`` over a real journal and fold, with only
the reconcile of a key replaced by one that answers the outcome the test names for it.
"""

from __future__ import annotations

import asyncio

import pytest

from controller.loop.queueing import WorkQueue
from controller.loop.reconciling import NotLeading, Outcome
from controller.loop.runtimemetrics import Result, RuntimeMetrics, Term
from controller.loop.settings import QueueSettings
from statemachines.effects import ObjectRef
from store.journal import Journal
from tests.helpers import eventually
from tests.unit.controller.objects import reconciler_on, reconciling

FAST = dict(backoff_initial=0.01, backoff_max=0.08, rate=10_000, burst=10_000)
CONTROLLERS = ("autoscalingrunnerset", "ephemeralrunnerset", "ephemeralrunner", "autoscalinglistener")
PER_CONTROLLER_COUNTERS = (
    "controller_runtime_reconcile_errors_total",
    "controller_runtime_terminal_reconcile_errors_total",
    "controller_runtime_reconcile_panics_total",
    "controller_runtime_reconcile_timeouts_total",
)
RUNNER = "ephemeralrunner"
QUEUE = {"name": RUNNER, "controller": RUNNER}


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def sample(metrics: RuntimeMetrics, metric: str, /, **labels: str) -> float | None:
    return metrics.registry.get_sample_value(metric, labels)


def runner(name: str) -> ObjectRef:
    return ObjectRef("EphemeralRunner", "runners", name)


def queue_of(term: Term) -> WorkQueue[ObjectRef]:
    return WorkQueue(QueueSettings(**FAST), group=lambda key: key.kind, observer=term)


async def take(queue: WorkQueue[ObjectRef]) -> ObjectRef | None:
    async with asyncio.timeout(1.0):
        return await queue.get()


def test_a_term_declares_every_controllers_series_at_zero_and_its_bounds() -> None:
    metrics = RuntimeMetrics()
    metrics.start_term(workers=8, per_kind={"EphemeralRunner": 2})
    for controller in CONTROLLERS:
        for result in Result:
            assert (
                sample(metrics, "controller_runtime_reconcile_total", controller=controller, result=result)
                == 0
            )
        for family in PER_CONTROLLER_COUNTERS:
            assert sample(metrics, family, controller=controller) == 0, family
        queue = {"name": controller, "controller": controller}
        assert sample(metrics, "workqueue_adds_total", **queue) == 0
        assert sample(metrics, "workqueue_retries_total", **queue) == 0
        assert sample(metrics, "workqueue_depth", **queue, priority="0") == 0
        assert sample(metrics, "controller_runtime_active_workers", controller=controller) == 0
        bound = 2 if controller == RUNNER else 8
        assert sample(metrics, "controller_runtime_max_concurrent_reconciles", controller=controller) == bound
    assert sample(metrics, "leader_election_master_status", name="arcsm-controller") is None


async def test_the_queue_counts_an_add_once_per_key_waiting_as_client_go_does() -> None:
    clock = Clock()
    metrics = RuntimeMetrics(clock=clock)
    queue = queue_of(metrics.start_term(workers=4, per_kind={}))
    key = runner("r1")
    queue.add(key)
    queue.add(key)  # already queued: no add
    assert sample(metrics, "workqueue_adds_total", **QUEUE) == 1
    assert sample(metrics, "workqueue_depth", **QUEUE, priority="0") == 1
    clock.now += 2
    assert await take(queue) == key
    assert sample(metrics, "workqueue_depth", **QUEUE, priority="0") == 0
    assert sample(metrics, "workqueue_queue_duration_seconds_sum", **QUEUE) == 2
    assert sample(metrics, "workqueue_queue_duration_seconds_bucket", **QUEUE, le="1.0") == 0
    assert sample(metrics, "workqueue_queue_duration_seconds_bucket", **QUEUE, le="10.0") == 1

    queue.add(key)  # while it is reconciled: marked dirty, one add
    queue.add(key)
    assert sample(metrics, "workqueue_adds_total", **QUEUE) == 2
    assert sample(metrics, "workqueue_depth", **QUEUE, priority="0") == 1
    clock.now += 3
    queue.done(key)  # handed back to the queue: no second add for it
    assert sample(metrics, "workqueue_adds_total", **QUEUE) == 2
    assert sample(metrics, "workqueue_work_duration_seconds_count", **QUEUE) == 1
    assert sample(metrics, "workqueue_work_duration_seconds_sum", **QUEUE) == 3
    assert await take(queue) == key
    assert sample(metrics, "workqueue_queue_duration_seconds_count", **QUEUE) == 2
    assert sample(metrics, "workqueue_depth", **QUEUE, priority="0") == 0


async def test_every_delayed_add_is_a_retry_and_its_end_an_add() -> None:
    metrics = RuntimeMetrics()
    queue = queue_of(metrics.start_term(workers=4, per_kind={}))
    queue.add_after(runner("later"), 0.01)
    assert sample(metrics, "workqueue_retries_total", **QUEUE) == 1
    assert sample(metrics, "workqueue_adds_total", **QUEUE) == 0  # not queued yet
    assert await take(queue) == runner("later")
    assert sample(metrics, "workqueue_adds_total", **QUEUE) == 1
    queue.add_after(runner("now"), 0)  # no delay: a plain add
    queue.add_rate_limited(runner("failed"))  # its backoff
    assert sample(metrics, "workqueue_retries_total", **QUEUE) == 2
    assert sample(metrics, "workqueue_adds_total", **QUEUE) == 2


async def test_unfinished_work_and_the_longest_processor_read_the_keys_in_flight_of_the_term() -> None:
    clock = Clock()
    metrics = RuntimeMetrics(clock=clock)
    term = metrics.start_term(workers=4, per_kind={})
    queue = queue_of(term)
    for name in ("a", "b", "c"):
        queue.add(runner(name))
    assert await take(queue) == runner("a")
    clock.now += 5
    assert await take(queue) == runner("b")
    clock.now += 10
    assert sample(metrics, "controller_runtime_active_workers", controller=RUNNER) == 2
    assert sample(metrics, "workqueue_unfinished_work_seconds", **QUEUE) == 15 + 10
    assert sample(metrics, "workqueue_longest_running_processor_seconds", **QUEUE) == 15
    queue.done(runner("a"))
    assert sample(metrics, "workqueue_longest_running_processor_seconds", **QUEUE) == 10
    term.end()  # "b" abandoned, "c" left queued: a standby reports neither
    assert sample(metrics, "controller_runtime_active_workers", controller=RUNNER) == 0
    assert sample(metrics, "workqueue_depth", **QUEUE, priority="0") == 0
    assert sample(metrics, "workqueue_unfinished_work_seconds", **QUEUE) == 0
    assert sample(metrics, "controller_runtime_max_concurrent_reconciles", controller=RUNNER) == 4
    assert sample(metrics, "workqueue_adds_total", **QUEUE) == 3  # totals stay


class Leading:
    leading = True


def test_the_lease_gauge_follows_the_elector() -> None:
    metrics = RuntimeMetrics()
    elector = Leading()
    metrics.follow_lease("arcsm-controller", elector)
    assert sample(metrics, "leader_election_master_status", name="arcsm-controller") == 1
    elector.leading = False
    assert sample(metrics, "leader_election_master_status", name="arcsm-controller") == 0


async def test_each_outcome_of_a_reconcile_is_counted_under_its_result(
    journal: Journal, monkeypatch: pytest.MonkeyPatch
) -> None:
    metrics = RuntimeMetrics()
    reconciler = await reconciler_on(journal, QueueSettings(workers=2, **FAST), metrics)
    first: dict[str, Outcome | type[Exception]] = {
        "settled": Outcome.SETTLED,
        "timed": Outcome.TIMED,
        "facts": Outcome.FACTS,  # queued again at once: then settled
        "failed": Outcome.FAILED,  # retried after its backoff: then settled
        "raised": RuntimeError,  # a bug: a panic, retried: then settled
        "refused": NotLeading,  # the Lease lapsed: not retried
    }
    passes: dict[str, int] = {}

    async def answer(key: ObjectRef) -> Outcome:
        passes[key.name] = passes.get(key.name, 0) + 1
        outcome = first[key.name] if passes[key.name] == 1 else Outcome.SETTLED
        if isinstance(outcome, type):
            raise outcome(f"{key.name} raised")
        return outcome

    async with reconciling(reconciler, answer, monkeypatch):
        for name in first:
            reconciler.queue.add(runner(name))
        await eventually(
            lambda: sum(passes.values()) == 9 and not reconciler.queue.in_flight,
            what="every key reconciled, the three retried once",
        )

    def total(result: str) -> float | None:
        return sample(metrics, "controller_runtime_reconcile_total", controller=RUNNER, result=result)

    assert (total("success"), total("requeue_after"), total("requeue"), total("error")) == (4, 1, 1, 3)
    assert sample(metrics, "controller_runtime_reconcile_errors_total", controller=RUNNER) == 3
    assert sample(metrics, "controller_runtime_reconcile_panics_total", controller=RUNNER) == 1
    assert sample(metrics, "controller_runtime_terminal_reconcile_errors_total", controller=RUNNER) == 1
    assert sample(metrics, "controller_runtime_reconcile_time_seconds_count", controller=RUNNER) == 9
    assert sample(metrics, "workqueue_retries_total", **QUEUE) == 2  # the two backoffs
    assert sample(metrics, "controller_runtime_active_workers", controller=RUNNER) == 0
