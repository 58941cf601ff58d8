"""SIGKILL during the revision cleanup: ``arcsm run`` is killed at seeded random points while the runner set
releases the runners of its old runner-spec revision, and restarted on the same journal each time. It
converges, ``appliedActionableRevision`` only advances once no idle runner of an older revision remains (and
never goes back), and the runner executing a job is never deleted while its job runs.

The revision is advanced on the EphemeralRunnerSet as the ARS publishes one (``spec.actionableRevision``
+1): a template change on the ARS first drains the runner set (A3, listener deleted until no runner is
running), so the runner set's own cleanup would find nothing left to release.

Real ``arcsm run`` subprocess, real journal on disk, emulated cluster with the fake GitHub in this process on
loopback. RemoveRunner answers slowly so the cleanup lasts; the kill points are conditions (the first
RemoveRunner of the cleanup; after a restart, the journal grown by a seeded random number of records) plus a
short seeded random delay. Every wait has a deadline.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from kubernetes_asyncio import client

from sim.github.faults import GitHubFault
from sim.github.records import Job
from sim.world import World
from statemachines.kinds import ARS, ER, ERS
from statemachines.naming import ANNOTATION_ACTIONABLE_REVISION
from store.records import Record, RecordType
from tests import helpers
from tests.e2e.controller import harness
from tests.helpers import eventually

pytestmark = pytest.mark.both_worlds

TIMEOUT = 60.0
JOB_SECONDS = 600.0  # outlasts the test however slow the machine: the busy runner is kept through the cleanup
KILLS = 3
SEED = 20261130


@pytest.fixture
async def world(world_kind: str) -> AsyncIterator[World]:
    async with harness.github_world(world_kind) as w:
        w.github.configure(job_seconds=JOB_SECONDS)
        yield w


class Arcsm:
    """``arcsm run`` as a subprocess on one journal: start, SIGKILL, start again."""

    def __init__(self, world: World, directory: Path) -> None:
        self.kubeconfig = world.write_kubeconfig(directory / "kubeconfig")
        self.journal = directory / "journal.db"
        self.proc: asyncio.subprocess.Process | None = None

    async def start(self) -> None:
        assert self.proc is None or self.proc.returncode is not None
        self.proc = await asyncio.create_subprocess_exec(
            *harness.run_command(self.journal, self.kubeconfig),
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.DEVNULL,
        )

    async def kill(self) -> None:
        assert self.proc is not None
        if self.proc.returncode is None:
            self.proc.kill()  # SIGKILL: nothing is flushed or released gracefully
        await asyncio.wait_for(self.proc.wait(), timeout=10)

    async def stop(self) -> int:
        assert self.proc is not None
        return await helpers.terminate(self.proc) or 0


def runner_revision(runner: dict[str, Any]) -> int:
    value = (runner["metadata"].get("annotations") or {}).get(ANNOTATION_ACTIONABLE_REVISION)
    try:
        return int(value or 0)
    except ValueError:
        return 0


def has_job(runner: dict[str, Any]) -> bool:
    return bool((runner.get("status") or {}).get("jobId"))


async def journal_size(journal: Path) -> int:
    try:
        return len(await harness.journaled(journal))
    except Exception:  # not created yet, or mid-write by the process just killed: not grown yet
        return 0


def running_job(world: World) -> Job | None:
    return next((j for j in world.github.state.jobs.values() if j.runner_name and not j.finish_time), None)


async def watch_busy_runner(kube: client.ApiClient, world: World, name: str, seen: list[str]) -> None:
    """While the job runs, the runner executing it keeps existing without a deletionTimestamp."""
    while True:
        job = next(j for j in world.github.state.jobs.values() if j.runner_name == name)
        runner = await harness.get(kube, ER, name)
        if job.finish_time is not None:
            return
        if runner is None or runner["metadata"].get("deletionTimestamp"):
            seen.append(f"{name} deleted while its job ran: {runner and runner['metadata']}")
            return
        await asyncio.sleep(0.02)


async def test_sigkill_during_the_revision_cleanup_converges_and_keeps_the_busy_runner(
    world: World, kube: client.ApiClient, tmp_path: Path
) -> None:
    rng = random.Random(SEED)
    arcsm = Arcsm(world, tmp_path)
    await arcsm.start()
    monitor: asyncio.Task[None] | None = None
    violations: list[str] = []
    try:
        body = harness.scale_set_body(world, minRunners=2)
        body["spec"]["template"]["spec"]["restartPolicy"] = "Never"
        await harness.create(kube, body)

        async def two_idle_runners() -> bool:
            runners = await harness.items(kube, ER)
            return (
                await harness.phase(kube) == "Running"
                and len(runners) == 2
                and all((r.get("status") or {}).get("phase") == "Running" for r in runners)
                and sum(a.online for a in world.github.state.agents.values()) == 2
            )

        await eventually(two_idle_runners, timeout=TIMEOUT, what="Running with 2 idle runners")
        scale_set = world.github.scale_set("arc")
        assert scale_set is not None
        world.github.queue_jobs(scale_set.id, 1)

        async def busy() -> dict[str, Any] | None:
            job = running_job(world)
            if job is None:
                return None
            runner = await harness.get(kube, ER, job.runner_name)
            return runner if runner is not None and has_job(runner) else None

        busy_runner = await eventually(busy, timeout=TIMEOUT, what="a runner executing the job")
        busy_name, busy_uid = busy_runner["metadata"]["name"], busy_runner["metadata"]["uid"]
        monitor = asyncio.create_task(watch_busy_runner(kube, world, busy_name, violations))

        async def idle_beside_the_busy_one() -> bool:  # minRunners idle runners besides the busy one
            runners = await harness.items(kube, ER)
            idle = [
                r for r in runners if not has_job(r) and (r.get("status") or {}).get("phase") == "Running"
            ]
            return len(idle) == 2 and sum(a.online for a in world.github.state.agents.values()) == 3

        await eventually(idle_beside_the_busy_one, timeout=TIMEOUT, what="2 idle runners beside the busy one")
        old_revision, old_applied = harness.revisions(await harness.get(kube, ERS, "arc") or {})
        assert old_revision == old_applied

        # The cleanup takes a while (RemoveRunner answers slowly) so the kills land inside it.
        world.github.inject(GitHubFault(method="DELETE", path=r"/agents/\d+$", latency=0.3, times=None))
        # A new runner-spec revision, as the ARS publishes one: the runner set releases its runners without a
        # job (the busy one is kept) and only then records the revision applied.
        await harness.merge_patch(kube, ERS, "arc", {"spec": {"actionableRevision": old_revision + 1}})

        def removals() -> int:
            return len(world.github.calls_to("DELETE", "/agents/"))

        for kill in range(KILLS):
            seen = removals()
            if kill == 0:  # once the cleanup called RemoveRunner

                async def removing(seen: int = seen) -> bool:
                    return removals() > seen

                await eventually(removing, timeout=TIMEOUT, what="a RemoveRunner of the cleanup")
            else:  # after a restart: let it journal a random number of records first
                grow = rng.randint(1, 10)
                start = await journal_size(arcsm.journal)

                async def grown(start: int = start, grow: int = grow) -> bool:
                    return await journal_size(arcsm.journal) >= start + grow

                with contextlib.suppress(AssertionError):  # a quiet controller is killed anyway
                    await eventually(grown, timeout=5, what="the journal grown")
            await asyncio.sleep(rng.uniform(0.0, 0.3))
            await arcsm.kill()
            await arcsm.start()
        world.github.clear_faults()

        async def converged() -> bool:
            ars = await harness.get(kube, ARS, "arc")
            ers = await harness.get(kube, ERS, "arc")
            if ars is None or ers is None:
                return False
            actionable, applied = harness.revisions(ers)
            idle = [r for r in await harness.items(kube, ER) if not has_job(r)]
            return (
                (ars.get("status") or {}).get("phase") == "Running"
                and ars["status"].get("observedGeneration") == ars["metadata"]["generation"]
                and actionable == applied == old_revision + 1
                and len(idle) == 2
                and all(runner_revision(r) == actionable for r in idle)
            )

        await eventually(converged, timeout=TIMEOUT, what="convergence at the new revision")
        assert running_job(world) is not None, "the job ended before convergence: make JOB_SECONDS longer"
        kept = await harness.get(kube, ER, busy_name)
        assert kept is not None and kept["metadata"]["uid"] == busy_uid and has_job(kept)
        assert not violations, violations
    finally:
        if monitor is not None and not monitor.done():
            monitor.cancel()
        await arcsm.stop()

    records = await harness.journaled(arcsm.journal, {RecordType.OBSERVED})
    assert_applied_revision_waits_for_the_cleanup(records)
    assert_busy_runner_kept_while_busy(records, busy_uid)


def assert_applied_revision_waits_for_the_cleanup(records: list[Record]) -> None:
    """Per observed ERS record: appliedActionableRevision never decreases, and when it advances to R no
    runner of a revision below R without a job remains in the runners observed up to that record."""
    runners: dict[str, dict[str, Any]] = {}
    applied = 0
    advances = 0
    for record in records:
        if record.kind == ER:
            if record.body.get("event") == "DELETED":
                runners.pop(record.uid, None)
            else:
                runners[record.uid] = record.body["object"]
        elif record.kind == ERS:
            _, now = harness.revisions(record.body["object"])
            assert now >= applied, f"appliedActionableRevision went back {applied} -> {now} at {record.seq}"
            if now > applied:
                advances += 1
                stale = [
                    r["metadata"]["name"]
                    for r in runners.values()
                    if runner_revision(r) < now
                    and not has_job(r)
                    and not r["metadata"].get("deletionTimestamp")
                ]
                assert not stale, (
                    f"applied advanced to {now} at seq {record.seq} with idle old runners {stale}"
                )
            applied = now
    assert advances >= 2, "the journal shows the initial and the advanced applied revision"


def assert_busy_runner_kept_while_busy(records: list[Record], uid: str) -> None:
    """The runner that had the job: no DELETED or deletionTimestamp while its observed status had a job."""
    had_job = False
    for record in (r for r in records if r.kind == ER and r.uid == uid):
        runner = record.body["object"]
        going = record.body.get("event") == "DELETED" or runner["metadata"].get("deletionTimestamp")
        if has_job(runner) and not going:
            had_job = True
        if going:
            assert had_job, "the busy runner was observed going before its job"
            assert not has_job(runner) or (runner.get("status") or {}).get("phase") in {
                "Succeeded",
                "Failed",
            }, f"the runner was deleted while it had a job (seq {record.seq}): {runner.get('status')}"
