"""The test world on a real control plane: kube-apiserver and its companions, one emulated node, the fake
GitHub.

``RealWorld`` is to ``sim.controlplane.cluster.ControlPlane`` what ``sim.world.World`` is to the emulated
API server, and offers what tests and ``arcsm sim --control-plane real`` use of a world under the same
names (``url``, ``https_url``, ``ca_file``, ``configuration()``, ``kubeconfig()``, ``write_kubeconfig()``,
``github``, ``github_url``, and ``requests``, read from kube-apiserver's audit log)::

    async with RealWorld(github=True) as world:
        world.write_kubeconfig(path)

It installs the project's CRDs (unless ``crd_dir`` is None) and the namespaces ``default`` and
``arc-systems`` before kube-controller-manager starts, then runs the emulated world's own kubelet
(``sim.kubelet.Kubelet``, ``kubelet``) as node ``arcsm-node-1``, a client of kube-apiserver over HTTPS
(``sim.node.httpapi``) with a client certificate of its own (``system:node:arcsm-node-1``, authorized by
the Node authorizer as a kubelet is), renewing its Lease, and waits for the node to be Ready and
schedulable. Its pods run as on the emulator: runner and listener containers (``sim.containers``: the
listener reaches kube-apiserver with a token bound to its pod), process containers once registered on
``kubelet.runtimes``, probes, restarts with their back-off, volumes, Events; their files go under
``state_dir``. Its endpoint (``sim.kubeletserver``, on loopback) serves their logs to kube-apiserver's
``pods/log``, so ``kubectl logs`` works as on the emulator. The binaries come
from ``sim.controlplane.build`` (``bin_dir``: the pinned build in the cache by default); ``available()``
says whether they are there. A control plane already started (a spare, ``sim.controlplane.spares``) is
taken as ``control_plane`` and stopped with the world.
"""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import ssl
from pathlib import Path
from types import TracebackType
from typing import Any

from sim import containers, kubeletserver
from sim.controlplane import auditing, build, pki
from sim.controlplane.cluster import ControlPlane
from sim.faults import LoggedRequest
from sim.github.fake import GitHubFake
from sim.kubelet import Kubelet
from sim.kubeletserver import KubeletServer
from sim.node.httpapi import HttpNodeApi
from sim.node.kubeapi import KubeApi
from sim.world import CRD_DIR, NAMESPACES, load_crds

NODE = "arcsm-node-1"
# What kube-scheduler may place on the node: room for a fleet (bench/fleet.py runs 300 runner pods).
CAPACITY = {"cpu": "64", "memory": "256Gi", "pods": "1000", "ephemeral-storage": "500Gi"}
LEASE_SECONDS = 40  # the kubelet's default; renewed every 10 s


def available(bin_dir: Path | None = None) -> bool:
    """Whether the pinned control plane's binaries are in the cache (built by ``sim.controlplane.build``)."""
    directory = bin_dir if bin_dir is not None else build.binaries()
    return all((directory / name).is_file() for name in build.BINARIES)


def control_plane_for(
    bin_dir: Path,
    *,
    crd_dir: Path | None = CRD_DIR,
    namespaces: tuple[str, ...] = NAMESPACES,
    state_dir: Path | None = None,
    node: str = NODE,
) -> ControlPlane:
    """The control plane a ``RealWorld`` of these arguments runs (not started): a spare made ahead
    (``sim.controlplane.spares``) for the defaults is handed over as ``control_plane``."""
    crds = load_crds(crd_dir) if crd_dir is not None else []
    return ControlPlane(bin_dir, crds=crds, namespaces=namespaces, state_dir=state_dir, node_names=(node,))


class RealWorld:
    def __init__(
        self,
        *,
        bin_dir: Path | None = None,
        github: GitHubFake | bool = False,
        crd_dir: Path | None = CRD_DIR,
        namespaces: tuple[str, ...] = NAMESPACES,
        state_dir: Path | None = None,
        host: str = "127.0.0.1",
        node: str = NODE,
        control_plane: ControlPlane | None = None,
    ) -> None:
        self.bin_dir = bin_dir if bin_dir is not None else build.binaries()
        self.control_plane = control_plane or control_plane_for(
            self.bin_dir, crd_dir=crd_dir, namespaces=namespaces, state_dir=state_dir, node=node
        )
        self._github = github if isinstance(github, GitHubFake) else GitHubFake(host=host) if github else None
        self.node_name = node
        self.kubelet = Kubelet(node=node, host_ip="127.0.0.1", capacity=CAPACITY, lease_seconds=LEASE_SECONDS)
        self.kubelet.state_dir = lambda: self.control_plane.state_dir
        containers.register(
            self.kubelet.runtimes,
            github=self._github,
            kube_url=lambda: self.control_plane.url,
            ca_file=lambda: self.control_plane.ca_file,
        )
        self._node_api: KubeApi | None = None
        self._kubelet_task: asyncio.Task[None] | None = None
        self.kubelet_server: KubeletServer | None = None

    # -- lifecycle -----------------------------------------------------------------------------------

    async def start(self) -> RealWorld:
        try:
            if not self.control_plane.started:
                await self.control_plane.start()
            if self._github is not None:
                await self._github.start()
            cp = self.control_plane
            context = ssl.create_default_context(cafile=str(cp.ca_file))
            cert, key = cp.keys.client(pki.node(self.node_name))
            context.load_cert_chain(str(cert), str(key))
            self._node_api = KubeApi(cp.url, ssl_context=context)
            # Its endpoint first: the Node it registers names the port (pods/log reaches it there).
            self.kubelet_server = KubeletServer(
                self.kubelet.pod,
                self.kubelet.logs_root,
                ssl_context=kubeletserver.server_context(
                    cp.keys.serving_cert, cp.keys.serving_key, cp.ca_file
                ),
                host=self.kubelet.host_ip,
            )
            self.kubelet.port = await self.kubelet_server.start()
            self._kubelet_task = asyncio.create_task(
                self.kubelet.run(HttpNodeApi(self._node_api)), name=f"kubelet {self.node_name}"
            )
            await self._schedulable(self._node_api)
        except BaseException:
            await self.stop(keep_state=True)
            raise
        return self

    async def stop(self, *, keep_state: bool = False) -> None:
        if self._kubelet_task is not None:
            # As a kubelet shutting down: its containers stop, its pods stay (deleted with the cluster).
            self._kubelet_task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._kubelet_task
            self._kubelet_task = None
        if self.kubelet_server is not None:
            await self.kubelet_server.stop()
            self.kubelet_server = None
        if self._node_api is not None:
            await self._node_api.close()
            self._node_api = None
        if self._github is not None:
            await self._github.stop()
        await self.control_plane.stop(keep_state=keep_state)

    async def _schedulable(self, api: KubeApi, timeout: float = 60.0) -> None:
        """Wait until the node is Ready and carries no taint (the lifecycle controller lifts the not-ready
        taint within seconds of the first Lease); a kubelet that stopped first is that failure."""
        assert self._kubelet_task is not None
        async with asyncio.timeout(timeout):
            while True:
                if self._kubelet_task.done():
                    self._kubelet_task.result()
                    raise RuntimeError(f"the kubelet of {self.node_name} stopped before its node was Ready")
                if self.kubelet.registered.is_set():
                    node = await api.get(f"/api/v1/nodes/{self.node_name}")
                    conditions = (node.get("status") or {}).get("conditions") or []
                    ready = any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)
                    if ready and not (node.get("spec") or {}).get("taints"):
                        return
                await asyncio.sleep(0.2)

    async def __aenter__(self) -> RealWorld:
        return await self.start()

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.stop(keep_state=exc_type is not None)

    # -- what a world offers ---------------------------------------------------------------------------

    @property
    def url(self) -> str:
        return self.control_plane.url

    @property
    def https_url(self) -> str:
        return self.control_plane.url

    @property
    def ca_file(self) -> Path:
        return self.control_plane.ca_file

    @property
    def state_dir(self) -> Path:
        return self.control_plane.state_dir

    def configuration(self) -> Any:
        return self.control_plane.configuration()

    def kubeconfig(self, *, namespace: str = "default") -> dict[str, Any]:
        return self.control_plane.kubeconfig(namespace=namespace)

    def write_kubeconfig(self, path: Path, *, namespace: str = "default") -> Path:
        return self.control_plane.write_kubeconfig(path, namespace=namespace)

    @property
    def github(self) -> GitHubFake:
        if self._github is None:
            raise RuntimeError("this world runs without the fake GitHub: use RealWorld(github=True)")
        return self._github

    @property
    def github_url(self) -> str:
        return self.github.url

    @property
    def requests(self) -> list[LoggedRequest]:
        """The requests kube-apiserver answered so far, from its audit log, in the shape of the emulator's
        request log (``sim.controlplane.auditing`` says what it leaves out)."""
        return auditing.requests(self.control_plane.audit_log)

    def keep_logs(self, directory: Path) -> Path:
        """Copy the components' logs to ``directory`` (for a failed test); return it."""
        shutil.copytree(self.control_plane.log_dir, directory, dirs_exist_ok=True)
        return directory
