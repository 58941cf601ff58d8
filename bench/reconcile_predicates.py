"""Benchmark: how many reconciles the update predicates save, as a ratio of predicates on to off.

Two scenarios, each run alternately with the predicates on and off in the same run.

**Story.** The story of ``tests/e2e/controller/test_controller_predicates.py`` (a scale set with
minRunners 1, or N with ``--runners N``, reaches Running with its runners; its maxRunners is edited; it
is deleted and cleaned up) runs against the emulated world with the real controller, alternately with
``ReconcileSettings(predicates=True)`` and ``predicates=False``, in the same run. Counted per run:
reconciles (the Reconciler's own counter: every pass, whether or not it decided anything), decisions (the
journal's decision records) and wall-clock time. The test asserts both settings end the same; this
measures what the predicates save.

**Churn.** A steady scale set (minRunners N, no jobs) whose runner pods' status churns while nothing
else happens, against ``arcsm run`` as a subprocess (``--predicates`` or ``--no-predicates``, its reconcile
counts scraped from ``/metrics``: ``controller_runtime_reconcile_total`` by controller), in two forms:

* ``status``: U status updates of one runner pod through the API (kubernetes_asyncio, merge patches of
  ``status``), each a restart as a crash-looping kubelet reports it: ``restartCount`` + 1, a new
  ``lastState.terminated`` and container id, the runner container running again; each once the journal
  holds the one before, as a kubelet's back-off spaces them (unspaced, the work queue folds a burst of
  updates into a few reconciles of the key). Counted from a quiet controller until it is quiet again.
* ``crashloop``: the runner pods carry a sidecar container that exits 1 at once, under restartPolicy
  Always with the emulated kubelet's restart back-off shrunk to 50 ms, so the kubelet itself writes the
  storm (terminated, waiting ``CrashLoopBackOff``, running, ...). Counted over the window in which the
  runner pods get U updates.

In ``status`` no field the EphemeralRunner machine reads changes (``statemachines.predicates``), so a
reconcile counted with the predicates on is one the controller did for other reasons (timers). In
``crashloop`` the pod's Ready condition flips with each exit and restart of the sidecar, which the runner
mirrors into its ``status.ready`` (§4.11): those updates are read and stay delivered; the predicates drop
the rest (waiting ``CrashLoopBackOff``, restart counts) and the runner set's wake-ups on ``ready``.

Run from the repository root: ``.venv/bin/python bench/reconcile_predicates.py [--repeat R] [--runners N]
[--updates U] [--only story|churn]``.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import logging
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from unittest import mock

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import httpx  # noqa: E402
from kubernetes_asyncio import client  # noqa: E402

from controller.loop import running  # noqa: E402
from controller.loop.reconciling import Reconciler  # noqa: E402
from sim.runtimes import EXIT_CODE  # noqa: E402
from sim.store import Event  # noqa: E402
from tests.e2e.controller import chaos, harness, scraping  # noqa: E402
from tests.e2e.controller.test_controller_predicates import TIMEOUT, _settled, story  # noqa: E402
from tests.helpers import eventually  # noqa: E402

CHURNS = ("status", "crashloop")
CRASH_BACKOFF = 0.05  # the shrunk restart back-off of the crashloop form (seconds)


@dataclass
class Run:
    reconciles: int
    decisions: int
    seconds: float


async def one(predicates: bool, directory: Path, runners: int) -> Run:
    """One story on a fresh world, counting the reconciles of every Reconciler the controller builds."""
    built: list[Reconciler] = []

    class Counted(Reconciler):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            built.append(self)

    started = time.perf_counter()
    with mock.patch.object(running, "Reconciler", Counted):
        async with harness.github_world() as world:
            ended = await story(world, directory, predicates=predicates, runners=runners)
    seconds = time.perf_counter() - started
    return Run(sum(r.reconciles for r in built), ended.decisions, seconds)


# -- churn -----------------------------------------------------------------------------------------------


@dataclass
class Churned:
    reconciles: dict[str, int]  # by controller, caused while the pods churned
    updates: int  # runner pod updates in the window


async def scrape(url: str) -> dict[str, float]:
    """The controller's reconciles by controller, and its queue depth and busy workers in total."""
    async with httpx.AsyncClient(base_url=url, timeout=30) as http:
        answer = await http.get("/metrics")
    answer.raise_for_status()
    found: dict[str, float] = {"depth": 0.0, "active": 0.0}
    for sample in scraping.samples(answer.text):
        if sample.name == "controller_runtime_reconcile_total":
            controller = sample.labels["controller"]
            found[controller] = found.get(controller, 0.0) + sample.value
        elif sample.name == "workqueue_depth":
            found["depth"] += sample.value
        elif sample.name == "controller_runtime_active_workers":
            found["active"] += sample.value
    return found


async def quiet(url: str) -> dict[str, float]:
    """The reconcile counts once the queue is empty, no worker busy and the counts still for a second."""
    last: dict[str, float] | None = None
    while True:
        now = await scrape(url)
        if last is not None and now == last and now["depth"] == 0 and now["active"] == 0:
            return now
        last = now
        await asyncio.sleep(1.0)


def counted(before: dict[str, float], after: dict[str, float]) -> dict[str, int]:
    names = sorted((set(before) | set(after)) - {"depth", "active"})
    return {n: int(after.get(n, 0) - before.get(n, 0)) for n in names}


def churn_body(world: Any, form: str, runners: int) -> dict[str, Any]:
    body = harness.scale_set_body(world, minRunners=runners, maxRunners=runners)
    if form == "crashloop":
        body["spec"]["template"] = {
            "metadata": {"annotations": {EXIT_CODE: "1"}},  # every container but the runner exits 1
            "spec": {
                "restartPolicy": "Always",
                "containers": [
                    {"name": "runner", "image": harness.RUNNER_IMAGE},
                    {"name": "sidecar", "image": "busybox:1.36"},
                ],
            },
        }
    return body


async def churn_once(form: str, predicates: bool, directory: Path, runners: int, updates: int) -> Churned:
    async with harness.github_world() as world:
        if form == "crashloop":
            world.kubelet.timing = dataclasses.replace(
                world.kubelet.timing, restart=CRASH_BACKOFF, restart_max=CRASH_BACKOFF
            )
        pod_updates = 0

        def count(event: Event) -> None:
            nonlocal pod_updates
            if event.key[:3] == ("", "pods", harness.NS) and event.type == "MODIFIED":
                pod_updates += 1

        world.store.add_listener(count)
        arcsm = chaos.Arcsm(world, directory, flags=() if predicates else ("--no-predicates",))
        async with client.ApiClient(world.configuration()) as api:
            await harness.create_secret(api)
            await arcsm.start()
            try:
                await harness.create(api, churn_body(world, form, runners))
                await eventually(lambda: _settled(api, runners), timeout=TIMEOUT * 3, what="steady")
                before = await quiet(arcsm.url) if form == "status" else await scrape(arcsm.url)
                first = pod_updates
                if form == "status":
                    await patch_restarts(arcsm, api, updates)
                    after = await quiet(arcsm.url)
                else:
                    await eventually(
                        lambda: pod_updates - first >= updates, timeout=TIMEOUT * 3, what="churn"
                    )
                    after = await scrape(arcsm.url)
                churned = pod_updates - first
            finally:
                await arcsm.stop()
    return Churned(counted(before, after), churned)


async def patch_restarts(arcsm: chaos.Arcsm, api: client.ApiClient, updates: int) -> None:
    """``updates`` restarts of the first runner pod's runner container, as a kubelet would report them,
    each once the controller journaled the one before (a kubelet's back-off spaces them too)."""
    core = client.CoreV1Api(api)
    pod = (await core.list_namespaced_pod(harness.NS)).items[0]  # the namespace holds runner pods only
    statuses = api.sanitize_for_serialization(pod.status.container_statuses)
    journal = Journaled(arcsm)
    for n in range(1, updates + 1):
        statuses[0].update(
            restartCount=n,
            lastState={
                "terminated": {"exitCode": 1, "reason": "Error", "finishedAt": "2026-01-01T00:00:00Z"}
            },
            containerID=f"containerd://{n:064x}",
        )
        patched = await core.patch_namespaced_pod_status(  # type: ignore[call-arg]
            pod.metadata.name,
            harness.NS,
            {"status": {"containerStatuses": statuses}},
            _content_type="application/merge-patch+json",
        )
        journal.version = patched.metadata.resource_version
        await eventually(journal.holds, timeout=TIMEOUT, what=f"update {n} journaled")


@dataclass
class Journaled:
    """Reads the controller's journal as it grows: does it hold Pod version ``version`` yet?"""

    arcsm: chaos.Arcsm
    version: str = ""
    cursor: int = 0

    async def holds(self) -> bool:
        items = await self.arcsm.served(after=self.cursor)
        self.cursor = max([self.cursor, *(int(item["seq"]) for item in items)])
        return any(item["kind"] == "Pod" and item["resourceVersion"] == self.version for item in items)


async def churn(repeat: int, runners: int, updates: int) -> None:
    for form in CHURNS:
        runs: dict[bool, list[Churned]] = {True: [], False: []}
        with tempfile.TemporaryDirectory() as tmp:
            for i in range(repeat):
                for predicates in (True, False) if i % 2 == 0 else (False, True):
                    directory = Path(tmp) / f"{form}-{i}-{predicates}"
                    directory.mkdir()
                    runs[predicates].append(await churn_once(form, predicates, directory, runners, updates))
        print(
            f"\nchurn {form}: minRunners {runners}, {updates} runner pod updates wanted. {repeat} runs each"
        )
        print("| predicates | pod updates | reconciles (all) | EphemeralRunner | others | per pod update |")
        print("|---|---|---|---|---|---|")
        for predicates in (True, False):
            for r in runs[predicates]:
                total = sum(r.reconciles.values())
                er = r.reconciles.get("ephemeralrunner", 0)
                print(
                    f"| {'on' if predicates else 'off'} | {r.updates} | {total} | {er} | {total - er} "
                    f"| {total / max(r.updates, 1):.2f} |"
                )


# -- the story ------------------------------------------------------------------------------------------


async def story_runs(repeat: int, runners: int) -> None:
    runs: dict[bool, list[Run]] = {True: [], False: []}
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(repeat):
            for predicates in (True, False) if i % 2 == 0 else (False, True):
                directory = Path(tmp) / f"{i}-{predicates}"
                directory.mkdir()
                runs[predicates].append(await one(predicates, directory, runners))

    def median(predicates: bool, field: str) -> float:
        return float(statistics.median(getattr(r, field) for r in runs[predicates]))

    print(f"story: create (minRunners {runners}), Running; maxRunners edit; delete. {repeat} runs each")
    print("| predicates | reconciles | decisions | seconds |")
    print("|---|---|---|---|")
    for predicates in (True, False):
        print(
            f"| {'on' if predicates else 'off'} | {median(predicates, 'reconciles'):g} "
            f"| {median(predicates, 'decisions'):g} | {median(predicates, 'seconds'):.2f} |"
        )
    print(
        f"on/off: reconciles {median(True, 'reconciles') / median(False, 'reconciles'):.2f}, "
        f"decisions {median(True, 'decisions') / median(False, 'decisions'):.2f} (medians)"
    )


async def main(repeat: int, runners: int, updates: int, only: str | None) -> None:
    if only in (None, "story"):
        await story_runs(repeat, runners)
    if only in (None, "churn"):
        await churn(repeat, runners, updates)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--repeat", type=int, default=3, help="runs with each setting (default 3)")
    parser.add_argument("--runners", type=int, default=1, help="minRunners of the scale set (default 1)")
    parser.add_argument("--updates", type=int, default=100, help="runner pod updates per churn (default 100)")
    parser.add_argument("--only", choices=("story", "churn"), help="run one scenario only")
    args = parser.parse_args()
    logging.basicConfig(level=logging.ERROR)
    asyncio.run(main(args.repeat, args.runners, args.updates, args.only))
