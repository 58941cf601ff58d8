"""Leader election (``controller.loop.leading``) against the emulated API server's Leases
(coordination.k8s.io/v1).

Two electors on one Lease: one wins, the holder renews, a candidate takes an unrenewed Lease only after
its own clock saw it unchanged for the lease duration, a holder whose renewals fail steps down (and its
executor refuses writes), and a released Lease is taken at once. The expiry tests drive each elector's
monotonic clock by hand; the step-down test runs ``hold`` with short real timings against injected
faults.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from kubernetes_asyncio import client

from controller.loop import folding
from controller.loop.leading import Elector, LeaderOnly, LeaseHeld, claim_identity, micro_time
from controller.loop.reconciling import NotLeading, Reconciler
from controller.loop.roles import Role
from controller.loop.settings import LeaderElectionSettings, QueueSettings, ReconcileSettings
from controller.loop.terms import run_terms
from controller.loop.timing import Timers
from sim.faults import Fault
from sim.world import World
from statemachines import effects as fx
from statemachines.effectresults import EffectResult
from statemachines.effects import Effect, ObjectRef
from statemachines.snapshots import Settings as MachineSettings
from store.clocks import SystemClock
from store.journal import Journal
from store.records import Record, RecordType
from store.settings import JournalSettings
from tests.helpers import eventually

NS, LEASE = "arc-systems", "arcsm-controller"


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class Recorder:
    def __init__(self) -> None:
        self.executed: list[Effect] = []

    async def execute(self, effect: Effect) -> EffectResult:
        self.executed.append(effect)
        return EffectResult.success()


@pytest.fixture
async def world() -> AsyncIterator[World]:
    async with World(seed=3) as w:
        yield w


@pytest.fixture
async def api(world: World) -> AsyncIterator[client.ApiClient]:
    async with client.ApiClient(world.configuration()) as api:
        yield api


def settings(identity: str, **timings: float) -> LeaderElectionSettings:
    return LeaderElectionSettings(identity=identity, namespace=NS, lease_name=LEASE, **timings)


async def spec(api: client.ApiClient) -> Any:
    return (await client.CoordinationV1Api(api).read_namespaced_lease(LEASE, NS)).spec


async def test_two_candidates_one_wins_and_the_holder_renews(api: client.ApiClient) -> None:
    a, b = Elector(api, settings("a"), clock=Clock()), Elector(api, settings("b"), clock=Clock())
    won = await asyncio.gather(a.try_acquire_or_renew(), b.try_acquire_or_renew())
    assert sorted(won) == [False, True]
    leader, other = (a, b) if won[0] else (b, a)
    assert leader.leading and not other.leading
    first = await spec(api)
    assert first.holder_identity == leader.identity and first.lease_transitions == 0
    assert first.lease_duration_seconds == 15

    assert await leader.try_acquire_or_renew()
    renewed = await spec(api)
    assert renewed.holder_identity == leader.identity
    assert renewed.acquire_time == first.acquire_time and renewed.lease_transitions == 0
    assert renewed.renew_time >= first.renew_time
    assert not await other.try_acquire_or_renew(), "a renewed lease is not taken"
    assert other.holder == leader.identity


async def test_a_candidate_takes_the_lease_only_after_it_went_unrenewed_for_the_duration(
    api: client.ApiClient,
) -> None:
    old_clock, new_clock = Clock(), Clock()
    old = Elector(api, settings("old"), clock=old_clock)
    new = Elector(api, settings("new"), clock=new_clock)
    assert await old.try_acquire_or_renew()
    assert not await new.try_acquire_or_renew()  # first sight of the record starts its own count

    new_clock.now += 14.9
    assert not await new.try_acquire_or_renew(), "taken before the lease duration passed"
    old_clock.now += 11  # the old leader did not renew within its renew deadline
    assert not old.leading
    new_clock.now += 0.2
    assert await new.try_acquire_or_renew()
    taken = await spec(api)
    assert taken.holder_identity == "new" and taken.lease_transitions == 1
    assert not await old.try_acquire_or_renew(), "the old leader sees a live holder and stays out"


async def test_a_renewal_of_the_record_restarts_the_candidates_count(api: client.ApiClient) -> None:
    holder_clock, candidate_clock = Clock(), Clock()
    holder = Elector(api, settings("holder"), clock=holder_clock)
    candidate = Elector(api, settings("candidate"), clock=candidate_clock)
    assert await holder.try_acquire_or_renew()
    assert not await candidate.try_acquire_or_renew()
    candidate_clock.now += 10
    holder_clock.now += 2
    assert await holder.try_acquire_or_renew()
    candidate_clock.now += 10  # 20 s since its first sight; the renewal it sees now restarts the count
    assert not await candidate.try_acquire_or_renew()
    candidate_clock.now += 14.9
    assert not await candidate.try_acquire_or_renew()
    candidate_clock.now += 0.2
    assert await candidate.try_acquire_or_renew()


async def test_a_leader_that_cannot_renew_steps_down_and_writes_nothing(
    world: World, api: client.ApiClient
) -> None:
    elector = Elector(api, settings("a", lease_duration=2, renew_deadline=0.6, retry_period=0.1))
    inner = Recorder()
    executor = LeaderOnly(inner, elector)
    effect = fx.DeleteObject(target=ObjectRef("EphemeralRunner", "default", "r1"))
    assert await elector.try_acquire_or_renew()
    assert (await executor.execute(effect)).ok

    fault = world.inject(Fault(verb="update", path="/leases/", code=500, times=None))
    async with asyncio.timeout(10):
        await elector.hold()  # returns once no renewal succeeded within the renew deadline
    assert fault.hits >= 2, "renewals were retried before stepping down"
    assert not elector.leading
    with pytest.raises(NotLeading):
        await executor.execute(effect)
    assert inner.executed == [effect]


async def test_a_released_lease_is_taken_at_once(api: client.ApiClient) -> None:
    a, b = Elector(api, settings("a"), clock=Clock()), Elector(api, settings("b"), clock=Clock())
    assert await a.try_acquire_or_renew()
    assert not await b.try_acquire_or_renew()
    assert await a.release()
    assert not a.leading
    released = await spec(api)
    assert released.holder_identity is None or released.holder_identity == ""
    assert released.lease_duration_seconds == 1
    assert await b.try_acquire_or_renew(), "no wait for the lease duration after a release"
    taken = await spec(api)
    assert taken.holder_identity == "b" and taken.lease_transitions == 1
    assert not await a.release(), "only the holder releases"


async def test_acquire_waits_for_the_lease_or_the_stop(api: client.ApiClient) -> None:
    holder = Elector(api, settings("holder"), clock=Clock())
    assert await holder.try_acquire_or_renew()
    waiting = Elector(api, settings("waiting", lease_duration=2, renew_deadline=1, retry_period=0.05))
    stopping = asyncio.Event()
    acquiring = asyncio.create_task(waiting.acquire(stopping))
    assert await holder.release()
    async with asyncio.timeout(10):
        assert await acquiring
    assert waiting.leading

    stopped = asyncio.Event()
    stopped.set()
    assert not await Elector(api, settings("late")).acquire(stopped)


async def renewed_ago(api: client.ApiClient, seconds: float) -> None:
    """Set the Lease's renewTime ``seconds`` in the past, as a holder that stopped renewing leaves it."""
    leases = client.CoordinationV1Api(api)
    lease = await leases.read_namespaced_lease(LEASE, NS)
    moment = micro_time(datetime.now(UTC) - timedelta(seconds=seconds))
    await leases.patch_namespaced_lease(LEASE, NS, {"spec": {"renewTime": moment}})
    assert lease.spec.holder_identity


async def test_a_claim_is_refused_beside_a_live_holder_and_takes_an_expired_lease_at_once(
    api: client.ApiClient,
) -> None:
    assert await Elector(api, settings("chart"), clock=Clock()).try_acquire_or_renew()
    alone = Elector(api, settings("alone"))
    with pytest.raises(
        LeaseHeld, match="another controller, chart, holds the Lease arc-systems/arcsm-controller"
    ):
        await alone.claim(api)
    assert (await spec(api)).holder_identity == "chart", "a refused claim leaves the Lease alone"

    await renewed_ago(api, 16)  # the chart's replica was killed: its Lease went unrenewed past 15 s
    assert await alone.claim(api), "an expired Lease is taken at once, with no wait of a whole duration"
    taken = await spec(api)
    assert taken.holder_identity == "alone" and taken.lease_transitions == 1
    assert not await Elector(api, settings("chart"), clock=Clock()).try_acquire_or_renew(), (
        "a replica that elects stands by beside the claim"
    )


async def test_the_same_journal_restarted_takes_its_claim_back_at_once(api: client.ApiClient) -> None:
    assert await Elector(api, settings("host_0123abcd")).claim(api)
    # kill -9: nothing released; the restart on the same journal has the same identity.
    again = Elector(api, settings("host_0123abcd"))
    assert await again.claim(api)
    held = await spec(api)
    assert held.holder_identity == "host_0123abcd" and held.lease_transitions == 0
    with pytest.raises(LeaseHeld):
        await Elector(api, settings("host_fedc4321")).claim(api)


async def test_a_claim_is_renewed_until_the_stop_and_says_who_took_it(api: client.ApiClient) -> None:
    timings = {"lease_duration": 2, "renew_deadline": 1, "retry_period": 0.05}
    alone = Elector(api, settings("alone", **timings))
    assert await alone.claim(api)
    stopping = asyncio.Event()
    keeping = asyncio.create_task(alone.keep(stopping))
    first = (await spec(api)).renew_time

    async def renewed() -> bool:
        return bool((await spec(api)).renew_time > first)

    await eventually(renewed, timeout=10, what="the claim renewed")
    stopping.set()
    async with asyncio.timeout(10):
        assert await keeping is None
    assert await alone.release()

    assert await alone.claim(api)
    stopping = asyncio.Event()
    keeping = asyncio.create_task(alone.keep(stopping))
    # Another replica wrote itself in (as one does once this one went unrenewed for a whole duration).
    leases = client.CoordinationV1Api(api)
    await leases.patch_namespaced_lease(
        LEASE, NS, {"spec": {"holderIdentity": "chart", "renewTime": micro_time(datetime.now(UTC))}}
    )
    async with asyncio.timeout(10):
        reason = await keeping
    assert reason is not None and reason.startswith("another controller, chart, took the Lease"), reason
    assert (await spec(api)).holder_identity == "chart", "the claim did not take it back"


def test_a_claim_is_the_journal_file_s_whatever_link_names_it(tmp_path: Path) -> None:
    journal, other = tmp_path / "journal.db", tmp_path / "other.db"
    journal.write_bytes(b"")
    other.write_bytes(b"")
    os.link(journal, tmp_path / "hard.db")
    (tmp_path / "soft.db").symlink_to(journal)
    identity = claim_identity(journal)
    assert claim_identity(tmp_path / "hard.db") == claim_identity(tmp_path / "soft.db") == identity
    assert claim_identity(other) != identity
    assert identity.startswith((os.environ.get("HOSTNAME") or os.uname().nodename) + "_")


def outbox_record(effect: fx.DeleteObject) -> Record:
    """An effect recorded without a result: the outbox a term performs first."""
    target = effect.target
    return Record(
        type=RecordType.EFFECT,
        kind=target.kind,
        namespace=target.namespace,
        name=target.name,
        body=fx.to_json(effect),
    )


async def nothing_to_wait_for() -> None:
    return None


async def effect_results(journal: Journal) -> list[Record]:
    return await journal.read(types={RecordType.EFFECT_RESULT})


async def reconciler_of(journal: Journal, executor: LeaderOnly) -> Reconciler:
    return Reconciler(
        journal=journal,
        executor=executor,
        fold=await folding.resume(journal),
        timers=Timers(journal=journal, clock=SystemClock()),
        machines=MachineSettings(),
        queue=QueueSettings(),
        reconcile=ReconcileSettings(),
    )


async def test_a_refused_effect_stays_in_the_outbox_and_the_next_term_performs_it(
    api: client.ApiClient, tmp_path: Path
) -> None:
    elector = Elector(api, settings("a"), clock=Clock())
    inner = Recorder()
    effect = fx.DeleteObject(target=ObjectRef("EphemeralRunner", "default", "r1"))
    async with await Journal.open(
        tmp_path / "journal.db", settings=JournalSettings(durable=False)
    ) as journal:
        (recorded,) = await journal.append([outbox_record(effect)])

        async def term() -> None:
            reconciler = await reconciler_of(journal, LeaderOnly(inner, elector))
            await reconciler.run(synced=nothing_to_wait_for)

        # Not leading: the reconciler refuses the outbox's effect and ends the term on its own.
        async with asyncio.timeout(10):
            await term()
        assert inner.executed == []
        assert await effect_results(journal) == [], (
            "a refusal is no result: nothing a machine would read as a failure"
        )

        assert await elector.try_acquire_or_renew()
        running = asyncio.create_task(term())
        try:
            (answer,) = await eventually(
                lambda: effect_results(journal), what="the effect performed by the next term"
            )
        finally:
            running.cancel()
            await asyncio.gather(running, return_exceptions=True)
    assert inner.executed == [effect]
    assert answer.body["effectSeq"] == recorded.seq and answer.body["ok"] is True


class RefusingOnce(Elector):
    """An elector whose ``leading`` turns false at the first write it is asked about (as when the Lease
    lapses during a reconcile, before the renewal task notices), and which counts its terms' ends."""

    def __init__(self, *args: Any, journal: Journal, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.refuse = True
        self.journal = journal
        self.results_at_release: list[int] = []
        self.acquired = 0

    @property
    def leading(self) -> bool:
        if self.refuse and super().leading:
            self.refuse = False
            return False
        return super().leading

    async def acquire(self, stopping: asyncio.Event) -> bool:
        won = await super().acquire(stopping)
        self.acquired += won
        return won

    async def release(self) -> bool:
        results = await self.journal.read(types={RecordType.EFFECT_RESULT})
        self.results_at_release.append(len(results))
        return await super().release()


async def test_run_terms_ends_a_term_whose_effect_was_refused_and_the_next_term_performs_it(
    api: client.ApiClient, tmp_path: Path
) -> None:
    inner = Recorder()
    effect = fx.DeleteObject(target=ObjectRef("EphemeralRunner", "default", "r1"))
    async with await Journal.open(
        tmp_path / "journal.db", settings=JournalSettings(durable=False)
    ) as journal:
        elector = RefusingOnce(api, settings("a", retry_period=0.05), clock=Clock(), journal=journal)
        (recorded,) = await journal.append([outbox_record(effect)])

        async def new_reconciler() -> Reconciler:
            return await reconciler_of(journal, LeaderOnly(inner, elector))

        stopping = asyncio.Event()
        role = Role()
        terms = asyncio.create_task(
            run_terms(
                new_reconciler=new_reconciler,
                synced=nothing_to_wait_for,
                role=role,
                elector=elector,
                stopping=stopping,
                drain_timeout=5.0,
            )
        )
        try:
            (answer,) = await eventually(
                lambda: effect_results(journal), what="the effect performed by the second term"
            )
        finally:
            stopping.set()
            async with asyncio.timeout(10):
                await terms
    assert not elector.refuse, "the first term's write was refused"
    assert elector.results_at_release[0] == 0, "the refused effect left no result when its term ended"
    assert elector.acquired >= 2, "the Lease was taken again for a second term"
    assert len(elector.results_at_release) == elector.acquired, "each term released the Lease"
    assert inner.executed == [effect], "performed once, by the second term"
    assert answer.body["effectSeq"] == recorded.seq and answer.body["ok"] is True
    assert (await spec(api)).lease_transitions >= 1
