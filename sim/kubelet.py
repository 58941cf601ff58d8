"""The simulated kubelet of node ``sim-node-1`` (apiserver-semantics.md §5, S60).

``Kubelet`` serves the pods bound to its node, one supervised task per pod, and writes their status
through ``update(..., subresource="status")`` in the order a real kubelet does, each step its own write
(its own resourceVersion and watch event):

1. ``hostIP``/``podIP``/``startTime``, conditions ``Initialized=True``, ``Ready=False``,
   ``ContainersReady=False``, containers waiting ``ContainerCreating`` (phase Pending);
2. containers running, ``Ready=True``, phase Running;
3. when a container exits: ``terminated`` (exitCode, reason Completed/Error, startedAt/finishedAt);
   with restartPolicy Never (or OnFailure and exit 0) it stays terminated and once every container is,
   the pod gets its terminal phase (Succeeded if all exited 0, else Failed); otherwise, after a short
   back-off, ``restartCount + 1`` and running again;
4. when the pod gets a ``deletionTimestamp``: containers are told to stop (``ContainerContext.stopping``),
   given ``KubeletTiming.stop_timeout`` to exit and then killed (exit 143), terminated statuses and the
   terminal phase are written, and the pod is DELETEd with ``gracePeriodSeconds: 0`` and
   ``preconditions.uid``. Unbound and terminal pods are removed by the API server itself (S39).

What runs in a container is pluggable (``sim.runtimes``: runtimes by image or name, and the
``sim.arcsm.io/*`` annotations the default runtime and the failure modes follow); pods get to the node
through ``sim.scheduling``. Tests finish containers on demand with
``Kubelet.complete(namespace, name, exit_code)``.

Known limits: no node object, resources, probes, volumes or images; init containers are reported as
completed at once; a runtime that raises counts as exit code 1; the restart back-off is milliseconds
(``KubeletTiming``), never real minutes.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import hashlib
import logging
import random
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sim import errors, runtimes, scheduling
from sim.apiserver import ApiServer, format_time
from sim.kinds import Kind
from sim.store import Event, Obj, ObjectKey
from sim.workqueue import meta

log = logging.getLogger("arcsm.sim.kubelet")

HOST_IP = "192.168.49.2"
EVICTED_MESSAGE = "The node was low on resource: memory. "
# Conditions the kubelet owns, in the order it lists them.
KUBELET_CONDITIONS = ("PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady")


def _pods(api: ApiServer) -> Kind:
    kind = api.registry.get("", "v1", "pods")
    assert kind is not None
    return kind


def _spec(pod: Obj) -> dict[str, Any]:
    spec = pod.get("spec")
    return spec if isinstance(spec, dict) else {}


def _phase(pod: Obj) -> str:
    status = pod.get("status")
    return str(status.get("phase") or "") if isinstance(status, dict) else ""


@dataclass(frozen=True)
class KubeletTiming:
    """The kubelet's delays in seconds (milliseconds by default; real kubelets take seconds)."""

    start: float = 0.005  # bound → first status write (IPs, ContainerCreating)
    run: float = 0.005  # ContainerCreating → Running
    pull_backoff: float = 0.005  # ErrImagePull → ImagePullBackOff
    restart: float = 0.01  # first restart back-off; doubles per restart up to restart_max
    restart_max: float = 1.0
    stop_timeout: float = 1.0  # how long containers get to exit after deletion before they are killed


class _Gone(Exception):
    """The pod this worker serves was deleted or replaced."""


@dataclass(eq=False)
class _Container:
    spec: Obj
    state: str = "waiting"  # waiting, running, terminated
    waiting_reason: str = "ContainerCreating"
    waiting_message: str = ""
    restart_count: int = 0
    done: bool = False  # terminated for good (no restart will follow)
    exit_code: int | None = None
    started_at: str | None = None
    terminated: dict[str, Any] | None = None
    last_terminated: dict[str, Any] | None = None
    container_id: str = ""
    ctx: runtimes.ContainerContext | None = None
    task: asyncio.Task[None] | None = None
    exit: asyncio.Future[int] | None = None
    forced_reason: str | None = None

    @property
    def name(self) -> str:
        return str(self.spec.get("name", ""))

    @property
    def image(self) -> str:
        return str(self.spec.get("image", ""))

    @property
    def running(self) -> bool:
        return self.state == "running"

    def finish(self, code: int, reason: str | None = None) -> bool:
        """Make the current run exit with ``code`` (a test's ``complete`` or the kubelet killing it)."""
        if self.exit is None or self.exit.done():
            return False
        self.forced_reason = reason
        self.exit.set_result(code)
        return True

    def status(self) -> dict[str, Any]:
        state: dict[str, Any]
        if self.state == "running":
            state = {"running": {"startedAt": self.started_at}}
        elif self.state == "terminated" and self.terminated is not None:
            state = {"terminated": self.terminated}
        else:
            waiting: dict[str, Any] = {"reason": self.waiting_reason}
            if self.waiting_message:
                waiting["message"] = self.waiting_message
            state = {"waiting": waiting}
        out: dict[str, Any] = {
            "name": self.name,
            "state": state,
            "lastState": {"terminated": self.last_terminated} if self.last_terminated else {},
            "ready": self.state == "running",
            "restartCount": self.restart_count,
            "image": self.image,
            "imageID": "",
            "started": self.state == "running",
        }
        if self.container_id:
            out["containerID"] = self.container_id
            digest = hashlib.sha256(self.image.encode()).hexdigest()
            out["imageID"] = f"{runtimes.image_repository(self.image)}@sha256:{digest}"
        return out


class _PodWorker:
    def __init__(self, kubelet: Kubelet, api: ApiServer, pod: Obj) -> None:
        m = meta(pod)
        self.kubelet = kubelet
        self.api = api
        self.kind = _pods(api)
        self.namespace = str(m["namespace"])
        self.name = str(m["name"])
        self.uid = str(m["uid"])
        spec = _spec(pod)
        self.restart_policy = str(spec.get("restartPolicy") or "Always")
        self.annotations: dict[str, str] = dict(m.get("annotations") or {})
        self.containers = [_Container(c) for c in spec.get("containers") or [] if isinstance(c, dict)]
        self.init_containers = [
            _Container(c) for c in spec.get("initContainers") or [] if isinstance(c, dict)
        ]
        self.stopping = asyncio.Event()
        self.running = asyncio.Event()
        self.pod_ip = kubelet.allocate_ip()
        self.task: asyncio.Task[None] | None = None

    @property
    def key(self) -> ObjectKey:
        return ("", "pods", self.namespace, self.name)

    @property
    def timing(self) -> KubeletTiming:
        return self.kubelet.timing

    # -- the lifecycle ---------------------------------------------------------------------------------

    async def serve(self) -> None:
        try:
            await self._lifecycle()
            # Deleted while the containers were finishing on their own: the pod is terminal now, and
            # a graceful deletion of it still waits for the kubelet.
            pod = self.api.store.get(self.key)
            if (
                pod is not None
                and meta(pod).get("uid") == self.uid
                and meta(pod).get("deletionGracePeriodSeconds")
            ):
                self._delete_now()
        except _Gone:
            log.debug("kubelet: pod %s/%s is gone", self.namespace, self.name)
        except errors.ApiError as err:
            log.warning(
                "kubelet: pod %s/%s: %s %s %s", self.namespace, self.name, err.code, err.reason, err.message
            )
        except Exception:
            log.exception("kubelet: serving pod %s/%s failed", self.namespace, self.name)
        finally:
            await self._kill_all()

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
        self._write(phase="Pending", sandbox=True)
        fail = self.annotations.get(runtimes.FAIL, "")
        if fail == "ErrImagePull":
            for c in self.containers:
                c.waiting_reason = "ErrImagePull"
                c.waiting_message = (
                    f'failed to pull and unpack image "{c.image}": failed to resolve reference '
                    f'"{c.image}": not found'
                )
            self._write(phase="Pending", sandbox=True)
            if await self._pause(t.pull_backoff):
                return await self._terminate()
            for c in self.containers:
                c.waiting_reason = "ImagePullBackOff"
                c.waiting_message = f'Back-off pulling image "{c.image}"'
            self._write(phase="Pending", sandbox=True)
            await self.stopping.wait()
            return await self._terminate()
        if await self._pause(t.run):
            return await self._terminate()
        for c in self.containers:
            self._start(c)
        self._write(phase="Running", sandbox=True)
        self.running.set()
        if fail == "Evicted":
            if await self._pause(float(self.annotations.get(runtimes.RUN_SECONDS) or 0)):
                return await self._terminate()
            return await self._evict()
        await self._supervise()

    async def _supervise(self) -> None:
        t = self.timing
        backoff = t.restart
        while True:
            live: set[asyncio.Future[Any]] = {
                c.exit for c in self.containers if c.running and c.exit is not None
            }
            if not live:
                return
            stop: asyncio.Future[Any] = asyncio.ensure_future(self.stopping.wait())
            try:
                await asyncio.wait({*live, stop}, return_when=asyncio.FIRST_COMPLETED)
            finally:
                stop.cancel()
            if self.stopping.is_set():
                return await self._terminate()
            restarts: list[_Container] = []
            for c in self.containers:
                if c.running and c.exit is not None and c.exit.done():
                    code = c.exit.result()
                    await self._exited(c, code)
                    if self.restart_policy == "Always" or (self.restart_policy == "OnFailure" and code != 0):
                        restarts.append(c)
                    else:
                        c.done = True
            if all(c.done for c in self.containers):
                self._write(phase=self._terminal_phase(), sandbox=False)
                return
            self._write(phase="Running", sandbox=True)
            if restarts:
                if await self._pause(backoff):
                    return await self._terminate()
                backoff = min(backoff * 2, t.restart_max)
                for c in restarts:
                    c.last_terminated = c.terminated
                    c.restart_count += 1
                    self._start(c)
                self._write(phase="Running", sandbox=True)

    async def _terminate(self) -> None:
        """The pod was deleted: stop the containers, report them terminated, then delete for good."""
        self.stopping.set()
        live = [c for c in self.containers if c.running and c.exit is not None]
        if live:
            await asyncio.wait({c.exit for c in live if c.exit is not None}, timeout=self.timing.stop_timeout)
        for c in self.containers:
            if c.running:
                c.finish(runtimes.SIGTERM_EXIT)
                assert c.exit is not None
                await self._exited(c, c.exit.result())
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
        pod = self._current()
        if _phase(pod) not in scheduling.TERMINAL:
            self._write(phase=self._terminal_phase(), sandbox=False)
        self._delete_now()

    def _delete_now(self) -> None:
        """The kubelet's last word on a deleted pod: DELETE with grace 0 and a uid precondition (T90)."""
        options = {"gracePeriodSeconds": 0, "preconditions": {"uid": self.uid}}
        try:
            self.api.delete(self.kind, self.namespace, self.name, options)
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
        self._write(
            phase="Failed",
            sandbox=False,
            extra={"reason": "Evicted", "message": EVICTED_MESSAGE},
            conditions={"DisruptionTarget": ("True", "TerminationByKubelet", EVICTED_MESSAGE)},
        )

    # -- containers ------------------------------------------------------------------------------------

    def _start(self, c: _Container) -> None:
        pod = self._current()
        loop = asyncio.get_running_loop()
        c.ctx = runtimes.ContainerContext(self.api, pod, c.spec, c.restart_count, self.stopping)
        c.exit = loop.create_future()
        c.forced_reason = None
        c.state = "running"
        c.started_at = self._now()
        c.terminated = None
        c.container_id = self.kubelet.container_id()
        runtime = self.kubelet.runtimes.resolve(pod, c.spec)
        c.task = asyncio.create_task(
            self._run_container(c, runtime, c.ctx, c.exit),
            name=f"sim-container-{self.namespace}/{self.name}/{c.name}",
        )

    async def _run_container(
        self,
        c: _Container,
        runtime: runtimes.Runtime,
        ctx: runtimes.ContainerContext,
        exit_future: asyncio.Future[int],
    ) -> None:
        try:
            code = await runtime(ctx)
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("kubelet: container %s of pod %s/%s crashed", c.name, self.namespace, self.name)
            code = 1
        if not exit_future.done():
            exit_future.set_result(int(code))

    async def _exited(self, c: _Container, code: int) -> None:
        """Record the end of ``c``'s current run and make sure its runtime task is gone."""
        if c.task is not None and not c.task.done():
            c.task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await c.task
        c.task = None
        reason = c.forced_reason or (c.ctx.reason if c.ctx is not None else None)
        reason = reason or ("Completed" if code == 0 else "Error")
        c.state = "terminated"
        c.exit_code = code
        c.terminated = {
            "exitCode": code,
            "reason": reason,
            "startedAt": c.started_at,
            "finishedAt": self._now(),
            "containerID": c.container_id,
        }

    async def _kill_all(self) -> None:
        for c in self.containers:
            if c.task is not None and not c.task.done():
                c.task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await c.task

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

    def _current(self) -> Obj:
        pod = self.api.store.get(self.key)
        if pod is None or meta(pod).get("uid") != self.uid:
            raise _Gone()
        return pod

    def _terminal_phase(self) -> str:
        return "Succeeded" if all(c.exit_code == 0 for c in self.containers) else "Failed"

    def _write(
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
        unready = [c.name for c in self.containers if not c.running]
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
        status["conditions"] = _merge_conditions(status.get("conditions") or [], wanted, now)
        status["containerStatuses"] = [c.status() for c in self.containers]
        if self.init_containers:
            status["initContainerStatuses"] = [c.status() for c in self.init_containers]
        status["qosClass"] = status.get("qosClass") or "BestEffort"
        status.update(extra or {})
        try:
            self.api.update(
                self.kind, self.namespace, self.name, {**pod, "status": status}, subresource="status"
            )
        except errors.ApiError as err:
            if err.code == 404:
                raise _Gone() from err
            raise


def _merge_conditions(
    existing: list[Any], wanted: dict[str, tuple[str, str | None, str | None]], now: str
) -> list[dict[str, Any]]:
    by_type = {c.get("type"): c for c in existing if isinstance(c, dict)}
    built: dict[str, dict[str, Any]] = {}
    for ctype, (status, reason, message) in wanted.items():
        old = by_type.get(ctype)
        cond: dict[str, Any] = {
            "type": ctype,
            "status": status,
            "lastProbeTime": None,
            "lastTransitionTime": old["lastTransitionTime"]
            if old is not None and old.get("status") == status and old.get("lastTransitionTime")
            else now,
        }
        if reason:
            cond["reason"] = reason
        if message:
            cond["message"] = message
        built[ctype] = cond
    ordered = [built.pop(t) for t in KUBELET_CONDITIONS if t in built]
    rest = [built.pop(c["type"]) if c.get("type") in built else c for c in existing if isinstance(c, dict)]
    return ordered + [c for c in rest if c.get("type") not in KUBELET_CONDITIONS] + list(built.values())


def _new_runtimes() -> runtimes.Runtimes:
    """An empty registry (``Kubelet.__init__`` cannot say it: its parameter ``runtimes`` hides the module)."""
    return runtimes.Runtimes()


class Kubelet:
    """Serves the pods bound to ``node`` (run as a world controller)."""

    def __init__(
        self,
        *,
        node: str = scheduling.NODE,
        host_ip: str = HOST_IP,
        timing: KubeletTiming | None = None,
        runtimes: runtimes.Runtimes | None = None,
        seed: int | None = None,
    ) -> None:
        self.node = node
        self.host_ip = host_ip
        self.timing = timing or KubeletTiming()
        self.runtimes = runtimes or _new_runtimes()
        self._random = random.Random(seed)
        self._events: asyncio.Queue[Event] = asyncio.Queue()
        self._workers: dict[str, _PodWorker] = {}
        self._seen: set[str] = set()
        self._ips = 0
        self._active = False
        self._api: ApiServer | None = None
        # Where pod files go on the host (the world's state directory; set by whoever composes).
        self.state_dir: Callable[[], Path] | None = None

    async def __call__(self, api: ApiServer) -> None:
        await self.run(api)

    def allocate_ip(self) -> str:
        n = self._ips
        self._ips += 1
        return f"10.244.{n // 250 % 256}.{n % 250 + 2}"

    def container_id(self) -> str:
        return f"containerd://{self._random.getrandbits(256):064x}"

    def _on_event(self, event: Event) -> None:
        if self._active and event.key[:2] == ("", "pods"):
            self._events.put_nowait(event)

    async def run(self, api: ApiServer) -> None:
        self._api = api
        self._active = True
        api.store.add_listener(self._on_event)
        try:
            for pod in api.store.items(("", "pods")):
                self._dispatch(api, "ADDED", pod)
            while True:
                event = await self._events.get()
                self._dispatch(api, event.type, event.obj)
        finally:
            self._active = False
            workers = list(self._workers.values())
            for w in workers:
                if w.task is not None:
                    w.task.cancel()
            for w in workers:
                if w.task is not None:
                    with contextlib.suppress(asyncio.CancelledError):
                        await w.task
            self._workers.clear()

    def _dispatch(self, api: ApiServer, event_type: str, pod: Obj) -> None:
        m = meta(pod)
        uid = str(m.get("uid", ""))
        worker = self._workers.get(uid)
        if event_type == "DELETED":
            self._seen.discard(uid)
            if worker is not None and worker.task is not None:
                worker.task.cancel()
            return
        if _spec(pod).get("nodeName") != self.node:
            return
        if worker is not None:
            if m.get("deletionTimestamp"):
                worker.stopping.set()
            return
        if uid in self._seen or _phase(pod) in scheduling.TERMINAL:
            return
        self._seen.add(uid)
        worker = _PodWorker(self, api, pod)
        if m.get("deletionTimestamp"):
            worker.stopping.set()
        worker.task = asyncio.create_task(
            worker.serve(), name=f"sim-kubelet-{worker.namespace}/{worker.name}"
        )
        self._workers[uid] = worker
        worker.task.add_done_callback(functools.partial(self._finished, uid, worker))

    def _finished(self, uid: str, worker: _PodWorker, _task: asyncio.Task[None]) -> None:
        if self._workers.get(uid) is worker:
            del self._workers[uid]

    def serving(self, namespace: str, name: str) -> bool:
        """Whether a pod of that name is being served right now."""
        return self._worker(namespace, name) is not None

    def _worker(self, namespace: str, name: str) -> _PodWorker | None:
        for w in self._workers.values():
            if w.namespace == namespace and w.name == name:
                return w
        return None

    async def complete(
        self,
        namespace: str,
        name: str,
        exit_code: int = 0,
        *,
        container: str | None = None,
        reason: str | None = None,
        within: float = 5.0,
    ) -> None:
        """Make the pod's running containers (or just ``container``) exit with ``exit_code``.

        Waits up to ``within`` seconds for the pod to be bound and its containers running; raises
        ``LookupError`` if they never are. The terminal status follows asynchronously.
        """
        loop = asyncio.get_running_loop()
        deadline = loop.time() + within
        while True:
            w = self._worker(namespace, name)
            if w is not None and w.running.is_set():
                targets = [
                    c for c in w.containers if c.running and (container is None or c.name == container)
                ]
                if targets:
                    for c in targets:
                        c.finish(exit_code, reason)
                    return
            if loop.time() >= deadline:
                raise LookupError(
                    f"pod {namespace}/{name} has no running container"
                    + (f" {container!r}" if container else "")
                )
            await asyncio.sleep(0.005)
