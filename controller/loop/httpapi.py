"""The HTTP API inside the controller process: what the controller tells it, and serving it.

``ControllerProbe`` answers the API's ``Readiness`` (the journal takes appends, every watch has listed its
kind, and the role: ``leader`` while this replica decides, ``standby`` while it waits for the Lease; a
standby is ready too, it serves the history it journals) and its ``ControllerStats`` (reconciles and
decisions over every term of leadership, the work queue depth and the fold's seq while leading; a standby
reads nothing behind the journal, so its applied seq is the journal's last), whether it leads, and the
run's ``runtimemetrics.RuntimeMetrics`` (controller-runtime's families). ``serving`` starts the
API on ``settings.http`` (if set) before the watchers start and stops it once the loop has stopped,
before the journal closes.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator, Callable

from prometheus_client.registry import Collector

from api.app import create_app
from api.ports import ReadinessReport
from api.serving import ApiServer
from controller.loop.leading import Elector
from controller.loop.roles import LEADER, Role
from controller.loop.runtimemetrics import RuntimeMetrics
from controller.loop.settings import HttpSettings
from store.journal import Journal
from watchers.supervising import Watchers

log = logging.getLogger("arcsm.controller")


class ControllerProbe:
    def __init__(
        self,
        *,
        journal: Journal,
        role: Role,
        watchers: Watchers,
        metrics: RuntimeMetrics | None = None,
        elector: Elector | None = None,
        identity: str = "",
    ) -> None:
        self._journal = journal
        self._elector = elector
        self._identity = elector.identity if elector is not None else identity
        self._role = role
        self._watchers = watchers
        self._metrics = metrics or RuntimeMetrics()

    def report(self) -> ReadinessReport:
        failure = self._journal.append_refusal
        return ReadinessReport(
            journal_writable=failure is None,
            synced=self._watchers.synced(),
            role=self._role.name,
            journal_error=failure,
            writer_failure=self._journal.writer_failure,
            identity=self._identity,
            leader=self._elector.holder if self._elector is not None else self._identity,
        )

    @property
    def reconciles(self) -> int:
        return self._role.reconciles

    @property
    def decisions(self) -> int:
        return self._role.decisions

    @property
    def queue_depth(self) -> int:
        reconciler = self._role.reconciler
        return len(reconciler.queue) if reconciler is not None else 0

    @property
    def applied_seq(self) -> int:
        reconciler = self._role.reconciler
        return reconciler.fold.seq if reconciler is not None else self._journal.last_seq

    @property
    def leading(self) -> bool:
        return self._role.name == LEADER

    @property
    def runtime_metrics(self) -> Collector:
        return self._metrics.registry


@contextlib.asynccontextmanager
async def serving(
    settings: HttpSettings,
    *,
    journal: Journal,
    role: Role,
    watchers: Watchers,
    on_url: Callable[[str], None] | None = None,
    metrics: RuntimeMetrics | None = None,
    elector: Elector | None = None,
    identity: str = "",
) -> AsyncIterator[str | None]:
    """Serve the API while the block runs; yields its URL. ``elector`` (with leader election) or
    ``identity`` (without) names the replica in its history answers."""
    probe = ControllerProbe(
        journal=journal, role=role, watchers=watchers, metrics=metrics, elector=elector, identity=identity
    )
    app = create_app(
        journal,
        readiness=probe,
        stats=probe,
        max_streams=settings.limits.max_streams,
        debug_endpoints=settings.debug_endpoints,
    )
    server = await ApiServer.start(app, host=settings.host, port=settings.port, limits=settings.limits)
    debug = " with /debug/stacks and /debug/profile" if settings.debug_endpoints else ""
    log.info("serving the HTTP API on %s%s", server.url, debug)
    if on_url is not None:
        on_url(server.url)
    try:
        yield server.url
    finally:
        await server.stop()
