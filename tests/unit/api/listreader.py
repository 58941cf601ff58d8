"""An in-memory journal reader for the API's unit tests: a list of records filtered as the journal
filters them (``store.ports.JournalReader``), counting its reads."""

from __future__ import annotations

from collections.abc import Collection

from store.records import Record, RecordType


class ListReader:
    def __init__(self, records: list[Record]) -> None:
        self.records = records
        self.reads = 0

    async def read(
        self,
        *,
        after: int = 0,
        limit: int | None = None,
        kind: str | None = None,
        namespace: str | None = None,
        name: str | None = None,
        types: Collection[RecordType] | None = None,
        through: int | None = None,
    ) -> list[Record]:
        self.reads += 1
        found = [
            r
            for r in self.records
            if (r.seq or 0) > after
            and (through is None or (r.seq or 0) <= through)
            and (kind is None or r.kind == kind)
            and (namespace is None or r.namespace == namespace)
            and (name is None or r.name == name)
            and (types is None or r.type in types)
        ]
        return found[:limit] if limit is not None else found
