"""``arcsm sim``: run the emulated world in the foreground until interrupted.

Its kubelet runs the controller containers of image ``arcsm`` as this installation's ``arcsm``
(``controller.emulated.simimage``), so arcsm's Helm chart applied to it (``arcsm manifests --set
metrics.controllerManagerAddr=:PORT | kubectl apply -f -``: the emulator's pods share the host's network,
so the controller wants a port of its own) runs the controller in-cluster; listener pods stay arcsm's
listener in the emulator's process.

With ``real=True`` the world is ``sim.controlplane.world.RealWorld``: the pinned control plane (built
first when the cache lacks it; a build that fails is one line and exit status 1), its emulated node and
the fake GitHub, announced with the same lines; its node runs the arcsm image the same way (the chart's
journal claim needs a PersistentVolume made beforehand there: the control plane has no provisioner).
"""

from __future__ import annotations

import asyncio
import signal
import sys
from collections.abc import Callable
from pathlib import Path

from controller.emulated import simimage
from sim.controlplane import build
from sim.controlplane import world as controlplane_world
from sim.controlplane.world import RealWorld
from sim.github.fake import GitHubFake, GitHubSettings
from sim.world import CRD_DIR, World


async def serve(
    *,
    host: str,
    port: int,
    kubeconfig: Path | None,
    watch_history: int,
    github_port: int = 0,
    github_settings: GitHubSettings | None = None,
    real: bool = False,
    crds: bool = True,
) -> None:
    """Serve until SIGINT or SIGTERM; ``crds=False`` starts the cluster without arcsm's CRDs."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    github = GitHubFake(host=host, port=github_port, settings=github_settings)
    crd_dir = CRD_DIR if crds else None
    if real:
        async with _real_world(github, crd_dir) as real_world:
            simimage.register(real_world)
            _announce(real_world.url, real_world.github_url, kubeconfig, real_world.write_kubeconfig)
            await stop.wait()
    else:
        async with World(
            host=host, port=port, watch_history=watch_history, github=github, crd_dir=crd_dir
        ) as world:
            simimage.register(world)
            _announce(world.url, world.github_url, kubeconfig, world.write_kubeconfig)
            await stop.wait()
    print("arcsm sim: stopped", file=sys.stderr, flush=True)


def _announce(url: str, github_url: str, kubeconfig: Path | None, write: Callable[[Path], object]) -> None:
    if kubeconfig is not None:
        write(kubeconfig)
    print(f"arcsm sim: kubernetes {url}", flush=True)
    print(f"arcsm sim: github {github_url}", flush=True)
    if kubeconfig is not None:
        print(f"arcsm sim: kubeconfig {kubeconfig}", flush=True)


def _real_world(github: GitHubFake, crd_dir: Path | None) -> RealWorld:
    if not controlplane_world.available():
        try:
            build.build()
        except build.BuildError as exc:
            raise SystemExit(f"arcsm sim: cannot build the control plane: {exc}") from None
    return RealWorld(github=github, crd_dir=crd_dir)
