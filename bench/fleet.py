"""Benchmark: a fleet of N scale sets on one controller, against the floor of the same job flow.

For each N of ``--sets`` (default 10,100; the issue's steps are 10,100,300,1000) two runs, each on a
fresh ``arcsm sim`` (the emulated cluster and the fake GitHub and Actions service) in a subprocess:

* **arcsm**: ``arcsm run`` in a subprocess of its own (client QPS and burst raised to 1000, so the client
  limit is not what is measured; ``--http`` for its ``/metrics``). The benchmark creates N Secrets and N
  AutoscalingRunnerSets (minRunners 0, maxRunners ``--max-runners``, a runner template with
  ``restartPolicy: Never`` as the upstream chart has it, one Secret each as N Helm releases would) and
  waits until every one is Running.
* **floor**: ``bench/fleetfloor.py`` in a subprocess, which registers N scale sets, long-polls their
  sessions and creates each runner Pod straight from a JIT config (no journal, no machines), so
  arcsm's figures are ratios to it.

Then the same jobs in both: one per scale set, then more as jobs finish (at most ``--in-flight`` per set
unfinished) until ``--runners`` jobs (default 10 × N) have been queued on the fake, each needing a new
runner (ephemeral, minRunners 0). Every job must run and no runner may be left.

Figures, per N and run: time to all Running (the floor: to every session open); a job's wait, queued →
a runner took it (the fake's own ``queueTime`` and ``runnerAssignTime``), p50 and p99; the controller's
CPU seconds (``/proc/PID/stat`` utime + stime) split at all-Running, and its peak RSS (``VmHWM``); the
emulated world's CPU (its listeners run in it); Kubernetes API requests (the emulator's request log, by
user: the controller's kubeconfig user, and listener pods' service accounts; never the benchmark's own)
and Actions calls (the fake's call log) per scale set during setup and per job after, and the requests
per job by verb and resource (the controller's, the listeners', the floor's); journal records
and bytes (``records.body``, read read-only after the controller stopped, which runs with no size bound
on its journal so retention prunes nothing) per set and per job;
reconciles per job (``controller_runtime_reconcile_total`` from ``/metrics``).

With ``--control-plane real`` each run's world is ``arcsm sim --control-plane real`` instead: kube-apiserver
1.34 with etcd, kube-controller-manager and kube-scheduler (built from Go modules) and one emulated node,
so the controller's figures do not depend on the emulator's speed. A real API server keeps no request
log: the controller's requests are counted from its own ``rest_client_requests_total``, and the
listeners' and the floor's are not counted ("—"); the world's CPU is the ``arcsm sim`` process's (the
node, the listeners and the fake GitHub), not the control plane's.

With ``--resync-period S`` the controller runs with that period, and after all Running the benchmark
waits until every watch has journaled a periodic re-list (its ``sync`` record), sampling the
controller's RSS (``VmRSS``) before, throughout and after that round.

Run from the repository root: ``.venv/bin/python bench/fleet.py [--sets 10,100] [--runners R]
[--job-seconds S] [--control-plane emulated|real] [--resync-period S] [--no-floor]
[--results FILE.json] [--plot FILE.png]``;
``--plot`` needs the ``bench`` extra (matplotlib). With ``--results`` each N's figures are kept in a
file with those of earlier runs, so the steps can be run one at a time and plotted together.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import signal
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from kubernetes_asyncio import client, config
from prometheus_client.parser import text_string_to_metric_families

ROOT = Path(__file__).resolve().parent.parent
ARCSM = str(Path(sys.executable).with_name("arcsm"))
GROUP, VERSION = "actions.github.com", "v1alpha1"
NS, CONTROLLER_NS = "default", "arc-systems"
PAT = "ghp_fleetBenchmarkToken000000000000000001"
RUNNER_IMAGE = "ghcr.io/actions/actions-runner:2.330.0"
BENCH_USER = "fleet-bench"  # the benchmark's own requests, left out of every count
CONTROLLER_USER = "arcsm-sim"  # the user of the kubeconfig `arcsm sim` writes
LISTENER_USERS = "system:serviceaccount:"
UNFINISHED = "available,assigned,running"
POLL = 0.25  # seconds between the benchmark's looks at the world


def clock_ticks() -> int:
    return os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """utime + stime of a live process."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / clock_ticks()


def peak_rss_mb(pid: int) -> float:
    return status_mb(pid, "VmHWM")


def rss_mb(pid: int) -> float:
    return status_mb(pid, "VmRSS")


def status_mb(pid: int, key: str) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{key}:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def eventually(check: Callable[[], Awaitable[bool]], *, timeout: float, what: str) -> float:
    """Wait until ``check()`` holds; the seconds it took. TimeoutError naming ``what`` past the deadline."""
    started = time.monotonic()
    while not await check():
        if time.monotonic() - started > timeout:
            raise TimeoutError(f"{what}: not after {timeout:g} s")
        await asyncio.sleep(POLL)
    return time.monotonic() - started


def stop(process: subprocess.Popen[Any], timeout: float = 30) -> None:
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@dataclass
class Sim:
    process: subprocess.Popen[str]
    kube_url: str
    github_url: str
    kubeconfig: Path
    real: bool = False  # kube-apiserver, not the emulator: no request log, the admin's kubeconfig


@contextlib.contextmanager
def started(
    command: list[str], log: Path, *, read: bool = False, talk: bool = False
) -> Iterator[subprocess.Popen[str]]:
    """``command`` as a subprocess with its output in ``log``; with ``read`` its stdout piped, with
    ``talk`` its stdin and stdout, and closing its stdin is how it is asked to stop (else SIGTERM, as at
    the end anyway)."""
    with open(log, "w") as written:
        stdin = subprocess.PIPE if talk else subprocess.DEVNULL
        stdout = subprocess.PIPE if read or talk else written
        process = subprocess.Popen(command, stdin=stdin, stdout=stdout, stderr=written, text=True, cwd=ROOT)
        try:
            yield process
        finally:
            if talk and process.stdin is not None and process.poll() is None:
                process.stdin.close()
                with contextlib.suppress(subprocess.TimeoutExpired):
                    process.wait(30)
            stop(process)


@contextlib.contextmanager
def simulated(directory: Path, job_seconds: float, real: bool = False) -> Iterator[Sim]:
    kubeconfig = directory / "kubeconfig"
    command = [ARCSM, "sim", "--kubeconfig", str(kubeconfig), "--job-seconds", str(job_seconds)]
    if real:
        command += ["--control-plane", "real"]
    with started(command, directory / "sim.log", read=True) as process:
        assert process.stdout is not None
        urls: dict[str, str] = {}
        for line in process.stdout:
            words = line.split()
            if words[:2] == ["arcsm", "sim:"] and len(words) == 4:
                urls[words[2]] = words[3]
            if "kubeconfig" in urls:
                break
        if "kubeconfig" not in urls:
            raise SystemExit(f"arcsm sim did not start; see {directory / 'sim.log'}")
        yield Sim(process, urls["kubernetes"], urls["github"], kubeconfig, real)


@dataclass
class Counts:
    """What the world and the controller had counted at one moment."""

    at: float
    controller_cpu: float
    sim_cpu: float
    kube: float  # the controller's requests (or the floor's; NaN where not counted)
    listeners: float
    logged: int  # the length of the emulator's request log (everyone's)
    actions: int
    reconciles: float = 0.0


@dataclass
class Result:
    """One run's figures (arcsm or the floor) at one N."""

    mode: str
    sets: int
    jobs: int
    running_s: float = float("nan")
    waits: list[float] = field(default_factory=list)
    succeeded: int = 0
    left: int = 0
    setup: Counts | None = None
    end: Counts | None = None
    start: Counts | None = None
    peak_rss: float = float("nan")
    # With --resync-period: RSS at all Running, its highest sample while every watch re-listed once
    # after that, and RSS once they all had (MB); the seconds that round took.
    resync: tuple[float, float, float, float] | None = None
    journal: tuple[int, int, int, int] | None = None  # records and bytes: setup, jobs
    # Requests during the jobs by (who, verb, resource): who is "controller" (or the floor) or "listeners".
    by_verb: dict[tuple[str, str, str], int] = field(default_factory=dict)
    error: str = ""

    def complete(self) -> bool:
        """Every job ran and no runner is left."""
        return not self.error and self.succeeded == self.jobs and self.left == 0

    def figures(self) -> dict[str, float]:
        assert self.start is not None and self.setup is not None and self.end is not None
        s, a, e, n, r = self.start, self.setup, self.end, self.sets, max(self.jobs, 1)
        out = {
            "time to all Running (s)": self.running_s,
            "job wait p50 (s)": percentile(self.waits, 50),
            "job wait p99 (s)": percentile(self.waits, 99),
            "controller CPU, setup (s)": a.controller_cpu - s.controller_cpu,
            "controller CPU, jobs (s)": e.controller_cpu - a.controller_cpu,
            "controller peak RSS (MB)": self.peak_rss,
            "emulated world CPU (s)": e.sim_cpu - s.sim_cpu,
            "API requests per set": (a.kube - s.kube) / n,
            "API requests per job": (e.kube - a.kube) / r,
            "listener API requests per job": (e.listeners - a.listeners) / r,
            "Actions calls per set": (a.actions - s.actions) / n,
            "Actions calls per job": (e.actions - a.actions) / r,
        }
        if self.mode == "arcsm":
            out["reconciles per set"] = (a.reconciles - s.reconciles) / n
            out["reconciles per job"] = (e.reconciles - a.reconciles) / r
        if self.journal is not None:
            records_setup, bytes_setup, records_jobs, bytes_jobs = self.journal
            out["journal records per set"] = records_setup / n
            out["journal records per job"] = records_jobs / r
            out["journal KB per set"] = bytes_setup / n / 1024
            out["journal KB per job"] = bytes_jobs / r / 1024
        if self.resync is not None:
            running, highest, after, seconds = self.resync
            out["controller RSS at all Running (MB)"] = running
            out["controller RSS, highest while every watch resynced (MB)"] = highest
            out["controller RSS after every watch resynced (MB)"] = after
            out["time for every watch to resync (s)"] = seconds
        out["jobs run"] = self.succeeded
        out["runners left"] = self.left
        return out


def percentile(values: list[float], p: float) -> float:
    if not values:
        return float("nan")
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[int(p) - 1]


class World:
    """The benchmark's view of one ``arcsm sim``: its hooks, and a Kubernetes client of its own user."""

    def __init__(self, sim: Sim, http: httpx.AsyncClient, kube: client.ApiClient) -> None:
        self.sim = sim
        self.http = http
        self.kube = kube

    @classmethod
    @contextlib.asynccontextmanager
    async def of(cls, sim: Sim) -> AsyncIterator[World]:
        configuration = client.Configuration(host=sim.kube_url)
        if sim.real:  # the admin's client certificate; what it sends is not counted on a real server
            await config.load_kube_config(config_file=str(sim.kubeconfig), client_configuration=configuration)
        else:
            configuration.api_key = {"BearerToken": BENCH_USER}
            configuration.api_key_prefix = {"BearerToken": "Bearer"}
        async with httpx.AsyncClient(timeout=120) as http, client.ApiClient(configuration) as kube:
            yield cls(sim, http, kube)

    async def request_log(self) -> list[dict[str, Any]]:
        if self.sim.real:
            return []
        logged: list[dict[str, Any]] = (await self.http.get(f"{self.sim.kube_url}/_sim/requests")).json()
        return logged

    async def requests(self) -> tuple[int, int, int]:
        """(the controller's requests, the listeners', everyone's) the emulator has logged."""
        logged = await self.request_log()
        users = [r.get("user") or "" for r in logged]
        controller = sum(u == CONTROLLER_USER for u in users)
        return controller, sum(u.startswith(LISTENER_USERS) for u in users), len(logged)

    async def actions_calls(self) -> int:
        return len((await self.http.get(f"{self.sim.github_url}/_sim/calls")).json())

    async def scale_set_ids(self) -> dict[str, int]:
        state = (await self.http.get(f"{self.sim.github_url}/_sim/state")).json()
        return {s["name"]: s["id"] for s in state["scaleSets"]}

    async def jobs(self, states: str = "") -> list[dict[str, Any]]:
        query = {"state": states} if states else {}
        found: list[dict[str, Any]] = (
            await self.http.get(f"{self.sim.github_url}/_sim/jobs", params=query)
        ).json()
        return found

    async def queue(self, scale_set_id: int) -> None:
        resp = await self.http.post(
            f"{self.sim.github_url}/_sim/jobs", json={"scaleSetId": scale_set_id, "count": 1}
        )
        resp.raise_for_status()

    async def agents(self) -> int:
        state = (await self.http.get(f"{self.sim.github_url}/_sim/state")).json()
        return len(state["runners"])

    async def runner_pods(self) -> int:
        return len((await client.CoreV1Api(self.kube).list_namespaced_pod(NS)).items)


async def gathered(limit: int, work: list[Awaitable[Any]]) -> list[Any]:
    gate = asyncio.Semaphore(limit)

    async def one(w: Awaitable[Any]) -> Any:
        async with gate:
            return await w

    return await asyncio.gather(*(one(w) for w in work))


async def run_jobs(world: World, names: list[str], total: int, in_flight: int, timeout: float) -> None:
    """One job per scale set, then one more for a set each time one of its jobs finishes, until
    ``total`` were queued; returns once every job has finished."""
    ids = await world.scale_set_ids()
    scale_sets = [ids[name] for name in names]
    queued = 0
    started = time.monotonic()
    while True:
        unfinished: dict[int, int] = dict.fromkeys(scale_sets, 0)
        for job in await world.jobs(UNFINISHED):
            unfinished[job["scaleSetId"]] = unfinished.get(job["scaleSetId"], 0) + 1
        if queued >= total and not any(unfinished.values()):
            return
        wanted: list[int] = []
        for scale_set in scale_sets:
            room = in_flight - unfinished[scale_set]
            while room > 0 and queued + len(wanted) < total:
                wanted.append(scale_set)
                room -= 1
        await gathered(32, [world.queue(s) for s in wanted])
        queued += len(wanted)
        if time.monotonic() - started > timeout:
            raise TimeoutError(f"jobs: {queued} of {total} queued, {sum(unfinished.values())} unfinished")
        await asyncio.sleep(POLL)


async def metric_total(port: int, http: httpx.AsyncClient, family: str) -> float:
    """The sum of every ``<family>_total`` sample the controller's ``/metrics`` serves now."""
    text = (await http.get(f"http://127.0.0.1:{port}/metrics")).text
    return sum(
        sample.value
        for found in text_string_to_metric_families(text)
        if found.name == family
        for sample in found.samples
        if sample.name == f"{family}_total"
    )


async def counts(world: World, controller: int, port: int | None) -> Counts:
    kube, listeners, logged = await world.requests()
    reconciles = 0.0
    if port is not None:
        reconciles = await metric_total(port, world.http, "controller_runtime_reconcile")
    if world.sim.real:  # no request log: the controller's own count, the others' unknown
        kube = float("nan") if port is None else await metric_total(port, world.http, "rest_client_requests")
        listeners = float("nan")
    return Counts(
        at=time.monotonic(),
        controller_cpu=cpu_seconds(controller),
        sim_cpu=cpu_seconds(world.sim.process.pid),
        kube=kube,
        listeners=listeners,
        logged=logged,
        actions=await world.actions_calls(),
        reconciles=reconciles,
    )


def resource(path: str) -> str:
    """The resource (and subresource) a Kubernetes API path names: ``pods``, ``pods/status``, ..."""
    parts = [p for p in path.split("/") if p]
    rest = parts[2:] if parts[:1] == ["api"] else parts[3:]
    if rest[:1] == ["namespaces"] and len(rest) >= 3:
        rest = rest[2:]
    return "/".join(rest[:1] + rest[2:3]) or path


async def requests_by_verb(world: World, since: int, until: int) -> dict[tuple[str, str, str], int]:
    """The requests logged between two lengths of the log, by (who, verb, resource)."""
    found: dict[tuple[str, str, str], int] = {}
    for r in (await world.request_log())[since:until]:
        user = r.get("user") or ""
        who = (
            "controller"
            if user == CONTROLLER_USER
            else "listeners"
            if user.startswith(LISTENER_USERS)
            else ""
        )
        if who:
            key = (who, str(r["verb"]), resource(str(r["path"])))
            found[key] = found.get(key, 0) + 1
    return found


def scale_set_body(sim: Sim, name: str, max_runners: int) -> dict[str, Any]:
    return {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": "AutoscalingRunnerSet",
        "metadata": {"name": name, "namespace": NS},
        "spec": {
            "githubConfigUrl": sim.github_url + "/org",
            "githubConfigSecret": f"{name}-github",
            "minRunners": 0,
            "maxRunners": max_runners,
            "template": {
                "spec": {"restartPolicy": "Never", "containers": [{"name": "runner", "image": RUNNER_IMAGE}]}
            },
        },
    }


async def create_scale_sets(world: World, names: list[str], max_runners: int) -> None:
    core, custom = client.CoreV1Api(world.kube), client.CustomObjectsApi(world.kube)

    async def one(name: str) -> None:
        secret = {
            "metadata": {"name": f"{name}-github", "namespace": NS},
            "stringData": {"github_token": PAT},
        }
        await core.create_namespaced_secret(NS, secret)
        await custom.create_namespaced_custom_object(
            GROUP, VERSION, NS, "autoscalingrunnersets", scale_set_body(world.sim, name, max_runners)
        )

    await gathered(32, [one(n) for n in names])


async def all_running(world: World, count: int) -> bool:
    listed = await client.CustomObjectsApi(world.kube).list_namespaced_custom_object(
        GROUP, VERSION, NS, "autoscalingrunnersets"
    )
    phases = [(item.get("status") or {}).get("phase") for item in listed["items"]]
    return len(phases) == count and all(p == "Running" for p in phases)


async def runners_left(world: World, with_resources: bool) -> dict[str, int]:
    """What is left of the runners, by what it is."""
    left = {"runner Pods": await world.runner_pods(), "registrations": await world.agents()}
    if with_resources:
        listed = await client.CustomObjectsApi(world.kube).list_namespaced_custom_object(
            GROUP, VERSION, NS, "ephemeralrunners"
        )
        left["EphemeralRunners"] = len(listed["items"])
    return left


async def settle(world: World, result: Result, *, with_resources: bool) -> None:
    """Wait (a while) for every runner to go, then read the jobs' outcomes and waits."""

    async def gone() -> bool:
        return not any((await runners_left(world, with_resources)).values())

    with contextlib.suppress(TimeoutError):
        await eventually(gone, timeout=120, what="no runner left")
    left = await runners_left(world, with_resources)
    result.left = sum(left.values())
    if result.left:
        described = ", ".join(f"{n} {what}" for what, n in left.items())
        result.error = f"{result.error} left: {described}".strip()
    jobs = await world.jobs()
    result.succeeded = sum(j["result"] == "succeeded" for j in jobs)
    result.waits = [j["runnerAssignTime"] - j["queueTime"] for j in jobs if j["runnerAssignTime"] is not None]


def journal_growth(path: Path, boundary: int) -> tuple[int, int, int, int]:
    """Records and body bytes up to seq ``boundary`` and after it, read-only. Retention must not have
    pruned any record (the controller runs with no size bound): what is counted is what was appended."""
    with contextlib.closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as db:
        pruned = db.execute("SELECT raw, history FROM horizons").fetchone()
        if any(pruned):
            raise RuntimeError(f"retention pruned journal records (horizons {pruned}): growth undercounted")
        before = db.execute(
            "SELECT count(*), coalesce(sum(length(body)), 0) FROM records WHERE seq <= ?", (boundary,)
        ).fetchone()
        after = db.execute(
            "SELECT count(*), coalesce(sum(length(body)), 0) FROM records WHERE seq > ?", (boundary,)
        ).fetchone()
    return int(before[0]), int(before[1]), int(after[0]), int(after[1])


def resynced_scopes(path: Path, after: int) -> tuple[set[tuple[str, str]], set[tuple[str, str]]]:
    """The (kind, namespace) of every watch that listed at all, and of those that journaled a periodic
    re-list after seq ``after`` (their ``sync`` records), read-only."""
    query = (
        "SELECT DISTINCT kind, namespace FROM records WHERE type = 'sync' AND seq > ? "
        "AND json_extract(body, '$.reason') = ?"
    )
    with contextlib.closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as db:
        listed = {(k, n) for k, n in db.execute(query, (0, "start"))}
        resynced = {(k, n) for k, n in db.execute(query, (after, "resync"))}
    return listed, resynced


async def resync_round(path: Path, pid: int, after: int, timeout: float) -> tuple[float, float, float, float]:
    """Wait until every watch has re-listed once after seq ``after``, sampling the controller's RSS."""
    running = highest = rss_mb(pid)

    async def done() -> bool:
        nonlocal highest
        highest = max(highest, rss_mb(pid))
        listed, resynced = resynced_scopes(path, after)
        return bool(listed) and listed <= resynced

    seconds = await eventually(done, timeout=timeout, what="every watch re-listed")
    return running, highest, rss_mb(pid), seconds


def journal_end(path: Path) -> int:
    with contextlib.closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as db:
        return int(db.execute("SELECT coalesce(max(seq), 0) FROM records").fetchone()[0])


async def arcsm(directory: Path, args: argparse.Namespace, sets: int, jobs: int) -> Result:
    result = Result("arcsm", sets, jobs)
    names = [f"fleet-{i}" for i in range(sets)]
    journal, port = directory / "journal.db", free_port()
    boundary = 0
    with simulated(directory, args.job_seconds, args.control_plane == "real") as sim:
        command = [
            ARCSM, "run", "--journal", str(journal), "--kubeconfig", str(sim.kubeconfig),
            "--namespace", NS, "--controller-namespace", CONTROLLER_NS, "--qps", "1000", "--burst", "1000",
            "--http", f"127.0.0.1:{port}", "--log-level", "warn", "--log-format", "json",
            # No size bound on the journal: at N = 1,000 its footprint passes the default 1 GiB and
            # retention would prune observed records, so the growth per job could not be counted.
            "--journal-retain-bytes", "0",
        ]  # fmt: skip
        if args.resync_period:
            command += ["--resync-period", str(args.resync_period)]
        with started(command, directory / "arcsm.log") as controller:
            async with World.of(sim) as world:

                async def healthy() -> bool:
                    with contextlib.suppress(httpx.HTTPError):
                        return (await world.http.get(f"http://127.0.0.1:{port}/healthz")).is_success
                    return False

                await eventually(healthy, timeout=120, what="arcsm run serving")
                result.start = await counts(world, controller.pid, port)
                try:
                    await create_scale_sets(world, names, args.max_runners)
                    await eventually(
                        lambda: all_running(world, sets), timeout=args.timeout, what="all Running"
                    )
                    result.running_s = time.monotonic() - result.start.at
                    result.setup = await counts(world, controller.pid, port)
                    boundary = journal_end(journal)
                    if args.resync_period:
                        result.resync = await resync_round(journal, controller.pid, boundary, args.timeout)
                    await run_jobs(world, names, jobs, args.in_flight, args.timeout)
                except TimeoutError as exc:
                    result.error = str(exc)
                    boundary = boundary or journal_end(journal)
                    result.setup = result.setup or await counts(world, controller.pid, port)
                await settle(world, result, with_resources=True)
                result.end = await counts(world, controller.pid, port)
                result.by_verb = await requests_by_verb(world, result.setup.logged, result.end.logged)
                result.peak_rss = peak_rss_mb(controller.pid)
    result.journal = journal_growth(journal, boundary)
    return result


async def floor(directory: Path, args: argparse.Namespace, sets: int, jobs: int) -> Result:
    result = Result("floor", sets, jobs)
    names = [f"fleet-{i}" for i in range(sets)]
    with simulated(directory, args.job_seconds, args.control_plane == "real") as sim:
        command = [
            sys.executable, str(ROOT / "bench" / "fleetfloor.py"), "--kubeconfig", str(sim.kubeconfig),
            "--config-url", sim.github_url + "/org", "--token", PAT, "--sets", str(sets),
            "--max-runners", str(args.max_runners),
        ]  # fmt: skip
        log = directory / "floor.log"
        with started(command, log, talk=True) as process:
            assert process.stdin is not None and process.stdout is not None
            async with World.of(sim) as world:
                if (await asyncio.to_thread(process.stdout.readline)).strip() != "started":
                    raise SystemExit(f"the floor did not start; see {log}")
                result.start = await counts(world, process.pid, None)
                process.stdin.write("go\n")
                process.stdin.flush()
                ready = await asyncio.to_thread(process.stdout.readline)
                if not ready.startswith("ready "):
                    raise SystemExit(f"the floor did not register its scale sets; see {log}")
                result.running_s = float(json.loads(ready.split(" ", 1)[1])["seconds"])
                result.setup = await counts(world, process.pid, None)
                try:
                    await run_jobs(world, names, jobs, args.in_flight, args.timeout)
                except TimeoutError as exc:
                    result.error = str(exc)
                await settle(world, result, with_resources=False)
                result.end = await counts(world, process.pid, None)
                result.by_verb = await requests_by_verb(world, result.setup.logged, result.end.logged)
                result.peak_rss = peak_rss_mb(process.pid)
    return result


def number(value: float) -> str:
    if value != value:  # NaN
        return "—"
    if value == int(value) and abs(value) >= 10:
        return f"{int(value):,}"
    return f"{value:,.3g}" if abs(value) < 100 else f"{value:,.0f}"


def table(ours: Result, base: Result) -> str:
    mine, theirs = ours.figures(), base.figures()
    lines = [
        f"**N = {ours.sets}**, {ours.jobs:,} jobs ({ours.jobs / ours.sets:g} per set)",
        "",
        "| figure | arcsm | floor | arcsm ÷ floor |",
        "|---|---|---|---|",
    ]
    for name, value in mine.items():
        other = theirs.get(name, float("nan"))
        ratio = value / other if other == other and other not in (0, 0.0) else float("nan")
        lines.append(f"| {name} | {number(value)} | {number(other)} | {number(ratio)} |")
    for r in (ours, base):
        if not r.complete():
            lines.append(f"\n{r.mode}: {r.succeeded} of {r.jobs} jobs run, {r.left} runners left. {r.error}")
    return "\n".join(lines)


def solo_table(ours: Result) -> str:
    """arcsm's figures alone (``--no-floor``)."""
    lines = [
        f"**N = {ours.sets}**, {ours.jobs:,} jobs ({ours.jobs / ours.sets:g} per set), no floor run",
        "",
        "| figure | arcsm |",
        "|---|---|",
        *(f"| {name} | {number(value)} |" for name, value in ours.figures().items()),
    ]
    if not ours.complete():
        lines.append(f"\n{ours.succeeded} of {ours.jobs} jobs run, {ours.left} runners left. {ours.error}")
    return "\n".join(lines)


def verb_table(ours: Result, base: Result) -> str:
    """Kubernetes requests per job by verb and resource: the controller's, its listeners', the floor's."""
    rows = sorted(
        {key[1:] for r in (ours, base) for key in r.by_verb},
        key=lambda vr: (
            -sum(r.by_verb.get((w, *vr), 0) for r in (ours, base) for w in ("controller", "listeners"))
        ),
    )
    if not rows:  # the real control plane: no request log to count them in
        return "Requests per job by verb and resource: not counted on this world (no request log)."
    jobs, floor_jobs = max(ours.jobs, 1), max(base.jobs, 1)
    lines = [
        "| requests per job | arcsm controller | arcsm listeners | floor |",
        "|---|---|---|---|",
    ]
    for verb, res in rows:
        mine = ours.by_verb.get(("controller", verb, res), 0) / jobs
        listeners = ours.by_verb.get(("listeners", verb, res), 0) / jobs
        theirs = base.by_verb.get(("controller", verb, res), 0) / floor_jobs
        if max(mine, listeners, theirs) < 0.005:
            continue  # a few requests over the whole run (the watches, say): not a per-job cost
        lines.append(f"| {verb} {res} | {mine:.2f} | {listeners:.2f} | {theirs:.2f} |")
    return "\n".join(lines)


Figures = dict[str, float]


def saved(path: Path | None, results: list[tuple[Result, Result]]) -> dict[int, tuple[Figures, Figures]]:
    """Every N's figures (arcsm's, the floor's): those ``path`` holds from earlier runs, with this run's
    (which replace an earlier N's) written back, so steps run one at a time plot together."""
    kept: dict[int, tuple[Figures, Figures]] = {}
    if path is not None and path.exists():
        kept = {int(n): (pair["arcsm"], pair["floor"]) for n, pair in json.loads(path.read_text()).items()}
    kept.update({ours.sets: (ours.figures(), base.figures()) for ours, base in results})
    if path is not None:
        body = {str(n): {"arcsm": ours, "floor": base} for n, (ours, base) in sorted(kept.items())}
        path.write_text(json.dumps(body, indent=1) + "\n")
    return dict(sorted(kept.items()))


def plot(path: Path, results: dict[int, tuple[Figures, Figures]]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    first = next(iter(results.values()))[0]
    names = [n for n in first if n not in ("jobs run", "runners left")]
    columns = 4
    rows = (len(names) + columns - 1) // columns
    figure, axes = plt.subplots(rows, columns, figsize=(4 * columns, 3 * rows), squeeze=False)
    sets = list(results)
    for ax, name in zip(axes.flat, names, strict=False):
        ax.plot(sets, [ours.get(name, float("nan")) for ours, _ in results.values()], "o-", label="arcsm")
        floor_values = [base.get(name, float("nan")) for _, base in results.values()]
        if any(v == v for v in floor_values):
            ax.plot(sets, floor_values, "s--", label="floor")
        ax.set_title(name, fontsize=9)
        ax.set_xscale("log")
        ax.set_xlabel("scale sets")
        ax.legend(fontsize=7)
    for ax in list(axes.flat)[len(names) :]:
        ax.set_visible(False)
    figure.tight_layout()
    figure.savefig(path, dpi=100)


async def main(args: argparse.Namespace) -> int:
    """Print a table per N; 1 when a run left a job not run or a runner behind."""
    results: list[tuple[Result, Result]] = []
    alone: list[Result] = []  # runs with --no-floor: printed, neither kept nor plotted
    with contextlib.ExitStack() as stack:
        if args.keep is None:
            tmp = stack.enter_context(tempfile.TemporaryDirectory(prefix="fleet-"))
        else:
            args.keep.mkdir(parents=True, exist_ok=True)
            tmp = str(tempfile.mkdtemp(prefix="fleet-", dir=args.keep))
            print(f"runs kept in {tmp}", file=sys.stderr)
        for sets in args.sets:
            jobs = args.runners if args.runners else 10 * sets
            runs: dict[str, Result] = {}
            modes = (("arcsm", arcsm), ("floor", floor)) if args.floor else (("arcsm", arcsm),)
            for mode, run in modes:
                directory = Path(tmp) / f"{sets}-{mode}"
                directory.mkdir()
                print(f"N = {sets}: {mode} ...", file=sys.stderr, flush=True)
                runs[mode] = await run(directory, args, sets, jobs)
            if not args.floor:
                print(solo_table(runs["arcsm"]) + "\n", flush=True)
                alone.append(runs["arcsm"])
                continue
            results.append((runs["arcsm"], runs["floor"]))
            print(table(runs["arcsm"], runs["floor"]) + "\n", flush=True)
            print(verb_table(runs["arcsm"], runs["floor"]) + "\n", flush=True)
    every = saved(args.results, results)
    if args.plot is not None and every:
        plot(args.plot, every)
        print(f"plot: {args.plot}", file=sys.stderr)
    ran = [*alone, *(r for pair in results for r in pair)]
    return 0 if all(r.complete() for r in ran) else 1


def sets_list(value: str) -> list[int]:
    return [int(v) for v in value.split(",") if v]


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--sets", type=sets_list, default=[10, 100], help="N per step (default 10,100)")
    parser.add_argument("--runners", type=int, default=0, help="jobs over the run, each a runner (10 × N)")
    parser.add_argument("--in-flight", type=int, default=1, help="unfinished jobs per set at most (1)")
    parser.add_argument("--max-runners", type=int, default=10, help="maxRunners of each set (10)")
    parser.add_argument("--job-seconds", type=float, default=1.0, help="how long a job runs (1)")
    parser.add_argument("--timeout", type=float, default=1800.0, help="seconds per phase at most (1800)")
    parser.add_argument(
        "--control-plane",
        choices=("emulated", "real"),
        default="emulated",
        help="the world of each run: arcsm sim's emulator (default) or the real control plane",
    )
    parser.add_argument(
        "--resync-period",
        type=float,
        default=0.0,
        help="pass this --resync-period to arcsm run, and after all Running wait until every watch has "
        "re-listed once, sampling the controller's RSS (default: arcsm's own period, not waited for)",
    )
    parser.add_argument(
        "--floor",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="run the floor too (default); with --no-floor arcsm's figures are printed alone, not kept",
    )
    parser.add_argument("--plot", type=Path, default=None, help="draw every figure against N into this PNG")
    parser.add_argument(
        "--results",
        type=Path,
        default=None,
        help="keep each N's figures in this JSON file, with those of earlier runs, and plot them all "
        "(--sets '' only plots)",
    )
    parser.add_argument(
        "--keep",
        type=Path,
        default=None,
        help="keep each run's journal, kubeconfig and logs in a new folder under this one",
    )
    sys.exit(asyncio.run(main(parser.parse_args())))
