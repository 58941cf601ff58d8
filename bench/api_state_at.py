"""Benchmark: an object at a journal position (``/at?seq=``) against the scale set now, on a big journal.

A journal of N records with a controller's mix (``historyjournal``) is written straight into SQLite, and
projection snapshots are added to it every ``--snapshot-every`` records (50,000, the journal's default
cadence), each the projection folded up to its seq, as the journal writes them. All of them are kept
here (the server opens the journal with ``snapshots_kept`` above their number; the journal keeps 2 by
default: a position before the older one is read from the first record, measured apart as the "no
snapshot" row). A server subprocess opens the journal and
serves ``create_app(journal)`` with uvicorn on loopback, as ``arcsm run --http`` does; once its phase
index has folded the journal, an aiohttp client in this process asks, one request at a time:

* ``GET /api/v1/namespaces/arc-runners/autoscalingrunnersets/arc-0`` (the baseline: the scale set now,
  answered from memory);
* ``GET .../autoscalingrunnersets/arc-0/at?seq=S`` for positions spread over the whole journal (the seqs
  of arc-0's transitions, ``--positions`` of them, asked in turn, so each snapshot is read back again as
  the positions move between them);
* ``GET .../ephemeralrunnersets/arc-0-ers/at?seq=S`` at the same positions (a runner set owns its runners:
  the children come from the snapshot and from the records after it);
* once, the scale set at a position before the first snapshot (read from the journal's first record).

The first answer in each snapshot window reads the window (``store.positions``): those are asked once
before the timing starts, and the slowest of them is reported apart.

Each figure is the median latency over ``--rounds`` rounds of ``--seconds`` each, the kinds of request
interleaved; the ratios are to the baseline measured in the same run. ``/at`` must stay within 2× the
baseline.

Run from the repository root: ``.venv/bin/python bench/api_state_at.py [--records N]`` (N defaults to
1,000,000: about two minutes to build, most of it writing the file).
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import os
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import aiohttp

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench import historyjournal, serverprocess  # noqa: E402

BASE = f"/api/v1/namespaces/{historyjournal.NAMESPACE}"
VIEW = f"{BASE}/autoscalingrunnersets/arc-0"
ERS_AT = f"{BASE}/ephemeralrunnersets/arc-0-ers/at"
TARGET = 2.0  # /at within this many times the view's latency


# -- building ----------------------------------------------------------------------------------------


def add_snapshots(path: Path, every: int) -> int:
    """Fold the journal at ``path`` and store a projection snapshot every ``every`` seqs; how many."""
    from store import rows, snapshots
    from store.projection import Projection
    from store.records import Record, RecordType, Seq

    projection = Projection()
    written = 0
    connection = sqlite3.connect(path)
    try:
        reader = connection.execute(f"SELECT {rows.COLUMNS} FROM records ORDER BY seq")
        pending: list[tuple[int, str, int, bytes, int]] = []
        for row in reader:
            seq = int(row[0])
            if row[2] == RecordType.OBSERVED.value:
                projection.apply(rows.decode(tuple(row)))
            if seq % every == 0:
                projection.apply(Record(type=RecordType.TIMER, seq=Seq(seq)))  # only advances its seq
                blob, checksum = snapshots.pack(projection.for_snapshot())
                pending.append((seq, str(row[1]), len(projection), blob, checksum))
        with connection:
            connection.executemany(
                "INSERT INTO snapshots (seq, at, objects, body, checksum) VALUES (?, ?, ?, ?, ?)", pending
            )
        written = len(pending)
    finally:
        connection.close()
    return written


# -- the server subprocess ---------------------------------------------------------------------------


async def serve(path: Path) -> None:
    from api.app import create_app
    from api.serving import ApiServer
    from store.journal import OFFLINE, Journal

    # Nothing pruned and no snapshot written; every snapshot kept (the default keeps two, and the journal
    # drops the others as it opens: positions before them would be read from the first record).
    kept = dataclasses.replace(OFFLINE, snapshots_kept=1_000_000)
    journal = await Journal.open(path, settings=kept)
    app = create_app(journal)
    server = await ApiServer.start(app, host="127.0.0.1", port=0)
    await app.state.api.phases.caught_up(journal.last_seq)
    print("ready", json.dumps({"url": server.url, "last_seq": journal.last_seq}), flush=True)
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)
    await server.stop()
    await journal.close()


# -- the client ------------------------------------------------------------------------------------------


async def get(session: aiohttp.ClientSession, url: str) -> dict[str, Any]:
    async with session.get(url) as response:
        if response.status != 200:
            raise SystemExit(f"GET {url} answered {response.status}: {(await response.text())[:200]}")
        answer = await response.json()
        assert isinstance(answer, dict)
        return answer


async def positions(session: aiohttp.ClientSession, base: str, count: int) -> list[int]:
    """``count`` seqs of arc-0's transitions, spread evenly over the journal."""
    seqs: list[int] = []
    after: int | None = 0
    while after is not None:
        page = await get(session, f"{base}{VIEW}/phases?after={after}&limit=1000")
        seqs += [item["seq"] for item in page["items"]]
        after = page["next"]
    step = max(1, len(seqs) // count)
    return seqs[::step][:count]


async def latencies(session: aiohttp.ClientSession, urls: list[str], seconds: float) -> list[float]:
    """Seconds per request, asking ``urls`` in turn for ``seconds`` (each at least once)."""
    found: list[float] = []
    deadline = time.perf_counter() + seconds
    i = 0
    while i < len(urls) or time.perf_counter() < deadline:
        began = time.perf_counter()
        await get(session, urls[i % len(urls)])
        found.append(time.perf_counter() - began)
        i += 1
    return found


async def drive(base: str, args: argparse.Namespace) -> dict[str, Any]:
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=1)) as session:
        seqs = await positions(session, base, args.positions)
        first = min(seqs)
        after = [s for s in seqs if s >= args.snapshot_every]
        plans = {
            "view": [base + VIEW],
            "scale set /at": [f"{base}{VIEW}/at?seq={s}" for s in after],
            "runner set /at": [f"{base}{ERS_AT}?seq={s}" for s in after],
        }
        cold = 0.0  # the slowest first answer: a position in a window not read yet
        for urls in plans.values():  # every answer is checked once before anything is timed
            for url in urls:
                began = time.perf_counter()
                await get(session, url)
                cold = max(cold, time.perf_counter() - began)
        times: dict[str, list[float]] = {what: [] for what in plans}
        for i in range(args.rounds):
            order = list(plans) if i % 2 == 0 else list(plans)[::-1]
            for what in order:
                times[what] += await latencies(session, plans[what], args.seconds)
        began = time.perf_counter()
        await get(session, f"{base}{VIEW}/at?seq={first}")
        unsnapshotted = time.perf_counter() - began if first < args.snapshot_every else None
        return {
            "median": {what: statistics.median(found) for what, found in times.items()},
            "count": {what: len(found) for what, found in times.items()},
            "positions": len(after),
            "span": (min(after), max(after)),
            "unsnapshotted": (first, unsnapshotted),
            "cold": cold,
        }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--records", type=int, default=1_000_000, help="journal records (default 1,000,000)")
    parser.add_argument("--snapshot-every", type=int, default=50_000, help="records between snapshots")
    parser.add_argument("--positions", type=int, default=200, help="positions asked (default 200)")
    parser.add_argument("--seconds", type=float, default=3.0, help="seconds per measurement (default 3)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds (default 3)")
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
        began = time.perf_counter()
        count = add_snapshots(path, args.snapshot_every)
        snapshotted = time.perf_counter() - began
        with serverprocess.serving(__file__, path) as (_, started):
            figures = asyncio.run(drive(started["url"], args))
    report(args, built, count, snapshotted, figures)


async def create(path: Path) -> None:
    from store.journal import OFFLINE, Journal

    await (await Journal.open(path, settings=OFFLINE)).close()


def report(
    args: argparse.Namespace, built: float, count: int, snapshotted: float, figures: dict[str, Any]
) -> None:
    median, counts = figures["median"], figures["count"]
    low, high = figures["span"]
    print(
        f"cores: {os.cpu_count()}, journal: {args.records:,} records (built in {built:.0f} s), "
        f"{count} snapshots every {args.snapshot_every:,} records (added in {snapshotted:.0f} s); "
        f"{figures['positions']} positions from seq {low:,} to {high:,}, one request at a time"
    )
    view = median["view"]
    print("| request | median ms | requests | ratio to the view |")
    print("|---|---|---|---|")
    for what in ("view", "scale set /at", "runner set /at"):
        print(f"| {what} | {median[what] * 1000:.2f} | {counts[what]:,} | {median[what] / view:.2f} |")
    print(
        f"| slowest first answer (a snapshot window read for the first time) | {figures['cold'] * 1000:.1f} "
        f"| 1 | {figures['cold'] / view:.1f} |"
    )
    first, alone = figures["unsnapshotted"]
    if alone is not None:
        print(
            f"| scale set /at, seq {first:,} (before the first snapshot: read from the first record) | "
            f"{alone * 1000:.1f} | 1 | {alone / view:.1f} |"
        )
    worst = max(median["scale set /at"], median["runner set /at"]) / view
    verdict = "within" if worst <= TARGET else "NOT within"
    print(f"/at is {verdict} {TARGET:.0f}× the view ({worst:.2f}×)")


if __name__ == "__main__":
    main()
