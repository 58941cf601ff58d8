"""Benchmark: how long opening a journal takes to rebuild its projection.

A journal of N records (observed EphemeralRunners whose JSON body is 1 KiB, N/100 objects each changed
about a hundred times, each owned by one of 100 EphemeralRunnerSets, 1% deleted and re-created along the
way) is written straight into SQLite with valid checksums. Then it is opened twice:

* full fold — no snapshot: every record is read, checked and applied from the first;
* snapshot + tail — after a snapshot of the whole projection and ``--tail`` more records (the default
  snapshot interval), as a controller restarting on a busy cluster does.

Run: ``.venv/bin/python bench/journal_rebuild.py [--records N] [--tail T]`` (N defaults to 200,000,
which runs in well under a minute; ``--records 1000000`` builds a ~1.3 GB journal).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import sqlite3
import tempfile
import time
from pathlib import Path

from store import records, rows
from store.journal import OFFLINE, Journal
from store.records import Record

OWNERS = 100
AT = "2026-01-01T00:00:00.000000Z"


def record(i: int, objects: int) -> Record:
    n = i % objects
    obj = {
        "apiVersion": "actions.github.com/v1alpha1",
        "kind": "EphemeralRunner",
        "metadata": {
            "name": f"runner-{n}",
            "namespace": "arc-runners",
            "uid": f"uid-{n}",
            "resourceVersion": str(i),
            "ownerReferences": [
                {"kind": "EphemeralRunnerSet", "name": f"ers-{n % OWNERS}", "uid": f"ers-{n % OWNERS}"}
            ],
        },
    }
    event = "DELETED" if i % 100 == 99 else "ADDED" if i < objects or i % 100 == 0 else "MODIFIED"
    size = len(json.dumps({"event": event, "object": obj}, separators=(",", ":")))
    obj["status"] = {
        "phase": "Running",
        "pad": "x" * (1024 - size - len(',"status":{"phase":"Running","pad":""}')),
    }
    return records.observed(event, "EphemeralRunner", obj)


def bulk_insert(path: Path, start: int, count: int, objects: int) -> None:
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA synchronous = OFF")
    db.execute("BEGIN")
    for first in range(start, start + count, 10_000):
        last = min(first + 10_000, start + count)
        db.executemany(
            rows.INSERT, [rows.encode(record(i, objects), i + 1, AT)[0] for i in range(first, last)]
        )
    db.execute("COMMIT")
    db.close()


async def timed_open(path: Path) -> tuple[float, int, int]:
    began = time.perf_counter()
    journal = await Journal.open(path, settings=OFFLINE)
    elapsed = time.perf_counter() - began
    objects, seq = len(journal.projection), journal.projection.seq
    await journal.close()
    return elapsed, objects, seq


async def create(path: Path) -> None:
    await (await Journal.open(path, settings=OFFLINE)).close()


async def snapshot(path: Path) -> None:
    async with await Journal.open(path, settings=OFFLINE) as journal:
        await journal.snapshot()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=200_000)
    parser.add_argument("--tail", type=int, default=50_000)
    args = parser.parse_args()
    objects = max(1, args.records // 100)
    with tempfile.TemporaryDirectory(dir=os.environ.get("BENCH_DIR")) as tmp:
        path = Path(tmp) / "journal.sqlite"
        asyncio.run(create(path))
        began = time.perf_counter()
        bulk_insert(path, 0, args.records, objects)
        built = time.perf_counter() - began
        size = path.stat().st_size
        full, live, seq = asyncio.run(timed_open(path))
        assert seq == args.records
        asyncio.run(snapshot(path))
        bulk_insert(path, args.records + 1, args.tail, objects)  # after the snapshot's own record
        partial, _, seq = asyncio.run(timed_open(path))
        assert seq == args.records + 1 + args.tail
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        f"cores: {os.cpu_count()}, records: {args.records:,} x 1 KiB over {objects:,} objects ({live:,} live)"
    )
    print(f"journal file: {size / 1e6:,.0f} MB (built in {built:.1f} s)")
    print(f"full fold:        {full:6.2f} s  = {args.records / full:>9,.0f} records/s")
    print(f"snapshot + tail:  {partial:6.2f} s  (tail of {args.tail:,} records)")
    print(f"peak RSS: {peak:,.0f} MB")


if __name__ == "__main__":
    main()
