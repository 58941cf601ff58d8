"""Benchmark: CPU per wake of a caught-up ``Journal.tail``, as a ratio to a plain ``asyncio.Queue`` fan-out.

A journal whose tail buffer is full (10,000 records of 1 KiB, the default count bound) is followed by K
tails that have caught up, as the controller's reconciler, metrics and phase index do. Each round
appends one record and waits until every tail has yielded it: one wake of each tail. Three runs of the
same M rounds, interleaved R times (the best CPU time of each is kept):

* journal, no tails — the appends alone (what the tails' share is measured against);
* journal, K tails — the same appends followed by K tails; the tails' CPU is the difference;
* baseline — one producer puts each record into K ``asyncio.Queue``s and K consumers take them, with the
  same countdown per round: what handing a record to K waiting tasks costs at the least.

CPU per wake is the process's CPU time per record per tail. A tail's wake should cost about what a
queue's does whatever the buffer holds: O(the new records), not O(the buffer).

Run: ``.venv/bin/python bench/journal_tail.py [--tails K] [--rounds M] [--buffer B] [--repeat R]``.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import sys
import tempfile
import time
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.journal_throughput import fresh, make_records  # noqa: E402
from store.journal import Journal  # noqa: E402
from store.records import Record  # noqa: E402
from store.settings import JournalSettings  # noqa: E402


class Countdown:
    """Set once ``count`` tails have seen the round's record."""

    def __init__(self, count: int) -> None:
        self.count, self.left, self.done = count, count, asyncio.Event()

    def arm(self) -> None:
        self.left, self.done = self.count, asyncio.Event()

    def seen(self) -> None:
        self.left -= 1
        if self.left == 0:
            self.done.set()


def settings(buffer: int) -> JournalSettings:
    # Not durable: the benchmark measures CPU, and a sync per round only adds waiting. The byte bound
    # is raised so the buffer holds ``buffer`` records of 1 KiB.
    return JournalSettings(
        snapshot_every=None, durable=False, tail_buffer=buffer, tail_buffer_bytes=buffer * 2048
    )


async def journal_run(path: Path, fill: list[Record], rounds: list[Record], tails: int, buffer: int) -> float:
    async with await Journal.open(path, settings=settings(buffer)) as journal:
        for i in range(0, len(fill), 1000):
            await journal.append(fill[i : i + 1000])
        countdown = Countdown(tails)
        started = journal.last_seq

        async def follow() -> None:
            async for record in journal.tail(after=started):
                assert record.seq is not None
                countdown.seen()

        followers = [asyncio.create_task(follow()) for _ in range(tails)]
        await asyncio.sleep(0)  # every tail is waiting for a commit
        cpu = time.process_time()
        for record in rounds:
            countdown.arm()
            await journal.append([record])
            if tails:
                await countdown.done.wait()
        cpu = time.process_time() - cpu
    await asyncio.gather(*followers)
    return cpu


async def queue_run(rounds: list[Record], tails: int) -> float:
    queues: list[asyncio.Queue[Record | None]] = [asyncio.Queue() for _ in range(tails)]
    countdown = Countdown(tails)

    async def consume(queue: asyncio.Queue[Record | None]) -> None:
        while await queue.get() is not None:
            countdown.seen()

    consumers = [asyncio.create_task(consume(queue)) for queue in queues]
    await asyncio.sleep(0)
    cpu = time.process_time()
    for record in rounds:
        countdown.arm()
        for queue in queues:
            queue.put_nowait(record)
        await countdown.done.wait()
    cpu = time.process_time() - cpu
    for queue in queues:
        queue.put_nowait(None)
    await asyncio.gather(*consumers)
    return cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tails", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=2_000)
    parser.add_argument("--buffer", type=int, default=10_000, help="records kept for tails (tail_buffer)")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    made = make_records(args.buffer + args.rounds)
    fill, rounds = made[: args.buffer], made[args.buffer :]
    gc.freeze()  # the fixture is not work of either side
    best: dict[str, float] = {}

    def keep(name: str, cpu: float) -> None:
        best[name] = min(best.get(name, float("inf")), cpu)

    with tempfile.TemporaryDirectory(dir=os.environ.get("BENCH_DIR")) as tmp:
        directory = Path(tmp)
        runs: list[tuple[str, Callable[[], Coroutine[Any, Any, float]]]] = [
            ("alone", lambda: journal_run(fresh(directory, "a.sqlite"), fill, rounds, 0, args.buffer)),
            (
                "tails",
                lambda: journal_run(fresh(directory, "t.sqlite"), fill, rounds, args.tails, args.buffer),
            ),
            ("queue", lambda: queue_run(rounds, args.tails)),
        ]
        for _ in range(args.repeat):  # interleaved, so a busy moment hits every run alike
            for name, run in runs:
                keep(name, asyncio.run(run()))
    wakes = args.tails * args.rounds
    tail_us = (best["tails"] - best["alone"]) / wakes * 1e6
    queue_us = best["queue"] / wakes * 1e6
    print(
        f"cores: {os.cpu_count()}; {args.tails} tails, {args.rounds:,} rounds of a 1-record append, "
        f"a buffer of {args.buffer:,} records of 1 KiB; best of {args.repeat}"
    )
    table = [
        ("journal, appends alone", best["alone"], ""),
        (f"journal, {args.tails} tails", best["tails"], f"{tail_us:>9.1f} {tail_us / queue_us:>8.2f}"),
        (f"baseline: asyncio.Queue fan-out to {args.tails}", best["queue"], f"{queue_us:>9.1f} {1:>8.2f}"),
    ]
    print(f"{'':44} {'CPU s':>8} {'us/wake':>9} {'x queue':>8}")
    for label, cpu, per_wake in table:
        print(f"{label:44} {cpu:>8.3f} {per_wake}")


if __name__ == "__main__":
    main()
