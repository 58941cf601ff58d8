"""Control planes started ahead of need, so a run of many short tests does not wait for each one's start.

Starting etcd, kube-apiserver, kube-controller-manager and kube-scheduler and installing the CRDs takes
seconds of mostly waiting (5 to 10 on a busy 2-core machine), far more than most stories on it run.
``Spares`` starts the next control plane in a thread of its own while the current one is in use::

    spares = Spares(lambda: ControlPlane(bin_dir, crds=crds, node_names=(node,)), count=40)
    spares.prepare()                          # the first one starts now, in the background
    control_plane = await spares.take()      # a started one (waits if it is still starting)
    ...
    await control_plane.stop()
    spares.close()                           # stops a spare nobody took

``count`` is how many will be taken at most: once that many are, no spare is started. Each control plane
is started on the spare thread's own event loop; its processes belong to no loop
(``cluster.Component``), so the taker uses, restarts and stops it from its own. The thread lives until
``close``, as the processes it started die with the thread that started them. A start that failed
raises from ``take`` with the failure's message and logs, as a start in place would.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
from collections.abc import Callable

from sim.controlplane.cluster import ControlPlane


class Spares:
    def __init__(self, factory: Callable[[], ControlPlane], *, count: int) -> None:
        self._factory = factory
        self._left = count
        self._thread = concurrent.futures.ThreadPoolExecutor(
            max_workers=1, thread_name_prefix="spare-control-plane"
        )
        self._next: concurrent.futures.Future[ControlPlane] | None = None

    def _start(self) -> ControlPlane:
        control_plane = self._factory()
        asyncio.run(control_plane.start())  # a failed start stops what it started, keeping its logs
        return control_plane

    def prepare(self) -> None:
        """Start the next control plane in the background, unless one is on its way or none is wanted."""
        if self._next is None and self._left > 0:
            self._next = self._thread.submit(self._start)

    async def take(self) -> ControlPlane:
        """A started control plane, for the caller to stop; the next one starts meanwhile."""
        self.prepare()
        future, self._next = self._next, None
        if future is None:  # more were taken than counted: start one in place
            control_plane = self._factory()
            return await control_plane.start()
        self._left -= 1
        try:
            return await asyncio.wrap_future(future)
        finally:
            self.prepare()

    def close(self) -> None:
        """Stop the spare nobody took and end the thread."""
        self._left = 0
        future, self._next = self._next, None
        if future is not None:
            with contextlib.suppress(Exception):
                asyncio.run(future.result().stop())
        self._thread.shutdown(wait=True)
