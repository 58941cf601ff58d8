"""One pod on the simulated node: the kubelet's pod worker (``sim.kubelet`` starts one per bound pod).

``PodWorker.serve`` writes the pod's status through the kubelet's node API (``sim.nodeapi``:
``write_pod_status``, ``pods/status`` of that pod's uid) in the order a real kubelet does, each step its
own write (its own resourceVersion and watch event):

1. ``hostIP``/``podIP``/``startTime``, conditions ``Initialized=True``, ``Ready=False``,
   ``ContainersReady=False``, containers waiting ``ContainerCreating`` (phase Pending);
2. for a pod with a container whose runtime runs real processes, its volumes set up on the host
   (``sim.volumes``; a failure is a ``FailedMount`` Event and another try after a back-off, the pod
   staying ContainerCreating);
3. each container started (``Pulled``, after ``Pulling`` for an ``Always`` image, then ``Created`` and
   ``Started`` Events): running (phase Running once none is still waiting to be made), or waiting
   ``CreateContainerConfigError`` (tried again after a back-off), or terminated ``StartError``
   (exit 128); its probes (``sim.probing``) decide ``started`` and ``ready`` and the pod's ``Ready``
   and ``ContainersReady``; without probes a running container is ready at once. A failed liveness or
   startup probe stops the container (``Killing`` Event) and restartPolicy applies;
4. when a container exits: ``terminated`` (exitCode, reason Completed/Error, startedAt/finishedAt);
   with restartPolicy Never (or OnFailure and exit 0) it stays terminated and once every container is,
   the pod gets its terminal phase (Succeeded if all exited 0, else Failed); otherwise it is started
   again (``restartCount + 1``, ``lastState.terminated`` the exit): at once after its first exit, after
   a kubelet's back-off (``sim.crashloops``: 10 s doubling to 5 min by default) after later ones, waiting
   ``CrashLoopBackOff`` meanwhile (with a ``BackOff`` Event);
5. when the pod gets a ``deletionTimestamp``: containers are told to stop (``Killing`` Event) with the pod's
   ``deletionGracePeriodSeconds`` as their grace (``ContainerContext.stopping``/``grace``), given that
   (for process containers) or ``KubeletTiming.stop_timeout`` (for the simulated ones) to exit and then
   killed (exit 143), terminated statuses and the terminal phase are written, and the pod is DELETEd
   with ``gracePeriodSeconds: 0`` and ``preconditions.uid``.

A worker knows its kubelet only as a ``Node`` (what it asks of it: timing, runtimes, files on the host,
Events), so this module does not import ``sim.kubelet``.

Known limits: init containers are reported as completed at once (never run); the back-offs but the
restart one are milliseconds to seconds (``KubeletTiming``); a runtime that raises counts as exit code 1.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from sim import crashloops, errors, nodeevents, runtimes
from sim.containerstates import ZERO_TIME, ContainerState, merge_conditions
from sim.nodeapi import NodeApi, Objects
from sim.probing import TITLES, Probe, Prober
from sim.store import Obj, meta
from sim.timestamps import format_time
from sim.volumes import ClaimPath, PodVolumes, VolumeError

log = logging.getLogger("arcsm.sim.kubelet")

EVICTED_MESSAGE = "The node was low on resource: memory. "
TERMINAL = ("Succeeded", "Failed")  # the phases a pod never leaves


@dataclass(frozen=True)
class KubeletTiming:
    """The kubelet's delays in seconds: milliseconds by default (real kubelets take seconds), but for the
    restart back-off, which is a kubelet's (tests that watch it shrink it)."""

    start: float = 0.005  # bound → first status write (IPs, ContainerCreating)
    run: float = 0.005  # ContainerCreating → Running
    pull_backoff: float = 0.005  # ErrImagePull → ImagePullBackOff
    # The restart back-off (``sim.crashloops``), as a kubelet's: an exited container is restarted at
    # once, a later exit waits ``restart`` seconds, doubling per restart up to ``restart_max``; a
    # container that ran ``restart_reset`` seconds since its last restart starts over.
    restart: float = 10.0
    restart_max: float = 300.0
    restart_reset: float = 600.0
    stop_timeout: float = 1.0  # how long simulated containers get to exit after deletion
    retry: float = 0.2  # first retry of a volume or container that could not be made; doubles
    retry_max: float = 5.0
    volume_resync: float = 10.0  # how often projected volumes are rewritten from their objects

    @property
    def backoff(self) -> crashloops.Backoff:
        return crashloops.Backoff(initial=self.restart, cap=self.restart_max, reset=self.restart_reset)


class Gone(Exception):
    """The pod this worker serves was deleted or replaced."""


class Node(Protocol):
    """What a pod worker asks of its kubelet (``sim.kubelet.Kubelet`` is one)."""

    timing: KubeletTiming
    runtimes: runtimes.Runtimes
    host_ip: str
    claim_path: ClaimPath | None

    def allocate_ip(self) -> str: ...

    def container_id(self) -> str: ...

    def pod_dir(self, uid: str) -> Path: ...

    def claims_root(self) -> Path: ...

    def log_path(self, namespace: str, name: str, uid: str, container: str, restart: int) -> Path: ...

    async def record(
        self, pod: Obj, reason: str, message: str, *, warning: bool = False, container: str = ""
    ) -> None: ...

    def forget(self, uid: str) -> None: ...


def _spec(pod: Obj) -> dict[str, Any]:
    spec = pod.get("spec")
    return spec if isinstance(spec, dict) else {}


def _phase(pod: Obj) -> str:
    status = pod.get("status")
    return str(status.get("phase") or "") if isinstance(status, dict) else ""


class PodWorker:
    def __init__(self, kubelet: Node, api: NodeApi, pod: Obj) -> None:
        m = meta(pod)
        self.kubelet = kubelet
        self.api = api
        self.namespace = str(m["namespace"])
        self.name = str(m["name"])
        self.uid = str(m["uid"])
        spec = _spec(pod)
        self.restart_policy = str(spec.get("restartPolicy") or "Always")
        self.annotations: dict[str, str] = dict(m.get("annotations") or {})
        self.containers = [ContainerState(c) for c in spec.get("containers") or [] if isinstance(c, dict)]
        self.init_containers = [
            ContainerState(c) for c in spec.get("initContainers") or [] if isinstance(c, dict)
        ]
        self.stopping = asyncio.Event()
        self.running = asyncio.Event()
        self.pod_ip = kubelet.allocate_ip()
        self.task: asyncio.Task[None] | None = None
        self.volumes: PodVolumes | None = None
        self._resync: asyncio.Task[None] | None = None

    @property
    def timing(self) -> KubeletTiming:
        return self.kubelet.timing

    # -- the lifecycle ---------------------------------------------------------------------------------

    async def serve(self) -> None:
        try:
            await self._lifecycle()
            # Deleted while the containers were finishing on their own: the pod is terminal now, and
            # a graceful deletion of it still waits for the kubelet.
            pod = self.api.pod(self.namespace, self.name)
            if (
                pod is not None
                and meta(pod).get("uid") == self.uid
                and meta(pod).get("deletionGracePeriodSeconds")
            ):
                await self._delete_now()
        except Gone:
            log.debug("kubelet: pod %s/%s is gone", self.namespace, self.name)
        except errors.ApiError as err:
            log.warning(
                "kubelet: pod %s/%s: %s %s %s", self.namespace, self.name, err.code, err.reason, err.message
            )
        except Exception:
            log.exception("kubelet: serving pod %s/%s failed", self.namespace, self.name)
        finally:
            if self._resync is not None:
                self._resync.cancel()
            await self._kill_all()
            pod = self.api.pod(self.namespace, self.name)
            if pod is None or meta(pod).get("uid") != self.uid:
                self.kubelet.forget(self.uid)

    async def _lifecycle(self) -> None:
        t = self.timing
        if await self._pause(t.start):
            return await self._terminate()
        now = self._now()
        for init in self.init_containers:
            init.state = "terminated"
            init.exit_code = 0
            init.done = True
            init.container_id = self.kubelet.container_id()
            init.terminated = {
                "exitCode": 0,
                "reason": "Completed",
                "startedAt": now,
                "finishedAt": now,
                "containerID": init.container_id,
            }
        await self._write(phase="Pending", sandbox=True)
        fail = self.annotations.get(runtimes.FAIL, "")
        if fail == "ErrImagePull":
            for c in self.containers:
                c.waiting_reason = "ErrImagePull"
                c.waiting_message = (
                    f'failed to pull and unpack image "{c.image}": failed to resolve reference '
                    f'"{c.image}": not found'
                )
            await self._write(phase="Pending", sandbox=True)
            if await self._pause(t.pull_backoff):
                return await self._terminate()
            for c in self.containers:
                c.waiting_reason = "ImagePullBackOff"
                c.waiting_message = f'Back-off pulling image "{c.image}"'
            await self._write(phase="Pending", sandbox=True)
            await self.stopping.wait()
            return await self._terminate()
        if self._needs_host() and await self._mount_volumes():
            return await self._terminate()
        if await self._pause(t.run):
            return await self._terminate()
        for c in self.containers:
            await self._start(c)
        await self._write(phase=self._live_phase(), sandbox=True)
        self.running.set()
        if fail == "Evicted":
            if await self._pause(float(self.annotations.get(runtimes.RUN_SECONDS) or 0)):
                return await self._terminate()
            return await self._evict()
        await self._supervise()

    async def _supervise(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            now = loop.time()
            for c in self.containers:
                if c.running and c.exit is not None and c.exit.done():
                    await self._exited(c, c.exit.result())
                if c.state == "terminated" and not c.done and not c.restart_pending:
                    if self._restarts(c):
                        c.restart_pending = True
                        c.restart_at = now + crashloops.wait(
                            c.backoff, finished=now, now=now, policy=self.timing.backoff
                        )
                    else:
                        c.done = True
            if all(c.done for c in self.containers):
                await self._write(phase=self._terminal_phase(), sandbox=False)
                return
            await self._write(phase=self._live_phase(), sandbox=True)
            now = loop.time()
            due = [c for c in self.containers if c.restart_pending and (c.restart_at or 0.0) <= now]
            if due:
                for c in due:
                    await self._restart(c, now)
                await self._write(phase=self._live_phase(), sandbox=True)
                continue
            waiting = [c for c in self.containers if c.restart_pending and c.state == "terminated"]
            for c in waiting:
                await self._back_off(c)
            if waiting:
                await self._write(phase=self._live_phase(), sandbox=True)
            live: set[asyncio.Future[Any]] = {
                c.exit for c in self.containers if c.running and c.exit is not None
            }
            wakes = [c.retry_at for c in self.containers if c.state == "waiting" and c.retry_at is not None]
            wakes += [c.restart_at for c in self.containers if c.restart_pending and c.restart_at is not None]
            if not live and not wakes:
                return
            timeout = max(0.0, min(wakes) - loop.time()) if wakes else None
            stop: asyncio.Future[Any] = asyncio.ensure_future(self.stopping.wait())
            try:
                await asyncio.wait({*live, stop}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
            finally:
                stop.cancel()
            if self.stopping.is_set():
                return await self._terminate()
            for c in self.containers:
                if c.state == "waiting" and c.retry_at is not None and c.retry_at <= loop.time():
                    await self._start(c)

    def _restarts(self, c: ContainerState) -> bool:
        """Whether restartPolicy has ``c``, which just exited, started again."""
        code = c.exit_code or 0
        return self.restart_policy == "Always" or (self.restart_policy == "OnFailure" and code != 0)

    async def _back_off(self, c: ContainerState) -> None:
        """``c`` exited again within its back-off: report it waiting ``CrashLoopBackOff`` until it is due."""
        assert c.backoff is not None
        names = {"container": c.name, "pod": self.name, "namespace": self.namespace, "uid": self.uid}
        c.state = "waiting"
        c.waiting_reason = crashloops.REASON
        c.waiting_message = crashloops.message(c.backoff.delay, **names)
        await self._event(c, crashloops.EVENT_REASON, crashloops.event_message(**names))

    async def _restart(self, c: ContainerState, now: float) -> None:
        c.backoff = crashloops.restarted(c.backoff, now, self.timing.backoff)
        c.last_terminated = c.terminated
        c.restart_count += 1
        c.restart_pending = False
        c.restart_at = None
        await self._start(c)

    async def _terminate(self) -> None:
        """The pod was deleted: stop the containers, report them terminated, then delete for good."""
        self.stopping.set()
        grace = float(meta(self.api.pod(self.namespace, self.name)).get("deletionGracePeriodSeconds") or 0)
        live = [c for c in self.containers if c.running and c.exit is not None]
        for c in live:
            with contextlib.suppress(Gone):
                reason, message = nodeevents.STOPPING
                text = message.format(name=c.name)
                await self.kubelet.record(self._current(), reason, text, container=c.name)
            self._stop(c, grace)
        if live:
            staged = any(c.staged for c in live)
            budget = self.timing.stop_timeout + (grace if staged else 0.0)
            await asyncio.wait({c.exit for c in live if c.exit is not None}, timeout=budget)
        for c in self.containers:
            if c.running:
                c.finish(runtimes.SIGTERM_EXIT)
                assert c.exit is not None
                await self._exited(c, c.exit.result())
            elif c.backing_off:  # its last run's exit stands
                c.state = "terminated"
            elif c.state == "waiting":
                now = self._now()
                c.state = "terminated"
                c.exit_code = runtimes.SIGTERM_EXIT
                c.terminated = {
                    "exitCode": runtimes.SIGTERM_EXIT,
                    "reason": "Error",
                    "finishedAt": now,
                }
            c.done = True
            c.restart_pending = False
        pod = self._current()
        if _phase(pod) not in TERMINAL:
            await self._write(phase=self._terminal_phase(), sandbox=False)
        await self._delete_now()

    async def _delete_now(self) -> None:
        """The kubelet's last word on a deleted pod: DELETE with grace 0 and a uid precondition (T90)."""
        try:
            await self.api.delete_pod(self.namespace, self.name, self.uid)
        except errors.ApiError as err:
            if err.code not in (404, 409):
                raise

    async def _evict(self) -> None:
        for c in self.containers:
            if c.running:
                c.finish(runtimes.SIGKILL_EXIT, "Error")
                assert c.exit is not None
                await self._exited(c, c.exit.result())
            c.done = True
        await self._write(
            phase="Failed",
            sandbox=False,
            extra={"reason": "Evicted", "message": EVICTED_MESSAGE},
            conditions={"DisruptionTarget": ("True", "TerminationByKubelet", EVICTED_MESSAGE)},
        )

    # -- volumes ---------------------------------------------------------------------------------------

    def _runtime(self, c: ContainerState) -> runtimes.Runtime:
        return self.kubelet.runtimes.resolve(self._current(), c.spec)

    def _needs_host(self) -> bool:
        for c in self.containers:
            runtime = self._runtime(c)
            if isinstance(runtime, runtimes.StagedRuntime) and runtime.host_volumes:
                return True
        return False

    async def _mount_volumes(self) -> bool:
        """Set the pod's volumes up on the host, trying again until they are; True when deleted first."""
        self.volumes = PodVolumes(
            self.api,
            self._current(),
            directory=self.kubelet.pod_dir(self.uid),
            claims=self.kubelet.claim_path,
            claims_root=self.kubelet.claims_root,
            pod_ip=self.pod_ip,
            host_ip=self.kubelet.host_ip,
        )
        delay = self.timing.retry
        while True:
            try:
                await self.volumes.setup()
                break
            except (VolumeError, OSError) as exc:
                await self.kubelet.record(self._current(), "FailedMount", str(exc), warning=True)
            if await self._pause(delay):
                return True
            delay = min(delay * 2, self.timing.retry_max)
        self._resync = asyncio.create_task(
            self._keep_volumes(), name=f"sim-volumes-{self.namespace}/{self.name}"
        )
        return False

    async def _keep_volumes(self) -> None:
        assert self.volumes is not None
        while True:
            due = self.volumes.next_token_refresh()
            wait = min(self.timing.volume_resync, due if due is not None else float("inf"))
            # At least a second: a token that cannot be renewed (its account gone) is not asked for in a loop.
            await asyncio.sleep(max(wait, min(1.0, self.timing.volume_resync)))
            await self.volumes.refresh()

    def _host_files(self, c: ContainerState) -> runtimes.HostFiles:
        assert self.volumes is not None
        run = f"{c.name}-{c.restart_count}"
        return runtimes.HostFiles(
            volumes=dict(self.volumes.mounted),
            log=self.kubelet.log_path(self.namespace, self.name, self.uid, c.name, c.restart_count),
            scratch=self.kubelet.pod_dir(self.uid) / "containers" / run,
        )

    # -- containers ------------------------------------------------------------------------------------

    def _grace(self) -> float:
        return float(_spec(self._current()).get("terminationGracePeriodSeconds") or 30)

    async def _start(self, c: ContainerState) -> None:
        pod = self._current()
        loop = asyncio.get_running_loop()
        runtime = self.kubelet.runtimes.resolve(pod, c.spec)
        staged = isinstance(runtime, runtimes.StagedRuntime)
        stop = asyncio.Event()
        if self.stopping.is_set():
            stop.set()
        host = self._host_files(c) if staged and self.volumes is not None else None
        ctx = runtimes.ContainerContext(
            self.api,
            await self._objects(pod),
            pod,
            c.spec,
            c.restart_count,
            stop,
            grace=self._grace(),
            pod_ip=self.pod_ip,
            host_ip=self.kubelet.host_ip,
            host=host,
            log=self.kubelet.log_path(self.namespace, self.name, self.uid, c.name, c.restart_count),
        )
        c.ctx = ctx
        c.staged = staged
        c.forced_reason = None
        c.retry_at = None
        c.terminated = None
        c.container_id = self.kubelet.container_id()
        for reason, message in nodeevents.pulls(c.spec):
            await self.kubelet.record(pod, reason, message, container=c.name)
        waiter: Any = None
        if isinstance(runtime, runtimes.StagedRuntime):
            try:
                waiter = await runtime.start(ctx)
            except runtimes.ContainerConfigError as exc:
                c.state, c.waiting_reason, c.waiting_message = (
                    "waiting",
                    "CreateContainerConfigError",
                    str(exc),
                )
                c.exit = None
                c.retry_delay = (
                    min(c.retry_delay * 2, self.timing.retry_max) if c.retry_delay else self.timing.retry
                )
                c.retry_at = loop.time() + c.retry_delay
                await self.kubelet.record(pod, "Failed", f"Error: {exc}", warning=True, container=c.name)
                return
            except runtimes.StartError as exc:
                self._start_failed(c, str(exc))
                await self.kubelet.record(pod, "Failed", f"Error: {exc}", warning=True, container=c.name)
                return
            except (OSError, ValueError) as exc:  # the runtime's own trouble: the container did not start
                log.exception(
                    "kubelet: starting container %s of pod %s/%s", c.name, self.namespace, self.name
                )
                self._start_failed(c, f"unable to start container process: {exc}")
                return
        c.exit = loop.create_future()
        c.state = "running"
        c.retry_delay = 0.0
        c.started_at = self._now()
        for reason, message in (nodeevents.CREATED, nodeevents.STARTED):
            await self.kubelet.record(pod, reason, message.format(name=c.name), container=c.name)
        self._start_probes(c)
        c.task = asyncio.create_task(
            self._run_container(c, waiter if waiter is not None else runtime(ctx), c.exit),
            name=f"sim-container-{self.namespace}/{self.name}/{c.name}",
        )

    def _start_failed(self, c: ContainerState, message: str) -> None:
        c.state = "terminated"
        c.exit = None
        c.exit_code = 128
        c.terminated = {
            "exitCode": 128,
            "reason": "StartError",
            "message": message,
            "startedAt": ZERO_TIME,
            "finishedAt": self._now(),
            "containerID": c.container_id,
        }

    async def _run_container(self, c: ContainerState, run: Any, exit_future: asyncio.Future[int]) -> None:
        try:
            code = await run
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("kubelet: container %s of pod %s/%s crashed", c.name, self.namespace, self.name)
            code = 1
        if not exit_future.done():
            exit_future.set_result(int(code))

    async def _exited(self, c: ContainerState, code: int) -> None:
        """Record the end of ``c``'s current run and make sure its runtime task is gone."""
        c.stop_probes()
        if c.task is not None and not c.task.done():
            c.task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await c.task
        c.task = None
        reason = c.forced_reason or (c.ctx.reason if c.ctx is not None else None)
        reason = reason or ("Completed" if code == 0 else "Error")
        c.state = "terminated"
        c.exit_code = code
        c.ready = c.started = False
        c.terminated = {
            "exitCode": code,
            "reason": reason,
            "startedAt": c.started_at,
            "finishedAt": self._now(),
            "containerID": c.container_id,
        }
        if c.ctx is not None and c.ctx.message:
            c.terminated["message"] = c.ctx.message

    async def _kill_all(self) -> None:
        for c in self.containers:
            c.stop_probes()
            if c.task is not None and not c.task.done():
                c.task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await c.task

    def _stop(self, c: ContainerState, grace: float) -> None:
        """Tell ``c``'s current run to stop within ``grace`` seconds."""
        c.stop_probes()
        if c.ctx is not None:
            c.ctx.grace = grace
            c.ctx.stopping.set()

    # -- probes ----------------------------------------------------------------------------------------

    def _start_probes(self, c: ContainerState) -> None:
        startup = Probe.of(c.spec, "startup")
        c.started = startup is None
        c.ready = c.started and Probe.of(c.spec, "readiness") is None
        if startup is not None:
            self._run_probe(c, startup)
        else:
            self._probe_running(c)

    def _probe_running(self, c: ContainerState) -> None:
        for kind in ("liveness", "readiness"):
            probe = Probe.of(c.spec, kind)
            if probe is not None:
                self._run_probe(c, probe)

    def _run_probe(self, c: ContainerState, probe: Probe) -> None:
        prober = Prober(
            probe,
            pod_ip=lambda: self.pod_ip,
            container=c.spec,
            on_result=lambda passed, message: self._probed(c, probe, passed, message),
            on_failure=lambda message: self._event(
                c, "Unhealthy", f"{TITLES[probe.kind]} probe failed: {message}"
            ),
            on_unsupported=lambda: self._event(
                c, "ProbeWarning", f"{TITLES[probe.kind]} probe: {probe.handler} probes are not run; passing"
            ),
        )
        c.probers.append(
            asyncio.create_task(
                prober.run(), name=f"sim-probe-{self.namespace}/{self.name}/{c.name}/{probe.kind}"
            )
        )

    async def _event(self, c: ContainerState, reason: str, message: str) -> None:
        with contextlib.suppress(Gone):
            await self.kubelet.record(self._current(), reason, message, warning=True, container=c.name)

    async def _probed(self, c: ContainerState, probe: Probe, passed: bool, message: str) -> None:
        if not c.running or self.stopping.is_set():
            return
        if probe.kind == "readiness":
            c.ready = passed and c.started
        elif passed:  # startup
            c.started = True
            c.ready = Probe.of(c.spec, "readiness") is None
            self._probe_running(c)
        else:  # a failed liveness or startup probe: the container is restarted (restartPolicy allowing)
            with contextlib.suppress(Gone):
                await self.kubelet.record(
                    self._current(),
                    "Killing",
                    f"Container {c.name} failed {probe.kind} probe, will be restarted",
                    container=c.name,
                )
            grace = probe.termination_grace if probe.termination_grace is not None else self._grace()
            self._stop(c, grace)
            return
        try:
            await self._write(phase=self._live_phase(), sandbox=True)
        except (Gone, errors.ApiError) as exc:
            log.debug("kubelet: pod %s/%s: no status after a probe: %s", self.namespace, self.name, exc)

    # -- status writes ---------------------------------------------------------------------------------

    def _now(self) -> str:
        return format_time(self.api.clock())

    async def _pause(self, seconds: float) -> bool:
        """Wait ``seconds``; True when the pod got a deletionTimestamp meanwhile."""
        if self.stopping.is_set():
            return True
        if seconds <= 0:
            await asyncio.sleep(0)
            return self.stopping.is_set()
        try:
            await asyncio.wait_for(self.stopping.wait(), seconds)
        except TimeoutError:
            return False
        return True

    async def _objects(self, pod: Obj) -> Objects:
        """What ``pod`` refers to, read now (nothing, when the API cannot be reached: the container's
        own lookups then say what is missing)."""
        try:
            return await self.api.objects(pod)
        except (errors.ApiError, OSError) as exc:
            log.info("kubelet: pod %s/%s: reading what it refers to: %s", self.namespace, self.name, exc)
            return {}

    def _current(self) -> Obj:
        pod = self.api.pod(self.namespace, self.name)
        if pod is None or meta(pod).get("uid") != self.uid:
            raise Gone()
        return pod

    def _terminal_phase(self) -> str:
        return "Succeeded" if all(c.exit_code == 0 for c in self.containers) else "Failed"

    def _live_phase(self) -> str:
        """Pending while a container has never run (it could not be made yet), else Running."""
        return "Pending" if any(c.never_ran for c in self.containers) else "Running"

    async def _write(
        self,
        *,
        phase: str,
        sandbox: bool,
        extra: dict[str, Any] | None = None,
        conditions: dict[str, tuple[str, str | None, str | None]] | None = None,
    ) -> None:
        pod = self._current()
        status: dict[str, Any] = dict(pod.get("status") or {})
        now = self._now()
        status["phase"] = phase
        status["hostIP"] = self.kubelet.host_ip
        status["hostIPs"] = [{"ip": self.kubelet.host_ip}]
        status["podIP"] = self.pod_ip
        status["podIPs"] = [{"ip": self.pod_ip}]
        status["startTime"] = status.get("startTime") or now
        unready = [c.name for c in self.containers if not (c.running and c.ready)]
        wanted: dict[str, tuple[str, str | None, str | None]] = {
            "PodReadyToStartContainers": ("True" if sandbox else "False", None, None),
            "Initialized": ("True", None, None),
        }
        if phase == "Succeeded":
            wanted["Ready"] = wanted["ContainersReady"] = ("False", "PodCompleted", None)
        elif unready:
            message = "containers with unready status: [" + " ".join(unready) + "]"
            wanted["Ready"] = wanted["ContainersReady"] = ("False", "ContainersNotReady", message)
        else:
            wanted["Ready"] = wanted["ContainersReady"] = ("True", None, None)
        wanted.update(conditions or {})
        status["conditions"] = merge_conditions(status.get("conditions") or [], wanted, now)
        status["containerStatuses"] = [c.status() for c in self.containers]
        if self.init_containers:
            status["initContainerStatuses"] = [c.status() for c in self.init_containers]
        status["qosClass"] = status.get("qosClass") or "BestEffort"
        status.update(extra or {})
        try:
            await self.api.write_pod_status(pod, status)
        except errors.ApiError as err:
            if err.code in (404, 409):  # gone, or another pod of that name (the uid precondition)
                raise Gone() from err
            raise
