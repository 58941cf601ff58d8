"""Benchmark: journal append throughput, as a ratio to plain sqlite3 ``executemany`` in one transaction.

Both write the same records (observed ConfigMaps whose JSON body is 1 KiB) into the same table (the
journal's own DDL, indexes included) of a fresh file in WAL mode with ``synchronous=FULL``, in the
same run, so the ratio cancels out the machine:

* ceiling — plain ``sqlite3``: encode each body to JSON and insert every row with one ``executemany``
  in one transaction (one commit, no checksums, no asyncio);
* journal, pipelined — one producer submits every record as its own append (as a watcher does with a
  burst of events), yielding to the event loop after every 500 (the next burst arrives from the
  network) and checking and letting go of the appends already durable, then waits for the rest;
  group commit batches them (also with appends of 100 records each);
* journal, 64 appenders — 64 tasks each awaiting every single-record append before the next (each
  waits for its own durable commit: latency-bound, shown for information).

Run: ``.venv/bin/python bench/journal_throughput.py [--records N] [--repeat R] [--owned]``. Figures are the
best of R runs; the journal must reach at least half of the ceiling. ``--owned`` gives every record an
owner reference (as runners and pods have), so the journal also fills its owners index for each.
``--gil`` instead shows why the journal inserts with multi-row statements rather than ``executemany``.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import gc
import json
import os
import sqlite3
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from store import records, rows, schema
from store.journal import Journal
from store.records import Record

APPENDERS = 64
BURST = 500


def make_records(n: int, *, owned: bool = False) -> list[Record]:
    made = []
    for i in range(n):
        meta: dict[str, object] = {
            "name": f"cm-{i % 1000}",
            "namespace": "default",
            "uid": f"uid-{i % 1000}",
            "resourceVersion": str(i),
        }
        if owned:  # as a runner names its runner set: the journal indexes it (the ``owners`` table)
            meta["ownerReferences"] = [{"apiVersion": "v1", "kind": "ConfigMap", "name": "o", "uid": "o-1"}]
        obj = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": {"payload": ""}}
        record = records.observed("MODIFIED", "ConfigMap", obj)
        pad = 1024 - len(json.dumps(record.body, separators=(",", ":")))
        obj["data"] = {"payload": "x" * pad}
        made.append(records.observed("MODIFIED", "ConfigMap", obj))
    return made


@dataclass
class Figure:
    """The best run of one mode: records per second (wall clock) and CPU time per record."""

    rate: float = 0.0
    cpu_us: float = float("inf")
    transactions: int = 0

    def add(self, records: int, wall: float, cpu: float, transactions: int = 1) -> None:
        if records / wall > self.rate:
            self.rate, self.transactions = records / wall, transactions
        self.cpu_us = min(self.cpu_us, cpu / records * 1e6)


class Clock:
    def __enter__(self) -> Clock:
        self.wall, self.cpu = time.perf_counter(), time.process_time()
        return self

    def __exit__(self, *_: object) -> None:
        self.wall, self.cpu = time.perf_counter() - self.wall, time.process_time() - self.cpu


def ceiling(path: Path, batch: list[Record], figure: Figure) -> None:
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA journal_mode = WAL")
    db.execute("PRAGMA synchronous = FULL")
    for statement in schema.DDL.split(";"):
        if statement.strip():
            db.execute(statement)
    at = "2026-01-01T00:00:00.000000Z"
    with Clock() as clock:
        db.execute("BEGIN")
        db.executemany(
            "INSERT INTO records VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                (
                    i,
                    at,
                    r.type.value,
                    r.kind,
                    r.namespace,
                    r.name,
                    r.uid,
                    r.resource_version,
                    json.dumps(r.body),
                    0,
                )
                for i, r in enumerate(batch, 1)
            ),
        )
        db.execute("COMMIT")
    db.close()
    figure.add(len(batch), clock.wall, clock.cpu)


async def pipelined(path: Path, batch: list[Record], figure: Figure, *, per_append: int = 1) -> None:
    async with await Journal.open(path) as journal:
        with Clock() as clock:
            pending: collections.deque[asyncio.Future[list[Record]]] = collections.deque()
            written = 0
            for i in range(0, len(batch), per_append):
                pending.append(journal.submit(batch[i : i + per_append]))
                if (i // per_append) % BURST == BURST - 1:
                    await asyncio.sleep(0)  # the next burst of events arrives from the network
                    while pending and pending[0].done():  # as a watcher would: check, then let go
                        written += len(pending.popleft().result())
            while pending:
                written += len(await pending.popleft())
        assert written == journal.last_seq == len(batch)
        figure.add(len(batch), clock.wall, clock.cpu, journal.transactions)


async def appenders(path: Path, batch: list[Record], figure: Figure) -> None:
    async with await Journal.open(path) as journal:
        queue = list(reversed(batch))

        async def appender() -> None:
            while queue:
                await journal.append([queue.pop()])

        with Clock() as clock:
            await asyncio.gather(*(appender() for _ in range(APPENDERS)))
        figure.add(len(batch), clock.wall, clock.cpu, journal.transactions)


def gil_contention(directory: Path, batch: list[Record]) -> None:
    """Why the journal inserts with multi-row statements: rows per second of ``executemany`` and of
    ``rows.insert_chunks`` statements, alone and while another thread keeps the GIL busy (as the event
    loop's thread does while the journal's connection thread writes)."""
    encoded = [
        rows.encode(record, seq, "2026-01-01T00:00:00.000000Z")[0] for seq, record in enumerate(batch, 1)
    ]
    busy = threading.Event()

    def burn() -> None:
        while busy.is_set():
            sum(range(1000))

    for contended in (False, True):
        for how in ("executemany", "multi-row"):
            path = fresh(directory, "gil.sqlite")
            db = sqlite3.connect(path, isolation_level=None)
            db.execute("PRAGMA journal_mode = WAL")
            for statement in schema.DDL.split(";"):
                if statement.strip():
                    db.execute(statement)
            burner = threading.Thread(target=burn)
            if contended:
                busy.set()
                burner.start()
            with Clock() as clock:
                db.execute("BEGIN")
                if how == "executemany":
                    db.executemany(rows.INSERT, encoded)
                else:
                    for statement, parameters in rows.insert_chunks(encoded):
                        db.execute(statement, parameters)
                db.execute("COMMIT")
            busy.clear()
            if contended:
                burner.join()
            db.close()
            state = "with a busy thread" if contended else "alone"
            print(f"{how:12} {state:19} {len(encoded) / clock.wall:>10,.0f} rows/s")


def fresh(directory: Path, name: str) -> Path:
    path = directory / name
    for suffix in ("", "-wal", "-shm", ".lock"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=50_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--gil", action="store_true", help="compare executemany and multi-row inserts")
    parser.add_argument("--owned", action="store_true", help="every record names an owner")
    args = parser.parse_args()
    batch = make_records(args.records, owned=args.owned)
    few = batch[: max(1, args.records // 5)]
    # The prepared records are the benchmark's fixture, not work of either side: keep the garbage
    # collector from walking them over and over during the runs.
    gc.freeze()
    if args.gil:
        with tempfile.TemporaryDirectory(dir=os.environ.get("BENCH_DIR")) as tmp:
            gil_contention(Path(tmp), few)
        return
    ceiling_figure, single, hundreds, waiting = Figure(), Figure(), Figure(), Figure()
    with tempfile.TemporaryDirectory(dir=os.environ.get("BENCH_DIR")) as tmp:
        directory = Path(tmp)
        for _ in range(args.repeat):  # interleaved, so a busy moment hits every mode alike
            ceiling(fresh(directory, "ceiling.sqlite"), batch, ceiling_figure)
            asyncio.run(pipelined(fresh(directory, "single.sqlite"), batch, single))
            asyncio.run(pipelined(fresh(directory, "hundreds.sqlite"), batch, hundreds, per_append=100))
            asyncio.run(appenders(fresh(directory, "waiting.sqlite"), few, waiting))
    top = ceiling_figure
    print(
        f"cores: {os.cpu_count()}; {args.records:,} records of 1 KiB{', each naming an owner' * args.owned}; "
        f"best of {args.repeat}; synchronous=FULL"
    )
    print(f"{'':46} {'records/s':>10} {'x ceiling':>10} {'CPU us/rec':>11} {'x ceiling':>10}  transactions")
    table = [
        ("ceiling: sqlite3 executemany, one transaction", top, args.records),
        ("journal: 1-record appends, pipelined", single, args.records),
        ("journal: 100-record appends, pipelined", hundreds, args.records),
        (f"journal: {APPENDERS} appenders awaiting each append", waiting, len(few)),
    ]
    for label, figure, count in table:
        print(
            f"{label:46} {figure.rate:>10,.0f} {figure.rate / top.rate:>10.2f} {figure.cpu_us:>11.1f} "
            f"{top.cpu_us / figure.cpu_us:>10.2f}  {figure.transactions} for {count:,}"
        )


if __name__ == "__main__":
    main()
