"""Benchmark: phase history requests answered from the in-memory index, against a scan and ``/healthz``.

A journal of N records with a controller's mix (``historyjournal``: observed scale sets, runner sets,
runners and Pods, decisions with transitions, effects and results) is written straight into SQLite.
A server subprocess opens it and serves two apps over it with uvicorn on loopback (``api.serving``):

* index: ``create_app(journal)`` as ``arcsm run --http`` builds it, answering from ``api.phaseindex``;
* scan: ``create_app(journal, phase_items_kept=0)``, whose index holds nothing, so every phase request
  takes the fallback path of ``api.phases`` (a scan of the journal from its first record).

Once both indexes have folded the journal, an aiohttp client in this process drives each request with
``CONCURRENCY`` in flight (one, for a request slower than a quarter of a measurement) for ``--seconds``
at a time, the modes interleaved over ``--rounds`` rounds (the best round counts). aiohttp rather than
httpx: on 2 cores httpx itself tops out near 560 requests/s, below the server, so every ratio to
``/healthz`` would measure the client. Measured, in requests per second:

* ``GET /api/v1/namespaces/arc-runners/autoscalingrunnersets/arc-0/phases`` (one scale set's history);
* ``GET /api/v1/phases?limit=100`` (the first page);
* ``GET /api/v1/phases?after=S&limit=100`` (the newest page, as the timeline page refreshes it);
* ``GET /healthz`` on the same server: the ceiling of the HTTP stack, client included.

Both apps must answer each request with the same body; the run stops if they do not.

Run from the repository root: ``.venv/bin/python bench/api_phase_history.py [--records N] [--seconds S]``
(N defaults to 100,000, which runs in about a minute).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import aiohttp

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench import historyjournal, serverprocess  # noqa: E402

CONCURRENCY = 4
OBJECT = "/api/v1/namespaces/arc-runners/autoscalingrunnersets/arc-0/phases"
FIRST = "/api/v1/phases?limit=100"


# -- the server subprocess ---------------------------------------------------------------------------


async def serve(path: Path) -> None:
    """Serve the index app and the scan app over the journal at ``path`` until stdin closes."""
    from api.app import create_app
    from api.serving import ApiServer
    from store.journal import OFFLINE, Journal

    began = time.perf_counter()
    journal = await Journal.open(path, settings=OFFLINE)  # read only: nothing pruned, no snapshots
    opened = time.perf_counter() - began
    apps = {"index": create_app(journal), "scan": create_app(journal, phase_items_kept=0)}
    servers = {mode: await ApiServer.start(app, host="127.0.0.1", port=0) for mode, app in apps.items()}
    began = time.perf_counter()
    for app in apps.values():
        await app.state.api.phases.caught_up(journal.last_seq)
    folded = time.perf_counter() - began
    print(
        "ready",
        json.dumps(
            {
                "urls": {mode: server.url for mode, server in servers.items()},
                "opened": opened,
                "folded": folded,
                "last_seq": journal.last_seq,
            }
        ),
        flush=True,
    )
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)
    for server in servers.values():
        await server.stop()
    await journal.close()


# -- the client ------------------------------------------------------------------------------------------


async def get(session: aiohttp.ClientSession, url: str) -> bytes:
    async with session.get(url) as response:
        if response.status != 200:
            raise SystemExit(f"GET {url} answered {response.status}: {(await response.text())[:200]}")
        return await response.read()


async def rate(session: aiohttp.ClientSession, url: str, seconds: float, in_flight: int) -> float:
    """Requests per second with ``in_flight`` requests open, started for ``seconds`` (at least one each)."""
    done = 0
    began = time.perf_counter()
    deadline = began + seconds

    async def worker() -> None:
        nonlocal done
        while True:
            await get(session, url)
            done += 1
            if time.perf_counter() >= deadline:
                return

    await asyncio.gather(*(worker() for _ in range(in_flight)))
    return done / (time.perf_counter() - began)


Figures = dict[tuple[str, str], float]


async def drive(urls: dict[str, str], seconds: float, rounds: int) -> tuple[Figures, Figures, int]:
    """The best requests/s of each (request, mode), how many were in flight, and the phase items."""
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=CONCURRENCY)) as session:
        newest, items = await newest_page(session, urls["index"])
        requests = {"object": OBJECT, "first page": FIRST, "newest page": newest}
        in_flight: Figures = {("healthz", "index"): CONCURRENCY}
        for what, url in requests.items():
            answers = {}
            for mode, base in urls.items():
                began = time.perf_counter()
                answers[mode] = json.loads(await get(session, base + url))
                # A request slower than a measurement's share runs alone: the server answers one at a
                # time anyway, and four of them would only stretch the measurement.
                slow = (time.perf_counter() - began) * CONCURRENCY > seconds
                in_flight[(what, mode)] = 1 if slow else CONCURRENCY
            if answers["index"] != answers["scan"]:
                raise SystemExit(f"the index and the scan answer {url} differently: fix the index first")
            if not answers["index"]["items"]:
                raise SystemExit(f"{url} answered no items: the journal holds no phase history")
        best: Figures = {}
        for i in range(rounds):
            plan = [("healthz", "index", "/healthz")]
            for what, url in requests.items():
                pair = [(what, "index", url), (what, "scan", url)]
                plan += pair if i % 2 == 0 else pair[::-1]
            for what, mode, url in plan:
                figure = await rate(session, urls[mode] + url, seconds, int(in_flight[(what, mode)]))
                best[(what, mode)] = max(best.get((what, mode), 0.0), figure)
        return best, in_flight, items


async def newest_page(session: aiohttp.ClientSession, base: str) -> tuple[str, int]:
    """The URL of the last full page of ``/api/v1/phases`` (``after`` the item 100 before the newest),
    and how many items the history holds."""
    after = 0
    seqs: list[int] = []
    while True:
        page = json.loads(await get(session, f"{base}/api/v1/phases?after={after}&limit=1000"))
        seqs += [item["seq"] for item in page["items"]]
        if page["next"] is None:
            break
        after = page["next"]
    start = seqs[-101] if len(seqs) > 100 else 0
    return f"/api/v1/phases?after={start}&limit=100", len(seqs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--records", type=int, default=100_000, help="journal records (default 100,000)")
    parser.add_argument("--seconds", type=float, default=1.5, help="seconds per measurement (default 1.5)")
    parser.add_argument("--rounds", type=int, default=2, help="rounds, the best counts (default 2)")
    parser.add_argument("--serve", type=Path, help=argparse.SUPPRESS)  # the server subprocess
    args = parser.parse_args()
    if args.serve:
        asyncio.run(serve(args.serve))
        return
    with tempfile.TemporaryDirectory(dir=os.environ.get("BENCH_DIR")) as tmp:
        path = Path(tmp) / "journal.sqlite"
        began = time.perf_counter()
        asyncio.run(create(path))
        historyjournal.build(path, args.records)
        built = time.perf_counter() - began
        with serverprocess.serving(__file__, path) as (_, started):
            best, in_flight, items = asyncio.run(drive(started["urls"], args.seconds, args.rounds))
    report(args.records, built, started, best, in_flight, items)


async def create(path: Path) -> None:
    from store.journal import OFFLINE, Journal

    await (await Journal.open(path, settings=OFFLINE)).close()


def report(
    records: int, built: float, started: dict[str, Any], best: Figures, in_flight: Figures, items: int
) -> None:
    print(
        f"cores: {os.cpu_count()}, journal: {records:,} records (built in {built:.1f} s), "
        f"opened in {started['opened']:.1f} s, indexes folded in {started['folded']:.1f} s, "
        f"{items:,} phase items"
    )
    healthz = best[("healthz", "index")]
    print(f"GET /healthz: {healthz:,.0f} req/s (the ceiling), {CONCURRENCY} requests in flight")
    print("| request | index req/s | scan req/s | index/scan | index/healthz |")
    print("|---|---|---|---|---|")
    for what in ("object", "first page", "newest page"):
        index, scan = best[(what, "index")], best[(what, "scan")]
        alone = " (scan: 1 in flight)" if in_flight[(what, "scan")] == 1 else ""
        print(f"| {what}{alone} | {index:,.0f} | {scan:,.1f} | {index / scan:,.1f} | {index / healthz:.2f} |")


if __name__ == "__main__":
    main()
