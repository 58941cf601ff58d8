"""The test world on a real control plane: kube-apiserver and its companions, one emulated node, the fake
GitHub.

``RealWorld`` is to ``sim.controlplane.cluster.ControlPlane`` what ``sim.world.World`` is to the emulated
API server, and offers what tests and ``arcsm sim --control-plane real`` use of a world under the same
names (``url``, ``https_url``, ``ca_file``, ``configuration()``, ``kubeconfig()``, ``write_kubeconfig()``,
``github``, ``github_url``)::

    async with RealWorld(github=True) as world:
        world.write_kubeconfig(path)

It installs the project's CRDs (unless ``crd_dir`` is None) and the namespaces ``default`` and
``arc-systems`` before kube-controller-manager starts, then registers the emulated node
(``sim.node.agent``) with a client certificate of its own (``system:node:arcsm-node-1``, authorized by
the Node authorizer as a kubelet is), and waits for it to be Ready and schedulable. The binaries come
from ``sim.controlplane.build`` (``bin_dir``: the pinned build in the cache by default); ``available()``
says whether they are there. A control plane already started (a spare, ``sim.controlplane.spares``) is
taken as ``control_plane`` and stopped with the world.
"""

from __future__ import annotations

import shutil
import ssl
from pathlib import Path
from types import TracebackType
from typing import Any

from sim.controlplane import build, pki
from sim.controlplane.cluster import ControlPlane
from sim.github.fake import GitHubFake
from sim.node import agent, containers
from sim.node.kubeapi import KubeApi
from sim.world import CRD_DIR, NAMESPACES, load_crds


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
    node: str = agent.NODE,
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
        node: str = agent.NODE,
        control_plane: ControlPlane | None = None,
    ) -> None:
        self.bin_dir = bin_dir if bin_dir is not None else build.binaries()
        self.control_plane = control_plane or control_plane_for(
            self.bin_dir, crd_dir=crd_dir, namespaces=namespaces, state_dir=state_dir, node=node
        )
        self._github = github if isinstance(github, GitHubFake) else GitHubFake(host=host) if github else None
        self.node_name = node
        self.node: agent.NodeAgent | None = None
        self._node_api: KubeApi | None = None

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
            runtimes = containers.Runtimes(github=self._github, api_url=cp.url, ca_file=cp.ca_file)
            logs = cp.state_dir / "node-logs"
            self.node = await agent.NodeAgent(
                self._node_api, runtimes=runtimes, logs=logs, name=self.node_name
            ).start()
        except BaseException:
            await self.stop(keep_state=True)
            raise
        return self

    async def stop(self, *, keep_state: bool = False) -> None:
        if self.node is not None:
            await self.node.stop()
            self.node = None
        if self._node_api is not None:
            await self._node_api.close()
            self._node_api = None
        if self._github is not None:
            await self._github.stop()
        await self.control_plane.stop(keep_state=keep_state)

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

    def keep_logs(self, directory: Path) -> Path:
        """Copy the components' logs to ``directory`` (for a failed test); return it."""
        shutil.copytree(self.control_plane.log_dir, directory, dirs_exist_ok=True)
        return directory
