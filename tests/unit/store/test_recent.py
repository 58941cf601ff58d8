"""The tail buffer keeps alive only the records within its bounds."""

from __future__ import annotations

import gc
import weakref

from store.recent import Recent
from store.records import Record, RecordType, Seq


def _records(first: int, count: int) -> list[Record]:
    return [Record(RecordType.TIMER, name=f"r{seq}", seq=Seq(seq)) for seq in range(first, first + count)]


def test_a_dropped_record_is_freed_at_once_not_at_compaction() -> None:
    recent = Recent(max_records=10, max_bytes=1 << 20)
    first = _records(1, 10)
    watched = [weakref.ref(record) for record in first]
    recent.extend(first, [100] * 10)
    del first
    recent.extend(_records(11, 3), [100] * 3)  # drops seqs 1-3; fewer than half the list, so not compacted
    gc.collect()
    assert [ref() is None for ref in watched] == [True] * 3 + [False] * 7
    assert [record.seq for record in recent.after(0) or []] == []  # seq 1 is no longer kept
    assert [record.seq for record in recent.after(3) or []] == list(range(4, 14))


def test_the_byte_bound_drops_the_oldest_and_frees_them() -> None:
    recent = Recent(max_records=1_000, max_bytes=1_000)
    first = _records(1, 4)
    watched = [weakref.ref(record) for record in first]
    recent.extend(first, [300] * 4)  # 1,200 bytes: the oldest goes
    del first
    gc.collect()
    assert [ref() is None for ref in watched] == [True, False, False, False]
    assert recent.bytes == 900 and recent.first_seq == 2
