"""Benchmark: ``/healthz`` latency while many clients read the journal stream, as a ratio to none reading.

Two server subprocesses serve ``create_app`` over a fresh journal each with uvicorn on loopback
(``api.serving``), each appending ``RATE`` records a second (a controller's mix, ``historyjournal``) for
the streams to deliver: one with arcsm's default bounds (``api.limits.HttpLimits``: 32 streams), one
with no bound on the streams (and room for every connection), as before the bounds. The phases:

* baseline: the bounded server, nobody reading the stream;
* bounded: READERS clients ask the bounded server for the stream: 32 read it, the rest are answered 503;
* unbounded: READERS clients read the stream of the unbounded server.

In each phase a probe subprocess (so the readers' client work does not delay it) sends PROBES
sequential ``GET /healthz`` on one kept-alive connection and reports the median and the 95th
percentile; the table gives both and their ratio to the baseline's.

Run from the repository root: ``.venv/bin/python bench/api_stream_readers.py [--readers N]`` (N defaults
to 1,000).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import aiohttp

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench import historyjournal  # noqa: E402

RATE = 50  # records appended a second while a phase runs
PROBES = 200
BOUNDED, UNBOUNDED = "bounded", "unbounded"


# -- the server subprocess ---------------------------------------------------------------------------


async def serve(path: Path, mode: str) -> None:
    """Serve the app and append RATE records a second until stdin closes."""
    from api.app import create_app
    from api.limits import HttpLimits
    from api.serving import ApiServer
    from store.journal import OFFLINE, Journal

    journal = await Journal.open(path, settings=OFFLINE)
    if mode == BOUNDED:
        limits = HttpLimits()
        app = create_app(journal, max_streams=limits.max_streams)
    else:
        limits, app = HttpLimits(max_connections=10_000), create_app(journal)
    server = await ApiServer.start(app, host="127.0.0.1", port=0, limits=limits)
    print("ready", json.dumps({"url": server.url}), flush=True)
    records = historyjournal.history(10**9)

    async def append() -> None:
        while True:
            await journal.append([next(records) for _ in range(RATE // 10)])
            await asyncio.sleep(0.1)

    appending = asyncio.create_task(append())
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)
    appending.cancel()
    await server.stop()
    await journal.close()


# -- the probe subprocess ----------------------------------------------------------------------------


async def probe(url: str) -> None:
    seconds = []
    async with aiohttp.ClientSession() as session:
        for _ in range(PROBES):
            began = time.perf_counter()
            async with session.get(f"{url}/healthz") as answer:
                await answer.read()
                assert answer.status == 200, answer.status
            seconds.append(time.perf_counter() - began)
    cuts = statistics.quantiles(seconds, n=20)
    print(json.dumps({"median": statistics.median(seconds), "p95": cuts[18]}), flush=True)


def probed(url: str) -> dict[str, float]:
    done = subprocess.run(
        [sys.executable, __file__, "--probe", url], stdout=subprocess.PIPE, text=True, cwd=ROOT, check=True
    )
    result: dict[str, float] = json.loads(done.stdout)
    return result


# -- the readers -------------------------------------------------------------------------------------


class Answers:
    """How many readers were answered (reading, or refused); ``all`` is set once every one was."""

    def __init__(self, readers: int) -> None:
        self.readers, self.reading, self.refused = readers, 0, 0
        self.all = asyncio.Event()
        if readers == 0:
            self.all.set()

    def count(self, reading: bool) -> None:
        self.reading += reading
        self.refused += not reading
        if self.reading + self.refused == self.readers:
            self.all.set()


async def read(session: aiohttp.ClientSession, url: str, answers: Answers) -> None:
    try:
        answer = await session.get(f"{url}/api/v1/journal/stream")
    except aiohttp.ClientError:
        answers.count(False)  # closed before answering
        return
    async with answer:
        answers.count(answer.status == 200)
        async for _ in answer.content.iter_any():
            pass


async def with_readers(url: str, readers: int) -> tuple[dict[str, float], int]:
    """The probe's figures while ``readers`` clients ask for the stream; and how many read it."""
    connector = aiohttp.TCPConnector(limit=0)
    answers = Answers(readers)
    async with aiohttp.ClientSession(connector=connector, timeout=aiohttp.ClientTimeout()) as session:
        tasks = [asyncio.create_task(read(session, url, answers)) for _ in range(readers)]
        await answers.all.wait()
        figures = await asyncio.get_running_loop().run_in_executor(None, probed, url)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    return figures, answers.reading


def server(mode: str, directory: str) -> tuple[subprocess.Popen[str], str]:
    journal = Path(directory) / f"{mode}.sqlite"
    proc = subprocess.Popen(
        [sys.executable, __file__, "--serve", str(journal), "--mode", mode],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    assert proc.stdout is not None
    ready = next((line for line in proc.stdout if line.startswith("ready ")), None)
    if ready is None:
        raise SystemExit("the API server did not start; its error is above")
    return proc, json.loads(ready.split(" ", 1)[1])["url"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--readers", type=int, default=1_000, help="stream clients (default 1,000)")
    parser.add_argument("--serve", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--mode", choices=(BOUNDED, UNBOUNDED), help=argparse.SUPPRESS)
    parser.add_argument("--probe", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        asyncio.run(serve(args.serve, args.mode))
        return
    if args.probe:
        asyncio.run(probe(args.probe))
        return
    rows: list[tuple[str, dict[str, float]]] = []
    with tempfile.TemporaryDirectory(dir=os.environ.get("BENCH_DIR")) as tmp:
        for mode in (BOUNDED, UNBOUNDED):
            proc, url = server(mode, tmp)
            try:
                if mode == BOUNDED:
                    rows.append(("baseline: no reader", asyncio.run(with_readers(url, 0))[0]))
                figures, reading = asyncio.run(with_readers(url, args.readers))
                rows.append((f"{mode}: {args.readers:,} asked, {reading:,} reading", figures))
            finally:
                assert proc.stdin is not None
                proc.stdin.close()
                proc.wait(timeout=60)
    base = rows[0][1]
    print(f"cores: {os.cpu_count()}, {RATE} records/s appended, {PROBES} sequential /healthz per phase")
    print("| phase | median ms | p95 ms | median ÷ baseline | p95 ÷ baseline |")
    print("|---|---|---|---|---|")
    for name, figures in rows:
        print(
            f"| {name} | {figures['median'] * 1000:.1f} | {figures['p95'] * 1000:.1f} "
            f"| {figures['median'] / base['median']:.1f} | {figures['p95'] / base['p95']:.1f} |"
        )


if __name__ == "__main__":
    main()
