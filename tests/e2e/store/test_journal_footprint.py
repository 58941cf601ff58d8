"""The size bound holds for the journal's whole footprint on disk, under sustained appends.

A real journal on disk with a small ``max_bytes`` and the default snapshot interval (so no snapshot-driven
pass runs during the test: only the size bound can prune). After every append the database file, its
write-ahead log and the log's index together stay within the bound, while many times the bound is
written; retention pruned, the projection still holds every object, and the file verifies.
"""

from __future__ import annotations

import pathlib

from store import records, retention, verifying
from store.journal import Journal
from store.settings import JournalSettings, RetentionSettings

BOUND = 2 << 20
OBJECTS = 100


def observed(i: int) -> records.Record:
    name = f"runner-{i % OBJECTS}"
    obj = {
        "metadata": {"name": name, "namespace": "arc", "uid": f"uid-{name}", "resourceVersion": str(i)},
        "spec": {"pad": f"{i:08d}" * 125},
    }
    return records.observed("MODIFIED", "EphemeralRunner", obj)


async def test_the_footprint_stays_under_the_size_bound_under_sustained_appends(
    tmp_path: pathlib.Path,
) -> None:
    path = tmp_path / "journal.db"
    settings = JournalSettings(durable=False, retention=RetentionSettings(max_bytes=BOUND))
    written, largest = 0, 0
    async with await Journal.open(path, settings=settings) as journal:
        for i in range(0, 12_000, 4):
            appended = await journal.append([observed(i + j) for j in range(4)])
            written += sum(len(record.as_json()["body"]["object"]["spec"]["pad"]) for record in appended)
            largest = max(largest, retention.footprint(path))
            assert largest <= BOUND, f"{largest} bytes on disk after {i + 4} records"
        assert written > 5 * BOUND
        assert journal.horizons.raw > 0
        assert len(journal.projection.items("EphemeralRunner")) == OBJECTS
    await verifying.verify(path)
    print(f"largest footprint {largest} bytes under a bound of {BOUND} after {written} bytes written")
