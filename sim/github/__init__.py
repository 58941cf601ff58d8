"""The fake GitHub and Actions service (arc-controller-spec.md §6): what the controller, the listener and
the simulated runners talk to, served over real HTTP on loopback next to the emulated cluster.

Start one with ``GitHubFake`` (or ``World(github=True)``, or ``arcsm sim``); ``sim/github/README.md`` has
the URL layout, the Python API and the decisions taken where the spec is silent.

Layering inside the package: ``records`` and ``state`` are the pure model (no I/O, no asyncio, an
injected clock); ``tokens`` and ``jitconfigs`` mint and check credentials; ``jobs`` is the job source and
the runner side; ``restapi``, ``actionsapi``, ``responses`` and ``server`` are the aiohttp layer;
``fake`` composes them. No log line carries a token, a JIT config or an Authorization header.
"""

from sim.github.fake import GitHubFake, GitHubSettings, Registration
from sim.github.faults import Call, GitHubFault
from sim.github.jobs import JobSpec

__all__ = ["Call", "GitHubFake", "GitHubFault", "GitHubSettings", "JobSpec", "Registration"]
