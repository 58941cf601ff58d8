"""Chaos runs: a seeded random run of the real ``arcsm run`` against the emulated world, and its oracle.

Inputs: the emulated cluster with the fake GitHub (``harness.github_world``), a directory for the journal,
and a seed. ``ChaosRun`` starts ``arcsm run`` as a subprocess (its HTTP API on a free port), creates
several scale sets and lets them come to rest with their runners up, then plays a plan drawn from the
seed: API faults (``sim.faults.Fault``: 409, 410, 429, 5xx, latency, on one verb and resource), Actions
faults (``sim.github.faults.GitHubFault``), watch drops (clean or abrupt), 410 relists (the watch
history compacted, then the watches dropped), an outage of the API server and one of the Actions service
(every request answered 503 for a few seconds), SIGKILL of the controller and a restart on the same
journal, spec edits (maxRunners, minRunners, the runner template) and queued jobs. Between steps it waits
a seeded random delay, which only places the next fault; nothing waits for a condition by sleeping.

The oracle, once the faults are lifted (``ChaosRun.check``):

* every scale set comes to rest where a fault-free run comes to rest (``EndState.at_rest``): Running at
  its generation, its runner set's revision applied and its runner spec the scale set's template, as many
  idle Running runners as minRunners, all of the applied revision, one listener, and the fake's
  registrations of the scale set exactly those runners' ids;
* no journal record was lost: every record the controller served over its API before a kill is in the
  journal afterwards, unchanged; the sequence has no gap; ``store.verifying.verify`` passes;
* no busy runner was removed: every job the fake ran ended ``succeeded`` (a runner removed while it runs
  a job fails the job);
* no registration is orphaned: after the scale sets are deleted, nothing of them is left in the cluster
  and the fake has no scale set and no runner left.

A failure carries the seed (``ARCSM_CHAOS_SEED`` plays the same plan again; the timings of the world are
the machine's) and the steps played, each with the second it began, as notes on the exception.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import os
import random
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from kubernetes_asyncio import client

from sim.faults import Fault
from sim.github.faults import GitHubFault
from sim.world import World
from statemachines.kinds import AL, ARS, ER, ERS
from statemachines.naming import ANNOTATION_ACTIONABLE_REVISION
from store import verifying
from tests import helpers, worlds
from tests.e2e.controller import harness
from tests.e2e.controller.harness import CONTROLLER_NS
from tests.helpers import eventually

SEED_VARIABLE = "ARCSM_CHAOS_SEED"
SERVING = re.compile(r"serving the HTTP API on (\S+)")
EDIT_ENV = "CHAOS_EDIT"  # the runner template edit: an env var of the runner container
START_TIMEOUT = 60.0  # arcsm run serving its API after a (re)start
REST_TIMEOUT = 240.0  # every scale set at rest once the faults are lifted
GONE_TIMEOUT = 180.0  # everything gone once the scale sets are deleted

# What an API fault hits: the resources the controller and the listener read and write.
RESOURCES = (
    "autoscalingrunnersets",
    "ephemeralrunnersets",
    "ephemeralrunners",
    "autoscalinglisteners",
    "pods",
    "secrets",
    "serviceaccounts",
    "roles",
    "rolebindings",
    "events",
)
VERBS = ("get", "list", "watch", "create", "patch", "update", "delete")
API_CODES = (409, 429, 500, 503, 504)
# What an Actions fault hits: the Actions service's paths the controller and the listener call.
ACTIONS_PATHS = (
    "/scalesets",
    "/runners",
    "generatejitconfig",
    "/sessions",
    "/messages",
    "acquirejobs",
    "/runnergroups",
    "registration-token|runner-registration|access_tokens",
)
ACTIONS_METHODS = ("GET", "POST", "PATCH", "DELETE")
ACTIONS_STATUSES = (429, 500, 502, 503)


def seed_from_environment(default: int | None = None) -> int:
    """The seed of ``ARCSM_CHAOS_SEED`` when set (``random``: a new random one), else ``default``, else a
    new random one."""
    value = os.environ.get(SEED_VARIABLE, "").strip()
    if value and value != "random":
        return int(value)
    if default is not None and not value:
        return default
    return random.SystemRandom().randrange(2**32)


# -- the controller as a subprocess --------------------------------------------------------------------------


@dataclass
class Arcsm:
    """``arcsm run`` on one journal with its HTTP API on a free port: start, SIGKILL, start again; ``flags``
    are passed to every start."""

    world: World
    directory: Path
    flags: tuple[str, ...] = ()
    proc: asyncio.subprocess.Process | None = None
    url: str = ""
    log: list[str] = field(default_factory=list)
    starts: int = 0
    _reader: asyncio.Task[None] | None = None

    @property
    def journal(self) -> Path:
        return self.directory / "journal.db"

    async def start(self) -> None:
        assert self.proc is None or self.proc.returncode is not None, "arcsm run is running"
        kubeconfig = self.world.write_kubeconfig(self.directory / "kubeconfig")
        self.url = ""
        self.starts += 1
        self.proc = await asyncio.create_subprocess_exec(
            *harness.run_command(
                self.journal, kubeconfig, "--http", "127.0.0.1:0", "--log-format", "json", *self.flags
            ),
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.PIPE,
        )
        self._reader = asyncio.create_task(self._read_log(self.proc))
        await eventually(lambda: self.url, timeout=START_TIMEOUT, what="arcsm run serving its HTTP API")

    async def _read_log(self, proc: asyncio.subprocess.Process) -> None:
        assert proc.stderr is not None
        async for raw in proc.stderr:
            line = raw.decode(errors="replace").rstrip()
            self.log = [*self.log[-199:], line]
            try:
                message = str(json.loads(line).get("msg", ""))
            except ValueError:
                message = line
            if (found := SERVING.search(message)) is not None:
                self.url = found.group(1)

    async def kill(self) -> None:
        """SIGKILL: nothing is flushed or released gracefully."""
        assert self.proc is not None
        if self.proc.returncode is None:
            self.proc.kill()
        await self._ended()

    async def stop(self) -> int:
        """SIGTERM, then SIGKILL after 30 s; the exit status."""
        if self.proc is None:
            return 0
        await helpers.terminate(self.proc)
        await self._ended()
        return self.proc.returncode if self.proc.returncode is not None else -1

    async def _ended(self) -> None:
        assert self.proc is not None
        await asyncio.wait_for(self.proc.wait(), timeout=10)
        if self._reader is not None:
            await asyncio.wait_for(self._reader, timeout=10)

    async def served(self, after: int = 0) -> list[dict[str, Any]]:
        """The journal records after ``after`` as the running controller serves them, every page."""
        items: list[dict[str, Any]] = []
        cursor: int | None = after
        async with httpx.AsyncClient(base_url=self.url, timeout=30) as http:
            while cursor is not None:
                answer = await http.get("/api/v1/journal", params={"after": cursor, "limit": 1000})
                answer.raise_for_status()
                page = answer.json()
                items.extend(page["items"])
                cursor = page["next"]
        return items

    def failure(self) -> str:
        return "\n".join(self.log[-40:])


# -- the end state -------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class EndState:
    """A scale set at rest, in the terms a fault-free run fixes (timings and names left out)."""

    phase: str | None
    generation_observed: bool  # status.observedGeneration == metadata.generation
    revision_applied: bool  # the runner set's actionableRevision == appliedActionableRevision
    runner_spec_current: bool  # the runner set's runner template is the scale set's
    runners: int
    idle_running: int  # runners Running without a job
    at_applied_revision: int  # runners annotated with the applied revision
    of_current_spec: int  # runners whose template is the scale set's
    listeners: int
    registrations_are_the_runners: bool  # the fake's runners of the scale set are the runners' ids

    @classmethod
    def at_rest(cls, min_runners: int) -> EndState:
        """Where a fault-free run leaves a scale set of ``min_runners`` with no job queued."""
        return cls("Running", True, True, True, *(min_runners,) * 4, 1, True)


def edit_of(pod_spec: dict[str, Any] | None) -> str | None:
    """The runner container's ``CHAOS_EDIT`` value in a pod template spec (None: not set)."""
    for container in (pod_spec or {}).get("containers") or []:
        if container.get("name") == "runner":
            for env in container.get("env") or []:
                if env.get("name") == EDIT_ENV:
                    return str(env.get("value"))
    return None


async def end_state(world: World, kube: client.ApiClient, name: str) -> tuple[EndState, int]:
    """The scale set ``name`` as it is now, and its minRunners."""
    ars = await harness.required(kube, ARS, name)
    ers = await harness.get(kube, ERS, name) or {}
    gen, obs = ars["metadata"].get("generation"), (ars.get("status") or {}).get("observedGeneration")
    wanted = edit_of(ars["spec"]["template"].get("spec"))
    actionable, applied = harness.revisions(ers) if ers else (-1, -2)
    runner_spec = (ers.get("spec") or {}).get("ephemeralRunnerSpec") or {}
    runners = [
        r
        for r in await harness.items(kube, ER)
        if any(
            o.get("uid") == (ers.get("metadata") or {}).get("uid")
            for o in r["metadata"].get("ownerReferences") or []
        )
    ]
    statuses = [r.get("status") or {} for r in runners]
    revisions = [
        (r["metadata"].get("annotations") or {}).get(ANNOTATION_ACTIONABLE_REVISION) for r in runners
    ]
    listeners = [
        al
        for al in await harness.items(kube, AL, CONTROLLER_NS)
        if al["spec"].get("autoscalingRunnerSetName") == name
    ]
    scale_set = world.github.scale_set(name)
    registered = {
        a.id for a in world.github.state.agents.values() if scale_set and a.scale_set_id == scale_set.id
    }
    state = EndState(
        phase=(ars.get("status") or {}).get("phase"),
        generation_observed=gen == obs,
        revision_applied=actionable == applied,
        runner_spec_current=edit_of(runner_spec.get("spec")) == wanted,
        runners=len(runners),
        idle_running=sum(s.get("phase") == "Running" and not s.get("jobId") for s in statuses),
        at_applied_revision=sum(r == str(applied) for r in revisions),
        of_current_spec=sum(edit_of((r.get("spec") or {}).get("spec")) == wanted for r in runners),
        listeners=len(listeners),
        registrations_are_the_runners=registered == {s.get("runnerId") for s in statuses},
    )
    return state, int(ars["spec"].get("minRunners") or 0)


def journal_problems(acknowledged: dict[int, dict[str, Any]], served: list[dict[str, Any]]) -> list[str]:
    """What is wrong with the journal as ``served`` now, given the records ``acknowledged`` (served before
    a kill): a record gone or changed, a gap in the sequence. Empty when nothing is."""
    now = {item["seq"]: item for item in served}
    lost = [seq for seq in sorted(acknowledged) if seq not in now]
    changed = [seq for seq in sorted(acknowledged) if seq in now and now[seq] != acknowledged[seq]]
    seqs = sorted(now)
    gaps = sorted(set(range(seqs[0], seqs[-1] + 1)) - set(seqs)) if seqs else []
    problems = [f"records served before a kill and gone after it: {lost[:20]}"] if lost else []
    problems += [f"records changed after a kill: {changed[:20]}"] if changed else []
    problems += [f"seqs missing from the journal: {gaps[:20]}"] if gaps else []
    return problems


# -- the run -------------------------------------------------------------------------------------------------


SHORT_PLAN = (
    "api_fault",
    "api_fault",
    "api_fault",
    "actions_fault",
    "actions_fault",
    "actions_fault",
    "drop_watches",
    "relist",
    "edit",
    "edit",
    "jobs",
    "jobs",
    "kill",
    "kill",
    "api_outage",
    "actions_outage",
)
# A long run draws its steps with these weights until its time is up.
WEIGHTS = {
    "api_fault": 8,
    "actions_fault": 8,
    "drop_watches": 2,
    "relist": 2,
    "edit": 4,
    "jobs": 4,
    "kill": 3,
    "api_outage": 1,
    "actions_outage": 1,
}


@dataclass
class ChaosRun:
    """One run: the controller, the scale sets, the steps drawn from ``seed`` and what they did."""

    world: World
    kube: client.ApiClient
    directory: Path
    seed: int
    scale_sets: int = 2
    outage_seconds: tuple[float, float] = (2.0, 4.0)
    pause_seconds: tuple[float, float] = (0.0, 1.0)
    rng: random.Random = field(init=False)
    arcsm: Arcsm = field(init=False)
    played: list[str] = field(default_factory=list)  # each step, with the second of the run it began
    acknowledged: dict[int, dict[str, Any]] = field(default_factory=dict)
    edits: int = 0
    kills: int = 0
    injected: list[Fault | GitHubFault] = field(default_factory=list)
    began: float = field(init=False)

    def __post_init__(self) -> None:
        self.rng = random.Random(self.seed)
        self.arcsm = Arcsm(self.world, self.directory)
        self.began = asyncio.get_running_loop().time()

    def did(self, what: str) -> None:
        self.played.append(f"{asyncio.get_running_loop().time() - self.began:.1f}s {what}")

    @property
    def names(self) -> list[str]:
        return [f"chaos-{i}" for i in range(self.scale_sets)]

    def note(self, exc: BaseException) -> None:
        """Say on ``exc`` how to replay the run and what it played."""
        exc.add_note(f"chaos seed {self.seed}: replay with {SEED_VARIABLE}={self.seed}")
        exc.add_note("steps played: " + "; ".join(self.played))
        exc.add_note("arcsm run's last log lines:\n" + self.arcsm.failure())

    # -- setting up -----------------------------------------------------------------------------------------

    async def begin(self) -> None:
        await self.arcsm.start()
        for name in self.names:
            body = harness.scale_set_body(
                self.world, name=name, minRunners=self.rng.randint(0, 2), maxRunners=3
            )
            await harness.create(self.kube, body)
            self.did(f"create {name} min {body['spec']['minRunners']}")
        await self.at_rest()  # the chaos starts on scale sets with their runners up
        self.did("at rest")

    async def play(self, steps: list[str]) -> None:
        for step in steps:
            await asyncio.sleep(self.rng.uniform(*self.pause_seconds))  # places the next fault
            await getattr(self, step)()

    async def play_for(self, seconds: float, *, kills: int = 0) -> None:
        """Steps drawn by weight until ``seconds`` have passed and the controller was killed ``kills``
        times."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + seconds
        kinds, weights = list(WEIGHTS), list(WEIGHTS.values())
        while loop.time() < deadline or self.kills < kills:
            await self.play(self.rng.choices(kinds, weights))

    def short_plan(self) -> list[str]:
        steps = list(SHORT_PLAN)
        self.rng.shuffle(steps)
        return steps

    # -- the steps ----------------------------------------------------------------------------------------

    @property
    def real(self) -> bool:
        """On the real control plane the API's faults are kube-apiserver's restarts (``real_fault``)."""
        return worlds.is_real(self.world)

    async def real_fault(
        self, what: str, *, down: float = 0.0, abrupt: bool = False, compact: bool = False
    ) -> None:
        """kube-apiserver killed (``abrupt``) or stopped and started again after ``down`` seconds, etcd
        compacted first with ``compact`` (so a watch resumed from before answers 410)."""
        self.did(what)
        if compact:
            await self.world.control_plane.compact_etcd()
        await self.world.control_plane.restart_apiserver(down=down, abrupt=abrupt)

    async def api_fault(self) -> None:
        if self.real:
            await self.real_fault("kill -9 kube-apiserver and start it again", abrupt=True)
            return
        verb = self.rng.choice(VERBS)
        code = self.rng.choice((*API_CODES, 410) if verb in ("list", "watch") else API_CODES)
        fault = Fault(
            verb=verb,
            path=f"/{self.rng.choice(RESOURCES)}",
            code=code if self.rng.random() < 0.8 else 0,
            latency=self.rng.choice((0.0, 0.0, 0.5)),
            retry_after=1 if code == 429 else None,
            skip=self.rng.randint(0, 3),
            times=self.rng.randint(1, 3),
        )
        self.injected.append(self.world.inject(fault))
        self.did(f"api fault {fault.verb} {fault.path} {fault.code or 'latency'} x{fault.times}")

    async def actions_fault(self) -> None:
        status = self.rng.choice(ACTIONS_STATUSES)
        fault = GitHubFault(
            method=self.rng.choice(ACTIONS_METHODS),
            path=self.rng.choice(ACTIONS_PATHS),
            status=status if self.rng.random() < 0.8 else 0,
            latency=self.rng.choice((0.0, 0.0, 0.5)),
            retry_after=1 if status == 429 else None,
            skip=self.rng.randint(0, 3),
            times=self.rng.randint(1, 3),
        )
        self.injected.append(self.world.github.inject(fault))
        self.did(f"actions fault {fault.method} {fault.path} {fault.status or 'latency'} x{fault.times}")

    async def drop_watches(self) -> None:
        abrupt = self.rng.random() < 0.5
        if self.real:
            await self.real_fault(f"restart kube-apiserver{' abruptly' if abrupt else ''}", abrupt=abrupt)
            return
        dropped = self.world.drop_watches(abrupt=abrupt)
        self.did(f"drop {dropped} watches{' abruptly' if abrupt else ''}")

    async def relist(self) -> None:
        if self.real:
            await self.real_fault("compact etcd and restart kube-apiserver (410 on resume)", compact=True)
            return
        self.world.compact()
        dropped = self.world.drop_watches()
        self.did(f"compact and drop {dropped} watches (410 on resume)")

    async def api_outage(self) -> None:
        seconds = self.rng.uniform(*self.outage_seconds)
        if self.real:
            await self.real_fault(
                f"api outage {seconds:.1f}s: kube-apiserver killed", down=seconds, abrupt=True
            )
            return
        fault = self.world.inject(Fault(code=503, message="the API server is down", times=None))
        self.injected.append(fault)
        self.did(f"api outage {seconds:.1f}s")
        try:
            await asyncio.sleep(seconds)  # the outage lasts this long; nothing is waited for
        finally:
            self.world.server.faults.remove(fault)

    async def actions_outage(self) -> None:
        seconds = self.rng.uniform(*self.outage_seconds)
        fault = self.world.github.inject(GitHubFault(status=503, message="the service is down", times=None))
        self.injected.append(fault)
        self.did(f"actions outage {seconds:.1f}s")
        try:
            await asyncio.sleep(seconds)
        finally:
            self.world.github.faults.remove(fault)

    async def kill(self) -> None:
        """Take what the controller serves as journaled, then SIGKILL it a random moment later and start
        it again on the same journal."""
        after = max(self.acknowledged, default=0)
        for item in await self.arcsm.served(after):
            self.acknowledged[item["seq"]] = item
        await asyncio.sleep(self.rng.uniform(0.0, 0.5))
        await self.arcsm.kill()
        self.kills += 1
        self.did(f"kill -9 after seq {max(self.acknowledged, default=0)}")
        await self.arcsm.start()

    async def edit(self) -> None:
        name = self.rng.choice(self.names)
        what = self.rng.choice(("maxRunners", "minRunners", "template"))
        if what == "template":
            self.edits += 1
            container = {
                "name": "runner",
                "image": harness.RUNNER_IMAGE,
                "env": [{"name": EDIT_ENV, "value": str(self.edits)}],
            }
            patch: dict[str, Any] = {"spec": {"template": {"spec": {"containers": [container]}}}}
        elif what == "maxRunners":
            patch = {"spec": {"maxRunners": self.rng.randint(2, 4)}}
        else:
            patch = {"spec": {"minRunners": self.rng.randint(0, 2)}}
        await self.retrying(lambda: harness.merge_patch(self.kube, ARS, name, patch), f"edit {name}")
        self.did(f"edit {name} {what} {patch['spec'].get(what, self.edits)}")

    async def jobs(self) -> None:
        name = self.rng.choice(self.names)
        scale_set = self.world.github.scale_set(name)
        if scale_set is None:
            self.did(f"no jobs for {name}: no scale set yet")
            return
        count = self.rng.randint(1, 3)
        self.world.github.queue_jobs(scale_set.id, count)
        self.did(f"queue {count} jobs for {name}")

    async def retrying(self, call: Callable[[], Awaitable[Any]], what: str) -> None:
        """A write of the test's own, retried while an injected fault refuses it."""

        async def done() -> bool:
            try:
                await call()
            except client.ApiException as exc:
                raise AssertionError(f"{what}: {exc.status} {exc.reason}") from exc
            return True

        await eventually(done, timeout=START_TIMEOUT, interval=0.2, what=what)

    # -- the oracle ----------------------------------------------------------------------------------------

    def summary(self) -> str:
        """What the run did, in one line."""
        hit = [f for f in self.injected if f.hits]
        jobs = self.world.github.state.jobs.values()
        return (
            f"seed {self.seed}: {len(self.played)} steps, {len(hit)} of {len(self.injected)} injected "
            f"faults and outages hit ({sum(f.hits for f in self.injected)} requests), "
            f"{self.kills} kill -9 restarts, "
            f"{len(jobs)} jobs ({sum(j.result == 'succeeded' for j in jobs)} succeeded), "
            f"{len(self.acknowledged)} records checked after kills"
        )

    def lift_faults(self) -> None:
        if not self.real:
            self.world.clear_faults()
        self.world.github.clear_faults()
        self.did("faults lifted")

    async def check(self) -> None:
        """Faults lifted: the scale sets come to rest, the jobs succeeded, the journal kept every record;
        then the scale sets are deleted and nothing of them is left."""
        self.lift_faults()
        await self.at_rest()
        failed = [
            f"{j.runner_name or j.runner_request_id}: {j.result}"
            for j in self.world.github.state.jobs.values()
            if j.result != "succeeded"
        ]
        assert not failed, f"jobs not succeeded (a runner removed while busy fails its job): {failed}"
        # Registering a scale set is not idempotent at the service: a second registration of one (a
        # retried call whose first try had landed) would show as an id beyond the first ones.
        registered = sorted(s.id for s in self.world.github.state.scale_sets.values())
        assert registered == list(range(1, len(self.names) + 1)), f"scale sets registered: {registered}"
        await self.journal_kept()
        for name in self.names:
            await self.retrying(functools.partial(harness.delete, self.kube, ARS, name), f"delete {name}")
        self.did("scale sets deleted")
        await eventually(self.nothing_left, timeout=GONE_TIMEOUT, interval=0.2, what="nothing left")
        assert await self.arcsm.stop() == 0, self.arcsm.failure()
        verified = await verifying.verify(self.arcsm.journal)
        assert verified.records == verified.last_seq - verified.first_seq + 1, verified

    async def at_rest(self) -> None:
        """Wait until every scale set is at rest and every job finished; else fail saying what was not."""
        last: list[str] = []

        async def resting() -> bool:
            found = []
            for name in self.names:
                state, min_runners = await end_state(self.world, self.kube, name)
                if state != EndState.at_rest(min_runners):
                    found.append(f"{name} (minRunners {min_runners}): {state}")
            unfinished = [j for j in self.world.github.state.jobs.values() if j.finish_time is None]
            if unfinished:
                found.append(f"{len(unfinished)} jobs unfinished")
            last[:] = found  # a look the deadline cuts short leaves the one before
            return not found

        try:
            await eventually(resting, timeout=REST_TIMEOUT, interval=0.2, what="every scale set at rest")
        except AssertionError as exc:
            exc.add_note("not at rest: " + "; ".join(last))
            raise

    async def journal_kept(self) -> None:
        """Every record served before a kill is in the journal now, as it was; no seq is missing."""
        problems = journal_problems(self.acknowledged, await self.arcsm.served())
        assert not problems, "; ".join(problems)

    async def nothing_left(self) -> bool:
        objects = [
            *await harness.items(self.kube, ARS),
            *await harness.items(self.kube, ERS),
            *await harness.items(self.kube, ER),
            *await harness.items(self.kube, AL, CONTROLLER_NS),
        ]
        left = [f"{o['kind']}/{o['metadata']['name']}" for o in objects]
        registered = [a.name for a in self.world.github.state.agents.values()]
        scale_sets = [s.name for s in self.world.github.state.scale_sets.values()]
        assert not (left or registered or scale_sets), (
            f"left: {left}; registrations: {registered}; scale sets: {scale_sets}"
        )
        return True

    async def close(self) -> None:
        with contextlib.suppress(Exception):
            await self.arcsm.stop()


async def run(
    world: World,
    directory: Path,
    seed: int,
    *,
    minutes: float | None = None,
    scale_sets: int = 2,
    kills: int = 0,
) -> ChaosRun:
    """One chaos run: the short plan, or steps drawn for ``minutes`` (and until ``kills`` kill -9
    restarts); then the oracle. A failure carries the seed and the steps played."""
    world.github.configure(job_seconds=1.0)
    async with client.ApiClient(world.configuration()) as kube:
        await harness.create_secret(kube)
        chaos = ChaosRun(world, kube, directory, seed, scale_sets=scale_sets)
        if minutes is not None:  # the long run: outages as long as the ones of the issue
            chaos.outage_seconds = (10.0, 30.0)
        try:
            await chaos.begin()
            if minutes is None:
                await chaos.play(chaos.short_plan())
            else:
                await chaos.play_for(minutes * 60, kills=kills)
            await chaos.check()
        except BaseException as exc:
            chaos.note(exc)
            raise
        finally:
            await chaos.close()
    return chaos
