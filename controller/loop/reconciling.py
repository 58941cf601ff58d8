"""The loop of DESIGN.md: tail the journal, decide, record, act, record what came of it.

    tail ──► fold (projection, results, clock) ──► keys ──► work queue
                                                              │ one key at a time per key
    worker: snapshot ──► decide ──► append [decision, effect…] ──► executor ──► append effect_result
            (RequeueAfter: a timer, answered when it fires)     └─► wait until the fold has read it back

* The fold is the only reader of the journal's tail; snapshots come from it, so each decision reads one
  journal prefix (its ``seq`` and clock ``now`` are in the decision record).
* A worker holds its key until the fold has applied the key's last result, so the next decision of that
  key reads the results of the one before.
* A worker also holds its key until the watch events of its writes are folded (or ``settle_timeout``
  passed: a patch that changed nothing brings no event), so a decision never re-reads the state its own
  writes replaced (controller-runtime's "expectations").
* After a reconcile: a failed effect retries the key with its backoff; a result carrying facts only the
  Actions service knows (scale set ids, runner ids, JobStillRunning) queues the key again at once (and the
  subject a ReleaseRunner names); otherwise the watch brings the writes back and they wake the key.
* Decisions start only after the watchers journaled their first lists and the fold read them; the outbox
  (effects of an earlier run without a result) is performed first.
* ``stop`` stops taking keys, lets the reconciles in flight finish, and returns.
* An executor that raises ``NotLeading`` (this replica lost its Lease) leaves the effect without a result,
  in the outbox, and stops the reconciler: the term is over, and the next one performs the effect.
* Each pass is counted into the term's ``runtimemetrics.Term`` (its result, duration, panics), as is the
  work queue; the module docstring of ``runtimemetrics`` maps each outcome to controller-runtime's.
"""

from __future__ import annotations

import asyncio
import enum
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from controller.executor import outbox
from controller.loop import declared, logkeys, snapshotting, timing
from controller.loop.declared import DECIDED
from controller.loop.folding import Fold
from controller.loop.queueing import WorkQueue
from controller.loop.runtimemetrics import Result, RuntimeMetrics
from controller.loop.settings import QueueSettings, ReconcileSettings
from controller.loop.supervising import Supervisor
from controller.loop.timing import Timers
from statemachines import effects as fx
from statemachines import servedfields
from statemachines.decisions import Decision
from statemachines.effectresults import EffectResult, Failure
from statemachines.effects import Effect, ObjectRef
from statemachines.snapshots import Settings as MachineSettings
from statemachines.snapshots import Snapshot
from store import clocks, ports
from store.errors import JournalWriteFailed
from store.records import Record, RecordType

log = logging.getLogger("arcsm.controller")

# Each machine's decisions written to the served schema (``servedfields``: no pruned conditions).
DECIDERS: dict[str, Callable[[Snapshot], Decision]] = {
    d.kind: servedfields.keeping_served_fields(d.decide) for d in declared.DECLARATIONS
}

# Results that carry facts no watch brings back: the key is decided again as soon as they are recorded.
FACT_EFFECTS: tuple[type[Effect], ...] = (fx.ActionsCall, fx.CreateJitConfigSecret, fx.ReleaseRunner)
# Effects that issue something the service keeps and only their result would tell about (a JIT config
# registers a runner; its Secret write may not have happened): left without a result, one is not done
# again blindly but answered ``Interrupted``, and the next decision finds out what the service holds.
INTERRUPTIBLE: tuple[type[Effect], ...] = (fx.CreateJitConfigSecret,)
INTERRUPTED = Failure.INTERRUPTED.value


class Journal(ports.JournalReader, ports.JournalTail, ports.JournalWriter, Protocol):
    """What the loop needs of the journal: it reads, follows and appends (``store.journal.Journal`` is
    one)."""


class NotLeading(Exception):
    """Raised by an executor that may not write because this replica no longer leads (``LeaderOnly``).

    It is not the effect's result: the effect stays in the outbox without one, the term ends, and the next
    term (of this replica or another) performs it, as after a crash."""


class Executor(Protocol):
    async def execute(self, effect: Effect) -> EffectResult:
        """Perform ``effect``; return its result (journaled as ``{"ok": true, ...}`` or ``{"ok": false,
        "error": CLASS, "message": TEXT}``). API and Actions errors are results, never exceptions; only
        ``NotLeading`` is raised (nothing was attempted)."""
        ...


class Outcome(enum.Enum):
    SETTLED = enum.auto()  # nothing to do, or writes the watch will bring back
    TIMED = enum.auto()  # settled, and a timer armed: the key is decided again when it fires
    FACTS = enum.auto()  # results a decision reads: decide again now
    FAILED = enum.auto()  # an effect failed (or the reconcile raised): retry with backoff


RESULTS: dict[Outcome, Result] = {
    Outcome.SETTLED: Result.SUCCESS,
    Outcome.TIMED: Result.REQUEUE_AFTER,
    Outcome.FACTS: Result.REQUEUE,
    Outcome.FAILED: Result.ERROR,
}


class Reconciler:
    def __init__(
        self,
        *,
        journal: Journal,
        executor: Executor,
        fold: Fold,
        timers: Timers,
        machines: MachineSettings,
        queue: QueueSettings,
        reconcile: ReconcileSettings,
        watched: Callable[[ObjectRef], bool] = lambda ref: True,
        metrics: RuntimeMetrics | None = None,
    ) -> None:
        self.journal = journal
        self.executor = executor
        self.fold = fold
        self.timers = timers
        self.machines = machines
        self.settings = reconcile
        self.workers = queue.workers
        # The run's metrics (kept across terms by the caller), fed for this term.
        run_metrics = metrics or RuntimeMetrics()
        self.metrics = run_metrics.start_term(workers=queue.workers, per_kind=queue.per_kind)
        # Grouped by kind: ``QueueSettings.per_kind`` bounds the reconciles of each kind in flight.
        self.queue: WorkQueue[ObjectRef] = WorkQueue(queue, group=_kind, observer=self.metrics)
        self.watched = watched
        self.decisions = 0  # reconciles that recorded a decision
        self.reconciles = 0
        self.unsettled = 0  # reconciles whose writes were not all observed within settle_timeout
        self._stopping = asyncio.Event()
        self._tasks = Supervisor(on_failure=lambda exc: self._stopping.set())
        self.started = asyncio.Event()  # set once decisions may start

    def stop(self) -> None:
        """Stop taking keys; ``run`` returns once the reconciles in flight are done."""
        self._stopping.set()

    async def run(self, *, synced: Callable[[], Awaitable[None]]) -> None:
        """Run until ``stop``; raise if a task of the loop failed."""
        self._tasks.spawn("journal tail", self._tail())
        self._tasks.spawn("timers", self.timers.run())
        try:
            if await self._unless_stopped(self._start(synced)):
                workers = [
                    self._tasks.spawn(f"reconcile worker {i}", self._work()) for i in range(self.workers)
                ]
                self.started.set()
                await self._stopping.wait()
                self.queue.shut_down()
                await asyncio.gather(*workers, return_exceptions=True)
        finally:
            self.queue.shut_down()
            await self._tasks.stop()
            self.metrics.end()
        if self._tasks.failures:
            name, exc = self._tasks.failures[0]
            raise RuntimeError(f"the controller stopped: {name} failed: {exc}") from exc

    async def _unless_stopped(self, work: Awaitable[None]) -> bool:
        """Run ``work`` unless ``stop`` comes first (then cancel it); True when it ran to its end."""
        task = asyncio.ensure_future(work)
        stopping = asyncio.ensure_future(self._stopping.wait())
        try:
            await asyncio.wait({task, stopping}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            stopping.cancel()
        if not task.done():
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
            return False
        task.result()
        return True

    async def _start(self, synced: Callable[[], Awaitable[None]]) -> None:
        await self.redo_outbox()
        await synced()
        await self.fold.reached(self.journal.last_seq)
        for kind in DECIDED:
            for obj in self.fold.projection.items(kind):
                meta = snapshotting.meta(obj)
                self.queue.add(ObjectRef(kind, str(meta.get("namespace") or ""), str(meta.get("name") or "")))
        log.info("watchers synced at seq %d: deciding %d objects", self.fold.seq, len(self.queue))

    # -- the tail ------------------------------------------------------------------------------------------

    async def _tail(self) -> None:
        try:
            async for record in self.journal.tail(after=self.fold.seq):
                for key in self.fold.apply(record):
                    self.queue.add(key)
        except BaseException as exc:
            self.fold.stop(exc)
            raise
        self.fold.stop()

    # -- the outbox ----------------------------------------------------------------------------------------

    async def redo_outbox(self) -> int:
        """Perform the effects an earlier run recorded without a result; returns how many."""
        pending = await outbox.unanswered(self.journal, through=self.fold.seq)
        last = 0
        for record in pending:
            try:
                effect = fx.from_json(record.body)
            except (KeyError, TypeError, ValueError) as exc:
                unknown = EffectResult.failure("UnknownEffect", f"cannot read the effect: {exc}")
                last = await self._answer(record, unknown, key=str(record.body.get("type", "")))
                continue
            if isinstance(effect, INTERRUPTIBLE):
                log.warning(
                    "%s was left without a result (seq %s): answered %s, not performed again",
                    effect.key,
                    record.seq,
                    INTERRUPTED,
                    extra=_extra(record),
                )
                last = max(last, await self._answer(record, interrupted(effect), key=effect.key))
                continue
            log.info(
                "performing %s left without a result (seq %s)", effect.key, record.seq, extra=_extra(record)
            )
            try:
                seq, _ = await self._perform(record, effect)
            except NotLeading:
                return 0  # the term is over; the next one performs the outbox again
            last = max(last, seq)
        await self.fold.reached(last)
        return len(pending)

    # -- workers -------------------------------------------------------------------------------------------

    async def _work(self) -> None:
        while (key := await self.queue.get()) is not None:
            started, panicked, refused = time.monotonic(), False, False
            try:
                outcome = await self.reconcile(key)
            except NotLeading:
                outcome, refused = Outcome.SETTLED, True  # the term is over (``stop`` was called)
            except JournalWriteFailed as exc:  # the journal logs its outage once; the key is retried
                log.debug("reconcile of %s: %s", key, exc, extra=logkeys.about(key))
                outcome = Outcome.FAILED
            except Exception:
                log.exception("reconcile of %s failed", key, extra=logkeys.about(key))
                outcome, panicked = Outcome.FAILED, True
            finally:
                self.queue.done(key)
            result = Result.ERROR if refused else RESULTS[outcome]
            self.metrics.reconciled(
                key.kind, result, time.monotonic() - started, panicked=panicked, terminal=refused
            )
            if outcome is Outcome.FAILED:
                self.queue.add_rate_limited(key)
            else:
                self.queue.forget(key)
                if outcome is Outcome.FACTS:
                    self.queue.add(key)

    async def reconcile(self, key: ObjectRef) -> Outcome:
        """One pass for ``key``: decide from the fold, record, act, record the results."""
        self.reconciles += 1
        view = self.fold.view()
        snapshot = snapshotting.build(view, key, self.machines)
        decision = DECIDERS[key.kind](snapshot)
        if decision.is_noop:
            return Outcome.SETTLED
        self.decisions += 1
        journaled = await self.journal.append(
            [
                decision_record(decision, snapshot, seq=view.seq),
                *(effect_record(e, snapshot) for e in decision.effects),
            ]
        )
        _log_decision(decision, journaled[0])
        writes = [t for e in decision.effects if (t := watched_write(e)) is not None and self.watched(t)]
        expectation = self.fold.expect(writes, after=view.seq)
        try:
            last, failed, facts, timed = journaled[-1].seq or 0, False, False, False
            for record, effect in zip(journaled[1:], decision.effects, strict=True):
                seq, result = await self._perform(record, effect)
                last = max(last, seq)
                if result is None:  # a timer: answered when it fires
                    timed = True
                    continue
                if (target := watched_write(effect)) is not None and not changes_something(result):
                    expectation.drop(target)
                if result.failed:
                    failed = True
                elif isinstance(effect, FACT_EFFECTS):
                    facts = True
                    subject = getattr(effect, "subject", key)
                    if subject != key:
                        self.queue.add(subject)
            await self.fold.reached(last)
            if not await expectation.wait(self.settings.settle_timeout):
                self.unsettled += 1
                log.debug(
                    "%s: writes not observed after %s s: %s",
                    key,
                    self.settings.settle_timeout,
                    expectation.pending,
                )
        finally:
            self.fold.withdraw(expectation)
        if failed:
            return Outcome.FAILED
        return Outcome.FACTS if facts else Outcome.TIMED if timed else Outcome.SETTLED

    async def _perform(self, record: Record, effect: Effect) -> tuple[int, EffectResult | None]:
        """Perform one journaled effect: a timer is armed (its result comes when it fires); anything else
        is executed and its result appended. Returns the seq of the result (0 for a timer) and the result.

        When the executor refuses because this replica no longer leads, no result is appended (the effect
        stays in the outbox), the reconciler stops taking keys, and ``NotLeading`` propagates."""
        if isinstance(effect, fx.RequeueAfter):
            self.timers.arm(record, effect)
            if effect.target.kind in DECIDERS:  # an add after a delay, in work queue terms
                self.metrics.delayed(effect.target.kind)
            return 0, None
        try:
            result = await self._execute(effect)
        except NotLeading:
            log.info(
                "not leading: %s stays in the outbox (seq %s)", effect.key, record.seq, extra=_extra(record)
            )
            self.stop()
            raise
        return await self._answer(record, result, key=effect.key), result

    async def _execute(self, effect: Effect) -> EffectResult:
        try:
            async with asyncio.timeout(self.settings.effect_timeout):
                return await self.executor.execute(effect)
        except NotLeading:
            raise
        except TimeoutError:
            message = f"no result after {self.settings.effect_timeout} s"
            return EffectResult.failure(Failure.TIMEOUT.value, message)
        except Exception as exc:  # an executor bug must not stop the loop: it is the effect's failure
            log.exception("executing %s raised", effect.key)
            message = (str(exc).splitlines() or [""])[0][:500]
            return EffectResult.failure(type(exc).__name__, message)

    async def _answer(self, record: Record, result: EffectResult, *, key: str) -> int:
        body = {**result.to_body(), "key": key}
        (answered,) = await self.journal.append([timing.result_record(record, body)])
        return answered.seq or 0


def interrupted(effect: Effect) -> EffectResult:
    """The result of an ``INTERRUPTIBLE`` effect an earlier run started and never answered."""
    what = f"{type(effect).__name__} {getattr(effect, 'target', '')}".strip()
    message = f"the controller stopped during {what}; what the service issued is looked up first"
    return EffectResult.failure(INTERRUPTED, message)


def _kind(key: ObjectRef) -> str:
    return key.kind


def watched_write(effect: Effect) -> ObjectRef | None:
    """The object a Kubernetes write changes, whose watch event the next decision must read."""
    if isinstance(effect, fx.CreateObject | fx.MergePatch | fx.DeleteObject):
        return effect.target
    return None


def changes_something(result: EffectResult) -> bool:
    """Whether a write's result promises a watch event: it succeeded and did not find the object already
    there (a create) or already gone (a delete), as the executor reports them."""
    return result.ok and not result.facts.get("alreadyExisted") and not result.facts.get("alreadyGone")


# -- records -----------------------------------------------------------------------------------------------


def _ref_json(ref: ObjectRef) -> dict[str, str]:
    return {"kind": ref.kind, "namespace": ref.namespace, "name": ref.name}


def decision_record(decision: Decision, snapshot: Snapshot, *, seq: int) -> Record:
    """The decision as journaled: ``Decision.as_json`` with each transition's subject, and the journal
    prefix it was decided from (``seq``) with that prefix's clock (``now``)."""
    body = decision.as_json()
    body["transitions"] = [
        {**entry, "subject": _ref_json(t.subject)}
        for entry, t in zip(body["transitions"], decision.transitions, strict=True)
    ]
    body["seq"] = seq
    body["now"] = clocks.format_time(snapshot.now)
    return _about(RecordType.DECISION, snapshot, body)


def effect_record(effect: Effect, snapshot: Snapshot) -> Record:
    return _about(RecordType.EFFECT, snapshot, fx.to_json(effect))


def _about(kind: RecordType, snapshot: Snapshot, body: dict[str, Any]) -> Record:
    # Every value is built already, so the slots are set directly (``Record.read_back``) rather than
    # through the frozen dataclass's ``__init__``: replay builds one of these per decision and effect.
    meta, subject = snapshot.meta, snapshot.subject
    return Record.read_back(
        kind,
        subject.kind,
        subject.namespace,
        subject.name,
        str(meta.get("uid") or ""),
        str(meta.get("resourceVersion") or ""),
        body,
        None,
        "",
    )


# -- logs --------------------------------------------------------------------------------------------------


def _extra(record: Record) -> dict[str, Any]:
    return logkeys.about(ObjectRef(record.kind, record.namespace, record.name), seq=record.seq)


def _log_decision(decision: Decision, record: Record) -> None:
    """A transition is routine (info); a Warning Event a decision emits is a problem someone must look
    at, logged at error with its reason and message when the Event is decided (a machine decides a
    configuration problem's Event once, not at every retry)."""
    for effect in decision.effects:
        if isinstance(effect, fx.EmitEvent) and effect.type == "Warning":
            log.error(
                "%s: %s: %s",
                effect.target,
                effect.reason,
                effect.message,
                extra=logkeys.about(effect.target, seq=record.seq, reason=effect.reason),
            )
    for t in decision.transitions:
        log.info(
            "%s: %s → %s (%s): %s",
            t.subject,
            t.from_ or "(none)",
            t.to,
            t.trigger,
            t.reason,
            extra={**_extra(record), "from_phase": t.from_, "to_phase": t.to, "trigger": t.trigger},
        )
    log.debug(
        "%s: %s; %d effects", decision.subject, decision.note, len(decision.effects), extra=_extra(record)
    )
