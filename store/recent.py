"""The records committed last, kept in memory for the tails that have caught up: ``Recent``.

What it holds is consecutive in seq (the journal clears it when an import would break that) and bounded
twice, the oldest dropped first: by a count of records and by the size of their JSON text as the journal
encoded it (what each record holds in memory is a small multiple of that). A tail asks for what follows
its cursor and gets a slice of a list indexed by seq: O(the records after the cursor), whatever the
buffer holds. A dropped record's slot is cleared at once, so the buffer never keeps more records alive
than its bounds allow; the cleared slots are compacted away once they are half the list (amortised O(1)
each).
A tail whose cursor is older than the oldest record kept gets ``None`` and reads from SQLite instead.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

from store.records import Record


class Recent:
    __slots__ = ("_bytes", "_first", "_max_bytes", "_max_records", "_records", "_sizes", "_start")

    def __init__(self, *, max_records: int, max_bytes: int) -> None:
        self._max_records, self._max_bytes = max_records, max_bytes
        self._records: list[Record | None] = []  # None: dropped, not yet compacted away
        self._sizes: list[int] = []
        self._start = 0  # index of the oldest record kept; those before it are dropped
        self._first = 0  # the seq of the oldest record kept (when one is)
        self._bytes = 0  # the sizes of the records kept

    def __len__(self) -> int:
        return len(self._records) - self._start

    @property
    def bytes(self) -> int:
        """The JSON size of the records kept."""
        return self._bytes

    @property
    def first_seq(self) -> int | None:
        """The seq of the oldest record kept, or None when none is."""
        return self._first if len(self) else None

    def extend(self, records: Sequence[Record], sizes: Sequence[int]) -> None:
        """Keep ``records`` (the next seqs after those kept), of JSON size ``sizes``; drop the oldest
        past either bound."""
        if not records:
            return
        if not len(self):
            seq = records[0].seq
            assert seq is not None
            self._first = seq
        self._records.extend(records)
        self._sizes.extend(sizes)
        self._bytes += sum(sizes)
        while len(self) > self._max_records or (self._bytes > self._max_bytes and len(self)):
            self._drop_oldest()
        self._compact()

    def after(self, seq: int) -> list[Record] | None:
        """The records kept with seq above ``seq``, in order; None when some of them are not kept."""
        if not len(self) or self._first > seq + 1:
            return None
        return cast(list[Record], self._records[self._start + seq + 1 - self._first :])

    def drop_through(self, seq: int) -> None:
        """Forget the records with seq up to ``seq`` (pruned by retention)."""
        while len(self) and self._first <= seq:
            self._drop_oldest()
        self._compact()

    def clear(self) -> None:
        self._records, self._sizes, self._start, self._bytes = [], [], 0, 0

    def _drop_oldest(self) -> None:
        self._bytes -= self._sizes[self._start]
        self._records[self._start] = None
        self._start += 1
        self._first += 1

    def _compact(self) -> None:
        if self._start and self._start * 2 >= len(self._records):
            del self._records[: self._start]
            del self._sizes[: self._start]
            self._start = 0
