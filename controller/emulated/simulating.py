"""``arcsm sim``: run the emulated world in the foreground until interrupted.

Its kubelet runs the controller containers of image ``arcsm`` as this installation's ``arcsm``
(``controller.emulated.simimage``), so arcsm's Helm chart applied to it (``arcsm manifests --set
metrics.controllerManagerAddr=:PORT | kubectl apply -f -``: the emulator's pods share the host's network,
so the controller wants a port of its own) runs the controller in-cluster; listener pods stay arcsm's
listener in the emulator's process.
"""

from __future__ import annotations

import asyncio
import signal
import sys
from pathlib import Path

from controller.emulated import simimage
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
    crds: bool = True,
) -> None:
    """Serve until SIGINT or SIGTERM; ``crds=False`` starts the cluster without arcsm's CRDs."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    github = GitHubFake(host=host, port=github_port, settings=github_settings)
    crd_dir = CRD_DIR if crds else None
    async with World(
        host=host, port=port, watch_history=watch_history, github=github, crd_dir=crd_dir
    ) as world:
        simimage.register(world)
        if kubeconfig is not None:
            world.write_kubeconfig(kubeconfig)
        print(f"arcsm sim: kubernetes {world.url}", flush=True)
        print(f"arcsm sim: github {world.github_url}", flush=True)
        if kubeconfig is not None:
            print(f"arcsm sim: kubeconfig {kubeconfig}", flush=True)
        await stop.wait()
    print("arcsm sim: stopped", file=sys.stderr, flush=True)
