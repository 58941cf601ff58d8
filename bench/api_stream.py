"""Benchmark: records per second the journal stream delivers over HTTP, as a ratio to ``Journal.tail``.

A server subprocess opens a fresh journal, serves ``create_app`` over it with uvicorn on loopback
(``api.serving``) and, when told, appends N records with a controller's mix (``historyjournal``) in
appends of ``BATCH`` records, ``IN_FLIGHT`` appends pipelined. While it appends, a task in the same
process follows the journal with ``Journal.tail`` and counts the records: the baseline, measured in
every phase. The phases, each appending N more records:

* tail: no HTTP client (the journal's own tail rate, what every stream starts from);
* 1 stream: one aiohttp client reads ``GET /api/v1/journal/stream?after=S`` (server-sent events);
* 10 streams: ten clients read the stream at once (each stream serialises every record itself).

A rate is N divided by the time from the first append until the consumer has the Nth record; for the
streams, the time until the slowest client has it, measured in this process.

Run from the repository root: ``.venv/bin/python bench/api_stream.py [--records N]`` (N defaults to
20,000 per phase).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import aiohttp

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench import historyjournal, serverprocess  # noqa: E402

BATCH = 100
IN_FLIGHT = 8
MARK = b"\nevent: record\n"


# -- the server subprocess ---------------------------------------------------------------------------


async def serve(path: Path) -> None:
    """Serve the app; on each ``append N`` line of stdin append N records and report; stop at EOF."""
    from api.app import create_app
    from api.serving import ApiServer
    from store.journal import OFFLINE, Journal
    from store.records import Record

    journal = await Journal.open(path, settings=OFFLINE)
    server = await ApiServer.start(create_app(journal), host="127.0.0.1", port=0)
    print("ready", json.dumps({"url": server.url, "last_seq": journal.last_seq}), flush=True)
    loop = asyncio.get_running_loop()
    made = 0
    while line := await loop.run_in_executor(None, sys.stdin.readline):
        count = int(line.split()[1])
        start = journal.last_seq

        async def tail() -> float:
            seen = 0
            async for _ in journal.tail(after=start):  # noqa: B023 (awaited in this iteration)
                seen += 1
                if seen == count:  # noqa: B023
                    break
            return time.perf_counter()

        follower = asyncio.create_task(tail())
        records = list(historyjournal.history(made + count))[made:]
        made += count
        began = time.perf_counter()
        pending: set[asyncio.Future[list[Record]]] = set()
        for first in range(0, count, BATCH):
            pending.add(journal.submit(records[first : first + BATCH]))
            if len(pending) >= IN_FLIGHT:
                done, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
                for future in done:
                    future.result()
        for future in pending:
            await future
        appended = time.perf_counter() - began
        tailed = await follower - began
        print("done", json.dumps({"appended": appended, "tailed": tailed, "start": start}), flush=True)
    await server.stop()
    await journal.close()


# -- the client --------------------------------------------------------------------------------------


async def read_stream(session: aiohttp.ClientSession, url: str, count: int, opened: asyncio.Event) -> float:
    """Read the stream until ``count`` record events arrived; returns when (``perf_counter``)."""
    async with session.get(url) as response:
        response.raise_for_status()
        seen = 0
        carry = b""
        async for chunk in response.content.iter_any():
            if not opened.is_set():
                opened.set()  # the first bytes (a comment) say the stream follows the journal
            data = carry + chunk
            seen += data.count(MARK)
            carry = data[-(len(MARK) - 1) :]
            if seen >= count:
                return time.perf_counter()
    raise SystemExit(f"the stream ended after {seen} of {count} records")


async def phase(
    server: subprocess.Popen[str], base: str, streams: int, count: int, after: int
) -> tuple[float | None, dict[str, float]]:
    """Append ``count`` records with ``streams`` clients reading; the slowest client's seconds, and the
    server's report."""
    assert server.stdin is not None and server.stdout is not None
    loop = asyncio.get_running_loop()
    url = f"{base}/api/v1/journal/stream?after={after}"
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=600)) as session:
        opened = [asyncio.Event() for _ in range(streams)]
        readers = [asyncio.create_task(read_stream(session, url, count, ready)) for ready in opened]
        for ready in opened:
            await ready.wait()
        began = time.perf_counter()
        server.stdin.write(f"append {count}\n")
        server.stdin.flush()
        line = await loop.run_in_executor(None, server.stdout.readline)
        if not line.startswith("done "):
            raise SystemExit("the server stopped appending; its error is above")
        report = json.loads(line.split(" ", 1)[1])
        ends = await asyncio.gather(*readers)
    return (max(ends) - began if ends else None), report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--records", type=int, default=20_000, help="records per phase (default 20,000)")
    parser.add_argument("--serve", type=Path, help=argparse.SUPPRESS)  # the server subprocess
    args = parser.parse_args()
    if args.serve:
        asyncio.run(serve(args.serve))
        return
    rows: list[tuple[str, float, float, float | None]] = []
    with (
        tempfile.TemporaryDirectory(dir=os.environ.get("BENCH_DIR")) as tmp,
        serverprocess.serving(__file__, Path(tmp) / "journal.sqlite") as (server, started),
    ):
        after = started["last_seq"]
        for name, streams in (("tail", 0), ("1 stream", 1), ("10 streams", 10)):
            seconds, report = asyncio.run(phase(server, started["url"], streams, args.records, after))
            after += args.records
            rows.append((name, report["appended"], report["tailed"], seconds))
    n = args.records
    baseline = n / rows[0][2]
    print(f"cores: {os.cpu_count()}, {n:,} records per phase, appends of {BATCH}, {IN_FLIGHT} in flight")
    print("| phase | appended/s | tail/s | stream/s (slowest client) | ÷ tail, same phase | ÷ tail alone |")
    print("|---|---|---|---|---|---|")
    for name, appended, tailed, seconds in rows:
        if seconds is None:
            print(f"| {name} | {n / appended:,.0f} | {n / tailed:,.0f} | – | – | – |")
        else:
            per = n / seconds
            print(
                f"| {name} | {n / appended:,.0f} | {n / tailed:,.0f} | {per:,.0f} "
                f"| {per / (n / tailed):.2f} | {per / baseline:.2f} |"
            )


if __name__ == "__main__":
    main()
