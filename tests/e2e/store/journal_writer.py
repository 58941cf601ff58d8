"""A process that appends to a journal until it is killed: the writer of the crash-safety test.

Usage: ``python journal_writer.py JOURNAL ROUND``. Four producers append concurrently (so appends are
group-committed); each append holds one to three observed records, and each record's object says its
round, producer, append number, part and how many parts its append has. After every append returns
(durable), the producer prints ``ROUND PRODUCER APPEND LAST_SEQ`` on stdout.
"""

from __future__ import annotations

import asyncio
import pathlib
import sys

from store import records
from store.journal import Journal
from store.records import Record
from store.settings import JournalSettings, RetentionSettings

PRODUCERS = 4
# Snapshots are taken while the process may be killed too; nothing is pruned.
SETTINGS = JournalSettings(snapshot_every=150, retention=RetentionSettings())


def append_of(round_: int, producer: int, index: int) -> list[Record]:
    parts = 1 + index % 3
    return [
        records.observed(
            "MODIFIED" if index else "ADDED",
            "ConfigMap",
            {
                "metadata": {
                    "name": f"r{round_}-p{producer}-k{part}",
                    "namespace": "crash",
                    "uid": f"{producer}-{part}",
                },
                "data": {"round": round_, "producer": producer, "index": index, "part": part, "of": parts},
                "pad": "x" * 512,
            },
        )
        for part in range(parts)
    ]


async def produce(journal: Journal, round_: int, producer: int) -> None:
    index = 0
    while True:
        appended = await journal.append(append_of(round_, producer, index))
        print(round_, producer, index, appended[-1].seq, flush=True)
        index += 1


async def main(path: pathlib.Path, round_: int) -> None:
    journal = await Journal.open(path, settings=SETTINGS)
    await asyncio.gather(*(produce(journal, round_, p) for p in range(PRODUCERS)))


if __name__ == "__main__":
    asyncio.run(main(pathlib.Path(sys.argv[1]), int(sys.argv[2])))
