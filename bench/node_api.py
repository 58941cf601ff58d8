"""Benchmark: what the emulated world's kubelet would cost as an HTTP client of its own API server.

One kubelet (``sim.kubelet``) serves both worlds through the node API (``sim.nodeapi``): on the real
control plane over HTTPS (``sim.node.httpapi.HttpNodeApi``), on the emulator in process
(``sim.inprocessapi.InProcessNodeApi``). This measures what the emulator keeps by not going over HTTP: the
same emulated world, once with its kubelet in process and once with the same kubelet sending the same
requests over loopback HTTP to the world's own server (list and watch of its pods, ``pods/status``
writes, the reads of what a pod names, its service-account token, Events, the final delete).

Each round creates N pods at once (the default runtime: they run until deleted), waits until every one
is Running, deletes them all (grace period 30 s: the kubelet stops the containers and makes the final
delete) and waits until none is left. Reported per way: pods started per second and pods removed per
second (median of the rounds), and HTTP ÷ in process, both measured in the same run.

Run: ``.venv/bin/python bench/node_api.py [--pods N] [--rounds R]``.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from sim.apiserver import ApiServer  # noqa: E402
from sim.kubelet import Kubelet  # noqa: E402
from sim.node.httpapi import HttpNodeApi  # noqa: E402
from sim.node.kubeapi import KubeApi  # noqa: E402
from sim.store import Event  # noqa: E402
from sim.world import World, default_controllers  # noqa: E402

NAMESPACE = "default"


class HttpKubelet(Kubelet):
    """The emulator's kubelet, sending its requests over HTTP to the world's server once it listens."""

    def __init__(self, listening: asyncio.Event, url: list[str]) -> None:
        super().__init__()
        self._listening = listening
        self._url = url

    async def __call__(self, api: ApiServer) -> None:
        await self._listening.wait()
        async with KubeApi(self._url[0]) as kube:
            await self.run(HttpNodeApi(kube))


def _pod(i: int) -> dict[str, object]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": f"bench-{i}", "namespace": NAMESPACE},
        "spec": {"containers": [{"name": "main", "image": "bench"}]},
    }


async def one_way(http: bool, pods: int, rounds: int) -> tuple[list[float], list[float]]:
    """(pods started per second, pods removed per second) of each round."""
    listening, url = asyncio.Event(), [""]
    controllers = [
        HttpKubelet(listening, url) if isinstance(c, Kubelet) and http else c for c in default_controllers()
    ]
    world = World(controllers=controllers)
    running: set[str] = set()
    present: set[str] = set()
    changed = asyncio.Event()

    def on_event(event: Event) -> None:
        meta = event.obj.get("metadata") or {}
        if meta.get("namespace") != NAMESPACE or event.key[1] != "pods":
            return
        name = str(meta.get("name"))
        if event.type == "DELETED":
            present.discard(name)
            running.discard(name)
        else:
            present.add(name)
            if (event.obj.get("status") or {}).get("phase") == "Running":
                running.add(name)
        changed.set()

    async def until(done: Callable[[], bool]) -> None:
        while not done():
            changed.clear()
            await changed.wait()

    await world.start()
    url[0] = world.url
    listening.set()
    world.store.add_listener(on_event)
    kind = world.registry.get("", "v1", "pods")
    assert kind is not None
    started: list[float] = []
    removed: list[float] = []
    try:
        await asyncio.wait_for(world.kubelet.registered.wait(), 30)
        for _ in range(rounds):
            t0 = time.perf_counter()
            for i in range(pods):
                world.api.create(kind, NAMESPACE, _pod(i))
            await asyncio.wait_for(until(lambda: len(running) == pods), 300)
            started.append(pods / (time.perf_counter() - t0))
            t0 = time.perf_counter()
            for i in range(pods):
                world.api.delete(kind, NAMESPACE, f"bench-{i}")
            await asyncio.wait_for(until(lambda: not present), 300)
            removed.append(pods / (time.perf_counter() - t0))
    finally:
        world.store.remove_listener(on_event)
        await world.stop()
    return started, removed


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pods", type=int, default=200, help="pods per round (default 200)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds per way (default 3)")
    args = parser.parse_args()
    rows = {}
    for name, http in (("in process", False), ("over HTTP", True)):
        started, removed = await one_way(http, args.pods, args.rounds)
        rows[name] = (statistics.median(started), statistics.median(removed))
    base_start, base_remove = rows["in process"]
    print(f"{args.pods} pods, {args.rounds} rounds (median)")
    print(f"{'kubelet':<12} {'started/s':>10} {'removed/s':>10} {'start ratio':>12} {'remove ratio':>13}")
    for name, (start, remove) in rows.items():
        ratios = f"{start / base_start:>12.2f} {remove / base_remove:>13.2f}"
        print(f"{name:<12} {start:>10.1f} {remove:>10.1f} {ratios}")


if __name__ == "__main__":
    asyncio.run(main())
