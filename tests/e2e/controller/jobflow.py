"""Jobs run through scale sets, and what the journal grew by while they ran.

Inputs: a world with the fake GitHub (``harness.github_world``), a directory for the journal, how many
scale sets and how many jobs per set, and whether the watchers journal observed objects slim
(``WatchSettings.slim``). ``run`` creates the config Secret and the scale sets (minRunners 0, runner
template with ``restartPolicy: Never`` as the chart's is), waits until each is Running with its listener's
scale set registered, queues the jobs, and waits until every job completed and every runner and runner
pod is gone, in the cluster and in the journal. Outputs: ``JobRun``, the journal's records and body bytes
appended between the jobs being queued and that end, per kind and type. The real controller runs
in-process (``harness.Controller``); nothing is mocked.

``tests/e2e/controller/test_controller_journal_growth.py`` and ``bench/journal_growth.py`` run it.
"""

from __future__ import annotations

import collections
import dataclasses
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kubernetes_asyncio import client

from sim.github.records import JobState
from sim.world import World
from tests.e2e.controller import harness
from tests.helpers import eventually


@dataclass(frozen=True)
class JobRun:
    journal: Path
    scale_sets: int
    jobs: int
    records: int  # appended while the jobs ran (queued → all runners gone)
    bytes: int  # their bodies' JSON text
    by_kind: dict[tuple[str, str], tuple[int, int]]  # (type, kind) → (records, bytes)

    @property
    def records_per_job(self) -> float:
        return self.records / self.jobs

    @property
    def bytes_per_job(self) -> float:
        return self.bytes / self.jobs


def scale_set(world: World, name: str, max_runners: int) -> dict[str, Any]:
    body = harness.scale_set_body(world, name, maxRunners=max_runners)
    body["spec"]["template"]["spec"]["restartPolicy"] = "Never"
    return body


def _journal(path: Path) -> sqlite3.Connection:
    return sqlite3.connect(f"{path.absolute().as_uri()}?mode=ro", uri=True)


def last_seq(path: Path) -> int:
    db = _journal(path)
    try:
        return int(db.execute("SELECT MAX(seq) FROM records").fetchone()[0] or 0)
    finally:
        db.close()


def _grown(path: Path, after: int) -> list[tuple[str, str, int, int]]:
    db = _journal(path)
    try:
        rows = db.execute(
            "SELECT type, kind, COUNT(*), SUM(LENGTH(CAST(body AS BLOB))) FROM records WHERE seq > ?"
            " GROUP BY type, kind",
            (after,),
        ).fetchall()
    finally:
        db.close()
    return [(str(t), str(k), int(n), int(b or 0)) for t, k, n, b in rows]


def _live_in_journal(path: Path, kinds: tuple[str, ...]) -> int:
    """Objects of ``kinds`` in the test namespace whose last observed record is not a DELETED."""
    db = _journal(path)
    try:
        rows = db.execute(
            "SELECT kind, name, body FROM records WHERE type = 'observed' AND namespace = ? ORDER BY seq",
            (harness.NS,),
        ).fetchall()
    finally:
        db.close()
    live: dict[tuple[str, str], bool] = {}
    for kind, name, body in rows:
        if kind in kinds:
            text = body if isinstance(body, str) else bytes(body).decode()
            live[(kind, name)] = '"event":"DELETED"' not in text[:40]
    return sum(live.values())


def _controller(world: World, directory: Path, *, slim: bool) -> harness.Controller:
    directory.mkdir(parents=True, exist_ok=True)
    controller = harness.Controller(world, directory)
    controller.record_to = None
    settings = controller.settings
    controller.settings = dataclasses.replace(settings, watch=dataclasses.replace(settings.watch, slim=slim))
    return controller


async def run(
    world: World, directory: Path, *, scale_sets: int, jobs_per_set: int, slim: bool, timeout: float = 300
) -> JobRun:
    controller = _controller(world, directory, slim=slim)
    names = [f"set-{i:03d}" for i in range(scale_sets)]
    async with client.ApiClient(world.configuration()) as kube, controller:
        await harness.create_secret(kube)
        for name in names:
            await harness.create(kube, scale_set(world, name, max_runners=jobs_per_set))

        async def registered() -> bool:
            phases = [await harness.phase(kube, name) for name in names]
            return all(p == "Running" for p in phases) and all(world.github.scale_set(n) for n in names)

        await eventually(registered, timeout=timeout, what="every scale set Running and registered")
        before = last_seq(controller.journal)
        for name in names:
            found = world.github.scale_set(name)
            assert found is not None
            world.github.queue_jobs(found.id, jobs_per_set)

        async def done() -> bool:
            jobs = list(world.github.state.jobs.values())
            if len(jobs) < scale_sets * jobs_per_set or any(j.state is not JobState.COMPLETED for j in jobs):
                return False
            if await harness.items(kube, "EphemeralRunner"):
                return False
            pods = (await client.CoreV1Api(kube).list_namespaced_pod(harness.NS)).items
            if pods:
                return False
            return _live_in_journal(controller.journal, ("EphemeralRunner", "Pod")) == 0

        await eventually(done, timeout=timeout, what="every job done and every runner gone")
        grown = _grown(controller.journal, before)
    by_kind: dict[tuple[str, str], tuple[int, int]] = collections.defaultdict(lambda: (0, 0))
    for kind_type, kind, count, size in grown:
        by_kind[(kind_type, kind)] = (count, size)
    return JobRun(
        journal=controller.journal,
        scale_sets=scale_sets,
        jobs=scale_sets * jobs_per_set,
        records=sum(n for _, _, n, _ in grown),
        bytes=sum(b for _, _, _, b in grown),
        by_kind=dict(by_kind),
    )
