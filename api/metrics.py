"""``/metrics``: Prometheus metrics derived from the journal, plus the counters only the controller has.

Counted from the journal as records commit (a task follows its tail from the moment the app starts,
so counters count this process's work, as Prometheus counters do):

* ``arcsm_phase_transitions_total{kind, from, to}`` — transitions in decision records;
* ``arcsm_journal_records_total{type}`` — records appended;
* ``arcsm_actions_calls_total{endpoint, outcome}`` — Actions service calls, from the effect results of
  ``ActionsCall`` (its op), ``CreateJitConfigSecret`` (GenerateJitRunnerConfig) and ``ReleaseRunner``
  (RemoveRunner); the outcome is ``ok`` or the error class.

Read when scraped: ``arcsm_journal_last_seq``, ``arcsm_journal_lag_records`` (records the controller
has not read yet; without a controller, the metrics tail's own lag), ``arcsm_runners{namespace,
scale_set, phase}`` from the projection, and from the controller ``arcsm_reconciles_total``,
``arcsm_decisions_total`` and ``arcsm_work_queue_depth``.

For dashboards and alerts written for upstream ARC, under upstream's names: its controller gauges
``gha_controller_*`` from the projection (``arcgauges``; served unless the controller beside the API
stands by), the families controller-runtime serves (reconciles, work queues, REST client requests, leader
election) as the controller feeds them (``ControllerStats.runtime_metrics``, see
``controller.loop.runtimemetrics``), and the ``process_*`` families of the process.

Every app has its own registry, so two apps in one process (tests) do not share series.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterator, Mapping
from typing import Any

from prometheus_client import CollectorRegistry, Counter, ProcessCollector, disable_created_metrics
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from api import arcgauges, phases, scalesets
from api.ports import ControllerStats, JournalView
from statemachines.effectresults import EffectResult
from store.records import Record, RecordType

log = logging.getLogger("arcsm.api")

# Upstream's metrics (Go's client) carry no `*_created` series for its counters and histograms.
disable_created_metrics()  # type: ignore[no-untyped-call]  # prometheus_client leaves it unannotated

_ENDPOINT_OF_PREFIX = {"jit": "GenerateJitRunnerConfig", "release": "RemoveRunner"}


def actions_endpoint(key: str) -> str | None:
    """The Actions service endpoint an effect key names, or None for an effect that calls none.

    ``actions:<subject>[@epoch]:<Op>(<args>)`` → ``Op``; ``jit:…`` and ``release:…`` → their call.
    """
    prefix, _, rest = key.partition(":")
    if prefix == "actions":
        return rest.partition("(")[0].rpartition(":")[2] or None
    return _ENDPOINT_OF_PREFIX.get(prefix)


def outcome(body: Mapping[str, Any]) -> str:
    """The ``outcome`` label of an ``effect_result`` body: ``ok``, or the failure's class."""
    result = EffectResult.from_body(body)
    return result.error if result.failed else "ok"


class Metrics:
    def __init__(self, journal: JournalView, stats: ControllerStats | None) -> None:
        self.journal = journal
        self.stats = stats
        self.registry = CollectorRegistry(auto_describe=True)
        self.seq = journal.last_seq  # the last record counted
        self.transitions = Counter(
            "arcsm_phase_transitions",
            "Phase transitions the machines recorded.",
            ["kind", "from", "to"],
            registry=self.registry,
        )
        self.records = Counter(
            "arcsm_journal_records", "Records appended to the journal.", ["type"], registry=self.registry
        )
        self.actions_calls = Counter(
            "arcsm_actions_calls",
            "Actions service calls the controller made, by endpoint and outcome.",
            ["endpoint", "outcome"],
            registry=self.registry,
        )
        self.registry.register(_Scraped(self))
        ProcessCollector(registry=self.registry)
        if stats is not None:
            self.registry.register(_Delegated(stats))

    def count(self, record: Record) -> None:
        self.records.labels(str(record.type)).inc()
        if record.type is RecordType.DECISION:
            for item in phases.items_of(record):
                self.transitions.labels(item.kind, item.from_ or "", item.to).inc()
        elif record.type is RecordType.EFFECT_RESULT:
            endpoint = actions_endpoint(str(record.body.get("key") or ""))
            if endpoint is not None:
                self.actions_calls.labels(endpoint, outcome(record.body)).inc()
        self.seq = record.seq or self.seq

    async def follow(self) -> None:
        """Count every record from ``seq`` on, until the journal closes or the task is cancelled."""
        try:
            async for record in self.journal.tail(after=self.seq):
                self.count(record)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # never take the API down with the metrics
            log.error("metrics stopped following the journal: %s", exc)


class _Scraped(Collector):
    def __init__(self, metrics: Metrics) -> None:
        self._metrics = metrics

    def collect(self) -> Iterator[Metric]:
        journal, stats = self._metrics.journal, self._metrics.stats
        last = journal.last_seq
        yield GaugeMetricFamily("arcsm_journal_last_seq", "The seq of the last durable record.", value=last)
        read = stats.applied_seq if stats is not None else self._metrics.seq
        yield GaugeMetricFamily(
            "arcsm_journal_lag_records",
            "Records appended that the controller has not read yet.",
            value=max(last - read, 0),
        )
        runners = GaugeMetricFamily(
            "arcsm_runners",
            "EphemeralRunners by phase per scale set.",
            labels=["namespace", "scale_set", "phase"],
        )
        objects = journal.projection
        for ars in objects.items(phases.Kind.AUTOSCALING_RUNNER_SET):
            meta = ars.get("metadata") or {}
            namespace, name = str(meta.get("namespace") or ""), str(meta.get("name") or "")
            for phase, count in scalesets.runners_by_phase(objects, ars).items():
                runners.add_metric([namespace, name, phase], count)
        yield runners
        if stats is None or stats.leading:
            yield from arcgauges.collect(objects)
        if stats is None:
            return
        yield CounterMetricFamily("arcsm_reconciles", "Reconciles run.", value=stats.reconciles)
        yield CounterMetricFamily(
            "arcsm_decisions", "Reconciles that recorded a decision.", value=stats.decisions
        )
        yield GaugeMetricFamily(
            "arcsm_work_queue_depth",
            "Keys queued to be reconciled, those held back by their kind's concurrency bound included.",
            value=stats.queue_depth,
        )


class _Delegated(Collector):
    """The controller's own families, collected from it at each scrape."""

    def __init__(self, stats: ControllerStats) -> None:
        self._stats = stats

    def collect(self) -> Iterator[Metric]:
        yield from self._stats.runtime_metrics.collect()
