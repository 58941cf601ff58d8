"""What the API e2e tests share: a real journal on disk, the app served by uvicorn on loopback, a client.

Inputs: a directory (pytest's ``tmp_path``). Outputs: ``recorded_journal`` (the journal of a recorded
controller run that tells the seed's story, ``SEED_STORY``, imported into a journal file and opened as
the controller opens it) and ``served`` (``create_app`` over that journal, served by ``api.serving`` on
127.0.0.1 with a free port, and an httpx client on its URL). Nothing is mocked: requests go through
uvicorn's HTTP stack to the real journal.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx

from api.app import create_app
from api.serving import ApiServer
from store import exporting
from store.journal import Journal
from store.records import Record, RecordType
from store.settings import HistoryRetention, JournalSettings, RetentionSettings

JOURNALS = Path(__file__).resolve().parents[2] / "journals"
# The seed's story (Pending, Running, Outdated, Pending, Running for default/arc), as the test that
# tells it records it.
SEED_STORY = "4-6-b-rejected-runners-park-the-scale-set-and-an-image-fix-recovers-it.jsonl.gz"
ARS = "/api/v1/namespaces/default/autoscalingrunnersets/arc"
# A recording is opened with no bound on its records' age: the controller's defaults (seven days, 90 for
# decisions) would prune a recording once it is that old, and a test would answer differently from one
# day to the next.
RECORDINGS = JournalSettings(
    retention=RetentionSettings(max_bytes=1 << 30), history_retention=HistoryRetention()
)


async def recorded_journal(directory: Path) -> Journal:
    path = directory / "journal.db"
    recorded = JOURNALS / SEED_STORY
    assert recorded.is_file(), f"no recording of the seed's story: {recorded}"
    with exporting.open_lines(recorded) as lines:
        await exporting.import_lines(path, lines)
    return await Journal.open(path, settings=RECORDINGS)


async def retained(journal: Journal) -> None:
    """Retention run until a pass moves no horizon: the pass the journal schedules when it opens may run
    before or after the test's own, and a second pass can still move the raw horizon past seqs already
    gone, so a horizon read after a single pass is not yet the one the journal settles on."""
    while True:
        before = journal.horizons
        await journal.retain()
        if journal.horizons == before:
            return


@contextlib.asynccontextmanager
async def served(journal: Journal, **options: Any) -> AsyncIterator[tuple[ApiServer, httpx.AsyncClient]]:
    server = await ApiServer.start(create_app(journal, **options), host="127.0.0.1", port=0)
    try:
        async with httpx.AsyncClient(base_url=server.url, timeout=60) as client:  # a loaded machine
            yield server, client
    finally:
        await server.stop()


def decision(name: str, *transitions: tuple[str, str, str], kind: str = "AutoscalingRunnerSet") -> Record:
    """A decision record taking ``transitions`` (from, to, trigger) for ``kind`` default/``name``."""
    subject = {"kind": kind, "namespace": "default", "name": name}
    return Record(
        type=RecordType.DECISION,
        kind=kind,
        namespace="default",
        name=name,
        uid=f"uid-{name}",
        body={
            "subject": subject,
            "transitions": [
                {
                    "from": from_,
                    "to": to,
                    "trigger": trigger,
                    "reason": f"{trigger} happened",
                    "revisions": {"generation": 1, "observedGeneration": 1},
                    "subject": subject,
                }
                for from_, to, trigger in transitions
            ],
            "effects": [],
            "note": "",
        },
    )
