"""``/readyz`` over a journal whose writes fail: a real journal on disk made full, the API over real HTTP.

SQLite's ``PRAGMA max_page_count`` caps the database file of the connection it is set on, and an insert
that needs a page more fails with the genuine SQLITE_FULL ("database or disk is full") a full volume
gives. It is a setting of one connection, so the test sets it on the journal's writer connection; nothing
else is touched. While appends fail, ``/readyz`` answers 503 with the reason, and the journal logs one
error line for the outage however many appends fail; once the cap is lifted the next append commits,
``/readyz`` answers 200 again and one line counts the appends that failed.
"""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from store.errors import JournalWriteFailed
from store.journal import Journal
from store.records import Record, RecordType
from tests.e2e.api.apiworld import served

KINDS = ["AutoscalingRunnerSet", "EphemeralRunnerSet", "EphemeralRunner", "AutoscalingListener"]
FAILED_APPENDS = 5


def big_record(i: int) -> Record:
    return Record(
        type=RecordType.TIMER, kind="AutoscalingRunnerSet", name=f"arc-{i}", body={"pad": "x" * 8192}
    )


async def cap_at_current_size(journal: Journal, *, lifted: bool = False) -> None:
    db = journal._writer.db  # max_page_count is a setting of the connection that writes
    async with db.execute("PRAGMA page_count") as cursor:
        row = await cursor.fetchone()
    assert row is not None
    await db.execute(f"PRAGMA max_page_count = {1 << 30 if lifted else int(row[0])}")


async def test_readyz_is_false_while_appends_fail_and_true_once_one_succeeds(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="store")
    async with await Journal.open(tmp_path / "journal.db") as journal, served(journal) as (_, http):
        await journal.append([Record(type=RecordType.SYNC, kind=kind) for kind in KINDS])
        assert (await http.get("/readyz")).status_code == 200
        await cap_at_current_size(journal)
        for i in range(FAILED_APPENDS):
            with pytest.raises(JournalWriteFailed, match="database or disk is full"):
                await journal.append([big_record(i)])

        answer = await http.get("/readyz")
        assert answer.status_code == 503
        body = answer.json()
        assert body["ready"] is False and body["journalWritable"] is False and body["synced"] is True
        assert "database or disk is full" in body["journalError"]
        errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
        assert [r.getMessage() for r in errors] == [
            "journal writes fail: append: database or disk is full (free disk space or lower the retention "
            "limits); what could not be journaled is retried, nothing is decided on it"
        ]

        await cap_at_current_size(journal, lifted=True)
        (appended,) = await journal.append([big_record(FAILED_APPENDS)])
        answer = await http.get("/readyz")
        assert answer.status_code == 200 and "journalError" not in answer.json()
        assert journal.write_failure is None
        recovered = [r.getMessage() for r in caplog.records if "succeed again" in r.getMessage()]
        assert len(recovered) == 1 and f": {FAILED_APPENDS} appends failed over" in recovered[0]
        # Nothing of the failed appends was written, and the sequence has no gap.
        assert [r.seq for r in await journal.read(types={RecordType.TIMER})] == [appended.seq]
        assert appended.seq == len(KINDS) + 1
