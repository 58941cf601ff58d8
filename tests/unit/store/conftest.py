"""Fixtures of the journal's unit tests.

Inputs: pytest's ``tmp_path``. Outputs: ``path`` (where a test's journal file lives), ``clock`` (a clock
the test moves by hand), ``journal`` (a journal opened there with that clock, automatic snapshots off,
closed after the test) and ``open_journal`` (opens more, with any settings, and closes them all).
Nothing is mocked: every journal is a real SQLite file in WAL mode, written through aiosqlite, and tests
that damage one do so with the plain ``sqlite3`` module, as an outside process would.
"""

from __future__ import annotations

import pathlib
from collections.abc import AsyncIterator

import pytest

from store.journal import Journal
from store.settings import JournalSettings
from tests.unit.store.factories import QUIET, ManualClock, OpenJournal


@pytest.fixture
def path(tmp_path: pathlib.Path) -> pathlib.Path:
    return tmp_path / "journal.sqlite"


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
async def open_journal(path: pathlib.Path, clock: ManualClock) -> AsyncIterator[OpenJournal]:
    opened: list[Journal] = []

    async def open_(settings: JournalSettings = QUIET, *, at: pathlib.Path = path) -> Journal:
        journal = await Journal.open(at, settings=settings, clock=clock)
        opened.append(journal)
        return journal

    yield open_
    for journal in opened:
        await journal.close()


@pytest.fixture
async def journal(open_journal: OpenJournal) -> Journal:
    return await open_journal()
