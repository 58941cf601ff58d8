"""Terms of leadership: when a Reconciler decides, and how it stops.

    without leader election:  one term, from start to stop
    with leader election:     standby ──(Lease acquired)──► term ──(renewal missed)──► standby ──► …
                                                              └──(stop)──► drain, release the Lease

A term starts a fresh Reconciler (``new_reconciler``: a fold resumed from this replica's own journal,
which the watchers kept current while it stood by), so the outbox is performed and every object decided
once, as at a start. The machines decide from observed state, so a replica that takes over needs none of
the old leader's decisions: its creates are idempotent and its deletes tolerate NotFound.

A term ends in one of four ways:

* ``stopping`` (SIGTERM): take no new keys, let the reconciles in flight finish for up to
  ``drain_timeout`` seconds (renewing the Lease meanwhile), abandon what is left (their effects stay in the
  outbox, as after a crash), then release the Lease so a standby takes over at once.
* the renewal missed its deadline: abandon the reconciles in flight at once (``LeaderOnly`` already
  refuses their writes) and stand by again.
* an effect was refused (``NotLeading``: the Lease lapsed before the renewal task noticed): the
  reconciler leaves the effect in the outbox and stops itself; the term ends and the replica stands by.
  No failed result is journaled, so no machine reads a failure that never happened.
* a task of the loop failed: release the Lease and raise, so the process stops as it does without one.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from controller.loop.leading import Elector
from controller.loop.reconciling import Reconciler
from controller.loop.roles import Role

log = logging.getLogger("arcsm.controller")


async def run_terms(
    *,
    new_reconciler: Callable[[], Awaitable[Reconciler]],
    synced: Callable[[], Awaitable[None]],
    role: Role,
    elector: Elector | None,
    stopping: asyncio.Event,
    drain_timeout: float,
) -> None:
    """Decide in terms until ``stopping`` is set; raise ``RuntimeError`` when a task of the loop failed."""
    if elector is None:
        await _term(await new_reconciler(), synced, role, None, stopping, drain_timeout)
        return
    while not stopping.is_set():
        if not await elector.acquire(stopping):
            return
        await _term(await new_reconciler(), synced, role, elector, stopping, drain_timeout)


async def _term(
    reconciler: Reconciler,
    synced: Callable[[], Awaitable[None]],
    role: Role,
    elector: Elector | None,
    stopping: asyncio.Event,
    drain_timeout: float,
) -> None:
    role.lead(reconciler)
    run = asyncio.create_task(reconciler.run(synced=synced), name="reconcile loop")
    stop = asyncio.create_task(stopping.wait(), name="stop on signal")
    renew = asyncio.create_task(elector.hold(), name="renew the lease") if elector is not None else None
    renewing = {renew} if renew is not None else set()
    try:
        await asyncio.wait({run, stop, *renewing}, return_when=asyncio.FIRST_COMPLETED)
        if run.done() and not stopping.is_set() and not run.cancelled() and run.exception() is None:
            log.warning("not leading any more: the term ended with effects left in the outbox")
        elif not run.done() and renew is not None and renew.done():
            log.warning("lost the lease: abandoning the reconciles in flight")
        elif not run.done():
            log.info("stopping: finishing the reconciles in flight (at most %s s)", drain_timeout)
            reconciler.stop()
            await asyncio.wait({run, *renewing}, timeout=drain_timeout, return_when=asyncio.FIRST_COMPLETED)
            if not run.done():
                log.warning("stopping: abandoning the reconciles still in flight")
    finally:
        for task in (run, stop, renew):
            if task is not None and not task.done():
                task.cancel()
        await asyncio.gather(*(t for t in (run, stop, renew) if t is not None), return_exceptions=True)
        if elector is not None:
            # Nothing writes any more: give the Lease up if this replica still holds it (after a missed
            # renewal too, so a candidate need not wait out the duration if the API server answers),
            # before saying it stands by, so a standby never releases a Lease later.
            await elector.release()
        role.stand_by()
    if not run.cancelled() and (failure := run.exception()) is not None:
        raise failure
