"""The emulated world's composition root: the API server on loopback plus the simulated controllers.

``World`` is what tests, benchmarks and ``arcsm sim`` start::

    async with World() as world:
        config = world.configuration()      # a kubernetes_asyncio Configuration pointing at it
        world.write_kubeconfig(path)        # or a kubeconfig file for kubectl and the controller

It installs the project's CRDs (the ``crds/`` of the Helm chart, shipped in the ``deploy`` package)
through its own API, creates the namespaces ``default`` and ``arc-systems`` (and, with the local-path
provisioner among its controllers, the default StorageClass ``standard``), and exposes the test hooks:
faults, dropping watches, compaction and the request log.

Besides plain HTTP (``url``, what ``configuration()`` and kubeconfigs use) it serves the same API over
HTTPS (``https_url``) with a certificate of the cluster CA (``ca_file``; ``sim.certificates``), which is
where the ``kubernetes`` Service in ``default`` points (``sim.publishing``) and how a pod's process
reaches it. Files on the host (provisioned volumes, pod volumes and logs, the CA file) live under
``state_dir``: a directory given, else a temporary one made on first use and removed when the world stops;
``claim_path(namespace, claim)`` says which directory backs a bound claim.
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
from sim import (
    authenticating,
    certificates,
    containers,
    crdterminating,
    kinds,
    podlogs,
    provisioning,
    publishing,
)
from sim.apiserver import ApiServer
from sim.claimbinding import VolumeBinder
from sim.collecting import GarbageCollector
from sim.crdfinalizer import CrdFinalizer
from sim.crdstatus import CrdStatus
from sim.deployments import DeploymentController
from sim.ephemeralvolumes import EphemeralVolumes
from sim.faults import Fault, LoggedRequest
from sim.github.fake import GitHubFake
from sim.kubelet import Kubelet
from sim.namespacing import Namespaces, ServiceAccounts
from sim.provisioning import LocalPathProvisioner
from sim.publishing import RootCAPublisher
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
        https_port: int = 0,
        state_dir: Path | None = None,
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
        self._root_ca = next((c for c in self._controllers if isinstance(c, RootCAPublisher)), None)
        self._tasks: list[asyncio.Task[None]] = []
        self._runner: web.AppRunner | None = None
        self.url = ""
        self.https_port = https_port
        self.https_url = ""
        self._state_dir = state_dir
        self._owns_state_dir = False
        if self._kubelet is not None:
            # Pod volumes, logs and claim directories go under the world's state directory.
            self._kubelet.state_dir = lambda: self.state_dir
            if self._provisioner is not None:
                # A claim's directory is its provisioned volume's.
                self._kubelet.claim_path = self.claim_path
            self.server.pod_logs = podlogs.PodLogs(self.store, self._kubelet.logs_root)
        # The fake GitHub/Actions service on its own port: World(github=True), or a configured GitHubFake.
        self._github = github if isinstance(github, GitHubFake) else GitHubFake(host=host) if github else None
        if self._github is not None and self._kubelet is not None:
            # Runner and listener pods run as simulated containers against this fake (sim.containers).
            containers.register(self._kubelet.runtimes, github=self._github, kube_url=lambda: self.url)
        self.store.add_listener(self._on_event)

    # -- lifecycle -----------------------------------------------------------------------------------

    async def start(self) -> World:
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
        if self._root_ca is not None:
            # ... and their kube-root-ca.crt, which a pod's service-account volume reads.
            await self._root_ca.idle()
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
        https = web.TCPSite(
            self._runner, self.host, self.https_port, ssl_context=certificates.server_context()
        )
        await https.start()
        sockets = getattr(https._server, "sockets", None) or []
        self.https_port = sockets[0].getsockname()[1] if sockets else self.https_port
        # Where clients and pods reach the API server; a wildcard host is reached on loopback, the
        # address the serving certificate names.
        address = "127.0.0.1" if self.host in ("", "0.0.0.0", "::") else self.host
        self.https_url = f"https://{address}:{self.https_port}"
        publishing.publish_api_endpoint(self.api, address=address, port=self.https_port)
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
        if self._owns_state_dir and self._state_dir is not None:
            shutil.rmtree(self._state_dir, ignore_errors=True)
            self._state_dir = None
            self._owns_state_dir = False

    async def __aenter__(self) -> World:
        return await self.start()

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.stop()

    # -- CRDs become served kinds -----------------------------------------------------------------------

    def _on_event(self, event: Event) -> None:
        if event.key[:2] != crdterminating.CRDS:
            return
        spec = event.obj["spec"]
        group, plural = spec["group"], spec["names"]["plural"]
        if event.type == "DELETED":
            # Its resources went before it (sim.crdfinalizer); its watches end, as its storage does.
            self.registry.replace(group, plural, ())
            self.store.drop_watches((group, plural))
        else:
            self.registry.replace(group, plural, kinds.from_crd(event.obj))

    # -- clients -------------------------------------------------------------------------------------

    def configuration(self) -> Any:
        """A kubernetes_asyncio ``Configuration`` for this world (imported lazily: sim needs no client)."""
        from kubernetes_asyncio.client import Configuration

        config = Configuration(host=self.url)
        return config

    def https_configuration(self, *, token: str | None = None) -> Any:
        """A kubernetes_asyncio ``Configuration`` for the HTTPS endpoint, verifying the server with the
        cluster CA; with ``token``, requests bear it (``Authorization: Bearer``)."""
        from kubernetes_asyncio.client import Configuration

        config = Configuration(host=self.https_url)
        config.ssl_ca_cert = str(self.ca_file)
        if token is not None:
            config.api_key = {"BearerToken": token}
            config.api_key_prefix = {"BearerToken": "Bearer"}
        return config

    @property
    def state_dir(self) -> Path:
        """Where the world keeps files on the host (made on first use unless one was given)."""
        if self._state_dir is None:
            self._state_dir = Path(tempfile.mkdtemp(prefix="arcsm-sim-"))
            self._owns_state_dir = True
        return self._state_dir

    @property
    def ca_file(self) -> Path:
        """The cluster CA certificate (PEM) as a file, for clients of ``https_url``."""
        path = self.state_dir / "ca.crt"
        if not path.exists():
            path.write_bytes(certificates.material().ca_cert)
        return path

    def kubeconfig(self, *, namespace: str = "default") -> dict[str, Any]:
        return {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": "arcsm-sim", "cluster": {"server": self.url}}],
            "users": [{"name": "arcsm-sim", "user": {"token": authenticating.KUBECONFIG_USER}}],
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
    ServiceAccount controller, the namespace controller, the root CA publisher, the CRD status
    controller and CRD finalizer, and the workload and storage controllers."""
    return [
        GarbageCollector(),
        Scheduler(),
        Kubelet(),
        ServiceAccounts(),
        Namespaces(),
        RootCAPublisher(),
        CrdStatus(),
        CrdFinalizer(),
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
