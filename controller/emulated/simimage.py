"""The arcsm image in the test worlds: a pod of image ``arcsm`` runs this installation's ``arcsm``.

``deploy/Dockerfile`` builds the image the Helm chart's pods run; no container runtime is available
where arcsm is developed, so the emulated kubelet runs those containers as real processes instead
(``sim.processes``): ``image()`` describes that image the way the Dockerfile does — entrypoint ``arcsm``
(the console script of this environment), its default command, working directory and environment, and
``/ghalistener``, the listener entrypoint the listener pods run, standing for ``arcsm listener``.

``register(world)`` has the controller's containers run that way on the world's kubelet, the emulated
world's or the real control plane's node (``sim.controlplane.world.RealWorld``): the real ``arcsm run``
in-cluster, with its service-account token at the standard path, ``KUBERNETES_SERVICE_HOST``/``PORT``
naming the API server's HTTPS endpoint, its journal on the pod's volume and its probes answered by its
HTTP API. The listener pods stay arcsm's listener run in the kubelet's process (``sim.containers``)
unless ``listeners=True``: process containers share the host's network, so every listener process would
bind the one port ``--listener-metrics-addr`` names (give them a free one, or ``0``).

Composed here, not in ``sim``, because the emulator knows nothing of the controller.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from sim import processes, runtimes
from sim.containers import LISTENER
from sim.controlplane.world import RealWorld
from sim.store import Obj
from sim.world import World

REPOSITORY = "arcsm"
# What deploy/Dockerfile's final stage says (a test keeps them equal).
CMD = ("run", "--journal", "/var/lib/arcsm/journal.db", "--http", "0.0.0.0:8080")
WORKDIR = "/var/lib/arcsm"
LISTENER_ENTRYPOINT = "/ghalistener"
ENV = {"PYTHONDONTWRITEBYTECODE": "1", "PYTHONUNBUFFERED": "1"}


def arcsm_command() -> tuple[str, ...]:
    """How this environment runs ``arcsm``: its console script, else the interpreter on the CLI module."""
    bin_dir = Path(sys.executable).parent
    script = shutil.which("arcsm", path=str(bin_dir))
    return (script,) if script else (sys.executable, "-m", "controller.commands.cli")


def image() -> processes.Image:
    arcsm = arcsm_command()
    path = f"{Path(sys.executable).parent}:{processes.DEFAULT_PATH}"
    return processes.Image(
        entrypoint=arcsm,
        cmd=CMD,
        working_dir=WORKDIR,
        env={"PATH": path, **ENV},
        executables={LISTENER_ENTRYPOINT: (*arcsm, "listener")},
        # The packages (a source tree, for an editable install): under an emptyDir at /tmp, say.
        paths=(str(Path(__file__).resolve().parents[2]),),
    )


def register(world: World | RealWorld, *, listeners: bool = False) -> None:
    """Run the containers of image ``arcsm`` (any tag) as processes; the listeners too with ``listeners``."""

    def matches(pod: Obj, container: Obj) -> bool:
        ours = runtimes.image_repository(str(container.get("image") or "")) == REPOSITORY
        return ours and (listeners or container.get("name") != LISTENER)

    world.kubelet.runtimes.register(matches, processes.ProcessRuntime(image()))
