"""The emulated world: a Kubernetes API server on loopback that kubernetes_asyncio cannot tell from a real
one, the controllers a cluster runs (garbage collector, scheduler, kubelet, ServiceAccount and namespace
controllers), and the fake GitHub Actions service (``sim.github``).

Start one with ``sim.world.World`` (tests, benchmarks) or ``arcsm sim`` (a terminal). The emulated
semantics, the rows left out and the known limits are listed in ``sim/README.md``.

This package imports nothing of the controller: it stands for the outside world.
"""
