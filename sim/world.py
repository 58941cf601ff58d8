"""The emulated world's composition root: the API server on loopback plus the simulated controllers.

``World`` is what tests, benchmarks and ``arcsm sim`` start::

    async with World() as world:
        config = world.configuration()      # a kubernetes_asyncio Configuration pointing at it
        world.write_kubeconfig(path)        # or a kubeconfig file for kubectl and the controller

It installs the project's CRDs (the ``crds/`` of the Helm chart, shipped in the ``deploy`` package)
through its own API, creates the namespaces ``default`` and ``arc-systems`` (and, with the local-path
provisioner among its controllers, the default StorageClass ``standard``), and exposes the test hooks:
faults, dropping watches, compaction and the request log.

The world owns a temporary state directory (``state_dir``), made when it starts and removed when it
stops; provisioned volumes are directories under it, and ``claim_path(namespace, claim)`` says which
directory backs a bound claim.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import random
import shutil
import tempfile
from collections.abc import Callable, Coroutine
from pathlib import Path
from types import TracebackType
from typing import Any

import yaml
from aiohttp import web

import deploy
from sim import containers, kinds, provisioning
from sim.apiserver import ApiServer
from sim.claimbinding import VolumeBinder
from sim.collecting import GarbageCollector
from sim.deployments import DeploymentController
from sim.ephemeralvolumes import EphemeralVolumes
from sim.faults import Fault, LoggedRequest
from sim.github.fake import GitHubFake
from sim.kubelet import Kubelet
from sim.namespacing import Namespaces, ServiceAccounts
from sim.provisioning import LocalPathProvisioner
from sim.replicasets import ReplicaSetController
from sim.scheduling import Scheduler
from sim.server import Server
from sim.statefulsets import StatefulSetController
from sim.store import Event, Store
from sim.workqueue import QueueController

CRD_DIR = deploy.chart_path() / "crds"
NAMESPACES = ("default", "arc-systems")

# A simulated controller: started with the world, given its API server, runs until cancelled.
# The ones of sim.collecting, sim.scheduling, sim.kubelet and sim.namespacing are objects with such a
# ``__call__``.
Controller = Callable[[ApiServer], Coroutine[Any, Any, None]]


def load_crds(directory: Path = CRD_DIR) -> list[dict[str, Any]]:
    """The CRDs in ``directory``, parsed once per file content (they are large; worlds start often).

    The parsed documents are shared between worlds: the emulator never mutates what it stores.
    """
    crds: list[dict[str, Any]] = []
    for path in sorted(directory.glob("*.yaml")):
        crds.extend(_parse_crds(path.read_text()))
    return crds


@functools.lru_cache(maxsize=32)
def _parse_crds(text: str) -> tuple[dict[str, Any], ...]:
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    docs = yaml.load_all(text, Loader=loader)
    return tuple(d for d in docs if isinstance(d, dict) and d.get("kind") == "CustomResourceDefinition")


class World:
    def __init__(
        self,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        watch_history: int = 100_000,
        bookmark_interval: float = 60.0,
        crd_dir: Path | None = CRD_DIR,
        namespaces: tuple[str, ...] = NAMESPACES,
        controllers: list[Controller] | None = None,
        seed: int | None = None,
        rv_gaps: bool = False,
        github: GitHubFake | bool = False,
    ) -> None:
        self.host = host
        self.port = port
        self.store = Store(watch_history=watch_history, rv_gaps=rv_gaps, seed=seed)
        self.registry = kinds.Registry()
        self.api = ApiServer(registry=self.registry, store=self.store, rand=random.Random(seed))
        self.server = Server(self.api, bookmark_interval=bookmark_interval)
        self._crd_dir = crd_dir
        self._namespaces = namespaces
        self._controllers = controllers if controllers is not None else default_controllers()
        self._gc = next((c for c in self._controllers if isinstance(c, GarbageCollector)), None)
        self._kubelet = next((c for c in self._controllers if isinstance(c, Kubelet)), None)
        self._service_accounts = next((c for c in self._controllers if isinstance(c, ServiceAccounts)), None)
        self._provisioner = next((c for c in self._controllers if isinstance(c, LocalPathProvisioner)), None)
        self.state_dir: Path | None = None
        self._tasks: list[asyncio.Task[None]] = []
        self._runner: web.AppRunner | None = None
        self.url = ""
        # The fake GitHub/Actions service on its own port: World(github=True), or a configured GitHubFake.
        self._github = github if isinstance(github, GitHubFake) else GitHubFake(host=host) if github else None
        if self._github is not None and self._kubelet is not None:
            # Runner and listener pods run as simulated containers against this fake (sim.containers).
            containers.register(self._kubelet.runtimes, github=self._github, kube_url=lambda: self.url)
        self.store.add_listener(self._on_event)

    # -- lifecycle -----------------------------------------------------------------------------------

    async def start(self) -> World:
        self.state_dir = Path(tempfile.mkdtemp(prefix="arcsm-sim-"))
        if self._provisioner is not None:
            self._provisioner.use(self.state_dir / "volumes")
        for task_fn in self._controllers:
            name = getattr(task_fn, "__name__", type(task_fn).__name__)
            self._tasks.append(asyncio.create_task(task_fn(self.api), name=f"sim-{name}"))
        if self._crd_dir is not None:
            crd_kind = self.registry.get("apiextensions.k8s.io", "v1", "customresourcedefinitions")
            assert crd_kind is not None
            for crd in load_crds(self._crd_dir):
                self.api.create(crd_kind, "", crd)
        ns_kind = self.registry.get("", "v1", "namespaces")
        assert ns_kind is not None
        for name in self._namespaces:
            self.api.create(ns_kind, "", {"metadata": {"name": name}})
        if self._provisioner is not None:
            sc_kind = self.registry.get("storage.k8s.io", "v1", "storageclasses")
            assert sc_kind is not None
            self.api.create(sc_kind, "", provisioning.storage_class())
        if self._service_accounts is not None:
            # Pods need the default ServiceAccount: have it in the initial namespaces before anyone asks.
            await self._service_accounts.idle()
        self._runner = web.AppRunner(
            self.server.app, handle_signals=False, access_log=None, shutdown_timeout=0.5
        )
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.host, self.port)
        await site.start()
        server = site._server
        sockets = getattr(server, "sockets", None) or []
        port = sockets[0].getsockname()[1] if sockets else self.port
        self.port = port
        self.url = f"http://{self.host}:{port}"
        if self._github is not None:
            await self._github.start()
        return self

    async def stop(self) -> None:
        if self._github is not None:
            await self._github.stop()
        self.server.drop_watches()
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._tasks.clear()
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
        if self.state_dir is not None:
            shutil.rmtree(self.state_dir, ignore_errors=True)
            self.state_dir = None

    async def __aenter__(self) -> World:
        return await self.start()

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.stop()

    # -- CRDs become served kinds -----------------------------------------------------------------------

    def _on_event(self, event: Event) -> None:
        if event.key[:2] == ("apiextensions.k8s.io", "customresourcedefinitions") and event.type != "DELETED":
            for kind in kinds.from_crd(event.obj):
                self.registry.add(kind)

    # -- clients -------------------------------------------------------------------------------------

    def configuration(self) -> Any:
        """A kubernetes_asyncio ``Configuration`` for this world (imported lazily: sim needs no client)."""
        from kubernetes_asyncio.client import Configuration

        config = Configuration(host=self.url)
        return config

    def kubeconfig(self, *, namespace: str = "default") -> dict[str, Any]:
        return {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": "arcsm-sim", "cluster": {"server": self.url}}],
            "users": [{"name": "arcsm-sim", "user": {"token": "arcsm-sim"}}],
            "contexts": [
                {
                    "name": "arcsm-sim",
                    "context": {"cluster": "arcsm-sim", "user": "arcsm-sim", "namespace": namespace},
                }
            ],
            "current-context": "arcsm-sim",
            "preferences": {},
        }

    def write_kubeconfig(self, path: Path, *, namespace: str = "default") -> Path:
        path.write_text(yaml.safe_dump(self.kubeconfig(namespace=namespace), sort_keys=False))
        return path

    # -- test hooks ----------------------------------------------------------------------------------

    def inject(self, fault: Fault) -> Fault:
        self.server.faults.append(fault)
        return fault

    def clear_faults(self) -> None:
        self.server.faults.clear()

    def drop_watches(self, *, abrupt: bool = False) -> int:
        return self.server.drop_watches(abrupt=abrupt)

    def compact(self, rv: int | None = None) -> None:
        self.store.compact(rv)

    @property
    def requests(self) -> list[LoggedRequest]:
        return self.server.requests

    @property
    def revision(self) -> int:
        return self.store.revision

    @property
    def github(self) -> GitHubFake:
        """The fake GitHub/Actions service (``World(github=True)``): its Python API (sim/github)."""
        if self._github is None:
            raise RuntimeError("this world runs without the fake GitHub: use World(github=True)")
        return self._github

    @property
    def github_url(self) -> str:
        """``http://HOST:PORT`` of the fake GitHub; a ``githubConfigUrl`` is this plus ``/org``."""
        return self.github.url

    @property
    def kubelet(self) -> Kubelet:
        """The simulated kubelet of ``sim-node-1``: ``await world.kubelet.complete(ns, name, 0)``."""
        if self._kubelet is None:
            raise RuntimeError("this world runs without a kubelet")
        return self._kubelet

    async def controllers_idle(self) -> None:
        """Return once no simulated controller with a work queue (all but the kubelet) has anything
        queued or in flight, at the same moment; work they set for later (``add_after``) does not count."""
        queued = [c for c in self._controllers if isinstance(c, QueueController)]
        while True:
            for controller in queued:
                await controller.idle()
            if not any(c.busy for c in queued):
                return

    def claim_path(self, namespace: str, claim: str) -> Path | None:
        """The host directory backing PersistentVolumeClaim ``namespace/claim`` once it is Bound (a
        directory under ``state_dir`` for provisioned volumes); None before, or without a provisioner.

        The kubelet mounts it into process containers: pass ``world.claim_path`` as the callable."""
        if self._provisioner is None:
            return None
        return self._provisioner.claim_path(namespace, claim)

    async def gc_idle(self) -> None:
        """Return once the garbage collector has nothing queued or in flight (at once without one)."""
        if self._gc is not None:
            await self._gc.idle()


def default_controllers() -> list[Controller]:
    """The simulated controllers every world runs unless a test picks its own: the garbage collector
    (10-100 ms per item), the scheduler and kubelet of ``sim-node-1`` (millisecond steps), the
    ServiceAccount controller and the namespace controller, and the workload and storage controllers."""
    return [
        GarbageCollector(),
        Scheduler(),
        Kubelet(),
        ServiceAccounts(),
        Namespaces(),
        *workload_controllers(),
    ]


def workload_controllers() -> list[Controller]:
    """The Deployment, ReplicaSet and StatefulSet controllers, the volume binder, the local-path
    provisioner and the ephemeral volume controller."""
    return [
        DeploymentController(),
        ReplicaSetController(),
        StatefulSetController(),
        VolumeBinder(),
        LocalPathProvisioner(),
        EphemeralVolumes(),
    ]
