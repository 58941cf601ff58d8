"""The simulated kubelet (apiserver-semantics.md §5, S60): node ``sim-node-1`` of the emulated world, and
the one node of a real control plane (``sim.controlplane.world``).

It talks to its API server only through a node API (``sim.nodeapi``): in process on the emulator
(``Kubelet`` is a world controller: called with the ``ApiServer``, it runs over
``sim.inprocessapi.InProcessNodeApi``), over HTTPS with a client certificate of ``system:node:NAME`` on a
real control plane (``run(sim.node.httpapi.HttpNodeApi(...))``), where the Node authorizer lets it read
only what its pods refer to.

``Kubelet`` serves the pods bound to its node, one supervised ``sim.podworkers.PodWorker`` per pod, which
writes their status in the order a real kubelet does (see there: the status sequence, restarts, graceful
deletion) and runs their probes (``sim.probing``). Unbound and terminal pods are removed by the API server
itself (S39).

What runs in a container is pluggable (``sim.runtimes``: runtimes by image or name, and the
``sim.arcsm.io/*`` annotations the default runtime and the failure modes follow); a runtime that runs a
real process (``sim.processes``) gets the pod's volumes set up on the host (``sim.volumes``), a log file
(``sim.podlogs``, served as ``pods/log``) and the pod's service-account token, and stays up until it is
stopped with SIGTERM and the grace period. Pods get to the node through ``sim.scheduling``. Tests finish
containers on demand with ``Kubelet.complete(namespace, name, exit_code)``.

Files: pod directories (``pods/UID``: volumes, each run's scratch) and logs (``logs/NS_NAME_UID``) live
under ``directory()``: ``state_dir()/kubelet`` when the composer set ``state_dir`` (``World`` does), else a
temporary directory of the kubelet's own, made on first use; a pod's go when it is deleted.
``claim_path`` is the seam for persistent volumes: ``(namespace, claim) -> Path | None``, a provisioner's
answer; unset, each claim is a directory under the state directory (``sim.volumes.fallback_claims``).

It registers its Node at start (``sim.noderegistration``), and with ``lease_seconds`` renews its Lease
in ``kube-node-lease`` every quarter of it (a real control plane's node lifecycle controller reads it).
Known limits: the Node's status is never renewed; no resources, images or image pulls; init
containers are reported as completed at once; exec and grpc probes are not run (they pass); a runtime
that raises counts as exit code 1; the back-offs are milliseconds to seconds (``KubeletTiming``) but for
restarts, which back off as a kubelet's do (``CrashLoopBackOff``, ``sim.crashloops``) unless the timing
given shrinks them.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import random
import shutil
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path

from sim import nodeevents, noderegistration, podaddresses, podlogs, runtimes, scheduling, volumes
from sim.apiserver import ApiServer
from sim.inprocessapi import InProcessNodeApi
from sim.nodeapi import NodeApi
from sim.podworkers import EVICTED_MESSAGE, KubeletTiming, PodWorker
from sim.store import Obj
from sim.workqueue import meta

log = logging.getLogger("arcsm.sim.kubelet")

HOST_IP = "192.168.49.2"

__all__ = ["EVICTED_MESSAGE", "HOST_IP", "Kubelet", "KubeletTiming"]


def _spec(pod: Obj) -> dict[str, object]:
    spec = pod.get("spec")
    return spec if isinstance(spec, dict) else {}


def _phase(pod: Obj) -> str:
    status = pod.get("status")
    return str(status.get("phase") or "") if isinstance(status, dict) else ""


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
        capacity: Mapping[str, str] = noderegistration.CAPACITY,
        lease_seconds: int | None = None,
        port: int = 10250,
    ) -> None:
        self.node = node
        self.host_ip = host_ip
        self.timing = timing or KubeletTiming()
        self.runtimes = runtimes or _new_runtimes()
        self.capacity = dict(capacity)
        self.lease_seconds = lease_seconds  # None: no Lease (the emulator has no node lifecycle controller)
        self.port = port  # the kubelet endpoint the Node names (daemonEndpoints)
        self._random = random.Random(seed)
        self._workers: dict[str, PodWorker] = {}
        self._seen: set[str] = set()
        self._api: NodeApi | None = None
        self.registered = asyncio.Event()  # set once the Node is there
        # Where pod files go on the host (the world's state directory; set by whoever composes).
        self.state_dir: Callable[[], Path] | None = None
        # The directory of a PersistentVolumeClaim: a provisioner's answer (None: not bound yet).
        self.claim_path: volumes.ClaimPath | None = None
        self._directory: Path | None = None
        self._owns_directory = False
        self._files: dict[str, list[Path]] = {}  # pod uid → the directories kept for it
        self._recorder: nodeevents.Recorder | None = None

    async def __call__(self, api: ApiServer) -> None:
        await self.run(InProcessNodeApi(api))

    def allocate_ip(self) -> str:
        """A loopback address for a pod (``sim.podaddresses``): what runs in it binds there."""
        return podaddresses.allocate()

    def container_id(self) -> str:
        return f"containerd://{self._random.getrandbits(256):064x}"

    async def run(self, api: NodeApi) -> None:
        """Register the Node, then serve the pods bound to it until cancelled."""
        self._api = api
        node = await noderegistration.register(
            api, self.node, self.host_ip, port=self.port, capacity=self.capacity
        )
        lease = None
        if self.lease_seconds is not None:
            await api.renew_lease(node, self.lease_seconds)
            lease = asyncio.create_task(self._renew(api, node), name=f"sim-kubelet-lease-{self.node}")
        self.registered.set()
        try:
            async for event_type, pod in api.pods(self.node):
                self._dispatch(api, event_type, pod)
        finally:
            if lease is not None:
                lease.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await lease
            workers = list(self._workers.values())
            for w in workers:
                if w.task is not None:
                    w.task.cancel()
            for w in workers:
                if w.task is not None:
                    with contextlib.suppress(asyncio.CancelledError):
                        await w.task
            self._workers.clear()
            if self._owns_directory and self._directory is not None:
                shutil.rmtree(self._directory, ignore_errors=True)
                self._directory = None

    async def _renew(self, api: NodeApi, node: Obj) -> None:
        assert self.lease_seconds is not None
        while True:
            await asyncio.sleep(self.lease_seconds / 4)
            try:
                await api.renew_lease(node, self.lease_seconds)
            except Exception as exc:  # the API server restarting: renew on the next beat
                log.warning("kubelet: renewing the lease of node %s failed: %s", self.node, exc)

    def _dispatch(self, api: NodeApi, event_type: str, pod: Obj) -> None:
        m = meta(pod)
        uid = str(m.get("uid", ""))
        worker = self._workers.get(uid)
        if event_type == "DELETED":
            self._seen.discard(uid)
            if worker is not None and worker.task is not None:
                worker.task.cancel()  # the worker forgets the pod's files when it ends
            else:
                self.forget(uid)
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
        worker = PodWorker(self, api, pod)
        if m.get("deletionTimestamp"):
            worker.stopping.set()
        worker.task = asyncio.create_task(
            worker.serve(), name=f"sim-kubelet-{worker.namespace}/{worker.name}"
        )
        self._workers[uid] = worker
        worker.task.add_done_callback(functools.partial(self._finished, uid, worker))

    def _finished(self, uid: str, worker: PodWorker, _task: asyncio.Task[None]) -> None:
        if self._workers.get(uid) is worker:
            del self._workers[uid]

    def pod(self, namespace: str, name: str) -> Obj | None:
        """The pod as this kubelet last saw it (None before it runs, or once the pod is gone)."""
        return self._api.pod(namespace, name) if self._api is not None else None

    def serving(self, namespace: str, name: str) -> bool:
        """Whether a pod of that name is being served right now."""
        return self._worker(namespace, name) is not None

    def _worker(self, namespace: str, name: str) -> PodWorker | None:
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

    # -- files on the host, events ---------------------------------------------------------------------

    def directory(self) -> Path:
        """Where the kubelet keeps pod files (made on first use)."""
        if self._directory is None:
            if self.state_dir is not None:
                self._directory = self.state_dir() / "kubelet"
            else:
                self._directory = Path(tempfile.mkdtemp(prefix="arcsm-sim-kubelet-"))
                self._owns_directory = True
            self._directory.mkdir(parents=True, exist_ok=True)
        return self._directory

    def _keep(self, uid: str, path: Path) -> Path:
        kept = self._files.setdefault(uid, [])
        if path not in kept:
            kept.append(path)
        return path

    def pod_dir(self, uid: str) -> Path:
        """The pod's own directory (volumes, scratch directories of its containers' runs)."""
        return self._keep(uid, self.directory() / "pods" / uid)

    def logs_root(self) -> Path | None:
        """Where the pods' log files are (None while no pod has written one)."""
        return None if self._directory is None else self._directory / "logs"

    def log_path(self, namespace: str, name: str, uid: str, container: str, restart: int) -> Path:
        relative = podlogs.PodLogs.relative(namespace, name, uid, container, restart)
        self._keep(uid, self.directory() / "logs" / relative.parts[0])
        return self.directory() / "logs" / relative

    def claims_root(self) -> Path:
        """Where a claim's directory is made when ``claim_path`` is unset: the state directory."""
        return self.state_dir() if self.state_dir is not None else self.directory()

    async def record(
        self, pod: Obj, reason: str, message: str, *, warning: bool = False, container: str = ""
    ) -> None:
        """An Event about ``pod`` from this node's kubelet."""
        if self._api is None:
            return
        if self._recorder is None:
            self._recorder = nodeevents.Recorder(self._api, host=self.node)
        await self._recorder.record(pod, reason, message, warning=warning, container=container)

    def forget(self, uid: str) -> None:
        """The pod is gone: remove its files and what was recorded about it."""
        for path in self._files.pop(uid, []):
            shutil.rmtree(path, ignore_errors=True)
        if self._recorder is not None:
            self._recorder.forget(uid)
