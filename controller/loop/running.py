"""The composition root: ``run(settings)`` wires the journal, the watchers, the executor and the loop.

    journal (SQLite) ◄── watchers (list+watch)          the fold tails the journal
        │                                                     │
        └──► Reconciler: queue → snapshot → decide → record → executor → record results

Start: read which kinds' served CRDs prune ``status.conditions`` into the machine settings
(``servedschemas``), open the journal (its projection is rebuilt), without leader election take the
Lease as this journal's own (``settings.checked_lease``, ``Elector.claim``: the run is refused beside
another holder, before anything is journaled, and holds the Lease until it stops, so a replica that
elects stands by beside it), journal the machine settings if they changed (``settingsrecords``),
connect to the cluster (``settings.cluster``: kubeconfig files, or the pod's service account, as
``kubeconfigs.find`` chose), serve the HTTP API if asked (``httpapi``, imported only then), start the
watchers, and decide in terms (``terms``): without leader election one term, from now to the stop; with
it (``settings.leader_election``, ``leading``) only while this replica holds the Lease, the watchers
journaling all along. Each term resumes a fold at the journal's last record, performs the outbox, and
decides once the watchers have listed everything; every write checks the Lease first (``LeaderOnly``).
Stop (SIGTERM, SIGINT, or ``stop`` set by the caller): take no
new keys, finish the reconciles in flight (abandon them after ``drain_timeout``), release the Lease, stop
the watchers and the API, close the Actions clients, and close the journal, which writes what was
appended; then return 0.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import signal
from collections.abc import AsyncIterator, Callable, Mapping
from typing import Any

from kubernetes_asyncio import client

from actions import kubepatching
from controller.executor.actionsclients import ActionsClients
from controller.executor.executing import Executor as KubeExecutor
from controller.loop import folding, leading, outages, requestcounting, servedschemas, settingsrecords, terms
from controller.loop.leading import Elector, LeaderOnly
from controller.loop.reconciling import Executor, Reconciler
from controller.loop.roles import Role
from controller.loop.runtimemetrics import RuntimeMetrics
from controller.loop.settings import ControllerSettings
from controller.loop.timing import Timers
from kube.clients import api_client
from statemachines.effects import ObjectRef
from store import records, verifying
from store.clocks import SystemClock
from store.journal import Journal
from store.locking import FileLock
from watchers import slimming
from watchers.supervising import Watchers

log = logging.getLogger("arcsm.controller")


async def run(
    settings: ControllerSettings,
    *,
    stop: asyncio.Event | None = None,
    on_http: Callable[[str], None] | None = None,
) -> int:
    """Run the controller until SIGTERM or SIGINT (or until ``stop`` is set, when given); return 0.

    With ``settings.http`` the HTTP API is served in this process (``httpapi``) from before the watchers
    start until the loop has stopped; ``on_http`` is called with its URL once it answers.

    Raises ``store.errors.JournalError`` when the journal cannot be opened, ``actions.errors.
    InvalidConfiguration`` when the cluster cannot be reached with the configuration given,
    ``leading.LeaseHeld`` (a ``RuntimeError``) when ``settings.checked_lease`` is held by another replica
    at start, or taken by one while this replica could not renew it, and ``RuntimeError`` when a task of
    the loop failed.
    """
    configuration = await _configuration(settings)
    async with _stop_signal(stop) as stopping:
        # The journal first: one it refuses is said at once, before the cluster is asked anything; and
        # nothing is appended to one `arcsm journal verify` calls damaged. Locked before it is checked:
        # through another link, a journal another process writes is only half on disk (its log is named
        # after the other link), and that process is what to name.
        lock = FileLock.acquire(settings.journal_path, database=True)
        try:
            verified = await verifying.before_opening(settings.journal_path)
        except BaseException:
            lock.release()
            raise
        journal = await Journal.open(settings.journal_path, settings=settings.journal, lock=lock)
        if verified is not None:
            log.info(
                "journal %s verified: %s", settings.journal_path, verified.summary().removeprefix("journal ")
            )
        lost: str | None = None  # why the run stopped when another replica took its Lease
        try:
            # A request to the cluster: only once SIGTERM is handled (it stops the run, never kills it).
            settings = await _with_served_schemas(settings, configuration)
            async with api_client(configuration) as api:
                claimed = await _claim(settings, api)  # before anything is journaled, watched or written
                if claimed is not None:
                    settings = dataclasses.replace(settings, checked_lease=claimed.settings)
                # Before anything is decided, so every decision of this run reads the settings it ran with.
                await settingsrecords.journal_if_changed(journal, journal, settings.machines)
                lost = await _serve_holding(claimed, settings, journal, api, stopping, on_http)
        finally:
            await journal.close()
    if lost is not None:
        raise leading.LeaseHeld(lost)
    log.info("stopped")
    return 0


async def _claim(settings: ControllerSettings, api: client.ApiClient) -> Elector | None:
    """Without leader election, the Lease held by this journal's identity (``Elector.claim``; raises
    ``leading.LeaseHeld`` beside another holder); None with leader election, or when it was not stored."""
    if settings.checked_lease is None:
        return None
    identity = leading.claim_identity(settings.journal_path)
    claimed = Elector(api, dataclasses.replace(settings.checked_lease, identity=identity))
    return claimed if await claimed.claim(api) else None


async def _serve_holding(
    claimed: Elector | None,
    settings: ControllerSettings,
    journal: Journal,
    api: client.ApiClient,
    stopping: asyncio.Event,
    on_http: Callable[[str], None] | None,
) -> str | None:
    """``_serve`` while ``claimed`` is renewed beside it; why the run stopped when another replica took
    the Lease (None otherwise). The Lease is released at the end."""
    if claimed is None:
        await _serve(settings, journal, api, stopping, on_http)
        return None
    keeping = asyncio.create_task(claimed.keep(stopping), name="lease-claim")

    def stop_when_taken(task: asyncio.Task[str | None]) -> None:
        if not task.cancelled() and task.exception() is None and task.result() is not None:
            stopping.set()

    keeping.add_done_callback(stop_when_taken)
    try:
        await _serve(settings, journal, api, stopping, on_http)
    finally:
        stopping.set()
        lost = await keeping
        if lost is None:
            await claimed.release()
        else:
            log.error("%s", lost)
    return lost


async def _with_served_schemas(
    settings: ControllerSettings, configuration: client.Configuration
) -> ControllerSettings:
    """``settings`` with the kinds whose served CRD prunes ``status.conditions`` (``servedschemas``)."""
    async with api_client(configuration) as api:
        pruned = await servedschemas.conditions_pruned(api)
    machines = dataclasses.replace(settings.machines, conditions_pruned=pruned)
    return dataclasses.replace(settings, machines=machines)


async def _serve(
    settings: ControllerSettings,
    journal: Journal,
    api: client.ApiClient,
    stopping: asyncio.Event,
    on_http: Callable[[str], None] | None = None,
) -> None:
    log.info("journal %s open at seq %d", settings.journal_path, journal.last_seq)
    log.info("reaching the cluster with %s", settings.cluster)
    queue = settings.queue
    log.info(
        "reconciling with %d workers (per kind: %s); a failed key backs off from %g s to %g s, and each "
        "kind's retries beyond a burst of %d go at %g per second",
        queue.workers,
        ", ".join(f"{kind} {bound}" for kind, bound in sorted(queue.per_kind.items())) or "no bound",
        queue.backoff_initial,
        queue.backoff_max,
        queue.burst,
        queue.rate,
    )
    clients = ActionsClients(settings=settings.actions, vault=settings.vault)
    metrics = RuntimeMetrics()  # controller-runtime's families, over every term
    requestcounting.count_requests(api, metrics)
    try:
        elector = None
        kube_executor = KubeExecutor(
            api=api, clients=clients, settings=settings.executor, observer=journaling(journal)
        )
        outage_events = _outage_events(settings, journal, kube_executor)
        executor: Executor = kube_executor
        if settings.leader_election is not None:
            elector = Elector(api, settings.leader_election)
            executor = LeaderOnly(executor, elector)
            metrics.follow_lease(settings.leader_election.lease_name, elector)

        async def new_reconciler() -> Reconciler:
            fold = await folding.resume(journal, use_predicates=settings.reconcile.predicates)
            return Reconciler(
                journal=journal,
                executor=executor,
                fold=fold,
                timers=Timers(journal=journal, clock=SystemClock()),
                machines=settings.machines,
                queue=settings.queue,
                reconcile=settings.reconcile,
                watched=_watched(settings),
                metrics=metrics,
            )

        role = Role()
        watchers = Watchers(api=api, journal=journal, known=journal.projection, settings=settings.watch)
        served = _served(
            settings,
            journal=journal,
            role=role,
            watchers=watchers,
            on_url=on_http,
            metrics=metrics,
            elector=elector,
        )
        async with served:
            watchers.start()
            try:
                await terms.run_terms(
                    new_reconciler=new_reconciler,
                    synced=watchers.wait_synced,
                    role=role,
                    elector=elector,
                    stopping=stopping,
                    drain_timeout=settings.reconcile.drain_timeout,
                )
            finally:
                await watchers.stop()
    finally:
        if outage_events is not None:
            await outage_events.aclose()
        await clients.aclose()


def _served(
    settings: ControllerSettings,
    *,
    journal: Journal,
    role: Role,
    watchers: Watchers,
    on_url: Callable[[str], None] | None,
    metrics: RuntimeMetrics,
    elector: Elector | None,
) -> contextlib.AbstractAsyncContextManager[str | None]:
    """The HTTP API while the block runs (``httpapi.serving``); nothing without ``settings.http``."""
    if settings.http is None:
        return contextlib.nullcontext(None)
    # FastAPI and uvicorn only for a controller asked to serve: one that is not never imports them.
    from controller.loop import httpapi

    # Without leader election the replica is named as it would be in the Lease it checked at start.
    lease = settings.checked_lease
    identity = lease.identity if lease is not None else settings.pod_name or leading.default_identity()
    return httpapi.serving(
        settings.http,
        journal=journal,
        role=role,
        watchers=watchers,
        on_url=on_url,
        metrics=metrics,
        elector=elector,
        identity=identity,
    )


def _outage_events(
    settings: ControllerSettings, journal: Journal, executor: KubeExecutor
) -> outages.OutageEvents | None:
    """Events on this replica's Pod (or Lease) when the journal's writes fail and when they succeed again."""
    election = settings.leader_election
    target = outages.subject(
        namespace=settings.machines.controller_namespace,
        pod_name=settings.pod_name,
        lease_name=election.lease_name if election is not None else None,
    )
    if target is None:
        return None
    events = outages.OutageEvents(executor, target)
    journal.on_outage(events)
    return events


def journaling(journal: Journal) -> Callable[[str, str, Mapping[str, Any]], Any]:
    """The executor's observer: an answer about a kind no watcher lists (a Secret) is journaled as an
    ``observed`` record, slimmed and redacted as a watch event would be."""

    async def observe(event: str, kind: str, obj: Mapping[str, Any]) -> None:
        await journal.append([records.observed(event, kind, slimming.slim(kind, obj))])

    return observe


def _watched(settings: ControllerSettings) -> Callable[[ObjectRef], bool]:
    kinds, namespaces = frozenset(settings.watch.kinds), frozenset(settings.watch.namespaces)
    return lambda ref: ref.kind in kinds and (not namespaces or ref.namespace in namespaces)


async def _configuration(settings: ControllerSettings) -> client.Configuration:
    return await kubepatching.configuration(settings.cluster.files)


@contextlib.asynccontextmanager
async def _stop_signal(stop: asyncio.Event | None) -> AsyncIterator[asyncio.Event]:
    """``stop`` as given, or an event SIGTERM and SIGINT set while the controller runs."""
    if stop is not None:
        yield stop
        return
    stopping = asyncio.Event()
    loop = asyncio.get_running_loop()
    signals = (signal.SIGTERM, signal.SIGINT)
    for signum in signals:
        loop.add_signal_handler(signum, stopping.set)
    try:
        yield stopping
    finally:
        for signum in signals:
            loop.remove_signal_handler(signum)
