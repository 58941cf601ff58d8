"""Crash safety: a process appending to the journal is killed with SIGKILL mid-stream, three times over.

After each kill the journal must verify, open, and hold a gap-free prefix of what was appended: every
append the writer saw acknowledged (durable), no append in part, each producer's appends in order with
none missing before its last, and a projection that equals a fold of the records it holds. Nothing is
mocked: the writer is a real process (``journal_writer.py``) on a real SQLite file.
"""

from __future__ import annotations

import asyncio
import collections
import pathlib
import signal
import sys

from store import verifying
from store.journal import Journal
from store.projection import Projection
from store.records import RecordType

WRITER = pathlib.Path(__file__).with_name("journal_writer.py")
ROOT = WRITER.parents[3]


async def run_until_killed(path: pathlib.Path, round_: int, acks: int) -> list[tuple[int, int, int, int]]:
    """Start a writer, read ``acks`` acknowledgements, SIGKILL it; returns what it acknowledged."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable, str(WRITER), str(path), str(round_), cwd=ROOT, stdout=asyncio.subprocess.PIPE
    )
    assert proc.stdout is not None
    acknowledged = []
    try:
        while len(acknowledged) < acks:
            line = await asyncio.wait_for(proc.stdout.readline(), timeout=30)
            assert line, f"the writer exited early with {await proc.wait()}"
            r, p, i, seq = (int(v) for v in line.split())
            acknowledged.append((r, p, i, seq))
    finally:
        proc.send_signal(signal.SIGKILL)
        await proc.wait()
    # Acknowledgements still in the pipe were durable too.
    for line in (await proc.stdout.read()).splitlines():
        if len(line.split()) == 4:
            r, p, i, seq = (int(v) for v in line.split())
            acknowledged.append((r, p, i, seq))
    return acknowledged


async def test_a_killed_writer_leaves_a_gap_free_prefix(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "journal.sqlite"
    acknowledged: list[tuple[int, int, int, int]] = []
    for round_, acks in enumerate((60, 177, 311)):
        acknowledged += await run_until_killed(path, round_, acks)

        checked = await verifying.verify(path)  # checksums, continuity, SQLite integrity
        async with await Journal.open(path) as journal:
            found = await journal.read()
            projection = journal.projection
        assert checked.records == len(found)
        assert [r.seq for r in found] == list(range(1, len(found) + 1))

        appends: dict[tuple[int, int, int], list[int]] = collections.defaultdict(list)
        for record in found:
            if record.type is RecordType.OBSERVED:
                data = record.body["object"]["data"]
                appends[data["round"], data["producer"], data["index"]].append(data["part"])
                assert data["of"] == 1 + data["index"] % 3
        for (_, _, index), parts in appends.items():  # atomic: all of an append's records or none
            assert parts == list(range(1 + index % 3))
        for r, p, i, seq in acknowledged:  # durable: everything acknowledged is there
            assert (r, p, i) in appends
            assert seq <= len(found)
        indexes: dict[tuple[int, int], list[int]] = collections.defaultdict(list)
        for r, p, i in appends:
            indexes[r, p].append(i)
        for found_indexes in indexes.values():  # in order, none missing before a producer's last
            assert found_indexes == list(range(len(found_indexes)))

        folded = Projection()
        for record in found:
            folded.apply(record)
        assert projection == folded  # rebuilt from snapshot + tail, identical to a full fold
    assert any(r.type is RecordType.SNAPSHOT for r in found)
