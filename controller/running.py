"""The composition root: ``run(settings)`` wires the journal, the watchers, the executor and the loop.

    journal (SQLite) ◄── watchers (list+watch)          the fold tails the journal
        │                                                     │
        └──► Reconciler: queue → snapshot → decide → record → executor → record results

Start: open the journal (its projection is rebuilt), resume the fold at its last record, connect to the
cluster (a kubeconfig, else the pod's service account), start the watchers, perform the outbox, and
decide once the watchers have listed everything. Stop (SIGTERM, SIGINT, or ``stop`` set by the caller):
take no new keys, finish the reconciles in flight, stop the watchers, close the Actions clients, and close
the journal, which writes what was appended; then return 0.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
from collections.abc import AsyncIterator, Callable

from kubernetes_asyncio import client

from actions import kubepatching
from controller import folding
from controller.actionsclients import ActionsClients
from controller.executing import Executor
from controller.reconciling import Reconciler
from controller.settings import ControllerSettings
from controller.timing import Timers
from statemachines.effects import ObjectRef
from store.clocks import SystemClock
from store.journal import Journal
from watchers import Watchers

log = logging.getLogger("arcsm.controller")


async def run(settings: ControllerSettings, *, stop: asyncio.Event | None = None) -> int:
    """Run the controller until SIGTERM or SIGINT (or until ``stop`` is set, when given); return 0.

    Raises ``store.errors.JournalError`` when the journal cannot be opened, ``actions.errors.
    InvalidConfiguration`` when the cluster cannot be reached with the configuration given, and
    ``RuntimeError`` when a task of the loop failed.
    """
    configuration = await _configuration(settings)
    async with _stop_signal(stop) as stopping:
        journal = await Journal.open(settings.journal_path, settings=settings.journal)
        try:
            await _serve(settings, journal, configuration, stopping)
        finally:
            await journal.close()
    log.info("stopped")
    return 0


async def _serve(
    settings: ControllerSettings,
    journal: Journal,
    configuration: client.Configuration,
    stopping: asyncio.Event,
) -> None:
    clock = SystemClock()
    fold = await folding.resume(journal, use_predicates=settings.reconcile.predicates)
    log.info("journal %s open at seq %d", settings.journal_path, fold.seq, extra={"seq": fold.seq})
    async with client.ApiClient(configuration) as api:
        clients = ActionsClients()
        try:
            reconciler = Reconciler(
                journal=journal,
                executor=Executor(api=api, clients=clients, settings=settings.executor),
                fold=fold,
                timers=Timers(journal=journal, clock=clock),
                machines=settings.machines,
                queue=settings.queue,
                reconcile=settings.reconcile,
                watched=_watched(settings),
            )
            watchers = Watchers(api=api, journal=journal, known=journal.projection, settings=settings.watch)
            watchers.start()
            stopper = asyncio.create_task(_stop_when(stopping, reconciler), name="stop on signal")
            try:
                await reconciler.run(synced=watchers.wait_synced)
            finally:
                stopper.cancel()
                await asyncio.gather(stopper, return_exceptions=True)
                await watchers.stop()
        finally:
            await clients.aclose()


async def _stop_when(stopping: asyncio.Event, reconciler: Reconciler) -> None:
    await stopping.wait()
    log.info("stopping: finishing the reconciles in flight")
    reconciler.stop()


def _watched(settings: ControllerSettings) -> Callable[[ObjectRef], bool]:
    kinds, namespaces = frozenset(settings.watch.kinds), frozenset(settings.watch.namespaces)
    return lambda ref: ref.kind in kinds and (not namespaces or ref.namespace in namespaces)


async def _configuration(settings: ControllerSettings) -> client.Configuration:
    if settings.kubeconfig is not None:
        return await kubepatching.kubeconfig(settings.kubeconfig)
    return kubepatching.in_cluster()


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
