"""Benchmark: the memory a resync's lists take in the controller, read whole and all at once (as before)
against page by page and one watch at a time (as now).

An ``arcsm sim`` in a subprocess holds P runner Pods (shaped as the controller writes them; no scheduler
takes them, so they stay as created) and P Secrets in one namespace. The benchmark lists them with the
watchers' own code (``watchers.listing``: kubernetes_asyncio over HTTP, pages of ``--page-size``) against
a cache that already holds every object, which is what a periodic resync finds, and measures the peak of
the Python heap above what it held before (``tracemalloc``), for:

* **whole** (the baseline, the code before): every page's objects kept until the last page, then diffed;
* **paged** (now): each page diffed when it arrives and dropped before the next is asked for;

each for the Pods alone and for both kinds listed at once (the baseline: every watch re-listed at the
same moment) against one after the other (now: each watch at its own point of the period). The modes
alternate over ``--repeat`` rounds; each figure is the smallest peak of its rounds.

Run from the repository root: ``.venv/bin/python bench/resync_memory.py [--objects P] [--page-size N]
[--repeat R]``.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import logging
import sys
import tempfile
import tracemalloc
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

import aiohttp
from kubernetes_asyncio import client

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import fleet, sim_throughput
from watchers import kinds, listing, objects, retrying
from watchers.objects import Cache
from watchers.settings import Backoff

NS = "default"
USER = "resync-bench"
KINDS = (kinds.BY_NAME["Pod"], kinds.BY_NAME["Secret"])


async def create(session: aiohttp.ClientSession, url: str, count: int) -> None:
    headers = {"Authorization": f"Bearer {USER}"}
    queue: asyncio.Queue[int] = asyncio.Queue()
    for i in range(count):
        queue.put_nowait(i)

    async def worker() -> None:
        while not queue.empty():
            i = queue.get_nowait()
            pod = sim_throughput.runner_pod(i)
            secret = {"metadata": {"name": f"bench-runner-{i}"}, "data": {"jitToken": "eHh4" * 300}}
            for path, body in (
                (f"/api/v1/namespaces/{NS}/pods", pod),
                (f"/api/v1/namespaces/{NS}/secrets", secret),
            ):
                async with session.post(url + path, json=body, headers=headers) as resp:
                    if resp.status >= 300:
                        raise SystemExit(f"create {path}: {resp.status} {await resp.text()}")

    await asyncio.gather(*(worker() for _ in range(8)))


class Lister:
    def __init__(self, api: client.ApiClient, page_size: int) -> None:
        self.api = api
        self.page_size = page_size
        self.retry = retrying.policy(Backoff(), logger=logging.getLogger("resync-bench"), what="list")
        self.caches: dict[str, Cache] = {}

    def pages(self, kind: kinds.WatchedKind) -> Any:
        return listing.pages(
            kind, kind.list_call(self.api, NS), page_size=self.page_size, timeout=60.0, retry=self.retry
        )

    async def seed(self) -> None:
        for kind in KINDS:
            items = [o async for page in self.pages(kind) for o in page.items]
            self.caches[kind.kind] = objects.seed(items)

    async def whole(self, kind: kinds.WatchedKind) -> int:
        items: list[Any] = []
        rv = ""
        async for page in self.pages(kind):
            items.extend(page.items)
            rv = page.resource_version
        return len(listing.diff(kind, self.caches[kind.kind], items, rv))

    async def paged(self, kind: kinds.WatchedKind) -> int:
        diff: listing.Diff | None = None
        changes = 0
        async for page in self.pages(kind):
            diff = diff or listing.Diff(kind, self.caches[kind.kind], page.resource_version)
            changes += len(diff.page(page.items))
        assert diff is not None
        return changes + len(diff.rest())


async def peak(work: Callable[[], Awaitable[Sequence[int]]]) -> float:
    """MB the traced heap rose to above where it was, while ``work`` ran (which must find no change)."""
    gc.collect()
    tracemalloc.reset_peak()
    base = tracemalloc.get_traced_memory()[0]
    changes = await work()
    if any(changes):
        raise SystemExit(f"a resync of unchanged objects found changes: {changes}")
    return (tracemalloc.get_traced_memory()[1] - base) / 2**20


async def main(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory(prefix="resync-") as tmp, fleet.simulated(Path(tmp), 1.0) as sim:
        async with aiohttp.ClientSession() as session:
            await create(session, sim.kube_url, args.objects)
        configuration = client.Configuration(host=sim.kube_url)
        configuration.api_key = {"BearerToken": USER}
        configuration.api_key_prefix = {"BearerToken": "Bearer"}
        async with client.ApiClient(configuration) as api:
            lister = Lister(api, args.page_size)
            await lister.seed()
            pods = KINDS[0]
            modes: dict[str, Callable[[], Awaitable[Sequence[int]]]] = {
                "Pods, whole": lambda: asyncio.gather(lister.whole(pods)),
                "Pods, paged": lambda: asyncio.gather(lister.paged(pods)),
                "both kinds at once, whole": lambda: asyncio.gather(*(lister.whole(k) for k in KINDS)),
                "both kinds one after the other, paged": lambda: sequential(lister, KINDS),
            }
            tracemalloc.start()
            best: dict[str, float] = {}
            for _ in range(args.repeat):
                for name, work in modes.items():
                    best[name] = min(best.get(name, float("inf")), await peak(work))
            tracemalloc.stop()
    print(
        f"{args.objects:,} Pods and {args.objects:,} Secrets, "
        f"pages of {args.page_size}, best of {args.repeat}"
    )
    print(f"{'list':<40}{'peak MB':>10}{'÷ whole':>10}")
    for name, value in best.items():
        base = best["Pods, whole"] if name.startswith("Pods") else best["both kinds at once, whole"]
        print(f"{name:<40}{value:>10.1f}{value / base:>10.2f}")


async def sequential(lister: Lister, every: tuple[kinds.WatchedKind, ...]) -> list[int]:
    return [await lister.paged(kind) for kind in every]


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--objects", type=int, default=3000, help="Pods, and as many Secrets (3000)")
    parser.add_argument("--page-size", type=int, default=500, help="objects per list page (500)")
    parser.add_argument("--repeat", type=int, default=3, help="rounds of every mode (3)")
    asyncio.run(main(parser.parse_args()))
